/* Unit tests of the call tree (tree.c): interning, the trie, weights,
 * sorted children and folded output order. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ljp.h"
#include "ljp.h"
#include "tree_impl.h"

static uint32_t in(ljp_tree *t, const char *s, ljp_class c)
{
  return ljp_tree_intern(t, s, strlen(s), c);
}

/* Adds a stack given as "a;b;c" (class OTHER). */
static uint32_t add_text(ljp_tree *t, const char *stack, int64_t w)
{
  uint32_t frames[64];
  size_t n = 0;
  const char *p = stack;
  for (;;) {
    const char *e = strchr(p, ';');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    frames[n++] = ljp_tree_intern(t, p, len, LJP_CLASS_OTHER);
    if (!e)
      break;
    p = e + 1;
  }
  return ljp_tree_add(t, frames, n, w);
}

typedef struct sink {
  char *buf;
  size_t len, cap;
  int lines, stop_after;
} sink;

static int sink_emit(void *ctx, const char *line, size_t len)
{
  sink *s = ctx;
  if (s->stop_after && s->lines == s->stop_after)
    return 1;
  if (s->len + len + 1 > s->cap) {
    s->cap = (s->len + len + 1) * 2;
    s->buf = realloc(s->buf, s->cap);
  }
  memcpy(s->buf + s->len, line, len);
  s->len += len;
  s->buf[s->len] = '\0';
  s->lines++;
  return 0;
}

static char *folded(const ljp_tree *t, int64_t min_weight)
{
  sink s = {0};
  ck_assert_int_eq(ljp_tree_write_folded(t, min_weight, sink_emit, &s), LJP_OK);
  if (!s.buf)
    s.buf = calloc(1, 1);
  return s.buf;
}

START_TEST(intern_same_name_same_id)
{
  ljp_tree *t = ljp_tree_new();
  ck_assert_ptr_nonnull(t);
  uint32_t a = in(t, "lua_pcall", LJP_CLASS_HOST);
  uint32_t b = in(t, "lua_pcall", LJP_CLASS_HOST);
  uint32_t c = in(t, "lua_pcall", LJP_CLASS_CFUNC);
  uint32_t d = in(t, "lua_pcal", LJP_CLASS_HOST);
  ck_assert_uint_eq(a, 1);
  ck_assert_uint_eq(b, 1);
  ck_assert_uint_eq(c, 2);
  ck_assert_uint_eq(d, 3);
  ck_assert_uint_eq(ljp_tree_frame_count(t), 3);
  ck_assert_int_eq(ljp_tree_frame_class(t, c), LJP_CLASS_CFUNC);
  size_t len = 99;
  ck_assert_str_eq(ljp_tree_frame_name(t, d, &len), "lua_pcal");
  ck_assert_uint_eq(len, 8);
  ck_assert_ptr_null(ljp_tree_frame_name(t, 4, &len));
  ck_assert_uint_eq(len, 0);
  ck_assert_ptr_null(ljp_tree_frame_name(t, 0, NULL));
  ck_assert_uint_eq(ljp_tree_find_frame(t, "lua_pcall", 9, LJP_CLASS_CFUNC), 2);
  ck_assert_uint_eq(ljp_tree_find_frame(t, "lua_pcall", 9, LJP_CLASS_LUA), 0);
  ljp_tree_free(t);
}
END_TEST

START_TEST(intern_any_bytes)
{
  ljp_tree *t = ljp_tree_new();
  const char raw[] = {'a', '\0', 'b', (char)0xff, '\n'};
  uint32_t a = ljp_tree_intern(t, raw, sizeof raw, LJP_CLASS_OTHER);
  uint32_t b = ljp_tree_intern(t, raw, 1, LJP_CLASS_OTHER);
  uint32_t e = ljp_tree_intern(t, "", 0, LJP_CLASS_OTHER);
  uint32_t e2 = ljp_tree_intern(t, NULL, 0, LJP_CLASS_OTHER);
  ck_assert_uint_ne(a, b);
  ck_assert_uint_ne(e, 0);
  ck_assert_uint_eq(e, e2);
  size_t len;
  const char *p = ljp_tree_frame_name(t, a, &len);
  ck_assert_uint_eq(len, 5);
  ck_assert_int_eq(memcmp(p, raw, 5), 0);
  ck_assert_int_eq(p[5], '\0');
  ck_assert_uint_eq(ljp_tree_intern(t, NULL, 3, LJP_CLASS_OTHER), 0);
  ljp_tree_free(t);
}
END_TEST

