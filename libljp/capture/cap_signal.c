/*
 * cap_signal.c — the SIGPROF handler, the ring of captured ticks and the
 * timers.  This is the only code of the capture core that runs in signal
 * context, so everything reachable from cap_on_signal() is
 * async-signal-safe: no malloc, no locks, no Lua API, no stdio.  It touches
 * only memory allocated at start, and publishes each slot with a release
 * store that the safe-point consumer pairs with an acquire load.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1   /* REG_RIP, sigev_notify_thread_id */
#endif
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>
#include <unwind.h>

#include <luajit.h>

#include "cap_internal.h"
#include "cap_unwind.h"

/* Raw stack reads: AddressSanitizer's redzones are not errors here. */
#if defined(__GNUC__)
#define CAP_RAW_READ __attribute__((no_sanitize_address))
#else
#define CAP_RAW_READ
#endif

uint64_t ljp__cap_now_ns(clockid_t clk)
{
  struct timespec ts;
  if (clock_gettime(clk, &ts) != 0)
    return 0;
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t uc_pc(void *ucv)
{
  ucontext_t *uc = ucv;
  if (!uc)
    return 0;
#if defined(__x86_64__)
  return (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__i386__)
  return (uint64_t)(uint32_t)uc->uc_mcontext.gregs[REG_EIP];
#elif defined(__aarch64__)
  return (uint64_t)uc->uc_mcontext.pc;
#else
  return 0;
#endif
}

/* ---- machine-code zones -------------------------------------------------- */

/* Where JIT machine code lives.  libgcc's unwinder must never be asked to
 * step out of a machine-code frame: there is no CFI for it (or a generic
 * one that does not describe the trace), and a wrong step can make libgcc
 * abort.  The handler stops unwinding at the first address inside a zone.
 * Zones only grow (an area freed by a flush is reused by later traces), and
 * are published entry by entry with release stores, so the handler can read
 * them while the VM thread adds one. */
#define CAP_MAX_ZONES 128
#define CAP_ZONE_SLACK ((uint64_t)1 << 16)
static _Atomic uint64_t zone_lo[CAP_MAX_ZONES], zone_hi[CAP_MAX_ZONES];
static _Atomic uint32_t nzones;

void ljp__cap_signal_note_mcode(uint64_t lo, uint64_t hi)
{
  uint32_t i, n = atomic_load_explicit(&nzones, memory_order_relaxed);
  for (i = 0; i < n; i++) {
    uint64_t zl = atomic_load_explicit(&zone_lo[i], memory_order_relaxed);
    uint64_t zh = atomic_load_explicit(&zone_hi[i], memory_order_relaxed);
    if (lo + CAP_ZONE_SLACK >= zl && lo <= zh + CAP_ZONE_SLACK) {
      if (lo < zl)
        atomic_store_explicit(&zone_lo[i], lo, memory_order_release);
      if (hi > zh)
        atomic_store_explicit(&zone_hi[i], hi, memory_order_release);
      return;
    }
  }
  if (n == CAP_MAX_ZONES)
    return;
  atomic_store_explicit(&zone_lo[n], lo, memory_order_relaxed);
  atomic_store_explicit(&zone_hi[n], hi, memory_order_relaxed);
  atomic_store_explicit(&nzones, n + 1, memory_order_release);
}

void ljp__cap_signal_reset_mcode(void)
{
  atomic_store_explicit(&nzones, 0, memory_order_release);
}

static int in_mcode(uint64_t ip);

int ljp__cap_signal_in_mcode(uint64_t pc)
{
  return in_mcode(pc);
}

static int in_mcode(uint64_t ip)
{
  uint32_t i, n = atomic_load_explicit(&nzones, memory_order_acquire);
  for (i = 0; i < n; i++)
    if (ip >= atomic_load_explicit(&zone_lo[i], memory_order_acquire) &&
        ip < atomic_load_explicit(&zone_hi[i], memory_order_acquire))
      return 1;
  return 0;
}

/* ---- text ranges ------------------------------------------------------------ */

/* Executable ranges of the loaded objects.  libgcc's x86_64 fallback reads
 * the code bytes at every IP it cannot find CFI for (looking for a sigreturn
 * trampoline), and the VM's hand-written CFI is not exact at every PC, so a
 * bogus return address read off the stack would make libgcc fault.  The
 * handler stops at the first IP outside these ranges.  Double-buffered: the
 * VM thread fills the idle copy and flips; the handler runs on the VM thread
 * and never sees a half-written copy. */
#define CAP_MAX_TEXT 512
static uint64_t text_lo[2][CAP_MAX_TEXT], text_hi[2][CAP_MAX_TEXT];
static uint32_t ntext[2];
static _Atomic int text_cur;

void ljp__cap_signal_publish_text(const uint64_t *lo, const uint64_t *hi,
                                  size_t n)
{
  int next = !atomic_load_explicit(&text_cur, memory_order_relaxed);
  size_t i;
  if (n > CAP_MAX_TEXT)
    n = CAP_MAX_TEXT;
  for (i = 0; i < n; i++) {
    text_lo[next][i] = lo[i];
    text_hi[next][i] = hi[i];
  }
  ntext[next] = (uint32_t)n;
  atomic_store_explicit(&text_cur, next, memory_order_release);
}

static int in_text(uint64_t ip)
{
  int cur = atomic_load_explicit(&text_cur, memory_order_acquire);
  uint32_t i;
  for (i = 0; i < ntext[cur]; i++)
    if (ip >= text_lo[cur][i] && ip < text_hi[cur][i])
      return 1;
  return 0;
}

/* ---- default backtracer: libgcc's unwinder ------------------------------ */

/* The slot being filled.  Only the VM thread's handler writes it, and one
 * handler runs at a time (SIGPROF is blocked during its own handler). */
static uint64_t *bt_out;
static uint32_t bt_cap, bt_n;
static uintptr_t bt_cfa;        /* CFA of the previous frame */
static uintptr_t bt_sp;         /* the handler's stack pointer */
static uintptr_t bt_stack_hi;   /* highest plausible CFA */
static uintptr_t vm_stack_lo, vm_stack_hi;  /* the VM thread's stack */

/* Records the VM thread's stack bounds (called on the VM thread at start).
 * When the handler runs elsewhere (a host fiber stack), CFAs are allowed
 * 8 MiB above the handler's stack pointer. */
static void note_vm_stack(void)
{
  pthread_attr_t a;
  void *addr;
  size_t size;
  vm_stack_lo = vm_stack_hi = 0;
  if (pthread_getattr_np(pthread_self(), &a) != 0)
    return;
  if (pthread_attr_getstack(&a, &addr, &size) == 0) {
    vm_stack_lo = (uintptr_t)addr;
    vm_stack_hi = (uintptr_t)addr + size;
  }
  pthread_attr_destroy(&a);
}

static void set_bounds(uintptr_t sp)
{
  bt_sp = sp;
  bt_cfa = 0;
  if (sp >= vm_stack_lo && sp < vm_stack_hi)
    bt_stack_hi = vm_stack_hi;
  else
    bt_stack_hi = sp + ((uintptr_t)8 << 20);
}

CAP_RAW_READ static _Unwind_Reason_Code bt_step(struct _Unwind_Context *ctx,
                                             void *arg)
{
  uintptr_t ip = _Unwind_GetIP(ctx);
  (void)arg;
  uintptr_t cfa = _Unwind_GetCFA(ctx);
  if (ip == 0 || bt_n >= bt_cap)
    return _URC_END_OF_STACK;
  /* Plausibility: code we know, and a CFA that climbs the stack we are on.
   * Stopping early loses frames; going on with garbage can fault. */
  if (!in_text((uint64_t)ip) && !in_mcode((uint64_t)ip))
    return _URC_END_OF_STACK;
  if (cfa + 65536 < bt_sp || cfa < bt_cfa || cfa > bt_stack_hi)
    return _URC_END_OF_STACK;
  bt_cfa = cfa;
  bt_out[bt_n++] = (uint64_t)ip;
#if defined(__x86_64__)
  /* libgcc looks up the caller's CFI (or reads its code bytes) before we
   * see the caller, so check the caller's return address now: on x86-64 it
   * sits right below the CFA.  The interpreter's CFI is not exact at every
   * PC, and a wrong step reads garbage there. */
  if (cfa >= 8 && cfa - 8 >= bt_sp - 65536) {
    uint64_t ra = *(const uint64_t *)(cfa - 8);
    if (!in_text(ra) && !in_mcode(ra))
      return _URC_END_OF_STACK;
  }
#endif
  /* Machine code: record it (it names the trace) but never step out. */
  if (in_mcode((uint64_t)ip))
    return _URC_END_OF_STACK;
  return _URC_NO_REASON;
}

/* frame_writer for Tarantool-style backtracers. */
static void *bt_frame_writer(int frame_no, void *addr)
{
  (void)frame_no;
  if (!addr || bt_n >= bt_cap)
    return NULL;
  bt_out[bt_n++] = (uint64_t)(uintptr_t)addr;
  return addr;
}

void ljp__cap_backtracer_warmup(void)
{
  /* The first unwind may load libgcc_s' FDE caches or register objects
   * (it can take the loader lock); do it now, outside any handler. */
  uint64_t scratch[8];
  bt_out = scratch;
  bt_cap = 8;
  bt_n = 0;
  note_vm_stack();
  set_bounds((uintptr_t)&scratch);
  if (cap_S.backtracer)
    cap_S.backtracer(bt_frame_writer);
  else
    _Unwind_Backtrace(bt_step, NULL);
  bt_out = NULL;
  bt_cap = 0;
}

/* ---- keeping the handler's lookups allocation-free ---------------------- */

/* libgcc before GCC 13 indexes an object registered with __register_frame
 * at the first FDE lookup after the registration, and that index is built
 * with malloc.  LuaJIT registers every new machine-code area while it
 * assembles a trace.  If the first lookup were the handler's, it would
 * call malloc in signal context, and a tick that interrupted malloc would
 * deadlock the VM thread.  So the handler does not unwind while a trace is
 * compiled (cap_S.compiling), and one lookup on the VM thread after each
 * compile (any PC outside the new areas makes libgcc index all of them)
 * keeps that work out of the handler. */
static _Unwind_Reason_Code settle_step(struct _Unwind_Context *ctx, void *arg)
{
  (void)ctx;
  (void)arg;
  return _URC_END_OF_STACK;
}

void ljp__cap_unwind_settle(void)
{
  ljp__cap_core_enter();
  _Unwind_Backtrace(settle_step, NULL);
  ljp__cap_core_leave();
}

void ljp__cap_core_enter(void)
{
  cap_S.in_core++;
  atomic_signal_fence(memory_order_seq_cst);
}

void ljp__cap_core_leave(void)
{
  atomic_signal_fence(memory_order_seq_cst);
  cap_S.in_core--;
}

/* ---- where unwinding would deadlock ------------------------------------ */

/* libgcc's _Unwind_Find_FDE takes a mutex as soon as any object was
 * registered with __register_frame, which LuaJIT does for JIT machine code.
 * A tick that interrupts the VM thread inside that critical section (a Lua
 * error being thrown, a C++ exception, the host's own backtrace()) must not
 * unwind again on the same thread.  The critical section runs in libgcc_s
 * and in libc's mutex functions, so the handler records only the PC when it
 * interrupts libgcc_s, or libc outside its exported, sized functions other
 * than the mutex ones.  The tables are built at start and read-only while
 * the handler is armed. */
static uint64_t gcc_lo, gcc_hi, libc_lo, libc_hi;
static const uint64_t *libc_fn;   /* sorted pairs lo, hi of safe functions */
static size_t nlibc_fn;

void ljp__cap_signal_set_unsafe(uint64_t glo, uint64_t ghi, uint64_t clo,
                                uint64_t chi, const uint64_t *fn, size_t nfn)
{
  gcc_lo = glo;
  gcc_hi = ghi;
  libc_lo = clo;
  libc_hi = chi;
  libc_fn = fn;
  nlibc_fn = nfn;
}

/* The lock is taken inside libgcc_s, so while it is held a return address
 * into libgcc_s sits on the interrupted stack, under whatever runs on top:
 * libc's lock functions, or the allocator, which libgcc calls with the lock
 * held (it frees an object's index when LuaJIT deregisters a machine-code
 * area at a flush, and allocates one at the first lookup after a
 * registration).  Allocators can have large frames (a sanitizer's records
 * a stack trace of 2 KiB and more), so up to 16 KiB above the stack
 * pointer are scanned, never past the top of the VM thread's stack; on
 * another stack a read that faults ends the scan through the fault guard.
 * A stale value only costs that tick its host stack. */
#define CAP_SCAN_BYTES 16384
CAP_RAW_READ static int libgcc_on_stack(const void *ucv)
{
#if defined(__x86_64__)
  const ucontext_t *uc = ucv;
  uintptr_t sp = (uintptr_t)uc->uc_mcontext.gregs[REG_RSP];
  uintptr_t end = sp + CAP_SCAN_BYTES;
  const uint64_t *w;
  if (!sp || gcc_hi <= gcc_lo)
    return 0;
  if (sp >= vm_stack_lo && sp < vm_stack_hi && end > vm_stack_hi)
    end = vm_stack_hi;
  for (w = (const uint64_t *)sp; (uintptr_t)(w + 1) <= end; w++)
    if (*w >= gcc_lo && *w < gcc_hi)
      return 1;
  return 0;
#else
  (void)ucv;
  return 0;
#endif
}

static int unwind_unsafe(uint64_t pc, const void *uc)
{
  size_t lo = 0, hi = nlibc_fn;
  if (pc >= gcc_lo && pc < gcc_hi)
    return 1;
  if (libgcc_on_stack(uc))
    return 1;
  if (pc < libc_lo || pc >= libc_hi)
    return 0;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (libc_fn[2 * mid] <= pc)
      lo = mid + 1;
    else
      hi = mid;
  }
  return !(lo > 0 && pc < libc_fn[2 * (lo - 1) + 1]);
}

