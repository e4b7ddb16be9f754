/*
 * cap_vm_probe.c — proving cap_vm's layout tables and walker on the
 * running VM before the profiler relies on them: the layout is checked
 * against what a C function sees through the public API, the flavor is
 * told at run time, the interpreter's code range is found through its
 * unwind table, and walks of known stacks are compared with
 * lua_getstack/lua_getinfo frame by frame.
 */
#define _GNU_SOURCE 1   /* RTLD_DEFAULT */

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "cap_vm_raw.h"
#include "ljp.h"

/* ---- the interpreter's code range -------------------------------------- */

/* libgcc's FDE lookup (unwind-dw2-fde.h, exported by libgcc_s). */
struct dwarf_eh_bases {
  void *tbase, *dbase, *func;
};
extern const void *_Unwind_Find_FDE(void *pc, struct dwarf_eh_bases *bases);

static uint64_t uleb(const uint8_t **p)
{
  uint64_t v = 0;
  unsigned sh = 0;
  uint8_t b;
  do {
    b = *(*p)++;
    if (sh < 64)
      v |= (uint64_t)(b & 0x7f) << sh;
    sh += 7;
  } while (b & 0x80);
  return v;
}

/* Size of a DW_EH_PE value of format enc (low four bits), 0 if unknown. */
static size_t enc_size(uint8_t enc)
{
  switch (enc & 0x0f) {
  case 0x00: case 0x04: case 0x0c: return 8;
  case 0x03: case 0x0b: return 4;
  case 0x02: case 0x0a: return 2;
  default: return 0;
  }
}

/* The machine code [lo, hi) described by the FDE that covers pc.  The
 * VM's assembler emits one FDE for the whole interpreter (lj_vm_asm_begin
 * up to the FFI call helper), so any address inside it yields the range.
 * Only the pc_range is parsed; its format is the CIE's 'R' encoding. */
static int fde_range(uint64_t pc, uint64_t *lo, uint64_t *hi)
{
  struct dwarf_eh_bases bases;
  const uint8_t *fde = _Unwind_Find_FDE((void *)(uintptr_t)pc, &bases);
  const uint8_t *cie, *p;
  const char *aug;
  uint8_t renc = 0;
  uint32_t ciedelta;
  uint64_t range = 0;
  size_t sz;
  if (!fde || *(const uint32_t *)(const void *)fde == 0xffffffffu)
    return -1;
  memcpy(&ciedelta, fde + 4, 4);
  cie = fde + 4 - ciedelta;
  if (cie[8] != 1 && cie[8] != 3)
    return -1;
  aug = (const char *)cie + 9;
  p = (const uint8_t *)aug + strlen(aug) + 1;
  (void)uleb(&p);                          /* code alignment */
  (void)uleb(&p);                          /* data alignment (sleb) */
  if (cie[8] == 1)
    p++;
  else
    (void)uleb(&p);                        /* return address column */
  if (aug[0] == 'z') {
    const char *a;
    (void)uleb(&p);
    for (a = aug + 1; *a; a++) {
      if (*a == 'R') {
        renc = *p++;
      } else if (*a == 'L') {
        p++;
      } else if (*a == 'P') {
        uint8_t penc = *p++;
        if (!(sz = enc_size(penc)) || (penc & 0x70) == 0x50)
          return -1;
        p += sz;
      } else if (*a != 'S') {
        return -1;
      }
    }
  }
  if (!(sz = enc_size(renc)))
    return -1;
  /* pc_begin (same size), then pc_range as a plain value of that size. */
  p = fde + 8 + sz;
  if (sz == 8) {
    memcpy(&range, p, 8);
  } else if (sz == 4) {
    uint32_t r;
    memcpy(&r, p, 4);
    range = r;
  } else {
    uint16_t r;
    memcpy(&r, p, 2);
    range = r;
  }
  *lo = (uint64_t)(uintptr_t)bases.func;
  *hi = *lo + range;
  return (pc >= *lo && pc < *hi) ? 0 : -1;
}

