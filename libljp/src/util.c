/*
 * util.c — the reader's small containers: a bump arena (symbols and their
 * strings live exactly as long as the reader, so they are never freed one by
 * one) and an open-addressing u64 -> pointer map.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

struct arena_block {
  arena_block *next;
  size_t cap;
  /* payload follows, 16-byte aligned */
  _Alignas(16) unsigned char data[];
};

void ljp__arena_init(arena *a) {
  a->head = NULL;
  a->used = a->cap = 0;
}

void ljp__arena_free(arena *a) {
  arena_block *b = a->head;
  while (b) {
    arena_block *n = b->next;
    free(b);
    b = n;
  }
  ljp__arena_init(a);
}

void *ljp__arena_alloc(arena *a, size_t n) {
  n = (n + 7) & ~(size_t)7;
  if (!a->head || a->cap - a->used < n) {
    size_t cap = 64 * 1024;
    if (n > cap / 4)
      cap = n;             /* big strings get a block of their own */
    arena_block *b = malloc(sizeof(*b) + cap);
    if (!b)
      return NULL;
    b->cap = cap;
    if (a->head && n == cap && a->cap - a->used > 1024) {
      /* keep filling the current block: slot the big one behind it */
      b->next = a->head->next;
      a->head->next = b;
      return b->data;
    }
    b->next = a->head;
    a->head = b;
    a->used = 0;
    a->cap = cap;
  }
  void *p = a->head->data + a->used;
  a->used += n;
  return p;
}

void ljp__u64map_init(u64map *m) { memset(m, 0, sizeof(*m)); }

void ljp__u64map_free(u64map *m) {
  free(m->slots);
  ljp__u64map_init(m);
}

void *ljp__u64map_get(const u64map *m, uint64_t key) {
  if (!m->cap)
    return NULL;
  size_t mask = m->cap - 1, i = (size_t)ljp_hash64(key) & mask;
  for (;;) {
    const u64slot *s = &m->slots[i];
    if (!s->val)
      return NULL;
    if (s->key == key)
      return s->val;
    i = (i + 1) & mask;
  }
}

static int u64map_grow(u64map *m) {
  size_t ncap = m->cap ? m->cap * 2 : 64;
  u64slot *ns = calloc(ncap, sizeof(*ns));
  if (!ns)
    return -1;
  for (size_t j = 0; j < m->cap; j++) {
    if (!m->slots[j].val)
      continue;
    size_t i = (size_t)ljp_hash64(m->slots[j].key) & (ncap - 1);
    while (ns[i].val)
      i = (i + 1) & (ncap - 1);
    ns[i] = m->slots[j];
  }
  free(m->slots);
  m->slots = ns;
  m->cap = ncap;
  return 0;
}

int ljp__u64map_put(u64map *m, uint64_t key, void *val) {
  if ((m->count + 1) * 4 > m->cap * 3 && u64map_grow(m))
    return -1;
  size_t mask = m->cap - 1, i = (size_t)ljp_hash64(key) & mask;
  while (m->slots[i].val) {
    if (m->slots[i].key == key) {
      m->slots[i].val = val;
      return 0;
    }
    i = (i + 1) & mask;
  }
  m->slots[i].key = key;
  m->slots[i].val = val;
  m->count++;
  return 0;
}

void *ljp__u64map_del(u64map *m, uint64_t key) {
  if (!m->cap)
    return NULL;
  size_t mask = m->cap - 1, i = (size_t)ljp_hash64(key) & mask;
  while (m->slots[i].val && m->slots[i].key != key)
    i = (i + 1) & mask;
  void *val = m->slots[i].val;
  if (!val)
    return NULL;
  /* Backward-shift deletion: pull later members of the probe run into the
   * hole, so lookups never need tombstones. */
  for (size_t j = i;;) {
    j = (j + 1) & mask;
    if (!m->slots[j].val)
      break;
    size_t home = (size_t)ljp_hash64(m->slots[j].key) & mask;
    int stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
    if (!stays) {
      m->slots[i] = m->slots[j];
      i = j;
    }
  }
  m->slots[i].val = NULL;
  m->count--;
  return val;
}

uint64_t ljp__hash_bytes(const void *p, size_t n) {
  /* FNV-1a over 8-byte words, finished with the 64-bit mixer. */
  const unsigned char *s = p;
  uint64_t h = 0xcbf29ce484222325ULL ^ n;
  while (n >= 8) {
    uint64_t w;
    memcpy(&w, s, 8);
    h = (h ^ w) * 0x100000001b3ULL;
    s += 8;
    n -= 8;
  }
  while (n--)
    h = (h ^ *s++) * 0x100000001b3ULL;
  return ljp_hash64(h);
}
