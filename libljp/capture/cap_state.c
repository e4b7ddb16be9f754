/*
 * cap_state.c — the lifecycle of the capture core: the luaM_sysprof-shaped
 * public API (setters, start, stop, report, drain), the adapter from the
 * host's writer to libljp's encoder, and the sentinel that stops the
 * profiler when the profiled VM is closed while it runs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <luajit.h>

#include "cap_internal.h"
#include "cap_names.h"
#include "cap_unwind.h"

cap_state cap_S;

/* Registry key of the sentinel userdata. */
static const char sentinel_key = 0;

int ljp_capture_flavor(void)
{
  /* The VM that runs is what counts: a module built against stock headers
   * can be loaded into OpenResty's luajit2. */
  if (cap_S.lj.ok && cap_S.lj.flavor)
    return cap_S.lj.flavor;
#ifdef OPENRESTY_LUAJIT
  return LJP_FLAVOR_OPENRESTY;
#else
  return LJP_FLAVOR_LUAJIT;
#endif
}

int ljp_capture_set_writer(ljp_capture_writer w)
{
  if (cap_S.running || !w)
    return LJP_CAPTURE_ERRUSE;
  cap_S.writer = w;
  return LJP_CAPTURE_SUCCESS;
}

int ljp_capture_set_on_stop(ljp_capture_on_stop cb)
{
  if (cap_S.running || !cb)
    return LJP_CAPTURE_ERRUSE;
  cap_S.on_stop = cb;
  return LJP_CAPTURE_SUCCESS;
}

int ljp_capture_set_backtracer(ljp_capture_backtracer bt)
{
  if (cap_S.running)
    return LJP_CAPTURE_ERRUSE;
  cap_S.backtracer = bt;
  ljp__cap_backtracer_warmup();
  return LJP_CAPTURE_SUCCESS;
}

/* libljp sink -> the host's luam_Sysprof_writer-style callback. */
static int sink(void *ctx, const void *data, size_t len)
{
  const void *p = data;
  size_t n;
  errno = 0;
  n = cap_S.writer(&p, len, ctx);
  if (n < len || p == NULL) {
    cap_S.writer_errno = errno ? errno : EIO;
    cap_S.writer_failed = 1;
    return -1;
  }
  return 0;
}

void ljp__cap_note_writer(void)
{
  if (cap_S.w && ljp_writer_status(cap_S.w) != LJP_OK && !cap_S.writer_failed) {
    cap_S.writer_failed = 1;
    if (!cap_S.writer_errno)
      cap_S.writer_errno = ENOMEM;
  }
}

static const void *vm_of(lua_State *L)
{
  return lua_topointer(L, LUA_REGISTRYINDEX);
}

static int sentinel_gc(lua_State *L)
{
  unsigned *s = lua_touserdata(L, 1);
  if (s && cap_S.running && *s == cap_S.session)
    ljp__cap_stop_internal(L, 1);
  return 0;
}

static void sentinel_set(lua_State *L, int on)
{
  lua_pushlightuserdata(L, (void *)&sentinel_key);
  if (on) {
    unsigned *s = lua_newuserdata(L, sizeof *s);
    *s = cap_S.session;
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, sentinel_gc);
    lua_setfield(L, -2, "__gc");
    lua_setmetatable(L, -2);
  } else {
    lua_pushnil(L);
  }
  lua_rawset(L, LUA_REGISTRYINDEX);
}

static void release(void)
{
  if (cap_S.w)
    ljp_writer_free(cap_S.w);
  cap_S.w = NULL;
  free(cap_S.ring.frames);
  free(cap_S.ring.nframes);
  free(cap_S.ring.lframes);
  free(cap_S.ring.meta);
  memset(&cap_S.ring, 0, sizeof cap_S.ring);
  ljp__cap_protos_free();
  ljp__cap_uw_free();
  ljp__cap_symbols_free();
  ljp__cap_ids_free();
  ljp__cap_traces_free();
  ljp__cap_sample_free();
}

const char *ljp_capture_error(void)
{
  return cap_S.error;
}

static int fail_start(const struct ljp_capture_options *o, int status)
{
  release();
  if (cap_S.on_stop)
    cap_S.on_stop(o->ctx, o->buf);
  return status;
}

/* Addresses of the public entry points that run Lua: a host stack with
 * none of them never entered the VM (host-only time). */
