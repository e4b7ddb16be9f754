/* layout.h — which call-tree nodes a flame graph draws, and where.
 *
 * Boxes come in depth-first order (root first, siblings sorted by name, as
 * flamegraph.pl orders them), positioned in weight units: a box starts
 * where its previous sibling ends, the first child where its parent
 * starts.  Nodes narrower than the minimum width are pruned with their
 * subtrees before anything is written, and at most max_frames boxes are
 * kept (the widest), so the file grows with what is visible only. */
#ifndef LJPSVG_LAYOUT_H
#define LJPSVG_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

#include "ljp.h"

/* 16 bytes: a graph may have several 100 k boxes before the cut.  A box's
 * parent is the nearest box before it one level up (depth-first order),
 * and its width is its node's total: neither is stored. */
typedef struct fg_box {
  uint32_t node;           /* tree node (0 = the root, drawn as "all") */
  uint32_t depth;
  int64_t start;           /* weight offset from the left edge */
} fg_box;

typedef struct fg_layout {
  fg_box *boxes;
  size_t n;
  uint32_t max_depth;
  int64_t total;           /* weight of the full width */
  size_t pruned;           /* nodes dropped for being narrow or over cap */
  const ljp_tree *tree;    /* whose nodes the boxes are */
} fg_layout;

/* total: weight of the full width (>= the root's total); min_weight: boxes
 * narrower are dropped; max_frames: 0 = no cap.  0, or -1 when out of
 * memory. */
int fg_layout_build(const ljp_tree *t, int64_t total, double min_weight,
                    size_t max_frames, fg_layout *out);
void fg_layout_free(fg_layout *l);

/* Box i's width in weight units: the root's is the layout's total, every
 * other its node's total (0 if negative). */
int64_t fg_box_width(const fg_layout *l, size_t i);

/* Box i's parent box (SIZE_MAX for the root), found by looking back: for
 * checks, not for walks (a walk keeps the path by depth instead). */
size_t fg_box_parent(const fg_layout *l, size_t i);

#endif
