/*
 * reader.c — the pull reader: opening inputs, the section state machine
 * (ljs prologue, ljs entries, event prologue, events, tail), errors, and the
 * queries of ljp.h.  The per-format record grammars live in dec_ljs.c,
 * dec_ljm.c and dec_ljp.c.
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEFAULT_MAX_STRING (64ULL << 20)
#define DEFAULT_MAX_FRAMES (1ULL << 20)
#define DEFAULT_MAX_SYMBOLS (1ULL << 26)
#define HOST_CACHE_SIZE 4096 /* direct-mapped host address -> C symbol */

LJP_API ljp_reader *ljp_reader_new(void) {
  ljp_reader *r = calloc(1, sizeof(*r));
  if (!r)
    return NULL;
  r->in.fd = -1;
  r->flavor_opt = LJP_FLAVOR_AUTO;
  r->lim.max_string = DEFAULT_MAX_STRING;
  r->lim.max_frames = DEFAULT_MAX_FRAMES;
  r->lim.max_symbols = DEFAULT_MAX_SYMBOLS;
  ljp__symtab_init(&r->syms, r->lim.max_symbols);
  return r;
}

LJP_API void ljp_reader_free(ljp_reader *r) {
  if (!r)
    return;
  ljp__input_close(&r->in);
  ljp__symtab_free(&r->syms);
  free(r->lua);
  free(r->host);
  free(r->plua);
  free(r->phost);
  free(r->hc_addr);
  free(r->hc_sym);
  free(r->hc_stamp);
  ljp__recmemo_free(r->memo);
  free(r->pc_addr);
  free(r->pc_sym);
  free(r->pc_stamp);
  free(r->ljm_sites_mem);
  free(r);
}

LJP_API ljp_status ljp_reader_set_limits(ljp_reader *r, const ljp_limits *lim) {
  if (!r || !lim || r->state != RS_NEW)
    return LJP_E_ARG;
  r->lim.max_string = lim->max_string ? lim->max_string : DEFAULT_MAX_STRING;
  r->lim.max_frames = lim->max_frames ? lim->max_frames : DEFAULT_MAX_FRAMES;
  r->lim.max_symbols = lim->max_symbols ? lim->max_symbols : DEFAULT_MAX_SYMBOLS;
  r->syms.max_symbols = r->lim.max_symbols;
  return LJP_OK;
}

LJP_API ljp_status ljp_reader_set_flavor(ljp_reader *r, ljp_flavor flavor) {
  if (!r || r->state != RS_NEW ||
      (flavor > LJP_FLAVOR_OPENRESTY && flavor != LJP_FLAVOR_AUTO))
    return LJP_E_ARG;
  r->flavor_opt = flavor;
  return LJP_OK;
}

ljp_status ljp__reader_fail(ljp_reader *r, ljp_status st, uint64_t off,
                            const char *fmt, ...) {
  char msg[200];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  snprintf(r->err, sizeof(r->err), "offset %llu: %s", (unsigned long long)off,
           msg);
  r->err_off = off;
  r->status = st;
  r->state = RS_ERROR;
  return st;
}

static int cache_init(ljp_reader *r) {
  r->hc_addr = calloc(HOST_CACHE_SIZE, sizeof(*r->hc_addr));
  r->hc_sym = calloc(HOST_CACHE_SIZE, sizeof(*r->hc_sym));
  r->hc_stamp = calloc(HOST_CACHE_SIZE, sizeof(*r->hc_stamp));
  r->syms_gen = 1;
  r->pc_addr = calloc(PROTO_CACHE_SIZE, sizeof(*r->pc_addr));
  r->pc_sym = calloc(PROTO_CACHE_SIZE, sizeof(*r->pc_sym));
  r->pc_stamp = calloc(PROTO_CACHE_SIZE, sizeof(*r->pc_stamp));
  r->pc_gen = 1;
  r->tc_gen = 1;
  ljp__dec_ljm_rebase(r);
  return r->hc_addr && r->hc_sym && r->hc_stamp && r->pc_addr && r->pc_sym &&
                 r->pc_stamp
             ? 0
             : -1;
}

