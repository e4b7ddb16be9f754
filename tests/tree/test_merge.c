/*
 * test_merge.c — ljp_tree_merge.
 *
 * The ground truth is serial folding: folding file A then file B into one
 * tree (one folder per file, as ljpfold does) must give exactly the tree
 * that merging B's own tree into A's gives, frame and node ids included,
 * since outputs number functions and stacks by those ids.  Hand-built trees
 * pin down wide and negative weights, zero-weight nodes, frames that share
 * a name but not a class or line, and whose attributes win; allocation
 * failures (the test links with --wrap for the allocators) must come back
 * as LJP_E_NOMEM with nothing leaked.
 */
#include <check.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ljp.h"

/* ---- allocation failure ---- */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);

static long allocs_left = -1; /* before they fail; -1 = never */

static int alloc_fails(void)
{
  if (allocs_left == 0)
    return 1;
  if (allocs_left > 0)
    allocs_left--;
  return 0;
}

void *__wrap_malloc(size_t n)
{
  return alloc_fails() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
  return alloc_fails() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
  return alloc_fails() ? NULL : __real_realloc(p, n);
}

/* ---- helpers ---- */

static const char *testdata = "testdata";

typedef struct strbuf {
  char *p;
  size_t len, cap;
} strbuf;

static int sb_emit(void *ctx, const char *line, size_t len)
{
  strbuf *b = ctx;
  if (b->len + len + 1 > b->cap) {
    b->cap = (b->len + len + 1) * 2;
    b->p = realloc(b->p, b->cap);
    ck_assert_ptr_nonnull(b->p);
  }
  memcpy(b->p + b->len, line, len);
  b->len += len;
  b->p[b->len] = '\0';
  return 0;
}

static char *folded(const ljp_tree *t)
{
  strbuf b = {NULL, 0, 0};
  ck_assert_int_eq(ljp_tree_write_folded(t, 0, sb_emit, &b), LJP_OK);
  if (!b.p)
    b.p = calloc(1, 1);
  return b.p;
}

/* Plain comparisons, failing by hand: check records every passing
 * assertion, which a tree of thousands of nodes would pay for dearly. */
#define SAME(what, id, x, y)                                                 \
  do {                                                                       \
    if ((x) != (y))                                                          \
      ck_abort_msg("%s of %u: %lld != %lld", what, (unsigned)(id),           \
                   (long long)(x), (long long)(y));                         \
  } while (0)

static void same_bytes(const char *what, uint32_t id, const char *a,
                       size_t alen, const char *b, size_t blen)
{
  SAME(what, id, alen, blen);
  SAME(what, id, !a, !b);
  if (alen && memcmp(a, b, alen) != 0)
    ck_abort_msg("%s of %u differs", what, (unsigned)id);
}

/* a and b are the same tree: frames, attributes, nodes and weights by id,
 * and the folded text. */
