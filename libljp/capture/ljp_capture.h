/*
 * ljp_capture.h — the capture core: a sampling profiler for any program that
 * embeds LuaJIT 2.1 (Debian's stock libluajit-5.1 or OpenResty's luajit2),
 * recording both the Lua (guest) stack and the native (host) stack of every
 * sample into the Tarantool sysprof format (ljs 3 + ljp 2) that libljp and
 * Tarantool's own tools read.
 *
 * The API is shaped like Tarantool's luaM_sysprof_* (lmisclib.h): the same
 * setters, the same options prefix, the same counters prefix, the same return
 * codes with the same meanings.  It uses only LuaJIT's public API
 * (lua.h, lauxlib.h, luajit.h luaJIT_profile_*, jit.attach, jit.util).
 *
 * How it works:
 *   - LuaJIT's own profiler (luaJIT_profile_start) provides the safe point:
 *     its callback runs on the VM thread at the next bytecode the interpreter
 *     dispatches after a tick.
 *   - Our SIGPROF handler is chained in front of LuaJIT's.  At the tick it
 *     records the interrupted PC and the host stack into a preallocated ring
 *     slot, then calls LuaJIT's handler.  The callback consumes exactly the
 *     slots of the ticks it reports, walks the Lua stack once and encodes one
 *     sample per tick.
 *   - JIT traces are mapped by their machine-code ranges (jit.attach "trace"
 *     + jit.util.tracemc), so a tick inside compiled code becomes a TRACE
 *     sample naming the right trace.
 *   - Host PCs are named from the ELF .symtab/.dynsym of the loaded objects;
 *     symbol events are written lazily, before the first sample using them.
 *
 * SIGNAL SAFETY.  Everything the signal handler does is async-signal-safe: no
 * malloc, no locks, no Lua API, no stdio.  It writes only into memory
 * allocated at start and publishes slots with atomic stores.  The writer
 * callback is NEVER called from the signal handler: it runs on the VM thread
 * only (at the safe point, in jit.attach handlers, in stop/drain).  So unlike
 * Tarantool's, the writer need not be async-signal-safe; it must not call
 * into the profiled lua_State.  A custom backtracer (set_backtracer) does run
 * in the signal handler and must be async-signal-safe itself.
 * The default unwinder (libgcc) only visits return addresses inside loaded
 * objects' code and CFAs on the current stack; while it runs in CALLGRAPH
 * mode a SIGSEGV/SIGBUS handler is installed that turns a fault of the
 * unwinder into a shorter stack (counted in unwind_faults) and passes every
 * other fault to the host's previous handler.  The handler does not unwind
 * while a trace is compiled (libgcc would index a newly registered
 * machine-code area with malloc) or while the VM thread runs this library's
 * own code: those ticks keep the interrupted PC as their only host frame.
 *
 * Limits: one profiled VM per process; shares SIGPROF and LuaJIT's single
 * profiler state with jit.profile / jit.p (starting takes it over); stop
 * flushes all JIT traces (LuaJIT behaviour); ITIMER_PROF and the thread-CPU
 * timer deliver at most CONFIG_HZ ticks per CPU-second (the achieved rate is
 * reported).  See docs/capture.md.
 *
 * All functions must be called from the thread that runs the VM.
 */
#ifndef LJP_CAPTURE_H
#define LJP_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define LJP_CAPTURE_API __attribute__((visibility("default")))
#else
#define LJP_CAPTURE_API
#endif

struct lua_State;

/* Return codes: Tarantool's PROFILE_* values and meanings. */
enum {
  LJP_CAPTURE_SUCCESS = 0,
  LJP_CAPTURE_ERRUSE = 1,  /* misuse: bad options, missing callbacks, wrong
                              VM, or a setter called while running */
  LJP_CAPTURE_ERRRUN = 2,  /* start: already running (this or LuaJIT's
                              profiler in another VM); stop: not running */
  LJP_CAPTURE_ERRMEM = 3,  /* start: out of memory */
  LJP_CAPTURE_ERRIO = 4    /* the writer failed (errno kept), or on_stop did */
};

/* Modes (luam_Sysprof_Options.mode). */
enum {
  LJP_CAPTURE_DEFAULT = 0,   /* "D": counters only; nothing is written and
                                the writer is never called */
  LJP_CAPTURE_LEAF = 1,      /* "L": innermost Lua frame and interrupted PC */
  LJP_CAPTURE_CALLGRAPH = 2  /* "C": full Lua and host stacks */
};

/* Timers (extension).  All deliver SIGPROF to the VM thread's handler. */
enum {
  LJP_CAPTURE_TIMER_ITIMER = 0, /* setitimer(ITIMER_PROF): process CPU time,
                                   as jit.p and Tarantool; capped at HZ */
  LJP_CAPTURE_TIMER_THREAD = 1, /* timer_create(VM thread CPU clock), aimed at
                                   the VM thread; capped at HZ */
  LJP_CAPTURE_TIMER_WALL = 2    /* timer_create(CLOCK_MONOTONIC) aimed at the
                                   VM thread: true rate, samples blocked time */
};

