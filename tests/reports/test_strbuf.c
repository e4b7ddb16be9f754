/* The tools' growable buffer (cli_strbuf.h, used by ljpsvg's labels and
 * ljpdb's table cells): it grows and stays NUL-terminated, and a size that
 * would wrap around size_t fails with -1 and leaves the buffer intact
 * instead of allocating too little and copying past the end. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "cli_strbuf.h"

START_TEST(grows) {
  strbuf b = {0};
  for (int i = 0; i < 1000; i++)
    ck_assert_int_eq(sb_put(&b, "abc", 3), 0);
  ck_assert_uint_eq(b.len, 3000);
  ck_assert_uint_gt(b.cap, b.len);
  ck_assert_int_eq(b.p[2999], 'c');
  ck_assert_int_eq(b.p[3000], '\0');
  ck_assert_int_eq(sb_puts(&b, "de"), 0);
  ck_assert_str_eq(b.p + 2997, "abcde");
  sb_free(&b);
  ck_assert_ptr_null(b.p);
}
END_TEST

START_TEST(huge_sizes_fail) {
  strbuf b = {0};
  ck_assert_int_eq(sb_put(&b, "0123456789", 10), 0);
  char *p = b.p;
  size_t cap = b.cap;
  /* len + n + 1 wraps to 10 for the first: a check that adds first
   * would see room and copy SIZE_MAX bytes. */
  ck_assert_int_eq(sb_reserve(&b, SIZE_MAX), -1);
  ck_assert_int_eq(sb_reserve(&b, SIZE_MAX - 10), -1);
  ck_assert_int_eq(sb_reserve(&b, SIZE_MAX / 2 + 1), -1);
  ck_assert_int_eq(sb_put(&b, "x", SIZE_MAX), -1);
  ck_assert_ptr_eq(b.p, p);
  ck_assert_uint_eq(b.cap, cap);
  ck_assert_uint_eq(b.len, 10);
  ck_assert_str_eq(b.p, "0123456789");
  sb_free(&b);
}
END_TEST

int main(void) {
  Suite *s = suite_create("strbuf");
  TCase *tc = tcase_create("strbuf");
  tcase_add_test(tc, grows);
  tcase_add_test(tc, huge_sizes_fail);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
