/*
 * test_memo.c — samples whose bytes repeat an earlier record resolve
 * exactly as if they were decoded afresh.
 *
 * The reader recognises the stack bytes of records it has seen and reuses
 * their resolved frames; these streams repeat one deep stack many times
 * around every kind of mid-stream definition that can change what its
 * frames resolve to (a prototype at an address the stack names but the
 * table did not know, a prototype replaced at a known address, an
 * unrelated prototype, a C symbol closer to a host address) and check each
 * sample's symbols against what the table holds at that point.  Cuts of
 * the stream inside a repeated record must still be reported as truncated
 * after every sample before them.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_util.h"

#define DEPTH 40            /* deep enough to be memoised */
#define PA 0x10000u         /* recursive prototype */
#define PB 0x20000u         /* outermost prototype, unknown at first */
#define PD 0x30000u         /* unrelated prototype */

static const uint64_t HOST[] = {0x400010, 0x500020, 0x600008, 0x400040};

typedef struct expect {
  const char *inner;        /* chunk of PA's frames */
  const char *outer;        /* chunk of PB, or NULL: unknown */
  const char *host2;        /* symbol of HOST[2] */
} expect;

static void put_sample(ljp_writer *w, int x1) {
  ljp_frame lua[DEPTH];
  memset(lua, 0, sizeof(lua));
  for (int i = 0; i < DEPTH; i++) {
    lua[i].kind = LJP_FRAME_LUA;
    lua[i].value = i == DEPTH - 1 ? PB : PA;
    lua[i].line = i == DEPTH - 1 ? 7 : 5;
  }
  if (x1) {
    ljp_sample_x1 s;
    memset(&s, 0, sizeof(s));
    s.vmstate = LJP_VMST_LFUNC;
    s.dt_ns = 1000;
    s.coro = 1;
    s.lua = lua;
    s.nlua = DEPTH;
    s.host = HOST;
    s.nhost = 4;
    ck_assert_int_eq(ljp_write_sample_x1(w, &s), LJP_OK);
  } else {
    ck_assert_int_eq(
        ljp_write_sample(w, LJP_VMST_LFUNC, lua, DEPTH, HOST, 4), LJP_OK);
  }
}

/* Builds the stream; exp[i] is what sample i must resolve to. */
static ljp_writer *build(int x1, expect *exp, size_t *nexp) {
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  ck_assert_ptr_nonnull(w);
  ck_assert_int_eq(ljp_write_symtab_begin(w, 3, 0), LJP_OK);
  ck_assert_int_eq(ljp_write_symtab_lfunc(w, PA, "@a.lua", 6, 5), LJP_OK);
  ck_assert_int_eq(ljp_write_symtab_cfunc(w, 0x400000, "host_a", 6), LJP_OK);
  ck_assert_int_eq(ljp_write_symtab_cfunc(w, 0x500000, "host_b", 6), LJP_OK);
  ck_assert_int_eq(ljp_write_symtab_end(w), LJP_OK);
  if (x1)
    ck_assert_int_eq(ljp_write_stream_begin_x1(w, LJP_FLAVOR_TARANTOOL,
                                               LJP_TIMER_PROCESS_CPU, 1000),
                     LJP_OK);
  else
    ck_assert_int_eq(ljp_write_stream_begin(w, LJP_KIND_SYSPROF, 2,
                                            LJP_FLAVOR_TARANTOOL, 0),
                     LJP_OK);
  expect cur = {"@a.lua", NULL, "host_b"};
  size_t n = 0;
#define SAMPLES(k)                                                            \
  for (int i_ = 0; i_ < (k); i_++) {                                          \
    put_sample(w, x1);                                                        \
    exp[n++] = cur;                                                           \
  }
  SAMPLES(5);
  ck_assert_int_eq(ljp_write_event_lfunc(w, PB, "@b.lua", 6, 7), LJP_OK);
  cur.outer = "@b.lua";
  SAMPLES(3);
  ck_assert_int_eq(ljp_write_event_lfunc(w, PA, "@c.lua", 6, 5), LJP_OK);
  cur.inner = "@c.lua";
  SAMPLES(3);
  ck_assert_int_eq(ljp_write_event_lfunc(w, PD, "@d.lua", 6, 1), LJP_OK);
  SAMPLES(3);
  ck_assert_int_eq(ljp_write_event_cfunc(w, 0x600000, "host_c", 6), LJP_OK);
  cur.host2 = "host_c";
  SAMPLES(3);
#undef SAMPLES
  ck_assert_int_eq(ljp_write_stream_end(w), LJP_OK);
  *nexp = n;
  return w;
}

