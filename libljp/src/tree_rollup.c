/*
 * tree_rollup.c — the function view of a tree: self and total per frame.
 *
 * Self weights add up per frame directly.  A total must count each stack
 * once however often its frame recurs in it, so it is the sum of the
 * totals of the frame's outermost nodes: those with no ancestor of the same
 * frame.  One depth-first walk finds them, keeping per frame the number of
 * nodes of that frame on the current path.
 */
#include "tree_impl.h"

#include <stdlib.h>
#include <string.h>

/* Adds each outermost node's total to its frame.  The walk follows the
 * sibling lists and parent links, so it needs no stack however deep the
 * tree; on_path[f] counts the nodes of frame f between the root and the
 * node being visited. */
static void outermost_totals(const ljp_tree *t, uint32_t *on_path,
                             int64_t *total)
{
  const tree_node *nodes = t->nodes;
  uint32_t n = ljp__node_first_child(&nodes[0]);
  while (n) {
    uint32_t f = nodes[n].frame;
    if (on_path[f]++ == 0)
      total[f] = ljp__add_wrap(total[f], ljp__node_total(t, n));
    if (ljp__node_first_child(&nodes[n])) {
      n = ljp__node_first_child(&nodes[n]);
      continue;
    }
    /* Leave n, and each ancestor whose children are all done. */
    while (n) {
      on_path[nodes[n].frame]--;
      if (nodes[n].next_sibling) {
        n = nodes[n].next_sibling;
        break;
      }
      n = nodes[n].parent;
    }
  }
}

LJP_API ljp_status ljp_tree_rollup(const ljp_tree *t, int64_t *self,
                                   int64_t *total, size_t n)
{
  if (!t || n < t->nframes)
    return LJP_E_ARG;
  if (self) {
    memset(self, 0, n * sizeof *self);
    for (uint32_t i = 1; i < t->nnodes; i++)
      self[t->nodes[i].frame] =
          ljp__add_wrap(self[t->nodes[i].frame], ljp__node_self(t, i));
  }
  if (!total)
    return LJP_OK;
  uint32_t *on_path = calloc(t->nframes, sizeof *on_path);
  if (!on_path)
    return LJP_E_NOMEM;
  memset(total, 0, n * sizeof *total);
  if (t->totals_dirty) /* logically const: a cache of the self weights */
    ljp__tree_sum_totals((ljp_tree *)t);
  outermost_totals(t, on_path, total);
  free(on_path);
  return LJP_OK;
}
