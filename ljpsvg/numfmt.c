/* numfmt.c — printf-exact "%.2f" and "%.0f".  See numfmt.h.
 *
 * Why the fast paths are exact:
 * - "%.0f" rounds v itself to an integer.  For |v| < 2^53, floor(v) and
 *   the fraction v - floor(v) are exact doubles (Sterbenz), so the
 *   rounding, ties to even as glibc does in the default rounding mode, is
 *   decided exactly.  Above 2^53 every double is an integer.
 * - "%.2f" rounds the exact product v * 100, but the computed product t
 *   carries an error of at most half an ulp of t: below 2^30 that is at
 *   most 2^-24.  When t's fraction is further than TIE_MARGIN from one
 *   half, the exact product rounds to the same integer as t; closer, the
 *   value is (or may be) a tie, and snprintf decides. */
#include "numfmt.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>

#define TIE_MARGIN (1.0 / (1 << 20))
#define FIXED2_LIMIT 1e7      /* t = |v| * 100 stays below 2^30 */
#define FIXED0_LIMIT 1.8e19   /* below 2^64: fits a uint64_t */

/* The decimal digits of u at p, most significant first: the length. */
static size_t put_u64(char *p, uint64_t u)
{
  char tmp[24];
  size_t n = 0;
  do {
    tmp[n++] = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  for (size_t i = 0; i < n; i++)
    p[i] = tmp[n - 1 - i];
  return n;
}

size_t numfmt_fixed2(char *buf, double v)
{
  double a = fabs(v);
  if (!(a < FIXED2_LIMIT))          /* also NaN */
    return (size_t)snprintf(buf, NUMFMT_MAX, "%.2f", v);
  double t = a * 100;
  /* Truncation is floor for t >= 0, and cheaper than floor() without
   * SSE4.1; fl and frac are exact (t < 2^30). */
  uint64_t fl = (uint64_t)t;
  double frac = t - (double)fl;
  if (fabs(frac - 0.5) <= TIE_MARGIN)
    return (size_t)snprintf(buf, NUMFMT_MAX, "%.2f", v);
  uint64_t n = fl + (frac > 0.5);
  size_t k = 0;
  if (signbit(v))                   /* printf keeps the sign of -0.001 */
    buf[k++] = '-';
  k += put_u64(buf + k, n / 100);
  buf[k++] = '.';
  buf[k++] = (char)('0' + n / 10 % 10);
  buf[k++] = (char)('0' + n % 10);
  buf[k] = '\0';
  return k;
}

size_t numfmt_fixed0(char *buf, double v)
{
  double a = fabs(v);
  if (!(a < FIXED0_LIMIT))
    return (size_t)snprintf(buf, NUMFMT_MAX, "%.0f", v);
  uint64_t n;
  if (a >= 9007199254740992.0) {    /* 2^53: already an integer */
    n = (uint64_t)a;
  } else {
    n = (uint64_t)a;              /* floor, as above */
    double frac = a - (double)n;
    if (frac > 0.5 || (frac == 0.5 && (n & 1)))
      n++;
  }
  size_t k = 0;
  if (signbit(v))
    buf[k++] = '-';
  k += put_u64(buf + k, n);
  buf[k] = '\0';
  return k;
}
