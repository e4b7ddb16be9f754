/*
 * capdecode.h — test helper: decodes a capture with libljp's reader into
 * one text line per sample, so tests can assert on names:
 *
 *   "LFUNC|@fib.lua:1;@fib.lua:0|lua_pcall;main;..."   (innermost first)
 *   "TRACE|TRACE [1] @fib.lua:5;@fib.lua:1;@fib.lua:0|lua_pcall;..."
 *
 * (the trace, then the Lua stack of the trace's function and its callers;
 * both stacks are empty in ljp 2 streams).  Samples of ljp x1 streams end
 * in "|co=N", the coroutine id.
 */
#ifndef CAPDECODE_H
#define CAPDECODE_H

#include <stddef.h>
#include <stdint.h>

#include "ljp.h"

typedef struct cap_decoded {
  ljp_status status;        /* LJP_END for a complete stream */
  int complete;
  int flavor;
  unsigned ljs_version, ljp_version;
  uint64_t samples, vmstate[LJP_VMST__MAX];
  uint64_t undefined_refs;  /* frames naming no symbol defined before */
  uint64_t sym_lfunc, sym_cfunc, sym_trace;
  uint64_t x1_samples;      /* samples with time and coroutine */
  uint64_t lua_incomplete, host_incomplete, time_backwards;
  uint64_t last_time_ns;
  char **lines;
  size_t nlines;
} cap_decoded;

int cap_decode_memory(const void *buf, size_t len, cap_decoded *d);
int cap_decode_file(const char *path, cap_decoded *d);
void cap_decoded_free(cap_decoded *d);
/* Number of lines containing every one of the NULL-terminated needles. */
size_t cap_count_lines(const cap_decoded *d, const char *const *needles);
size_t cap_count1(const cap_decoded *d, const char *needle);
size_t cap_count2(const cap_decoded *d, const char *a, const char *b);

#endif
