/*
 * test_x1.c — the ljp x1 sysprof stream (FORMATS.md §5.5).
 *
 * The encoder writes the worked example of the spec byte for byte; a stream
 * with every vmstate, symbol events in between and trace samples with
 * stacks reads back field for field; every prefix of it is truncated (never
 * malformed), delivers exactly the records that end before the cut and
 * names the offset; the writer refuses what x1 cannot carry without writing
 * a byte; and readers ignore reserved flag bits and unknown timers.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_util.h"

#define S(str) str, sizeof(str) - 1
#define N(a) (sizeof(a) / sizeof((a)[0]))

enum {
  P_MAIN = 0x5000, P_F = 0x5100, P_G = 0x5200,
  A_MAIN = 0x1000, A_PCALL = 0x2000, A_GC = 0x3000
};

static ljp_frame LF(uint64_t proto, uint64_t line)
{
  ljp_frame f = { LJP_FRAME_LUA, proto, line, NULL, NULL, 0 };
  return f;
}

static ljp_frame CF(uint64_t addr)
{
  ljp_frame f = { LJP_FRAME_CFUNC, addr, 0, NULL, NULL, 0 };
  return f;
}

static ljp_frame FF(uint64_t ffid)
{
  ljp_frame f = { LJP_FRAME_FFUNC, ffid, 0, NULL, NULL, 0 };
  return f;
}

/* ---- the worked example of FORMATS.md §5.5 ---------------------------- */

/* The x1 part only; the symbol table before it is §5.5's ljs 3 table. */
static const uint8_t SPEC_X1[] = {
  0x6C, 0x6A, 0x70, 0x81, 0x01, 0x02, 0x00, 0xC0, 0x84, 0x3D,
  /* LFUNC, +1000123 ns, main thread, complete */
  0x01, 0xBB, 0x85, 0x3D, 0x01, 0x00,
  0x01, 0x80, 0xA2, 0x01, 0x0A, 0x01, 0x80, 0xA0, 0x01, 0x00, 0x80,
  0x90, 0x40, 0x90, 0x20, 0x00,
  /* a trace saved mid-stream: trace 4, proto 0x5100, line 14 */
  0x0C, 0x04, 0x80, 0xA2, 0x01, 0x0E,
  /* TRACE 3, +999877 ns, main thread */
  0x09, 0xC5, 0x83, 0x3D, 0x01, 0x00, 0x03, 0x80, 0xA2, 0x01, 0x0A,
  0x01, 0x80, 0xA2, 0x01, 0x0A, 0x01, 0x80, 0xA0, 0x01, 0x00, 0x80,
  0x80, 0x10, 0x90, 0x40, 0x90, 0x20, 0x00,
  /* GC, +500 ns, coroutine 2, both stacks incomplete */
  0x04, 0xF4, 0x03, 0x02, 0x03, 0x01, 0x80, 0xA2, 0x01, 0x0A, 0x80, 0x00,
  0x80
};

static void write_spec_symtab(ljp_writer *w)
{
  ck_assert_int_eq(ljp_write_symtab_begin(w, 3, 0), LJP_OK);
  ck_assert_int_eq(ljp_write_symtab_lfunc(w, P_MAIN, S("@a.lua"), 0), LJP_OK);
  ck_assert_int_eq(ljp_write_symtab_lfunc(w, P_F, S("@a.lua"), 10), LJP_OK);
  ck_assert_int_eq(ljp_write_symtab_cfunc(w, A_MAIN, S("main")), LJP_OK);
  ck_assert_int_eq(ljp_write_symtab_cfunc(w, A_PCALL, S("lua_pcall")),
                   LJP_OK);
  ck_assert_int_eq(ljp_write_symtab_trace(w, 3, 0, P_F, 12), LJP_OK);
  ck_assert_int_eq(ljp_write_symtab_end(w), LJP_OK);
}

static void write_spec_x1(ljp_writer *w)
{
  const ljp_frame lua[] = { LF(P_F, 10), LF(P_MAIN, 0) };
  const uint64_t host[] = { 0x2010, 0x1010 };
  const uint64_t thost[] = { 0x800, 0x2010, 0x1010 };
  ljp_sample_x1 s;
  ck_assert_int_eq(ljp_write_stream_begin_x1(w, LJP_FLAVOR_LUAJIT,
                                             LJP_TIMER_THREAD_CPU, 1000000),
                   LJP_OK);
  memset(&s, 0, sizeof(s));
  s.vmstate = LJP_VMST_LFUNC;
  s.dt_ns = 1000123;
  s.coro = 1;
  s.lua = lua;
  s.nlua = 2;
  s.host = host;
  s.nhost = 2;
  ck_assert_int_eq(ljp_write_sample_x1(w, &s), LJP_OK);
  ck_assert_int_eq(ljp_write_event_trace(w, 4, P_F, 14), LJP_OK);
  s.vmstate = LJP_VMST_TRACE;
  s.dt_ns = 999877;
  s.traceno = 3;
  s.trace_proto = P_F;
  s.trace_line = 10;
  s.host = thost;
  s.nhost = 3;
  ck_assert_int_eq(ljp_write_sample_x1(w, &s), LJP_OK);
  memset(&s, 0, sizeof(s));
  s.vmstate = LJP_VMST_GC;
  s.dt_ns = 500;
  s.coro = 2;
  s.flags = LJP_SAMPLE_LUA_INCOMPLETE | LJP_SAMPLE_HOST_INCOMPLETE;
  s.lua = lua;
  s.nlua = 1;
  ck_assert_int_eq(ljp_write_sample_x1(w, &s), LJP_OK);
  ck_assert_int_eq(ljp_write_stream_end(w), LJP_OK);
}

START_TEST(encode_spec_example)
{
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  size_t len;
  const uint8_t *d;
  write_spec_x1(w);
  d = ljp_writer_data(w, &len);
  core_expect_bytes(d, len, SPEC_X1, sizeof(SPEC_X1));
  ljp_writer_free(w);
}
END_TEST

/* Collects what a sink receives. */
typedef struct sinkbuf {
  uint8_t data[4096];
  size_t len;
  unsigned calls;
} sinkbuf;

static int sink_collect(void *ctx, const void *data, size_t len)
{
  sinkbuf *b = ctx;
  ck_assert_uint_le(b->len + len, sizeof(b->data));
  memcpy(b->data + b->len, data, len);
  b->len += len;
  b->calls++;
  return 0;
}

