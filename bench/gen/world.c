/*
 * world.c — the symbols of the program ljpgen pretends to profile.
 *
 * Shaped like a Tarantool process: an executable with the Lua VM linked in
 * (thousands of functions), libc and one more library, each dumped in its
 * own address range the way lj_symtab.c dumps ELF symbol tables: not sorted
 * by address, with a few undefined imports whose address is the object's
 * base (FORMATS.md §3.5).  Tens of Lua prototypes, a couple of them
 * load()ed from source text (multi-line chunk names, printed as aliases),
 * and traces that start in them.
 */
#include "gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const fixed_names[CS_BC_FIRST] = {
    "_start", "__libc_start_main", "main", "tarantool_lua_run_script",
    "fiber_loop", "fiber_cxx_invoke", "coro_init", "lbox_call",
    "box_process_call", "luaT_call", "lua_pcall", "lua_call", "lj_vm_pcall",
    "lj_vm_call", "lj_BC_FUNCC", "lj_gc_step", "gc_onestep", "gc_sweep",
    "lj_alloc_free", "lj_mem_realloc", "lj_tab_new", "lj_str_new",
    "lj_buf_more", "lj_strfmt_pushvf", "memcpy", "malloc", "free"};

static const char *const bc_names[GEN_NBC] = {
    "lj_BC_CALL", "lj_BC_TGETS", "lj_BC_TSETS", "lj_BC_ADDVV", "lj_BC_ISLT",
    "lj_BC_FORL", "lj_BC_GGET", "lj_BC_MOV", "lj_BC_RET1", "lj_BC_TNEW",
    "lj_BC_CAT", "lj_BC_UGET"};

static const char *const prefixes[] = {
    "box_", "fiber_", "coio_", "lj_", "luaL_", "txn_", "vy_", "memtx_",
    "tuple_", "mp_", "sql_", "iproto_", "xrow_", "raft_", "say_", "port_"};
static const char *const words[] = {
    "new", "free", "get", "put", "step", "run", "init", "commit", "insert",
    "replace", "lookup", "encode", "decode", "check", "flush", "read",
    "write", "yield", "wakeup", "create", "delete", "update", "select"};
static const char *const dirs[] = {"app", "app/handlers", "app/models",
                                   "lib", "vendor/luatest", "app/db"};
static const char *const mods[] = {"init", "router", "users", "orders",
                                   "json", "util", "cache", "queue", "auth",
                                   "metrics", "schema", "http"};
static const char *const sources[] = {
    "return function(a, b)\n  return a + b\nend\n",
    "local t = ...\nfor i = 1, #t do t[i] = t[i] * 2 end\nreturn t\n"};

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

enum { OBJ_EXE, OBJ_LIBC, OBJ_LIB, NOBJ };
static const uint64_t obj_base[NOBJ] = {0x555555554000ULL, 0x7ffff7800000ULL,
                                        0x7ffff7400000ULL};

typedef struct builder {
  gen_world *w;
  gen_rng rng;
  uint64_t next[NOBJ];
} builder;

static int add_name(gen_world *w, gen_csym *c, const char *s, size_t n) {
  if (w->names_len + n > w->names_cap) {
    size_t cap = (w->names_cap + n) * 2;
    char *nn = realloc(w->names, cap);
    if (!nn)
      return -1;
    w->names = nn;
    w->names_cap = cap;
  }
  memcpy(w->names + w->names_len, s, n);
  c->name_off = (uint32_t)w->names_len;
  c->name_len = (uint16_t)n;
  w->names_len += n;
  return 0;
}

/* Defines symbol i in object obj; undefined imports sit at the base. */
static int add_sym(builder *b, unsigned i, int obj, const char *name,
                   int undefined) {
  gen_csym *c = &b->w->cs[i];
  if (undefined) {
    c->addr = obj_base[obj];
    c->span = 0;
  } else {
    uint32_t span = 0x40 + 0x10 * gen_below(&b->rng, 60);
    c->addr = b->next[obj];
    c->span = span;
    b->next[obj] += span;
  }
  return add_name(b->w, c, name, strlen(name));
}

