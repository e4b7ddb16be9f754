/*
 * test_memprof.c — the memory profiler against ground truth built by
 * construction (known numbers of strings, tables and userdata at known
 * lines, some kept, some freed; allocations in a JIT-compiled loop), the
 * stream against libljp's strict reader and its own encoder, and the
 * lifecycle (running twice, stop while idle, a failing writer, lua_close
 * while running, 100 start/stop cycles).
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "ljp.h"
#include "ljp_capture.h"

/* ---- the host: a writer into memory ------------------------------------ */

typedef struct sink {
  uint8_t *p;
  size_t len, cap;
  int calls, fail_after, stops;
} sink;

static sink out;
static uint8_t hostbuf[4096];

static size_t w_mem(const void **data, size_t len, void *ctx)
{
  sink *s = ctx;
  if (s->fail_after >= 0 && s->calls++ >= s->fail_after) {
    errno = ENOSPC;
    return 0;
  }
  if (s->len + len > s->cap) {
    s->cap = (s->len + len) * 2;
    s->p = realloc(s->p, s->cap);
  }
  memcpy(s->p + s->len, *data, len);
  s->len += len;
  return len;
}

static int w_stop(void *ctx, uint8_t *buf)
{
  sink *s = ctx;
  (void)buf;
  s->stops++;
  return 0;
}

static struct ljp_memprof_options mopts(void)
{
  struct ljp_memprof_options o;
  free(out.p);
  memset(&out, 0, sizeof out);
  out.fail_after = -1;
  o.ctx = &out;
  o.buf = hostbuf;
  o.len = sizeof hostbuf;
  o.writer = w_mem;
  o.on_stop = w_stop;
  return o;
}

/* A C function that allocates n userdata of 100 bytes.  Exported, so its
 * name comes from the dynamic symbol table. */
int memprof_test_cfunc(lua_State *L);
int memprof_test_cfunc(lua_State *L)
{
  int i, n = (int)luaL_checkinteger(L, 1);
  for (i = 0; i < n; i++) {
    lua_newuserdata(L, 100);
    lua_pop(L, 1);
  }
  return 0;
}

static lua_State *new_state(void)
{
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
  lua_register(L, "alloc_ud", memprof_test_cfunc);
  return L;
}

static void run(lua_State *L, const char *code, const char *name)
{
  if (luaL_loadbuffer(L, code, strlen(code), name) || lua_pcall(L, 0, 0, 0))
    ck_abort_msg("lua: %s", lua_tostring(L, -1));
}

/* ---- decoding: per-source totals and the live heap --------------------- */

#define MAXKEYS 512

typedef struct row {
  char key[160];
  uint64_t alloc_events, alloc_bytes, live_blocks, live_bytes;
  uint64_t size_events[4];     /* ALLOC events of the sizes asked for */
  uint64_t live_sized;         /* live blocks of the first such size */
} row;

typedef struct live {
  uint64_t addr, size;
  int row;
} live;

typedef struct decoded {
  ljp_status status;
  row rows[MAXKEYS];
  int nrows;
  uint64_t events, allocs, reallocs, frees, bytes_alloc, bytes_freed;
  uint64_t sizes[4];
  live *heap;
  size_t nheap, capheap;
} decoded;

static void key_of(const ljp_mem_event *m, char *k, size_t n)
{
  const ljp_symbol *s = m->loc.sym;
  switch (m->source) {
  case LJP_SRC_LFUNC:
    snprintf(k, n, "%s:%llu", s && s->name ? s->name : "?",
             (unsigned long long)m->loc.line);
    break;
  case LJP_SRC_CFUNC:
    snprintf(k, n, "C %s", s && s->name ? s->name : "?");
    break;
  case LJP_SRC_TRACE: {
    const ljp_symbol *p = m->loc.proto;
    snprintf(k, n, "TRACE %s:%llu", p && p->name ? p->name : "?",
             (unsigned long long)(s ? s->line : 0));
    break;
  }
  default:
    snprintf(k, n, "INTERNAL");
  }
}

