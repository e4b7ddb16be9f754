/*
 * test_captures.c — every bundled real capture decodes to exactly the counts
 * its index.tsv row states, ends with the epilogue, and decodes the same
 * from a path, from memory and from a pipe.
 *
 * index.tsv is parsed at test time ('#' lines are comments, the first other
 * line names the columns), so the test follows the file: a new row is a new
 * test, and a key this test does not know fails loudly instead of being
 * skipped.  Sysprof captures also carry misc.sysprof.report()'s counters
 * (<capture>.counters.txt), which must equal the samples in the stream.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core_util.h"

#define MAXCOLS 32
#define MAXROWS 64

typedef struct row {
  char dir[512];               /* folder of the index */
  char *col[MAXCOLS];          /* values, by header position */
} row;

typedef struct table {
  char *names[MAXCOLS];
  int ncols;
} table;

static table tables[2];
static row rows[MAXROWS];
static const table *row_table[MAXROWS];
static int nrows;

static const char *INDEXES[] = { "captures", "captures/old" };

static char *xstrdup(const char *s, size_t n)
{
  char *p = malloc(n + 1);
  if (!p)
    abort();
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

static int split_tabs(char *line, char **out, int max)
{
  int n = 0;
  char *p = line;
  for (;;) {
    char *t = strchr(p, '\t');
    size_t len = t ? (size_t)(t - p) : strlen(p);
    if (n < max)
      out[n++] = xstrdup(p, len);
    if (!t)
      break;
    p = t + 1;
  }
  return n;
}

/* Parses one index.tsv into rows[]; returns -1 when it cannot be read. */
static int load_index(int which)
{
  char path[600], *line = NULL;
  size_t cap = 0;
  ssize_t got;
  FILE *f;
  table *t = &tables[which];
  snprintf(path, sizeof(path), "%s/%s/index.tsv", core_testdata,
           INDEXES[which]);
  f = fopen(path, "r");
  if (!f)
    return -1;
  while ((got = getline(&line, &cap, f)) >= 0) {
    while (got > 0 && (line[got - 1] == '\n' || line[got - 1] == '\r'))
      line[--got] = '\0';
    if (got == 0 || line[0] == '#')
      continue;
    if (t->ncols == 0) {
      t->ncols = split_tabs(line, t->names, MAXCOLS);
      continue;
    }
    if (nrows == MAXROWS)
      break;
    memset(&rows[nrows], 0, sizeof(rows[nrows]));
    snprintf(rows[nrows].dir, sizeof(rows[nrows].dir), "%s/%s",
             core_testdata, INDEXES[which]);
    split_tabs(line, rows[nrows].col, MAXCOLS);
    row_table[nrows] = t;
    nrows++;
  }
  free(line);
  fclose(f);
  return 0;
}

static const char *field(int r, const char *name)
{
  const table *t = row_table[r];
  int i;
  for (i = 0; i < t->ncols; i++)
    if (strcmp(t->names[i], name) == 0)
      return rows[r].col[i];
  return NULL;
}

static const char *file_of(int r, const char *suffix, char *buf, size_t cap)
{
  const char *name = field(r, "capture");
  snprintf(buf, cap, "%s/%s%s", rows[r].dir, name ? name : "?", suffix);
  return buf;
}

static int vmstate_of(const char *name, size_t len)
{
  int i;
  for (i = 0; i < LJP_VMST__MAX; i++)
    if (strlen(ljp_vmstate_name(i)) == len &&
        memcmp(ljp_vmstate_name(i), name, len) == 0)
      return i;
  return -1;
}

static int source_of(const char *name, size_t len)
{
  int i;
  for (i = LJP_SRC_INTERNAL; i <= LJP_SRC_TRACE; i++) {
    const char *n = ljp_source_name((ljp_source)i);
    /* the index abbreviates INTERNAL as INT, like the format's ASOURCE_INT */
    if ((strlen(n) == len && memcmp(n, name, len) == 0) ||
        (i == LJP_SRC_INTERNAL && len == 3 && memcmp(name, "INT", 3) == 0))
      return i;
  }
  return -1;
}

/* Walks "key=value" tokens separated by spaces (and commas after
 * "sources:"), calling back for each. */
typedef void (*kv_fn)(void *ctx, const char *key, size_t klen, uint64_t v,
                      int in_sources);

static void each_kv(const char *s, kv_fn fn, void *ctx, const char *what)
{
  const char *p = s;
  int in_sources = 0;
  while (*p) {
    const char *k, *eq;
    char *end;
    unsigned long long v;
    while (*p == ' ' || *p == ',' || *p == '(' || *p == ')' || *p == '\n' ||
           *p == '\r' || *p == '\t')
      p++;
    if (!*p)
      break;
    if (strncmp(p, "sources:", 8) == 0) {
      in_sources = 1;
      p += 8;
      continue;
    }
    /* "(trace redefinitions=N)" */
    if (strncmp(p, "trace redefinitions=", 20) == 0) {
      k = p;
      eq = p + 19;
    } else {
      k = p;
      eq = p;
      while (*eq && *eq != '=' && *eq != ' ' && *eq != ',')
        eq++;
      ck_assert_msg(*eq == '=', "%s: no value in \"%s\"", what, k);
    }
    errno = 0;
    v = strtoull(eq + 1, &end, 10);
    ck_assert_msg(end != eq + 1 && errno == 0, "%s: bad number in \"%s\"",
                  what, k);
    fn(ctx, k, (size_t)(eq - k), (uint64_t)v, in_sources);
    p = end;
    if (*p == ',' && !in_sources)
      p++;
    if (*p == ' ' || *p == '\n')
      in_sources = 0;
  }
}

#define KEY(lit) (klen == sizeof(lit) - 1 && memcmp(key, lit, klen) == 0)

typedef struct want {
  const char *capture;
  const ljp_counters *c;
  int sysprof;
  int initial_cfunc_known;
  uint64_t initial_cfunc;
} want;

static void check_counts_kv(void *ctx, const char *key, size_t klen,
                            uint64_t v, int in_sources)
{
  want *w = ctx;
  const ljp_counters *c = w->c;
  int i;
  uint64_t got;
  if (in_sources) {
    i = source_of(key, klen);
    ck_assert_msg(i > 0, "%s: unknown source %.*s", w->capture, (int)klen,
                  key);
    got = c->mem_source[i];
  } else if (KEY("events")) {
    got = c->mem_events;
  } else if (KEY("alloc")) {
    got = c->mem_kind[LJP_MEM_ALLOC];
  } else if (KEY("realloc")) {
    got = c->mem_kind[LJP_MEM_REALLOC];
  } else if (KEY("free")) {
    got = c->mem_kind[LJP_MEM_FREE];
  } else if (KEY("samples")) {
    got = c->samples;
  } else if ((i = vmstate_of(key, klen)) >= 0) {
    got = c->vmstate[i];
  } else {
    ck_abort_msg("%s: counts key %.*s unknown to this test", w->capture,
                 (int)klen, key);
    return;
  }
  ck_assert_msg(got == v, "%s: %.*s = %llu, index says %llu", w->capture,
                (int)klen, key, (unsigned long long)got,
                (unsigned long long)v);
}

static void check_symtab_kv(void *ctx, const char *key, size_t klen,
                            uint64_t v, const uint64_t *by_kind,
                            const char *what)
{
  want *w = ctx;
  const ljp_counters *c = w->c;
  uint64_t got;
  if (KEY("lfunc"))
    got = by_kind[LJP_SYM_LFUNC];
  else if (KEY("cfunc"))
    got = by_kind[LJP_SYM_CFUNC];
  else if (KEY("trace"))
    got = by_kind[LJP_SYM_TRACE];
  else if (KEY("trace redefinitions"))
    got = c->trace_redefinitions;
  else if (KEY("max_lua_depth"))
    got = c->max_lua_depth;
  else if (KEY("max_host_depth"))
    got = c->max_host_depth;
  else if (KEY("cfunc_redumps")) {
    /* each re-dump repeats the whole initial C table (FORMATS.md §4.7) */
    ck_assert_msg(w->initial_cfunc_known, "%s: cfunc_redumps without the "
                  "initial count", w->capture);
    ck_assert_msg(c->symbols_midstream[LJP_SYM_CFUNC] == v * w->initial_cfunc,
                  "%s: %llu mid-stream C symbols, not %llu re-dumps of %llu",
                  w->capture,
                  (unsigned long long)c->symbols_midstream[LJP_SYM_CFUNC],
                  (unsigned long long)v,
                  (unsigned long long)w->initial_cfunc);
    return;
  } else {
    ck_abort_msg("%s: %s key %.*s unknown to this test", w->capture, what,
                 (int)klen, key);
    return;
  }
  ck_assert_msg(got == v, "%s: %s %.*s = %llu, index says %llu", w->capture,
                what, (int)klen, key, (unsigned long long)got,
                (unsigned long long)v);
}

static void check_initial_kv(void *ctx, const char *key, size_t klen,
                             uint64_t v, int in_sources)
{
  want *w = ctx;
  (void)in_sources;
  if (KEY("cfunc")) {
    w->initial_cfunc_known = 1;
    w->initial_cfunc = v;
  }
  check_symtab_kv(ctx, key, klen, v, w->c->symbols_initial, "initial");
}

static void check_mid_kv(void *ctx, const char *key, size_t klen, uint64_t v,
                         int in_sources)
{
  want *w = ctx;
  (void)in_sources;
  check_symtab_kv(ctx, key, klen, v, w->c->symbols_midstream, "mid-stream");
}

/* Rows without a stream (mode D) have no .bin, or a size of 0. */
static int has_stream(int r, char *path, size_t cap)
{
  struct stat st;
  const char *size = field(r, "size_bytes");
  file_of(r, ".bin", path, cap);
  if (size && strcmp(size, "0") == 0)
    return 0;
  return stat(path, &st) == 0;
}

START_TEST(capture_matches_index)
{
  char path[700];
  const char *name = field(_i, "capture");
  const char *v;
  ljp_reader *r;
  core_decode d = { 0 };
  want w = { 0 };
  ck_assert_ptr_nonnull(name);
  if (!has_stream(_i, path, sizeof(path))) {
    ck_assert_msg(strcmp(field(_i, "mode") ? field(_i, "mode") : "", "D") == 0,
                  "%s: no stream, but the row is not mode D", name);
    return;
  }
  r = ljp_reader_new();
  ck_assert_int_eq(ljp_reader_open_path(r, path), LJP_OK);
  core_decode_run(r, &d, 0);
  ljp_reader_free(r);
  ck_assert_msg(d.status == LJP_END, "%s: %s: %s", name,
                ljp_status_name(d.status), d.error);
  ck_assert_int_eq(d.complete, 1);

  w.capture = name;
  w.c = &d.counters;
  v = field(_i, "kind");
  ck_assert_ptr_nonnull(v);
  ck_assert_int_eq(d.kind, strcmp(v, "sysprof") == 0 ? LJP_KIND_SYSPROF
                                                     : LJP_KIND_MEMPROF);
  w.sysprof = d.kind == LJP_KIND_SYSPROF;
  if ((v = field(_i, "ljs_version")) != NULL)
    ck_assert_uint_eq(d.ljs_version, strtoul(v, NULL, 10));
  else
    ck_assert_uint_eq(d.ljs_version, 3);       /* current producer */
  if ((v = field(_i, "event_stream")) != NULL) {
    ck_assert_msg(strncmp(v, w.sysprof ? "ljp " : "ljm ", 4) == 0,
                  "%s: event_stream %s", name, v);
    ck_assert_uint_eq(d.event_version, strtoul(v + 4, NULL, 10));
  } else {
    ck_assert_uint_eq(d.event_version, w.sysprof ? 2 : 3);
  }
  if (d.ljs_version == 2)
    ck_assert_int_eq(d.layout, 'a');   /* ljs 2 + ljm 2 is always 2a */
  ck_assert_int_eq(d.flavor, LJP_FLAVOR_TARANTOOL);

  v = field(_i, "counts");
  ck_assert_ptr_nonnull(v);
  each_kv(v, check_counts_kv, &w, name);
  /* states and sources the row leaves out are zero: the listed ones sum up */
  if (w.sysprof) {
    uint64_t sum = 0;
    int i;
    for (i = 0; i < LJP_VMST__MAX; i++)
      sum += d.counters.vmstate[i];
    ck_assert_uint_eq(sum, d.counters.samples);
    ck_assert_uint_eq(d.counters.mem_events, 0);
  } else {
    uint64_t sum = 0;
    int i;
    for (i = 1; i < 5; i++)
      sum += d.counters.mem_source[i];
    ck_assert_uint_eq(sum, d.counters.mem_events);
    ck_assert_uint_eq(d.counters.mem_kind[1] + d.counters.mem_kind[2] +
                      d.counters.mem_kind[3], d.counters.mem_events);
    ck_assert_uint_eq(d.counters.samples, 0);
  }
  v = field(_i, "symtab_initial");
  ck_assert_ptr_nonnull(v);
  each_kv(v, check_initial_kv, &w, name);
  v = field(_i, "symtab_midstream");
  ck_assert_ptr_nonnull(v);
  each_kv(v, check_mid_kv, &w, name);
  core_decode_clear(&d);
}
END_TEST

/* misc.sysprof.report() after stop counts exactly the samples streamed. */
START_TEST(sysprof_counters_file)
{
  char path[700], cpath[700];
  const char *name = field(_i, "capture");
  size_t len;
  uint8_t *text;
  core_decode d = { 0 };
  ljp_reader *r;
  want w = { 0 };
  if (!has_stream(_i, path, sizeof(path)))
    return;
  text = core_read_file(file_of(_i, ".counters.txt", cpath, sizeof(cpath)),
                        &len);
  if (!text) {
    ck_assert_msg(strcmp(field(_i, "kind"), "memprof") == 0,
                  "%s: sysprof capture without counters.txt", name);
    return;
  }
  r = ljp_reader_new();
  ck_assert_int_eq(ljp_reader_open_path(r, path), LJP_OK);
  core_decode_run(r, &d, 0);
  ljp_reader_free(r);
  ck_assert_int_eq(d.status, LJP_END);
  text = realloc(text, len + 1);
  text[len] = '\0';
  w.capture = name;
  w.c = &d.counters;
  each_kv((char *)text, check_counts_kv, &w, cpath);
  free(text);
  core_decode_clear(&d);
}
END_TEST

/* ---- the same decode from a path, from memory and from a pipe ---------- */

static void feed_pipe(int fd, const uint8_t *data, size_t len)
{
  /* odd piece sizes, so records straddle every kind of read boundary */
  static const size_t pieces[] = { 1, 7, 4096, 65537, 13, 3, 100000 };
  size_t off = 0, k = 0;
  while (off < len) {
    size_t n = pieces[k++ % (sizeof(pieces) / sizeof(pieces[0]))];
    ssize_t w;
    if (n > len - off)
      n = len - off;
    w = write(fd, data + off, n);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      _exit(1);
    off += (size_t)w;
  }
}

static void decode_pipe(const uint8_t *data, size_t len, core_decode *d)
{
  int fds[2], status;
  pid_t pid;
  ljp_reader *r;
  ck_assert_int_eq(pipe(fds), 0);
  pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    close(fds[0]);
    feed_pipe(fds[1], data, len);
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  r = ljp_reader_new();
  ck_assert_int_eq(ljp_reader_open_fd(r, fds[0]), LJP_OK);
  core_decode_run(r, d, 1);
  ljp_reader_free(r);
  close(fds[0]);
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void expect_same(const core_decode *a, const core_decode *b,
                        const char *name, const char *how)
{
  size_t i;
  ck_assert_msg(a->status == b->status, "%s %s: status %d vs %d", name, how,
                a->status, b->status);
  ck_assert_msg(a->nevents == b->nevents, "%s %s: %zu events vs %zu", name,
                how, a->nevents, b->nevents);
  ck_assert_msg(memcmp(&a->counters, &b->counters, sizeof(a->counters)) == 0,
                "%s %s: counters differ", name, how);
  ck_assert_int_eq(a->complete, b->complete);
  ck_assert_int_eq(a->kind, b->kind);
  ck_assert_uint_eq(a->ljs_version, b->ljs_version);
  ck_assert_uint_eq(a->event_version, b->event_version);
  if (a->prints && b->prints)
    for (i = 0; i < a->nevents; i++)
      CORE_CHECK(a->prints[i] == b->prints[i], "%s %s: event %zu "
                    "(offset %llu) differs", name, how, i,
                    (unsigned long long)a->offsets[i]);
}

START_TEST(path_memory_pipe_agree)
{
  char path[700];
  const char *name = field(_i, "capture");
  core_decode dp = { 0 }, dm = { 0 }, df = { 0 };
  ljp_reader *r;
  uint8_t *data;
  size_t len;
  if (!has_stream(_i, path, sizeof(path)))
    return;
  data = core_read_file(path, &len);
  ck_assert_ptr_nonnull(data);
  r = ljp_reader_new();
  ck_assert_int_eq(ljp_reader_open_path(r, path), LJP_OK);
  core_decode_run(r, &dp, 1);
  ljp_reader_free(r);
  ck_assert_int_eq(dp.status, LJP_END);
  core_decode_memory(data, len, &dm, 1);
  decode_pipe(data, len, &df);
  expect_same(&dp, &dm, name, "path/memory");
  expect_same(&dp, &df, name, "path/pipe");
  core_decode_clear(&dp);
  core_decode_clear(&dm);
  core_decode_clear(&df);
  free(data);
}
END_TEST

/* A pipe that ends early is a truncation at the same point as memory. */
START_TEST(pipe_cut_agrees_with_memory)
{
  char path[700];
  const char *name = field(_i, "capture");
  core_decode dm = { 0 }, df = { 0 };
  uint8_t *data;
  size_t len, cut;
  if (!has_stream(_i, path, sizeof(path)))
    return;
  data = core_read_file(path, &len);
  ck_assert_ptr_nonnull(data);
  cut = len / 3 + 5;
  core_decode_memory(data, cut, &dm, 1);
  decode_pipe(data, cut, &df);
  ck_assert_int_eq(dm.status, LJP_E_TRUNCATED);
  expect_same(&dm, &df, name, "cut memory/pipe");
  ck_assert_uint_eq(dm.error_offset, df.error_offset);
  core_decode_clear(&dm);
  core_decode_clear(&df);
  free(data);
}
END_TEST

int main(int argc, char **argv)
{
  Suite *s = suite_create("core_captures");
  TCase *tc;
  SRunner *sr;
  int failed;
  core_set_testdata(argc, argv);
  if (load_index(0) != 0 || load_index(1) != 0) {
    fprintf(stderr, "core_captures: cannot read index.tsv under %s\n",
            core_testdata);
    return 1;
  }
  tc = tcase_create("index");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, capture_matches_index, 0, nrows);
  tcase_add_loop_test(tc, sysprof_counters_file, 0, nrows);
  suite_add_tcase(s, tc);
  tc = tcase_create("inputs");
  tcase_set_timeout(tc, 120);
  tcase_add_loop_test(tc, path_memory_pipe_agree, 0, nrows);
  tcase_add_loop_test(tc, pipe_cut_agrees_with_memory, 0, nrows);
  suite_add_tcase(s, tc);
  sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
