/* folded.c — collapsed-stack text into call trees.  See folded.h. */
#include "folded.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE2__) && defined(__GNUC__)
#include <emmintrin.h>
#endif

void folded_init(folded_reader *fr, ljp_tree *after, ljp_tree *before,
                 int reverse)
{
  memset(fr, 0, sizeof *fr);
  fr->after = after;
  fr->before = before;
  fr->reverse = reverse;
}

void folded_free(folded_reader *fr)
{
  free(fr->buf);
  free(fr->frames);
  free(fr->frames2);
  free(fr->prev);
  free(fr->prev_ends);
  free(fr->prev_nodes);
  fr->buf = fr->prev = NULL;
  fr->frames = fr->frames2 = NULL;
  fr->prev_ends = NULL;
  fr->prev_nodes = NULL;
}

static int is_space(char c)
{
  return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/* Parses the count that ends s[0..*len): digits with an optional fraction,
 * preceded by whitespace.  On success *len is cut to the text before the
 * whitespace and the count (rounded half up) is stored. */
static int take_count(const char *s, size_t *len, int64_t *count,
                      int *rounded)
{
  size_t end = *len, i = end;
  while (i > 0 && ((s[i - 1] >= '0' && s[i - 1] <= '9') || s[i - 1] == '.'))
    i--;
  if (i == end || i == 0 || !is_space(s[i - 1]) || s[i] == '.')
    return 0;
  uint64_t v = 0;
  size_t k = i;
  for (; k < end && s[k] != '.'; k++) {
    unsigned d = (unsigned)(s[k] - '0');
    if (v > (UINT64_C(0x7fffffffffffffff) - d) / 10)
      return 0;            /* beyond int64: not a count we can add */
    v = v * 10 + d;
  }
  *rounded = 0;
  if (k < end) {           /* the fraction: at most one dot */
    for (size_t f = k + 1; f < end; f++)
      if (s[f] == '.')
        return 0;
    for (size_t f = k + 1; f < end; f++)
      if (s[f] != '0') {
        *rounded = 1;
        break;
      }
    if (k + 1 < end && s[k + 1] >= '5' && v < UINT64_C(0x7fffffffffffffff))
      v++;
  }
  while (i > 0 && is_space(s[i - 1]))
    i--;
  *len = i;
  *count = (int64_t)v;
  return 1;
}

static int grow_frames(folded_reader *fr, size_t n)
{
  if (n <= fr->frames_cap)
    return 0;
  size_t cap = fr->frames_cap ? fr->frames_cap : 64;
  while (cap < n)
    cap *= 2;
  uint32_t *a = realloc(fr->frames, cap * sizeof *a);
  if (!a)
    return -1;
  fr->frames = a;
  uint32_t *b = realloc(fr->frames2, cap * sizeof *b);
  if (!b)
    return -1;
  fr->frames2 = b;
  fr->frames_cap = cap;
  return 0;
}

/* The length of the common prefix of a[0..lim) and b[0..lim).  Lines are
 * long and mostly equal to the one before: words are compared eight bytes
 * at a time, and the first byte that differs is found from their XOR
 * (the lowest set bit on a little-endian machine) rather than byte by
 * byte. */
static size_t common_prefix(const char *a, const char *b, size_t lim)
{
  size_t i = 0;
#if defined(__SSE2__) && defined(__GNUC__)
  /* Sixteen bytes a step where SSE2 is there (every x86-64). */
  for (; i + 16 <= lim; i += 16) {
    __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(a + i));
    __m128i y = _mm_loadu_si128((const __m128i *)(const void *)(b + i));
    unsigned eq = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, y));
    if (eq != 0xffffu)
      return i + (size_t)__builtin_ctz(~eq);
  }
#endif
  for (; i + 8 <= lim; i += 8) {
    uint64_t x, y;
    memcpy(&x, a + i, 8);
    memcpy(&y, b + i, 8);
    if (x != y) {
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
      return i + (size_t)__builtin_ctzll(x ^ y) / 8;
#else
      break;
#endif
    }
  }
  while (i < lim && a[i] == b[i])
    i++;
  return i;
}

