/*
 * cap_mem_out.c — the memory profiler's stream: ljs 3 + ljm 3 exactly as
 * Tarantool's memprof writes them (FORMATS.md §4), encoded into the
 * host's buffer, with the symbol events of Lua prototypes, C functions
 * and traces written before their first use.
 *
 * Runs inside the allocator wrapper: it allocates only with malloc (the
 * symbol caches; never through the Lua state) and calls nothing but the
 * writer, dladdr and the VM reader.  A record is written only when it
 * fits in the buffer whole (the buffer is flushed first), so a stream cut
 * by a failing writer ends between records.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1   /* dladdr */
#endif
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cap_mem.h"
#include "ljp.h"

/* Header bytes (FORMATS.md §4.2). */
enum {
  H_SYM_LFUNC = 0x08, H_SYM_CFUNC = 0x0C, H_SYM_TRACE = 0x10,
  H_SRC_INT = 0x04, H_SRC_LFUNC = 0x08, H_SRC_CFUNC = 0x0C, H_SRC_TRACE = 0x10,
  H_EPILOGUE = 0x80
};
/* The longest event: a header and six ULEB128s (the last one may store
 * 8 bytes: uleb_at). */
#define EVENT_MAX (1 + 6 * 10)

#define M ljp__cap_M

void ljp__cap_mem_out_flush(void)
{
  const void *data = M.opt.buf;
  size_t n = M.pos, w;
  uint64_t events = M.unflushed;
  if (M.in_flush || n == 0)
    return;
  M.pos = 0;
  M.unflushed = 0;
  if (M.halted) {
    M.c.dropped += events;
    return;
  }
  M.in_flush = 1;
  errno = 0;
  w = M.opt.writer(&data, n, M.opt.ctx);
  M.in_flush = 0;
  if (w != n || data == NULL) {
    M.halted = 1;
    M.err_no = errno ? errno : EIO;
    M.c.dropped += events;
  }
}

/* Room for n more bytes, flushing first when needed.  0: the record
 * cannot be written (the writer failed or runs now). */
static int room_slow(size_t n)
{
  if (M.halted)
    return 0;
  if (M.pos + n <= M.opt.len)
    return 1;
  if (M.in_flush)
    return 0;
  ljp__cap_mem_out_flush();
  return !M.halted && n <= M.opt.len;
}

/* The common case inline: every allocator call asks for room. */
static inline int room(size_t n)
{
  return (!M.halted && M.pos + n <= M.opt.len) || room_slow(n);
}

static inline void put8(uint8_t b)
{
  M.opt.buf[M.pos++] = b;
}

/* ULEB128 (FORMATS.md §1) at p; returns the end.  Inline and branch-light
 * because every allocator call encodes two to six numbers: sizes and
 * lines mostly take one byte, addresses six or seven, and a byte-by-byte
 * loop over an address was most of the encoding's cost.  Up to 56 bits
 * the seven-bit groups are spread into one 64-bit store (little-endian
 * hosts; the caller guarantees 8 bytes of room). */
