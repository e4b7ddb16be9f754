/*
 * import.c — one pass over each profile file, rows out as they are met.
 *
 * sysprof: libljp's folder builds the profile model, the call tree every
 * output reads (one hash probe per frame, and memos that skip repeated
 * records); the importer writes a call_paths row per new tree node, a
 * symbols row per new (kind, name) and a samples row per sample.
 * memprof: an allocations row per event, its site interned here
 * (memprof's own aggregation key, not a call tree).  The fact rows go in
 * many to a statement (batch.h).  Memory grows with distinct
 * frames and stacks (and, for memprof, with the blocks live at the
 * moment), never with the file size.
 */
#include "import.h"

#include "cli.h"
#include "cli_names.h"

#include "batch.h"
#include "filehash.h"
#include "intern.h"
#include "ljp.h"
#include "schema.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum {
  ST_SYMBOL, ST_TRACE, ST_SITE, ST_PROFILE,
  ST_FIND, ST_MAXID_PROFILE, ST_SIZE,
  ST__COUNT
};

static const char *const stmt_sql[ST__COUNT] = {
  "INSERT INTO symbols VALUES (?,?,?,?,?,?,?,?)",
  "INSERT INTO traces VALUES (?,?,?,?,?,?,?,?,?,?)",
  "INSERT INTO sites VALUES (?,?,?,?,?,?,?,?,?)",
  "INSERT INTO profiles VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
  "SELECT id, label FROM profiles WHERE sha256 = ?",
  "SELECT coalesce(max(id), 0) + 1 FROM profiles",
  "SELECT 1 FROM profiles WHERE size = ? LIMIT 1",
};

static const char *const delete_sql[] = {
  "DELETE FROM samples WHERE profile_id = ?1",
  "DELETE FROM allocations WHERE profile_id = ?1",
  "DELETE FROM call_paths WHERE profile_id = ?1",
  "DELETE FROM symbols WHERE profile_id = ?1",
  "DELETE FROM traces WHERE profile_id = ?1",
  "DELETE FROM sites WHERE profile_id = ?1",
  "DELETE FROM profiles WHERE id = ?1",
  NULL};

#define SYMBOL_NONE (-2)

/* The fact tables' rows go in BATCH_ROWS to a statement (batch.h). */
#define BATCH_ROWS 64
#define SAMPLE_COLS 9
#define PATH_COLS 6
#define ALLOC_COLS 14

/* A tree frame's symbols row and the line its call paths keep. */
struct frame_row {
  int64_t sym;             /* 0: not made yet */
  uint64_t line;
};

struct importer {
  sqlite3 *db;
  import_options opt;
  sqlite3_stmt *st[ST__COUNT];
  row_batch sample_rows, path_rows, path_rows_auto, alloc_rows;
  row_batch *paths;        /* the call_paths batch of this file */
  /* Next free ids; row 0 of each table is the "unknown" row. */
  int64_t next_symbol, next_path, next_trace, next_site, next_alloc;
  /* Per-file state, cleared between files (capacity kept). */
  int64_t profile_id;
  ljp_reader *r;
  ljp_flavor flavor;
  /* sysprof: the profile model (see tree_start) */
  ljp_tree *tree;
  ljp_folder *folder;
  int64_t path_base;       /* call_paths.id of tree node k: path_base + k */
  uint32_t nodes_written;  /* nodes 1..nodes_written-1 have their row */
  struct frame_row *frame_rows; /* by tree frame id */
  size_t nframe_rows, frame_rows_cap;
  name_map tree_symbols;   /* (kind, name) -> symbols.id */
  /* memprof: allocation sites are not a call tree */
  tuple_map frames;        /* frame identity -> symbol id */
  name_map symbols;        /* (kind, symbol) + name -> symbol id */
  tuple_map traces;        /* trace symbol (or number) -> trace id */
  tuple_map sites;         /* memprof aggregation key -> site id */
  tuple_map heap;          /* live block address -> allocation id */
  char *name;
  size_t name_cap;
  int saw_host, saw_guest;
  import_stats stats;
  char *err;               /* where failures are described */
  size_t errlen;
};

/* ---- small helpers ---- */

static void msgf(importer *im, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(im->err, im->errlen, fmt, ap);
  va_end(ap);
}

static int db_fail(importer *im, const char *what) {
  msgf(im, "database: %s: %s", what, sqlite3_errmsg(im->db));
  return -1;
}

/* Steps a fully bound INSERT and resets it. */
static int step_done(importer *im, sqlite3_stmt *st, const char *what) {
  int rc = sqlite3_step(st);
  sqlite3_reset(st);
  if (rc != SQLITE_DONE) return db_fail(im, what);
  return 0;
}

static int exec(importer *im, const char *sql) {
  char *m = NULL;
  if (sqlite3_exec(im->db, sql, NULL, NULL, &m) == SQLITE_OK) return 0;
  msgf(im, "database: %s", m ? m : sqlite3_errmsg(im->db));
  sqlite3_free(m);
  return -1;
}

