/*
 * lua_sysprof.c — the Lua module `ljp.sysprof` (ljp/sysprof.so), mirroring
 * Tarantool's misc.sysprof on top of the capture core:
 *
 *   local sysprof = require "ljp.sysprof"
 *   assert(sysprof.start{mode = "C", interval = 10, path = "sysprof.bin"})
 *   ...
 *   assert(sysprof.stop())
 *   local r = sysprof.report()  -- {samples = n, vmstate = {LFUNC = .., ...}}
 *
 * Errors follow misc.sysprof: nil, "profiler misuse", 22 for bad arguments;
 * nil, "profiler is running already", 22; nil, "profiler is not running", 22;
 * nil, strerror(errno), errno for I/O.  The file is written with write(2)
 * (EINTR retried).  The profile is completed when the VM closes while
 * profiling (lua_close, e.g. after the script raised an error) and at exit()
 * (os.exit without closing the state).
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

#include "cap_internal.h"
#include "ljp_capture.h"
#include "lua_file.h"

#define STREAM_BUFFER_SIZE ((size_t)8 * 1024 * 1024)

typedef struct file_ctx {
  int fd;
} file_ctx;

static file_ctx fctx = {-1};
static uint8_t buf_token;     /* the C API wants a buf; the encoder buffers */
static lua_State *running_L;

static size_t file_writer(const void **data, size_t len, void *ctx)
{
  return ljp__lua_fd_write(((file_ctx *)ctx)->fd, *data, len);
}

static int file_on_stop(void *ctx, uint8_t *buf)
{
  (void)buf;   /* buf_token: the encoder owns the buffer */
  return ljp__lua_fd_close(&((file_ctx *)ctx)->fd);
}

static int misuse(lua_State *L)
{
  return ljp__lua_push_error(L, "profiler misuse", EINVAL);
}

static int l_start(lua_State *L)
{
  struct ljp_capture_options o;
  const char *mode, *path = "sysprof.bin";
  int st;

  memset(&o, 0, sizeof o);
  if (lua_gettop(L) != 1 || !lua_istable(L, 1))
    return misuse(L);
  lua_getfield(L, 1, "mode");
  mode = lua_tostring(L, -1);
  if (!lua_isstring(L, -1) || lua_type(L, -1) != LUA_TSTRING || !mode ||
      strlen(mode) != 1)
    return misuse(L);
  switch (mode[0]) {
  case 'D': o.mode = LJP_CAPTURE_DEFAULT; break;
  case 'L': o.mode = LJP_CAPTURE_LEAF; break;
  case 'C': o.mode = LJP_CAPTURE_CALLGRAPH; break;
  default: return misuse(L);
  }
  lua_getfield(L, 1, "interval");
  o.interval = 10;
  if (lua_type(L, -1) == LUA_TNUMBER) {
    lua_Number ms = lua_tonumber(L, -1);
    if (!(ms >= 1) || ms > 3600000)
      return misuse(L);
    o.interval = (uint64_t)ms;
  }
  lua_getfield(L, 1, "path");
  if (!lua_isnil(L, -1)) {
    if (lua_type(L, -1) != LUA_TSTRING)
      return misuse(L);
    path = lua_tostring(L, -1);
  }
  lua_getfield(L, 1, "timer");
  if (!lua_isnil(L, -1)) {
    const char *t = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "";
    if (strcmp(t, "itimer") == 0 || strcmp(t, "process") == 0)
      o.timer = LJP_CAPTURE_TIMER_ITIMER;
    else if (strcmp(t, "thread") == 0)
      o.timer = LJP_CAPTURE_TIMER_THREAD;
    else if (strcmp(t, "wall") == 0)
      o.timer = LJP_CAPTURE_TIMER_WALL;
    else
      return misuse(L);
  }
  /* format = 2: Tarantool's ljp 2 stream, which Tarantool's parser
   * reads; default: ljp's extended stream. */
  lua_getfield(L, 1, "format");
  if (!lua_isnil(L, -1)) {
    if (lua_type(L, -1) != LUA_TNUMBER ||
        (lua_tonumber(L, -1) != 2 && lua_tonumber(L, -1) != 0))
      return misuse(L);
    o.format = (uint8_t)lua_tonumber(L, -1);
  }
  lua_settop(L, 1);
  if (cap_S.running)
    return ljp__lua_push_error(L, "profiler is running already", EINVAL);

  ljp_capture_set_writer(file_writer);
  ljp_capture_set_on_stop(file_on_stop);
  o.ctx = &fctx;
  if (o.mode != LJP_CAPTURE_DEFAULT) {
    fctx.fd = open(path, O_CREAT | O_WRONLY | O_TRUNC | O_CLOEXEC, 0644);
    if (fctx.fd < 0) {
      int e = errno;
      return ljp__lua_push_error(L, strerror(e), e);
    }
    o.buf = &buf_token;
    o.len = STREAM_BUFFER_SIZE;
  }
  st = ljp_capture_start(L, &o);
  switch (st) {
  case LJP_CAPTURE_SUCCESS:
    running_L = L;
    lua_pushboolean(L, 1);
    return 1;
  case LJP_CAPTURE_ERRRUN:
    return ljp__lua_push_error(L, "profiler is running already", EINVAL);
  case LJP_CAPTURE_ERRMEM:
    return ljp__lua_push_error(L, "not enough memory", ENOMEM);
  case LJP_CAPTURE_ERRIO: {
    int e = errno ? errno : EIO;
    return ljp__lua_push_error(L, strerror(e), e);
  }
  default:
    return misuse(L);
  }
}

