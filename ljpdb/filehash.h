/*
 * filehash.h — SHA-256 of a file's bytes, on a thread of its own.
 *
 * The hash identifies an imported profile (sha256.h), and on a large file
 * it costs about as much CPU as decoding the file and writing its rows
 * (SHA-256 runs at the CPU's speed; the file is read once more for it).
 * Only the final check needs it, so it runs beside the import on another
 * core: the import's wall time becomes the longer of the two instead of
 * their sum.  A stream is hashed while it is copied (file_hash_follow), so
 * the copy's reads and the hash overlap as well.
 */
#ifndef LJPDB_FILEHASH_H
#define LJPDB_FILEHASH_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

typedef struct file_hash {
  int fd;                  /* read with pread(): its offset is left alone */
  int threaded;            /* a thread runs (or ran) the hash */
  int follow;              /* the file grows: hash up to avail until eof */
  pthread_t thread;
  pthread_mutex_t mu;      /* guards avail and eof */
  pthread_cond_t grown;
  uint64_t avail;
  int eof;
  atomic_int cancel;       /* set by the owner: stop at the next block */
  /* Results, read by the owner only after file_hash_finish. */
  int err;                 /* errno of a failed read; ECANCELED */
  uint64_t size;           /* bytes hashed */
  char sha[65];            /* lower-case hex */
} file_hash;

/* Hashes fd from offset 0 to its end, taking the descriptor (closed by
 * file_hash_finish).  threaded = 0, or a thread that cannot be started:
 * the hash is done before this returns. */
void file_hash_start(file_hash *h, int fd, int threaded);

/* Hashes fd as it is written: the bytes up to what file_hash_grow last
 * announced, until it announces the end.  Takes the descriptor. */
void file_hash_follow(file_hash *h, int fd);

/* Announces that fd (file_hash_follow) now holds total bytes; eof: and
 * no more.  Without a thread the hash is done at the end, here. */
void file_hash_grow(file_hash *h, uint64_t total, int eof);

/* Waits for the hash and closes the descriptor; 0, or the errno value of
 * the failed read.  Called exactly once after file_hash_start or _follow
 * (a followed file must have been announced whole). */
int file_hash_finish(file_hash *h);

/* As file_hash_finish, stopping the hash first (a file given up). */
void file_hash_abandon(file_hash *h);

#endif
