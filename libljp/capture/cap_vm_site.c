/*
 * cap_vm_site.c — the source of an allocation, read from LuaJIT's own
 * structures from inside the allocator, as Tarantool's memprof attributes
 * it (FORMATS.md §4.6): a trace by number, the current line of a Lua
 * function, a C function, or INTERNAL.
 *
 * Facts used (LuaJIT 2.1, x86-64; lj_frame.h, lj_debug.c, lj_jit.h,
 * vm_x64.dasc):
 * - Before the interpreter calls anything that may allocate (lj_tab_new,
 *   lj_str_new, the GC step, metamethods, C functions) it stores BASE in
 *   L->base and the PC of the next instruction in the C frame's PC slot
 *   (SAVE_PC); so inside the allocator L->base - 1 is the innermost frame
 *   and, for a Lua function, cframe_pc(L->cframe) - 1 its current
 *   bytecode.  A saved PC equal to the C frame's L means "no PC yet"
 *   (lj_debug.c debug_framepc): that allocation is INTERNAL, as in
 *   Tarantool for a negative line.
 * - A builtin (fast function) called from Lua names its caller: its link
 *   is the return PC into the caller.
 * - Line numbers: lineinfo holds one entry per instruction after the
 *   function header, 8, 16 or 32 bits wide by numline (lj_debug_line).
 * - The jit_State follows the global_State in GG_State; J->trace is a
 *   plain pointer to an array of GCRef indexed by trace number.  OpenResty
 *   appends 8 bytes to global_State, which moves the jit_State.
 * Stock LuaJIT keeps one VM state for all interpreted code (INTERP), so
 * INTERP and C both mean "look at the innermost frame"; GC, EXIT, RECORD,
 * OPT and ASM are INTERNAL, as in Tarantool.
 */
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "cap_vm_raw.h"
#include "ljp.h"

enum { GCT_TRACE = 9 };
#define FRAME_LUA 0

/* Offsets of the builds (taken from the sources with offsetof). */
static const cap_vm_sitelayout site_gc64 = {
  .off_cf_pc = 24, .off_pt_lineinfo = 80,
  .off_J = 728, .off_J_trace = 384, .off_J_sizetrace = 396,
  .off_T_startpt = 64, .off_T_startpc = 72, .off_T_traceno = 104
};
static const cap_vm_sitelayout site_gc32 = {
  .off_cf_pc = 28, .off_pt_lineinfo = 52,
  .off_J = 488, .off_J_trace = 360, .off_J_sizetrace = 372,
  .off_T_startpt = 48, .off_T_startpc = 52, .off_T_traceno = 80
};
/* OpenResty's global_State is 8 bytes longer in both layouts. */
#define OPENRESTY_G_EXTRA 8

uint32_t ljp__cap_vm_site_line(const cap_vm *vm, const cap_vm_sitelayout *sl,
                               uint64_t pt, uint64_t pos)
{
  uint64_t li = rdref(vm, pt + sl->off_pt_lineinfo);
  uint32_t first = rd32(pt + vm->off_pt_firstline);
  uint32_t numline = rd32(pt + vm->off_pt_numline);
  uint32_t sizebc = rd32(pt + vm->off_pt_sizebc);
  if (pos > sizebc || !li)
    return 0;
  if (pos == sizebc)
    return first + numline;
  if (pos == 0)
    return first;
  pos--;
  if (numline < 256)
    return first + rd8(li + pos);
  if (numline < 65536)
    return first + (uint32_t)(*(const volatile uint16_t *)(uintptr_t)(li + 2 * pos));
  return first + rd32(li + 4 * pos);
}

/* The function in the frame whose link slot is at f, 0 when none (the
 * dummy frame of a thread holds the thread). */
static uint64_t frame_fn(const cap_vm *vm, uint64_t f)
{
  uint64_t fn;
  if (vm->gc64) {
    uint64_t tv = rd64(f - 8);
    if (((int64_t)tv >> 47) != ITYPE_FUNC)
      return 0;
    fn = tv & PTR47;
  } else {
    fn = rd32(f);
  }
  return is_gcobj(vm, fn, GCT_FUNC) ? fn : 0;
}

