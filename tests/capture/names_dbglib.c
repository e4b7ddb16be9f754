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

/* A lua_CFunction (the type is not needed: it takes no argument it uses)
 * that spins for a while, for profiles that sample it. */
struct lua_State;
static __attribute__((noinline)) int dbg_static_spin(struct lua_State *L)
{
  volatile unsigned acc = 0;
  (void)L;
  for (unsigned i = 0; i < 200000; i++)
    acc = acc * 7u + i;
  return 0;
}

/* Addresses of the static functions: 0 alpha, 1 beta, 2 spin. */
uintptr_t names_dbg_fn(int i)
{
  return i == 0 ? (uintptr_t)&dbg_static_alpha
       : i == 1 ? (uintptr_t)&dbg_static_beta : (uintptr_t)&dbg_static_spin;
}

unsigned names_dbg_run(unsigned x)
{
  return dbg_static_alpha(x) + dbg_static_beta(x);
}