START_TEST(add_weights_and_shape)
{
  ljp_tree *t = ljp_tree_new();
  ck_assert_uint_eq(ljp_tree_node_count(t), 1);
  uint32_t ab = add_text(t, "a;b", 3);
  uint32_t abc = add_text(t, "a;b;c", 5);
  uint32_t ab2 = add_text(t, "a;b", 2);
  uint32_t ad = add_text(t, "a;d", -4);
  ck_assert_uint_eq(ab, ab2);
  ck_assert_uint_eq(ljp_tree_node_count(t), 5); /* root, a, b, c, d */
  uint32_t a = ljp_tree_node_parent(t, ab);
  ck_assert_uint_eq(ljp_tree_node_parent(t, a), 0);
  ck_assert_uint_eq(ljp_tree_node_parent(t, abc), ab);
  ck_assert_uint_eq(ljp_tree_node_depth(t, 0), 0);
  ck_assert_uint_eq(ljp_tree_node_depth(t, a), 1);
  ck_assert_uint_eq(ljp_tree_node_depth(t, abc), 3);
  ck_assert_int_eq(ljp_tree_node_self(t, ab), 5);
  ck_assert_int_eq(ljp_tree_node_total(t, ab), 10);
  ck_assert_int_eq(ljp_tree_node_self(t, a), 0);
  ck_assert_int_eq(ljp_tree_node_total(t, a), 6);
  ck_assert_int_eq(ljp_tree_node_total(t, 0), 6);
  ck_assert_int_eq(ljp_tree_node_self(t, ad), -4);
  size_t len;
  ck_assert_str_eq(ljp_tree_frame_name(t, ljp_tree_node_frame(t, abc), &len), "c");
  ck_assert_uint_eq(ljp_tree_find_child(t, a, ljp_tree_node_frame(t, ab)), ab);
  ck_assert_uint_eq(ljp_tree_find_child(t, 0, ljp_tree_node_frame(t, ab)), 0);
  /* Out-of-range nodes and frames. */
  ck_assert_int_eq(ljp_tree_node_total(t, 99), 0);
  uint32_t bad = 77;
  ck_assert_uint_eq(ljp_tree_add(t, &bad, 1, 1), UINT32_MAX);
  ck_assert_int_eq(ljp_tree_node_total(t, 0), 6);
  /* The empty stack is the root. */
  ck_assert_uint_eq(ljp_tree_add(t, NULL, 0, 7), 0);
  ck_assert_int_eq(ljp_tree_node_self(t, 0), 7);
  ck_assert_int_eq(ljp_tree_node_total(t, 0), 13);
  ljp_tree_free(t);
}
END_TEST

START_TEST(children_sorted)
{
  ljp_tree *t = ljp_tree_new();
  const char *names[] = {"m", "b", "zz", "a b", "a", "", "z"};
  for (size_t i = 0; i < 7; i++) {
    uint32_t f = in(t, names[i], LJP_CLASS_OTHER);
    ljp_tree_add(t, &f, 1, 1);
  }
  uint32_t lua_a = in(t, "a", LJP_CLASS_LUA);
  ljp_tree_add(t, &lua_a, 1, 1);
  const char *want[] = {"", "a", "a", "a b", "b", "m", "z", "zz"};
  uint32_t out[8];
  ck_assert_uint_eq(ljp_tree_children(t, 0, out, 8), 8);
  for (size_t i = 0; i < 8; i++) {
    size_t len;
    ck_assert_str_eq(ljp_tree_frame_name(t, ljp_tree_node_frame(t, out[i]), &len),
                     want[i]);
  }
  ck_assert_int_eq(ljp_tree_frame_class(t, ljp_tree_node_frame(t, out[1])), LJP_CLASS_OTHER);
  ck_assert_int_eq(ljp_tree_frame_class(t, ljp_tree_node_frame(t, out[2])), LJP_CLASS_LUA);
  /* A short buffer gets the first entries in order. */
  uint32_t few[3];
  ck_assert_uint_eq(ljp_tree_children(t, 0, few, 3), 8);
  for (size_t i = 0; i < 3; i++)
    ck_assert_uint_eq(few[i], out[i]);
  ck_assert_uint_eq(ljp_tree_children(t, 0, NULL, 0), 8);
  ck_assert_uint_eq(ljp_tree_children(t, out[0], few, 3), 0);
  ljp_tree_free(t);
}
END_TEST

