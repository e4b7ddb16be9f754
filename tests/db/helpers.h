/*
 * helpers.h — small utilities shared by the ljpdb tests.
 */
#ifndef LJPDB_TEST_HELPERS_H
#define LJPDB_TEST_HELPERS_H

#include "import.h"
#include "ljp.h"
#include "schema.h"

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

/* A fresh temporary directory for this process; removed by tmp_cleanup(). */
const char *tmp_dir(void);
void tmp_cleanup(void);
/* tmp_dir()/name in a static rotating buffer. */
const char *tmp_file(const char *name);
/* LJP_TESTDATA/captures/<rel>. */
const char *capture(const char *rel);

/* The first column of the first row of a printf-style query; -1 on error. */
int64_t q_int(sqlite3 *db, const char *fmt, ...);
/* Same, as a malloc'ed string (NULL on error or NULL value). */
char *q_text(sqlite3 *db, const char *fmt, ...);

/* Imports files into db (created if needed) in one transaction; results[i]
 * receives each result, ids[i] the profile ids.  Returns 0 when the
 * transaction committed. */
int import_files(const char *dbpath, const char *const *files, size_t n,
                 import_result *results, int64_t *ids, const char *label,
                 int replace);

/* Writes len bytes to path; copies the first len bytes of src (len =
 * (size_t)-1: all of it, then appends extra). */
void write_bytes(const char *path, const void *data, size_t len);
void copy_prefix(const char *src, const char *dst, size_t len,
                 const void *extra, size_t extra_len);
size_t file_size(const char *path);

/* Counts of one capture from index.tsv (captures or captures/old). */
typedef struct capture_counts {
  char name[128];
  char kind[16];
  char counts[512];        /* the "counts" column */
} capture_counts;
size_t read_index(capture_counts *out, size_t cap);
/* The value of "key=N" in a counts string; -1 when absent. */
int64_t count_of(const char *counts, const char *key);

/* Runs a shell command line; returns its exit status (or 128 + signal). */
int run(const char *fmt, ...);

#endif
