/* utf8.h — turning arbitrary frame-name bytes into text XML accepts. */
#ifndef LJPSVG_UTF8_H
#define LJPSVG_UTF8_H

#include "cli_strbuf.h"

/* Appends s[0..n) to out as valid UTF-8 holding only characters XML 1.0
 * allows: every invalid or truncated sequence, every C0 control but tab,
 * and U+FFFE/U+FFFF become U+FFFD.  At most max_cp code points are kept;
 * a longer name ends in U+2026.  Returns the number of code points
 * appended, or (size_t)-1 when out of memory. */
size_t utf8_repair(const char *s, size_t n, size_t max_cp, strbuf *out);

/* The byte length of the first cps code points of valid UTF-8 s[0..n). */
size_t utf8_prefix(const char *s, size_t n, size_t cps);

#endif
