/*
 * gen.h — shared model of ljpgen, the generator of large realistic
 * sysprof (ljs 3 + ljp 2) and memprof (ljs 3 + ljm 3) streams.
 *
 * The "world" is the program being profiled: its C symbols (an executable
 * with the Lua VM linked in, libc, another library), its Lua prototypes and
 * its JIT traces.  It is built from the seed alone, so every stream of the
 * same seed and shape options names the same things, whatever its length.
 */
#ifndef LJPGEN_GEN_H
#define LJPGEN_GEN_H

#include "ljp.h"

#include <stddef.h>
#include <stdint.h>

/* ---- deterministic PRNG (splitmix64: fast, seedable, good enough) ---- */

typedef struct gen_rng {
  uint64_t s;
} gen_rng;

static inline uint64_t gen_next(gen_rng *r) {
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/* Uniform in [0, n); n > 0. */
static inline uint32_t gen_below(gen_rng *r, uint32_t n) {
  return (uint32_t)(((gen_next(r) >> 32) * (uint64_t)n) >> 32);
}

/* Percent chance. */
static inline int gen_pct(gen_rng *r, unsigned pct) {
  return gen_below(r, 100) < pct;
}

/* ---- options ---- */

typedef struct gen_opts {
  ljp_kind kind;           /* LJP_KIND_SYSPROF or LJP_KIND_MEMPROF */
  uint64_t size;           /* stop once this many bytes were written (0: use count) */
  uint64_t count;          /* samples / memory events (0: use size) */
  unsigned depth;          /* Lua stack depth (frames) of a typical stack */
  unsigned host_depth;     /* host frames outside the VM (before the first entry) */
  unsigned unique;         /* distinct stacks (sysprof) or sites (memprof) */
  unsigned sandwiches;     /* most Lua->C->Lua round trips in one stack */
  unsigned csyms;          /* C symbols in the initial symbol table */
  unsigned protos;         /* Lua prototypes in the initial symbol table */
  unsigned traces;         /* traces in the initial symbol table */
  uint64_t trace_churn;    /* a trace redefinition every N records (0: none) */
  uint64_t proto_churn;    /* a prototype (re)definition every N records */
  uint64_t redump;         /* a full C-symbol re-dump every N host samples /
                              CFUNC events (old producers; 0: none) */
  unsigned locality;       /* % of samples that repeat the previous stack */
  unsigned live;           /* memprof: blocks live at once (steady state) */
  int leaf;                /* sysprof LEAF mode: empty host stacks */
  uint64_t seed;
  int x1;                  /* sysprof: the ljp x1 stream instead of ljp 2 */
  unsigned recursive;      /* % of stacks that are one prototype calling
                              itself, 1..depth frames deep */
  int trace_pct;           /* % of TRACE samples; -1: the default mix */
} gen_opts;

/* ---- the world ---- */

/* C symbols every stack refers to by role (names match what stack.c and
 * the reference parser look for: lua_pcall, lj_vm_pcall, ...). */
enum {
  CS_START, CS_LIBC_START_MAIN, CS_MAIN, CS_TARANTOOL_LUA_RUN, CS_FIBER_LOOP,
  CS_FIBER_CXX_INVOKE, CS_CORO_INIT, CS_LBOX_CALL, CS_BOX_PROCESS_CALL,
  CS_LUAT_CALL, CS_LUA_PCALL, CS_LUA_CALL, CS_LJ_VM_PCALL, CS_LJ_VM_CALL,
  CS_LJ_BC_FUNCC, CS_LJ_GC_STEP, CS_GC_ONESTEP, CS_GC_SWEEP, CS_LJ_ALLOC_FREE,
  CS_LJ_MEM_REALLOC, CS_LJ_TAB_NEW, CS_LJ_STR_NEW, CS_LJ_BUF_MORE,
  CS_LJ_STRFMT_PUSHVF, CS_MEMCPY, CS_MALLOC, CS_FREE,
  CS_BC_FIRST /* then the interpreter's bytecode handlers */
};
#define GEN_NBC 12         /* lj_BC_* handlers named after CS_BC_FIRST */
#define GEN_NLUAC 48       /* Lua-C functions (lbox_*) after the handlers */
#define GEN_NFIXED (CS_BC_FIRST + GEN_NBC + GEN_NLUAC)
#define GEN_DYN 8          /* prototypes redefined by proto churn */
#define GEN_DYN_FREE 11    /* free addresses they move among (not GEN_DYN:
                              a slot must not get its own address back) */

typedef struct gen_csym {
  uint64_t addr;
  uint32_t span;           /* bytes up to the next symbol of its object */
  uint32_t name_off;       /* into world.names */
  uint16_t name_len;
} gen_csym;

typedef struct gen_proto {
  uint64_t addr;
  uint64_t line;           /* first line (0: main chunk) */
  char chunk[64];
  size_t chunk_len;        /* chunks may be source text (multi-line) */
  const char *text;        /* when the chunk is source text, else NULL */
} gen_proto;

typedef struct gen_trace {
  unsigned proto[2];       /* the two start protos a trace number alternates */
  uint64_t line[2];
  unsigned cur;            /* which definition is current */
} gen_trace;

typedef struct gen_world {
  gen_csym *cs;
  unsigned ncs;
  char *names;
  size_t names_len, names_cap;
  gen_proto *protos;       /* [0] main chunk, [1..GEN_DYN] churned, rest */
  unsigned nprotos;
  uint64_t dyn_free[GEN_DYN_FREE]; /* FIFO of proto addresses not in use */
  unsigned dyn_head;
  gen_trace *traces;       /* index = traceno - 1 */
  unsigned ntraces;
  uint64_t churn_trace, churn_proto; /* events written so far */
} gen_world;

int world_build(gen_world *w, const gen_opts *o);
void world_free(gen_world *w);

/* A return address inside C symbol i (the same i and salt give the same
 * address, so stacks repeat exactly). */
uint64_t world_pc(const gen_world *w, unsigned i, unsigned salt);
/* Index of the k-th Lua-C function, and of the k-th generic exe symbol. */
unsigned world_luac(const gen_world *w, unsigned k);
unsigned world_generic(const gen_world *w, unsigned k);
unsigned world_ngeneric(const gen_world *w);

/* Writers of the world's symbols. */
ljp_status world_write_symtab(const gen_world *w, ljp_writer *wr);
ljp_status world_redump_cfuncs(const gen_world *w, ljp_writer *wr);
/* Redefines the next trace number (round robin) / dynamic prototype. */
ljp_status world_churn_trace(gen_world *w, ljp_writer *wr);
ljp_status world_churn_proto(gen_world *w, ljp_writer *wr);

/* ---- streams ---- */

/* Counts what a generator wrote; bytes come from the sink. */
typedef struct gen_stats {
  uint64_t records;        /* samples or memory events */
  uint64_t symbol_events;  /* mid-stream symbol records */
  uint64_t max_lua, max_host;
  uint64_t live_blocks, live_bytes;
  unsigned unique;
} gen_stats;

/* Returns 1 once the output reached the size goal. */
typedef int (*gen_full_fn)(void *ctx);

ljp_status gen_sysprof(const gen_opts *o, gen_world *w, ljp_writer *wr,
                       gen_full_fn full, void *ctx, gen_stats *st);
ljp_status gen_memprof(const gen_opts *o, gen_world *w, ljp_writer *wr,
                       gen_full_fn full, void *ctx, gen_stats *st);

#endif
