/* intern.c — open-addressing maps used by the importer. */
#include "intern.h"

#include <stdlib.h>
#include <string.h>

static uint64_t mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

static uint64_t tuple_hash(const tuple_key *k) {
  uint64_t h = 0x9e3779b97f4a7c15ULL;
  for (int i = 0; i < TUPLE_WORDS; i++) h = mix64(h ^ k->w[i]) + (uint64_t)i;
  return h;
}

static int tuple_eq(const tuple_key *a, const tuple_key *b) {
  return memcmp(a, b, sizeof *a) == 0;
}

void tuple_map_init(tuple_map *m) { memset(m, 0, sizeof *m); }

void tuple_map_free(tuple_map *m) {
  free(m->keys);
  free(m->vals);
  free(m->used);
  memset(m, 0, sizeof *m);
}

void tuple_map_clear(tuple_map *m) {
  if (m->used) memset(m->used, 0, m->cap);
  m->count = 0;
}

int64_t *tuple_map_get(const tuple_map *m, const tuple_key *k) {
  if (!m->cap) return NULL;
  size_t mask = m->cap - 1, i = (size_t)tuple_hash(k) & mask;
  while (m->used[i]) {
    if (tuple_eq(&m->keys[i], k)) return &m->vals[i];
    i = (i + 1) & mask;
  }
  return NULL;
}

static void tuple_insert_new(tuple_map *m, const tuple_key *k, int64_t v) {
  size_t mask = m->cap - 1, i = (size_t)tuple_hash(k) & mask;
  while (m->used[i]) i = (i + 1) & mask;
  m->used[i] = 1;
  m->keys[i] = *k;
  m->vals[i] = v;
  m->count++;
}

static int tuple_grow(tuple_map *m) {
  size_t ncap = m->cap ? m->cap * 2 : 1024;
  tuple_map n = {0};
  n.keys = malloc(ncap * sizeof *n.keys);
  n.vals = malloc(ncap * sizeof *n.vals);
  n.used = calloc(ncap, 1);
  if (!n.keys || !n.vals || !n.used) {
    tuple_map_free(&n);
    return -1;
  }
  n.cap = ncap;
  for (size_t i = 0; i < m->cap; i++)
    if (m->used[i]) tuple_insert_new(&n, &m->keys[i], m->vals[i]);
  tuple_map_free(m);
  *m = n;
  return 0;
}

int tuple_map_put(tuple_map *m, const tuple_key *k, int64_t val) {
  int64_t *v = tuple_map_get(m, k);
  if (v) {
    *v = val;
    return 0;
  }
  if ((m->count + 1) * 2 > m->cap && tuple_grow(m)) return -1;
  tuple_insert_new(m, k, val);
  return 0;
}

int tuple_map_del(tuple_map *m, const tuple_key *k) {
  if (!m->cap) return 0;
  size_t mask = m->cap - 1, i = (size_t)tuple_hash(k) & mask;
  while (m->used[i] && !tuple_eq(&m->keys[i], k)) i = (i + 1) & mask;
  if (!m->used[i]) return 0;
  /* Backward-shift deletion keeps probe chains intact without tombstones,
   * which matters for the heap map: it sees one delete per free. */
  size_t j = i;
  for (;;) {
    j = (j + 1) & mask;
    if (!m->used[j]) break;
    size_t home = (size_t)tuple_hash(&m->keys[j]) & mask;
    /* Move j into the hole at i when its home is not in (i, j]. */
    if ((i <= j) ? (home <= i || home > j) : (home <= i && home > j)) {
      m->keys[i] = m->keys[j];
      m->vals[i] = m->vals[j];
      i = j;
    }
  }
  m->used[i] = 0;
  m->count--;
  return 1;
}

/* ---- name map ---- */

struct name_entry {
  uint64_t a, b, hash;
  char *name;              /* NULL: empty slot */
  size_t len;
  int64_t val;
};

static uint64_t name_hash(uint64_t a, uint64_t b, const char *s, size_t n) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * 0x100000001b3ULL;
  return mix64(h ^ mix64(a) ^ mix64(b + 0x51));
}

void name_map_init(name_map *m) { memset(m, 0, sizeof *m); }

void name_map_clear(name_map *m) {
  for (size_t i = 0; i < m->cap; i++) {
    free(m->slots[i].name);
    m->slots[i].name = NULL;
  }
  m->count = 0;
}

void name_map_free(name_map *m) {
  name_map_clear(m);
  free(m->slots);
  memset(m, 0, sizeof *m);
}

static struct name_entry *name_find(const name_map *m, uint64_t h, uint64_t a,
                                    uint64_t b, const char *s, size_t n) {
  size_t mask = m->cap - 1, i = (size_t)h & mask;
  while (m->slots[i].name) {
    struct name_entry *e = &m->slots[i];
    if (e->hash == h && e->a == a && e->b == b && e->len == n &&
        memcmp(e->name, s, n) == 0)
      return e;
    i = (i + 1) & mask;
  }
  return &m->slots[i];
}

int64_t *name_map_get(const name_map *m, uint64_t a, uint64_t b,
                      const char *name, size_t len) {
  if (!m->cap) return NULL;
  struct name_entry *e = name_find(m, name_hash(a, b, name, len), a, b, name,
                                   len);
  return e->name ? &e->val : NULL;
}

int name_map_put(name_map *m, uint64_t a, uint64_t b, const char *name,
                 size_t len, int64_t val) {
  if ((m->count + 1) * 2 > m->cap) {
    size_t ncap = m->cap ? m->cap * 2 : 256;
    name_map n = {calloc(ncap, sizeof(struct name_entry)), ncap, 0};
    if (!n.slots) return -1;
    for (size_t i = 0; i < m->cap; i++) {
      struct name_entry *e = &m->slots[i];
      if (!e->name) continue;
      *name_find(&n, e->hash, e->a, e->b, e->name, e->len) = *e;
      n.count++;
    }
    free(m->slots);
    *m = n;
  }
  uint64_t h = name_hash(a, b, name, len);
  struct name_entry *e = name_find(m, h, a, b, name, len);
  if (e->name) {
    e->val = val;
    return 0;
  }
  char *copy = malloc(len + 1);
  if (!copy) return -1;
  memcpy(copy, name, len);
  copy[len] = 0;
  *e = (struct name_entry){a, b, h, copy, len, val};
  m->count++;
  return 0;
}
