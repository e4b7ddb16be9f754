/*
 * dec_ljp.c — the sysprof sample stream (FORMATS.md §5), ljp 1, 2 and x1:
 *
 *   record       := header(1..3) stack-lua stack-host   guest sample
 *                 | header(0,4..8) stack-host            host sample
 *                 | header(9) traceno proto line         trace sample
 *                 | symbol event                         (v1: 0x0A C symbol;
 *                                     v2: 0x0A proto, 0x0B C symbol, 0x0C trace)
 *   stack-lua    := (0x01 proto line | 0x02 addr | 0x03 ffid)* 0x80
 *   stack-host   := addr:ULEB* 0x00      (the terminator is a ULEB128 zero)
 *
 * ljp x1 (§5.5) has one sample grammar for every vmstate:
 *
 *   sample-x1    := header(0..9) dt-ns coro flags
 *                   [traceno proto line  (header 9 only)] stack-lua stack-host
 *
 * The header is a whole-byte enum, not a bit field (T2).
 */
#include "internal.h"

#include <stdlib.h>

static int grow_frames(ljp_reader *r, ljp_frame **buf, size_t *cap,
                       size_t n, uint64_t off, const char *what) {
  if (n >= r->lim.max_frames)
    return ljp__reader_fail(r, LJP_E_LIMIT, off,
                            "%s deeper than %llu frames (the limit)", what,
                            (unsigned long long)r->lim.max_frames);
  size_t ncap = *cap ? *cap * 2 : 64;
  /* Never past the limit, so the limit is exact: a stack of max_frames
   * frames is read, one more frame fails. */
  if (ncap > r->lim.max_frames)
    ncap = (size_t)r->lim.max_frames;
  ljp_frame *nb = realloc(*buf, ncap * sizeof(*nb));
  if (!nb)
    return ljp__reader_fail(r, LJP_E_NOMEM, off, "out of memory");
  *buf = nb;
  *cap = ncap;
  return LJP_OK;
}

/* Parses the Lua stack into r->lua (kind, value, line only). */
static int lua_stack(ljp_reader *r, cursor *c, size_t *count) {
  size_t n = 0;
  for (;;) {
    uint64_t off = cur_off(c);
    if (c->p >= c->end) {
      r->need_off = off;
      r->need_what = "Lua stack frame header";
      return PARSE_NEED;
    }
    uint8_t fh = *c->p++;
    if (fh == 0x80)
      break;
    if (n == r->lua_cap) {
      int rc = grow_frames(r, &r->lua, &r->lua_cap, n, off, "Lua stack");
      if (rc)
        return rc;
    }
    ljp_frame *f = &r->lua[n];
    f->line = 0;
    switch (fh) {
    case 0x01:
      f->kind = LJP_FRAME_LUA;
      GET_ULEB(r, c, f->value, "ULEB128 proto address in Lua stack");
      GET_ULEB(r, c, f->line, "ULEB128 line in Lua stack");
      break;
    case 0x02:
      f->kind = LJP_FRAME_CFUNC;
      GET_ULEB(r, c, f->value, "ULEB128 C function address in Lua stack");
      break;
    case 0x03:
      f->kind = LJP_FRAME_FFUNC;
      GET_ULEB(r, c, f->value, "ULEB128 fast function id in Lua stack");
      break;
    default:
      return ljp__reader_fail(
          r, LJP_E_MALFORMED, off,
          "Lua stack frame header 0x%02x (expected 0x01, 0x02, "
          "0x03 or the 0x80 end)",
          fh);
    }
    n++;
  }
  *count = n;
  return LJP_OK;
}

/* Parses the host stack into r->host (values only). */
static int host_stack(ljp_reader *r, cursor *c, size_t *count) {
  size_t n = 0;
  for (;;) {
    uint64_t off = cur_off(c), a;
    GET_ULEB(r, c, a, "ULEB128 in host stack");
    if (a == 0)
      break;
    if (n == r->host_cap) {
      int rc = grow_frames(r, &r->host, &r->host_cap, n, off, "host stack");
      if (rc)
        return rc;
    }
    ljp_frame *f = &r->host[n++];
    f->kind = LJP_FRAME_HOST;
    f->value = a;
    f->line = 0;
  }
  *count = n;
  return LJP_OK;
}

