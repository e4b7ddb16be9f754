/*
 * malloc_shim.c — an LD_PRELOAD library that catches the SIGPROF handler
 * calling the allocator, or unwinding while libgcc holds its FDE mutex.
 *
 * It wraps every SIGPROF handler the program installs (the capture core's
 * and LuaJIT's) and every malloc/calloc/realloc/free.  An allocation inside
 * a handler is reported on stderr (marked "re-entered" when the tick had
 * interrupted the allocator itself, the deadlock: glibc's arena lock is not
 * recursive) and the process aborts.
 *
 * It also wraps __register_frame and __deregister_frame (LuaJIT calls them
 * for its machine-code areas; libgcc holds its FDE mutex in them and calls
 * the allocator with it held) and _Unwind_Backtrace: a handler that starts
 * an unwind after interrupting the allocator called from them would block
 * on that mutex, so the shim aborts instead.  (A tick in libgcc's own code
 * is the easy case, and a free libgcc tail-calls after unlocking is none.)
 * To make the case likely and hard, a free libgcc calls keeps a 6 KiB frame
 * and waits 250 us (longer than the tests' fastest timer period), as a
 * sanitizer's free has kilobytes of frames above libgcc's.
 *
 * Queries through sigaction() see the handler the program installed, not
 * the wrapper, so code that compares dispositions keeps working.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1
#endif
#include <dlfcn.h>
#include <link.h>
#include <signal.h>
#include <time.h>
#include <unwind.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);

static __thread int in_alloc;        /* allocator depth on this thread */
static __thread int in_handler;      /* SIGPROF handler depth */
static __thread int handler_interrupted_alloc;
static __thread int in_reg;          /* inside __(de)register_frame */
static __thread int handler_interrupted_reg;


static int (*real_sigaction)(int, const struct sigaction *, struct sigaction *);
static struct sigaction user_sa;     /* what the program believes is set */
static int have_user_sa;

static void violation(const char *fn)
{
  static const char msg[] = "malloc_shim: allocator called from the "
                            "SIGPROF handler: ";
  static const char reentered[] = "(re-entered) ";
  ssize_t r = write(2, msg, sizeof msg - 1);
  if (handler_interrupted_alloc)
    r = write(2, reentered, sizeof reentered - 1);
  r = write(2, fn, strlen(fn));
  r = write(2, "\n", 1);
  (void)r;
  abort();
}

static void enter(const char *fn)
{
  if (in_handler) {
    violation(fn);
  }
  in_alloc++;
}

static void leave(void)
{
  in_alloc--;
}

void *malloc(size_t n)
{
  void *p;
  enter("malloc");
  p = __libc_malloc(n);
  leave();
  return p;
}

void *calloc(size_t n, size_t m)
{
  void *p;
  enter("calloc");
  p = __libc_calloc(n, m);
  leave();
  return p;
}

void *realloc(void *q, size_t n)
{
  void *p;
  enter("realloc");
  p = __libc_realloc(q, n);
  leave();
  return p;
}

/* A deep allocator frame with time spent in it (see the top). */
__attribute__((noinline)) static void deep_free(void *p)
{
  volatile char pad[6144];
  struct timespec a, b;
  pad[0] = 1;
  pad[sizeof pad - 1] = 1;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do
    clock_gettime(CLOCK_MONOTONIC, &b);
  while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 250000);
  __libc_free(p);
  (void)pad[0];
}

/* libgcc_s's executable segment: a free whose return address lies there
 * was called from libgcc's own code, which may hold the FDE mutex.  (Its
 * final free after unlocking is a tail call and returns to our wrapper.) */
static uintptr_t gcc_lo, gcc_hi;

static int gcc_segment(struct dl_phdr_info *info, size_t size, void *data)
{
  const void *fn = data;
  (void)size;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
    if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) &&
        (uintptr_t)fn >= lo && (uintptr_t)fn < hi) {
      gcc_lo = lo;
      gcc_hi = hi;
      return 1;
    }
  }
  return 0;
}

