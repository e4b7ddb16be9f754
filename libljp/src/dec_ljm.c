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

/* ---- the fast path ----
 *
 * Memprof events are short (~15 bytes) and nothing repeats from one to
 * the next, so decoding is bound by the chain of field ends: each field
 * starts where the previous one ended, and reading the length from the
 * bytes (cur_uleb_w) puts a load, a count of trailing zeros and an add
 * on that chain for every field.  But field lengths are predictable by
 * kind: an address (prototype, C function, block, machine code) is a
 * user-space pointer of 47 bits, seven bytes, and a size, line or trace
 * number is one or two bytes.  So an address is checked against the
 * seven-byte pattern by a branch, which the CPU predicts and does not
 * wait for, and a small number's length is its first byte's high bit
 * (one load and a shift on the chain).  Anything else (longer fields,
 * symbol events, the epilogue, the last bytes of the input) is left to
 * the decoder below, which then reads the record from its first byte as
 * if this had not run. */
#if defined(__GNUC__) && defined(__BYTE_ORDER__) &&                          \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define LJM_FAST 1

/* Bytes the fast path may read past an event's first byte: six fields of
 * at most ten bytes, each read eight bytes at a time. */
enum { LJM_FAST_ROOM = 80 };

/* Any ULEB128 at p; NULL when it is not a valid one. */
static const uint8_t *fast_any(const uint8_t *p, const uint8_t *end,
                               uint64_t *v) {
  cursor t;
  t.p = t.start = p;
  t.end = end;
  t.base = 0;
  return cur_uleb(&t, v) == CUR_OK ? t.p : NULL;
}

/* A ULEB128 expected to be seven bytes long (an address). */
static inline const uint8_t *fast_addr(const uint8_t *p, const uint8_t *end,
                                       uint64_t *v) {
  uint64_t x;
  memcpy(&x, p, 8);
  if (LJP_LIKELY((x & 0x0080808080808080ULL) == 0x0000808080808080ULL)) {
    x &= 0x007f7f7f7f7f7f7fULL;
    x = (x & 0x007f007f007f007fULL) | ((x & 0x7f007f007f007f00ULL) >> 1);
    x = (x & 0x00003fff00003fffULL) | ((x & 0x3fff00003fff0000ULL) >> 2);
    x = (x & 0x000000000fffffffULL) | ((x & 0x0fffffff00000000ULL) >> 4);
    *v = x;
    return p + 7;
  }
  return fast_any(p, end, v);
}

/* A ULEB128 expected to be one or two bytes long (size, line, trace). */
static inline const uint8_t *fast_small(const uint8_t *p, const uint8_t *end,
                                        uint64_t *v) {
  unsigned b0 = p[0], b1 = p[1];
  if (LJP_LIKELY(!(b0 & b1 & 0x80))) {
    unsigned two = b0 >> 7; /* b1 ends the number when two is 1 */
    *v = (b0 & 0x7fu) | ((uint64_t)(b1 & (0u - two)) << 7);
    return p + 1 + two;
  }
  return fast_any(p, end, v);
}

/* A block: an address expected in seven bytes and a size in one or two.
 * The size's first byte is the top byte of the word the address is read
 * from, so the block's end is one load after its start. */
static inline const uint8_t *fast_block(const uint8_t *p, const uint8_t *end,
                                        uint64_t *a, uint64_t *sz) {
  uint64_t x;
  memcpy(&x, p, 8);
  unsigned b0 = (unsigned)(x >> 56), b1 = p[8];
  if (LJP_LIKELY((x & 0x0080808080808080ULL) == 0x0000808080808080ULL &&
                 !(b0 & b1 & 0x80))) {
    x &= 0x007f7f7f7f7f7f7fULL;
    x = (x & 0x007f007f007f007fULL) | ((x & 0x7f007f007f007f00ULL) >> 1);
    x = (x & 0x00003fff00003fffULL) | ((x & 0x3fff00003fff0000ULL) >> 2);
    x = (x & 0x000000000fffffffULL) | ((x & 0x0fffffff00000000ULL) >> 4);
    *a = x;
    unsigned two = b0 >> 7;
    *sz = (b0 & 0x7fu) | ((uint64_t)(b1 & (0u - two)) << 7);
    return p + 8 + two;
  }
  if (!(p = fast_addr(p, end, a)))
    return NULL;
  return fast_small(p, end, sz);
}

