/*
 * test_db_output.c — the printers (TSV, CSV, JSON, table) byte for byte,
 * the content hash, and the intern maps' deletion.
 */
#include "helpers.h"
#include "intern.h"
#include "output.h"
#include "sha256.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Output of sql in format o, as a malloc'ed string (NULL on error). */
static char *render(const char *sql, out_format f, int header) {
  sqlite3 *db;
  char *buf = NULL, err[256];
  size_t len = 0;
  ck_assert_int_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
  FILE *out = open_memstream(&buf, &len);
  out_options o = {f, header};
  int rc = out_sql(db, sql, &o, out, err, sizeof err);
  fclose(out);
  sqlite3_close(db);
  if (rc) {
    free(buf);
    return NULL;
  }
  return buf;
}

#define ROW "SELECT 1 AS n, 'a\tb\\c' AS s, NULL AS z, 2.5 AS f"

START_TEST(tsv_escapes_and_header) {
  char *s = render(ROW, OUT_TSV, -1);
  ck_assert_str_eq(s, "1\ta\\tb\\\\c\t\t2.5\n");
  free(s);
  s = render(ROW, OUT_TSV, 1);
  ck_assert_str_eq(s, "n\ts\tz\tf\n1\ta\\tb\\\\c\t\t2.5\n");
  free(s);
  s = render("SELECT 'x\ny'", OUT_TSV, 0);
  ck_assert_str_eq(s, "x\\ny\n");
  free(s);
}
END_TEST

START_TEST(csv_quotes) {
  char *s = render("SELECT 'a,b' AS \"p,q\", 'say \"hi\"' AS r, 3 AS n, "
                   "NULL AS z", OUT_CSV, -1);
  ck_assert_str_eq(s, "\"p,q\",r,n,z\n\"a,b\",\"say \"\"hi\"\"\",3,\n");
  free(s);
  s = render("SELECT 'line\nbreak'", OUT_CSV, 0);
  ck_assert_str_eq(s, "\"line\nbreak\"\n");
  free(s);
}
END_TEST

START_TEST(json_objects) {
  char *s = render(ROW, OUT_JSON, -1);
  ck_assert_str_eq(s, "[\n{\"n\":1,\"s\":\"a\\tb\\\\c\",\"z\":null,"
                      "\"f\":2.5}\n]\n");
  free(s);
  s = render("SELECT 1 AS a WHERE 0", OUT_JSON, -1);
  ck_assert_str_eq(s, "[]\n");
  free(s);
  s = render("SELECT 1 AS a UNION ALL SELECT 2", OUT_JSON, -1);
  ck_assert_str_eq(s, "[\n{\"a\":1},\n{\"a\":2}\n]\n");
  free(s);
  s = render("SELECT char(1) || '\"' AS q, x'00ff' AS b", OUT_JSON, -1);
  ck_assert_str_eq(s, "[\n{\"q\":\"\\u0001\\\"\",\"b\":\"x'00ff'\"}\n]\n");
  free(s);
  /* Valid UTF-8 as it is, an invalid byte as U+FFFD: the output stays
   * valid JSON whatever bytes a name holds. */
  s = render("SELECT 'caf' || char(233) AS u, CAST(x'61ff' AS TEXT) AS x",
             OUT_JSON, -1);
  ck_assert_str_eq(s, "[\n{\"u\":\"caf\xc3\xa9\",\"x\":\"a\xef\xbf\xbd\"}"
                      "\n]\n");
  free(s);
}
END_TEST

START_TEST(table_aligns) {
  char *s = render("SELECT 1 AS n, 'abc' AS name, '1.50' AS pct UNION ALL "
                   "SELECT 100, 'x', '12.25'", OUT_TABLE, -1);
  ck_assert_str_eq(s, "  n  name    pct\n"
                      "  1  abc    1.50\n"
                      "100  x     12.25\n");
  free(s);
  s = render("SELECT 'é' AS w, 'b' AS v", OUT_TABLE, 0);
  ck_assert_str_eq(s, "é  b\n");
  free(s);
}
END_TEST

START_TEST(several_statements_and_errors) {
  char *s = render("CREATE TEMP TABLE t(x); INSERT INTO t VALUES (1), (2);"
                   " -- comment\n SELECT x FROM t ORDER BY x DESC;",
                   OUT_TSV, -1);
  ck_assert_str_eq(s, "2\n1\n");
  free(s);
  ck_assert_ptr_null(render("SELECT nope", OUT_TSV, -1));
  ck_assert_ptr_null(render("SELECT 1; SELEC 2", OUT_TSV, -1));
}
END_TEST