/* The bytecode position after the instruction before pc in prototype pt
 * (proto_bcpos(pc) - 1), or -1 when pc is not inside its bytecode. */
static int64_t pc_pos(const cap_vm *vm, uint64_t pt, uint64_t pc)
{
  uint64_t bc = pt + vm->sizeof_proto;
  uint64_t sizebc = rd32(pt + vm->off_pt_sizebc);
  if ((pc & 3) != 0 || pc <= bc || pc > bc + 4 * sizebc)
    return -1;
  return (int64_t)((pc - bc) / 4) - 1;
}

static void set_lfunc(const cap_vm *vm, const cap_vm_sitelayout *sl,
                      uint64_t pt, int64_t pos, cap_vm_site *out)
{
  uint64_t chunk = rdref(vm, pt + vm->off_pt_chunkname);
  if (pos < 0 || !is_gcobj(vm, chunk, GCT_STR))
    return;                               /* stays INTERNAL */
  out->source = CAP_SITE_LFUNC;
  out->addr = pt;
  out->chunk = chunk;
  out->firstline = rd32(pt + vm->off_pt_firstline);
  out->line = ljp__cap_vm_site_line(vm, sl, pt, (uint64_t)pos);
}

CAP_VM_RAW void ljp__cap_vm_site_read(const cap_vm *vm,
                                      const cap_vm_sitelayout *sl,
                                      cap_vm_site *out)
{
  uint64_t g, L, base, f, fn;
  int32_t st;
  uint8_t ffid;
  memset(out, 0, sizeof *out);
  out->source = CAP_SITE_INT;
  if (!vm || !vm->ok || !sl || !sl->ok)
    return;
  g = vm->g;
  st = (int32_t)rd32(g + vm->off_g_vmstate);
  if (st >= 0) {
    out->source = CAP_SITE_TRACE;
    out->addr = (uint64_t)st;
    return;
  }
  if (st != CAP_VMST_INTERP && st != CAP_VMST_C)
    return;
  L = rdref(vm, g + vm->off_g_cur_L);
  if (!is_gcobj(vm, L, GCT_THREAD) || rdref(vm, L + vm->off_L_glref) != g)
    return;
  base = rd64(L + vm->off_L_base);
  f = base - 8;
  if ((base & 7) != 0 || base <= rdref(vm, L + vm->off_L_stack) + 16 ||
      base > rdref(vm, L + vm->off_L_maxstack) + 80)
    return;
  if (!(fn = frame_fn(vm, f)))
    return;
  ffid = rd8(fn + vm->off_fn_ffid);
  if (ffid == FF_LUA) {
    uint64_t pt = fn_proto(vm, fn);
    uint64_t cf = rd64(L + vm->off_L_cframe) & ~UINT64_C(3);
    uint64_t pc;
    if (!pt || !cf || (cf & 7) != 0)
      return;
    pc = rdref(vm, cf + sl->off_cf_pc);
    if (pc == rdref(vm, cf + vm->off_cf_L))
      return;
    set_lfunc(vm, sl, pt, pc_pos(vm, pt, pc), out);
  } else if (ffid == FF_C) {
    out->source = CAP_SITE_CFUNC;
    out->addr = rd64(fn + vm->off_fn_cf);
  } else {
    /* A builtin: its Lua caller, when the link is a return PC into one. */
    int64_t link = vm->gc64 ? (int64_t)rd64(f)
                            : (int64_t)(int32_t)(rd64(f) >> 32);
    if ((link & 3) == FRAME_LUA) {
      uint64_t pc = vm->gc64 ? (uint64_t)link : (uint32_t)link;
      uint64_t nf, cfn, pt;
      if (pc < 4096 || pc >= (UINT64_C(1) << 47))
        return;
      nf = f - 8u * (1u + (uint64_t)vm->gc64 + ((rd32(pc - 4) >> 8) & 0xff));
      if (nf >= f || !(cfn = frame_fn(vm, nf)) ||
          rd8(cfn + vm->off_fn_ffid) != FF_LUA || !(pt = fn_proto(vm, cfn)))
        return;
      set_lfunc(vm, sl, pt, pc_pos(vm, pt, pc), out);
    } else {
      out->source = CAP_SITE_CFUNC;
      out->ffid = ffid;
      out->addr = rd64(fn + vm->off_fn_cf);
    }
  }
}