static void find_entries(void)
{
  uint64_t fn[6];
  size_t i;
  fn[0] = (uint64_t)(uintptr_t)&lua_pcall;
  fn[1] = (uint64_t)(uintptr_t)&lua_call;
  fn[2] = (uint64_t)(uintptr_t)&lua_cpcall;
  fn[3] = (uint64_t)(uintptr_t)&lua_resume;
  fn[4] = (uint64_t)(uintptr_t)&luaL_callmeta;
  fn[5] = (uint64_t)(uintptr_t)&lua_yield;
  cap_S.nentry = 0;
  for (i = 0; i < sizeof fn / sizeof fn[0]; i++) {
    cap_sym s;
    if (ljp__cap_symbols_lookup(fn[i], &s) && s.name && s.end > s.start) {
      cap_S.entry_lo[cap_S.nentry] = s.start;
      cap_S.entry_hi[cap_S.nentry] = s.end;
      cap_S.nentry++;
    }
  }
  cap_S.lj_lo = cap_S.lj_hi = 0;
  ljp__cap_symbols_module_range(fn[0], &cap_S.lj_lo, &cap_S.lj_hi);
  /* The VM linked into the executable (e.g. /usr/bin/luajit): host C
   * functions cannot be told from VM code by object, so reconciliation of
   * 'C' stacks is off. */
  cap_S.lj_is_main = ljp__cap_symbols_is_main(fn[0]);
}

/* Rejects options that cannot start a run, and a second run: the status,
 * after handing the buffer back through on_stop; 0 when they are good. */
static int check_start(const struct ljp_capture_options *o)
{
  int st = 0;
  if (o->mode > LJP_CAPTURE_CALLGRAPH ||
      (o->interval == 0 && o->interval_us == 0) || o->timer < 0 ||
      o->timer > LJP_CAPTURE_TIMER_WALL ||
      (o->format != 0 && o->format != 2) ||
      (o->mode != LJP_CAPTURE_DEFAULT &&
       (!o->buf || !o->len || !cap_S.writer || !cap_S.on_stop)))
    st = LJP_CAPTURE_ERRUSE;
  else if (cap_S.running)
    st = LJP_CAPTURE_ERRRUN;
  if (st && cap_S.on_stop)
    cap_S.on_stop(o->ctx, o->buf);
  return st;
}

/* The sampling period: interval_us wins; interval (ms) is capped at an
 * hour so that the product cannot overflow. */
static uint64_t start_period_us(const struct ljp_capture_options *o)
{
  if (o->interval_us)
    return o->interval_us;
  return o->interval > 3600000u ? 3600000000u : o->interval * 1000u;
}

/* Forgets the previous run and takes this one's options; probes the VM. */
static void reset_state(lua_State *L, const struct ljp_capture_options *o,
                        uint64_t period_us)
{
  memset(&cap_S.c, 0, sizeof cap_S.c);
  atomic_store(&cap_S.ticks, 0);
  atomic_store(&cap_S.foreign, 0);
  atomic_store(&cap_S.dropped, 0);
  atomic_store(&cap_S.handler_ns, 0);
  atomic_store(&cap_S.unwind_faults, 0);
  atomic_store(&cap_S.drops_pending, 0);
  cap_S.drained_pending = 0;
  cap_S.in_core = 0;
  cap_S.compiling = 0;   /* a compile under way now has no start event */
  cap_S.mode = o->mode;
  cap_S.timer = o->timer;
  cap_S.ctx = o->ctx;
  cap_S.buf = o->buf;
  cap_S.writer_errno = 0;
  cap_S.writer_failed = 0;
  cap_S.vm = vm_of(L);
  cap_S.format = o->format == 2 ? 2 : 0x81;
  cap_S.period_ns = period_us * 1000u;
  cap_S.error[0] = '\0';
  /* Read the VM's own structures at the signal when its layout is proven
   * (ljp__cap_vm_probe walks known stacks both ways); otherwise fall back to
   * the Lua stack at the next safe point, and say why. */
  memset(&cap_S.lj, 0, sizeof cap_S.lj);
  cap_S.use_vm = ljp__cap_vm_probe(L, &cap_S.lj, cap_S.error,
                                   sizeof cap_S.error) == 0;
  if (!cap_S.use_vm)
    cap_S.lj.ok = 0;
  cap_S.main_L = lua_pushthread(L) ? (uint64_t)(uintptr_t)L : 0;
  lua_pop(L, 1);
}

/* The sample ring the handler fills: host frames per slot (one word when
 * only counting), and the VM frames when the VM is read at the signal.
 * 0, or -1 when out of memory. */
