/* numfmt.h — the SVG's numbers, byte-identical to printf's "%.2f" and
 * "%.0f" but without printf's cost: a flame graph writes several numbers
 * per frame, and glibc formats each through multi-precision arithmetic.
 * The common case is integer arithmetic; values near a rounding tie, huge
 * values and non-finite ones are handed to snprintf, so the output is
 * always what printf would write. */
#ifndef LJPSVG_NUMFMT_H
#define LJPSVG_NUMFMT_H

#include <stddef.h>

/* Room for any result, snprintf's included (1e308 has 309 digits). */
#define NUMFMT_MAX 400

/* snprintf(buf, NUMFMT_MAX, "%.2f", v): returns the length. */
size_t numfmt_fixed2(char *buf, double v);

/* snprintf(buf, NUMFMT_MAX, "%.0f", v): returns the length. */
size_t numfmt_fixed0(char *buf, double v);

#endif
