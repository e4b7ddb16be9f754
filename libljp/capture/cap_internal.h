/*
 * cap_internal.h — private interfaces between the parts of the capture core.
 *
 *   cap_state.c    lifecycle: options, start/stop/report/drain, the
 *                  lua_close sentinel, the writer adapter
 *   cap_signal.c   SIGPROF handler, ring of captured ticks, timers,
 *                  backtracers (the only code that runs in signal context)
 *   cap_sample.c   the safe point: pairing ticks with the Lua stack,
 *                  classification, encoding
 *   cap_symbols.c  host symbols from the loaded objects' ELF tables
 *   cap_ids.c      synthetic ids of Lua functions, the closure -> ffid map
 *   cap_traces.c   machine-code ranges of JIT traces (jit.attach "trace")
 *
 * There is one profiler per process (LuaJIT's profiler state is a single
 * static object), so the state is one static struct, cap_S.
 */
#ifndef LJP_CAP_INTERNAL_H
#define LJP_CAP_INTERNAL_H

#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <lua.h>

#include "ljp.h"
#include "ljp_capture.h"
#include "cap_vm.h"

#define CAP_HIDDEN __attribute__((visibility("hidden")))

/* Frames the handler's own unwinding adds before the interrupted PC
 * (handler, trampoline, unwinder internals): room kept per slot. */
#define CAP_HANDLER_EXTRA 16
#define CAP_DEFAULT_SLOTS 1024u
#define CAP_DEFAULT_FRAMES 64u
#define CAP_MAX_FRAMES 1024u
#define CAP_MAX_GUEST 512u
/* Lua frames kept per tick read at the signal (cap_vm.c); deeper stacks
 * keep their innermost frames and are marked incomplete. */
#define CAP_DEFAULT_LUA_FRAMES 128u

/* ---- symbols (cap_symbols.c) ------------------------------------------ */

/* Resolved host address: the function containing it, or a fallback. */
typedef struct cap_sym {
  uint64_t start;       /* function start, or the address itself */
  uint64_t end;         /* exclusive end; == start when unknown size */
  const char *name;     /* function name, or NULL (use module+off) */
  const char *module;   /* basename of the object, or NULL */
  uint64_t base;        /* the object's load base */
} cap_sym;

CAP_HIDDEN int ljp__cap_symbols_init(void);
CAP_HIDDEN void ljp__cap_symbols_free(void);
/* Returns 1 when addr is inside a loaded object (sym filled), else 0. */
CAP_HIDDEN int ljp__cap_symbols_lookup(uint64_t addr, cap_sym *sym);
/* The [lo, hi) range of the object holding addr; 0 if none. */
CAP_HIDDEN int ljp__cap_symbols_module_range(uint64_t addr, uint64_t *lo,
                                             uint64_t *hi);
/* 1 when addr lies in the main executable. */
CAP_HIDDEN int ljp__cap_symbols_is_main(uint64_t addr);
/* Emits (once) the C symbol event that names addr.  is_return: addr is a
 * return address (look up addr - 1).  Returns the writer status. */
CAP_HIDDEN ljp_status ljp__cap_symbols_emit(ljp_writer *w, uint64_t addr,
                                            int is_return);

/* ---- ids (cap_ids.c) --------------------------------------------------- */

CAP_HIDDEN int ljp__cap_ids_init(lua_State *L);
CAP_HIDDEN void ljp__cap_ids_free(void);
/* The synthetic id of the Lua function (chunk, linedefined); 0 = OOM.
 * *is_new is set when the id was created now. */
CAP_HIDDEN uint64_t ljp__cap_ids_lfunc(const char *chunk, int linedefined);
/* Emits the LFUNC symbol event of id unless done; writer status. */
CAP_HIDDEN ljp_status ljp__cap_ids_emit_lfunc(ljp_writer *w, uint64_t id);
/* First line recorded for id. */
CAP_HIDDEN uint64_t ljp__cap_ids_lfunc_line(uint64_t id);
/* ffid of the function object at p (lua_topointer), -1 if not a builtin. */
CAP_HIDDEN int ljp__cap_ids_ffid(const void *p);
/* ffid of coroutine.wrap closures (ASM closures not in the map). */
CAP_HIDDEN int ljp__cap_ids_wrap_ffid(void);

/* ---- traces (cap_traces.c) --------------------------------------------- */

