/*
 * test_roundtrip.c — what the writer encodes, the reader decodes, field by
 * field, for every version pair that real producers wrote.
 *
 * A builder drives the writer and, for every record, notes the event the
 * reader must return: its offset (the writer's length before the record),
 * every field, and what each location must resolve to at that point of the
 * stream (symbols shadow one another mid-stream, so the builder keeps its
 * own model of the table: key -> current definition and generation).  The
 * counters the reader must end with are computed the same way.
 *
 * Also here: ULEB128 edge cases through the reader (2^64-1 values, over-long
 * and overflowing numbers, truncation inside a number) and every cut of
 * every built stream.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_util.h"
#include "ljp_testing.h"

#define S(str) str, sizeof(str) - 1
#define MAXEV 512
#define MAXDEF 128

/* ---- the version pairs -------------------------------------------------- */

typedef struct pair_cfg {
  const char *name;
  unsigned ljs;
  int layout;            /* 'a' / 'b' for ljs 2 */
  ljp_kind kind;
  unsigned ev;
  int mcode;             /* ljm loc-trace carries trace-addr */
  ljp_flavor flavor;
} pair_cfg;

static const pair_cfg PAIRS[] = {
  { "ljs1+ljm1", 1, 0, LJP_KIND_MEMPROF, 1, 0, LJP_FLAVOR_TARANTOOL },
  { "ljs1+ljm2", 1, 0, LJP_KIND_MEMPROF, 2, 1, LJP_FLAVOR_TARANTOOL },
  { "ljs2a+ljm2", 2, 'a', LJP_KIND_MEMPROF, 2, 1, LJP_FLAVOR_TARANTOOL },
  { "ljs2a+ljm3(mcode)", 2, 'a', LJP_KIND_MEMPROF, 3, 1, LJP_FLAVOR_TARANTOOL },
  { "ljs2b+ljm3", 2, 'b', LJP_KIND_MEMPROF, 3, 0, LJP_FLAVOR_TARANTOOL },
  { "ljs3+ljm3", 3, 0, LJP_KIND_MEMPROF, 3, 0, LJP_FLAVOR_TARANTOOL },
  { "ljs3+ljp1", 3, 0, LJP_KIND_SYSPROF, 1, 0, LJP_FLAVOR_TARANTOOL },
  { "ljs3+ljp2", 3, 0, LJP_KIND_SYSPROF, 2, 0, LJP_FLAVOR_TARANTOOL },
  { "ljs3+ljp2/luajit", 3, 0, LJP_KIND_SYSPROF, 2, 0, LJP_FLAVOR_LUAJIT },
  { "ljs3+ljp2/openresty", 3, 0, LJP_KIND_SYSPROF, 2, 0,
    LJP_FLAVOR_OPENRESTY },
};
#define NPAIRS ((int)(sizeof(PAIRS) / sizeof(PAIRS[0])))

/* Whether a version has a mid-stream event of that symbol kind (FORMATS.md
 * §4.5, §5.3): ljm 3 (proto events only before 0243fb72, i.e. with mcode),
 * ljp 1 C symbols only, ljp 2 all three. */
static int event_allowed(const pair_cfg *c, ljp_symbol_kind k)
{
  if (c->kind == LJP_KIND_MEMPROF)
    return c->ev == 3 && (k == LJP_SYM_LFUNC || !c->mcode);
  return c->ev == 2 || k == LJP_SYM_CFUNC;
}

/* ---- the builder's model ------------------------------------------------ */

typedef struct res {       /* what a location must resolve to */
  int known;
  uint64_t addr;
  uint64_t traceno;
  uint32_t gen;
} res;

typedef struct defn {
  ljp_symbol_kind kind;
  uint64_t key;
  uint64_t addr, line, traceno, mcode;
  int has_mcode;
  const char *name;
  size_t len;
  uint32_t gen;
} defn;

typedef struct xev {
  ljp_event_type type;
  uint64_t offset;
  /* prologue */
  char magic[4];
  unsigned version;
  uint8_t res0;
  /* symbol */
  defn sym;
  int initial, duplicate;
  uint8_t header;
  /* sample */
  int vmstate;
  const ljp_frame *lua;
  size_t nlua;
  const uint64_t *host;
  size_t nhost;
  res *lres, *hres;        /* per frame */
  uint64_t tr_no, tr_proto, tr_line;
  res tr_sym, tr_protores;
  /* memory */
  ljp_mem_kind mk;
  ljp_source src;
  uint64_t loc_addr, loc_line, mcode;
  uint64_t old_addr, old_size, new_addr, new_size;
  res loc_res, loc_proto;
  unsigned alias;          /* expected ljp_symbol_alias of the location */
} xev;

typedef struct builder {
  const pair_cfg *cfg;
  ljp_writer *w;
  xev ev[MAXEV];
  size_t n;
  ljp_counters cnt;
  defn defs[MAXDEF];
  size_t ndefs;
  int in_symtab;
  void *owned[MAXEV];
  size_t nowned;
} builder;

static void *own(builder *b, size_t n)
{
  void *p = calloc(1, n ? n : 1);
  ck_assert_ptr_nonnull(p);
  ck_assert_uint_lt(b->nowned, MAXEV);
  b->owned[b->nowned++] = p;
  return p;
}

static uint64_t wlen(builder *b)
{
  size_t n;
  ljp_writer_data(b->w, &n);
  return n;
}

static xev *next_ev(builder *b, ljp_event_type t)
{
  xev *e;
  ck_assert_uint_lt(b->n, MAXEV);
  e = &b->ev[b->n++];
  memset(e, 0, sizeof(*e));
  e->type = t;
  e->offset = wlen(b);
  return e;
}

static defn *find_def(builder *b, ljp_symbol_kind k, uint64_t key)
{
  size_t i;
  for (i = 0; i < b->ndefs; i++)
    if (b->defs[i].kind == k && b->defs[i].key == key)
      return &b->defs[i];
  return NULL;
}

static int same_def(const defn *a, const defn *b)
{
  return a->addr == b->addr && a->line == b->line &&
         a->traceno == b->traceno && a->mcode == b->mcode &&
         a->has_mcode == b->has_mcode && a->len == b->len &&
         (a->len == 0 || memcmp(a->name, b->name, a->len) == 0);
}

/* Notes a definition: its generation, duplicate flag and the counters. */
static void note_define(builder *b, xev *e, defn d, int initial)
{
  defn *cur = find_def(b, d.kind, d.key);
  e->initial = initial;
  if (initial)
    b->cnt.symbols_initial[d.kind]++;
  else
    b->cnt.symbols_midstream[d.kind]++;
  if (cur && same_def(cur, &d)) {
    e->duplicate = 1;
    d.gen = cur->gen;
    if (!initial)
      b->cnt.symbol_duplicates++;
  } else if (cur) {
    d.gen = cur->gen + 1;
    if (d.kind == LJP_SYM_TRACE)
      b->cnt.trace_redefinitions++;
    *cur = d;
  } else {
    d.gen = 0;
    ck_assert_uint_lt(b->ndefs, MAXDEF);
    b->defs[b->ndefs++] = d;
  }
  e->sym = d;
}

