/*
 * test_unwind.c — the capture core's own unwinder (cap_unwind.c) against
 * ground truth: return addresses that each function of a call chain
 * records itself (__builtin_return_address), symbol sizes from the dynamic
 * symbol tables (dladdr1), the program's entry point (_start, AT_ENTRY),
 * and libgcc's unwinder on the same ticks.
 *
 * Ticks come from ITIMER_PROF while a chain burns CPU; the handler unwinds
 * from its ucontext (rip, rsp, rbp) into preallocated arrays, and the
 * checks run afterwards, outside the handler.  Each test runs in its own
 * forked process (check's default).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <check.h>
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/time.h>
#include <time.h>
#include <ucontext.h>
#include <unwind.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "cap_ehframe.h"
#include "cap_unwind.h"

#define NOINLINE __attribute__((noinline))
#define MAXS 2048           /* samples per run */
#define MAXF 128            /* frames per sample */

/* ---- ground truth helpers ------------------------------------------------ */

typedef struct range {
  uint64_t lo, hi;
} range;

/* The [lo, hi) of the dynamic symbol at addr, from its st_size. */
static range sym_range(const void *addr)
{
  Dl_info di;
  const ElfW(Sym) *sym = NULL;
  range r = {0, 0};
  if (dladdr1(addr, &di, (void **)&sym, RTLD_DL_SYMENT) && sym &&
      di.dli_saddr) {
    r.lo = (uint64_t)(uintptr_t)di.dli_saddr;
    r.hi = r.lo + sym->st_size;
  }
  return r;
}

static int in_range(range r, uint64_t a)
{
  return a >= r.lo && a < r.hi;
}

/* Whether a lies in the object whose file name contains name. */
static int in_object(uint64_t a, const char *name)
{
  Dl_info di;
  return dladdr((void *)(uintptr_t)a, &di) && di.dli_fname &&
         strstr(di.dli_fname, name);
}

static uint64_t main_ra;    /* main's return address (into libc) */

/* _start: the program's entry point; its call of __libc_start_main is
 * within its first bytes. */
static int in_start(uint64_t a)
{
  uint64_t e = getauxval(AT_ENTRY);
  return a > e && a < e + 64;
}

/* ---- the sampling handler ---------------------------------------------------- */

static _Thread_local uint64_t t_stack_hi;
static _Thread_local volatile int t_armed;

static uint64_t s_frames[MAXS][MAXF];
static uint32_t s_n[MAXS], s_flags[MAXS];
static atomic_uint s_count;
static uint32_t s_target;
static volatile int s_stop;

/* Bench mode: libgcc's unwind of the same tick, and the time of both. */
static volatile int s_bench;
static uint64_t g_frames[MAXS][MAXF];
static uint32_t g_n[MAXS];
static uint64_t ns_own[MAXS], ns_gcc[MAXS];
/* Bench mode: the same unwinds repeated at once, with warm caches. */
static uint64_t ns_own_warm[MAXS], ns_gcc_warm[MAXS];

