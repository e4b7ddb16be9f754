/*
 * intern.h — the in-memory maps of the importer.
 *
 * Rows the database references by id (symbols, traces, heap
 * sites) are interned while the stream is read, so each distinct thing is
 * inserted once and every sample or event stores small integer ids.  All
 * maps are open addressing with linear probing over keys of a few 64-bit
 * words; memory grows with distinct keys, never with the number of samples.
 */
#ifndef LJPDB_INTERN_H
#define LJPDB_INTERN_H

#include <stddef.h>
#include <stdint.h>

#define TUPLE_WORDS 7

/* A key of up to TUPLE_WORDS words; a map uses its first `words`. */
typedef struct tuple_key {
  uint64_t w[TUPLE_WORDS];
} tuple_key;

/* (w[0..words-1]) -> non-zero int64 value.  Each slot holds the value and
 * the key side by side, so a probe touches one cache line. */
typedef struct tuple_map {
  uint64_t *slots;         /* cap * (words + 1); value 0 = empty slot */
  size_t cap, count;       /* cap: power of two, or 0 */
  unsigned words;
} tuple_map;

void tuple_map_init(tuple_map *m, unsigned words);
void tuple_map_free(tuple_map *m);
void tuple_map_clear(tuple_map *m);
/* Returns a pointer to the value of k, or NULL when absent. */
int64_t *tuple_map_get(const tuple_map *m, const tuple_key *k);
/* Inserts or overwrites (val must not be 0); 0, or -1 when out of memory. */
int tuple_map_put(tuple_map *m, const tuple_key *k, int64_t val);
/* Removes k; returns 1 when it was present. */
int tuple_map_del(tuple_map *m, const tuple_key *k);

/* (word, word, bytes) -> int64: symbol rows deduplicated by their name. */
typedef struct name_map {
  struct name_entry *slots;
  size_t cap, count;
} name_map;

void name_map_init(name_map *m);
void name_map_free(name_map *m);
void name_map_clear(name_map *m);
int64_t *name_map_get(const name_map *m, uint64_t a, uint64_t b,
                      const char *name, size_t len);
int name_map_put(name_map *m, uint64_t a, uint64_t b, const char *name,
                 size_t len, int64_t val);

#endif
