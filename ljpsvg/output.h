/* output.h — where the SVG goes: a file or stdout, through libxml2's
 * writer and ljpsvg's own write callback, which batches the writer's small
 * flushes into large writes and keeps the errno of the first failed one
 * (a closed pipe is not an error, a full disk is). */
#ifndef LJPSVG_OUTPUT_H
#define LJPSVG_OUTPUT_H

#include "layout.h"
#include "ljp.h"
#include "svg.h"

/* Writes the graph to path (NULL or "-": stdout).  0, or -1 after
 * reporting an error; a closed pipe on stdout ends the output quietly
 * with 0 (the reader, e.g. head, has what it wanted). */
int output_svg(const char *path, const ljp_tree *t, const fg_layout *l,
               const svg_opts *o, const svg_diff *d);

#endif