START_TEST(many_frames_and_nodes)
{
  /* Enough to grow every table several times. */
  ljp_tree *t = ljp_tree_new();
  char name[32];
  uint32_t frames[3];
  for (int i = 0; i < 50000; i++) {
    int n = snprintf(name, sizeof name, "f%d", i);
    frames[0] = ljp_tree_intern(t, "root", 4, LJP_CLASS_HOST);
    frames[1] = ljp_tree_intern(t, name, (size_t)n, LJP_CLASS_LUA);
    frames[2] = ljp_tree_intern(t, name, (size_t)n, LJP_CLASS_HOST);
    ck_assert_uint_ne(ljp_tree_add(t, frames, 3, i), UINT32_MAX);
  }
  ck_assert_uint_eq(ljp_tree_frame_count(t), 1 + 2 * 50000);
  ck_assert_uint_eq(ljp_tree_node_count(t), 1 + 1 + 2 * 50000);
  ck_assert_int_eq(ljp_tree_node_total(t, 0), (int64_t)49999 * 50000 / 2);
  /* Re-adding finds the same nodes. */
  for (int i = 0; i < 50000; i += 997) {
    int n = snprintf(name, sizeof name, "f%d", i);
    frames[0] = ljp_tree_intern(t, "root", 4, LJP_CLASS_HOST);
    frames[1] = ljp_tree_intern(t, name, (size_t)n, LJP_CLASS_LUA);
    frames[2] = ljp_tree_intern(t, name, (size_t)n, LJP_CLASS_HOST);
    uint32_t leaf = ljp_tree_add(t, frames, 3, 1);
    ck_assert_int_eq(ljp_tree_node_self(t, leaf), i + 1);
  }
  ck_assert_uint_eq(ljp_tree_node_count(t), 1 + 1 + 2 * 50000);
  ljp_tree_free(t);
}
END_TEST

START_TEST(folded_simple)
{
  ljp_tree *t = ljp_tree_new();
  add_text(t, "main;work;sub", 4);
  add_text(t, "main;idle", 2);
  add_text(t, "main", 1);
  add_text(t, "main;work", 3);
  add_text(t, "main;work;zero", 0);
  add_text(t, "main;neg", -5);
  char *s = folded(t, 0);
  ck_assert_str_eq(s, "main 1\nmain;idle 2\nmain;neg -5\nmain;work 3\n"
                      "main;work;sub 4\n");
  free(s);
  s = folded(t, 3);
  ck_assert_str_eq(s, "main;neg -5\nmain;work 3\nmain;work;sub 4\n");
  free(s);
  ljp_tree_free(t);
}
END_TEST

START_TEST(folded_prefix_names)
{
  /* Names where one is a prefix of a sibling: "a" vs "a b" vs "a;x" (a
   * single frame holding ';'), and equal names of two classes. */
  ljp_tree *t = ljp_tree_new();
  add_text(t, "a;x", 1);
  add_text(t, "a", 5);
  uint32_t f[2];
  f[0] = in(t, "a b", LJP_CLASS_OTHER);
  ljp_tree_add(t, f, 1, 2);
  f[0] = in(t, "a;x", LJP_CLASS_OTHER);
  ljp_tree_add(t, f, 1, 7);
  f[0] = in(t, "a", LJP_CLASS_LUA);
  ljp_tree_add(t, f, 1, 3);
  f[0] = in(t, "a", LJP_CLASS_OTHER);
  f[1] = in(t, "", LJP_CLASS_OTHER);
  ljp_tree_add(t, f, 2, 9);
  char *s = folded(t, 0);
  ck_assert_str_eq(s, "a 3\na 5\na b 2\na; 9\na;x 1\na;x 7\n");
  free(s);
  ljp_tree_free(t);
}
END_TEST