static int build_csyms(builder *b, const gen_opts *o) {
  gen_world *w = b->w;
  char name[64];
  w->ncs = o->csyms > GEN_NFIXED + 16 ? o->csyms : GEN_NFIXED + 16;
  w->cs = calloc(w->ncs, sizeof(*w->cs));
  if (!w->cs)
    return -1;
  for (int k = 0; k < NOBJ; k++)
    b->next[k] = obj_base[k] + 0x1000;
  for (unsigned i = 0; i < CS_BC_FIRST; i++) {
    int libc = i == CS_LIBC_START_MAIN || i == CS_MEMCPY || i == CS_MALLOC ||
               i == CS_FREE;
    if (add_sym(b, i, libc ? OBJ_LIBC : OBJ_EXE, fixed_names[i], 0))
      return -1;
  }
  for (unsigned i = 0; i < GEN_NBC; i++)
    if (add_sym(b, CS_BC_FIRST + i, OBJ_EXE, bc_names[i], 0))
      return -1;
  for (unsigned i = 0; i < GEN_NLUAC; i++) {
    snprintf(name, sizeof(name), "lbox_%s_%s%u",
             prefixes[i % NELEM(prefixes)] , words[i % NELEM(words)], i);
    if (add_sym(b, CS_BC_FIRST + GEN_NBC + i, OBJ_EXE, name, 0))
      return -1;
  }
  for (unsigned i = GEN_NFIXED; i < w->ncs; i++) {
    uint32_t r = gen_below(&b->rng, 100);
    int obj = r < 60 ? OBJ_EXE : r < 90 ? OBJ_LIBC : OBJ_LIB;
    int undefined = gen_pct(&b->rng, 3);
    const char *p = prefixes[gen_below(&b->rng, NELEM(prefixes))];
    const char *wd = words[gen_below(&b->rng, NELEM(words))];
    if (undefined)
      snprintf(name, sizeof(name), "%s%s_import%u", p, wd, i);
    else if (obj == OBJ_EXE)
      snprintf(name, sizeof(name), "%s%s_%u", p, wd, i);
    else if (obj == OBJ_LIBC)
      snprintf(name, sizeof(name), "__libc_%s%u", wd, i);
    else
      snprintf(name, sizeof(name), "SSL_%s_%u", wd, i);
    if (add_sym(b, i, obj, name, undefined))
      return -1;
  }
  return 0;
}

static void proto_name(gen_proto *p, const char *fmt, const char *a,
                       const char *c) {
  int n = snprintf(p->chunk, sizeof(p->chunk), fmt, a, c);
  p->chunk_len = n > 0 && (size_t)n < sizeof(p->chunk) ? (size_t)n
                                                        : strlen(p->chunk);
}

static int build_protos(builder *b, const gen_opts *o) {
  gen_world *w = b->w;
  w->nprotos = o->protos > GEN_DYN + 4 ? o->protos : GEN_DYN + 4;
  w->protos = calloc(w->nprotos, sizeof(*w->protos));
  if (!w->protos)
    return -1;
  for (unsigned i = 0; i < w->nprotos; i++) {
    gen_proto *p = &w->protos[i];
    p->addr = 0x7f3a2c000000ULL + i * 0x200ULL + 0x10ULL * gen_below(&b->rng, 16);
    p->line = 1 + gen_below(&b->rng, 1500);
    if (i == 0) {
      proto_name(p, "@/opt/%s/%s.lua", "app", "init");
      p->line = 0;
    } else if (i <= GEN_DYN) {
      char j[16];
      snprintf(j, sizeof(j), "%u", i - 1);
      proto_name(p, "@/opt/app/hot/reload_%s%s.lua", j, "");
      p->line = 10 + i;

    } else if (i + NELEM(sources) >= w->nprotos) {
      p->text = sources[w->nprotos - 1 - i];
      p->line = 1;
    } else {
      proto_name(p, "@/opt/%s/%s.lua", dirs[gen_below(&b->rng, NELEM(dirs))],
                 mods[gen_below(&b->rng, NELEM(mods))]);
    }
  }
  /* Free addresses for reloads, after every initial prototype. */
  for (unsigned k = 0; k < GEN_DYN_FREE; k++)
    w->dyn_free[k] = 0x7f3a2c000000ULL + (w->nprotos + k) * 0x200ULL;
  return 0;
}

static int build_traces(builder *b, const gen_opts *o) {
  gen_world *w = b->w;
  w->ntraces = o->traces ? o->traces : 1;
  w->traces = calloc(w->ntraces, sizeof(*w->traces));
  if (!w->traces)
    return -1;
  for (unsigned t = 0; t < w->ntraces; t++)
    for (int d = 0; d < 2; d++) {
      unsigned p = GEN_DYN + 1 + gen_below(&b->rng, w->nprotos - GEN_DYN - 1);
      w->traces[t].proto[d] = p;
      w->traces[t].line[d] = w->protos[p].line + 1 + gen_below(&b->rng, 60);
    }
  return 0;
}

int world_build(gen_world *w, const gen_opts *o) {
  builder b;
  memset(w, 0, sizeof(*w));
  b.w = w;
  b.rng.s = o->seed ^ 0x776f726c64ULL; /* "world" */
  if (build_csyms(&b, o) || build_protos(&b, o) || build_traces(&b, o)) {
    world_free(w);
    return -1;
  }
  return 0;
}

