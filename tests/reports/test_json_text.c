/* The toolkit's one JSON string escaper (cli_json_str, which ljpdump's
 * json_str and ljpdb's JSON output call; the speedscope export uses the
 * same library routine): valid UTF-8 passes through, newline/tab/return
 * get their short escapes, other controls \u00XX, and every byte outside a
 * valid UTF-8 sequence becomes U+FFFD. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_json.h"
#include "json.h"

#define FFFD "\xef\xbf\xbd"

static char *render(void (*put)(FILE *, const char *, size_t), const char *s,
                    size_t n) {
  char *text = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&text, &len);
  ck_assert_ptr_nonnull(out);
  put(out, s, n);
  fclose(out);
  return text;
}

static void expect(const char *in, size_t n, const char *want) {
  char *a = render(cli_json_str, in, n);
  ck_assert_str_eq(a, want);
  free(a);
  char *b = render(json_str, in, n); /* ljpdump's */
  ck_assert_str_eq(b, want);
  free(b);
}
#define EXPECT(lit, want) expect(lit, sizeof(lit) - 1, want)

START_TEST(ascii) {
  EXPECT("", "\"\"");
  EXPECT("@a.lua:4", "\"@a.lua:4\"");
  EXPECT("say \"hi\" \\o/", "\"say \\\"hi\\\" \\\\o/\"");
  EXPECT("a\nb\tc\rd", "\"a\\nb\\tc\\rd\"");
  EXPECT("\x01\x1f\x7f", "\"\\u0001\\u001f\\u007f\"");
  EXPECT("nul\0x", "\"nul\\u0000x\"");
}
END_TEST

START_TEST(utf8_passes) {
  EXPECT("caf\xc3\xa9", "\"caf\xc3\xa9\"");             /* U+00E9 */
  EXPECT("\xe2\x82\xac", "\"\xe2\x82\xac\"");           /* U+20AC */
  EXPECT("\xf0\x9f\x98\x80", "\"\xf0\x9f\x98\x80\"");   /* U+1F600 */
  EXPECT("\xf4\x8f\xbf\xbf", "\"\xf4\x8f\xbf\xbf\"");   /* U+10FFFF */
}
END_TEST

START_TEST(invalid_replaced) {
  EXPECT("\xff", "\"" FFFD "\"");
  EXPECT("a\xc3", "\"a" FFFD "\"");                 /* cut at the end */
  EXPECT("\xe2\x82x", "\"" FFFD FFFD "x\"");         /* cut inside */
  EXPECT("\xc0\xaf", "\"" FFFD FFFD "\"");           /* overlong '/' */
  EXPECT("\xed\xa0\x80", "\"" FFFD FFFD FFFD "\"");   /* surrogate */
  EXPECT("\xf4\x90\x80\x80", "\"" FFFD FFFD FFFD FFFD "\""); /* > U+10FFFF */
  EXPECT("\x80\"", "\"" FFFD "\\\"\"");              /* lone continuation */
}
END_TEST

int main(void) {
  Suite *s = suite_create("json_text");
  TCase *tc = tcase_create("escape");
  tcase_add_test(tc, ascii);
  tcase_add_test(tc, utf8_passes);
  tcase_add_test(tc, invalid_replaced);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