static int u64_cmp(const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* Median of the first n of v (sorted in place): the mean would count the
 * ticks where the process was descheduled in the middle of an unwind. */
static double median_ns(uint64_t *v, uint32_t n)
{
  if (n == 0)
    return 0;
  qsort(v, n, sizeof *v, u64_cmp);
  return (double)v[n / 2];
}

static void note_stack(void)
{
  pthread_attr_t a;
  void *addr;
  size_t size;
  ck_assert_int_eq(pthread_getattr_np(pthread_self(), &a), 0);
  ck_assert_int_eq(pthread_attr_getstack(&a, &addr, &size), 0);
  pthread_attr_destroy(&a);
  t_stack_hi = (uint64_t)(uintptr_t)addr + size;
}

static uint64_t now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

typedef struct gcc_bt {
  uint64_t *out;
  uint32_t n;
} gcc_bt;

static _Unwind_Reason_Code gcc_step(struct _Unwind_Context *ctx, void *arg)
{
  gcc_bt *b = arg;
  if (b->n >= MAXF)
    return _URC_END_OF_STACK;
  b->out[b->n++] = (uint64_t)_Unwind_GetIP(ctx);
  return _URC_NO_REASON;
}

static void on_prof(int sig, siginfo_t *si, void *ucv)
{
  ucontext_t *uc = ucv;
  cap_uw_regs r;
  unsigned i;
  uint64_t t0, t1;
  (void)sig;
  (void)si;
  if (!t_armed)
    return;
  i = atomic_fetch_add(&s_count, 1);
  if (i >= MAXS || i + 1 >= s_target) {
    s_stop = 1;
    if (i >= MAXS)
      return;
  }
  r.pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
  r.sp = (uint64_t)uc->uc_mcontext.gregs[REG_RSP];
  r.fp = (uint64_t)uc->uc_mcontext.gregs[REG_RBP];
  r.pc_is_return = 0;
  t0 = now_ns();
  s_n[i] = ljp__cap_uw_unwind(&r, r.sp, t_stack_hi, s_frames[i], MAXF,
                              &s_flags[i]);
  t1 = now_ns();
  ns_own[i] = t1 - t0;
  if (s_bench) {
    gcc_bt b = {g_frames[i], 0};
    uint64_t scratch[MAXF];
    uint32_t fl;
    _Unwind_Backtrace(gcc_step, &b);
    g_n[i] = b.n;
    t0 = now_ns();
    ns_gcc[i] = t0 - t1;
    b.n = 0;
    _Unwind_Backtrace(gcc_step, &b);
    t1 = now_ns();
    ns_gcc_warm[i] = t1 - t0;
    ljp__cap_uw_unwind(&r, r.sp, t_stack_hi, scratch, MAXF, &fl);
    ns_own_warm[i] = now_ns() - t1;
  }
}

/* The handler on SIGPROF, for target samples; no timer yet. */
static void install(uint32_t target)
{
  struct sigaction sa;
  atomic_store(&s_count, 0);
  s_target = target;
  s_stop = 0;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_prof;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  ck_assert_int_eq(sigaction(SIGPROF, &sa, NULL), 0);
}

static void arm(uint32_t target)
{
  struct itimerval it;
  install(target);
  memset(&it, 0, sizeof it);
  it.it_interval.tv_usec = 1000;
  it.it_value.tv_usec = 1000;
  ck_assert_int_eq(setitimer(ITIMER_PROF, &it, NULL), 0);
}

static uint32_t disarm(void)
{
  struct itimerval it;
  uint32_t n;
  memset(&it, 0, sizeof it);
  setitimer(ITIMER_PROF, &it, NULL);
  n = atomic_load(&s_count);
  return n < MAXS ? n : MAXS;
}

/* ---- the C call chain ----------------------------------------------------- */

typedef void (*outer_fn)(volatile int *, void (*)(void));
static outer_fn uwl_outer;
static uint64_t *uwl_ra;
static range leaf_range;
static uint64_t ra_a, ra_b;     /* uwt_a's and uwt_b's return addresses */

static void load_chain_from(const char *path)
{
  void *h = dlopen(path, RTLD_NOW);
  void *leaf;
  ck_assert_msg(h != NULL, "%s", dlerror());
  *(void **)&uwl_outer = dlsym(h, "uwl_outer");
  uwl_ra = dlsym(h, "uwl_ra");
  leaf = dlsym(h, "uwl_leaf");
  ck_assert(uwl_outer && uwl_ra && leaf);
  leaf_range = sym_range(leaf);
  ck_assert_uint_gt(leaf_range.hi, leaf_range.lo);
}

static void load_chain(void)
{
  load_chain_from(UNWIND_CHAIN_SO);
}

static NOINLINE void uwt_b(volatile int *stop, void (*hook)(void))
{
  ra_b = (uint64_t)(uintptr_t)__builtin_return_address(0);
  uwl_outer(stop, hook);
  __asm__ volatile("" ::: "memory");
}

NOINLINE void uwt_a(volatile int *stop, void (*hook)(void));
NOINLINE void uwt_a(volatile int *stop, void (*hook)(void))
{
  ra_a = (uint64_t)(uintptr_t)__builtin_return_address(0);
  uwt_b(stop, hook);
  __asm__ volatile("" ::: "memory");
}

/* Whether frames f[0..n) are a tick in the chain's leaf, exactly: a few
 * frames above the leaf (memchr, a hook), the leaf, the return addresses
 * of uwl_mid, uwl_outer, uwt_b, uwt_a, and in the end main's return address
 * and _start, with ROOT. */
static int chain_exact(const uint64_t *f, uint32_t n, uint32_t flags,
                       int want_main)
{
  const uint64_t expect[5] = {uwl_ra[0], uwl_ra[1], uwl_ra[2], ra_b, ra_a};
  uint32_t k, j;
  for (k = 0; k < n; k++)
    if (in_range(leaf_range, k ? f[k] - 1 : f[k]))
      break;
  if (k == n || k > 8)
    return 0;
  for (j = 0; j < 5; j++)
    if (k + 1 + j >= n || f[k + 1 + j] != expect[j])
      return 0;
  if (!(flags & CAP_UW_ROOT) || (flags & ~(uint32_t)CAP_UW_ROOT))
    return 0;
  if (want_main) {
    for (j = k + 6; j < n; j++)
      if (f[j] == main_ra)
        break;
    if (j == n || !in_start(f[n - 1]))
      return 0;
  }
  return 1;
}

static void dump(const char *what, const uint64_t *f, uint32_t n,
                 uint32_t flags)
{
  uint32_t j;
  fprintf(stderr, "%s: %u frames, flags %#x\n", what, n, flags);
  for (j = 0; j < n; j++) {
    Dl_info di;
    int ok = dladdr((void *)(uintptr_t)(j ? f[j] - 1 : f[j]), &di);
    fprintf(stderr, "  %#llx %s %s+%#llx\n", (unsigned long long)f[j],
            ok && di.dli_sname ? di.dli_sname : "?",
            ok && di.dli_fname ? di.dli_fname : "?",
            ok ? (unsigned long long)(f[j] - (uint64_t)(uintptr_t)di.dli_fbase)
               : 0ull);
  }
}

/* ---- tests --------------------------------------------------------------- */

START_TEST(tables_cover_loaded_objects)
{
  size_t nobj, nrows, bytes;
  uint64_t lo, hi;
  struct timespec a, b;
  load_chain();
  clock_gettime(CLOCK_MONOTONIC, &a);
  ck_assert_int_eq(ljp__cap_uw_init(), 0);
  clock_gettime(CLOCK_MONOTONIC, &b);
  ljp__cap_uw_stats(&nobj, &nrows, &bytes);
  fprintf(stderr, "tables: %zu objects, %zu rows, %zu bytes, built in "
          "%.1f ms\n", nobj, nrows, bytes,
          (double)(b.tv_sec - a.tv_sec) * 1e3 +
              (double)(b.tv_nsec - a.tv_nsec) * 1e-6);
  ck_assert_uint_ge(nobj, 4);   /* exe, libc, ld.so, vdso, the chain... */
  ck_assert_uint_gt(nrows, 1000);
  /* Function ranges are the FDEs', which match the symbols' sizes. */
  ck_assert(ljp__cap_uw_function_range(leaf_range.lo + 1, &lo, &hi));
  ck_assert_uint_eq(lo, leaf_range.lo);
  ck_assert_uint_eq(hi, leaf_range.hi);
  {
    range pc = sym_range((void *)(uintptr_t)lua_pcall);
    ck_assert(ljp__cap_uw_function_range(pc.hi - 1, &lo, &hi));
    ck_assert_uint_eq(lo, pc.lo);
    ck_assert_uint_eq(hi, pc.hi);
  }
  ck_assert(!ljp__cap_uw_function_range((uint64_t)(uintptr_t)&nobj, &lo, &hi));
  ljp__cap_uw_free();
}
END_TEST

/* ---- the CFA programs, on a synthetic .eh_frame ---------------------------- */

/* A .eh_frame_hdr and .eh_frame built in memory, with function addresses
 * relative to the buffer (pcrel), and the rows they must give. */
typedef struct ehbuf {
  uint8_t b[1024];
  size_t n;
} ehbuf;

static void eb_put(ehbuf *e, const uint8_t *p, size_t len)
{
  ck_assert_uint_le(e->n + len, sizeof e->b);
  memcpy(e->b + e->n, p, len);
  e->n += len;
}

static void eb_u32(ehbuf *e, size_t at, uint32_t v)
{
  memcpy(e->b + at, &v, 4);
}

/* An FDE for [pc, pc + len) (buffer-relative) with program prog. */
static size_t eb_fde(ehbuf *e, size_t cie, uint32_t pc, uint32_t len,
                     const uint8_t *prog, size_t plen)
{
  size_t at = e->n;
  uint8_t z[4] = {0, 0, 0, 0};
  eb_put(e, z, 4);                              /* length, below */
  eb_put(e, z, 4);
  eb_u32(e, at + 4, (uint32_t)(at + 4 - cie));  /* CIE pointer */
  eb_put(e, z, 4);
  eb_u32(e, at + 8, pc - (uint32_t)(at + 8));   /* pcrel sdata4 */
  eb_put(e, z, 4);
  eb_u32(e, at + 12, len);
  eb_put(e, z, 1);                              /* augmentation length */
  eb_put(e, prog, plen);
  eb_u32(e, at, (uint32_t)(e->n - at - 4));
  return at;
}

static void synthetic_rows(int with_table)
{
  static const uint8_t cie[] = {
    0, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b,
    0x0c, 7, 8,            /* def_cfa rsp+8 */
    0x90, 1,               /* RA at cfa-8 */
  };
  /* rbp frame, remember/restore, restore of a register */
  static const uint8_t p1[] = {
    0x41, 0x0e, 16, 0x86, 2,        /* +1: cfa rsp+16, rbp at cfa-16 */
    0x43, 0x0d, 6,                  /* +3: cfa rbp+16 */
    0x60, 0x0a, 0x0c, 7, 8, 0xc6,   /* +32: remember; rsp+8; restore rbp */
    0x41, 0x0b,                     /* +1: restore_state */
  };
  /* realigned stack (gcc's DRAP): CFA = *(rbp - 8), the caller's rbp at
   * *rbp; then the RA undefined */
  static const uint8_t p2[] = {
    0x0f, 3, 0x76, 0x78, 0x06, 0x10, 6, 2, 0x76, 0,
    0x44, 0x07, 16,
  };
  /* a PLT: pushes, then the linker's expression */
  static const uint8_t p3[] = {
    0x0e, 16, 0x46, 0x0e, 24, 0x4a,
    0x0f, 11, 0x77, 8, 0x80, 0, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22,
  };
  /* an opcode we do not know: NOINFO from there */
  static const uint8_t p4[] = {0x42, 0x0e, 16, 0x3f};
  static const struct {
    uint32_t pc;
    int16_t off;
    int8_t rbp;
    uint8_t kind;
  } want[] = {
    {0x1000, 1, 0, CAP_CFA_RSP | CAP_ROW_FSTART},
    {0x1001, 2, -2, CAP_CFA_RSP},
    {0x1004, 2, -2, CAP_CFA_RBP},
    {0x1024, 1, 0, CAP_CFA_RSP},
    {0x1025, 2, -2, CAP_CFA_RBP},
    {0x1100, -1, 0, CAP_CFA_DEREF_RBP | CAP_ROW_RBP_AT_FP | CAP_ROW_FSTART},
    {0x1104, 0, 0, CAP_CFA_ROOT},
    {0x1110, 0, 0, CAP_CFA_NOINFO | CAP_ROW_GAP},
    {0x1200, 2, 0, CAP_CFA_RSP | CAP_ROW_FSTART},
    {0x1206, 3, 0, CAP_CFA_RSP},
    {0x1210, 11, 0, CAP_CFA_PLT},
    {0x1220, 0, 0, CAP_CFA_NOINFO | CAP_ROW_GAP},
    {0x1300, 1, 0, CAP_CFA_RSP | CAP_ROW_FSTART},
    {0x1302, 0, 0, CAP_CFA_NOINFO},
    {0x1310, 0, 0, CAP_CFA_NOINFO | CAP_ROW_GAP},
  };
  static ehbuf e;
  const size_t eh = 48;
  size_t c, f[4], i, n = 0, cap = 0;
  uint64_t seg[1][2], hdr;
  cap_ehf_mem m;
  cap_uw_row *rows = NULL;
  uint8_t zero[4] = {0, 0, 0, 0};
  memset(&e, 0, sizeof e);
  e.n = eh;
  c = e.n;
  eb_put(&e, cie, sizeof cie);
  eb_u32(&e, c, (uint32_t)(sizeof cie - 4));
  /* Listed out of order: the builder sorts them. */
  f[2] = eb_fde(&e, c, 0x1200, 0x20, p3, sizeof p3);
  f[0] = eb_fde(&e, c, 0x1000, 0x100, p1, sizeof p1);
  f[1] = eb_fde(&e, c, 0x1100, 0x10, p2, sizeof p2);
  f[3] = eb_fde(&e, c, 0x1300, 0x10, p4, sizeof p4);
  eb_put(&e, zero, 4);                          /* terminator */
  /* .eh_frame_hdr at 0: version, pcrel sdata4 pointer to .eh_frame, then
   * (with_table) a udata4 count and a datarel sdata4 table. */
  e.b[0] = 1;
  e.b[1] = 0x1b;
  e.b[2] = with_table ? 0x03 : 0xff;
  e.b[3] = 0x3b;
  eb_u32(&e, 4, (uint32_t)(eh - 4));
  eb_u32(&e, 8, 4);
  for (i = 0; i < 4; i++) {
    eb_u32(&e, 12 + 8 * i, 0x1000 + 0x100 * (uint32_t)i);
    eb_u32(&e, 16 + 8 * i, (uint32_t)f[i]);
  }
  hdr = (uint64_t)(uintptr_t)e.b;
  seg[0][0] = hdr;
  seg[0][1] = hdr + sizeof e.b;
  m.seg = (const uint64_t (*)[2])seg;
  m.nseg = 1;
  ck_assert_int_eq(ljp__cap_ehf_rows(&m, hdr, hdr, &rows, &n, &cap), 0);
  for (i = 0; i < n && i < sizeof want / sizeof want[0]; i++) {
    ck_assert_msg(rows[i].pc == want[i].pc && rows[i].off == want[i].off &&
                  rows[i].rbp == want[i].rbp && rows[i].kind == want[i].kind,
                  "row %zu: pc %#x off %d rbp %d kind %#x", i, rows[i].pc,
                  rows[i].off, rows[i].rbp, rows[i].kind);
  }
  ck_assert_uint_eq(n, sizeof want / sizeof want[0]);
  free(rows);
}

START_TEST(cfa_programs_to_rows)
{
  synthetic_rows(1);    /* FDEs from the binary-search table */
  synthetic_rows(0);    /* FDEs from walking .eh_frame */
}
END_TEST

/* Timer ticks in a CPU-burning chain through the executable and the
 * dlopen'ed object at path reach _start with the exact frames. */
static void c_chain_ticks(const char *path, const char *what)
{
  uint32_t n, i, exact = 0, root = 0;
  load_chain_from(path);
  note_stack();
  ck_assert_int_eq(ljp__cap_uw_init(), 0);
  arm(400);
  t_armed = 1;
  uwt_a(&s_stop, NULL);
  t_armed = 0;
  n = disarm();
  ck_assert_uint_ge(n, 100);
  for (i = 0; i < n; i++) {
    root += (s_flags[i] & CAP_UW_ROOT) != 0;
    if (chain_exact(s_frames[i], s_n[i], s_flags[i], 1))
      exact++;
    else if (i == n - 1 || exact + 5 < i)
      dump("not exact", s_frames[i], s_n[i], s_flags[i]);
  }
  fprintf(stderr, "%s: %u ticks, %u exact, %u reach the root; "
          "median %.0f ns per unwind\n", what, n, exact, root,
          median_ns(ns_own, n));
  ck_assert_uint_ge(exact * 100, n * 99);
  ck_assert_uint_ge(root * 100, n * 99);
  ljp__cap_uw_free();
}

START_TEST(timer_ticks_in_c_chain)
{
  c_chain_ticks(UNWIND_CHAIN_SO, "C chain");
}
END_TEST

static int has_hdr(struct dl_phdr_info *info, size_t size, void *arg)
{
  int i;
  (void)size;
  if (!strstr(info->dlpi_name, "unwind_chain_nohdr"))
    return 0;
  *(int *)arg = 0;
  for (i = 0; i < info->dlpi_phnum; i++)
    if (info->dlpi_phdr[i].p_type == PT_GNU_EH_FRAME)
      *(int *)arg = 1;
  return 1;
}

/* An object linked without .eh_frame_hdr: its .eh_frame is found through
 * the section headers of its file. */
START_TEST(object_without_eh_frame_hdr)
{
  int hdr = -1;
  c_chain_ticks(UNWIND_CHAIN_NOHDR_SO, "C chain, no .eh_frame_hdr");
  dl_iterate_phdr(has_hdr, &hdr);
  ck_assert_int_eq(hdr, 0);
}
END_TEST

/* Starting from a return address with its sp and fp, as the handler does
 * from the interpreter's C frame when the PC is in JIT machine code. */
static int restart_ok;

/* libgcc's view of the frame of uwl_mid: its sp and rbp just after the
 * leaf returns.  In a backtrace callback, _Unwind_GetCFA is the CFA of the
 * frame called by the current one: the current frame's sp. */
typedef struct mid_regs {
  uint64_t sp, fp;
  int found;
} mid_regs;

static _Unwind_Reason_Code find_mid(struct _Unwind_Context *ctx, void *arg)
{
  mid_regs *m = arg;
  if ((uint64_t)_Unwind_GetIP(ctx) != uwl_ra[0])
    return _URC_NO_REASON;
  m->sp = (uint64_t)_Unwind_GetCFA(ctx);
  m->fp = (uint64_t)_Unwind_GetGR(ctx, 6);
  m->found = 1;
  return _URC_END_OF_STACK;
}

static void restart_hook(void)
{
  /* uwl_leaf called us.  Restart from its return address into uwl_mid
   * with the sp and rbp uwl_mid will have, as libgcc finds them. */
  mid_regs m = {0, 0, 0};
  uint64_t f[MAXF];
  uint32_t fl, n;
  cap_uw_regs r;
  _Unwind_Backtrace(find_mid, &m);
  if (!m.found)
    return;
  r.pc = uwl_ra[0];
  r.sp = m.sp;
  r.fp = m.fp;
  r.pc_is_return = 1;
  n = ljp__cap_uw_unwind(&r, r.sp, t_stack_hi, f, MAXF, &fl);
  restart_ok = n >= 6 && f[0] == uwl_ra[0] && f[1] == uwl_ra[1] &&
               f[2] == uwl_ra[2] && f[3] == ra_b && f[4] == ra_a &&
               fl == CAP_UW_ROOT && in_start(f[n - 1]);
  if (!restart_ok)
    dump("restart", f, n, fl);
}

START_TEST(restart_from_return_address)
{
  load_chain();
  note_stack();
  ck_assert_int_eq(ljp__cap_uw_init(), 0);
  uwt_a(&s_stop, restart_hook);
  ck_assert(restart_ok);
  ljp__cap_uw_free();
}
END_TEST

/* ---- the PLT rule ---------------------------------------------------------- */

static void noop_hook(void)
{
}

/* A PLT entry and PLT0, on forged stacks: the linker's CFA expression
 * (rsp + 8, or + 16 once the entry pushed its index) and PLT0's rows.  The
 * return address is uwl_outer's call of uwl_mid, which the first frame's
 * return-address scan does not accept for a PC in the PLT: only the rows
 * can find it. */
START_TEST(plt_entries)
{
  uint64_t st[8], f[8], plt, plt0;
  const uint8_t *code;
  uint32_t n, fl, idx;
  cap_uw_regs r;
  load_chain();
  ck_assert_int_eq(ljp__cap_uw_init(), 0);
  uwt_a(&s_stop, noop_hook);
  /* uwl_mid calls the exported uwl_leaf through its PLT entry. */
  code = (const uint8_t *)(uintptr_t)(uwl_ra[0] - 5);
  ck_assert_uint_eq(code[0], 0xe8);
  plt = uwl_ra[0] + (uint64_t)(int64_t)(int32_t)((uint32_t)code[1] |
        (uint32_t)code[2] << 8 | (uint32_t)code[3] << 16 |
        (uint32_t)code[4] << 24);
  ck_assert_uint_eq(plt & 15, 0);
  code = (const uint8_t *)(uintptr_t)plt;
  ck_assert(code[0] == 0xff && code[6] == 0x68);   /* jmp *GOT; push $i */
  idx = (uint32_t)code[7] | (uint32_t)code[8] << 8;
  plt0 = plt - 16 * ((uint64_t)idx + 1);

  /* Zeros above: uwl_outer's return address, whether its CFA is rsp + 16
   * or (with frame pointers) rbp + 16.  A sanitizer's instrumentation can
   * give uwl_outer a frame larger than st: the walk then stops at the
   * bound (BADSTACK) instead of reading the 0; what matters here is the
   * step out of the PLT entry. */
  memset(st, 0, sizeof st);
  r.sp = (uint64_t)(uintptr_t)st;
  r.fp = (uint64_t)(uintptr_t)&st[5];
  r.pc_is_return = 0;
  /* At the entry's jmp: the return address on top. */
  r.pc = plt;
  st[0] = uwl_ra[1];
  n = ljp__cap_uw_unwind(&r, r.sp, r.sp + sizeof st, f, 8, &fl);
  ck_assert_uint_eq(n, 2);
  ck_assert_uint_eq(f[1], uwl_ra[1]);
  ck_assert(fl == CAP_UW_ROOT || fl == CAP_UW_BADSTACK);
  /* After push $i (offset 11): one more slot. */
  r.pc = plt + 11;
  st[0] = idx;
  st[1] = uwl_ra[1];
  n = ljp__cap_uw_unwind(&r, r.sp, r.sp + sizeof st, f, 8, &fl);
  ck_assert_uint_eq(n, 2);
  ck_assert_uint_eq(f[1], uwl_ra[1]);
  ck_assert(fl == CAP_UW_ROOT || fl == CAP_UW_BADSTACK);
  /* PLT0 after its push of GOT[1] (offset 6): two more slots. */
  r.pc = plt0 + 6;
  st[0] = 12345;
  st[1] = idx;
  st[2] = uwl_ra[1];
  n = ljp__cap_uw_unwind(&r, r.sp, r.sp + sizeof st, f, 8, &fl);
  ck_assert_uint_eq(n, 2);
  ck_assert_uint_eq(f[1], uwl_ra[1]);
  ck_assert(fl == CAP_UW_ROOT || fl == CAP_UW_BADSTACK);
  ljp__cap_uw_free();
}
END_TEST

/* ---- a thread ------------------------------------------------------------ */

static uint64_t thread_ra;

static void *thread_main(void *arg)
{
  (void)arg;
  thread_ra = (uint64_t)(uintptr_t)__builtin_return_address(0);
  note_stack();
  t_armed = 1;
  uwt_a(&s_stop, NULL);
  t_armed = 0;
  __asm__ volatile("" ::: "memory");
  return NULL;
}

START_TEST(thread_reaches_clone)
{
  pthread_t t;
  uint32_t n, i, ok = 0;
  load_chain();
  ck_assert_int_eq(ljp__cap_uw_init(), 0);
  arm(300);
  ck_assert_int_eq(pthread_create(&t, NULL, thread_main, NULL), 0);
  ck_assert_int_eq(pthread_join(t, NULL), 0);
  n = disarm();
  ck_assert_uint_ge(n, 100);
  for (i = 0; i < n; i++) {
    const uint64_t *f = s_frames[i];
    uint32_t m = s_n[i], j;
    int good = chain_exact(f, m, s_flags[i], 0);
    /* ... uwt_a, then the start routine's return address into
     * start_thread, and clone's frame, the root, in libc. */
    for (j = 0; good && j < m && f[j] != ra_a; j++)
      ;
    good = good && j + 2 < m && f[j + 1] == thread_ra &&
           j + 3 == m && in_object(f[m - 1], "libc.so");
    ok += good;
    if (!good && ok + 3 < i)
      dump("thread", f, m, s_flags[i]);
  }
  fprintf(stderr, "thread: %u ticks, %u reach clone exactly\n", n, ok);
  ck_assert_uint_ge(ok * 100, n * 99);
  ljp__cap_uw_free();
}
END_TEST

/* ---- an object loaded after the build ----------------------------------- */

static void raise_hook(void)
{
  raise(SIGPROF);
}

START_TEST(dlopen_after_build_is_stale_then_refreshed)
{
  struct timespec a, b;
  size_t o1, o2, r1, r2, by;
  int k;
  uint64_t heap_pc[MAXF];
  uint32_t fl, n;
  cap_uw_regs r;
  note_stack();
  ck_assert_int_eq(ljp__cap_uw_init(), 0);
  ljp__cap_uw_stats(&o1, &r1, &by);
  /* An unknown PC while nothing new is loaded: not stale. */
  r.pc = (uint64_t)(uintptr_t)&heap_pc[1];
  r.sp = (uint64_t)(uintptr_t)heap_pc;
  r.fp = 0;
  r.pc_is_return = 0;
  n = ljp__cap_uw_unwind(&r, r.sp, t_stack_hi, heap_pc, MAXF, &fl);
  ck_assert_uint_eq(n, 1);
  ck_assert_uint_eq(fl, CAP_UW_NOINFO);
  /* Nothing changed: refresh is cheap. */
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (k = 0; k < 1000; k++)
    ck_assert_int_eq(ljp__cap_uw_refresh(), 0);
  clock_gettime(CLOCK_MONOTONIC, &b);
  fprintf(stderr, "refresh without change: %.0f ns\n",
          ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) /
              1000);
  ljp__cap_uw_stats(&o2, &r2, &by);
  ck_assert_uint_eq(o2, o1);

  load_chain();
  install(1000000);
  t_armed = 1;
  uwt_a(&s_stop, raise_hook);
  t_armed = 0;
  n = disarm();
  ck_assert_uint_eq(n, 1);
  if (s_flags[0] != (CAP_UW_NOINFO | CAP_UW_STALE))
    dump("before refresh", s_frames[0], s_n[0], s_flags[0]);
  ck_assert_uint_eq(s_flags[0], CAP_UW_NOINFO | CAP_UW_STALE);
  /* It stops at the first frame in the new object: the leaf. */
  ck_assert(in_range(leaf_range, s_frames[0][s_n[0] - 1] - 1));

  ck_assert_int_eq(ljp__cap_uw_refresh(), 0);
  ljp__cap_uw_stats(&o2, &r2, &by);
  ck_assert_uint_eq(o2, o1 + 1);
  ck_assert_uint_gt(r2, r1);
  install(1000000);
  t_armed = 1;
  uwt_a(&s_stop, raise_hook);
  t_armed = 0;
  n = disarm();
  ck_assert_uint_eq(n, 1);
  if (!chain_exact(s_frames[0], s_n[0], s_flags[0], 1))
    dump("after refresh", s_frames[0], s_n[0], s_flags[0]);
  ck_assert(chain_exact(s_frames[0], s_n[0], s_flags[0], 1));
  ljp__cap_uw_free();
}
END_TEST