static res res_of(const defn *d)
{
  res r = { 0 };
  if (d) {
    r.known = 1;
    r.addr = d->addr;
    r.traceno = d->traceno;
    r.gen = d->gen;
  }
  return r;
}

static res res_proto(builder *b, uint64_t addr)
{
  return res_of(find_def(b, LJP_SYM_LFUNC, addr));
}

static res res_trace(builder *b, uint64_t no)
{
  return res_of(find_def(b, LJP_SYM_TRACE, no));
}

/* The C symbol with the greatest address <= addr. */
static res res_cfloor(builder *b, uint64_t addr)
{
  const defn *best = NULL;
  size_t i;
  for (i = 0; i < b->ndefs; i++) {
    const defn *d = &b->defs[i];
    if (d->kind == LJP_SYM_CFUNC && d->addr <= addr &&
        (!best || d->addr > best->addr))
      best = d;
  }
  return res_of(best);
}

/* ---- builder operations: write a record and note its expectation -------- */

static void b_symtab_begin(builder *b)
{
  xev *e = next_ev(b, LJP_EV_PROLOGUE);
  memcpy(e->magic, "ljs", 4);
  e->version = b->cfg->ljs;
  ck_assert_int_eq(ljp_write_symtab_begin(b->w, b->cfg->ljs, b->cfg->layout),
                   LJP_OK);
  b->in_symtab = 1;
}

static void b_epilogue(builder *b)
{
  next_ev(b, LJP_EV_EPILOGUE);
  if (b->in_symtab) {
    ck_assert_int_eq(ljp_write_symtab_end(b->w), LJP_OK);
    b->in_symtab = 0;
  } else {
    ck_assert_int_eq(ljp_write_stream_end(b->w), LJP_OK);
  }
}

static void b_stream_begin(builder *b)
{
  xev *e = next_ev(b, LJP_EV_PROLOGUE);
  memcpy(e->magic, b->cfg->kind == LJP_KIND_MEMPROF ? "ljm" : "ljp", 4);
  e->version = b->cfg->ev;
  e->res0 = (uint8_t)b->cfg->flavor;
  ck_assert_int_eq(ljp_write_stream_begin(b->w, b->cfg->kind, b->cfg->ev,
                                          b->cfg->flavor, b->cfg->mcode),
                   LJP_OK);
}

static uint8_t mid_header(const pair_cfg *c, ljp_symbol_kind k)
{
  static const uint8_t ljm3[] = { 0x08, 0x0C, 0x10 };
  static const uint8_t ljp2[] = { 0x0A, 0x0B, 0x0C };
  if (c->kind == LJP_KIND_MEMPROF)
    return ljm3[k];
  return c->ev == 1 ? 0x0A : ljp2[k];
}

static void b_lfunc(builder *b, uint64_t proto, const char *chunk, size_t len,
                    uint64_t line)
{
  defn d = { LJP_SYM_LFUNC, proto, proto, line, 0, 0, 0, chunk, len, 0 };
  xev *e;
  if (!b->in_symtab && !event_allowed(b->cfg, LJP_SYM_LFUNC)) {
    ck_assert_int_eq(ljp_write_event_lfunc(b->w, proto, chunk, len, line),
                     LJP_E_ARG);
    return;
  }
  e = next_ev(b, LJP_EV_SYMBOL);
  e->header = b->in_symtab ? 0x00 : mid_header(b->cfg, LJP_SYM_LFUNC);
  note_define(b, e, d, b->in_symtab);
  ck_assert_int_eq(b->in_symtab
                   ? ljp_write_symtab_lfunc(b->w, proto, chunk, len, line)
                   : ljp_write_event_lfunc(b->w, proto, chunk, len, line),
                   LJP_OK);
}

static void b_cfunc(builder *b, uint64_t addr, const char *name, size_t len)
{
  defn d = { LJP_SYM_CFUNC, addr, addr, 0, 0, 0, 0, name, len, 0 };
  xev *e;
  if (b->in_symtab ? b->cfg->ljs < 3
                   : !event_allowed(b->cfg, LJP_SYM_CFUNC)) {
    ck_assert_int_eq(b->in_symtab
                     ? ljp_write_symtab_cfunc(b->w, addr, name, len)
                     : ljp_write_event_cfunc(b->w, addr, name, len),
                     LJP_E_ARG);
    return;
  }
  e = next_ev(b, LJP_EV_SYMBOL);
  e->header = b->in_symtab ? 0x01 : mid_header(b->cfg, LJP_SYM_CFUNC);
  note_define(b, e, d, b->in_symtab);
  ck_assert_int_eq(b->in_symtab
                   ? ljp_write_symtab_cfunc(b->w, addr, name, len)
                   : ljp_write_event_cfunc(b->w, addr, name, len),
                   LJP_OK);
}

static void b_trace(builder *b, uint64_t no, uint64_t mcode, uint64_t proto,
                    uint64_t line)
{
  defn d = { LJP_SYM_TRACE, no, proto, line, no, 0, 0, NULL, 0, 0 };
  xev *e;
  if (b->in_symtab ? b->cfg->ljs < 2 : !event_allowed(b->cfg, LJP_SYM_TRACE)) {
    ck_assert_int_eq(b->in_symtab
                     ? ljp_write_symtab_trace(b->w, no, mcode, proto, line)
                     : ljp_write_event_trace(b->w, no, proto, line),
                     LJP_E_ARG);
    return;
  }
  if (b->in_symtab && b->cfg->ljs == 2 && b->cfg->layout == 'a') {
    d.mcode = mcode;
    d.has_mcode = 1;
  }
  e = next_ev(b, LJP_EV_SYMBOL);
  e->header = b->in_symtab ? (b->cfg->ljs == 2 ? 0x01 : 0x02)
                           : mid_header(b->cfg, LJP_SYM_TRACE);
  note_define(b, e, d, b->in_symtab);
  ck_assert_int_eq(b->in_symtab
                   ? ljp_write_symtab_trace(b->w, no, mcode, proto, line)
                   : ljp_write_event_trace(b->w, no, proto, line),
                   LJP_OK);
}

