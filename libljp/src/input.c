/*
 * input.c — where the bytes come from.
 *
 * Files are mapped whole (the fast path: records are parsed in place).
 * Descriptors — pipes, stdin, anything unseekable — are read into a window
 * that keeps only the unconsumed tail, so memory stays bounded by the
 * largest record, never by the stream length.
 */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define READ_CHUNK (256 * 1024)

long long ljp__input_fill(ljp_input *in, uint64_t pos, size_t want) {
  if (pos < in->base)
    return -2; /* cannot happen: the reader never seeks back */
  for (;;) {
    uint64_t have = in->base + in->len > pos ? in->base + in->len - pos : 0;
    if (have >= want || in->eof)
      return (long long)have;
    /* Drop what precedes pos, then make room for want bytes. */
    size_t keep_from = (size_t)(pos - in->base);
    if (keep_from > in->len)
      keep_from = in->len;
    size_t keep = in->len - keep_from;
    if (keep_from && keep)
      memmove(in->buf, in->buf + keep_from, keep);
    in->base += keep_from;
    in->len = keep;
    size_t need = want > READ_CHUNK ? want : READ_CHUNK;
    if (in->cap < need + keep || in->cap - keep < READ_CHUNK / 4) {
      size_t ncap = in->cap ? in->cap : READ_CHUNK;
      while (ncap < need + keep)
        ncap *= 2;
      if (ncap == in->cap)
        ncap *= 2;
      uint8_t *nb = realloc(in->buf, ncap);
      if (!nb) {
        errno = ENOMEM;
        return -1;
      }
      in->buf = nb;
      in->cap = ncap;
    }
    in->data = in->buf;
    ssize_t n;
    do
      n = read(in->fd, in->buf + in->len, in->cap - in->len);
    while (n < 0 && errno == EINTR);
    if (n < 0)
      return -1;
    if (n == 0)
      in->eof = 1;
    in->len += (size_t)n;
  }
}

void ljp__input_close(ljp_input *in) {
  free(in->buf);
  if (in->map)
    munmap(in->map, in->map_len);
  if (in->own_fd && in->fd >= 0)
    close(in->fd);
  memset(in, 0, sizeof(*in));
  in->fd = -1;
}

void ljp__input_release(ljp_input *in, uint64_t pos) {
  if (!in->map || pos < in->map_dropped + INPUT_RELEASE_STEP)
    return;
  long page = sysconf(_SC_PAGESIZE);
  size_t upto = (size_t)pos & ~((size_t)(page > 0 ? page : 4096) - 1);
  if (upto <= in->map_dropped)
    return;
  /* Read-only private mapping: dropped pages would simply be read from
   * the file again if touched. */
  madvise((char *)in->map + in->map_dropped, upto - in->map_dropped,
          MADV_DONTNEED);
  in->map_dropped = upto;
}
