/* batch.c — many rows per INSERT (see batch.h). */
#include "batch.h"

#include <stdlib.h>
#include <string.h>

/* "<insert> VALUES (?,?),(?,?)" for rows rows; NULL when out of memory. */
static char *values_sql(const char *insert, unsigned cols, unsigned rows) {
  size_t n = strlen(insert), len = n + 8 + (size_t)rows * (cols * 2 + 2);
  char *s = malloc(len + 1), *p = s;
  if (!s) return NULL;
  memcpy(p, insert, n);
  memcpy(p += n, " VALUES ", 8);
  p += 8;
  for (unsigned r = 0; r < rows; r++) {
    *p++ = r ? ',' : '(';
    if (r) *p++ = '(';
    for (unsigned c = 0; c < cols; c++) {
      if (c) *p++ = ',';
      *p++ = '?';
    }
    *p++ = ')';
  }
  *p = 0;
  return s;
}

static int prepare(sqlite3 *db, const char *insert, unsigned cols,
                   unsigned rows, sqlite3_stmt **out) {
  char *sql = values_sql(insert, cols, rows);
  if (!sql) return SQLITE_NOMEM;
  int rc = sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, out,
                              NULL);
  free(sql);
  return rc;
}

int batch_open(row_batch *b, sqlite3 *db, const char *insert, unsigned cols,
               unsigned cap) {
  memset(b, 0, sizeof *b);
  b->cols = cols;
  b->cap = cap ? cap : 1;
  b->cells = calloc((size_t)b->cap * cols, sizeof *b->cells);
  if (!b->cells) return SQLITE_NOMEM;
  int rc = prepare(db, insert, cols, 1, &b->one);
  if (rc == SQLITE_OK && b->cap > 1)
    rc = prepare(db, insert, cols, b->cap, &b->many);
  return rc;
}

void batch_close(row_batch *b) {
  sqlite3_finalize(b->many);
  sqlite3_finalize(b->one);
  free(b->cells);
  memset(b, 0, sizeof *b);
}

batch_cell *batch_row(row_batch *b) {
  if (b->n == b->cap) return NULL;
  return b->cells + (size_t)b->n++ * b->cols;
}

static void bind_cells(sqlite3_stmt *st, const batch_cell *c, unsigned n) {
  for (unsigned i = 0; i < n; i++) {
    if (c[i].null)
      sqlite3_bind_null(st, (int)i + 1);
    else
      sqlite3_bind_int64(st, (int)i + 1, c[i].v);
  }
}

static int run(sqlite3_stmt *st) {
  int rc = sqlite3_step(st);
  sqlite3_reset(st);
  return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

int batch_flush(row_batch *b) {
  unsigned n = b->n;
  int rc = SQLITE_OK;
  b->n = 0;
  if (n == b->cap && b->many) {
    bind_cells(b->many, b->cells, n * b->cols);
    return run(b->many);
  }
  for (unsigned r = 0; r < n && rc == SQLITE_OK; r++) {
    bind_cells(b->one, b->cells + (size_t)r * b->cols, b->cols);
    rc = run(b->one);
  }
  return rc;
}

void batch_discard(row_batch *b) {
  b->n = 0;
  if (b->many) sqlite3_reset(b->many);
  if (b->one) sqlite3_reset(b->one);
}