/* A sink writer with a buffer smaller than a record writes the same bytes. */
START_TEST(encode_through_small_sink)
{
  sinkbuf b;
  ljp_writer *w;
  memset(&b, 0, sizeof(b));
  w = ljp_writer_new(sink_collect, &b, 5);
  write_spec_x1(w);
  core_expect_bytes(b.data, b.len, SPEC_X1, sizeof(SPEC_X1));
  ck_assert_uint_gt(b.calls, 10);
  ljp_writer_free(w);
}
END_TEST

static uint8_t *spec_file(size_t *len)
{
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  const uint8_t *d;
  uint8_t *copy;
  write_spec_symtab(w);
  write_spec_x1(w);
  d = ljp_writer_data(w, len);
  copy = malloc(*len);
  memcpy(copy, d, *len);
  ljp_writer_free(w);
  return copy;
}

static const ljp_event *next_ok(ljp_reader *r, ljp_event_type type)
{
  const ljp_event *ev = NULL;
  ljp_status st = ljp_reader_next(r, &ev);
  ck_assert_msg(st == LJP_OK, "%s: %s", ljp_status_name(st),
                ljp_reader_error(r));
  ck_assert_int_eq(ev->type, type);
  return ev;
}

static void expect_name(const ljp_frame *f, const char *name)
{
  char buf[128];
  ljp_frame_name(f, LJP_NAME_DEFAULT, LJP_FLAVOR_LUAJIT, buf, sizeof(buf));
  ck_assert_str_eq(buf, name);
}

START_TEST(decode_spec_example)
{
  size_t len, i;
  uint8_t *data = spec_file(&len);
  ljp_reader *r = ljp_reader_new();
  const ljp_event *ev;
  const ljp_sample *s;
  ljp_frame st[16];
  ck_assert_int_eq(ljp_reader_open_memory(r, data, len), LJP_OK);
  next_ok(r, LJP_EV_PROLOGUE);
  ck_assert_uint_eq(ljp_reader_interval_ns(r), 0);
  for (i = 0; i < 5; i++)
    next_ok(r, LJP_EV_SYMBOL);
  next_ok(r, LJP_EV_EPILOGUE);
  ev = next_ok(r, LJP_EV_PROLOGUE);
  ck_assert_str_eq(ev->u.prologue.magic, "ljp");
  ck_assert_uint_eq(ev->u.prologue.version, LJP_LJP_VERSION_X1);
  ck_assert_uint_eq(ev->u.prologue.interval_ns, 1000000);
  ck_assert_int_eq(ev->u.prologue.timer, LJP_TIMER_THREAD_CPU);
  ck_assert_uint_eq(ev->raw_len, 10);
  ck_assert_uint_eq(ljp_reader_event_version(r), 0x81);
  ck_assert_int_eq(ljp_reader_kind(r), LJP_KIND_SYSPROF);
  ck_assert_int_eq(ljp_reader_flavor(r), LJP_FLAVOR_LUAJIT);
  ck_assert_int_eq(ljp_reader_timer(r), LJP_TIMER_THREAD_CPU);
  ck_assert_uint_eq(ljp_reader_interval_ns(r), 1000000);
  ck_assert_str_eq(ljp_timer_name(ljp_reader_timer(r)), "thread-cpu");

  ev = next_ok(r, LJP_EV_SAMPLE);
  s = &ev->u.sample;
  ck_assert_int_eq(s->vmstate, LJP_VMST_LFUNC);
  ck_assert_int_eq(s->has_time, 1);
  ck_assert_uint_eq(s->time_ns, 1000123);
  ck_assert_uint_eq(s->coro, 1);
  ck_assert_uint_eq(s->flags, 0);
  ck_assert_uint_eq(s->lua_count, 2);
  ck_assert_uint_eq(s->host_count, 2);
  expect_name(&s->lua[0], "@a.lua:10");
  expect_name(&s->lua[1], "@a.lua:0");
  expect_name(&s->host[0], "lua_pcall");
  expect_name(&s->host[1], "main");

  ev = next_ok(r, LJP_EV_SYMBOL);
  ck_assert_int_eq(ev->u.symbol.header, 0x0C);
  ck_assert_int_eq(ev->u.symbol.sym->kind, LJP_SYM_TRACE);
  ck_assert_uint_eq(ev->u.symbol.sym->traceno, 4);

  ev = next_ok(r, LJP_EV_SAMPLE);
  s = &ev->u.sample;
  ck_assert_int_eq(s->vmstate, LJP_VMST_TRACE);
  ck_assert_uint_eq(s->time_ns, 1000123 + 999877);
  ck_assert_int_eq(s->trace.kind, LJP_FRAME_TRACE);
  ck_assert_uint_eq(s->trace.value, 3);
  ck_assert_uint_eq(s->trace.line, 10);
  expect_name(&s->trace, "TRACE [3] @a.lua:12");
  ck_assert_uint_eq(s->lua_count, 2);
  ck_assert_uint_eq(s->lua[0].value, P_F);
  ck_assert_uint_eq(s->lua[1].value, P_MAIN);
  ck_assert_uint_eq(s->host_count, 3);
  ck_assert_uint_eq(s->host[0].value, 0x800);
  /* The stack a user reads: the trace on top of its callers. */
  ck_assert_uint_eq(ljp_sample_stack(s, LJP_VIEW_LUA, st, N(st)), 3);
  expect_name(&st[0], "@a.lua:0");
  expect_name(&st[1], "@a.lua:10");
  expect_name(&st[2], "TRACE [3] @a.lua:12");
  ck_assert_uint_eq(ljp_sample_stack(s, LJP_VIEW_HOST, st, N(st)), 4);
  expect_name(&st[0], "main");
  expect_name(&st[3], "TRACE [3] @a.lua:12");
  ck_assert_uint_eq(ljp_sample_stack(s, LJP_VIEW_MERGED, st, N(st)), 6);
  expect_name(&st[0], "main");
  expect_name(&st[1], "lua_pcall");
  expect_name(&st[2], "@a.lua:0");
  expect_name(&st[3], "@a.lua:10");
  expect_name(&st[4], "CFUNC 0x800");
  expect_name(&st[5], "TRACE [3] @a.lua:12");
  /* The reference view never shows traces (Tarantool's parser drops them). */
  ck_assert_uint_eq(ljp_sample_stack(s, LJP_VIEW_REFERENCE, st, N(st)), 5);

  ev = next_ok(r, LJP_EV_SAMPLE);
  s = &ev->u.sample;
  ck_assert_int_eq(s->vmstate, LJP_VMST_GC);
  ck_assert_uint_eq(s->time_ns, 2000500);
  ck_assert_uint_eq(s->coro, 2);
  ck_assert_uint_eq(s->flags, 3);
  ck_assert_uint_eq(s->lua_count, 1);
  ck_assert_uint_eq(s->host_count, 0);
  ck_assert_uint_eq(ljp_sample_stack(s, LJP_VIEW_MERGED, st, N(st)), 1);
  expect_name(&st[0], "@a.lua:10");

  next_ok(r, LJP_EV_EPILOGUE);
  ck_assert_int_eq(ljp_reader_next(r, &ev), LJP_END);
  ck_assert_uint_eq(ljp_reader_time_ns(r), 2000500);
  {
    const ljp_counters *c = ljp_reader_counters(r);
    ck_assert_uint_eq(c->samples, 3);
    ck_assert_uint_eq(c->vmstate[LJP_VMST_TRACE], 1);
    ck_assert_uint_eq(c->lua_incomplete, 1);
    ck_assert_uint_eq(c->host_incomplete, 1);
    ck_assert_uint_eq(c->max_coro, 2);
    ck_assert_uint_eq(c->max_lua_depth, 2);
    ck_assert_uint_eq(c->max_host_depth, 3);
  }
  ljp_reader_free(r);
  free(data);
}
END_TEST