static __thread int in_gcc_free;     /* inside a free libgcc called */

void free(void *p)
{
  uintptr_t ra = (uintptr_t)__builtin_return_address(0);
  enter("free");
  if (in_reg && !in_handler && ra >= gcc_lo && ra < gcc_hi) {
    in_gcc_free++;
    deep_free(p);
    in_gcc_free--;
  } else {
    __libc_free(p);
  }
  leave();
}

/* Calls libgcc's `name` (looked up once into *real) marked as in_reg. */
static void call_registration(void (**real)(void *), const char *name,
                              void *begin)
{
  if (!*real) {
    *(void **)real = dlsym(RTLD_NEXT, name);
    if (!gcc_hi)
      dl_iterate_phdr(gcc_segment, *(void **)real);
  }
  in_reg++;
  (*real)(begin);
  in_reg--;
}

void __register_frame(void *begin)
{
  static void (*real)(void *);
  call_registration(&real, "__register_frame", begin);
}

void __deregister_frame(void *begin)
{
  static void (*real)(void *);
  call_registration(&real, "__deregister_frame", begin);
}

_Unwind_Reason_Code _Unwind_Backtrace(_Unwind_Trace_Fn fn, void *arg)
{
  static _Unwind_Reason_Code (*real)(_Unwind_Trace_Fn, void *);
  if (!real)
    *(void **)&real = dlsym(RTLD_NEXT, "_Unwind_Backtrace");
  if (in_handler && handler_interrupted_reg) {
    static const char msg[] = "malloc_shim: the SIGPROF handler unwinds "
                              "while libgcc holds its FDE mutex\n";
    ssize_t r = write(2, msg, sizeof msg - 1);
    (void)r;
    abort();
  }
  return real(fn, arg);
}

static void wrapper(int sig, siginfo_t *si, void *uc)
{
  struct sigaction a = user_sa;
  int saved = handler_interrupted_alloc, saved_reg = handler_interrupted_reg;
  handler_interrupted_alloc = in_alloc > 0;
  handler_interrupted_reg = in_gcc_free > 0;
  in_handler++;
  if (a.sa_flags & SA_SIGINFO) {
    if (a.sa_sigaction)
      a.sa_sigaction(sig, si, uc);
  } else if (a.sa_handler != SIG_DFL && a.sa_handler != SIG_IGN) {
    a.sa_handler(sig);
  }
  in_handler--;
  handler_interrupted_alloc = saved;
  handler_interrupted_reg = saved_reg;
}

int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
  struct sigaction prev, w;
  int r;
  if (!real_sigaction)
    *(void **)&real_sigaction = dlsym(RTLD_NEXT, "sigaction");
  if (sig != SIGPROF)
    return real_sigaction(sig, act, old);
  if (!have_user_sa) {
    real_sigaction(SIGPROF, NULL, &user_sa);
    have_user_sa = 1;
  }
  prev = user_sa;
  if (act) {
    sigset_t block, saved;
    sigemptyset(&block);
    sigaddset(&block, SIGPROF);
    /* No tick may see user_sa half-copied. */
    sigprocmask(SIG_BLOCK, &block, &saved);
    int fn = (act->sa_flags & SA_SIGINFO) ||
             (act->sa_handler != SIG_DFL && act->sa_handler != SIG_IGN);
    if (fn) {
      w = *act;
      w.sa_flags |= SA_SIGINFO;
      w.sa_sigaction = wrapper;
      user_sa = *act;
      r = real_sigaction(SIGPROF, &w, NULL);
      if (r != 0)
        user_sa = prev;
    } else {
      r = real_sigaction(SIGPROF, act, NULL);
      if (r == 0)
        user_sa = *act;
    }
    sigprocmask(SIG_SETMASK, &saved, NULL);
    if (r != 0)
      return r;
  }
  if (old)
    *old = prev;
  return 0;
}
