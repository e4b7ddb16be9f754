/*
 * cap_mem.c — the memory profiler: a wrapper around the state's allocator
 * that records every allocator call with its source, and its lifecycle
 * (start, stop, report, and lua_close while running).
 *
 * The wrapper calls the host's allocator first and records afterwards, so
 * the host's allocator does all the work and keeps its guarantees: under
 * non-GC64 builds LuaJIT's objects must lie below 4 GiB (32-bit
 * references), which LuaJIT's own allocator ensures; GC64 builds take any
 * 47-bit address.  The wrapper never calls Lua and never allocates through
 * the state.  An allocation the writer itself causes (a writer that calls
 * into the state, against the contract) is held back and written after
 * the writer returns, never from inside the writer call.
 *
 * lua_close: LuaJIT runs every finaliser before it frees the state, so a
 * userdata kept in the registry, whose __gc stops the profiler, completes
 * the stream and gives the allocator back before the state is torn down
 * (LuaJIT frees its own arena only when its own allocator is installed).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "cap_mem.h"
#include "cap_vm_raw.h"
#include "ljp.h"

cap_mem_state ljp__cap_M = {.sentinel_ref = LUA_NOREF};
#define M ljp__cap_M

#define BUF_MIN 1024

static char mem_err[160];
/* The allocation-reader layout proven for the VM of g (probed once). */
static uint64_t probed_g;
static cap_vm_sitelayout probed_sl;
static int probed_ok;
static char probed_err[160];

static void record(uint8_t kind, void *ptr, size_t osize, void *np,
                   size_t nsize)
{
  cap_mem_event e;
  e.kind = kind;
  e.oaddr = (uint64_t)(uintptr_t)ptr;
  e.osize = osize;
  e.naddr = (uint64_t)(uintptr_t)np;
  e.nsize = nsize;
  ljp__cap_vm_site_read(&M.vm, &M.sl, &e.site);
  /* The assembler allocates every new trace (lj_trace_alloc): the trace
   * symbols checked so far are checked again (cap_mem_out.c). */
  if (e.site.source == CAP_SITE_INT && M.sl.ok &&
      (int32_t)rd32(M.vm.g + M.vm.off_g_vmstate) == CAP_VMST_ASM &&
      ++M.trace_gen == 0)
    M.trace_gen = 1;
  M.c.events++;
  if (kind == LJP_MEM_ALLOC) {
    M.c.allocs++;
    M.c.bytes_allocated += nsize;
  } else if (kind == LJP_MEM_FREE) {
    M.c.frees++;
    M.c.bytes_freed += osize;
  } else {
    M.c.reallocs++;
    M.c.bytes_allocated += nsize;
    M.c.bytes_freed += osize;
  }
  if (M.in_flush) {
    /* The writer caused it: written once the writer has returned. */
    if (M.nheld < CAP_MEM_HELD)
      M.held[M.nheld++] = e;
    else
      M.c.dropped++;
    return;
  }
  if (M.halted) {
    M.c.dropped++;
    return;
  }
  ljp__cap_mem_out_event(&e);
  /* Events held back during a flush this event caused. */
  while (M.nheld > 0 && !M.in_flush) {
    cap_mem_event h[CAP_MEM_HELD];
    unsigned i, n = M.nheld;
    memcpy(h, M.held, n * sizeof h[0]);
    M.nheld = 0;
    for (i = 0; i < n; i++) {
      if (M.halted)
        M.c.dropped++;
      else
        ljp__cap_mem_out_event(&h[i]);
    }
  }
}

/* The allocator the state uses while profiling (lua_Alloc contract:
 * ptr == NULL allocates, nsize == 0 frees, else reallocates).  Every call
 * is recorded as Tarantool's memprof records it, failed ones included. */
static void *mem_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
  void *np = M.orig_f(ud, ptr, osize, nsize);
  uint8_t kind;
  if (!M.running || M.in_hook)
    return np;
  kind = nsize == 0 ? LJP_MEM_FREE : ptr == NULL ? LJP_MEM_ALLOC
                                                   : LJP_MEM_REALLOC;
  M.in_hook = 1;
  record(kind, ptr, osize, np, nsize);
  M.in_hook = 0;
  return np;
}

/* Ends the run: the allocator back (when it is still ours), the epilogue,
 * on_stop.  Returns the status stop reports. */
static int finish(lua_State *L)
{
  void *ud;
  int rc = LJP_CAPTURE_SUCCESS, saved;
  if (lua_getallocf(L, &ud) == mem_alloc)
    lua_setallocf(L, M.orig_f, M.orig_ud);
  M.running = 0;
  ljp__cap_mem_out_end();
  if (M.halted)
    rc = LJP_CAPTURE_ERRIO;
  saved = M.err_no;
  if (M.opt.on_stop(M.opt.ctx, M.opt.buf) != 0)
    rc = LJP_CAPTURE_ERRIO;
  ljp__cap_mem_out_free();
  ljp__cap_mem_names_free();
  if (M.sentinel_ref != LUA_NOREF && !M.closing)
    luaL_unref(L, LUA_REGISTRYINDEX, M.sentinel_ref);
  M.sentinel_ref = LUA_NOREF;
  M.L = NULL;
  if (rc == LJP_CAPTURE_ERRIO && saved)
    errno = saved;
  return rc;
}

