/*
 * test_db_x1.c — an ljp x1 profile in ljpdb: the profile row carries the
 * version, interval and timer; every sample its time, coroutine and flags
 * (NULL for older versions); the folded view equals ljpfold's golden output
 * of the same file; samples that differ only in time share their call path.
 */
#include "helpers.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *x1_bin(void) {
  static char p[4096];
  snprintf(p, sizeof p, "%s/x1/x1_rich.bin", LJP_TESTDATA);
  return p;
}

static sqlite3 *import_both(int64_t ids[2]) {
  const char *files[2];
  import_result res[2];
  sqlite3 *db;
  char err[512];
  const char *path = tmp_file("x1.db");
  files[0] = x1_bin();
  files[1] = capture("sp_c_fib_jitoff_1ms.bin");
  remove(path);
  ck_assert_int_eq(import_files(path, files, 2, res, ids, NULL, 0), 0);
  ck_assert_int_eq(res[0], IMPORT_OK);
  ck_assert_int_eq(res[1], IMPORT_OK);
  ck_assert_msg(db_open(path, DB_READ, &db, err, sizeof err) == 0, "%s", err);
  return db;
}

START_TEST(profile_row) {
  int64_t ids[2];
  sqlite3 *db = import_both(ids);
  long long x = (long long)ids[0], old = (long long)ids[1];
  ck_assert_int_eq(q_int(db, "SELECT stream_version FROM profiles WHERE id = "
                             "%lld", x), 0x81);
  ck_assert_int_eq(q_int(db, "SELECT interval_ns FROM profiles WHERE id = "
                             "%lld", x), 1000000);
  char *t = q_text(db, "SELECT timer FROM profiles WHERE id = %lld", x);
  ck_assert_str_eq(t, "process-cpu");
  free(t);
  ck_assert_int_eq(q_int(db, "SELECT samples FROM profiles WHERE id = %lld",
                         x), 15);
  ck_assert_int_eq(q_int(db, "SELECT count(*) FROM profiles WHERE id = %lld "
                             "AND interval_ns IS NULL AND timer IS NULL", old),
                   1);
  sqlite3_close(db);
}
END_TEST

START_TEST(sample_rows) {
  int64_t ids[2];
  sqlite3 *db = import_both(ids);
  long long x = (long long)ids[0], old = (long long)ids[1];
  ck_assert_int_eq(q_int(db, "SELECT count(*) FROM samples WHERE profile_id = "
                             "%lld AND time_ns IS NOT NULL AND coro IS NOT "
                             "NULL AND flags IS NOT NULL", x), 15);
  ck_assert_int_eq(q_int(db, "SELECT time_ns FROM samples WHERE profile_id = "
                             "%lld ORDER BY seq LIMIT 1", x), 1000000);
  ck_assert_int_eq(q_int(db, "SELECT max(time_ns) FROM samples WHERE "
                             "profile_id = %lld", x), 15151495);
  /* times grow with seq */
  ck_assert_int_eq(q_int(db, "SELECT count(*) FROM samples a JOIN samples b "
                             "ON b.profile_id = a.profile_id AND b.seq = "
                             "a.seq + 1 WHERE a.profile_id = %lld AND "
                             "b.time_ns <= a.time_ns", x), 0);
  ck_assert_int_eq(q_int(db, "SELECT count(*) FROM samples WHERE profile_id = "
                             "%lld AND coro = 2", x), 2);
  ck_assert_int_eq(q_int(db, "SELECT count(*) FROM samples WHERE profile_id = "
                             "%lld AND coro = 0", x), 1);
  ck_assert_int_eq(q_int(db, "SELECT count(*) FROM samples WHERE profile_id = "
                             "%lld AND flags & 1", x), 1);
  ck_assert_int_eq(q_int(db, "SELECT count(*) FROM samples WHERE profile_id = "
                             "%lld AND flags & 2", x), 1);
  /* the seven trace samples' traces: 4 of trace 1, 2 of trace 2 */
  ck_assert_int_eq(q_int(db, "SELECT count(*) FROM samples_view WHERE "
                             "profile_id = %lld AND traceno = 1", x), 4);
  ck_assert_int_eq(q_int(db, "SELECT count(*) FROM samples_view WHERE "
                             "profile_id = %lld AND traceno = 2 AND coro = 2",
                         x), 2);
  /* the three LFUNC samples that differ only in time share a call path */
  ck_assert_int_eq(q_int(db, "SELECT count(DISTINCT call_path_id) FROM samples "
                             "WHERE profile_id = %lld AND seq <= 3", x), 1);
  /* older versions: no time, no coroutine, no flags */
  ck_assert_int_eq(q_int(db, "SELECT count(*) FROM samples WHERE profile_id = "
                             "%lld AND (time_ns IS NOT NULL OR coro IS NOT "
                             "NULL OR flags IS NOT NULL)", old), 0);
  sqlite3_close(db);
}
END_TEST

