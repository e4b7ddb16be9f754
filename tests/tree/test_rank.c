/* Unit tests of sibling order by frame rank (tree.c): whatever ranks the
 * tree has computed, and however frames interned after them mix in,
 * ljp_tree_children and ljp__tree_sort_nodes list siblings in the plain
 * order of name bytes (a prefix first), class, line, which this file
 * computes on its own. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ljp.h"
#include "tree_impl.h"

/* Allocation failure: the test links with --wrap=malloc, and the tree
 * sees malloc fail once armed. */
void *__real_malloc(size_t n);
void *__wrap_malloc(size_t n);

static int mallocs_left = -1; /* before they fail; -1 = never */

void *__wrap_malloc(size_t n)
{
  if (mallocs_left == 0)
    return NULL;
  if (mallocs_left > 0)
    mallocs_left--;
  return __real_malloc(n);
}

static uint64_t rng_state;

static uint64_t rng(void)
{
  uint64_t x = rng_state;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return rng_state = x;
}

static uint32_t below(uint32_t n)
{
  return (uint32_t)(rng() % n);
}

/* The test's own record of each frame's key, by frame id. */
typedef struct key {
  unsigned char name[64];
  size_t len;
  ljp_class cls;
  uint64_t line;
} key;

typedef struct model {
  ljp_tree *t;
  key *keys;         /* by frame id */
  uint32_t nkeys;    /* frame ids below it are known */
  uint32_t cap;
} model;

/* The reference order, written out plainly. */
static int key_cmp(const key *a, const key *b)
{
  size_t n = a->len < b->len ? a->len : b->len;
  for (size_t i = 0; i < n; i++)
    if (a->name[i] != b->name[i])
      return a->name[i] < b->name[i] ? -1 : 1;
  if (a->len != b->len)
    return a->len < b->len ? -1 : 1;
  if (a->cls != b->cls)
    return a->cls < b->cls ? -1 : 1;
  if (a->line != b->line)
    return a->line < b->line ? -1 : 1;
  return 0;
}

/* What every name starts with, when a test wants all names to share a
 * prefix (the rank sort skips it). */
static const char *all_prefix = "";

/* Names that share prefixes, differ past 8 and 16 bytes (where the
 * rank sort's cached keys end), end in or hold 0 bytes (the padding of
 * those keys) and 0xff (bytes compare unsigned). */
static void random_key(key *k)
{
  static const unsigned char alpha[] = {0x00, 'a', 'b', 0xff};
  static const char *stems[] = {"", "@app/module", "@app/module/long/",
                                "abcdefgh", "abcdefghabcdefgh"};
  static const uint64_t lines[] = {0, 1, 2, (uint64_t)1 << 40};
  const char *stem = stems[below(5)];
  size_t n = strlen(all_prefix);
  memcpy(k->name, all_prefix, n);
  memcpy(k->name + n, stem, strlen(stem));
  n += strlen(stem);
  size_t tail = below(9);
  for (size_t i = 0; i < tail; i++)
    k->name[n++] = alpha[below(4)];
  k->len = n;
  k->cls = (ljp_class)below(3);
  k->line = lines[below(4)];
}

static void model_intern(model *m)
{
  key k;
  random_key(&k);
  uint32_t id = ljp_tree_intern_line(m->t, (const char *)k.name, k.len,
                                     k.cls, k.line);
  ck_assert_uint_ne(id, 0);
  if (id < m->nkeys) {
    ck_assert_int_eq(key_cmp(&m->keys[id], &k), 0);
    return;
  }
  ck_assert_uint_eq(id, m->nkeys);
  if (m->nkeys == m->cap) {
    m->cap *= 2;
    m->keys = realloc(m->keys, m->cap * sizeof *m->keys);
    ck_assert_ptr_nonnull(m->keys);
  }
  m->keys[m->nkeys++] = k;
}

static uint32_t random_frame(const model *m)
{
  return 1 + below(m->nkeys - 1);
}

