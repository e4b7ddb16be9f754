/* sysprof report: VM-state counts of every capture against the producer's
 * own counters (counters.txt), and a hand-built stream whose report is
 * known exactly (self/total with recursion, traces, depth histogram). */
#include "report_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OK(x) ck_assert_int_eq((x), LJP_OK)

static const char *const captures[] = {
  "sp_c_coro_jitoff_1ms",    "sp_c_corodeep_jitoff_1ms",
  "sp_c_deeprec_jitoff_1ms", "sp_c_dlopen_jitoff_1ms",
  "sp_c_ffi_jitoff_1ms",     "sp_c_fib_jitoff_1ms",
  "sp_c_gc64_mixed_1ms",     "sp_c_jiton_flush_1ms",
  "sp_c_loadmid_jiton_1ms",  "sp_c_sandwich_jitoff_1ms",
  "sp_c_vmstates_jiton_1ms", "sp_l_mixed_jitoff_1ms",
  "old/old_sp_v1_c_jiton",
};
#define NCAPTURES (sizeof captures / sizeof captures[0])

/* counters.txt: "samples=300 INTERP=20 LFUNC=269 ... TRACE=0" */
static void parse_counters(const char *text, uint64_t *samples,
                           uint64_t vm[LJP_VMST__MAX])
{
  int seen = 0;
  const char *p = text;
  while (*p) {
    char key[32];
    unsigned long long v;
    int n = 0;
    if (sscanf(p, " %31[A-Za-z]=%llu%n", key, &v, &n) != 2)
      break;
    p += n;
    if (strcmp(key, "samples") == 0) {
      *samples = v;
      seen++;
      continue;
    }
    for (int i = 0; i < LJP_VMST__MAX; i++)
      if (strcmp(key, ljp_vmstate_name(i)) == 0) {
        vm[i] = v;
        seen++;
      }
  }
  ck_assert_int_eq(seen, 1 + LJP_VMST__MAX);
}

START_TEST(vmstates_match_counters)
{
  char path[512];
  snprintf(path, sizeof path, "%s/captures/%s.counters.txt", LJP_TESTDATA,
           captures[_i]);
  char *ctext = rt_slurp(path, NULL);
  ck_assert_msg(ctext != NULL, "cannot read %s", path);
  uint64_t want_samples = 0, want[LJP_VMST__MAX] = {0};
  parse_counters(ctext, &want_samples, want);
  free(ctext);

  snprintf(path, sizeof path, "%s/captures/%s.bin", LJP_TESTDATA,
           captures[_i]);
  size_t len;
  char *bin = rt_slurp(path, &len);
  ck_assert_ptr_nonnull(bin);
  sysreport *s;
  char *text = rt_sysreport_buf(bin, len, NULL, &s);
  ck_assert_uint_eq(sysreport_samples(s), want_samples);
  for (int i = 0; i < LJP_VMST__MAX; i++)
    ck_assert_msg(sysreport_vmstate(s, i) == want[i], "%s: %s: %llu != %llu",
                  captures[_i], ljp_vmstate_name(i),
                  (unsigned long long)sysreport_vmstate(s, i),
                  (unsigned long long)want[i]);
  /* The printed table carries the same numbers. */
  char line[128];
  snprintf(line, sizeof line, "\nSAMPLES: %llu\n",
           (unsigned long long)want_samples);
  ck_assert_ptr_nonnull(strstr(text, line + 1));
  for (int i = 0; i < LJP_VMST__MAX; i++) {
    snprintf(line, sizeof line, "\n%-8s %10llu ", ljp_vmstate_name(i),
             (unsigned long long)want[i]);
    ck_assert_msg(strstr(text, line) != NULL, "missing: %s", line + 1);
  }
  sysreport_free(s);
  free(text);
  free(bin);
}
END_TEST

