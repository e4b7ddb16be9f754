/*
 * test_limits.c — resource limits of the reader against streams built to
 * exhaust it: exact status, offset and message, the limit exact to the
 * frame and the symbol, a huge claimed string that is never allocated, and
 * a symbol flood that once made lookups quadratic.
 */
#include "hostile.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads the writer's stream to its end; returns the final status. */
static ljp_status read_all(ljp_writer *w, const ljp_limits *lim,
                           ljp_reader **out, uint64_t *events) {
  size_t n;
  const uint8_t *p = ljp_writer_data(w, &n);
  ljp_reader *r = ljp_reader_new();
  ck_assert_ptr_nonnull(r);
  if (lim)
    ck_assert_int_eq(ljp_reader_set_limits(r, lim), LJP_OK);
  ck_assert_int_eq(ljp_reader_open_memory(r, p, n), LJP_OK);
  const ljp_event *ev;
  ljp_status st;
  *events = 0;
  while ((st = ljp_reader_next(r, &ev)) == LJP_OK)
    (*events)++;
  *out = r;
  return st;
}

START_TEST(huge_string_is_refused_unread) {
  ljp_writer *w = hostile_huge_string();
  ck_assert_ptr_nonnull(w);
  ljp_reader *r;
  uint64_t events;
  ck_assert_int_eq(read_all(w, NULL, &r, &events), LJP_E_LIMIT);
  ck_assert_uint_eq(events, 1); /* the ljs prologue */
  ck_assert_uint_eq(ljp_reader_error_offset(r), HUGE_STRING_LEN_OFFSET);
  ck_assert_str_eq(ljp_reader_error(r),
                   "offset 10: chunk name of a Lua symbol claims "
                   "1152921504606846976 bytes, over the limit of 67108864");
  ljp_reader_free(r);
  /* Raised past the claim, the string is still never allocated: the input
   * simply ends first. */
  ljp_limits lim = {UINT64_C(1) << 62, 0, 0};
  ck_assert_int_eq(read_all(w, &lim, &r, &events), LJP_E_TRUNCATED);
  ck_assert_str_eq(ljp_reader_error(r),
                   "offset 10: truncated chunk name of a Lua symbol");
  ljp_reader_free(r);
  ljp_writer_free(w);
}
END_TEST

START_TEST(ten_million_lua_frames_stop_at_the_default) {
  ljp_writer *w = hostile_deep_lua();
  ck_assert_ptr_nonnull(w);
  ljp_reader *r;
  uint64_t events;
  ck_assert_int_eq(read_all(w, NULL, &r, &events), LJP_E_LIMIT);
  ck_assert_uint_eq(events, 3); /* ljs prologue, epilogue, ljp prologue */
  uint64_t off = DEEP_FIRST_FRAME_OFFSET + 2 * (UINT64_C(1) << 20);
  ck_assert_uint_eq(ljp_reader_error_offset(r), off);
  char want[160];
  snprintf(want, sizeof(want),
           "offset %llu: Lua stack deeper than 1048576 frames (the limit)",
           (unsigned long long)off);
  ck_assert_str_eq(ljp_reader_error(r), want);
  ljp_reader_free(r);
  ljp_writer_free(w);
}
END_TEST

START_TEST(deep_host_stack_stops_at_the_default) {
  ljp_writer *w = hostile_deep_host();
  ck_assert_ptr_nonnull(w);
  ljp_reader *r;
  uint64_t events;
  ck_assert_int_eq(read_all(w, NULL, &r, &events), LJP_E_LIMIT);
  uint64_t off = DEEP_FIRST_FRAME_OFFSET + (UINT64_C(1) << 20);
  ck_assert_uint_eq(ljp_reader_error_offset(r), off);
  char want[160];
  snprintf(want, sizeof(want),
           "offset %llu: host stack deeper than 1048576 frames (the limit)",
           (unsigned long long)off);
  ck_assert_str_eq(ljp_reader_error(r), want);
  ljp_reader_free(r);
  ljp_writer_free(w);
}
END_TEST

/* A sysprof stream with one LFUNC sample of n fast-function frames. */
static ljp_writer *lua_stack_of(size_t n) {
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  ljp_frame *f = calloc(n, sizeof(*f));
  ck_assert_ptr_nonnull(w);
  ck_assert_ptr_nonnull(f);
  for (size_t i = 0; i < n; i++) {
    f[i].kind = LJP_FRAME_FFUNC;
    f[i].value = 1;
  }
  ljp_write_symtab_begin(w, 3, 0);
  ljp_write_symtab_end(w);
  ljp_write_stream_begin(w, LJP_KIND_SYSPROF, 2, LJP_FLAVOR_TARANTOOL, 0);
  ljp_write_sample(w, LJP_VMST_LFUNC, f, n, NULL, 0);
  ck_assert_int_eq(ljp_write_stream_end(w), LJP_OK);
  free(f);
  return w;
}