/* ---- rebuilds while unwinding --------------------------------------------- */

static volatile int bg_stop;
static volatile uint64_t bg_sink;

static NOINLINE void bg_spin(void)
{
  uint64_t x = bg_sink;
  while (!bg_stop) {
    int i;
    for (i = 0; i < 10000; i++)
      x = x * 6364136223846793005u + (uint64_t)i;
    bg_sink = x;
  }
}

static void *bg_main(void *arg)
{
  (void)arg;
  note_stack();
  t_armed = 1;
  bg_spin();
  t_armed = 0;
  __asm__ volatile("" ::: "memory");
  return NULL;
}

/* A thread's ticks unwind while the VM thread loads and unloads an object
 * and rebuilds the tables each time: a retired set outlives the unwinds
 * that use it (the sanitizer build checks every read), and the ticks keep
 * reaching the root. */
START_TEST(rebuild_while_unwinding)
{
  pthread_t t;
  uint32_t n, i, root = 0;
  size_t o1, o2, r, by;
  int k;
  note_stack();
  ck_assert_int_eq(ljp__cap_uw_init(), 0);
  ljp__cap_uw_stats(&o1, &r, &by);
  arm(MAXS);
  ck_assert_int_eq(pthread_create(&t, NULL, bg_main, NULL), 0);
  for (k = 0; k < 20000 && atomic_load(&s_count) < 200; k++) {
    void *h = dlopen(UNWIND_CHAIN_SO, RTLD_NOW);
    ck_assert_ptr_nonnull(h);
    ck_assert_int_eq(ljp__cap_uw_refresh(), 0);
    ljp__cap_uw_stats(&o2, &r, &by);
    ck_assert_uint_eq(o2, o1 + 1);
    ck_assert_int_eq(dlclose(h), 0);
    ck_assert_int_eq(ljp__cap_uw_refresh(), 0);
    ljp__cap_uw_stats(&o2, &r, &by);
    ck_assert_uint_eq(o2, o1);
  }
  bg_stop = 1;
  ck_assert_int_eq(pthread_join(t, NULL), 0);
  n = disarm();
  for (i = 0; i < n; i++)
    root += s_flags[i] == CAP_UW_ROOT;
  fprintf(stderr, "%d rebuilds: %u ticks on the thread, %u reach the root\n",
          2 * k, n, root);
  ck_assert_uint_ge(n, 100);
  ck_assert_uint_ge(root * 100, n * 95);
  ljp__cap_uw_free();
}
END_TEST

