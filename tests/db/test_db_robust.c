/*
 * test_db_robust.c — what must hold when things go wrong: bad and truncated
 * input, duplicates, interrupted imports (flag, SIGINT, SIGKILL), databases
 * of another schema version; and the command line's exit statuses.
 */
#include "gen_stream.h"
#include "helpers.h"

#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FIB "sp_c_fib_jitoff_1ms.bin"
#define FIB_SAMPLES 150
#define BASIC "mp_basic_jitoff.bin"
#define BASIC_EVENTS 22136

static void teardown(void) { tmp_cleanup(); }

static sqlite3 *open_ok(const char *path) {
  sqlite3 *db;
  char err[512];
  ck_assert_msg(db_open(path, DB_READ, &db, err, sizeof err) == 0, "%s", err);
  return db;
}

/* Rows of any table that belong to no profile (row 0 aside). */
static int64_t orphans(sqlite3 *db) {
  static const char *const t[] = {"samples", "allocations", "call_paths",
                                  "symbols", "traces", "sites"};
  int64_t n = 0;
  for (size_t i = 0; i < 6; i++)
    n += q_int(db, "SELECT count(*) FROM %s WHERE id <> 0 AND profile_id NOT "
                   "IN (SELECT id FROM profiles)", t[i]);
  return n;
}

START_TEST(duplicate_is_skipped_or_replaced) {
  const char *db_path = tmp_file("dup.db");
  const char *a[] = {capture(FIB), capture(FIB)};
  import_result r[2];
  int64_t id[2];
  ck_assert_int_eq(import_files(db_path, a, 2, r, id, NULL, 0), 0);
  ck_assert_int_eq(r[0], IMPORT_OK);
  ck_assert_int_eq(r[1], IMPORT_SKIPPED);
  ck_assert_int_eq(id[1], id[0]);

  /* The same bytes under another name are the same profile. */
  const char *copy = tmp_file("renamed.bin");
  copy_prefix(capture(FIB), copy, (size_t)-1, NULL, 0);
  const char *b[] = {copy};
  ck_assert_int_eq(import_files(db_path, b, 1, r, id, NULL, 0), 0);
  ck_assert_int_eq(r[0], IMPORT_SKIPPED);

  sqlite3 *db = open_ok(db_path);
  int64_t symbols = q_int(db, "SELECT count(*) FROM symbols");
  int64_t paths = q_int(db, "SELECT count(*) FROM call_paths");
  sqlite3_close(db);

  /* --replace: same id, new label, no rows left from the old import. */
  ck_assert_int_eq(import_files(db_path, b, 1, r, id, "again", 1), 0);
  ck_assert_int_eq(r[0], IMPORT_OK);
  ck_assert_int_eq(id[0], 1);
  db = open_ok(db_path);
  ck_assert_int_eq(q_int(db, "SELECT count(*) FROM profiles"), 1);
  char *label = q_text(db, "SELECT label FROM profiles WHERE id = 1");
  ck_assert_str_eq(label, "again");
  free(label);
  ck_assert_int_eq(q_int(db, "SELECT sum(weight) FROM samples"), FIB_SAMPLES);
  ck_assert_int_eq(q_int(db, "SELECT count(*) FROM symbols"), symbols);
  ck_assert_int_eq(q_int(db, "SELECT count(*) FROM call_paths"), paths);
  ck_assert_int_eq(orphans(db), 0);
  sqlite3_close(db);
}
END_TEST

/* The stacks of a profile's samples, weights summed per stack, one line
 * each: what its call_path_id values mean. */
static char *stacks_of(sqlite3 *db, int64_t id) {
  return q_text(db, "SELECT group_concat(stack || ' ' || w, char(10)) FROM "
                    "(SELECT c.stack, sum(s.weight) AS w FROM samples s "
                    "JOIN call_path_stacks c ON c.id = s.call_path_id "
                    "AND c.profile_id IN (0, s.profile_id) "
                    "WHERE s.profile_id = %lld "
                    "GROUP BY c.stack ORDER BY c.stack)", (long long)id);
}

/* Call path ids are left to SQLite when they are the ones it gives, and
 * given explicitly when they are not (after a replaced profile or a rolled
 * back file): either way every sample names its own stack. */