/* ---- fault guard ----------------------------------------------------------- */

/* Last line of defence: the checks above keep libgcc on plausible frames,
 * but the interpreter's CFI is not exact at every PC, and a bad step can
 * still read unmapped memory.  While the handler unwinds, SIGSEGV/SIGBUS
 * raised on the VM thread jump back to the handler, which keeps the frames
 * found so far.  Any other fault goes to the host's handler. */
static sigjmp_buf bt_jmp;
static volatile sig_atomic_t bt_guard;
static struct sigaction old_segv, old_bus;
static int guard_installed;

static void on_fault(int sig, siginfo_t *si, void *uc)
{
  const struct sigaction *old = sig == SIGSEGV ? &old_segv : &old_bus;
  if (bt_guard && (pid_t)syscall(SYS_gettid) == cap_S.vm_tid) {
    bt_guard = 0;
    siglongjmp(bt_jmp, 1);
  }
  if (old->sa_flags & SA_SIGINFO) {
    old->sa_sigaction(sig, si, uc);
  } else if (old->sa_handler == SIG_IGN) {
    return;
  } else if (old->sa_handler != SIG_DFL) {
    old->sa_handler(sig);
  } else {
    /* Default action: restore it and let the fault happen again. */
    sigaction(sig, old, NULL);
  }
}

