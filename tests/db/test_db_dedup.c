/*
 * test_db_dedup.c — the already-imported check with the file's hash taken
 * beside the import.  The hash of a file whose size no profile has runs on
 * a thread while the rows are written, and is checked at the end; a
 * duplicate found there must leave no row and be skipped, or replace the
 * old profile under its id, exactly as when the hash comes first.  Each
 * scenario runs both ways (import_options.hash_late) and the databases
 * must hold the same rows.
 */
#include "helpers.h"
#include "sha256.h"

#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FIB "sp_c_fib_jitoff_1ms.bin"
#define FIB_SAMPLES 150
#define BASIC "mp_basic_jitoff.bin"

static void teardown(void) { tmp_cleanup(); }

typedef struct run_opts {
  int replace, hash_late;
  const char *label;
  const char *stdin_file;  /* "-" among the files reads this */
} run_opts;

/* Imports files in one transaction with the given options; 0 when it
 * committed.  msgs (n * 256 bytes) receives each message. */
static int import_with(const char *dbpath, const char *const *files, size_t n,
                       const run_opts *ro, import_result *res, int64_t *ids,
                       char (*msgs)[256]) {
  sqlite3 *db;
  char err[1024];
  import_options o = {0};
  int saved = -1;
  o.replace = ro->replace;
  o.hash_late = ro->hash_late;
  o.label = ro->label;
  ck_assert_msg(db_open(dbpath, DB_CREATE, &db, err, sizeof err) == 0, "%s",
                err);
  if (ro->stdin_file) {
    int fd = open(ro->stdin_file, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    saved = dup(STDIN_FILENO);
    ck_assert_int_ge(saved, 0);
    ck_assert_int_eq(dup2(fd, STDIN_FILENO), STDIN_FILENO);
    close(fd);
  }
  importer *im = importer_begin(db, &o, err, sizeof err);
  ck_assert_msg(im != NULL, "%s", err);
  for (size_t i = 0; i < n; i++)
    res[i] = import_file(im, files[i], &ids[i], msgs[i], sizeof msgs[i]);
  int rc = importer_commit(im, err, sizeof err);
  sqlite3_close(db);
  if (saved >= 0) {
    dup2(saved, STDIN_FILENO);
    close(saved);
  }
  return rc;
}

/* Everything a database holds but the import times, as one string. */
static char *contents(const char *dbpath) {
  static const char *const sql =
      "SELECT (SELECT group_concat(id || '|' || label || '|' || path || '|' "
      "|| complete || '|' || samples || '|' || mem_events || '|' || size || "
      "'|' || sha256, ';') FROM (SELECT * FROM profiles ORDER BY id)) "
      "|| ' s=' || (SELECT count(*) || '/' || total(weight) || '/' || "
      "total(profile_id * 7 + call_path_id) FROM samples) "
      "|| ' a=' || (SELECT count(*) || '/' || total(profile_id) FROM "
      "allocations) "
      "|| ' c=' || (SELECT count(*) || '/' || total(profile_id) FROM "
      "call_paths) "
      "|| ' y=' || (SELECT count(*) || '/' || total(profile_id) FROM symbols) "
      "|| ' t=' || (SELECT count(*) || '/' || total(profile_id) FROM traces) "
      "|| ' i=' || (SELECT count(*) || '/' || total(profile_id) FROM sites)";
  sqlite3 *db;
  char err[512];
  ck_assert_msg(db_open(dbpath, DB_READ, &db, err, sizeof err) == 0, "%s",
                err);
  char *s = q_text(db, "%s", sql);
  sqlite3_close(db);
  ck_assert_ptr_nonnull(s);
  return s;
}

/* The SHA-256 of a file by the portable code, independent of the
 * importer's descriptor handling and thread. */
static void file_sha(const char *path, char out[65]) {
  FILE *f = fopen(path, "rb");
  ck_assert_ptr_nonnull(f);
  sha256_ctx c;
  uint8_t buf[4096], d[32];
  size_t n;
  sha256_init_portable(&c);
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) sha256_update(&c, buf, n);
  fclose(f);
  sha256_final(&c, d);
  sha256_hex(d, out);
}

/* One scenario: the same steps into a database with the hash first and
 * another with the hash at the end; results, ids, messages and rows must
 * match.  Returns the hash-late database's contents. */
typedef struct step {
  const char *files[3];
  size_t n;
  run_opts ro;
  import_result want[3];
} step;

static char *both_ways(const char *name, const step *steps, size_t nsteps) {
  char first[64], late[64];
  snprintf(first, sizeof first, "%s-first.db", name);
  snprintf(late, sizeof late, "%s-late.db", name);
  char *dbs[2] = {strdup(tmp_file(first)), strdup(tmp_file(late))};
  for (size_t k = 0; k < nsteps; k++) {
    import_result res[2][3];
    int64_t ids[2][3];
    char msgs[2][3][256];
    for (int w = 0; w < 2; w++) {
      run_opts ro = steps[k].ro;
      ro.hash_late = w;
      ck_assert_int_eq(import_with(dbs[w], steps[k].files, steps[k].n, &ro,
                                   res[w], ids[w], msgs[w]), 0);
    }
    for (size_t i = 0; i < steps[k].n; i++) {
      ck_assert_msg(res[1][i] == steps[k].want[i],
                    "%s step %zu file %zu: result %d, want %d (%s)", name, k,
                    i, (int)res[1][i], (int)steps[k].want[i], msgs[1][i]);
      ck_assert_int_eq(res[0][i], res[1][i]);
      ck_assert_int_eq(ids[0][i], ids[1][i]);
      ck_assert_str_eq(msgs[0][i], msgs[1][i]);
    }
  }
  char *a = contents(dbs[0]), *b = contents(dbs[1]);
  ck_assert_str_eq(a, b);
  free(a);
  free(dbs[0]);
  free(dbs[1]);
  return b;
}

