/*
 * writer.c — the encoder for every ljs, ljm and ljp version.
 *
 * Byte layouts follow FORMATS.md (the grammar comments below name the
 * sections).  A writer is a small state machine: it remembers which section
 * is open and which version it has, so every record gets the header byte and
 * the fields of that version, and a record that version never had is refused
 * with LJP_E_ARG before a single byte of it is written.  The raw primitives
 * (ljp_write_byte/uleb/string) bypass all of that, for hand-made and
 * deliberately broken fixtures.
 *
 * Memory: the buffer is allocated once at creation.  A sink writer never
 * allocates again (the capture core writes at safe points, but keeping the
 * hot path free of malloc keeps it predictable); a memory writer grows its
 * buffer by doubling.  Failures are sticky: once the sink fails (LJP_E_IO) or
 * the buffer cannot grow (LJP_E_NOMEM), every later call returns that status
 * and writes nothing.  Misuse (LJP_E_ARG) is not sticky.
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "ljp_testing.h"

#define WRITER_DEFAULT_BUFFER ((size_t)64 * 1024)

/* Which section is open. */
enum writer_phase {
  PHASE_IDLE = 0,     /* between sections (or nothing written yet) */
  PHASE_SYMTAB = 1,   /* after ljp_write_symtab_begin */
  PHASE_STREAM = 2    /* after ljp_write_stream_begin */
};

/* Header bytes, FORMATS.md §3, §4.2, §5.2, §5.3, §5.5. */
enum {
  SYM_FINAL = 0x80,         /* ljs sym-final, ljm/ljp epilogue */
  LJS_LFUNC = 0x00,
  LJS_CFUNC = 0x01,         /* ljs 3 */
  LJS2_TRACE = 0x01,        /* ljs 2: trace is type 1 ... */
  LJS3_TRACE = 0x02,        /* ... and type 2 from ljs 3 on */
  LJM_SYM_LFUNC = 0x08,     /* AEVENT_SYMTAB | ASOURCE_LFUNC */
  LJM_SYM_CFUNC = 0x0C,     /* AEVENT_SYMTAB | ASOURCE_CFUNC */
  LJM_SYM_TRACE = 0x10,     /* AEVENT_SYMTAB | ASOURCE_TRACE */
  LJP_TRACE_SAMPLE = 0x09,
  LJP1_SYM_CFUNC = 0x0A,
  LJP2_SYM_LFUNC = 0x0A,
  LJP2_SYM_CFUNC = 0x0B,
  LJP2_SYM_TRACE = 0x0C,
  FRAME_LFUNC_BYTE = 0x01,
  FRAME_CFUNC_BYTE = 0x02,
  FRAME_FFUNC_BYTE = 0x03,
  LJP_LUA_STACK_END = 0x80  /* a BYTE */
  /* the host stack ends with a ULEB128 zero */
};

struct ljp_writer {
  ljp_sink_fn sink;       /* NULL: memory writer */
  void *ctx;
  uint8_t *buf;
  size_t len, cap;
  ljp_status status;      /* LJP_OK, or the sticky failure */
  enum writer_phase phase;
  unsigned ljs_version;   /* of the open symtab */
  int ljs_layout;         /* 'a' or 'b' for ljs 2 */
  ljp_kind kind;          /* of the open event stream */
  unsigned ev_version;
  int mcode;              /* loc-trace has trace-addr (ljm 2, early ljm 3) */
  int x1;                 /* the open stream is ljp x1 */
};

/* ------------------------------------------------------------------------ */
/* Buffer                                                                   */
/* ------------------------------------------------------------------------ */

static void buf_flush(ljp_writer *w)
{
  if (w->len == 0 || !w->sink || w->status != LJP_OK)
    return;
  if (w->sink(w->ctx, w->buf, w->len) != 0)
    w->status = LJP_E_IO;
  w->len = 0;
}

/* Makes room for n more bytes in a memory writer. */
static int buf_grow(ljp_writer *w, size_t n)
{
  size_t need = w->len + n, cap = w->cap;
  uint8_t *nb;
  if (need < w->len) {
    w->status = LJP_E_NOMEM;
    return -1;
  }
  while (cap < need) {
    if (cap > SIZE_MAX / 2) {
      cap = need;
      break;
    }
    cap *= 2;
  }
  nb = realloc(w->buf, cap);
  if (!nb) {
    w->status = LJP_E_NOMEM;
    return -1;
  }
  w->buf = nb;
  w->cap = cap;
  return 0;
}