static void guard_install(void)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fault;
  /* NODEFER: after the jump the signal must not stay blocked. */
  sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGSEGV, &sa, &old_segv);
  sigaction(SIGBUS, &sa, &old_bus);
  guard_installed = 1;
}

static void guard_remove(void)
{
  if (!guard_installed)
    return;
  sigaction(SIGSEGV, &old_segv, NULL);
  sigaction(SIGBUS, &old_bus, NULL);
  guard_installed = 0;
}

/* Unwinds into frames[0..cap) and drops everything inside the handler: the
 * stack then starts at the interrupted PC.  Returns the frame count. */
static uint32_t capture_stack(uint64_t pc, const void *uc, uint64_t *frames,
                              uint32_t cap)
{
  uint32_t i, n;
  /* In a trace: the sample names the trace and carries no host stack.
   * In the capture core's own code or while a trace compiles: the PC only,
   * as unwinding there could allocate or deadlock (so could unwinding
   * where unwind_unsafe says, checked below under the fault guard). */
  if (in_mcode(pc) || cap_S.in_core || cap_S.compiling) {
    frames[0] = pc;
    return pc ? 1 : 0;
  }
  bt_out = frames;
  bt_cap = cap;
  bt_n = 0;
  set_bounds((uintptr_t)&i);
  if (sigsetjmp(bt_jmp, 0) == 0) {
    bt_guard = 1;
    /* Under the guard: the stack scan may read past a fiber's stack. */
    if (!unwind_unsafe(pc, uc)) {
      if (cap_S.backtracer)
        cap_S.backtracer(bt_frame_writer);
      else
        _Unwind_Backtrace(bt_step, NULL);
    }
    bt_guard = 0;
  } else {
    atomic_fetch_add_explicit(&cap_S.unwind_faults, 1, memory_order_relaxed);
  }
  n = bt_n;
  bt_out = NULL;
  for (i = 0; i < n && i < CAP_HANDLER_EXTRA; i++)
    if (frames[i] == pc)
      break;
  if (i < n && i < CAP_HANDLER_EXTRA) {
    memmove(frames, frames + i, (size_t)(n - i) * sizeof *frames);
    n -= i;
  } else if (!cap_S.backtracer || n == 0) {
    /* The unwinder did not get past the signal frame: keep the PC only. */
    frames[0] = pc;
    n = pc ? 1 : 0;
  }
  if (n > cap_S.max_frames)
    n = cap_S.max_frames;
  return n;
}

