/*
 * export.h — what the pprof and speedscope exporters share: an interning
 * table of byte strings (pprof's string table, speedscope's frame table),
 * the walk from a tree node to its stack, and the source location a frame
 * name carries.
 */
#ifndef LJP_EXPORT_H
#define LJP_EXPORT_H

#include "ljp.h"

#include <stddef.h>
#include <stdint.h>

/* Byte strings with a small tag (a frame class, or 0), numbered 0, 1, ...
 * in order of first interning.  The strings are copied. */
typedef struct ljp_xstr {
  char *text;              /* NUL-terminated copy */
  size_t len;
  uint32_t tag;
} ljp_xstr;

typedef struct ljp_xtab {
  ljp_xstr *items;
  size_t count, cap;
  uint32_t *slots;         /* open addressing: index + 1, 0 = empty */
  size_t nslots;           /* power of two, kept at least twice count */
} ljp_xtab;

void ljp__xtab_init(ljp_xtab *t);
void ljp__xtab_free(ljp_xtab *t);
/* The index of (s, len, tag), interning it first; UINT32_MAX on OOM. */
uint32_t ljp__xtab_intern(ljp_xtab *t, const char *s, size_t len, uint32_t tag);

/* Fixed-length keys of uint64_t words (pprof samples: locations and
 * labels), numbered like ljp_xtab. */
typedef struct ljp_xkeys {
  uint64_t *words;         /* all keys back to back */
  size_t nwords, capwords;
  size_t *start;           /* key i: words[start[i] .. start[i+1]) */
  size_t count, capstart;
  uint32_t *slots;
  size_t nslots;
} ljp_xkeys;

void ljp__xkeys_init(ljp_xkeys *k);
void ljp__xkeys_free(ljp_xkeys *k);
uint32_t ljp__xkeys_intern(ljp_xkeys *k, const uint64_t *w, size_t n);

/* The frames of node, outermost first, into *buf (grown as needed);
 * returns the depth, or SIZE_MAX on OOM. */
size_t ljp__export_path(const ljp_tree *t, uint32_t node, uint32_t **buf,
                       size_t *cap);

/* Where a Lua frame's name points into the source: "@a.lua:4" and
 * "f @a.lua:4" give file "a.lua", line 4; a memprof chunk frame "@a.lua"
 * gives the file alone.  Chunks that are not files ("=stdin", code
 * strings) are named as they are.  Returns 1 when a file was found. */
int ljp__export_source(const char *name, size_t len, ljp_class cls,
                      const char **file, size_t *flen, int64_t *line);

/* A sink that buffers: the exporters write small pieces. */
typedef struct ljp_xout {
  ljp_sink_fn sink;
  void *ctx;
  char buf[16384];
  size_t len;
  ljp_status st;
} ljp_xout;

void ljp__xout_init(ljp_xout *o, ljp_sink_fn sink, void *ctx);
void ljp__xout_write(ljp_xout *o, const void *p, size_t n);
ljp_status ljp__xout_flush(ljp_xout *o);

#endif