/* ---- allocation sites ----
 *
 * Most events repeat a site: the same source and location bytes, which
 * resolve to the same frame as long as the symbols that resolution reads
 * stay as they are.  So the header (kind bits cleared) and the location
 * bytes, read as two words and cut to the location's predicted length,
 * are the key of a direct-mapped cache of resolved frames: a hit neither
 * decodes the location nor branches on the source (which varies from
 * event to event and so is mispredicted), and resolves with one probe.
 *
 * The predicted length: the header, then an address of seven bytes and a
 * line of one or two (LFUNC), an address (CFUNC), a trace number of one or
 * two bytes and, in streams that carry it, a machine-code address (TRACE).
 * A site is stored only when the decoder below read exactly that many
 * bytes, so equal keys are locations read the same way.  The length
 * depends on bytes inside the key alone, so equal keys have equal
 * lengths. */
/* Header and location lengths by source (byte k: source k), with the
 * small field's first byte ending it; without and with machine code. */
#define LJM_LENS(trace) ((uint64_t)(trace) << 32 | 8u << 24 | 9u << 16 | 1u << 8)
static const uint64_t ljm_lens[2] = {LJM_LENS(2), LJM_LENS(9)};

/* Bytes 0..7 and 8..15 of a key of n bytes (n <= 10). */
static const uint64_t ljm_mask0[16] = {
    0, 0xff, 0xffff, 0xffffff, 0xffffffffULL, 0xffffffffffULL,
    0xffffffffffffULL, 0xffffffffffffffULL, ~0ULL, ~0ULL, ~0ULL, ~0ULL,
    ~0ULL, ~0ULL, ~0ULL, ~0ULL};
static const uint64_t ljm_mask1[16] = {0, 0, 0, 0, 0, 0, 0, 0,
                                       0, 0xff, 0xffff, 0, 0, 0, 0, 0};

/* What a site's resolution depends on, by source.  LFUNC: the prototype
 * at its address (that address's bucket of prototype generations, and
 * ljm_rb_gen: a failed record's aliases taken back) and the C symbols
 * (syms_gen: the floor of an unknown prototype).  CFUNC: the C symbols.
 * TRACE: the trace number's bucket of trace generations, and any
 * prototype (pc_gen: its start prototype).  Every definition that
 * changes what an address or number resolves to bumps these;
 * generations only grow, so the sum of a site's changes whenever one of
 * them does.  (48 bits of it are kept: each bump takes a record of the
 * input.) */
static const uint64_t ljm_dep_c[8] = {0, 0, ~0ULL, ~0ULL, 0, 0, 0, 0};
static const uint64_t ljm_dep_pc[8] = {0, 0, 0, 0, ~0ULL, 0, 0, 0};
static const uint64_t ljm_dep_rb[8] = {0, 0, ~0ULL, 0, 0, 0, 0, 0};
static const uint8_t ljm_dep_row[8] = {0, 0, LJM_GEN_PROTO, 0, LJM_GEN_TRACE,
                                       0, 0, 0};

void ljp__dec_ljm_rebase(ljp_reader *r) {
  for (unsigned src = 0; src < 8; src++) {
    r->ljm_base[src] = (r->syms_gen & ljm_dep_c[src]) +
                       (r->pc_gen & ljm_dep_pc[src]) +
                       (r->ljm_rb_gen & ljm_dep_rb[src]);
    r->ljm_row[src] = r->ljm_gen[ljm_dep_row[src]];
  }
}

/* The stamp of a site of source src whose location value is v. */
static inline uint64_t ljm_stamp(const ljp_reader *r, unsigned src,
                                 uint64_t v) {
  return r->ljm_base[src] + r->ljm_row[src][ljm_gen_bucket(v)];
}

/* The site of the allocation event at p (LJM_FAST_ROOM bytes readable):
 * its slot, key and length (header and location).  0 when p holds no
 * event this path takes. */
