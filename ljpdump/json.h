/*
 * json.h — the JSON bits shared by ljpdump's outputs (summary, reports,
 * event lines).
 */
#ifndef LJPDUMP_JSON_H
#define LJPDUMP_JSON_H

#include <stddef.h>
#include <stdio.h>

/* A JSON string of n bytes.  Names are bytes, not necessarily UTF-8 (a
 * chunk name is whatever the program passed): valid UTF-8 passes through,
 * control bytes are written \n, \t, \r or \u00XX and invalid bytes
 * U+FFFD, as by every JSON writer of the toolkit (cli_json.h). */
void json_str(FILE *out, const char *s, size_t n);

#endif