START_TEST(call_path_ids_survive_replace_and_rollback) {
  const char *fresh = tmp_file("ids-fresh.db");
  const char *mixed = tmp_file("ids-mixed.db");
  const char *bad = tmp_file("ids-bad.bin");
  copy_prefix(capture(FIB), bad, (size_t)-1, "\x55", 1);
  const char *one[] = {capture(FIB)};
  const char *two[] = {bad, capture(FIB)};
  import_result r[2];
  int64_t id[2];
  ck_assert_int_eq(import_files(fresh, one, 1, r, id, NULL, 0), 0);
  ck_assert_int_eq(r[0], IMPORT_OK);
  sqlite3 *db = open_ok(fresh);
  char *want = stacks_of(db, id[0]);
  int64_t paths = q_int(db, "SELECT count(*) FROM call_paths");
  sqlite3_close(db);
  ck_assert_ptr_nonnull(want);
  ck_assert_int_gt(paths, 10);

  /* The bad file's rows are rolled back after its call paths were made. */
  ck_assert_int_eq(import_files(mixed, two, 2, r, id, NULL, 0), 0);
  ck_assert_int_eq(r[0], IMPORT_FAILED);
  ck_assert_int_eq(r[1], IMPORT_OK);
  db = open_ok(mixed);
  char *got = stacks_of(db, id[1]);
  ck_assert_str_eq(got, want);
  ck_assert_int_eq(q_int(db, "SELECT count(*) FROM call_paths"), paths);
  free(got);
  sqlite3_close(db);

  /* Replaced: the table ends below the ids the importer counts on. */
  ck_assert_int_eq(import_files(fresh, one, 1, r, id, NULL, 1), 0);
  ck_assert_int_eq(r[0], IMPORT_OK);
  db = open_ok(fresh);
  got = stacks_of(db, id[0]);
  ck_assert_str_eq(got, want);
  ck_assert_int_eq(q_int(db, "SELECT count(*) FROM call_paths"), paths);
  ck_assert_int_eq(orphans(db), 0);
  free(got);
  free(want);
  sqlite3_close(db);
}
END_TEST

START_TEST(bad_files_write_nothing_and_others_go_in) {
  const char *db_path = tmp_file("bad.db");
  const char *garbage = tmp_file("garbage.bin");
  const char *empty = tmp_file("empty.bin");
  const char *cut_symtab = tmp_file("cut_symtab.bin");
  const char *trailing = tmp_file("trailing.bin");
  write_bytes(garbage, "this is not a profile\n", 22);
  write_bytes(empty, "", 0);
  copy_prefix(capture(FIB), cut_symtab, 1000, NULL, 0);
  copy_prefix(capture(BASIC), trailing, (size_t)-1, "\x01", 1);
  const char *files[] = {garbage,        capture(FIB),   empty,
                         tmp_file("no-such-file.bin"), cut_symtab,
                         capture(BASIC), trailing,       tmp_dir()};
  import_result r[8];
  ck_assert_int_eq(import_files(db_path, files, 8, r, NULL, NULL, 0), 0);
  const import_result want[8] = {IMPORT_FAILED, IMPORT_OK,     IMPORT_FAILED,
                                 IMPORT_FAILED, IMPORT_FAILED, IMPORT_OK,
                                 IMPORT_FAILED, IMPORT_FAILED};
  for (int i = 0; i < 8; i++)
    ck_assert_msg(r[i] == want[i], "file %d: %d", i, r[i]);
  sqlite3 *db = open_ok(db_path);
  ck_assert_int_eq(q_int(db, "SELECT count(*) FROM profiles"), 2);
  /* Profile ids stay dense: failed files took none. */
  ck_assert_int_eq(q_int(db, "SELECT max(id) FROM profiles"), 2);
  ck_assert_int_eq(q_int(db, "SELECT sum(weight) FROM samples"), FIB_SAMPLES);
  ck_assert_int_eq(q_int(db, "SELECT count(*) FROM allocations"),
                   BASIC_EVENTS);
  ck_assert_int_eq(orphans(db), 0);
  sqlite3_close(db);
}
END_TEST

START_TEST(bad_file_message_names_the_offset) {
  const char *db_path = tmp_file("msg.db");
  const char *trailing = tmp_file("trailing.bin");
  copy_prefix(capture(FIB), trailing, (size_t)-1, "\x55", 1);
  sqlite3 *db;
  char err[1024];
  ck_assert_int_eq(db_open(db_path, DB_CREATE, &db, err, sizeof err), 0);
  importer *im = importer_begin(db, NULL, err, sizeof err);
  int64_t id;
  ck_assert_int_eq(import_file(im, trailing, &id, err, sizeof err),
                   IMPORT_FAILED);
  char want[64];
  snprintf(want, sizeof want, "offset %zu", file_size(trailing) - 1);
  ck_assert_msg(strstr(err, want) != NULL, "message: %s", err);
  importer_rollback(im);
  sqlite3_close(db);
}
END_TEST

