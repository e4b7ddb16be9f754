/*
 * fuzz_dbimport.c — ljpdb's import path: any bytes imported into a fresh
 * in-memory database (schema, transaction, savepoint, rows, index build,
 * commit), then every view queried.
 *
 * Invariants: a bad input fails the file (IMPORT_FAILED) or imports what
 * came before the cut (IMPORT_TRUNCATED) — it never breaks the database
 * (IMPORT_FATAL: a constraint or statement error is an importer bug); a
 * failed file leaves no row behind; the views answer; the sample and event
 * counts stored in profiles match the rows.
 */
#include "fuzz.h"

#include "import.h"
#include "schema.h"

#include <string.h>
#include <unistd.h>

static char path[64];

static int write_input(const uint8_t *data, size_t size) {
  if (!path[0]) {
    const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(path, sizeof(path), "%s/ljp-fuzz-db-XXXXXX", dir);
    int fd = mkstemp(path);
    if (fd < 0) {
      path[0] = 0;
      return -1;
    }
    close(fd);
  }
  FILE *f = fopen(path, "wb");
  if (!f)
    return -1;
  size_t n = fwrite(data, 1, size, f);
  return fclose(f) == 0 && n == size ? 0 : -1;
}

static long long count(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st;
  long long v = -1;
  FUZZ_CHECK(sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK);
  int rc = sqlite3_step(st);
  FUZZ_CHECK(rc == SQLITE_ROW || rc == SQLITE_DONE);
  if (rc == SQLITE_ROW)
    v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

/* A new database with the schema: copied from one made once, which is
 * many times faster than creating the schema for every input. */
static int fresh_db(sqlite3 **out) {
  static sqlite3 *tmpl;
  char err[512];
  *out = NULL;
  if (!tmpl && db_open(":memory:", DB_CREATE, &tmpl, err, sizeof(err)) != 0)
    return -1;
  sqlite3 *db;
  if (sqlite3_open(":memory:", &db) != SQLITE_OK) {
    sqlite3_close(db);
    return -1;
  }
  sqlite3_backup *b = sqlite3_backup_init(db, "main", tmpl, "main");
  int rc = b ? sqlite3_backup_step(b, -1) : SQLITE_NOMEM;
  if (b)
    sqlite3_backup_finish(b);
  if (rc != SQLITE_DONE) {
    sqlite3_close(db);
    return -1;
  }
  sqlite3_extended_result_codes(db, 1);
  *out = db;
  return 0;
}

static void cleanup(void) {
  if (path[0])
    unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int registered;
  if (!registered) {
    registered = 1;
    atexit(cleanup);
  }
  if (write_input(data, size) != 0)
    return 0;
  sqlite3 *db;
  char err[512];
  if (fresh_db(&db) != 0)
    return 0;
  static const char *const dims =
      "SELECT (SELECT count(*) FROM symbols) + (SELECT count(*) FROM "
      "call_paths) + (SELECT count(*) FROM traces) + (SELECT count(*) FROM "
      "sites)";
  long long dims_before = count(db, dims);
  importer *im = importer_begin(db, NULL, err, sizeof(err));
  if (!im) {
    sqlite3_close(db);
    return 0;
  }
  int64_t id;
  char msg[512];
  import_result res = import_file(im, path, &id, msg, sizeof(msg));
  if (res == IMPORT_FATAL && strstr(msg, "out of memory") == NULL) {
    fprintf(stderr, "import broke the database: %s\n", msg);
    FUZZ_CHECK(res != IMPORT_FATAL);
  }
  FUZZ_CHECK(res == IMPORT_OK || res == IMPORT_TRUNCATED ||
             res == IMPORT_FAILED || res == IMPORT_FATAL);
  if (res != IMPORT_OK)
    FUZZ_CHECK(msg[0] != '\0');
  if (res == IMPORT_FATAL) {
    importer_rollback(im);
    sqlite3_close(db);
    return 0;
  }
  FUZZ_CHECK(importer_commit(im, err, sizeof(err)) == 0);
  long long profiles = count(db, "SELECT count(*) FROM profiles");
  if (res == IMPORT_FAILED) {
    FUZZ_CHECK(profiles == 0);
    FUZZ_CHECK(count(db, "SELECT count(*) FROM samples") == 0);
    FUZZ_CHECK(count(db, "SELECT count(*) FROM allocations") == 0);
    FUZZ_CHECK(count(db, dims) == dims_before);
  } else {
    FUZZ_CHECK(profiles == 1);
    FUZZ_CHECK(count(db, "SELECT count(*) FROM samples") ==
               count(db, "SELECT samples FROM profiles"));
    FUZZ_CHECK(count(db, "SELECT count(*) FROM allocations") ==
               count(db, "SELECT mem_events FROM profiles"));
  }
  static const char *const views[] = {
      "call_path_stacks", "samples_view", "folded", "function_vmstates",
      "function_weights", "vmstate_totals", "allocations_view",
      "heap_summary", "live_heap", "trace_totals"};
  for (size_t i = 0; i < sizeof(views) / sizeof(views[0]); i++) {
    char sql[128];
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s", views[i]);
    FUZZ_CHECK(count(db, sql) >= 0);
  }
  sqlite3_close(db);
  return 0;
}