static ljp_status open_common(ljp_reader *r) {
  if (cache_init(r)) {
    r->status = LJP_E_NOMEM;
    r->state = RS_ERROR;
    snprintf(r->err, sizeof(r->err), "out of memory");
    return LJP_E_NOMEM;
  }
  r->state = RS_LJS_PROLOGUE;
  r->pos = 0;
  return LJP_OK;
}

static ljp_status open_errno(ljp_reader *r, const char *what) {
  int e = errno;
  snprintf(r->err, sizeof(r->err), "%s: %s", what, strerror(e));
  r->status = LJP_E_IO;
  r->state = RS_ERROR;
  return LJP_E_IO;
}

LJP_API ljp_status ljp_reader_open_memory(ljp_reader *r, const void *buf,
                                          size_t len) {
  if (!r || r->state != RS_NEW || (!buf && len))
    return LJP_E_ARG;
  r->in.data = buf;
  r->in.len = len;
  r->in.eof = 1;
  return open_common(r);
}

LJP_API ljp_status ljp_reader_open_fd(ljp_reader *r, int fd) {
  if (!r || r->state != RS_NEW || fd < 0)
    return LJP_E_ARG;
  r->in.fd = fd;
  return open_common(r);
}

LJP_API ljp_status ljp_reader_open_path(ljp_reader *r, const char *path) {
  if (!r || r->state != RS_NEW || !path)
    return LJP_E_ARG;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return open_errno(r, "cannot open");
  struct stat st;
  if (fstat(fd, &st) < 0) {
    ljp_status s = open_errno(r, "cannot stat");
    close(fd);
    return s;
  }
  if (S_ISDIR(st.st_mode)) {
    close(fd);
    errno = EISDIR;
    return open_errno(r, "cannot read");
  }
  if (S_ISREG(st.st_mode)) {
    if (st.st_size == 0) {
      close(fd);
      return ljp_reader_open_memory(r, "", 0);
    }
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m != MAP_FAILED) {
      close(fd);
      r->in.map = m;
      r->in.map_len = (size_t)st.st_size;
      madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
      return ljp_reader_open_memory(r, m, (size_t)st.st_size);
    }
  }
  /* FIFOs, character devices, and files mmap refuses: read them. */
  ljp_status s = ljp_reader_open_fd(r, fd);
  r->in.own_fd = 1;
  return s;
}

int ljp__reader_field_fail(ljp_reader *r, int cur_rc, uint64_t off,
                           const char *what) {
  if (cur_rc == CUR_NEED) {
    r->need_off = off;
    r->need_what = what;
    return PARSE_NEED;
  }
  return ljp__reader_fail(r, LJP_E_MALFORMED, off,
                          "ULEB128 longer than 10 bytes or above 2^64-1 in %s",
                          what);
}

int ljp__reader_string(ljp_reader *r, cursor *c, const char *what,
                       const uint8_t **s, uint64_t *n) {
  uint64_t off = cur_off(c), len;
  int rc = cur_uleb(c, &len);
  if (rc)
    return ljp__reader_field_fail(r, rc, off, what);
  if (len > r->lim.max_string)
    return ljp__reader_fail(
        r, LJP_E_LIMIT, off, "%s claims %llu bytes, over the limit of %llu",
        what, (unsigned long long)len, (unsigned long long)r->lim.max_string);
  if ((uint64_t)(c->end - c->p) < len) {
    r->need_off = off;
    r->need_what = what;
    return PARSE_NEED;
  }
  *s = c->p;
  *n = len;
  c->p += len;
  return LJP_OK;
}