static int row_of(decoded *d, const char *k)
{
  int i;
  for (i = 0; i < d->nrows; i++)
    if (strcmp(d->rows[i].key, k) == 0)
      return i;
  ck_assert_int_lt(d->nrows, MAXKEYS);
  snprintf(d->rows[d->nrows].key, sizeof d->rows[0].key, "%s", k);
  return d->nrows++;
}

static void heap_del(decoded *d, uint64_t addr)
{
  size_t i;
  for (i = d->nheap; i-- > 0;)
    if (d->heap[i].addr == addr) {
      row *r = &d->rows[d->heap[i].row];
      r->live_blocks--;
      r->live_bytes -= d->heap[i].size;
      if (d->sizes[0] && d->heap[i].size == d->sizes[0])
        r->live_sized--;
      d->heap[i] = d->heap[--d->nheap];
      return;
    }
}

static void heap_add(decoded *d, uint64_t addr, uint64_t size, int ri)
{
  if (d->nheap == d->capheap) {
    d->capheap = d->capheap ? d->capheap * 2 : 4096;
    d->heap = realloc(d->heap, d->capheap * sizeof *d->heap);
  }
  d->heap[d->nheap].addr = addr;
  d->heap[d->nheap].size = size;
  d->heap[d->nheap++].row = ri;
  d->rows[ri].live_blocks++;
  d->rows[ri].live_bytes += size;
  if (d->sizes[0] && size == d->sizes[0])
    d->rows[ri].live_sized++;
}

/* Decodes buf with the strict reader; sizes[] picks ALLOC sizes to count
 * per row. */
static void decode(const void *buf, size_t len, decoded *d)
{
  ljp_reader *r = ljp_reader_new();
  const ljp_event *ev;
  ljp_status st;
  ck_assert_ptr_nonnull(r);
  ck_assert_int_eq(ljp_reader_open_memory(r, buf, len), LJP_OK);
  while ((st = ljp_reader_next(r, &ev)) == LJP_OK) {
    const ljp_mem_event *m;
    char k[160];
    int ri, j;
    if (ev->type != LJP_EV_MEMORY)
      continue;
    m = &ev->u.mem;
    key_of(m, k, sizeof k);
    ri = row_of(d, k);
    d->events++;
    if (m->kind != LJP_MEM_ALLOC) {
      d->bytes_freed += m->old_size;
      heap_del(d, m->old_addr);
    }
    if (m->kind != LJP_MEM_FREE) {
      d->bytes_alloc += m->new_size;
      heap_add(d, m->new_addr, m->new_size, ri);
    }
    if (m->kind == LJP_MEM_ALLOC) {
      d->allocs++;
      d->rows[ri].alloc_events++;
      d->rows[ri].alloc_bytes += m->new_size;
      for (j = 0; j < 4; j++)
        if (d->sizes[j] && m->new_size == d->sizes[j])
          d->rows[ri].size_events[j]++;
    } else if (m->kind == LJP_MEM_FREE) {
      d->frees++;
    } else {
      d->reallocs++;
    }
  }
  d->status = st;
  ljp_reader_free(r);
}

static const row *find(const decoded *d, const char *key)
{
  int i;
  for (i = 0; i < d->nrows; i++)
    if (strcmp(d->rows[i].key, key) == 0)
      return &d->rows[i];
  return NULL;
}

static void check_counters(const decoded *d)
{
  struct ljp_memprof_counters c;
  ck_assert_int_eq(ljp_memprof_report(&c), 0);
  ck_assert_int_eq(c.vm_reader, 1);
  ck_assert_uint_eq(c.dropped, 0);
  ck_assert_uint_eq(c.events, d->events);
  ck_assert_uint_eq(c.allocs, d->allocs);
  ck_assert_uint_eq(c.reallocs, d->reallocs);
  ck_assert_uint_eq(c.frees, d->frees);
  ck_assert_uint_eq(c.bytes_allocated, d->bytes_alloc);
  ck_assert_uint_eq(c.bytes_freed, d->bytes_freed);
}

/* ---- ground truth ------------------------------------------------------- */

#define N 1000
#define STRLEN 40