static void b_mem(builder *b, ljp_mem_kind k, ljp_source src, uint64_t loc,
                  uint64_t line, uint64_t mcode, uint64_t oa, uint64_t os,
                  uint64_t na, uint64_t ns)
{
  xev *e;
  if (src == LJP_SRC_TRACE && b->cfg->ev < 2) {
    ck_assert_int_eq(ljp_write_mem(b->w, k, src, loc, line, mcode, oa, os, na,
                                   ns), LJP_E_ARG);
    return;
  }
  e = next_ev(b, LJP_EV_MEMORY);
  e->mk = k;
  e->src = src;
  e->loc_addr = loc;
  e->loc_line = line;
  e->mcode = mcode;
  e->old_addr = oa;
  e->old_size = os;
  e->new_addr = na;
  e->new_size = ns;
  if (src == LJP_SRC_LFUNC)
    e->loc_res = res_proto(b, loc);
  else if (src == LJP_SRC_CFUNC)
    e->loc_res = res_cfloor(b, loc);
  else if (src == LJP_SRC_TRACE) {
    e->loc_res = res_trace(b, loc);
    if (e->loc_res.known)
      e->loc_proto = res_proto(b, e->loc_res.addr);
  }
  b->cnt.mem_events++;
  b->cnt.mem_kind[k]++;
  b->cnt.mem_source[src]++;
  ck_assert_int_eq(ljp_write_mem(b->w, k, src, loc, line, mcode, oa, os, na,
                                 ns), LJP_OK);
}

static void b_sample(builder *b, int vmstate, const ljp_frame *lua,
                     size_t nlua, const uint64_t *host, size_t nhost)
{
  xev *e = next_ev(b, LJP_EV_SAMPLE);
  size_t i;
  int guest = vmstate >= 1 && vmstate <= 3;
  e->vmstate = vmstate;
  e->lua = guest ? lua : NULL;
  e->nlua = guest ? nlua : 0;
  e->host = host;
  e->nhost = nhost;
  e->lres = own(b, sizeof(res) * (e->nlua + 1));
  e->hres = own(b, sizeof(res) * (nhost + 1));
  for (i = 0; i < e->nlua; i++) {
    if (lua[i].kind == LJP_FRAME_LUA)
      e->lres[i] = res_proto(b, lua[i].value);
    else if (lua[i].kind == LJP_FRAME_CFUNC)
      e->lres[i] = res_cfloor(b, lua[i].value);
  }
  for (i = 0; i < nhost; i++)
    e->hres[i] = res_cfloor(b, host[i]);
  b->cnt.samples++;
  b->cnt.vmstate[vmstate]++;
  if (e->nlua > b->cnt.max_lua_depth)
    b->cnt.max_lua_depth = e->nlua;
  if (nhost > b->cnt.max_host_depth)
    b->cnt.max_host_depth = nhost;
  ck_assert_int_eq(ljp_write_sample(b->w, vmstate, lua, nlua, host, nhost),
                   LJP_OK);
}

static void b_trace_sample(builder *b, uint64_t no, uint64_t proto,
                           uint64_t line)
{
  xev *e = next_ev(b, LJP_EV_SAMPLE);
  e->vmstate = LJP_VMST_TRACE;
  e->tr_no = no;
  e->tr_proto = proto;
  e->tr_line = line;
  e->tr_sym = res_trace(b, no);
  e->tr_protores = res_proto(b, e->tr_sym.known ? e->tr_sym.addr : proto);
  b->cnt.samples++;
  b->cnt.vmstate[LJP_VMST_TRACE]++;
  ck_assert_int_eq(ljp_write_trace_sample(b->w, no, proto, line), LJP_OK);
}

/* ---- the script ---------------------------------------------------------- */

enum {
  P1 = 0x5000, P2 = 0x5100, P3 = 0x5200, P4 = 0x5300, P6 = 0x6000,
  C1 = 0x1000, C2 = 0x2000, C3 = 0x400000, C4 = 0x3000
};
#define PHUGE UINT64_C(0x7fffffffffff0000)
static const char MULTI[] = "local x = 1\nreturn x\n";

static char long_chunk[3000];

static void build_symtab(builder *b)
{
  size_t i;
  for (i = 0; i < sizeof(long_chunk); i++)
    long_chunk[i] = (char)('A' + i % 26);
  long_chunk[0] = '@';
  b_symtab_begin(b);
  b_lfunc(b, P1, S("@a.lua"), 0);
  b_lfunc(b, P2, S("@a.lua"), 4);
  b_lfunc(b, P3, NULL, 0, 1);                       /* empty chunk name */
  b_lfunc(b, P4, S(MULTI), 0);                     /* aliased chunk */
  b_lfunc(b, PHUGE, long_chunk, sizeof(long_chunk), UINT64_MAX);
  b_cfunc(b, C1, S("main"));
  b_cfunc(b, C2, S("my_cfunc"));
  b_cfunc(b, C3, S("lua_pcall"));
  b_trace(b, 1, 0x10000, P2, 5);
  b_trace(b, 2, 0x10100, 0x9990, 7);               /* proto not in table */
  b_epilogue(b);
}

/* Mid-stream symbols: a new proto, a proto redefined, an exact C re-dump, a
 * new C symbol, a trace number reused, a new trace. */
static void build_midstream(builder *b)
{
  b_lfunc(b, P6, S("=x"), 7);
  b_lfunc(b, P2, S("@b.lua"), 9);
  b_cfunc(b, C2, S("my_cfunc"));
  b_cfunc(b, C4, S("new_sym"));
  b_trace(b, 1, 0, P6, 3);
  b_trace(b, 3, 0, P1, 11);
  b_trace(b, 3, 0, P1, 11);    /* an exact repeat: a duplicate, no redefinition */
}