/* ---- the probe ---------------------------------------------------------- */

typedef struct probe_ctx {
  cap_vm *vm;
  char *err;
  size_t errlen;
  int failed;
  int calls[5];           /* checks run, per scenario */
  int seen_cbound_mid;    /* a C boundary between two Lua frames */
  int seen_coro;          /* the coroutine's walk reached its resumer */
  lua_State *L;           /* the probing thread */
  uint64_t ra;            /* return address of a C call into the VM */
} probe_ctx;

#define PROBE_FAIL(c, ...) \
  do { \
    snprintf((c)->err, (c)->errlen, __VA_ARGS__); \
    (c)->failed = 1; \
  } while (0)

static const char *const scenario[] = {
  "?", "Lua a>b>c>C", "pcall(a)", "table.sort comparator", "coroutine"
};

/* Checks layout lay against the running C function's view through the
 * public API: 0 when everything agrees, else -1 with a message. */
static int check_layout(lua_State *L, const cap_vm *lay, const void *self,
                        lua_CFunction cf, char *msg, size_t len)
{
  uint64_t l = (uint64_t)(uintptr_t)L, g, base, top, stack, maxstack, fn, tv;
  if (!is_gcobj(lay, l, GCT_THREAD))
    return snprintf(msg, len, "lua_State has no thread type byte"), -1;
  g = rdref(lay, l + lay->off_L_glref);
  if (g < 4096 || (g & 7) != 0)
    return snprintf(msg, len, "lua_State.glref is not a pointer"), -1;
  if (rdref(lay, g + lay->off_g_cur_L) != l)
    return snprintf(msg, len, "global_State.cur_L is not the running lua_State"), -1;
  if ((int32_t)rd32(g + lay->off_g_vmstate) != CAP_VMST_C)
    return snprintf(msg, len, "global_State.vmstate is %d in a C function, not %d",
                    (int)(int32_t)rd32(g + lay->off_g_vmstate), CAP_VMST_C), -1;
  if (!is_gcobj(lay, rdref(lay, g + lay->off_g_mainthref), GCT_THREAD))
    return snprintf(msg, len, "global_State.mainthref is not a thread"), -1;
  base = rd64(l + lay->off_L_base);
  top = rd64(l + lay->off_L_top);
  stack = rdref(lay, l + lay->off_L_stack);
  maxstack = rdref(lay, l + lay->off_L_maxstack);
  if ((base & 7) || (top & 7) || top < base ||
      (top - base) / 8 != (uint64_t)lua_gettop(L))
    return snprintf(msg, len, "lua_State.base/top do not match lua_gettop"), -1;
  if (!(stack < base && base < maxstack))
    return snprintf(msg, len, "lua_State.base is not between stack and maxstack"), -1;
  tv = rd64(base);
  if (lay->gc64 ? ((int64_t)tv >> 47 != ITYPE_TAB ||
                   (tv & PTR47) != (uint64_t)(uintptr_t)lua_topointer(L, 1))
                : ((uint32_t)tv != (uint64_t)(uintptr_t)lua_topointer(L, 1) ||
                   (uint32_t)(tv >> 32) != (uint32_t)ITYPE_TAB))
    return snprintf(msg, len, "the slot at lua_State.base is not argument 1"), -1;
  fn = lay->gc64 ? rd64(base - 16) & PTR47 : rd32(base - 8);
  if (fn != (uint64_t)(uintptr_t)self || !is_gcobj(lay, fn, GCT_FUNC))
    return snprintf(msg, len, "the frame below lua_State.base is not the running function"), -1;
  if (rd8(fn + lay->off_fn_ffid) != FF_C ||
      rd64(fn + lay->off_fn_cf) != (uint64_t)(uintptr_t)cf)
    return snprintf(msg, len, "GCfuncC.ffid/f do not name the running C function"), -1;
  return 0;
}