typedef struct textbuf {
  char p[1024];
  size_t len;
} textbuf;

static int text_emit(void *ctx, const char *line, size_t len)
{
  textbuf *b = ctx;
  ck_assert_uint_lt(b->len + len, sizeof(b->p));
  memcpy(b->p + b->len, line, len);
  b->len += len;
  b->p[b->len] = '\0';
  return 0;
}

/* The folded lines FORMATS.md §5.5 gives for its example. */
START_TEST(fold_spec_example)
{
  size_t len;
  uint8_t *data = spec_file(&len);
  ljp_reader *r = ljp_reader_new();
  ljp_tree *t = ljp_tree_new();
  ljp_fold_options o;
  ljp_folder *f;
  const ljp_event *ev;
  ljp_status st;
  textbuf out;
  memset(&o, 0, sizeof(o));
  o.flavor = LJP_FLAVOR_AUTO;
  f = ljp_folder_new(t, &o);
  out.len = 0;
  out.p[0] = '\0';
  ck_assert_int_eq(ljp_reader_open_memory(r, data, len), LJP_OK);
  while ((st = ljp_reader_next(r, &ev)) == LJP_OK)
    ck_assert_int_eq(ljp_folder_add(f, r, ev), LJP_OK);
  ck_assert_int_eq(st, LJP_END);
  ck_assert_int_eq(ljp_tree_write_folded(t, 0, text_emit, &out), LJP_OK);
  ck_assert_str_eq(out.p,
                   "@a.lua:10 1\n"
                   "main;lua_pcall;@a.lua:0;@a.lua:10 1\n"
                   "main;lua_pcall;@a.lua:0;@a.lua:10;CFUNC 0x800;"
                   "TRACE [3] @a.lua:12 1\n");
  ljp_folder_free(f);
  ljp_tree_free(t);
  ljp_reader_free(r);
  free(data);
}
END_TEST

/* ---- the fixture testdata/x1/x1_rich.bin -------------------------------- */

enum {
  R_MAIN = 0x1000, R_PCALL = 0x1100, R_VMPCALL = 0x1200, R_FUNCC = 0x1300,
  R_MYC = 0x1400, R_GC = 0x1600, R_RESUME = 0x1700, R_VMRESUME = 0x1800,
  R_CHUNK = 0x5000, R_F = 0x5100, R_WORKER = 0x5200, R_LATE = 0x5300,
  R_MCODE = 0x800 /* trace code: below every symbol, so unnamed */
};

typedef struct rich {
  ljp_writer *w;
  uint64_t k;                  /* samples written, for the time jitter */
} rich;

/* One sample; stacks given innermost first, host addresses as symbol
 * starts (the return address is 0x10 inside). */
static void rich_sample(rich *x, int vm, uint64_t coro, uint32_t flags,
                        uint64_t traceno, uint64_t tproto,
                        const ljp_frame *lua, size_t nlua,
                        const uint64_t *host, size_t nhost)
{
  uint64_t h[16];
  ljp_sample_x1 s;
  size_t i;
  ck_assert_uint_le(nhost, N(h));
  for (i = 0; i < nhost; i++)
    h[i] = host[i] < R_MAIN ? host[i] : host[i] + 0x10;
  memset(&s, 0, sizeof(s));
  s.vmstate = vm;
  /* about 1 ms apart, with a deterministic jitter */
  s.dt_ns = 1000000 + (x->k * 7919) % 20000;
  x->k++;
  s.coro = coro;
  s.flags = flags;
  s.traceno = traceno;
  s.trace_proto = tproto;
  s.trace_line = tproto == R_F ? 10 : 20;
  s.lua = lua;
  s.nlua = nlua;
  s.host = h;
  s.nhost = nhost;
  ck_assert_int_eq(ljp_write_sample_x1(x->w, &s), LJP_OK);
}

static unsigned ffid_of(const char *name)
{
  unsigned id;
  for (id = 0; id < 1024; id++) {
    const char *n = ljp_ffname(LJP_FLAVOR_LUAJIT, id);
    if (n && !strcmp(n, name))
      return id;
  }
  ck_abort_msg("no fast function %s", name);
  return 0;
}

/* A small program's profile: a Lua function f called from the main chunk
 * through lua_pcall, a trace in f, a coroutine running a trace of its own,
 * GC, a C function, a fast function with the host stack lost, a cut Lua
 * stack, an idle sample and a chunk loaded mid-stream. */