static void build_memprof(builder *b)
{
  static const ljp_mem_kind kinds[] = { LJP_MEM_ALLOC, LJP_MEM_FREE,
                                        LJP_MEM_REALLOC };
  static const ljp_source srcs[] = { LJP_SRC_INTERNAL, LJP_SRC_LFUNC,
                                     LJP_SRC_CFUNC, LJP_SRC_TRACE };
  static const uint64_t locs[] = { 0, P2, C2 + 0x10, 1 };
  unsigned i, j, k = 0;
  b_stream_begin(b);
  for (i = 0; i < 3; i++)
    for (j = 0; j < 4; j++, k++) {
      ljp_mem_kind mk = kinds[i];
      b_mem(b, mk, srcs[j], locs[j], 10 + k, 0x20000 + k,
            mk == LJP_MEM_ALLOC ? 0 : 0xA000 + 16 * k,
            mk == LJP_MEM_ALLOC ? 0 : 8 + k,
            mk == LJP_MEM_FREE ? 0 : 0xB000 + 16 * k,
            mk == LJP_MEM_FREE ? 0 : 24 + k);
    }
  /* extremes, unknown locations, the aliased chunk */
  b_mem(b, LJP_MEM_ALLOC, LJP_SRC_LFUNC, PHUGE, UINT64_MAX, 0, 0, 0,
        UINT64_MAX, UINT64_MAX);
  b_mem(b, LJP_MEM_ALLOC, LJP_SRC_LFUNC, 0x8888, 1, 0, 0, 0, 1, 1);
  b_mem(b, LJP_MEM_FREE, LJP_SRC_CFUNC, 0x10, 0, 0, UINT64_C(1) << 63, 0, 0, 0);
  b_mem(b, LJP_MEM_ALLOC, LJP_SRC_TRACE, 42, 0, UINT64_MAX, 0, 0, 5, 6);
  b_mem(b, LJP_MEM_ALLOC, LJP_SRC_LFUNC, P4, 2, 0, 0, 0, 0xC000, 16);
  b->ev[b->n - 1].alias = 1;
  build_midstream(b);
  /* the same locations now resolve to the new definitions */
  b_mem(b, LJP_MEM_ALLOC, LJP_SRC_LFUNC, P2, 12, 0, 0, 0, 0xD000, 32);
  b_mem(b, LJP_MEM_ALLOC, LJP_SRC_LFUNC, P6, 1, 0, 0, 0, 0xD100, 32);
  b_mem(b, LJP_MEM_REALLOC, LJP_SRC_CFUNC, C4 + 8, 0, 0, 0xD000, 32, 0xD200,
        64);
  b_mem(b, LJP_MEM_FREE, LJP_SRC_TRACE, 1, 0, 0x30000, 0xD100, 32, 0, 0);
  b_mem(b, LJP_MEM_FREE, LJP_SRC_TRACE, 3, 0, 0x30100, 0xD200, 64, 0, 0);
  b_epilogue(b);
}

static void build_sysprof(builder *b)
{
  static const ljp_frame lua[] = {
    { .kind = LJP_FRAME_LUA, .value = P2, .line = 4 },
    { .kind = LJP_FRAME_CFUNC, .value = C2 + 0x10 },
    { .kind = LJP_FRAME_FFUNC, .value = 79 },
    { .kind = LJP_FRAME_LUA, .value = P4, .line = 0 },
    { .kind = LJP_FRAME_LUA, .value = 0xdead0, .line = 3 },
    { .kind = LJP_FRAME_FFUNC, .value = 0 },
    { .kind = LJP_FRAME_LUA, .value = PHUGE, .line = UINT64_MAX },
  };
  static const uint64_t host[] = { 0x1210, C3 + 0x10, UINT64_MAX, 0x10,
                                   C2, UINT64_C(1) << 63 };
  static const ljp_frame lua2[] = {
    { .kind = LJP_FRAME_LUA, .value = P2, .line = 9 },
    { .kind = LJP_FRAME_LUA, .value = P6, .line = 7 },
    { .kind = LJP_FRAME_CFUNC, .value = C4 + 1 },
  };
  ljp_frame *deep_lua;
  uint64_t *deep_host;
  int vm;
  size_t i;
  b_stream_begin(b);
  for (vm = 0; vm < LJP_VMST_TRACE; vm++) {
    /* varying depths, including empty stacks; host states get Lua frames
     * too, which the writer must leave out */
    static const size_t nlua[LJP_VMST_TRACE] = { 3, 7, 4, 0, 7, 1, 2, 3, 7 };
    b_sample(b, vm, lua, nlua[vm], host, (size_t)(vm * 5) % 7);
    if (vm == LJP_VMST_LFUNC)
      b->ev[b->n - 1].alias = 1;     /* first use of the aliased chunk */
  }
  b_trace_sample(b, 1, P2, 4);
  b_trace_sample(b, 2, 0x9990, 0);
  b_trace_sample(b, 42, P1, 0);
  b_trace_sample(b, 43, 0x7777, 1);
  /* deep stacks */
  deep_lua = own(b, sizeof(ljp_frame) * 700);
  deep_host = own(b, sizeof(uint64_t) * 520);
  for (i = 0; i < 700; i++) {
    deep_lua[i].kind = i % 3 == 0 ? LJP_FRAME_LUA
                     : i % 3 == 1 ? LJP_FRAME_CFUNC : LJP_FRAME_FFUNC;
    deep_lua[i].value = i % 3 == 0 ? P1 : i % 3 == 1 ? C1 + i : i % 200;
    deep_lua[i].line = 0;
  }
  for (i = 0; i < 520; i++)
    deep_host[i] = 0x100000 + 8 * i;
  b_sample(b, LJP_VMST_CFUNC, deep_lua, 700, deep_host, 520);
  b_sample(b, LJP_VMST_GC, NULL, 0, deep_host, 3);
  build_midstream(b);
  b_sample(b, LJP_VMST_LFUNC, lua2, 3, host, 2);
  b_sample(b, LJP_VMST_FFUNC, lua2, 1, NULL, 0);
  b_trace_sample(b, 1, P6, 7);
  b_trace_sample(b, 3, P1, 0);
  b_epilogue(b);
}

static void build(builder *b, const pair_cfg *cfg)
{
  memset(b, 0, sizeof(*b));
  b->cfg = cfg;
  b->w = ljp_writer_new(NULL, NULL, 0);
  ck_assert_ptr_nonnull(b->w);
  build_symtab(b);
  if (cfg->kind == LJP_KIND_MEMPROF)
    build_memprof(b);
  else
    build_sysprof(b);
  ck_assert_int_eq(ljp_writer_status(b->w), LJP_OK);
}

static void builder_free(builder *b)
{
  size_t i;
  for (i = 0; i < b->nowned; i++)
    free(b->owned[i]);
  ljp_writer_free(b->w);
}

/* ---- comparison ------------------------------------------------------ */

static void check_res(const ljp_symbol *s, const res *r, ljp_symbol_kind k,
                      const char *what, size_t evno)
{
  if (!r->known) {
    ck_assert_msg(s == NULL, "event %zu %s: resolved to a symbol at 0x%llx, "
                  "expected none", evno, what,
                  s ? (unsigned long long)s->addr : 0ULL);
    return;
  }
  ck_assert_msg(s != NULL, "event %zu %s: unresolved, expected 0x%llx", evno,
                what, (unsigned long long)r->addr);
  ck_assert_int_eq(s->kind, k);
  ck_assert_msg(s->addr == r->addr && s->generation == r->gen &&
                (k != LJP_SYM_TRACE || s->traceno == r->traceno),
                "event %zu %s: got addr 0x%llx gen %u trace %llu, expected "
                "0x%llx gen %u trace %llu", evno, what,
                (unsigned long long)s->addr, s->generation,
                (unsigned long long)s->traceno, (unsigned long long)r->addr,
                r->gen, (unsigned long long)r->traceno);
}