static int64_t query_int(importer *im, const char *sql) {
  sqlite3_stmt *st;
  int64_t v = -1;
  if (sqlite3_prepare_v2(im->db, sql, -1, &st, NULL) != SQLITE_OK) return -1;
  if (sqlite3_step(st) == SQLITE_ROW) v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

/* SQLite integers are signed 64-bit: a value above 2^63 (never an address
 * or a size in practice) is stored as its two's complement, which
 * printf('%x', v) in SQL prints unchanged. */
static void bind_u64(sqlite3_stmt *st, int i, uint64_t v) {
  sqlite3_bind_int64(st, i, (sqlite3_int64)v);
}

static void bind_text(sqlite3_stmt *st, int i, const char *s, size_t n) {
  if (s)
    sqlite3_bind_text64(st, i, s, n, SQLITE_TRANSIENT, SQLITE_UTF8);
  else
    sqlite3_bind_null(st, i);
}

/* Batched rows (batch.h): integers as SQLite stores them (see bind_u64). */
static const batch_cell null_cell = {0, 1};

static batch_cell cell(int64_t v) {
  batch_cell c = {v, 0};
  return c;
}

/* The cells of a new row of b, flushing b first when it is full; NULL
 * with the message set when the flush fails. */
static batch_cell *next_row(importer *im, row_batch *b, const char *what) {
  batch_cell *c = batch_row(b);
  if (c) return c;
  if (batch_flush(b) != SQLITE_OK) return db_fail(im, what), NULL;
  return batch_row(b);
}

static int flush_rows(importer *im) {
  if (batch_flush(&im->path_rows) != SQLITE_OK ||
      batch_flush(&im->path_rows_auto) != SQLITE_OK)
    return db_fail(im, "insert call path");
  if (batch_flush(&im->sample_rows) != SQLITE_OK)
    return db_fail(im, "insert sample");
  if (batch_flush(&im->alloc_rows) != SQLITE_OK)
    return db_fail(im, "insert allocation");
  return 0;
}

static void discard_rows(importer *im) {
  batch_discard(&im->path_rows);
  batch_discard(&im->path_rows_auto);
  batch_discard(&im->sample_rows);
  batch_discard(&im->alloc_rows);
}

/* Formats f into im->name (grown as needed); returns the length, or
 * (size_t)-1 when out of memory. */
static size_t frame_name(importer *im, const ljp_frame *f) {
  cli_namebuf b = {im->name, im->name_cap, 1};
  size_t n = cli_frame_name(&b, f, LJP_NAME_DEFAULT, im->flavor, NULL);
  im->name = b.p;
  im->name_cap = b.cap;
  return n;
}

static const char *frame_kind_text(ljp_frame_kind k) {
  switch (k) {
  case LJP_FRAME_LUA: return "lua";
  case LJP_FRAME_CFUNC: return "cfunc";
  case LJP_FRAME_FFUNC: return "ffunc";
  case LJP_FRAME_HOST: return "host";
  case LJP_FRAME_TRACE: return "trace";
  default: return "unknown";
  }
}

static const char *flavor_text(ljp_flavor f) {
  switch (f) {
  case LJP_FLAVOR_LUAJIT: return "luajit";
  case LJP_FLAVOR_OPENRESTY: return "openresty";
  default: return "tarantool";
  }
}

/* ---- interning ---- */

/* The symbol row of a frame; -1 on failure, SYMBOL_NONE for a frame that
 * has no name.  The cache key is everything
 * the frame's name can depend on, so the name is formatted once per
 * distinct frame; rows are then shared by frames with the same symbol and
 * the same name (host frames at different PCs of one function). */
static int64_t symbol_id(importer *im, const ljp_frame *f) {
  if (f->kind == LJP_FRAME_NONE) return 0;
  tuple_key k = {{(uint64_t)f->kind, f->value, f->line,
                  (uint64_t)(uintptr_t)f->sym, (uint64_t)(uintptr_t)f->proto,
                  f->mcode}};
  int64_t *hit = tuple_map_get(&im->frames, &k);
  if (hit) return *hit;

  size_t n = frame_name(im, f);
  if (n == (size_t)-1) return msgf(im, "out of memory"), -1;
  if (n == 0) {
    /* A frame without a name is left out of the stack, as ljpfold does. */
    if (tuple_map_put(&im->frames, &k, SYMBOL_NONE))
      return msgf(im, "out of memory"), -1;
    return SYMBOL_NONE;
  }
  int64_t *row = name_map_get(&im->symbols, (uint64_t)f->kind,
                              (uint64_t)(uintptr_t)f->sym, im->name, n);
  int64_t id;
  if (row) {
    id = *row;
  } else {
    const ljp_symbol *s = f->sym;
    const char *chunk = NULL;
    size_t chunk_len = 0;
    uint64_t line = 0, addr = f->value;
    if (f->kind == LJP_FRAME_LUA && s) {
      chunk = s->name, chunk_len = s->name_len, line = s->line, addr = s->addr;
    } else if (f->kind == LJP_FRAME_TRACE) {
      if (f->proto) chunk = f->proto->name, chunk_len = f->proto->name_len;
      line = s ? s->line : f->line;
    } else if ((f->kind == LJP_FRAME_CFUNC || f->kind == LJP_FRAME_HOST) && s) {
      addr = s->addr;
    }
    id = im->next_symbol++;
    sqlite3_stmt *st = im->st[ST_SYMBOL];
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, im->profile_id);
    sqlite3_bind_text(st, 3, frame_kind_text(f->kind), -1, SQLITE_STATIC);
    bind_text(st, 4, im->name, n);
    bind_text(st, 5, chunk, chunk_len);
    bind_u64(st, 6, line);
    bind_u64(st, 7, addr);
    /* The function's name from its source, beside the location: a Lua
     * function by its definition line, a trace by the function it starts
     * in. */
    const ljp_symbol *fn = f->kind == LJP_FRAME_LUA ? s
                           : f->kind == LJP_FRAME_TRACE ? f->proto : NULL;
    const char *fname = fn && im->opt.sources
        ? ljp_srcnames_lookup(im->opt.sources, fn->name, fn->name_len, fn->line)
        : NULL;
    if (fname)
      sqlite3_bind_text(st, 8, fname, -1, SQLITE_TRANSIENT);
    else
      sqlite3_bind_null(st, 8);
    if (step_done(im, st, "insert symbol")) return -1;
    if (name_map_put(&im->symbols, (uint64_t)f->kind,
                     (uint64_t)(uintptr_t)f->sym, im->name, n, id))
      return msgf(im, "out of memory"), -1;
    im->stats.symbols++;
  }
  if (tuple_map_put(&im->frames, &k, id)) return msgf(im, "out of memory"), -1;
  return id;
}

/* The traces row of a trace frame or symbol definition.  Keyed by the
 * definition (a number reused after jit.flush() is a new row); a trace
 * number the table does not know gets one row per (number, proto). */