static void assert_trees_equal(const ljp_tree *a, const ljp_tree *b)
{
  uint32_t nf = ljp_tree_frame_count(a);
  SAME("frame count", 0, nf, ljp_tree_frame_count(b));
  for (uint32_t f = 1; f <= nf; f++) {
    size_t la, lb;
    const char *na = ljp_tree_frame_name(a, f, &la);
    const char *nb = ljp_tree_frame_name(b, f, &lb);
    same_bytes("name", f, na, la, nb, lb);
    SAME("class", f, ljp_tree_frame_class(a, f), ljp_tree_frame_class(b, f));
    ljp_frame_info ia, ib;
    SAME("info", f, ljp_tree_frame_info(a, f, &ia), LJP_OK);
    SAME("info", f, ljp_tree_frame_info(b, f, &ib), LJP_OK);
    SAME("kind", f, ia.kind, ib.kind);
    same_bytes("chunk", f, ia.chunk, ia.chunk_len, ib.chunk, ib.chunk_len);
    SAME("def_line", f, ia.def_line, ib.def_line);
    SAME("line", f, ia.line, ib.line);
    SAME("address", f, ia.address, ib.address);
    SAME("function", f, !ia.function, !ib.function);
    if (ia.function)
      same_bytes("function", f, ia.function, strlen(ia.function),
                 ib.function, strlen(ib.function));
    same_bytes("object", f, ia.object, ia.object_len, ib.object,
               ib.object_len);
    same_bytes("build_id", f, ia.build_id, ia.build_id_len, ib.build_id,
               ib.build_id_len);
    SAME("object_start", f, ia.object_start, ib.object_start);
    SAME("object_size", f, ia.object_size, ib.object_size);
    SAME("object_offset", f, ia.object_offset, ib.object_offset);
  }
  uint32_t nn = ljp_tree_node_count(a);
  SAME("node count", 0, nn, ljp_tree_node_count(b));
  for (uint32_t n = 0; n < nn; n++) {
    SAME("parent", n, ljp_tree_node_parent(a, n), ljp_tree_node_parent(b, n));
    SAME("frame", n, ljp_tree_node_frame(a, n), ljp_tree_node_frame(b, n));
    SAME("self", n, ljp_tree_node_self(a, n), ljp_tree_node_self(b, n));
    SAME("total", n, ljp_tree_node_total(a, n), ljp_tree_node_total(b, n));
  }
  char *fa = folded(a), *fb = folded(b);
  if (strcmp(fa, fb) != 0)
    ck_abort_msg("folded text differs");
  free(fa);
  free(fb);
}

/* ---- merged files equal serial folding ---- */

#define MAX_CAPTURES 64

static char *captures[2][MAX_CAPTURES]; /* [0] sysprof, [1] memprof */
static int ncaptures[2];

static int name_cmp(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void list_captures(void)
{
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/captures", testdata);
  DIR *d = opendir(dir);
  if (!d)
    return;
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t len = strlen(e->d_name);
    if (len < 5 || strcmp(e->d_name + len - 4, ".bin") != 0)
      continue;
    int k = strncmp(e->d_name, "sp_", 3) == 0   ? 0
            : strncmp(e->d_name, "mp_", 3) == 0 ? 1
                                                : -1;
    if (k < 0 || ncaptures[k] == MAX_CAPTURES)
      continue;
    char *path = malloc(strlen(dir) + len + 2);
    sprintf(path, "%s/%s", dir, e->d_name);
    captures[k][ncaptures[k]++] = path;
  }
  closedir(d);
  for (int k = 0; k < 2; k++)
    qsort(captures[k], (size_t)ncaptures[k], sizeof(char *), name_cmp);
}

/* One file into t through a folder of its own, as ljpfold folds. */
static void fold_file(ljp_tree *t, const char *path,
                      const ljp_fold_options *o)
{
  ljp_folder *f = ljp_folder_new(t, o);
  ck_assert_ptr_nonnull(f);
  ljp_reader *r = ljp_reader_new();
  ck_assert_ptr_nonnull(r);
  ck_assert_msg(ljp_reader_open_path(r, path) == LJP_OK, "%s", path);
  const ljp_event *ev;
  ljp_status st;
  while ((st = ljp_reader_next(r, &ev)) == LJP_OK)
    if (ljp_folder_add(f, r, ev) != LJP_OK)
      ck_abort_msg("%s: folder out of memory", path);
  ck_assert_msg(st == LJP_END, "%s: %d", path, (int)st);
  ljp_reader_free(r);
  ljp_folder_free(f);
}

/* The option sets the pairs are folded with: plain, frames keyed by line,
 * and the ones that make zero and negative weights (live bytes, the
 * reference view's empty stacks at the root). */
#define NOPTS 4

