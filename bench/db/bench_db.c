/*
 * bench_db.c — import rate of ljpdb on large synthetic streams.
 *
 *   bench_db [SAMPLES [EVENTS]]     (defaults: 2000000 and 2000000)
 *
 * Generates sysprof streams of SAMPLES samples (stacks drawn uniformly from
 * 4096 shapes, the worst case for the importer's caches, and with the
 * locality of real sampling) and a memprof stream of EVENTS events in a
 * temporary directory, imports each into a fresh
 * database file exactly as `ljpdb import` does (one transaction, indexes
 * after the load), and reports rows per second, with and without the index
 * build, next to the speed of merely decoding the same file, in wall-clock
 * and in CPU time (stable on a busy machine).
 */
#include "gen_stream.h"
#include "import.h"
#include "schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double cpu(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double decode_only(const char *path) {
  ljp_reader *r = ljp_reader_new();
  const ljp_event *ev;
  ljp_frame frames[64];
  double t0 = now();
  if (ljp_reader_open_path(r, path) == LJP_OK)
    while (ljp_reader_next(r, &ev) == LJP_OK)
      if (ev->type == LJP_EV_SAMPLE)
        ljp_sample_stack(&ev->u.sample, LJP_VIEW_MERGED, frames, 64);
  double t = now() - t0;
  ljp_reader_free(r);
  return t;
}

/* mode: 0 sysprof uniform stacks, 1 sysprof local stacks, 2 memprof. */
static int bench(const char *dir, int mode, uint64_t n) {
  ljp_kind kind = mode == 2 ? LJP_KIND_MEMPROF : LJP_KIND_SYSPROF;
  const char *what = kind == LJP_KIND_SYSPROF ? "samples" : "events";
  char bin[4096], dbp[4096], err[512];
  struct stat sb;
  snprintf(bin, sizeof bin, "%s/%s.bin", dir, what);
  snprintf(dbp, sizeof dbp, "%s/%s.db", dir, what);
  if (mode == 2 ? gen_stream(bin, kind, n, 12345)
                : gen_sysprof(bin, n, 12345, mode == 1)) {
    perror(bin);
    return -1;
  }
  stat(bin, &sb);
  double mb = (double)sb.st_size / 1e6;
  double tdec = decode_only(bin);

  sqlite3 *db;
  if (db_open(dbp, DB_CREATE, &db, err, sizeof err)) {
    fprintf(stderr, "bench_db: %s: %s\n", dbp, err);
    return -1;
  }
  double t0 = now(), c0 = cpu();
  importer *im = importer_begin(db, NULL, err, sizeof err);
  int64_t id;
  import_stats s;
  if (!im || import_file(im, bin, &id, err, sizeof err) != IMPORT_OK) {
    fprintf(stderr, "bench_db: %s: %s\n", bin, err);
    return -1;
  }
  importer_stats(im, &s);
  double t1 = now();
  if (importer_commit(im, err, sizeof err)) {
    fprintf(stderr, "bench_db: %s: %s\n", dbp, err);
    return -1;
  }
  double t2 = now(), c2 = cpu();
  sqlite3_close(db);
  stat(dbp, &sb);
  uint64_t rows = kind == LJP_KIND_SYSPROF ? s.samples : s.mem_events;
  printf("%-16s %9llu %s  %6.1f MB stream  decode %5.2fs (%5.2f M/s)  "
         "load %5.2fs (%5.2f M/s)  +index %5.2fs  = %5.2f M/s  db %6.1f MB  "
         "(%llu symbols, %llu call paths, %llu sites)\n"
         "%-16s cpu time %5.2fs = %5.2f M %s per cpu second\n",
         mode == 0 ? "sysprof uniform" : mode == 1 ? "sysprof local" : "memprof",
         (unsigned long long)rows, what, mb, tdec, rows / tdec / 1e6,
         t1 - t0, rows / (t1 - t0) / 1e6, t2 - t1, rows / (t2 - t0) / 1e6,
         (double)sb.st_size / 1e6, (unsigned long long)s.symbols,
         (unsigned long long)s.call_paths, (unsigned long long)s.sites,
         "", c2 - c0, rows / (c2 - c0) / 1e6, what);
  unlink(bin);
  unlink(dbp);
  return 0;
}

int main(int argc, char **argv) {
  uint64_t ns = argc > 1 ? strtoull(argv[1], NULL, 10) : 2000000;
  uint64_t ne = argc > 2 ? strtoull(argv[2], NULL, 10) : 2000000;
  const char *tmp = getenv("TMPDIR");
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/ljpdb-bench-XXXXXX", tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) {
    perror("mkdtemp");
    return 1;
  }
  int rc = bench(dir, 0, ns) || bench(dir, 1, ns) || bench(dir, 2, ne);
  rmdir(dir);
  return rc ? 1 : 0;
}