START_TEST(folded_view_equals_ljpfold) {
  int64_t ids[2];
  sqlite3 *db = import_both(ids);
  char path[4096];
  size_t len = 0, cap = 4096;
  char *want, *got = malloc(cap);
  sqlite3_stmt *st;
  snprintf(path, sizeof path, "%s/x1/x1_rich.folded", LJP_TESTDATA);
  FILE *f = fopen(path, "rb");
  ck_assert_ptr_nonnull(f);
  want = calloc(1, 8192);
  ck_assert_uint_gt(fread(want, 1, 8191, f), 0);
  fclose(f);
  ck_assert_int_eq(sqlite3_prepare_v2(db, "SELECT stack || ' ' || weight FROM "
                                          "folded WHERE profile_id = ? ORDER "
                                          "BY stack", -1, &st, NULL),
                   SQLITE_OK);
  sqlite3_bind_int64(st, 1, ids[0]);
  got[0] = '\0';
  while (sqlite3_step(st) == SQLITE_ROW) {
    const char *line = (const char *)sqlite3_column_text(st, 0);
    size_t n = strlen(line);
    ck_assert_uint_lt(len + n + 2, cap);
    memcpy(got + len, line, n);
    len += n;
    got[len++] = '\n';
    got[len] = '\0';
  }
  sqlite3_finalize(st);
  ck_assert_str_eq(got, want);
  free(got);
  free(want);
  sqlite3_close(db);
}
END_TEST

/* An x1 stream of ljp's capture core: in L mode every sample keeps one
 * host frame (the innermost), in C mode the stack down to main.  Returns
 * the mode ljpdb stores for it. */
static char *mode_of_x1(const char *name, size_t nhost) {
  const ljp_frame lua[] = {{.kind = LJP_FRAME_LUA, .value = 0x5000, .line = 1}};
  const uint64_t host[] = {0x2010, 0x1010, 0x1008};
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  ljp_sample_x1 smp;
  size_t len;
  const char *files[1];
  import_result res;
  int64_t id;
  sqlite3 *db;
  char err[512];
  const char *dbpath = tmp_file("mode.db");
  ck_assert_int_eq(ljp_write_symtab_begin(w, 3, 0), LJP_OK);
  ck_assert_int_eq(ljp_write_symtab_lfunc(w, 0x5000, "@m.lua", 6, 1), LJP_OK);
  ck_assert_int_eq(ljp_write_symtab_cfunc(w, 0x1000, "main", 4), LJP_OK);
  ck_assert_int_eq(ljp_write_symtab_cfunc(w, 0x2000, "lua_pcall", 9), LJP_OK);
  ck_assert_int_eq(ljp_write_symtab_end(w), LJP_OK);
  ck_assert_int_eq(ljp_write_stream_begin_x1(w, LJP_FLAVOR_LUAJIT,
                                             LJP_TIMER_PROCESS_CPU, 1000000),
                   LJP_OK);
  for (int i = 0; i < 5; i++) {
    memset(&smp, 0, sizeof smp);
    smp.vmstate = i % 2 ? LJP_VMST_LFUNC : LJP_VMST_CFUNC;
    smp.dt_ns = 1000000;
    smp.coro = 1;
    smp.lua = lua;
    smp.nlua = 1;
    smp.host = host;
    smp.nhost = nhost;
    ck_assert_int_eq(ljp_write_sample_x1(w, &smp), LJP_OK);
  }
  ck_assert_int_eq(ljp_write_stream_end(w), LJP_OK);
  const void *data = ljp_writer_data(w, &len);
  const char *path = tmp_file(name);
  write_bytes(path, data, len);
  ljp_writer_free(w);
  files[0] = path;
  remove(dbpath);
  ck_assert_int_eq(import_files(dbpath, files, 1, &res, &id, NULL, 0), 0);
  ck_assert_int_eq(res, IMPORT_OK);
  ck_assert_msg(db_open(dbpath, DB_READ, &db, err, sizeof err) == 0, "%s", err);
  char *mode = q_text(db, "SELECT mode FROM profiles WHERE id = %lld",
                      (long long)id);
  sqlite3_close(db);
  return mode;
}

