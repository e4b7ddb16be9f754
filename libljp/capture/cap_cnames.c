/*
 * cap_cnames.c — C functions named the way Lua code reaches them.
 *
 * A C function registered in a Lua table (cjson.encode, ngx.say, a host's
 * own mymod.crc32) often has no ELF name at all (a static function in a
 * stripped module) or one nobody looks for (json_encode).  What the
 * developer wrote is the Lua path, so that is the name its frames get.
 *
 * The scan walks, with raw next() (no metamethod runs), package.loaded in
 * sorted key order with one level of sub-tables (ngx.req.get_headers), then
 * the globals: functions of _G by their global name, and tables of _G that
 * are no module, again with one level of sub-tables.  Of all the paths to a
 * function the one with the fewest dots wins, then the shortest, then the
 * first in that order: the result does not depend on hash order.  Builtins
 * (fast functions, named by ffid) and Lua functions are left out, except
 * string.gmatch's iterator (see add_aux).
 *
 * Which name wins when the object's symbols name the function too
 * (ljp__cap_cnames_over_elf): by default the ELF name stays, and the Lua path
 * names what has none (a static function of a stripped module: cjson.so's
 * json_encode shows as "cjson.encode", not "cjson.so+0x4f20").  With the
 * switch on, the Lua path replaces ELF names as well.
 *
 * The map is replaced by each scan, on the VM thread where Lua may run
 * (start, ljp__cap_names_refresh); lookups happen at the safe point.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lauxlib.h>
#include <lua.h>

#include "cap_hash.h"
#include "cap_internal.h"
#include "cap_names.h"

static cap_map by_addr;     /* C function pointer -> index + 1 in names */
static char **names;
static size_t nnames;
static cap_map missed;      /* addresses already reported missing */
static int miss_pending;
static uint64_t last_scan_ns;
static uint64_t interval_ms = CAP_NAMES_REFRESH_MS;
static int over_elf = CAP_CNAMES_OVER_ELF;

/* Returns a flat array {f1, "path1", f2, "path2", ...}: every function
 * found, each once, with its preferred path. */
static const char scan_lua[] =
  "local next, type, sort = next, type, table.sort\n"
  "local loaded, G = package.loaded, _G\n"
  "local best, order, seen = {}, {}, {}\n"
  "local function dots(s) local n = 0\n"
  "  for _ in s:gmatch('%.') do n = n + 1 end return n end\n"
  "local function better(a, b)\n"
  "  local da, db = dots(a), dots(b)\n"
  "  if da ~= db then return da < db end\n"
  "  return #a < #b\n"
  "end\n"
  "local function note(f, path)\n"
  "  local old = best[f]\n"
  "  if not old then order[#order + 1] = f; best[f] = path\n"
  "  elseif better(path, old) then best[f] = path end\n"
  "end\n"
  "local function keys(t)\n"
  "  local k, out = nil, {}\n"
  "  repeat k = next(t, k)\n"
  "    if type(k) == 'string' then out[#out + 1] = k end\n"
  "  until k == nil\n"
  "  sort(out)\n"
  "  return out\n"
  "end\n"
  "local function walk(t, prefix, depth)\n"
  "  if seen[t] then return end\n"
  "  seen[t] = true\n"
  "  local ks = keys(t)\n"
  "  for i = 1, #ks do\n"
  "    local k = ks[i]\n"
  "    local v = t[k]\n"   /* k is a key of t: no __index runs */
  "    local p = prefix == '' and k or prefix .. '.' .. k\n"
  "    if type(v) == 'function' then note(v, p)\n"
  "    elseif type(v) == 'table' and depth > 0 and not seen[v] then\n"
  "      walk(v, p, depth - 1)\n"
  "    end\n"
  "  end\n"
  "end\n"
  "local mods = keys(loaded)\n"
  "for i = 1, #mods do\n"
  "  local v = loaded[mods[i]]\n"
  "  if type(v) == 'table' and v ~= G then seen[v] = seen[v] or false end\n"
  "end\n"
  "for i = 1, #mods do\n"
  "  local m = mods[i]\n"
  "  local v = loaded[m]\n"
  "  if type(v) == 'function' then note(v, m)\n"
  "  elseif type(v) == 'table' and v ~= G then walk(v, m, 1) end\n"
  "end\n"
  "local gk = keys(G)\n"
  "for i = 1, #gk do\n"
  "  local v = G[gk[i]]\n"
  "  if type(v) == 'function' then note(v, gk[i]) end\n"
  "end\n"
  "for i = 1, #gk do\n"
  "  local v = G[gk[i]]\n"
  "  if type(v) == 'table' and v ~= G and seen[v] == nil then\n"
  "    walk(v, gk[i], 1)\n"
  "  end\n"
  "end\n"
  "local out = {}\n"
  "for i = 1, #order do\n"
  "  local f = order[i]\n"
  "  out[#out + 1] = f; out[#out + 1] = best[f]\n"
  "end\n"
  "local ok, it = pcall(string.gmatch, '', '')\n"
  "if ok then\n"
  "  local ju = package.loaded['jit.util']\n"
  "  out.aux, out.auxff = it, ju and ju.funcinfo(it).ffid\n"
  "end\n"
  "return out\n";

static void clear_names(void)
{
  size_t i;
  for (i = 0; i < nnames; i++)
    free(names[i]);
  free(names);
  names = NULL;
  nnames = 0;
  cap_map_free(&by_addr);
}