/* A stack below a random node: narrow trees, and now and then a wide
 * node (more children than a small sort or a short buffer takes). */
static void model_add(model *m)
{
  uint32_t nn = ljp_tree_node_count(m->t);
  uint32_t node = below(nn);
  if (below(4) == 0) {
    for (uint32_t i = 0, n = 10 + below(30); i < n; i++) {
      uint32_t f = random_frame(m);
      ck_assert_uint_ne(ljp_tree_add_below(m->t, node, &f, 1, 1, NULL),
                        UINT32_MAX);
    }
    return;
  }
  uint32_t frames[4];
  size_t n = 1 + below(4);
  for (size_t i = 0; i < n; i++)
    frames[i] = random_frame(m);
  ck_assert_uint_ne(ljp_tree_add_below(m->t, node, frames, n, 1, NULL),
                    UINT32_MAX);
}

static const model *sort_model;

static int node_ref_cmp(const void *pa, const void *pb)
{
  const ljp_tree *t = sort_model->t;
  uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
  return key_cmp(&sort_model->keys[ljp_tree_node_frame(t, a)],
                 &sort_model->keys[ljp_tree_node_frame(t, b)]);
}

/* The children of node in the reference order; returns how many. */
static size_t ref_children(const model *m, uint32_t node, uint32_t *out)
{
  size_t n = 0;
  for (uint32_t i = 1; i < ljp_tree_node_count(m->t); i++)
    if (ljp_tree_node_parent(m->t, i) == node)
      out[n++] = i;
  sort_model = m;
  qsort(out, n, sizeof *out, node_ref_cmp);
  return n;
}

typedef struct stats {
  unsigned builds;       /* times the ranked range changed */
  unsigned mixed;        /* lists holding ranked and unranked frames */
  uint32_t last_rank_n;
} stats;

static void note_ranks(const model *m, stats *s, const uint32_t *kids,
                       size_t n)
{
  const ljp_tree *t = m->t;
  if (t->rank_n != s->last_rank_n) {
    s->builds++;
    s->last_rank_n = t->rank_n;
  }
  int ranked = 0, unranked = 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t f = ljp_tree_node_frame(t, kids[i]);
    if (f < t->rank_n)
      ranked = 1;
    else
      unranked = 1;
  }
  s->mixed += ranked && unranked;
}

/* Checks ljp_tree_children of node with a buffer of cap against the
 * reference, and ljp__tree_sort_nodes on the children shuffled. */
static void check_node(const model *m, uint32_t node, size_t cap,
                       uint32_t *out, uint32_t *ref, stats *s)
{
  size_t want = ref_children(m, node, ref);
  size_t got = ljp_tree_children(m->t, node, out, cap);
  ck_assert_uint_eq(got, want);
  size_t k = got < cap ? got : cap;
  for (size_t i = 0; i < k; i++)
    ck_assert_msg(out[i] == ref[i],
                  "node %u cap %zu: child %zu is %u, want %u (ranked "
                  "below frame %u of %u)",
                  node, cap, i, out[i], ref[i], m->t->rank_n,
                  m->t->nframes);
  note_ranks(m, s, ref, want);

  memcpy(out, ref, want * sizeof *out);
  for (size_t i = want; i > 1; i--) {
    size_t j = below((uint32_t)i);
    uint32_t x = out[i - 1];
    out[i - 1] = out[j];
    out[j] = x;
  }
  ljp__tree_sort_nodes(m->t, out, want);
  for (size_t i = 0; i < want; i++)
    ck_assert_uint_eq(out[i], ref[i]);
}

static void model_init(model *m)
{
  m->t = ljp_tree_new();
  ck_assert_ptr_nonnull(m->t);
  m->cap = 64;
  m->keys = malloc(m->cap * sizeof *m->keys);
  ck_assert_ptr_nonnull(m->keys);
  m->nkeys = 1; /* frame ids start at 1 */
}

static void model_free(model *m)
{
  ljp_tree_free(m->t);
  free(m->keys);
}

