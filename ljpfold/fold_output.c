/*
 * fold_output.c — see fold_output.h.
 */
#include "fold_output.h"
#include "cli_export.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int matches_any(const ljp_tree *t, const uint32_t *fr, size_t n,
                       regex_t *re, size_t nre, char **tmp, size_t *tcap) {
  for (size_t i = 0; i < n; i++) {
    size_t len;
    const char *name = ljp_tree_frame_name(t, fr[i], &len);
    if (len + 1 > *tcap) { /* names are byte strings: regexec wants a C string */
      char *nt = realloc(*tmp, len + 1);
      if (!nt)
        return -1;
      *tmp = nt;
      *tcap = len + 1;
    }
    memcpy(*tmp, name, len);
    (*tmp)[len] = '\0';
    for (size_t k = 0; k < nre; k++)
      if (regexec(&re[k], *tmp, 0, NULL, 0) == 0)
        return 1;
  }
  return 0;
}

/* Scratch of the filter, reused from stack to stack. */
typedef struct filter_buf {
  uint32_t *path, *ids;
  size_t cap, icap, tcap;
  char *tmp;               /* a frame name as a C string, for regexec */
} filter_buf;

/* Where the kept part of the stack path[0..n) starts: 0, or the
 * outermost --base frame; SIZE_MAX when the filters drop the stack,
 * SIZE_MAX - 1 when out of memory. */
static size_t kept_from(const ljp_tree *t, const uint32_t *path, size_t n,
                        const fold_filter *f, filter_buf *b) {
  if (f->ninclude) {
    int m = matches_any(t, path, n, f->include, f->ninclude, &b->tmp, &b->tcap);
    if (m <= 0)
      return m < 0 ? SIZE_MAX - 1 : SIZE_MAX;
  }
  if (f->nexclude) {
    int m = matches_any(t, path, n, f->exclude, f->nexclude, &b->tmp, &b->tcap);
    if (m != 0)
      return m < 0 ? SIZE_MAX - 1 : SIZE_MAX;
  }
  if (!f->base)
    return 0;
  size_t blen = strlen(f->base);
  for (size_t from = 0; from < n; from++) {
    size_t len;
    const char *name = ljp_tree_frame_name(t, path[from], &len);
    if (len == blen && memcmp(name, f->base, len) == 0)
      return from;
  }
  return SIZE_MAX;
}

/* Adds the stack path[0..n) of t with weight self to out: 0, or -1 when
 * out of memory. */
static int add_stack(ljp_tree *out, const ljp_tree *t, const uint32_t *path,
                     size_t n, int64_t self, filter_buf *b) {
  if (n > b->icap) {
    uint32_t *ni = realloc(b->ids, (n + 16) * sizeof(*ni));
    if (!ni)
      return -1;
    b->ids = ni;
    b->icap = n + 16;
  }
  for (size_t i = 0; i < n; i++) {
    size_t len;
    const char *name = ljp_tree_frame_name(t, path[i], &len);
    b->ids[i] = ljp_tree_intern(out, name, len, ljp_tree_frame_class(t, path[i]));
    if (!b->ids[i])
      return -1;
  }
  return ljp_tree_add(out, b->ids, n, self) == UINT32_MAX ? -1 : 0;
}

/* The stack of node through the filters into out: 0, or -1 when out of
 * memory. */
static int filter_node(ljp_tree *out, const ljp_tree *t, uint32_t node,
                       const fold_filter *f, filter_buf *b) {
  int64_t self = ljp_tree_node_self(t, node);
  if (self == 0)
    return 0;
  size_t n = ljp__export_path(t, node, &b->path, &b->cap);
  if (n == SIZE_MAX)
    return -1;
  size_t from = kept_from(t, b->path, n, f, b);
  if (from == SIZE_MAX)
    return 0;
  if (from == SIZE_MAX - 1)
    return -1;
  return add_stack(out, t, b->path + from, n - from, self, b);
}

