/*
 * schema.c — the schema (documented table by table in docs/ljpdb-schema.md)
 * and the checks made when a database is opened.
 *
 * Shape, after perf's SQLite export: small dimension tables (symbols, call
 * paths, traces, heap sites) referenced by id from the two big fact tables
 * (samples, allocations).  Row id 0 of every dimension table is "unknown",
 * so a reference is never NULL and inner joins never drop facts.  Symbols,
 * call paths, traces and sites belong to one profile: addresses mean nothing
 * across processes, and a profile can then be deleted (import --replace)
 * without leaving orphans.  Views give names to the ids.
 */
#include "schema.h"

#include <stdio.h>
#include <string.h>

/* How long a connection waits for another one's write lock. */
#define DB_BUSY_MS 10000

const char *const ljpdb_schema_tables[] = {
  "CREATE TABLE profiles (\n"
  "  id INTEGER PRIMARY KEY,\n"
  "  label TEXT NOT NULL,\n"
  "  path TEXT NOT NULL,\n"
  "  kind TEXT NOT NULL,\n"
  "  ljs_version INTEGER NOT NULL,\n"
  "  ljs_layout TEXT,\n"
  "  stream_version INTEGER NOT NULL,\n"
  "  flavor TEXT NOT NULL,\n"
  "  mode TEXT,\n"
  "  complete INTEGER NOT NULL,\n"
  "  error TEXT,\n"
  "  samples INTEGER NOT NULL,\n"
  "  mem_events INTEGER NOT NULL,\n"
  "  symbols_initial INTEGER NOT NULL,\n"
  "  symbols_midstream INTEGER NOT NULL,\n"
  "  symbol_duplicates INTEGER NOT NULL,\n"
  "  trace_redefinitions INTEGER NOT NULL,\n"
  "  max_lua_depth INTEGER NOT NULL,\n"
  "  max_host_depth INTEGER NOT NULL,\n"
  "  size INTEGER NOT NULL,\n"
  "  sha256 TEXT NOT NULL UNIQUE,\n"
  "  imported_at TEXT NOT NULL,\n"
  "  interval_ns INTEGER,\n"
  "  timer TEXT\n"
  ");\n",
  "CREATE TABLE vmstates (id INTEGER PRIMARY KEY, name TEXT NOT NULL);\n",
  "INSERT INTO vmstates VALUES (0,'INTERP'),(1,'LFUNC'),(2,'FFUNC'),"
  "(3,'CFUNC'),(4,'GC'),(5,'EXIT'),(6,'RECORD'),(7,'OPT'),(8,'ASM'),"
  "(9,'TRACE');\n",
  "CREATE TABLE mem_events (id INTEGER PRIMARY KEY, name TEXT NOT NULL);\n",
  "INSERT INTO mem_events VALUES (1,'ALLOC'),(2,'FREE'),(3,'REALLOC');\n",
  "CREATE TABLE mem_sources (id INTEGER PRIMARY KEY, name TEXT NOT NULL);\n",
  "INSERT INTO mem_sources VALUES (1,'INTERNAL'),(2,'LFUNC'),(3,'CFUNC'),"
  "(4,'TRACE');\n",
  "CREATE TABLE symbols (\n"
  "  id INTEGER PRIMARY KEY,\n"
  "  profile_id INTEGER NOT NULL,\n"
  "  kind TEXT NOT NULL,\n"
  "  name TEXT NOT NULL,\n"
  "  chunk TEXT,\n"
  "  line INTEGER NOT NULL,\n"
  "  address INTEGER NOT NULL,\n"
  "  function TEXT\n"
  ");\n",
  "INSERT INTO symbols VALUES (0, 0, 'unknown', '[unknown]', NULL, 0, 0, NULL);\n",
  "CREATE TABLE call_paths (\n"
  "  id INTEGER PRIMARY KEY,\n"
  "  profile_id INTEGER NOT NULL,\n"
  "  parent_id INTEGER NOT NULL,\n"
  "  symbol_id INTEGER NOT NULL,\n"
  "  line INTEGER NOT NULL,\n"
  "  depth INTEGER NOT NULL\n"
  ");\n",
  "INSERT INTO call_paths VALUES (0, 0, 0, 0, 0, 0);\n",
  "CREATE TABLE traces (\n"
  "  id INTEGER PRIMARY KEY,\n"
  "  profile_id INTEGER NOT NULL,\n"
  "  traceno INTEGER NOT NULL,\n"
  "  generation INTEGER NOT NULL,\n"
  "  name TEXT NOT NULL,\n"
  "  chunk TEXT,\n"
  "  line INTEGER NOT NULL,\n"
  "  proto_address INTEGER NOT NULL,\n"
  "  mcode INTEGER,\n"
  "  initial INTEGER NOT NULL\n"
  ");\n",
  "INSERT INTO traces VALUES (0, 0, 0, 0, '[unknown]', NULL, 0, 0, NULL, 0);\n",
  "CREATE TABLE samples (\n"
  "  id INTEGER PRIMARY KEY,\n"
  "  profile_id INTEGER NOT NULL,\n"
  "  seq INTEGER NOT NULL,\n"
  "  vmstate INTEGER NOT NULL,\n"
  "  call_path_id INTEGER NOT NULL,\n"
  "  trace_id INTEGER NOT NULL,\n"
  "  weight INTEGER NOT NULL,\n"
  "  time_ns INTEGER,\n"
  "  coro INTEGER,\n"
  "  flags INTEGER\n"
  ");\n",
  "CREATE TABLE sites (\n"
  "  id INTEGER PRIMARY KEY,\n"
  "  profile_id INTEGER NOT NULL,\n"
  "  source INTEGER NOT NULL,\n"
  "  address INTEGER NOT NULL,\n"
  "  line INTEGER NOT NULL,\n"
  "  traceno INTEGER NOT NULL,\n"
  "  symbol_id INTEGER NOT NULL,\n"
  "  trace_id INTEGER NOT NULL,\n"
  "  name TEXT NOT NULL\n"
  ");\n",
  "INSERT INTO sites VALUES (0, 0, 1, 0, 0, 0, 0, 0, '[unknown]');\n",
  "CREATE TABLE allocations (\n"
  "  id INTEGER PRIMARY KEY,\n"
  "  profile_id INTEGER NOT NULL,\n"
  "  seq INTEGER NOT NULL,\n"
  "  event INTEGER NOT NULL,\n"
  "  source INTEGER NOT NULL,\n"
  "  site_id INTEGER NOT NULL,\n"
  "  symbol_id INTEGER NOT NULL,\n"
  "  line INTEGER NOT NULL,\n"
  "  trace_id INTEGER NOT NULL,\n"
  "  old_addr INTEGER NOT NULL,\n"
  "  old_size INTEGER NOT NULL,\n"
  "  new_addr INTEGER NOT NULL,\n"
  "  new_size INTEGER NOT NULL,\n"
  "  origin_id INTEGER NOT NULL\n"
  ");\n",
  NULL};