/* Interns the frames of stack s[0..len) into t; returns the count or
 * (size_t)-1 when out of memory.  Like Perl's split, trailing empty
 * frames are dropped ("a;b;" is "a;b").  With cache set (the main tree,
 * not reversed; then second is 0) frames of the prefix shared with the
 * previous line are taken from it, and *shared gets their number. */
static size_t split_stack(folded_reader *fr, ljp_tree *t, const char *s,
                          size_t len, int second, int cache, size_t *shared)
{
  uint32_t *out = second ? fr->frames2 : fr->frames;
  while (len > 0 && s[len - 1] == ';')
    len--;
  size_t n = 0, pos = 0, common = 0;
  *shared = 0;
  if (len == 0) {
    if (cache)
      fr->prev_n = fr->prev_len = 0;
    return 0;
  }
  if (cache && fr->prev_n) {
    size_t lim = len < fr->prev_len ? len : fr->prev_len;
    common = common_prefix(s, fr->prev, lim);
    /* A frame is shared when its separator matched too, or when both
     * lines end right after it (then it is the last).  The ends grow, so
     * the shared ones are found by bisection; their ids are already in
     * out, which is fr->frames. */
    size_t lo = 0, hi = fr->prev_n;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (fr->prev_ends[mid] < common)
        lo = mid + 1;
      else
        hi = mid;
    }
    n = lo;
    if (n + 1 == fr->prev_n && fr->prev_ends[n] == common && common == len &&
        len == fr->prev_len)
      n++;
    if (n)
      pos = fr->prev_ends[n - 1] + 1;
    *shared = n;
  }
  if (pos < len || (pos == len && n == 0)) {
    const char *p = s + pos, *end = s + len;
    for (;;) {
      const char *semi = memchr(p, ';', (size_t)(end - p));
      const char *stop = semi ? semi : end;
      uint32_t id = ljp_tree_intern(t, p, (size_t)(stop - p), LJP_CLASS_OTHER);
      /* The arrays grow as frames come rather than after a pass counting
       * the separators: one scan of the line fewer. */
      if (id && n >= fr->frames_cap) {
        if (grow_frames(fr, n + 1) != 0)
          id = 0;
        else
          out = second ? fr->frames2 : fr->frames;
      }
      if (!id) {
        if (cache)
          fr->prev_n = 0;
        return (size_t)-1;
      }
      if (cache) {
        if (n >= fr->prev_ends_cap) {
          size_t cap = fr->prev_ends_cap ? fr->prev_ends_cap * 2 : 64;
          size_t *e = realloc(fr->prev_ends, cap * sizeof *e);
          if (!e) {
            fr->prev_n = 0;
            return (size_t)-1;
          }
          fr->prev_ends = e;
          fr->prev_ends_cap = cap;
        }
        fr->prev_ends[n] = (size_t)(stop - s);
      }
      out[n++] = id;
      if (!semi)
        break;
      p = semi + 1;
    }
  }
  if (cache) {
    if (len > fr->prev_cap) {
      size_t cap = fr->prev_cap ? fr->prev_cap : 256;
      while (cap < len)
        cap *= 2;
      char *b = realloc(fr->prev, cap);
      if (!b) {
        fr->prev_n = 0;
        return (size_t)-1;
      }
      fr->prev = b;
      fr->prev_cap = cap;
    }
    /* prev[0..common) already holds the same bytes. */
    memcpy(fr->prev + common, s + common, len - common);
    fr->prev_len = len;
    fr->prev_n = n;
  }
  if (fr->reverse)
    for (size_t i = 0; i < n / 2; i++) {
      uint32_t tmp = out[i];
      out[i] = out[n - 1 - i];
      out[n - 1 - i] = tmp;
    }
  return n;
}

/* Counts the current line (fr->lines) as ignored. */
static void ignore_line(folded_reader *fr)
{
  if (fr->ignored++ == 0) {
    fr->first_ignored = fr->lines;
    fr->first_ignored_offset = fr->line_start;
  }
}

