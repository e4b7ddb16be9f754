/* xmltext.h — element text escaped exactly as libxml2's xmlTextWriter
 * escapes it (xmlEncodeSpecialChars), for the parts of the document that
 * are built in ljpsvg's own buffer and handed to the writer raw: the
 * writer's per-call bookkeeping costs more than the frames themselves. */
#ifndef LJPSVG_XMLTEXT_H
#define LJPSVG_XMLTEXT_H

#include <stddef.h>

#include "cli_strbuf.h"

/* Appends s[0..n) with '<', '>', '&', '"' and CR as references.  s must
 * be valid UTF-8 XML text already (see utf8_repair).  0, or -1 when out
 * of memory. */
int xmltext_put(strbuf *out, const char *s, size_t n);

/* 1 when s[0..n) needs no escaping (xmltext_put would copy it as it is),
 * else 0. */
int xmltext_plain(const char *s, size_t n);

/* Appends the decimal digits of v (printf's "%d"): 0, or -1. */
int xmltext_int(strbuf *out, int v);

#endif
