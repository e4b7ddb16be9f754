/* input.c — one ljpsvg input into call trees.  See input.h. */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* tee(2) */
#endif
#include "input.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "folded.h"

#define CHUNK ((size_t)1 << 20)
/* Folded text is parsed as it is read: a buffer that stays in the cache
 * and out of the peak memory does as well as a large one. */
#define TEXT_CHUNK ((size_t)1 << 17)

static int fail(input_result *res, const char *fmt, const char *what)
{
  res->error = 1;
  snprintf(res->message, sizeof res->message, fmt, what);
  return -1;
}

/* Drains an opened reader into the tree. */
static int fold_reader(ljp_reader *r, const input_opts *o, ljp_tree *after,
                       input_result *res)
{
  ljp_folder *f = NULL;
  const ljp_event *ev;
  ljp_status st;
  int rc = 0;
  while ((st = ljp_reader_next(r, &ev)) == LJP_OK) {
    if (ev->type != LJP_EV_SAMPLE && ev->type != LJP_EV_MEMORY)
      continue;
    if (!f) {
      /* The kind is known once the event stream began: sysprof weighs
       * samples whatever --weight says. */
      ljp_fold_options fo = o->fold;
      if (ljp_reader_kind(r) == LJP_KIND_SYSPROF)
        fo.weight = LJP_WEIGHT_SAMPLES;
      f = ljp_folder_new(after, &fo);
      if (!f) {
        rc = fail(res, "%s", "out of memory");
        break;
      }
    }
    if (ljp_folder_add(f, r, ev) != LJP_OK) {
      rc = fail(res, "%s", "out of memory");
      break;
    }
  }
  res->kind = ljp_reader_kind(r);
  if (rc == 0 && st != LJP_END)
    rc = fail(res, "%s", ljp_reader_error(r));
  ljp_folder_free(f);
  return rc;
}

static int read_profile(const char *path, int fd, const void *mem,
                        size_t memlen, const input_opts *o, ljp_tree *after,
                        input_result *res)
{
  ljp_reader *r;
  ljp_status st = cli_reader_open(&r, path, fd, mem, memlen, LJP_FLAVOR_AUTO,
                                  &o->limits);
  if (!r)
    return fail(res, "%s", "out of memory");
  int rc;
  if (st != LJP_OK)
    rc = fail(res, "%s", ljp_reader_error(r));
  else
    rc = fold_reader(r, o, after, res);
  ljp_reader_free(r);
  return rc;
}

static int feed_text(folded_reader *fr, int fd, const char *first,
                     size_t nfirst, input_result *res)
{
  int rc = 0;
  if (nfirst && folded_feed(fr, first, nfirst) != 0)
    rc = fail(res, "%s", "out of memory");
  char *buf = rc ? NULL : malloc(TEXT_CHUNK);
  if (!rc && !buf)
    rc = fail(res, "%s", "out of memory");
  while (!rc) {
    ssize_t n = read(fd, buf, TEXT_CHUNK);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      rc = fail(res, "%s", strerror(errno));
      break;
    }
    if (n == 0)
      break;
    if (folded_feed(fr, buf, (size_t)n) != 0)
      rc = fail(res, "%s", "out of memory");
  }
  if (!rc && folded_finish(fr) != 0)
    rc = fail(res, "%s", "out of memory");
  free(buf);
  res->lines = fr->lines;
  res->ignored = fr->ignored;
  res->first_ignored = fr->first_ignored;
  res->first_ignored_offset = fr->first_ignored_offset;
  res->rounded = fr->rounded;
  res->differential = fr->differential;
  return rc;
}

#ifdef __linux__
/* Copies up to n bytes from the head of the pipe fd into buf without
 * consuming them (tee(2) into a pipe of our own), so that a profile read
 * from a pipe can still be handed whole to the reader, which then streams
 * it in pieces: memory stays flat however long the profile is.  Waits for
 * at least 3 bytes (the magic) or the end of the input.  -1 when fd is not
 * a pipe (or tee fails): the caller then consumes the bytes. */
static ssize_t pipe_peek(int fd, char *buf, size_t n)
{
  int p[2];
  if (pipe(p) != 0)
    return -1;
  ssize_t got = -1;
  for (int tries = 0;; tries++) {
    ssize_t t = tee(fd, p[1], n, 0);
    if (t < 0 && errno == EINTR)
      continue;
    if (t < 0)
      break;
    /* t <= n bytes sit in our pipe: read them back. */
    size_t k = 0;
    while (k < (size_t)t) {
      ssize_t r = read(p[0], buf + k, (size_t)t - k);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        break;
      k += (size_t)r;
    }
    if (k != (size_t)t) {
      got = -1;
      break;
    }
    got = t;
    /* The same bytes come again until more arrive: wait a little. */
    if (t == 0 || t >= 3 || tries >= 10000)
      break;
    struct timespec ms = {0, 1000000};
    nanosleep(&ms, NULL);
  }
  close(p[0]);
  close(p[1]);
  return got;
}
#endif