/* 1 when the layout is GC64, 0 when not, -1 when undecided.  ffi.abi
 * answers when the FFI is there; else the thread's type byte, found at
 * only one of the two offsets. */
static int detect_gc64(lua_State *L)
{
  int r = -1, top = lua_gettop(L);
  uint64_t l = (uint64_t)(uintptr_t)L;
  lua_getglobal(L, "require");
  if (lua_isfunction(L, -1)) {
    lua_pushliteral(L, "ffi");
    if (lua_pcall(L, 1, 1, 0) == 0 && lua_istable(L, -1)) {
      lua_getfield(L, -1, "abi");
      lua_pushliteral(L, "gc64");
      if (lua_pcall(L, 1, 1, 0) == 0 && lua_isboolean(L, -1))
        r = lua_toboolean(L, -1);
    }
  }
  lua_settop(L, top);
  if (r < 0) {
    int a = rd8(l + ljp__cap_vm_layout_gc64.off_gct) == GCT_THREAD;
    int b = l <= UINT32_MAX &&
            rd8(l + ljp__cap_vm_layout_gc32.off_gct) == GCT_THREAD;
    if (a != b)
      r = a;
  }
  return r;
}

__attribute__((noinline)) static int probe_layout(lua_State *L)
{
  probe_ctx *c = lua_touserdata(L, lua_upvalueindex(1));
  const void *self;
  char msg[160];
  lua_Debug ar;
  int gc64;
  /* Called by the interpreter's C-call handler: the return address lies
   * inside the VM's machine code. */
  c->ra = (uint64_t)(uintptr_t)__builtin_extract_return_addr(
      __builtin_return_address(0));
  if (!lua_getstack(L, 0, &ar) || !lua_getinfo(L, "f", &ar)) {
    PROBE_FAIL(c, "lua_getinfo cannot see the running C function");
    return 0;
  }
  self = lua_topointer(L, -1);
  lua_pop(L, 1);
  gc64 = detect_gc64(L);
  if (gc64 < 0) {
    PROBE_FAIL(c, "cannot tell a GC64 from a non-GC64 VM");
    return 0;
  }
  *c->vm = gc64 ? ljp__cap_vm_layout_gc64 : ljp__cap_vm_layout_gc32;
  if (check_layout(L, c->vm, self, probe_layout, msg, sizeof msg) != 0) {
    PROBE_FAIL(c, "%s layout: %s", gc64 ? "GC64" : "non-GC64", msg);
    return 0;
  }
  c->vm->g = rdref(c->vm, (uint64_t)(uintptr_t)L + c->vm->off_L_glref);
  return 0;
}

/* The ffid of builtin f per jit.util.funcinfo, or -1. */
static int funcinfo_ffid(lua_State *L, int idx)
{
  int top = lua_gettop(L), r = -1;
  idx = idx < 0 ? top + idx + 1 : idx;
  /* jit.util is preloaded, not loaded: require it. */
  lua_getglobal(L, "require");
  lua_pushliteral(L, "jit.util");
  if (lua_isfunction(L, -2) && lua_pcall(L, 1, 1, 0) == 0 && lua_istable(L, -1)) {
    lua_getfield(L, -1, "funcinfo");
    lua_pushvalue(L, idx);
    if (lua_pcall(L, 1, 1, 0) == 0 && lua_istable(L, -1)) {
      lua_getfield(L, -1, "ffid");
      if (lua_isnumber(L, -1))
        r = (int)lua_tointeger(L, -1);
    }
  }
  lua_settop(L, top);
  return r;
}

/* Compares walk frame fr with lua_getstack level lv (its function pushed
 * at -1).  0 when they agree. */
