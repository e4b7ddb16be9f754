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

void arena_init(arena *a) {
  a->head = NULL;
  a->used = a->cap = 0;
}

void arena_free(arena *a) {
  arena_block *b = a->head;
  while (b) {
    arena_block *n = b->next;
    free(b);
    b = n;
  }
  arena_init(a);
}

void *arena_alloc(arena *a, size_t n) {
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

void u64map_init(u64map *m) { memset(m, 0, sizeof(*m)); }

void u64map_free(u64map *m) {
  free(m->keys);
  free(m->vals);
  u64map_init(m);
}

void *u64map_get(const u64map *m, uint64_t key) {
  if (!m->cap)
    return NULL;
  size_t mask = m->cap - 1, i = (size_t)ljp_hash64(key) & mask;
  for (;;) {
    void *v = m->vals[i];
    if (!v)
      return NULL;
    if (m->keys[i] == key)
      return v;
    i = (i + 1) & mask;
  }
}

static int u64map_grow(u64map *m) {
  size_t ncap = m->cap ? m->cap * 2 : 64;
  uint64_t *nk = malloc(ncap * sizeof(*nk));
  void **nv = calloc(ncap, sizeof(*nv));
  if (!nk || !nv) {
    free(nk);
    free(nv);
    return -1;
  }
  for (size_t j = 0; j < m->cap; j++) {
    if (!m->vals[j])
      continue;
    size_t i = (size_t)ljp_hash64(m->keys[j]) & (ncap - 1);
    while (nv[i])
      i = (i + 1) & (ncap - 1);
    nk[i] = m->keys[j];
    nv[i] = m->vals[j];
  }
  free(m->keys);
  free(m->vals);
  m->keys = nk;
  m->vals = nv;
  m->cap = ncap;
  return 0;
}

int u64map_put(u64map *m, uint64_t key, void *val) {
  if ((m->count + 1) * 4 > m->cap * 3 && u64map_grow(m))
    return -1;
  size_t mask = m->cap - 1, i = (size_t)ljp_hash64(key) & mask;
  while (m->vals[i]) {
    if (m->keys[i] == key) {
      m->vals[i] = val;
      return 0;
    }
    i = (i + 1) & mask;
  }
  m->keys[i] = key;
  m->vals[i] = val;
  m->count++;
  return 0;
}

void *u64map_del(u64map *m, uint64_t key) {
  if (!m->cap)
    return NULL;
  size_t mask = m->cap - 1, i = (size_t)ljp_hash64(key) & mask;
  while (m->vals[i] && m->keys[i] != key)
    i = (i + 1) & mask;
  void *val = m->vals[i];
  if (!val)
    return NULL;
  /* Backward-shift deletion: pull later members of the probe run into the
   * hole, so lookups never need tombstones. */
  for (size_t j = i;;) {
    j = (j + 1) & mask;
    if (!m->vals[j])
      break;
    size_t home = (size_t)ljp_hash64(m->keys[j]) & mask;
    int stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
    if (!stays) {
      m->keys[i] = m->keys[j];
      m->vals[i] = m->vals[j];
      i = j;
    }
  }
  m->vals[i] = NULL;
  m->count--;
  return val;
}

uint64_t ljp_hash_bytes(const void *p, size_t n) {
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