static int64_t trace_id(importer *im, const ljp_symbol *sym, uint64_t traceno,
                        const ljp_symbol *proto, uint64_t line,
                        int initial) {
  tuple_key k = {{(uint64_t)(uintptr_t)sym, sym ? 0 : traceno,
                  sym ? 0 : (uint64_t)(uintptr_t)proto, sym ? 0 : line, 1, 0}};
  int64_t *hit = tuple_map_get(&im->traces, &k);
  if (hit) return *hit;
  if (sym) {
    traceno = sym->traceno;
    line = sym->line;
    if (!proto) proto = ljp_reader_lookup_proto(im->r, sym->addr);
  }
  ljp_frame f = {.kind = LJP_FRAME_TRACE, .value = traceno, .line = line,
                 .sym = sym, .proto = proto};
  size_t n = frame_name(im, &f);
  if (n == (size_t)-1) return msgf(im, "out of memory"), -1;
  int64_t id = im->next_trace++;
  sqlite3_stmt *st = im->st[ST_TRACE];
  sqlite3_bind_int64(st, 1, id);
  sqlite3_bind_int64(st, 2, im->profile_id);
  bind_u64(st, 3, traceno);
  sqlite3_bind_int64(st, 4, sym ? sym->generation : 0);
  bind_text(st, 5, im->name, n);
  if (proto)
    bind_text(st, 6, proto->name, proto->name_len);
  else
    sqlite3_bind_null(st, 6);
  bind_u64(st, 7, line);
  bind_u64(st, 8, sym ? sym->addr : (proto ? proto->addr : 0));
  if (sym && sym->has_mcode)
    bind_u64(st, 9, sym->mcode);
  else
    sqlite3_bind_null(st, 9);
  sqlite3_bind_int(st, 10, initial);
  if (step_done(im, st, "insert trace")) return -1;
  if (tuple_map_put(&im->traces, &k, id)) return msgf(im, "out of memory"), -1;
  return id;
}

/* ---- sysprof: the profile model's call tree, rows out as it grows ---- */

/* The folder of libljp builds the call tree every output reads; the
 * importer only mirrors it.  Frames are keyed by their current line too
 * (call_paths keeps the line a function was at), every new tree node
 * becomes a call_paths row with the id path_base + node, and every new
 * (kind, name) a symbols row.  The tree is per file, so the rows stay
 * per profile; memory grows with distinct stacks only. */
static int tree_start(importer *im) {
  ljp_fold_options o;
  memset(&o, 0, sizeof o);
  o.view = LJP_VIEW_MERGED;
  o.style = LJP_NAME_DEFAULT;
  o.weight = LJP_WEIGHT_SAMPLES;
  o.vmstate = LJP_VMSTATE_NONE; /* an empty stack gets its VMST_ frame */
  o.flavor = LJP_FLAVOR_AUTO;
  o.traces = LJP_TRACES_UNDER;
  o.sources = im->opt.sources;
  o.lines = 1;
  im->tree = ljp_tree_new();
  im->folder = im->tree ? ljp_folder_new(im->tree, &o) : NULL;
  if (!im->folder) return msgf(im, "out of memory"), -1;
  im->path_base = im->next_path - 1;
  im->nodes_written = 1; /* node 0 is the root: call path 0's parent */
  /* The ids path_base + node are the ones SQLite gives rows inserted
   * without an id while the table ends just below them (the usual case).
   * Leaving the id out then saves SQLite a search of the table per row
   * (about 7 % of an import of deep stacks, docs/performance.md); after a
   * --replace or a rolled back file the ids are given explicitly. */
  int64_t top = query_int(im, "SELECT max(id) FROM call_paths");
  im->paths = top >= 0 && top + 1 == im->next_path ? &im->path_rows_auto
                                                   : &im->path_rows;
  return 0;
}

static void tree_end(importer *im) {
  ljp_folder_free(im->folder);
  ljp_tree_free(im->tree);
  im->folder = NULL;
  im->tree = NULL;
  im->nframe_rows = 0;
  name_map_clear(&im->tree_symbols);
}

/* The symbols.kind of a tree frame: the stream's frame kind, 'vm' for the
 * VM-state pseudo frames (frames without a stream kind). */
static const char *tree_kind_text(const ljp_frame_info *fi, ljp_class cls) {
  if (fi->kind == LJP_FRAME_NONE && cls == LJP_CLASS_VM) return "vm";
  return frame_kind_text(fi->kind);
}

/* The symbol row of tree frame `frame`, made on its first use.  Frames
 * that differ only by line share their row.  With sources the tree names a
 * Lua function "fib @a.lua:6"; symbols keeps the location as the name and
 * the function in a column of its own, so the prefix comes off. */
static int64_t tree_symbol(importer *im, uint32_t frame, uint64_t *line) {
  if (frame < im->nframe_rows && im->frame_rows[frame].sym) {
    *line = im->frame_rows[frame].line;
    return im->frame_rows[frame].sym;
  }
  if (frame >= im->frame_rows_cap) {
    size_t cap = (size_t)frame * 2 + 64;
    struct frame_row *p = realloc(im->frame_rows, cap * sizeof *p);
    if (!p) return msgf(im, "out of memory"), -1;
    im->frame_rows = p;
    im->frame_rows_cap = cap;
  }
  for (; im->nframe_rows <= frame; im->nframe_rows++)
    im->frame_rows[im->nframe_rows] = (struct frame_row){0, 0};
  ljp_frame_info fi;
  size_t n;
  const char *name = ljp_tree_frame_name(im->tree, frame, &n);
  ljp_class cls = ljp_tree_frame_class(im->tree, frame);
  if (!name || ljp_tree_frame_info(im->tree, frame, &fi) != LJP_OK)
    return msgf(im, "call tree: no frame %u", (unsigned)frame), -1;
  if (fi.function && fi.kind == LJP_FRAME_LUA) {
    size_t fl = strlen(fi.function);
    if (n > fl && memcmp(name, fi.function, fl) == 0 && name[fl] == ' ')
      name += fl + 1, n -= fl + 1;
  }
  const char *kind = tree_kind_text(&fi, cls);
  uint64_t kind_key = (uint64_t)fi.kind << 8 | (uint64_t)cls;
  int64_t *row = name_map_get(&im->tree_symbols, kind_key, 0, name, n);
  int64_t id;
  if (row) {
    id = *row;
  } else {
    id = im->next_symbol++;
    sqlite3_stmt *st = im->st[ST_SYMBOL];
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int64(st, 2, im->profile_id);
    sqlite3_bind_text(st, 3, kind, -1, SQLITE_STATIC);
    bind_text(st, 4, name, n);
    bind_text(st, 5, fi.chunk, fi.chunk_len);
    bind_u64(st, 6, fi.def_line);
    bind_u64(st, 7, fi.address);
    if (fi.function)
      sqlite3_bind_text(st, 8, fi.function, -1, SQLITE_STATIC);
    else
      sqlite3_bind_null(st, 8);
    if (step_done(im, st, "insert symbol")) return -1;
    if (name_map_put(&im->tree_symbols, kind_key, 0, name, n, id))
      return msgf(im, "out of memory"), -1;
    im->stats.symbols++;
  }
  im->frame_rows[frame].sym = id;
  im->frame_rows[frame].line = fi.line;
  *line = fi.line;
  return id;
}

