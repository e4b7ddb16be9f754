/*
 * names_dbglib.c — a shared object for tests/capture/test_names.c.  The
 * build strips it and keeps its symbols in a separate debug file only; the
 * static functions below then have no name in the object itself (not even
 * in .dynsym), so naming them proves the debug file was found and read.
 */
#include <stdint.h>

static __attribute__((noinline)) unsigned dbg_static_alpha(unsigned x)
{
  volatile unsigned acc = x;
  for (unsigned i = 0; i < 16; i++)
    acc = acc * 31u + i;
  return acc;
}

static __attribute__((noinline)) unsigned dbg_static_beta(unsigned x)
{
  volatile unsigned acc = x ^ 0x5a5au;
  for (unsigned i = 0; i < 8; i++)
    acc = acc * 17u ^ i;
  return acc;
}

/* Addresses of the static functions: 0 alpha, 1 beta. */
uintptr_t names_dbg_fn(int i)
{
  return i == 0 ? (uintptr_t)&dbg_static_alpha : (uintptr_t)&dbg_static_beta;
}

unsigned names_dbg_run(unsigned x)
{
  return dbg_static_alpha(x) + dbg_static_beta(x);
}
