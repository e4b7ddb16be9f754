/*
 * test_inject.c — every allocation of the library and the tools' cores
 * fails once: for N = 1, 2, ... the Nth allocation of an operation returns
 * NULL, until the operation runs through without reaching N.  Each run must
 * end cleanly: LJP_E_NOMEM (or the tool's "out of memory"), or the very
 * same result as without the failure where the code has a fallback; never
 * a crash, and nothing leaked (the wrappers count live blocks; the
 * sanitizer build adds LeakSanitizer, tests/valgrind.sh adds memcheck).
 *
 * Usage: test_inject CORPUS_DIR  (tests/fuzz/corpus: small profiles of
 * every format version and folded text).
 */
#include "inject.h"

#include "fold_output.h"
#include "folded.h"
#include "import.h"
#include "ljp.h"
#include "schema.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int failures;
#define EXPECT(cond, ...)                                                     \
  do {                                                                        \
    if (!(cond)) {                                                            \
      fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);         \
      fprintf(stderr, __VA_ARGS__);                                           \
      fputc('\n', stderr);                                                    \
      failures++;                                                             \
    }                                                                         \
  } while (0)

/* What an operation produced: compared with the run without failures. */
typedef struct result {
  int status;              /* LJP_END / LJP_OK, or an error */
  uint64_t digest;         /* of everything it produced */
  uint64_t count;
} result;

static uint64_t mix(uint64_t h, uint64_t v) {
  return (h ^ v) * 1099511628211ULL;
}
static uint64_t mix_bytes(uint64_t h, const void *p, size_t n) {
  const unsigned char *s = p;
  for (size_t i = 0; i < n; i++)
    h = mix(h, s[i]);
  return h;
}

typedef struct input {
  const char *path;
  uint8_t *data;
  size_t size;
  int opt;                 /* fold options / folded-text option byte */
} input;

/* ---- operations ---- */

/* The reader, from memory, a mapped path or a descriptor, with lookups and
 * names as a consumer would use them. */
static void op_read(const input *in, int mode, result *res) {
  ljp_reader *r = ljp_reader_new();
  res->digest = 1469598103934665603ULL;
  res->count = 0;
  if (!r) {
    res->status = LJP_E_NOMEM;
    return;
  }
  int fd = -1;
  ljp_status st;
  if (mode == 0)
    st = ljp_reader_open_memory(r, in->data, in->size);
  else if (mode == 1)
    st = ljp_reader_open_path(r, in->path);
  else {
    fd = open(in->path, O_RDONLY);
    st = ljp_reader_open_fd(r, fd);
  }
  if (st == LJP_OK) {
    const ljp_event *ev;
    while ((st = ljp_reader_next(r, &ev)) == LJP_OK) {
      res->count++;
      res->digest = mix(res->digest, ev->offset * 8 + ev->type);
      if (ev->type == LJP_EV_SAMPLE) {
        ljp_frame fr[32];
        size_t n = ljp_sample_stack(&ev->u.sample, LJP_VIEW_MERGED, fr, 32);
        for (size_t i = 0; i < n && i < 32; i++) {
          char name[128];
          size_t len = ljp_frame_name(&fr[i], LJP_NAME_DEFAULT,
                                      ljp_reader_flavor(r), name, sizeof(name));
          res->digest = mix_bytes(res->digest, name, len < 128 ? len : 127);
        }
      }
    }
  }
  res->status = st;
  if (st != LJP_END)
    res->digest = mix_bytes(res->digest, ljp_reader_error(r),
                            strlen(ljp_reader_error(r)));
  ljp_reader_free(r);
  if (fd >= 0)
    close(fd);
}
static void op_read_memory(const input *in, result *res) { op_read(in, 0, res); }
static void op_read_path(const input *in, result *res) { op_read(in, 1, res); }
static void op_read_fd(const input *in, result *res) { op_read(in, 2, res); }