/* Samples a reader returns from path before it stops. */
static int64_t samples_before_end(const char *path, ljp_status *end) {
  ljp_reader *r = ljp_reader_new();
  const ljp_event *ev;
  int64_t n = 0;
  ck_assert_int_eq(ljp_reader_open_path(r, path), LJP_OK);
  while ((*end = ljp_reader_next(r, &ev)) == LJP_OK)
    n += ev->type == LJP_EV_SAMPLE;
  ljp_reader_free(r);
  return n;
}

START_TEST(truncated_stream_is_kept_as_incomplete) {
  const char *db_path = tmp_file("trunc.db");
  const char *cut = tmp_file("cut.bin");
  copy_prefix(capture(FIB), cut, file_size(capture(FIB)) - 300, NULL, 0);
  ljp_status end;
  int64_t want = samples_before_end(cut, &end);
  ck_assert_int_eq(end, LJP_E_TRUNCATED);
  ck_assert_int_gt(want, 0);
  ck_assert_int_lt(want, FIB_SAMPLES);
  const char *files[] = {cut};
  import_result r;
  ck_assert_int_eq(import_files(db_path, files, 1, &r, NULL, NULL, 0), 0);
  ck_assert_int_eq(r, IMPORT_TRUNCATED);
  sqlite3 *db = open_ok(db_path);
  ck_assert_int_eq(q_int(db, "SELECT complete FROM profiles"), 0);
  ck_assert_int_eq(q_int(db, "SELECT count(*) FROM profiles WHERE error "
                             "LIKE 'offset %%'"), 1);
  ck_assert_int_eq(q_int(db, "SELECT sum(weight) FROM samples"), want);
  ck_assert_int_eq(q_int(db, "SELECT samples FROM profiles"), want);
  sqlite3_close(db);
}
END_TEST

START_TEST(stop_flag_rolls_everything_back) {
  const char *db_path = tmp_file("stop.db");
  const char *first[] = {capture(FIB)};
  import_result r;
  ck_assert_int_eq(import_files(db_path, first, 1, &r, NULL, NULL, 0), 0);

  volatile sig_atomic_t stop = 0;
  import_options o = {0};
  o.stop = &stop;
  sqlite3 *db;
  char err[512];
  int64_t id;
  ck_assert_int_eq(db_open(db_path, DB_CREATE, &db, err, sizeof err), 0);
  importer *im = importer_begin(db, &o, err, sizeof err);
  ck_assert_int_eq(import_file(im, capture(BASIC), &id, err, sizeof err),
                   IMPORT_OK);
  stop = 1;
  ck_assert_int_eq(import_file(im, capture("sp_c_coro_jitoff_1ms.bin"), &id,
                               err, sizeof err),
                   IMPORT_INTERRUPTED);
  importer_rollback(im);
  sqlite3_close(db);

  db = open_ok(db_path);
  ck_assert_int_eq(q_int(db, "SELECT count(*) FROM profiles"), 1);
  ck_assert_int_eq(q_int(db, "SELECT count(*) FROM allocations"), 0);
  ck_assert_int_eq(q_int(db, "SELECT sum(weight) FROM samples"), FIB_SAMPLES);
  sqlite3_close(db);
}
END_TEST

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  while (nanosleep(&ts, &ts) && errno == EINTR) {}
}

/* Starts `ljpdb import db big`, waits until its transaction has written
 * (the rollback journal exists) and a little more, sends sig; returns the
 * wait status. */
static int import_and_signal(const char *db_path, const char *big, int sig) {
  char journal[4096];
  snprintf(journal, sizeof journal, "%s-journal", db_path);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    freopen("/dev/null", "w", stderr);
    execl(LJPDB_BIN, "ljpdb", "import", db_path, big, (char *)NULL);
    _exit(127);
  }
  int status, seen = 0;
  for (int i = 0; i < 60000 && !seen; i++) {
    struct stat sb;
    seen = stat(journal, &sb) == 0;
    ck_assert_msg(waitpid(pid, &status, WNOHANG) == 0,
                  "import ended before it could be interrupted");
    if (!seen) sleep_ms(1);
  }
  ck_assert_msg(seen, "no journal appeared");
  sleep_ms(200);
  ck_assert_msg(waitpid(pid, &status, WNOHANG) == 0,
                "import ended before it could be interrupted");
  kill(pid, sig);
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  return status;
}

