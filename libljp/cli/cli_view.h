/*
 * cli_view.h — the --stack and --weight options of ljpfold and ljpsvg, one
 * parser each so that the tools accept the same values:
 *   --stack=VIEW   merged (default), lua, host or reference
 *   --weight=W     bytes (default), events or live (memprof)
 */
#ifndef LJP_CLI_VIEW_H
#define LJP_CLI_VIEW_H

#include "ljp.h"

/* The accepted values, for usage errors and help text. */
#define CLI_STACK_VALUES "merged, lua, host or reference"
#define CLI_WEIGHT_VALUES "bytes, events or live"

/* 0, or -1 for a value not listed above (*out is then unchanged). */
int cli_parse_stack(const char *s, ljp_stack_view *out);
int cli_parse_weight(const char *s, ljp_weight *out);

#endif