static int name_is(const ljp_symbol *s, const char *name) {
  return s && s->name_len == strlen(name) &&
         memcmp(s->name, name, s->name_len) == 0;
}

static void check_sample(const ljp_sample *s, const expect *e, size_t k) {
  ck_assert_msg(s->lua_count == DEPTH && s->host_count == 4,
                "sample %zu: %zu Lua and %zu host frames", k, s->lua_count,
                s->host_count);
  for (int i = 0; i < DEPTH - 1; i++)
    ck_assert_msg(s->lua[i].value == PA && s->lua[i].line == 5 &&
                      name_is(s->lua[i].sym, e->inner),
                  "sample %zu frame %d: not %s", k, i, e->inner);
  const ljp_frame *o = &s->lua[DEPTH - 1];
  ck_assert_uint_eq(o->value, PB);
  if (e->outer)
    ck_assert_msg(name_is(o->sym, e->outer) && !o->proto,
                  "sample %zu: outer frame not %s", k, e->outer);
  else
    ck_assert_msg(!o->sym && !o->proto,
                  "sample %zu: unknown outer frame resolved", k);
  for (int i = 0; i < 4; i++)
    ck_assert_uint_eq(s->host[i].value, HOST[i]);
  ck_assert_msg(name_is(s->host[0].sym, "host_a") &&
                    name_is(s->host[1].sym, "host_b") &&
                    name_is(s->host[2].sym, e->host2) &&
                    name_is(s->host[3].sym, "host_a"),
                "sample %zu: host frames misnamed (expected %s)", k, e->host2);
}

/* Decodes len bytes of buf: the samples must match exp; returns the final
 * status and how many samples came. */
static ljp_status decode(const uint8_t *buf, size_t len, const expect *exp,
                         size_t *nsamples, size_t *rec_len, char *err) {
  ljp_reader *r = ljp_reader_new();
  ck_assert_ptr_nonnull(r);
  ck_assert_int_eq(ljp_reader_open_memory(r, buf, len), LJP_OK);
  const ljp_event *ev;
  ljp_status st;
  size_t n = 0;
  while ((st = ljp_reader_next(r, &ev)) == LJP_OK) {
    if (ev->type != LJP_EV_SAMPLE)
      continue;
    check_sample(&ev->u.sample, &exp[n], n);
    /* x1 times differ by record; the rest of every record is identical */
    if (rec_len) {
      if (n == 0)
        *rec_len = ev->raw_len;
      ck_assert_uint_eq(ev->raw_len, *rec_len);
    }
    n++;
  }
  snprintf(err, 256, "%s", ljp_reader_error(r));
  ljp_reader_free(r);
  *nsamples = n;
  return st;
}

static void run(int x1) {
  expect exp[32];
  size_t nexp, len, n, rl = 0;
  char err[256];
  ljp_writer *w = build(x1, exp, &nexp);
  const uint8_t *buf = ljp_writer_data(w, &len);
  ck_assert_int_eq(decode(buf, len, exp, &n, &rl, err), LJP_END);
  ck_assert_uint_eq(n, nexp);
  /* Cut inside the fourth record (a repeat, memoised by then): three
   * samples, then the truncation. */
  uint8_t *cut = malloc(len);
  ck_assert_ptr_nonnull(cut);
  memcpy(cut, buf, len);
  size_t fourth = 0;
  {
    /* offset of the fourth sample: decode until it */
    ljp_reader *r = ljp_reader_new();
    ljp_reader_open_memory(r, buf, len);
    const ljp_event *ev;
    size_t k = 0;
    while (ljp_reader_next(r, &ev) == LJP_OK)
      if (ev->type == LJP_EV_SAMPLE && k++ == 3) {
        fourth = (size_t)ev->offset;
        break;
      }
    ljp_reader_free(r);
  }
  ck_assert_uint_gt(fourth, 0);
  for (size_t c = fourth + 1; c < fourth + rl; c += 7) {
    ck_assert_int_eq(decode(cut, c, exp, &n, NULL, err), LJP_E_TRUNCATED);
    ck_assert_uint_eq(n, 3);
    ck_assert_msg(strstr(err, "truncated") != NULL, "cut at %zu: %s", c, err);
  }
  free(cut);
  ljp_writer_free(w);
}

START_TEST(test_memo_ljp2) { run(0); }
END_TEST

START_TEST(test_memo_x1) { run(1); }
END_TEST

int main(int argc, char **argv) {
  core_set_testdata(argc, argv);
  Suite *s = suite_create("memo");
  TCase *tc = tcase_create("memo");
  tcase_add_test(tc, test_memo_ljp2);
  tcase_add_test(tc, test_memo_x1);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