/* call_paths rows for the nodes the last event added to the tree (node
 * ids are dense and given in creation order, parents first). */
static int write_paths(importer *im) {
  uint32_t n = ljp_tree_node_count(im->tree);
  for (uint32_t node = im->nodes_written; node < n; node++) {
    uint32_t parent = ljp_tree_node_parent(im->tree, node);
    uint64_t line;
    int64_t sym = tree_symbol(im, ljp_tree_node_frame(im->tree, node), &line);
    if (sym < 0) return -1;
    batch_cell *c = next_row(im, im->paths, "insert call path");
    if (!c) return -1;
    if (im->paths == &im->path_rows) *c++ = cell(im->path_base + node);
    c[0] = cell(im->profile_id);
    c[1] = cell(parent ? im->path_base + parent : 0);
    c[2] = cell(sym);
    c[3] = cell((int64_t)line);
    c[4] = cell(ljp_tree_node_depth(im->tree, node));
    im->next_path = im->path_base + node + 1;
    im->stats.call_paths++;
  }
  im->nodes_written = n;
  return 0;
}

static int insert_sample(importer *im, const ljp_sample *s,
                         const ljp_fold_sample *fs, uint64_t seq,
                         int64_t path, int64_t trace) {
  if (s->vmstate != LJP_VMST_TRACE)
    im->saw_guest = 1;
  /* One host frame is what a leaf sample keeps (ljp's capture core in L
   * mode); a call graph reaches main. */
  if (s->host_count > 1) im->saw_host = 1;
  batch_cell *c = next_row(im, &im->sample_rows, "insert sample");
  if (!c) return -1;
  c[0] = cell(im->profile_id);
  c[1] = cell((int64_t)seq);
  c[2] = cell(fs->vmstate);
  c[3] = cell(path);
  c[4] = cell(trace);
  c[5] = cell(fs->weight);
  /* Only x1 streams know when and in which coroutine. */
  c[6] = fs->has_time ? cell((int64_t)fs->time_ns) : null_cell;
  c[7] = fs->has_time ? cell((int64_t)fs->coro) : null_cell;
  c[8] = fs->has_time ? cell((int64_t)fs->flags) : null_cell;
  im->stats.samples++;
  return 0;
}

static int add_sample(importer *im, const ljp_event *ev, uint64_t seq) {
  const ljp_sample *s = &ev->u.sample;
  ljp_fold_sample fs;
  if (!im->folder && tree_start(im)) return -1;
  ljp_status st = ljp_folder_add_ex(im->folder, im->r, ev, &fs);
  if (st != LJP_OK) return msgf(im, "call tree: %s", ljp_status_name(st)), -1;
  if (ljp_tree_node_count(im->tree) > im->nodes_written && write_paths(im))
    return -1;
  int64_t trace = 0;
  if (s->vmstate == LJP_VMST_TRACE) {
    trace = trace_id(im, s->trace.sym, s->trace.value, s->trace.proto,
                     s->trace.line, 0);
    if (trace < 0) return -1;
  }
  return insert_sample(im, s, &fs, seq, fs.leaf ? im->path_base + fs.leaf : 0,
                       trace);
}

/* The site of a memprof event: memprof's own aggregation key (FORMATS.md
 * 9.2) (address, line, trace number), named as the first event with that
 * key names it. */
static int64_t site_id(importer *im, const ljp_mem_event *m, int64_t sym,
                       int64_t trace) {
  uint64_t addr = 0, line = 0, traceno = 0;
  switch (m->source) {
  case LJP_SRC_LFUNC: addr = m->loc.value; line = m->loc.line; break;
  case LJP_SRC_CFUNC: addr = m->loc.value; break;
  case LJP_SRC_TRACE:
    traceno = m->loc.value;
    addr = m->has_mcode ? m->mcode : 0;
    break;
  default: break;
  }
  /* The source is not part of the key: memprof's report merges a TRACE
   * event of trace 0 into INTERNAL (both (0, 0, 0)), and so do we. */
  tuple_key k = {{addr, line, traceno, 0, 0, 0}};
  int64_t *hit = tuple_map_get(&im->sites, &k);
  if (hit) return *hit;
  size_t n;
  if (m->source == LJP_SRC_INTERNAL || m->loc.kind == LJP_FRAME_NONE) {
    n = strlen("INTERNAL"); /* name_cap is never below 256 */
    memcpy(im->name, "INTERNAL", n + 1);
  } else {
    n = frame_name(im, &m->loc);
    if (n == (size_t)-1) return msgf(im, "out of memory"), -1;
  }
  int64_t id = im->next_site++;
  sqlite3_stmt *st = im->st[ST_SITE];
  sqlite3_bind_int64(st, 1, id);
  sqlite3_bind_int64(st, 2, im->profile_id);
  sqlite3_bind_int(st, 3, (int)m->source);
  bind_u64(st, 4, addr);
  bind_u64(st, 5, line);
  bind_u64(st, 6, traceno);
  sqlite3_bind_int64(st, 7, sym);
  sqlite3_bind_int64(st, 8, trace);
  bind_text(st, 9, im->name, n);
  if (step_done(im, st, "insert site")) return -1;
  if (tuple_map_put(&im->sites, &k, id)) return msgf(im, "out of memory"), -1;
  im->stats.sites++;
  return id;
}