/* Interning, adding and asking, interleaved: ranks get built, frames
 * come after them, and lists mix both. */
START_TEST(children_match_reference_order)
{
  static const size_t caps[] = {1, 2, 3, 5, 16, 17, 64, 100000};
  rng_state = 0x9e3779b97f4a7c15u + (uint64_t)_i;
  all_prefix = _i % 2 ? "@/srv/app/lib/" : "";
  model m;
  model_init(&m);
  stats s = {0};
  uint32_t *out = NULL, *ref = NULL;
  size_t bufcap = 0;
  for (int step = 0; step < 3000; step++) {
    uint32_t op = below(10);
    if (op < 2 || m.nkeys < 8) {
      for (uint32_t i = 0, n = 1 + below(step < 1500 ? 4 : 40); i < n; i++)
        model_intern(&m);
    } else if (op < 5) {
      model_add(&m);
    } else {
      uint32_t nn = ljp_tree_node_count(m.t);
      if (nn > bufcap) {
        bufcap = (size_t)nn * 2;
        out = realloc(out, bufcap * sizeof *out);
        ref = realloc(ref, bufcap * sizeof *ref);
        ck_assert(out && ref);
      }
      /* Root and wide nodes most of the time: their lists are long. */
      uint32_t node = below(3) == 0 ? below(nn) : below(nn < 64 ? nn : 64);
      check_node(&m, node, caps[below(8)], out, ref, &s);
    }
  }
  /* Every node once more, as a flame graph walks them. */
  for (uint32_t n = 0; n < ljp_tree_node_count(m.t); n++)
    check_node(&m, n, 100000, out, ref, &s);
  /* The runs did what they are for: ranks built more than once, lists
   * compared across ranked and unranked frames. */
  ck_assert_uint_ge(s.builds, 2);
  ck_assert_uint_ge(s.mixed, 20);
  free(out);
  free(ref);
  model_free(&m);
}
END_TEST

/* One new frame, one query, again and again: the ranks are rebuilt a
 * logarithmic number of times, not once per query. */
START_TEST(rebuilds_amortized)
{
  rng_state = 12345;
  all_prefix = "";
  model m;
  model_init(&m);
  while (m.nkeys <= 300)
    model_intern(&m);
  /* A wide node whose list every query sorts: enough work to pay for a
   * build every few queries, were it not for the growth rule. */
  for (uint32_t f = 1; f <= 300; f++)
    ck_assert_uint_ne(ljp_tree_add(m.t, &f, 1, 1), UINT32_MAX);
  stats s = {0};
  uint32_t out[300], ref[300];
  unsigned checked = 0;
  for (int step = 0; step < 20000; step++) {
    model_intern(&m);
    uint32_t f = m.nkeys - 1, path[2] = {1, f};
    ck_assert_uint_ne(ljp_tree_add(m.t, path, 2, 1), UINT32_MAX);
    ck_assert_uint_eq(ljp_tree_children(m.t, 0, out, 64), 300);
    if (m.t->rank_n != s.last_rank_n) {
      s.builds++;
      s.last_rank_n = m.t->rank_n;
    }
    if (step % 1000 == 0) {
      check_node(&m, 0, 64, out, ref, &s);
      checked++;
    }
  }
  /* From 300 to about 20300 frames, growing by half between builds:
   * about ten of them. */
  ck_assert_uint_ge(s.builds, 5);
  ck_assert_uint_le(s.builds, 16);
  ck_assert_uint_eq(checked, 20);
  model_free(&m);
}
END_TEST

/* The frames' order itself, all frames at once: rank order against the
 * reference after a build that covers them all, with names that share
 * no prefix and names that all share one. */
