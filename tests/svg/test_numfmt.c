/* Unit tests of ljpsvg's number formatter: every result must equal
 * snprintf's, byte for byte, over millions of values chosen to hit its
 * fast paths, its fallbacks and the boundaries between them: rounding
 * ties (exact and near), negatives and negative zero, huge, tiny and
 * subnormal values, non-finite values and random bit patterns. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "numfmt.h"

static uint64_t rng = 0x243f6a8885a308d3ull;

static uint64_t next(void)
{
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

static double from_bits(uint64_t u)
{
  double d;
  memcpy(&d, &u, sizeof d);
  return d;
}

/* Compares both formats of v (and of -v) with snprintf; on a mismatch
 * the message names the value by its bits. */
static void same(double v)
{
  for (int s = 0; s < 2; s++, v = -v) {
    char want[NUMFMT_MAX], got[NUMFMT_MAX];
    int wn = snprintf(want, sizeof want, "%.2f", v);
    size_t gn = numfmt_fixed2(got, v);
    if ((size_t)wn != gn || strcmp(want, got) != 0) {
      uint64_t u;
      memcpy(&u, &v, sizeof u);
      ck_abort_msg("%%.2f of %a (0x%016llx): want %s, got %s", v,
                   (unsigned long long)u, want, got);
    }
    wn = snprintf(want, sizeof want, "%.0f", v);
    gn = numfmt_fixed0(got, v);
    if ((size_t)wn != gn || strcmp(want, got) != 0)
      ck_abort_msg("%%.0f of %a: want %s, got %s", v, want, got);
  }
}

START_TEST(numfmt_specials)
{
  const double v[] = {
    0.0, 0.005, 0.015, 0.025, 0.125, 0.375, 0.5, 1.5, 2.5, 3.5, 0.995,
    1.005, 2.675, 1e-320, 4.9e-324, 2.2250738585072014e-308, 0.00499999,
    0.0050000001, 9999999.995, 9999999.994999, 1e7, 1e7 - 0.005,
    10000000.005, 1073741824.0, 4503599627370495.5, 4503599627370496.5,
    9007199254740991.0, 9007199254740992.0, 9007199254740993.0,
    1.8e19, 1.8446744073709552e19, 1.8446744073709550e19, 1e20, 1e300,
    1.7976931348623157e308, INFINITY, NAN, 123.456, 600, 33.6, 171.6};
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
    same(v[i]);
}
END_TEST

/* Ties of both formats: k/2 for "%.0f", k/8 (exact) and k/200 (the
 * nearest double to a decimal tie) for "%.2f", with their neighbours. */
START_TEST(numfmt_ties)
{
  for (int64_t k = 0; k < 400000; k++) {
    double vs[] = {(double)k / 2, (double)k / 8, (double)k / 200,
                   (double)k / 200 + 1e-12, (double)k * 0.005};
    for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++) {
      same(vs[i]);
      same(nextafter(vs[i], 0));
      same(nextafter(vs[i], INFINITY));
    }
  }
}
END_TEST

/* Coordinates as the layout makes them: products and quotients of
 * integers over the whole range of the fast paths and beyond. */
START_TEST(numfmt_random)
{
  for (int i = 0; i < 400000; i++) {
    uint64_t r = next();
    double scale = ldexp(1.0, (int)(r % 140) - 70);
    same((double)(next() % 100000000) / (double)(1 + next() % 100000));
    same((double)(next() >> 11) * 0x1p-53 * scale);
    same(from_bits(next()));
    same((double)(next() % 4000000000ull) / 100);
  }
}
END_TEST

int main(void)
{
  Suite *s = suite_create("numfmt");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, numfmt_specials);
  tcase_add_test(tc, numfmt_ties);
  tcase_add_test(tc, numfmt_random);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
