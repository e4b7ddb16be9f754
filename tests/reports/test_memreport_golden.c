/* Every memprof capture of testdata against the reference tool's outputs
 * (luajit -tm, --leak-only, --human-readable), compared byte for byte after
 * sorting the tie groups whose order the reference leaves to Lua's hash
 * tables; ljpdump's own tie order is checked separately. */
#include "report_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const current[] = {
  "mp_basic_jitoff",       "mp_coro_jitoff",
  "mp_dlopen_cfunc_jitoff", "mp_ffi_jiton",
  "mp_leak_global_jitoff", "mp_realloc_growth_jitoff",
  "mp_traces_flush_jiton",
};
#define NCURRENT (sizeof current / sizeof current[0])

/* Older eras.  ljm 1 and 2 streams get the "bytes" era automatically; an
 * ljm 3 stream cannot say that its tool was the generation-era parser. */
static const struct {
  const char *name;
  memreport_era era;
} old[] = {
  {"old/old_mp_v1_jitoff", MEMREPORT_ERA_AUTO},
  {"old/old_mp_v2_jiton", MEMREPORT_ERA_AUTO},
  {"old/old_mp_v3_jiton", MEMREPORT_ERA_GENERATION},
};
#define NOLD (sizeof old / sizeof old[0])

static void compare(const char *name, const char *suffix,
                    const struct memreport_opts *o, int check_ties)
{
  char bin[512], ref[512];
  snprintf(bin, sizeof bin, "%s/captures/%s.bin", LJP_TESTDATA, name);
  snprintf(ref, sizeof ref, "%s/captures/%s.%s.txt", LJP_TESTDATA, name,
           suffix);
  char *want = rt_slurp(ref, NULL);
  ck_assert_msg(want != NULL, "cannot read %s", ref);
  ljp_status st;
  char *got = rt_memreport_path(bin, o, &st);
  ck_assert_msg(st == LJP_END, "%s: reader ended with %d", bin, (int)st);
  char *cw = rt_canon(want), *cg = rt_canon(got);
  if (strcmp(cw, cg) != 0) {
    /* Show the first differing line to make the failure readable. */
    size_t i = 0, line = 1;
    while (cw[i] && cw[i] == cg[i]) {
      if (cw[i] == '\n')
        line++;
      i++;
    }
    ck_abort_msg("%s.%s differs at canonical line %zu:\nwant: %.120s\ngot:  "
                 "%.120s", name, suffix, line, cw + i, cg + i);
  }
  if (check_ties)
    ck_assert_msg(rt_ties_sorted(got), "%s.%s: ties not in name order", name,
                  suffix);
  free(cw);
  free(cg);
  free(want);
  free(got);
}

START_TEST(report_current)
{
  struct memreport_opts o = {0, 0, MEMREPORT_ERA_AUTO};
  compare(current[_i], "report", &o, 1);
}
END_TEST

START_TEST(leak_current)
{
  struct memreport_opts o = {1, 0, MEMREPORT_ERA_AUTO};
  compare(current[_i], "leak", &o, 1);
}
END_TEST

START_TEST(human_current)
{
  struct memreport_opts o = {0, 1, MEMREPORT_ERA_CURRENT};
  compare(current[_i], "human", &o, 0);
}
END_TEST

START_TEST(report_old)
{
  struct memreport_opts o = {0, 0, old[_i].era};
  compare(old[_i].name, "report", &o, 1);
}
END_TEST

START_TEST(leak_old)
{
  struct memreport_opts o = {1, 0, old[_i].era};
  compare(old[_i].name, "leak", &o, 1);
}
END_TEST

/* The generation-era capture really needs that era: today's rows merge
 * the generations of trace 2 and of lj_cf_package_seeall. */
START_TEST(generation_era_matters)
{
  char bin[512];
  snprintf(bin, sizeof bin, "%s/captures/old/old_mp_v3_jiton.bin",
           LJP_TESTDATA);
  struct memreport_opts o = {0, 0, MEMREPORT_ERA_BYTES};
  char *got = rt_memreport_path(bin, &o, NULL);
  ck_assert_ptr_nonnull(strstr(got, "\nTRACE [2] started at "
                               "@old_mp_v3_jiton.lua:24: 24890 events\t"));
  ck_assert_ptr_nonnull(strstr(got, "\nlj_cf_package_seeall:0x56039d3b3d60: "
                               "2 events\t+80 bytes\t-0 bytes\n"));
  free(got);
}
END_TEST

/* Same input, same bytes: the tie order does not depend on anything but
 * the stream. */
START_TEST(deterministic)
{
  char bin[512];
  snprintf(bin, sizeof bin, "%s/captures/%s.bin", LJP_TESTDATA,
           "mp_basic_jitoff");
  char *a = rt_memreport_path(bin, NULL, NULL);
  char *b = rt_memreport_path(bin, NULL, NULL);
  ck_assert_str_eq(a, b);
  free(a);
  free(b);
}
END_TEST

Suite *memreport_golden_suite(void)
{
  Suite *s = suite_create("memreport_golden");
  TCase *tc = tcase_create("captures");
  tcase_set_timeout(tc, 300);
  tcase_add_loop_test(tc, report_current, 0, (int)NCURRENT);
  tcase_add_loop_test(tc, leak_current, 0, (int)NCURRENT);
  tcase_add_loop_test(tc, human_current, 0, (int)NCURRENT);
  tcase_add_loop_test(tc, report_old, 0, (int)NOLD);
  tcase_add_loop_test(tc, leak_old, 0, (int)NOLD);
  tcase_add_test(tc, generation_era_matters);
  tcase_add_test(tc, deterministic);
  suite_add_tcase(s, tc);
  return s;
}
