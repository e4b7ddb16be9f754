/*
 * fuzz_reader_fd.c — the descriptor input path against the memory path.
 *
 * Profiles arrive through pipes (`cat x.bin | ljpfold -`), in pieces of any
 * size, and every record parser must then be a clean transaction: a record
 * cut by the end of a piece is parsed again once more bytes arrived.  This
 * target delivers the input through a SOCK_SEQPACKET socket, where every
 * read() returns exactly one message, in pieces of 1 to 40 bytes chosen by a
 * generator seeded from the input (so a finding replays identically), and
 * requires the very same events, status, offset and message as reading the
 * whole buffer from memory.
 */
#include "fuzz.h"

#include "ljp.h"

#include <pthread.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_INPUT 8192

typedef struct feeder {
  int fd;
  const uint8_t *data;
  size_t size;
} feeder;

static uint32_t seed_of(const uint8_t *data, size_t size) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < size; i++)
    h = (h ^ data[i]) * 16777619u;
  return h | 1;
}

static void *feed(void *arg) {
  feeder *f = arg;
  uint32_t x = seed_of(f->data, f->size);
  size_t pos = 0;
  while (pos < f->size) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    size_t n = 1 + x % 40;
    if (n > f->size - pos)
      n = f->size - pos;
    ssize_t w = send(f->fd, f->data + pos, n, MSG_NOSIGNAL);
    if (w <= 0)
      break;
    pos += (size_t)w;
  }
  close(f->fd);
  return NULL;
}

typedef struct outcome {
  uint64_t events, digest;
  ljp_status st;
  uint64_t err_off;
  char err[256];
} outcome;

static void drain(ljp_reader *r, outcome *o) {
  const ljp_event *ev;
  memset(o, 0, sizeof(*o));
  o->digest = 1469598103934665603ULL;
  while ((o->st = ljp_reader_next(r, &ev)) == LJP_OK) {
    o->events++;
    uint64_t v = ev->offset * 16 + (uint64_t)ev->type;
    if (ev->type == LJP_EV_SAMPLE)
      v += ev->u.sample.lua_count * 131 + ev->u.sample.host_count * 7;
    o->digest = (o->digest ^ v) * 1099511628211ULL;
  }
  o->err_off = ljp_reader_error_offset(r);
  snprintf(o->err, sizeof(o->err), "%s", ljp_reader_error(r));
}

static ljp_reader *new_reader(void) {
  ljp_reader *r = ljp_reader_new();
  ljp_limits lim = {FUZZ_MAX_STRING, FUZZ_MAX_FRAMES, FUZZ_MAX_SYMBOLS};
  if (r)
    FUZZ_CHECK(ljp_reader_set_limits(r, &lim) == LJP_OK);
  return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > MAX_INPUT)
    return 0;
  outcome mem, fd;
  ljp_reader *r = new_reader();
  if (!r)
    return 0;
  FUZZ_CHECK(ljp_reader_open_memory(r, data, size) == LJP_OK);
  drain(r, &mem);
  ljp_reader_free(r);

  int sv[2];
  if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) != 0)
    return 0;
  feeder f = {sv[1], data, size};
  pthread_t th;
  if (pthread_create(&th, NULL, feed, &f) != 0) {
    close(sv[0]);
    close(sv[1]);
    return 0;
  }
  r = new_reader();
  if (r) {
    FUZZ_CHECK(ljp_reader_open_fd(r, sv[0]) == LJP_OK);
    drain(r, &fd);
    ljp_reader_free(r);
  }
  /* Unblocks the feeder if the reader stopped early. */
  close(sv[0]);
  pthread_join(th, NULL);
  if (!r)
    return 0;
  if (mem.st == LJP_E_NOMEM || fd.st == LJP_E_NOMEM)
    return 0;
  if (mem.st != fd.st || mem.events != fd.events || mem.digest != fd.digest ||
      mem.err_off != fd.err_off || strcmp(mem.err, fd.err) != 0) {
    fprintf(stderr,
            "memory: status %d, %llu events, \"%s\"\n"
            "pieces: status %d, %llu events, \"%s\"\n",
            (int)mem.st, (unsigned long long)mem.events, mem.err, (int)fd.st,
            (unsigned long long)fd.events, fd.err);
    FUZZ_CHECK(!"the descriptor path disagrees with the memory path");
  }
  return 0;
}
