/* intern.c — open-addressing maps used by the importer. */
#include "intern.h"

#include "cli_hash.h"

#include <stdlib.h>
#include <string.h>

/* One multiply per word and one final mix: this runs for every frame of
 * every sample, and keys are short. */
static uint64_t tuple_hash(const uint64_t *w, unsigned n) {
  uint64_t h = 0x9e3779b97f4a7c15ULL;
  for (unsigned i = 0; i < n; i++)
    h = (h ^ w[i]) * 0xff51afd7ed558ccdULL + (h >> 29);
  return ljp_hash64(h);
}

static int words_eq(const uint64_t *a, const uint64_t *b, unsigned n) {
  for (unsigned i = 0; i < n; i++)
    if (a[i] != b[i]) return 0;
  return 1;
}

#define SLOT(m, i) ((m)->slots + (i) * ((m)->words + 1))

void tuple_map_init(tuple_map *m, unsigned words) {
  memset(m, 0, sizeof *m);
  m->words = words;
}

void tuple_map_free(tuple_map *m) {
  free(m->slots);
  m->slots = NULL;
  m->cap = m->count = 0;
}

void tuple_map_clear(tuple_map *m) {
  /* Drop big tables instead of wiping them: a file with a huge heap must
   * not make every later file pay for clearing it. */
  if (m->cap > (1u << 16)) {
    tuple_map_free(m);
    return;
  }
  if (m->slots) memset(m->slots, 0, m->cap * (m->words + 1) * sizeof *m->slots);
  m->count = 0;
}

static size_t find(const tuple_map *m, const uint64_t *key) {
  size_t mask = m->cap - 1, i = (size_t)tuple_hash(key, m->words) & mask;
  for (;;) {
    uint64_t *s = SLOT(m, i);
    if (!s[0] || words_eq(s + 1, key, m->words)) return i;
    i = (i + 1) & mask;
  }
}

int64_t *tuple_map_get(const tuple_map *m, const tuple_key *k) {
  if (!m->cap) return NULL;
  uint64_t *s = SLOT(m, find(m, k->w));
  return s[0] ? (int64_t *)s : NULL;
}

static int tuple_grow(tuple_map *m) {
  tuple_map n = *m;
  n.cap = m->cap ? m->cap * 2 : 1024;
  n.slots = calloc(n.cap, (n.words + 1) * sizeof *n.slots);
  if (!n.slots) return -1;
  for (size_t i = 0; i < m->cap; i++) {
    uint64_t *s = SLOT(m, i);
    if (s[0]) memcpy(SLOT(&n, find(&n, s + 1)), s, (n.words + 1) * sizeof *s);
  }
  free(m->slots);
  *m = n;
  return 0;
}

int tuple_map_put(tuple_map *m, const tuple_key *k, int64_t val) {
  if ((m->count + 1) * 2 > m->cap && tuple_grow(m)) return -1;
  uint64_t *s = SLOT(m, find(m, k->w));
  if (!s[0]) {
    memcpy(s + 1, k->w, m->words * sizeof *s);
    m->count++;
  }
  s[0] = (uint64_t)val;
  return 0;
}

int tuple_map_del(tuple_map *m, const tuple_key *k) {
  if (!m->cap) return 0;
  size_t mask = m->cap - 1, i = find(m, k->w);
  if (!SLOT(m, i)[0]) return 0;
  /* Backward-shift deletion keeps probe chains intact without tombstones,
   * which matters for the heap map: it sees one delete per free. */
  size_t j = i;
  for (;;) {
    j = (j + 1) & mask;
    uint64_t *sj = SLOT(m, j);
    if (!sj[0]) break;
    size_t home = (size_t)tuple_hash(sj + 1, m->words) & mask;
    /* Move j into the hole at i when its home is not in (i, j]. */
    if ((i <= j) ? (home <= i || home > j) : (home <= i && home > j)) {
      memcpy(SLOT(m, i), sj, (m->words + 1) * sizeof *sj);
      i = j;
    }
  }
  SLOT(m, i)[0] = 0;
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
  return ljp_hash64(ljp__hash_bytes(s, n) ^ ljp_hash64(a) ^
                    ljp_hash64(b + 0x51));
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