const ljp_symbol *ljp__reader_cfloor(ljp_reader *r, uint64_t addr) {
  size_t i = (size_t)(ljp_hash64(addr) & (HOST_CACHE_SIZE - 1));
  if (r->hc_stamp[i] == r->syms_gen && r->hc_addr[i] == addr)
    return r->hc_sym[i];
  const ljp_symbol *s = ljp__symtab_cfloor(&r->syms, addr);
  r->hc_addr[i] = addr;
  r->hc_sym[i] = s;
  r->hc_stamp[i] = r->syms_gen;
  return s;
}

int ljp__reader_define(ljp_reader *r, ljp_symbol *def, int initial,
                       uint8_t header, uint64_t off) {
  int dup, redefined;
  ljp_status err = LJP_OK;
  def->initial = initial;
  /* A trace number announced again with another start is a redefinition
   * worth counting; the same start again (the same loop recompiled after
   * jit.flush()) is still a new trace, but not a new name. */
  const ljp_symbol *prev = def->kind == LJP_SYM_TRACE
                               ? symtab_trace(&r->syms, def->traceno)
                               : NULL;
  const ljp_symbol *lprev = def->kind == LJP_SYM_LFUNC
                                ? symtab_proto(&r->syms, def->addr)
                                : NULL;
  const ljp_symbol *s =
      ljp__symtab_define(&r->syms, def, &dup, &redefined, &err);
  if (!s) {
    if (err == LJP_E_LIMIT)
      return ljp__reader_fail(r, err, off,
                              "more than %llu symbol definitions (the limit)",
                              (unsigned long long)r->lim.max_symbols);
    return ljp__reader_fail(r, LJP_E_NOMEM, off, "out of memory");
  }
  if (!dup || redefined) {
    r->syms_epoch++;
    if (def->kind == LJP_SYM_CFUNC)
      r->syms_gen++;
  }
  /* Memoised stacks depend on a prototype only through what its address
   * resolves to. */
  if (def->kind == LJP_SYM_LFUNC && symtab_proto(&r->syms, def->addr) != lprev) {
    r->lua_epoch++;
    r->pc_gen++;
    r->ljm_gen[LJM_GEN_PROTO][ljm_gen_bucket(def->addr)]++;
  }
  if (def->kind == LJP_SYM_TRACE &&
      symtab_trace(&r->syms, def->traceno) != prev) {
    r->tc_gen++;
    r->ljm_gen[LJM_GEN_TRACE][ljm_gen_bucket(def->traceno)]++;
  }
  ljp__dec_ljm_rebase(r);
  if (initial)
    r->cnt.symbols_initial[def->kind]++;
  else
    r->cnt.symbols_midstream[def->kind]++;
  if (dup && !initial)
    r->cnt.symbol_duplicates++;
  if (prev && (prev->addr != def->addr || prev->line != def->line))
    r->cnt.trace_redefinitions++;
  r->ev.type = LJP_EV_SYMBOL;
  r->ev.u.symbol.sym = s;
  r->ev.u.symbol.initial = initial;
  r->ev.u.symbol.duplicate = dup;
  r->ev.u.symbol.header = header;
  return LJP_OK;
}

void ljp__reader_trace_frame(ljp_reader *r, ljp_frame *f, uint64_t traceno,
                             uint64_t proto, uint64_t line) {
  f->kind = LJP_FRAME_TRACE;
  f->value = traceno;
  f->line = line;
  f->mcode = 0;
  size_t i = (size_t)(traceno & (TRACE_CACHE_SIZE - 1));
  if (r->tc_stamp[i] == r->tc_gen && r->tc_no[i] == traceno) {
    f->sym = r->tc_sym[i];
  } else {
    f->sym = symtab_trace(&r->syms, traceno);
    r->tc_no[i] = traceno;
    r->tc_sym[i] = f->sym;
    r->tc_stamp[i] = r->tc_gen;
  }
  f->proto = reader_proto_or_miss(r, f->sym ? f->sym->addr : proto);
}

/* ---- prologues ---- */

