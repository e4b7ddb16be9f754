/*
 * cap_mem.h — the memory profiler's state, shared by its allocator
 * wrapper and lifecycle (cap_mem.c) and its stream output (cap_mem_out.c).
 * Its own struct: the sampling profiler's state (cap_S) is not touched, so
 * both profilers run independently.
 */
#ifndef LJP_CAP_MEM_H
#define LJP_CAP_MEM_H

#include <stddef.h>
#include <stdint.h>

#include <lua.h>

#include "cap_vm.h"
#include "ljp_capture.h"

/* Events the writer itself causes are held here until it returns. */
#define CAP_MEM_HELD 64

typedef struct cap_mem_event {
  uint8_t kind;          /* LJP_MEM_ALLOC / FREE / REALLOC */
  uint64_t oaddr, osize, naddr, nsize;
  cap_vm_site site;
} cap_mem_event;

/* A trace's symbol as last written. */
typedef struct cap_mem_trace {
  uint64_t T, proto;
  uint32_t line;
  uint32_t gen;          /* trace_gen when last checked; 0: never */
} cap_mem_trace;

typedef struct cap_mem_state {
  int running;
  int closing;           /* stopping from lua_close */
  lua_State *L;          /* the main thread */
  uint64_t g;
  lua_Alloc orig_f;
  void *orig_ud;
  struct ljp_memprof_options opt;
  size_t pos;            /* bytes in opt.buf */
  uint64_t unflushed;    /* events in opt.buf (lost if the writer fails) */
  int halted;            /* the writer failed: nothing more is written */
  int err_no;
  int in_flush;          /* the writer runs */
  int in_hook;           /* the wrapper is recording */
  int sentinel_ref;      /* registry: the userdata whose __gc sees lua_close */
  uint64_t gen;          /* run number, kept in the sentinel */
  cap_vm vm;
  cap_vm_sitelayout sl;
  cap_mem_event held[CAP_MEM_HELD];
  unsigned nheld;
  /* Symbols written: prototypes (address -> chunk, firstline), C
   * functions (address), traces (by number). */
  uint64_t *pkeys, *pvals;
  size_t pcap, pcount;
  uint64_t *ckeys;
  size_t ccap, ccount;
  cap_mem_trace *traces;
  size_t ntraces;
  uint32_t trace_gen;    /* bumped by every allocation of the assembler */
  /* The last prototype (address, value) and C function found written. */
  uint64_t last_pt, last_pval, last_cf;
  struct ljp_memprof_counters c;
} cap_mem_state;

CAP_HIDDEN extern cap_mem_state ljp__cap_M;

/* Writes the two prologues (ljs 3 with no symbols, ljm 3) and flushes.
 * 0, or -1 when the writer failed. */
CAP_HIDDEN int ljp__cap_mem_out_begin(void);
/* Encodes one event, preceded by the symbol events it needs. */
CAP_HIDDEN void ljp__cap_mem_out_event(const cap_mem_event *e);
/* The epilogue and the final flush. */
CAP_HIDDEN void ljp__cap_mem_out_end(void);
/* Hands the buffer to the writer (not while it runs). */
CAP_HIDDEN void ljp__cap_mem_out_flush(void);
/* At exit() while running (cap_mem.c): completes the stream without
 * touching the state, which may be gone; the wrapper stays installed and
 * passes every call through. */
CAP_HIDDEN void ljp__cap_mem_stop_at_exit(void);
/* Lua-visible names of C functions (cap_mem_names.c): collected at start
 * (calls Lua), looked up in the allocator (NULL when unknown). */
CAP_HIDDEN void ljp__cap_mem_names_scan(lua_State *L);
CAP_HIDDEN const char *ljp__cap_mem_names_get(uint64_t addr);
CAP_HIDDEN void ljp__cap_mem_names_free(void);
/* Frees the symbol caches. */
CAP_HIDDEN void ljp__cap_mem_out_free(void);

#endif