static int add_mem(importer *im, const ljp_mem_event *m, uint64_t seq) {
  int64_t sym = 0, trace = 0, origin = 0;
  uint64_t line = 0;
  if (m->loc.kind == LJP_FRAME_LUA) {
    /* The symbol is the function; the event's line is in its own column. */
    ljp_frame f = m->loc;
    if (f.sym) f.line = f.sym->line;
    sym = symbol_id(im, &f);
    line = m->loc.line;
  } else if (m->loc.kind != LJP_FRAME_NONE) {
    sym = symbol_id(im, &m->loc);
  }
  if (sym == SYMBOL_NONE) sym = 0;
  if (sym < 0) return -1;
  if (m->loc.kind == LJP_FRAME_TRACE) {
    trace = trace_id(im, m->loc.sym, m->loc.value, m->loc.proto, m->loc.line,
                     0);
    if (trace < 0) return -1;
  }
  int64_t site = site_id(im, m, sym, trace);
  if (site < 0) return -1;

  /* The heap model of memprof's report: a block is charged to the event
   * that created it; FREE and REALLOC consume the block at old_addr. */
  if (m->kind == LJP_MEM_FREE || m->kind == LJP_MEM_REALLOC) {
    tuple_key k = {{m->old_addr, 0, 0, 0, 0, 0}};
    int64_t *o = tuple_map_get(&im->heap, &k);
    if (o) {
      origin = *o;
      tuple_map_del(&im->heap, &k);
    }
  }
  int64_t id = im->next_alloc++;
  if (m->kind == LJP_MEM_ALLOC || m->kind == LJP_MEM_REALLOC) {
    tuple_key k = {{m->new_addr, 0, 0, 0, 0, 0}};
    if (tuple_map_put(&im->heap, &k, id)) return msgf(im, "out of memory"), -1;
  }
  batch_cell *c = next_row(im, &im->alloc_rows, "insert allocation");
  if (!c) return -1;
  c[0] = cell(id);
  c[1] = cell(im->profile_id);
  c[2] = cell((int64_t)seq);
  c[3] = cell((int64_t)m->kind);
  c[4] = cell((int64_t)m->source);
  c[5] = cell(site);
  c[6] = cell(sym);
  c[7] = cell((int64_t)line);
  c[8] = cell(trace);
  c[9] = cell((int64_t)m->old_addr);
  c[10] = cell((int64_t)m->old_size);
  c[11] = cell((int64_t)m->new_addr);
  c[12] = cell((int64_t)m->new_size);
  c[13] = cell(origin);
  im->stats.mem_events++;
  return 0;
}

/* ---- the input: its bytes, and the hash that identifies them ---- */

/* A regular file is hashed from a descriptor of its own while the reader
 * maps it by path and gives back the pages behind it (memory stays flat
 * as the file grows).  Mapping it once for both cost the same CPU time and
 * kept the whole file resident (docs/performance.md).  Anything else
 * (standard input, a FIFO given by path) cannot be read twice: it is
 * copied to a temporary file, hashed from the copy as the copy grows, and
 * the reader reads the copy.  The hash starts when the file is opened and
 * runs on a thread of its own (filehash.h); import_one decides when it
 * must be waited for. */
typedef struct input {
  int fd;                  /* the copy's descriptor, or -1: reopen path */
  FILE *spool;             /* the copy of a stream */
  uint64_t size;           /* the file's size; after the hash, bytes hashed */
  int hashing;             /* hash started and not finished */
  file_hash hash;
} input;

/* Copies the stream fd to its end into in->spool, hashing the copy as it
 * grows.  0 or -1 with msg. */
static int input_spool(importer *im, int fd, input *in) {
  uint8_t buf[1 << 16];
  int out = fileno(in->spool);
  /* The hash reads with pread(), the reader with read(): sharing the
   * file offset is harmless. */
  int hash_fd = dup(out);
  if (hash_fd < 0)
    return msgf(im, "cannot read the temporary file: %s", strerror(errno)),
           -1;
  file_hash_follow(&in->hash, hash_fd);
  in->hashing = 1;
  for (;;) {
    ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) {
      if (im->opt.stop && *im->opt.stop) break;
      continue;
    }
    if (n < 0) return msgf(im, "read error: %s", strerror(errno)), -1;
    if (n == 0) break;
    for (ssize_t done = 0, w; done < n; done += w) {
      w = write(out, buf + done, (size_t)(n - done));
      if (w < 0 && errno == EINTR) w = 0;
      else if (w < 0)
        return msgf(im, "cannot write the temporary file: %s",
                    strerror(errno)), -1;
    }
    in->size += (uint64_t)n;
    file_hash_grow(&in->hash, in->size, 0);
  }
  file_hash_grow(&in->hash, in->size, 1);
  if (lseek(out, 0, SEEK_SET) != 0)
    return msgf(im, "cannot read the temporary file: %s", strerror(errno)),
           -1;
  in->fd = out;
  return 0;
}

/* Opens the file at path (or spools stdin) and starts its hash; in->size
 * is known.  0 or -1 with msg. */
static int input_open(importer *im, const char *path, input *in) {
  struct stat sb;
  int is_stdin = strcmp(path, "-") == 0, fd, rc;
  memset(in, 0, sizeof *in);
  in->fd = -1;
  if (is_stdin) {
    fd = STDIN_FILENO;
  } else {
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return msgf(im, "%s", strerror(errno)), -1;
  }
  rc = -1;
  if (fstat(fd, &sb) != 0) {
    msgf(im, "%s", strerror(errno));
  } else if (S_ISDIR(sb.st_mode)) {
    msgf(im, "is a directory");
  } else if (!is_stdin && S_ISREG(sb.st_mode)) {
    in->size = (uint64_t)sb.st_size;
    file_hash_start(&in->hash, fd, 1);
    in->hashing = 1;
    return 0;
  } else if (!(in->spool = tmpfile())) { /* deleted when closed */
    msgf(im, "cannot create a temporary file: %s", strerror(errno));
  } else {
    rc = input_spool(im, fd, in);
  }
  if (!is_stdin) close(fd);
  return rc;
}

/* Waits for the hash; in->size becomes the bytes hashed (what the
 * profiles row records).  0 or -1 with msg. */
static int hash_end(importer *im, input *in) {
  in->hashing = 0;
  int e = file_hash_finish(&in->hash);
  if (e) return msgf(im, "read error: %s", strerror(e)), -1;
  in->size = in->hash.size;
  return 0;
}