static int parse_prologue(ljp_reader *r, cursor *c, const char *expect) {
  uint64_t off = cur_off(c);
  if (c->end - c->p < 7) {
    r->need_off = off;
    r->need_what = expect;
    return PARSE_NEED;
  }
  ljp_prologue *p = &r->ev.u.prologue;
  memcpy(p->magic, c->p, 3);
  p->magic[3] = '\0';
  p->version = c->p[3];
  memcpy(p->reserved, c->p + 4, 3);
  p->interval_ns = 0;
  p->timer = LJP_TIMER_UNKNOWN;
  c->p += 7;
  r->ev.type = LJP_EV_PROLOGUE;
  return LJP_OK;
}

static void printable_magic(const char *m, char out[16]) {
  size_t k = 0;
  for (int i = 0; i < 3; i++) {
    unsigned char ch = (unsigned char)m[i];
    if (ch >= 0x20 && ch < 0x7f && ch != '\\')
      out[k++] = (char)ch;
    else
      k += (size_t)snprintf(out + k, 16 - k, "\\x%02x", ch);
  }
  out[k] = '\0';
}

static int ljs_prologue(ljp_reader *r, cursor *c) {
  int rc = parse_prologue(r, c, "the 'ljs' symbol table prologue");
  if (rc)
    return rc;
  const ljp_prologue *p = &r->ev.u.prologue;
  if (memcmp(p->magic, "\0\0\0", 3) == 0)
    /* Tarantool's profilers truncate their file before anything else, so
     * starting one again with the path of a running one leaves a hole of
     * zeros where the running one had written (FORMATS.md, T21).  (No
     * count of the zeros: the message must not depend on how much of the
     * input a descriptor has delivered.) */
    return ljp__reader_fail(r, LJP_E_UNSUPPORTED, r->pos,
                            "not a LuaJIT profile: it starts with zero bytes "
                            "(starting a profiler again with the same path "
                            "truncates the file a running one writes)");
  if (memcmp(p->magic, "ljs", 3) != 0) {
    char m[16];
    printable_magic(p->magic, m);
    return ljp__reader_fail(
        r, LJP_E_UNSUPPORTED, r->pos,
        "not a LuaJIT profile: magic \"%s\", expected \"ljs\"", m);
  }
  if (p->version < 1 || p->version > 3)
    return ljp__reader_fail(
        r, LJP_E_UNSUPPORTED, r->pos + 3,
        "unsupported ljs version %u; this build reads 1\xe2\x80\x93"
        "3",
        p->version);
  if (p->version == 2) {
    int layout = 0;
    rc = ljp__dec_ljs2_probe_layout(r, c, &layout);
    if (rc)
      return rc;
    r->ljs_layout = layout;
  }
  r->ljs_version = p->version;
  r->state = RS_LJS_BODY;
  return LJP_OK;
}

/* The rest of an ljp x1 prologue (FORMATS.md §5.5): its reserved bytes are
 * flavor:u8 timer:u8 0x00, and the interval follows them. */
static int x1_prologue(ljp_reader *r, cursor *c) {
  ljp_prologue *p = &r->ev.u.prologue;
  uint64_t interval;
  GET_ULEB(r, c, interval, "ULEB128 sampling interval of the ljp x1 prologue");
  p->interval_ns = interval;
  /* A timer this build does not know is still a timer: "unknown". */
  p->timer = p->reserved[1] <= LJP_TIMER_WALL ? (ljp_timer)p->reserved[1]
                                               : LJP_TIMER_UNKNOWN;
  r->interval_ns = p->interval_ns;
  r->timer = p->timer;
  r->time_ns = 0;
  return LJP_OK;
}

