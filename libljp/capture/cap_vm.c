/*
 * cap_vm.c — reading LuaJIT 2.1's frame chain from its own structures:
 * the layout tables, the signal-safe walker, and the probe that proves
 * both against the public API before the profiler relies on them.
 *
 * Facts used (LuaJIT 2.1, x86-64; lj_obj.h, lj_frame.h, vm_x64.dasc):
 * - A stack slot is 8 bytes.  Under GC64 a frame takes two slots, the
 *   function (a tagged TValue: itype in the top 17 bits, the pointer in
 *   the low 47) at base-2 and the link at base-1; without GC64 one slot
 *   holds both, the 32-bit function reference in the low half and the
 *   32-bit link in the high half.
 * - The link is either the return PC into the calling Lua function (low
 *   two bits 0; the caller's frame lies 1+FR2+A slots below, A being the
 *   A operand of the CALL instruction before that PC) or a byte delta to
 *   the previous frame with the frame type in the low three bits.
 * - The offsets used here are the same in stock LuaJIT and in OpenResty's
 *   luajit2, which only appends fields to lua_State and global_State.
 */
#define _GNU_SOURCE 1   /* REG_RIP, REG_RDX, RTLD_DEFAULT */

#include "cap_vm.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>

#include <lauxlib.h>
#include <lua.h>

#include "ljp.h"

/* Raw reads of the VM's memory: AddressSanitizer knows nothing of
 * LuaJIT's own allocator and the VM's C frames, so its checks do not
 * apply here. */
#if defined(__GNUC__)
#define CAP_VM_RAW __attribute__((no_sanitize_address))
#else
#define CAP_VM_RAW
#endif

#if defined(__x86_64__)
#define CAP_VM_X64 1
#else
#define CAP_VM_X64 0
#endif

/* Frame types (low three bits of a delta link). */
enum {
  FR_LUA = 0, FR_C = 1, FR_CONT = 2, FR_VARG = 3,
  FR_CP = 5, FR_PCALL = 6, FR_PCALLH = 7
};

/* GC type bytes (~LJ_T*) at the object's gct field. */
enum { GCT_STR = 4, GCT_THREAD = 6, GCT_PROTO = 7, GCT_FUNC = 8 };

/* itype of a GC64 TValue (its top 17 bits, sign-extended). */
enum { ITYPE_THREAD = -7, ITYPE_FUNC = -9, ITYPE_TAB = -12 };

#define PTR47 ((UINT64_C(1) << 47) - 1)
#define FF_LUA 0
#define FF_C 1
#define CONT_FFI_CALLBACK 1
/* Slots above maxstack that still belong to the stack (LJ_STACK_EXTRA
 * is 5+2*FR2, plus the slot maxstack itself). */
#define STACK_EXTRA_SLOTS 10
/* No real chain is longer than LuaJIT's own limit of ~65500 C frames
 * times a few slots; a walk that loops longer is broken. */
#define WALK_STEPS_MAX 1000000u

/* Layouts, taken from the LuaJIT 2.1 sources for x86-64. */
static const cap_vm layout_gc64 = {
  .gc64 = 1,
  .off_L_glref = 16, .off_L_base = 32, .off_L_top = 40, .off_L_stack = 56,
  .off_L_maxstack = 48, .off_L_cframe = 80, .off_L_status = 11,
  .off_g_vmstate = 184, .off_g_cur_L = 368, .off_g_jit_base = 376,
  .off_g_mainthref = 192,
  .off_fn_ffid = 10, .off_fn_pc = 32, .off_fn_cf = 40,
  .sizeof_proto = 104, .off_pt_firstline = 72, .off_pt_chunkname = 64,
  .off_pt_numline = 76,
  .sizeof_str = 24, .off_str_len = 20,
  .off_cf_prev = 32, .off_cf_L = 16,
  .off_gct = 9, .off_pt_sizebc = 12
};

static const cap_vm layout_gc32 = {
  .gc64 = 0,
  .off_L_glref = 8, .off_L_base = 16, .off_L_top = 24, .off_L_stack = 36,
  .off_L_maxstack = 32, .off_L_cframe = 48, .off_L_status = 7,
  .off_g_vmstate = 136, .off_g_cur_L = 288, .off_g_jit_base = 292,
  .off_g_mainthref = 140,
  .off_fn_ffid = 6, .off_fn_pc = 16, .off_fn_cf = 24,
  .sizeof_proto = 64, .off_pt_firstline = 44, .off_pt_chunkname = 40,
  .off_pt_numline = 48,
  .sizeof_str = 20, .off_str_len = 16,
  .off_cf_prev = 32, .off_cf_L = 24,
  .off_gct = 5, .off_pt_sizebc = 8
};