/* Only what the views need: the facts of one profile are a contiguous
 * rowid range, read by full scans; indexes on samples would double the
 * import time and the file size for little gain. */
const char *const ljpdb_schema_lazy_indexes[] = {
  "CREATE INDEX IF NOT EXISTS call_paths_by_parent ON call_paths(parent_id);\n",
  NULL};

const char *const ljpdb_schema_indexes[] = {
  "CREATE INDEX IF NOT EXISTS symbols_by_profile ON symbols(profile_id, name);\n",
  "CREATE INDEX IF NOT EXISTS traces_by_profile ON traces(profile_id, traceno);\n",
  "CREATE INDEX IF NOT EXISTS sites_by_profile ON sites(profile_id);\n",
  NULL};

const char *const ljpdb_schema_drop_indexes[] = {
  "DROP INDEX IF EXISTS call_paths_by_parent;\n",
  "DROP INDEX IF EXISTS symbols_by_profile;\n",
  "DROP INDEX IF EXISTS traces_by_profile;\n",
  "DROP INDEX IF EXISTS sites_by_profile;\n",
  NULL};

const char *const ljpdb_schema_views[] = {
  /* The folded text of every call path: frame names outermost first,
   * joined by ';' as ljpfold prints them.  Path 0 (no frames) is ''. */
  "CREATE VIEW call_path_stacks AS\n"
  "WITH RECURSIVE s(id, profile_id, depth, stack) AS (\n"
  "  SELECT c.id, c.profile_id, 1, y.name FROM call_paths c\n"
  "    JOIN symbols y ON y.id = c.symbol_id WHERE c.parent_id = 0 AND c.id <> 0\n"
  "  UNION ALL\n"
  "  SELECT c.id, c.profile_id, s.depth + 1, s.stack || ';' || y.name FROM s\n"
  "    JOIN call_paths c ON c.parent_id = s.id JOIN symbols y ON y.id = c.symbol_id\n"
  ")\n"
  "SELECT id, profile_id, depth, stack FROM s\n"
  "UNION ALL SELECT 0, 0, 0, '';\n",
  /* One row per sample, with names. */
  "CREATE VIEW samples_view AS\n"
  "SELECT s.id, s.profile_id, s.seq, v.name AS vmstate, st.stack,\n"
  "       t.traceno, s.weight, s.time_ns, s.coro, s.flags\n"
  "FROM samples s JOIN vmstates v ON v.id = s.vmstate\n"
  "  JOIN call_path_stacks st ON st.id = s.call_path_id\n"
  "  JOIN traces t ON t.id = s.trace_id;\n",
  /* Folded stacks: what ljpfold prints, per profile. */
  "CREATE VIEW folded AS\n"
  "SELECT w.profile_id, st.stack, sum(w.weight) AS weight FROM (\n"
  "  SELECT profile_id, call_path_id, sum(weight) AS weight FROM samples\n"
  "  GROUP BY profile_id, call_path_id) w\n"
  "JOIN call_path_stacks st ON st.id = w.call_path_id\n"
  "GROUP BY w.profile_id, st.stack;\n",
  /* Self and total weight per function name and vmstate.  A function that
   * occurs several times in one stack (recursion) counts once in total. */
  "CREATE VIEW function_vmstates AS\n"
  "WITH RECURSIVE\n"
  "  pw(path, profile_id, vmstate, weight) AS (\n"
  "    SELECT call_path_id, profile_id, vmstate, sum(weight) FROM samples\n"
  "    WHERE call_path_id <> 0 GROUP BY profile_id, vmstate, call_path_id),\n"
  "  anc(path, profile_id, vmstate, node, weight) AS (\n"
  "    SELECT path, profile_id, vmstate, path, weight FROM pw\n"
  "    UNION ALL\n"
  "    SELECT a.path, a.profile_id, a.vmstate, c.parent_id, a.weight FROM anc a\n"
  "      JOIN call_paths c ON c.id = a.node WHERE c.parent_id <> 0),\n"
  "  per_path(profile_id, vmstate, name, kind, self, total) AS (\n"
  "    SELECT a.profile_id, a.vmstate, y.name, min(y.kind),\n"
  "           max(a.node = a.path) * a.weight, a.weight FROM anc a\n"
  "      JOIN call_paths c ON c.id = a.node JOIN symbols y ON y.id = c.symbol_id\n"
  "    GROUP BY a.profile_id, a.vmstate, a.path, y.name)\n"
  "SELECT profile_id, vmstate, name, min(kind) AS kind, sum(self) AS self,\n"
  "       sum(total) AS total\n"
  "FROM per_path GROUP BY profile_id, vmstate, name;\n",
  "CREATE VIEW function_weights AS\n"
  "SELECT profile_id, name, min(kind) AS kind, sum(self) AS self,\n"
  "       sum(total) AS total\n"
  "FROM function_vmstates GROUP BY profile_id, name;\n",
  /* A sample's call path with its trace rolled into the function the trace
   * runs in: the parent path when the innermost frame is a trace that has
   * one.  Trace numbers differ between runs of the same code; functions do
   * not (ljpfold --traces=function). */
  "CREATE VIEW sample_function_paths AS\n"
  "SELECT s.id, s.profile_id, s.vmstate, s.weight,\n"
  "       CASE WHEN y.kind = 'trace' AND c.parent_id <> 0 THEN c.parent_id\n"
  "            ELSE s.call_path_id END AS call_path_id\n"
  "FROM samples s JOIN call_paths c ON c.id = s.call_path_id\n"
  "  JOIN symbols y ON y.id = c.symbol_id;\n",
  "CREATE VIEW folded_functions AS\n"
  "SELECT w.profile_id, st.stack, sum(w.weight) AS weight FROM (\n"
  "  SELECT profile_id, call_path_id, sum(weight) AS weight\n"
  "  FROM sample_function_paths GROUP BY profile_id, call_path_id) w\n"
  "JOIN call_path_stacks st ON st.id = w.call_path_id\n"
  "GROUP BY w.profile_id, st.stack;\n",
  /* function_weights with traces rolled into their functions, and the
   * function's name from its source beside its location. */
  "CREATE VIEW function_rollup AS\n"
  "WITH RECURSIVE\n"
  "  pw(path, profile_id, weight) AS (\n"
  "    SELECT call_path_id, profile_id, sum(weight) FROM sample_function_paths\n"
  "    WHERE call_path_id <> 0 GROUP BY profile_id, call_path_id),\n"
  "  anc(path, profile_id, node, weight) AS (\n"
  "    SELECT path, profile_id, path, weight FROM pw\n"
  "    UNION ALL\n"
  "    SELECT a.path, a.profile_id, c.parent_id, a.weight FROM anc a\n"
  "      JOIN call_paths c ON c.id = a.node WHERE c.parent_id <> 0),\n"
  "  per_path(profile_id, name, function, kind, self, total) AS (\n"
  "    SELECT a.profile_id, y.name, max(y.function), min(y.kind),\n"
  "           max(a.node = a.path) * a.weight, a.weight FROM anc a\n"
  "      JOIN call_paths c ON c.id = a.node JOIN symbols y ON y.id = c.symbol_id\n"
  "    GROUP BY a.profile_id, a.path, y.name)\n"
  "SELECT profile_id, name, max(function) AS function, min(kind) AS kind,\n"
  "       sum(self) AS self, sum(total) AS total\n"
  "FROM per_path GROUP BY profile_id, name;\n",
  /* Samples per VM state. */
  "CREATE VIEW vmstate_totals AS\n"
  "SELECT s.profile_id, s.vmstate, v.name, sum(s.weight) AS samples,\n"
  "       round(100.0 * sum(s.weight) / t.total, 2) AS percent\n"
  "FROM samples s JOIN vmstates v ON v.id = s.vmstate\n"
  "  JOIN (SELECT profile_id, sum(weight) AS total FROM samples\n"
  "        GROUP BY profile_id) t ON t.profile_id = s.profile_id\n"
  "GROUP BY s.profile_id, s.vmstate;\n",
  /* One row per memprof event, with names. */
  "CREATE VIEW allocations_view AS\n"
  "SELECT a.id, a.profile_id, a.seq, e.name AS event, o.name AS source,\n"
  "       t.name AS site, a.old_addr, a.old_size, a.new_addr, a.new_size,\n"
  "       a.origin_id\n"
  "FROM allocations a JOIN mem_events e ON e.id = a.event\n"
  "  JOIN mem_sources o ON o.id = a.source JOIN sites t ON t.id = a.site_id;\n",
  /* memprof's HEAP SUMMARY (FORMATS.md 9.2): a block's frees and realloc
   * growth are charged to the site that allocated it; sites are merged by
   * name; only rows with bytes > 0 are leaks in the reference's sense. */
  "CREATE VIEW heap_summary AS\n"
  "WITH\n"
  "  a AS (SELECT profile_id, site_id, count(*) AS n, sum(new_size) AS bytes\n"
  "        FROM allocations WHERE event = 1 GROUP BY profile_id, site_id),\n"
  "  p AS (SELECT e.profile_id, o.site_id, count(*) AS n,\n"
  "          sum(CASE WHEN e.event = 3 THEN e.new_size ELSE 0 END) AS allocated,\n"
  "          sum(o.new_size) AS freed\n"
  "        FROM allocations e JOIN allocations o ON o.id = e.origin_id\n"
  "        WHERE e.event IN (2, 3)\n"
  "        GROUP BY e.profile_id, e.event, e.site_id, o.site_id),\n"
  "  d(profile_id, site_id, bytes, allocs, frees) AS (\n"
  "    SELECT profile_id, site_id, bytes, n, 0 FROM a WHERE bytes > 0\n"
  "    UNION ALL\n"
  "    SELECT profile_id, site_id,\n"
  "      max(allocated, 0) - max(freed, 0),\n"
  "      CASE WHEN allocated > 0 THEN n ELSE 0 END,\n"
  "      CASE WHEN freed > 0 THEN n ELSE 0 END FROM p)\n"
  "SELECT d.profile_id, t.name AS site, min(y.chunk) AS chunk,\n"
  "       sum(d.bytes) AS bytes, sum(d.allocs) AS allocs, sum(d.frees) AS frees\n"
  "FROM d JOIN sites t ON t.id = d.site_id JOIN symbols y ON y.id = t.symbol_id\n"
  "GROUP BY d.profile_id, t.name;\n",
  /* Blocks allocated during the profile and never freed or reallocated,
   * per allocating site. */
  "CREATE VIEW live_heap AS\n"
  "SELECT a.profile_id, t.name AS site, min(y.chunk) AS chunk,\n"
  "       sum(a.new_size) AS bytes, count(*) AS blocks\n"
  "FROM allocations a JOIN sites t ON t.id = a.site_id\n"
  "  JOIN symbols y ON y.id = t.symbol_id\n"
  "WHERE a.event IN (1, 3)\n"
  "  AND a.id NOT IN (SELECT origin_id FROM allocations WHERE origin_id <> 0)\n"
  "GROUP BY a.profile_id, t.name;\n",
  /* Per trace: sysprof samples in it, memprof events and bytes from it. */
  "CREATE VIEW trace_totals AS\n"
  "SELECT t.profile_id, t.id AS trace_id, t.traceno, t.generation, t.name,\n"
  "       coalesce(s.samples, 0) AS samples,\n"
  "       coalesce(a.events, 0) AS alloc_events,\n"
  "       coalesce(a.bytes, 0) AS alloc_bytes\n"
  "FROM traces t\n"
  "  LEFT JOIN (SELECT trace_id, sum(weight) AS samples FROM samples\n"
  "             WHERE trace_id <> 0 GROUP BY trace_id) s ON s.trace_id = t.id\n"
  "  LEFT JOIN (SELECT trace_id, count(*) AS events, sum(new_size) AS bytes\n"
  "             FROM allocations WHERE trace_id <> 0 GROUP BY trace_id) a\n"
  "    ON a.trace_id = t.id\n"
  "WHERE t.id <> 0;\n",
  NULL};