static int ev_prologue(ljp_reader *r, cursor *c) {
  int rc = parse_prologue(r, c, "the 'ljm' or 'ljp' event stream prologue");
  if (rc)
    return rc;
  const ljp_prologue *p = &r->ev.u.prologue;
  unsigned maxv;
  if (memcmp(p->magic, "ljm", 3) == 0) {
    r->kind = LJP_KIND_MEMPROF;
    maxv = 3;
  } else if (memcmp(p->magic, "ljp", 3) == 0) {
    r->kind = LJP_KIND_SYSPROF;
    maxv = 2;
  } else {
    char m[16];
    printable_magic(p->magic, m);
    return ljp__reader_fail(
        r, LJP_E_MALFORMED, r->pos,
        "event stream magic \"%s\", expected \"ljm\" or \"ljp\"", m);
  }
  if ((p->version < 1 || p->version > maxv) &&
      !(r->kind == LJP_KIND_SYSPROF && p->version == LJP_LJP_VERSION_X1)) {
    ljp_kind k = r->kind;
    r->kind = LJP_KIND_UNKNOWN;
    return ljp__reader_fail(
        r, LJP_E_UNSUPPORTED, r->pos + 3,
        "unsupported %s version %u; this build reads 1\xe2\x80\x93%u%s",
        k == LJP_KIND_MEMPROF ? "ljm" : "ljp", p->version, maxv,
        k == LJP_KIND_SYSPROF ? " and x1 (0x81)" : "");
  }
  r->ev_version = p->version;
  if (r->ev_version == LJP_LJP_VERSION_X1 && (rc = x1_prologue(r, c)))
    return rc;
  /* Which ljm streams carry the machine-code address in loc-trace: ljm 2
   * always; ljm 3 only in the stage paired with the ljs 2a symtab
   * (FORMATS.md §2.2, rows C and D). */
  if (r->kind == LJP_KIND_MEMPROF)
    r->loc_mcode = p->version == 2 ||
                   (p->version == 3 && r->ljs_version == 2 && r->ljs_layout == 'a');
  /* Aligned so that a site is one cache line; zeroed, so that no slot
   * matches before it is filled (every key has a nonzero header). */
  if (r->kind == LJP_KIND_MEMPROF && !r->ljm_sites) {
    r->ljm_sites_mem = calloc(1, LJM_SITES * sizeof(ljm_site) + 63);
    if (!r->ljm_sites_mem)
      return ljp__reader_fail(r, LJP_E_NOMEM, r->pos, "out of memory");
    r->ljm_sites = (ljm_site *)(void *)((char *)r->ljm_sites_mem +
                                        (-(uintptr_t)r->ljm_sites_mem & 63));
  }
  r->ljm_lane = r->kind == LJP_KIND_MEMPROF && p->version >= 2;
  if (r->ljs_version == 2 && !r->ljs_layout)
    r->ljs_layout = (r->kind == LJP_KIND_MEMPROF && p->version == 3) ? 'b' : 'a';
  if (r->flavor_opt != LJP_FLAVOR_AUTO)
    r->flavor = r->flavor_opt;
  else if (r->kind == LJP_KIND_SYSPROF && p->reserved[0] <= LJP_FLAVOR_OPENRESTY)
    r->flavor = (ljp_flavor)p->reserved[0];
  else
    r->flavor = LJP_FLAVOR_TARANTOOL;
  r->state = RS_EV_BODY;
  return LJP_OK;
}

/* ---- the driver ---- */

static int parse_one(ljp_reader *r, cursor *c) {
  switch (r->state) {
  case RS_LJS_PROLOGUE: return ljs_prologue(r, c);
  case RS_LJS_BODY:
    return ljp__dec_ljs_record(r, c);
  case RS_EV_PROLOGUE: return ev_prologue(r, c);
  case RS_EV_BODY:
    return r->kind == LJP_KIND_MEMPROF ? ljp__dec_ljm_record(r, c)
                                       : ljp__dec_ljp_record(r, c);
  default: return LJP_E_ARG;
  }
}