/* Line numbers below are those of this chunk. */
static const char truth_code[] =
  "jit.off()\n"                                                 /* 1 */
  "keep = {}\n"                                                 /* 2 */
  "local function mk(n)\n"                                      /* 3 */
  "  for i = 1, n do\n"                                         /* 4 */
  "    local t = {}\n"                                          /* 5 */
  "    local s = string.format('%040d', i)\n"                   /* 6 */
  "    if i % 2 == 0 then keep[#keep + 1] = s end\n"            /* 7 */
  "  end\n"                                                     /* 8 */
  "end\n"                                                       /* 9 */
  "mk(1000)\n"                                                  /* 10 */
  "alloc_ud(300)\n"                                             /* 11 */
  "collectgarbage() collectgarbage()\n";                        /* 12 */

START_TEST(ground_truth)
{
  lua_State *L = new_state();
  struct ljp_memprof_options o = mopts();
  static decoded d;
  size_t sz_str, sz_tab, sz_ud;
  const row *r5, *r6, *rc;
  ck_assert_int_eq(ljp_memprof_start(L, &o), 0);
  run(L, truth_code, "@truth.lua");
  ck_assert_int_eq(ljp_memprof_stop(L), 0);
  ck_assert_int_eq(out.stops, 1);
  memset(&d, 0, sizeof d);
  decode(out.p, out.len, &d);
  ck_assert_int_eq(d.status, LJP_END);
  check_counters(&d);
  r5 = find(&d, "@truth.lua:5");
  r6 = find(&d, "@truth.lua:6");
  rc = find(&d, "C memprof_test_cfunc");
  ck_assert_ptr_nonnull(r5);
  ck_assert_ptr_nonnull(r6);
  ck_assert_ptr_nonnull(rc);
  /* Sizes (lj_obj.h): GCtab 64 bytes under GC64, 32 without; GCstr 24
   * or 20, plus the text and a NUL rounded up to 4 (lj_str_size); GCudata 48 or 24 plus the payload.
   * Every allocation at line 5 is a table header of one size, N of them;
   * line 6's strings all have one size too (the format buffer may grow
   * there as well: those are reallocations). */
  ck_assert_uint_eq(r5->alloc_events, N);
  sz_tab = r5->alloc_bytes / N;
  ck_assert_uint_eq(r5->alloc_bytes, sz_tab * N);
  ck_assert(sz_tab == 64 || sz_tab == 32);
  sz_str = (sz_tab == 64 ? 24 : 20) + ((STRLEN + 4) & ~3);
  ck_assert_uint_ge(r6->alloc_events, N);
  free(d.heap);
  memset(&d, 0, sizeof d);
  d.sizes[0] = sz_str;
  d.sizes[1] = sz_tab;
  sz_ud = 100 + (sz_tab == 64 ? 48 : 24);
  d.sizes[2] = sz_ud;
  decode(out.p, out.len, &d);
  r5 = find(&d, "@truth.lua:5");
  r6 = find(&d, "@truth.lua:6");
  rc = find(&d, "C memprof_test_cfunc");
  ck_assert_uint_eq(r6->size_events[0], N);
  ck_assert_uint_eq(r5->size_events[1], N);
  /* The C function: 300 userdata, nothing else allocates there. */
  ck_assert_uint_eq(rc->size_events[2], 300);
  ck_assert_uint_eq(rc->alloc_events, 300);
  /* Leaks after a full collection: exactly the kept strings at line 6,
   * no table of line 5, no userdata. */
  ck_assert_uint_eq(r6->live_sized, N / 2);
  /* Besides them, at most the format buffer (grown there) lives on. */
  ck_assert_uint_le(r6->live_blocks, N / 2 + 1);
  ck_assert_uint_eq(r5->live_blocks, 0);
  ck_assert_uint_eq(rc->live_blocks, 0);
  ck_assert_ptr_nonnull(find(&d, "@truth.lua:2"));
  ck_assert_uint_eq(find(&d, "@truth.lua:2")->live_blocks, 1);
  free(d.heap);
  lua_close(L);
}
END_TEST

