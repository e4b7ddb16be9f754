/*
 * tree_order.c — the order of a node's children: by frame (name bytes, a
 * prefix first, then class, then line), as every sorted output lists them.
 *
 * Siblings are kept unsorted (tree.c) and sorted when listed.  Compares go
 * by name, eight bytes a step; once sorting by name has cost about as much
 * as ranking every frame would, the frames are ranked once and siblings
 * compare by integer rank (Frame ranks below).
 */
#include "tree_impl.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Sorted children                                                          */
/* ------------------------------------------------------------------------ */

/* n <= 8 bytes as a big-endian number, zero-padded: comparing two of
 * them is comparing the bytes in memcmp order, padding aside. */
static inline uint64_t load_be(const char *p, uint32_t n)
{
  const unsigned char *u = (const unsigned char *)p;
  if (n >= 8)
    return (uint64_t)u[0] << 56 | (uint64_t)u[1] << 48 |
           (uint64_t)u[2] << 40 | (uint64_t)u[3] << 32 |
           (uint64_t)u[4] << 24 | (uint64_t)u[5] << 16 |
           (uint64_t)u[6] << 8 | u[7];
  uint64_t x = 0;
  for (uint32_t i = 0; i < n; i++)
    x |= (uint64_t)u[i] << (56 - 8 * i);
  return x;
}

/* Order of frames: name bytes (a prefix first), then class, then line. */
static int frame_cmp(const ljp_tree *t, uint32_t a, uint32_t b)
{
  const tree_frame *fa = &t->frames[a], *fb = &t->frames[b];
  uint32_t n = fa->len < fb->len ? fa->len : fb->len;
  for (uint32_t i = 0; i < n; i += 8) {
    uint32_t m = n - i < 8 ? n - i : 8;
    uint64_t x = load_be(fa->name + i, m), y = load_be(fb->name + i, m);
    if (x != y)
      return x < y ? -1 : 1;
  }
  if (fa->len != fb->len)
    return fa->len < fb->len ? -1 : 1;
  if (fa->cls != fb->cls)
    return fa->cls < fb->cls ? -1 : 1;
  if (fa->line != fb->line)
    return fa->line < fb->line ? -1 : 1;
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Frame ranks                                                              */
/* ------------------------------------------------------------------------ */

/* Sorting siblings by frame_cmp costs two indirections and a name compare
 * per compare; a frame's rank (its place among all frames in that order)
 * makes a compare two loads.  Ranks are computed for all frames at once
 * and kept while frames are added: a frame interned later has none and
 * is compared by name, which agrees with the ranks, so the mixed order is
 * still frame_cmp's. */

#define RANK_RUN 16

/* The rank sort's view of the frames: the bytes every name starts with
 * (a program's frames often share a long prefix: "@/srv/app/...") are
 * skipped, and of the rest each item carries the first 16 as numbers
 * (zero-padded), which decide most compares without reading the frame
 * or its name.  Items are 24 bytes, twice per frame, while sorting. */
typedef struct rank_sort {
  const ljp_tree *t;
  uint32_t skip;     /* bytes all names share */
} rank_sort;

typedef struct rank_item {
  uint64_t k0, k1;
  uint32_t len, id;
} rank_item;

/* The length of the prefix all frames' names share. */
static uint32_t common_prefix(const ljp_tree *t)
{
  const tree_frame *f1 = &t->frames[1];
  uint32_t n = f1->len;
  for (uint32_t id = 2; id < t->nframes && n; id++) {
    const tree_frame *f = &t->frames[id];
    uint32_t i = 0, m = f->len < n ? f->len : n;
    while (i < m && f->name[i] == f1->name[i])
      i++;
    n = i;
  }
  return n;
}

static void item_init(const rank_sort *rs, rank_item *it, uint32_t id)
{
  const tree_frame *f = &rs->t->frames[id];
  const char *p = f->name + rs->skip;
  uint32_t n = f->len - rs->skip;
  it->k0 = load_be(p, n);
  it->k1 = n > 8 ? load_be(p + 8, n - 8) : 0;
  it->len = f->len;
  it->id = id;
}

/* frame_cmp on rank items.  Keys that differ decide: the bytes before
 * the first difference are equal, and where one name has ended its zero
 * padding is below any byte but 0, as the name is below a longer one
 * (padding equal to a 0 byte leaves the keys equal, and the full compare
 * follows).  Past the keys the names themselves are compared. */
static inline int item_cmp(const rank_sort *rs, const rank_item *a,
                           const rank_item *b)
{
  if (a->k0 != b->k0)
    return a->k0 < b->k0 ? -1 : 1;
  if (a->k1 != b->k1)
    return a->k1 < b->k1 ? -1 : 1;
  uint32_t n = a->len < b->len ? a->len : b->len, from = rs->skip + 16;
  if (n > from) {
    const tree_frame *fr = rs->t->frames;
    int c = memcmp(fr[a->id].name + from, fr[b->id].name + from, n - from);
    if (c)
      return c;
  }
  if (a->len != b->len)
    return a->len < b->len ? -1 : 1;
  return frame_cmp(rs->t, a->id, b->id); /* same name: class, then line */
}

/* Merges the sorted runs a[lo..mid) and a[mid..hi) into b[lo..hi). */
static void merge_items(const rank_sort *rs, const rank_item *a,
                        rank_item *b, size_t lo, size_t mid, size_t hi)
{
  size_t i = lo, j = mid, k = lo;
  while (i < mid && j < hi)
    b[k++] = item_cmp(rs, &a[j], &a[i]) < 0 ? a[j++] : a[i++];
  while (i < mid)
    b[k++] = a[i++];
  while (j < hi)
    b[k++] = a[j++];
}

/* Sorts it[0..n) by frame order with tmp[0..n) as scratch: a bottom-up
 * merge sort over insertion-sorted runs, so O(n log n) compares on any
 * input and no recursion.  Returns the array the result is in. */
static rank_item *sort_items(const rank_sort *rs, rank_item *it,
                             rank_item *tmp, size_t n)
{
  for (size_t lo = 0; lo < n; lo += RANK_RUN) {
    size_t hi = n - lo > RANK_RUN ? lo + RANK_RUN : n;
    for (size_t i = lo + 1; i < hi; i++) {
      rank_item x = it[i];
      size_t j = i;
      for (; j > lo && item_cmp(rs, &x, &it[j - 1]) < 0; j--)
        it[j] = it[j - 1];
      it[j] = x;
    }
  }
  rank_item *a = it, *b = tmp;
  for (size_t w = RANK_RUN; w < n; w *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * w) {
      size_t mid = n - lo > w ? lo + w : n;
      size_t hi = n - mid > w ? mid + w : n;
      merge_items(rs, a, b, lo, mid, hi);
    }
    rank_item *x = a;
    a = b;
    b = x;
  }
  return a;
}