static void check_symbol(const ljp_symbol_event *se, const xev *x, size_t i)
{
  const ljp_symbol *s = se->sym;
  const defn *d = &x->sym;
  ck_assert_ptr_nonnull(s);
  ck_assert_msg(se->header == x->header, "event %zu: header %02X, expected "
                "%02X", i, se->header, x->header);
  ck_assert_int_eq(se->initial, x->initial);
  if (!x->duplicate)
    ck_assert_int_eq(s->initial, x->initial);
  ck_assert_msg(se->duplicate == x->duplicate, "event %zu: duplicate %d, "
                "expected %d", i, se->duplicate, x->duplicate);
  ck_assert_int_eq(s->kind, d->kind);
  ck_assert_uint_eq(s->addr, d->addr);
  ck_assert_uint_eq(s->generation, d->gen);
  if (d->kind == LJP_SYM_TRACE) {
    ck_assert_uint_eq(s->traceno, d->traceno);
    ck_assert_uint_eq(s->line, d->line);
    ck_assert_int_eq(s->has_mcode, d->has_mcode);
    if (d->has_mcode)
      ck_assert_uint_eq(s->mcode, d->mcode);
    ck_assert_ptr_null(s->name);
  } else {
    ck_assert_uint_eq(s->line, d->line);
    ck_assert_ptr_nonnull(s->name);
    ck_assert_uint_eq(s->name_len, d->len);
    if (d->len)
      ck_assert_mem_eq(s->name, d->name, d->len);
    ck_assert_int_eq(s->name[s->name_len], '\0');
  }
}

static void check_frames(const ljp_frame *got, size_t ngot,
                         const ljp_frame *exp, const res *rs, size_t n,
                         size_t evno)
{
  size_t i;
  ck_assert_msg(ngot == n, "event %zu: %zu Lua frames, expected %zu", evno,
                ngot, n);
  for (i = 0; i < n; i++) {
    ck_assert_int_eq(got[i].kind, exp[i].kind);
    ck_assert_uint_eq(got[i].value, exp[i].value);
    if (exp[i].kind == LJP_FRAME_LUA) {
      ck_assert_uint_eq(got[i].line, exp[i].line);
      check_res(got[i].sym, &rs[i], LJP_SYM_LFUNC, "lua frame", evno);
    } else if (exp[i].kind == LJP_FRAME_CFUNC) {
      check_res(got[i].sym, &rs[i], LJP_SYM_CFUNC, "C frame", evno);
    }
  }
}

static void check_sample(const ljp_sample *s, const xev *x, size_t i)
{
  size_t k;
  ck_assert_int_eq(s->vmstate, x->vmstate);
  if (x->vmstate == LJP_VMST_TRACE) {
    ck_assert_int_eq(s->trace.kind, LJP_FRAME_TRACE);
    ck_assert_uint_eq(s->trace.value, x->tr_no);
    ck_assert_uint_eq(s->trace.line, x->tr_line);
    check_res(s->trace.sym, &x->tr_sym, LJP_SYM_TRACE, "trace", i);
    check_res(s->trace.proto, &x->tr_protores, LJP_SYM_LFUNC, "trace proto",
              i);
    ck_assert_uint_eq(s->lua_count, 0);
    ck_assert_uint_eq(s->host_count, 0);
    return;
  }
  check_frames(s->lua, s->lua_count, x->lua, x->lres, x->nlua, i);
  ck_assert_msg(s->host_count == x->nhost, "event %zu: %zu host frames, "
                "expected %zu", i, s->host_count, x->nhost);
  for (k = 0; k < x->nhost; k++) {
    ck_assert_int_eq(s->host[k].kind, LJP_FRAME_HOST);
    ck_assert_uint_eq(s->host[k].value, x->host[k]);
    check_res(s->host[k].sym, &x->hres[k], LJP_SYM_CFUNC, "host frame", i);
  }
  if (x->alias) {
    ck_assert_ptr_nonnull(s->lua[3].sym);
    ck_assert_uint_eq(ljp_symbol_alias(s->lua[3].sym), x->alias);
  }
}

static void check_mem(const ljp_mem_event *m, const xev *x, size_t i,
                      int mcode)
{
  ck_assert_int_eq(m->kind, x->mk);
  ck_assert_int_eq(m->source, x->src);
  switch (x->src) {
  case LJP_SRC_INTERNAL:
    ck_assert_int_eq(m->loc.kind, LJP_FRAME_NONE);
    break;
  case LJP_SRC_LFUNC:
    ck_assert_int_eq(m->loc.kind, LJP_FRAME_LUA);
    ck_assert_uint_eq(m->loc.value, x->loc_addr);
    ck_assert_uint_eq(m->loc.line, x->loc_line);
    check_res(m->loc.sym, &x->loc_res, LJP_SYM_LFUNC, "mem proto", i);
    if (x->alias)
      ck_assert_uint_eq(ljp_symbol_alias(m->loc.sym), x->alias);
    break;
  case LJP_SRC_CFUNC:
    ck_assert_int_eq(m->loc.kind, LJP_FRAME_CFUNC);
    ck_assert_uint_eq(m->loc.value, x->loc_addr);
    check_res(m->loc.sym, &x->loc_res, LJP_SYM_CFUNC, "mem cfunc", i);
    break;
  case LJP_SRC_TRACE:
    ck_assert_int_eq(m->loc.kind, LJP_FRAME_TRACE);
    ck_assert_uint_eq(m->loc.value, x->loc_addr);
    check_res(m->loc.sym, &x->loc_res, LJP_SYM_TRACE, "mem trace", i);
    if (x->loc_res.known)
      check_res(m->loc.proto, &x->loc_proto, LJP_SYM_LFUNC,
                "mem trace proto", i);
    ck_assert_int_eq(m->has_mcode, mcode);
    if (mcode) {
      ck_assert_uint_eq(m->mcode, x->mcode);
      ck_assert_uint_eq(m->loc.mcode, x->mcode);
    }
    break;
  }
  if (x->mk != LJP_MEM_ALLOC) {
    ck_assert_uint_eq(m->old_addr, x->old_addr);
    ck_assert_uint_eq(m->old_size, x->old_size);
  }
  if (x->mk != LJP_MEM_FREE) {
    ck_assert_uint_eq(m->new_addr, x->new_addr);
    ck_assert_uint_eq(m->new_size, x->new_size);
  }
}

