/*
 * reports.c — query, schema, profiles, and the canned reports.
 *
 * Every report is one SQL statement over the views of the schema, so what
 * `ljpdb top` prints a user can reproduce, change and extend with
 * `ljpdb query` (the statements are in docs/ljpdb-schema.md).
 */
#include "cli_limits.h"
#include "ljpdb.h"

#include "schema.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_PROFILE = 1, OPT_ORDER = 2, OPT_LIMIT = 4,
       OPT_IN_ORDER = 8 /* options only before the first operand */ };

typedef struct args {
  const char *profile;     /* --profile */
  int by_total;            /* --total */
  long limit;              /* -n; < 0: all */
  out_options out;
  char **pos;              /* positional arguments */
  int npos;
} args;

/* Parses the options shared by query and the reports.  Returns -1 when
 * parsed, else the exit status to return now. */
static int parse_args(const char *cmd, int argc, char **argv, unsigned allow,
                      out_format format, long limit, args *a) {
  static const struct option longopts[] = {
    {"profile", required_argument, NULL, 'p'},
    {"self", no_argument, NULL, 's'},
    {"total", no_argument, NULL, 't'},
    {"tsv", no_argument, NULL, 'T'},
    {"csv", no_argument, NULL, 'C'},
    {"json", no_argument, NULL, 'J'},
    {"table", no_argument, NULL, 'A'},
    {"header", no_argument, NULL, 'H'},
    {"no-header", no_argument, NULL, 'N'},
    {"help", no_argument, NULL, 'h'},
    {"max-output", required_argument, NULL, CLI_OPT_MAX_OUTPUT},
    {NULL, 0, NULL, 0}};
  int c;
  memset(a, 0, sizeof *a);
  a->limit = limit;
  a->out.format = format;
  a->out.header = -1;
  opterr = 0;
  /* SQL text may begin with "--" (a comment): for query, everything after
   * the database is an operand. */
  const char *optstring = allow & OPT_IN_ORDER ? "+:n:p:" : ":n:p:";
  while ((c = getopt_long(argc, argv, optstring, longopts, NULL)) != -1) {
    switch (c) {
    case 'p':
      if (!(allow & OPT_PROFILE)) goto unknown;
      a->profile = optarg;
      break;
    case 's':
    case 't':
      if (!(allow & OPT_ORDER)) goto unknown;
      a->by_total = c == 't';
      break;
    case 'n': {
      char *end;
      if (!(allow & OPT_LIMIT)) goto unknown;
      a->limit = strtol(optarg, &end, 10);
      if (*optarg == 0 || *end || a->limit < 0)
        return cli_usage_error("%s: -n wants a count, not '%s'", cmd, optarg);
      break;
    }
    case 'T': a->out.format = OUT_TSV; break;
    case 'C': a->out.format = OUT_CSV; break;
    case 'J': a->out.format = OUT_JSON; break;
    case 'A': a->out.format = OUT_TABLE; break;
    case 'H': a->out.header = 1; break;
    case 'N': a->out.header = 0; break;
    case 'h': ljpdb_print_usage(); return LJPDB_EXIT_OK;
    case ':': return cli_usage_error("%s: %s needs a value", cmd, argv[optind - 1]);
    case CLI_OPT_MAX_OUTPUT: {
      int lrc = cli_limit_option(c, optarg);
      if (lrc != 1) return lrc;
      break;
    }
    default: goto unknown;
    }
  }
  a->pos = argv + optind;
  a->npos = argc - optind;
  return -1;
unknown:
  return cli_usage_error("%s: unknown option '%s'", cmd, argv[optind - 1]);
}

/* Prepares sql, binds ?1 = profile id (NULL when 0), ?2 = limit (or ?3 for
 * diff, set by the caller), prints the rows. */
