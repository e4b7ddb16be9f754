/* options.h — ljpsvg's command line: flamegraph.pl's drawing options,
 * ljpsvg's own, and the folding options shared with the other tools. */
#ifndef LJPSVG_OPTIONS_H
#define LJPSVG_OPTIONS_H

#include <stddef.h>
#include <stdint.h>

#include "input.h"
#include "palette.h"
#include "svg.h"

typedef struct config {
  svg_opts svg;
  input_opts in;
  const char *output;
  const char *minwidth;
  double total;            /* --total; 0 = none */
  int diff, normalize, colors_set, countname_set, title_set, dark;
  int colorblind, legend, hash;
  palette_id pal;
  size_t maxframes;
  int jobs;                /* --jobs: inputs read at once (0 or 1: one) */
} config;

/* flamegraph.pl's defaults. */
void config_init(config *c);

/* Fills c from argv: CLI_OPT_CONTINUE, or the status to exit with (help,
 * version, usage errors). */
int options_parse(int argc, char **argv, config *c);

/* Reports an invalid option value: the usage-error status. */
int options_bad_value(const char *opt, const char *v);

/* Minimum width in weight units from "PX" or "N%": 0, or -1 when s is
 * not one of them. */
int options_min_weight(const char *s, double width, int64_t total,
                       double *out);

#endif