static void check_counters(const ljp_counters *g, const ljp_counters *e)
{
  int i;
  ck_assert_uint_eq(g->samples, e->samples);
  for (i = 0; i < LJP_VMST__MAX; i++)
    CORE_CHECK(g->vmstate[i] == e->vmstate[i], "vmstate %s: %llu, "
                  "expected %llu", ljp_vmstate_name(i),
                  (unsigned long long)g->vmstate[i],
                  (unsigned long long)e->vmstate[i]);
  ck_assert_uint_eq(g->mem_events, e->mem_events);
  for (i = 1; i < 4; i++)
    ck_assert_uint_eq(g->mem_kind[i], e->mem_kind[i]);
  for (i = 1; i < 5; i++)
    ck_assert_uint_eq(g->mem_source[i], e->mem_source[i]);
  for (i = 0; i < 3; i++) {
    CORE_CHECK(g->symbols_initial[i] == e->symbols_initial[i],
                  "initial symbols of kind %d: %llu, expected %llu", i,
                  (unsigned long long)g->symbols_initial[i],
                  (unsigned long long)e->symbols_initial[i]);
    ck_assert_msg(g->symbols_midstream[i] == e->symbols_midstream[i],
                  "mid-stream symbols of kind %d: %llu, expected %llu", i,
                  (unsigned long long)g->symbols_midstream[i],
                  (unsigned long long)e->symbols_midstream[i]);
  }
  ck_assert_uint_eq(g->symbol_duplicates, e->symbol_duplicates);
  ck_assert_uint_eq(g->trace_redefinitions, e->trace_redefinitions);
  ck_assert_uint_eq(g->max_lua_depth, e->max_lua_depth);
  ck_assert_uint_eq(g->max_host_depth, e->max_host_depth);
}

static void verify(builder *b, const uint8_t *data, size_t len)
{
  const pair_cfg *c = b->cfg;
  ljp_reader *r = ljp_reader_new();
  const ljp_event *ev;
  size_t i;
  ck_assert_int_eq(ljp_reader_open_memory(r, data, len), LJP_OK);
  ck_assert_int_eq(ljp_reader_kind(r), LJP_KIND_UNKNOWN);
  for (i = 0; i < b->n; i++) {
    const xev *x = &b->ev[i];
    ljp_status st = ljp_reader_next(r, &ev);
    ck_assert_msg(st == LJP_OK, "%s: event %zu (offset %llu): %s: %s",
                  c->name, i, (unsigned long long)x->offset,
                  ljp_status_name(st), ljp_reader_error(r));
    ck_assert_msg(ev->type == x->type, "%s: event %zu: type %d, expected %d",
                  c->name, i, ev->type, x->type);
    ck_assert_msg(ev->offset == x->offset, "%s: event %zu: offset %llu, "
                  "expected %llu", c->name, i,
                  (unsigned long long)ev->offset,
                  (unsigned long long)x->offset);
    switch (x->type) {
    case LJP_EV_PROLOGUE:
      ck_assert_str_eq(ev->u.prologue.magic, x->magic);
      ck_assert_uint_eq(ev->u.prologue.version, x->version);
      ck_assert_uint_eq(ev->u.prologue.reserved[0], x->res0);
      ck_assert_uint_eq(ev->u.prologue.reserved[1], 0);
      ck_assert_uint_eq(ev->u.prologue.reserved[2], 0);
      break;
    case LJP_EV_SYMBOL:
      check_symbol(&ev->u.symbol, x, i);
      break;
    case LJP_EV_SAMPLE:
      check_sample(&ev->u.sample, x, i);
      break;
    case LJP_EV_MEMORY:
      check_mem(&ev->u.mem, x, i, c->mcode);
      break;
    case LJP_EV_EPILOGUE:
      break;
    }
    /* stream facts appear with their prologue */
    if (x->type == LJP_EV_PROLOGUE && x->magic[2] == 's') {
      ck_assert_uint_eq(ljp_reader_ljs_version(r), c->ljs);
    } else if (x->type == LJP_EV_PROLOGUE) {
      ck_assert_int_eq(ljp_reader_kind(r), c->kind);
      ck_assert_uint_eq(ljp_reader_event_version(r), c->ev);
    }
    if (i + 1 < b->n)
      ck_assert_int_eq(ljp_reader_complete(r), 0);
  }
  ck_assert_int_eq(ljp_reader_next(r, &ev), LJP_END);
  ck_assert_int_eq(ljp_reader_next(r, &ev), LJP_END);   /* sticky */
  ck_assert_int_eq(ljp_reader_complete(r), 1);
  ck_assert_uint_eq(ljp_reader_offset(r), len);
  ck_assert_int_eq(ljp_reader_kind(r), c->kind);
  ck_assert_uint_eq(ljp_reader_ljs_version(r), c->ljs);
  ck_assert_uint_eq(ljp_reader_event_version(r), c->ev);
  ck_assert_int_eq(ljp_reader_ljs_layout(r), c->ljs == 2 ? c->layout : 0);
  ck_assert_int_eq(ljp_reader_flavor(r), c->flavor);
  check_counters(ljp_reader_counters(r), &b->cnt);

  /* the table as it stands at the end */
  {
    const ljp_symbol *s = ljp_reader_lookup_proto(r, P1);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(s->addr, P1);
    s = ljp_reader_lookup_proto(r, P2);
    ck_assert_ptr_nonnull(s);
    ck_assert_uint_eq(s->generation,
                      event_allowed(c, LJP_SYM_LFUNC) ? 1 : 0);
    ck_assert_ptr_null(ljp_reader_lookup_proto(r, 0x8888));
    s = ljp_reader_lookup_trace(r, 1);
    if (c->ljs >= 2) {
      ck_assert_ptr_nonnull(s);
      ck_assert_uint_eq(s->addr, event_allowed(c, LJP_SYM_TRACE) ? P6 : P2);
    } else if (event_allowed(c, LJP_SYM_TRACE)) {
      ck_assert_ptr_nonnull(s);
    } else {
      ck_assert_ptr_null(s);
    }
    ck_assert_ptr_null(ljp_reader_lookup_trace(r, 99));
    s = ljp_reader_lookup_cfunc(r, C2 + 0x500);
    if (c->ljs >= 3) {
      ck_assert_ptr_nonnull(s);
      ck_assert_uint_eq(s->addr, C2);
      ck_assert_ptr_null(ljp_reader_lookup_cfunc(r, C1 - 1));
    }
  }
  ljp_reader_free(r);
}

START_TEST(roundtrip_pair)
{
  builder *b = malloc(sizeof(*b));
  const uint8_t *data;
  size_t len;
  build(b, &PAIRS[_i]);
  data = ljp_writer_data(b->w, &len);
  verify(b, data, len);
  builder_free(b);
  free(b);
}
END_TEST

/* A sink writer with a tiny buffer produces a stream that decodes the same. */
typedef struct grow { uint8_t *p; size_t n, cap; } grow;

static int grow_sink(void *ctx, const void *d, size_t n)
{
  grow *g = ctx;
  if (g->n + n > g->cap) {
    g->cap = (g->n + n) * 2;
    g->p = realloc(g->p, g->cap);
    ck_assert_ptr_nonnull(g->p);
  }
  memcpy(g->p + g->n, d, n);
  g->n += n;
  return 0;
}

