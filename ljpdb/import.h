/*
 * import.h — loading profile files into an ljpdb database.
 *
 * One importer runs one transaction over any number of files: begin, then
 * import_file() per file (each inside a savepoint, so a bad file leaves no
 * row behind and the others still go in), then commit or rollback.  Until
 * the commit nothing is visible to readers, and a killed process leaves the
 * database as it was (SQLite's rollback journal undoes the partial write).
 * Nothing here prints: results and messages go back to the caller.
 */
#ifndef LJPDB_IMPORT_H
#define LJPDB_IMPORT_H

#include <signal.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "ljp.h"

typedef struct importer importer;

/* Called now and then while a file is read: bytes consumed of total. */
typedef void (*import_progress_fn)(void *ctx, uint64_t done, uint64_t total);

typedef struct import_options {
  const char *label;       /* NULL: the file name without directory and
                              extension ("stdin" for "-") */
  int replace;             /* re-import a file already in the database */
  import_progress_fn progress;
  void *progress_ctx;
  volatile sig_atomic_t *stop; /* set by a signal handler: stop, roll back */
  const ljp_limits *limits;    /* reader limits; NULL: libljp's defaults */
  ljp_srcnames *sources;       /* function names from Lua sources (stored in
                                  symbols.function), or NULL for none */
  int hash_late;           /* tests: hash beside the import even when a
                              profile of the file's size exists, so the
                              already-imported check runs at the end */
} import_options;

typedef enum import_result {
  IMPORT_OK = 0,           /* imported, complete */
  IMPORT_TRUNCATED = 1,    /* imported up to where the input stops
                              (complete = 0 in profiles) */
  IMPORT_SKIPPED = 2,      /* already in the database (same sha256) */
  IMPORT_FAILED = 3,       /* bad or unreadable input: nothing written */
  IMPORT_FATAL = 4,        /* database error: the transaction is lost */
  IMPORT_INTERRUPTED = 5   /* *stop was set */
} import_result;

/* Starts the transaction (waits for other writers) and prepares the
 * statements; NULL on failure with the message in err. */
importer *importer_begin(sqlite3 *db, const import_options *opt, char *err,
                         size_t errlen);

/* Imports one file ("-" = standard input).  msg receives the diagnostic of
 * every result but IMPORT_OK ("offset 123: ..." for input faults, the
 * existing profile for IMPORT_SKIPPED).  *profile_id is the id given. */
import_result import_file(importer *im, const char *path, int64_t *profile_id,
                          char *msg, size_t msglen);

/* Builds the indexes and commits; non-zero with err on failure (then the
 * transaction is rolled back).  Both free the importer. */
int importer_commit(importer *im, char *err, size_t errlen);
void importer_rollback(importer *im);

/* Rows imported by the last import_file() (for the benchmark). */
typedef struct import_stats {
  uint64_t samples, mem_events, symbols, call_paths, sites;
} import_stats;
void importer_stats(const importer *im, import_stats *out);

#endif
