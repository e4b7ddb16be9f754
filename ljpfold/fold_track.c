/*
 * fold_track.c — see fold_track.h.
 */
#include "fold_track.h"

#include <stdlib.h>
#include <string.h>

void fold_track_init(fold_track *k) { memset(k, 0, sizeof(*k)); }

void fold_track_free(fold_track *k) {
  free(k->total);
  free(k->kids);
  fold_track_init(k);
}

uint32_t fold_track_leaf(fold_track *k, const ljp_tree *t) {
  size_t nodes = ljp_tree_node_count(t);
  if (nodes > k->ntotal) {
    /* New nodes had no weight before: zero is their last total. */
    size_t cap = k->ntotal ? k->ntotal : 64;
    while (cap < nodes)
      cap *= 2;
    int64_t *nt = realloc(k->total, cap * sizeof(*nt));
    if (!nt)
      return UINT32_MAX;
    memset(nt + k->ntotal, 0, (cap - k->ntotal) * sizeof(*nt));
    k->total = nt;
    k->ntotal = cap;
  }
  uint32_t node = 0;
  k->total[0] = ljp_tree_node_total(t, 0);
  for (;;) {
    size_t n = ljp_tree_children(t, node, k->kids, k->nkids);
    if (n > k->nkids) {
      uint32_t *nk = realloc(k->kids, n * sizeof(*nk));
      if (!nk)
        return UINT32_MAX;
      k->kids = nk;
      k->nkids = n;
      n = ljp_tree_children(t, node, k->kids, k->nkids);
    }
    uint32_t next = 0;
    for (size_t i = 0; i < n && !next; i++) {
      int64_t tot = ljp_tree_node_total(t, k->kids[i]);
      if (tot != k->total[k->kids[i]]) {
        k->total[k->kids[i]] = tot;
        next = k->kids[i];
      }
    }
    if (!next) /* no child moved: the stack ends here */
      return node;
    node = next;
  }
}