START_TEST(roundtrip_pair_through_sink)
{
  builder *b = malloc(sizeof(*b));
  grow g = { 0 };
  const uint8_t *data;
  size_t len;
  ljp_writer *w;
  build(b, &PAIRS[_i]);
  data = ljp_writer_data(b->w, &len);
  /* Re-encode by replaying: simplest is to copy through the raw primitives
   * of a sink writer in odd pieces, which must deliver identical bytes. */
  w = ljp_writer_new(grow_sink, &g, 5);
  {
    size_t i;
    for (i = 0; i < len; i++)
      ck_assert_int_eq(ljp_write_byte(w, data[i]), LJP_OK);
  }
  ck_assert_int_eq(ljp_writer_flush(w), LJP_OK);
  core_expect_bytes(g.p, g.n, data, len);
  verify(b, g.p, g.n);
  ljp_writer_free(w);
  free(g.p);
  builder_free(b);
  free(b);
}
END_TEST

/* In sanitizer builds (where a decode costs far more) only cuts next to a
 * record start, inside each record and at every 5th byte are tried. */
static int cut_wanted(const builder *b, size_t cut)
{
  size_t i;
  if (!CORE_SANITIZED || cut % 5 == 0)
    return 1;
  for (i = 0; i < b->n; i++) {
    uint64_t o = b->ev[i].offset;
    uint64_t next = i + 1 < b->n ? b->ev[i + 1].offset : o + 1;
    if (cut + 1 == o || cut == o || cut == o + 1 || cut == (o + next) / 2)
      return 1;
  }
  return 0;
}

/* Every cut of every built stream: truncated, never malformed, and the
 * events before the cut are exactly those whose records end by then. */
START_TEST(roundtrip_every_cut)
{
  builder *b = malloc(sizeof(*b));
  const uint8_t *data;
  size_t len, cut;
  core_decode full = { 0 };
  build(b, &PAIRS[_i]);
  data = ljp_writer_data(b->w, &len);
  core_decode_memory(data, len, &full, 1);
  ck_assert_int_eq(full.status, LJP_END);
  ck_assert_uint_eq(full.nevents, b->n);
  for (cut = 0; cut < len; cut++) {
    uint8_t *copy;
    core_decode d = { 0 };
    size_t i, expect = 0;
    if (!cut_wanted(b, cut))
      continue;
    copy = malloc(cut ? cut : 1);
    memcpy(copy, data, cut);
    core_decode_memory(copy, cut, &d, 1);
    for (i = 0; i < b->n; i++) {
      uint64_t end = i + 1 < b->n ? b->ev[i + 1].offset : len;
      if (end <= cut)
        expect = i + 1;
    }
    ck_assert_msg(d.status == LJP_E_TRUNCATED, "%s cut at %zu: %s (%s)",
                  b->cfg->name, cut, ljp_status_name(d.status), d.error);
    /* An ljs 2 table cut before its end cannot always tell 2a from 2b, so
     * its trace entries may be held back; every other record must come
     * back as soon as its last byte is there. */
    if (b->cfg->ljs == 2)
      ck_assert_msg(d.nevents <= expect, "%s cut at %zu: %zu events, at "
                    "most %zu expected", b->cfg->name, cut, d.nevents, expect);
    else
      ck_assert_msg(d.nevents == expect, "%s cut at %zu: %zu events, "
                    "expected %zu", b->cfg->name, cut, d.nevents, expect);
    /* the fault lies in the first record that did not come back */
    ck_assert_msg(d.error_offset <= cut &&
                  d.error_offset >= b->ev[d.nevents].offset,
                  "%s cut at %zu: error offset %llu, record at %llu",
                  b->cfg->name, cut, (unsigned long long)d.error_offset,
                  (unsigned long long)b->ev[d.nevents].offset);
    /* what came back is exactly the start of the full decode */
    for (i = 0; i < d.nevents; i++)
      CORE_CHECK(d.types[i] == full.types[i] &&
                    d.offsets[i] == full.offsets[i] &&
                    d.prints[i] == full.prints[i],
                    "%s cut at %zu: event %zu (offset %llu) differs from the "
                    "full decode", b->cfg->name, cut, i,
                    (unsigned long long)d.offsets[i]);
    ck_assert_int_eq(d.complete, 0);
    /* only delivered records number aliases: a cut one takes none */
    {
      unsigned want = 0;
      for (i = 0; i < d.nevents; i++)
        if (b->ev[i].alias > want)
          want = b->ev[i].alias;
      ck_assert_msg(d.aliases == want, "%s cut at %zu: %u aliases, expected %u",
                    b->cfg->name, cut, d.aliases, want);
    }
    core_decode_clear(&d);
    free(copy);
  }
  core_decode_clear(&full);
  builder_free(b);
  free(b);
}
END_TEST

/* ---- ULEB128 through the reader ------------------------------------- */

/* An ljs 3 table with nothing in it, then an ljp 2 prologue: 15 bytes. */
static ljp_writer *sysprof_head(void)
{
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  ck_assert_int_eq(ljp_write_symtab_begin(w, 3, 0), LJP_OK);
  ck_assert_int_eq(ljp_write_symtab_end(w), LJP_OK);
  ck_assert_int_eq(ljp_write_stream_begin(w, LJP_KIND_SYSPROF, 2, 0, 0),
                   LJP_OK);
  return w;
}

static void decode_writer(ljp_writer *w, core_decode *d)
{
  size_t len;
  const uint8_t *data = ljp_writer_data(w, &len);
  uint8_t *copy = malloc(len);
  memcpy(copy, data, len);
  memset(d, 0, sizeof(*d));
  core_decode_memory(copy, len, d, 1);
  free(copy);
}

START_TEST(uleb_extremes_in_host_stack)
{
  const uint64_t host[] = { UINT64_MAX, UINT64_C(1) << 63, 127, 128,
                            UINT64_C(0x7f12345678) };
  ljp_writer *w = sysprof_head();
  ljp_reader *r = ljp_reader_new();
  const ljp_event *ev;
  const uint8_t *data;
  size_t len, i;
  ck_assert_int_eq(ljp_write_sample(w, LJP_VMST_GC, NULL, 0, host, 5), LJP_OK);
  ck_assert_int_eq(ljp_write_stream_end(w), LJP_OK);
  data = ljp_writer_data(w, &len);
  ck_assert_uint_eq(len, 15 + 1 + 10 + 10 + 1 + 2 + 6 + 1 + 1);
  ck_assert_int_eq(ljp_reader_open_memory(r, data, len), LJP_OK);
  for (i = 0; i < 4; i++)
    ck_assert_int_eq(ljp_reader_next(r, &ev), LJP_OK);
  ck_assert_int_eq(ev->type, LJP_EV_SAMPLE);
  ck_assert_uint_eq(ev->u.sample.host_count, 5);
  for (i = 0; i < 5; i++)
    ck_assert_uint_eq(ev->u.sample.host[i].value, host[i]);
  ck_assert_int_eq(ljp_reader_next(r, &ev), LJP_OK);
  ck_assert_int_eq(ev->type, LJP_EV_EPILOGUE);
  ck_assert_int_eq(ljp_reader_next(r, &ev), LJP_END);
  ljp_reader_free(r);
  ljp_writer_free(w);
}
END_TEST

