/*
 * json.h — the JSON bits shared by ljpdump's outputs (summary, reports,
 * event lines).
 */
#ifndef LJPDUMP_JSON_H
#define LJPDUMP_JSON_H

#include <stddef.h>
#include <stdio.h>

/* A JSON string of n bytes.  Names are bytes, not necessarily UTF-8 (a
 * chunk name is whatever the program passed): every byte outside printable
 * ASCII is written as \u00XX, so the bytes can be recovered exactly. */
void json_str(FILE *out, const char *s, size_t n);

#endif