static int compare_frame(lua_State *L, probe_ctx *c, const cap_vm_frame *fr,
                         const lua_Debug *ar, char *msg, size_t len)
{
  const cap_vm *vm = c->vm;
  uint64_t fnp = (uint64_t)(uintptr_t)lua_topointer(L, -1);
  if (fr->kind == CAP_VMF_LUA) {
    size_t sl;
    const char *s = ljp__cap_vm_str(vm, fr->chunk, 4096, &sl);
    if (strcmp(ar->what, "Lua") != 0 && strcmp(ar->what, "main") != 0)
      return snprintf(msg, len, "a Lua frame where lua_getinfo sees %s", ar->what), -1;
    if (fn_proto(vm, fnp) != fr->addr)
      return snprintf(msg, len, "GCproto differs from the function's"), -1;
    if ((int)fr->firstline != ar->linedefined)
      return snprintf(msg, len, "firstline %u, linedefined %d",
                      (unsigned)fr->firstline, ar->linedefined), -1;
    if (!s || sl != strlen(ar->source) || memcmp(s, ar->source, sl) != 0)
      return snprintf(msg, len, "chunk name differs from source %s", ar->source), -1;
  } else if (fr->kind == CAP_VMF_CFUNC) {
    if ((uint64_t)(uintptr_t)lua_tocfunction(L, -1) != fr->addr)
      return snprintf(msg, len, "C function pointer differs"), -1;
  } else if (fr->kind == CAP_VMF_FFUNC) {
    int ffid = funcinfo_ffid(L, -1);
    if (fnp != fr->addr)
      return snprintf(msg, len, "builtin is not the function lua_getinfo sees"), -1;
    if (ffid >= 0 && ffid != fr->ffid)
      return snprintf(msg, len, "ffid %u, jit.util.funcinfo says %d",
                      (unsigned)fr->ffid, ffid), -1;
  } else {
    return snprintf(msg, len, "unexpected frame kind %u", (unsigned)fr->kind), -1;
  }
  return 0;
}

/* The frames after a coroutine boundary in the probe's coroutine: the
 * probe's own thread, inside coroutine.resume, called by the probe chunk,
 * called by lua_pcall (then whatever called ljp__cap_vm_probe). */
static int check_resumer(lua_State *L, probe_ctx *c, const cap_vm_frame *fr,
                         uint32_t n, char *msg, size_t len)
{
  size_t sl;
  const char *s;
  int ffid;
  if (fr[0].addr != (uint64_t)(uintptr_t)c->L)
    return snprintf(msg, len, "not the probing lua_State"), -1;
  lua_getglobal(L, "coroutine");
  lua_getfield(L, -1, "resume");
  ffid = funcinfo_ffid(L, -1);
  lua_pop(L, 2);
  if (n < 4 || fr[1].kind != CAP_VMF_FFUNC || (ffid >= 0 && fr[1].ffid != ffid))
    return snprintf(msg, len, "coroutine.resume is not the next frame"), -1;
  s = ljp__cap_vm_str(c->vm, fr[2].chunk, 64, &sl);
  if (fr[2].kind != CAP_VMF_LUA || fr[2].firstline != 0 || !s ||
      sl != strlen("=ljp_vm_probe") || memcmp(s, "=ljp_vm_probe", sl) != 0)
    return snprintf(msg, len, "the probe chunk does not call coroutine.resume"), -1;
  if (fr[3].kind != CAP_VMF_CBOUND)
    return snprintf(msg, len, "no C frame below the probe chunk"), -1;
  return 0;
}

/* check(k): walks the stack from inside a C function called by Lua and
 * compares it with lua_getstack, level by level. */