/* Host stack with one good address, then the given raw bytes, then EOF
 * (when end == 0) or the terminator and the epilogue. */
static void host_tail(const uint8_t *raw, size_t n, int end, core_decode *d)
{
  ljp_writer *w = sysprof_head();
  size_t i;
  ck_assert_int_eq(ljp_write_byte(w, LJP_VMST_INTERP), LJP_OK);   /* 15 */
  ck_assert_int_eq(ljp_write_uleb(w, 0x1010), LJP_OK);            /* 16 */
  for (i = 0; i < n; i++)                                          /* 18.. */
    ck_assert_int_eq(ljp_write_byte(w, raw[i]), LJP_OK);
  if (end) {
    ck_assert_int_eq(ljp_write_uleb(w, 0), LJP_OK);
    ck_assert_int_eq(ljp_write_byte(w, 0x80), LJP_OK);
  }
  decode_writer(w, d);
  ljp_writer_free(w);
}

START_TEST(uleb_truncated_in_host_stack)
{
  static const uint8_t t1[] = { 0x80 };
  static const uint8_t t9[] = { 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                0xFF, 0xFF };
  core_decode d;
  host_tail(t1, sizeof(t1), 0, &d);
  /* prologue, epilogue, prologue; the sample never completes */
  ck_assert_uint_eq(d.nevents, 3);
  ck_assert_msg(d.status == LJP_E_TRUNCATED, "%s", d.error);
  ck_assert_msg(d.error_offset == 18, "error offset %llu (%s)",
                (unsigned long long)d.error_offset, d.error);
  ck_assert_int_eq(d.complete, 0);
  core_decode_clear(&d);
  host_tail(t9, sizeof(t9), 0, &d);
  ck_assert_msg(d.status == LJP_E_TRUNCATED, "%s", d.error);
  ck_assert_uint_eq(d.error_offset, 18);
  core_decode_clear(&d);
  /* no terminator at all: the end of the input inside the host stack */
  host_tail(NULL, 0, 0, &d);
  ck_assert_msg(d.status == LJP_E_TRUNCATED, "%s", d.error);
  ck_assert_uint_eq(d.error_offset, 18);
  core_decode_clear(&d);
}
END_TEST

START_TEST(uleb_overlong_in_host_stack)
{
  static const uint8_t over11[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                                    0x80, 0x80, 0x80, 0x00 };
  static const uint8_t tenth2[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                                    0x80, 0x80, 0x02 };
  static const uint8_t tenth1[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                                    0x80, 0x80, 0x01 };
  core_decode d;
  host_tail(over11, sizeof(over11), 1, &d);
  ck_assert_msg(d.status == LJP_E_MALFORMED, "%s", d.error);
  ck_assert_uint_eq(d.nevents, 3);
  ck_assert_msg(d.error_offset == 18, "error offset %llu (%s)",
                (unsigned long long)d.error_offset, d.error);
  core_decode_clear(&d);
  /* the over-long number is refused even when the input ends right there */
  host_tail(over11, 10, 0, &d);
  ck_assert_msg(d.status == LJP_E_MALFORMED, "%s", d.error);
  ck_assert_uint_eq(d.error_offset, 18);
  core_decode_clear(&d);
  host_tail(tenth2, sizeof(tenth2), 1, &d);
  ck_assert_msg(d.status == LJP_E_MALFORMED, "%s", d.error);
  ck_assert_uint_eq(d.error_offset, 18);
  core_decode_clear(&d);
  /* 2^63 written in the longest legal form */
  host_tail(tenth1, sizeof(tenth1), 1, &d);
  ck_assert_msg(d.status == LJP_END, "%s", d.error);
  ck_assert_uint_eq(d.nevents, 5);
  ck_assert_uint_eq(d.counters.max_host_depth, 2);
  core_decode_clear(&d);
}
END_TEST

START_TEST(uleb_truncated_elsewhere)
{
  /* in the symtab: proto address of an LFUNC entry */
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  core_decode d;
  ck_assert_int_eq(ljp_write_symtab_begin(w, 3, 0), LJP_OK);
  ck_assert_int_eq(ljp_write_byte(w, 0x00), LJP_OK);
  ck_assert_int_eq(ljp_write_byte(w, 0xFF), LJP_OK);
  decode_writer(w, &d);
  ck_assert_msg(d.status == LJP_E_TRUNCATED, "%s", d.error);
  ck_assert_uint_eq(d.nevents, 1);
  ck_assert_uint_eq(d.error_offset, 8);
  core_decode_clear(&d);
  ljp_writer_free(w);

  /* in ljm: the size of an allocation */
  w = ljp_writer_new(NULL, NULL, 0);
  ck_assert_int_eq(ljp_write_symtab_begin(w, 3, 0), LJP_OK);
  ck_assert_int_eq(ljp_write_symtab_end(w), LJP_OK);
  ck_assert_int_eq(ljp_write_stream_begin(w, LJP_KIND_MEMPROF, 3, 0, 0),
                   LJP_OK);
  ck_assert_int_eq(ljp_write_byte(w, 0x05), LJP_OK);      /* 15 */
  ck_assert_int_eq(ljp_write_uleb(w, 0xA000), LJP_OK);    /* 16..18 */
  ck_assert_int_eq(ljp_write_byte(w, 0x80), LJP_OK);      /* 19 */
  decode_writer(w, &d);
  ck_assert_msg(d.status == LJP_E_TRUNCATED, "%s", d.error);
  ck_assert_uint_eq(d.nevents, 3);
  ck_assert_uint_eq(d.error_offset, 19);
  core_decode_clear(&d);
  ljp_writer_free(w);
}
END_TEST

int main(int argc, char **argv)
{
  Suite *s = suite_create("core_roundtrip");
  TCase *tc = tcase_create("pairs");
  SRunner *sr;
  int failed;
  core_set_testdata(argc, argv);
  tcase_set_timeout(tc, 60);
  tcase_add_loop_test(tc, roundtrip_pair, 0, NPAIRS);
  tcase_add_loop_test(tc, roundtrip_pair_through_sink, 0, NPAIRS);
  tcase_add_loop_test(tc, roundtrip_every_cut, 0, NPAIRS);
  suite_add_tcase(s, tc);
  tc = tcase_create("uleb");
  tcase_add_test(tc, uleb_extremes_in_host_stack);
  tcase_add_test(tc, uleb_truncated_in_host_stack);
  tcase_add_test(tc, uleb_overlong_in_host_stack);
  tcase_add_test(tc, uleb_truncated_elsewhere);
  suite_add_tcase(s, tc);
  sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
