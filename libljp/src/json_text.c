/* json_text.c — see json_text.h. */
#include "json_text.h"

/* The length of the valid UTF-8 sequence at p (1..4), or 0 when the byte
 * at p does not start one within n bytes. */
static size_t utf8_len(const unsigned char *p, size_t n) {
  unsigned c = p[0];
  size_t need;
  unsigned min;
  if (c < 0x80)
    return 1;
  if (c >= 0xc2 && c <= 0xdf) {
    need = 2;
    min = 0x80;
  } else if (c >= 0xe0 && c <= 0xef) {
    need = 3;
    min = 0x800;
  } else if (c >= 0xf0 && c <= 0xf4) {
    need = 4;
    min = 0x10000;
  } else {
    return 0;
  }
  if (n < need)
    return 0;
  unsigned v = c & (0x3fu >> (need - 1));
  for (size_t i = 1; i < need; i++) {
    if ((p[i] & 0xc0) != 0x80)
      return 0;
    v = (v << 6) | (p[i] & 0x3fu);
  }
  if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
    return 0;
  return need;
}

size_t ljp__json_plain(const char *s, size_t n) {
  const unsigned char *p = (const unsigned char *)s;
  size_t i = 0;
  while (i < n) {
    unsigned c = p[i];
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7f || c == '"' || c == '\\')
        break;
      i++;
      continue;
    }
    size_t k = utf8_len(p + i, n - i);
    if (k == 0)
      break;
    i += k;
  }
  return i;
}

size_t ljp__json_escape(const char *s, char esc[LJP_JSON_ESC_MAX]) {
  static const char hex[] = "0123456789abcdef";
  unsigned c = (unsigned char)s[0];
  if (c == '"' || c == '\\') {
    esc[0] = '\\';
    esc[1] = (char)c;
    return 2;
  }
  if (c == '\n' || c == '\t' || c == '\r') {
    esc[0] = '\\';
    esc[1] = c == '\n' ? 'n' : c == '\t' ? 't' : 'r';
    return 2;
  }
  if (c < 0x80) { /* another control byte, or DEL */
    esc[0] = '\\';
    esc[1] = 'u';
    esc[2] = '0';
    esc[3] = '0';
    esc[4] = hex[c >> 4];
    esc[5] = hex[c & 15];
    return 6;
  }
  esc[0] = (char)0xef; /* U+FFFD */
  esc[1] = (char)0xbf;
  esc[2] = (char)0xbd;
  return 3;
}