/* ---- an object unloaded after the build ---------------------------------- */

/* The tables still list an object that was unloaded: the first frame's
 * return-address search must not read its (unmapped) code. */
START_TEST(unloaded_object_code_not_read)
{
  void *h = dlopen(UNWIND_CHAIN_SO, RTLD_NOW);
  outer_fn outer;
  uint64_t *ra, old_ra, st[8], f[8];
  uint32_t n, fl;
  cap_uw_regs r;
  Dl_info di;
  ck_assert_ptr_nonnull(h);
  *(void **)&outer = dlsym(h, "uwl_outer");
  ra = dlsym(h, "uwl_ra");
  ck_assert(outer && ra);
  outer(&s_stop, noop_hook);
  old_ra = ra[0];
  ck_assert_int_eq(ljp__cap_uw_init(), 0);
  ck_assert_int_eq(dlclose(h), 0);
  ck_assert_int_eq(dladdr((void *)(uintptr_t)old_ra, &di), 0);
  /* bg_spin's entry: its return address on top is garbage, so the search
   * looks at the slots above, one of which points into the old object. */
  memset(st, 0, sizeof st);
  st[0] = 0x1234;
  st[1] = old_ra;
  r.pc = (uint64_t)(uintptr_t)bg_spin;
  r.sp = (uint64_t)(uintptr_t)st;
  r.fp = 0;
  r.pc_is_return = 0;
  n = ljp__cap_uw_unwind(&r, r.sp, r.sp + sizeof st, f, 8, &fl);
  ck_assert_uint_eq(n, 2);
  ck_assert_uint_eq(f[1], 0x1234);
  ck_assert_uint_eq(fl, CAP_UW_NOINFO);
  ljp__cap_uw_free();
}
END_TEST

