/*
 * ljpdb — LuaJIT profiles in an SQLite database.
 *
 * Fixed reports answer fixed questions; ljpdb loads sysprof and memprof
 * files into tables (docs/ljpdb-schema.md) so users can ask their own in
 * SQL, and keeps a few canned reports built on the same views.
 */
#include "ljpdb.h"

#include "cli.h"
#include "cli_limits.h"
#include "ljp.h"
#include "schema.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char usage_text[] =
  "Usage: ljpdb COMMAND [OPTION]... DB [ARG]...\n"
  "Load LuaJIT sysprof/memprof profiles into an SQLite database and query them.\n"
  "\n"
  "Commands:\n"
  "  import DB FILE...     add profiles (FILE '-' = standard input)\n"
  "      --label NAME        name the profiles (default: file name without\n"
  "                          directory and extension)\n"
  "      --replace           re-import files already in DB (same content)\n"
  "      --source-dir=DIR    look for relative chunk paths under DIR to name\n"
  "                          functions from their sources (repeatable)\n"
  "      --no-source         do not read Lua sources\n"
  "      --progress, --no-progress   force the progress bar on or off\n"
  "      --max-frames=N, --max-string=N, --max-symbols=N   reader limits\n"
  "                          (defaults 1M frames per stack, 64M bytes per\n"
  "                          name, 64M symbols; N takes K, M, G, T)\n"
  "  query [FORMAT] DB SQL run SQL ('-': read it from standard input)\n"
  "  profiles DB           list the imported profiles\n"
  "  top DB                functions by samples   [--profile P] [--self|--total] [-n N]\n"
  "  vmstates DB           samples per VM state   [--profile P]\n"
  "  traces DB             JIT traces by samples and allocations [--profile P] [-n N]\n"
  "  leaks DB              memprof heap summary per site [--profile P] [-n N]\n"
  "  diff DB P1 P2         functions whose share of samples changed most\n"
  "                        [--self|--total] [-n N]\n"
  "  schema [DB]           print the schema (of DB, or of this version)\n"
  "\n"
  "Output options (query and reports):\n"
  "  --tsv (query default), --csv, --json, --table (reports default),\n"
  "  --header, --no-header, --max-output=N (bytes, 0 = no limit; default 4G)\n"
  "\n"
  "Profiles (P) are named by id, label or path.  --help, --version.\n"
  "Exit status: 0 ok, 1 error (what could be imported was kept), 2 usage.\n";

int ljpdb_finish_output(int status) {
  return cli_finish_stdout() ? LJPDB_EXIT_ERROR : status;
}

sqlite3 *ljpdb_open_existing(const char *path) {
  sqlite3 *db;
  char err[512];
  if (db_open(path, DB_READ, &db, err, sizeof err)) {
    cli_error_in(path, "%s", err);
    return NULL;
  }
  return db;
}

/* Ids of the profiles whose column equals spec; n = how many (up to 8). */
static int profiles_where(sqlite3 *db, const char *sql, const char *spec,
                          int64_t ids[8], int *n) {
  sqlite3_stmt *st;
  *n = 0;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return -1;
  sqlite3_bind_text(st, 1, spec, -1, SQLITE_STATIC);
  while (sqlite3_step(st) == SQLITE_ROW && *n < 8)
    ids[(*n)++] = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return 0;
}

int64_t ljpdb_profile(sqlite3 *db, const char *dbpath, const char *spec) {
  /* An id is unique; then a label; then the path given at import. */
  static const char *const sql[] = {
    "SELECT id FROM profiles WHERE CAST(id AS TEXT) = ?1",
    "SELECT id FROM profiles WHERE label = ?1 ORDER BY id",
    "SELECT id FROM profiles WHERE path = ?1 ORDER BY id"};
  int64_t ids[8];
  int n = 0;
  for (size_t i = 0; i < 3; i++) {
    if (profiles_where(db, sql[i], spec, ids, &n)) {
      cli_error_in(dbpath, "%s", sqlite3_errmsg(db));
      return 0;
    }
    if (n == 1) return ids[0];
    if (n > 1) {
      char list[160] = "";
      for (int k = 0; k < n; k++) {
        size_t len = strlen(list);
        snprintf(list + len, sizeof list - len, "%s%lld", k ? ", " : "",
                 (long long)ids[k]);
      }
      cli_error_in(dbpath, "'%s' names profiles %s%s; give an id", spec, list,
                  n == 8 ? ", ..." : "");
      return 0;
    }
  }
  cli_error_in(dbpath, "no profile '%s' (see 'ljpdb profiles %s')", spec,
              dbpath);
  return 0;
}

static const struct {
  const char *name;
  int (*fn)(int, char **);
} commands[] = {
  {"import", cmd_import},     {"query", cmd_query},
  {"profiles", cmd_profiles}, {"top", cmd_top},
  {"vmstates", cmd_vmstates}, {"traces", cmd_traces},
  {"leaks", cmd_leaks},       {"diff", cmd_diff},
  {"schema", cmd_schema},
};

int main(int argc, char **argv) {
  cli_init("ljpdb");
  cli_cap_stdout();
  if (argc < 2) return cli_usage_error("missing command");
  if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    fputs(usage_text, stdout);
    return ljpdb_finish_output(LJPDB_EXIT_OK);
  }
  if (strcmp(argv[1], "--version") == 0) {
    cli_print_version();
    printf("SQLite %s, database schema %d\n", sqlite3_libversion(),
           LJPDB_SCHEMA_VERSION);
    return ljpdb_finish_output(LJPDB_EXIT_OK);
  }
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp(argv[1], commands[i].name) == 0)
      return ljpdb_finish_output(commands[i].fn(argc - 1, argv + 1));
  return cli_usage_error("unknown command '%s'", argv[1]);
}

void ljpdb_print_usage(void) { fputs(usage_text, stdout); }
