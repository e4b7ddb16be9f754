/*
 * fold_track.c — see fold_track.h.
 */
#include "fold_track.h"

#include <stdlib.h>
#include <string.h>

#define TRACK_SLOTS 4096u

void fold_track_init(fold_track *k) { memset(k, 0, sizeof(*k)); }

void fold_track_free(fold_track *k) {
  free(k->self);
  free(k->keys);
  free(k->leaves);
  fold_track_init(k);
}

static int grow(fold_track *k, size_t nodes) {
  if (!k->keys) {
    k->keys = calloc(TRACK_SLOTS, sizeof(*k->keys));
    k->leaves = calloc(TRACK_SLOTS, sizeof(*k->leaves));
    if (!k->keys || !k->leaves)
      return -1;
    k->nslots = TRACK_SLOTS;
  }
  if (nodes <= k->nself)
    return 0;
  size_t cap = k->nself ? k->nself : 256;
  while (cap < nodes)
    cap *= 2;
  int64_t *ns = realloc(k->self, cap * sizeof(*ns));
  if (!ns)
    return -1;
  memset(ns + k->nself, 0, (cap - k->nself) * sizeof(*ns));
  k->self = ns;
  k->nself = cap;
  return 0;
}

static int moved(const fold_track *k, const ljp_tree *t, uint32_t node) {
  return ljp_tree_node_self(t, node) != k->self[node];
}

uint32_t fold_track_leaf(fold_track *k, const ljp_tree *t, uint64_t key) {
  size_t nodes = ljp_tree_node_count(t);
  if (grow(k, nodes))
    return UINT32_MAX;
  size_t slot = (size_t)(key ^ (key >> 29)) & (k->nslots - 1);
  uint32_t leaf = 0;
  if (nodes > k->known) {
    leaf = (uint32_t)(nodes - 1); /* new nodes: the deepest is the leaf */
  } else if (k->keys[slot] == key && k->leaves[slot] &&
             moved(k, t, k->leaves[slot])) {
    leaf = k->leaves[slot];
  } else {
    for (uint32_t n = 1; n < nodes && !leaf; n++)
      if (moved(k, t, n))
        leaf = n;
  }
  k->known = nodes;
  if (!leaf)
    return 0;
  k->self[leaf] = ljp_tree_node_self(t, leaf);
  k->keys[slot] = key;
  k->leaves[slot] = leaf;
  return leaf;
}
