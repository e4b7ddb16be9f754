/*
 * sysprof.c — ljp 2 (or x1) sample streams over a fixed set of distinct
 * stacks.
 *
 * The distinct stacks are drawn first, from the seed and the shape options
 * only, so a stream ten times longer repeats exactly the same stacks: what
 * grows is the sample count, not the call tree.  Stacks grow like a real
 * program's: each new one shares a random prefix of an earlier one, Lua
 * frames come in runs from the same modules, pcall/xpcall appear inside
 * the VM, and Lua calls C functions that call back into Lua through
 * lua_call/lua_pcall (the host stack shows each round trip:
 * lj_BC_FUNCC, the C function, a helper, lua_pcall, lj_vm_pcall).
 */
#include "gen.h"

#include <stdlib.h>
#include <string.h>

/* Lua stack tokens: kind in the top byte, index below. */
enum { TK_L = 1u << 24, TK_C = 2u << 24, TK_F = 3u << 24 };
#define TK_KIND(t) ((t) & 0xff000000u)
#define TK_IDX(t) ((t) & 0x00ffffffu)

static const uint8_t leaf_ffids[] = {3,  4,  6,  9,  15, 16, 18, 39, 62,
                                     76, 78, 79, 84, 88, 89, 91, 92};

typedef struct ustack {
  uint32_t lua_off, nlua, nbody; /* tokens, outermost first; body = no leaf */
  uint32_t host_off, nhost;      /* pcs, innermost first (ready to write) */
  uint8_t vmstate, family;
  uint32_t traceno;
} ustack;

typedef struct vec32 {
  uint32_t *v;
  size_t n, cap;
} vec32;

typedef struct vec64 {
  uint64_t *v;
  size_t n, cap;
} vec64;

static int push32(vec32 *a, uint32_t x) {
  if (a->n == a->cap) {
    size_t cap = a->cap ? a->cap * 2 : 4096;
    uint32_t *nv = realloc(a->v, cap * sizeof(*nv));
    if (!nv)
      return -1;
    a->v = nv;
    a->cap = cap;
  }
  a->v[a->n++] = x;
  return 0;
}

static int push64(vec64 *a, uint64_t x) {
  if (a->n == a->cap) {
    size_t cap = a->cap ? a->cap * 2 : 4096;
    uint64_t *nv = realloc(a->v, cap * sizeof(*nv));
    if (!nv)
      return -1;
    a->v = nv;
    a->cap = cap;
  }
  a->v[a->n++] = x;
  return 0;
}

typedef struct stackset {
  ustack *s;
  unsigned n;
  vec32 tok;
  vec64 pcs;
} stackset;

static uint32_t pick_proto(gen_rng *r, const gen_world *w, uint32_t prev) {
  unsigned fixed_lo = GEN_DYN + 1, nfixed = w->nprotos - fixed_lo;
  if (gen_pct(r, 8))
    return TK_L | (1 + gen_below(r, GEN_DYN));
  /* Runs of nearby protos: a module's functions call each other. */
  if (TK_KIND(prev) == TK_L && TK_IDX(prev) >= fixed_lo && gen_pct(r, 60)) {
    unsigned i = TK_IDX(prev) - fixed_lo + gen_below(r, 7) + nfixed - 3;
    return TK_L | (fixed_lo + i % nfixed);
  }
  return TK_L | (fixed_lo + gen_below(r, nfixed));
}