/* ---- raw reads ---------------------------------------------------------- */

/* Callers check alignment first: the reads are plain aligned loads, so a
 * torn value is impossible and a bad address faults (under the caller's
 * guard) instead of being read byte by byte. */
CAP_VM_RAW static uint64_t rd64(uint64_t a)
{
  return *(const volatile uint64_t *)(uintptr_t)a;
}

CAP_VM_RAW static uint32_t rd32(uint64_t a)
{
  return *(const volatile uint32_t *)(uintptr_t)a;
}

CAP_VM_RAW static uint8_t rd8(uint64_t a)
{
  return *(const volatile uint8_t *)(uintptr_t)a;
}

/* GCRef/MRef: 64-bit under GC64, else 32-bit (the VM lives below 4 GiB). */
static uint64_t rdref(const cap_vm *vm, uint64_t a)
{
  return vm->gc64 ? rd64(a) : rd32(a);
}

/* A GC object of type gct at a: aligned, non-null, its type byte right. */
static int is_gcobj(const cap_vm *vm, uint64_t a, uint8_t gct)
{
  uint64_t end = vm->gc64 ? UINT64_C(1) << 47 : UINT64_C(1) << 32;
  if (a < 4096 || (a & 7) != 0 || a >= end)
    return 0;
  return rd8(a + vm->off_gct) == gct;
}

/* ---- the walk ----------------------------------------------------------- */

typedef struct walk {
  const cap_vm *vm;
  uint64_t L, stack, lim;  /* lim: first byte above the stack's slots */
  uint64_t cf;             /* next C frame of the L->cframe chain */
  int lenient;             /* the first frame may have lost its function */
  cap_vm_frame *out;
  uint32_t n, max;
} walk;

/* The proto of a Lua function, or 0 when fn does not hold one. */
static uint64_t fn_proto(const cap_vm *vm, uint64_t fn)
{
  uint64_t pc = rdref(vm, fn + vm->off_fn_pc);
  uint64_t pt = pc - vm->sizeof_proto;
  return is_gcobj(vm, pt, GCT_PROTO) ? pt : 0;
}

static int put(walk *w, const cap_vm_frame *f)
{
  if (w->n >= w->max)
    return 0;
  w->out[w->n++] = *f;
  return 1;
}

/* Appends the frame of function fn.  0: no room; -1: fn is not sane. */
static int put_func(walk *w, uint64_t fn)
{
  const cap_vm *vm = w->vm;
  cap_vm_frame f = {0};
  uint8_t ffid = rd8(fn + vm->off_fn_ffid);
  if (ffid == FF_LUA) {
    uint64_t pt = fn_proto(vm, fn);
    uint64_t chunk;
    if (!pt)
      return -1;
    chunk = rdref(vm, pt + vm->off_pt_chunkname);
    if (!is_gcobj(vm, chunk, GCT_STR))
      return -1;
    f.kind = CAP_VMF_LUA;
    f.firstline = rd32(pt + vm->off_pt_firstline);
    f.addr = pt;
    f.chunk = chunk;
  } else if (ffid == FF_C) {
    f.kind = CAP_VMF_CFUNC;
    f.addr = rd64(fn + vm->off_fn_cf);
  } else {
    f.kind = CAP_VMF_FFUNC;
    f.ffid = ffid;
    f.addr = fn;
  }
  return put(w, &f);
}

/* Appends a C boundary, naming the next C frame of L's chain.  Outer C
 * frames lie higher on the C stack: a chain that does not climb ends. */
static int put_cbound(walk *w)
{
  cap_vm_frame f = {0};
  uint64_t prev = 0;
  f.kind = CAP_VMF_CBOUND;
  f.addr = w->cf;
  if (w->cf && (w->cf & 7) == 0)
    prev = rd64(w->cf + w->vm->off_cf_prev) & ~UINT64_C(3);
  w->cf = prev > w->cf ? prev : 0;
  return put(w, &f);
}

/* PC pc lies inside the bytecode of Lua function fn (after its first
 * instruction: it is a return address). */
static int pc_in_func(const cap_vm *vm, uint64_t fn, uint64_t pc)
{
  uint64_t pt, bc;
  if (rd8(fn + vm->off_fn_ffid) != FF_LUA || !(pt = fn_proto(vm, fn)))
    return 0;
  bc = pt + vm->sizeof_proto;
  return pc > bc && pc <= bc + 4 * (uint64_t)rd32(pt + vm->off_pt_sizebc);
}