static void put(ljp_writer *w, const void *data, size_t n)
{
  const uint8_t *p = data;
  if (w->status != LJP_OK || n == 0)
    return;
  if (!w->sink) {
    if (w->cap - w->len < n && buf_grow(w, n) != 0)
      return;
    memcpy(w->buf + w->len, p, n);
    w->len += n;
    return;
  }
  /* Long strings are pumped through the buffer in buffer-sized pieces. */
  while (n > 0) {
    size_t room = w->cap - w->len, c;
    if (room == 0) {
      buf_flush(w);
      if (w->status != LJP_OK)
        return;
      room = w->cap;
    }
    c = n < room ? n : room;
    memcpy(w->buf + w->len, p, c);
    w->len += c;
    p += c;
    n -= c;
  }
}

static void put_byte(ljp_writer *w, uint8_t b)
{
  if (w->status == LJP_OK && w->len < w->cap)
    w->buf[w->len++] = b;
  else
    put(w, &b, 1);
}

static void put_uleb(ljp_writer *w, uint64_t v)
{
  uint8_t tmp[10];
  size_t n = ljp_uleb_encode(v, tmp);
  if (w->status == LJP_OK && w->cap - w->len >= n) {
    memcpy(w->buf + w->len, tmp, n);
    w->len += n;
  } else {
    put(w, tmp, n);
  }
}

static void put_string(ljp_writer *w, const char *s, size_t len)
{
  put_uleb(w, (uint64_t)len);
  put(w, s, len);
}

/* ------------------------------------------------------------------------ */
/* Lifetime                                                                 */
/* ------------------------------------------------------------------------ */

LJP_API ljp_writer *
ljp_writer_new(ljp_sink_fn sink, void *ctx, size_t buffer_size)
{
  ljp_writer *w = calloc(1, sizeof(*w));
  if (!w)
    return NULL;
  w->cap = buffer_size ? buffer_size : WRITER_DEFAULT_BUFFER;
  w->buf = malloc(w->cap);
  if (!w->buf) {
    free(w);
    return NULL;
  }
  w->sink = sink;
  w->ctx = ctx;
  w->status = LJP_OK;
  w->phase = PHASE_IDLE;
  return w;
}

LJP_API void ljp_writer_free(ljp_writer *w)
{
  if (!w)
    return;
  free(w->buf);
  free(w);
}

LJP_API const uint8_t *ljp_writer_data(const ljp_writer *w, size_t *len)
{
  if (!w || w->sink) {
    if (len)
      *len = 0;
    return NULL;
  }
  if (len)
    *len = w->len;
  return w->buf;
}

LJP_API ljp_status ljp_writer_flush(ljp_writer *w)
{
  if (!w)
    return LJP_E_ARG;
  buf_flush(w);
  return w->status;
}

LJP_API ljp_status ljp_writer_status(const ljp_writer *w)
{
  return w ? w->status : LJP_E_ARG;
}

/* Every call starts here: NULL handle is misuse, a failed writer stays
 * failed. */
#define WRITER_ENTER(w)              \
  do {                               \
    if (!(w))                        \
      return LJP_E_ARG;              \
    if ((w)->status != LJP_OK)       \
      return (w)->status;            \
  } while (0)

/* ------------------------------------------------------------------------ */
/* Raw primitives                                                           */
/* ------------------------------------------------------------------------ */

/* For the tests' fixtures (ljp_testing.h): not exported from the shared
 * library. */
ljp_status ljp_write_byte(ljp_writer *w, uint8_t b)
{
  WRITER_ENTER(w);
  put_byte(w, b);
  return w->status;
}

ljp_status ljp_write_uleb(ljp_writer *w, uint64_t v)
{
  WRITER_ENTER(w);
  put_uleb(w, v);
  return w->status;
}

ljp_status ljp_write_string(ljp_writer *w, const char *s, size_t len)
{
  WRITER_ENTER(w);
  if (!s && len)
    return LJP_E_ARG;
  put_string(w, s, len);
  return w->status;
}

/* ------------------------------------------------------------------------ */
/* Symbol table (FORMATS.md §3)                                             */
/* ------------------------------------------------------------------------ */