static void swap_frames(ljp_frame **a, size_t *acap, ljp_frame **b,
                        size_t *bcap) {
  ljp_frame *t = *a;
  size_t tc = *acap;
  *a = *b;
  *acap = *bcap;
  *b = t;
  *bcap = tc;
}

static void resolve_frame(ljp_reader *r, ljp_frame *f) {
  f->sym = f->proto = NULL;
  f->mcode = 0;
  switch (f->kind) {
  case LJP_FRAME_LUA:
    f->sym = reader_proto(r, f->value);
    if (!f->sym)
      f->proto = ljp__reader_cfloor(r, f->value);
    break;
  case LJP_FRAME_CFUNC:
  case LJP_FRAME_HOST:
    f->sym = ljp__reader_cfloor(r, f->value);
    break;
  default:
    break;
  }
}

/* Resolves n frames (stream order, innermost first) against the table.
 * The outermost frames usually repeat the previous sample's: while they
 * do, and the table has not changed since, their symbols are copied. */
static void resolve_stack(ljp_reader *r, ljp_frame *f, size_t n,
                          const ljp_frame *prev, size_t pn, uint64_t epoch) {
  size_t k = 0;
  if (epoch == r->syms_epoch) {
    while (k < n && k < pn) {
      ljp_frame *a = &f[n - 1 - k];
      const ljp_frame *b = &prev[pn - 1 - k];
      if (a->kind != b->kind || a->value != b->value || a->line != b->line)
        break;
      a->sym = b->sym;
      a->proto = b->proto;
      a->mcode = 0;
      k++;
    }
  }
  for (; k < n; k++)
    resolve_frame(r, &f[n - 1 - k]);
}

/* Decodes and resolves the stacks of a sample (the Lua one when has_lua),
 * then keeps them as the previous ones (the event points at them until the
 * next call). */
static int decode_stacks(ljp_reader *r, cursor *c, ljp_sample *s,
                         int has_lua) {
  int rc;
  if (has_lua && (rc = lua_stack(r, c, &s->lua_count)))
    return rc;
  if ((rc = host_stack(r, c, &s->host_count)))
    return rc;
  s->lua = r->lua;
  s->host = r->host;
  if (s->lua_count) {
    resolve_stack(r, r->lua, s->lua_count, r->plua, r->plua_n, r->plua_epoch);
    swap_frames(&r->lua, &r->lua_cap, &r->plua, &r->plua_cap);
    r->plua_n = s->lua_count;
    r->plua_epoch = r->syms_epoch;
  }
  if (s->host_count) {
    resolve_stack(r, r->host, s->host_count, r->phost, r->phost_n,
                  r->phost_epoch);
    swap_frames(&r->host, &r->host_cap, &r->phost, &r->phost_cap);
    r->phost_n = s->host_count;
    r->phost_epoch = r->syms_epoch;
  }
  return LJP_OK;
}

/* An entry resolved against an older prototype table still holds when
 * none of its own addresses changed; then it is current again. */
static int memo_valid(const ljp_reader *r, recmemo_ent *e) {
  if (e->stamp.cgen != r->syms_gen)
    return 0;
  if (e->stamp.lua == r->lua_epoch)
    return 1;
  size_t nd = ljp__recmemo_deps(e);
  if (nd == RECMEMO_MANY)
    return 0;
  for (size_t i = 0; i < nd; i++)
    if (symtab_proto(&r->syms, e->deps[i].addr) != e->deps[i].sym)
      return 0;
  e->stamp.lua = r->lua_epoch;
  return 1;
}