/* ---- ticks read from the VM's own structures ------------------------------ */

#if defined(__x86_64__)
/* The interpreter's C frame on x86-64 (POSIX): LuaJIT's entry points push
 * rbp, rbx, r15, r14 and reserve 5 words, so the frame holds 10 words with
 * the return address into the caller (lua_pcall & co.) at word 9 and the
 * caller's rbp at word 8.  JIT machine code runs on that frame (it has no
 * CFI of its own), so a tick in a trace resumes the host unwind there. */
#define CAP_CFRAME_RA 72
#define CAP_CFRAME_RBP 64
#define CAP_CFRAME_SIZE 80
#endif

/* Stack bounds for reads of the interrupted stack. */
static void read_bounds(uint64_t sp, uint64_t *lo, uint64_t *hi)
{
  if (sp >= vm_stack_lo && sp < vm_stack_hi) {
    *lo = vm_stack_lo;
    *hi = vm_stack_hi;
  } else {
    /* A stack of the host's own (a fiber): the fault guard covers reads
     * past its end. */
    *lo = sp;
    *hi = sp + ((uint64_t)1 << 20);
  }
}

/* Whether pc runs on an interpreter activation's C frame: the
 * interpreter's own code or JIT machine code. */
static int on_vm_frame(uint64_t pc)
{
  return (pc >= cap_S.lj.interp_lo && pc < cap_S.lj.interp_hi) ||
         in_mcode(pc);
}

