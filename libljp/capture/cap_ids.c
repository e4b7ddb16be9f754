/*
 * cap_ids.c — identities of guest functions through the public API.
 *
 * Lua functions.  The GCproto address is not reachable from C without a Lua
 * call, and the closure address is no identity (many closures per
 * prototype, addresses reused after GC).  What an ljp symbol can show anyway
 * is (chunk name, first line), so that pair gets a small synthetic id (below
 * 2^53: the reference parser reads ULEBs as doubles).  The fast path keys on
 * the interned chunk-name pointer lua_getinfo returns; a hit is verified
 * against a stored copy because the pointer is reused once the string dies.
 *
 * Builtins.  A closure -> ffid map is built at start (outside any safe
 * point, where calling Lua is allowed) from every function reachable in
 * package.loaded and the file-handle methods, with jit.util.funcinfo;
 * ljp__cap_ids_rescan adds those of modules required later.  The other C
 * functions get their Lua-visible names at the same time (cap_cnames.c).
 */
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "cap_hash.h"
#include "cap_internal.h"
#include "cap_names.h"

typedef struct lfunc_entry {
  char *chunk;
  size_t len;
  uint64_t line;
  int emitted;
} lfunc_entry;

static lfunc_entry *lf;
static size_t nlf, caplf;
static cap_map by_ptr;      /* mix(chunk pointer, line) -> id */
static cap_map by_text;     /* hash(chunk text, line) -> id */
static cap_map ffids;       /* closure pointer -> ffid + 1 */
static int wrap_ffid = -1;

static uint64_t mix(uint64_t a, uint64_t b)
{
  uint64_t k = a * 0x9e3779b97f4a7c15ULL ^ (b + 0x632be59bd9b4e019ULL);
  return k ? k : 1;
}

static uint64_t text_hash(const char *s, size_t len, uint64_t line)
{
  uint64_t h = 0xcbf29ce484222325ULL;
  size_t i;
  for (i = 0; i < len; i++)
    h = (h ^ (uint8_t)s[i]) * 0x100000001b3ULL;
  return mix(h, line);
}

static int same(const lfunc_entry *e, const char *chunk, size_t len,
                uint64_t line)
{
  return e->line == line && e->len == len && memcmp(e->chunk, chunk, len) == 0;
}

uint64_t ljp__cap_ids_lfunc(const char *chunk, int linedefined)
{
  uint64_t line = linedefined > 0 ? (uint64_t)linedefined : 0;
  uint64_t kp = mix((uint64_t)(uintptr_t)chunk, line), kt, *v;
  size_t len;
  if (!chunk)
    chunk = "";
  v = cap_map_get(&by_ptr, kp);
  len = strlen(chunk);
  if (v && same(&lf[*v - 1], chunk, len, line))
    return *v;
  kt = text_hash(chunk, len, line);
  v = cap_map_get(&by_text, kt);
  if (!v || !same(&lf[*v - 1], chunk, len, line)) {
    lfunc_entry e;
    if (nlf == caplf) {
      size_t nc = caplf ? caplf * 2 : 256;
      lfunc_entry *n = realloc(lf, nc * sizeof *n);
      if (!n)
        return 0;
      lf = n;
      caplf = nc;
    }
    e.chunk = malloc(len + 1);
    if (!e.chunk)
      return 0;
    memcpy(e.chunk, chunk, len + 1);
    e.len = len;
    e.line = line;
    e.emitted = 0;
    lf[nlf++] = e;
    if (cap_map_put(&by_text, kt, nlf) != 0)
      return 0;
    v = cap_map_get(&by_text, kt);
  }
  if (cap_map_put(&by_ptr, kp, *v) != 0)
    return 0;
  return *cap_map_get(&by_ptr, kp);
}

ljp_status ljp__cap_ids_emit_lfunc(ljp_writer *w, uint64_t id)
{
  lfunc_entry *e;
  if (id == 0 || id > nlf)
    return LJP_OK;
  e = &lf[id - 1];
  if (e->emitted)
    return LJP_OK;
  e->emitted = 1;
  return ljp_write_event_lfunc(w, id, e->chunk, e->len, e->line);
}