START_TEST(duplicate_found_at_the_end_is_skipped) {
  const char *copy = tmp_file("renamed.bin");
  copy_prefix(capture(FIB), copy, (size_t)-1, NULL, 0);
  const step steps[] = {
    {{capture(FIB)}, 1, {0, 0, NULL, NULL}, {IMPORT_OK}},
    /* Again, under another name, and twice in one transaction. */
    {{capture(FIB), copy}, 2, {0, 0, NULL, NULL},
     {IMPORT_SKIPPED, IMPORT_SKIPPED}},
    {{capture(BASIC), copy, capture(BASIC)}, 3, {0, 0, NULL, NULL},
     {IMPORT_OK, IMPORT_SKIPPED, IMPORT_SKIPPED}},
  };
  char *got = both_ways("skip", steps, 3);
  char want_sha[65];
  file_sha(capture(FIB), want_sha);
  ck_assert_msg(strstr(got, want_sha) != NULL, "%s", got);
  /* Two profiles and the rows of two imports, no more. */
  ck_assert_msg(strncmp(got, "1|sp_c_fib_jitoff_1ms|", 22) == 0, "%s", got);
  ck_assert_msg(strstr(got, ";2|mp_basic_jitoff|") && !strstr(got, ";3|"),
                "%s", got);
  free(got);
}
END_TEST

START_TEST(duplicate_found_at_the_end_is_replaced_under_its_id) {
  const char *copy = tmp_file("renamed.bin");
  copy_prefix(capture(FIB), copy, (size_t)-1, NULL, 0);
  const step steps[] = {
    {{capture(FIB), capture(BASIC)}, 2, {0, 0, NULL, NULL},
     {IMPORT_OK, IMPORT_OK}},
    {{copy}, 1, {1, 0, "again", NULL}, {IMPORT_OK}},
    /* Standard input is a copy: replaced, it is read a second time. */
    {{"-"}, 1, {1, 0, "piped", copy}, {IMPORT_OK}},
    {{"-", capture(FIB)}, 2, {0, 0, NULL, copy},
     {IMPORT_SKIPPED, IMPORT_SKIPPED}},
  };
  char *got = both_ways("replace", steps, 4);
  ck_assert_msg(strncmp(got, "1|piped|-|1|150|", 16) == 0, "%s", got);
  ck_assert_msg(!strstr(got, ";3|"), "%s", got);
  free(got);
}
END_TEST

/* The size decides where the check runs: a profile of the file's size
 * sends a new file through the hash-first path, and a duplicate whose
 * stored size differs is still caught at the end. */
START_TEST(size_only_chooses_when_the_hash_is_checked) {
  const char *db_path = tmp_file("size.db");
  const char *fib[] = {capture(FIB)}, *basic[] = {capture(BASIC)};
  import_result r[1];
  int64_t id[1];
  char msgs[1][256];
  run_opts ro = {0, 0, NULL, NULL};
  ck_assert_int_eq(import_with(db_path, fib, 1, &ro, r, id, msgs), 0);
  ck_assert_int_eq(r[0], IMPORT_OK);
  /* Profile 1 now claims BASIC's size. */
  ck_assert_int_eq(run("'%s' query '%s' 'UPDATE profiles SET size = %zu' "
                       ">/dev/null", LJPDB_BIN, db_path,
                       file_size(capture(BASIC))), 0);
  ck_assert_int_eq(import_with(db_path, basic, 1, &ro, r, id, msgs), 0);
  ck_assert_int_eq(r[0], IMPORT_OK);
  ck_assert_int_eq(id[0], 2);
  ck_assert_int_eq(import_with(db_path, fib, 1, &ro, r, id, msgs), 0);
  ck_assert_int_eq(r[0], IMPORT_SKIPPED);
  ck_assert_int_eq(id[0], 1);
  ck_assert_msg(strstr(msgs[0], "already imported as profile 1 ("), "%s",
                msgs[0]);
  ro.replace = 1;
  ck_assert_int_eq(import_with(db_path, fib, 1, &ro, r, id, msgs), 0);
  ck_assert_int_eq(r[0], IMPORT_OK);
  ck_assert_int_eq(id[0], 1);
  char *got = contents(db_path), want[65];
  file_sha(capture(FIB), want);
  char *p = strstr(got, want);
  ck_assert_msg(p && strncmp(got, "1|sp_c_fib_jitoff_1ms|", 22) == 0, "%s",
                got);
  /* The size stored again is the bytes hashed. */
  char size[32];
  snprintf(size, sizeof size, "|%zu|", file_size(capture(FIB)));
  ck_assert_msg(strstr(got, size) && strstr(got, size) < p, "%s", got);
  ck_assert_msg(!strstr(got, ";3|"), "%s", got);
  free(got);
}
END_TEST

int main(void) {
  Suite *s = suite_create("ljpdb already-imported check");
  TCase *tc = tcase_create("dedup");
  tcase_add_checked_fixture(tc, NULL, teardown);
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, duplicate_found_at_the_end_is_skipped);
  tcase_add_test(tc, duplicate_found_at_the_end_is_replaced_under_its_id);
  tcase_add_test(tc, size_only_chooses_when_the_hash_is_checked);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
