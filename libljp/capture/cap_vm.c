/*
 * cap_vm.c — reading LuaJIT 2.1's frame chain from its own structures:
 * the layout tables and the signal-safe walker (the probe that proves
 * them against the public API is cap_vm_probe.c).
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
#define _GNU_SOURCE 1   /* REG_RIP, REG_RDX, REG_RBP */

#include <ucontext.h>

#include "cap_vm_raw.h"

/* Frame types (low three bits of a delta link). */
enum {
  FR_LUA = 0, FR_C = 1, FR_CONT = 2, FR_VARG = 3,
  FR_CP = 5, FR_PCALL = 6, FR_PCALLH = 7
};

#define CONT_FFI_CALLBACK 1
/* Slots above maxstack that still belong to the stack (LJ_STACK_EXTRA
 * is 5+2*FR2, plus the slot maxstack itself). */
#define STACK_EXTRA_SLOTS 10
/* No real chain is longer than LuaJIT's own limit of ~65500 C frames
 * times a few slots; a walk that loops longer is broken. */
#define WALK_STEPS_MAX 1000000u

/* Layouts, taken from the LuaJIT 2.1 sources for x86-64. */
const cap_vm ljp__cap_vm_layout_gc64 = {
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

const cap_vm ljp__cap_vm_layout_gc32 = {
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

/* ---- the walk ----------------------------------------------------------- */

typedef struct walk {
  const cap_vm *vm;
  uint64_t L, stack, lim;  /* lim: first byte above the stack's slots */
  uint64_t cf;             /* next C frame of the L->cframe chain */
  int lenient;             /* the first frame may have lost its function */
  cap_vm_frame *out;
  uint32_t n, max;
  volatile uint32_t *nframes;  /* the caller's count, for a faulted walk */
} walk;

static int put(walk *w, const cap_vm_frame *f)
{
  if (w->n >= w->max)
    return 0;
  w->out[w->n++] = *f;
  *w->nframes = w->n;
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

uint32_t ljp__cap_vm_walk(const cap_vm *vm, const void *ucontext,
                          cap_vm_info *info, cap_vm_frame *out, uint32_t max)
{
  walk w;
  uint64_t g, L, base = 0;
  int32_t st;
  int depth;
  info->vmstate = 0;
  info->status = CAP_VMS_NOLUA;
  info->L = info->cframe = info->base = 0;
  info->nframes = info->pad = 0;
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
  w.nframes = &info->nframes;
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
  for (depth = 0; vm->follow_coro && info->status == CAP_VMS_OK &&
                  depth < 64 && w.n > 0 &&
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

const char *ljp__cap_vm_str(const cap_vm *vm, uint64_t addr, size_t max_len,
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
