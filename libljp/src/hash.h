/*
 * hash.h — the toolkit's hash functions, one copy for the library and the
 * tools (the tools reach it through libljp/cli/cli_hash.h): every hash
 * table, in libljp, ljpdump's reports and ljpdb's importer, mixes its keys
 * with these.
 */
#ifndef LJP_HASH_H
#define LJP_HASH_H

#include <stddef.h>
#include <stdint.h>

/* MurmurHash3's 64-bit finaliser: every input bit affects every output
 * bit, so sequential addresses and ids spread over a power-of-two table. */
static inline uint64_t ljp_hash64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

/* n bytes at p (FNV-1a a word at a time, then ljp_hash64). */
uint64_t ljp__hash_bytes(const void *p, size_t n);

#endif