/* ---- LuaJIT's interpreter --------------------------------------------------- */

static volatile uint64_t burn_sink;
static range pcall_range;
static uint64_t host_ra;

static int c_burn(lua_State *L)
{
  uint64_t x = burn_sink;
  int i;
  for (i = 0; i < 200000; i++)
    x = x * 6364136223846793005u + (uint64_t)i;
  burn_sink = x;
  lua_pushboolean(L, s_stop);
  return 1;
}

static NOINLINE void lua_host(lua_State *L, const char *code)
{
  host_ra = (uint64_t)(uintptr_t)__builtin_return_address(0);
  if (luaL_loadstring(L, code) != 0 || lua_pcall(L, 0, 0, 0) != 0)
    ck_abort_msg("lua: %s", lua_tostring(L, -1));
  __asm__ volatile("" ::: "memory");
}

static int c_stopped(lua_State *L)
{
  lua_pushboolean(L, s_stop);
  return 1;
}

/* Share (in %) of ticks that pass through lua_pcall, the host function and
 * main, and end at _start with ROOT. */
static double lua_run(const char *code, const char *what)
{
  lua_State *L = luaL_newstate();
  uint32_t n, i, ok = 0;
  luaL_openlibs(L);
  lua_register(L, "burn", c_burn);
  lua_register(L, "stopped", c_stopped);
  pcall_range = sym_range((void *)(uintptr_t)lua_pcall);
  arm(400);
  t_armed = 1;
  lua_host(L, code);
  t_armed = 0;
  n = disarm();
  lua_close(L);
  ck_assert_uint_ge(n, 100);
  for (i = 0; i < n; i++) {
    const uint64_t *f = s_frames[i];
    uint32_t m = s_n[i], j, pc = 0, host = 0, mn = 0;
    for (j = 1; j < m; j++) {
      pc |= in_range(pcall_range, f[j] - 1);
      host |= pc && f[j] == host_ra;
      mn |= host && f[j] == main_ra;
    }
    if (pc && host && mn && (s_flags[i] == CAP_UW_ROOT) && in_start(f[m - 1]))
      ok++;
    else if (ok + 3 < i)
      dump(what, f, m, s_flags[i]);
  }
  fprintf(stderr, "%s: %u ticks, %u reach main through lua_pcall (%.1f %%); "
          "median %.0f ns per unwind\n", what, n, ok, 100.0 * ok / n,
          median_ns(ns_own, n));
  return 100.0 * ok / n;
}