/*   prologue := 'l' 'j' <m> version reserved(3)   (§1.4) */
static void put_prologue(ljp_writer *w, char m, unsigned version,
                         uint8_t reserved0)
{
  uint8_t p[7] = { 'l', 'j', (uint8_t)m, (uint8_t)version, reserved0, 0, 0 };
  put(w, p, sizeof(p));
}

LJP_API ljp_status
ljp_write_symtab_begin(ljp_writer *w, unsigned version, int layout)
{
  WRITER_ENTER(w);
  if (w->phase != PHASE_IDLE || version < 1 || version > 3)
    return LJP_E_ARG;
  if (version == 2 && layout != 'a' && layout != 'b')
    return LJP_E_ARG;
  w->phase = PHASE_SYMTAB;
  w->ljs_version = version;
  w->ljs_layout = version == 2 ? layout : 0;
  put_prologue(w, 's', version, 0);
  return w->status;
}

/*   sym-lua := 0x00 sym-addr sym-chunk:string sym-line   (every version) */
LJP_API ljp_status ljp_write_symtab_lfunc(ljp_writer *w, uint64_t proto,
                                  const char *chunk, size_t len,
                                  uint64_t line)
{
  WRITER_ENTER(w);
  if (w->phase != PHASE_SYMTAB || (!chunk && len))
    return LJP_E_ARG;
  put_byte(w, LJS_LFUNC);
  put_uleb(w, proto);
  put_string(w, chunk, len);
  put_uleb(w, line);
  return w->status;
}

/*   sym-cfunc := 0x01 sym-addr sym-name:string   (ljs 3 only) */
LJP_API ljp_status ljp_write_symtab_cfunc(ljp_writer *w, uint64_t addr,
                                  const char *name, size_t len)
{
  WRITER_ENTER(w);
  if (w->phase != PHASE_SYMTAB || w->ljs_version < 3 || (!name && len))
    return LJP_E_ARG;
  put_byte(w, LJS_CFUNC);
  put_uleb(w, addr);
  put_string(w, name, len);
  return w->status;
}

/*   ljs 2a: 0x01 trace-no trace-addr sym-addr sym-line
 *   ljs 2b: 0x01 trace-no sym-addr sym-line
 *   ljs 3:  0x02 trace-no sym-addr sym-line */
LJP_API ljp_status ljp_write_symtab_trace(ljp_writer *w, uint64_t traceno,
                                  uint64_t mcode, uint64_t proto,
                                  uint64_t line)
{
  WRITER_ENTER(w);
  if (w->phase != PHASE_SYMTAB || w->ljs_version < 2)
    return LJP_E_ARG;
  put_byte(w, w->ljs_version == 2 ? LJS2_TRACE : LJS3_TRACE);
  put_uleb(w, traceno);
  if (w->ljs_version == 2 && w->ljs_layout == 'a')
    put_uleb(w, mcode);
  put_uleb(w, proto);
  put_uleb(w, line);
  return w->status;
}

LJP_API ljp_status ljp_write_symtab_end(ljp_writer *w)
{
  WRITER_ENTER(w);
  if (w->phase != PHASE_SYMTAB)
    return LJP_E_ARG;
  w->phase = PHASE_IDLE;
  put_byte(w, SYM_FINAL);
  return w->status;
}

/* ------------------------------------------------------------------------ */
/* Event streams                                                            */
/* ------------------------------------------------------------------------ */

LJP_API ljp_status ljp_write_stream_begin(ljp_writer *w, ljp_kind kind,
                                  unsigned version, ljp_flavor flavor,
                                  int with_mcode)
{
  WRITER_ENTER(w);
  if (w->phase != PHASE_IDLE)
    return LJP_E_ARG;
  /* The flavor is one reserved byte; AUTO is a reader option, not a value. */
  if ((unsigned)flavor >= 255)
    return LJP_E_ARG;
  if (kind == LJP_KIND_MEMPROF) {
    if (version < 1 || version > 3)
      return LJP_E_ARG;
  } else if (kind == LJP_KIND_SYSPROF) {
    if (version < 1 || version > 2)
      return LJP_E_ARG;
  } else {
    return LJP_E_ARG;
  }
  w->phase = PHASE_STREAM;
  w->kind = kind;
  w->ev_version = version;
  w->x1 = 0;
  /* ljm 2 always carries trace-addr in loc-trace; ljm 3 did until 0243fb72. */
  w->mcode = kind == LJP_KIND_MEMPROF &&
             (version == 2 || (version == 3 && with_mcode));
  put_prologue(w, kind == LJP_KIND_MEMPROF ? 'm' : 'p', version,
               (uint8_t)flavor);
  return w->status;
}