START_TEST(sha256_vectors) {
  static const struct { const char *in, *hex; } v[] = {
    {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
    {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
    {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
     "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"}};
  for (size_t i = 0; i < 3; i++) {
    sha256_ctx c;
    uint8_t d[32];
    char hex[65];
    sha256_init(&c);
    /* Fed a byte at a time and in one piece: the same digest. */
    for (const char *p = v[i].in; *p; p++) sha256_update(&c, p, 1);
    sha256_final(&c, d);
    sha256_hex(d, hex);
    ck_assert_str_eq(hex, v[i].hex);
  }
  /* A million 'a's (FIPS 180-2 appendix B.3), in uneven pieces, with the
   * portable code and with whatever sha256_init picks on this CPU. */
  static char big[1000000];
  memset(big, 'a', sizeof big);
  for (int accel = 0; accel < 2; accel++) {
    sha256_ctx c;
    uint8_t d[32];
    char hex[65];
    if (accel)
      sha256_init(&c);
    else
      sha256_init_portable(&c);
    for (size_t off = 0, step = 1; off < sizeof big; off += step, step = step * 3 % 1021 + 1)
      sha256_update(&c, big + off, off + step > sizeof big ? sizeof big - off : step);
    sha256_final(&c, d);
    sha256_hex(d, hex);
    ck_assert_str_eq(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  }
  /* Both implementations agree on pseudo-random data of every length
   * around the block size. */
  for (size_t n = 0; n < 300; n++) {
    uint8_t buf[300], d1[32], d2[32];
    uint64_t x = 0x9e3779b97f4a7c15u + n;
    for (size_t j = 0; j < n; j++) {
      x ^= x << 13; x ^= x >> 7; x ^= x << 17;
      buf[j] = (uint8_t)x;
    }
    sha256_ctx a, b;
    sha256_init_portable(&a);
    sha256_init(&b);
    sha256_update(&a, buf, n);
    sha256_update(&b, buf, n);
    sha256_final(&a, d1);
    sha256_final(&b, d2);
    ck_assert_mem_eq(d1, d2, 32);
  }
  /* The bundled index.tsv carries sha256[:16] of each capture. */
  sqlite3 *db;
  char err[256];
  const char *db_path = tmp_file("h.db");
  const char *files[] = {capture("sp_c_fib_jitoff_1ms.bin")};
  import_result r;
  ck_assert_int_eq(import_files(db_path, files, 1, &r, NULL, NULL, 0), 0);
  ck_assert_int_eq(db_open(db_path, DB_READ, &db, err, sizeof err), 0);
  char *h = q_text(db, "SELECT substr(sha256, 1, 16) FROM profiles");
  ck_assert_str_eq(h, "28a68f86d81bbfb7");
  free(h);
  sqlite3_close(db);
  tmp_cleanup();
}
END_TEST

START_TEST(tuple_map_delete_keeps_chains) {
  tuple_map m;
  tuple_map_init(&m, 1);
  enum { N = 20000 };
  for (uint64_t i = 1; i <= N; i++) {
    tuple_key k = {{i * 64, 0, 0, 0, 0, 0, 0}};
    ck_assert_int_eq(tuple_map_put(&m, &k, (int64_t)i), 0);
  }
  for (uint64_t i = 1; i <= N; i += 2) {
    tuple_key k = {{i * 64, 0, 0, 0, 0, 0, 0}};
    ck_assert_int_eq(tuple_map_del(&m, &k), 1);
    ck_assert_int_eq(tuple_map_del(&m, &k), 0);
  }
  ck_assert_uint_eq(m.count, N / 2);
  for (uint64_t i = 1; i <= N; i++) {
    tuple_key k = {{i * 64, 0, 0, 0, 0, 0, 0}};
    int64_t *v = tuple_map_get(&m, &k);
    if (i % 2)
      ck_assert_ptr_null(v);
    else
      ck_assert_msg(v && *v == (int64_t)i, "key %llu", (unsigned long long)i);
  }
  tuple_map_free(&m);
}
END_TEST

int main(void) {
  Suite *s = suite_create("ljpdb output");
  TCase *tc = tcase_create("output");
  tcase_set_timeout(tc, 120);
  tcase_add_test(tc, tsv_escapes_and_header);
  tcase_add_test(tc, csv_quotes);
  tcase_add_test(tc, json_objects);
  tcase_add_test(tc, table_aligns);
  tcase_add_test(tc, several_statements_and_errors);
  tcase_add_test(tc, sha256_vectors);
  tcase_add_test(tc, tuple_map_delete_keeps_chains);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
