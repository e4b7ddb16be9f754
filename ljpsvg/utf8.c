/* utf8.c — UTF-8 repair for frame names.  Names come from symbol tables and
 * folded text written by any tool, so they may hold any bytes; the SVG must
 * stay well-formed whatever they are. */
#include "utf8.h"

#include <stdint.h>

/* Length of the valid sequence at s (1..4), or 0 when it is invalid. */
static size_t seq_len(const unsigned char *s, size_t n, uint32_t *cp)
{
  unsigned char b = s[0];
  if (b < 0x80) {
    *cp = b;
    return 1;
  }
  size_t len;
  unsigned char lo = 0x80, hi = 0xBF;
  if (b >= 0xC2 && b <= 0xDF)
    len = 2;
  else if (b >= 0xE0 && b <= 0xEF) {
    len = 3;
    if (b == 0xE0)
      lo = 0xA0;
    else if (b == 0xED)
      hi = 0x9F;             /* no UTF-16 surrogates */
  } else if (b >= 0xF0 && b <= 0xF4) {
    len = 4;
    if (b == 0xF0)
      lo = 0x90;
    else if (b == 0xF4)
      hi = 0x8F;             /* nothing above U+10FFFF */
  } else
    return 0;
  if (n < len || s[1] < lo || s[1] > hi)
    return 0;
  for (size_t i = 2; i < len; i++)
    if ((s[i] & 0xC0) != 0x80)
      return 0;
  uint32_t v = b & (0x7F >> len);
  for (size_t i = 1; i < len; i++)
    v = (v << 6) | (s[i] & 0x3F);
  *cp = v;
  return len;
}

static const char REPLACEMENT[] = "\xEF\xBF\xBD";

size_t utf8_repair(const char *s, size_t n, size_t max_cp, strbuf *out)
{
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0, cps = 0;
  if (sb_reserve(out, n + 4) != 0)
    return (size_t)-1;
  while (i < n) {
    if (cps == max_cp) {
      if (sb_put(out, "\xE2\x80\xA6", 3) != 0)
        return (size_t)-1;
      return cps + 1;
    }
    /* Runs of printable ASCII are the common case: copy them at once. */
    size_t j = i;
    while (j < n && p[j] >= 0x20 && p[j] < 0x80 && cps + (j - i) < max_cp)
      j++;
    if (j > i) {
      if (sb_put(out, s + i, j - i) != 0)
        return (size_t)-1;
      cps += j - i;
      i = j;
      continue;
    }
    uint32_t cp;
    size_t len = seq_len(p + i, n - i, &cp);
    int bad = len == 0 || (cp < 0x20 && cp != '\t') || cp == 0xFFFE ||
              cp == 0xFFFF;
    if (bad) {
      if (sb_put(out, REPLACEMENT, 3) != 0)
        return (size_t)-1;
      i += len ? len : 1;
    } else {
      if (sb_put(out, s + i, len) != 0)
        return (size_t)-1;
      i += len;
    }
    cps++;
  }
  return cps;
}

size_t utf8_prefix(const char *s, size_t n, size_t cps)
{
  size_t i = 0;
  while (i < n && cps) {
    i++;
    while (i < n && ((unsigned char)s[i] & 0xC0) == 0x80)
      i++;
    cps--;
  }
  return i;
}