static void input_close(input *in) {
  if (in->hashing) file_hash_abandon(&in->hash);
  in->hashing = 0;
  if (in->spool) fclose(in->spool);
  in->spool = NULL;
}



static void default_label(const char *path, char *out, size_t cap) {
  if (strcmp(path, "-") == 0) {
    snprintf(out, cap, "stdin");
    return;
  }
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  size_t n = strlen(base);
  const char *dot = strrchr(base, '.');
  if (dot && dot != base) n = (size_t)(dot - base);
  snprintf(out, cap, "%.*s", (int)n, base);
}

static void now_iso8601(char out[32]) {
  time_t t = time(NULL);
  struct tm tm;
  if (gmtime_r(&t, &tm))
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
  else
    snprintf(out, 32, "1970-01-01T00:00:00Z");
}

/* ---- lifecycle ---- */

static void reset_file_state(importer *im) {
  tree_end(im);
  tuple_map_clear(&im->frames);
  name_map_clear(&im->symbols);
  tuple_map_clear(&im->traces);
  tuple_map_clear(&im->sites);
  tuple_map_clear(&im->heap);
  im->saw_host = im->saw_guest = 0;
  memset(&im->stats, 0, sizeof im->stats);
}

static void importer_free(importer *im) {
  for (int i = 0; i < ST__COUNT; i++) sqlite3_finalize(im->st[i]);
  batch_close(&im->sample_rows);
  batch_close(&im->path_rows);
  batch_close(&im->path_rows_auto);
  batch_close(&im->alloc_rows);
  tree_end(im);
  free(im->frame_rows);
  name_map_free(&im->tree_symbols);
  tuple_map_free(&im->frames);
  name_map_free(&im->symbols);
  tuple_map_free(&im->traces);
  tuple_map_free(&im->sites);
  tuple_map_free(&im->heap);
  free(im->name);
  free(im);
}

importer *importer_begin(sqlite3 *db, const import_options *opt, char *err,
                         size_t errlen) {
  importer *im = calloc(1, sizeof *im);
  if (!im) {
    snprintf(err, errlen, "out of memory");
    return NULL;
  }
  im->db = db;
  if (opt) im->opt = *opt;
  im->err = err;
  im->errlen = errlen;
  tuple_map_init(&im->frames, 6);
  tuple_map_init(&im->traces, 5);
  tuple_map_init(&im->sites, 3);
  tuple_map_init(&im->heap, 1);
  im->name_cap = 256;
  im->name = malloc(im->name_cap);
  if (!im->name) {
    snprintf(err, errlen, "out of memory");
    free(im);
    return NULL;
  }
  /* The journal must stay on disk until the commit (the default), so a
   * killed import is undone when the database is next opened.  A big page
   * cache keeps a large import from spilling pages mid-transaction. */
  sqlite3_exec(db, "PRAGMA cache_size = -65536", NULL, NULL, NULL);
  if (exec(im, "BEGIN IMMEDIATE")) {
    importer_free(im);
    return NULL;
  }
  /* Indexes are rebuilt once after the load: cheaper than maintaining them
   * row by row, and they are inside the transaction like everything else.
   * The lazy ones are left to the first reader (db_build_lazy_indexes). */
  if (db_exec_all(db, ljpdb_schema_drop_indexes, err, errlen)) goto fail;
  for (int i = 0; i < ST__COUNT; i++)
    if (sqlite3_prepare_v3(db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT,
                           &im->st[i], NULL) != SQLITE_OK) {
      db_fail(im, "prepare");
      goto fail;
    }
  if (batch_open(&im->sample_rows, db, "INSERT INTO samples (profile_id, seq, "
                 "vmstate, call_path_id, trace_id, weight, time_ns, coro, "
                 "flags)", SAMPLE_COLS, BATCH_ROWS) ||
      batch_open(&im->path_rows, db, "INSERT INTO call_paths", PATH_COLS,
                 BATCH_ROWS) ||
      batch_open(&im->path_rows_auto, db, "INSERT INTO call_paths ("
                 "profile_id, parent_id, symbol_id, line, depth)",
                 PATH_COLS - 1, BATCH_ROWS) ||
      batch_open(&im->alloc_rows, db, "INSERT INTO allocations", ALLOC_COLS,
                 BATCH_ROWS)) {
    db_fail(im, "prepare");
    goto fail;
  }
  im->next_symbol = query_int(im, "SELECT max(id) + 1 FROM symbols");
  im->next_path = query_int(im, "SELECT max(id) + 1 FROM call_paths");
  im->next_trace = query_int(im, "SELECT max(id) + 1 FROM traces");
  im->next_site = query_int(im, "SELECT max(id) + 1 FROM sites");
  im->next_alloc = query_int(im, "SELECT coalesce(max(id), 0) + 1 FROM allocations");
  if (im->next_symbol < 1 || im->next_path < 1 || im->next_trace < 1 ||
      im->next_site < 1 || im->next_alloc < 1) {
    db_fail(im, "read ids");
    goto fail;
  }
  return im;
fail:
  sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
  importer_free(im);
  return NULL;
}

void importer_rollback(importer *im) {
  if (!im) return;
  for (int i = 0; i < ST__COUNT; i++) sqlite3_reset(im->st[i]);
  discard_rows(im);
  sqlite3_exec(im->db, "ROLLBACK", NULL, NULL, NULL);
  importer_free(im);
}

int importer_commit(importer *im, char *err, size_t errlen) {
  im->err = err;
  im->errlen = errlen;
  for (int i = 0; i < ST__COUNT; i++) sqlite3_reset(im->st[i]);
  discard_rows(im);
  if (db_exec_all(im->db, ljpdb_schema_indexes, err, errlen) ||
      exec(im, "COMMIT")) {
    importer_rollback(im);
    return -1;
  }
  importer_free(im);
  return 0;
}

void importer_stats(const importer *im, import_stats *out) {
  *out = im->stats;
}

