/*
 * fold_track.h — which tree node the last sample landed on.
 *
 * A folder adds each sample to its call tree and keeps no per-sample
 * record; speedscope's sampled profiles want the samples in stream (time)
 * order.  The tracker keeps a snapshot of every node's self weight: the one
 * node whose self weight moved since the last call is where the sample
 * landed.  It is found without scanning the tree in the common cases: a
 * sample that created nodes landed on the last one created (the path is
 * created root first), and a sample whose content was seen before usually
 * lands where it did then (checked against the snapshot, so a stale guess
 * costs a scan, never a wrong answer).  The stacks stay exactly the
 * folder's: the tracker names no frame.
 */
#ifndef LJPFOLD_TRACK_H
#define LJPFOLD_TRACK_H

#include "ljp.h"

typedef struct fold_track {
  int64_t *self;           /* node -> self weight at the last call */
  size_t nself;            /* capacity; nodes beyond known start at 0 */
  size_t known;            /* nodes the tree had at the last call */
  uint64_t *keys;          /* direct-mapped guesses: content key -> leaf */
  uint32_t *leaves;
  size_t nslots;           /* power of two */
} fold_track;

void fold_track_init(fold_track *k);
void fold_track_free(fold_track *k);
/* The node the weight added to t since the last call (one stack) landed
 * on: 0 when nothing was added, UINT32_MAX when out of memory.  key
 * identifies the sample's content (equal samples, equal keys). */
uint32_t fold_track_leaf(fold_track *k, const ljp_tree *t, uint64_t key);

#endif
