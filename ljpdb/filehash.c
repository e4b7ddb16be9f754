/* filehash.c — SHA-256 of a file on a thread of its own (see filehash.h). */
#include "filehash.h"

#include "sha256.h"

#include <errno.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static void *hash_main(void *arg) {
  file_hash *h = arg;
  sha256_ctx c;
  uint8_t buf[1 << 16], d[32];
  uint64_t off = 0;
  sha256_init(&c);
  for (;;) {
    if (atomic_load_explicit(&h->cancel, memory_order_relaxed)) {
      h->err = ECANCELED;
      return NULL;
    }
    ssize_t n = pread(h->fd, buf, sizeof buf, (off_t)off);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      h->err = errno;
      return NULL;
    }
    if (n == 0) break;
    sha256_update(&c, buf, (size_t)n);
    off += (uint64_t)n;
  }
  sha256_final(&c, d);
  sha256_hex(d, h->sha);
  h->size = off;
  return NULL;
}

void file_hash_start(file_hash *h, int fd, int threaded) {
  sigset_t all, old;
  h->fd = fd;
  h->threaded = 0;
  h->err = 0;
  h->size = 0;
  h->sha[0] = 0;
  atomic_init(&h->cancel, 0);
  if (threaded) {
    /* Signals stay with the calling thread: its blocking reads must see
     * EINTR when the user interrupts an import. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    h->threaded = pthread_create(&h->thread, NULL, hash_main, h) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
  }
  if (!h->threaded) hash_main(h);
}

int file_hash_finish(file_hash *h) {
  if (h->threaded) pthread_join(h->thread, NULL);
  h->threaded = 0;
  if (h->fd >= 0) close(h->fd);
  h->fd = -1;
  return h->err;
}

void file_hash_abandon(file_hash *h) {
  atomic_store_explicit(&h->cancel, 1, memory_order_relaxed);
  file_hash_finish(h);
}