static ljp_fold_options options(int i, int memprof)
{
  ljp_fold_options o;
  memset(&o, 0, sizeof o);
  o.flavor = LJP_FLAVOR_AUTO;
  o.weight = memprof ? LJP_WEIGHT_BYTES : LJP_WEIGHT_SAMPLES;
  switch (i) {
  case 1:
    o.lines = 1;
    o.vmstate = LJP_VMSTATE_ROOT;
    break;
  case 2:
    if (memprof) {
      o.weight = LJP_WEIGHT_LIVE;
    } else {
      o.view = LJP_VIEW_REFERENCE;
      o.style = LJP_NAME_REFERENCE;
    }
    break;
  case 3:
    o.view = LJP_VIEW_LUA;
    o.vmstate = LJP_VMSTATE_LEAF;
    o.lines = 1;
    if (memprof)
      o.weight = LJP_WEIGHT_LIVE;
    break;
  default:
    break;
  }
  return o;
}

static void check_pair(const char *a, const char *b,
                       const ljp_fold_options *o)
{
  ljp_tree *serial = ljp_tree_new(), *ta = ljp_tree_new(),
           *tb = ljp_tree_new();
  ck_assert_ptr_nonnull(serial);
  ck_assert_ptr_nonnull(ta);
  ck_assert_ptr_nonnull(tb);
  fold_file(serial, a, o);
  fold_file(serial, b, o);
  fold_file(ta, a, o);
  fold_file(tb, b, o);
  ck_assert_int_eq(ljp_tree_merge(ta, tb), LJP_OK);
  assert_trees_equal(ta, serial);
  ljp_tree_free(serial);
  ljp_tree_free(ta);
  ljp_tree_free(tb);
}

/* Every capture with itself (nothing new to dst) and with the next of its
 * kind both ways round (new frames and nodes interleaved with known ones),
 * under each option set; _i = kind * NOPTS + option set. */
START_TEST(captures_merge_as_folded)
{
  int kind = _i / NOPTS;
  ljp_fold_options o = options(_i % NOPTS, kind);
  int n = ncaptures[kind];
  ck_assert_msg(n >= 2, "captures missing under %s", testdata);
  for (int i = 0; i < n; i++) {
    const char *a = captures[kind][i], *b = captures[kind][(i + 1) % n];
    check_pair(a, a, &o);
    check_pair(a, b, &o);
    check_pair(b, a, &o);
  }
}
END_TEST

/* Three files folded in one go equal two merges in file order. */
START_TEST(three_files_merge_in_order)
{
  ljp_fold_options o = options(0, 0);
  ck_assert_int_ge(ncaptures[0], 3);
  ljp_tree *serial = ljp_tree_new(), *t[3];
  for (int i = 0; i < 3; i++) {
    fold_file(serial, captures[0][i], &o);
    t[i] = ljp_tree_new();
    fold_file(t[i], captures[0][i], &o);
  }
  ck_assert_int_eq(ljp_tree_merge(t[0], t[1]), LJP_OK);
  ck_assert_int_eq(ljp_tree_merge(t[0], t[2]), LJP_OK);
  assert_trees_equal(t[0], serial);
  for (int i = 0; i < 3; i++)
    ljp_tree_free(t[i]);
  ljp_tree_free(serial);
}
END_TEST

/* ---- hand-built trees ---- */

static uint32_t intern(ljp_tree *t, const char *name, ljp_class cls,
                       uint64_t line)
{
  uint32_t id = ljp_tree_intern_line(t, name, strlen(name), cls, line);
  ck_assert_uint_ne(id, 0);
  return id;
}

/* Interns and, when the frame is new, gives it a chunk name as the folder
 * does (first wins). */
static uint32_t intern_info(ljp_tree *t, const char *name, ljp_class cls,
                            uint64_t line, const char *chunk)
{
  uint32_t known = ljp_tree_frame_count(t);
  uint32_t id = intern(t, name, cls, line);
  if (id > known) {
    ljp_frame_info fi;
    memset(&fi, 0, sizeof fi);
    fi.kind = LJP_FRAME_LUA;
    fi.chunk = chunk;
    fi.chunk_len = strlen(chunk);
    fi.def_line = 40 + line;
    fi.address = 0x1000 + (uint64_t)(unsigned char)name[0] * 16 + line;
    fi.function = "fn";
    ck_assert_int_eq(ljp_tree_set_frame_info(t, id, &fi), LJP_OK);
  }
  return id;
}