/* Allocations in a JIT-compiled loop are the trace's, named by its
 * start line. */
START_TEST(jit_loop)
{
  lua_State *L = new_state();
  struct ljp_memprof_options o = mopts();
  static decoded d;
  const row *rt;
  ck_assert_int_eq(ljp_memprof_start(L, &o), 0);
  run(L,
      "local k = {}\n"
      "for i = 1, 20000 do k[i] = {i, i} end\n"
      "kk = k\n", "@jit.lua");
  ck_assert_int_eq(ljp_memprof_stop(L), 0);
  memset(&d, 0, sizeof d);
  decode(out.p, out.len, &d);
  ck_assert_int_eq(d.status, LJP_END);
  check_counters(&d);
  rt = find(&d, "TRACE @jit.lua:2");
  ck_assert_ptr_nonnull(rt);
  /* One allocation per iteration (the array part is colocated); the
   * interpreter runs the first ~60 iterations. */
  ck_assert_uint_ge(rt->alloc_events, 19000);
  ck_assert_uint_le(rt->alloc_events, 20000);
  free(d.heap);
  lua_close(L);
}
END_TEST

/* ---- round trip --------------------------------------------------------- */

static ljp_status reencode(const void *buf, size_t len, ljp_writer *w)
{
  ljp_reader *r = ljp_reader_new();
  const ljp_event *ev;
  ljp_status st;
  int epilogues = 0;
  ljp_reader_open_memory(r, buf, len);
  while ((st = ljp_reader_next(r, &ev)) == LJP_OK) {
    switch (ev->type) {
    case LJP_EV_PROLOGUE:
      if (strcmp(ev->u.prologue.magic, "ljs") == 0)
        ljp_write_symtab_begin(w, ev->u.prologue.version, 0);
      else
        ljp_write_stream_begin(w, LJP_KIND_MEMPROF, ev->u.prologue.version,
                               (ljp_flavor)ev->u.prologue.reserved[0], 0);
      break;
    case LJP_EV_EPILOGUE:
      if (epilogues++ > 0)
        ljp_write_stream_end(w);
      else
        ljp_write_symtab_end(w);
      break;
    case LJP_EV_SYMBOL: {
      const ljp_symbol *s = ev->u.symbol.sym;
      if (s->kind == LJP_SYM_LFUNC)
        ljp_write_event_lfunc(w, s->addr, s->name, s->name_len, s->line);
      else if (s->kind == LJP_SYM_CFUNC)
        ljp_write_event_cfunc(w, s->addr, s->name, s->name_len);
      else
        ljp_write_event_trace(w, s->traceno, s->addr, s->line);
      break;
    }
    case LJP_EV_MEMORY: {
      const ljp_mem_event *m = &ev->u.mem;
      ljp_write_mem(w, m->kind, m->source, m->loc.value, m->loc.line, 0,
                    m->old_addr, m->old_size, m->new_addr, m->new_size);
      break;
    }
    default:
      break;
    }
  }
  ljp_reader_free(r);
  return st;
}

START_TEST(round_trip)
{
  lua_State *L = new_state();
  struct ljp_memprof_options o = mopts();
  ljp_writer *w;
  const uint8_t *p;
  size_t n;
  ck_assert_int_eq(ljp_memprof_start(L, &o), 0);
  run(L, truth_code, "@truth.lua");
  run(L, "for i = 1, 5000 do local t = {tostring(i)} end", "=rt");
  ck_assert_int_eq(ljp_memprof_stop(L), 0);
  w = ljp_writer_new(NULL, NULL, 0);
  ck_assert_int_eq(reencode(out.p, out.len, w), LJP_END);
  p = ljp_writer_data(w, &n);
  ck_assert_uint_eq(n, out.len);
  ck_assert(memcmp(p, out.p, n) == 0);
  ljp_writer_free(w);
  lua_close(L);
}
END_TEST

/* ---- lifecycle ---------------------------------------------------------- */