/* The function of the frame whose link slot is at f: 0 when the slot does
 * not hold a function; the thread itself for LuaJIT's dummy frames. */
static uint64_t frame_fn(const walk *w, uint64_t f)
{
  const cap_vm *vm = w->vm;
  uint64_t fn;
  if (vm->gc64) {
    uint64_t tv = rd64(f - 8);
    int64_t itype = (int64_t)tv >> 47;
    fn = tv & PTR47;
    if (itype == ITYPE_THREAD)
      return fn == w->L ? fn : 0;
    if (itype != ITYPE_FUNC)
      return 0;
  } else {
    fn = rd32(f);
    if (fn == w->L)
      return fn;
  }
  return is_gcobj(vm, fn, GCT_FUNC) ? fn : 0;
}

/* The link of the frame at f (PC or typed delta). */
static int64_t frame_link(const cap_vm *vm, uint64_t f)
{
  if (vm->gc64)
    return (int64_t)rd64(f);
  return (int64_t)(int32_t)(rd64(f) >> 32);
}

/* Walks from the frame whose base is b.  Returns a CAP_VMS_* status. */
static uint32_t walk_frames(walk *w, uint64_t b)
{
  const cap_vm *vm = w->vm;
  const uint64_t bot = w->stack + 8u * (uint64_t)vm->gc64;
  uint64_t f = b - 8, expect_pc = 0, varg_fn = 0;
  uint32_t steps = 0;
  if ((b & 7) != 0 || b <= bot + 8 || b > w->lim)
    return CAP_VMS_NOLUA;
  while (f > bot) {
    uint64_t fn, nf;
    int64_t link;
    int r = 1;
    if (++steps > WALK_STEPS_MAX || f < w->stack + 8u * (1u + vm->gc64))
      return CAP_VMS_REJECTED;
    fn = frame_fn(w, f);
    link = frame_link(vm, f);
    if (!fn) {
      /* A fast function that is returning stores its first result over
       * its function slot; its link still names the Lua caller. */
      if (steps != 1 || !w->lenient || (link & 3) != FR_LUA)
        return CAP_VMS_REJECTED;
    } else if (varg_fn) {
      /* The frame below a vararg pseudo-frame is the same call. */
      if (fn != varg_fn)
        return CAP_VMS_REJECTED;
      varg_fn = 0;
    } else {
      /* A return PC names the caller: it must point into its bytecode. */
      if (expect_pc && !pc_in_func(vm, fn, expect_pc))
        return CAP_VMS_REJECTED;
      if (fn != w->L)
        r = put_func(w, fn);
    }
    if (r < 0)
      return CAP_VMS_REJECTED;
    if (r == 0)
      return CAP_VMS_TRUNCATED;
    if ((link & 3) == FR_LUA) {
      uint64_t pc = vm->gc64 ? (uint64_t)link : (uint32_t)link;
      if (pc < 4096 || (pc & 3) != 0 || pc >= (UINT64_C(1) << 47))
        return CAP_VMS_REJECTED;
      nf = f - 8u * (1u + (uint64_t)vm->gc64 + ((rd32(pc - 4) >> 8) & 0xff));
      expect_pc = pc;
    } else {
      int t = (int)(link & 7);
      int64_t delta = link & ~(int64_t)7;
      if (delta <= 0 || (uint64_t)delta > f)
        return CAP_VMS_REJECTED;
      nf = f - (uint64_t)delta;
      expect_pc = 0;
      if (t == FR_VARG && fn != w->L) {
        varg_fn = fn;
      } else if (t == FR_C || t == FR_CP ||
                 (t == FR_CONT &&
                  (vm->gc64 ? rd64(f - 24) : rd32(f - 8)) == CONT_FFI_CALLBACK)) {
        if (!put_cbound(w))
          return CAP_VMS_TRUNCATED;
      }
    }
    if (nf >= f)
      return CAP_VMS_REJECTED;
    f = nf;
  }
  return (f == bot && !varg_fn) ? CAP_VMS_OK : CAP_VMS_REJECTED;
}

/* The lua_State that resumed the coroutine whose outermost C frame is
 * cf, or 0.  coroutine.resume and the wrap function are fast functions
 * that call the VM's resume entry from inside the resumer's interpreter,
 * so the coroutine's C frame sits exactly one C frame (CFRAME_SIZE bytes:
 * 80, or 96 in builds without unwind tables) below the resumer's, and
 * that frame saves the resumer's lua_State.  Only a return address into
 * the interpreter at the top of the coroutine's C frame says so (lua_resume
 * called from C leaves the C caller's stack there, not a C frame of the
 * VM); the resumer is then confirmed by its own cframe pointing there. */
