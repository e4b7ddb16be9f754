/*
 * test_db_lazy_index.c — the index on call_paths(parent_id), which an
 * import leaves out and the first reader builds.  Readers must find it
 * built (the views that walk call paths use it), an import must drop it
 * again (it would otherwise go stale or be kept up row by row), and a
 * reader that cannot build it (read-only connection, another connection
 * holding the write lock) must get the same answers without it, and
 * without waiting.
 */
#include "helpers.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FIB "sp_c_fib_jitoff_1ms.bin"
#define CORO "sp_c_coro_jitoff_1ms.bin"

static void teardown(void) { tmp_cleanup(); }

/* The views that walk call paths (by parent and by id), every row in a
 * fixed order, as one malloc'ed string. */
static char *answers(sqlite3 *db) {
  static const char *const sql[] = {
    "SELECT id, profile_id, depth, stack FROM call_path_stacks ORDER BY id",
    "SELECT profile_id, stack, weight FROM folded ORDER BY 1, 2",
    "SELECT profile_id, stack, weight FROM folded_functions ORDER BY 1, 2",
    "SELECT profile_id, name, kind, self, total FROM function_weights "
    "ORDER BY 1, 2",
    "SELECT id, stack FROM samples_view ORDER BY id",
    NULL};
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  ck_assert_ptr_nonnull(out);
  for (const char *const *q = sql; *q; q++) {
    sqlite3_stmt *st;
    ck_assert_msg(sqlite3_prepare_v2(db, *q, -1, &st, NULL) == SQLITE_OK,
                  "%s", sqlite3_errmsg(db));
    int rc, rows = 0;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      for (int c = 0; c < sqlite3_column_count(st); c++) {
        const unsigned char *t = sqlite3_column_text(st, c);
        fprintf(out, "%s%s", c ? "\t" : "", t ? (const char *)t : "NULL");
      }
      fputc('\n', out);
      rows++;
    }
    ck_assert_msg(rc == SQLITE_DONE, "%s", sqlite3_errmsg(db));
    ck_assert_int_gt(rows, 0);
    sqlite3_finalize(st);
    fputs("--\n", out);
  }
  fclose(out);
  return buf;
}

static int64_t has_index(sqlite3 *db) {
  return q_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'index' "
                   "AND name = 'call_paths_by_parent'");
}

/* Whether the plan of the call_path_stacks walk uses the index. */
static int walk_uses_index(sqlite3 *db) {
  sqlite3_stmt *st;
  int used = 0;
  ck_assert_int_eq(sqlite3_prepare_v2(db, "EXPLAIN QUERY PLAN SELECT count(*) "
                                      "FROM call_path_stacks", -1, &st, NULL),
                   SQLITE_OK);
  while (sqlite3_step(st) == SQLITE_ROW) {
    const char *d = (const char *)sqlite3_column_text(st, 3);
    if (d && strstr(d, "call_paths_by_parent")) used = 1;
  }
  sqlite3_finalize(st);
  return used;
}

static sqlite3 *open_ro(const char *path) {
  sqlite3 *db;
  ck_assert_int_eq(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL),
                   SQLITE_OK);
  return db;
}

static void import_ok(const char *path, const char *file) {
  const char *files[] = {capture(file)};
  import_result r;
  ck_assert_int_eq(import_files(path, files, 1, &r, NULL, NULL, 0), 0);
  ck_assert_int_eq(r, IMPORT_OK);
}

START_TEST(first_reader_builds_it) {
  const char *path = tmp_file("lazy.db");
  char err[512];
  import_ok(path, FIB);
  /* Read-only: nothing is built, the answers come from a scan. */
  sqlite3 *ro = open_ro(path);
  ck_assert_int_eq(has_index(ro), 0);
  ck_assert_int_eq(db_build_lazy_indexes(ro), 0);
  ck_assert_int_eq(has_index(ro), 0);
  ck_assert_int_eq(walk_uses_index(ro), 0);
  char *without = answers(ro);
  sqlite3_close(ro);
  /* The first reader builds it, and the walk uses it. */
  sqlite3 *db;
  ck_assert_msg(db_open(path, DB_READ, &db, err, sizeof err) == 0, "%s", err);
  ck_assert_int_eq(has_index(db), 1);
  ck_assert_int_eq(walk_uses_index(db), 1);
  char *with = answers(db);
  ck_assert_str_eq(with, without);
  ck_assert_int_eq(db_build_lazy_indexes(db), 1);
  sqlite3_close(db);
  /* A second import drops it; the next reader builds it over both
   * profiles, and a read-only reader still agrees. */
  import_ok(path, CORO);
  ro = open_ro(path);
  ck_assert_int_eq(has_index(ro), 0);
  char *without2 = answers(ro);
  sqlite3_close(ro);
  ck_assert_msg(db_open(path, DB_READ, &db, err, sizeof err) == 0, "%s", err);
  ck_assert_int_eq(has_index(db), 1);
  char *with2 = answers(db);
  sqlite3_close(db);
  ck_assert_str_eq(with2, without2);
  ck_assert_int_ne(strcmp(with2, with), 0);
  free(without);
  free(with);
  free(without2);
  free(with2);
}
END_TEST

/* Another connection holds the write lock (an import in progress): a
 * reader neither waits for it nor fails, and reads the committed rows. */
START_TEST(busy_reader_does_not_wait) {
  const char *path = tmp_file("busy.db");
  char err[512];
  import_ok(path, FIB);
  sqlite3 *ro = open_ro(path);
  char *want = answers(ro);
  sqlite3_close(ro);
  sqlite3 *writer;
  ck_assert_int_eq(sqlite3_open(path, &writer), SQLITE_OK);
  ck_assert_int_eq(sqlite3_exec(writer, "BEGIN IMMEDIATE", NULL, NULL, NULL),
                   SQLITE_OK);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  sqlite3 *db;
  ck_assert_msg(db_open(path, DB_READ, &db, err, sizeof err) == 0, "%s", err);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double waited = (double)(t1.tv_sec - t0.tv_sec) +
                  (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
  ck_assert_msg(waited < 2.0, "db_open waited %.2f s for the write lock",
                waited);
  ck_assert_int_eq(has_index(db), 0);
  char *got = answers(db);
  ck_assert_str_eq(got, want);
  ck_assert_int_eq(sqlite3_exec(writer, "ROLLBACK", NULL, NULL, NULL),
                   SQLITE_OK);
  sqlite3_close(writer);
  /* Once the lock is free, the next reader builds it. */
  ck_assert_int_eq(db_build_lazy_indexes(db), 1);
  ck_assert_int_eq(has_index(db), 1);
  sqlite3_close(db);
  free(want);
  free(got);
}
END_TEST

/* The command line: a query builds it on the way. */
START_TEST(cli_query_builds_it) {
  const char *path = tmp_file("cli.db");
  import_ok(path, FIB);
  ck_assert_int_eq(run("'%s' query '%s' 'SELECT count(*) FROM folded' "
                       ">/dev/null", LJPDB_BIN, path), 0);
  sqlite3 *ro = open_ro(path);
  ck_assert_int_eq(has_index(ro), 1);
  sqlite3_close(ro);
}
END_TEST

int main(void) {
  Suite *s = suite_create("ljpdb lazy index");
  TCase *tc = tcase_create("lazy");
  tcase_set_timeout(tc, 120);
  tcase_add_checked_fixture(tc, NULL, teardown);
  tcase_add_test(tc, first_reader_builds_it);
  tcase_add_test(tc, busy_reader_does_not_wait);
  tcase_add_test(tc, cli_query_builds_it);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