/* Lua body of stack k: a prefix of an earlier stack, then new frames. */
static int draw_body(stackset *ss, unsigned k, gen_rng *r, const gen_world *w,
                     const gen_opts *o, unsigned *sandwiches) {
  ustack *u = &ss->s[k];
  unsigned target = o->depth - gen_below(r, o->depth / 8 + 1);
  if (target < 1)
    target = 1;
  u->lua_off = (uint32_t)ss->tok.n;
  *sandwiches = 0;
  if (o->recursive && gen_pct(r, o->recursive)) {
    /* The main chunk, then one function calling itself: the deep stacks
     * of a recursive walk repeat one frame. */
    u->family = (uint8_t)gen_below(r, 4);
    unsigned n = 1 + gen_below(r, o->depth);
    if (push32(&ss->tok, TK_L | 0))
      return -1;
    for (unsigned i = 0; i < n; i++)
      if (push32(&ss->tok, TK_L | (GEN_DYN + 1)))
        return -1;
    u->nbody = (uint32_t)(ss->tok.n - u->lua_off);
    return 0;
  }
  if (k > 0 && gen_pct(r, 90)) {
    const ustack *p = &ss->s[gen_below(r, k)];
    unsigned cut = 1 + gen_below(r, p->nbody);
    if (cut > target)
      cut = target;
    u->family = p->family;
    for (unsigned i = 0; i < cut; i++) {
      uint32_t t = ss->tok.v[p->lua_off + i];
      if (TK_KIND(t) == TK_C)
        ++*sandwiches;
      if (push32(&ss->tok, t))
        return -1;
    }
  } else {
    u->family = (uint8_t)gen_below(r, 4);
    if (push32(&ss->tok, TK_L | 0))
      return -1;
  }
  while (ss->tok.n - u->lua_off < target) {
    uint32_t prev = ss->tok.v[ss->tok.n - 1], t;
    unsigned x = gen_below(r, 1000), left = target - (unsigned)(ss->tok.n - u->lua_off);
    if (x < 8 && *sandwiches < o->sandwiches && left > 2 && TK_KIND(prev) == TK_L) {
      t = TK_C | gen_below(r, GEN_NLUAC);
      ++*sandwiches;
    } else if (x < 30 && TK_KIND(prev) == TK_L) {
      t = TK_F | (20 + gen_below(r, 2)); /* pcall, xpcall */
    } else {
      t = pick_proto(r, w, prev);
    }
    if (push32(&ss->tok, t))
      return -1;
  }
  if (TK_KIND(ss->tok.v[ss->tok.n - 1]) != TK_L &&
      push32(&ss->tok, pick_proto(r, w, 0)))
    return -1;
  u->nbody = (uint32_t)(ss->tok.n - u->lua_off);
  return 0;
}

/* Host stack of u, built outermost first into tmp, stored innermost first. */
static int draw_host(stackset *ss, ustack *u, const gen_world *w,
                     const gen_opts *o, unsigned *tmp, size_t tcap) {
  size_t n = 0;
#define H(sym) do { if (n < tcap) tmp[n++] = (sym); } while (0)
  H(CS_START);
  H(CS_LIBC_START_MAIN);
  H(CS_MAIN);
  if (u->family == 0) {
    H(CS_TARANTOOL_LUA_RUN);
  } else {
    H(CS_CORO_INIT);
    H(CS_FIBER_LOOP);
    H(CS_FIBER_CXX_INVOKE);
  }
  size_t pad_to = o->host_depth > 2 ? o->host_depth - 2 : 0;
  for (unsigned j = 0; n < pad_to; j++)
    H(world_generic(w, u->family * 131u + j * 17u));
  if (u->family != 0) {
    H(CS_BOX_PROCESS_CALL);
    H(CS_LUAT_CALL);
  }
  H(CS_LUA_PCALL);
  H(CS_LJ_VM_PCALL);
  const uint32_t *tok = &ss->tok.v[u->lua_off];
  unsigned nsw = 0;
  for (uint32_t i = 0; i < u->nbody; i++) {
    if (TK_KIND(tok[i]) != TK_C)
      continue;
    unsigned c = world_luac(w, TK_IDX(tok[i]));
    H(CS_LJ_BC_FUNCC);
    H(c);
    H(world_generic(w, c * 7u));
    H(nsw % 2 ? CS_LUA_CALL : CS_LUA_PCALL);
    H(nsw % 2 ? CS_LJ_VM_CALL : CS_LJ_VM_PCALL);
    nsw++;
  }
  uint32_t last = tok[u->nbody - 1];
  unsigned bc = CS_BC_FIRST + TK_IDX(last) % GEN_NBC;
  switch (u->vmstate) {
  case LJP_VMST_LFUNC:
  case LJP_VMST_INTERP:
    H(bc);
    break;
  case LJP_VMST_CFUNC: {
    unsigned c = world_luac(w, TK_IDX(tok[u->nlua - 1]));
    H(CS_LJ_BC_FUNCC);
    H(c);
    H(world_generic(w, c * 11u));
    H(c % 2 ? CS_MEMCPY : CS_LJ_TAB_NEW);
    break;
  }
  case LJP_VMST_FFUNC:
    H(CS_BC_FIRST); /* lj_BC_CALL */
    H(TK_IDX(tok[u->nlua - 1]) == 89 ? CS_LJ_STRFMT_PUSHVF : CS_LJ_STR_NEW);
    H(CS_LJ_BUF_MORE);
    break;
  case LJP_VMST_GC:
    H(CS_BC_FIRST + 9); /* lj_BC_TNEW */
    H(CS_LJ_GC_STEP);
    H(CS_GC_ONESTEP);
    H(CS_GC_SWEEP);
    H(CS_LJ_ALLOC_FREE);
    H(CS_FREE);
    break;
  }
#undef H
  u->host_off = (uint32_t)ss->pcs.n;
  u->nhost = (uint32_t)n;
  for (size_t i = n; i-- > 0;)
    if (push64(&ss->pcs, world_pc(w, tmp[i], (unsigned)i)))
      return -1;
  return 0;
}