START_TEST(twice_and_idle)
{
  lua_State *L = new_state();
  struct ljp_memprof_options o = mopts();
  ck_assert_int_eq(ljp_memprof_stop(L), LJP_CAPTURE_ERRRUN);
  ck_assert_int_eq(ljp_memprof_start(L, &o), 0);
  ck_assert_int_eq(ljp_memprof_start(L, &o), LJP_CAPTURE_ERRRUN);
  ck_assert_int_eq(ljp_memprof_stop(L), 0);
  ck_assert_int_eq(ljp_memprof_stop(L), LJP_CAPTURE_ERRRUN);
  ck_assert_int_eq(out.stops, 1);
  o.len = 100;
  ck_assert_int_eq(ljp_memprof_start(L, &o), LJP_CAPTURE_ERRUSE);
  ck_assert_int_eq(ljp_memprof_start(L, NULL), LJP_CAPTURE_ERRUSE);
  lua_close(L);
}
END_TEST

START_TEST(writer_fails)
{
  lua_State *L = new_state();
  struct ljp_memprof_options o = mopts();
  struct ljp_memprof_counters c;
  static decoded d;
  /* The header fails: start fails, on_stop is called. */
  out.fail_after = 0;
  ck_assert_int_eq(ljp_memprof_start(L, &o), LJP_CAPTURE_ERRIO);
  ck_assert_int_eq(out.stops, 1);
  /* A later flush fails: the state keeps working, stop says ERRIO with
   * errno, what was written decodes up to a record boundary. */
  o = mopts();
  out.fail_after = 3;
  ck_assert_int_eq(ljp_memprof_start(L, &o), 0);
  run(L, truth_code, "@truth.lua");
  errno = 0;
  ck_assert_int_eq(ljp_memprof_stop(L), LJP_CAPTURE_ERRIO);
  ck_assert_int_eq(errno, ENOSPC);
  ck_assert_int_eq(out.stops, 1);
  ljp_memprof_report(&c);
  ck_assert_uint_gt(c.dropped, 0);
  memset(&d, 0, sizeof d);
  decode(out.p, out.len, &d);
  /* No epilogue: the input ends between two records. */
  ck_assert_int_eq(d.status, LJP_E_TRUNCATED);
  ck_assert_uint_gt(d.events, 100);
  ck_assert_uint_eq(d.events + c.dropped, c.events);
  free(d.heap);
  run(L, "local t = {} for i = 1, 1000 do t[i] = {} end", "=after");
  lua_close(L);
}
END_TEST

START_TEST(close_while_running)
{
  lua_State *L = new_state();
  struct ljp_memprof_options o = mopts();
  static decoded d;
  ck_assert_int_eq(ljp_memprof_start(L, &o), 0);
  run(L, truth_code, "@truth.lua");
  lua_close(L);
  ck_assert_int_eq(out.stops, 1);
  ck_assert_int_eq(ljp_memprof_running(), 0);
  memset(&d, 0, sizeof d);
  decode(out.p, out.len, &d);
  ck_assert_int_eq(d.status, LJP_END);
  check_counters(&d);
  free(d.heap);
  /* A new state profiles again. */
  L = new_state();
  o = mopts();
  ck_assert_int_eq(ljp_memprof_start(L, &o), 0);
  run(L, "x = {}", "=x");
  ck_assert_int_eq(ljp_memprof_stop(L), 0);
  lua_close(L);
}
END_TEST

START_TEST(cycles)
{
  lua_State *L = new_state();
  int i;
  for (i = 0; i < 100; i++) {
    struct ljp_memprof_options o = mopts();
    static decoded d;
    ck_assert_int_eq(ljp_memprof_start(L, &o), 0);
    run(L, "local t = {} for i = 1, 100 do t[i] = {} end", "=c");
    ck_assert_int_eq(ljp_memprof_stop(L), 0);
    ck_assert_int_eq(out.stops, 1);
    memset(&d, 0, sizeof d);
    decode(out.p, out.len, &d);
    ck_assert_int_eq(d.status, LJP_END);
    ck_assert_uint_ge(d.allocs, 100);
    free(d.heap);
  }
  lua_close(L);
}
END_TEST

/* Both profilers at once: sysprof's start and stop leave memprof's
 * wrapper in place. */
