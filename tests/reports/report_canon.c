/* Helpers of the report tests: running reports into strings, and the
 * canonical form that makes reference outputs with hash-ordered ties
 * comparable byte for byte. */
#include "report_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *rt_slurp(const char *path, size_t *len)
{
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap);
  size_t got;
  while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
    n += got;
    if (cap - n - 1 == 0) {
      char *nb = realloc(buf, cap * 2);
      if (!nb) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = nb;
      cap *= 2;
    }
  }
  fclose(f);
  if (!buf)
    return NULL;
  buf[n] = '\0';
  if (len)
    *len = n;
  return buf;
}

static char *run_mem(ljp_reader *r, ljp_status open_st,
                     const struct memreport_opts *o, ljp_status *st)
{
  char *text = NULL;
  size_t tlen = 0;
  FILE *out = open_memstream(&text, &tlen);
  ck_assert_ptr_nonnull(out);
  memreport *m = memreport_new(o);
  ck_assert_ptr_nonnull(m);
  ljp_status s = open_st;
  const ljp_event *ev;
  if (s == LJP_OK) {
    while ((s = ljp_reader_next(r, &ev)) == LJP_OK)
      ck_assert_int_eq(memreport_add(m, r, ev), LJP_OK);
  }
  ck_assert_int_eq(memreport_print(m, out), 0);
  memreport_free(m);
  fclose(out);
  if (st)
    *st = s;
  return text;
}

char *rt_memreport_path(const char *path, const struct memreport_opts *o,
                        ljp_status *st)
{
  ljp_reader *r = ljp_reader_new();
  ck_assert_ptr_nonnull(r);
  char *t = run_mem(r, ljp_reader_open_path(r, path), o, st);
  ljp_reader_free(r);
  return t;
}

char *rt_memreport_buf(const void *buf, size_t len,
                       const struct memreport_opts *o, ljp_status *st)
{
  ljp_reader *r = ljp_reader_new();
  ck_assert_ptr_nonnull(r);
  char *t = run_mem(r, ljp_reader_open_memory(r, buf, len), o, st);
  ljp_reader_free(r);
  return t;
}

char *rt_sysreport_buf(const void *buf, size_t len,
                       const struct sysreport_opts *o, sysreport **keep)
{
  ljp_reader *r = ljp_reader_new();
  ck_assert_ptr_nonnull(r);
  ck_assert_int_eq(ljp_reader_open_memory(r, buf, len), LJP_OK);
  sysreport *s = sysreport_new(o);
  ck_assert_ptr_nonnull(s);
  const ljp_event *ev;
  ljp_status st;
  while ((st = ljp_reader_next(r, &ev)) == LJP_OK)
    ck_assert_int_eq(sysreport_add(s, r, ev), LJP_OK);
  ck_assert_msg(st == LJP_END, "reader: %s", ljp_reader_error(r));
  char *text = NULL;
  size_t tlen = 0;
  FILE *out = open_memstream(&text, &tlen);
  ck_assert_ptr_nonnull(out);
  ck_assert_int_eq(sysreport_print(s, out), 0);
  fclose(out);
  ljp_reader_free(r);
  if (keep)
    *keep = s;
  else
    sysreport_free(s);
  return text;
}

/* --- canonical form --------------------------------------------------- */

struct line {
  const char *p;
  size_t len;
};

struct lines {
  struct line *v;
  size_t n;
};

static struct lines split(const char *text)
{
  struct lines ls = {NULL, 0};
  size_t cap = 0;
  const char *p = text;
  while (*p) {
    const char *e = strchr(p, '\n');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    if (ls.n == cap) {
      cap = cap ? cap * 2 : 64;
      ls.v = realloc(ls.v, cap * sizeof *ls.v);
      ck_assert_ptr_nonnull(ls.v);
    }
    ls.v[ls.n].p = p;
    ls.v[ls.n].len = len;
    ls.n++;
    p += len + (e ? 1 : 0);
  }
  return ls;
}

static int line_is(const struct line *l, const char *s)
{
  return l->len == strlen(s) && memcmp(l->p, s, l->len) == 0;
}

/* A tie-group entry: lines [first, first+n) and its key (count or size). */
struct entry {
  size_t first, n;
  const char *key;
  size_t keylen;
  const char *name;
  size_t namelen;
  const struct lines *ls;
};

static const char *memrstr(const char *p, size_t len, const char *needle)
{
  size_t nl = strlen(needle);
  if (len < nl)
    return NULL;
  for (size_t i = len - nl + 1; i-- > 0;)
    if (memcmp(p + i, needle, nl) == 0)
      return p + i;
  return NULL;
}

/* "<name>: <count> events\t..." */
static void row_key(struct entry *e)
{
  const struct line *l = &e->ls->v[e->first];
  const char *ev = memrstr(l->p, l->len, " events\t");
  ck_assert_msg(ev != NULL, "not a report row: %.*s", (int)l->len, l->p);
  const char *d = ev;
  while (d > l->p && d[-1] >= '0' && d[-1] <= '9')
    d--;
  e->key = d;
  e->keylen = (size_t)(ev - d);
  ck_assert(d - l->p >= 2 && d[-2] == ':' && d[-1] == ' ');
  e->name = l->p;
  e->namelen = (size_t)(d - 2 - l->p);
}

