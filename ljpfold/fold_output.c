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

ljp_tree *fold_filter_tree(const ljp_tree *t, const fold_filter *f) {
  ljp_tree *out = ljp_tree_new();
  uint32_t *path = NULL, *ids = NULL;
  size_t cap = 0, icap = 0, tcap = 0;
  char *tmp = NULL;
  if (!out)
    return NULL;
  uint32_t nodes = ljp_tree_node_count(t);
  for (uint32_t node = 1; node < nodes; node++) {
    int64_t self = ljp_tree_node_self(t, node);
    if (self == 0)
      continue;
    size_t n = ljp_export_path(t, node, &path, &cap);
    if (n == SIZE_MAX)
      goto oom;
    if (f->ninclude) {
      int m = matches_any(t, path, n, f->include, f->ninclude, &tmp, &tcap);
      if (m < 0)
        goto oom;
      if (!m)
        continue;
    }
    if (f->nexclude) {
      int m = matches_any(t, path, n, f->exclude, f->nexclude, &tmp, &tcap);
      if (m < 0)
        goto oom;
      if (m)
        continue;
    }
    size_t from = 0;
    if (f->base) {
      size_t blen = strlen(f->base);
      for (from = 0; from < n; from++) {
        size_t len;
        const char *name = ljp_tree_frame_name(t, path[from], &len);
        if (len == blen && memcmp(name, f->base, len) == 0)
          break;
      }
      if (from == n)
        continue;
    }
    if (n - from > icap) {
      uint32_t *ni = realloc(ids, (n - from + 16) * sizeof(*ni));
      if (!ni)
        goto oom;
      ids = ni;
      icap = n - from + 16;
    }
    for (size_t i = from; i < n; i++) {
      size_t len;
      const char *name = ljp_tree_frame_name(t, path[i], &len);
      ids[i - from] = ljp_tree_intern(out, name, len,
                                      ljp_tree_frame_class(t, path[i]));
      if (!ids[i - from])
        goto oom;
    }
    if (ljp_tree_add(out, ids, n - from, self) == UINT32_MAX)
      goto oom;
  }
  free(path);
  free(ids);
  free(tmp);
  return out;
oom:
  free(path);
  free(ids);
  free(tmp);
  ljp_tree_free(out);
  return NULL;
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

ljp_status fold_write_tarantool(const ljp_tree *t, int64_t min_count,
                                ljp_emit_fn emit, void *ctx) {
  uint32_t nodes = ljp_tree_node_count(t);
  line *lines = NULL;
  size_t nlines = 0, lcap = 0;
  uint32_t *path = NULL;
  size_t cap = 0;
  ljp_status st = LJP_OK;
  for (uint32_t node = 0; node < nodes; node++) {
    int64_t self = ljp_tree_node_self(t, node);
    int64_t mag = self < 0 ? -self : self;
    if (self == 0 || mag < min_count)
      continue;
    size_t n = node ? ljp_export_path(t, node, &path, &cap) : 0;
    if (n == SIZE_MAX)
      goto oom;
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
      goto oom;
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
    w += (size_t)k;
    if (nlines == lcap) {
      size_t ncap = lcap ? lcap * 2 : 256;
      line *nl = realloc(lines, ncap * sizeof(*nl));
      if (!nl) {
        free(text);
        goto oom;
      }
      lines = nl;
      lcap = ncap;
    }
    lines[nlines].text = text;
    lines[nlines].len = w;
    nlines++;
  }
  if (nlines)
    qsort(lines, nlines, sizeof(*lines), cmp_line);
  for (size_t i = 0; i < nlines; i++)
    if (st == LJP_OK && emit(ctx, lines[i].text, lines[i].len))
      st = LJP_E_IO;
  goto done;
oom:
  st = LJP_E_NOMEM;
done:
  for (size_t i = 0; i < nlines; i++)
    free(lines[i].text);
  free(lines);
  free(path);
  return st;
}
