/*
 * uw_preload.c — measures the capture core's own unwinder (cap_unwind.c)
 * inside any program, for example Debian's luajit, whose LuaJIT is linked
 * in statically:
 *
 *   LD_PRELOAD=bench/capture/libuw_preload.so luajit -joff script.lua
 *
 * It samples the main thread with ITIMER_PROF (1 ms), unwinds each tick
 * from its ucontext, and at exit prints the share of ticks that reached
 * the root frame (_start), split by where the interrupted PC was: in a
 * loaded object, or elsewhere (JIT machine code).  UW_PRELOAD_US sets the
 * interval in microseconds.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "cap_unwind.h"

#define MAXT 100000         /* ticks kept */

typedef struct tick {
  uint64_t pc, ns;
  uint32_t n, flags;
} tick;

static tick *ticks;
/* Frames of the first ticks that did not reach the root (UW_PRELOAD_DUMP). */
#define MAXFAIL 32
static uint64_t fail_frames[MAXFAIL][64];
static uint32_t fail_n[MAXFAIL], fail_flags[MAXFAIL];
static atomic_uint nfail;
static atomic_uint nticks;
static uint64_t stack_hi;
static pid_t main_pid;

static uint64_t now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void on_prof(int sig, siginfo_t *si, void *ucv)
{
  ucontext_t *uc = ucv;
  uint64_t frames[256], t0;
  cap_uw_regs r;
  unsigned i;
  tick *t;
  (void)sig;
  (void)si;
  if (getpid() != main_pid || gettid() != main_pid)
    return;                 /* main thread only: its bounds are known */
  i = atomic_fetch_add(&nticks, 1);
  if (i >= MAXT)
    return;
  t = &ticks[i];
  r.pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
  r.sp = (uint64_t)uc->uc_mcontext.gregs[REG_RSP];
  r.fp = (uint64_t)uc->uc_mcontext.gregs[REG_RBP];
  r.pc_is_return = 0;
  t0 = now_ns();
  t->n = ljp__cap_uw_unwind(&r, r.sp, stack_hi, frames, 256, &t->flags);
  t->ns = now_ns() - t0;
  t->pc = r.pc;
  if (!(t->flags & CAP_UW_ROOT)) {
    unsigned k = atomic_fetch_add(&nfail, 1);
    if (k < MAXFAIL) {
      fail_n[k] = t->n < 64 ? t->n : 64;
      fail_flags[k] = t->flags;
      memcpy(fail_frames[k], frames, fail_n[k] * sizeof frames[0]);
    }
  }
}

static int u64_cmp(const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

__attribute__((constructor)) static void uw_start(void)
{
  pthread_attr_t a;
  void *addr;
  size_t size;
  struct sigaction sa;
  struct itimerval it;
  const char *us = getenv("UW_PRELOAD_US");
  ticks = calloc(MAXT, sizeof *ticks);
  if (!ticks || ljp__cap_uw_init() != 0)
    return;
  if (pthread_getattr_np(pthread_self(), &a) != 0)
    return;
  pthread_attr_getstack(&a, &addr, &size);
  pthread_attr_destroy(&a);
  stack_hi = (uint64_t)(uintptr_t)addr + size;
  main_pid = getpid();
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_prof;
  sa.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGPROF, &sa, NULL);
  memset(&it, 0, sizeof it);
  it.it_interval.tv_usec = us ? atoi(us) : 1000;
  it.it_value = it.it_interval;
  setitimer(ITIMER_PROF, &it, NULL);
}

__attribute__((destructor)) static void uw_stop(void)
{
  struct itimerval it;
  unsigned n = atomic_load(&nticks), i, obj = 0, obj_root = 0, other = 0;
  unsigned noinfo = 0, bad = 0, trunc = 0;
  uint64_t *ns;
  size_t nobj, nrows, bytes;
  if (!ticks || !main_pid)
    return;
  memset(&it, 0, sizeof it);
  setitimer(ITIMER_PROF, &it, NULL);
  if (n > MAXT)
    n = MAXT;
  ns = calloc(n ? n : 1, sizeof *ns);
  for (i = 0; i < n; i++) {
    Dl_info di;
    const tick *t = &ticks[i];
    if (ns)
      ns[i] = t->ns;
    if (!dladdr((void *)(uintptr_t)t->pc, &di)) {
      other++;
      continue;
    }
    obj++;
    obj_root += (t->flags & CAP_UW_ROOT) != 0;
    noinfo += (t->flags & CAP_UW_NOINFO) != 0;
    bad += (t->flags & CAP_UW_BADSTACK) != 0;
    trunc += (t->flags & CAP_UW_TRUNCATED) != 0;
  }
  if (ns && n)
    qsort(ns, n, sizeof *ns, u64_cmp);
  ljp__cap_uw_stats(&nobj, &nrows, &bytes);
  fprintf(stderr,
          "uw_preload: %u ticks; PC in an object: %u, %u reach the root "
          "(%.1f %%; %u noinfo, %u badstack, %u truncated); PC elsewhere "
          "(JIT code): %u; median %llu ns per unwind; tables: %zu objects, "
          "%zu rows, %zu bytes\n",
          n, obj, obj_root, obj ? 100.0 * obj_root / obj : 0.0, noinfo, bad,
          trunc, other, ns && n ? (unsigned long long)ns[n / 2] : 0ull, nobj,
          nrows, bytes);
  free(ns);
  if (getenv("UW_PRELOAD_DUMP")) {
    unsigned k, nf = atomic_load(&nfail);
    for (k = 0; k < nf && k < MAXFAIL; k++) {
      uint32_t j;
      fprintf(stderr, "not at the root: flags %#x\n", fail_flags[k]);
      for (j = 0; j < fail_n[k]; j++) {
        Dl_info di;
        uint64_t a = fail_frames[k][j];
        int ok = dladdr((void *)(uintptr_t)(j ? a - 1 : a), &di);
        fprintf(stderr, "  %#llx %s %s+%#llx\n", (unsigned long long)a,
                ok && di.dli_sname ? di.dli_sname : "?",
                ok && di.dli_fname ? di.dli_fname : "?",
                ok ? (unsigned long long)(a - (uint64_t)(uintptr_t)di.dli_fbase)
                   : 0ull);
      }
    }
  }
}
