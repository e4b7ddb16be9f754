/*
 * lua_file.h — what the Lua modules ljp.sysprof and ljp.memprof share:
 * writing the stream to a file descriptor, closing it at stop, returning
 * misc.*prof-style errors, and keeping the module's object loaded.
 */
#ifndef LJP_LUA_FILE_H
#define LJP_LUA_FILE_H

#include <stddef.h>

#include <lua.h>

#ifndef CAP_HIDDEN
#define CAP_HIDDEN __attribute__((visibility("hidden")))
#endif

/* Writes len bytes to fd with write(2), retrying EINTR.  Returns the bytes
 * written; fewer than len means an error, errno says which (EIO when the
 * descriptor accepts no more bytes). */
CAP_HIDDEN size_t ljp__lua_fd_write(int fd, const void *data, size_t len);
/* Closes *fd unless it is -1, then sets it to -1; close's result. */
CAP_HIDDEN int ljp__lua_fd_close(int *fd);
/* Pushes nil, msg, err: the error triple of misc.sysprof/misc.memprof. */
CAP_HIDDEN int ljp__lua_push_error(lua_State *L, const char *msg, int err);
/* Once per module: keeps the object holding addr mapped even when the
 * state that loaded it unloads it (its handlers outlive that state), and
 * registers at_exit. */
CAP_HIDDEN void ljp__lua_pin_module(const void *addr, void (*at_exit)(void));

#endif
