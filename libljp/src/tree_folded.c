/*
 * tree_folded.c — folded output: "a;b;c N" per node with self weight.
 *
 * Lines must come out in bytewise order of their full text.  A depth-first
 * walk over name-sorted children gives exactly that, because a node's own
 * line ("a b N") sorts before its descendants' ("a b;c N": ' ' < ';') and
 * the subtrees of two siblings whose names differ within their common length
 * occupy disjoint, ordered ranges.  The walk is wrong only between siblings
 * where one name is a prefix of the other ("a" vs "a b", "a" vs "a;x", or
 * equal names of different classes or lines): then lines of both subtrees
 * interleave by bytes that follow the shorter name.  A name's extensions
 * follow it in sorted order (if a is a prefix of c and a < b < c then a is
 * a prefix of b), so such siblings form contiguous runs; each run is
 * rendered into memory and sorted as text, everything else streams.
 * Memory stays proportional to the output of those runs at most.
 */
#include "strbuf.h"
#include "tree_impl.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Text                                                                     */
/* ------------------------------------------------------------------------ */

/* " N\n" for a weight; returns its length (at most 23). */
static size_t format_count(char *out, int64_t v)
{
  char tmp[24];
  size_t n = 0;
  uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  do {
    tmp[n++] = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  size_t k = 0;
  out[k++] = ' ';
  if (v < 0)
    out[k++] = '-';
  while (n)
    out[k++] = tmp[--n];
  out[k++] = '\n';
  return k;
}

static int keep_line(int64_t self, int64_t min_weight)
{
  if (self == 0)
    return 0;
  uint64_t mag = self < 0 ? (uint64_t)0 - (uint64_t)self : (uint64_t)self;
  return min_weight <= 0 || mag >= (uint64_t)min_weight;
}

/* ------------------------------------------------------------------------ */
/* The walk's state                                                         */
/* ------------------------------------------------------------------------ */

typedef struct fold_ctx {
  const ljp_tree *t;
  int64_t min_weight;
  ljp_emit_fn emit;
  void *emit_ctx;
  uint32_t *child_start;   /* CSR: children of n are kids[child_start[n]..] */
  uint32_t *kids;
  strbuf path;           /* the stack text of the current node */
  /* Walk space, one entry per depth: the outer walk and a run's inner
   * walk never overlap in time, so they share these arrays. */
  uint32_t *stack;         /* the node at each depth */
  uint32_t *stack_idx;     /* its next child to visit */
  size_t *path_len;        /* path length before the node's name */
  uint32_t *chain;         /* run detection: names, each a prefix of the
                              next */
} fold_ctx;

static uint32_t nkids(const fold_ctx *c, uint32_t n)
{
  return c->child_start[n + 1] - c->child_start[n];
}

static const uint32_t *kids_of(const fold_ctx *c, uint32_t n)
{
  return c->kids + c->child_start[n];
}

/* Children of every node, sorted, in one array (CSR layout). */
static void build_children(fold_ctx *c)
{
  const ljp_tree *t = c->t;
  uint32_t nn = t->nnodes;
  for (uint32_t i = 1; i < nn; i++)
    c->child_start[t->nodes[i].parent + 1]++;
  for (uint32_t i = 0; i < nn; i++)
    c->child_start[i + 1] += c->child_start[i];
  for (uint32_t i = 0; i < nn; i++) {
    uint32_t k = c->child_start[i];
    for (uint32_t ch = ljp__node_first_child(&t->nodes[i]); ch;
         ch = t->nodes[ch].next_sibling)
      c->kids[k++] = ch;
    ljp__tree_sort_nodes(t, c->kids + c->child_start[i],
                         k - c->child_start[i]);
  }
}

static ljp_status ctx_init(fold_ctx *c, const ljp_tree *t)
{
  uint32_t nn = t->nnodes;
  c->t = t;
  c->child_start = calloc((size_t)nn + 1, sizeof *c->child_start);
  c->kids = malloc((size_t)nn * sizeof *c->kids);
  c->chain = malloc((size_t)nn * sizeof *c->chain);
  if (!c->child_start || !c->kids || !c->chain)
    return LJP_E_NOMEM;
  /* Nodes do not store their depth: chain (not in use yet) holds them
   * for a moment.  A parent's id is below its children's. */
  uint32_t maxdepth = 0, *d = c->chain;
  if (nn)
    d[0] = 0;
  for (uint32_t i = 1; i < nn; i++) {
    d[i] = d[t->nodes[i].parent] + 1;
    if (d[i] > maxdepth)
      maxdepth = d[i];
  }
  size_t depth = (size_t)maxdepth + 2;
  c->path_len = malloc(depth * sizeof *c->path_len);
  c->stack = malloc(depth * sizeof *c->stack);
  c->stack_idx = malloc(depth * sizeof *c->stack_idx);
  if (!c->path_len || !c->stack || !c->stack_idx)
    return LJP_E_NOMEM;
  build_children(c);
  return LJP_OK;
}

static void ctx_free(fold_ctx *c)
{
  free(c->child_start);
  free(c->kids);
  free(c->path_len);
  free(c->path.p);
  free(c->stack);
  free(c->stack_idx);
  free(c->chain);
}

/* Whether node a's name is a prefix of (or equal to) node b's. */
static int is_prefix(const ljp_tree *t, uint32_t a, uint32_t b)
{
  const tree_frame *fa = &t->frames[t->nodes[a].frame];
  const tree_frame *fb = &t->frames[t->nodes[b].frame];
  return fa->len <= fb->len &&
         (fa->len == 0 || memcmp(fa->name, fb->name, fa->len) == 0);
}

/* Appends ";name" (or "name" at depth 1) of node n to the path. */
static int path_push(fold_ctx *c, uint32_t n)
{
  const tree_frame *f = &c->t->frames[c->t->nodes[n].frame];
  if (c->t->nodes[n].parent != 0 && sb_put(&c->path, ";", 1) != 0)
    return -1;
  return sb_put(&c->path, f->name, f->len);
}

static ljp_status emit_line(fold_ctx *c, int64_t self)
{
  char num[24];
  size_t k = format_count(num, self);
  size_t base = c->path.len;
  if (sb_put(&c->path, num, k) != 0)
    return LJP_E_NOMEM;
  int stop = c->emit(c->emit_ctx, c->path.p, c->path.len);
  c->path.len = base;
  return stop ? LJP_E_IO : LJP_OK;
}

/* ------------------------------------------------------------------------ */
/* Runs: siblings whose lines interleave, rendered and sorted as text       */
/* ------------------------------------------------------------------------ */

typedef struct line_ref {
  size_t off, len;
  const char *base;        /* set once the text stops moving */
} line_ref;

typedef struct run_lines {
  strbuf text;
  line_ref *lines;
  size_t n, cap;
} run_lines;

static int line_cmp(const void *pa, const void *pb)
{
  const line_ref *a = pa, *b = pb;
  size_t n = a->len < b->len ? a->len : b->len;
  int r = memcmp(a->base + a->off, b->base + b->off, n);
  if (r)
    return r;
  return a->len < b->len ? -1 : a->len > b->len;
}

/* Renders the current path with weight self as one more line of rl. */
static int run_add_line(run_lines *rl, const strbuf *path, int64_t self)
{
  char num[24];
  size_t k = format_count(num, self);
  if (rl->n == rl->cap) {
    size_t cap = rl->cap ? rl->cap * 2 : 64;
    line_ref *l = realloc(rl->lines, cap * sizeof *l);
    if (!l)
      return -1;
    rl->lines = l;
    rl->cap = cap;
  }
  rl->lines[rl->n].off = rl->text.len;
  rl->lines[rl->n].len = path->len + k;
  if (sb_put(&rl->text, path->p, path->len) != 0 ||
      sb_put(&rl->text, num, k) != 0)
    return -1;
  rl->n++;
  return 0;
}

/* Renders every line of the subtree of root (a child of the node whose
 * path is current) into rl: depth-first, on the walk space from depth
 * base on. */
static ljp_status render_subtree(fold_ctx *c, uint32_t root, size_t base,
                                 run_lines *rl)
{
  uint32_t *stack = c->stack + base, *idx = c->stack_idx + base;
  size_t *plen = c->path_len + base;
  size_t sp = 0;
  stack[0] = root;
  idx[0] = 0;
  plen[0] = c->path.len;
  if (path_push(c, root) != 0)
    return LJP_E_NOMEM;
  for (;;) {
    uint32_t n = stack[sp];
    if (idx[sp] == 0 && keep_line(ljp__node_self(c->t, n), c->min_weight) &&
        run_add_line(rl, &c->path, ljp__node_self(c->t, n)) != 0)
      return LJP_E_NOMEM;
    if (idx[sp] < nkids(c, n)) {
      uint32_t child = kids_of(c, n)[idx[sp]++];
      sp++;
      stack[sp] = child;
      idx[sp] = 0;
      plen[sp] = c->path.len;
      if (path_push(c, child) != 0)
        return LJP_E_NOMEM;
      continue;
    }
    c->path.len = plen[sp];
    if (sp == 0)
      return LJP_OK;
    sp--;
  }
}

static ljp_status emit_sorted(fold_ctx *c, run_lines *rl)
{
  for (size_t i = 0; i < rl->n; i++)
    rl->lines[i].base = rl->text.p;
  if (rl->n)
    qsort(rl->lines, rl->n, sizeof *rl->lines, line_cmp);
  for (size_t i = 0; i < rl->n; i++)
    if (c->emit(c->emit_ctx, rl->text.p + rl->lines[i].off,
                rl->lines[i].len))
      return LJP_E_IO;
  return LJP_OK;
}

/* Emits the lines of the subtrees of run[0..nrun), siblings at depth
 * base - 1 of the walk, in text order. */
static ljp_status emit_run(fold_ctx *c, const uint32_t *run, size_t nrun,
                           size_t base)
{
  run_lines rl;
  memset(&rl, 0, sizeof rl);
  ljp_status st = LJP_OK;
  size_t base_len = c->path.len;
  for (size_t r = 0; r < nrun && st == LJP_OK; r++) {
    st = render_subtree(c, run[r], base, &rl);
    c->path.len = base_len;
  }
  if (st == LJP_OK)
    st = emit_sorted(c, &rl);
  free(rl.lines);
  free(rl.text.p);
  return st;
}

/* The last index of the run of siblings kid[i..] starting at i: it goes on
 * while the next name has a prefix among the run's names.  Those prefixes
 * form a chain (each a prefix of the next); names that are no prefix of
 * the next sibling can be no prefix of any later one, so they leave the
 * chain. */
static uint32_t run_end(fold_ctx *c, const uint32_t *kid, uint32_t m,
                        uint32_t i)
{
  uint32_t j = i, depth = 0;
  c->chain[depth++] = kid[i];
  while (j + 1 < m) {
    while (depth && !is_prefix(c->t, c->chain[depth - 1], kid[j + 1]))
      depth--;
    if (!depth)
      break;
    c->chain[depth++] = kid[++j];
  }
  return j;
}

/* ------------------------------------------------------------------------ */
/* The outer walk                                                           */
/* ------------------------------------------------------------------------ */

/* Enters child at depth sp + 1 and emits its own line. */
static ljp_status enter(fold_ctx *c, size_t sp, uint32_t child)
{
  size_t before = c->path.len;
  if (path_push(c, child) != 0)
    return LJP_E_NOMEM;
  c->stack[sp + 1] = child;
  c->stack_idx[sp + 1] = 0;
  c->path_len[sp + 1] = before;
  int64_t self = ljp__node_self(c->t, child);
  return keep_line(self, c->min_weight) ? emit_line(c, self) : LJP_OK;
}

/* stack[sp] is a node whose children are being visited, stack_idx[sp]
 * the next child.  The root has no line. */
static ljp_status walk(fold_ctx *c)
{
  size_t sp = 0;
  c->stack[0] = 0;
  c->stack_idx[0] = 0;
  c->path_len[0] = 0;
  c->path.len = 0;
  ljp_status st = LJP_OK;
  while (st == LJP_OK) {
    uint32_t n = c->stack[sp], m = nkids(c, n), i = c->stack_idx[sp];
    const uint32_t *kid = kids_of(c, n);
    if (i < m) {
      uint32_t j = run_end(c, kid, m, i);
      c->stack_idx[sp] = j + 1;
      if (j > i) /* the run's walk uses the entries above ours */
        st = emit_run(c, kid + i, j - i + 1, sp + 1);
      else
        st = enter(c, sp++, kid[i]);
      continue;
    }
    if (sp == 0)
      break;
    c->path.len = c->path_len[sp];
    sp--;
  }
  return st;
}

LJP_API ljp_status ljp_tree_write_folded(const ljp_tree *t, int64_t min_weight,
                                         ljp_emit_fn emit, void *ctx)
{
  if (!t || !emit)
    return LJP_E_ARG;
  fold_ctx c;
  memset(&c, 0, sizeof c);
  c.min_weight = min_weight;
  c.emit = emit;
  c.emit_ctx = ctx;
  ljp_status st = ctx_init(&c, t);
  if (st == LJP_OK)
    st = walk(&c);
  ctx_free(&c);
  return st;
}