/* Receives the stream.  Same contract as luam_Sysprof_writer: return the
 * number of bytes written (fewer than len is an error); set *data = NULL to
 * stop the stream (also treated as an I/O halt).  Runs on the VM thread. */
typedef size_t (*ljp_capture_writer)(const void **data, size_t len, void *ctx);

/* Called exactly once per successful or failed start: after stop, after a
 * failed start, or when the profiled VM is closed while running.  buf is the
 * options' buf, for the host to free.  Return 0 on success. */
typedef int (*ljp_capture_on_stop)(void *ctx, uint8_t *buf);

/* A Tarantool-style backtracer: calls frame_writer(frame_no, addr) for each
 * frame from the innermost outwards and stops when it returns NULL.  RUNS IN
 * THE SIGNAL HANDLER: must be async-signal-safe.  Frames up to the
 * interrupted PC (the handler's own) are dropped by the core when the PC is
 * found among them; frame_no is informational. */
typedef void (*ljp_capture_backtracer)(void *(*frame_writer)(int frame_no,
                                                             void *addr));

/* Setters: ERRUSE while running; set_writer/set_on_stop also for NULL.
 * set_backtracer(NULL) selects the default (libgcc's _Unwind_Backtrace, warmed
 * up here so that the first use in the handler loads nothing). */
LJP_CAPTURE_API int ljp_capture_set_writer(ljp_capture_writer w);
LJP_CAPTURE_API int ljp_capture_set_on_stop(ljp_capture_on_stop cb);
LJP_CAPTURE_API int ljp_capture_set_backtracer(ljp_capture_backtracer bt);

/* Options.  The first five fields are luam_Sysprof_Options, in order. */
struct ljp_capture_options {
  uint8_t mode;          /* LJP_CAPTURE_DEFAULT / LEAF / CALLGRAPH */
  uint64_t interval;     /* ms, >= 1 (timer period) */
  uint8_t *buf;          /* the host's buffer; its size sets the flush size */
  size_t len;            /* its length, > 0 unless mode DEFAULT */
  void *ctx;             /* passed to the writer and on_stop */
  /* Extensions; zero means default. */
  int timer;             /* LJP_CAPTURE_TIMER_*, default ITIMER */
  uint32_t interval_us;  /* if non-zero, overrides interval (wall/thread) */
  uint32_t ring_slots;   /* pending ticks kept, default 1024 */
  uint32_t max_frames;   /* host frames per sample, default 64 (max 1024) */
  /* Stream format: 0 (default) ljp's extended sysprof stream ("ljp x1":
   * callers of trace samples, time and coroutine per sample); 2 Tarantool's
   * ljp version 2, which Tarantool's own parser reads. */
  uint8_t format;
  uint32_t max_lua_frames; /* Lua frames per sample, default 128 (max 512) */
};

/* Counters.  The first eleven are luam_Sysprof_Counters, in order; the ten
 * vmst_* sum to samples.  INTERP, FFUNC, EXIT, OPT and ASM stay zero: they
 * cannot be told apart through the public API (FFUNC appears as frames). */
struct ljp_capture_counters {
  uint64_t vmst_interp, vmst_lfunc, vmst_ffunc, vmst_cfunc, vmst_gc,
           vmst_exit, vmst_record, vmst_opt, vmst_asm, vmst_trace;
  uint64_t samples;      /* samples written (mode D: counted) */
  /* Extensions. */
  uint64_t dropped;      /* ticks lost: ring full */
  uint64_t foreign;      /* ticks that hit another thread (ITIMER) */
  uint64_t unpaired;     /* ticks LuaJIT reported without a captured slot */
  uint64_t ticks;        /* ticks seen by the handler on the VM thread */
  uint64_t elapsed_ns;   /* the timer's clock (process CPU, thread CPU or
                            wall) from start to stop */
  double rate_hz;        /* ticks / elapsed: the rate actually achieved */
  uint64_t handler_ns;   /* total time spent in our signal handler */
  uint64_t safepoint_ns; /* total time spent pairing + encoding samples */
  uint64_t unwind_faults;/* unwinds cut short by a fault the handler caught
                            (the frames found before it are kept) */
  uint64_t lua_rejected; /* Lua frame chains caught mid-update and cut */
  uint64_t host_incomplete; /* samples outside traces whose host stack
                            does not reach the thread's root frame */
  int vm_reader;         /* 1: stacks read at the signal from the VM's own
                            structures; 0: the VM's layout was not
                            recognised, Lua stacks taken at the next safe
                            point (ljp_capture_error() says why) */
};

