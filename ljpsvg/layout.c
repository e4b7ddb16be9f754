/* layout.c — pruning and placing flame graph boxes.  See layout.h. */
#include "layout.h"

#include <stdlib.h>
#include <string.h>

typedef struct pending {
  uint32_t node, parent_box;
  int64_t start;
} pending;

static int64_t width_of(const ljp_tree *t, uint32_t node)
{
  int64_t w = ljp_tree_node_total(t, node);
  return w > 0 ? w : 0;
}

static int cmp_desc(const void *a, const void *b)
{
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? 1 : x > y ? -1 : 0;
}

/* Keeps the max_frames widest boxes (ties: first in order), always with
 * their parents.  In a tree of non-negative weights a parent is never
 * narrower than its child, so the kept set is the same as "widest first". */
static int cap_boxes(fg_layout *l, size_t max_frames)
{
  int64_t *w = malloc(l->n * sizeof *w);
  uint32_t *newidx = malloc(l->n * sizeof *newidx);
  if (!w || !newidx) {
    free(w);
    free(newidx);
    return -1;
  }
  for (size_t i = 0; i < l->n; i++)
    w[i] = l->boxes[i].width;
  qsort(w + 1, l->n - 1, sizeof *w, cmp_desc);  /* the root always stays */
  int64_t threshold = w[max_frames - 1];
  size_t above = 1;
  for (size_t i = 1; i < l->n && w[i] > threshold; i++)
    above++;
  size_t ties = max_frames - above;
  size_t k = 0;
  uint32_t maxd = 0;
  for (size_t i = 0; i < l->n; i++) {
    fg_box b = l->boxes[i];
    int keep = i == 0;
    if (!keep && newidx[b.parent] != UINT32_MAX) {
      if (b.width > threshold)
        keep = 1;
      else if (b.width == threshold && ties) {
        keep = 1;
        ties--;
      }
    }
    if (!keep) {
      newidx[i] = UINT32_MAX;
      continue;
    }
    if (i)
      b.parent = newidx[b.parent];
    newidx[i] = (uint32_t)k;
    if (b.depth > maxd)
      maxd = b.depth;
    l->boxes[k++] = b;
  }
  l->pruned += l->n - k;
  l->n = k;
  l->max_depth = maxd;
  free(w);
  free(newidx);
  return 0;
}

int fg_layout_build(const ljp_tree *t, int64_t total, double min_weight,
                    size_t max_frames, fg_layout *out)
{
  memset(out, 0, sizeof *out);
  out->total = total;
  size_t cap = 1024, n = 0;
  size_t pcap = 1024, np = 0;
  size_t kcap = 256;
  fg_box *boxes = malloc(cap * sizeof *boxes);
  pending *stack = malloc(pcap * sizeof *stack);
  uint32_t *kids = malloc(kcap * sizeof *kids);
  if (!boxes || !stack || !kids)
    goto nomem;

  stack[np++] = (pending){0, UINT32_MAX, 0};
  while (np) {
    pending p = stack[--np];
    if (n == cap) {
      cap *= 2;
      fg_box *b = realloc(boxes, cap * sizeof *b);
      if (!b)
        goto nomem;
      boxes = b;
    }
    uint32_t me = (uint32_t)n;
    fg_box *b = &boxes[n++];
    b->node = p.node;
    b->parent = p.parent_box;
    b->depth = ljp_tree_node_depth(t, p.node);
    b->start = p.start;
    b->width = p.node == 0 ? total : width_of(t, p.node);
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
    int64_t start = p.start, limit = p.start + b->width;
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
      stack[np++] = (pending){kids[i], me, s};
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