static int ring_alloc(const struct ljp_capture_options *o)
{
  uint32_t slots = o->ring_slots ? o->ring_slots : CAP_DEFAULT_SLOTS;
  uint32_t frames = o->max_frames ? o->max_frames : CAP_DEFAULT_FRAMES;
  if (frames > CAP_MAX_FRAMES)
    frames = CAP_MAX_FRAMES;
  if (slots > (1u << 20))
    slots = 1u << 20;
  uint32_t stride = o->mode == LJP_CAPTURE_CALLGRAPH ? frames + CAP_HANDLER_EXTRA : 1;
  cap_S.max_frames = frames;
  cap_S.ring.nslots = slots;
  cap_S.ring.stride = stride;
  cap_S.ring.frames = malloc((size_t)slots * stride * sizeof(uint64_t));
  cap_S.ring.nframes = malloc((size_t)slots * sizeof(uint32_t));
  if (!cap_S.ring.frames || !cap_S.ring.nframes)
    return -1;
  if (!cap_S.use_vm)
    return 0;
  uint32_t lf = o->max_lua_frames ? o->max_lua_frames : CAP_DEFAULT_LUA_FRAMES;
  if (lf > CAP_MAX_GUEST)
    lf = CAP_MAX_GUEST;
  cap_S.ring.lstride = lf;
  cap_S.ring.lframes = calloc((size_t)slots * lf, sizeof(cap_vm_frame));
  cap_S.ring.meta = calloc(slots, sizeof(cap_slot_meta));
  if (!cap_S.ring.lframes || !cap_S.ring.meta)
    return -1;
  /* calloc'd pages may be untouched: touch them (see ring_touch). */
  memset(cap_S.ring.lframes, 0, (size_t)slots * lf * sizeof(cap_vm_frame));
  memset(cap_S.ring.meta, 0, (size_t)slots * sizeof(cap_slot_meta));
  return 0;
}

/* Touches every page of the host-frame ring now and empties it: the
 * handler must not take page faults on fresh memory in the middle of a
 * run. */
static void ring_touch(void)
{
  size_t slots = cap_S.ring.nslots;
  memset(cap_S.ring.frames, 0, slots * cap_S.ring.stride * sizeof(uint64_t));
  memset(cap_S.ring.nframes, 0, slots * sizeof(uint32_t));
  atomic_store(&cap_S.ring.head, 0);
  atomic_store(&cap_S.ring.tail, 0);
}

/* Host stacks: unwind tables of our own, built now, outside any handler;
 * a custom backtracer replaces them. */
static void host_unwinder(const struct ljp_capture_options *o)
{
  cap_S.own_unwinder = 0;
  if (o->mode == LJP_CAPTURE_CALLGRAPH && !cap_S.backtracer &&
      ljp__cap_uw_init() == 0)
    cap_S.own_unwinder = 1;
}

/* Symbols, ids, the VM's entry points, and the trace map.  0, or -1 when
 * out of memory (the trace map is then not attached). */
static int attach_vm(lua_State *L)
{
  if (ljp__cap_symbols_init() != 0 || ljp__cap_symbols_unsafe_setup() != 0 ||
      ljp__cap_ids_init(L) != 0)
    return -1;
  find_entries();
  ljp__cap_traces_attach(L);
  /* Traces compiled before start are unknown to the map: flush them so
   * every trace that runs is seen by the handler above. */
  luaJIT_setmode(L, 0, LUAJIT_MODE_ENGINE | LUAJIT_MODE_FLUSH);
  return 0;
}

/* The stream's writer and header, written now: an unusable destination
 * fails the start.  LJP_CAPTURE_SUCCESS (also when only counting: no
 * stream), ERRMEM, or ERRIO with the writer's errno in *err. */
static int open_output(const struct ljp_capture_options *o, int *err)
{
  if (o->mode == LJP_CAPTURE_DEFAULT)
    return LJP_CAPTURE_SUCCESS;
  cap_S.w = ljp_writer_new(sink, o->ctx, o->len);
  if (!cap_S.w)
    return LJP_CAPTURE_ERRMEM;
  ljp_write_symtab_begin(cap_S.w, 3, 0);
  ljp_write_symtab_end(cap_S.w);
  if (cap_S.use_vm)
    ljp__cap_encode_begin(cap_S.w);
  else
    ljp_write_stream_begin(cap_S.w, LJP_KIND_SYSPROF, 2,
                           (ljp_flavor)ljp_capture_flavor(), 0);
  if (ljp_writer_flush(cap_S.w) != LJP_OK) {
    *err = cap_S.writer_errno;
    return LJP_CAPTURE_ERRIO;
  }
  return LJP_CAPTURE_SUCCESS;
}

/* Starts the clock and the timer, and watches the VM's closing. */
static int arm(lua_State *L, const struct ljp_capture_options *o,
               uint64_t period_us)
{
  ljp__cap_backtracer_warmup();
  cap_S.t_mono0 = ljp__cap_now_ns(CLOCK_MONOTONIC);
  ljp__cap_encode_reset();
  cap_S.session++;
  cap_S.running = 1;
  int st = ljp__cap_signal_arm(L, o->timer, period_us);
  if (st != LJP_CAPTURE_SUCCESS) {
    cap_S.running = 0;
    return st;
  }
  sentinel_set(L, 1);
  return LJP_CAPTURE_SUCCESS;
}

