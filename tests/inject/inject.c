/*
 * inject.c — the wrappers of inject.h.  Live blocks are counted by the
 * wrappers themselves, so a leak on a failure path is caught in every
 * build (gcc, valgrind), not only under LeakSanitizer.
 */
#include "inject.h"

#include <execinfo.h>
#include <stdlib.h>
#include <unistd.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);

static uint64_t fail_at, calls;
static int fired;
static long live;

void inject_arm(uint64_t n) {
  fail_at = n;
  calls = 0;
  fired = 0;
}
uint64_t inject_count(void) { return calls; }
int inject_fired(void) { return fired; }
long inject_live(void) { return live; }

/* 1 when this allocation is the one to fail. */
static int fail_now(void) {
  calls++;
  if (fail_at && calls == fail_at) {
    fired = 1;
    /* LJP_INJECT_TRACE=1 shows where each injected failure lands. */
    static int tracing;
    if (!tracing && getenv("LJP_INJECT_TRACE")) {
      void *bt[16];
      tracing = 1;
      int n = backtrace(bt, 16);
      backtrace_symbols_fd(bt, n, 2);
      write(2, "--\n", 3);
      tracing = 0;
    }
    return 1;
  }
  return 0;
}

void *__wrap_malloc(size_t n) {
  if (fail_now())
    return NULL;
  void *p = __real_malloc(n);
  if (p)
    live++;
  return p;
}

void *__wrap_calloc(size_t n, size_t size) {
  if (fail_now())
    return NULL;
  void *p = __real_calloc(n, size);
  if (p)
    live++;
  return p;
}

void *__wrap_realloc(void *old, size_t n) {
  if (fail_now())
    return NULL; /* old stays valid, as with a real failure */
  void *p = __real_realloc(old, n);
  if (p && !old)
    live++;
  return p;
}

void __wrap_free(void *p) {
  if (p)
    live--;
  __real_free(p);
}
