/*
 * dec_ljm.c — the memprof event stream (FORMATS.md §4), ljm 1, 2 and 3:
 *
 *   event   := header loc? fields       header [FUUSSSEE] (v1: [FUUUSSEE])
 *   EE      := 0 symtab (v3) | 1 alloc | 2 free | 3 realloc
 *   SSS     := 1 internal | 2 lfunc | 3 cfunc | 4 trace (v2+)
 *   loc     := lfunc: proto line | cfunc: addr | trace: traceno [mcode]
 *   alloc   := naddr nsize;  free := oaddr osize;
 *   realloc := oaddr osize naddr nsize
 *   symtab  := 0x08 lfunc-sym | 0x0C cfunc-sym | 0x10 trace-sym
 */
#include "internal.h"

static int ljm_symbol(ljp_reader *r, cursor *c, uint8_t h, uint64_t off) {
  ljp_symbol d;
  int rc;
  switch (h) {
  case 0x08:
    rc = ljp__dec_sym_lfunc(r, c, &d);
    break;
  case 0x0C:
    rc = ljp__dec_sym_cfunc(r, c, &d);
    break;
  case 0x10:
    rc = ljp__dec_sym_trace(r, c, &d, 0);
    break;
  default:
    return ljp__reader_fail(
        r, LJP_E_MALFORMED, off,
        "unknown memprof symbol event 0x%02x (expected 0x08, "
        "0x0C or 0x10)",
        h);
  }
  if (rc)
    return rc;
  return ljp__reader_define(r, &d, 0, h, off);
}

int ljp__dec_ljm_record(ljp_reader *r, cursor *c) {
  uint64_t off = cur_off(c);
  if (c->p >= c->end) {
    r->need_off = off;
    r->need_what = "memprof event header";
    return PARSE_NEED;
  }
  uint8_t h = *c->p++;
  unsigned v = r->ev_version;
  if (h == 0x80) {
    r->ev.type = LJP_EV_EPILOGUE;
    r->state = RS_TAIL;
    r->complete = 1;
    return LJP_OK;
  }
  unsigned ev = h & 3;
  unsigned src = v == 1 ? (h >> 2) & 3 : (h >> 2) & 7;
  unsigned spare = v == 1 ? (h & 0x70) : (h & 0x60);
  if ((h & 0x80) || spare || src > 4)
    return ljp__reader_fail(r, LJP_E_MALFORMED, off,
                            "memprof event header 0x%02x is not valid in ljm "
                            "version %u",
                            h, v);
  if (ev == 0) {
    if (v < 3)
      return ljp__reader_fail(r, LJP_E_MALFORMED, off,
                              "symbol event 0x%02x in ljm version %u (symbol "
                              "events exist from version 3)",
                              h, v);
    return ljm_symbol(r, c, h, off);
  }
  if (src == 0) {
    /* 0x01 is how the producer's last-resort C-symbol entry (an object's
     * path at its load base) comes out mid-stream (T14).  No event uses
     * that byte, so read it as the C symbol it is. */
    if (h == 0x01) {
      ljp_symbol d;
      int rc = ljp__dec_sym_cfunc(r, c, &d);
      if (rc)
        return rc;
      return ljp__reader_define(r, &d, 0, h, off);
    }
    return ljp__reader_fail(
        r, LJP_E_MALFORMED, off,
        "memprof event header 0x%02x has no allocation source", h);
  }
  ljp_mem_event *m = &r->ev.u.mem;
  m->kind = (ljp_mem_kind)ev;
  m->source = (ljp_source)src;
  m->loc.kind = LJP_FRAME_NONE;
  m->loc.value = m->loc.line = m->loc.mcode = 0;
  m->loc.sym = m->loc.proto = NULL;
  m->mcode = 0;
  m->has_mcode = 0;
  m->old_addr = m->old_size = m->new_addr = m->new_size = 0;
  uint64_t a, b;
  switch (src) {
  case LJP_SRC_LFUNC:
    GET_ULEB(r, c, a, "ULEB128 proto address of a memprof event");
    GET_ULEB(r, c, b, "ULEB128 line of a memprof event");
    break;
  case LJP_SRC_CFUNC:
    GET_ULEB(r, c, a, "ULEB128 C function address of a memprof event");
    b = 0;
    break;
  case LJP_SRC_TRACE:
    GET_ULEB(r, c, a, "ULEB128 trace number of a memprof event");
    b = 0;
    if (r->loc_mcode) {
      GET_ULEB(r, c, m->mcode, "ULEB128 trace machine-code address of a "
                               "memprof event");
      m->has_mcode = 1;
    }
    break;
  default:
    a = b = 0;
    break;
  }
  if (ev != LJP_MEM_ALLOC) {
    GET_ULEB_W(r, c, m->old_addr, "ULEB128 old block address of a memprof event");
    GET_ULEB_W(r, c, m->old_size, "ULEB128 old block size of a memprof event");
  }
  if (ev != LJP_MEM_FREE) {
    GET_ULEB_W(r, c, m->new_addr, "ULEB128 new block address of a memprof event");
    GET_ULEB_W(r, c, m->new_size, "ULEB128 new block size of a memprof event");
  }
  /* The whole record is in: resolve its location against the table as it
   * stands now (T10). */
  ljp_frame *f = &m->loc;
  switch (src) {
  case LJP_SRC_LFUNC:
    f->kind = LJP_FRAME_LUA;
    f->value = a;
    f->line = b;
    f->sym = reader_proto(r, a);
    if (!f->sym)
      f->proto = ljp__reader_cfloor(r, a);
    break;
  case LJP_SRC_CFUNC:
    f->kind = LJP_FRAME_CFUNC;
    f->value = a;
    f->sym = ljp__reader_cfloor(r, a);
    break;
  case LJP_SRC_TRACE:
    ljp__reader_trace_frame(r, f, a, 0, 0);
    f->mcode = m->mcode;
    break;
  default:
    break;
  }
  r->ev.type = LJP_EV_MEMORY;
  r->cnt.mem_events++;
  r->cnt.mem_kind[ev]++;
  r->cnt.mem_source[src]++;
  return LJP_OK;
}
