/*
 * output.h — printing result rows: TSV (default), CSV, JSON, aligned table.
 *
 * TSV follows sqlite3 -tabs, but escapes what would break the format
 * (\t \n \r \\ inside values), so one line is always one row.  CSV quotes per
 * RFC 4180.  JSON is an array of objects per statement, as sqlite3 -json.
 * The table buffers its rows to size the columns; numbers align right.
 */
#ifndef LJPDB_OUTPUT_H
#define LJPDB_OUTPUT_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdio.h>

typedef enum out_format { OUT_TSV, OUT_CSV, OUT_JSON, OUT_TABLE } out_format;

typedef struct out_options {
  out_format format;
  int header;              /* 1 on, 0 off, -1 the format's default (TSV: off;
                              CSV and table: on; JSON always names columns) */
} out_options;

/* Steps st to the end, printing its rows; st is reset, not finalized.
 * Returns 0, or -1 with the SQLite message in err. */
int out_statement(sqlite3 *db, sqlite3_stmt *st, const out_options *o,
                  FILE *out, char *err, size_t errlen);

/* Runs every statement of sql in turn, printing the rows of those that
 * return any columns.  Returns 0, or -1 with the message in err. */
int out_sql(sqlite3 *db, const char *sql, const out_options *o, FILE *out,
            char *err, size_t errlen);

#endif
