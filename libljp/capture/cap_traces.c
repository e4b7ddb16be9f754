/*
 * cap_traces.c — which JIT trace owns a machine-code address.
 *
 * LuaJIT's profiler reports 'N' (native code) but throws the trace number
 * away, and the public API cannot ask which trace ran.  A C handler attached
 * with jit.attach(h, "trace") sees every trace start (start function and pc,
 * from which jit.util.funcinfo gives the start line) and every trace stop
 * (jit.util.tracemc gives the machine-code address and size).  The tick's PC,
 * or one of its first host frames (a helper called from the trace), is then
 * looked up in these ranges at the safe point.  The map is only touched on
 * the VM thread: vmevent handlers and the safe point.  A flush clears it.
 */
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "cap_internal.h"
#include "cap_names.h"

typedef struct pending {
  uint64_t proto, line, firstline;
  int valid;
} pending;

static cap_trace *tr;          /* sorted by lo */
static size_t ntr, captr;
static pending *pend;          /* indexed by trace number */
static size_t npend;
static int handler_ref = LUA_NOREF;

static void remove_traceno(uint32_t no)
{
  size_t i;
  for (i = 0; i < ntr; i++)
    if (tr[i].traceno == no) {
      memmove(&tr[i], &tr[i + 1], (ntr - i - 1) * sizeof *tr);
      ntr--;
      return;
    }
}

static void insert(const cap_trace *t)
{
  size_t i;
  remove_traceno(t->traceno);
  if (ntr == captr) {
    size_t nc = captr ? captr * 2 : 64;
    cap_trace *n = realloc(tr, nc * sizeof *n);
    if (!n)
      return;            /* the trace stays unknown: its ticks become LFUNC */
    tr = n;
    captr = nc;
  }
  for (i = ntr; i > 0 && tr[i - 1].lo > t->lo; i--)
    tr[i] = tr[i - 1];
  tr[i] = *t;
  ntr++;
}

cap_trace *ljp__cap_traces_find(uint64_t pc)
{
  size_t lo = 0, hi = ntr;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (tr[mid].lo <= pc)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo > 0 && pc < tr[lo - 1].hi)
    return &tr[lo - 1];
  return NULL;
}

cap_trace *ljp__cap_traces_by_no(uint32_t traceno)
{
  size_t i;
  for (i = 0; i < ntr; i++)
    if (tr[i].traceno == traceno)
      return &tr[i];
  return NULL;
}

static int on_trace_core(lua_State *L);

/* jit.attach handler: ("start", tr, func, pc, parent, exitno),
 * ("stop", tr, func), ("abort", ...), ("flush").  Upvalues: funcinfo,
 * tracemc.  Must not raise: errors of the helpers are swallowed.
 * It is the capture core's own code (see in_core).  From a trace's start
 * to its end the signal handler does not unwind, and when the compile ends
 * one unwind-table lookup here makes libgcc index a machine-code area
 * LuaJIT registered meanwhile, outside the signal handler. */
static int on_trace(lua_State *L)
{
  const char *what = lua_tostring(L, 1);
  int started = what && strcmp(what, "start") == 0;
  int ended = what && (strcmp(what, "stop") == 0 ||
                       strcmp(what, "abort") == 0 ||
                       strcmp(what, "flush") == 0);
  ljp__cap_core_enter();
  /* Ticks read at the signal name their trace by number: write them
   * while the map still describes the traces they ran in. */
  if (cap_S.use_vm && what && strcmp(what, "flush") == 0)
    ljp__cap_flush_pending();
  if (started)
    cap_S.compiling = 1;
  on_trace_core(L);
  if (ended) {
    ljp__cap_unwind_settle();
    cap_S.compiling = 0;
  }
  /* Lua may run here: name C functions of modules required since start
   * (rate-limited; only after a frame went unnamed). */
  lua_settop(L, 0);
  ljp__cap_names_refresh(L);
  ljp__cap_core_leave();
  return 0;
}

int ljp__cap_traces_attached(void)
{
  return handler_ref != LUA_NOREF;
}

