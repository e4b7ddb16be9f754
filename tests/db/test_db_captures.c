/*
 * test_db_captures.c — every bundled capture in one database, checked
 * against independent references: index.tsv counts, the library's own
 * folded output, and the reference parser's HEAP SUMMARY (.leak.txt).
 */
#include "helpers.h"

#include <check.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *db_path;
static capture_counts caps[64];
static size_t ncaps;

/* Imports every .bin of captures/ and captures/old/ in one transaction. */
static void setup_db(void) {
  glob_t g;
  char pat[4096];
  snprintf(pat, sizeof pat, "%s/captures/*.bin", LJP_TESTDATA);
  glob(pat, 0, NULL, &g);
  snprintf(pat, sizeof pat, "%s/captures/old/*.bin", LJP_TESTDATA);
  glob(pat, GLOB_APPEND, NULL, &g);
  import_result *res = calloc(g.gl_pathc, sizeof *res);
  db_path = strdup(tmp_file("all.db"));
  int rc = import_files(db_path, (const char *const *)g.gl_pathv, g.gl_pathc,
                        res, NULL, NULL, 0);
  for (size_t i = 0; i < g.gl_pathc; i++)
    if (res[i] != IMPORT_OK) {
      fprintf(stderr, "import of %s failed: %d\n", g.gl_pathv[i], res[i]);
      rc = -1;
    }
  if (rc) abort();
  free(res);
  globfree(&g);
  ncaps = read_index(caps, 64);
}

static void teardown_db(void) { tmp_cleanup(); }

static sqlite3 *open_db(void) {
  sqlite3 *db;
  char err[512];
  ck_assert_msg(db_open(db_path, DB_READ, &db, err, sizeof err) == 0, "%s",
                err);
  return db;
}

static const char *bin_of(const capture_counts *c) {
  static char p[4096];
  snprintf(p, sizeof p, "%s/captures/%s%s.bin", LJP_TESTDATA,
           strncmp(c->name, "old_", 4) == 0 ? "old/" : "", c->name);
  return p;
}

START_TEST(every_capture_is_a_profile) {
  sqlite3 *db = open_db();
  size_t with_stream = 0;
  for (size_t i = 0; i < ncaps; i++) {
    /* Mode D writes no stream: nothing to import. */
    if (count_of(caps[i].counts, "samples") >= 0 &&
        strstr(caps[i].name, "_d_"))
      continue;
    with_stream++;
    ck_assert_msg(q_int(db, "SELECT count(*) FROM profiles WHERE label = %Q "
                            "AND complete = 1", caps[i].name) == 1,
                  "%s", caps[i].name);
  }
  ck_assert_uint_eq(with_stream, 23);
  ck_assert_int_eq(q_int(db, "SELECT count(*) FROM profiles"), 23);
  sqlite3_close(db);
}
END_TEST

START_TEST(sample_weights_equal_sample_counts) {
  sqlite3 *db = open_db();
  static const char *const states[] = {"INTERP", "LFUNC", "FFUNC", "CFUNC",
                                       "GC", "EXIT", "RECORD", "OPT", "ASM",
                                       "TRACE"};
  for (size_t i = 0; i < ncaps; i++) {
    int64_t want = count_of(caps[i].counts, "samples");
    if (want < 0 || strstr(caps[i].name, "_d_")) continue;
    int64_t id = q_int(db, "SELECT id FROM profiles WHERE label = %Q",
                       caps[i].name);
    ck_assert_msg(q_int(db, "SELECT sum(weight) FROM samples WHERE "
                            "profile_id = %lld", (long long)id) == want,
                  "%s", caps[i].name);
    ck_assert_int_eq(q_int(db, "SELECT samples FROM profiles WHERE id = %lld",
                           (long long)id), want);
    /* seq numbers the samples 1..n. */
    ck_assert_int_eq(q_int(db, "SELECT max(seq) - min(seq) + 1 FROM samples "
                               "WHERE profile_id = %lld", (long long)id), want);
    for (size_t s = 0; s < 10; s++) {
      int64_t n = count_of(caps[i].counts, states[s]);
      if (n < 0) n = 0;
      int64_t got = q_int(db, "SELECT coalesce(sum(samples), 0) FROM "
                              "vmstate_totals WHERE profile_id = %lld AND "
                              "name = %Q", (long long)id, states[s]);
      ck_assert_msg(got == n, "%s %s: %lld != %lld", caps[i].name, states[s],
                    (long long)got, (long long)n);
    }
  }
  sqlite3_close(db);
}
END_TEST