/* "<name> holds <size>: <n> allocs, <m> frees" */
static void heap_key(struct entry *e)
{
  const struct line *l = &e->ls->v[e->first];
  const char *h = memrstr(l->p, l->len, " holds ");
  ck_assert_msg(h != NULL, "not a heap line: %.*s", (int)l->len, l->p);
  const char *k = h + 7;
  const char *c = memrstr(k, l->len - (size_t)(k - l->p), ": ");
  ck_assert(c != NULL);
  e->key = k;
  e->keylen = (size_t)(c - k);
  e->name = l->p;
  e->namelen = (size_t)(h - l->p);
}

static int bytes_cmp(const char *a, size_t la, const char *b, size_t lb)
{
  int c = memcmp(a, b, la < lb ? la : lb);
  return c ? c : (la < lb ? -1 : la > lb);
}

static int entry_text_cmp(const void *va, const void *vb)
{
  const struct entry *a = va, *b = vb;
  for (size_t i = 0; i < a->n && i < b->n; i++) {
    const struct line *x = &a->ls->v[a->first + i], *y = &b->ls->v[b->first + i];
    int c = bytes_cmp(x->p, x->len, y->p, y->len);
    if (c)
      return c;
  }
  return a->n < b->n ? -1 : a->n > b->n;
}

static int same_key(const struct entry *a, const struct entry *b)
{
  return a->keylen == b->keylen && memcmp(a->key, b->key, a->keylen) == 0;
}

struct buf {
  char *p;
  size_t n, cap;
};

static void put(struct buf *b, const char *s, size_t len)
{
  if (b->n + len + 2 > b->cap) {
    b->cap = (b->n + len + 2) * 2;
    b->p = realloc(b->p, b->cap);
    ck_assert_ptr_nonnull(b->p);
  }
  memcpy(b->p + b->n, s, len);
  b->n += len;
  b->p[b->n++] = '\n';
  b->p[b->n] = '\0';
}

/* Collects the entries of the section starting at line *i. */
static size_t collect(const struct lines *ls, size_t *i, int heap,
                      struct entry **out)
{
  size_t n = 0, cap = 0;
  struct entry *v = NULL;
  while (*i < ls->n && ls->v[*i].len && ls->v[*i].p[0] != '\t') {
    struct entry e = {*i, 0, NULL, 0, NULL, 0, ls};
    (*i)++;
    if (!heap && *i < ls->n && line_is(&ls->v[*i], "\tOverrides:")) {
      while (*i < ls->n && ls->v[*i].len && ls->v[*i].p[0] == '\t')
        (*i)++;
      if (*i < ls->n && ls->v[*i].len == 0)
        (*i)++;
    }
    e.n = *i - e.first;
    if (heap)
      heap_key(&e);
    else
      row_key(&e);
    if (n == cap) {
      cap = cap ? cap * 2 : 16;
      v = realloc(v, cap * sizeof *v);
      ck_assert_ptr_nonnull(v);
    }
    v[n++] = e;
  }
  *out = v;
  return n;
}

static int is_section(const struct line *l, int *heap)
{
  *heap = line_is(l, "HEAP SUMMARY:");
  return *heap || line_is(l, "ALLOCATIONS") || line_is(l, "REALLOCATIONS") ||
         line_is(l, "DEALLOCATIONS");
}

char *rt_canon(const char *report)
{
  struct lines ls = split(report);
  struct buf b = {NULL, 0, 0};
  put(&b, "", 0);
  b.n = 0;
  b.p[0] = '\0';
  size_t i = 0;
  while (i < ls.n) {
    int heap;
    const struct line *l = &ls.v[i++];
    put(&b, l->p, l->len);
    if (!is_section(l, &heap))
      continue;
    struct entry *v;
    size_t n = collect(&ls, &i, heap, &v);
    for (size_t g = 0; g < n;) {
      size_t h = g + 1;
      while (h < n && same_key(&v[g], &v[h]))
        h++;
      qsort(v + g, h - g, sizeof *v, entry_text_cmp);
      g = h;
    }
    for (size_t k = 0; k < n; k++)
      for (size_t j = 0; j < v[k].n; j++)
        put(&b, ls.v[v[k].first + j].p, ls.v[v[k].first + j].len);
    free(v);
  }
  free(ls.v);
  return b.p;
}

int rt_ties_sorted(const char *report)
{
  struct lines ls = split(report);
  size_t i = 0;
  int ok = 1;
  while (i < ls.n) {
    int heap;
    if (!is_section(&ls.v[i++], &heap))
      continue;
    struct entry *v;
    size_t n = collect(&ls, &i, heap, &v);
    for (size_t k = 0; k + 1 < n; k++)
      if (same_key(&v[k], &v[k + 1]) &&
          bytes_cmp(v[k].name, v[k].namelen, v[k + 1].name,
                    v[k + 1].namelen) > 0)
        ok = 0;
    free(v);
  }
  free(ls.v);
  return ok;
}