/* Lua-only stacks (as in LEAF mode), recursion, traces, an empty stack. */
START_TEST(built_report)
{
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  ck_assert_ptr_nonnull(w);
  OK(ljp_write_symtab_begin(w, 3, 0));
  OK(ljp_write_symtab_lfunc(w, 0x5000, "@a.lua", 6, 0));
  OK(ljp_write_symtab_lfunc(w, 0x5100, "@a.lua", 6, 4));
  OK(ljp_write_symtab_trace(w, 3, 0, 0x5100, 12));
  OK(ljp_write_symtab_end(w));
  OK(ljp_write_stream_begin(w, LJP_KIND_SYSPROF, 2, LJP_FLAVOR_TARANTOOL, 0));
  ljp_frame f4 = {.kind = LJP_FRAME_LUA, .value = 0x5100, .line = 4};
  ljp_frame f0 = {.kind = LJP_FRAME_LUA, .value = 0x5000, .line = 0};
  ljp_frame rec[3] = {f4, f4, f0}; /* innermost first */
  ljp_frame two[2] = {f4, f0};
  OK(ljp_write_sample(w, LJP_VMST_LFUNC, rec, 3, NULL, 0));
  OK(ljp_write_sample(w, LJP_VMST_LFUNC, &f0, 1, NULL, 0));
  OK(ljp_write_sample(w, LJP_VMST_LFUNC, two, 2, NULL, 0));
  OK(ljp_write_trace_sample(w, 3, 0x5100, 4));
  OK(ljp_write_trace_sample(w, 3, 0x5100, 4));
  OK(ljp_write_sample(w, LJP_VMST_GC, NULL, 0, NULL, 0));
  OK(ljp_write_stream_end(w));
  size_t len;
  const uint8_t *data = ljp_writer_data(w, &len);
  struct sysreport_opts o = {3, LJP_FLAVOR_AUTO, LJP_TRACES_UNDER, NULL};
  char *got = rt_sysreport_buf(data, len, &o, NULL);
  ck_assert_str_eq(got,
    "SAMPLES: 6\n"
    "\n"
    "VM STATES\n"
    "state       samples        %\n"
    "INTERP            0    0.00%\n"
    "LFUNC             3   50.00%\n"
    "FFUNC             0    0.00%\n"
    "CFUNC             0    0.00%\n"
    "GC                1   16.67%\n"
    "EXIT              0    0.00%\n"
    "RECORD            0    0.00%\n"
    "OPT               0    0.00%\n"
    "ASM               0    0.00%\n"
    "TRACE             2   33.33%\n"
    "\n"
    "TOP FUNCTIONS BY SELF SAMPLES\n"
    "      self        %  function\n"
    "         2   33.33%  @a.lua:4\n"
    "         2   33.33%  TRACE [3] @a.lua:12\n"
    "         1   16.67%  @a.lua:0\n"
    "(1 more)\n"
    "\n"
    "TOP FUNCTIONS BY TOTAL SAMPLES\n"
    "     total        %  function\n"
    "         4   66.67%  @a.lua:4\n" /* its traces run inside it */
    "         3   50.00%  @a.lua:0\n"
    "         2   33.33%  TRACE [3] @a.lua:12\n"
    "(1 more)\n"
    "\n"
    "TRACES\n"
    "   samples        %   trace  start\n"
    "         2   33.33%       3  @a.lua:12\n"
    "\n"
    "STACK DEPTH\n"
    "depth                         lua       host\n"
    "0                               3          6\n"
    "1                               1          0\n"
    "2-3                             2          0\n");
  free(got);
  ljp_writer_free(w);
}
END_TEST

/* The pseudo function of an empty stack, and --top larger than the table. */
START_TEST(empty_stacks)
{
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  ck_assert_ptr_nonnull(w);
  OK(ljp_write_symtab_begin(w, 3, 0));
  OK(ljp_write_symtab_end(w));
  OK(ljp_write_stream_begin(w, LJP_KIND_SYSPROF, 2, LJP_FLAVOR_TARANTOOL, 0));
  OK(ljp_write_sample(w, LJP_VMST_GC, NULL, 0, NULL, 0));
  OK(ljp_write_sample(w, LJP_VMST_INTERP, NULL, 0, NULL, 0));
  OK(ljp_write_sample(w, LJP_VMST_GC, NULL, 0, NULL, 0));
  OK(ljp_write_stream_end(w));
  size_t len;
  const uint8_t *data = ljp_writer_data(w, &len);
  char *got = rt_sysreport_buf(data, len, NULL, NULL);
  ck_assert_ptr_nonnull(strstr(got,
    "TOP FUNCTIONS BY SELF SAMPLES\n"
    "      self        %  function\n"
    "         2   66.67%  [GC]\n"
    "         1   33.33%  [INTERP]\n"
    "\n"));
  free(got);
  ljp_writer_free(w);
}
END_TEST

static size_t count_str(const char *hay, const char *needle)
{
  size_t n = 0;
  for (const char *p = hay; (p = strstr(p, needle)) != NULL; p++)
    n++;
  return n;
}

/* A function is its printed name: my_cfunc runs as a Lua-C function in one
 * sample and as a host frame under lj_BC_FUNCC in two others (x1_rich:
 * events at 375, 409 and 469), so it is one row with 1 self and 3 total
 * samples, in the text and in the JSON tables alike. */
START_TEST(one_function_per_name)
{
  char path[512];
  snprintf(path, sizeof path, "%s/x1/x1_rich.bin", LJP_TESTDATA);
  size_t len;
  char *bin = rt_slurp(path, &len);
  ck_assert_ptr_nonnull(bin);
  sysreport *s;
  char *text = rt_sysreport_buf(bin, len, NULL, &s);
  ck_assert_uint_eq(count_str(text, "  my_cfunc\n"), 2);
  ck_assert_ptr_nonnull(strstr(text, "\n         1    6.67%  my_cfunc\n"));
  ck_assert_ptr_nonnull(strstr(text, "\n         3   20.00%  my_cfunc\n"));
  char *json = NULL;
  size_t jlen = 0;
  FILE *out = open_memstream(&json, &jlen);
  ck_assert_ptr_nonnull(out);
  ck_assert_int_eq(sysreport_print_json(s, out), 0);
  fclose(out);
  ck_assert_uint_eq(
      count_str(json, "{\"function\": \"my_cfunc\", \"self\": 1, "
                      "\"total\": 3}"), 2);
  ck_assert_uint_eq(count_str(json, "\"my_cfunc\""), 2);
  free(json);
  sysreport_free(s);
  free(text);
  free(bin);
}
END_TEST

Suite *sysreport_suite(void)
{
  Suite *s = suite_create("sysreport");
  TCase *tc = tcase_create("sysreport");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, vmstates_match_counters, 0, (int)NCAPTURES);
  tcase_add_test(tc, built_report);
  tcase_add_test(tc, empty_stacks);
  tcase_add_test(tc, one_function_per_name);
  suite_add_tcase(s, tc);
  return s;
}