START_TEST(capture_core_modes) {
  char *m = mode_of_x1("leaf.bin", 1);
  ck_assert_ptr_nonnull(m);
  ck_assert_str_eq(m, "L");
  free(m);
  m = mode_of_x1("callgraph.bin", 3);
  ck_assert_ptr_nonnull(m);
  ck_assert_str_eq(m, "C");
  free(m);
  /* Tarantool's L mode: no host frame at all. */
  m = mode_of_x1("empty.bin", 0);
  ck_assert_ptr_nonnull(m);
  ck_assert_str_eq(m, "L");
  free(m);
}
END_TEST

/* One run of the same code: a function at line 10 of run.lua sampled in
 * the interpreter and in its trace, numbered traceno in this run. */
static void write_run(const char *path, uint64_t traceno) {
  const ljp_frame lua[] = {
    {.kind = LJP_FRAME_LUA, .value = 0x5100, .line = 10},
    {.kind = LJP_FRAME_LUA, .value = 0x5000, .line = 0}};
  const uint64_t host[] = {0x1010};
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  ljp_sample_x1 smp;
  size_t len;
  ck_assert_int_eq(ljp_write_symtab_begin(w, 3, 0), LJP_OK);
  ck_assert_int_eq(ljp_write_symtab_lfunc(w, 0x5000, "@run.lua", 8, 0), LJP_OK);
  ck_assert_int_eq(ljp_write_symtab_lfunc(w, 0x5100, "@run.lua", 8, 10), LJP_OK);
  ck_assert_int_eq(ljp_write_symtab_cfunc(w, 0x1000, "main", 4), LJP_OK);
  ck_assert_int_eq(ljp_write_symtab_trace(w, traceno, 0, 0x5100, 12), LJP_OK);
  ck_assert_int_eq(ljp_write_symtab_end(w), LJP_OK);
  ck_assert_int_eq(ljp_write_stream_begin_x1(w, LJP_FLAVOR_LUAJIT,
                                             LJP_TIMER_PROCESS_CPU, 1000000),
                   LJP_OK);
  for (int i = 0; i < 10; i++) {
    memset(&smp, 0, sizeof smp);
    smp.vmstate = i < 6 ? LJP_VMST_LFUNC : LJP_VMST_TRACE;
    if (i >= 6) {
      smp.traceno = traceno;
      smp.trace_proto = 0x5100;
      smp.trace_line = 10;
    }
    smp.dt_ns = 1000000;
    smp.coro = 1;
    smp.lua = lua;
    smp.nlua = 2;
    smp.host = host;
    smp.nhost = 1;
    ck_assert_int_eq(ljp_write_sample_x1(w, &smp), LJP_OK);
  }
  ck_assert_int_eq(ljp_write_stream_end(w), LJP_OK);
  const void *data = ljp_writer_data(w, &len);
  write_bytes(path, data, len);
  ljp_writer_free(w);
}

/* Two runs whose trace numbers differ: per function they are the same, and
 * ljpdb diff says so (function_rollup); per frame name they differ. */