static int draw_stacks(stackset *ss, const gen_world *w, const gen_opts *o) {
  gen_rng r = {o->seed ^ 0x737461636b73ULL}; /* "stacks" */
  unsigned tmp[1024];
  ss->n = o->unique ? o->unique : 1;
  ss->s = calloc(ss->n, sizeof(*ss->s));
  if (!ss->s)
    return -1;
  for (unsigned k = 0; k < ss->n; k++) {
    ustack *u = &ss->s[k];
    unsigned x = gen_below(&r, 100), sw;
    if (o->trace_pct >= 0) /* TRACE at that rate, the others as before */
      x = gen_pct(&r, (unsigned)o->trace_pct) ? 99 : gen_below(&r, 88);
    u->vmstate = x < 50 ? LJP_VMST_LFUNC : x < 62 ? LJP_VMST_CFUNC
                 : x < 74 ? LJP_VMST_FFUNC : x < 82 ? LJP_VMST_GC
                 : x < 88 ? LJP_VMST_INTERP : LJP_VMST_TRACE;
    if (draw_body(ss, k, &r, w, o, &sw))
      return -1;
    u->nlua = u->nbody;
    if (u->vmstate == LJP_VMST_CFUNC &&
        push32(&ss->tok, TK_C | gen_below(&r, GEN_NLUAC)))
      return -1;
    if (u->vmstate == LJP_VMST_FFUNC &&
        push32(&ss->tok, TK_F | leaf_ffids[gen_below(&r, sizeof(leaf_ffids))]))
      return -1;
    u->nlua = (uint32_t)(ss->tok.n - u->lua_off);
    u->traceno = 1 + gen_below(&r, w->ntraces);
    if (!o->leaf && draw_host(ss, u, w, o, tmp, sizeof(tmp) / sizeof(*tmp)))
      return -1;
  }
  return 0;
}

static void free_stacks(stackset *ss) {
  free(ss->s);
  free(ss->tok.v);
  free(ss->pcs.v);
}

static ljp_status write_one(const stackset *ss, const ustack *u,
                            const gen_world *w, ljp_writer *wr,
                            ljp_frame *lua, gen_stats *st,
                            const gen_opts *o, gen_rng *r) {
  if (u->vmstate == LJP_VMST_TRACE && !o->x1) {
    const gen_trace *tr = &w->traces[u->traceno - 1];
    const gen_proto *p = &w->protos[tr->proto[tr->cur]];
    return ljp_write_trace_sample(wr, u->traceno, p->addr, p->line);
  }
  int guest = u->vmstate >= LJP_VMST_LFUNC && u->vmstate <= LJP_VMST_CFUNC;
  /* x1 keeps the Lua stack in every state: a trace runs inside its Lua
   * callers, GC inside the code that allocated. */
  size_t nlua = guest || o->x1 ? u->nlua : 0;
  const uint32_t *tok = &ss->tok.v[u->lua_off];
  for (size_t j = 0; j < nlua; j++) {
    uint32_t t = tok[nlua - 1 - j]; /* innermost first */
    ljp_frame *f = &lua[j];
    f->line = 0;
    if (TK_KIND(t) == TK_L) {
      f->kind = LJP_FRAME_LUA;
      f->value = w->protos[TK_IDX(t)].addr;
      f->line = w->protos[TK_IDX(t)].line;
    } else if (TK_KIND(t) == TK_C) {
      f->kind = LJP_FRAME_CFUNC;
      f->value = w->cs[world_luac(w, TK_IDX(t))].addr;
    } else {
      f->kind = LJP_FRAME_FFUNC;
      f->value = TK_IDX(t);
    }
  }
  if (nlua > st->max_lua)
    st->max_lua = nlua;
  if (u->nhost > st->max_host)
    st->max_host = u->nhost;
  if (o->x1) {
    ljp_sample_x1 s;
    memset(&s, 0, sizeof(s));
    s.vmstate = u->vmstate;
    /* about 1 ms apart, as a 1 kHz timer ticks */
    s.dt_ns = 990000 + gen_below(r, 20000);
    s.coro = 1;
    if (u->vmstate == LJP_VMST_TRACE) {
      const gen_trace *tr = &w->traces[u->traceno - 1];
      const gen_proto *p = &w->protos[tr->proto[tr->cur]];
      s.traceno = u->traceno;
      s.trace_proto = p->addr;
      s.trace_line = p->line;
    }
    s.lua = lua;
    s.nlua = nlua;
    s.host = u->nhost ? &ss->pcs.v[u->host_off] : NULL;
    s.nhost = u->nhost;
    return ljp_write_sample_x1(wr, &s);
  }
  return ljp_write_sample(wr, u->vmstate, lua, nlua,
                          u->nhost ? &ss->pcs.v[u->host_off] : NULL, u->nhost);
}

