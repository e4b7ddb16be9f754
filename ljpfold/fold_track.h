/*
 * fold_track.h — which tree node the last sample landed on.
 *
 * A folder adds each sample to its call tree and keeps no per-sample
 * record; speedscope's sampled profiles want the samples in stream (time)
 * order.  A tracker remembers every node's total weight as of the last
 * sample, so after the next one the path whose totals moved leads from the
 * root to that sample's leaf: depth x fan-out steps, no frame naming of
 * its own (the stacks stay exactly the folder's).
 */
#ifndef LJPFOLD_TRACK_H
#define LJPFOLD_TRACK_H

#include "ljp.h"

typedef struct fold_track {
  int64_t *total;          /* node -> total weight at the last call */
  size_t ntotal;
  uint32_t *kids;          /* scratch for ljp_tree_children */
  size_t nkids;
} fold_track;

void fold_track_init(fold_track *k);
void fold_track_free(fold_track *k);
/* The node the weight added since the last call (to t, one stack) landed
 * on: 0 when nothing was added, UINT32_MAX when out of memory. */
uint32_t fold_track_leaf(fold_track *k, const ljp_tree *t);

#endif