/* Unwinds the host stack with the capture core's own tables.
 *
 * The interpreter's unwind entry is not exact everywhere (its entry and
 * exit code, a few helpers), and JIT machine code has none, but each
 * activation of the VM has a C frame whose address LuaJIT keeps:
 * cur_L->cframe for the innermost, and each C frame links to the one it
 * was entered from.  So when the walk reaches a return address into the
 * interpreter or into machine code (or cannot leave machine code), it
 * continues from that activation's C frame: return address at +72, the
 * caller's rbp at +64, the caller's stack pointer at +80. */
CAP_RAW_READ static uint32_t own_unwind(const void *ucv, uint64_t cframe,
                                        uint64_t *frames, uint32_t cap,
                                        uint8_t *hflags)
{
  uint32_t n = 0, fl = 0;
  uint64_t lo, hi;
#if defined(__x86_64__)
  const ucontext_t *uc = ucv;
  cap_uw_regs r;
  uint64_t cf = cframe, sp0;
  int restarts = 0;
  if (!uc || cap == 0) {
    *hflags = CAP_SLOT_HOST_PARTIAL;
    return 0;
  }
  r.pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
  r.sp = (uint64_t)uc->uc_mcontext.gregs[REG_RSP];
  r.fp = (uint64_t)uc->uc_mcontext.gregs[REG_RBP];
  r.pc_is_return = 0;
  sp0 = r.sp;
  read_bounds(r.sp, &lo, &hi);
  for (;;) {
    uint32_t n0 = n, j, cut = UINT32_MAX;
    fl = 0;
    if (in_mcode(r.pc)) {
      /* The machine code itself names the trace. */
      frames[n++] = r.pc;
      cut = n0;
      fl = CAP_UW_NOINFO;
    } else {
      n += ljp__cap_uw_unwind(&r, lo, hi, frames + n, cap - n, &fl);
      /* The first return address into a VM activation: its C frame is
       * the one to continue from (the interrupted PC itself only when the
       * walk could not get past it). */
      for (j = n0; j < n && cut == UINT32_MAX; j++)
        if (on_vm_frame(frames[j]) &&
            (j > 0 || (j + 1 == n && (fl & (CAP_UW_NOINFO | CAP_UW_BADSTACK)))))
          cut = j;
    }
    if (cut == UINT32_MAX)
      break;
    if (restarts >= 64 || !cf || (cf & 7) || cf <= sp0 || cf < lo ||
        cf + CAP_CFRAME_SIZE > hi) {
      /* No C frame to continue from: keep what the tables gave. */
      break;
    }
    n = cut + 1;
    /* Machine code runs on the interpreter's C frame: that frame, named
     * as the interpreter (an address inside its code; +1 because later
     * frames are looked up as return addresses). */
    if (in_mcode(frames[cut]) && cap_S.lj.interp_hi > cap_S.lj.interp_lo + 1 &&
        n < cap)
      frames[n++] = cap_S.lj.interp_lo + 1;
    if (n >= cap) {
      fl = CAP_UW_TRUNCATED;
      break;
    }
    r.pc = *(const uint64_t *)(uintptr_t)(cf + CAP_CFRAME_RA);
    r.fp = *(const uint64_t *)(uintptr_t)(cf + CAP_CFRAME_RBP);
    r.sp = cf + CAP_CFRAME_SIZE;
    r.pc_is_return = 1;
    sp0 = cf;
    /* The activation this one was entered from (0 for a coroutine's
     * resume: its resumer's frame then comes from the tables). */
    cf = *(const uint64_t *)(uintptr_t)(cf + cap_S.lj.off_cf_prev) &
         ~(uint64_t)3;
    restarts++;
  }
  *hflags = (uint8_t)(fl & 0x7f);
  if (!(fl & CAP_UW_ROOT))
    *hflags |= CAP_SLOT_HOST_PARTIAL;
#else
  (void)ucv; (void)cframe; (void)frames; (void)cap; (void)lo; (void)hi;
  (void)fl;
  *hflags = CAP_SLOT_HOST_PARTIAL;
#endif
  return n;
}