START_TEST(traces_rolled_into_functions) {
  const char *files[2];
  import_result res[2];
  int64_t ids[2];
  sqlite3 *db;
  char err[512];
  char run1[4096], run2[4096], out[4096], dbpath[4096];
  snprintf(run1, sizeof run1, "%s", tmp_file("run1.bin"));
  snprintf(run2, sizeof run2, "%s", tmp_file("run2.bin"));
  snprintf(out, sizeof out, "%s", tmp_file("diff.txt"));
  snprintf(dbpath, sizeof dbpath, "%s", tmp_file("runs.db"));
  write_run(run1, 3);
  write_run(run2, 7);
  files[0] = run1;
  files[1] = run2;
  remove(dbpath);
  ck_assert_int_eq(import_files(dbpath, files, 2, res, ids, NULL, 0), 0);
  ck_assert_int_eq(res[0], IMPORT_OK);
  ck_assert_int_eq(res[1], IMPORT_OK);
  ck_assert_msg(db_open(dbpath, DB_READ, &db, err, sizeof err) == 0, "%s", err);
  long long a = (long long)ids[0], b = (long long)ids[1];
  /* by frame name the runs differ (TRACE [3] vs TRACE [7]) ... */
  ck_assert_int_gt(q_int(db, "SELECT count(*) FROM (SELECT name, self, total "
                             "FROM function_weights WHERE profile_id = %lld "
                             "EXCEPT SELECT name, self, total FROM "
                             "function_weights WHERE profile_id = %lld)", a, b),
                   0);
  /* ... by function they are the same */
  ck_assert_int_eq(q_int(db, "SELECT count(*) FROM (SELECT name, self, total "
                             "FROM function_rollup WHERE profile_id = %lld "
                             "EXCEPT SELECT name, self, total FROM "
                             "function_rollup WHERE profile_id = %lld)", a, b),
                   0);
  ck_assert_int_eq(q_int(db, "SELECT self FROM function_rollup WHERE "
                             "profile_id = %lld AND name = '@run.lua:10'", a),
                   10);
  ck_assert_int_eq(q_int(db, "SELECT count(*) FROM function_rollup WHERE "
                             "kind = 'trace'"), 0);
  ck_assert_int_eq(q_int(db, "SELECT sum(self) FROM function_rollup WHERE "
                             "profile_id = %lld", a), 10);
  char *stacks = q_text(db, "SELECT group_concat(stack || ' ' || weight, "
                            "'|') FROM folded_functions WHERE profile_id = "
                            "%lld", a);
  ck_assert_ptr_nonnull(stacks);
  ck_assert_str_eq(stacks, "main;@run.lua:0;@run.lua:10 10");
  free(stacks);
  ck_assert_int_eq(q_int(db, "SELECT count(*) FROM folded_functions WHERE "
                             "stack LIKE '%%TRACE%%'"), 0);
  sqlite3_close(db);
  /* ljpdb diff: no change in any row */
  ck_assert_int_eq(run("%s diff %s %lld %lld > %s", LJPDB_BIN, dbpath, a, b,
                       out), 0);
  FILE *f = fopen(out, "r");
  ck_assert_ptr_nonnull(f);
  char line[1024];
  int rows = 0;
  ck_assert_ptr_nonnull(fgets(line, sizeof line, f)); /* header */
  while (fgets(line, sizeof line, f)) {
    ck_assert_msg(strstr(line, " +0.00 ") || strstr(line, " -0.00 "),
                  "a change between runs of the same code: %s", line);
    ck_assert_msg(!strstr(line, "TRACE"), "a trace row: %s", line);
    rows++;
  }
  fclose(f);
  ck_assert_int_gt(rows, 1);
}
END_TEST

int main(void) {
  Suite *s = suite_create("ljpdb x1");
  TCase *tc = tcase_create("x1");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, profile_row);
  tcase_add_test(tc, sample_rows);
  tcase_add_test(tc, folded_view_equals_ljpfold);
  tcase_add_test(tc, capture_core_modes);
  tcase_add_test(tc, traces_rolled_into_functions);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_set_fork_status(sr, CK_NOFORK);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  tmp_cleanup();
  return failed ? 1 : 0;
}
