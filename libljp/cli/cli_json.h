/*
 * cli_json.h — a JSON string on a FILE, escaped as every JSON writer of
 * the toolkit escapes (libljp/src/json_text.h): valid UTF-8 as it is,
 * newline, tab and return as \n \t \r, other control bytes as \u00XX,
 * invalid bytes as U+FFFD.
 */
#ifndef LJP_CLI_JSON_H
#define LJP_CLI_JSON_H

#include <stddef.h>
#include <stdio.h>

/* Writes s[0..n) as a JSON string, quotes included. */
void cli_json_str(FILE *out, const char *s, size_t n);

#endif
