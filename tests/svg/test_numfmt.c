/* Unit tests of ljpsvg's number formatter: every result must equal
 * snprintf's, byte for byte, over millions of values chosen to hit its
 * fast paths, its fallbacks and the boundaries between them: rounding
 * ties (exact and near), negatives and negative zero, huge, tiny and
 * subnormal values, non-finite values, random bit patterns, and the
 * digit writer's every lane value and digit count. */
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
 * nearest double to a decimal tie) for "%.2f", with their neighbours,
 * and values whose product with 100 lies about TIE_MARGIN (2^-20) from a
 * tie, on either side of where snprintf takes over. */
START_TEST(numfmt_ties)
{
  for (int64_t k = 0; k < 400000; k++) {
    double vs[] = {(double)k / 2, (double)k / 8, (double)k / 200,
                   (double)k / 200 + 1e-12, (double)k * 0.005,
                   (double)k / 200 + 1e-8, (double)k / 200 - 1e-8};
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

/* Every digit count of both formats: powers of ten and their neighbours,
 * where a rounding carry adds a digit (9.995 -> "10.00"), and the
 * smallest values, whose sign printf keeps ("-0.00", "-0"). */
START_TEST(numfmt_digit_counts)
{
  double p = 1;
  for (int e = 0; e <= 20; e++, p *= 10) {
    const double d[] = {0,     0.001, 0.004, 0.0049, 0.005, 0.0051, 0.006,
                        0.01,  0.49,  0.5,   0.51,   0.994, 0.995,  0.996,
                        0.999, 1,     1.5};
    for (size_t i = 0; i < sizeof d / sizeof d[0]; i++) {
      same(p - d[i]);
      same(p + d[i]);
      same(nextafter(p - d[i], 0));
      same(nextafter(p - d[i], INFINITY));
    }
  }
  const double tiny[] = {0.0,    0.001,  0.0049, 0.004999999, 0.3,
                         0.4999, 0.5,    1e-9,   1e-300,      4.9e-324,
                         0.0051, 0.0099, 0.01};
  for (size_t i = 0; i < sizeof tiny / sizeof tiny[0]; i++)
    same(tiny[i]);                  /* same() also tries -tiny[i] */
}
END_TEST

/* The integer part is written as two lanes of four digits (u / 1e4 and
 * u % 1e4), each split into pairs and then digits: every value of each
 * lane, with and without leading zeros, reaches it here, for the integer
 * parts of "%.2f" (below 1e7) and the integers of "%.0f" (below 1e8). */
START_TEST(numfmt_lanes)
{
  for (uint32_t u = 0; u < 100000; u++) {
    same(u);
    same(u + 0.25);
  }
  for (uint32_t k = 0; k < 10000; k++) {
    const uint32_t lo[] = {0, 1, 9, 10, 99, 100, 999, 1000, 9999,
                           (k * 7919u + 13) % 10000};
    for (size_t i = 0; i < sizeof lo / sizeof lo[0]; i++) {
      uint32_t u = k * 10000 + lo[i];
      same(u);
      same(u + 0.75);
      same(u / 10 + 0.01 * (double)(k % 100));
    }
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
  tcase_add_test(tc, numfmt_digit_counts);
  tcase_add_test(tc, numfmt_lanes);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