static int exec(sqlite3 *db, const char *sql, char *err, size_t errlen) {
  char *msg = NULL;
  if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK) return 0;
  snprintf(err, errlen, "%s", msg ? msg : sqlite3_errmsg(db));
  sqlite3_free(msg);
  return -1;
}

int db_exec_all(sqlite3 *db, const char *const *sql, char *err,
                size_t errlen) {
  for (; *sql; sql++)
    if (exec(db, *sql, err, errlen)) return -1;
  return 0;
}

static int pragma_int(sqlite3 *db, const char *sql, long long *v) {
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) return -1;
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) *v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return rc == SQLITE_ROW ? 0 : -1;
}

/* Creates the schema in an empty database.  Several importers may find the
 * file empty at once (a fleet importing into a new file): the write lock
 * taken by BEGIN IMMEDIATE serialises them, and whoever gets it second
 * finds the schema there and leaves it.  Returns 0, or -1 with err set. */
static int create_schema(sqlite3 *db, char *err, size_t errlen) {
  char pragmas[128];
  long long objects = 0;
  snprintf(pragmas, sizeof pragmas,
           "PRAGMA application_id = %d; PRAGMA user_version = %d;",
           LJPDB_APPLICATION_ID, LJPDB_SCHEMA_VERSION);
  if (exec(db, "BEGIN IMMEDIATE", err, errlen)) return -1;
  if (pragma_int(db, "SELECT count(*) FROM sqlite_master", &objects)) {
    snprintf(err, errlen, "cannot read database: %s", sqlite3_errmsg(db));
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return -1;
  }
  if (objects > 0)
    return exec(db, "COMMIT", err, errlen);
  if (db_exec_all(db, ljpdb_schema_tables, err, errlen) ||
      db_exec_all(db, ljpdb_schema_views, err, errlen) ||
      db_exec_all(db, ljpdb_schema_lazy_indexes, err, errlen) ||
      db_exec_all(db, ljpdb_schema_indexes, err, errlen) ||
      exec(db, pragmas, err, errlen) || exec(db, "COMMIT", err, errlen)) {
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return -1;
  }
  return 0;
}

