/* input.h — reading one input of ljpsvg into call trees: a sysprof or
 * memprof file (detected by its "ljs" magic) through libljp's reader and
 * folder, or collapsed-stack text through folded.c. */
#ifndef LJPSVG_INPUT_H
#define LJPSVG_INPUT_H

#include <stdio.h>

#include "ljp.h"

typedef struct input_opts {
  ljp_fold_options fold;   /* view, style, weight, vmstate, flavor */
  int reverse;             /* --reverse */
  ljp_limits limits;       /* reader limits; zero fields: defaults */
} input_opts;

typedef struct input_result {
  ljp_kind kind;           /* LJP_KIND_UNKNOWN for folded text */
  uint64_t lines, ignored, rounded, differential;  /* folded text */
  uint64_t first_ignored, first_ignored_offset;    /* line, byte offset */
  int error;               /* 1 when reading stopped on an error */
  char message[512];       /* "offset N: ..." / strerror text */
} input_result;

/* Reads path ("-" = stdin) into after (and, for two-count folded lines,
 * before, which may be NULL).  Returns 0 when the whole input was read;
 * -1 on error with res->message set (what was read stays in the trees). */
int input_read(const char *path, const input_opts *o, ljp_tree *after,
               ljp_tree *before, input_result *res);

/* Re-adds every stack of src reversed (leaf first) into a new tree, for
 * --reverse on inputs folded by libljp.  NULL when out of memory. */
ljp_tree *input_reverse_tree(const ljp_tree *src);

#endif
