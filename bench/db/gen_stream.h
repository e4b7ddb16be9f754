/*
 * gen_stream.h — synthetic profiles of any length, written with libljp's
 * encoder, for the import benchmark and the interrupted-import test.
 */
#ifndef LJPDB_GEN_STREAM_H
#define LJPDB_GEN_STREAM_H

#include "ljp.h"

#include <stdint.h>

/* Writes a profile of kind LJP_KIND_SYSPROF (n samples: Lua-guest stacks of
 * depth 3..14 over a few thousand distinct stacks, host stacks, some GC,
 * INTERP and TRACE samples) or LJP_KIND_MEMPROF (n events: allocations,
 * frees of earlier blocks and reallocations from Lua, C, trace and internal
 * sources) to path.  The same (kind, n, seed) gives the same bytes.
 * Returns 0, or -1 with errno set. */
int gen_stream(const char *path, ljp_kind kind, uint64_t n, uint32_t seed);

/* As gen_stream for sysprof, choosing how the stack of one sample relates
 * to the previous one: local = 0 draws every stack uniformly (worst case
 * for caches), local = 1 keeps 15 of 16 samples within the previous
 * sample's group of 8 stacks, as a program sampled inside a loop does. */
int gen_sysprof(const char *path, uint64_t n, uint32_t seed, int local);

#endif