uint64_t ljp__cap_ids_lfunc_line(uint64_t id)
{
  return id && id <= nlf ? lf[id - 1].line : 0;
}

int ljp__cap_ids_ffid(const void *p)
{
  uint64_t *v = cap_map_get(&ffids, (uint64_t)(uintptr_t)p);
  return v ? (int)(*v - 1) : -1;
}

int ljp__cap_ids_wrap_ffid(void)
{
  return wrap_ffid;
}

/* Returns a flat array {f1, ffid1, f2, ffid2, ...} plus .wrap.  Modules
 * that are a function themselves (require "table.nkeys" on luajit2) count
 * too, and so does the iterator ipairs returns (an upvalue, not in any
 * table). */
static const char ffmap_lua[] =
  "local funcinfo = require('jit.util').funcinfo\n"
  "local out, seen = {}, {}\n"
  "local function add(v)\n"
  "  if type(v) == 'function' and not seen[v] then\n"
  "    seen[v] = true\n"
  "    local ff = funcinfo(v).ffid\n"
  "    if ff then out[#out + 1] = v; out[#out + 1] = ff end\n"
  "  end\n"
  "end\n"
  "local function scan(t)\n"
  "  if seen[t] then return end\n"
  "  seen[t] = true\n"
  "  for _, v in next, t do add(v) end\n"
  "end\n"
  "for _, m in next, package.loaded do\n"
  "  if type(m) == 'table' then scan(m) else add(m) end\n"
  "end\n"
  "local mt = debug.getmetatable(io.stdout)\n"
  "if mt then scan(mt); if type(mt.__index) == 'table' then scan(mt.__index) end end\n"
  "add((ipairs({})))\n"
  "out.wrap = funcinfo(coroutine.wrap(function() end)).ffid\n"
  "return out\n";

/* Adds what ffmap_lua finds to the map; keeps what it has. */
static int load_ffmap(lua_State *L)
{
  int top = lua_gettop(L), i, n;
  if (luaL_loadbuffer(L, ffmap_lua, sizeof ffmap_lua - 1, "=ljp.capture") != 0 ||
      lua_pcall(L, 0, 1, 0) != 0 || !lua_istable(L, -1)) {
    /* Without the map builtins show as C functions; not fatal. */
    lua_settop(L, top);
    return 0;
  }
  n = (int)lua_objlen(L, -1);
  for (i = 1; i + 1 <= n; i += 2) {
    const void *p;
    lua_rawgeti(L, -1, i);
    p = lua_topointer(L, -1);
    lua_rawgeti(L, -2, i + 1);
    if (p && cap_map_put(&ffids, (uint64_t)(uintptr_t)p,
                         (uint64_t)lua_tointeger(L, -1) + 1) != 0) {
      lua_settop(L, top);
      return -1;
    }
    lua_pop(L, 2);
  }
  lua_getfield(L, -1, "wrap");
  wrap_ffid = lua_isnumber(L, -1) ? (int)lua_tointeger(L, -1) : -1;
  lua_settop(L, top);
  return 0;
}

/* The builtins, then the Lua-visible names of the other C functions (which
 * must know the builtins to leave them out). */
int ljp__cap_ids_init(lua_State *L)
{
  if (load_ffmap(L) != 0)
    return -1;
  /* Out of memory there only costs names: not fatal. */
  ljp__cap_cnames_scan(L);
  return 0;
}

int ljp__cap_ids_rescan(lua_State *L)
{
  return load_ffmap(L);
}

const char *ljp__cap_ids_lfunc_chunk(uint64_t id)
{
  return id && id <= nlf ? lf[id - 1].chunk : NULL;
}

void ljp__cap_ids_free(void)
{
  size_t i;
  for (i = 0; i < nlf; i++)
    free(lf[i].chunk);
  free(lf);
  lf = NULL;
  nlf = caplf = 0;
  cap_map_free(&by_ptr);
  cap_map_free(&by_text);
  cap_map_free(&ffids);
  wrap_ffid = -1;
  ljp__cap_cnames_free();
}