static uint64_t resumer_of(const walk *w, uint64_t cf)
{
  static const uint32_t cframe_sizes[] = {80, 96};
  const cap_vm *vm = w->vm;
  size_t i;
  /* The main thread is never resumed. */
  if (!cf || (cf & 7) != 0 || w->L == rdref(vm, vm->g + vm->off_g_mainthref))
    return 0;
  for (i = 0; i < sizeof cframe_sizes / sizeof cframe_sizes[0]; i++) {
    uint64_t rcf = cf + cframe_sizes[i], ra = rd64(rcf - 8), R;
    if (ra < vm->interp_lo || ra >= vm->interp_hi)
      continue;
    R = rdref(vm, rcf + vm->off_cf_L);
    if (R == w->L || R >= (UINT64_C(1) << 47) || !is_gcobj(vm, R, GCT_THREAD))
      continue;
    if (rdref(vm, R + vm->off_L_glref) == vm->g &&
        (rd64(R + vm->off_L_cframe) & ~UINT64_C(3)) == rcf)
      return R;
  }
  return 0;
}

/* Points w at thread L: its stack bounds and C frame chain.  0 when they
 * are implausible. */
static int walk_thread(walk *w, uint64_t L)
{
  const cap_vm *vm = w->vm;
  w->L = L;
  w->stack = rdref(vm, L + vm->off_L_stack);
  w->lim = rdref(vm, L + vm->off_L_maxstack) + 8u * STACK_EXTRA_SLOTS;
  w->cf = rd64(L + vm->off_L_cframe) & ~UINT64_C(3);
  return (w->stack & 7) == 0 && w->lim > w->stack;
}

/* b is the base of a frame in w's stack: a function below it, or (when
 * lenient) a return PC that a returning fast function left there. */
static int frame_base_ok(walk *w, uint64_t b, int lenient)
{
  const cap_vm *vm = w->vm;
  uint64_t f = b - 8;
  int64_t link;
  /* b - 8 wraps for b < 8: compare b itself with the stack. */
  if ((b & 7) != 0 || b <= w->stack + 8u * (1u + vm->gc64) || b > w->lim)
    return 0;
  if (frame_fn(w, f))
    return 1;
  /* No function below BASE: a fast function returning, whose results
   * replaced it, if the link is a return PC. */
  link = frame_link(vm, f);
  if (!lenient || (link & 3) != FR_LUA || (uint64_t)link < 4096 ||
      (uint64_t)link >= (UINT64_C(1) << 47))
    return 0;
  w->lenient = 1;
  return 1;
}

/* The interrupted interpreter's BASE, or 0.  In the interpreter's own
 * code BASE is rdx; around a few calls of C helpers that do not write
 * L->base (the length of a table, for one) the interpreter parks it in
 * rbp, which C code preserves.  Only a value that is the base of a frame
 * in L's stack is taken: elsewhere both registers hold other data. */
static uint64_t base_from_regs(const cap_vm *vm, walk *w,
                               const void *ucontext)
{
#if defined(__x86_64__) && defined(__linux__)
  const ucontext_t *uc = ucontext;
  uint64_t pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
  uint64_t rdx = (uint64_t)uc->uc_mcontext.gregs[REG_RDX];
  uint64_t rbp = (uint64_t)uc->uc_mcontext.gregs[REG_RBP];
  if (!vm->interp_hi)
    return 0;
  if (pc >= vm->interp_lo && pc < vm->interp_hi && frame_base_ok(w, rdx, 1))
    return rdx;
  return frame_base_ok(w, rbp, 0) ? rbp : 0;
#else
  (void)vm; (void)w; (void)ucontext;
  return 0;
#endif
}