void world_free(gen_world *w) {
  free(w->cs);
  free(w->names);
  free(w->protos);
  free(w->traces);
  memset(w, 0, sizeof(*w));
}

uint64_t world_pc(const gen_world *w, unsigned i, unsigned salt) {
  const gen_csym *c = &w->cs[i];
  uint32_t span = c->span ? c->span : 0x40;
  return c->addr + 4 + (salt * 37u) % (span - 8);
}

unsigned world_luac(const gen_world *w, unsigned k) {
  (void)w;
  return CS_BC_FIRST + GEN_NBC + k % GEN_NLUAC;
}

unsigned world_ngeneric(const gen_world *w) { return w->ncs - GEN_NFIXED; }

/* The k-th defined symbol after the fixed ones (imports have no code). */
unsigned world_generic(const gen_world *w, unsigned k) {
  unsigned n = world_ngeneric(w);
  unsigned i = GEN_NFIXED + k % n;
  while (w->cs[i].span == 0)
    i = i + 1 < w->ncs ? i + 1 : GEN_NFIXED;
  return i;
}

static const char *chunk_of(const gen_proto *p, size_t *len) {
  if (p->text) {
    *len = strlen(p->text);
    return p->text;
  }
  *len = p->chunk_len;
  return p->chunk;
}

ljp_status world_write_symtab(const gen_world *w, ljp_writer *wr) {
  ljp_status st = ljp_write_symtab_begin(wr, 3, 0);
  /* GC objects first, most recent first, traces among the protos. */
  unsigned t = w->ntraces;
  for (unsigned i = w->nprotos; st == LJP_OK && i-- > 0;) {
    const gen_proto *p = &w->protos[i];
    size_t len;
    const char *chunk = chunk_of(p, &len);
    st = ljp_write_symtab_lfunc(wr, p->addr, chunk, len, p->line);
    if (st == LJP_OK && t && i % 2 == 0) {
      const gen_trace *tr = &w->traces[--t];
      st = ljp_write_symtab_trace(wr, t + 1, 0, w->protos[tr->proto[0]].addr,
                                  tr->line[0]);
    }
  }
  while (st == LJP_OK && t) {
    const gen_trace *tr = &w->traces[--t];
    st = ljp_write_symtab_trace(wr, t + 1, 0, w->protos[tr->proto[0]].addr,
                                tr->line[0]);
  }
  for (unsigned i = 0; st == LJP_OK && i < w->ncs; i++)
    st = ljp_write_symtab_cfunc(wr, w->cs[i].addr,
                                w->names + w->cs[i].name_off,
                                w->cs[i].name_len);
  return st == LJP_OK ? ljp_write_symtab_end(wr) : st;
}

ljp_status world_redump_cfuncs(const gen_world *w, ljp_writer *wr) {
  ljp_status st = LJP_OK;
  for (unsigned i = 0; st == LJP_OK && i < w->ncs; i++)
    st = ljp_write_event_cfunc(wr, w->cs[i].addr,
                               w->names + w->cs[i].name_off,
                               w->cs[i].name_len);
  return st;
}

/* Like jit.flush() followed by new traces: the same numbers come back with
 * other start protos.  Each number alternates between two definitions, so
 * the set of names stays bounded however long the stream is. */
ljp_status world_churn_trace(gen_world *w, ljp_writer *wr) {
  gen_trace *tr = &w->traces[w->churn_trace % w->ntraces];
  uint64_t traceno = w->churn_trace % w->ntraces + 1;
  w->churn_trace++;
  tr->cur ^= 1;
  return ljp_write_event_trace(wr, traceno, w->protos[tr->proto[tr->cur]].addr,
                               tr->line[tr->cur]);
}

/* Like a module reloaded after the old one was collected: the prototype
 * comes back with the same chunk and line at another address, and its old
 * address goes to the end of a queue of freed ones, to be taken later by
 * another reloaded prototype (another chunk: a real redefinition, which
 * only a reader resolving each sample against the table of its moment
 * names right).  Stacks follow their prototype, so the folded names and
 * the set of distinct stacks stay the same however long the stream is. */
ljp_status world_churn_proto(gen_world *w, ljp_writer *wr) {
  unsigned j = (unsigned)(w->churn_proto % GEN_DYN);
  gen_proto *p = &w->protos[1 + j];
  uint64_t old = p->addr;
  w->churn_proto++;
  p->addr = w->dyn_free[w->dyn_head];
  w->dyn_free[w->dyn_head] = old;
  w->dyn_head = (w->dyn_head + 1) % GEN_DYN_FREE;
  return ljp_write_event_lfunc(wr, p->addr, p->chunk, p->chunk_len, p->line);
}
