/*
 * schema.h — the ljpdb database schema and opening a database safely.
 *
 * PRAGMA application_id marks a file as an ljpdb database and PRAGMA
 * user_version carries the schema version.  A database of another version is
 * refused with a message, never read or extended with mixed layouts.
 */
#ifndef LJPDB_SCHEMA_H
#define LJPDB_SCHEMA_H

#include <sqlite3.h>
#include <stddef.h>

#define LJPDB_SCHEMA_VERSION 3 /* 2: x1 times, coroutines, timer;
                                  3: symbols.function, traces rolled up */
#define LJPDB_APPLICATION_ID 0x4C4A5044 /* "LJPD" */

/* Tables with their fixed rows, views, and the indexes built after a bulk
 * load; each a sequence of SQL statements. */
extern const char *const ljpdb_schema_tables[];
extern const char *const ljpdb_schema_views[];
extern const char *const ljpdb_schema_indexes[];
/* The indexes only readers need, built by the first one after an import
 * (db_build_lazy_indexes), not by the import. */
extern const char *const ljpdb_schema_lazy_indexes[];
/* Drops the indexes of both lists (before a bulk load). */
extern const char *const ljpdb_schema_drop_indexes[];

typedef enum db_mode {
  DB_READ = 0,             /* must exist and be an ljpdb database */
  DB_CREATE = 1            /* created with the schema when new or empty */
} db_mode;

/* Runs each statement of a NULL-terminated list; non-zero on failure with
 * the message in err. */
int db_exec_all(sqlite3 *db, const char *const *sql, char *err,
                size_t errlen);

/* Builds the lazy indexes when they are missing and the database can be
 * written without waiting.  1: they exist; 0: not built (read-only, or
 * another connection holds the write lock); -1: cannot read the schema. */
int db_build_lazy_indexes(sqlite3 *db);

/* Opens path and checks its identity and version; DB_READ then builds the
 * lazy indexes when it can.  On failure returns non-zero with a message in
 * err (without the file name) and *out NULL. */
int db_open(const char *path, db_mode mode, sqlite3 **out, char *err,
            size_t errlen);

#endif