/*   prologue-x1 := 'l' 'j' 'p' 0x81 flavor timer 0x00 interval-ns:ULEB */
LJP_API ljp_status ljp_write_stream_begin_x1(ljp_writer *w, ljp_flavor flavor,
                                             ljp_timer timer,
                                             uint64_t interval_ns)
{
  WRITER_ENTER(w);
  if (w->phase != PHASE_IDLE || (unsigned)flavor >= 255 ||
      (unsigned)timer > LJP_TIMER_WALL)
    return LJP_E_ARG;
  w->phase = PHASE_STREAM;
  w->kind = LJP_KIND_SYSPROF;
  /* Every version test below that asks "ljp 1?" answers no for x1, so the
   * mid-stream symbol events get the ljp 2 header bytes. */
  w->ev_version = LJP_LJP_VERSION_X1;
  w->mcode = 0;
  w->x1 = 1;
  {
    uint8_t p[7] = { 'l', 'j', 'p', (uint8_t)LJP_LJP_VERSION_X1,
                     (uint8_t)flavor, (uint8_t)timer, 0 };
    put(w, p, sizeof(p));
  }
  put_uleb(w, interval_ns);
  return w->status;
}

LJP_API ljp_status ljp_write_stream_end(ljp_writer *w)
{
  WRITER_ENTER(w);
  if (w->phase != PHASE_STREAM)
    return LJP_E_ARG;
  w->phase = PHASE_IDLE;
  put_byte(w, SYM_FINAL);
  buf_flush(w);
  return w->status;
}

static int in_stream(const ljp_writer *w, ljp_kind kind)
{
  return w->phase == PHASE_STREAM && w->kind == kind;
}

/*   stack-lua := frame-lua* 0x80, frames already checked by the caller */
static void put_lua_stack(ljp_writer *w, const ljp_frame *lua, size_t n)
{
  size_t i;
  for (i = 0; i < n; i++) {
    const ljp_frame *f = &lua[i];
    switch (f->kind) {
    case LJP_FRAME_LUA:
      put_byte(w, FRAME_LFUNC_BYTE);
      put_uleb(w, f->value);
      put_uleb(w, f->line);
      break;
    case LJP_FRAME_CFUNC:
      put_byte(w, FRAME_CFUNC_BYTE);
      put_uleb(w, f->value);
      break;
    default: /* LJP_FRAME_FFUNC */
      put_byte(w, FRAME_FFUNC_BYTE);
      put_uleb(w, f->value);
      break;
    }
  }
  put_byte(w, LJP_LUA_STACK_END);
}

/*   stack-host := addr* 0x00, addresses already checked non-zero */
static void put_host_stack(ljp_writer *w, const uint64_t *host, size_t n)
{
  size_t i;
  for (i = 0; i < n; i++)
    put_uleb(w, host[i]);
  put_uleb(w, 0);
}

/* ljp (FORMATS.md §5.1):
 *   sample-guest := header(1|2|3) stack-lua stack-host
 *   sample-host  := header(0|4..8) stack-host
 *   stack-lua    := frame-lua* 0x80
 *   frame-lua    := 0x01 proto line | 0x02 addr | 0x03 ffid
 *   stack-host   := addr* 0x00 (a ULEB128 zero) */
LJP_API ljp_status ljp_write_sample(ljp_writer *w, int vmstate,
                            const ljp_frame *lua, size_t nlua,
                            const uint64_t *host, size_t nhost)
{
  int guest;
  size_t i;
  WRITER_ENTER(w);
  if (!in_stream(w, LJP_KIND_SYSPROF) || w->x1 || vmstate < 0 ||
      vmstate >= LJP_VMST_TRACE)
    return LJP_E_ARG;
  guest = vmstate >= LJP_VMST_LFUNC && vmstate <= LJP_VMST_CFUNC;
  if (guest && nlua && !lua)
    return LJP_E_ARG;
  if (nhost && !host)
    return LJP_E_ARG;
  /* Validate the whole record first: a refused sample leaves no bytes. */
  if (guest)
    for (i = 0; i < nlua; i++)
      if (lua[i].kind != LJP_FRAME_LUA && lua[i].kind != LJP_FRAME_CFUNC &&
          lua[i].kind != LJP_FRAME_FFUNC)
        return LJP_E_ARG;
  /* A zero address would be read as the stack terminator (trap T15). */
  for (i = 0; i < nhost; i++)
    if (host[i] == 0)
      return LJP_E_ARG;

  put_byte(w, (uint8_t)vmstate);
  if (guest)
    put_lua_stack(w, lua, nlua);
  put_host_stack(w, host, nhost);
  return w->status;
}

