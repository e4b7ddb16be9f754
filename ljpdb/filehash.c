/* filehash.c — SHA-256 of a file on a thread of its own (see filehash.h). */
#include "filehash.h"

#include "sha256.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

/* How far the hash may read: the file's end (UINT64_MAX) or, following a
 * file being written, what is announced; waits for more.  Sets *last when
 * nothing more will come beyond the value returned. */
static uint64_t wait_avail(file_hash *h, uint64_t off, int *last) {
  if (!h->follow) {
    *last = 0;
    return UINT64_MAX;
  }
  pthread_mutex_lock(&h->mu);
  while (h->avail == off && !h->eof &&
         !atomic_load_explicit(&h->cancel, memory_order_relaxed))
    pthread_cond_wait(&h->grown, &h->mu);
  uint64_t a = h->avail;
  *last = h->eof;
  pthread_mutex_unlock(&h->mu);
  return a;
}

static void *hash_main(void *arg) {
  file_hash *h = arg;
  sha256_ctx c;
  uint8_t buf[1 << 16], d[32];
  uint64_t off = 0;
  sha256_init(&c);
  for (;;) {
    int last;
    uint64_t avail = wait_avail(h, off, &last);
    if (atomic_load_explicit(&h->cancel, memory_order_relaxed)) {
      h->err = ECANCELED;
      return NULL;
    }
    if (off == avail && last) break;
    size_t want = avail - off < sizeof buf ? (size_t)(avail - off) : sizeof buf;
    ssize_t n = pread(h->fd, buf, want, (off_t)off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      h->err = errno;
      return NULL;
    }
    if (n == 0) {
      if (!h->follow) break;
      h->err = EIO; /* shorter than announced: the copy was cut */
      return NULL;
    }
    sha256_update(&c, buf, (size_t)n);
    off += (uint64_t)n;
  }
  sha256_final(&c, d);
  sha256_hex(d, h->sha);
  h->size = off;
  return NULL;
}

static void init(file_hash *h, int fd, int follow) {
  h->fd = fd;
  h->threaded = 0;
  h->follow = follow;
  h->avail = 0;
  h->eof = 0;
  h->err = 0;
  h->size = 0;
  h->sha[0] = 0;
  atomic_init(&h->cancel, 0);
  pthread_mutex_init(&h->mu, NULL);
  pthread_cond_init(&h->grown, NULL);
}

static void spawn(file_hash *h) {
  sigset_t all, old;
  /* Signals stay with the calling thread: its blocking reads must see
   * EINTR when the user interrupts an import. */
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  h->threaded = pthread_create(&h->thread, NULL, hash_main, h) == 0;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void file_hash_start(file_hash *h, int fd, int threaded) {
  init(h, fd, 0);
  if (threaded) spawn(h);
  if (!h->threaded) hash_main(h);
}

void file_hash_follow(file_hash *h, int fd) {
  init(h, fd, 1);
  spawn(h);
}

void file_hash_grow(file_hash *h, uint64_t total, int eof) {
  pthread_mutex_lock(&h->mu);
  h->avail = total;
  h->eof = eof;
  pthread_cond_signal(&h->grown);
  pthread_mutex_unlock(&h->mu);
  if (eof && !h->threaded) hash_main(h);
}

int file_hash_finish(file_hash *h) {
  if (h->threaded) pthread_join(h->thread, NULL);
  h->threaded = 0;
  pthread_mutex_destroy(&h->mu);
  pthread_cond_destroy(&h->grown);
  if (h->fd >= 0) close(h->fd);
  h->fd = -1;
  return h->err;
}

void file_hash_abandon(file_hash *h) {
  pthread_mutex_lock(&h->mu);
  atomic_store_explicit(&h->cancel, 1, memory_order_relaxed);
  pthread_cond_signal(&h->grown);
  pthread_mutex_unlock(&h->mu);
  file_hash_finish(h);
}
