/*
 * fold_output.h — writing a call tree as folded lines, with the stack
 * filters of ljpfold (include/exclude, re-rooting) and the two output
 * dialects: collapsed stacks ("a;b;c N") and the reference parser's
 * ("a;b;c;<TAB>N", an empty stack as ";").
 */
#ifndef LJPFOLD_OUTPUT_H
#define LJPFOLD_OUTPUT_H

#include "ljp.h"

#include <regex.h>

typedef struct fold_filter {
  regex_t *include;        /* keep stacks with a frame matching any */
  size_t ninclude;
  regex_t *exclude;        /* drop stacks with a frame matching any */
  size_t nexclude;
  const char *base;        /* re-root at the outermost frame of this name */
  int64_t min_count;       /* drop lines with |count| below this */
} fold_filter;

/* Applies the filter to t, producing a new tree (or NULL on OOM). */
ljp_tree *fold_filter_tree(const ljp_tree *t, const fold_filter *f);

/* Writes the tree in the reference dialect, lines sorted bytewise. */
ljp_status fold_write_tarantool(const ljp_tree *t, int64_t min_count,
                                ljp_emit_fn emit, void *ctx);

#endif
