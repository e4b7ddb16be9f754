/* Allocation failures in the exporters: every allocation of
 * ljp_pprof_write and ljp_speedscope_write (and of the trees they read)
 * fails once; each run must end in LJP_E_NOMEM or the full result, with no
 * block leaked.  The executable wraps malloc and friends (tests/inject). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inject.h"
#include "ljp.h"

static int failures;

#define EXPECT(c, ...)                                                       \
  do {                                                                       \
    if (!(c)) {                                                              \
      printf("FAIL: " __VA_ARGS__);                                          \
      printf("\n");                                                          \
      failures++;                                                            \
    }                                                                        \
  } while (0)

typedef struct out {
  unsigned char *p;
  size_t len, cap;
} out;

static int sink(void *ctx, const void *data, size_t len) {
  out *o = ctx;
  if (o->len + len > o->cap) {
    size_t cap = (o->len + len) * 2;
    unsigned char *np = realloc(o->p, cap);
    if (!np)
      return -1; /* an allocation of the test itself: a write error */
    o->p = np;
    o->cap = cap;
  }
  memcpy(o->p + o->len, data, len);
  o->len += len;
  return 0;
}

/* A tree of many stacks and frames, so tables and buffers grow. */
static ljp_tree *make_tree(int salt) {
  ljp_tree *t = ljp_tree_new();
  if (!t)
    return NULL;
  char name[64];
  uint32_t fr[8];
  for (int i = 0; i < 300; i++) {
    size_t n = 0;
    fr[n++] = ljp_tree_intern(t, "main", 4, LJP_CLASS_HOST);
    snprintf(name, sizeof(name), "@m%d.lua:%d", i % 7, i % 50);
    fr[n++] = ljp_tree_intern(t, name, strlen(name), LJP_CLASS_LUA);
    snprintf(name, sizeof(name), "TRACE [%d] @t.lua:%d", i % 5, i);
    fr[n++] = ljp_tree_intern(t, name, strlen(name), LJP_CLASS_TRACE);
    snprintf(name, sizeof(name), "VMST_%s", i % 3 ? "LFUNC" : "GC");
    fr[n++] = ljp_tree_intern(t, name, strlen(name), LJP_CLASS_VM);
    for (size_t k = 0; k < n; k++)
      if (!fr[k]) {
        ljp_tree_free(t);
        return NULL;
      }
    if (ljp_tree_add(t, fr, n, i + salt) == UINT32_MAX) {
      ljp_tree_free(t);
      return NULL;
    }
  }
  return t;
}

static ljp_status op_pprof(ljp_tree *a, ljp_tree *b, out *o) {
  ljp_export_label lab[] = {{"service", "api"}, {"host", "h1"}};
  ljp_pprof_options po;
  memset(&po, 0, sizeof(po));
  po.types[0] = (ljp_export_type){"samples", "count", a, 1};
  po.types[1] = (ljp_export_type){"cpu", "nanoseconds", b, 1000};
  po.ntypes = 2;
  po.period_type = "cpu";
  po.period_unit = "nanoseconds";
  po.period = 1000;
  po.labels = lab;
  po.nlabels = 2;
  po.vmstate_labels = 1;
  po.uncompressed = 1; /* zlib's own allocations are not wrapped */
  return ljp_pprof_write(&po, sink, o);
}

static ljp_status op_speedscope(ljp_tree *a, ljp_tree *b, out *o) {
  uint32_t order[] = {3, 1, 4, 1, 5, 9, 2, 6};
  ljp_speedscope_profile p[2];
  memset(p, 0, sizeof(p));
  p[0] = (ljp_speedscope_profile){"a", a, "nanoseconds", 10, 0, 0,
                                  NULL, NULL, 0};
  p[1] = (ljp_speedscope_profile){"b", b, "none", 1, 5, 0, order, NULL, 8};
  return ljp_speedscope_write("x", p, 2, sink, o);
}

typedef ljp_status (*op_fn)(ljp_tree *, ljp_tree *, out *);

/* Trees built before arming: the failures hit the exporter only. */
static void inject_all(const char *what, op_fn op) {
  ljp_tree *a = make_tree(0), *b = make_tree(7);
  EXPECT(a && b, "%s: trees", what);
  if (!a || !b)
    return;
  out base = {0}, got = {0};
  long live0 = inject_live();
  inject_arm(0);
  ljp_status st = op(a, b, &base);
  uint64_t total = inject_count();
  EXPECT(st == LJP_OK, "%s: status %d without failures", what, st);
  EXPECT(inject_live() == live0 + (base.p ? 1 : 0),
         "%s: blocks leaked without failures", what);
  for (uint64_t n = 1; n <= total + 1; n++) {
    got.len = 0;
    inject_arm(n);
    st = op(a, b, &got);
    int fired = inject_fired();
    inject_arm(0);
    EXPECT(inject_live() == live0 + (base.p ? 1 : 0) + (got.p ? 1 : 0),
           "%s: allocation %llu failed: blocks leaked", what,
           (unsigned long long)n);
    if (!fired) {
      EXPECT(st == LJP_OK && got.len == base.len &&
                 !memcmp(got.p, base.p, base.len),
             "%s: a run without failure differs", what);
      break;
    }
    EXPECT(st == LJP_E_NOMEM || st == LJP_E_IO ||
               (st == LJP_OK && got.len == base.len &&
                !memcmp(got.p, base.p, base.len)),
           "%s: allocation %llu failed: status %d", what,
           (unsigned long long)n, st);
  }
  printf("%-24s %6llu allocations, each failed once\n", what,
         (unsigned long long)total);
  free(base.p);
  free(got.p);
  ljp_tree_free(a);
  ljp_tree_free(b);
}

int main(void) {
  inject_all("pprof", op_pprof);
  inject_all("speedscope", op_speedscope);
  return failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