START_TEST(frame_limit_is_exact) {
  ljp_limits lim = {0, 1000, 0};
  ljp_reader *r;
  uint64_t events;
  ljp_writer *w = lua_stack_of(1000);
  ck_assert_int_eq(read_all(w, &lim, &r, &events), LJP_END);
  ck_assert_uint_eq(ljp_reader_counters(r)->max_lua_depth, 1000);
  ljp_reader_free(r);
  ljp_writer_free(w);
  w = lua_stack_of(1001);
  ck_assert_int_eq(read_all(w, &lim, &r, &events), LJP_E_LIMIT);
  ck_assert_uint_eq(ljp_reader_error_offset(r), DEEP_FIRST_FRAME_OFFSET + 2000);
  ck_assert_str_eq(ljp_reader_error(r),
                   "offset 2016: Lua stack deeper than 1000 frames (the limit)");
  ljp_reader_free(r);
  ljp_writer_free(w);
}
END_TEST

START_TEST(symbol_limit_is_exact) {
  ljp_writer *w = hostile_many_symbols();
  ck_assert_ptr_nonnull(w);
  ljp_reader *r;
  uint64_t events;
  ljp_limits lim = {0, 0, 10};
  ck_assert_int_eq(read_all(w, &lim, &r, &events), LJP_E_LIMIT);
  ck_assert_uint_eq(events, 1 + 10); /* prologue + 10 symbols */
  ck_assert_uint_eq(ljp_reader_error_offset(r), hostile_symbol_offset(10));
  char want[120];
  snprintf(want, sizeof(want),
           "offset %llu: more than 10 symbol definitions (the limit)",
           (unsigned long long)hostile_symbol_offset(10));
  ck_assert_str_eq(ljp_reader_error(r), want);
  ljp_reader_free(r);
  lim.max_symbols = MANY_SYMBOLS;
  ck_assert_int_eq(read_all(w, &lim, &r, &events), LJP_END);
  ljp_reader_free(r);
  ljp_writer_free(w);
}
END_TEST

/* A new C symbol before every sample, at scattered addresses: the floor
 * lookup once merged its pending symbols at every lookup, O(n) each, so a
 * 3 MB stream took minutes (a hang for CI).  Each sample must still name
 * the symbol defined just before it; ctest's TIMEOUT catches a return of
 * the quadratic cost. */
START_TEST(interleaved_c_symbols_resolve_each_sample) {
  enum { N = 200000 };
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  ck_assert_ptr_nonnull(w);
  ljp_write_symtab_begin(w, 3, 0);
  ljp_write_symtab_end(w);
  ljp_write_stream_begin(w, LJP_KIND_SYSPROF, 2, LJP_FLAVOR_TARANTOOL, 0);
  for (uint32_t i = 0; i < N; i++) {
    uint64_t a = 0x400000 + (uint64_t)((i * 2654435761u) % 100000000u) * 16;
    ljp_write_event_cfunc(w, a, "f", 1);
    ljp_write_sample(w, LJP_VMST_INTERP, NULL, 0, &a, 1);
  }
  ck_assert_int_eq(ljp_write_stream_end(w), LJP_OK);
  size_t n;
  const uint8_t *p = ljp_writer_data(w, &n);
  ljp_reader *r = ljp_reader_new();
  ck_assert_int_eq(ljp_reader_open_memory(r, p, n), LJP_OK);
  const ljp_event *ev;
  ljp_status st;
  uint64_t samples = 0, last_def = 0;
  while ((st = ljp_reader_next(r, &ev)) == LJP_OK) {
    if (ev->type == LJP_EV_SYMBOL)
      last_def = ev->u.symbol.sym->addr;
    if (ev->type != LJP_EV_SAMPLE)
      continue;
    const ljp_frame *f = &ev->u.sample.host[0];
    ck_assert_ptr_nonnull(f->sym);
    ck_assert_uint_eq(f->sym->addr, last_def);
    ck_assert_uint_eq(f->value, last_def);
    samples++;
  }
  ck_assert_int_eq(st, LJP_END);
  ck_assert_uint_eq(samples, N);
  ljp_reader_free(r);
  ljp_writer_free(w);
}
END_TEST

START_TEST(limits_are_set_before_opening_only) {
  ljp_reader *r = ljp_reader_new();
  ljp_limits lim = {1, 1, 1};
  ck_assert_int_eq(ljp_reader_open_memory(r, "", 0), LJP_OK);
  ck_assert_int_eq(ljp_reader_set_limits(r, &lim), LJP_E_ARG);
  ljp_reader_free(r);
}
END_TEST

int main(void) {
  Suite *s = suite_create("limits");
  TCase *tc = tcase_create("reader");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, huge_string_is_refused_unread);
  tcase_add_test(tc, ten_million_lua_frames_stop_at_the_default);
  tcase_add_test(tc, deep_host_stack_stops_at_the_default);
  tcase_add_test(tc, frame_limit_is_exact);
  tcase_add_test(tc, symbol_limit_is_exact);
  tcase_add_test(tc, interleaved_c_symbols_resolve_each_sample);
  tcase_add_test(tc, limits_are_set_before_opening_only);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
