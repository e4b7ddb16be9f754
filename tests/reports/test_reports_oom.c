/* The reports under allocation failure: for N = 1, 2, ... the Nth
 * allocation of a whole report run (reader, report, print) fails, until a
 * run no longer reaches N.  Every run must end cleanly and free what it
 * allocated; a run that reports success must print exactly the report of
 * the run without failures.  The binary wraps malloc and friends
 * (tests/inject). */
#include "inject.h"
#include "reports.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* open_memstream's buffer comes from libc's own malloc, which the
 * wrappers do not count: it goes back the same way. */
void __real_free(void *p);

enum { SYS_TEXT, SYS_JSON, MEM_TEXT, MEM_JSON };

struct run {
  int ok;                     /* every call succeeded */
  int bad_rc;                 /* a print status other than 0 and -2 */
  char *text;                 /* what was printed (libc memory) */
  size_t len;
};

static int feed(ljp_reader *r, sysreport *s, memreport *m)
{
  const ljp_event *ev;
  ljp_status st;
  int ok = 1;
  while ((st = ljp_reader_next(r, &ev)) == LJP_OK) {
    if (s && sysreport_add(s, r, ev) != LJP_OK)
      ok = 0;
    if (m && memreport_add(m, r, ev) != LJP_OK)
      ok = 0;
  }
  return ok && st == LJP_END;
}

static void run(const void *data, size_t len, int mode, struct run *out)
{
  memset(out, 0, sizeof *out);
  int sys = mode == SYS_TEXT || mode == SYS_JSON;
  ljp_reader *r = ljp_reader_new();
  sysreport *s = sys ? sysreport_new(NULL) : NULL;
  memreport *m = sys ? NULL : memreport_new(NULL);
  /* No check calls here: the injector may be armed. */
  FILE *f = open_memstream(&out->text, &out->len);
  if (f && r && (s || m) && ljp_reader_open_memory(r, data, len) == LJP_OK) {
    int ok = feed(r, s, m);
    int rc = mode == SYS_TEXT   ? sysreport_print(s, f)
             : mode == SYS_JSON ? sysreport_print_json(s, f)
             : mode == MEM_TEXT ? memreport_print(m, f)
                                : memreport_print_json(m, f);
    out->bad_rc = rc != 0 && rc != -2;
    out->ok = ok && rc == 0;
  }
  if (f)
    fclose(f);
  sysreport_free(s);
  memreport_free(m);
  ljp_reader_free(r);
}

static char *slurp(const char *path, size_t *len)
{
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "cannot open %s", path);
  ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
  long n = ftell(f);
  ck_assert_int_ge(n, 0);
  rewind(f);
  char *buf = malloc((size_t)n + 1);
  ck_assert_ptr_nonnull(buf);
  ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  *len = (size_t)n;
  return buf;
}

static const struct {
  const char *file;
  int mode;
} cases[] = {
  {"x1/x1_rich.bin", SYS_TEXT},
  {"x1/x1_rich.bin", SYS_JSON},
  {"captures/sp_c_jiton_flush_1ms.bin", SYS_TEXT},
  {"captures/mp_coro_jitoff.bin", MEM_TEXT},
  {"captures/mp_coro_jitoff.bin", MEM_JSON},
};

START_TEST(every_allocation_fails_once)
{
  char path[512];
  snprintf(path, sizeof path, "%s/%s", LJP_TESTDATA, cases[_i].file);
  size_t len;
  char *data = slurp(path, &len);
  /* Blocks are counted around each run only: the check library itself
   * allocates and frees between them. */
  long live0 = inject_live();
  struct run want;
  run(data, len, cases[_i].mode, &want);
  long kept = inject_live() - live0;
  ck_assert_msg(want.ok, "%s: the run without failures failed", path);
  ck_assert_int_eq(kept, 0);
  /* Large captures allocate often; every allocation of the first
   * thousands, then a sample of the rest, keeps the test quick. */
  uint64_t n = 1;
  for (;;) {
    live0 = inject_live();
    inject_arm(n);
    struct run got;
    run(data, len, cases[_i].mode, &got);
    int fired = inject_fired();
    uint64_t calls = inject_count();
    inject_arm(0);
    long leaked = inject_live() - live0;
    ck_assert_msg(leaked == 0, "%s: allocation %llu: %ld leaked", path,
                  (unsigned long long)n, leaked);
    ck_assert_msg(!got.bad_rc, "%s: allocation %llu: print failed otherwise",
                  path, (unsigned long long)n);
    if (got.ok)
      ck_assert_msg(got.len == want.len &&
                        memcmp(got.text, want.text, want.len) == 0,
                    "%s: allocation %llu failed unseen, the report differs",
                    path, (unsigned long long)n);
    __real_free(got.text);
    if (!fired)
      break;
    n = n < 4000 ? n + 1 : n + 1 + calls / 200;
  }
  __real_free(want.text);
  free(data);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("reports_oom");
  TCase *tc = tcase_create("oom");
  tcase_set_timeout(tc, 300);
  tcase_add_loop_test(tc, every_allocation_fails_once, 0,
                      (int)(sizeof cases / sizeof cases[0]));
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