CAP_VM_RAW int ljp__cap_vm_site_trace(const cap_vm *vm,
                                      const cap_vm_sitelayout *sl,
                                      uint32_t traceno, cap_vm_trace *out)
{
  uint64_t J, arr, T, pt, pc, chunk, bc;
  uint32_t size;
  memset(out, 0, sizeof *out);
  if (!vm || !vm->ok || !sl || !sl->ok || traceno == 0)
    return 0;
  J = vm->g + sl->off_J;
  arr = rd64(J + sl->off_J_trace);
  size = rd32(J + sl->off_J_sizetrace);
  if (!arr || (arr & 3) != 0 || traceno >= size || size > (1u << 20))
    return 0;
  T = vm->gc64 ? rd64(arr + 8u * traceno) : rd32(arr + 4u * traceno);
  if (!is_gcobj(vm, T, GCT_TRACE) ||
      (rd32(T + sl->off_T_traceno) & 0xffff) != traceno)
    return 0;
  pt = rdref(vm, T + sl->off_T_startpt);
  if (!is_gcobj(vm, pt, GCT_PROTO))
    return 0;
  chunk = rdref(vm, pt + vm->off_pt_chunkname);
  if (!is_gcobj(vm, chunk, GCT_STR))
    return 0;
  pc = rdref(vm, T + sl->off_T_startpc);
  bc = pt + vm->sizeof_proto;
  out->T = T;
  out->proto = pt;
  out->chunk = chunk;
  out->firstline = rd32(pt + vm->off_pt_firstline);
  out->line = pc >= bc ? ljp__cap_vm_site_line(vm, sl, pt, (pc - bc) / 4)
                       : out->firstline;
  return 1;
}

/* ---- the probe ---------------------------------------------------------- */

#define PROBE_MAX 4096

typedef struct probe_state {
  lua_Alloc f;
  void *ud;
  const cap_vm *vm;
  const cap_vm_sitelayout *sl;
  cap_vm_site sites[PROBE_MAX];
  size_t n;
  uint32_t getinfo_line, reader_line;  /* seen by the C function */
} probe_state;

static probe_state *P;

static void *probe_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
  void *np = P->f(ud, ptr, osize, nsize);
  if (nsize != 0 && P->n < PROBE_MAX)
    ljp__cap_vm_site_read(P->vm, P->sl, &P->sites[P->n++]);
  return np;
}

/* Called from the probe chunk: allocates a userdata (a CFUNC site) and
 * reads its caller's current line both ways. */
static int probe_cfunc(lua_State *L)
{
  lua_Debug ar;
  cap_vm_site s;
  const cap_vm *vm = P->vm;
  uint64_t L_ = (uint64_t)(uintptr_t)L;
  uint64_t base = rd64(L_ + vm->off_L_base), f = base - 8;
  int64_t link = vm->gc64 ? (int64_t)rd64(f)
                          : (int64_t)(int32_t)(rd64(f) >> 32);
  lua_newuserdata(L, 16);
  if (lua_getstack(L, 1, &ar) && lua_getinfo(L, "l", &ar))
    P->getinfo_line = (uint32_t)ar.currentline;
  /* The C function's link is the return PC into its Lua caller. */
  if ((link & 3) == FRAME_LUA) {
    uint64_t pc = vm->gc64 ? (uint64_t)link : (uint32_t)link;
    uint64_t nf = f - 8u * (1u + (uint64_t)vm->gc64 +
                            ((rd32(pc - 4) >> 8) & 0xff));
    uint64_t cfn = frame_fn(vm, nf), pt = cfn ? fn_proto(vm, cfn) : 0;
    int64_t pos = pt ? pc_pos(vm, pt, pc) : -1;
    if (pos >= 0)
      P->reader_line = ljp__cap_vm_site_line(vm, P->sl, pt, (uint64_t)pos);
  }
  ljp__cap_vm_site_read(vm, P->sl, &s);
  if (s.source != CAP_SITE_CFUNC ||
      s.addr != (uint64_t)(uintptr_t)probe_cfunc)
    P->reader_line = 0;
  lua_pop(L, 1);
  return 0;
}

