/*
 * filehash.h — SHA-256 of a file's bytes, on a thread of its own.
 *
 * The hash identifies an imported profile (sha256.h), and on a large file
 * it costs as much CPU as the rest of the import taken half (SHA-256 runs
 * at the CPU's speed).  Nothing but the final check needs it, so it runs
 * beside the import on another core: the import's wall time becomes the
 * longer of the two instead of their sum.
 */
#ifndef LJPDB_FILEHASH_H
#define LJPDB_FILEHASH_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

typedef struct file_hash {
  int fd;                  /* read with pread(): its offset is left alone */
  int threaded;            /* a thread runs (or ran) the hash */
  pthread_t thread;
  atomic_int cancel;       /* set by the owner: stop at the next block */
  /* Results, read by the owner only after the join. */
  int err;                 /* errno of a failed read; ECANCELED */
  uint64_t size;           /* bytes hashed */
  char sha[65];            /* lower-case hex */
} file_hash;

/* Hashes fd from offset 0 to its end, taking the descriptor (closed by
 * file_hash_finish).  threaded = 0, or a thread that cannot be started:
 * the hash is done before this returns. */
void file_hash_start(file_hash *h, int fd, int threaded);

/* Waits for the hash and closes the descriptor; 0, or the errno value of
 * the failed read.  Called exactly once after file_hash_start. */
int file_hash_finish(file_hash *h);

/* As file_hash_finish, stopping the hash first (a file given up). */
void file_hash_abandon(file_hash *h);

#endif
