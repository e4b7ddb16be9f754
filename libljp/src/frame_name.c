/*
 * frame_name.c — how frames are spelled.
 *
 * Two spellings: the toolkit's (readable, no addresses, so samples in the
 * same function merge whatever the ASLR base) and the reference parser's
 * demangle() (FORMATS.md §8.2), which ljpfold --format=tarantool and the
 * memprof report reproduce byte for byte.
 */
#include "internal.h"

#include <stdio.h>
#include <string.h>

typedef struct sbuf {
  char *p;
  size_t cap, len;
} sbuf;

static void put(sbuf *b, const char *s, size_t n) {
  if (b->len < b->cap) {
    size_t room = b->cap - b->len - 1; /* keep space for the NUL */
    memcpy(b->p + b->len, s, n < room ? n : room);
  }
  b->len += n;
}

static void putf(sbuf *b, const char *fmt, unsigned long long v) {
  char tmp[48];
  int n = snprintf(tmp, sizeof(tmp), fmt, v);
  put(b, tmp, (size_t)n);
}

/* Lua's "%#x": lowercase with 0x, but a bare "0" for zero. */
static void put_hex(sbuf *b, uint64_t v) {
  if (v)
    putf(b, "0x%llx", (unsigned long long)v);
  else
    put(b, "0", 1);
}

static void put_chunk(sbuf *b, const ljp_symbol *proto) {
  unsigned alias = ljp_symbol_alias(proto);
  if (alias)
    putf(b, "function_alias_%llu", alias);
  else
    put(b, proto->name, proto->name_len);
}

static void put_csym(sbuf *b, const ljp_symbol *sym, uint64_t addr,
                     int with_addr) {
  if (!sym) {
    put(b, "CFUNC ", 6);
    put_hex(b, addr);
    return;
  }
  put(b, sym->name, sym->name_len);
  if (with_addr) {
    put(b, ":", 1);
    put_hex(b, sym->addr);
  }
}

LJP_API const char *ljp_ffname(ljp_flavor flavor, unsigned ffid) {
  const char *const *t = flavor == LJP_FLAVOR_LUAJIT      ? ljp__ffnames_luajit
                         : flavor == LJP_FLAVOR_OPENRESTY ? ljp__ffnames_openresty
                                                          : ljp__ffnames_tarantool;
  for (unsigned i = 0; t[i]; i++)
    if (i == ffid)
      return t[i];
  return NULL;
}

static void name_trace(sbuf *b, const ljp_frame *f, ljp_name_style style) {
  putf(b, "TRACE [%llu]", (unsigned long long)f->value);
  if (style == LJP_NAME_REFERENCE) {
    /* ljm 2 era: the mcode is printed, and the start only when the trace
     * symbol was dumped for that very machine code (§8.3). */
    if (f->mcode) {
      put(b, " ", 1);
      put_hex(b, f->mcode);
      if (!f->sym || !f->sym->has_mcode || f->sym->mcode != f->mcode)
        return;
    }
    if (!f->sym)
      return;
    put(b, " started at ", 12);
    if (f->sym->addr == 0)
      put(b, "INTERNAL", 8);
    else if (f->proto) {
      put_chunk(b, f->proto);
      putf(b, ":%llu", (unsigned long long)f->sym->line);
    } else {
      put(b, "CFUNC ", 6);
      put_hex(b, f->sym->addr);
    }
    return;
  }
  if (f->proto) {
    put(b, " ", 1);
    put_chunk(b, f->proto);
    putf(b, ":%llu", (unsigned long long)(f->sym ? f->sym->line : f->line));
  } else if (f->sym) {
    putf(b, " 0x%llx", (unsigned long long)f->sym->addr);
    putf(b, ":%llu", (unsigned long long)f->sym->line);
  }
}

LJP_API size_t ljp_frame_name(const ljp_frame *f, ljp_name_style style,
                              ljp_flavor flavor, char *buf, size_t cap) {
  sbuf b = {buf, buf ? cap : 0, 0};
  int ref = style == LJP_NAME_REFERENCE;
  switch (f ? f->kind : LJP_FRAME_NONE) {
  case LJP_FRAME_LUA:
    if (ref && f->value == 0)
      put(&b, "INTERNAL", 8);
    else if (f->sym) {
      put_chunk(&b, f->sym);
      putf(&b, ":%llu", (unsigned long long)f->line);
    } else if (ref)
      put_csym(&b, f->proto, f->value, 1);
    else {
      putf(&b, "LFUNC 0x%llx", (unsigned long long)f->value);
      putf(&b, ":%llu", (unsigned long long)f->line);
    }
    break;
  case LJP_FRAME_CFUNC:
  case LJP_FRAME_HOST:
    if (ref && f->value == 0)
      put(&b, "INTERNAL", 8);
    else if (!ref && f->sym && f->sym->name_len == 0)
      putf(&b, "0x%llx", (unsigned long long)f->value);
    else
      put_csym(&b, f->sym, f->value, style != LJP_NAME_DEFAULT);
    break;
  case LJP_FRAME_FFUNC: {
    const char *n = ljp_ffname(ref ? LJP_FLAVOR_TARANTOOL : flavor,
                               f->value > 0xffff ? 0xffff : (unsigned)f->value);
    if (n)
      put(&b, n, strlen(n));
    else if (!ref)
      putf(&b, "ffunc#%llu", (unsigned long long)f->value);
    break;
  }
  case LJP_FRAME_TRACE:
    name_trace(&b, f, style);
    break;
  case LJP_FRAME_MARK:
    if (f->value == LJP_MARK_HOST_INCOMPLETE)
      put(&b, "[host stack incomplete]", 23);
    else
      putf(&b, "[mark %llu]", (unsigned long long)f->value);
    break;
  default:
    put(&b, "INTERNAL", 8);
    break;
  }
  if (cap && buf)
    buf[b.len < cap ? b.len : cap - 1] = '\0';
  return b.len;
}

/* The source name goes first so that a reader scanning a flame graph sees
 * what the developer called the function; the location stays, because two
 * functions may share a name. */
LJP_API size_t ljp_frame_name_src(const ljp_frame *f, ljp_name_style style,
                                  ljp_flavor flavor, ljp_srcnames *src,
                                  char *buf, size_t cap) {
  const char *fn = NULL;
  if (src && f && f->kind == LJP_FRAME_LUA && f->sym &&
      style != LJP_NAME_REFERENCE)
    fn = ljp_srcnames_lookup(src, f->sym->name, f->sym->name_len,
                             f->sym->line);
  if (!fn)
    return ljp_frame_name(f, style, flavor, buf, cap);
  size_t n = strlen(fn);
  sbuf b = {buf, buf ? cap : 0, 0};
  put(&b, fn, n);
  put(&b, " ", 1);
  size_t rest = ljp_frame_name(f, style, flavor, NULL, 0);
  if (b.len < b.cap)
    ljp_frame_name(f, style, flavor, buf + b.len, b.cap - b.len);
  b.len += rest;
  if (cap && buf)
    buf[b.len < cap ? b.len : cap - 1] = '\0';
  return b.len;
}
