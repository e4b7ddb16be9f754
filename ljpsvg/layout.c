/* layout.c — pruning and placing flame graph boxes.  See layout.h. */
#include "layout.h"

#include <stdlib.h>
#include <string.h>

typedef struct pending {
  uint32_t node, depth;
  int64_t start;
} pending;

static int64_t width_of(const ljp_tree *t, uint32_t node)
{
  int64_t w = ljp_tree_node_total(t, node);
  return w > 0 ? w : 0;
}

/* The k-th largest (0-based) of w[0..n), k < n; w is reordered.  Only
 * that value is wanted, not the order: a selection instead of a sort
 * (graphs of several 100 k boxes are cut to 50 k).  Three-way partitions
 * around the middle element, so equal widths (common) end a round; the
 * result does not depend on the pivots. */
static int64_t kth_largest(int64_t *w, size_t n, size_t k)
{
  size_t lo = 0, hi = n;   /* the answer is in w[lo..hi) */
  for (;;) {
    if (hi - lo == 1)
      return w[lo];
    int64_t pivot = w[lo + (hi - lo) / 2], t;
    /* [lo, gt_end) > pivot, [gt_end, i) == pivot, [lt_start, hi) < pivot */
    size_t gt_end = lo, i = lo, lt_start = hi;
    while (i < lt_start) {
      if (w[i] > pivot) {
        t = w[gt_end], w[gt_end++] = w[i], w[i++] = t;
      } else if (w[i] < pivot) {
        t = w[--lt_start], w[lt_start] = w[i], w[i] = t;
      } else {
        i++;
      }
    }
    if (k < gt_end)
      hi = gt_end;
    else if (k < lt_start)
      return pivot;
    else
      lo = lt_start;
  }
}

/* Keeps the max_frames widest boxes (ties: first in order), always with
 * their parents.  In a tree of non-negative weights a parent is never
 * narrower than its child, so the kept set is the same as "widest first".
 * Whether the box on the path at each depth was kept is tracked as the
 * boxes go by: a box's parent is the last box seen one level up. */
static int cap_boxes(fg_layout *l, size_t max_frames)
{
  int64_t *w = malloc(l->n * sizeof *w);
  unsigned char *kept = malloc((size_t)l->max_depth + 1);
  if (!w || !kept) {
    free(w);
    free(kept);
    return -1;
  }
  for (size_t i = 0; i < l->n; i++)
    w[i] = fg_box_width(l, i);
  /* The root always stays: the threshold is the (max_frames - 1)-th
   * widest of the others (the root's own width when it is alone). */
  int64_t threshold = max_frames < 2 ? w[0]
                      : kth_largest(w + 1, l->n - 1, max_frames - 2);
  size_t above = 1;
  for (size_t i = 1; i < l->n; i++)
    above += fg_box_width(l, i) > threshold;
  size_t ties = max_frames - above;
  size_t k = 0;
  uint32_t maxd = 0;
  for (size_t i = 0; i < l->n; i++) {
    fg_box b = l->boxes[i];
    int keep = i == 0;
    if (!keep && kept[b.depth - 1]) {
      int64_t bw = fg_box_width(l, i);
      if (bw > threshold)
        keep = 1;
      else if (bw == threshold && ties) {
        keep = 1;
        ties--;
      }
    }
    kept[b.depth] = (unsigned char)keep;
    if (!keep)
      continue;
    if (b.depth > maxd)
      maxd = b.depth;
    l->boxes[k++] = b;
  }
  l->pruned += l->n - k;
  l->n = k;
  l->max_depth = maxd;
  free(w);
  free(kept);
  return 0;
}

int fg_layout_build(const ljp_tree *t, int64_t total, double min_weight,
                    size_t max_frames, fg_layout *out)
{
  memset(out, 0, sizeof *out);
  out->total = total;
  out->tree = t;
  size_t cap = 1024, n = 0;
  size_t pcap = 1024, np = 0;
  size_t kcap = 256;
  fg_box *boxes = malloc(cap * sizeof *boxes);
  pending *stack = malloc(pcap * sizeof *stack);
  uint32_t *kids = malloc(kcap * sizeof *kids);
  if (!boxes || !stack || !kids)
    goto nomem;

  stack[np++] = (pending){0, ljp_tree_node_depth(t, 0), 0};
  while (np) {
    pending p = stack[--np];
    if (n == cap) {
      cap *= 2;
      fg_box *b = realloc(boxes, cap * sizeof *b);
      if (!b)
        goto nomem;
      boxes = b;
    }
    fg_box *b = &boxes[n++];
    b->node = p.node;
    b->depth = p.depth;
    b->start = p.start;
    int64_t bwidth = p.node == 0 ? total : width_of(t, p.node);
    if (b->depth > out->max_depth)
      out->max_depth = b->depth;

    size_t m = ljp_tree_children(t, p.node, kids, kcap);
    if (m > kcap) {
      while (kcap < m)
        kcap *= 2;
      uint32_t *k = realloc(kids, kcap * sizeof *k);
      if (!k)
        goto nomem;
      kids = k;
      ljp_tree_children(t, p.node, kids, kcap);
    }
    if (np + m > pcap) {
      while (pcap < np + m)
        pcap *= 2;
      pending *s = realloc(stack, pcap * sizeof *s);
      if (!s)
        goto nomem;
      stack = s;
    }
    /* Starts in order, then push in reverse so the first child pops first. */
    int64_t start = p.start, limit = p.start + bwidth;
    size_t first = np;
    for (size_t i = 0; i < m; i++) {
      int64_t w = width_of(t, kids[i]);
      int64_t s = start;
      /* Widths and starts are >= 0: the saturated sum and limit - s
       * cannot wrap (totals near INT64_MAX come from folded counts). */
      start = w > INT64_MAX - start ? INT64_MAX : start + w;
      /* A child drawn past its parent's end (negative sibling weights
       * elsewhere) would overlap a neighbour: leave it out. */
      if (w <= 0 || (double)w < min_weight || w > limit - s) {
        out->pruned++;
        continue;
      }
      /* A box's children are its node's children: one level deeper, no
       * walk up the tree to know it. */
      stack[np++] = (pending){kids[i], p.depth + 1, s};
    }
    for (size_t i = first, j = np; i + 1 < j; i++, j--) {
      pending tmp = stack[i];
      stack[i] = stack[j - 1];
      stack[j - 1] = tmp;
    }
  }
  free(stack);
  free(kids);
  out->boxes = boxes;
  out->n = n;
  if (max_frames && n > max_frames && cap_boxes(out, max_frames) != 0) {
    fg_layout_free(out);
    return -1;
  }
  return 0;

nomem:
  free(boxes);
  free(stack);
  free(kids);
  return -1;
}

void fg_layout_free(fg_layout *l)
{
  free(l->boxes);
  memset(l, 0, sizeof *l);
}

int64_t fg_box_width(const fg_layout *l, size_t i)
{
  return i == 0 ? l->total : width_of(l->tree, l->boxes[i].node);
}

size_t fg_box_parent(const fg_layout *l, size_t i)
{
  if (i == 0 || i >= l->n)
    return SIZE_MAX;
  uint32_t up = l->boxes[i].depth - 1;
  while (i-- > 0)
    if (l->boxes[i].depth == up)
      return i;
  return SIZE_MAX;
}