ljp_status gen_sysprof(const gen_opts *o, gen_world *w, ljp_writer *wr,
                       gen_full_fn full, void *ctx, gen_stats *st) {
  stackset ss;
  memset(&ss, 0, sizeof(ss));
  if (draw_stacks(&ss, w, o)) {
    free_stacks(&ss);
    return LJP_E_NOMEM;
  }
  size_t maxlua = 1;
  for (unsigned k = 0; k < ss.n; k++)
    if (ss.s[k].nlua > maxlua)
      maxlua = ss.s[k].nlua;
  ljp_frame *lua = calloc(maxlua, sizeof(*lua));
  gen_rng r = {o->seed ^ 0x73616d706c6573ULL}; /* "samples" */
  ljp_status s = lua ? world_write_symtab(w, wr) : LJP_E_NOMEM;
  if (s == LJP_OK)
    s = o->x1 ? ljp_write_stream_begin_x1(wr, LJP_FLAVOR_TARANTOOL,
                                          LJP_TIMER_PROCESS_CPU, 1000000)
              : ljp_write_stream_begin(wr, LJP_KIND_SYSPROF, 2,
                                       LJP_FLAVOR_TARANTOOL, 0);
  gen_rng tr = {o->seed ^ 0x74696d6573ULL}; /* "times" */
  unsigned prev = 0;
  uint64_t host_samples = 0;
  for (uint64_t i = 0; s == LJP_OK; i++) {
    if (o->count ? i >= o->count : (i % 64 == 0 && full(ctx)))
      break;
    if (o->trace_churn && i && i % o->trace_churn == 0) {
      s = world_churn_trace(w, wr);
      st->symbol_events++;
    }
    if (s == LJP_OK && o->proto_churn && i && i % o->proto_churn == 0) {
      s = world_churn_proto(w, wr);
      st->symbol_events++;
    }
    unsigned k;
    if (i < ss.n)
      k = (unsigned)i; /* every stack once, then a skewed mix */
    else if (gen_pct(&r, o->locality))
      k = prev;
    else
      k = (unsigned)((uint64_t)gen_below(&r, ss.n) * gen_below(&r, ss.n) / ss.n);
    prev = k;
    const ustack *u = &ss.s[k];
    int host_only = u->vmstate == LJP_VMST_INTERP || u->vmstate == LJP_VMST_GC;
    if (s == LJP_OK && host_only && o->redump &&
        host_samples++ % o->redump == 0) {
      s = world_redump_cfuncs(w, wr);
      st->symbol_events += w->ncs;
    }
    if (s == LJP_OK)
      s = write_one(&ss, u, w, wr, lua, st, o, &tr);
    if (s == LJP_OK)
      st->records++;
  }
  st->unique = st->records < ss.n ? (unsigned)st->records : ss.n;
  if (s == LJP_OK)
    s = ljp_write_stream_end(wr);
  free(lua);
  free_stacks(&ss);
  return s;
}