static int run_report(sqlite3 *db, const char *dbpath, const char *sql,
                      int64_t p1, int64_t p2, long limit, int limit_index,
                      const out_options *o) {
  sqlite3_stmt *st;
  char err[512];
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
    cli_error_in(dbpath, "%s", sqlite3_errmsg(db));
    return LJPDB_EXIT_ERROR;
  }
  if (p1)
    sqlite3_bind_int64(st, 1, p1);
  else
    sqlite3_bind_null(st, 1);
  if (p2) sqlite3_bind_int64(st, 2, p2);
  if (limit_index) sqlite3_bind_int64(st, limit_index, limit);
  int rc = out_statement(db, st, o, stdout, err, sizeof err);
  sqlite3_finalize(st);
  if (rc) {
    cli_error_in(dbpath, "%s", err);
    return LJPDB_EXIT_ERROR;
  }
  return LJPDB_EXIT_OK;
}

/* A single number from sql with ?1 = profile id or NULL; -1 on error. */
static int64_t count_of(sqlite3 *db, const char *sql, int64_t profile) {
  sqlite3_stmt *st;
  int64_t v = -1;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return -1;
  if (profile)
    sqlite3_bind_int64(st, 1, profile);
  else
    sqlite3_bind_null(st, 1);
  if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

static const char count_samples_sql[] =
  "SELECT count(*) FROM samples WHERE ?1 IS NULL OR profile_id = ?1";
static const char count_allocations_sql[] =
  "SELECT count(*) FROM allocations WHERE ?1 IS NULL OR profile_id = ?1";

/* Opens the database named by the first positional argument and resolves
 * --profile; checks that the selection has rows of the kind the report
 * reads.  Returns the exit status to return now, or -1 to go on. */
static int open_for_report(const char *cmd, args *a, int npos, sqlite3 **db,
                           int64_t *profile, const char *need_sql,
                           const char *need_what) {
  if (a->npos != npos)
    return cli_usage_error("%s: wrong number of arguments", cmd);
  *db = ljpdb_open_existing(a->pos[0]);
  if (!*db) return LJPDB_EXIT_ERROR;
  *profile = 0;
  if (a->profile && !(*profile = ljpdb_profile(*db, a->pos[0], a->profile)))
    goto fail;
  if (need_sql) {
    int64_t n = count_of(*db, need_sql, *profile);
    if (n < 0) {
      cli_error_in(a->pos[0], "%s", sqlite3_errmsg(*db));
      goto fail;
    }
    if (n == 0) {
      if (a->profile)
        cli_error_in(a->pos[0], "profile %lld has no %s", (long long)*profile,
                    need_what);
      else
        cli_error_in(a->pos[0], "no %s in the database", need_what);
      goto fail;
    }
  }
  return -1;
fail:
  sqlite3_close(*db);
  return LJPDB_EXIT_ERROR;
}

/* ---- query ---- */

static char *read_all_stdin(void) {
  size_t len = 0, cap = 4096;
  char *s = malloc(cap);
  while (s) {
    size_t n = fread(s + len, 1, cap - len - 1, stdin);
    len += n;
    if (n == 0) break;
    if (len + 1 == cap) {
      char *p = realloc(s, cap *= 2);
      if (!p) free(s);
      s = p;
    }
  }
  if (s) s[len] = 0;
  return s;
}

int cmd_query(int argc, char **argv) {
  args a;
  int rc = parse_args("query", argc, argv, OPT_IN_ORDER, OUT_TSV, -1, &a);
  if (rc >= 0) return rc;
  if (a.npos != 2) return cli_usage_error("query: needs DB and SQL");
  sqlite3 *db = ljpdb_open_existing(a.pos[0]);
  if (!db) return LJPDB_EXIT_ERROR;
  char *sql = strcmp(a.pos[1], "-") == 0 ? read_all_stdin() : a.pos[1];
  char err[1024];
  int status = LJPDB_EXIT_OK;
  if (!sql) {
    cli_error_in("standard input", "cannot read the SQL");
    status = LJPDB_EXIT_ERROR;
  } else if (out_sql(db, sql, &a.out, stdout, err, sizeof err)) {
    cli_error_in(a.pos[0], "%s", err);
    status = LJPDB_EXIT_ERROR;
  }
  if (sql != a.pos[1]) free(sql);
  sqlite3_close(db);
  return status;
}

/* ---- schema ---- */

static void print_list(const char *const *sql) {
  for (; *sql; sql++) fputs(*sql, stdout);
}

int cmd_schema(int argc, char **argv) {
  args a;
  int rc = parse_args("schema", argc, argv, 0, OUT_TSV, -1, &a);
  if (rc >= 0) return rc;
  if (a.npos > 1) return cli_usage_error("schema: too many arguments");
  if (a.npos == 0) {
    printf("PRAGMA application_id = %d;\nPRAGMA user_version = %d;\n\n",
           LJPDB_APPLICATION_ID, LJPDB_SCHEMA_VERSION);
    print_list(ljpdb_schema_tables);
    putchar('\n');
    print_list(ljpdb_schema_lazy_indexes);
    print_list(ljpdb_schema_indexes);
    putchar('\n');
    print_list(ljpdb_schema_views);
    return LJPDB_EXIT_OK;
  }
  sqlite3 *db = ljpdb_open_existing(a.pos[0]);
  if (!db) return LJPDB_EXIT_ERROR;
  out_options o = {OUT_TSV, 0};
  char err[512];
  int status = LJPDB_EXIT_OK;
  /* The lazy index is listed first, as in the schema of this version:
   * the first reader built it after the others, and the listing should
   * not show who came first. */
  if (out_sql(db,
              "SELECT sql || ';' FROM sqlite_master WHERE sql IS NOT NULL "
              "ORDER BY type = 'view', type = 'index', "
              "name <> 'call_paths_by_parent', rowid",
              &o, stdout, err, sizeof err)) {
    cli_error_in(a.pos[0], "%s", err);
    status = LJPDB_EXIT_ERROR;
  }
  sqlite3_close(db);
  return status;
}

/* ---- the reports over one database ----
 * profiles, top, vmstates, traces and leaks differ only in their SQL and
 * options: one runner, one table.  ?1 is the profile (NULL: all), ?2 the
 * row limit where the report takes -n. */

typedef struct report {
  const char *name;
  const char *sql;          /* with "%s" for the ORDER BY of --self/--total
                               when allow has OPT_ORDER */
  unsigned allow;
  long default_limit;
  const char *count_sql;    /* rows the report needs, or NULL */
  const char *count_what;
} report;

static const char top_sql[] =
  "WITH f AS (SELECT name, min(kind) AS kind, sum(self) AS self,"
  "             sum(total) AS total FROM function_weights"
  "           WHERE ?1 IS NULL OR profile_id = ?1 GROUP BY name),"
  "     fn AS (SELECT name, max(function) AS function FROM symbols"
  "            WHERE (?1 IS NULL OR profile_id = ?1) AND kind <> 'trace'"
  "            GROUP BY name),"
  "     t AS (SELECT sum(weight) AS n FROM samples"
  "           WHERE ?1 IS NULL OR profile_id = ?1)"
  " SELECT f.self, printf('%%.2f', 100.0 * f.self / t.n) AS \"self%%\","
  " f.total, printf('%%.2f', 100.0 * f.total / t.n) AS \"total%%\","
  " f.kind, coalesce(fn.function || ' ' || f.name, f.name) AS name"
  " FROM f LEFT JOIN fn ON fn.name = f.name, t ORDER BY %s, f.name LIMIT ?2";

static const report reports[] = {
  {"profiles",
   "SELECT id, label, kind, ljs_version AS ljs, stream_version AS stream,"
   " mode, complete, samples, mem_events AS events, size,"
   " substr(sha256, 1, 16) AS sha256, imported_at, path"
   " FROM profiles WHERE ?1 IS NULL OR id = ?1 ORDER BY id",
   OPT_PROFILE, -1, NULL, NULL},
  {"top", top_sql, OPT_PROFILE | OPT_ORDER | OPT_LIMIT, 20,
   count_samples_sql, "sysprof samples"},
  {"vmstates",
   "SELECT v.profile_id AS profile, p.label, v.name AS vmstate, v.samples,"
   " printf('%.2f', v.percent) AS \"%\""
   " FROM vmstate_totals v JOIN profiles p ON p.id = v.profile_id"
   " WHERE ?1 IS NULL OR v.profile_id = ?1 ORDER BY v.profile_id, v.vmstate",
   OPT_PROFILE, -1, count_samples_sql, "sysprof samples"},
  {"traces",
   "SELECT profile, trace, gen, samples, allocs, bytes, name FROM ("
   " SELECT t.profile_id AS profile, t.traceno AS trace, t.generation AS gen,"
   "  t.samples, t.alloc_events AS allocs, t.alloc_bytes AS bytes, t.name,"
   "  row_number() OVER (PARTITION BY t.profile_id ORDER BY t.samples DESC,"
   "   t.alloc_bytes DESC, t.traceno, t.generation) AS rank"
   " FROM trace_totals t WHERE ?1 IS NULL OR t.profile_id = ?1)"
   " WHERE ?2 < 0 OR rank <= ?2 ORDER BY profile, rank",
   OPT_PROFILE | OPT_LIMIT, -1,
   "SELECT count(*) FROM traces WHERE id <> 0 AND"
   " (?1 IS NULL OR profile_id = ?1)",
   "JIT traces"},
  {"leaks",
   "SELECT profile, bytes, allocs, frees, site FROM ("
   " SELECT h.profile_id AS profile, h.bytes, h.allocs, h.frees, h.site,"
   "  row_number() OVER (PARTITION BY h.profile_id"
   "   ORDER BY h.bytes DESC, h.site) AS rank"
   " FROM heap_summary h WHERE h.bytes > 0"
   "  AND (?1 IS NULL OR h.profile_id = ?1))"
   " WHERE ?2 < 0 OR rank <= ?2 ORDER BY profile, rank",
   OPT_PROFILE | OPT_LIMIT, -1, count_allocations_sql, "memprof events"},
};

static int run_named(const char *name, int argc, char **argv) {
  const report *r = NULL;
  for (size_t i = 0; i < sizeof reports / sizeof reports[0]; i++)
    if (strcmp(reports[i].name, name) == 0)
      r = &reports[i];
  args a;
  sqlite3 *db = NULL;
  int64_t p = 0;
  char text[2048];
  const char *sql = r->sql;
  int rc = parse_args(r->name, argc, argv, r->allow, OUT_TABLE,
                      r->default_limit, &a);
  if (rc >= 0) return rc;
  if ((rc = open_for_report(r->name, &a, 1, &db, &p, r->count_sql,
                            r->count_what)) >= 0)
    return rc;
  if (r->allow & OPT_ORDER) {
    snprintf(text, sizeof text, r->sql,
             a.by_total ? "f.total DESC, f.self DESC"
                        : "f.self DESC, f.total DESC");
    sql = text;
  }
  rc = run_report(db, a.pos[0], sql, p, 0,
                  (r->allow & OPT_LIMIT) ? a.limit : 0,
                  (r->allow & OPT_LIMIT) ? 2 : 0, &a.out);
  sqlite3_close(db);
  return rc;
}

int cmd_profiles(int argc, char **argv) {
  return run_named("profiles", argc, argv);
}
int cmd_top(int argc, char **argv) { return run_named("top", argc, argv); }
int cmd_vmstates(int argc, char **argv) {
  return run_named("vmstates", argc, argv);
}
int cmd_traces(int argc, char **argv) {
  return run_named("traces", argc, argv);
}
int cmd_leaks(int argc, char **argv) { return run_named("leaks", argc, argv); }

static char *profile_label(sqlite3 *db, int64_t id) {
  sqlite3_stmt *st;
  char *s = NULL;
  if (sqlite3_prepare_v2(db, "SELECT label FROM profiles WHERE id = ?", -1,
                         &st, NULL) != SQLITE_OK)
    return NULL;
  sqlite3_bind_int64(st, 1, id);
  if (sqlite3_step(st) == SQLITE_ROW)
    s = sqlite3_mprintf("%s", (const char *)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  return s;
}

int cmd_diff(int argc, char **argv) {
  /* Share = the function's weight over the profile's samples, so profiles
   * of different length compare; sorted by the size of the change.  Traces
   * are rolled into their functions (function_rollup): two runs of the
   * same code number their traces differently, which is no change. */
  static const char sql[] =
    "WITH a AS (SELECT name, max(function) AS fn, sum(%s) AS w"
    "           FROM function_rollup WHERE profile_id = ?1 GROUP BY name),"
    "     b AS (SELECT name, max(function) AS fn, sum(%s) AS w"
    "           FROM function_rollup WHERE profile_id = ?2 GROUP BY name),"
    "     na AS (SELECT sum(weight) AS n FROM samples WHERE profile_id = ?1),"
    "     nb AS (SELECT sum(weight) AS n FROM samples WHERE profile_id = ?2),"
    "     d AS (SELECT u.name, coalesce(a.fn, b.fn) AS fn,"
    "                  100.0 * coalesce(a.w, 0) / na.n AS pa,"
    "                  100.0 * coalesce(b.w, 0) / nb.n AS pb"
    "           FROM (SELECT name FROM a UNION SELECT name FROM b) u"
    "           LEFT JOIN a ON a.name = u.name LEFT JOIN b ON b.name = u.name,"
    "           na, nb)"
    " SELECT printf('%%.2f', pa) AS \"%w%%\", printf('%%.2f', pb) AS \"%w%%\","
    " printf('%%+.2f', pb - pa) AS delta,"
    " coalesce(fn || ' ' || name, name) AS name FROM d"
    " ORDER BY abs(pb - pa) DESC, name LIMIT ?3";
  args a;
  int rc = parse_args("diff", argc, argv, OPT_ORDER | OPT_LIMIT, OUT_TABLE, 20,
                      &a);
  if (rc >= 0) return rc;
  if (a.npos != 3) return cli_usage_error("diff: needs DB, P1 and P2");
  sqlite3 *db = ljpdb_open_existing(a.pos[0]);
  if (!db) return LJPDB_EXIT_ERROR;
  int64_t p[2];
  char *label[2] = {NULL, NULL};
  rc = LJPDB_EXIT_ERROR;
  for (int i = 0; i < 2; i++) {
    if (!(p[i] = ljpdb_profile(db, a.pos[0], a.pos[1 + i]))) goto out;
    if (count_of(db, count_samples_sql, p[i]) <= 0) {
      cli_error_in(a.pos[0], "profile %lld has no sysprof samples",
                  (long long)p[i]);
      goto out;
    }
    label[i] = profile_label(db, p[i]);
  }
  if (!label[0] || !label[1] || strcmp(label[0], label[1]) == 0) {
    for (int i = 0; i < 2; i++) {
      sqlite3_free(label[i]);
      label[i] = sqlite3_mprintf("%lld", (long long)p[i]);
    }
  }
  const char *w = a.by_total ? "total" : "self";
  char *text = sqlite3_mprintf(sql, w, w, label[0], label[1]);
  if (text) {
    rc = run_report(db, a.pos[0], text, p[0], p[1], a.limit, 3, &a.out);
    sqlite3_free(text);
  }
out:
  sqlite3_free(label[0]);
  sqlite3_free(label[1]);
  sqlite3_close(db);
  return rc;
}
