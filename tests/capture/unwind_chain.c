/*
 * unwind_chain.c — a shared object for test_unwind: a chain of noinline
 * functions (exported and static) that ends in a CPU-burning leaf.  Each
 * function records its own return address, which is what a correct unwind
 * of a tick in the leaf must report, frame by frame.
 */
#include <stdint.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))
#define EXPORT __attribute__((visibility("default")))

/* uwl_ra[0]: the leaf's return address (into uwl_mid), [1]: uwl_mid's
 * (into uwl_outer), [2]: uwl_outer's (into the caller). */
EXPORT uint64_t uwl_ra[3];
EXPORT volatile uint64_t uwl_sink;

/* Libc calls from the leaf, so that ticks also land in libc's code. */
static void *(*volatile uwl_memchr)(const void *, int, size_t) = memchr;
static unsigned char uwl_buf[4096];

/* Burns until *stop, or once when stop is NULL (then the leaf calls back
 * into the caller's hook instead, for a synchronous signal). */
EXPORT NOINLINE void uwl_leaf(volatile int *stop, void (*hook)(void))
{
  uint64_t x = uwl_sink;
  uwl_ra[0] = (uint64_t)(uintptr_t)__builtin_return_address(0);
  if (hook) {
    hook();
  } else {
    while (!*stop) {
      int i;
      for (i = 0; i < 20000; i++)
        x = x * 6364136223846793005u + (uint64_t)i;
      uwl_sink = x + (uint64_t)(uintptr_t)uwl_memchr(uwl_buf, 1,
                                                      sizeof uwl_buf);
    }
  }
  uwl_sink = x;
}

/* A realigned frame with a dynamic allocation: gcc keeps the CFA as
 * *(rbp - 8) and the caller's rbp at *rbp (DRAP), clang an rbp frame. */
static NOINLINE void uwl_mid(volatile int *stop, void (*hook)(void))
{
  unsigned char wide[32] __attribute__((aligned(64)));
  unsigned char *dyn = __builtin_alloca(16 + (uwl_sink & 1));
  uwl_ra[1] = (uint64_t)(uintptr_t)__builtin_return_address(0);
  __asm__ volatile("" : : "r"(wide), "r"(dyn) : "memory");
  uwl_leaf(stop, hook);
  __asm__ volatile("" : : "r"(wide), "r"(dyn) : "memory");
  uwl_sink++;   /* not a tail call */
}

/* A realigned frame: CFA = rbp + 16, so its rbp must come back right from
 * uwl_mid's frame. */
EXPORT NOINLINE void uwl_outer(volatile int *stop, void (*hook)(void))
{
  unsigned char wide[32] __attribute__((aligned(64)));
  uwl_ra[2] = (uint64_t)(uintptr_t)__builtin_return_address(0);
  __asm__ volatile("" : : "r"(wide) : "memory");
  uwl_mid(stop, hook);
  __asm__ volatile("" : : "r"(wide) : "memory");
  uwl_sink++;
}
