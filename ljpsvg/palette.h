/* palette.h — frame colours: flamegraph.pl's palettes, the LuaJIT palette
 * (one hue family per ljp_class), colour-blind-safe variants, and the
 * red/blue scale of differential graphs.  Colours depend only on the name
 * (and class), never on run order, so two graphs of one program match. */
#ifndef LJPSVG_PALETTE_H
#define LJPSVG_PALETTE_H

#include <stddef.h>
#include <stdint.h>

#include "ljp.h"

typedef enum palette_id {
  PAL_HOT, PAL_MEM, PAL_IO, PAL_WAKEUP, PAL_CHAIN, PAL_JAVA, PAL_JS,
  PAL_PERL, PAL_RED, PAL_GREEN, PAL_BLUE, PAL_AQUA, PAL_YELLOW, PAL_PURPLE,
  PAL_ORANGE, PAL_LUA
} palette_id;

typedef struct rgb {
  uint8_t r, g, b;
} rgb;

typedef struct palette {
  palette_id id;
  int name_hash;     /* --hash: flamegraph.pl's name hash (similar names,
                        similar colours) instead of a full hash */
  int colorblind;    /* Okabe-Ito hue families */
} palette;

/* 0 and *out set, or -1 for an unknown name. */
int palette_parse(const char *name, palette_id *out);
const char *palette_names(void);  /* "hot, mem, ..." for --help */

/* The colour of a frame.  Class OTHER frames (folded text) are classified
 * by their name for the LuaJIT palette (see palette_guess_class). */
rgb palette_color(const palette *p, const char *name, size_t len,
                  ljp_class cls);

/* The class a name from folded text most likely has: "VM:..." pseudo
 * frames, "TRACE [n]..." traces, "@file:line" / "=chunk" Lua functions,
 * "builtin#n" / "ffunc#n" fast functions; OTHER when unsure. */
ljp_class palette_guess_class(const char *name, size_t len);

/* The base colour of a class's hue family (legend swatches). */
rgb palette_class_color(const palette *p, ljp_class cls);
const char *palette_class_label(ljp_class cls);

/* Differential colour: white at 0, red growing to +max, blue to -max
 * (swapped by negate), like flamegraph.pl's color_scale. */
rgb palette_diff(double delta, double max, int negate);

/* Background gradient of a palette and --bgcolors value (NULL = the
 * palette's own); -1 for an unknown value. */
int palette_background(palette_id id, const char *bgcolors, char top[8],
                       char bottom[8], int *dark);

#endif