static uint64_t memo_store(ljp_reader *r, const uint8_t *p, size_t len,
                       int has_lua, const ljp_sample *s) {
  recmemo_stamp st = {r->syms_gen, r->lua_epoch};
  return ljp__recmemo_store(r->memo, p, len, has_lua, s->lua, s->lua_count,
                            s->host, s->host_count, &st);
}

static int ljp_symtab_event(ljp_reader *r, cursor *c, uint8_t h,
                            uint64_t off) {
  ljp_symbol d;
  int rc;
  if (r->ev_version == 1 && h == 0x0A)
    rc = ljp__dec_sym_cfunc(r, c, &d);
  else if (r->ev_version >= 2 && h == 0x0A)
    rc = ljp__dec_sym_lfunc(r, c, &d);
  else if (r->ev_version >= 2 && h == 0x0B)
    rc = ljp__dec_sym_cfunc(r, c, &d);
  else if (r->ev_version >= 2 && h == 0x0C)
    rc = ljp__dec_sym_trace(r, c, &d, 0);
  else
    return ljp__reader_fail(r, LJP_E_MALFORMED, off,
                            "sysprof symbol event 0x%02x does not exist in ljp "
                            "version %u",
                            h, r->ev_version);
  if (rc)
    return rc;
  return ljp__reader_define(r, &d, 0, h, off);
}

/* x1's object event (FORMATS.md §5.5): where a file is mapped. */
static int object_event(ljp_reader *r, cursor *c, uint64_t off) {
  ljp_symbol d;
  const uint8_t *path, *id;
  uint64_t path_len, id_len;
  memset(&d, 0, sizeof(d));
  d.kind = LJP_SYM_OBJECT;
  GET_ULEB(r, c, d.addr, "ULEB128 start address of an object");
  GET_ULEB(r, c, d.size, "ULEB128 size of an object");
  GET_ULEB(r, c, d.offset, "ULEB128 file offset of an object");
  int rc = ljp__reader_string(r, c, "path of an object", &path, &path_len);
  if (rc)
    return rc;
  rc = ljp__reader_string(r, c, "build-id of an object", &id, &id_len);
  if (rc)
    return rc;
  if (d.size == 0)
    return ljp__reader_fail(r, LJP_E_MALFORMED, off,
                            "object event with size 0 (expected a mapped "
                            "range)");
  d.name = (const char *)path;
  d.name_len = (size_t)path_len;
  d.build_id = (const char *)id;
  d.build_id_len = (size_t)id_len;
  ljp_status err = LJP_OK;
  const ljp_symbol *s = ljp__symtab_object(&r->syms, &d, &err);
  if (!s)
    return err == LJP_E_LIMIT
               ? ljp__reader_fail(r, err, off,
                                  "more than %llu symbol definitions (the "
                                  "limit)",
                                  (unsigned long long)r->lim.max_symbols)
               : ljp__reader_fail(r, LJP_E_NOMEM, off, "out of memory");
  r->ev.type = LJP_EV_SYMBOL;
  r->ev.u.symbol.sym = s;
  r->ev.u.symbol.initial = 0;
  r->ev.u.symbol.duplicate = 0;
  r->ev.u.symbol.header = 0x0D;
  return LJP_OK;
}

