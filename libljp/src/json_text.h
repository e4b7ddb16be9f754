/*
 * json_text.h — frame names (any bytes) as the contents of a JSON string.
 * Every JSON writer of the toolkit (ljpdump, ljpdb, the speedscope export)
 * escapes through these two calls, so one name reads the same in each:
 *
 *   - valid UTF-8 (RFC 3629: no overlongs, no surrogates, <= U+10FFFF)
 *     passes through unchanged, so non-ASCII names stay readable;
 *   - '"' and '\' are written \" and \\;
 *   - newline, tab and carriage return are written \n, \t and \r, the
 *     other control bytes (< 0x20) and DEL (0x7f) \u00XX;
 *   - every byte that is not part of a valid UTF-8 sequence becomes
 *     U+FFFD (written as its UTF-8 bytes EF BF BD).  JSON text is Unicode:
 *     such a byte has no character, and writing it as \u00XX would claim
 *     the character U+00XX, indistinguishable from a real one.
 *
 * The sink is the caller's (a FILE, an export buffer): a writer copies
 * the plain runs as they are and the escapes between them.
 */
#ifndef LJP_JSON_TEXT_H
#define LJP_JSON_TEXT_H

#include <stddef.h>

/* Room for the longest escape, "\u00XX", and a NUL. */
#define LJP_JSON_ESC_MAX 8

/* The length of the longest prefix of s[0..n) that goes into a JSON string
 * unchanged. */
size_t ljp__json_plain(const char *s, size_t n);

/* The escape of the byte at s[0] where ljp__json_plain stopped (n > 0):
 * writes it to esc and returns its length; it stands for that one byte. */
size_t ljp__json_escape(const char *s, char esc[LJP_JSON_ESC_MAX]);

#endif