static void add(ljp_tree *t, const uint32_t *frames, size_t n, int64_t w)
{
  ck_assert_uint_ne(ljp_tree_add(t, frames, n, w), UINT32_MAX);
}

/* dst's part; the same calls build the serial reference. */
static void build_dst(ljp_tree *t)
{
  uint32_t a = intern_info(t, "a", LJP_CLASS_LUA, 0, "@dst.lua");
  uint32_t b = intern(t, "b", LJP_CLASS_CFUNC, 0);
  add(t, (uint32_t[]){a}, 1, 3000000000);
  add(t, (uint32_t[]){a, b}, 2, 7);
  add(t, (uint32_t[]){b}, 1, -2);
}

/* src's part: its frames in an order unlike dst's, one it never uses, one
 * dst has (with other attributes), one first used after frames interned
 * later, and ones equal to dst's by name but not
 * by class or line. */
static void build_src(ljp_tree *t)
{
  uint32_t n1 = intern_info(t, "new1", LJP_CLASS_LUA, 0, "@src.lua");
  uint32_t late = intern(t, "late", LJP_CLASS_FFUNC, 0);
  uint32_t b = intern(t, "b", LJP_CLASS_CFUNC, 0);
  uint32_t a = intern_info(t, "a", LJP_CLASS_LUA, 0, "@src.lua");
  uint32_t ac = intern(t, "a", LJP_CLASS_CFUNC, 0);
  uint32_t a7 = intern_info(t, "a", LJP_CLASS_LUA, 7, "@src.lua");
  intern(t, "unused", LJP_CLASS_HOST, 0);
  add(t, (uint32_t[]){n1, a}, 2, -5);
  add(t, (uint32_t[]){a}, 1, 3000000000);
  add(t, (uint32_t[]){ac}, 1, 0);                   /* zero-weight node */
  add(t, (uint32_t[]){a7, b, n1}, 3, INT32_MIN);    /* the wide marker */
  add(t, (uint32_t[]){b}, 1, -5000000000);
  add(t, (uint32_t[]){a, b}, 2, 0);                 /* known, weight 0 */
  add(t, NULL, 0, 4);                               /* the root's own */
  add(t, (uint32_t[]){b, late}, 2, 0); /* a frame used after later ones */
}