/* The restart the handler makes when the PC is in JIT machine code: from
 * the interpreter's C frame, L->cframe (GC64 lua_State: offset 80; its low
 * two bits are flags).  LuaJIT's x64 VM keeps rsp at cframe in its body
 * and its CFI says CFA = rsp + 80, rbp at CFA - 16: so the return address
 * out of the VM is at cframe + 72, the caller's rbp at cframe + 64, and
 * its sp is cframe + 80. */
static int cframe_ok;
static int c_cframe(lua_State *L)
{
  uint64_t cf = *(const uint64_t *)(const void *)((const char *)L + 80) &
                ~(uint64_t)3;
  uint64_t f[MAXF], here = (uint64_t)(uintptr_t)&cf;
  uint32_t fl, n, j, host = 0, mn = 0;
  cap_uw_regs r;
  if (cf < here || cf >= t_stack_hi)
    return luaL_error(L, "cframe %p not on this stack", (void *)(uintptr_t)cf);
  r.pc = *(const uint64_t *)(uintptr_t)(cf + 72);
  r.sp = cf + 80;
  r.fp = *(const uint64_t *)(uintptr_t)(cf + 64);
  r.pc_is_return = 1;
  n = ljp__cap_uw_unwind(&r, r.sp, t_stack_hi, f, MAXF, &fl);
  for (j = 1; j < n; j++) {
    host |= f[j] == host_ra;
    mn |= host && f[j] == main_ra;
  }
  cframe_ok = n > 3 && in_range(pcall_range, f[0] - 1) && host && mn &&
              fl == CAP_UW_ROOT && in_start(f[n - 1]);
  if (!cframe_ok)
    dump("cframe", f, n, fl);
  return 0;
}