#define LJM_EVENTS 0xEEEE0u

typedef struct ljm_probe {
  ljm_site *site;
  uint64_t k0, k1;
  unsigned len, ev, src;
} ljm_probe;

static inline int ljm_probe_at(const ljp_reader *r, const uint8_t *p,
                               ljm_probe *q) {
  uint64_t k0, k1;
  memcpy(&k0, p, 8);
  memcpy(&k1, p + 8, 8);
  unsigned h = (unsigned)k0 & 0xff;
  unsigned src = h >> 2;
  q->ev = h & 3;
  q->src = src;
  /* No flag, no spare bits, a source 1..4 and not a symbol event: bit h
   * of LJM_EVENTS (h 0x05-0x07, 0x09-0x0B, 0x0D-0x0F, 0x11-0x13). */
  if (LJP_UNLIKELY(!(h < 32 && (LJM_EVENTS >> h & 1))))
    return 0;
  /* The next event starts where this one ends, so its length is on the
   * chain from event to event: taken from the bytes already loaded and
   * from constants, by shifts (no table load).  Whether the small field
   * takes two bytes is the high bit of byte 8 (LFUNC: after the address)
   * or byte 1 (TRACE: the trace number), moved to bit src. */
  unsigned two = (unsigned)(((k1 >> 7 & 1) << LJP_SRC_LFUNC |
                             (k0 >> 15 & 1) << LJP_SRC_TRACE) >>
                            src) &
                 1;
  unsigned len =
      (unsigned)(ljm_lens[r->loc_mcode] >> (8 * src) & 0xff) + two;
  k0 &= ljm_mask0[len] & ~(uint64_t)3;
  k1 &= ljm_mask1[len];
  q->k0 = k0;
  q->k1 = k1;
  q->len = len;
  q->site = &r->ljm_sites[((k0 ^ k1) * 0xff51afd7ed558ccdULL) >> 32 &
                          (LJM_SITES - 1)];
  return 1;
}

/* The site's value picks the buckets its stamp sums (a slot of another
 * key fails on k0 whatever it sums). */
static inline int ljm_hit(const ljp_reader *r, const ljm_probe *q) {
  const ljm_site *s = q->site;
  return s->k0 == q->k0 &&
         s->tag == (ljm_stamp(r, q->src, s->loc.value) << 16 | q->k1);
}

/* Reads the blocks of the event at p (its location done) into r->ev and
 * counts the event; the end of the event, or NULL when a field is not one
 * this path takes. */
static inline const uint8_t *ljm_blocks(ljp_reader *r, const uint8_t *p,
                                        const uint8_t *end, unsigned ev,
                                        unsigned src) {
  ljp_mem_event *m = &r->ev.u.mem;
  /* Every event has one block (FREE: the old one, ALLOC: the new one),
   * REALLOC two; which is which is chosen by masks: ALLOC and FREE are
   * equally common and a branch between them would mispredict. */
  uint64_t xa, xs, ya = 0, ys = 0;
  if (!(p = fast_block(p, end, &xa, &xs)))
    return NULL;
  if (ev == LJP_MEM_REALLOC && !(p = fast_block(p, end, &ya, &ys)))
    return NULL;
  uint64_t is_alloc = 0 - (uint64_t)(ev == LJP_MEM_ALLOC);
  m->kind = (ljp_mem_kind)ev;
  m->source = (ljp_source)src;
  m->mcode = m->loc.mcode;
  m->has_mcode = (src == LJP_SRC_TRACE) & r->loc_mcode;
  m->old_addr = xa & ~is_alloc;
  m->old_size = xs & ~is_alloc;
  m->new_addr = (xa & is_alloc) | (ya & ~is_alloc);
  m->new_size = (xs & is_alloc) | (ys & ~is_alloc);
  r->ev.type = LJP_EV_MEMORY;
  r->cnt.mem_events++;
  r->cnt.mem_kind[ev]++;
  r->cnt.mem_source[src]++;
  return p;
}

/* Decodes one allocation event at c->p (ljm 2 or 3, LJM_FAST_ROOM bytes
 * readable); 0 when it is not one this path takes. */