START_TEST(synthetic_merge)
{
  ljp_tree *dst = ljp_tree_new(), *src = ljp_tree_new(),
           *serial = ljp_tree_new();
  build_dst(dst);
  build_src(src);
  build_dst(serial);
  build_src(serial);
  ck_assert_int_eq(ljp_tree_merge(dst, src), LJP_OK);
  assert_trees_equal(dst, serial);

  /* The same facts, spelled out. */
  ck_assert_uint_eq(ljp_tree_frame_count(dst), 7);
  uint32_t a = ljp_tree_find_frame(dst, "a", 1, LJP_CLASS_LUA);
  uint32_t b = ljp_tree_find_frame(dst, "b", 1, LJP_CLASS_CFUNC);
  uint32_t n1 = ljp_tree_find_frame(dst, "new1", 4, LJP_CLASS_LUA);
  uint32_t ac = ljp_tree_find_frame(dst, "a", 1, LJP_CLASS_CFUNC);
  uint32_t un = ljp_tree_find_frame(dst, "unused", 6, LJP_CLASS_HOST);
  uint32_t late = ljp_tree_find_frame(dst, "late", 4, LJP_CLASS_FFUNC);
  ck_assert_uint_eq(a, 1);
  ck_assert_uint_eq(b, 2);
  ck_assert_uint_eq(n1, 3); /* src's frame order among the new ones */
  ck_assert_uint_eq(late, 4); /* interned early, used last */
  ck_assert_uint_eq(ac, 5);
  ck_assert_uint_eq(un, 7);
  uint32_t a7 = ljp_tree_intern_line(dst, "a", 1, LJP_CLASS_LUA, 7);
  ck_assert_uint_eq(a7, 6);
  ck_assert_uint_eq(ljp_tree_frame_count(dst), 7);

  ljp_frame_info fi;
  ck_assert_int_eq(ljp_tree_frame_info(dst, a, &fi), LJP_OK);
  ck_assert_uint_eq(fi.chunk_len, 8);
  ck_assert_int_eq(memcmp(fi.chunk, "@dst.lua", 8), 0); /* dst's kept */
  ck_assert_int_eq(ljp_tree_frame_info(dst, n1, &fi), LJP_OK);
  ck_assert_int_eq(fi.kind, LJP_FRAME_LUA);
  ck_assert_int_eq(memcmp(fi.chunk, "@src.lua", 8), 0); /* src's taken */
  ck_assert_uint_eq(fi.address, 0x1000 + 'n' * 16);
  ck_assert_str_eq(fi.function, "fn");
  ck_assert_int_eq(ljp_tree_frame_info(dst, a7, &fi), LJP_OK);
  ck_assert_uint_eq(fi.line, 7);
  ck_assert_uint_eq(fi.def_line, 47);
  ck_assert_int_eq(ljp_tree_frame_info(dst, ac, &fi), LJP_OK);
  ck_assert_int_eq(fi.kind, LJP_FRAME_NONE);

  uint32_t na = ljp_tree_find_child(dst, 0, a);
  ck_assert_uint_eq(na, 1);
  ck_assert_int_eq(ljp_tree_node_self(dst, na), 6000000000);
  uint32_t nb = ljp_tree_find_child(dst, 0, b);
  ck_assert_int_eq(ljp_tree_node_self(dst, nb), -5000000002);
  uint32_t nac = ljp_tree_find_child(dst, 0, ac);
  ck_assert_uint_ne(nac, 0);
  ck_assert_int_eq(ljp_tree_node_self(dst, nac), 0);
  uint32_t deep = ljp_tree_find_child(
      dst, ljp_tree_find_child(dst, ljp_tree_find_child(dst, 0, a7), b), n1);
  ck_assert_uint_ne(deep, 0);
  ck_assert_int_eq(ljp_tree_node_self(dst, deep), INT32_MIN);
  ck_assert_int_eq(ljp_tree_node_self(dst, ljp_tree_find_child(dst, na, b)),
                   7);
  ck_assert_int_eq(ljp_tree_node_self(dst, 0), 4);
  uint32_t nlate = ljp_tree_find_child(dst, nb, late);
  ck_assert_uint_eq(nlate, ljp_tree_node_count(dst) - 1);
  ck_assert_int_eq(ljp_tree_node_self(dst, nlate), 0);
  ck_assert_int_eq(ljp_tree_node_total(dst, 0),
                   4 + 6000000000 + 7 - 5000000002 + INT32_MIN - 5);

  /* src is left as it was. */
  ljp_tree *again = ljp_tree_new();
  build_src(again);
  assert_trees_equal(src, again);
  ljp_tree_free(again);
  ljp_tree_free(dst);
  ljp_tree_free(src);
  ljp_tree_free(serial);
}
END_TEST

/* Merging into an empty tree copies src, ids and all; an empty src
 * changes nothing. */
START_TEST(empty_trees)
{
  ljp_tree *src = ljp_tree_new(), *dst = ljp_tree_new(),
           *empty = ljp_tree_new();
  build_src(src);
  ck_assert_int_eq(ljp_tree_merge(dst, src), LJP_OK);
  assert_trees_equal(dst, src);
  ck_assert_int_eq(ljp_tree_merge(dst, empty), LJP_OK);
  assert_trees_equal(dst, src);
  ljp_tree_free(src);
  ljp_tree_free(dst);
  ljp_tree_free(empty);
}
END_TEST

