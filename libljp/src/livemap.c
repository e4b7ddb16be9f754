/*
 * livemap.c — open addressing with linear probes over inline blocks; see
 * livemap.h for why.
 */
#include "livemap.h"

#include "hash.h"

#include <stdlib.h>
#include <string.h>

void ljp__livemap_free(livemap *m) {
  free(m->slots);
  memset(m, 0, sizeof(*m));
}

static uint32_t tag_of(uint64_t addr) {
  return (uint32_t)(ljp_hash64(addr) >> 32) | 1;
}

/* Tables stay below 2^31 slots: the tag has 31 bits of home. */
static size_t home_of(uint32_t tag, size_t mask) {
  return (size_t)(tag >> 1) & mask;
}

live_block *ljp__livemap_get(const livemap *m, uint64_t addr) {
  if (!m->cap)
    return NULL;
  size_t mask = m->cap - 1;
  uint32_t tag = tag_of(addr);
  for (size_t i = home_of(tag, mask);; i = (i + 1) & mask) {
    live_block *b = &m->slots[i];
    if (!b->tag)
      return NULL;
    if (b->tag == tag && b->addr == addr)
      return b;
  }
}

static int grow(livemap *m) {
  size_t ncap = m->cap ? m->cap * 2 : 256;
  if (ncap > (size_t)1 << 31)
    return -1;
  live_block *ns = calloc(ncap, sizeof(*ns));
  if (!ns)
    return -1;
  for (size_t j = 0; j < m->cap; j++) {
    if (!m->slots[j].tag)
      continue;
    size_t i = home_of(m->slots[j].tag, ncap - 1);
    while (ns[i].tag)
      i = (i + 1) & (ncap - 1);
    ns[i] = m->slots[j];
  }
  free(m->slots);
  m->slots = ns;
  m->cap = ncap;
  return 0;
}

live_block *ljp__livemap_put(livemap *m, uint64_t addr) {
  /* At most 3/4 full: a random address costs a cache miss or two, and a
   * smaller table of the same live set misses less often than a sparser
   * one's shorter probe runs would save. */
  if ((m->count + 1) * 4 > m->cap * 3 && grow(m))
    return NULL;
  uint32_t tag = tag_of(addr);
  size_t mask = m->cap - 1, i = home_of(tag, mask);
  for (; m->slots[i].tag; i = (i + 1) & mask)
    if (m->slots[i].tag == tag && m->slots[i].addr == addr)
      return &m->slots[i];
  live_block *b = &m->slots[i];
  b->addr = addr;
  b->size = 0;
  b->node = 0;
  b->tag = tag;
  m->count++;
  return b;
}

int ljp__livemap_del(livemap *m, uint64_t addr, live_block *out) {
  live_block *b = ljp__livemap_get(m, addr);
  if (!b)
    return 0;
  *out = *b;
  size_t mask = m->cap - 1, i = (size_t)(b - m->slots);
  /* Backward-shift deletion: a later member of the run whose home is not
   * strictly inside (hole, member] moves into the hole, so no lookup ever
   * stops early at a gap it should have probed past. */
  for (size_t j = i;;) {
    j = (j + 1) & mask;
    if (!m->slots[j].tag)
      break;
    size_t home = home_of(m->slots[j].tag, mask);
    int stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
    if (!stays) {
      m->slots[i] = m->slots[j];
      i = j;
    }
  }
  m->slots[i].tag = 0;
  m->count--;
  return 1;
}
