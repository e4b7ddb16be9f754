/*
 * cap_names.h — names for frames that the loaded objects' own symbol tables
 * do not give: separate debug files of stripped objects, the Lua-visible
 * names of C functions, and JIT machine code named as its trace.
 *
 *   cap_debuglink.c   finding the debug file of a stripped object
 *   cap_cnames.c      C function pointer -> "lib.name" from package.loaded
 *   cap_tracenames.c  machine-code ranges -> "TRACE [n] chunk:line"
 *
 * All of it runs on the VM thread only, never in the signal handler.
 */
#ifndef LJP_CAP_NAMES_H
#define LJP_CAP_NAMES_H

#include <stddef.h>
#include <stdint.h>

#include <lua.h>

#include "ljp.h"

#ifndef CAP_HIDDEN
#define CAP_HIDDEN __attribute__((visibility("hidden")))
#endif

/* ---- separate debug files (cap_debuglink.c) ----------------------------- */

/* Environment variable: a ':'-separated list of debug roots searched before
 * /usr/lib/debug (like gdb's debug-file-directory). */
#define CAP_DEBUG_DIR_ENV "LJP_DEBUG_DIR"

/* The path of the separate debug file of the ELF image p[0, size), loaded
 * from path: by build-id (<root>/.build-id/ab/cdef....debug), then by
 * .gnu_debuglink (the object's directory, its .debug/ subdirectory and
 * <root>/<object's directory>/, the CRC32 checked).  Writes the path into
 * out and returns 0, or returns -1 when there is none. */
CAP_HIDDEN int ljp__cap_debugfile_find(const uint8_t *p, size_t size,
                                       const char *path, char *out,
                                       size_t outlen);
/* The NT_GNU_BUILD_ID note among the notes q[0, len) (a note section of
 * a file, or a loaded PT_NOTE segment) as lowercase hex into hex: 1, or 0
 * when there is none or it does not fit hexlen with its NUL. */
CAP_HIDDEN int ljp__cap_notes_build_id(const uint8_t *q, size_t len,
                                       char *hex, size_t hexlen);
/* The CRC32 of .gnu_debuglink (zlib's polynomial), continued from crc. */
CAP_HIDDEN uint32_t ljp__cap_crc32(uint32_t crc, const uint8_t *p, size_t n);

/* ---- Lua-visible names of C functions (cap_cnames.c) -------------------- */

/* Walks package.loaded (and one level of sub-tables, and the tables of _G
 * that are not modules) and records every C function that is no builtin:
 * pointer -> "lib.name".  Calls Lua: only where the VM may run Lua.
 * Returns 0, or -1 when out of memory (the names found so far are kept). */
CAP_HIDDEN int ljp__cap_cnames_scan(lua_State *L);
/* The Lua-visible name of the C function at addr, or NULL. */
CAP_HIDDEN const char *ljp__cap_cnames_get(uint64_t addr);
/* Whether the Lua-visible name also replaces a name the object's symbols
 * give (default CAP_CNAMES_OVER_ELF); otherwise it names only functions
 * that have none.  Either way ljp__cap_symbols_lookup gives the ELF name. */
#define CAP_CNAMES_OVER_ELF 0
CAP_HIDDEN int ljp__cap_cnames_over_elf(void);
CAP_HIDDEN void ljp__cap_cnames_set_over_elf(int on);
/* Notes that a C function at addr had no name (safe point: no Lua).  A
 * later ljp__cap_names_refresh rescans. */
CAP_HIDDEN void ljp__cap_cnames_miss(uint64_t addr);
CAP_HIDDEN void ljp__cap_cnames_free(void);

/* Where Lua may run (not in the safe point): when a miss was noted and at
 * least CAP_NAMES_REFRESH_MS passed since the last scan, rescans C function
 * names and the builtin map (modules required after start).  The wait
 * doubles after each rescan that found no new name, up to
 * CAP_NAMES_REFRESH_MAX_MS.  Returns 1 when it rescanned, else 0. */
#define CAP_NAMES_REFRESH_MS 200
#define CAP_NAMES_REFRESH_MAX_MS 12800
CAP_HIDDEN int ljp__cap_names_refresh(lua_State *L);

/* ---- JIT machine code (cap_tracenames.c) -------------------------------- */

/* Records that trace traceno's machine code is [lo, hi), started in Lua
 * function proto (a ljp__cap_ids_lfunc id) at line.  Replaces the ranges it
 * overlaps (machine code reused after a flush).  Returns 0 or -1 (OOM). */
CAP_HIDDEN int ljp__cap_tracenames_add(uint32_t traceno, uint64_t lo,
                                       uint64_t hi,
                                       uint64_t proto, uint64_t line);
/* When pc lies in a recorded range: writes (once per range) the C symbol
 * events naming it and returns 1 (*st: the writer status); else 0. */
CAP_HIDDEN int ljp__cap_tracenames_emit(ljp_writer *w, uint64_t pc,
                                        ljp_status *st);
/* Notes an address outside every object where some other C symbol event
 * was written, so that a trace later covering it renames it. */
CAP_HIDDEN int ljp__cap_tracenames_mark(uint64_t addr);
CAP_HIDDEN void ljp__cap_tracenames_free(void);
/* Name of the end marker written at a trace's end. */
#define CAP_MCODE_END_NAME "[jit mcode]"

/* ---- ids (cap_ids.c) ----------------------------------------------------- */

/* The chunk name recorded for a Lua-function id, or NULL. */
CAP_HIDDEN const char *ljp__cap_ids_lfunc_chunk(uint64_t id);
/* Rescans the closure -> ffid map (keeps what it has).  Calls Lua. */
CAP_HIDDEN int ljp__cap_ids_rescan(lua_State *L);

#endif
