/*
 * cap_hash.h — a tiny open-addressing map from non-zero 64-bit keys to 64-bit
 * values, for the per-PC and per-id caches of the safe point.  Growth uses
 * malloc, which is fine there (the safe point is not a signal handler; it
 * must only avoid the Lua allocator).
 */
#ifndef LJP_CAP_HASH_H
#define LJP_CAP_HASH_H

#include <stdint.h>
#include <stdlib.h>

typedef struct cap_map {
  uint64_t *keys;   /* 0 = empty */
  uint64_t *vals;
  size_t cap;       /* power of two */
  size_t count;
} cap_map;

static inline size_t cap_map_slot(uint64_t k, size_t cap)
{
  k ^= k >> 33;
  k *= 0xff51afd7ed558ccdULL;
  k ^= k >> 33;
  return (size_t)k & (cap - 1);
}

static inline void cap_map_free(cap_map *m)
{
  free(m->keys);
  free(m->vals);
  m->keys = m->vals = NULL;
  m->cap = m->count = 0;
}

/* Returns a pointer to the value of k, or NULL. */
static inline uint64_t *cap_map_get(const cap_map *m, uint64_t k)
{
  size_t i;
  if (!m->cap || !k)
    return NULL;
  for (i = cap_map_slot(k, m->cap);; i = (i + 1) & (m->cap - 1)) {
    if (m->keys[i] == k)
      return &m->vals[i];
    if (m->keys[i] == 0)
      return NULL;
  }
}

/* Inserts or overwrites; returns 0, or -1 when out of memory. */
static inline int cap_map_put(cap_map *m, uint64_t k, uint64_t v)
{
  size_t i;
  uint64_t *p = cap_map_get(m, k);
  if (p) {
    *p = v;
    return 0;
  }
  if (!k)
    return -1;
  if ((m->count + 1) * 2 > m->cap) {
    cap_map n;
    size_t j;
    n.cap = m->cap ? m->cap * 2 : 256;
    n.count = 0;
    n.keys = calloc(n.cap, sizeof *n.keys);
    n.vals = calloc(n.cap, sizeof *n.vals);
    if (!n.keys || !n.vals) {
      free(n.keys);
      free(n.vals);
      return -1;
    }
    for (j = 0; j < m->cap; j++)
      if (m->keys[j]) {
        for (i = cap_map_slot(m->keys[j], n.cap); n.keys[i];
             i = (i + 1) & (n.cap - 1)) {
        }
        n.keys[i] = m->keys[j];
        n.vals[i] = m->vals[j];
        n.count++;
      }
    cap_map_free(m);
    *m = n;
  }
  for (i = cap_map_slot(k, m->cap); m->keys[i]; i = (i + 1) & (m->cap - 1)) {
  }
  m->keys[i] = k;
  m->vals[i] = v;
  m->count++;
  return 0;
}

#endif