/* What on_trace does with each event: the trace map. */
static int on_trace_core(lua_State *L)
{
  const char *what = lua_tostring(L, 1);
  int no = (int)lua_tointeger(L, 2);
  if (!what)
    return 0;
  if (strcmp(what, "flush") == 0) {
    ntr = 0;
    return 0;
  }
  if (no <= 0 || no > 1 << 20)
    return 0;
  if ((size_t)no >= npend) {
    size_t nn = (size_t)no * 2 + 16;
    pending *n = realloc(pend, nn * sizeof *n);
    if (!n)
      return 0;
    memset(n + npend, 0, (nn - npend) * sizeof *n);
    pend = n;
    npend = nn;
  }
  if (strcmp(what, "start") == 0) {
    lua_Debug ar;
    pending *p = &pend[no];
    memset(p, 0, sizeof *p);
    if (!lua_isfunction(L, 3))
      return 0;
    lua_pushvalue(L, 3);
    if (!lua_getinfo(L, ">S", &ar))
      return 0;
    p->proto = ljp__cap_ids_lfunc(ar.source, ar.linedefined);
    p->firstline = ar.linedefined > 0 ? (uint64_t)ar.linedefined : 0;
    p->line = p->firstline;
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_pushvalue(L, 3);
    lua_pushvalue(L, 4);
    if (lua_pcall(L, 2, 1, 0) == 0 && lua_istable(L, -1)) {
      lua_getfield(L, -1, "currentline");
      if (lua_isnumber(L, -1) && lua_tointeger(L, -1) > 0)
        p->line = (uint64_t)lua_tointeger(L, -1);
    }
    lua_settop(L, 0);
    p->valid = p->proto != 0;
  } else if (strcmp(what, "stop") == 0) {
    pending *p = &pend[no];
    cap_trace t;
    if (!p->valid)
      return 0;
    lua_pushvalue(L, lua_upvalueindex(2));
    lua_pushinteger(L, no);
    if (lua_pcall(L, 1, 2, 0) == 0 && lua_isstring(L, -2) &&
        lua_isnumber(L, -1)) {
      memset(&t, 0, sizeof t);
      t.lo = (uint64_t)lua_tonumber(L, -1);
      t.hi = t.lo + lua_objlen(L, -2);
      t.traceno = (uint32_t)no;
      t.proto = p->proto;
      t.line = p->line;
      t.firstline = p->firstline;
      if (t.hi > t.lo) {
        ljp__cap_signal_note_mcode(t.lo, t.hi);
        insert(&t);
        /* Host frames inside this machine code are named as the trace. */
        ljp__cap_tracenames_add(t.traceno, t.lo, t.hi, t.proto, t.line);
      }
    }
    lua_settop(L, 0);
    p->valid = 0;
  } else if (strcmp(what, "abort") == 0) {
    pend[no].valid = 0;
  }
  return 0;
}

/* Attaches the handler: jit.attach(h, "trace").  Returns 0, or -1 when the
 * jit modules are missing (then every tick is attributed by LuaJIT's state
 * alone). */
int ljp__cap_traces_attach(lua_State *L)
{
  int top = lua_gettop(L);
  lua_getglobal(L, "require");
  lua_pushliteral(L, "jit.util");
  if (lua_pcall(L, 1, 1, 0) != 0 || !lua_istable(L, -1))
    goto fail;
  lua_getfield(L, -1, "funcinfo");
  lua_getfield(L, -2, "tracemc");
  if (!lua_isfunction(L, -1) || !lua_isfunction(L, -2))
    goto fail;
  lua_pushcclosure(L, on_trace, 2);
  lua_pushvalue(L, -1);
  handler_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_getglobal(L, "require");
  lua_pushliteral(L, "jit");
  if (lua_pcall(L, 1, 1, 0) != 0 || !lua_istable(L, -1))
    goto fail;
  lua_getfield(L, -1, "attach");
  lua_pushvalue(L, -3);
  lua_pushliteral(L, "trace");
  if (lua_pcall(L, 2, 0, 0) != 0)
    goto fail;
  lua_settop(L, top);
  return 0;
fail:
  lua_settop(L, top);
  if (handler_ref != LUA_NOREF) {
    luaL_unref(L, LUA_REGISTRYINDEX, handler_ref);
    handler_ref = LUA_NOREF;
  }
  return -1;
}

/* jit.attach(h) detaches.  Not called while the VM closes. */
void ljp__cap_traces_detach(lua_State *L)
{
  int top;
  if (handler_ref == LUA_NOREF)
    return;
  top = lua_gettop(L);
  lua_getglobal(L, "require");
  lua_pushliteral(L, "jit");
  if (lua_pcall(L, 1, 1, 0) == 0 && lua_istable(L, -1)) {
    lua_getfield(L, -1, "attach");
    lua_rawgeti(L, LUA_REGISTRYINDEX, handler_ref);
    lua_pcall(L, 1, 0, 0);
  }
  lua_settop(L, top);
  luaL_unref(L, LUA_REGISTRYINDEX, handler_ref);
  handler_ref = LUA_NOREF;
}

void ljp__cap_traces_free(void)
{
  ljp__cap_signal_reset_mcode();
  free(tr);
  free(pend);
  tr = NULL;
  pend = NULL;
  ntr = captr = npend = 0;
  handler_ref = LUA_NOREF;
}