static int emit_digest(void *ctx, const char *line, size_t len) {
  result *res = ctx;
  res->digest = mix_bytes(res->digest, line, len);
  res->count++;
  return 0;
}

/* Reader, folder (two merged into one tree), folded and reference output,
 * the --base filter. */
static void op_fold(const input *in, result *res) {
  res->digest = 1469598103934665603ULL;
  res->count = 0;
  res->status = LJP_E_NOMEM;
  ljp_fold_options fo;
  memset(&fo, 0, sizeof(fo));
  fo.view = (ljp_stack_view)(in->opt & 3);
  fo.weight = (ljp_weight)((in->opt >> 2) & 3);
  fo.vmstate = (ljp_vmstate_frame)((in->opt >> 4) % 3);
  fo.flavor = LJP_FLAVOR_AUTO;
  ljp_tree *t = ljp_tree_new();
  if (!t)
    return;
  ljp_status st = LJP_OK;
  for (int pass = 0; pass < 2 && st == LJP_OK; pass++) {
    ljp_reader *r = ljp_reader_new();
    ljp_folder *f = ljp_folder_new(t, &fo);
    if (!r || !f)
      st = LJP_E_NOMEM;
    else if ((st = ljp_reader_open_memory(r, in->data, in->size)) == LJP_OK) {
      const ljp_event *ev;
      while ((st = ljp_reader_next(r, &ev)) == LJP_OK)
        if ((st = ljp_folder_add(f, r, ev)) != LJP_OK)
          break;
      if (st == LJP_END || st == LJP_E_TRUNCATED || st == LJP_E_MALFORMED)
        st = LJP_OK; /* input faults are not what this test is about */
    }
    ljp_folder_free(f);
    ljp_reader_free(r);
  }
  if (st == LJP_OK)
    st = ljp_tree_write_folded(t, 0, emit_digest, res);
  if (st == LJP_OK)
    st = fold_write_tarantool(t, 0, emit_digest, res);
  if (st == LJP_OK && ljp_tree_frame_count(t) > 0) {
    size_t len;
    const char *name = ljp_tree_frame_name(t, 1, &len);
    char base[256];
    snprintf(base, sizeof(base), "%.*s", (int)(len < 255 ? len : 255), name);
    fold_filter ff;
    memset(&ff, 0, sizeof(ff));
    ff.base = base;
    ljp_tree *sub = fold_filter_tree(t, &ff);
    if (!sub)
      st = LJP_E_NOMEM;
    else
      st = ljp_tree_write_folded(sub, 0, emit_digest, res);
    ljp_tree_free(sub);
  }
  res->status = st == LJP_OK ? LJP_END : st;
  ljp_tree_free(t);
}

/* The encoder: re-encode the input's events into a memory writer and a
 * sink writer. */
static int sink_digest(void *ctx, const void *data, size_t len) {
  result *res = ctx;
  res->digest = mix_bytes(res->digest, data, len);
  return 0;
}

static void op_write(const input *in, result *res) {
  (void)in;
  res->digest = 1469598103934665603ULL;
  res->count = 0;
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  ljp_writer *s = ljp_writer_new(sink_digest, res, 16);
  ljp_status st = w && s ? LJP_OK : LJP_E_NOMEM;
  ljp_writer *ws[2] = {w, s};
  for (int i = 0; i < 2 && st == LJP_OK; i++) {
    ljp_writer *x = ws[i];
    ljp_frame lua[2];
    memset(lua, 0, sizeof(lua));
    lua[0].kind = LJP_FRAME_LUA;
    lua[0].value = 0x1000;
    lua[0].line = 3;
    lua[1].kind = LJP_FRAME_FFUNC;
    lua[1].value = 7;
    uint64_t host[3] = {0x400100, 0x400200, 0x400300};
    ljp_write_symtab_begin(x, 3, 0);
    for (int k = 0; k < 200; k++)
      ljp_write_symtab_lfunc(x, 0x1000 + (uint64_t)k * 16, "@chunk.lua", 10,
                             (uint64_t)k);
    ljp_write_symtab_cfunc(x, 0x400000, "main", 4);
    ljp_write_symtab_end(x);
    ljp_write_stream_begin(x, LJP_KIND_SYSPROF, 2, LJP_FLAVOR_TARANTOOL, 0);
    for (int k = 0; k < 500; k++)
      ljp_write_sample(x, 1 + k % 3, lua, 2, host, 3);
    ljp_write_event_lfunc(x, 0x9000, "@late.lua", 9, 1);
    st = ljp_write_stream_end(x);
    if (st == LJP_OK)
      st = ljp_writer_status(x);
  }
  if (st == LJP_OK) {
    size_t n;
    const uint8_t *p = ljp_writer_data(w, &n);
    res->digest = mix_bytes(res->digest, p, n);
    res->count = n;
  }
  res->status = st == LJP_OK ? LJP_END : st;
  ljp_writer_free(w);
  ljp_writer_free(s);
}