int ljp_capture_start(lua_State *L, const struct ljp_capture_options *o)
{
  if (!L || !o)
    return LJP_CAPTURE_ERRUSE;
  int st = check_start(o);
  if (st)
    return st;
  uint64_t period_us = start_period_us(o);
  reset_state(L, o, period_us);
  if (ring_alloc(o) != 0)
    return fail_start(o, LJP_CAPTURE_ERRMEM);
  host_unwinder(o);
  ring_touch();
  if (attach_vm(L) != 0)
    return fail_start(o, LJP_CAPTURE_ERRMEM);
  int err = -1;           /* the writer's errno when the header failed */
  st = open_output(o, &err);
  if (st == LJP_CAPTURE_SUCCESS)
    st = arm(L, o, period_us);
  if (st != LJP_CAPTURE_SUCCESS) {
    ljp__cap_traces_detach(L);
    st = fail_start(o, st);
    if (err >= 0)
      errno = err;
  }
  return st;
}

static void snapshot(struct ljp_capture_counters *c, uint64_t elapsed)
{
  *c = cap_S.c;
  c->ticks = atomic_load(&cap_S.ticks);
  c->foreign = atomic_load(&cap_S.foreign);
  c->dropped = atomic_load(&cap_S.dropped);
  c->handler_ns = atomic_load(&cap_S.handler_ns);
  c->unwind_faults = atomic_load(&cap_S.unwind_faults);
  c->elapsed_ns = elapsed;
  c->rate_hz = elapsed ? (double)c->ticks * 1e9 / (double)elapsed : 0.0;
  c->vm_reader = cap_S.use_vm;
}

int ljp__cap_stop_internal(lua_State *L, int closing)
{
  int status = LJP_CAPTURE_SUCCESS, e = 0;
  uint64_t elapsed;

  if (!cap_S.running)
    return LJP_CAPTURE_ERRRUN;
  if (!closing && vm_of(L) != cap_S.vm)
    return LJP_CAPTURE_ERRUSE;
  elapsed = ljp__cap_now_ns(cap_S.clock) - cap_S.t_start;
  /* While the VM closes, LuaJIT has stopped its profiler already and the
   * call below does nothing; from atexit it still runs. */
  ljp__cap_signal_disarm(L);
  if (!closing) {
    ljp__cap_traces_detach(L);
    ljp__cap_core_enter();
    ljp__cap_names_refresh(L);
    ljp__cap_core_leave();
  }
  ljp__cap_flush_pending();
  cap_S.running = 0;
  cap_S.drained_pending = 0;
  snapshot(&cap_S.c, elapsed);
  if (cap_S.w) {
    ljp_write_stream_end(cap_S.w);
    ljp__cap_note_writer();
  }
  if (cap_S.writer_failed) {
    status = LJP_CAPTURE_ERRIO;
    e = cap_S.writer_errno;
  }
  if (cap_S.on_stop && cap_S.on_stop(cap_S.ctx, cap_S.buf) != 0 &&
      status == LJP_CAPTURE_SUCCESS) {
    status = LJP_CAPTURE_ERRIO;
    e = errno;
  }
  release();
  if (!closing)
    sentinel_set(L, 0);
  if (status != LJP_CAPTURE_SUCCESS)
    errno = e;
  return status;
}

int ljp_capture_stop(lua_State *L)
{
  if (!cap_S.running)
    return LJP_CAPTURE_ERRRUN;
  if (!L)
    return LJP_CAPTURE_ERRUSE;
  return ljp__cap_stop_internal(L, 0);
}

int ljp_capture_report(struct ljp_capture_counters *c)
{
  if (!c)
    return LJP_CAPTURE_ERRUSE;
  if (cap_S.running)
    snapshot(c, ljp__cap_now_ns(cap_S.clock) - cap_S.t_start);
  else
    *c = cap_S.c;
  return LJP_CAPTURE_SUCCESS;
}

int ljp_capture_drain(lua_State *L)
{
  if (!cap_S.running)
    return LJP_CAPTURE_ERRRUN;
  if (!L || vm_of(L) != cap_S.vm)
    return LJP_CAPTURE_ERRUSE;
  /* The host's event loop may run Lua: name C functions of modules
   * required since start (rate-limited), before the samples are named. */
  ljp__cap_core_enter();
  ljp__cap_names_refresh(L);
  ljp__cap_core_leave();
  ljp__cap_flush_pending();
  return LJP_CAPTURE_SUCCESS;
}