static ljp_status at_eof(ljp_reader *r) {
  switch (r->state) {
  case RS_LJS_PROLOGUE:
    return ljp__reader_fail(
        r, LJP_E_TRUNCATED, r->pos,
        "empty input, expected the \"ljs\" symbol table prologue");
  case RS_LJS_BODY:
    return ljp__reader_fail(
        r, LJP_E_TRUNCATED, r->pos,
        "input ends inside the symbol table (no final 0x80)");
  case RS_EV_PROLOGUE:
    return ljp__reader_fail(r, LJP_E_TRUNCATED, r->pos,
                            "input ends after the symbol table, expected the "
                            "\"ljm\" or \"ljp\" event stream");
  default:
    return ljp__reader_fail(
        r, LJP_E_TRUNCATED, r->pos,
        "input ends between records, expected the next record "
        "or the 0x80 epilogue (the producer did not stop "
        "cleanly)");
  }
}

LJP_API ljp_status ljp_reader_next(ljp_reader *r, const ljp_event **ev) {
  if (!r || !ev)
    return LJP_E_ARG;
  /* Memprof events: most repeat a cached site, which dec_ljm.c decodes
   * without the checks below (the reader is in the event section, the
   * bytes are in); it comes back to them for anything else. */
  if (LJP_LIKELY(r->ljm_lane && r->state == RS_EV_BODY))
    return ljp__dec_ljm_next(r, ev);
  return ljp__reader_next_slow(r, ev);
}

ljp_status ljp__reader_next_slow(ljp_reader *r, const ljp_event **ev) {
  *ev = NULL;
  if (r->state == RS_ERROR)
    return r->status;
  if (r->state == RS_END)
    return LJP_END;
  if (r->state == RS_NEW)
    return LJP_E_ARG;
  size_t want = 64;
  for (;;) {
    /* Whole inputs (memory, mapped files) have every byte already. */
    long long have = r->in.eof
                         ? (r->in.base + r->in.len > r->pos
                                ? (long long)(r->in.base + r->in.len - r->pos)
                                : 0)
                         : ljp__input_fill(&r->in, r->pos, want);
    if (have < 0) {
      int e = errno;
      if (e == ENOMEM) /* the window could not grow */
        return ljp__reader_fail(r, LJP_E_NOMEM, r->pos, "out of memory");
      return ljp__reader_fail(r, LJP_E_IO, r->pos, "read error: %s",
                              strerror(e));
    }
    if (have == 0 && r->in.eof) {
      if (r->state == RS_TAIL) {
        r->state = RS_END;
        return LJP_END;
      }
      return at_eof(r);
    }
    if (r->state == RS_TAIL)
      return ljp__reader_fail(r, LJP_E_MALFORMED, r->pos,
                              "unexpected bytes after the epilogue");
    cursor c;
    c.start = r->in.data;
    c.base = r->in.base;
    c.p = r->in.data + (size_t)(r->pos - r->in.base);
    c.end = c.p + have;
    r->ev.offset = r->pos;
    unsigned alias_mark = r->syms.naliases;
    int rc = parse_one(r, &c);
    if (rc != LJP_OK && r->syms.naliases != alias_mark) {
      ljp__symtab_aliases_rollback(&r->syms, alias_mark);
      r->pc_gen++; /* cached protos may be among them */
      r->ljm_rb_gen++;
      ljp__dec_ljm_rebase(r);
    }
    if (LJP_UNLIKELY(r->syms.oom))
      return ljp__reader_fail(r, LJP_E_NOMEM, r->pos, "out of memory");
    if (rc == LJP_OK) {
      uint64_t end = cur_off(&c);
      /* Everything before this record is done with (symbols are copied). */
      if (r->in.map && r->pos >= r->in.map_dropped + INPUT_RELEASE_STEP)
        ljp__input_release(&r->in, r->pos);
      r->ev.raw = r->in.data + (size_t)(r->pos - r->in.base);
      r->ev.raw_len = (size_t)(end - r->pos);
      r->pos = end;
      *ev = &r->ev;
      return LJP_OK;
    }
    if (rc != PARSE_NEED)
      return r->status;
    if (r->in.eof)
      return ljp__reader_fail(r, LJP_E_TRUNCATED, r->need_off, "truncated %s",
                              r->need_what);
    want = (size_t)have * 2 + 64;
  }
}

