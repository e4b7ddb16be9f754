/*
 * cap_mem_names.c — Lua-visible names of C functions for the memory
 * profiler ("ngx.req.get_headers", "_G.print"): most lua_CFunctions of
 * modules are static, so no dynamic symbol names them.  The names are
 * collected at start, where Lua may run (package.loaded, two levels
 * deep), and looked up from inside the allocator, where it may not.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lua.h>

#include "cap_mem.h"

typedef struct cname {
  uint64_t addr;
  char name[96];
} cname;

static cname *names;
static size_t nnames, capnames;

static void add(uint64_t addr, const char *a, const char *b, const char *c)
{
  size_t i;
  if (nnames == capnames) {
    size_t nc = capnames ? capnames * 2 : 256;
    cname *n = realloc(names, nc * sizeof *n);
    if (!n)
      return;
    names = n;
    capnames = nc;
  }
  for (i = 0; i < nnames; i++)
    if (names[i].addr == addr)
      return;                 /* the first name found stays */
  names[nnames].addr = addr;
  if (c)
    snprintf(names[nnames].name, sizeof names[0].name, "%s.%s.%s", a, b, c);
  else
    snprintf(names[nnames].name, sizeof names[0].name, "%s.%s", a, b);
  nnames++;
}

static int cmp(const void *x, const void *y)
{
  const cname *a = x, *b = y;
  return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* The C functions of table at idx, named prefix.key (and one level of
 * sub-tables, prefix.key.key2). */
static void scan_table(lua_State *L, int idx, const char *prefix, int depth)
{
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    if (lua_type(L, -2) == LUA_TSTRING) {
      const char *k = lua_tostring(L, -2);
      if (lua_iscfunction(L, -1) && lua_tocfunction(L, -1)) {
        add((uint64_t)(uintptr_t)lua_tocfunction(L, -1), prefix, k, NULL);
      } else if (depth == 0 && lua_istable(L, -1)) {
        char sub[96];
        snprintf(sub, sizeof sub, "%s.%s", prefix, k);
        scan_table(L, lua_gettop(L), sub, 1);
      }
    }
    lua_pop(L, 1);
  }
}

void ljp__cap_mem_names_scan(lua_State *L)
{
  int top = lua_gettop(L);
  nnames = 0;
  lua_getfield(L, LUA_REGISTRYINDEX, "_LOADED");
  if (lua_istable(L, -1)) {
    int loaded = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, loaded) != 0) {
      if (lua_type(L, -2) == LUA_TSTRING && lua_istable(L, -1))
        scan_table(L, lua_gettop(L), lua_tostring(L, -2), 0);
      lua_pop(L, 1);
    }
  }
  lua_settop(L, top);
  qsort(names, nnames, sizeof *names, cmp);
}

const char *ljp__cap_mem_names_get(uint64_t addr)
{
  size_t lo = 0, hi = nnames;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (names[mid].addr == addr)
      return names[mid].name;
    if (names[mid].addr < addr)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

void ljp__cap_mem_names_free(void)
{
  free(names);
  names = NULL;
  nnames = capnames = 0;
}