/*   sample-trace := 0x09 traceno proto line */
LJP_API ljp_status ljp_write_trace_sample(ljp_writer *w, uint64_t traceno,
                                  uint64_t proto, uint64_t line)
{
  WRITER_ENTER(w);
  if (!in_stream(w, LJP_KIND_SYSPROF) || w->x1)
    return LJP_E_ARG;
  put_byte(w, LJP_TRACE_SAMPLE);
  put_uleb(w, traceno);
  put_uleb(w, proto);
  put_uleb(w, line);
  return w->status;
}

/* ljp x1 (FORMATS.md §5.5):
 *   sample-x1  := header(0..9) dt-ns coro flags trace-part? stack-lua
 *                 stack-host
 *   trace-part := traceno proto line          (header 9 only)
 * Both stacks are written for every vmstate, either possibly empty. */
LJP_API ljp_status ljp_write_sample_x1(ljp_writer *w, const ljp_sample_x1 *s)
{
  size_t i;
  WRITER_ENTER(w);
  if (!s || !in_stream(w, LJP_KIND_SYSPROF) || !w->x1 || s->vmstate < 0 ||
      s->vmstate > LJP_VMST_TRACE)
    return LJP_E_ARG;
  /* Reserved flag bits are the readers' to ignore, so a writer that set them
   * would only mean something to itself. */
  if (s->flags & ~(uint32_t)(LJP_SAMPLE_LUA_INCOMPLETE |
                             LJP_SAMPLE_HOST_INCOMPLETE))
    return LJP_E_ARG;
  if ((s->nlua && !s->lua) || (s->nhost && !s->host))
    return LJP_E_ARG;
  /* Validate the whole record first: a refused sample leaves no bytes. */
  for (i = 0; i < s->nlua; i++)
    if (s->lua[i].kind != LJP_FRAME_LUA && s->lua[i].kind != LJP_FRAME_CFUNC &&
        s->lua[i].kind != LJP_FRAME_FFUNC)
      return LJP_E_ARG;
  for (i = 0; i < s->nhost; i++)
    if (s->host[i] == 0)
      return LJP_E_ARG;

  put_byte(w, (uint8_t)s->vmstate);
  put_uleb(w, s->dt_ns);
  put_uleb(w, s->coro);
  put_uleb(w, s->flags);
  if (s->vmstate == LJP_VMST_TRACE) {
    put_uleb(w, s->traceno);
    put_uleb(w, s->trace_proto);
    put_uleb(w, s->trace_line);
  }
  put_lua_stack(w, s->lua, s->nlua);
  put_host_stack(w, s->host, s->nhost);
  return w->status;
}

/* ljm (FORMATS.md §4.1, §4.2):
 *   header := event-type | source, where the ljp_source values shifted by 2
 *             are exactly the pre-shifted ASOURCE_* codes (INT 0x04, LFUNC
 *             0x08, CFUNC 0x0C, TRACE 0x10); ljm 1's 2-bit field holds the
 *             first three, TRACE needs ljm 2's 3-bit field.
 *   alloc   := header loc? naddr nsize
 *   free    := header loc? oaddr osize
 *   realloc := header loc? oaddr osize naddr nsize
 *   loc     := proto line | cfunc-addr | traceno [mcode] */
