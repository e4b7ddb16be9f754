/*
 * strbuf.h — the growable byte buffer of libljp and its tools (always
 * NUL-terminated once used).  Header-only (static inline): no symbol.  Sizes are checked before they are added or doubled, so a
 * huge request fails with -1 instead of wrapping around to a small
 * allocation that the copy then overruns.
 */
#ifndef LJP_STRBUF_H
#define LJP_STRBUF_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef struct strbuf {
  char *p;
  size_t len, cap;
} strbuf;

/* Room for extra more bytes and the terminator: 0, or -1 when out of
 * memory or when the size would not fit in a size_t. */
static inline int sb_reserve(strbuf *b, size_t extra)
{
  if (b->cap - b->len > extra)
    return 0;
  size_t cap = b->cap ? b->cap : 64;
  while (cap - b->len <= extra) {
    if (cap > ((size_t)-1) / 2)
      return -1;
    cap *= 2;
  }
  char *p = realloc(b->p, cap);
  if (!p)
    return -1;
  b->p = p;
  b->cap = cap;
  return 0;
}

static inline int sb_put(strbuf *b, const char *s, size_t n)
{
  if (sb_reserve(b, n) != 0)
    return -1;
  if (n)
    memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = '\0';
  return 0;
}

static inline int sb_puts(strbuf *b, const char *s)
{
  return sb_put(b, s, strlen(s));
}

static inline void sb_free(strbuf *b)
{
  free(b->p);
  b->p = NULL;
  b->len = b->cap = 0;
}

#endif