typedef struct cap_trace {
  uint64_t lo, hi;      /* machine code [lo, hi) */
  uint32_t traceno;
  uint64_t proto;       /* synthetic id of the start function */
  uint64_t line;        /* start line */
  uint64_t firstline;   /* first line of the start function */
  int emitted;          /* trace symbol event written */
} cap_trace;

CAP_HIDDEN int ljp__cap_traces_attach(lua_State *L);
CAP_HIDDEN void ljp__cap_traces_detach(lua_State *L);
/* Whether trace events arrive (jit.attach worked). */
CAP_HIDDEN int ljp__cap_traces_attached(void);
CAP_HIDDEN void ljp__cap_traces_free(void);
CAP_HIDDEN cap_trace *ljp__cap_traces_find(uint64_t pc);
/* The live trace numbered traceno, or NULL. */
CAP_HIDDEN cap_trace *ljp__cap_traces_by_no(uint32_t traceno);

/* ---- Lua prototypes read at the signal (cap_protos.c) ------------------ */

/* The synthetic id (cap_ids) of the prototype at proto, whose chunk-name
 * string is at chunk: cached by address, checked against chunk and
 * firstline so that a reused address gets its new identity.  0 when the
 * name cannot be read or memory runs out. */
CAP_HIDDEN uint64_t ljp__cap_protos_id(uint64_t proto, uint64_t chunk,
                                       uint32_t firstline);
CAP_HIDDEN void ljp__cap_protos_free(void);

/* ---- signal side (cap_signal.c) ---------------------------------------- */

/* What the handler learned about one tick besides the host frames, when
 * it reads the VM's own structures (cap_S.use_vm). */
typedef struct cap_slot_meta {
  uint64_t t_ns;                 /* CLOCK_MONOTONIC at the tick */
  uint64_t L;                    /* the running coroutine (g->cur_L) */
  int32_t vmstate;               /* g->vmstate */
  uint16_t nlua;                 /* Lua frames in the slot */
  uint8_t lua_status;            /* CAP_VMS_* */
  uint8_t host_flags;            /* CAP_UW_* of the host unwind, or
                                    CAP_SLOT_HOST_PARTIAL */
} cap_slot_meta;

/* host_flags: the host stack is known not to reach the thread's root. */
#define CAP_SLOT_HOST_PARTIAL 0x80u

typedef struct cap_ring {
  uint32_t nslots;
  uint32_t stride;               /* uint64_t per slot frames */
  uint64_t *frames;              /* nslots * stride */
  uint32_t *nframes;             /* frames captured per slot */
  uint32_t lstride;              /* Lua frames per slot (use_vm) */
  cap_vm_frame *lframes;         /* nslots * lstride */
  cap_slot_meta *meta;           /* nslots */
  _Atomic uint32_t head;         /* written by the handler */
  _Atomic uint32_t tail;         /* written by the consumer */
} cap_ring;

CAP_HIDDEN int ljp__cap_signal_arm(lua_State *L, int timer, uint64_t period_us);
CAP_HIDDEN void ljp__cap_signal_disarm(lua_State *L);
CAP_HIDDEN void ljp__cap_backtracer_warmup(void);
/* Brackets the capture core's own code on the VM thread (see in_core). */
CAP_HIDDEN void ljp__cap_core_enter(void);
CAP_HIDDEN void ljp__cap_core_leave(void);
/* Makes libgcc index the unwind tables registered since the last call, so
 * the handler's lookups never have to (see cap_signal.c). */
CAP_HIDDEN void ljp__cap_unwind_settle(void);
/* Whether pc lies in published JIT machine code. */
CAP_HIDDEN int ljp__cap_signal_in_mcode(uint64_t pc);
/* Publishes a machine-code range to the handler (stops unwinding there). */
CAP_HIDDEN void ljp__cap_signal_note_mcode(uint64_t lo, uint64_t hi);
CAP_HIDDEN void ljp__cap_signal_reset_mcode(void);
/* Where the handler must not unwind (see cap_signal.c). */
CAP_HIDDEN void ljp__cap_signal_set_unsafe(uint64_t glo, uint64_t ghi,
                                           uint64_t clo, uint64_t chi,
                                           const uint64_t *fn, size_t nfn);
