/* helpers.c — utilities shared by the ljpdb tests. */
#define _XOPEN_SOURCE 700
#include "helpers.h"

#include <ftw.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[4096];

const char *tmp_dir(void) {
  if (!dir[0]) {
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/ljpdb-test-XXXXXX", t ? t : "/tmp");
    if (!mkdtemp(dir)) {
      perror("mkdtemp");
      exit(1);
    }
  }
  return dir;
}

static int rm_one(const char *p, const struct stat *sb, int flag,
                  struct FTW *ftw) {
  (void)sb, (void)flag, (void)ftw;
  return remove(p);
}

void tmp_cleanup(void) {
  if (dir[0]) nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
  dir[0] = 0;
}

const char *tmp_file(const char *name) {
  static char buf[8][4096];
  static int k;
  char *b = buf[k++ % 8];
  /* A path too long for the buffer would name another file: none at all. */
  if (snprintf(b, 4096, "%s/%s", tmp_dir(), name) >= 4096) b[0] = 0;
  return b;
}

const char *capture(const char *rel) {
  static char buf[8][4096];
  static int k;
  char *b = buf[k++ % 8];
  snprintf(b, 4096, "%s/captures/%s", LJP_TESTDATA, rel);
  return b;
}

static sqlite3_stmt *prep(sqlite3 *db, const char *fmt, va_list ap) {
  char *sql = sqlite3_vmprintf(fmt, ap);
  sqlite3_stmt *st = NULL;
  if (sql && sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
    fprintf(stderr, "SQL error: %s\n  in: %s\n", sqlite3_errmsg(db), sql);
    st = NULL;
  }
  sqlite3_free(sql);
  return st;
}

int64_t q_int(sqlite3 *db, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sqlite3_stmt *st = prep(db, fmt, ap);
  va_end(ap);
  int64_t v = -1;
  if (st && sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

char *q_text(sqlite3 *db, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  sqlite3_stmt *st = prep(db, fmt, ap);
  va_end(ap);
  char *s = NULL;
  if (st && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
    s = strdup((const char *)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  return s;
}

int import_files(const char *dbpath, const char *const *files, size_t n,
                 import_result *results, int64_t *ids, const char *label,
                 int replace) {
  sqlite3 *db;
  char err[1024];
  import_options o = {0};
  o.label = label;
  o.replace = replace;
  if (db_open(dbpath, DB_CREATE, &db, err, sizeof err)) {
    fprintf(stderr, "%s: %s\n", dbpath, err);
    return -1;
  }
  importer *im = importer_begin(db, &o, err, sizeof err);
  if (!im) {
    fprintf(stderr, "%s: %s\n", dbpath, err);
    sqlite3_close(db);
    return -1;
  }
  for (size_t i = 0; i < n; i++) {
    int64_t id = 0;
    results[i] = import_file(im, files[i], &id, err, sizeof err);
    if (ids) ids[i] = id;
    if (results[i] != IMPORT_OK)
      fprintf(stderr, "(expected in some tests) %s: %s\n", files[i], err);
  }
  int rc = importer_commit(im, err, sizeof err);
  if (rc) fprintf(stderr, "%s: commit: %s\n", dbpath, err);
  sqlite3_close(db);
  return rc;
}

void write_bytes(const char *path, const void *data, size_t len) {
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, 1, len, f) != len || fclose(f)) {
    perror(path);
    exit(1);
  }
}

size_t file_size(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0 ? (size_t)sb.st_size : 0;
}

void copy_prefix(const char *src, const char *dst, size_t len,
                 const void *extra, size_t extra_len) {
  size_t size = file_size(src);
  if (len > size) len = size;
  char *buf = malloc(len + extra_len + 1);
  FILE *f = fopen(src, "rb");
  if (!buf || !f || fread(buf, 1, len, f) != len) {
    perror(src);
    exit(1);
  }
  fclose(f);
  if (extra_len) memcpy(buf + len, extra, extra_len);
  write_bytes(dst, buf, len + extra_len);
  free(buf);
}

/* Column index of name in a tab-separated header line. */
static int column(const char *header, const char *name) {
  int col = 0;
  size_t n = strlen(name);
  for (const char *p = header; *p; col++) {
    const char *e = strchr(p, '\t');
    size_t len = e ? (size_t)(e - p) : strcspn(p, "\n");
    if (len == n && strncmp(p, name, n) == 0) return col;
    if (!e) break;
    p = e + 1;
  }
  return -1;
}

static void field(const char *line, int col, char *out, size_t cap) {
  const char *p = line;
  for (int i = 0; i < col && p; i++) {
    p = strchr(p, '\t');
    if (p) p++;
  }
  out[0] = 0;
  if (!p) return;
  size_t len = strcspn(p, "\t\n");
  snprintf(out, cap, "%.*s", (int)len, p);
}

static size_t read_one_index(const char *path, capture_counts *out,
                             size_t cap) {
  FILE *f = fopen(path, "r");
  char line[8192];
  int cname = -1, ckind = -1, ccounts = -1;
  size_t n = 0;
  if (!f) return 0;
  while (fgets(line, sizeof line, f)) {
    if (line[0] == '#' || line[0] == '\n') continue;
    if (strncmp(line, "capture\t", 8) == 0) {
      cname = column(line, "capture");
      ckind = column(line, "kind");
      ccounts = column(line, "counts");
      continue;
    }
    if (cname < 0 || n == cap) continue;
    field(line, cname, out[n].name, sizeof out[n].name);
    field(line, ckind, out[n].kind, sizeof out[n].kind);
    field(line, ccounts, out[n].counts, sizeof out[n].counts);
    n++;
  }
  fclose(f);
  return n;
}

size_t read_index(capture_counts *out, size_t cap) {
  size_t n = read_one_index(capture("index.tsv"), out, cap);
  return n + read_one_index(capture("old/index.tsv"), out + n, cap - n);
}

int64_t count_of(const char *counts, const char *key) {
  size_t n = strlen(key);
  for (const char *p = counts; *p;) {
    p += strspn(p, " ,:");
    if (strncmp(p, key, n) == 0 && p[n] == '=') return strtoll(p + n + 1, NULL, 10);
    p += strcspn(p, " ,:");
  }
  return -1;
}

int run(const char *fmt, ...) {
  char cmd[8192];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(cmd, sizeof cmd, fmt, ap);
  va_end(ap);
  int st = system(cmd);
  if (st == -1) return -1;
  if (WIFSIGNALED(st)) return 128 + WTERMSIG(st);
  return WEXITSTATUS(st);
}