/* ---- queries ---- */

LJP_API ljp_status ljp_reader_status(const ljp_reader *r) {
  return r ? r->status : LJP_E_ARG;
}
LJP_API const char *ljp_reader_error(const ljp_reader *r) {
  return r ? r->err : "no reader";
}
LJP_API uint64_t ljp_reader_error_offset(const ljp_reader *r) {
  return r ? r->err_off : 0;
}
LJP_API ljp_kind ljp_reader_kind(const ljp_reader *r) {
  return r ? r->kind : LJP_KIND_UNKNOWN;
}
LJP_API unsigned ljp_reader_ljs_version(const ljp_reader *r) {
  return r ? r->ljs_version : 0;
}
LJP_API unsigned ljp_reader_event_version(const ljp_reader *r) {
  return r ? r->ev_version : 0;
}
LJP_API int ljp_reader_ljs_layout(const ljp_reader *r) {
  return r && r->ljs_version == 2 ? r->ljs_layout : 0;
}
LJP_API ljp_flavor ljp_reader_flavor(const ljp_reader *r) {
  return r ? r->flavor : LJP_FLAVOR_TARANTOOL;
}
LJP_API ljp_timer ljp_reader_timer(const ljp_reader *r) {
  return r ? r->timer : LJP_TIMER_UNKNOWN;
}
LJP_API uint64_t ljp_reader_interval_ns(const ljp_reader *r) {
  return r ? r->interval_ns : 0;
}
LJP_API uint64_t ljp_reader_time_ns(const ljp_reader *r) {
  return r ? r->time_ns : 0;
}
LJP_API int ljp_reader_complete(const ljp_reader *r) {
  return r ? r->complete : 0;
}
LJP_API uint64_t ljp_reader_offset(const ljp_reader *r) {
  return r ? r->pos : 0;
}
LJP_API const ljp_counters *ljp_reader_counters(const ljp_reader *r) {
  return r ? &r->cnt : NULL;
}
LJP_API const ljp_symbol *ljp_reader_lookup_proto(const ljp_reader *r,
                                                  uint64_t addr) {
  return r ? symtab_proto(&r->syms, addr) : NULL;
}
LJP_API const ljp_symbol *ljp_reader_lookup_trace(const ljp_reader *r,
                                                  uint64_t traceno) {
  return r ? symtab_trace(&r->syms, traceno) : NULL;
}
LJP_API const ljp_symbol *ljp_reader_lookup_object(const ljp_reader *r,
                                                   uint64_t addr) {
  return r ? ljp__symtab_object_at(&r->syms, addr) : NULL;
}

LJP_API const ljp_symbol *ljp_reader_lookup_cfunc(const ljp_reader *r,
                                                  uint64_t addr) {
  return r ? ljp__symtab_cfloor((symtab *)&r->syms, addr) : NULL;
}
LJP_API uint64_t ljp_reader_stack_token(const ljp_reader *r) {
  return r ? r->stack_token : 0;
}
LJP_API uint64_t ljp_reader_symbol_epoch(const ljp_reader *r) {
  return r ? r->syms_epoch : 0;
}
LJP_API unsigned ljp_reader_alias_count(const ljp_reader *r) {
  return r ? r->syms.naliases : 0;
}
LJP_API const ljp_symbol *ljp_reader_alias(const ljp_reader *r, unsigned k) {
  return r && k >= 1 && k <= r->syms.naliases ? r->syms.aliases[k - 1] : NULL;
}
LJP_API unsigned ljp_symbol_alias(const ljp_symbol *sym) {
  return sym && sym->kind == LJP_SYM_LFUNC && sym->name ? chunk_of(sym)->alias
                                                        : 0;
}