ljp_tree *fold_filter_tree(const ljp_tree *t, const fold_filter *f) {
  ljp_tree *out = ljp_tree_new();
  filter_buf b;
  memset(&b, 0, sizeof(b));
  uint32_t nodes = ljp_tree_node_count(t);
  for (uint32_t node = 1; out && node < nodes; node++)
    if (filter_node(out, t, node, f, &b) != 0) {
      ljp_tree_free(out);
      out = NULL;
    }
  free(b.path);
  free(b.ids);
  free(b.tmp);
  return out;
}

typedef struct line {
  char *text;
  size_t len;
} line;

static int cmp_line(const void *a, const void *b) {
  const line *x = a, *y = b;
  size_t n = x->len < y->len ? x->len : y->len;
  int c = memcmp(x->text, y->text, n);
  return c ? c : (x->len > y->len) - (x->len < y->len);
}

/* The reference line of the stack path[0..n) with count self:
 * "a;b;c;<TAB>N\n", the empty stack as ";<TAB>N\n".  0, or -1 when out
 * of memory. */
static int make_line(const ljp_tree *t, const uint32_t *path, size_t n,
                     int64_t self, line *out) {
  size_t len = n ? 0 : 1;
  for (size_t i = 0; i < n; i++) {
    size_t l;
    ljp_tree_frame_name(t, path[i], &l);
    len += l + 1;
  }
  char num[32];
  int k = snprintf(num, sizeof(num), "\t%" PRId64 "\n", self);
  char *text = malloc(len + (size_t)k + 1);
  if (!text)
    return -1;
  size_t w = 0;
  for (size_t i = 0; i < n; i++) {
    size_t l;
    const char *name = ljp_tree_frame_name(t, path[i], &l);
    memcpy(text + w, name, l);
    w += l;
    text[w++] = ';';
  }
  if (!n)
    text[w++] = ';';
  memcpy(text + w, num, (size_t)k);
  out->text = text;
  out->len = w + (size_t)k;
  return 0;
}

/* The lines of the tree, unsorted. */
typedef struct line_set {
  line *lines;
  size_t n, cap;
  uint32_t *path;
  size_t pcap;
} line_set;

/* Adds node's line when its count is kept: 0, or -1 when out of memory. */
static int add_line(line_set *ls, const ljp_tree *t, uint32_t node,
                    int64_t min_count) {
  int64_t self = ljp_tree_node_self(t, node);
  int64_t mag = self < 0 ? -self : self;
  if (self == 0 || mag < min_count)
    return 0;
  size_t n = node ? ljp__export_path(t, node, &ls->path, &ls->pcap) : 0;
  if (n == SIZE_MAX)
    return -1;
  if (ls->n == ls->cap) {
    size_t ncap = ls->cap ? ls->cap * 2 : 256;
    line *nl = realloc(ls->lines, ncap * sizeof(*nl));
    if (!nl)
      return -1;
    ls->lines = nl;
    ls->cap = ncap;
  }
  if (make_line(t, ls->path, n, self, &ls->lines[ls->n]) != 0)
    return -1;
  ls->n++;
  return 0;
}

ljp_status fold_write_tarantool(const ljp_tree *t, int64_t min_count,
                                ljp_emit_fn emit, void *ctx) {
  line_set ls;
  memset(&ls, 0, sizeof(ls));
  ljp_status st = LJP_OK;
  uint32_t nodes = ljp_tree_node_count(t);
  for (uint32_t node = 0; st == LJP_OK && node < nodes; node++)
    if (add_line(&ls, t, node, min_count) != 0)
      st = LJP_E_NOMEM;
  if (st == LJP_OK && ls.n)
    qsort(ls.lines, ls.n, sizeof(*ls.lines), cmp_line);
  for (size_t i = 0; st == LJP_OK && i < ls.n; i++)
    if (emit(ctx, ls.lines[i].text, ls.lines[i].len))
      st = LJP_E_IO;
  for (size_t i = 0; i < ls.n; i++)
    free(ls.lines[i].text);
  free(ls.lines);
  free(ls.path);
  return st;
}