static void write_rich(ljp_writer *w)
{
  static const struct { uint64_t a; const char *n; } cs[] = {
    { R_MAIN, "main" }, { R_PCALL, "lua_pcall" },
    { R_VMPCALL, "lj_vm_pcall" }, { R_FUNCC, "lj_BC_FUNCC" },
    { R_MYC, "my_cfunc" }, { R_GC, "lj_gc_step" },
    { R_RESUME, "lua_resume" }, { R_VMRESUME, "lj_vm_resume" }
  };
  const ljp_frame lf[] = { LF(R_F, 10), LF(R_CHUNK, 0) };
  const ljp_frame lw[] = { LF(R_WORKER, 20) };
  const ljp_frame lc[] = { CF(R_MYC), LF(R_F, 10), LF(R_CHUNK, 0) };
  const ljp_frame lr[] = { FF(ffid_of("string.rep")), LF(R_F, 10),
                           LF(R_CHUNK, 0) };
  const ljp_frame ll[] = { LF(R_LATE, 1), LF(R_CHUNK, 0) };
  const uint64_t hf[] = { R_VMPCALL, R_PCALL, R_MAIN };
  const uint64_t ht[] = { R_MCODE, R_VMPCALL, R_PCALL, R_MAIN };
  const uint64_t hw[] = { R_MCODE + 0x100, R_VMRESUME, R_RESUME, R_MYC,
                          R_FUNCC, R_VMPCALL, R_PCALL, R_MAIN };
  const uint64_t hg[] = { R_GC, R_VMPCALL, R_PCALL, R_MAIN };
  const uint64_t hc[] = { R_MYC, R_FUNCC, R_VMPCALL, R_PCALL, R_MAIN };
  rich x = { w, 0 };
  size_t i;
  ck_assert_int_eq(ljp_write_symtab_begin(w, 3, 0), LJP_OK);
  ljp_write_symtab_lfunc(w, R_CHUNK, S("@app.lua"), 0);
  ljp_write_symtab_lfunc(w, R_F, S("@app.lua"), 10);
  ljp_write_symtab_lfunc(w, R_WORKER, S("@app.lua"), 20);
  for (i = 0; i < N(cs); i++)
    ljp_write_symtab_cfunc(w, cs[i].a, cs[i].n, strlen(cs[i].n));
  ljp_write_symtab_trace(w, 1, 0, R_F, 12);
  ck_assert_int_eq(ljp_write_symtab_end(w), LJP_OK);
  ck_assert_int_eq(ljp_write_stream_begin_x1(w, LJP_FLAVOR_LUAJIT,
                                             LJP_TIMER_PROCESS_CPU, 1000000),
                   LJP_OK);
  for (i = 0; i < 3; i++)
    rich_sample(&x, LJP_VMST_LFUNC, 1, 0, 0, 0, lf, 2, hf, 3);
  for (i = 0; i < 4; i++)
    rich_sample(&x, LJP_VMST_TRACE, 1, 0, 1, R_F, lf, 2, ht, 4);
  ck_assert_int_eq(ljp_write_event_trace(w, 2, R_WORKER, 22), LJP_OK);
  for (i = 0; i < 2; i++)
    rich_sample(&x, LJP_VMST_TRACE, 2, 0, 2, R_WORKER, lw, 1, hw, 8);
  rich_sample(&x, LJP_VMST_GC, 1, 0, 0, 0, lf, 2, hg, 4);
  rich_sample(&x, LJP_VMST_CFUNC, 1, 0, 0, 0, lc, 3, hc, 5);
  rich_sample(&x, LJP_VMST_FFUNC, 1, LJP_SAMPLE_HOST_INCOMPLETE, 0, 0, lr, 3,
              NULL, 0);
  rich_sample(&x, LJP_VMST_LFUNC, 1, LJP_SAMPLE_LUA_INCOMPLETE, 0, 0, lf, 1,
              hf, 3);
  rich_sample(&x, LJP_VMST_INTERP, 0, 0, 0, 0, NULL, 0, NULL, 0);
  ck_assert_int_eq(ljp_write_event_lfunc(w, R_LATE, S("@late.lua"), 1),
                   LJP_OK);
  rich_sample(&x, LJP_VMST_LFUNC, 1, 0, 0, 0, ll, 2, hf, 3);
  ck_assert_int_eq(ljp_write_stream_end(w), LJP_OK);
}

/* The fixture the tools' tests read is exactly what the encoder writes
 * today (LJP_X1_REGEN=1 rewrites it). */
START_TEST(fixture_is_current)
{
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  char path[1024];
  size_t len, flen;
  const uint8_t *d;
  uint8_t *f;
  write_rich(w);
  d = ljp_writer_data(w, &len);
  snprintf(path, sizeof(path), "%s/x1/x1_rich.bin", core_testdata);
  if (getenv("LJP_X1_REGEN")) {
    FILE *o = fopen(path, "wb");
    ck_assert_ptr_nonnull(o);
    ck_assert_uint_eq(fwrite(d, 1, len, o), len);
    ck_assert_int_eq(fclose(o), 0);
  }
  f = core_read_file(path, &flen);
  ck_assert_msg(f != NULL, "cannot read %s", path);
  core_expect_bytes(f, flen, d, len);
  free(f);
  ljp_writer_free(w);
}
END_TEST

/* ---- round trip: every vmstate, symbol events in between ---------------- */

typedef struct want_sample {
  int vmstate;
  uint64_t time_ns, coro;
  uint32_t flags;
  uint64_t traceno;
  ljp_frame lua[4];
  size_t nlua;
  uint64_t host[4];
  size_t nhost;
} want_sample;

typedef struct built {
  uint8_t *data;
  size_t len;
  want_sample want[64];
  size_t nwant;
  /* offsets of every record, in stream order, and the record count */
  uint64_t rec[128];
  size_t nrec;
} built;

static void mark(built *b, ljp_writer *w)
{
  size_t len;
  ljp_writer_data(w, &len);
  b->rec[b->nrec++] = len;
}

/* Two rounds over the ten vmstates; a symbol event after every third
 * sample; trace samples with and without stacks; coroutines 1..3. */