LJP_API ljp_status
ljp_write_mem(ljp_writer *w, ljp_mem_kind kind, ljp_source src,
                         uint64_t loc_addr, uint64_t loc_line, uint64_t mcode,
                         uint64_t old_addr, uint64_t old_size,
                         uint64_t new_addr, uint64_t new_size)
{
  WRITER_ENTER(w);
  if (!in_stream(w, LJP_KIND_MEMPROF))
    return LJP_E_ARG;
  if (kind != LJP_MEM_ALLOC && kind != LJP_MEM_FREE && kind != LJP_MEM_REALLOC)
    return LJP_E_ARG;
  if (src < LJP_SRC_INTERNAL || src > LJP_SRC_TRACE)
    return LJP_E_ARG;
  if (src == LJP_SRC_TRACE && w->ev_version < 2)
    return LJP_E_ARG;

  put_byte(w, (uint8_t)((unsigned)kind | ((unsigned)src << 2)));
  switch (src) {
  case LJP_SRC_LFUNC:
    put_uleb(w, loc_addr);
    put_uleb(w, loc_line);
    break;
  case LJP_SRC_CFUNC:
    put_uleb(w, loc_addr);
    break;
  case LJP_SRC_TRACE:
    put_uleb(w, loc_addr);
    if (w->mcode)
      put_uleb(w, mcode);
    break;
  default: /* INTERNAL: no location */
    break;
  }
  if (kind != LJP_MEM_ALLOC) {
    put_uleb(w, old_addr);
    put_uleb(w, old_size);
  }
  if (kind != LJP_MEM_FREE) {
    put_uleb(w, new_addr);
    put_uleb(w, new_size);
  }
  return w->status;
}

/* Mid-stream symbol events (FORMATS.md §3.6, §4.5, §5.3): the header byte of
 * the stream's version, then the ljs 3 payload.  Returns the header, or -1
 * when that version never had the event.  ljm 3 with mcode is the stage
 * before 0243fb72: proto events only. */
static int event_header(const ljp_writer *w, ljp_symbol_kind sk)
{
  if (w->phase != PHASE_STREAM)
    return -1;
  if (w->kind == LJP_KIND_MEMPROF) {
    if (w->ev_version < 3)
      return -1;
    if (sk == LJP_SYM_LFUNC)
      return LJM_SYM_LFUNC;
    if (w->mcode)
      return -1;
    return sk == LJP_SYM_CFUNC ? LJM_SYM_CFUNC : LJM_SYM_TRACE;
  }
  if (w->ev_version == 1)
    return sk == LJP_SYM_CFUNC ? LJP1_SYM_CFUNC : -1;
  switch (sk) {
  case LJP_SYM_LFUNC: return LJP2_SYM_LFUNC;
  case LJP_SYM_CFUNC: return LJP2_SYM_CFUNC;
  default: return LJP2_SYM_TRACE;
  }
}

LJP_API ljp_status ljp_write_event_lfunc(ljp_writer *w, uint64_t proto,
                                 const char *chunk, size_t len, uint64_t line)
{
  int h;
  WRITER_ENTER(w);
  h = event_header(w, LJP_SYM_LFUNC);
  if (h < 0 || (!chunk && len))
    return LJP_E_ARG;
  put_byte(w, (uint8_t)h);
  put_uleb(w, proto);
  put_string(w, chunk, len);
  put_uleb(w, line);
  return w->status;
}

LJP_API ljp_status ljp_write_event_cfunc(ljp_writer *w, uint64_t addr,
                                 const char *name, size_t len)
{
  int h;
  WRITER_ENTER(w);
  h = event_header(w, LJP_SYM_CFUNC);
  if (h < 0 || (!name && len))
    return LJP_E_ARG;
  put_byte(w, (uint8_t)h);
  put_uleb(w, addr);
  put_string(w, name, len);
  return w->status;
}

/* x1 only (FORMATS.md §5.5): 0x0D start size file-offset path build-id. */
LJP_API ljp_status ljp_write_event_object(ljp_writer *w, uint64_t start,
                                          uint64_t size, uint64_t offset,
                                          const char *path, size_t path_len,
                                          const char *build_id,
                                          size_t build_id_len)
{
  WRITER_ENTER(w);
  if (w->phase != PHASE_STREAM || !w->x1 || size == 0 ||
      (!path && path_len) || (!build_id && build_id_len))
    return LJP_E_ARG;
  put_byte(w, 0x0D);
  put_uleb(w, start);
  put_uleb(w, size);
  put_uleb(w, offset);
  put_string(w, path, path_len);
  put_string(w, build_id, build_id_len);
  return w->status;
}

LJP_API ljp_status ljp_write_event_trace(ljp_writer *w, uint64_t traceno,
                                 uint64_t proto, uint64_t line)
{
  int h;
  WRITER_ENTER(w);
  h = event_header(w, LJP_SYM_TRACE);
  if (h < 0)
    return LJP_E_ARG;
  put_byte(w, (uint8_t)h);
  put_uleb(w, traceno);
  put_uleb(w, proto);
  put_uleb(w, line);
  return w->status;
}