/* Reads fd to its end into memory (a pipe cannot be rewound after the
 * magic was seen). */
static char *slurp(int fd, const char *first, size_t nfirst, size_t *len)
{
  size_t cap = nfirst > CHUNK ? nfirst * 2 : CHUNK, n = nfirst;
  char *p = malloc(cap);
  if (!p)
    return NULL;
  memcpy(p, first, nfirst);
  for (;;) {
    if (cap - n < CHUNK) {
      char *q = realloc(p, cap * 2);
      if (!q) {
        free(p);
        return NULL;
      }
      p = q;
      cap *= 2;
    }
    ssize_t r = read(fd, p + n, cap - n);
    if (r < 0 && errno == EINTR)
      continue;
    if (r <= 0)
      break;
    n += (size_t)r;
  }
  *len = n;
  return p;
}

int input_read(const char *path, const input_opts *o, ljp_tree *after,
               ljp_tree *before, input_result *res)
{
  memset(res, 0, sizeof *res);
  int is_stdin = strcmp(path, "-") == 0;
  int fd = is_stdin ? 0 : open(path, O_RDONLY);
  if (fd < 0)
    return fail(res, "%s", strerror(errno));

  /* Detect the type by content: profiles start with "ljs". */
  char head[4096];
  size_t nhead = 0;
#ifdef __linux__
  if (is_stdin && lseek(fd, 0, SEEK_CUR) < 0) {
    ssize_t k = pipe_peek(fd, head, sizeof head);
    if (k >= 0) {
      /* Nothing was consumed: both readers take the pipe from its start. */
      if (k >= 3 && memcmp(head, "ljs", 3) == 0)
        return read_profile(path, fd, NULL, 0, o, after, res);
      folded_reader fr;
      folded_init(&fr, after, before, o->reverse);
      int rc = feed_text(&fr, fd, NULL, 0, res);
      folded_free(&fr);
      return rc;
    }
  }
#endif
  while (nhead < 3) {
    ssize_t n = read(fd, head + nhead, sizeof head - nhead);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      int e = errno;
      if (!is_stdin)
        close(fd);
      return fail(res, "%s", strerror(e));
    }
    if (n == 0)
      break;
    nhead += (size_t)n;
  }
  int rc;
  if (nhead >= 3 && memcmp(head, "ljs", 3) == 0) {
    if (!is_stdin) {
      close(fd);
      rc = read_profile(path, -1, NULL, 0, o, after, res);
    } else if (lseek(fd, 0, SEEK_SET) == 0) {
      rc = read_profile(path, fd, NULL, 0, o, after, res);
    } else {
      size_t len;
      char *mem = slurp(fd, head, nhead, &len);
      if (!mem)
        return fail(res, "%s", "out of memory");
      rc = read_profile(path, -1, mem, len, o, after, res);
      free(mem);
    }
    return rc;
  }
  folded_reader fr;
  folded_init(&fr, after, before, o->reverse);
  rc = feed_text(&fr, fd, head, nhead, res);
  folded_free(&fr);
  if (!is_stdin)
    close(fd);
  return rc;
}

ljp_tree *input_reverse_tree(const ljp_tree *src)
{
  ljp_tree *dst = ljp_tree_new();
  uint32_t nf = ljp_tree_frame_count(src);
  uint32_t *fmap = malloc(((size_t)nf + 1) * sizeof *fmap);
  uint32_t *path = NULL;
  size_t cap = 0;
  if (!dst || !fmap)
    goto fail;
  /* Same frame ids in the same order. */
  for (uint32_t f = 1; f <= nf; f++) {
    size_t len;
    const char *name = ljp_tree_frame_name(src, f, &len);
    if (!(fmap[f] = ljp_tree_intern(dst, name, len, ljp_tree_frame_class(src, f))))
      goto fail;
  }
  for (uint32_t n = 1; n < ljp_tree_node_count(src); n++) {
    int64_t self = ljp_tree_node_self(src, n);
    if (self == 0)
      continue;
    size_t depth = ljp_tree_node_depth(src, n);
    if (depth > cap) {
      cap = depth * 2;
      uint32_t *p = realloc(path, cap * sizeof *p);
      if (!p)
        goto fail;
      path = p;
    }
    /* Walking up from the leaf gives the reversed stack directly. */
    size_t k = 0;
    for (uint32_t u = n; u; u = ljp_tree_node_parent(src, u))
      path[k++] = fmap[ljp_tree_node_frame(src, u)];
    if (ljp_tree_add(dst, path, k, self) == UINT32_MAX)
      goto fail;
  }
  free(fmap);
  free(path);
  return dst;
fail:
  ljp_tree_free(dst);
  free(fmap);
  free(path);
  return NULL;
}