static size_t dots(const char *s, size_t len)
{
  size_t i, n = 0;
  for (i = 0; i < len; i++)
    n += s[i] == '.';
  return n;
}

/* Fewer dots, then shorter; a tie keeps the name found first. */
static int better(const char *a, size_t alen, const char *b)
{
  size_t blen = strlen(b), da = dots(a, alen), db = dots(b, blen);
  return da != db ? da < db : alen < blen;
}

static uint64_t now_ns(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* string.gmatch's iterator is a builtin with a C body, but a new closure
 * each call: the closure -> ffid map never knows it, so its frames are C
 * frames.  Its C body is the same for all: named by its builtin name.
 * The scan's result table is on top of the stack. */
static int add_aux(lua_State *L)
{
  lua_CFunction cf;
  const char *name;
  char *s;
  size_t len;
  lua_getfield(L, -1, "aux");
  lua_getfield(L, -2, "auxff");
  cf = lua_tocfunction(L, -2);
  name = lua_isnumber(L, -1)
             ? ljp_ffname((ljp_flavor)ljp_capture_flavor(),
                          (unsigned)lua_tointeger(L, -1))
             : NULL;
  lua_pop(L, 2);
  if (!cf || !name || cap_map_get(&by_addr, (uint64_t)(uintptr_t)cf))
    return 0;
  len = strlen(name);
  s = malloc(len + 1);
  if (!s || cap_map_put(&by_addr, (uint64_t)(uintptr_t)cf, nnames + 1) != 0) {
    free(s);
    return -1;
  }
  memcpy(s, name, len + 1);
  names[nnames++] = s;
  return 0;
}

int ljp__cap_cnames_scan(lua_State *L)
{
  int top = lua_gettop(L), i, n, rc = 0;
  char **nv;
  last_scan_ns = now_ns();
  miss_pending = 0;
  if (luaL_loadbuffer(L, scan_lua, sizeof scan_lua - 1, "=ljp.cnames") != 0 ||
      lua_pcall(L, 0, 1, 0) != 0 || !lua_istable(L, -1)) {
    /* Without the map C functions keep their ELF names; not fatal. */
    lua_settop(L, top);
    return 0;
  }
  clear_names();
  n = (int)lua_objlen(L, -1);
  nv = malloc(((size_t)n / 2 + 2) * sizeof *nv);   /* + aux */
  if (!nv) {
    lua_settop(L, top);
    return -1;
  }
  names = nv;
  for (i = 1; i + 1 <= n; i += 2) {
    lua_CFunction cf;
    const void *p;
    const char *path;
    size_t len;
    uint64_t key, *v;
    lua_rawgeti(L, -1, i);
    cf = lua_tocfunction(L, -1);
    p = lua_topointer(L, -1);
    lua_rawgeti(L, -2, i + 1);
    path = lua_tolstring(L, -1, &len);
    key = (uint64_t)(uintptr_t)cf;
    /* A C function that is no builtin.  One C function pushed as several
     * closures is one address: the same rule as in the scan picks. */
    if (cf && path && ljp__cap_ids_ffid(p) < 0 &&
        (v = cap_map_get(&by_addr, key)) != NULL) {
      if (better(path, len, names[*v - 1])) {
        char *s = malloc(len + 1);
        if (s) {
          memcpy(s, path, len + 1);
          free(names[*v - 1]);
          names[*v - 1] = s;
        }
      }
    } else if (cf && path && ljp__cap_ids_ffid(p) < 0) {
      char *s = malloc(len + 1);
      if (!s || cap_map_put(&by_addr, key, nnames + 1) != 0) {
        free(s);
        rc = -1;
        lua_pop(L, 2);
        break;
      }
      memcpy(s, path, len + 1);
      names[nnames++] = s;
    }
    lua_pop(L, 2);
  }
  if (rc == 0)
    rc = add_aux(L);
  lua_settop(L, top);
  return rc;
}

const char *ljp__cap_cnames_get(uint64_t addr)
{
  uint64_t *v = cap_map_get(&by_addr, addr);
  return v ? names[*v - 1] : NULL;
}

int ljp__cap_cnames_over_elf(void)
{
  return over_elf;
}

void ljp__cap_cnames_set_over_elf(int on)
{
  over_elf = on != 0;
}

void ljp__cap_cnames_miss(uint64_t addr)
{
  if (addr == 0 || cap_map_get(&missed, addr))
    return;
  /* Out of memory: the address may be reported again, which only costs a
   * rescan at the rate limit. */
  cap_map_put(&missed, addr, 1);
  miss_pending = 1;
}

int ljp__cap_names_refresh(lua_State *L)
{
  size_t before = nnames;
  if (!miss_pending || now_ns() - last_scan_ns < interval_ms * 1000000u)
    return 0;
  /* Builtins first: a module required since start may have added some
   * (table.nkeys), and those must not get a C name. */
  ljp__cap_ids_rescan(L);
  ljp__cap_cnames_scan(L);
  /* Interrupted PCs in stripped objects count as misses too, and keep
   * coming: a rescan that found nothing new waits twice as long before
   * the next one. */
  if (nnames > before)
    interval_ms = CAP_NAMES_REFRESH_MS;
  else if (interval_ms < CAP_NAMES_REFRESH_MAX_MS)
    interval_ms *= 2;
  return 1;
}

void ljp__cap_cnames_free(void)
{
  clear_names();
  cap_map_free(&missed);
  miss_pending = 0;
  last_scan_ns = 0;
  interval_ms = CAP_NAMES_REFRESH_MS;
}