/* Fills slot idx from the VM's structures and the interrupted context. */
static void capture_vm(uint32_t idx, uint64_t pc, const void *uc)
{
  cap_ring *r = &cap_S.ring;
  cap_slot_meta *m = &r->meta[idx];
  cap_vm_frame *lf = r->lframes + (size_t)idx * r->lstride;
  uint64_t *frames = r->frames + (size_t)idx * r->stride;
  volatile uint32_t nl = 0, nh = 0;
  volatile int walked = 0;
  cap_vm_info info;
  uint32_t lmax = cap_S.mode == LJP_CAPTURE_CALLGRAPH ? r->lstride : 1;

  memset(&info, 0, sizeof info);
  info.vmstate = CAP_VMST_C;
  info.status = CAP_VMS_NOLUA;
  m->host_flags = CAP_SLOT_HOST_PARTIAL;
  if (sigsetjmp(bt_jmp, 0) == 0) {
    bt_guard = 1;
    nl = ljp__cap_vm_walk(&cap_S.lj, uc, &info, lf, lmax);
    walked = 1;
    if (cap_S.mode == LJP_CAPTURE_CALLGRAPH && cap_S.own_unwinder) {
      uint8_t hf = CAP_SLOT_HOST_PARTIAL;
      nh = own_unwind(uc, info.cframe, frames, cap_S.max_frames, &hf);
      m->host_flags = hf;
    }
    bt_guard = 0;
  } else {
    atomic_fetch_add_explicit(&cap_S.unwind_faults, 1, memory_order_relaxed);
    /* A fault inside the walk: the frames it wrote before are counted in
     * info.nframes (its return value is lost) and the chain is cut. */
    if (!walked) {
      nl = info.nframes;
      info.status = CAP_VMS_REJECTED;
    }
  }
  if (cap_S.mode == LJP_CAPTURE_CALLGRAPH && !cap_S.own_unwinder) {
    nh = capture_stack(pc, uc, frames, r->stride);
  } else if (nh == 0 && pc) {
    frames[0] = pc;
    nh = 1;
  }
  if (nl > lmax)
    nl = lmax;
  m->vmstate = info.vmstate;
  m->L = info.L;
  m->nlua = (uint16_t)nl;
  m->lua_status = (uint8_t)info.status;
  r->nframes[idx] = nh;
}

/* ---- the handler -------------------------------------------------------- */

