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
 *   value is (or may be) a tie, and snprintf decides.
 *
 * Why they are fast: below FIXED2_LIMIT the rounded product is at most
 * 1e9 and its integer part at most 1e7, so the conversions use 32-bit
 * signed integers (one instruction each way, where unsigned 64-bit ones
 * take several) and the integer part fits put8's eight digits.  put8
 * makes them all in one 64-bit word and digits8 counts them with a table,
 * both without a branch or a division: the digit count of a coordinate
 * is unpredictable, a mispredicted branch costs more than the whole
 * conversion, and the caller's next write waits for the length. */
#include "numfmt.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define TIE_MARGIN (1.0 / (1 << 20))
#define FIXED2_LIMIT 1e7      /* t = |v| * 100 stays below 1e9 < 2^30 */
#define FIXED0_LIMIT 1.8e19   /* below 2^64: fits a uint64_t */
#define TWO53 9007199254740992.0

/* "00" to "99": one division by 100 yields two digits. */
static const char pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233"
    "34353637383940414243444546474849505152535455565758596061626364656667"
    "6869707172737475767778798081828384858687888990919293949596979899";

#if defined(__GNUC__) && defined(__BYTE_ORDER__) &&                          \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ && !defined(NUMFMT_PORTABLE)
/* Below 2^(i+1), from 2^i on, a number has d or d + 1 digits, d those of
 * 2^i: d + 1 from 10^d on.  Adding (d + 1) * 2^32 - 10^d to it carries
 * into bit 32 exactly then (10^d <= 1e8 < 2^32), so the top half is the
 * digit count: a load and an add instead of a comparison per digit.  The
 * length, on which the caller's next write position depends, is known
 * a few cycles after u. */
#define DC(d, p10) ((((uint64_t)(d) + 1) << 32) - (p10))
static const uint64_t digit_count[27] = {
    DC(1, 10),        DC(1, 10),        DC(1, 10),        DC(1, 10),
    DC(2, 100),       DC(2, 100),       DC(2, 100),       DC(3, 1000),
    DC(3, 1000),      DC(3, 1000),      DC(4, 10000),     DC(4, 10000),
    DC(4, 10000),     DC(4, 10000),     DC(5, 100000),    DC(5, 100000),
    DC(5, 100000),    DC(6, 1000000),   DC(6, 1000000),   DC(6, 1000000),
    DC(7, 10000000),  DC(7, 10000000),  DC(7, 10000000),  DC(7, 10000000),
    DC(8, 100000000), DC(8, 100000000), DC(8, 100000000)};

/* The number of decimal digits of u < 1e8 (< 2^27). */
static size_t digits8(uint32_t u)
{
  unsigned i = 31 - (unsigned)__builtin_clz(u | 1);
  return (size_t)((u + digit_count[i]) >> 32);
}

/* u < 1e8 as n >= digits8(u) digits at p, zeros first if n is larger,
 * in one 8-byte store: the bytes after them are zeros, and callers'
 * buffers hold NUMFMT_MAX.  The word is split in lanes, first
 * two 32-bit ones (u / 1e4, u % 1e4), then four 16-bit and eight 8-bit
 * ones, each split dividing by 100 or 10 through a multiply and shift
 * that is exact for the lane's range (n < 1e4: n / 100 == n * 5243 >> 19;
 * n < 100: n / 10 == n * 103 >> 10) and whose products stay inside their
 * lane.  The most significant digit lands in the lowest byte, which
 * little-endian stores first; 8 - n leading zeros are shifted out. */
static void put8(char *p, uint32_t u, size_t n)
{
  uint64_t x = (u / 10000) | (uint64_t)(u % 10000) << 32;
  uint64_t q = (x * 5243 >> 19) & 0x0000007f0000007full;
  x = q | (x - q * 100) << 16;
  q = (x * 103 >> 10) & 0x000f000f000f000full;
  x = q | (x - q * 10) << 8;
  x = (x + 0x3030303030303030ull) >> (8 * (8 - n));
  memcpy(p, &x, 8);
}
#else
/* The portable digits8. */
static size_t digits8(uint32_t u)
{
  return (size_t)1 + (u >= 10) + (u >= 100) + (u >= 1000) + (u >= 10000) +
         (u >= 100000) + (u >= 1000000) + (u >= 10000000);
}

/* The portable put8: the digits in pairs, from the last one backwards. */
static void put8(char *p, uint32_t u, size_t n)
{
  char *end = p + n;
  while (end - p >= 2) {
    end -= 2;
    memcpy(end, pairs + 2 * (u % 100), 2);
    u /= 100;
  }
  if (end > p)
    *p = (char)('0' + u);
}
#endif

/* The decimal digits of u at p, most significant first: the length.
 * Beyond 1e8 the last eight digits, leading zeros included, follow the
 * others (at most two levels down: 2^64 / 1e16 < 1e8). */
static size_t put_u64(char *p, uint64_t u)
{
  if (u < 100000000) {
    size_t n = digits8((uint32_t)u);
    put8(p, (uint32_t)u, n);
    return n;
  }
  size_t n = put_u64(p, u / 100000000);
  put8(p + n, (uint32_t)(u % 100000000), 8);
  return n + 8;
}

size_t numfmt_fixed2(char *buf, double v)
{
  double a = fabs(v);
  if (!(a < FIXED2_LIMIT))          /* also NaN */
    return (size_t)snprintf(buf, NUMFMT_MAX, "%.2f", v);
  double t = a * 100;
  /* Truncation is floor for t >= 0, and cheaper than floor() without
   * SSE4.1; fl and frac are exact (t < 2^30). */
  int32_t fl = (int32_t)t;
  double frac = t - (double)fl;
  if (fabs(frac - 0.5) <= TIE_MARGIN)
    return (size_t)snprintf(buf, NUMFMT_MAX, "%.2f", v);
  /* fl + (frac > 0.5), without waiting for frac (which only feeds a
   * predictable branch): the sum t + 0.5 < 2^30 rounds by at most 2^-23,
   * and rounding never crosses an integer, so its truncation is that of
   * the exact sum unless t's fraction is within 2^-23 of one half, a
   * case handed to snprintf above. */
  uint32_t n = (uint32_t)(int32_t)(t + 0.5);
  uint32_t ip = n / 100;
  size_t neg = signbit(v) != 0, nd = digits8(ip);
  /* The sign is written either way and overwritten by the digits when v
   * is not negative (printf keeps the sign of -0.001). */
  buf[0] = '-';
  put8(buf + neg, ip, nd);
  char *p = buf + neg + nd;
  p[0] = '.';
  memcpy(p + 1, pairs + 2 * (n % 100), 2);
  p[3] = '\0';
  return neg + nd + 3;
}

size_t numfmt_fixed0(char *buf, double v)
{
  double a = fabs(v);
  if (!(a < FIXED0_LIMIT))
    return (size_t)snprintf(buf, NUMFMT_MAX, "%.0f", v);
  uint64_t n;
  if (a < TWO53) {
    /* Signed conversions are single instructions; floor, as above. */
    int64_t i = (int64_t)a;
    double frac = a - (double)i;
    n = (uint64_t)i + (frac > 0.5 || (frac == 0.5 && (i & 1)));
  } else {
    n = (uint64_t)a;                /* already an integer */
  }
  size_t k = 0;
  if (signbit(v))
    buf[k++] = '-';
  k += put_u64(buf + k, n);
  buf[k] = '\0';
  return k;
}