static inline uint8_t *uleb_at(uint8_t *p, uint64_t v)
{
  if (v < 0x80) {
    *p = (uint8_t)v;
    return p + 1;
  }
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  if (v < (UINT64_C(1) << 56)) {
    unsigned n = (unsigned)(64 - __builtin_clzll(v) + 6) / 7;   /* 2..8 */
    uint64_t x = (v & 0x7f) | (v << 1 & UINT64_C(0x7f00)) |
                 (v << 2 & UINT64_C(0x7f0000)) |
                 (v << 3 & UINT64_C(0x7f000000)) |
                 (v << 4 & UINT64_C(0x7f00000000)) |
                 (v << 5 & UINT64_C(0x7f0000000000)) |
                 (v << 6 & UINT64_C(0x7f000000000000)) |
                 (v << 7 & UINT64_C(0x7f00000000000000));
    x |= UINT64_C(0x8080808080808080) >> (8 * (9 - n));
    memcpy(p, &x, sizeof x);
    return p + n;
  }
#endif
  while (v >= 0x80) {
    *p++ = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  *p++ = (uint8_t)v;
  return p;
}

static inline void putu(uint64_t v)
{
  M.pos = (size_t)(uleb_at(M.opt.buf + M.pos, v) - M.opt.buf);
}

/* A string: pumped through the buffer when longer than the room left. */
static int putstr(const char *s, size_t len)
{
  putu(len);
  while (len > 0) {
    size_t n = M.opt.len - M.pos;
    if (n == 0) {
      if (M.in_flush)
        return 0;
      ljp__cap_mem_out_flush();
      if (M.halted)
        return 0;
      n = M.opt.len;
    }
    if (n > len)
      n = len;
    memcpy(M.opt.buf + M.pos, s, n);
    M.pos += n;
    s += n;
    len -= n;
  }
  return 1;
}

int ljp__cap_mem_out_begin(void)
{
  static const uint8_t ljs[8] = {'l', 'j', 's', 3, 0, 0, 0, H_EPILOGUE};
  uint8_t ljm[7] = {'l', 'j', 'm', 3, 0, 0, 0};
  ljm[4] = (uint8_t)(M.vm.ok ? M.vm.flavor : ljp_capture_flavor());
  memcpy(M.opt.buf, ljs, sizeof ljs);
  memcpy(M.opt.buf + sizeof ljs, ljm, sizeof ljm);
  M.pos = sizeof ljs + sizeof ljm;
  ljp__cap_mem_out_flush();
  return M.halted ? -1 : 0;
}

void ljp__cap_mem_out_end(void)
{
  if (room(1))
    put8(H_EPILOGUE);
  ljp__cap_mem_out_flush();
}

/* ---- symbol caches (open addressing, keys never 0) --------------------- */

static size_t slot_of(uint64_t key, size_t cap)
{
  key ^= key >> 33;
  key *= UINT64_C(0xff51afd7ed558ccd);
  key ^= key >> 33;
  return (size_t)key & (cap - 1);
}

/* Grows a table to twice its size; 0 when out of memory. */
static int grow(uint64_t **keys, uint64_t **vals, size_t *cap)
{
  size_t nc = *cap ? *cap * 2 : 1024, i;
  uint64_t *nk = calloc(nc, sizeof *nk), *nv = NULL;
  if (!nk || (vals && !(nv = calloc(nc, sizeof *nv)))) {
    free(nk);
    return 0;
  }
  for (i = 0; i < *cap; i++) {
    size_t j;
    if (!(*keys)[i])
      continue;
    for (j = slot_of((*keys)[i], nc); nk[j]; j = (j + 1) & (nc - 1))
      ;
    nk[j] = (*keys)[i];
    if (vals)
      nv[j] = (*vals)[i];
  }
  free(*keys);
  *keys = nk;
  if (vals) {
    free(*vals);
    *vals = nv;
  }
  *cap = nc;
  return 1;
}

/* The slot of key (found or free), or SIZE_MAX when the table is full and
 * cannot grow. */
static size_t lookup(uint64_t **keys, uint64_t **vals, size_t *cap,
                     size_t count, uint64_t key)
{
  size_t j;
  if ((count + 1) * 2 > *cap && !grow(keys, vals, cap))
    return SIZE_MAX;
  for (j = slot_of(key, *cap); (*keys)[j] && (*keys)[j] != key;
       j = (j + 1) & (*cap - 1))
    ;
  return j;
}

/* The value of a prototype's symbol: its chunk name and first line, so
 * that a new prototype at a freed one's address is written again. */
static uint64_t proto_val(uint64_t chunk, uint32_t firstline)
{
  return chunk * 31 + firstline + 1;
}

/* The symbol checks are split: the common case (written already) inline
 * in ljp__cap_mem_out_event, the rest out of line, so that the event's path
 * saves no registers for code it does not run. */
#if defined(__GNUC__)
#define COLD __attribute__((noinline, cold))
#else
#define COLD
#endif

/* Writes the symbol of prototype pt unless written as it is. */
static COLD int sym_proto_slow(uint64_t pt, uint64_t chunk, uint32_t firstline)
{
  size_t j, len;
  uint64_t v = proto_val(chunk, firstline);
  const char *s;
  j = lookup(&M.pkeys, &M.pvals, &M.pcap, M.pcount, pt);
  if (j != SIZE_MAX && M.pkeys[j] == pt && M.pvals[j] == v) {
    M.last_pt = pt;
    M.last_pval = v;
    return 1;
  }
  s = ljp__cap_vm_str(&M.vm, chunk, SIZE_MAX, &len);
  if (!s)
    s = "?", len = 1;
  if (!room(1 + 10 + 10 + (len <= M.opt.len ? len : 0) + 10))
    return 0;
  put8(H_SYM_LFUNC);
  putu(pt);
  if (!putstr(s, len) || !room(10))
    return 0;
  putu(firstline);
  M.c.symbols++;
  if (j != SIZE_MAX) {
    if (!M.pkeys[j])
      M.pcount++;
    M.pkeys[j] = pt;
    M.pvals[j] = v;
    M.last_pt = pt;
    M.last_pval = v;
  }
  return 1;
}

/* Runs of allocations come from one function: the last prototype and C
 * function found written spare the tables. */
static inline int sym_proto(uint64_t pt, uint64_t chunk, uint32_t firstline)
{
  return (pt == M.last_pt && proto_val(chunk, firstline) == M.last_pval) ||
         sym_proto_slow(pt, chunk, firstline);
}

/* The name of a C function: a builtin's name, its symbol when one starts
 * exactly there, its Lua-visible name, else the object and offset. */
static void cfunc_name(uint64_t addr, unsigned ffid, char *out, size_t outlen)
{
  Dl_info info;
  memset(&info, 0, sizeof info);
  if (ffid > 1) {
    const char *n = ljp_ffname((ljp_flavor)M.vm.flavor, ffid);
    if (n) {
      snprintf(out, outlen, "%s", n);
      return;
    }
  }
  if (dladdr((void *)(uintptr_t)addr, &info) && info.dli_sname &&
      (uint64_t)(uintptr_t)info.dli_saddr == addr) {
    snprintf(out, outlen, "%s", info.dli_sname);
  } else if (ljp__cap_mem_names_get(addr)) {
    snprintf(out, outlen, "%s", ljp__cap_mem_names_get(addr));
  } else if (info.dli_fname) {
    const char *b = strrchr(info.dli_fname, '/');
    snprintf(out, outlen, "%s+0x%llx", b ? b + 1 : info.dli_fname,
             (unsigned long long)(addr - (uint64_t)(uintptr_t)info.dli_fbase));
  } else {
    snprintf(out, outlen, "0x%llx", (unsigned long long)addr);
  }
}

static COLD int sym_cfunc_slow(uint64_t addr, unsigned ffid)
{
  size_t j, len;
  char name[256];
  j = lookup(&M.ckeys, NULL, &M.ccap, M.ccount, addr);
  if (j != SIZE_MAX && M.ckeys[j] == addr) {
    M.last_cf = addr;
    return 1;
  }
  cfunc_name(addr, ffid, name, sizeof name);
  len = strlen(name);
  if (!room(1 + 10 + 10 + len))
    return 0;
  put8(H_SYM_CFUNC);
  putu(addr);
  putstr(name, len);
  M.c.symbols++;
  if (j != SIZE_MAX) {
    M.ckeys[j] = addr;
    M.ccount++;
    M.last_cf = addr;
  }
  return 1;
}

/* Writes the symbol of trace traceno unless written as it is.  A trace
 * number takes a new trace only through a new GCtrace, which LuaJIT
 * allocates in the assembler (lj_trace_alloc under the ASM VM state):
 * until the wrapper sees such an allocation (trace_gen), a trace checked
 * once is not read again. */
static COLD int sym_trace_slow(uint32_t traceno)
{
  cap_vm_trace t;
  cap_mem_trace *c;
  if (!M.sl.traces || !ljp__cap_vm_site_trace(&M.vm, &M.sl, traceno, &t))
    return 1;             /* written without a symbol: "TRACE [n]" */
  if (traceno >= M.ntraces) {
    size_t nn = (size_t)traceno * 2 + 16;
    cap_mem_trace *n = realloc(M.traces, nn * sizeof *n);
    if (!n)
      return 1;
    memset(n + M.ntraces, 0, (nn - M.ntraces) * sizeof *n);
    M.traces = n;
    M.ntraces = nn;
  }
  c = &M.traces[traceno];
  if (c->T == t.T && c->proto == t.proto && c->line == t.line) {
    c->gen = M.trace_gen;
    return 1;
  }
  if (!sym_proto(t.proto, t.chunk, t.firstline) || !room(1 + 30))
    return 0;
  put8(H_SYM_TRACE);
  putu(traceno);
  putu(t.proto);
  putu(t.line);
  M.c.symbols++;
  c->T = t.T;
  c->proto = t.proto;
  c->line = t.line;
  c->gen = M.trace_gen;
  return 1;
}

static inline int sym_cfunc(uint64_t addr, unsigned ffid)
{
  return !addr || addr == M.last_cf || sym_cfunc_slow(addr, ffid);
}

static inline int sym_trace(uint32_t traceno)
{
  return (traceno < M.ntraces && M.traces[traceno].gen == M.trace_gen) ||
         sym_trace_slow(traceno);
}

void ljp__cap_mem_out_event(const cap_mem_event *e)
{
  const cap_vm_site *s = &e->site;
  uint8_t h = e->kind, *p;
  int ok = 1;
  switch (s->source) {
  case CAP_SITE_LFUNC:
    ok = sym_proto(s->addr, s->chunk, s->firstline);
    h |= H_SRC_LFUNC;
    break;
  case CAP_SITE_CFUNC:
    ok = sym_cfunc(s->addr, s->ffid);
    h |= H_SRC_CFUNC;
    break;
  case CAP_SITE_TRACE:
    ok = sym_trace((uint32_t)s->addr);
    h |= H_SRC_TRACE;
    break;
  default:
    h |= H_SRC_INT;
    break;
  }
  if (!ok || !room(EVENT_MAX)) {
    M.c.dropped++;
    return;
  }
  /* A local cursor: a store through the buffer could alias M.pos, so
   * writing through M would reload it after every byte. */
  p = M.opt.buf + M.pos;
  *p++ = h;
  if (s->source == CAP_SITE_LFUNC) {
    p = uleb_at(p, s->addr);
    p = uleb_at(p, s->line);
  } else if (s->source == CAP_SITE_CFUNC || s->source == CAP_SITE_TRACE) {
    p = uleb_at(p, s->addr);
  }
  if (e->kind != LJP_MEM_ALLOC) {
    p = uleb_at(p, e->oaddr);
    p = uleb_at(p, e->osize);
  }
  if (e->kind != LJP_MEM_FREE) {
    p = uleb_at(p, e->naddr);
    p = uleb_at(p, e->nsize);
  }
  M.pos = (size_t)(p - M.opt.buf);
  M.unflushed++;
}

void ljp__cap_mem_out_free(void)
{
  free(M.pkeys);
  free(M.pvals);
  free(M.ckeys);
  free(M.traces);
  M.pkeys = M.pvals = M.ckeys = NULL;
  M.traces = NULL;
  M.pcap = M.pcount = M.ccap = M.ccount = M.ntraces = 0;
  M.last_pt = M.last_pval = M.last_cf = 0;
}