uint32_t cap_vm_walk(const cap_vm *vm, const void *ucontext,
                     cap_vm_info *info, cap_vm_frame *out, uint32_t max)
{
  walk w;
  uint64_t g, L, base = 0;
  int32_t st;
  int depth;
  info->vmstate = 0;
  info->status = CAP_VMS_NOLUA;
  info->L = info->cframe = info->base = 0;
  if (!vm || !vm->g)
    return 0;
  g = vm->g;
  st = (int32_t)rd32(g + vm->off_g_vmstate);
  info->vmstate = st;
  L = rdref(vm, g + vm->off_g_cur_L);
  if (!is_gcobj(vm, L, GCT_THREAD) || rdref(vm, L + vm->off_L_glref) != g)
    return 0;
  info->L = L;
  w.vm = vm;
  w.out = out;
  w.n = 0;
  w.max = max;
  w.lenient = 0;
  if (!walk_thread(&w, L))
    return 0;
  info->cframe = w.cf;
  /* Inside a trace, only the frames below the trace's start frame are
   * written; jit_base is that frame's base (and follows a trace that
   * returns below it).  The exit handler keeps it until L->base is set. */
  if (st >= 0 || st == CAP_VMST_EXIT)
    base = rdref(vm, g + vm->off_g_jit_base);
  /* The interpreter keeps BASE in a register and writes L->base only
   * before it calls C. */
  else if (st == CAP_VMST_INTERP && ucontext)
    base = base_from_regs(vm, &w, ucontext);
  if (!base)
    base = rd64(L + vm->off_L_base);
  info->base = base;
  info->status = walk_frames(&w, base);
  /* A coroutine's chain ends in the C frame of its resume: continue with
   * the thread that resumed it, if that was Lua's coroutine.resume. */
  for (depth = 0; info->status == CAP_VMS_OK && depth < 64 && w.n > 0 &&
                  out[w.n - 1].kind == CAP_VMF_CBOUND; depth++) {
    cap_vm_frame f = {0};
    uint64_t R = resumer_of(&w, out[w.n - 1].addr);
    if (!R)
      break;
    f.kind = CAP_VMF_CORO;
    f.addr = R;
    w.lenient = 0;
    if (!put(&w, &f) || !walk_thread(&w, R)) {
      info->status = w.n >= max ? CAP_VMS_TRUNCATED : CAP_VMS_REJECTED;
      break;
    }
    info->status = walk_frames(&w, rd64(R + vm->off_L_base));
    /* An empty chain after a resumer is no frame to read but a bad one. */
    if (info->status == CAP_VMS_NOLUA)
      info->status = CAP_VMS_REJECTED;
  }
  return w.n;
}

const char *cap_vm_str(const cap_vm *vm, uint64_t addr, size_t max_len,
                       size_t *len)
{
  size_t n;
  *len = 0;
  if (!vm || !is_gcobj(vm, addr, GCT_STR))
    return NULL;
  n = rd32(addr + vm->off_str_len);
  *len = n < max_len ? n : max_len;
  return (const char *)(uintptr_t)(addr + vm->sizeof_str);
}

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
    int a = rd8(l + layout_gc64.off_gct) == GCT_THREAD;
    int b = l <= UINT32_MAX && rd8(l + layout_gc32.off_gct) == GCT_THREAD;
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
  *c->vm = gc64 ? layout_gc64 : layout_gc32;
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
    const char *s = cap_vm_str(vm, fr->chunk, 4096, &sl);
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
 * called by lua_pcall (then whatever called cap_vm_probe). */
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
  s = cap_vm_str(c->vm, fr[2].chunk, 64, &sl);
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
  n = cap_vm_walk(c->vm, NULL, &info, fr, 64);
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
     * coroutine that called cap_vm_probe. */
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
  "local check = ...\n"
  "local function c(k) check(k) return 1 end\n"
  "local function b(k) c(k) return 2 end\n"
  "local function a(k) b(k) return 3 end\n"
  "a(1)\n"
  "pcall(a, 2)\n"
  "table.sort({3, 1, 2}, function(x, y) check(3) return x < y end)\n"
  "local co = coroutine.create(function() a(4) return 4 end)\n"
  "coroutine.resume(co)\n";

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

int cap_vm_probe(lua_State *L, cap_vm *vm, char *err, size_t errlen)
{
  probe_ctx c;
  int top = lua_gettop(L), i;
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
  lua_pushlightuserdata(L, &c);
  lua_pushcclosure(L, probe_check, 1);
  if (lua_pcall(L, 1, 0, 0) != 0) {
    snprintf(err, errlen, "probe chunk: %s", lua_tostring(L, -1));
    lua_settop(L, top);
    memset(vm, 0, sizeof *vm);
    return -1;
  }
  lua_settop(L, top);
  for (i = 1; i <= 4 && !c.failed; i++)
    if (c.calls[i] == 0)
      PROBE_FAIL(&c, "walk (%s) never ran", scenario[i]);
  if (!c.failed && !c.seen_cbound_mid)
    PROBE_FAIL(&c, "no C boundary seen between Lua frames");
  if (!c.failed && !c.seen_coro && vm->interp_hi)
    PROBE_FAIL(&c, "the coroutine's walk did not reach its resumer");
  if (c.failed) {
    memset(vm, 0, sizeof *vm);
    return -1;
  }
  vm->ok = 1;
  return 0;
}