START_TEST(interrupted_import_leaves_database_as_it_was) {
  const char *db_path = tmp_file("kill.db");
  const char *big = tmp_file("big.bin");
  ck_assert_int_eq(run("'%s' import '%s' '%s'", LJPDB_BIN, db_path,
                       capture(FIB)), 0);
  ck_assert_int_eq(gen_sysprof(big, 1500000, 7, 0), 0);

  /* SIGINT: the import stops itself, rolls back, exits 1. */
  int status = import_and_signal(db_path, big, SIGINT);
  ck_assert(WIFEXITED(status));
  ck_assert_int_eq(WEXITSTATUS(status), 1);
  sqlite3 *db = open_ok(db_path);
  ck_assert_int_eq(q_int(db, "SELECT count(*) FROM profiles"), 1);
  ck_assert_int_eq(q_int(db, "SELECT count(*) FROM samples"), FIB_SAMPLES);
  sqlite3_close(db);

  /* SIGKILL: nothing runs; SQLite's journal undoes the partial write when
   * the database is next opened. */
  status = import_and_signal(db_path, big, SIGKILL);
  ck_assert(WIFSIGNALED(status));
  db = open_ok(db_path);
  char *ok = q_text(db, "PRAGMA integrity_check");
  ck_assert_str_eq(ok, "ok");
  free(ok);
  ck_assert_int_eq(q_int(db, "SELECT count(*) FROM profiles"), 1);
  ck_assert_int_eq(q_int(db, "SELECT count(*) FROM samples"), FIB_SAMPLES);
  ck_assert_int_eq(orphans(db), 0);
  sqlite3_close(db);

  /* And the database still takes imports. */
  ck_assert_int_eq(run("'%s' import '%s' '%s'", LJPDB_BIN, db_path,
                       capture(BASIC)), 0);
}
END_TEST

START_TEST(other_schema_versions_are_refused) {
  const char *db_path = tmp_file("ver.db");
  sqlite3 *db;
  char err[512];
  ck_assert_int_eq(db_open(db_path, DB_CREATE, &db, err, sizeof err), 0);
  char sql[64], want[64];
  snprintf(sql, sizeof sql, "PRAGMA user_version = %d", LJPDB_SCHEMA_VERSION + 1);
  snprintf(want, sizeof want, "schema version %d is newer", LJPDB_SCHEMA_VERSION + 1);
  sqlite3_exec(db, sql, NULL, NULL, NULL);
  sqlite3_close(db);
  ck_assert_int_ne(db_open(db_path, DB_READ, &db, err, sizeof err), 0);
  ck_assert_ptr_null(db);
  ck_assert_msg(strstr(err, want), "%s", err);
  ck_assert_int_ne(db_open(db_path, DB_CREATE, &db, err, sizeof err), 0);

  sqlite3_open(db_path, &db);
  sqlite3_exec(db, "PRAGMA user_version = 0", NULL, NULL, NULL);
  sqlite3_close(db);
  ck_assert_int_ne(db_open(db_path, DB_CREATE, &db, err, sizeof err), 0);
  ck_assert_msg(strstr(err, "schema version 0 is older"), "%s", err);

  const char *other = tmp_file("other.db");
  sqlite3_open(other, &db);
  sqlite3_exec(db, "CREATE TABLE t(x)", NULL, NULL, NULL);
  sqlite3_close(db);
  ck_assert_int_ne(db_open(other, DB_CREATE, &db, err, sizeof err), 0);
  ck_assert_msg(strstr(err, "not an ljpdb database"), "%s", err);

  const char *text = tmp_file("text.db");
  write_bytes(text, "hello, this is not SQLite at all, not even a bit\n", 49);
  ck_assert_int_ne(db_open(text, DB_CREATE, &db, err, sizeof err), 0);

  ck_assert_int_ne(db_open(tmp_file("absent.db"), DB_READ, &db, err,
                           sizeof err), 0);
}
END_TEST

/* A pipe named by its path (/dev/stdin, a shell's <(...)) can be read only
 * once: it is hashed and parsed from one copy, as standard input is. */
START_TEST(pipe_named_by_path_is_read_once) {
  const char *by_path = tmp_file("pipe-path.db");
  const char *by_pipe = tmp_file("pipe-pipe.db");
  ck_assert_int_eq(run("'%s' import '%s' '%s'", LJPDB_BIN, by_path,
                       capture(FIB)), 0);
  ck_assert_int_eq(run("cat '%s' | '%s' import '%s' /dev/stdin",
                       capture(FIB), LJPDB_BIN, by_pipe), 0);
  sqlite3 *a = open_ok(by_path), *b = open_ok(by_pipe);
  char *want = q_text(a, "SELECT sha256 || ' ' || size FROM profiles");
  char *got = q_text(b, "SELECT sha256 || ' ' || size FROM profiles");
  ck_assert_str_eq(got, want);
  ck_assert_int_eq(q_int(b, "SELECT sum(weight) FROM samples"), FIB_SAMPLES);
  free(want);
  free(got);
  sqlite3_close(a);
  sqlite3_close(b);
}
END_TEST