static void build_all(built *b)
{
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  const uint8_t *d;
  uint64_t t = 0;
  int round, vm;
  memset(b, 0, sizeof(*b));
  /* the symbol table's records: prologue, 5 entries, final byte */
  mark(b, w);
  ck_assert_int_eq(ljp_write_symtab_begin(w, 3, 0), LJP_OK);
  mark(b, w);
  ljp_write_symtab_lfunc(w, P_MAIN, S("@a.lua"), 0);
  mark(b, w);
  ljp_write_symtab_lfunc(w, P_F, S("@a.lua"), 10);
  mark(b, w);
  ljp_write_symtab_cfunc(w, A_MAIN, S("main"));
  mark(b, w);
  ljp_write_symtab_cfunc(w, A_PCALL, S("lua_pcall"));
  mark(b, w);
  ljp_write_symtab_trace(w, 3, 0, P_F, 12);
  mark(b, w);
  ljp_write_symtab_end(w);
  mark(b, w);
  ck_assert_int_eq(ljp_write_stream_begin_x1(w, LJP_FLAVOR_OPENRESTY,
                                             LJP_TIMER_WALL, 250000),
                   LJP_OK);
  for (round = 0; round < 2; round++) {
    for (vm = 0; vm <= LJP_VMST_TRACE; vm++) {
      want_sample *ws = &b->want[b->nwant++];
      ljp_sample_x1 s;
      size_t k = b->nwant;
      memset(&s, 0, sizeof(s));
      ws->vmstate = vm;
      s.vmstate = vm;
      /* a large delta now and then: multi-byte ULEB128s */
      s.dt_ns = k % 4 == 0 ? (uint64_t)1 << 40 : 1000 * k + 7;
      t += s.dt_ns;
      ws->time_ns = t;
      ws->coro = s.coro = k % 3;
      ws->flags = s.flags = (uint32_t)(k % 4);
      /* Lua stacks of 0..3 frames of every kind; every third sample has
       * none, the rest have host frames too */
      ws->nlua = k % 4;
      if (ws->nlua > 0)
        ws->lua[ws->nlua - 1] = LF(P_MAIN, 0);
      if (ws->nlua > 1)
        ws->lua[ws->nlua - 2] = round ? CF(A_PCALL + 0x40) : LF(P_F, 10);
      if (ws->nlua > 2)
        ws->lua[0] = round ? FF(79) : LF(P_G, 20);
      ws->nhost = k % 3 == 0 ? 0 : 3;
      ws->host[0] = 0x7f00 + k;
      ws->host[1] = A_PCALL + 0x10;
      ws->host[2] = A_MAIN + 0x10;
      s.lua = ws->lua;
      s.nlua = ws->nlua;
      s.host = ws->host;
      s.nhost = ws->nhost;
      if (vm == LJP_VMST_TRACE) {
        ws->traceno = s.traceno = round ? 4 : 3;
        s.trace_proto = P_F;
        s.trace_line = 10;
      }
      mark(b, w);
      ck_assert_int_eq(ljp_write_sample_x1(w, &s), LJP_OK);
      if (k % 3 == 0) {
        mark(b, w);
        switch ((k / 3) % 3) {
        case 0:
          ck_assert_int_eq(ljp_write_event_lfunc(w, P_G, S("@g.lua"), 20),
                           LJP_OK);
          break;
        case 1:
          ck_assert_int_eq(ljp_write_event_cfunc(w, A_GC, S("lj_gc_step")),
                           LJP_OK);
          break;
        default:
          ck_assert_int_eq(ljp_write_event_trace(w, 4, P_F, 14), LJP_OK);
          break;
        }
      }
    }
  }
  mark(b, w);
  ck_assert_int_eq(ljp_write_stream_end(w), LJP_OK);
  d = ljp_writer_data(w, &b->len);
  b->data = malloc(b->len);
  memcpy(b->data, d, b->len);
  ljp_writer_free(w);
}

START_TEST(roundtrip_every_vmstate)
{
  built *b = malloc(sizeof(*b));
  ljp_reader *r = ljp_reader_new();
  const ljp_event *ev;
  ljp_status st;
  size_t nsample = 0, nrec = 0, i;
  build_all(b);
  ck_assert_int_eq(ljp_reader_open_memory(r, b->data, b->len), LJP_OK);
  while ((st = ljp_reader_next(r, &ev)) == LJP_OK) {
    const ljp_sample *s = &ev->u.sample;
    const want_sample *ws;
    ck_assert_uint_lt(nrec, b->nrec);
    ck_assert_uint_eq(ev->offset, b->rec[nrec]);
    nrec++;
    if (ev->type != LJP_EV_SAMPLE)
      continue;
    ws = &b->want[nsample++];
    ck_assert_int_eq(s->vmstate, ws->vmstate);
    ck_assert_int_eq(s->has_time, 1);
    ck_assert_uint_eq(s->time_ns, ws->time_ns);
    ck_assert_uint_eq(s->coro, ws->coro);
    ck_assert_uint_eq(s->flags, ws->flags);
    ck_assert_uint_eq(s->lua_count, ws->nlua);
    ck_assert_uint_eq(s->host_count, ws->nhost);
    for (i = 0; i < ws->nlua; i++) {
      ck_assert_int_eq(s->lua[i].kind, ws->lua[i].kind);
      ck_assert_uint_eq(s->lua[i].value, ws->lua[i].value);
      ck_assert_uint_eq(s->lua[i].line, ws->lua[i].line);
    }
    for (i = 0; i < ws->nhost; i++)
      ck_assert_uint_eq(s->host[i].value, ws->host[i]);
    if (ws->vmstate == LJP_VMST_TRACE) {
      ck_assert_uint_eq(s->trace.value, ws->traceno);
      /* trace 4 is defined mid-stream before the second round's trace
       * sample: it resolves to that definition */
      ck_assert_ptr_nonnull(s->trace.sym);
      ck_assert_uint_eq(s->trace.sym->line, ws->traceno == 4 ? 14 : 12);
    } else {
      ck_assert_int_eq(s->trace.kind, LJP_FRAME_NONE);
    }
  }
  ck_assert_msg(st == LJP_END, "%s", ljp_reader_error(r));
  ck_assert_uint_eq(nsample, b->nwant);
  ck_assert_uint_eq(nrec, b->nrec);
  /* the proto defined mid-stream names the later frames that use it */
  ck_assert_ptr_nonnull(ljp_reader_lookup_proto(r, P_G));
  ck_assert_uint_eq(ljp_reader_counters(r)->symbols_midstream[LJP_SYM_LFUNC],
                    2);
  ck_assert_int_eq(ljp_reader_flavor(r), LJP_FLAVOR_OPENRESTY);
  ck_assert_int_eq(ljp_reader_timer(r), LJP_TIMER_WALL);
  ck_assert_uint_eq(ljp_reader_interval_ns(r), 250000);
  ck_assert_uint_eq(ljp_reader_time_ns(r), b->want[b->nwant - 1].time_ns);
  ljp_reader_free(r);
  free(b->data);
  free(b);
}
END_TEST

/* Every prefix: truncated, never malformed; exactly the records that end
 * by the cut come back, equal to the full decode's; the error names an
 * offset inside the first record that did not. */