static void chain_luajit(int sig, siginfo_t *si, void *uc)
{
  const struct sigaction *sa = &cap_S.lj_sa;
  if (sa->sa_flags & SA_SIGINFO) {
    if (sa->sa_sigaction)
      sa->sa_sigaction(sig, si, uc);
  } else if (sa->sa_handler != SIG_DFL && sa->sa_handler != SIG_IGN) {
    sa->sa_handler(sig);
  }
}

static void cap_on_signal(int sig, siginfo_t *si, void *uc)
{
  int saved_errno = errno;
  uint64_t t0 = ljp__cap_now_ns(CLOCK_MONOTONIC);
  cap_ring *r = &cap_S.ring;
  uint32_t head, tail;

  if (!atomic_load_explicit(&cap_S.armed, memory_order_acquire))
    goto out;
  if ((pid_t)syscall(SYS_gettid) != cap_S.vm_tid) {
    /* Not the VM thread: capturing would describe the wrong stack, and
     * chaining would make LuaJIT count a tick without a slot. */
    atomic_fetch_add_explicit(&cap_S.foreign, 1, memory_order_relaxed);
    goto out;
  }
  atomic_fetch_add_explicit(&cap_S.ticks, 1, memory_order_relaxed);
  head = atomic_load_explicit(&r->head, memory_order_relaxed);
  tail = atomic_load_explicit(&r->tail, memory_order_acquire);
  if (head - tail >= r->nslots) {
    atomic_fetch_add_explicit(&cap_S.dropped, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&cap_S.drops_pending, 1, memory_order_relaxed);
  } else {
    uint32_t idx = head % r->nslots;
    uint64_t *frames = r->frames + (size_t)idx * r->stride;
    uint64_t pc = uc_pc(uc);
    if (cap_S.use_vm) {
      r->meta[idx].t_ns = t0;
      capture_vm(idx, pc, uc);
    } else if (cap_S.mode == LJP_CAPTURE_CALLGRAPH) {
      r->nframes[idx] = capture_stack(pc, uc, frames, r->stride);
    } else {
      /* D needs the PC for trace attribution, L only the leaf. */
      frames[0] = pc;
      r->nframes[idx] = pc ? 1 : 0;
    }
    atomic_store_explicit(&r->head, head + 1, memory_order_release);
  }
  chain_luajit(sig, si, uc);
  atomic_fetch_add_explicit(&cap_S.handler_ns,
                            ljp__cap_now_ns(CLOCK_MONOTONIC) - t0,
                            memory_order_relaxed);
out:
  errno = saved_errno;
}

/* ---- arming ------------------------------------------------------------- */

static int same_handler(const struct sigaction *a, const struct sigaction *b)
{
  if ((a->sa_flags & SA_SIGINFO) != (b->sa_flags & SA_SIGINFO))
    return 0;
  if (a->sa_flags & SA_SIGINFO)
    return a->sa_sigaction == b->sa_sigaction;
  return a->sa_handler == b->sa_handler;
}

/* Starts LuaJIT's profiler and puts our handler in front of it.  Returns
 * LJP_CAPTURE_SUCCESS or ERRRUN (LuaJIT's profiler is held elsewhere). */
