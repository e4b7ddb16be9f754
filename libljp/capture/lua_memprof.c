/*
 * lua_memprof.c — the Lua module `ljp.memprof` (ljp/memprof.so), mirroring
 * Tarantool's misc.memprof on top of the capture core:
 *
 *   local memprof = require "ljp.memprof"
 *   assert(memprof.start("memprof.bin"))
 *   ...
 *   assert(memprof.stop())
 *   local r = memprof.report()   -- {events = n, allocs = .., ...}
 *
 * Returns as misc.memprof: true; nil, "profiler is running already", 22;
 * nil, "profiler is not running", 22; nil, "profiler misuse", 22 (no path,
 * or another VM); nil, "<path>: <strerror>", errno when the file cannot be
 * opened; nil, strerror(errno), errno for a write error.  Unlike
 * misc.memprof, a running profiler is detected before the file is opened,
 * so a second start never truncates the first one's file.  The file is
 * written with write(2) (EINTR retried) through a 256 KiB buffer: one
 * that stays in the CPU's cache is copied into the page cache at a third
 * of the cost of Tarantool's 8 MiB one, and a crash loses less.  The
 * profile is completed when the state closes while
 * profiling and at exit() (os.exit without closing the state).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1   /* O_CLOEXEC */
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>

#include "cap_mem.h"
#include "ljp_capture.h"
#include "lua_file.h"

#define STREAM_BUFFER_SIZE ((size_t)256 * 1024)

typedef struct file_ctx {
  int fd;
} file_ctx;

static file_ctx fctx = {-1};

static size_t file_writer(const void **data, size_t len, void *ctx)
{
  return ljp__lua_fd_write(((file_ctx *)ctx)->fd, *data, len);
}

static int file_on_stop(void *ctx, uint8_t *buf)
{
  free(buf);
  return ljp__lua_fd_close(&((file_ctx *)ctx)->fd);
}

static int l_start(lua_State *L)
{
  struct ljp_memprof_options o;
  const char *path;
  int st;
  if (lua_type(L, 1) != LUA_TSTRING)
    return ljp__lua_push_error(L, "profiler misuse", EINVAL);
  path = lua_tostring(L, 1);
  if (ljp_memprof_running())
    return ljp__lua_push_error(L, "profiler is running already", EINVAL);
  memset(&o, 0, sizeof o);
  o.buf = malloc(STREAM_BUFFER_SIZE);
  if (!o.buf)
    return ljp__lua_push_error(L, "not enough memory", ENOMEM);
  fctx.fd = open(path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
  if (fctx.fd < 0) {
    int e = errno;
    free(o.buf);
    lua_pushnil(L);
    lua_pushfstring(L, "%s: %s", path, strerror(e));
    lua_pushinteger(L, e);
    return 3;
  }
  o.len = STREAM_BUFFER_SIZE;
  o.ctx = &fctx;
  o.writer = file_writer;
  o.on_stop = file_on_stop;
  st = ljp_memprof_start(L, &o);
  switch (st) {
  case LJP_CAPTURE_SUCCESS:
    lua_pushboolean(L, 1);
    return 1;
  case LJP_CAPTURE_ERRRUN:
    return ljp__lua_push_error(L, "profiler is running already", EINVAL);
  case LJP_CAPTURE_ERRMEM:
    return ljp__lua_push_error(L, "not enough memory", ENOMEM);
  case LJP_CAPTURE_ERRIO: {
    int e = errno ? errno : EIO;
    lua_pushnil(L);
    lua_pushfstring(L, "%s: %s", path, strerror(e));
    lua_pushinteger(L, e);
    return 3;
  }
  default:
    return ljp__lua_push_error(L, "profiler misuse", EINVAL);
  }
}

static int l_stop(lua_State *L)
{
  int st;
  if (!ljp_memprof_running())
    return ljp__lua_push_error(L, "profiler is not running", EINVAL);
  st = ljp_memprof_stop(L);
  switch (st) {
  case LJP_CAPTURE_SUCCESS:
    lua_pushboolean(L, 1);
    return 1;
  case LJP_CAPTURE_ERRIO: {
    int e = errno ? errno : EIO;
    return ljp__lua_push_error(L, strerror(e), e);
  }
  case LJP_CAPTURE_ERRRUN:
    return ljp__lua_push_error(L, "profiler is not running", EINVAL);
  default:
    return ljp__lua_push_error(L, "profiler misuse", EINVAL);
  }
}

static void set_num(lua_State *L, const char *k, double v)
{
  lua_pushnumber(L, v);
  lua_setfield(L, -2, k);
}

static int l_report(lua_State *L)
{
  struct ljp_memprof_counters c;
  ljp_memprof_report(&c);
  lua_createtable(L, 0, 10);
  set_num(L, "events", (double)c.events);
  set_num(L, "allocs", (double)c.allocs);
  set_num(L, "reallocs", (double)c.reallocs);
  set_num(L, "frees", (double)c.frees);
  set_num(L, "bytes_allocated", (double)c.bytes_allocated);
  set_num(L, "bytes_freed", (double)c.bytes_freed);
  set_num(L, "dropped", (double)c.dropped);
  set_num(L, "symbols", (double)c.symbols);
  /* "vm": sources read from the VM; "none": every event INTERNAL. */
  lua_pushstring(L, c.vm_reader ? "vm" : "none");
  lua_setfield(L, -2, "reader");
  if (!c.vm_reader && ljp_memprof_error()[0]) {
    lua_pushstring(L, ljp_memprof_error());
    lua_setfield(L, -2, "reader_error");
  }
  return 1;
}

static int l_running(lua_State *L)
{
  lua_pushboolean(L, ljp_memprof_running());
  return 1;
}

static void at_exit(void)
{
  ljp__cap_mem_stop_at_exit();
}

static const luaL_Reg funcs[] = {
  {"start", l_start},
  {"stop", l_stop},
  {"report", l_report},
  {"running", l_running},
  {NULL, NULL}
};

LJP_CAPTURE_API int luaopen_ljp_memprof(lua_State *L)
{
  /* The allocator wrapper, the sentinel's __gc and the atexit handler
   * live in this object: keep it mapped even when the state that loaded
   * it unloads it. */
  ljp__lua_pin_module(&fctx, at_exit);
  lua_createtable(L, 0, 4);
  luaL_register(L, NULL, funcs);
  return 1;
}