START_TEST(allocation_rows_equal_event_counts) {
  sqlite3 *db = open_db();
  int checked = 0;
  for (size_t i = 0; i < ncaps; i++) {
    int64_t want = count_of(caps[i].counts, "events");
    if (want < 0) continue;
    int64_t id = q_int(db, "SELECT id FROM profiles WHERE label = %Q",
                       caps[i].name);
    ck_assert_msg(q_int(db, "SELECT count(*) FROM allocations WHERE "
                            "profile_id = %lld", (long long)id) == want,
                  "%s", caps[i].name);
    static const struct { const char *key; int event; } kinds[] = {
      {"alloc", 1}, {"free", 2}, {"realloc", 3}};
    for (size_t k = 0; k < 3; k++)
      ck_assert_msg(q_int(db, "SELECT count(*) FROM allocations WHERE "
                              "profile_id = %lld AND event = %d",
                          (long long)id, kinds[k].event) ==
                        count_of(caps[i].counts, kinds[k].key),
                    "%s %s", caps[i].name, kinds[k].key);
    /* seq numbers the events 1..n in stream order. */
    ck_assert_int_eq(q_int(db, "SELECT max(seq) FROM allocations WHERE "
                               "profile_id = %lld", (long long)id), want);
    checked++;
  }
  ck_assert_int_eq(checked, 10);
  sqlite3_close(db);
}
END_TEST

/* ---- folded output of the library vs. the folded view ---- */

typedef struct lines {
  char **v;
  size_t n, cap;
} lines;

static void lines_add(lines *l, const char *s, size_t len) {
  if (l->n == l->cap) {
    l->cap = l->cap ? l->cap * 2 : 256;
    l->v = realloc(l->v, l->cap * sizeof *l->v);
  }
  l->v[l->n] = malloc(len + 1);
  memcpy(l->v[l->n], s, len);
  l->v[l->n][len] = 0;
  l->n++;
}