static int probe_check(lua_State *L)
{
  probe_ctx *c = lua_touserdata(L, lua_upvalueindex(1));
  int k = (int)lua_tointeger(L, 1);
  cap_vm_frame fr[64];
  cap_vm_info info;
  uint32_t n, i;
  int level = 0;
  char msg[160];
  lua_Debug ar;
  if (c->failed)
    return 0;
  if (k < 1 || k > 4)
    k = 0;
  c->calls[k]++;
  n = ljp__cap_vm_walk(c->vm, NULL, &info, fr, 64);
  if (info.status != CAP_VMS_OK || info.vmstate != CAP_VMST_C ||
      info.L != (uint64_t)(uintptr_t)L) {
    PROBE_FAIL(c, "walk (%s): status %u, vmstate %d, L %s", scenario[k],
               (unsigned)info.status, (int)info.vmstate,
               info.L == (uint64_t)(uintptr_t)L ? "right" : "wrong");
    return 0;
  }
  if (n == 0 || fr[0].kind != CAP_VMF_CFUNC ||
      fr[0].addr != (uint64_t)(uintptr_t)probe_check) {
    PROBE_FAIL(c, "walk (%s): the innermost frame is not the C function",
               scenario[k]);
    return 0;
  }
  for (i = 0; i < n; i++) {
    /* The end of this thread's frames (those of lua_getstack).  In the
     * probe's coroutine the resumer follows; elsewhere it is the host's
     * coroutine that called ljp__cap_vm_probe. */
    if (fr[i].kind == CAP_VMF_CORO) {
      if (k == 4) {
        if (check_resumer(L, c, fr + i, n - i, msg, sizeof msg) != 0) {
          PROBE_FAIL(c, "walk (%s), resumer: %s", scenario[k], msg);
          return 0;
        }
        c->seen_coro = 1;
      }
      break;
    }
    if (fr[i].kind == CAP_VMF_CBOUND) {
      /* Every C boundary of the probe has its C frame: the first is
       * L->cframe, the others come from the previous-frame links. */
      if (!fr[i].addr) {
        PROBE_FAIL(c, "walk (%s): the C frame chain ends early", scenario[k]);
        return 0;
      }
      if (i + 1 < n && fr[i + 1].kind != CAP_VMF_CBOUND)
        c->seen_cbound_mid = 1;
      continue;
    }
    if (!lua_getstack(L, level, &ar) || !lua_getinfo(L, "Sf", &ar)) {
      PROBE_FAIL(c, "walk (%s): %u frames, lua_getstack only %d levels",
                 scenario[k], (unsigned)n, level);
      return 0;
    }
    if (compare_frame(L, c, &fr[i], &ar, msg, sizeof msg) != 0) {
      PROBE_FAIL(c, "walk (%s), level %d: %s", scenario[k], level, msg);
      return 0;
    }
    lua_pop(L, 1);
    level++;
  }
  if (lua_getstack(L, level, &ar))
    PROBE_FAIL(c, "walk (%s): lua_getstack has more than %d levels",
               scenario[k], level);
  return 0;
}

static const char probe_chunk[] =
  "local check, coro = ...\n"
  "local function c(k) check(k) return 1 end\n"
  "local function b(k) c(k) return 2 end\n"
  "local function a(k) b(k) return 3 end\n"
  "a(1)\n"
  "pcall(a, 2)\n"
  "table.sort({3, 1, 2}, function(x, y) check(3) return x < y end)\n"
  "if coro then\n"
  "  local co = coroutine.create(function() a(4) return 4 end)\n"
  "  coroutine.resume(co)\n"
  "end\n";

/* Whether coroutine.create and coroutine.resume are the VM's builtins:
 * a host may replace them (lua-nginx-module does, and its versions raise
 * in some phases), and then the probe cannot resume from Lua. */
static int builtin_coroutines(lua_State *L)
{
  int ok;
  lua_getglobal(L, "coroutine");
  if (!lua_istable(L, -1)) {
    lua_pop(L, 1);
    return 0;
  }
  lua_getfield(L, -1, "create");
  lua_getfield(L, -2, "resume");
  ok = funcinfo_ffid(L, -1) >= 0 && funcinfo_ffid(L, -2) >= 0;
  lua_pop(L, 3);
  return ok;
}