START_TEST(every_prefix_is_truncated)
{
  built *b = malloc(sizeof(*b));
  core_decode full;
  size_t cut, i;
  build_all(b);
  memset(&full, 0, sizeof(full));
  core_decode_memory(b->data, b->len, &full, 1);
  ck_assert_int_eq(full.status, LJP_END);
  ck_assert_uint_eq(full.nevents, b->nrec);
  for (cut = 0; cut < b->len; cut++) {
    core_decode d;
    size_t expect = 0;
    char prefix[32];
    uint8_t *copy = malloc(cut ? cut : 1);
    memcpy(copy, b->data, cut);
    memset(&d, 0, sizeof(d));
    core_decode_memory(copy, cut, &d, 1);
    for (i = 0; i < b->nrec; i++) {
      uint64_t end = i + 1 < b->nrec ? b->rec[i + 1] : b->len;
      if (end <= cut)
        expect = i + 1;
    }
    CORE_CHECK(d.status == LJP_E_TRUNCATED, "cut at %zu: %s (%s)", cut,
               ljp_status_name(d.status), d.error);
    CORE_CHECK(d.nevents == expect, "cut at %zu: %zu events, expected %zu",
               cut, d.nevents, expect);
    CORE_CHECK(d.error_offset <= cut && d.error_offset >= b->rec[expect],
               "cut at %zu: error offset %llu, record at %llu", cut,
               (unsigned long long)d.error_offset,
               (unsigned long long)b->rec[expect]);
    snprintf(prefix, sizeof(prefix), "offset %llu: ",
             (unsigned long long)d.error_offset);
    CORE_CHECK(strncmp(d.error, prefix, strlen(prefix)) == 0,
               "cut at %zu: message \"%s\"", cut, d.error);
    for (i = 0; i < d.nevents; i++)
      CORE_CHECK(d.prints[i] == full.prints[i],
                 "cut at %zu: event %zu differs from the full decode", cut, i);
    core_decode_clear(&d);
    free(copy);
  }
  core_decode_clear(&full);
  free(b->data);
  free(b);
}
END_TEST

/* Truncation messages say which field ran out. */
START_TEST(truncation_names_the_field)
{
  size_t len;
  uint8_t *data = spec_file(&len);
  /* the symbol table is 59 bytes; the x1 prologue's interval starts at 66 */
  static const struct {
    size_t cut;
    const char *msg;
  } cases[] = {
    { 59 + 8, "offset 66: truncated ULEB128 sampling interval of the ljp x1 "
              "prologue" },
    { 59 + 12, "offset 70: truncated ULEB128 time delta of an x1 sample" },
    { 59 + 14, "offset 73: truncated ULEB128 coroutine id of an x1 sample" },
    { 59 + 15, "offset 74: truncated ULEB128 flags of an x1 sample" },
    { 59 + 16, "offset 75: truncated Lua stack frame header" },
  };
  size_t i;
  ck_assert_uint_eq(len, 59 + sizeof(SPEC_X1));
  ck_assert_int_eq(data[59], 'l');
  for (i = 0; i < N(cases); i++) {
    core_decode d;
    memset(&d, 0, sizeof(d));
    core_decode_memory(data, cases[i].cut, &d, 0);
    ck_assert_int_eq(d.status, LJP_E_TRUNCATED);
    ck_assert_str_eq(d.error, cases[i].msg);
    core_decode_clear(&d);
  }
  free(data);
}
END_TEST

/* ---- refusals ---------------------------------------------------------- */

START_TEST(writer_refusals)
{
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  const ljp_frame bad[] = { { LJP_FRAME_HOST, 0x10, 0, NULL, NULL, 0 } };
  const ljp_frame lua[] = { LF(P_F, 10) };
  const uint64_t zero[] = { 0x10, 0 };
  ljp_sample_x1 s;
  size_t before, after;
  memset(&s, 0, sizeof(s));
  /* not in an x1 stream */
  ck_assert_int_eq(ljp_write_sample_x1(w, &s), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_stream_begin(w, LJP_KIND_SYSPROF, 2, 0, 0),
                   LJP_OK);
  ck_assert_int_eq(ljp_write_sample_x1(w, &s), LJP_E_ARG);
  ljp_writer_free(w);
  w = ljp_writer_new(NULL, NULL, 0);
  ck_assert_int_eq(ljp_write_stream_begin_x1(w, LJP_FLAVOR_AUTO,
                                             LJP_TIMER_WALL, 0), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_stream_begin_x1(w, LJP_FLAVOR_LUAJIT,
                                             (ljp_timer)4, 0), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_stream_begin_x1(w, LJP_FLAVOR_LUAJIT,
                                             LJP_TIMER_UNKNOWN, 0), LJP_OK);
  ck_assert_int_eq(ljp_write_stream_begin_x1(w, LJP_FLAVOR_LUAJIT,
                                             LJP_TIMER_UNKNOWN, 0), LJP_E_ARG);
  ljp_writer_data(w, &before);
  /* the ljp 1/2 sample writers do not write x1 samples */
  ck_assert_int_eq(ljp_write_sample(w, 1, lua, 1, NULL, 0), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_trace_sample(w, 1, P_F, 10), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_sample_x1(w, NULL), LJP_E_ARG);
  s.vmstate = 10;
  ck_assert_int_eq(ljp_write_sample_x1(w, &s), LJP_E_ARG);
  s.vmstate = -1;
  ck_assert_int_eq(ljp_write_sample_x1(w, &s), LJP_E_ARG);
  s.vmstate = LJP_VMST_LFUNC;
  s.flags = 4;
  ck_assert_int_eq(ljp_write_sample_x1(w, &s), LJP_E_ARG);
  s.flags = 0;
  s.lua = bad;
  s.nlua = 1;
  ck_assert_int_eq(ljp_write_sample_x1(w, &s), LJP_E_ARG);
  s.lua = NULL;
  ck_assert_int_eq(ljp_write_sample_x1(w, &s), LJP_E_ARG);
  s.lua = lua;
  s.host = zero;
  s.nhost = 2;
  ck_assert_int_eq(ljp_write_sample_x1(w, &s), LJP_E_ARG);
  s.host = NULL;
  s.nhost = 1;
  ck_assert_int_eq(ljp_write_sample_x1(w, &s), LJP_E_ARG);
  ljp_writer_data(w, &after);
  ck_assert_uint_eq(after, before);
  /* and after all that, a valid one goes through */
  s.nhost = 0;
  ck_assert_int_eq(ljp_write_sample_x1(w, &s), LJP_OK);
  ljp_writer_data(w, &after);
  ck_assert_uint_eq(after, before + 11);
  ljp_writer_free(w);
}
END_TEST