static void lines_free(lines *l) {
  for (size_t i = 0; i < l->n; i++) free(l->v[i]);
  free(l->v);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int collect(void *ctx, const char *line, size_t len) {
  if (len && line[len - 1] == '\n') len--;
  lines_add(ctx, line, len);
  return 0;
}

/* The library's folded lines of a file: ljp_folder + ljp_tree_write_folded
 * with the default view and style. */
static void library_folded(const char *path, lines *out) {
  ljp_reader *r = ljp_reader_new();
  ljp_tree *t = ljp_tree_new();
  ljp_fold_options o;
  memset(&o, 0, sizeof o);
  o.view = LJP_VIEW_MERGED;
  o.style = LJP_NAME_DEFAULT;
  o.weight = LJP_WEIGHT_SAMPLES;
  o.vmstate = LJP_VMSTATE_NONE;
  o.flavor = LJP_FLAVOR_AUTO;
  ljp_folder *f = ljp_folder_new(t, &o);
  const ljp_event *ev;
  ck_assert_int_eq(ljp_reader_open_path(r, path), LJP_OK);
  ljp_status s;
  while ((s = ljp_reader_next(r, &ev)) == LJP_OK)
    ck_assert_int_eq(ljp_folder_add(f, r, ev), LJP_OK);
  ck_assert_int_eq(s, LJP_END);
  ck_assert_int_eq(ljp_tree_write_folded(t, 0, collect, out), LJP_OK);
  ljp_folder_free(f);
  ljp_tree_free(t);
  ljp_reader_free(r);
}

static void db_lines(sqlite3 *db, const char *sql, int64_t id, lines *out) {
  sqlite3_stmt *st;
  ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
  sqlite3_bind_int64(st, 1, id);
  while (sqlite3_step(st) == SQLITE_ROW)
    lines_add(out, (const char *)sqlite3_column_text(st, 0),
              (size_t)sqlite3_column_bytes(st, 0));
  sqlite3_finalize(st);
}

static void assert_same_lines(lines *a, lines *b, const char *what) {
  qsort(a->v, a->n, sizeof *a->v, cmp_str);
  qsort(b->v, b->n, sizeof *b->v, cmp_str);
  ck_assert_msg(a->n == b->n, "%s: %zu lines vs %zu", what, a->n, b->n);
  for (size_t i = 0; i < a->n; i++)
    ck_assert_msg(strcmp(a->v[i], b->v[i]) == 0, "%s: '%s' vs '%s'", what,
                  a->v[i], b->v[i]);
}

/* Per function name: self = weight of lines ending in it, total = weight
 * of lines containing it (once per line), as text lines "name self total". */
static void functions_of(const lines *folded, lines *out) {
  size_t cap = 4096, n = 0;
  char **name = calloc(cap, sizeof *name);
  long long *self = calloc(cap, sizeof *self), *total = calloc(cap, sizeof *total);
  for (size_t i = 0; i < folded->n; i++) {
    char *line = strdup(folded->v[i]);
    char *sp = strrchr(line, ' ');
    ck_assert_ptr_nonnull(sp);
    *sp = 0;
    long long w = atoll(sp + 1);
    size_t seen_n = 0, seen[1024];
    char *save = NULL, *leaf = NULL;
    for (char *tok = strtok_r(line, ";", &save); tok;
         tok = strtok_r(NULL, ";", &save)) {
      size_t k;
      for (k = 0; k < n && strcmp(name[k], tok) != 0; k++) {}
      if (k == n) {
        ck_assert_uint_lt(n, cap);
        name[n++] = strdup(tok);
      }
      int dup = 0;
      for (size_t j = 0; j < seen_n; j++) dup |= seen[j] == k;
      if (!dup && seen_n < 1024) {
        seen[seen_n++] = k;
        total[k] += w;
      }
      leaf = tok;
    }
    if (leaf) {
      size_t k;
      for (k = 0; strcmp(name[k], leaf) != 0; k++) {}
      self[k] += w;
    }
    free(line);
  }
  for (size_t k = 0; k < n; k++) {
    char buf[8192];
    int len = snprintf(buf, sizeof buf, "%s %lld %lld", name[k], self[k],
                       total[k]);
    lines_add(out, buf, (size_t)len);
    free(name[k]);
  }
  free(name);
  free(self);
  free(total);
}

START_TEST(folded_view_agrees_with_library) {
  sqlite3 *db = open_db();
  int checked = 0;
  for (size_t i = 0; i < ncaps; i++) {
    if (count_of(caps[i].counts, "samples") < 0 || strstr(caps[i].name, "_d_"))
      continue;
    int64_t id = q_int(db, "SELECT id FROM profiles WHERE label = %Q",
                       caps[i].name);
    lines lib = {0}, got = {0}, fl = {0}, fd = {0};
    library_folded(bin_of(&caps[i]), &lib);
    db_lines(db, "SELECT stack || ' ' || weight FROM folded "
                 "WHERE profile_id = ?1", id, &got);
    assert_same_lines(&lib, &got, caps[i].name);

    /* The self/total view against the same folded lines. */
    functions_of(&lib, &fl);
    db_lines(db, "SELECT name || ' ' || self || ' ' || total FROM "
                 "function_weights WHERE profile_id = ?1", id, &fd);
    assert_same_lines(&fl, &fd, caps[i].name);
    lines_free(&lib);
    lines_free(&got);
    lines_free(&fl);
    lines_free(&fd);
    checked++;
  }
  ck_assert_int_eq(checked, 13);
  sqlite3_close(db);
}
END_TEST

/* ---- heap summary vs. the reference parser's --leak-only output ---- */

typedef struct leak {
  char name[512];
  long long bytes, allocs, frees;
} leak;

static size_t read_leaks(const char *path, leak *out, size_t cap) {
  FILE *f = fopen(path, "r");
  char line[4096];
  size_t n = 0;
  ck_assert_ptr_nonnull(f);
  while (fgets(line, sizeof line, f) && n < cap) {
    char *h = strstr(line, " holds ");
    if (!h) continue;
    *h = 0;
    snprintf(out[n].name, sizeof out[n].name, "%.511s", line);
    /* "<n>B: a allocs, f frees" or "<n> bytes: a allocs, f frees". */
    char *p = h + 7;
    out[n].bytes = strtoll(p, &p, 10);
    p = strchr(p, ':');
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(sscanf(p, ": %lld allocs, %lld frees", &out[n].allocs,
                            &out[n].frees), 2);
    n++;
  }
  fclose(f);
  return n;
}

static int cmp_leak(const void *a, const void *b) {
  const leak *x = a, *y = b;
  if (x->bytes != y->bytes) return x->bytes < y->bytes ? -1 : 1;
  if (x->allocs != y->allocs) return x->allocs < y->allocs ? -1 : 1;
  return (x->frees > y->frees) - (x->frees < y->frees);
}

START_TEST(heap_summary_agrees_with_reference) {
  sqlite3 *db = open_db();
  int checked = 0;
  for (size_t i = 0; i < ncaps; i++) {
    if (count_of(caps[i].counts, "events") < 0) continue;
    char path[4096];
    snprintf(path, sizeof path, "%s", bin_of(&caps[i]));
    strcpy(strrchr(path, '.'), ".leak.txt");
    leak ref[64], got[64];
    size_t nref = read_leaks(path, ref, 64), ngot = 0;
    int64_t id = q_int(db, "SELECT id FROM profiles WHERE label = %Q",
                       caps[i].name);
    sqlite3_stmt *st;
    ck_assert_int_eq(sqlite3_prepare_v2(db,
        "SELECT site, bytes, allocs, frees FROM heap_summary "
        "WHERE profile_id = ?1 AND bytes > 0", -1, &st, NULL), SQLITE_OK);
    sqlite3_bind_int64(st, 1, id);
    while (sqlite3_step(st) == SQLITE_ROW && ngot < 64) {
      snprintf(got[ngot].name, sizeof got[ngot].name, "%s",
               (const char *)sqlite3_column_text(st, 0));
      got[ngot].bytes = sqlite3_column_int64(st, 1);
      got[ngot].allocs = sqlite3_column_int64(st, 2);
      got[ngot].frees = sqlite3_column_int64(st, 3);
      ngot++;
    }
    sqlite3_finalize(st);
    ck_assert_msg(nref == ngot, "%s: %zu rows vs %zu", caps[i].name, nref, ngot);
    ck_assert_uint_gt(nref, 0);
    /* Lua and INTERNAL rows are named alike in both styles: match by name. */
    long long sref = 0, sgot = 0;
    for (size_t r = 0; r < nref; r++) {
      sref += ref[r].bytes;
      sgot += got[r].bytes;
      if (ref[r].name[0] != '@' && strcmp(ref[r].name, "INTERNAL") != 0)
        continue;
      size_t g;
      for (g = 0; g < ngot && strcmp(got[g].name, ref[r].name) != 0; g++) {}
      ck_assert_msg(g < ngot, "%s: no row %s", caps[i].name, ref[r].name);
      ck_assert_msg(cmp_leak(&got[g], &ref[r]) == 0, "%s: %s differs",
                    caps[i].name, ref[r].name);
    }
    ck_assert_msg(sref == sgot, "%s: total %lld vs %lld", caps[i].name, sgot,
                  sref);
    /* Every row, whatever its name style: same (bytes, allocs, frees). */
    qsort(ref, nref, sizeof *ref, cmp_leak);
    qsort(got, ngot, sizeof *got, cmp_leak);
    for (size_t r = 0; r < nref; r++)
      ck_assert_msg(cmp_leak(&ref[r], &got[r]) == 0, "%s: %s vs %s",
                    caps[i].name, ref[r].name, got[r].name);
    checked++;
  }
  ck_assert_int_eq(checked, 10);
  sqlite3_close(db);
}
END_TEST

START_TEST(references_resolve_and_row_zero_is_unknown) {
  sqlite3 *db = open_db();
  /* Every id a fact row stores names a row of the same profile (or row 0). */
  ck_assert_int_eq(q_int(db, "SELECT count(*) FROM samples s LEFT JOIN "
                             "call_paths c ON c.id = s.call_path_id WHERE "
                             "c.id IS NULL OR (c.id <> 0 AND c.profile_id <> "
                             "s.profile_id)"), 0);
  ck_assert_int_eq(q_int(db, "SELECT count(*) FROM call_paths c LEFT JOIN "
                             "symbols y ON y.id = c.symbol_id WHERE y.id IS "
                             "NULL OR c.parent_id >= c.id AND c.id <> 0"), 0);
  ck_assert_int_eq(q_int(db, "SELECT count(*) FROM allocations a LEFT JOIN "
                             "sites t ON t.id = a.site_id LEFT JOIN traces r "
                             "ON r.id = a.trace_id WHERE t.id IS NULL OR "
                             "r.id IS NULL OR t.profile_id <> a.profile_id"),
                   0);
  ck_assert_int_eq(q_int(db, "SELECT count(*) FROM allocations a JOIN "
                             "allocations o ON o.id = a.origin_id WHERE "
                             "o.profile_id <> a.profile_id OR o.seq >= a.seq "
                             "OR o.new_addr <> a.old_addr"), 0);
  /* TRACE samples name their trace; others name none. */
  ck_assert_int_eq(q_int(db, "SELECT count(*) FROM samples WHERE "
                             "(vmstate = 9) <> (trace_id <> 0)"), 0);
  char *s = q_text(db, "SELECT name FROM symbols WHERE id = 0");
  ck_assert_str_eq(s, "[unknown]");
  free(s);
  /* Schema identity. */
  ck_assert_int_eq(q_int(db, "PRAGMA user_version"), LJPDB_SCHEMA_VERSION);
  ck_assert_int_eq(q_int(db, "PRAGMA application_id"), LJPDB_APPLICATION_ID);
  s = q_text(db, "PRAGMA integrity_check");
  ck_assert_str_eq(s, "ok");
  free(s);
  sqlite3_close(db);
}
END_TEST

START_TEST(trace_redefinitions_are_rows) {
  sqlite3 *db = open_db();
  /* sp_c_jiton_flush_1ms: 18 mid-stream trace events, 10 redefinitions. */
  int64_t id = q_int(db, "SELECT id FROM profiles WHERE label = "
                         "'sp_c_jiton_flush_1ms'");
  ck_assert_int_eq(q_int(db, "SELECT count(*) FROM traces WHERE profile_id "
                             "= %lld AND initial = 0", (long long)id), 18);
  ck_assert_int_eq(q_int(db, "SELECT count(*) FROM traces WHERE profile_id "
                             "= %lld AND generation > 0", (long long)id), 10);
  ck_assert_int_eq(q_int(db, "SELECT trace_redefinitions FROM profiles "
                             "WHERE id = %lld", (long long)id), 10);
  ck_assert_int_eq(q_int(db, "SELECT sum(samples) FROM trace_totals WHERE "
                             "profile_id = %lld", (long long)id), 214);
  sqlite3_close(db);
}
END_TEST

/* The sysprof tables are libljp's profile model written out: call_paths
 * rows are the nodes of the call tree ljp_folder builds with lines (ids
 * included), and symbols rows its frames by (kind, name).  sp_c_loadmid_jiton_1ms loads
 * the same chunks again mid-stream, so one name stands for two protos:
 * they are one row (and one path) as they are one frame in every folded
 * output, while the traces table keeps every definition. */
/* Checks the call_paths rows of profile id against the tree ljp_folder
 * builds from path with lines: row k of the profile (in id order) is node
 * k, with the node's parent, depth, line and frame name. */
static void assert_model_paths(sqlite3 *db, long long id, const char *path,
                               const char *what) {
  ljp_reader *r = ljp_reader_new();
  ljp_tree *t = ljp_tree_new();
  ljp_fold_options o;
  memset(&o, 0, sizeof o);
  o.view = LJP_VIEW_MERGED;
  o.flavor = LJP_FLAVOR_AUTO;
  o.lines = 1;
  ljp_folder *f = ljp_folder_new(t, &o);
  const ljp_event *ev;
  ck_assert_int_eq(ljp_reader_open_path(r, path), LJP_OK);
  while (ljp_reader_next(r, &ev) == LJP_OK)
    ck_assert_int_eq(ljp_folder_add(f, r, ev), LJP_OK);
  long long base = q_int(db, "SELECT min(id) - 1 FROM call_paths WHERE "
                             "profile_id = %lld", id);
  sqlite3_stmt *st;
  ck_assert_int_eq(sqlite3_prepare_v2(db,
      "SELECT c.id, c.parent_id, c.depth, c.line, y.name FROM call_paths c "
      "JOIN symbols y ON y.id = c.symbol_id WHERE c.profile_id = ?1 "
      "ORDER BY c.id", -1, &st, NULL), SQLITE_OK);
  sqlite3_bind_int64(st, 1, id);
  uint32_t node = 1, n = ljp_tree_node_count(t);
  for (; sqlite3_step(st) == SQLITE_ROW; node++) {
    ck_assert_msg(node < n, "%s: more rows than nodes", what);
    uint32_t parent = ljp_tree_node_parent(t, node);
    ljp_frame_info fi;
    ck_assert_int_eq(ljp_tree_frame_info(t, ljp_tree_node_frame(t, node), &fi),
                     LJP_OK);
    const char *name = ljp_tree_frame_name(t, ljp_tree_node_frame(t, node),
                                           NULL);
    ck_assert_msg(sqlite3_column_int64(st, 0) == base + node &&
                      sqlite3_column_int64(st, 1) ==
                          (parent ? base + parent : 0) &&
                      sqlite3_column_int64(st, 2) ==
                          ljp_tree_node_depth(t, node) &&
                      sqlite3_column_int64(st, 3) == (int64_t)fi.line &&
                      strcmp((const char *)sqlite3_column_text(st, 4), name) ==
                          0,
                  "%s: node %u (%s) is not row %lld", what, (unsigned)node,
                  name, (long long)sqlite3_column_int64(st, 0));
  }
  sqlite3_finalize(st);
  ck_assert_msg(node == n, "%s: %u rows for %u nodes", what,
                (unsigned)node - 1, (unsigned)n - 1);
  ljp_folder_free(f);
  ljp_tree_free(t);
  ljp_reader_free(r);
}

/* How many definitions of the Lua function chunk:line the stream has. */
static int proto_definitions(const char *path, const char *chunk,
                             uint64_t line) {
  ljp_reader *r = ljp_reader_new();
  const ljp_event *ev;
  int n = 0;
  ck_assert_int_eq(ljp_reader_open_path(r, path), LJP_OK);
  while (ljp_reader_next(r, &ev) == LJP_OK)
    if (ev->type == LJP_EV_SYMBOL && !ev->u.symbol.duplicate &&
        ev->u.symbol.sym->kind == LJP_SYM_LFUNC &&
        ev->u.symbol.sym->line == line &&
        strcmp(ev->u.symbol.sym->name, chunk) == 0)
      n++;
  ljp_reader_free(r);
  return n;
}

START_TEST(sysprof_rows_are_the_profile_model) {
  sqlite3 *db = open_db();
  int checked = 0;
  for (size_t i = 0; i < ncaps; i++) {
    if (count_of(caps[i].counts, "samples") < 0 || strstr(caps[i].name, "_d_"))
      continue;
    long long id = q_int(db, "SELECT id FROM profiles WHERE label = %Q",
                         caps[i].name);
    assert_model_paths(db, id, bin_of(&caps[i]), caps[i].name);
    ck_assert_msg(q_int(db, "SELECT count(*) FROM (SELECT 1 FROM symbols "
                            "WHERE profile_id = %lld GROUP BY kind, name "
                            "HAVING count(*) > 1)", id) == 0,
                  "%s", caps[i].name);
    checked++;
  }
  ck_assert_int_eq(checked, 13);
  capture_counts loadmid = {0};
  snprintf(loadmid.name, sizeof loadmid.name, "sp_c_loadmid_jiton_1ms");
  ck_assert_int_eq(proto_definitions(bin_of(&loadmid),
                                     "@virtual/module_1.lua", 2), 2);
  ck_assert_int_eq(q_int(db, "SELECT count(*) FROM symbols y JOIN profiles p "
                             "ON p.id = y.profile_id WHERE p.label = "
                             "'sp_c_loadmid_jiton_1ms' AND y.kind = 'lua' AND "
                             "y.name = '@virtual/module_1.lua:2'"), 1);
  sqlite3_close(db);
}
END_TEST

int main(void) {
  Suite *s = suite_create("ljpdb captures");
  TCase *tc = tcase_create("all captures in one database");
  tcase_add_unchecked_fixture(tc, setup_db, teardown_db);
  tcase_set_timeout(tc, 600);
  tcase_add_test(tc, every_capture_is_a_profile);
  tcase_add_test(tc, sample_weights_equal_sample_counts);
  tcase_add_test(tc, allocation_rows_equal_event_counts);
  tcase_add_test(tc, folded_view_agrees_with_library);
  tcase_add_test(tc, heap_summary_agrees_with_reference);
  tcase_add_test(tc, references_resolve_and_row_zero_is_unknown);
  tcase_add_test(tc, trace_redefinitions_are_rows);
  tcase_add_test(tc, sysprof_rows_are_the_profile_model);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