int ljp__cap_signal_arm(lua_State *L, int timer, uint64_t period_us)
{
  struct sigaction ign, cur, ours;
  sigset_t block, old;
  char mode[32];
  uint64_t ms = (period_us + 999) / 1000;

  sigemptyset(&block);
  sigaddset(&block, SIGPROF);
  /* No tick may reach LuaJIT's handler before ours is in front of it:
   * it would be counted without a slot. */
  pthread_sigmask(SIG_BLOCK, &block, &old);

  sigaction(SIGPROF, NULL, &cap_S.orig_sa);
  /* LuaJIT saves the disposition it finds and restores it at its stop,
   * including the stop that lua_close() performs.  Make that SIG_IGN, so a
   * tick of our own timer that lands between lua_close() and our cleanup is
   * ignored instead of killing the process with SIGPROF's default action;
   * our stop restores the host's original. */
  memset(&ign, 0, sizeof ign);
  ign.sa_handler = SIG_IGN;
  sigemptyset(&ign.sa_mask);
  sigaction(SIGPROF, &ign, NULL);

  if (ms < 1)
    ms = 1;
  if (ms > 1000000)
    ms = 1000000;
  snprintf(mode, sizeof mode, "i%u", (unsigned)ms);
  luaJIT_profile_start(L, mode, ljp__cap_profile_cb, NULL);
  if (timer != LJP_CAPTURE_TIMER_ITIMER) {
    /* Our own timer drives the ticks: LuaJIT's process-wide one goes off
     * at once, before a tick of it can land on another thread. */
    struct itimerval zero;
    memset(&zero, 0, sizeof zero);
    setitimer(ITIMER_PROF, &zero, NULL);
  }
  sigaction(SIGPROF, NULL, &cur);
  if (same_handler(&cur, &ign)) {
    /* LuaJIT returned silently: another VM profiles. */
    sigaction(SIGPROF, &cap_S.orig_sa, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return LJP_CAPTURE_ERRRUN;
  }
  cap_S.lj_sa = cur;
  cap_S.vm_tid = (pid_t)syscall(SYS_gettid);

  memset(&ours, 0, sizeof ours);
  ours.sa_sigaction = cap_on_signal;
  ours.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&ours.sa_mask);
  if (cap_S.mode == LJP_CAPTURE_CALLGRAPH || cap_S.use_vm)
    guard_install();
  atomic_store_explicit(&cap_S.armed, 1, memory_order_release);
  sigaction(SIGPROF, &ours, NULL);

  cap_S.have_timer = 0;
  if (timer == LJP_CAPTURE_TIMER_ITIMER) {
    cap_S.clock = CLOCK_PROCESS_CPUTIME_ID;
    if (period_us % 1000 != 0) {
      struct itimerval tv;
      tv.it_interval.tv_sec = (time_t)(period_us / 1000000);
      tv.it_interval.tv_usec = (suseconds_t)(period_us % 1000000);
      tv.it_value = tv.it_interval;
      setitimer(ITIMER_PROF, &tv, NULL);
    }
  } else {
    struct sigevent sev;
    struct itimerspec its;
    clockid_t clk = CLOCK_MONOTONIC;
    if (timer == LJP_CAPTURE_TIMER_THREAD &&
        pthread_getcpuclockid(pthread_self(), &clk) != 0)
      clk = CLOCK_THREAD_CPUTIME_ID;
    cap_S.clock = clk;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_THREAD_ID;
    sev.sigev_signo = SIGPROF;
#ifdef sigev_notify_thread_id
    sev.sigev_notify_thread_id = cap_S.vm_tid;
#else
    sev._sigev_un._tid = cap_S.vm_tid;
#endif
    if (timer_create(clk, &sev, &cap_S.timerid) == 0) {
      its.it_interval.tv_sec = (time_t)(period_us / 1000000);
      its.it_interval.tv_nsec = (long)(period_us % 1000000) * 1000;
      its.it_value = its.it_interval;
      timer_settime(cap_S.timerid, 0, &its, NULL);
      cap_S.have_timer = 1;
    }
  }
  cap_S.t_start = ljp__cap_now_ns(cap_S.clock);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  return LJP_CAPTURE_SUCCESS;
}

/* Stops every tick source, stops LuaJIT's profiler (L may be NULL when the
 * VM is gone) and restores the host's SIGPROF disposition. */
void ljp__cap_signal_disarm(lua_State *L)
{
  struct sigaction ign;
  struct itimerval zero;
  sigset_t block, old;

  sigemptyset(&block);
  sigaddset(&block, SIGPROF);
  pthread_sigmask(SIG_BLOCK, &block, &old);
  if (cap_S.have_timer) {
    timer_delete(cap_S.timerid);
    cap_S.have_timer = 0;
  }
  memset(&zero, 0, sizeof zero);
  setitimer(ITIMER_PROF, &zero, NULL);
  atomic_store_explicit(&cap_S.armed, 0, memory_order_release);
  /* SIG_IGN discards a tick still pending on this thread; then the host's
   * own disposition comes back. */
  memset(&ign, 0, sizeof ign);
  ign.sa_handler = SIG_IGN;
  sigemptyset(&ign.sa_mask);
  sigaction(SIGPROF, &ign, NULL);
  /* LuaJIT restores what it found at its start (SIG_IGN, see arm). */
  if (L)
    luaJIT_profile_stop(L);
  sigaction(SIGPROF, &cap_S.orig_sa, NULL);
  guard_remove();
  pthread_sigmask(SIG_SETMASK, &old, NULL);
}
