/* svg.h — writing a laid-out flame graph as an interactive SVG through
 * libxml2's xmlTextWriter: every name and user text is escaped by the
 * writer and repaired to valid UTF-8 first, so any frame name gives a
 * well-formed file.  The file is self-contained (inline style and script)
 * and deterministic. */
#ifndef LJPSVG_SVG_H
#define LJPSVG_SVG_H

#include <libxml/xmlwriter.h>

#include "layout.h"
#include "palette.h"

typedef struct svg_opts {
  const char *title, *subtitle, *notes;
  const char *fonttype, *countname, *nametype;
  double width;            /* image width, px */
  double frame_height;     /* px per level */
  double fontsize, fontwidth;
  double factor;           /* displayed counts are weights * factor */
  int inverted;            /* icicle: root on top */
  int negate;              /* swap differential hues */
  palette pal;
  const char *bgcolors;    /* NULL: the palette's */
  int legend;              /* draw the frame-class legend */
} svg_opts;

typedef struct svg_diff {
  const ljp_tree *before;  /* NULL: not a differential graph */
  double scale;            /* before's weights are multiplied by this */
  int top;                 /* rows of the largest-changes table per side */
} svg_diff;

/* Writes the whole document.  0, or -1 when the writer failed or memory
 * ran out. */
int svg_write(xmlTextWriterPtr w, const ljp_tree *t, const fg_layout *l,
              const svg_opts *o, const svg_diff *d);

/* Writes len bytes to the writer's destination, after what the writer
 * flushed there: 0, or -1. */
typedef int (*svg_direct)(void *ctx, const char *p, size_t len);

/* svg_write, with the frames (the bulk of the file, which ljpsvg formats
 * itself) handed to direct instead of through the writer's buffer.  The
 * bytes are the same. */
int svg_write_direct(xmlTextWriterPtr w, svg_direct direct, void *ctx,
                     const ljp_tree *t, const fg_layout *l, const svg_opts *o,
                     const svg_diff *d);

#endif