/* An empty ljs 3 table, then the given event-stream bytes. */
static void decode_after_symtab(const uint8_t *ev, size_t n, core_decode *d,
                                ljp_reader **keep)
{
  static const uint8_t head[] = { 'l', 'j', 's', 3, 0, 0, 0, 0x80 };
  uint8_t *buf = malloc(sizeof(head) + n);
  ljp_reader *r = ljp_reader_new();
  memcpy(buf, head, sizeof(head));
  memcpy(buf + sizeof(head), ev, n);
  memset(d, 0, sizeof(*d));
  ck_assert_int_eq(ljp_reader_open_memory(r, buf, sizeof(head) + n), LJP_OK);
  core_decode_run(r, d, 0);
  if (keep)
    *keep = r;
  else
    ljp_reader_free(r);
  free(buf);
}

START_TEST(reader_ignores_reserved)
{
  /* timer 7 is unknown to this build; flags carry reserved bits 2 and 40 */
  static const uint8_t ev[] = {
    'l', 'j', 'p', 0x81, 0x07, 0x07, 0x00, 0x00,
    0x00, 0x05, 0x00, 0x86, 0x80, 0x80, 0x80, 0x80, 0x20, 0x80, 0x00,
    0x80
  };
  core_decode d;
  ljp_reader *r;
  decode_after_symtab(ev, sizeof(ev), &d, &r);
  ck_assert_msg(d.status == LJP_END, "%s", d.error);
  ck_assert_uint_eq(d.counters.samples, 1);
  ck_assert_uint_eq(d.counters.lua_incomplete, 0);
  ck_assert_uint_eq(d.counters.host_incomplete, 1);
  ck_assert_uint_eq(d.counters.max_coro, 0);
  /* an unknown flavor byte reads as Tarantool's, as in ljp 2 */
  ck_assert_int_eq(d.flavor, LJP_FLAVOR_TARANTOOL);
  ck_assert_int_eq(ljp_reader_timer(r), LJP_TIMER_UNKNOWN);
  ck_assert_uint_eq(ljp_reader_time_ns(r), 5);
  ljp_reader_free(r);
}
END_TEST

START_TEST(reader_refusals)
{
  core_decode d;
  /* 0x82 is no version of this build */
  static const uint8_t v82[] = { 'l', 'j', 'p', 0x82, 0, 0, 0, 0, 0x80 };
  /* x1 is a sysprof version only */
  static const uint8_t ljm81[] = { 'l', 'j', 'm', 0x81, 0, 0, 0, 0, 0x80 };
  /* a sample header above 9 that is no symbol event (0x0D is x1's
   * object event) */
  static const uint8_t h0e[] = { 'l', 'j', 'p', 0x81, 0, 0, 0, 0, 0x0E };
  /* a bad Lua frame header */
  static const uint8_t f04[] = { 'l', 'j', 'p', 0x81, 0, 0, 0, 0,
                                 0x01, 0x00, 0x01, 0x00, 0x04 };
  decode_after_symtab(v82, sizeof(v82), &d, NULL);
  ck_assert_int_eq(d.status, LJP_E_UNSUPPORTED);
  ck_assert_str_eq(d.error, "offset 11: unsupported ljp version 130; this "
                            "build reads 1\xe2\x80\x93" "2 and x1 (0x81)");
  decode_after_symtab(ljm81, sizeof(ljm81), &d, NULL);
  ck_assert_int_eq(d.status, LJP_E_UNSUPPORTED);
  decode_after_symtab(h0e, sizeof(h0e), &d, NULL);
  ck_assert_int_eq(d.status, LJP_E_MALFORMED);
  ck_assert_uint_eq(d.error_offset, 16);
  decode_after_symtab(f04, sizeof(f04), &d, NULL);
  ck_assert_int_eq(d.status, LJP_E_MALFORMED);
  ck_assert_uint_eq(d.error_offset, 20);
}
END_TEST

/* ---- objects (0x0D) ------------------------------------------------- */

/* Three objects, the third mapped over the first's range, with samples in
 * between; returns the bytes (the caller frees them). */
static uint8_t *object_stream(size_t *len, size_t *ends, size_t *nends)
{
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  const uint64_t host[] = { 0x1010 };
  ljp_sample_x1 s;
  const uint8_t *d;
  uint8_t *copy;
  memset(&s, 0, sizeof(s));
  s.vmstate = LJP_VMST_INTERP;
  s.dt_ns = 10;
  s.coro = 1;
  s.host = host;
  s.nhost = 1;
  *nends = 0;
  write_spec_symtab(w);
  ck_assert_int_eq(ljp_write_stream_begin_x1(w, LJP_FLAVOR_LUAJIT,
                                             LJP_TIMER_WALL, 0), LJP_OK);
  ljp_writer_data(w, &ends[(*nends)++]);
  ck_assert_int_eq(ljp_write_event_object(w, 0x1000, 0x2000, 0x40,
                                          S("/usr/bin/app"), S("0a1b2c")),
                   LJP_OK);
  ljp_writer_data(w, &ends[(*nends)++]);
  ck_assert_int_eq(ljp_write_event_object(w, 0x400000, 0x1000, 0,
                                          S("/lib/libx.so"), NULL, 0),
                   LJP_OK);
  ljp_writer_data(w, &ends[(*nends)++]);
  ck_assert_int_eq(ljp_write_sample_x1(w, &s), LJP_OK);
  ljp_writer_data(w, &ends[(*nends)++]);
  ck_assert_int_eq(ljp_write_event_object(w, 0x1000, 0x100, 0,
                                          S("/lib/new.so"), S("ff")),
                   LJP_OK);
  ljp_writer_data(w, &ends[(*nends)++]);
  ck_assert_int_eq(ljp_write_sample_x1(w, &s), LJP_OK);
  ljp_writer_data(w, &ends[(*nends)++]);
  ck_assert_int_eq(ljp_write_stream_end(w), LJP_OK);
  d = ljp_writer_data(w, len);
  copy = malloc(*len);
  memcpy(copy, d, *len);
  ljp_writer_free(w);
  return copy;
}

static void expect_object(const ljp_symbol *o, uint64_t start, uint64_t size,
                          uint64_t off, const char *path, const char *id)
{
  ck_assert_ptr_nonnull(o);
  ck_assert_int_eq(o->kind, LJP_SYM_OBJECT);
  ck_assert_uint_eq(o->addr, start);
  ck_assert_uint_eq(o->size, size);
  ck_assert_uint_eq(o->offset, off);
  ck_assert_str_eq(o->name, path);
  ck_assert_uint_eq(o->name_len, strlen(path));
  if (id) {
    ck_assert_str_eq(o->build_id, id);
    ck_assert_uint_eq(o->build_id_len, strlen(id));
  } else {
    ck_assert_ptr_null(o->build_id);
    ck_assert_uint_eq(o->build_id_len, 0);
  }
}