static int l_stop(lua_State *L)
{
  int st;
  if (!cap_S.running)
    return ljp__lua_push_error(L, "profiler is not running", EINVAL);
  st = ljp_capture_stop(L);
  running_L = NULL;
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
    return misuse(L);
  }
}

static void set_num(lua_State *L, const char *k, double v)
{
  lua_pushnumber(L, v);
  lua_setfield(L, -2, k);
}

static int l_report(lua_State *L)
{
  struct ljp_capture_counters c;
  static const char *const names[] = {
    "INTERP", "LFUNC", "FFUNC", "CFUNC", "GC", "EXIT", "RECORD", "OPT",
    "ASM", "TRACE"
  };
  const uint64_t *b;
  int i;
  ljp_capture_report(&c);
  b = &c.vmst_interp;
  lua_createtable(L, 0, 12);
  set_num(L, "samples", (double)c.samples);
  lua_createtable(L, 0, 10);
  for (i = 0; i < 10; i++)
    set_num(L, names[i], (double)b[i]);
  lua_setfield(L, -2, "vmstate");
  set_num(L, "dropped", (double)c.dropped);
  set_num(L, "foreign", (double)c.foreign);
  set_num(L, "unpaired", (double)c.unpaired);
  set_num(L, "ticks", (double)c.ticks);
  set_num(L, "elapsed", (double)c.elapsed_ns / 1e9);
  set_num(L, "rate", c.rate_hz);
  set_num(L, "handler_ns", (double)c.handler_ns);
  set_num(L, "safepoint_ns", (double)c.safepoint_ns);
  set_num(L, "lua_rejected", (double)c.lua_rejected);
  set_num(L, "host_incomplete", (double)c.host_incomplete);
  set_num(L, "unwind_faults", (double)c.unwind_faults);
  /* How Lua stacks were taken: "signal" (the VM's own structures, read
   * at the tick) or "safepoint" (its layout was not recognised; why in
   * reader_error). */
  lua_pushstring(L, c.vm_reader ? "signal" : "safepoint");
  lua_setfield(L, -2, "reader");
  if (!c.vm_reader && ljp_capture_error()[0]) {
    lua_pushstring(L, ljp_capture_error());
    lua_setfield(L, -2, "reader_error");
  }
  return 1;
}

/* os.exit() ends the process without lua_close(): complete the file. */
static void at_exit(void)
{
  if (cap_S.running && running_L)
    ljp__cap_stop_internal(running_L, 1);
}

static const luaL_Reg funcs[] = {
  {"start", l_start},
  {"stop", l_stop},
  {"report", l_report},
  {NULL, NULL}
};

LJP_CAPTURE_API int luaopen_ljp_sysprof(lua_State *L)
{
  /* The sentinel's __gc and the atexit handler live in this object:
   * keep it mapped even when the state that loaded it unloads it. */
  ljp__lua_pin_module(&fctx, at_exit);
  lua_createtable(L, 0, 3);
  luaL_register(L, NULL, funcs);
  return 1;
}