START_TEST(command_line_exit_statuses) {
  const char *db_path = tmp_file("cli.db");
  const char *out = tmp_file("out.txt");
  const char *bad = tmp_file("bad.bin");
  write_bytes(bad, "junk", 4);
  ck_assert_int_eq(run("'%s' >/dev/null 2>&1", LJPDB_BIN), 2);
  ck_assert_int_eq(run("'%s' frobnicate 2>/dev/null", LJPDB_BIN), 2);
  ck_assert_int_eq(run("'%s' import '%s' 2>/dev/null", LJPDB_BIN, db_path), 2);
  ck_assert_int_eq(run("'%s' --version >/dev/null", LJPDB_BIN), 0);
  ck_assert_int_eq(run("'%s' query '%s' 'select 1' 2>/dev/null", LJPDB_BIN,
                       tmp_file("missing.db")), 1);
  /* A bad file among good ones: exit 1, the good ones imported. */
  ck_assert_int_eq(run("'%s' import '%s' '%s' '%s' 2>'%s'", LJPDB_BIN,
                       db_path, bad, capture(FIB), out), 1);
  FILE *f = fopen(out, "r");
  char line[1024] = "";
  ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
  fclose(f);
  ck_assert_msg(strncmp(line, "ljpdb: ", 7) == 0 && strstr(line, "bad.bin: ") &&
                    strstr(line, "offset "),
                "%s", line);
  ck_assert_int_eq(run("'%s' query '%s' \"select id, label from profiles\" "
                       ">'%s'", LJPDB_BIN, db_path, out), 0);
  f = fopen(out, "r");
  ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
  fclose(f);
  ck_assert_str_eq(line, "1\tsp_c_fib_jitoff_1ms\n");
  /* Importing it again is no error. */
  ck_assert_int_eq(run("'%s' import '%s' '%s' 2>/dev/null", LJPDB_BIN,
                       db_path, capture(FIB)), 0);
  /* From standard input, with a label. */
  ck_assert_int_eq(run("'%s' import --label piped '%s' - <'%s'", LJPDB_BIN,
                       db_path, capture(BASIC)), 0);
  ck_assert_int_eq(run("'%s' query '%s' \"select count(*) from allocations a "
                       "join profiles p on p.id = a.profile_id where "
                       "p.label = 'piped' and p.path = '-'\" >'%s'",
                       LJPDB_BIN, db_path, out), 0);
  f = fopen(out, "r");
  ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
  fclose(f);
  ck_assert_int_eq(atoi(line), BASIC_EVENTS);
  ck_assert_int_eq(run("'%s' top '%s' --profile nosuch 2>/dev/null",
                       LJPDB_BIN, db_path), 1);
  ck_assert_int_eq(run("'%s' leaks '%s' --profile 1 2>/dev/null", LJPDB_BIN,
                       db_path), 1); /* a sysprof profile has no heap */
  ck_assert_int_eq(run("'%s' top '%s' -n x 2>/dev/null", LJPDB_BIN, db_path),
                   2);
  ck_assert_int_eq(run("'%s' query '%s' 'select nope' 2>/dev/null", LJPDB_BIN,
                       db_path), 1);
  ck_assert_int_eq(run("'%s' schema | grep -q 'CREATE TABLE samples'",
                       LJPDB_BIN), 0);
}
END_TEST

int main(void) {
  Suite *s = suite_create("ljpdb robustness");
  TCase *tc = tcase_create("robust");
  tcase_add_checked_fixture(tc, NULL, teardown);
  tcase_set_timeout(tc, 900);
  tcase_add_test(tc, duplicate_is_skipped_or_replaced);
  tcase_add_test(tc, call_path_ids_survive_replace_and_rollback);
  tcase_add_test(tc, bad_files_write_nothing_and_others_go_in);
  tcase_add_test(tc, bad_file_message_names_the_offset);
  tcase_add_test(tc, truncated_stream_is_kept_as_incomplete);
  tcase_add_test(tc, stop_flag_rolls_everything_back);
  tcase_add_test(tc, interrupted_import_leaves_database_as_it_was);
  tcase_add_test(tc, other_schema_versions_are_refused);
  tcase_add_test(tc, pipe_named_by_path_is_read_once);
  tcase_add_test(tc, command_line_exit_statuses);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