/* OpenResty's luajit2, told at run time: a module built against stock
 * headers may be loaded into it. */
static int detect_flavor(lua_State *L)
{
  int top = lua_gettop(L), r = LJP_FLAVOR_LUAJIT;
  if (dlsym(RTLD_DEFAULT, "lua_setexdata"))
    return LJP_FLAVOR_OPENRESTY;
  /* A static executable may export nothing: its preloaded modules tell. */
  lua_getglobal(L, "package");
  if (lua_istable(L, -1)) {
    lua_getfield(L, -1, "preload");
    if (lua_istable(L, -1)) {
      lua_getfield(L, -1, "table.isempty");
      if (!lua_isnil(L, -1))
        r = LJP_FLAVOR_OPENRESTY;
    }
  }
  lua_settop(L, top);
  return r;
}

int ljp__cap_vm_probe(lua_State *L, cap_vm *vm, char *err, size_t errlen)
{
  probe_ctx c;
  int top = lua_gettop(L), i, coro;
  memset(vm, 0, sizeof *vm);
  if (!CAP_VM_X64) {
    /* The C frame layout and the interpreter's registers are x86-64's. */
    snprintf(err, errlen, "only x86-64 builds of LuaJIT are known");
    return -1;
  }
  memset(&c, 0, sizeof c);
  c.vm = vm;
  c.L = L;
  c.err = err;
  c.errlen = errlen;
  if (errlen)
    err[0] = '\0';
  lua_pushlightuserdata(L, &c);
  lua_pushcclosure(L, probe_layout, 1);
  lua_newtable(L);
  lua_pushinteger(L, 2);
  lua_pushinteger(L, 3);
  if (lua_pcall(L, 3, 0, 0) != 0) {
    snprintf(err, errlen, "layout probe: %s", lua_tostring(L, -1));
    lua_settop(L, top);
    return -1;
  }
  if (c.failed || !vm->g) {
    if (!c.failed)
      snprintf(err, errlen, "layout probe did not run");
    memset(vm, 0, sizeof *vm);
    return -1;
  }
  vm->flavor = detect_flavor(L);
  if (fde_range(c.ra, &vm->interp_lo, &vm->interp_hi) != 0) {
    /* Without the range the walker never trusts the BASE register. */
    vm->interp_lo = vm->interp_hi = 0;
  }
  if (luaL_loadbuffer(L, probe_chunk, sizeof probe_chunk - 1, "=ljp_vm_probe") != 0) {
    snprintf(err, errlen, "probe chunk: %s", lua_tostring(L, -1));
    lua_settop(L, top);
    memset(vm, 0, sizeof *vm);
    return -1;
  }
  coro = builtin_coroutines(L);
  /* Provisional: the coroutine scenario checks that following works. */
  vm->follow_coro = coro;
  lua_pushlightuserdata(L, &c);
  lua_pushcclosure(L, probe_check, 1);
  lua_pushboolean(L, coro);
  if (lua_pcall(L, 2, 0, 0) != 0) {
    snprintf(err, errlen, "probe chunk: %s", lua_tostring(L, -1));
    lua_settop(L, top);
    memset(vm, 0, sizeof *vm);
    return -1;
  }
  lua_settop(L, top);
  for (i = 1; i <= (coro ? 4 : 3) && !c.failed; i++)
    if (c.calls[i] == 0)
      PROBE_FAIL(&c, "walk (%s) never ran", scenario[i]);
  if (!c.failed && !c.seen_cbound_mid)
    PROBE_FAIL(&c, "no C boundary seen between Lua frames");
  if (!c.failed && coro && !c.seen_coro && vm->interp_hi)
    PROBE_FAIL(&c, "the coroutine's walk did not reach its resumer");
  if (c.failed) {
    memset(vm, 0, sizeof *vm);
    return -1;
  }
  vm->follow_coro = coro && c.seen_coro;
  vm->ok = 1;
  return 0;
}