/* Starts profiling L's VM.  ERRUSE: mode > 2, interval == 0, bad timer, or
 * mode != DEFAULT without buf/len/writer/on_stop.  ERRRUN: already running,
 * or LuaJIT's profiler is held by another VM.  ERRMEM: out of memory.  ERRIO:
 * the writer failed on the stream header.  Any failure after the options were
 * accepted calls on_stop.  Starting flushes existing JIT traces so that every
 * trace that runs is known. */
LJP_CAPTURE_API int ljp_capture_start(struct lua_State *L,
                                      const struct ljp_capture_options *opt);

/* Stops: timer off, handlers restored, pending ticks written, epilogue,
 * flush, on_stop.  ERRRUN: not running; ERRUSE: another VM; ERRIO: the
 * writer failed at any point of the run (errno holds its errno), or on_stop
 * returned non-zero.  Everything written before a failure stays readable. */
LJP_CAPTURE_API int ljp_capture_stop(struct lua_State *L);

/* Copies the counters of the current run (while running) or of the last one.
 * ERRUSE for NULL. */
LJP_CAPTURE_API int ljp_capture_report(struct ljp_capture_counters *c);

/* Writes the ticks taken while no Lua code ran (host-only time) without
 * waiting for Lua to run again.  Call from the host's event loop, outside Lua.
 * ERRRUN when not running. */
LJP_CAPTURE_API int ljp_capture_drain(struct lua_State *L);

/* The producer flavor this build writes into the ljp prologue's first
 * reserved byte: 1 stock LuaJIT, 2 OpenResty luajit2. */
LJP_CAPTURE_API int ljp_capture_flavor(void);

/* Why the last start refused the VM's layout (vm_reader == 0), or why it
 * failed; "" when there is nothing to say.  Valid until the next start. */
LJP_CAPTURE_API const char *ljp_capture_error(void);

/* ---- Memory profiler (memprof) ------------------------------------------
 *
 * Records every allocation, reallocation and free of a Lua state into
 * Tarantool's memprof format (ljs 3 + ljm 3, FORMATS.md §4), each with its
 * source as Tarantool's memprof gives it: the running Lua function and its
 * current line, a C function, a trace by number, or INTERNAL.  Works by
 * wrapping the state's allocator (lua_getallocf/lua_setallocf): the host's
 * allocator keeps doing the work underneath.  Symbols (Lua prototypes, C
 * functions, traces) are written as symbol events before their first use.
 * Independent of the sampling profiler above: both may run at once.
 *
 * The writer is called from inside the allocator, on the VM thread, when
 * the buffer fills and at stop; it must not call into the profiled state
 * (allocations it causes there are still recorded, but held back until it
 * returns).  Records are never split between two writer calls (only a
 * string longer than the buffer is), so a stream cut by a failing writer
 * ends on a record boundary.  After a failure the profiler keeps wrapping
 * the allocator and counts the events it could not write as dropped; stop
 * reports the error.  A lua_close while running stops it first (the
 * stream is completed, on_stop called).  See docs/memprof.md. */

struct ljp_memprof_options {
  void *ctx;             /* passed to the writer and on_stop */
  uint8_t *buf;          /* the host's buffer, >= 1024 bytes */
  size_t len;
  ljp_capture_writer writer;
  ljp_capture_on_stop on_stop;
};

struct ljp_memprof_counters {
  uint64_t events;       /* allocator calls recorded (alloc+realloc+free) */
  uint64_t allocs, reallocs, frees;
  uint64_t bytes_allocated;  /* sum of new sizes (alloc and realloc) */
  uint64_t bytes_freed;      /* sum of old sizes (free and realloc) */
  uint64_t dropped;      /* events not written (writer failed, or held back
                            while the writer ran and no room was left) */
  uint64_t symbols;      /* symbol events written */
  int vm_reader;         /* 1: sources read from the VM; 0: the layout was
                            not recognised, every event is INTERNAL
                            (ljp_memprof_error() says why) */
};

/* Starts recording L's state.  ERRUSE: missing options/writer/on_stop or a
 * buffer under 1024 bytes; ERRRUN: already running; ERRMEM; ERRIO: the
 * writer failed on the prologue (on_stop is then called). */
LJP_CAPTURE_API int ljp_memprof_start(struct lua_State *L,
                                      const struct ljp_memprof_options *opt);
/* Restores the allocator, writes the epilogue, flushes, calls on_stop.
 * ERRRUN: not running; ERRUSE: another VM; ERRIO: the writer failed at any
 * point (errno kept) or on_stop did. */
LJP_CAPTURE_API int ljp_memprof_stop(struct lua_State *L);
/* The counters of the current or the last run.  ERRUSE for NULL. */
LJP_CAPTURE_API int ljp_memprof_report(struct ljp_memprof_counters *c);
/* Whether memprof runs now (1) or not (0). */
LJP_CAPTURE_API int ljp_memprof_running(void);
/* Why the last start could not read sources from the VM; "" otherwise. */
LJP_CAPTURE_API const char *ljp_memprof_error(void);

#ifdef __cplusplus
}
#endif

#endif /* LJP_CAPTURE_H */