/* Ranks every frame interned so far.  Out of memory the old ranks stay
 * (they are still right for the frames they cover). */
static void ranks_build(ljp_tree *t)
{
  size_t n = t->nframes - 1; /* frames 1..n */
  uint32_t *rank = malloc((n + 1) * sizeof *rank);
  rank_item *it = malloc(2 * n * sizeof *it + 1);
  if (!rank || !it) {
    free(rank);
    free(it);
    return;
  }
  rank_sort rs = {t, n ? common_prefix(t) : 0};
  for (size_t i = 0; i < n; i++)
    item_init(&rs, &it[i], (uint32_t)i + 1);
  const rank_item *sorted = sort_items(&rs, it, it + n, n);
  rank[0] = 0;
  for (size_t i = 0; i < n; i++)
    rank[sorted[i].id] = (uint32_t)i + 1;
  free(it);
  free(t->rank);
  t->rank = rank;
  t->rank_n = t->nframes;
}

/* About the name compares sorting n nodes costs: n log2 n. */
static uint64_t sort_cost(uint64_t n)
{
  uint64_t lg = 0;
  if (n < 2)
    return 0;
  while ((uint64_t)1 << lg < n)
    lg++;
  return n * lg;
}

/* Rebuilds the ranks when that pays.  A build costs about the compares
 * of sorting all frames; it waits until sorting siblings by name has
 * cost as much since the last one, so a tree walked once (a flame graph,
 * folded output: about as many compares as ranking its frames) pays
 * nothing for it, and one asked again and again spends on builds no
 * more than it spent comparing names before them.  It also waits until
 * a third of the frames are new, so that over a growing tree the builds
 * cost O(F log F) in all, however queries and new frames interleave. */
static void ranks_consider(ljp_tree *t)
{
  uint32_t unranked = t->nframes - t->rank_n;
  uint64_t cost = sort_cost(t->nframes);
  if (unranked < t->rank_n / 2 || t->rank_work < cost) {
    /* Not yet: queries skip this call until the work is due again (the
     * growth rule is asked again after a frame count's worth). */
    t->rank_due = t->rank_work < cost ? cost : t->rank_work + t->nframes;
    return;
  }
  t->rank_work = 0;
  t->rank_due = 0;
  ranks_build(t);
}

/* Inline, the rest not: every query passes here, and the common cases
 * (all frames ranked, or a build not due) must cost a compare or two. */