static int cmp_str(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

START_TEST(folded_matches_sorted_lines)
{
  /* Random stacks over an alphabet rich in separators; the oracle renders
   * each node's line from parent pointers and sorts the lines. */
  const char *alpha[] = {"a", "a b", "a;b", "b", "a!", "", "ab", "a\t", "b;"};
  ljp_tree *t = ljp_tree_new();
  unsigned seed = 12345u;
  for (int i = 0; i < 3000; i++) {
    uint32_t fr[6];
    seed = seed * 1103515245u + 12345u;
    size_t n = 1 + (seed >> 16) % 6;
    for (size_t k = 0; k < n; k++) {
      seed = seed * 1103515245u + 12345u;
      const char *nm = alpha[(seed >> 16) % 9];
      fr[k] = in(t, nm, (seed >> 8) % 3 == 0 ? LJP_CLASS_LUA : LJP_CLASS_OTHER);
    }
    seed = seed * 1103515245u + 12345u;
    ljp_tree_add(t, fr, n, (int64_t)((seed >> 16) % 7) - 1);
  }
  uint32_t nn = ljp_tree_node_count(t);
  char **lines = calloc(nn, sizeof *lines);
  size_t nl = 0, total = 0;
  for (uint32_t v = 1; v < nn; v++) {
    int64_t self = ljp_tree_node_self(t, v);
    if (self == 0)
      continue;
    char path[512] = "";
    for (uint32_t u = v; u; u = ljp_tree_node_parent(t, u)) {
      char tmp[1024];
      size_t len;
      const char *nm = ljp_tree_frame_name(t, ljp_tree_node_frame(t, u), &len);
      snprintf(tmp, sizeof tmp, "%s%s%s", nm, u == v ? "" : ";", path);
      strcpy(path, tmp);
    }
    lines[nl] = malloc(600);
    snprintf(lines[nl], 600, "%s %lld\n", path, (long long)self);
    total += strlen(lines[nl]);
    nl++;
  }
  qsort(lines, nl, sizeof *lines, cmp_str);
  char *want = calloc(total + 1, 1);
  for (size_t i = 0; i < nl; i++) {
    strcat(want, lines[i]);
    free(lines[i]);
  }
  free(lines);
  char *got = folded(t, 0);
  ck_assert_uint_gt(nl, 100);
  /* Compare line by line: check cannot print strings this long. */
  size_t off = 0;
  while (got[off] && got[off] == want[off])
    off++;
  ck_assert_msg(got[off] == want[off], "differ at byte %zu: got \"%.40s\" want \"%.40s\"",
                off, got + off, want + off);
  free(got);
  free(want);
  ljp_tree_free(t);
}
END_TEST

START_TEST(folded_stop_and_args)
{
  ljp_tree *t = ljp_tree_new();
  add_text(t, "a", 1);
  add_text(t, "b", 1);
  add_text(t, "a b", 1); /* a sorted run too */
  sink s = {0};
  s.stop_after = 1;
  ck_assert_int_eq(ljp_tree_write_folded(t, 0, sink_emit, &s), LJP_E_IO);
  ck_assert_str_eq(s.buf, "a 1\n");
  free(s.buf);
  ck_assert_int_eq(ljp_tree_write_folded(t, 0, NULL, NULL), LJP_E_ARG);
  ck_assert_int_eq(ljp_tree_write_folded(NULL, 0, sink_emit, &s), LJP_E_ARG);
  ljp_tree_free(t);
  /* An empty tree writes nothing. */
  t = ljp_tree_new();
  char *e = folded(t, 0);
  ck_assert_str_eq(e, "");
  free(e);
  ljp_tree_free(t);
}
END_TEST

START_TEST(folded_extreme_weights)
{
  ljp_tree *t = ljp_tree_new();
  add_text(t, "min", INT64_MIN);
  add_text(t, "max", INT64_MAX);
  char *s = folded(t, INT64_MAX);
  ck_assert_str_eq(s, "max 9223372036854775807\nmin -9223372036854775808\n");
  free(s);
  ljp_tree_free(t);
}
END_TEST

START_TEST(deep_stack)
{
  /* 400 frames deep, recursion of one frame: one node per depth. */
  ljp_tree *t = ljp_tree_new();
  uint32_t fr[400];
  uint32_t f = in(t, "rec", LJP_CLASS_LUA);
  for (int i = 0; i < 400; i++)
    fr[i] = f;
  uint32_t leaf = ljp_tree_add(t, fr, 400, 2);
  ck_assert_uint_eq(ljp_tree_add(t, fr, 400, 2), leaf);
  ck_assert_uint_eq(ljp_tree_node_depth(t, leaf), 400);
  ck_assert_uint_eq(ljp_tree_node_count(t), 401);
  ck_assert_int_eq(ljp_tree_node_total(t, 1), 4);
  char *s = folded(t, 0);
  ck_assert_uint_eq(strlen(s), 400 * 4 - 1 + 3);
  free(s);
  ljp_tree_free(t);
}
END_TEST

/* Random stacks over a few frames, each remembered with the leaf it made:
 * the leaf's depth is the stack's length, the walk up from it gives the
 * stack backwards, and the walk down by ljp_tree_find_child finds it again.
 * Nodes get up to 12 children (lists and hashed parents alike), and the
 * depths are asked for in scattered orders, leaves before and after
 * their ancestors. */
static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(uint32_t n)
{
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (uint32_t)(rng >> 11) % n;
}

START_TEST(random_shape)
{
  enum { N = 3000, MAXD = 30 };
  ljp_tree *t = ljp_tree_new();
  uint32_t fr[12];
  char name[8];
  for (int i = 0; i < 12; i++)
    fr[i] = in(t, (snprintf(name, sizeof name, "f%d", i), name),
               LJP_CLASS_OTHER);
  static uint32_t stk[N][MAXD], len[N], leaf[N];
  for (int i = 0; i < N; i++) {
    len[i] = 1 + rnd(MAXD);
    for (uint32_t d = 0; d < len[i]; d++)
      stk[i][d] = fr[rnd(d < 3 ? 12 : 3)];
    leaf[i] = ljp_tree_add(t, stk[i], len[i], 1);
    ck_assert_uint_ne(leaf[i], UINT32_MAX);
  }
  for (int pass = 0; pass < 3; pass++)
    for (int k = 0; k < N; k++) {
      int i = pass == 0 ? k : pass == 1 ? N - 1 - k : (int)((k * 7919u) % N);
      ck_assert_uint_eq(ljp_tree_node_depth(t, leaf[i]), len[i]);
      uint32_t u = leaf[i];
      for (uint32_t d = len[i]; d-- > 0; u = ljp_tree_node_parent(t, u)) {
        ck_assert_uint_eq(ljp_tree_node_frame(t, u), stk[i][d]);
        ck_assert_uint_eq(ljp_tree_node_depth(t, u), d + 1);
      }
      ck_assert_uint_eq(u, 0);
      for (uint32_t d = 0; d < len[i]; d++)
        u = ljp_tree_find_child(t, u, stk[i][d]);
      ck_assert_uint_eq(u, leaf[i]);
    }
  /* Every node is the child of its parent, once: children counts add up
   * to the nodes, and each listed child names its parent. */
  uint32_t kids[16];
  size_t sum = 0, wide = 0;
  for (uint32_t n = 0; n < ljp_tree_node_count(t); n++) {
    size_t m = ljp_tree_children(t, n, kids, 16);
    ck_assert_uint_le(m, 12);
    wide += m > 8;
    for (size_t j = 0; j < m; j++) {
      ck_assert_uint_eq(ljp_tree_node_parent(t, kids[j]), n);
      ck_assert_uint_eq(ljp_tree_find_child(t, n, ljp_tree_node_frame(t, kids[j])),
                        kids[j]);
    }
    sum += m;
  }
  ck_assert_uint_eq(sum, ljp_tree_node_count(t) - 1);
  ck_assert_uint_gt(wide, 100);
  ck_assert_int_eq(ljp_tree_node_total(t, 0), N);
  ljp_tree_free(t);
}
END_TEST

/* Weights past 32 bits live beside the nodes: self weights and totals
 * that cross the boundary either way, checked against 64-bit sums made
 * here (wrapping like the tree's), and totals asked for midway so that
 * they are summed again over values that went wide and came back. */
static int64_t wrap_add(int64_t a, int64_t b)
{
  return (int64_t)((uint64_t)a + (uint64_t)b);
}

static void check_weights(const ljp_tree *t, const int64_t *mself)
{
  uint32_t nn = ljp_tree_node_count(t);
  int64_t *mtotal = calloc(nn, sizeof *mtotal);
  ck_assert_ptr_nonnull(mtotal);
  for (uint32_t n = 0; n < nn; n++) {
    ck_assert_int_eq(ljp_tree_node_self(t, n), mself[n]);
    for (uint32_t u = n;; u = ljp_tree_node_parent(t, u)) {
      mtotal[u] = wrap_add(mtotal[u], mself[n]);
      if (u == 0)
        break;
    }
  }
  for (uint32_t n = 0; n < nn; n++) {
    ck_assert_int_eq(ljp_tree_node_total(t, n), mtotal[n]);
    ck_assert_int_eq(ljp__tree_subtree_total(t, n), mtotal[n]);
  }
  free(mtotal);
}

START_TEST(wide_weights)
{
  enum { N = 4000 };
  static const int64_t big[] = {
    INT32_MAX, INT32_MAX - 1, (int64_t)INT32_MIN, (int64_t)INT32_MIN + 1,
    (int64_t)1 << 40, -((int64_t)1 << 40), INT64_MAX, INT64_MIN, 1, -1};
  ljp_tree *t = ljp_tree_new();
  uint32_t fr[4], stk[8];
  char name[8];
  for (int i = 0; i < 4; i++)
    fr[i] = in(t, (snprintf(name, sizeof name, "w%d", i), name),
               LJP_CLASS_OTHER);
  static int64_t mself[N * 8 + 1];
  for (int i = 0; i < N; i++) {
    uint32_t len = rnd(8);
    for (uint32_t d = 0; d < len; d++)
      stk[d] = fr[rnd(4)];
    int64_t w = rnd(4) ? (int64_t)rnd(1000) - 500 : big[rnd(10)];
    uint32_t leaf = ljp_tree_add(t, stk, len, w);
    ck_assert_uint_lt(leaf, N * 8 + 1);
    mself[leaf] = wrap_add(mself[leaf], w);
    if (rnd(8) == 0) {
      /* The same leaf again by id, with the opposite weight. */
      int64_t neg = (int64_t)(0 - (uint64_t)w);
      ck_assert_uint_eq(ljp_tree_add_at(t, leaf, neg), leaf);
      mself[leaf] = wrap_add(mself[leaf], neg);
    }
    if (i % 1000 == 999)
      check_weights(t, mself);
  }
  ljp_tree_free(t);
}
END_TEST

/* ljp_tree_add_below from a kept path equals ljp_tree_add of the whole
 * stack: two trees fed the same random stacks (some empty, weights past 32
 * bits either way), one whole, one from the node of a prefix shared with
 * the previous stack (or a shorter one, or the root), end up node for node
 * the same, and the paths written are the nodes of the stack's prefixes. */
START_TEST(add_below_equals_add)
{
  enum { N = 3000, MAXD = 24 };
  static const int64_t big[] = {
    INT32_MAX, (int64_t)INT32_MIN, (int64_t)1 << 40, -((int64_t)1 << 40),
    INT64_MAX, INT64_MIN};
  ljp_tree *a = ljp_tree_new(), *b = ljp_tree_new();
  uint32_t fr[10];
  char name[8];
  for (int i = 0; i < 10; i++) {
    snprintf(name, sizeof name, "g%d", i);
    fr[i] = in(a, name, LJP_CLASS_OTHER);
    ck_assert_uint_eq(in(b, name, LJP_CLASS_OTHER), fr[i]);
  }
  uint32_t stk[MAXD], prev[MAXD], path[MAXD + 1];
  uint32_t plen = 0;
  for (int i = 0; i < N; i++) {
    /* Mostly a variation of the previous stack, as sorted lines are. */
    uint32_t keep = plen ? rnd(plen + 1) : 0;
    uint32_t len = rnd(8) == 0 ? 0 : keep + rnd(MAXD - keep + 1);
    for (uint32_t d = 0; d < len; d++)
      stk[d] = d < keep ? prev[d] : fr[rnd(d < 2 ? 10 : 3)];
    int64_t w = rnd(4) ? (int64_t)rnd(1000) - 500 : big[rnd(6)];
    uint32_t la = ljp_tree_add(a, stk, len, w);
    ck_assert_uint_ne(la, UINT32_MAX);
    uint32_t shared = 0;
    while (shared < len && shared < plen && stk[shared] == prev[shared])
      shared++;
    uint32_t from = rnd(3) ? shared : rnd(shared + 1);
    /* A canary past the end: exactly len - from entries are written. */
    path[len] = 0xdeadbeef;
    int asked = rnd(16) != 0;
    uint32_t lb = ljp_tree_add_below(b, from ? path[from - 1] : 0,
                                     stk + from, len - from, w,
                                     asked ? path + from : NULL);
    ck_assert_uint_eq(lb, la);
    ck_assert_uint_eq(path[len], 0xdeadbeef);
    /* path[0..len) must hold the prefix nodes for the next stack:
     * refill it when it was not asked for. */
    uint32_t u = la;
    for (uint32_t d = len; d-- > 0; u = ljp_tree_node_parent(a, u)) {
      if (d >= from && !asked)
        path[d] = u;
      ck_assert_uint_eq(path[d], u);
    }
    memcpy(prev, stk, len * sizeof *stk);
    plen = len;
  }
  ck_assert_uint_eq(ljp_tree_node_count(b), ljp_tree_node_count(a));
  for (uint32_t n = 0; n < ljp_tree_node_count(a); n++) {
    ck_assert_uint_eq(ljp_tree_node_parent(b, n), ljp_tree_node_parent(a, n));
    ck_assert_uint_eq(ljp_tree_node_frame(b, n), ljp_tree_node_frame(a, n));
    ck_assert_int_eq(ljp_tree_node_self(b, n), ljp_tree_node_self(a, n));
    ck_assert_int_eq(ljp_tree_node_total(b, n), ljp_tree_node_total(a, n));
  }
  char *fa = folded(a, 0), *fb = folded(b, 0);
  ck_assert_str_eq(fb, fa);
  free(fa);
  free(fb);

  /* Bad ids: an error, and nothing changes. */
  uint32_t nn = ljp_tree_node_count(b), bad = 0, f1 = fr[1];
  int64_t root = ljp_tree_node_total(b, 0);
  ck_assert_uint_eq(ljp_tree_add_below(b, nn, &f1, 1, 5, NULL), UINT32_MAX);
  ck_assert_uint_eq(ljp_tree_add_below(b, UINT32_MAX, NULL, 0, 5, NULL),
                    UINT32_MAX);
  ck_assert_uint_eq(ljp_tree_add_below(b, 0, &bad, 1, 5, NULL), UINT32_MAX);
  bad = ljp_tree_frame_count(b) + 1;
  ck_assert_uint_eq(ljp_tree_add_below(b, 0, &bad, 1, 5, NULL), UINT32_MAX);
  ck_assert_uint_eq(ljp_tree_add_below(b, 0, NULL, 1, 5, NULL), UINT32_MAX);
  ck_assert_uint_eq(ljp_tree_add_below(NULL, 0, &f1, 1, 5, NULL), UINT32_MAX);
  ck_assert_uint_eq(ljp_tree_node_count(b), nn);
  ck_assert_int_eq(ljp_tree_node_total(b, 0), root);
  /* n == 0 adds to the node itself, frames may then be NULL. */
  uint32_t leaf = nn - 1;
  int64_t self = ljp_tree_node_self(b, leaf);
  ck_assert_uint_eq(ljp_tree_add_below(b, leaf, NULL, 0, 7, NULL), leaf);
  ck_assert_int_eq(ljp_tree_node_self(b, leaf), wrap_add(self, 7));
  ck_assert_int_eq(ljp_tree_node_total(b, 0), wrap_add(root, 7));
  ljp_tree_free(a);
  ljp_tree_free(b);
}
END_TEST

static Suite *tree_suite(void)
{
  Suite *s = suite_create("tree");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, intern_same_name_same_id);
  tcase_add_test(tc, intern_any_bytes);
  tcase_add_test(tc, add_weights_and_shape);
  tcase_add_test(tc, children_sorted);
  tcase_add_test(tc, many_frames_and_nodes);
  tcase_add_test(tc, folded_simple);
  tcase_add_test(tc, folded_prefix_names);
  tcase_add_test(tc, folded_matches_sorted_lines);
  tcase_add_test(tc, folded_stop_and_args);
  tcase_add_test(tc, folded_extreme_weights);
  tcase_add_test(tc, deep_stack);
  tcase_add_test(tc, random_shape);
  tcase_add_test(tc, wide_weights);
  tcase_add_test(tc, add_below_equals_add);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(tree_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
