/* xmltext.c — element text escaped like libxml2's writer.  See xmltext.h. */
#include "xmltext.h"

#include <stdint.h>

/* Bytes that become references. */
static const unsigned char SPECIAL[256] = {
    ['<'] = 1, ['>'] = 1, ['&'] = 1, ['"'] = 1, ['\r'] = 1};

/* The reference of a SPECIAL byte. */
static const char *ref_of(unsigned char c)
{
  switch (c) {
  case '<': return "&lt;";
  case '>': return "&gt;";
  case '&': return "&amp;";
  case '"': return "&quot;";
  case '\r': return "&#13;";
  default: return NULL;
  }
}

int xmltext_put(strbuf *out, const char *s, size_t n)
{
  /* Plain runs (nearly all of every name) are copied at once. */
  size_t i = 0;
  while (i < n) {
    size_t j = i;
    while (j < n && !SPECIAL[(unsigned char)s[j]])
      j++;
    if (j > i && sb_put(out, s + i, j - i) != 0)
      return -1;
    if (j < n && sb_puts(out, ref_of((unsigned char)s[j])) != 0)
      return -1;
    i = j + 1;
  }
  return 0;
}

int xmltext_plain(const char *s, size_t n)
{
  for (size_t i = 0; i < n; i++)
    if (SPECIAL[(unsigned char)s[i]])
      return 0;
  return 1;
}

int xmltext_int(strbuf *out, int v)
{
  if (sb_reserve(out, 11) != 0) /* "-2147483648" */
    return -1;
  char *p = out->p + out->len;
  if (v >= 0 && v < 1000) {
    /* Colour components, every box has three: no loop, no reversal. */
    unsigned u = (unsigned)v;
    if (u >= 100)
      *p++ = (char)('0' + u / 100);
    if (u >= 10)
      *p++ = (char)('0' + u / 10 % 10);
    *p++ = (char)('0' + u % 10);
  } else {
    char tmp[16];
    size_t n = 0;
    /* Through unsigned: the magnitude of INT_MIN fits. */
    unsigned u = v < 0 ? 0u - (unsigned)v : (unsigned)v;
    do {
      tmp[n++] = (char)('0' + u % 10);
      u /= 10;
    } while (u);
    if (v < 0)
      tmp[n++] = '-';
    while (n)
      *p++ = tmp[--n];
  }
  out->len = (size_t)(p - out->p);
  out->p[out->len] = '\0';
  return 0;
}