/* The index on call_paths(parent_id) is what call_path_stacks walks from
 * an outermost frame inwards; only readers need it.  An import leaves it
 * out (building it costs as much as a fifth of importing a deep profile)
 * and the first reader builds it, once per import.  A reader that cannot
 * write (a read-only file, or an import holding the write lock) does not
 * wait and reads without it: the same rows, found by a scan. */
int db_build_lazy_indexes(sqlite3 *db) {
  long long have = 0;
  if (pragma_int(db, "SELECT count(*) FROM sqlite_master WHERE type = "
                 "'index' AND name = 'call_paths_by_parent'", &have))
    return -1;
  if (have) return 1;
  if (sqlite3_db_readonly(db, "main") == 1) return 0;
  sqlite3_busy_timeout(db, 0);
  int rc = SQLITE_OK;
  for (const char *const *sql = ljpdb_schema_lazy_indexes;
       *sql && rc == SQLITE_OK; sql++)
    rc = sqlite3_exec(db, *sql, NULL, NULL, NULL);
  sqlite3_busy_timeout(db, DB_BUSY_MS);
  return rc == SQLITE_OK ? 1 : 0;
}

int db_open(const char *path, db_mode mode, sqlite3 **out, char *err,
            size_t errlen) {
  sqlite3 *db = NULL;
  /* One thread per connection: no mutex around every call (binding the
   * import's rows took a lock per value). */
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX |
              (mode == DB_CREATE ? SQLITE_OPEN_CREATE : 0);
  long long appid = 0, version = 0, objects = 0;
  *out = NULL;
  if (sqlite3_open_v2(path, &db, flags, NULL) != SQLITE_OK) {
    snprintf(err, errlen, "cannot open database: %s",
             db ? sqlite3_errmsg(db) : "out of memory");
    sqlite3_close(db);
    return -1;
  }
  sqlite3_extended_result_codes(db, 1);
  /* A concurrent import holds the write lock for its whole run; readers and
   * a second importer wait for it rather than fail at once. */
  sqlite3_busy_timeout(db, DB_BUSY_MS);
  /* One read transaction for the three: another importer creating the
   * schema commits between two of them otherwise, and the file then looks
   * like a foreign database (tables, but application_id 0). */
  int rd = sqlite3_exec(db, "BEGIN", NULL, NULL, NULL);
  if (rd != SQLITE_OK ||
      pragma_int(db, "PRAGMA application_id", &appid) ||
      pragma_int(db, "PRAGMA user_version", &version) ||
      pragma_int(db, "SELECT count(*) FROM sqlite_master", &objects) ||
      sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
    snprintf(err, errlen, "cannot read database: %s", sqlite3_errmsg(db));
    sqlite3_close(db);
    return -1;
  }
  if (objects == 0 && appid == 0 && version == 0) {
    if (mode != DB_CREATE) {
      snprintf(err, errlen, "empty database: import a profile first");
      sqlite3_close(db);
      return -1;
    }
    /* Read the identity again: another importer may have created the
     * schema (or something else) while this one waited for the lock. */
    err[0] = '\0';
    if (create_schema(db, err, errlen) ||
        pragma_int(db, "PRAGMA application_id", &appid) ||
        pragma_int(db, "PRAGMA user_version", &version)) {
      if (!err[0])
        snprintf(err, errlen, "cannot read database: %s", sqlite3_errmsg(db));
      sqlite3_close(db);
      return -1;
    }
  }
  if (objects == 0 && appid == LJPDB_APPLICATION_ID &&
      version == LJPDB_SCHEMA_VERSION) {
    /* created here or by a concurrent importer */
  } else if (appid != LJPDB_APPLICATION_ID) {
    snprintf(err, errlen, "not an ljpdb database (application_id %lld)",
             appid);
    sqlite3_close(db);
    return -1;
  } else if (version != LJPDB_SCHEMA_VERSION) {
    if (version > LJPDB_SCHEMA_VERSION)
      snprintf(err, errlen,
               "schema version %lld is newer than this ljpdb reads (%d); "
               "use a newer ljpdb", version, LJPDB_SCHEMA_VERSION);
    else
      snprintf(err, errlen,
               "schema version %lld is older than this ljpdb reads (%d); "
               "import the profiles again into a new database",
               version, LJPDB_SCHEMA_VERSION);
    sqlite3_close(db);
    return -1;
  }
  /* A reader's queries are right with or without the index: a failure
   * to build it only makes them slower, and is no reason to refuse. */
  if (mode == DB_READ) (void)db_build_lazy_indexes(db);
  *out = db;
  return 0;
}