START_TEST(ranks_agree_with_reference)
{
  rng_state = 777 + (uint64_t)_i;
  all_prefix = _i ? "@/srv/app/lib/" : "";
  model m;
  model_init(&m);
  for (int i = 0; i < 3000; i++)
    model_intern(&m);
  /* Every frame a child of the root, and the root asked until ranked. */
  for (uint32_t f = 1; f < m.nkeys; f++)
    ck_assert_uint_ne(ljp_tree_add(m.t, &f, 1, 1), UINT32_MAX);
  uint32_t *out = malloc(m.nkeys * sizeof *out);
  ck_assert_ptr_nonnull(out);
  for (int i = 0; i < 4 && m.t->rank_n != m.t->nframes; i++)
    ljp_tree_children(m.t, 0, out, m.nkeys);
  ck_assert_uint_eq(m.t->rank_n, m.t->nframes);
  for (uint32_t a = 1; a < m.nkeys; a++) {
    uint32_t b = 1 + below(m.nkeys - 1);
    int want = key_cmp(&m.keys[a], &m.keys[b]);
    uint32_t ra = m.t->rank[a], rb = m.t->rank[b];
    ck_assert_int_eq(want, ra < rb ? -1 : ra > rb);
  }
  free(out);
  model_free(&m);
}
END_TEST

/* Lists root's children while malloc fails after `left` more calls (no
 * check assertion in between: check allocates too), then checks each
 * list against the reference. */
static void query_failing(const model *m, int left, uint32_t *got,
                          uint32_t *ref, size_t n)
{
  size_t counts[6];
  mallocs_left = left;
  for (int i = 0; i < 6; i++)
    counts[i] = ljp_tree_children(m->t, 0, got + i * n, n);
  mallocs_left = -1;
  ck_assert_uint_eq(ref_children(m, 0, ref), n);
  for (int i = 0; i < 6; i++) {
    ck_assert_uint_eq(counts[i], n);
    for (size_t j = 0; j < n; j++)
      ck_assert_uint_eq(got[i * n + j], ref[j]);
  }
}

/* A build that runs out of memory leaves the ranks it had (none, or
 * older ones) and the order right; a later build succeeds. */
START_TEST(build_out_of_memory)
{
  rng_state = 4242;
  all_prefix = "";
  model m;
  model_init(&m);
  while (m.nkeys <= 3000)
    model_intern(&m);
  for (uint32_t f = 1; f <= 2000; f++)
    ck_assert_uint_ne(ljp_tree_add(m.t, &f, 1, 1), UINT32_MAX);
  uint32_t *got = malloc(6 * 4000 * sizeof *got);
  uint32_t *ref = malloc(4000 * sizeof *ref);
  ck_assert(got && ref);
  /* The rank array, then the sort's scratch: each failing.  Six lists
   * of 2000 are work enough for a build on 3000 frames. */
  for (int left = 0; left < 2; left++) {
    query_failing(&m, left, got, ref, 2000);
    ck_assert_uint_eq(m.t->rank_n, 0);
  }
  query_failing(&m, -1, got, ref, 2000);
  ck_assert_uint_eq(m.t->rank_n, 3001);
  /* New frames past the ranks, then a rebuild that fails: the old ranks
   * stay, and lists mix them with unranked frames. */
  while (m.nkeys <= 4600)
    model_intern(&m);
  for (uint32_t f = 2001; f <= 3000; f++)
    ck_assert_uint_ne(ljp_tree_add(m.t, &f, 1, 1), UINT32_MAX);
  for (uint32_t f = 3001; f <= 3999; f++)
    ck_assert_uint_ne(ljp_tree_add(m.t, &f, 1, 1), UINT32_MAX);
  query_failing(&m, 0, got, ref, 3999);
  ck_assert_uint_eq(m.t->rank_n, 3001);
  query_failing(&m, -1, got, ref, 3999);
  ck_assert_uint_eq(m.t->rank_n, m.t->nframes);
  free(got);
  free(ref);
  model_free(&m);
}
END_TEST

static Suite *rank_suite(void)
{
  Suite *s = suite_create("tree_rank");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, children_match_reference_order, 0, 4);
  tcase_add_test(tc, rebuilds_amortized);
  tcase_add_loop_test(tc, ranks_agree_with_reference, 0, 2);
  tcase_add_test(tc, build_out_of_memory);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(rank_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