START_TEST(restart_from_lua_cframe)
{
  lua_State *L = luaL_newstate();
  note_stack();
  ck_assert_int_eq(ljp__cap_uw_init(), 0);
  luaL_openlibs(L);
  lua_register(L, "cframe", c_cframe);
  pcall_range = sym_range((void *)(uintptr_t)lua_pcall);
  lua_host(L, "local function f() cframe() end f()");
  lua_close(L);
  ck_assert(cframe_ok);
  ljp__cap_uw_free();
}
END_TEST

START_TEST(lua_c_function_reaches_main)
{
  note_stack();
  ck_assert_int_eq(ljp__cap_uw_init(), 0);
  ck_assert_double_ge(lua_run("jit.off() repeat until burn()", "Lua->C"),
                      95.0);
  ljp__cap_uw_free();
}
END_TEST

START_TEST(lua_interpreter_reaches_main)
{
  note_stack();
  ck_assert_int_eq(ljp__cap_uw_init(), 0);
  ck_assert_double_ge(
      lua_run("jit.off() local x = 0 repeat for i = 1, 100000 do "
              "x = (x + i * 7) % 1000003 end until stopped()",
              "interpreter"),
      95.0);
  ljp__cap_uw_free();
}
END_TEST

/* ---- robustness ---------------------------------------------------------- */

