/* Unit tests of the folder's live-block map (livemap.c) against a plain
 * array: adds, moves and deletions at random over a small address space,
 * so probe runs collide, wrap around the table's end and are shifted back
 * by deletions; every lookup must agree with the array. */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "livemap.h"

#define KEYS 3000

typedef struct truth {
  int live;
  uint64_t size;
  uint32_t node;
} truth;

static uint64_t rng = 88172645463325252ULL;

static uint64_t next(void)
{
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

/* Addresses 0, 16, 32, ...: 0 is a key like any other. */
static uint64_t addr_of(size_t k) { return (uint64_t)k * 16; }

static void check_all(const livemap *m, const truth *t)
{
  size_t live = 0;
  for (size_t k = 0; k < KEYS; k++) {
    live_block *b = ljp__livemap_get(m, addr_of(k));
    if (!t[k].live) {
      ck_assert_msg(b == NULL, "key %zu found after deletion", k);
      continue;
    }
    live++;
    ck_assert_msg(b != NULL, "key %zu lost", k);
    ck_assert_uint_eq(b->addr, addr_of(k));
    ck_assert_uint_eq(b->size, t[k].size);
    ck_assert_uint_eq(b->node, t[k].node);
  }
  ck_assert_uint_eq(m->count, live);
}

START_TEST(agrees_with_an_array)
{
  static truth t[KEYS];
  memset(t, 0, sizeof(t));
  livemap m;
  memset(&m, 0, sizeof(m));
  for (int round = 0; round < 100000; round++) {
    size_t k = (size_t)(next() % KEYS);
    /* mostly adds early on, balanced later: the table grows, then holds
     * a steady live set through many deletions */
    int add = (int)(next() % 100) < (round < 20000 ? 70 : 50);
    if (add) {
      live_block *b = ljp__livemap_put(&m, addr_of(k));
      ck_assert_ptr_nonnull(b);
      if (t[k].live) {
        ck_assert_uint_eq(b->size, t[k].size);
      } else {
        ck_assert_uint_eq(b->size, 0);
        ck_assert_uint_eq(b->node, 0);
      }
      b->size = t[k].size = next() % 100000;
      b->node = t[k].node = (uint32_t)next();
      t[k].live = 1;
    } else {
      live_block out;
      int had = ljp__livemap_del(&m, addr_of(k), &out);
      ck_assert_int_eq(had, t[k].live);
      if (had) {
        ck_assert_uint_eq(out.addr, addr_of(k));
        ck_assert_uint_eq(out.size, t[k].size);
        ck_assert_uint_eq(out.node, t[k].node);
      }
      t[k].live = 0;
    }
    if (round % 997 == 0)
      check_all(&m, t);
  }
  check_all(&m, t);
  /* a steady live set keeps a steady table */
  ck_assert_uint_le(m.cap, 4096);
  ljp__livemap_free(&m);
  ck_assert_uint_eq(m.cap, 0);
  ck_assert_ptr_null(ljp__livemap_get(&m, 0));
}
END_TEST

int main(void)
{
  Suite *s = suite_create("livemap");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, agrees_with_an_array);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