/* ljpsvg's folded-text reader, in pieces, into two trees. */
static void op_folded(const input *in, result *res) {
  res->digest = 1469598103934665603ULL;
  res->count = 0;
  res->status = LJP_E_NOMEM;
  ljp_tree *a = ljp_tree_new(), *b = ljp_tree_new();
  if (a && b) {
    folded_reader fr;
    folded_init(&fr, a, b, in->opt & 1);
    int rc = 0;
    for (size_t pos = 0; rc == 0 && pos < in->size; pos += 7)
      rc = folded_feed(&fr, in->data + pos,
                       in->size - pos < 7 ? in->size - pos : 7);
    if (rc == 0)
      rc = folded_finish(&fr);
    folded_free(&fr);
    if (rc == 0 && ljp_tree_write_folded(a, 0, emit_digest, res) == LJP_OK &&
        ljp_tree_write_folded(b, 0, emit_digest, res) == LJP_OK)
      res->status = LJP_END;
  }
  ljp_tree_free(a);
  ljp_tree_free(b);
}

/* ljpdb's import into a new in-memory database, committed, then the rows
 * counted.  A failure may cost the file (IMPORT_FAILED) or the transaction
 * (IMPORT_FATAL), never the database: after it, no profile is there. */
static long long count_rows(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st;
  long long v = -1;
  if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
      sqlite3_step(st) == SQLITE_ROW)
    v = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return v;
}

static void op_dbimport(const input *in, result *res) {
  res->digest = 1469598103934665603ULL;
  res->count = 0;
  res->status = LJP_E_NOMEM;
  sqlite3 *db;
  char err[512], msg[512];
  if (db_open(":memory:", DB_CREATE, &db, err, sizeof(err)) != 0)
    return;
  importer *im = importer_begin(db, NULL, err, sizeof(err));
  if (im) {
    int64_t id;
    import_result r = import_file(im, in->path, &id, msg, sizeof(msg));
    if (r == IMPORT_OK || r == IMPORT_TRUNCATED) {
      if (importer_commit(im, err, sizeof(err)) == 0)
        res->status = LJP_END;
    } else {
      EXPECT(strstr(msg, "out of memory") != NULL,
             "import failed for another reason: %s", msg);
      importer_rollback(im);
    }
  }
  static const char *const tables[] = {
      "profiles", "symbols", "call_paths", "samples", "traces", "sites",
      "allocations"};
  for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
    char sql[64];
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s", tables[i]);
    long long n = count_rows(db, sql);
    res->digest = mix(res->digest, (uint64_t)n);
    if (res->status != LJP_END && i == 0)
      EXPECT(n == 0, "a failed import left %lld profiles", n);
  }
  sqlite3_close(db);
}

/* ---- the loop ---- */

typedef void (*op_fn)(const input *, result *);