static uint64_t rng = 0x9e3779b97f4a7c15u;
static uint64_t rnd(void)
{
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

struct text_pick {
  uint64_t lo[64], hi[64];
  int n;
};

static int pick_text(struct dl_phdr_info *info, size_t size, void *arg)
{
  struct text_pick *t = arg;
  int i;
  (void)size;
  for (i = 0; i < info->dlpi_phnum && t->n < 64; i++)
    if (info->dlpi_phdr[i].p_type == PT_LOAD &&
        (info->dlpi_phdr[i].p_flags & PF_X)) {
      t->lo[t->n] = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
      t->hi[t->n] = t->lo[t->n] + info->dlpi_phdr[i].p_memsz;
      t->n++;
    }
  return 0;
}

/* Garbage registers and forged stacks: never a fault, never past max,
 * never a frame count beyond what strictly climbing CFAs allow. */
START_TEST(garbage_never_faults_or_loops)
{
  static uint64_t forged[4096];
  struct text_pick t;
  uint64_t f[64], here;
  int it;
  uint32_t fl, n, flagged = 0;
  memset(&t, 0, sizeof t);
  dl_iterate_phdr(pick_text, &t);
  ck_assert_int_gt(t.n, 2);
  note_stack();
  ck_assert_int_eq(ljp__cap_uw_init(), 0);
  here = (uint64_t)(uintptr_t)&here;
  for (it = 0; it < 200000; it++) {
    cap_uw_regs r;
    int o = (int)(rnd() % (uint64_t)t.n);
    uint64_t lo, hi, span = t.hi[o] - t.lo[o];
    int kind = (int)(rnd() % 4);
    if (it % 64 == 0) {
      /* Re-forge: text addresses, pointers into the array, noise. */
      size_t j;
      for (j = 0; j < 4096; j++) {
        int w = (int)(rnd() % 3);
        int oj = (int)(rnd() % (uint64_t)t.n);
        forged[j] = w == 0 ? t.lo[oj] + rnd() % (t.hi[oj] - t.lo[oj])
                  : w == 1 ? (uint64_t)(uintptr_t)&forged[rnd() % 4096]
                           : rnd();
      }
    }
    r.pc = kind == 3 ? rnd() : t.lo[o] + rnd() % span;
    r.pc_is_return = (int)(rnd() & 1);
    if (kind == 0) {        /* the real stack, from somewhere below us */
      lo = here - 1024;
      hi = t_stack_hi;
      r.sp = lo + (rnd() % (hi - lo));
    } else {                /* the forged one */
      lo = (uint64_t)(uintptr_t)forged;
      hi = lo + sizeof forged;
      r.sp = lo + rnd() % sizeof forged;
    }
    r.fp = rnd() & 1 ? lo + rnd() % (hi - lo) : rnd();
    n = ljp__cap_uw_unwind(&r, lo, hi, f, 64, &fl);
    ck_assert_uint_ge(n, 1);
    ck_assert_uint_le(n, 64);
    ck_assert_uint_le(n, (hi - lo) / 8 + 1);
    ck_assert_uint_eq(f[0], r.pc);
    ck_assert_uint_ne(fl, 0);
    ck_assert(!(fl & CAP_UW_TRUNCATED) || n == 64);
    flagged += (fl & (CAP_UW_BADSTACK | CAP_UW_NOINFO)) != 0;
  }
  /* Almost all of that garbage ends at a check, not at a root. */
  ck_assert_uint_gt(flagged, 100000);
  ljp__cap_uw_free();
}
END_TEST

/* ---- against libgcc ---------------------------------------------------------- */

/* Own frames equal libgcc's for the same tick, after libgcc's handler and
 * signal-trampoline frames.  Prints ns per unwind for both. */
static void versus_gcc(const char *what, uint32_t n)
{
  uint32_t i, same = 0;
  for (i = 0; i < n; i++) {
    uint32_t j, k;
    /* libgcc ends with the IP 0 after _start's frame. */
    while (g_n[i] > 0 && g_frames[i][g_n[i] - 1] == 0)
      g_n[i]--;
    for (k = 0; k < g_n[i] && g_frames[i][k] != s_frames[i][0]; k++)
      ;
    for (j = 0; k + j < g_n[i] && j < s_n[i]; j++)
      if (g_frames[i][k + j] != s_frames[i][j])
        break;
    same += j == s_n[i] && k + j == g_n[i];
    if (i == 0 && !(j == s_n[i] && k + j == g_n[i])) {
      dump("own", s_frames[i], s_n[i], s_flags[i]);
      dump("libgcc", g_frames[i], g_n[i], 0);
    }
  }
  fprintf(stderr, "%s: %u ticks, median ns per unwind: own %.0f (again at "
          "once %.0f), libgcc %.0f (again %.0f); %u identical stacks\n", what,
          n, median_ns(ns_own, n), median_ns(ns_own_warm, n),
          median_ns(ns_gcc, n), median_ns(ns_gcc_warm, n), same);
  ck_assert_uint_ge(same * 100, n * 95);
}

START_TEST(bench_versus_libgcc)
{
  uint32_t n;
  gcc_bt warm = {g_frames[0], 0};
  load_chain();
  note_stack();
  ck_assert_int_eq(ljp__cap_uw_init(), 0);
  _Unwind_Backtrace(gcc_step, &warm);
  s_bench = 1;
  arm(300);
  t_armed = 1;
  uwt_a(&s_stop, NULL);
  t_armed = 0;
  n = disarm();
  versus_gcc("C chain", n);
  {
    lua_State *L = luaL_newstate();
    luaL_openlibs(L);
    lua_register(L, "burn", c_burn);
    arm(300);
    t_armed = 1;
    lua_host(L, "jit.off() repeat until burn()");
    t_armed = 0;
    n = disarm();
    lua_close(L);
    versus_gcc("Lua->C", n);
  }
  s_bench = 0;
  ljp__cap_uw_free();
}
END_TEST

static Suite *unwind_suite(void)
{
  const struct {
    const char *name;
    const TTest *test;
  } tests[] = {
    {"cfa_programs_to_rows", cfa_programs_to_rows},
    {"tables_cover_loaded_objects", tables_cover_loaded_objects},
    {"timer_ticks_in_c_chain", timer_ticks_in_c_chain},
    {"object_without_eh_frame_hdr", object_without_eh_frame_hdr},
    {"restart_from_return_address", restart_from_return_address},
    {"plt_entries", plt_entries},
    {"thread_reaches_clone", thread_reaches_clone},
    {"dlopen_after_build_is_stale_then_refreshed",
     dlopen_after_build_is_stale_then_refreshed},
    {"rebuild_while_unwinding", rebuild_while_unwinding},
    {"unloaded_object_code_not_read", unloaded_object_code_not_read},
    {"restart_from_lua_cframe", restart_from_lua_cframe},
    {"lua_c_function_reaches_main", lua_c_function_reaches_main},
    {"lua_interpreter_reaches_main", lua_interpreter_reaches_main},
    {"garbage_never_faults_or_loops", garbage_never_faults_or_loops},
    {"bench_versus_libgcc", bench_versus_libgcc},
  };
  Suite *s = suite_create("unwind");
  size_t i;
  for (i = 0; i < sizeof tests / sizeof tests[0]; i++) {
    TCase *tc = tcase_create(tests[i].name);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, tests[i].test);
    suite_add_tcase(s, tc);
  }
  return s;
}

int main(int argc, char **argv)
{
  SRunner *sr;
  int failed;
  main_ra = (uint64_t)(uintptr_t)__builtin_return_address(0);
  sr = srunner_create(unwind_suite());
  srunner_run(sr, NULL, argc > 1 ? argv[1] : NULL, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