int ljp__dec_ljp_record(ljp_reader *r, cursor *c) {
  uint64_t off = cur_off(c);
  if (c->p >= c->end) {
    r->need_off = off;
    r->need_what = "sysprof record header";
    return PARSE_NEED;
  }
  uint8_t h = *c->p++;
  if (h == 0x80) {
    r->ev.type = LJP_EV_EPILOGUE;
    r->state = RS_TAIL;
    r->complete = 1;
    return LJP_OK;
  }
  if (h >= 0x0A && h <= 0x0C)
    return ljp_symtab_event(r, c, h, off);
  if (h == 0x0D && r->ev_version == LJP_LJP_VERSION_X1)
    return object_event(r, c, off);
  if (h > 0x09)
    return ljp__reader_fail(r, LJP_E_MALFORMED, off,
                            "sysprof record header 0x%02x (expected a vmstate "
                            "0x00-0x09, a symbol event 0x0A-0x0C or the 0x80 "
                            "epilogue)",
                            h);
  ljp_sample *s = &r->ev.u.sample;
  s->vmstate = h;
  s->lua = r->lua;
  s->host = r->host;
  s->lua_count = s->host_count = 0;
  s->trace.kind = LJP_FRAME_NONE;
  s->trace.sym = s->trace.proto = NULL;
  s->trace.value = s->trace.line = s->trace.mcode = 0;
  s->time_ns = s->coro = 0;
  s->flags = 0;
  s->has_time = 0;
  int rc;
  int x1 = r->ev_version == LJP_LJP_VERSION_X1;
  uint64_t dt = 0, coro = 0, flags = 0;
  if (x1) {
    GET_ULEB(r, c, dt, "ULEB128 time delta of an x1 sample");
    GET_ULEB(r, c, coro, "ULEB128 coroutine id of an x1 sample");
    GET_ULEB(r, c, flags, "ULEB128 flags of an x1 sample");
  }
  if (h == LJP_VMST_TRACE) {
    uint64_t no, proto, line;
    GET_ULEB(r, c, no, "ULEB128 trace number of a trace sample");
    GET_ULEB(r, c, proto, "ULEB128 start proto of a trace sample");
    GET_ULEB(r, c, line, "ULEB128 line of a trace sample");
    ljp__reader_trace_frame(r, &s->trace, no, proto, line);
  }
  /* ljp 1 and 2 trace samples end here; x1 samples carry both stacks
   * whatever the state. */
  r->stack_token = 0;
  if (h != LJP_VMST_TRACE || x1) {
    int has_lua = x1 || (h >= LJP_VMST_LFUNC && h <= LJP_VMST_CFUNC);
    const uint8_t *stk = c->p;
    recmemo_ent *e =
        r->memo
            ? ljp__recmemo_find(r->memo, stk, (size_t)(c->end - stk), has_lua)
            : NULL;
    if (e && memo_valid(r, e)) {
      /* These bytes were decoded before, against the same symbols. */
      s->lua = e->frames;
      s->lua_count = e->nlua;
      s->host = e->frames + e->nlua;
      s->host_count = e->nhost;
      c->p = stk + e->len;
      r->stack_token = e->serial;
    } else if ((rc = decode_stacks(r, c, s, has_lua))) {
      return rc;
    } else {
      if (!r->memo)
        r->memo = ljp__recmemo_new(); /* none: every record is decoded */
      r->stack_token = 0;
      if (r->memo)
        r->stack_token = memo_store(r, stk, (size_t)(c->p - stk), has_lua, s);
    }
  }

  if (x1) {
    /* The record is complete: only now may the stream clock move.  A clock
     * that would pass 2^64-1 ns (584 years) stays there rather than wrap. */
    r->time_ns = dt > UINT64_MAX - r->time_ns ? UINT64_MAX : r->time_ns + dt;
    s->time_ns = r->time_ns;
    s->coro = coro;
    /* Reserved bits above bit 31 do not fit the field; readers ignore
     * reserved bits anyway. */
    s->flags = (uint32_t)flags;
    s->has_time = 1;
    if (flags & LJP_SAMPLE_LUA_INCOMPLETE)
      r->cnt.lua_incomplete++;
    if (flags & LJP_SAMPLE_HOST_INCOMPLETE)
      r->cnt.host_incomplete++;
    if (coro > r->cnt.max_coro)
      r->cnt.max_coro = coro;
  }
  r->ev.type = LJP_EV_SAMPLE;
  r->cnt.samples++;
  r->cnt.vmstate[h]++;
  if (s->lua_count > r->cnt.max_lua_depth)
    r->cnt.max_lua_depth = s->lua_count;
  if (s->host_count > r->cnt.max_host_depth)
    r->cnt.max_host_depth = s->host_count;
  return LJP_OK;
}
