/*
 * dec_ljs.c — the symbol table stream (FORMATS.md §3), all versions:
 *
 *   symtab   := prologue sym* sym-final
 *   sym      := header[FUUUUUTT] payload       TT by version:
 *     v1: 0 lfunc
 *     v2: 0 lfunc, 1 trace (2a: no addr mcode proto line; 2b: no proto line)
 *     v3: 0 lfunc, 1 cfunc, 2 trace (2b layout)
 *   lfunc    := proto:ULEB chunk:string firstline:ULEB
 *   cfunc    := addr:ULEB name:string
 */
#include "internal.h"

#include <string.h>

/* Names end at a NUL, as the producer's strlen() cuts them: ljp.h
 * promises names without NUL, and hostile streams must keep that. */
static size_t name_len(const uint8_t *s, uint64_t n) {
  const uint8_t *nul = n ? memchr(s, 0, (size_t)n) : NULL;
  return nul ? (size_t)(nul - s) : (size_t)n;
}

int ljp__dec_sym_lfunc(ljp_reader *r, cursor *c, ljp_symbol *d) {
  const uint8_t *s;
  uint64_t n;
  memset(d, 0, sizeof(*d));
  d->kind = LJP_SYM_LFUNC;
  GET_ULEB(r, c, d->addr, "ULEB128 proto address of a Lua symbol");
  int rc = ljp__reader_string(r, c, "chunk name of a Lua symbol", &s, &n);
  if (rc)
    return rc;
  d->name = (const char *)s;
  d->name_len = name_len(s, n);
  GET_ULEB(r, c, d->line, "ULEB128 first line of a Lua symbol");
  return LJP_OK;
}

int ljp__dec_sym_cfunc(ljp_reader *r, cursor *c, ljp_symbol *d) {
  const uint8_t *s;
  uint64_t n;
  memset(d, 0, sizeof(*d));
  d->kind = LJP_SYM_CFUNC;
  GET_ULEB(r, c, d->addr, "ULEB128 address of a C symbol");
  int rc = ljp__reader_string(r, c, "name of a C symbol", &s, &n);
  if (rc)
    return rc;
  d->name = (const char *)s;
  d->name_len = name_len(s, n);
  return LJP_OK;
}

int ljp__dec_sym_trace(ljp_reader *r, cursor *c, ljp_symbol *d,
                       int with_mcode) {
  memset(d, 0, sizeof(*d));
  d->kind = LJP_SYM_TRACE;
  GET_ULEB(r, c, d->traceno, "ULEB128 number of a trace symbol");
  if (with_mcode) {
    GET_ULEB(r, c, d->mcode, "ULEB128 machine-code address of a trace symbol");
    d->has_mcode = 1;
  }
  GET_ULEB(r, c, d->addr, "ULEB128 start proto of a trace symbol");
  GET_ULEB(r, c, d->line, "ULEB128 start line of a trace symbol");
  return LJP_OK;
}

int ljp__dec_ljs_record(ljp_reader *r, cursor *c) {
  uint64_t off = cur_off(c);
  if (c->p >= c->end) {
    r->need_off = off;
    r->need_what = "symbol table entry header";
    return PARSE_NEED;
  }
  uint8_t h = *c->p++;
  if (h & 0x80) {
    /* The reference accepts any byte with the F bit as the end. */
    r->ev.type = LJP_EV_EPILOGUE;
    r->state = RS_EV_PROLOGUE;
    return LJP_OK;
  }
  unsigned type = h & 3, v = r->ljs_version;
  ljp_symbol d;
  int rc;
  if (h & 0x7c)
    type = 3; /* unused bits set: never written */
  if (type == 0)
    rc = ljp__dec_sym_lfunc(r, c, &d);
  else if (type == 1 && v == 3)
    rc = ljp__dec_sym_cfunc(r, c, &d);
  else if (type == 1 && v == 2 && !r->ljs_layout) {
    r->need_off = off;
    r->need_what = "ljs 2 symbol table (the cut leaves trace layout 2a and "
                   "2b undecided)";
    c->p = c->end;
    return PARSE_NEED;
  } else if ((type == 1 && v == 2) || (type == 2 && v == 3))
    rc = ljp__dec_sym_trace(r, c, &d, v == 2 && r->ljs_layout == 'a');
  else
    return ljp__reader_fail(
        r, LJP_E_MALFORMED, off,
        "symbol table entry header 0x%02x is not valid in ljs "
        "version %u",
        h, v);
  if (rc)
    return rc;
  return ljp__reader_define(r, &d, 1, h, off);
}

/* ljs 2 has two trace layouts under one version number (T1): 2a carries
 * the machine-code address, 2b does not.  Parse the table both ways; the
 * right one ends at a final byte followed by an event-stream magic. */
static int scan_ljs2(const cursor *c0, int with_mcode, const uint8_t **stop) {
  cursor c = *c0;
  for (;;) {
    if (c.p >= c.end)
      return CUR_NEED;
    uint8_t h = *c.p++;
    uint64_t v;
    int rc;
    if (h & 0x80) {
      if (c.end - c.p < 3)
        return CUR_NEED;
      *stop = c.p;
      return (memcmp(c.p, "ljm", 3) == 0 || memcmp(c.p, "ljp", 3) == 0)
                 ? CUR_OK
                 : CUR_BAD;
    }
    if (h == 0) {
      if ((rc = cur_uleb(&c, &v)) || (rc = cur_uleb(&c, &v)))
        return rc;
      if ((uint64_t)(c.end - c.p) < v)
        return CUR_NEED;
      c.p += v;
      if ((rc = cur_uleb(&c, &v)))
        return rc;
    } else if (h == 1) {
      for (int i = 0; i < 3 + with_mcode; i++)
        if ((rc = cur_uleb(&c, &v)))
          return rc;
    } else {
      *stop = c.p;
      return CUR_BAD;
    }
    *stop = c.p;
  }
}

int ljp__dec_ljs2_probe_layout(ljp_reader *r, cursor *c, int *layout) {
  const uint8_t *sa = c->p, *sb = c->p;
  int a = scan_ljs2(c, 1, &sa);
  int b = scan_ljs2(c, 0, &sb);
  if (a == CUR_OK) {
    *layout = b == CUR_OK && sa == sb ? 0 : 'a'; /* 0: no traces, either */
    return LJP_OK;
  }
  if (b == CUR_OK) {
    *layout = 'b';
    return LJP_OK;
  }
  if ((a == CUR_NEED || b == CUR_NEED) && !r->in.eof) {
    r->need_off = cur_off(c);
    r->need_what = "ljs 2 symbol table";
    return PARSE_NEED;
  }
  /* Cut short: a reading that ran into bytes no producer writes is wrong
   * if the other just ran out of input.  If both ran out, the layout
   * cannot be told: entries up to the first trace are still delivered,
   * and the trace entry reports the truncation (layout 0).  Broken either
   * way: follow the reading that got further, so the error is reported
   * where the bytes stop making sense. */
  if (a == CUR_NEED && b == CUR_NEED)
    *layout = 0;
  else if (a == CUR_NEED)
    *layout = 'a';
  else if (b == CUR_NEED)
    *layout = 'b';
  else
    *layout = sa >= sb ? 'a' : 'b';
  return LJP_OK;
}
