/*
 * livemap.h — the live heap as the folder sees it: block address -> the
 * block's size and the tree node it is charged to.
 *
 * Live-bytes folding adds and removes one entry per memory event, so the
 * values sit inline in the table (no allocation per block) and deletion
 * shifts the probe run back (no tombstones): a long stream with a steady
 * live set keeps a table of steady size and steady probe lengths.
 */
#ifndef LJP_LIVEMAP_H
#define LJP_LIVEMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct live_block {
  uint64_t addr, size;
  uint32_t node;
  /* The address's hash with its low bit set, 0 in an empty slot (any
   * address, 0 included, is a key): deleting moves entries by their home
   * slot, which this gives without hashing their addresses again. */
  uint32_t tag;
} live_block;

typedef struct livemap {
  live_block *slots;
  size_t cap, count; /* cap: 0 or a power of two */
} livemap;

void ljp__livemap_free(livemap *m);
/* The block at addr, or NULL. */
live_block *ljp__livemap_get(const livemap *m, uint64_t addr);
/* The block at addr, added (size 0, node 0) if absent; NULL on OOM. */
live_block *ljp__livemap_put(livemap *m, uint64_t addr);
/* Removes the block at addr into *out; 0 if it was not there. */
int ljp__livemap_del(livemap *m, uint64_t addr, live_block *out);

#endif