/* __gc of the sentinel: lua_close while running stops the profiler. */
static int on_close(lua_State *L)
{
  const uint64_t *gen = lua_touserdata(L, 1);
  if (gen && M.running && *gen == M.gen) {
    M.closing = 1;
    finish(L);
    M.closing = 0;
  }
  return 0;
}

static int put_sentinel(lua_State *L)
{
  uint64_t *gen = lua_newuserdata(L, sizeof *gen);
  *gen = M.gen;
  lua_newtable(L);
  lua_pushcfunction(L, on_close);
  lua_setfield(L, -2, "__gc");
  lua_setmetatable(L, -2);
  M.sentinel_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  return M.sentinel_ref == LUA_REFNIL || M.sentinel_ref == LUA_NOREF ? -1 : 0;
}

/* The VM reader for L's VM: the frame layout (ljp__cap_vm_probe) and the
 * allocation reader (ljp__cap_vm_site_probe), proven once per VM. */
static void setup_reader(lua_State *L)
{
  char err[160] = "";
  cap_vm vm;
  memset(&vm, 0, sizeof vm);
  if (ljp__cap_vm_probe(L, &vm, err, sizeof err) != 0) {
    memset(&M.vm, 0, sizeof M.vm);
    memset(&M.sl, 0, sizeof M.sl);
    snprintf(mem_err, sizeof mem_err, "%s", err);
    return;
  }
  if (probed_g != vm.g) {
    probed_ok = ljp__cap_vm_site_probe(L, &vm, &probed_sl, probed_err,
                                       sizeof probed_err) == 0;
    probed_g = vm.g;
  }
  M.vm = vm;
  M.sl = probed_sl;
  if (!probed_ok) {
    memset(&M.sl, 0, sizeof M.sl);
    snprintf(mem_err, sizeof mem_err, "%s", probed_err);
  }
}

int ljp_memprof_start(lua_State *L, const struct ljp_memprof_options *opt)
{
  void *ud;
  if (!L || !opt || !opt->writer || !opt->on_stop || !opt->buf ||
      opt->len < BUF_MIN)
    return LJP_CAPTURE_ERRUSE;
  if (M.running)
    return LJP_CAPTURE_ERRRUN;
  mem_err[0] = '\0';
  memset(&M.c, 0, sizeof M.c);
  M.opt = *opt;
  M.pos = 0;
  M.unflushed = 0;
  M.halted = 0;
  M.err_no = 0;
  M.nheld = 0;
  M.in_flush = M.in_hook = 0;
  M.trace_gen = 1;
  M.gen++;
  setup_reader(L);
  M.c.vm_reader = M.sl.ok;
  ljp__cap_mem_names_scan(L);
  M.L = L;
  M.g = M.vm.g;
  if (put_sentinel(L) != 0) {
    opt->on_stop(opt->ctx, opt->buf);
    return LJP_CAPTURE_ERRMEM;
  }
  if (ljp__cap_mem_out_begin() != 0) {
    int saved = M.err_no;
    luaL_unref(L, LUA_REGISTRYINDEX, M.sentinel_ref);
    M.sentinel_ref = LUA_NOREF;
    opt->on_stop(opt->ctx, opt->buf);
    errno = saved;
    return LJP_CAPTURE_ERRIO;
  }
  M.orig_f = lua_getallocf(L, &ud);
  M.orig_ud = ud;
  M.running = 1;
  lua_setallocf(L, mem_alloc, ud);
  return LJP_CAPTURE_SUCCESS;
}

/* L belongs to the profiled VM: its global_State when the layout is
 * known, else its allocator. */
static int same_vm(lua_State *L)
{
  void *ud;
  if (M.vm.ok) {
    uint64_t a = (uint64_t)(uintptr_t)L + M.vm.off_L_glref;
    uint64_t g = M.vm.gc64 ? *(const uint64_t *)(uintptr_t)a
                           : *(const uint32_t *)(uintptr_t)a;
    return g == M.g;
  }
  return lua_getallocf(L, &ud) == mem_alloc && ud == M.orig_ud;
}

int ljp_memprof_stop(lua_State *L)
{
  if (!M.running)
    return LJP_CAPTURE_ERRRUN;
  if (!L || !same_vm(L))
    return LJP_CAPTURE_ERRUSE;
  return finish(L);
}

void ljp__cap_mem_stop_at_exit(void)
{
  if (!M.running)
    return;
  M.running = 0;
  ljp__cap_mem_out_end();
  M.opt.on_stop(M.opt.ctx, M.opt.buf);
}

int ljp_memprof_report(struct ljp_memprof_counters *c)
{
  if (!c)
    return LJP_CAPTURE_ERRUSE;
  *c = M.c;
  return LJP_CAPTURE_SUCCESS;
}

int ljp_memprof_running(void)
{
  return M.running;
}

const char *ljp_memprof_error(void)
{
  return mem_err;
}
