/*
 * batch.h — rows of integers inserted many to a statement.
 *
 * A prepared single-row INSERT costs SQLite a cursor open, a seek to the
 * table's end and a halt per row; a statement of many VALUES rows pays
 * them once per batch (measured: about half the cost of a samples row).
 * The fact tables (samples, call_paths, allocations) are integers and
 * NULLs only, so rows wait here as cells and go in when the batch fills
 * or is flushed.  Rows go in in the order they were added, so rowids
 * given by SQLite are the same as row by row.
 */
#ifndef LJPDB_BATCH_H
#define LJPDB_BATCH_H

#include <sqlite3.h>
#include <stdint.h>

typedef struct batch_cell {
  int64_t v;
  int null;                /* 1: SQL NULL (v unused) */
} batch_cell;

typedef struct row_batch {
  sqlite3_stmt *many;      /* INSERT of cap rows */
  sqlite3_stmt *one;       /* INSERT of one row: the rest at a flush */
  batch_cell *cells;       /* cap * cols */
  unsigned cols, cap, n;   /* n rows waiting */
} row_batch;

/* Prepares "<insert> VALUES (?,..),(?,..)..." for cap rows of cols
 * columns (insert: "INSERT INTO t (a, b)").  0, or an SQLite error code
 * (SQLITE_NOMEM when the cells cannot be allocated). */
int batch_open(row_batch *b, sqlite3 *db, const char *insert, unsigned cols,
               unsigned cap);
void batch_close(row_batch *b);

/* The cells of a new row, to be filled in; NULL when the batch is full
 * (flush it first). */
batch_cell *batch_row(row_batch *b);

/* Inserts the waiting rows.  0, or the SQLite error code (then the rows
 * are dropped: the caller rolls back). */
int batch_flush(row_batch *b);

/* Drops the waiting rows (a file that is rolled back). */
void batch_discard(row_batch *b);

#endif