/* Finds a profile with this content; 0 when none, -1 on error. */
static int64_t find_profile(importer *im, const char *sha, char *label,
                            size_t cap) {
  sqlite3_stmt *st = im->st[ST_FIND];
  int64_t id = 0;
  sqlite3_bind_text(st, 1, sha, -1, SQLITE_STATIC);
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    id = sqlite3_column_int64(st, 0);
    snprintf(label, cap, "%s", (const char *)sqlite3_column_text(st, 1));
  } else if (rc != SQLITE_DONE) {
    id = -1;
  }
  sqlite3_reset(st);
  sqlite3_clear_bindings(st);
  return id < 0 ? db_fail(im, "find profile") : id;
}

/* Whether a profile of this many bytes is in the database: 1, 0, or -1
 * on error.  Only then can the file be one already imported. */
static int size_known(importer *im, uint64_t size) {
  sqlite3_stmt *st = im->st[ST_SIZE];
  bind_u64(st, 1, size);
  int rc = sqlite3_step(st);
  sqlite3_reset(st);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) return db_fail(im, "find size");
  return rc == SQLITE_ROW;
}

static int delete_profile(importer *im, int64_t id) {
  for (const char *const *sql = delete_sql; *sql; sql++) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(im->db, *sql, -1, &st, NULL) != SQLITE_OK)
      return db_fail(im, "delete profile");
    sqlite3_bind_int64(st, 1, id);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return db_fail(im, "delete profile");
  }
  return 0;
}

static int insert_profile(importer *im, const char *path, const char *label,
                          const input *in, int complete) {
  const ljp_counters *c = ljp_reader_counters(im->r);
  sqlite3_stmt *st = im->st[ST_PROFILE];
  char when[32], layout[2] = {0, 0};
  int kind = ljp_reader_kind(im->r);
  uint64_t midstream = 0, initial = 0;
  for (int i = 0; i < 3; i++) {
    initial += c->symbols_initial[i];
    midstream += c->symbols_midstream[i];
  }
  layout[0] = (char)ljp_reader_ljs_layout(im->r);
  now_iso8601(when);
  sqlite3_bind_int64(st, 1, im->profile_id);
  sqlite3_bind_text(st, 2, label, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 3, path, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 4, kind == LJP_KIND_SYSPROF ? "sysprof" : "memprof",
                    -1, SQLITE_STATIC);
  sqlite3_bind_int(st, 5, (int)ljp_reader_ljs_version(im->r));
  if (layout[0])
    sqlite3_bind_text(st, 6, layout, -1, SQLITE_TRANSIENT);
  else
    sqlite3_bind_null(st, 6);
  sqlite3_bind_int(st, 7, (int)ljp_reader_event_version(im->r));
  sqlite3_bind_text(st, 8, flavor_text(im->flavor), -1, SQLITE_STATIC);
  /* The mode is not in the stream: C mode writes host stacks, L mode never
   * does (FORMATS.md 5.4), or only the innermost frame (ljp's capture
   * core); trace samples of ljp 2 carry no stack in either. */
  if (kind == LJP_KIND_SYSPROF && (im->saw_host || im->saw_guest))
    sqlite3_bind_text(st, 9, im->saw_host ? "C" : "L", -1, SQLITE_STATIC);
  else
    sqlite3_bind_null(st, 9);
  sqlite3_bind_int(st, 10, complete);
  if (complete)
    sqlite3_bind_null(st, 11);
  else
    sqlite3_bind_text(st, 11, ljp_reader_error(im->r), -1, SQLITE_TRANSIENT);
  bind_u64(st, 12, c->samples);
  bind_u64(st, 13, c->mem_events);
  bind_u64(st, 14, initial);
  bind_u64(st, 15, midstream);
  bind_u64(st, 16, c->symbol_duplicates);
  bind_u64(st, 17, c->trace_redefinitions);
  bind_u64(st, 18, c->max_lua_depth);
  bind_u64(st, 19, c->max_host_depth);
  bind_u64(st, 20, in->size);
  sqlite3_bind_text(st, 21, in->hash.sha, -1, SQLITE_STATIC);
  sqlite3_bind_text(st, 22, when, -1, SQLITE_TRANSIENT);
  if (kind == LJP_KIND_SYSPROF &&
      ljp_reader_event_version(im->r) == LJP_LJP_VERSION_X1) {
    /* NULL where the stream says "unknown", as for older versions. */
    if (ljp_reader_interval_ns(im->r))
      bind_u64(st, 23, ljp_reader_interval_ns(im->r));
    else
      sqlite3_bind_null(st, 23);
    if (ljp_reader_timer(im->r) != LJP_TIMER_UNKNOWN)
      sqlite3_bind_text(st, 24, ljp_timer_name(ljp_reader_timer(im->r)), -1,
                        SQLITE_STATIC);
    else
      sqlite3_bind_null(st, 24);
  } else {
    sqlite3_bind_null(st, 23);
    sqlite3_bind_null(st, 24);
  }
  int rc = step_done(im, st, "insert profile");
  sqlite3_clear_bindings(st);
  return rc;
}

/* Reads every event of im->r into rows.  Returns the reader's final status
 * (LJP_END, LJP_E_*), or READ_DB_FAILED (message set), or READ_STOPPED. */
enum { READ_DB_FAILED = 100, READ_STOPPED = 101 };

static int read_events(importer *im, uint64_t total) {
  const ljp_event *ev;
  uint64_t nsamples = 0, nmem = 0, tick = 0;
  ljp_status s;
  while ((s = ljp_reader_next(im->r, &ev)) == LJP_OK) {
    if (im->opt.stop && *im->opt.stop) return READ_STOPPED;
    switch (ev->type) {
    case LJP_EV_PROLOGUE:
      im->flavor = ljp_reader_flavor(im->r);
      break;
    case LJP_EV_SYMBOL: {
      const ljp_symbol *sym = ev->u.symbol.sym;
      if (sym->kind == LJP_SYM_TRACE && !ev->u.symbol.duplicate &&
          trace_id(im, sym, sym->traceno, NULL, sym->line,
                   ev->u.symbol.initial) < 0)
        return READ_DB_FAILED;
      break;
    }
    case LJP_EV_SAMPLE:
      if (add_sample(im, ev, ++nsamples)) return READ_DB_FAILED;
      break;
    case LJP_EV_MEMORY:
      if (add_mem(im, &ev->u.mem, ++nmem)) return READ_DB_FAILED;
      break;
    default:
      break;
    }
    if (im->opt.progress && ++tick % 65536 == 0)
      im->opt.progress(im->opt.progress_ctx, ljp_reader_offset(im->r), total);
  }
  if (im->opt.progress)
    im->opt.progress(im->opt.progress_ctx, ljp_reader_offset(im->r), total);
  return (int)s;
}