START_TEST(object_events)
{
  size_t len, ends[8], nends, i, cut;
  uint8_t *data = object_stream(&len, ends, &nends);
  ljp_reader *r = ljp_reader_new();
  const ljp_event *ev;
  ck_assert_int_eq(ljp_reader_open_memory(r, data, len), LJP_OK);
  next_ok(r, LJP_EV_PROLOGUE);
  for (i = 0; i < 5; i++)
    next_ok(r, LJP_EV_SYMBOL);
  next_ok(r, LJP_EV_EPILOGUE);
  next_ok(r, LJP_EV_PROLOGUE);
  ck_assert_ptr_null(ljp_reader_lookup_object(r, 0x1010));
  ev = next_ok(r, LJP_EV_SYMBOL);
  ck_assert_uint_eq(ev->u.symbol.header, 0x0D);
  ck_assert_int_eq(ev->u.symbol.initial, 0);
  expect_object(ev->u.symbol.sym, 0x1000, 0x2000, 0x40, "/usr/bin/app",
                "0a1b2c");
  ev = next_ok(r, LJP_EV_SYMBOL);
  expect_object(ev->u.symbol.sym, 0x400000, 0x1000, 0, "/lib/libx.so", NULL);
  next_ok(r, LJP_EV_SAMPLE);
  /* ranges are half-open */
  ck_assert_str_eq(ljp_reader_lookup_object(r, 0x1010)->name, "/usr/bin/app");
  ck_assert_str_eq(ljp_reader_lookup_object(r, 0x2fff)->name, "/usr/bin/app");
  ck_assert_ptr_null(ljp_reader_lookup_object(r, 0x3000));
  ck_assert_ptr_null(ljp_reader_lookup_object(r, 0xfff));
  ck_assert_str_eq(ljp_reader_lookup_object(r, 0x400fff)->name,
                   "/lib/libx.so");
  ev = next_ok(r, LJP_EV_SYMBOL);
  expect_object(ev->u.symbol.sym, 0x1000, 0x100, 0, "/lib/new.so", "ff");
  /* the newer object wins where it overlaps, the older one elsewhere */
  ck_assert_str_eq(ljp_reader_lookup_object(r, 0x1010)->name, "/lib/new.so");
  ck_assert_str_eq(ljp_reader_lookup_object(r, 0x1100)->name, "/usr/bin/app");
  /* objects name no function: host frames resolve as before */
  ev = next_ok(r, LJP_EV_SAMPLE);
  ck_assert_str_eq(ev->u.sample.host[0].sym->name, "main");
  next_ok(r, LJP_EV_EPILOGUE);
  ljp_reader_free(r);
  /* every cut inside an object event is truncated, and the records
   * before it stand */
  for (cut = ends[0] + 1; cut < ends[2]; cut++) {
    core_decode d;
    memset(&d, 0, sizeof(d));
    core_decode_memory(data, cut, &d, 0);
    CORE_CHECK(d.status == LJP_E_TRUNCATED, "cut at %zu: %s (%s)", cut,
               ljp_status_name(d.status), d.error);
    CORE_CHECK(d.nevents == (cut < ends[1] ? 8u : 9u),
               "cut at %zu: %zu events", cut, d.nevents);
    core_decode_clear(&d);
  }
  free(data);
}
END_TEST

START_TEST(object_refusals)
{
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  core_decode d;
  /* size 0 is no range */
  static const uint8_t zero[] = { 'l', 'j', 'p', 0x81, 0, 0, 0, 0,
                                  0x0D, 0x10, 0x00, 0x00, 0x01, 'a', 0x00 };
  /* ljp 2 has no object event */
  static const uint8_t v2[] = { 'l', 'j', 'p', 0x02, 0, 0, 0,
                                0x0D, 0x10, 0x01, 0x00, 0x01, 'a', 0x00 };
  write_spec_symtab(w);
  ck_assert_int_eq(ljp_write_stream_begin(w, LJP_KIND_SYSPROF, 2,
                                          LJP_FLAVOR_LUAJIT, 0), LJP_OK);
  ck_assert_int_eq(ljp_write_event_object(w, 0x1000, 0x10, 0, S("a"), NULL,
                                          0), LJP_E_ARG);
  ljp_writer_free(w);
  w = ljp_writer_new(NULL, NULL, 0);
  write_spec_symtab(w);
  ck_assert_int_eq(ljp_write_stream_begin_x1(w, LJP_FLAVOR_LUAJIT,
                                             LJP_TIMER_WALL, 0), LJP_OK);
  ck_assert_int_eq(ljp_write_event_object(w, 0x1000, 0, 0, S("a"), NULL, 0),
                   LJP_E_ARG);
  ljp_writer_free(w);
  decode_after_symtab(zero, sizeof(zero), &d, NULL);
  ck_assert_int_eq(d.status, LJP_E_MALFORMED);
  ck_assert_uint_eq(d.error_offset, 16);
  core_decode_clear(&d);
  decode_after_symtab(v2, sizeof(v2), &d, NULL);
  ck_assert_int_eq(d.status, LJP_E_MALFORMED);
  ck_assert_uint_eq(d.error_offset, 15);
  core_decode_clear(&d);
}
END_TEST

int main(int argc, char **argv)
{
  Suite *s = suite_create("core_x1");
  TCase *tc = tcase_create("x1");
  SRunner *sr;
  int failed;
  core_set_testdata(argc, argv);
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, encode_spec_example);
  tcase_add_test(tc, encode_through_small_sink);
  tcase_add_test(tc, decode_spec_example);
  tcase_add_test(tc, fold_spec_example);
  tcase_add_test(tc, fixture_is_current);
  tcase_add_test(tc, roundtrip_every_vmstate);
  tcase_add_test(tc, every_prefix_is_truncated);
  tcase_add_test(tc, truncation_names_the_field);
  tcase_add_test(tc, writer_refusals);
  tcase_add_test(tc, reader_ignores_reserved);
  tcase_add_test(tc, reader_refusals);
  tcase_add_test(tc, object_events);
  tcase_add_test(tc, object_refusals);
  suite_add_tcase(s, tc);
  sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