static inline void ranks_refresh(const ljp_tree *ct)
{
  if (ct->rank_n != ct->nframes && ct->rank_work >= ct->rank_due)
    ranks_consider((ljp_tree *)ct); /* logically const: a cache */
}

static inline void ranks_note_work(const ljp_tree *ct, size_t n)
{
  ljp_tree *t = (ljp_tree *)ct; /* logically const: a cache */
  if (t->rank_n != t->nframes)
    t->rank_work += sort_cost(n);
}

/* ------------------------------------------------------------------------ */
/* Sorting siblings                                                         */
/* ------------------------------------------------------------------------ */

/* Whether node a comes before node b: by rank when both frames have one,
 * else by frame_cmp. */
static inline int node_before(const ljp_tree *t, uint32_t a, uint32_t b)
{
  uint32_t fa = t->nodes[a].frame, fb = t->nodes[b].frame;
  if (fa < t->rank_n && fb < t->rank_n)
    return t->rank[fa] < t->rank[fb];
  return frame_cmp(t, fa, fb) < 0;
}

/* Max-heap sift-down over h[0..n) by node_before. */
static void sift_down(const ljp_tree *t, uint32_t *h, size_t n, size_t i)
{
  for (;;) {
    size_t l = 2 * i + 1, m = i;
    if (l < n && node_before(t, h[m], h[l]))
      m = l;
    if (l + 1 < n && node_before(t, h[m], h[l + 1]))
      m = l + 1;
    if (m == i)
      return;
    uint32_t tmp = h[i];
    h[i] = h[m];
    h[m] = tmp;
    i = m;
  }
}

static void heapify(const ljp_tree *t, uint32_t *h, size_t n)
{
  for (size_t i = n / 2; i-- > 0;)
    sift_down(t, h, n, i);
}

/* Most nodes have a few children: below this many an insertion sort
 * beats the heap. */
#define SMALL_SORT 16

/* Insertion sort of a few nodes whose frames are all ranked, on keys
 * (rank, node) that hold all a compare needs; -1 (h untouched) when a
 * frame has no rank. */
static int sort_small_ranked(const ljp_tree *t, uint32_t *h, size_t n)
{
  uint64_t key[SMALL_SORT];
  for (size_t i = 0; i < n; i++) {
    uint32_t f = t->nodes[h[i]].frame;
    if (f >= t->rank_n)
      return -1;
    uint64_t x = (uint64_t)t->rank[f] << 32 | h[i];
    size_t j = i;
    for (; j > 0 && x < key[j - 1]; j--)
      key[j] = key[j - 1];
    key[j] = x;
  }
  for (size_t i = 0; i < n; i++)
    h[i] = (uint32_t)key[i];
  return 0;
}

/* Siblings never compare equal (distinct frames), so stability does not
 * matter.  A few: insertion sort; more: heapsort, in place, no
 * allocation, O(n log n) on any input. */
static void sort_nodes(const ljp_tree *t, uint32_t *h, size_t n)
{
  if (n <= SMALL_SORT) {
    if (n < 2 || sort_small_ranked(t, h, n) == 0)
      return;
    for (size_t i = 1; i < n; i++) {
      uint32_t x = h[i];
      size_t j = i;
      for (; j > 0 && node_before(t, x, h[j - 1]); j--)
        h[j] = h[j - 1];
      h[j] = x;
    }
    return;
  }
  heapify(t, h, n);
  for (size_t end = n; end > 1; end--) {
    uint32_t tmp = h[0];
    h[0] = h[end - 1];
    h[end - 1] = tmp;
    sift_down(t, h, end - 1, 0);
  }
}

void ljp__tree_sort_nodes(const ljp_tree *t, uint32_t *h, size_t n)
{
  ranks_refresh(t);
  sort_nodes(t, h, n);
  ranks_note_work(t, n);
}

LJP_API size_t ljp_tree_children(const ljp_tree *t, uint32_t node, uint32_t *out,
                         size_t cap)
{
  if (!t || node >= t->nnodes)
    return 0;
  if (!out)
    cap = 0;
  ranks_refresh(t);
  /* The first cap children in order: once more than cap are seen, keep
   * the cap smallest in a max-heap; then sort what was kept. */
  size_t count = 0, k = 0;
  int heap = 0;
  for (uint32_t c = ljp__node_first_child(&t->nodes[node]); c;
       c = t->nodes[c].next_sibling, count++) {
    if (k < cap) {
      out[k++] = c;
    } else if (cap) {
      if (!heap) {
        heapify(t, out, k);
        heap = 1;
      }
      if (node_before(t, c, out[0])) {
        out[0] = c;
        sift_down(t, out, k, 0);
      }
    }
  }
  sort_nodes(t, out, k);
  ranks_note_work(t, count);
  return count;
}