/* The already-imported check needs the hash; the rows do not.  When no
 * profile has the file's size, none can have its bytes: the hash goes on
 * beside the import (filehash.h) and is checked at the end, where the file
 * is almost always found new.  Otherwise the hash is waited for first, so
 * a duplicate is skipped unread.  Should the check at the end find the file
 * after all (it changed size under the import, or opt.hash_late), the rows
 * are rolled back and it is skipped; with --replace *retry is set and the
 * caller calls again with the hash known, since a replaced profile keeps
 * its id. */
static import_result import_one(importer *im, const char *path, input *in,
                                int64_t *profile_id, int *retry) {
  char label[256], old_label[256];
  import_result res = IMPORT_OK;
  int64_t old = 0;
  int late = 0;

  reset_file_state(im);
  if (in->hashing) {
    int known = size_known(im, in->size);
    if (known < 0) return IMPORT_FATAL;
    late = !known || im->opt.hash_late;
    if (!late && hash_end(im, in)) return IMPORT_FAILED;
  }
  if (im->opt.stop && *im->opt.stop) return IMPORT_INTERRUPTED;
  if (!late) {
    old = find_profile(im, in->hash.sha, old_label, sizeof old_label);
    if (old < 0) return IMPORT_FATAL;
    if (old > 0 && !im->opt.replace) {
      msgf(im, "already imported as profile %lld (%s); skipped",
           (long long)old, old_label);
      *profile_id = old;
      return IMPORT_SKIPPED;
    }
  }
  if (im->opt.label)
    snprintf(label, sizeof label, "%s", im->opt.label);
  else
    default_label(path, label, sizeof label);

  /* A duplicate found at the end gives its ids back, so the rows after it
   * get the ids they would have had with the hash first. */
  const int64_t ids[5] = {im->next_symbol, im->next_path, im->next_trace,
                          im->next_site, im->next_alloc};
  if (exec(im, "SAVEPOINT import_file")) return IMPORT_FATAL;
  if (old > 0) {
    /* A replaced profile keeps its id, so queries naming it still work. */
    if (delete_profile(im, old)) goto fatal;
    im->profile_id = old;
  } else {
    im->profile_id = query_int(im, stmt_sql[ST_MAXID_PROFILE]);
    if (im->profile_id < 1) {
      db_fail(im, "profile id");
      goto fatal;
    }
  }
  ljp_status s = cli_reader_open(&im->r, path, in->fd, NULL, 0,
                                 LJP_FLAVOR_AUTO, im->opt.limits);
  if (!im->r) {
    msgf(im, "out of memory");
    goto failed;
  }
  if (s != LJP_OK) {
    msgf(im, "%s", ljp_reader_error(im->r));
    goto failed;
  }
  im->flavor = ljp_reader_flavor(im->r);
  int rc = read_events(im, in->size);
  if (rc == READ_DB_FAILED) goto fatal;
  if (rc == READ_STOPPED) {
    res = IMPORT_INTERRUPTED;
    goto out_rollback;
  }
  if (rc == LJP_E_TRUNCATED && ljp_reader_kind(im->r) != LJP_KIND_UNKNOWN) {
    /* A crashed producer: what was written is valid and worth keeping. */
    msgf(im, "%s; imported as incomplete", ljp_reader_error(im->r));
    res = IMPORT_TRUNCATED;
  } else if (rc != LJP_END) {
    msgf(im, "%s", ljp_reader_error(im->r));
    goto failed;
  }
  if (late) {
    if (hash_end(im, in)) goto failed;
    old = find_profile(im, in->hash.sha, old_label, sizeof old_label);
    if (old < 0) goto fatal;
    if (old > 0) {
      res = IMPORT_SKIPPED;
      if (im->opt.replace)
        *retry = 1;
      else
        msgf(im, "already imported as profile %lld (%s); skipped",
             (long long)old, old_label);
      *profile_id = old;
      im->next_symbol = ids[0], im->next_path = ids[1];
      im->next_trace = ids[2], im->next_site = ids[3];
      im->next_alloc = ids[4];
      goto out_rollback;
    }
  }
  if (flush_rows(im) ||
      insert_profile(im, path, label, in, res == IMPORT_OK))
    goto fatal;
  if (exec(im, "RELEASE import_file")) goto fatal;
  *profile_id = im->profile_id;
  goto out;

failed:
  res = IMPORT_FAILED;
  goto out_rollback;
fatal:
  res = IMPORT_FATAL;
out_rollback:
  for (int i = 0; i < ST__COUNT; i++) sqlite3_reset(im->st[i]);
  discard_rows(im);
  sqlite3_exec(im->db, "ROLLBACK TO import_file; RELEASE import_file", NULL,
               NULL, NULL);
out:
  tree_end(im); /* the rows are written: the tree is not needed again */
  ljp_reader_free(im->r);
  im->r = NULL;
  if (in->hashing) file_hash_abandon(&in->hash);
  in->hashing = 0;
  return res;
}

import_result import_file(importer *im, const char *path, int64_t *profile_id,
                          char *msg, size_t msglen) {
  int retry = 0;
  im->err = msg;
  im->errlen = msglen;
  msg[0] = 0;
  *profile_id = 0;
  input in;
  if (input_open(im, path, &in)) {
    input_close(&in);
    return IMPORT_FAILED;
  }
  import_result res = import_one(im, path, &in, profile_id, &retry);
  if (retry) {
    msg[0] = 0;
    *profile_id = 0;
    retry = 0;
    /* The copy of a stream is read again from its start. */
    if (in.fd >= 0 && lseek(in.fd, 0, SEEK_SET) != 0) {
      msgf(im, "cannot read the temporary file: %s", strerror(errno));
      res = IMPORT_FAILED;
    } else {
      res = import_one(im, path, &in, profile_id, &retry);
    }
  }
  input_close(&in);
  return res;
}