/* Builds those tables from the loaded objects (cap_symbols.c). */
CAP_HIDDEN int ljp__cap_symbols_unsafe_setup(void);
/* Publishes the executable ranges of the loaded objects to the handler. */
CAP_HIDDEN void ljp__cap_signal_publish_text(const uint64_t *lo,
                                             const uint64_t *hi,
                                             size_t n);
CAP_HIDDEN uint64_t ljp__cap_now_ns(clockid_t clk);

/* ---- the state ---------------------------------------------------------- */

typedef struct cap_state {
  /* Lifecycle (VM thread only). */
  int running;
  const void *vm;                 /* registry pointer: identifies the VM */
  unsigned session;
  uint8_t mode;
  int timer;
  void *ctx;
  uint8_t *buf;
  ljp_writer *w;
  int writer_errno;
  int writer_failed;

  ljp_capture_writer writer;
  ljp_capture_on_stop on_stop;
  ljp_capture_backtracer backtracer;

  /* The VM's own structures, read at the signal (cap_vm.c).  use_vm is 0
   * when the probe refused the VM: the Lua stack is then taken at the next
   * safe point with lua_getstack, as before (error says why). */
  cap_vm lj;
  int use_vm;
  int own_unwinder;               /* host stacks from cap_unwind.c */
  uint8_t format;                 /* 0x81 (ljp x1) or 2 (Tarantool's ljp 2) */
  uint64_t main_L;                /* the main thread: coroutine id 1 */
  uint64_t t_mono0;               /* CLOCK_MONOTONIC at start */
  uint64_t period_ns;
  char error[200];

  /* Shared with the handler. */
  cap_ring ring;
  _Atomic int armed;              /* handler may capture and chain */
  /* Non-zero while the VM thread runs the capture core's own code (the
   * safe-point callback, the trace handler), which mallocs, reads ELF files
   * and lists loaded objects.  A tick landing there records the PC only:
   * unwinding could re-enter a lock that code holds. */
  volatile sig_atomic_t in_core;
  /* Non-zero from a trace's start event to its stop or abort: LuaJIT may
   * register a new machine-code area with libgcc meanwhile, and the
   * handler must not be the first to look it up (see
   * ljp__cap_unwind_settle). */
  volatile sig_atomic_t compiling;
  pid_t vm_tid;
  struct sigaction lj_sa;         /* LuaJIT's handler, chained */
  struct sigaction orig_sa;       /* the host's disposition before start */
  uint32_t max_frames;
  _Atomic uint64_t ticks, foreign, dropped, handler_ns, unwind_faults;
  _Atomic uint32_t drops_pending; /* dropped ticks LuaJIT will still report */
  uint32_t drained_pending;       /* slots drain() took before LuaJIT did */
  timer_t timerid;
  int have_timer;
  clockid_t clock;                /* clock for elapsed/rate */
  uint64_t t_start;

  /* Host-side classification helpers. */
  uint64_t lj_lo, lj_hi;          /* the object holding the VM */
  int lj_is_main;                 /* VM linked into the executable */
  uint64_t entry_lo[8], entry_hi[8];  /* lua_pcall & co. */
  int nentry;

  struct ljp_capture_counters c;
} cap_state;

/* The code says cap_S; the symbol carries the library's internal prefix,
 * so that a program linking libljpcap.a may have its own cap_S. */
#define cap_S ljp__cap_S
extern CAP_HIDDEN cap_state cap_S;

/* cap_sample.c */
CAP_HIDDEN void ljp__cap_profile_cb(void *data, lua_State *L, int samples,
                                    int vmstate);
/* cap_encode.c: ticks read at the signal (use_vm). */
CAP_HIDDEN void ljp__cap_encode_reset(void);
CAP_HIDDEN ljp_status ljp__cap_encode_begin(ljp_writer *w);
CAP_HIDDEN void ljp__cap_encode_slot(uint32_t idx);
CAP_HIDDEN void ljp__cap_encode_pending(void);
/* Writes pending slots without a Lua stack (drain, stop). */
CAP_HIDDEN void ljp__cap_flush_pending(void);
CAP_HIDDEN void ljp__cap_sample_free(void);

/* cap_state.c: stop used by the lua_close sentinel and atexit paths. */
CAP_HIDDEN int ljp__cap_stop_internal(lua_State *L, int closing);
CAP_HIDDEN void ljp__cap_note_writer(void);

#endif