int folded_line(folded_reader *fr, const char *s, size_t len)
{
  fr->lines++;
  while (len > 0 && is_space(s[len - 1]))
    len--;
  if (len == 0)
    return 0;              /* blank lines are no error */
  int64_t after, before = 0;
  int r1 = 0, r2 = 0, two = 0;
  if (!take_count(s, &len, &after, &r1)) {
    ignore_line(fr);
    return 0;
  }
  if (take_count(s, &len, &before, &r2))
    two = 1;
  fr->rounded += (uint64_t)(r1 + r2);

  if (grow_frames(fr, 1) != 0)  /* never NULL, even for empty stacks */
    return -1;
  size_t shared, n = split_stack(fr, fr->after, s, len, 0, !fr->reverse,
                                 &shared);
  if (n == (size_t)-1)
    return -1;
  if (fr->reverse) {
    if (ljp_tree_add(fr->after, fr->frames, n, after) == UINT32_MAX)
      return -1;
  } else {
    /* The walk starts below the shared prefix's node, and the node of
     * each new depth is kept for the next line. */
    if (n > fr->prev_nodes_cap) {
      size_t cap = fr->prev_nodes_cap ? fr->prev_nodes_cap : 64;
      while (cap < n)
        cap *= 2;
      uint32_t *p = realloc(fr->prev_nodes, cap * sizeof *p);
      if (!p) {
        fr->prev_n = 0;
        return -1;
      }
      fr->prev_nodes = p;
      fr->prev_nodes_cap = cap;
    }
    if (ljp_tree_add_below(fr->after, shared ? fr->prev_nodes[shared - 1] : 0,
                           fr->frames + shared, n - shared, after,
                           fr->prev_nodes ? fr->prev_nodes + shared : NULL)
        == UINT32_MAX) {
      fr->prev_n = 0;
      return -1;
    }
  }
  if (two) {
    fr->differential++;
    if (fr->before) {
      size_t unused, m = split_stack(fr, fr->before, s, len, 1, 0, &unused);
      if (m == (size_t)-1 ||
          ljp_tree_add(fr->before, fr->frames2, m, before) == UINT32_MAX)
        return -1;
    }
  }
  return 1;
}

static int line_done(folded_reader *fr, const char *s, size_t len)
{
  if (!fr->started) {
    fr->started = 1;
    if (len >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0) {
      s += 3;
      len -= 3;
    }
  }
  return folded_line(fr, s, len) < 0 ? -1 : 0;
}

int folded_feed(folded_reader *fr, const void *data, size_t len)
{
  const char *p = data, *end = p + len;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    if (fr->len == 0 && !fr->skipping)
      fr->line_start = fr->fed + (uint64_t)(p - (const char *)data);
    size_t take = nl ? (size_t)(nl - p) : (size_t)(end - p);
    if (fr->skipping) {
      if (nl) {
        fr->skipping = 0;
        fr->lines++;
        ignore_line(fr);
      }
    } else if (fr->len == 0 && nl) {
      /* Whole line inside the piece: no copy. */
      if (line_done(fr, p, take) != 0)
        return -1;
    } else if (fr->len + take > FOLDED_MAX_LINE) {
      fr->len = 0;
      if (nl) {
        fr->lines++;
        ignore_line(fr);
      } else
        fr->skipping = 1;
    } else {
      if (fr->len + take > fr->cap) {
        size_t cap = fr->cap ? fr->cap : 4096;
        while (cap < fr->len + take)
          cap *= 2;
        char *b = realloc(fr->buf, cap);
        if (!b)
          return -1;
        fr->buf = b;
        fr->cap = cap;
      }
      memcpy(fr->buf + fr->len, p, take);
      fr->len += take;
      if (nl) {
        size_t n = fr->len;
        fr->len = 0;
        if (line_done(fr, fr->buf, n) != 0)
          return -1;
      }
    }
    if (!nl)
      break;
    p = nl + 1;
  }
  fr->fed += len;
  return 0;
}

int folded_finish(folded_reader *fr)
{
  if (fr->skipping) {
    fr->skipping = 0;
    fr->lines++;
    ignore_line(fr);
    return 0;
  }
  if (fr->len == 0)
    return 0;
  size_t n = fr->len;
  fr->len = 0;
  return line_done(fr, fr->buf, n);
}
