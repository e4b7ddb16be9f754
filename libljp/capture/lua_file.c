/* lua_file.c — see lua_file.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1   /* dladdr, RTLD_NODELETE */
#endif
#include "lua_file.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>

size_t ljp__lua_fd_write(int fd, const void *data, size_t len)
{
  const char *p = data;
  size_t done = 0;
  while (done < len) {
    ssize_t n = write(fd, p + done, len - done);
    if (n < 0) {
      if (errno == EINTR)
        continue;
      return done;        /* errno tells why */
    }
    if (n == 0) {
      errno = EIO;
      return done;
    }
    done += (size_t)n;
  }
  return done;
}

int ljp__lua_fd_close(int *fd)
{
  int r = 0;
  if (*fd >= 0) {
    r = close(*fd);
    *fd = -1;
  }
  return r;
}

int ljp__lua_push_error(lua_State *L, const char *msg, int err)
{
  lua_pushnil(L);
  lua_pushstring(L, msg);
  lua_pushinteger(L, err);
  return 3;
}

void ljp__lua_pin_module(const void *addr, void (*at_exit)(void))
{
  /* Each module links its own copy of this file: once per module. */
  static int pinned;
  Dl_info info;
  if (pinned)
    return;
  pinned = 1;
  if (dladdr(addr, &info) && info.dli_fname)
    dlopen(info.dli_fname, RTLD_NOW | RTLD_NODELETE);
  atexit(at_exit);
}
