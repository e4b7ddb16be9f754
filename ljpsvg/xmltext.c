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

int xmltext_int(strbuf *out, int v)
{
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
  if (sb_reserve(out, n) != 0)
    return -1;
  while (n)
    out->p[out->len++] = tmp[--n];
  out->p[out->len] = '\0';
  return 0;
}