/* Lines 2, 4 and 5 allocate (a table, string.rep's result, tables in a
 * loop the JIT compiles); line 3 calls probe_cfunc. */
static const char probe_code[] =
  "local f = ...\n"
  "local t = {}\n"
  "f()\n"
  "local s = string.rep('x', 300)\n"
  "for i = 1, 300 do t[i] = {i} end\n"
  "return s, t\n";

static int fail(char *err, size_t errlen, const char *msg)
{
  snprintf(err, errlen, "%s", msg);
  return -1;
}

int ljp__cap_vm_site_probe(lua_State *L, const cap_vm *vm,
                           cap_vm_sitelayout *sl,
                           char *err, size_t errlen)
{
  static probe_state ps;
  int top = lua_gettop(L), rc, seen2 = 0, seen4 = 0, bad = 0;
  uint32_t traceno = 0;
  uint64_t pt;
  size_t i;
  if (!vm || !vm->ok)
    return fail(err, errlen, "the VM's layout is not known");
  *sl = vm->gc64 ? site_gc64 : site_gc32;
  if (vm->flavor == LJP_FLAVOR_OPENRESTY)
    sl->off_J += OPENRESTY_G_EXTRA;
  sl->ok = 1;
  if (luaL_loadbuffer(L, probe_code, sizeof probe_code - 1, "=ljp_site_probe"))
    return lua_settop(L, top), fail(err, errlen, "the probe did not load");
  pt = fn_proto(vm, (uint64_t)(uintptr_t)lua_topointer(L, -1));
  memset(&ps, 0, sizeof ps);
  P = &ps;
  ps.vm = vm;
  ps.sl = sl;
  ps.f = lua_getallocf(L, &ps.ud);
  lua_pushcfunction(L, probe_cfunc);
  lua_setallocf(L, probe_alloc, ps.ud);
  rc = lua_pcall(L, 1, 2, 0);
  lua_setallocf(L, ps.f, ps.ud);
  lua_settop(L, top);
  P = NULL;
  sl->ok = 0;
  if (rc != 0 || !pt)
    return fail(err, errlen, "the probe chunk failed");
  for (i = 0; i < ps.n; i++) {
    const cap_vm_site *s = &ps.sites[i];
    if (s->source == CAP_SITE_LFUNC && s->addr == pt) {
      if (s->line == 2)
        seen2 = 1;
      else if (s->line == 4)
        seen4 = 1;
      else if (s->line != 5)
        bad = 1;
    } else if (s->source == CAP_SITE_TRACE && !traceno) {
      traceno = (uint32_t)s->addr;
    }
  }
  if (bad || !seen2 || !seen4)
    return fail(err, errlen, "allocations are not attributed to their lines");
  if (ps.getinfo_line != 3 || ps.reader_line != 3)
    return fail(err, errlen,
                "the current line disagrees with lua_getinfo(\"l\")");
  sl->ok = 1;
  if (traceno) {
    cap_vm_trace t;
    sl->traces = ljp__cap_vm_site_trace(vm, sl, traceno, &t) && t.proto == pt &&
                 t.line == 5;
    if (!sl->traces) {
      sl->ok = 0;
      return fail(err, errlen, "the JIT's trace array is not where expected");
    }
  }
  return 0;
}