static void inject_all(const char *what, op_fn op, const input *in) {
  result base, got;
  long live0 = inject_live();
  inject_arm(0);
  op(in, &base);
  uint64_t total = inject_count();
  EXPECT(inject_live() == live0, "%s: %ld blocks leaked without failures",
         what, inject_live() - live0);
  uint64_t n;
  for (n = 1; n <= total + 1; n++) {
    inject_arm(n);
    op(in, &got);
    int fired = inject_fired();
    inject_arm(0);
    EXPECT(inject_live() == live0, "%s: allocation %llu failed: %ld blocks "
           "leaked", what, (unsigned long long)n, inject_live() - live0);
    if (!fired) {
      EXPECT(got.status == base.status && got.digest == base.digest,
             "%s: a run without failure differs", what);
      break;
    }
    if (got.status != LJP_E_NOMEM)
      EXPECT(got.status == base.status && got.digest == base.digest &&
                 got.count == base.count,
             "%s: allocation %llu failed: status %d (expected %d or "
             "out of memory), or a different result",
             what, (unsigned long long)n, got.status, base.status);
  }
  printf("%-44s %6llu allocations, each failed once\n", what,
         (unsigned long long)total);
}

static int load(const char *dir, const char *name, input *in, int opt) {
  static char paths[16][1024];
  static int np;
  char *path = paths[np++ % 16];
  snprintf(path, 1024, "%s/%s", dir, name);
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    return -1;
  }
  /* Not through the wrappers' counting of the operations: loaded once. */
  static uint8_t bufs[16][65536];
  static int nb;
  uint8_t *buf = bufs[nb++ % 16];
  in->size = fread(buf, 1, sizeof(bufs[0]), f);
  fclose(f);
  in->data = buf;
  in->path = path;
  in->opt = opt;
  return 0;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
    return 2;
  }
  static const char *const profiles[] = {
      "reader/cap-sp_c_sandwich_jitoff_1ms", "reader/cap-sp_c_jiton_flush_1ms",
      "reader/cap-mp_traces_flush_jiton",     "reader/cap-old_mp_v1_jitoff",
      "reader/enc-ljs2a-ljm2-mcode",          "reader/enc-ljs3_-ljp2",
      "reader/enc-ljs3_-ljm3",                "reader/enc-ljs2b-ljp1-cut"};
  char label[128];
  for (size_t i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++) {
    input in;
    if (load(argv[1], profiles[i], &in, (int)(i * 11)) != 0)
      return 1;
    const char *base = strchr(profiles[i], '/') + 1;
    snprintf(label, sizeof(label), "read memory %s", base);
    inject_all(label, op_read_memory, &in);
    snprintf(label, sizeof(label), "fold %s", base);
    inject_all(label, op_fold, &in);
    if (i < 2) {
      snprintf(label, sizeof(label), "read path %s", base);
      inject_all(label, op_read_path, &in);
      snprintf(label, sizeof(label), "read fd %s", base);
      inject_all(label, op_read_fd, &in);
    }
  }
  static const char *const imports[] = {"reader/cap-sp_c_sandwich_jitoff_1ms",
                                        "reader/cap-mp_traces_flush_jiton"};
  for (size_t i = 0; i < 2; i++) {
    input in;
    if (load(argv[1], imports[i], &in, 0) != 0)
      return 1;
    snprintf(label, sizeof(label), "ljpdb import %s", imports[i] + 7);
    inject_all(label, op_dbimport, &in);
  }
  input none = {0};
  inject_all("write sysprof to memory and to a sink", op_write, &none);
  static const char *const texts[] = {"folded/ref-sandwich", "folded/diff",
                                      "folded/utf8"};
  for (size_t i = 0; i < 3; i++) {
    input in;
    if (load(argv[1], texts[i], &in, (int)i) != 0)
      return 1;
    snprintf(label, sizeof(label), "folded text %s", texts[i] + 7);
    inject_all(label, op_folded, &in);
  }
  if (failures)
    fprintf(stderr, "%d failures\n", failures);
  return failures ? 1 : 0;
}