/* ---- errors ---- */

START_TEST(bad_arguments)
{
  ljp_tree *t = ljp_tree_new();
  build_dst(t);
  ck_assert_int_eq(ljp_tree_merge(NULL, t), LJP_E_ARG);
  ck_assert_int_eq(ljp_tree_merge(t, NULL), LJP_E_ARG);
  ck_assert_int_eq(ljp_tree_merge(NULL, NULL), LJP_E_ARG);
  ck_assert_int_eq(ljp_tree_merge(t, t), LJP_E_ARG);
  ljp_tree *ref = ljp_tree_new();
  build_dst(ref);
  assert_trees_equal(t, ref); /* untouched */
  ljp_tree_free(t);
  ljp_tree_free(ref);
}
END_TEST

/* A src big enough that the merge must grow dst's frame, node and string
 * tables, its arena and its wide table: every allocation in turn fails,
 * and each failure is LJP_E_NOMEM with dst still a usable tree (ASan
 * reports leaks); once enough succeed, the merge is whole. */
START_TEST(out_of_memory)
{
  ljp_tree *src = ljp_tree_new();
  build_src(src);
  char name[32];
  uint32_t top = intern(src, "top", LJP_CLASS_LUA, 0);
  for (int i = 0; i < 600; i++) {
    snprintf(name, sizeof name, "f%d", i);
    uint32_t f = intern_info(src, name, LJP_CLASS_LUA, (uint64_t)i % 3,
                             i % 2 ? "@odd.lua" : "@even.lua");
    add(src, (uint32_t[]){top, f}, 2, i % 5 ? i : 3000000000 + i);
  }
  char *big = malloc(70000);
  memset(big, 'x', 70000);
  ck_assert_uint_ne(ljp_tree_intern(src, big, 70000, LJP_CLASS_HOST), 0);
  free(big);

  ljp_tree *ref = ljp_tree_new();
  build_dst(ref);
  ck_assert_int_eq(ljp_tree_merge(ref, src), LJP_OK);

  int failures = 0;
  for (long k = 0;; k++) {
    ljp_tree *dst = ljp_tree_new();
    build_dst(dst);
    allocs_left = k;
    ljp_status st = ljp_tree_merge(dst, src);
    allocs_left = -1;
    if (st == LJP_OK) {
      assert_trees_equal(dst, ref);
      ljp_tree_free(dst);
      break;
    }
    ck_assert_int_eq(st, LJP_E_NOMEM);
    failures++;
    /* Part of src, but a tree that answers. */
    ck_assert_uint_ge(ljp_tree_frame_count(dst), 2);
    ck_assert_uint_le(ljp_tree_frame_count(dst), ljp_tree_frame_count(ref));
    ck_assert_uint_le(ljp_tree_node_count(dst), ljp_tree_node_count(ref));
    free(folded(dst));
    ljp_tree_free(dst);
    ck_assert_int_lt(k, 100000);
  }
  ck_assert_int_ge(failures, 5);
  ljp_tree_free(ref);
  ljp_tree_free(src);
}
END_TEST

static Suite *merge_suite(void)
{
  Suite *s = suite_create("tree_merge");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 300);
  tcase_add_loop_test(tc, captures_merge_as_folded, 0, 2 * NOPTS);
  tcase_add_test(tc, three_files_merge_in_order);
  tcase_add_test(tc, synthetic_merge);
  tcase_add_test(tc, empty_trees);
  tcase_add_test(tc, bad_arguments);
  tcase_add_test(tc, out_of_memory);
  suite_add_tcase(s, tc);
  return s;
}

int main(int argc, char **argv)
{
  if (argc > 1)
    testdata = argv[1];
  list_captures();
  SRunner *sr = srunner_create(merge_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < ncaptures[k]; i++)
      free(captures[k][i]);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
