/*
 * cli_names.h — a frame's name formatted into a buffer that grows to fit,
 * so that no tool cuts a long name (a chunk name is source text, of any
 * length) without saying so.
 */
#ifndef LJP_CLI_NAMES_H
#define LJP_CLI_NAMES_H

#include "ljp.h"

#include <stddef.h>
#include <stdio.h>

/* p holds cap bytes.  When owned is 0, p is the caller's storage (a stack
 * array, typically): growing then moves the name to the heap and sets
 * owned, so the common short name costs no allocation. */
typedef struct cli_namebuf {
  char *p;
  size_t cap;
  int owned;
} cli_namebuf;

/* Formats f into b->p, NUL-terminated and whole (with src, as
 * ljp_frame_name_src names it; src may be NULL); returns its length, or
 * (size_t)-1 when out of memory (b is then unchanged and still valid).
 * b->p may start NULL with cap 0 and owned 1. */
size_t cli_frame_name(cli_namebuf *b, const ljp_frame *f, ljp_name_style style,
                      ljp_flavor flavor, ljp_srcnames *src);

/* Writes f's whole name with put (an escaper of the caller's format),
 * formatted in a stack buffer when it fits.  Returns 0, or -1 with nothing
 * written when out of memory. */
int cli_put_frame_name(FILE *out, const ljp_frame *f, ljp_name_style style,
                       ljp_flavor flavor,
                       void (*put)(FILE *, const char *, size_t));

/* Frees what cli_frame_name allocated; b may be reused afterwards only after
 * being set up again. */
void cli_namebuf_free(cli_namebuf *b);

#endif