static size_t w_null(const void **data, size_t len, void *ctx)
{
  (void)data; (void)ctx;
  return len;
}

static int s_stop(void *ctx, uint8_t *buf)
{
  (void)ctx; (void)buf;
  return 0;
}

START_TEST(with_sysprof)
{
  lua_State *L = new_state();
  struct ljp_memprof_options o = mopts();
  struct ljp_capture_options so;
  static uint8_t sbuf[16384];
  static decoded d;
  memset(&so, 0, sizeof so);
  so.mode = LJP_CAPTURE_CALLGRAPH;
  so.interval = 1;
  so.buf = sbuf;
  so.len = sizeof sbuf;
  ljp_capture_set_writer(w_null);
  ljp_capture_set_on_stop(s_stop);
  ck_assert_int_eq(ljp_memprof_start(L, &o), 0);
  ck_assert_int_eq(ljp_capture_start(L, &so), 0);
  run(L, truth_code, "@truth.lua");
  ck_assert_int_eq(ljp_capture_stop(L), 0);
  run(L, "local t = {} for i = 1, 100 do t[i] = {} end", "=after");
  ck_assert_int_eq(ljp_memprof_stop(L), 0);
  memset(&d, 0, sizeof d);
  decode(out.p, out.len, &d);
  ck_assert_int_eq(d.status, LJP_END);
  check_counters(&d);
  ck_assert_ptr_nonnull(find(&d, "@truth.lua:5"));
  ck_assert_uint_eq(find(&d, "@truth.lua:5")->alloc_events, N);
  free(d.heap);
  lua_close(L);
}
END_TEST

/* jit.flush() frees every trace and the next ones take the same numbers
 * (both loops run as trace 1): the number is written again with its new
 * start line, and the second loop's allocations are its own. */
START_TEST(trace_reuse)
{
  lua_State *L = new_state();
  struct ljp_memprof_options o = mopts();
  static decoded d;
  const row *r2, *r5;
  ck_assert_int_eq(ljp_memprof_start(L, &o), 0);
  run(L,
      "jit.flush()\n"
      "local k = {}\n"
      "for i = 1, 20000 do k[i] = {i, i} end\n"
      "jit.flush()\n"
      "local k2 = {}\n"
      "for i = 1, 20000 do k2[i] = {i, i, i} end\n"
      "kk, kk2 = k, k2\n", "@flush.lua");
  ck_assert_int_eq(ljp_memprof_stop(L), 0);
  memset(&d, 0, sizeof d);
  decode(out.p, out.len, &d);
  ck_assert_int_eq(d.status, LJP_END);
  check_counters(&d);
  r2 = find(&d, "TRACE @flush.lua:3");
  r5 = find(&d, "TRACE @flush.lua:6");
  ck_assert_ptr_nonnull(r2);
  ck_assert_ptr_nonnull(r5);
  ck_assert_uint_ge(r2->alloc_events, 19000);
  ck_assert_uint_le(r2->alloc_events, 20000);
  ck_assert_uint_ge(r5->alloc_events, 19000);
  ck_assert_uint_le(r5->alloc_events, 20000);
  free(d.heap);
  lua_close(L);
}
END_TEST

static Suite *memprof_suite(void)
{
  Suite *s = suite_create("memprof");
  TCase *tc = tcase_create("memprof");
  tcase_set_timeout(tc, 300);
  tcase_add_test(tc, ground_truth);
  tcase_add_test(tc, jit_loop);
  tcase_add_test(tc, trace_reuse);
  tcase_add_test(tc, round_trip);
  tcase_add_test(tc, twice_and_idle);
  tcase_add_test(tc, writer_fails);
  tcase_add_test(tc, close_while_running);
  tcase_add_test(tc, cycles);
  tcase_add_test(tc, with_sysprof);
  suite_add_tcase(s, tc);
  return s;
}

int main(int argc, char **argv)
{
  SRunner *sr = srunner_create(memprof_suite());
  int failed;
  srunner_run(sr, NULL, argc > 1 ? argv[1] : NULL, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