static inline int ljm_fast(ljp_reader *r, cursor *c) {
  const uint8_t *p = c->p, *end = c->end;
  ljm_probe q;
  if (!ljm_probe_at(r, p, &q))
    return 0;
  ljp_frame *f = &r->ev.u.mem.loc;
  if (LJP_LIKELY(ljm_hit(r, &q))) {
    *f = q.site->loc;
    p += q.len;
  } else {
    p++;
    uint64_t a = 0;
    /* The branch on the source: each case reads its location and resolves
     * it (against the table as it stands now, T10).  Resolving before the
     * blocks are read is harmless when they then fail: the decoder below
     * resolves the same way, and the reader takes back aliases numbered
     * by a record that fails (and bumps pc_gen, so the site stored here
     * is not used again). */
    switch (q.src) {
    case LJP_SRC_LFUNC: {
      uint64_t line;
      if (!(p = fast_addr(p, end, &a)) || !(p = fast_small(p, end, &line)))
        return 0;
      f->kind = LJP_FRAME_LUA;
      f->line = line;
      f->sym = reader_proto_or_miss(r, a);
      f->proto = f->sym ? NULL : ljp__reader_cfloor(r, a);
      f->mcode = 0;
      break;
    }
    case LJP_SRC_CFUNC:
      if (!(p = fast_addr(p, end, &a)))
        return 0;
      f->kind = LJP_FRAME_CFUNC;
      f->line = f->mcode = 0;
      f->sym = ljp__reader_cfloor(r, a);
      f->proto = NULL;
      break;
    case LJP_SRC_TRACE: {
      uint64_t mcode = 0;
      if (!(p = fast_small(p, end, &a)))
        return 0;
      if (r->loc_mcode && !(p = fast_addr(p, end, &mcode)))
        return 0;
      ljp__reader_trace_frame(r, f, a, 0, 0);
      f->mcode = mcode;
      break;
    }
    default:
      f->kind = LJP_FRAME_NONE;
      f->line = f->mcode = 0;
      f->sym = f->proto = NULL;
      break;
    }
    f->value = a;
    if (p == c->p + q.len) {
      q.site->k0 = q.k0;
      q.site->tag = ljm_stamp(r, q.src, a) << 16 | q.k1;
      q.site->loc = *f;
    }
  }
  if (!(p = ljm_blocks(r, p, end, q.ev, q.src)))
    return 0;
  c->p = p;
  return 1;
}
#endif

ljp_status ljp__dec_ljm_next(ljp_reader *r, const ljp_event **ev) {
#ifdef LJM_FAST
  uint64_t pos = r->pos, have = r->in.base + r->in.len - pos;
  const uint8_t *p = r->in.data + (size_t)(pos - r->in.base), *e;
  ljm_probe q;
  if (LJP_LIKELY(have >= LJM_FAST_ROOM) && ljm_probe_at(r, p, &q) &&
      LJP_LIKELY(ljm_hit(r, &q))) {
    r->ev.u.mem.loc = q.site->loc;
    if (LJP_LIKELY((e = ljm_blocks(r, p + q.len, p + have, q.ev, q.src)))) {
      /* What ljp__reader_next_slow does after a record, but for what
       * cannot concern it (errors, aliases, the end of the input). */
      if (LJP_UNLIKELY(pos >= r->ljm_release_at)) {
        ljp__input_release(&r->in, pos);
        r->ljm_release_at = r->in.map ? r->in.map_dropped + INPUT_RELEASE_STEP
                                      : UINT64_MAX;
      }
      r->ev.offset = pos;
      r->ev.raw = p;
      r->ev.raw_len = (size_t)(e - p);
      r->pos = pos + (uint64_t)(e - p);
      *ev = &r->ev;
      return LJP_OK;
    }
  }
#endif
  return ljp__reader_next_slow(r, ev);
}

int ljp__dec_ljm_record(ljp_reader *r, cursor *c) {
#ifdef LJM_FAST
  if (LJP_LIKELY(c->end - c->p >= LJM_FAST_ROOM && r->ev_version >= 2) &&
      ljm_fast(r, c))
    return LJP_OK;
#endif
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
