/*
 * internal.h — private structures of the libljp reader.
 *
 * The reader is a small state machine over an input window (input.c).  Each
 * record is parsed as a transaction from a cursor: a parser either consumes
 * a whole record or reports "need more bytes" without touching any state, so
 * a record cut by the end of a pipe buffer is simply parsed again once more
 * bytes arrived, and a record cut by the end of the input is reported as
 * truncated with everything before it intact.
 */
#ifndef LJP_INTERNAL_H
#define LJP_INTERNAL_H

#include "ljp.h"

#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#if defined(__GNUC__)
#define LJP_LIKELY(x) __builtin_expect(!!(x), 1)
#define LJP_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define LJP_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define LJP_LIKELY(x) (x)
#define LJP_UNLIKELY(x) (x)
#define LJP_PRINTF(a, b)
#endif

/* ---- arena: bump allocation for symbols and strings, freed at once ---- */

typedef struct arena_block arena_block;
typedef struct arena {
  arena_block *head;
  size_t used, cap;        /* within head */
} arena;

void ljp__arena_init(arena *a);
void ljp__arena_free(arena *a);
void *ljp__arena_alloc(arena *a, size_t n); /* 8-byte aligned; NULL on OOM */

/* ---- u64 -> pointer hash map (open addressing, linear probing) ---- */

/* Key and value side by side: a lookup touches one cache line. */
typedef struct u64slot {
  uint64_t key;
  void *val;               /* NULL = empty slot */
} u64slot;

typedef struct u64map {
  u64slot *slots;
  size_t cap, count;       /* cap is a power of two */
} u64map;

void ljp__u64map_init(u64map *m);
void ljp__u64map_free(u64map *m);
void *ljp__u64map_get(const u64map *m, uint64_t key);
int ljp__u64map_put(u64map *m, uint64_t key, void *val); /* 0 ok, -1 OOM */
/* Removes key; returns its value, or NULL when it was not there. */
void *ljp__u64map_del(u64map *m, uint64_t key);

#include "hash.h" /* ljp_hash64, ljp__hash_bytes */

/* ---- input window ---- */

typedef struct ljp_input {
  const uint8_t *data;     /* window; data[0] is at absolute offset base */
  size_t len;              /* bytes in the window */
  uint64_t base;
  int eof;                 /* nothing beyond the window */
  int fd;                  /* descriptor input, -1 otherwise */
  int own_fd;              /* opened by the reader: close it at the end */
  uint8_t *buf;            /* owned buffer (fd input) */
  size_t cap;
  void *map;               /* mmap'ed file */
  size_t map_len;
  size_t map_dropped;      /* bytes at the start already given back */
} ljp_input;

/* Makes at least want bytes available from absolute offset pos, reading
 * more from the descriptor as needed (returns the bytes available from pos,
 * which is < want only at EOF), or -1 on a read error (errno kept). */
long long ljp__input_fill(ljp_input *in, uint64_t pos, size_t want);
void ljp__input_close(ljp_input *in);
/* Gives back the pages of a mapped file before absolute offset pos: a
 * profile is read once, front to back, and its pages must not pile up in
 * the process's resident set. */
void ljp__input_release(ljp_input *in, uint64_t pos);
#define INPUT_RELEASE_STEP (2u << 20) /* bytes given back at a time */

/* ---- symbol table ---- */

typedef struct csym_entry {
  uint64_t addr;
  uint64_t seq;            /* order of definition: later wins */
  const ljp_symbol *sym;
} csym_entry;

/* An interned chunk name.  ljp_symbol.name of LFUNC symbols points at
 * text[], so symbols of one chunk share one copy and one alias. */
typedef struct chunk_rec {
  struct chunk_rec *next;  /* hash chain */
  size_t len;
  unsigned alias;          /* 0 until an event uses a multi-line chunk */
  int multiline;
  char text[];
} chunk_rec;

static inline chunk_rec *chunk_of(const ljp_symbol *s) {
  return (chunk_rec *)(void *)(s->name - offsetof(chunk_rec, text));
}

typedef struct symtab {
  arena mem;
  u64map lfunc;            /* proto address -> current ljp_symbol */
  u64map trace;            /* trace number -> current ljp_symbol */
  u64map cfunc;            /* exact address -> current ljp_symbol */
  u64map cnamed;           /* hash(address, name) -> a definition of it */
  csym_entry *sorted;      /* C symbols sorted by address (floor lookup) */
  size_t nsorted, capsorted;
  csym_entry *pending;     /* added since the last merge, sorted too */
  size_t npending, cappending;
  uint64_t pseq;           /* definition order of pending entries */
  u64map chunks;           /* hash of chunk text -> chunk_rec chain */
  const ljp_symbol **aliases; /* alias k-1 -> first proto using that chunk */
  unsigned naliases, capaliases;
  uint64_t nsymbols;       /* definitions allocated */
  uint64_t max_symbols;
  int oom;                 /* an alias could not be numbered: the reader
                              fails the record with LJP_E_NOMEM */
  const ljp_symbol **objects; /* x1 object events, in definition order */
  size_t nobjects, capobjects;
} symtab;

void ljp__symtab_init(symtab *s, uint64_t max_symbols);
/* Records an object (LJP_SYM_OBJECT; strings copied).  NULL and *err set
 * on failure. */
const ljp_symbol *ljp__symtab_object(symtab *s, const ljp_symbol *def,
                                     ljp_status *err);
/* The newest object whose range holds addr, or NULL. */
const ljp_symbol *ljp__symtab_object_at(const symtab *s, uint64_t addr);
void ljp__symtab_free(symtab *s);
/* Define a symbol; returns the (possibly existing, when *dup) definition,
 * or NULL on OOM/limit (*err = LJP_E_NOMEM / LJP_E_LIMIT). */
const ljp_symbol *ljp__symtab_define(symtab *s, const ljp_symbol *proto_sym,
                                     int *dup, int *redefined, ljp_status *err);
const ljp_symbol *ljp__symtab_cfloor(symtab *s, uint64_t addr);
/* Numbers the chunk of an LFUNC symbol on first use (multi-line only). */
int ljp__symtab_use_chunk(symtab *s, const ljp_symbol *sym);
/* Forgets the aliases numbered after the first `mark` (a record that was
 * not delivered must not keep the numbers it took). */
void ljp__symtab_aliases_rollback(symtab *s, unsigned mark);
static inline const ljp_symbol *symtab_proto(const symtab *s, uint64_t a) {
  return (const ljp_symbol *)ljp__u64map_get(&s->lfunc, a);
}
static inline const ljp_symbol *symtab_trace(const symtab *s, uint64_t n) {
  return (const ljp_symbol *)ljp__u64map_get(&s->trace, n);
}

/* ---- cursor for record parsing ---- */

enum { CUR_OK = 0, CUR_NEED = 1, CUR_BAD = 2 };

typedef struct cursor {
  const uint8_t *p, *end;
  const uint8_t *start;    /* window start: absolute offset base */
  uint64_t base;
} cursor;

static inline uint64_t cur_off(const cursor *c) {
  return c->base + (uint64_t)(c->p - c->start);
}

/* Decodes a ULEB128: CUR_OK, CUR_NEED (ran out of window) or CUR_BAD
 * (more than 10 bytes or a value above 2^64-1). */
static inline int cur_uleb(cursor *c, uint64_t *out) {
  const uint8_t *p = c->p;
  if (LJP_LIKELY(p < c->end && *p < 0x80)) {
    *out = *p;
    c->p = p + 1;
    return CUR_OK;
  }
  uint64_t v = 0;
  unsigned shift = 0;
  if (LJP_LIKELY(c->end - p >= 10)) {
    /* Room for the longest encoding: no bounds check per byte. */
    for (int i = 0; i < 10; i++) {
      uint8_t b = p[i];
      if (i == 9 && b > 1)
        return CUR_BAD;
      v |= (uint64_t)(b & 0x7f) << shift;
      if (!(b & 0x80)) {
        *out = v;
        c->p = p + i + 1;
        return CUR_OK;
      }
      shift += 7;
    }
    return CUR_BAD;
  }
  for (int i = 0; i < 10; i++) {
    if (p >= c->end)
      return CUR_NEED;
    uint8_t b = *p++;
    if (i == 9 && b > 1)
      return CUR_BAD;
    v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *out = v;
      c->p = p;
      return CUR_OK;
    }
    shift += 7;
  }
  return CUR_BAD;
}

/* ---- memo of resolved sample stacks (recmemo.c) ---- */

/* What an entry's resolution depended on: the C symbols (cgen) and the
 * prototype table (lua, bumped by every definition that changes what an
 * address resolves to).  When only the latter moved, the entry is checked
 * against its own addresses (deps: address, symbol it resolved to) and
 * kept if none of them changed. */
typedef struct recmemo_stamp {
  uint64_t cgen, lua;
} recmemo_stamp;

typedef struct recmemo_dep {
  uint64_t addr;
  const ljp_symbol *sym;
} recmemo_dep;

typedef struct recmemo_ent {
  ljp_frame *frames;       /* Lua frames, then host frames; NULL = free */
  recmemo_dep *deps;       /* distinct Lua frame addresses: ndeps of
                              them (see ljp__recmemo_deps) */
  const uint8_t *raw;      /* the stack bytes, after frames and deps */
  size_t len, nlua, nhost, ndeps, cost;
  uint64_t key;
  recmemo_stamp stamp;
  uint32_t next;           /* bucket chain */
  uint64_t serial;
  int has_lua;             /* the record carries a Lua stack */
} recmemo_ent;

#define RECMEMO_MANY SIZE_MAX          /* ndeps: too many to keep */
#define RECMEMO_UNKNOWN (SIZE_MAX - 1) /* ndeps: not collected yet */

typedef struct recmemo recmemo;
recmemo *ljp__recmemo_new(void);
/* Collects e's deps on first use (stores do not pay for it: most entries
 * never see their prototypes change); returns ndeps. */
size_t ljp__recmemo_deps(recmemo_ent *e);
void ljp__recmemo_free(recmemo *m);
/* The entry whose stack bytes begin p (avail bytes readable), or NULL. */
recmemo_ent *ljp__recmemo_find(recmemo *m, const uint8_t *p, size_t avail,
                               int has_lua);
/* Remembers the len stack bytes at p and their resolved frames (or
 * refreshes the entry of the same bytes); may decline. */
uint64_t ljp__recmemo_store(recmemo *m, const uint8_t *p, size_t len,
                            int has_lua, const ljp_frame *lua, size_t nlua,
                            const ljp_frame *host, size_t nhost,
                            const recmemo_stamp *st);

/* As cur_uleb, but up to 8 bytes at once with no branch per byte: the
 * end is the first byte below 0x80, and the 7-bit groups are packed in
 * three halving steps.  For fields whose length varies from record to
 * record (memprof block addresses and sizes), where the byte loop's exit
 * is mispredicted; where lengths repeat (sysprof stacks) the byte loop is
 * faster, its cursor advancing ahead of the loads. */
static inline int cur_uleb_w(cursor *c, uint64_t *out) {
#if defined(__GNUC__) && defined(__BYTE_ORDER__) &&                          \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  const uint8_t *p = c->p;
  if (LJP_LIKELY(c->end - p >= 8)) {
    uint64_t w;
    memcpy(&w, p, 8);
    uint64_t stop = ~w & 0x8080808080808080ULL;
    if (LJP_LIKELY(stop != 0)) {
      unsigned n = (unsigned)(__builtin_ctzll(stop) >> 3) + 1;
      uint64_t x = n == 8 ? w : w & ((1ULL << (8 * n)) - 1);
      x &= 0x7f7f7f7f7f7f7f7fULL;
      x = (x & 0x007f007f007f007fULL) | ((x & 0x7f007f007f007f00ULL) >> 1);
      x = (x & 0x00003fff00003fffULL) | ((x & 0x3fff00003fff0000ULL) >> 2);
      x = (x & 0x000000000fffffffULL) | ((x & 0x0fffffff00000000ULL) >> 4);
      *out = x;
      c->p = p + n;
      return CUR_OK;
    }
  }
#endif
  return cur_uleb(c, out);
}

/* ---- the reader ---- */

/* A memprof allocation site (dec_ljm.c): the event header with its kind
 * bits cleared and the location bytes after it, as read, and the frame
 * they resolved to.  tag is the site's stamp (the sum of the generations
 * its resolution depends on) above the key's bytes 8 and 9.  One cache
 * line. */
typedef struct ljm_site {
  uint64_t k0, tag;
  ljp_frame loc;
} ljm_site;
#define LJM_SITES 4096     /* direct-mapped, a power of two */
/* Generations of prototype addresses and trace numbers by bucket (a hash
 * of the address or number), so that a definition leaves the sites of
 * other functions and traces cached.  Row 0 stays zero (sources that
 * depend on no bucket). */
#define LJM_GEN_BITS 10
#define LJM_GEN_PROTO 1
#define LJM_GEN_TRACE 2
static inline size_t ljm_gen_bucket(uint64_t v) {
  return (size_t)((v * 0x9e3779b97f4a7c15ULL) >> (64 - LJM_GEN_BITS));
}

enum reader_state {
  RS_NEW = 0,              /* not opened */
  RS_LJS_PROLOGUE,
  RS_LJS_BODY,
  RS_EV_PROLOGUE,
  RS_EV_BODY,
  RS_TAIL,                 /* after the event epilogue: expect EOF */
  RS_END,
  RS_ERROR
};

struct ljp_reader {
  enum reader_state state;
  ljp_input in;
  uint64_t pos;            /* absolute offset of the next record */
  ljp_limits lim;
  ljp_flavor flavor_opt;

  ljp_kind kind;
  unsigned ljs_version, ev_version;
  int ljs_layout;          /* 'a' / 'b' for ljs 2 */
  int loc_mcode;           /* ljm loc-trace carries mcode */
  ljp_flavor flavor;
  int complete;
  ljp_timer timer;         /* ljp x1 prologue */
  uint64_t interval_ns;    /* ljp x1 prologue */
  uint64_t time_ns;        /* ljp x1: the stream clock, sum of the dt-ns */

  symtab syms;
  ljp_counters cnt;

  ljp_event ev;
  ljp_frame *lua, *host;   /* frame buffers of the sample being decoded */
  size_t lua_cap, host_cap;
  /* The previous sample's stacks, resolved: consecutive samples share
   * their outer frames, which are then copied instead of looked up. */
  ljp_frame *plua, *phost;
  size_t plua_cap, phost_cap, plua_n, phost_n;
  uint64_t plua_epoch, phost_epoch; /* syms_epoch when they were resolved */
  uint64_t syms_epoch;     /* bumped by every change of the symbol table */

  /* host address -> C floor cache; invalidated when C symbols change */
  uint64_t *hc_addr;
  const ljp_symbol **hc_sym;
  uint64_t hc_gen, syms_gen;
  uint64_t *hc_stamp;

  /* Resolved stacks by their bytes; lua_epoch counts the prototype
   * definitions that changed what an address resolves to (C symbols bump
   * syms_gen). */
  recmemo *memo;
  uint64_t lua_epoch;
  uint64_t stack_token;
  /* prototype address -> symbol cache (direct-mapped); an entry is only
   * filled after ljp__symtab_use_chunk, so a hit skips both.  Stamped with
   * pc_gen, bumped with lua_epoch and when a failed record's aliases are
   * taken back. */
#define PROTO_CACHE_SIZE 1024
  uint64_t *pc_addr, *pc_stamp;
  const ljp_symbol **pc_sym;
  uint64_t pc_gen;
  /* trace number -> symbol cache, stamped with tc_gen (bumped by every
   * trace definition that changes what a number resolves to) */
#define TRACE_CACHE_SIZE 64
  uint64_t tc_no[TRACE_CACHE_SIZE], tc_stamp[TRACE_CACHE_SIZE];
  const ljp_symbol *tc_sym[TRACE_CACHE_SIZE];
  uint64_t tc_gen;
  /* memprof sites -> resolved location (LJM_SITES of them, allocated
   * with the ljm prologue) */
  ljm_site *ljm_sites;
  void *ljm_sites_mem;     /* the allocation they are aligned in */
  int ljm_lane;            /* RS_EV_BODY of ljm 2 or 3: read by
                              ljp__dec_ljm_next */
  uint64_t ljm_gen[3][1u << LJM_GEN_BITS];
  uint64_t ljm_rb_gen;     /* bumped when a failed record's aliases are
                              taken back */
  uint64_t ljm_base[8];    /* by source: the part of a site's stamp
                              summed from syms_gen, pc_gen and ljm_rb_gen;
                              ljp__dec_ljm_rebase after changing those */
  const uint64_t *ljm_row[8]; /* by source: its row of ljm_gen */
  uint64_t ljm_release_at; /* where ljp__dec_ljm_next next gives pages of
                              a mapped input back (0: not known yet) */

  uint64_t need_off;       /* where the last record ran out of bytes */
  const char *need_what;   /* ... and which field it was reading */

  ljp_status status;
  uint64_t err_off;
  char err[256];
};

/* Record parsers: return LJP_OK with r->ev filled, or CUR_NEED via
 * PARSE_NEED, or an error status (message set). */
#define PARSE_NEED 100
int ljp__dec_ljs_record(ljp_reader *r, cursor *c);
int ljp__dec_ljm_record(ljp_reader *r, cursor *c);
int ljp__dec_ljp_record(ljp_reader *r, cursor *c);
int ljp__dec_ljs2_probe_layout(ljp_reader *r, cursor *c, int *layout);
/* ljp_reader_next in the events of ljm 2 and 3: the event at r->pos
 * when its site is cached and its fields have the usual lengths, else
 * ljp__reader_next_slow, which is ljp_reader_next for every state. */
ljp_status ljp__dec_ljm_next(ljp_reader *r, const ljp_event **ev);
ljp_status ljp__reader_next_slow(ljp_reader *r, const ljp_event **ev);
void ljp__dec_ljm_rebase(ljp_reader *r);

/* Sets the sticky error; returns st. */
ljp_status ljp__reader_fail(ljp_reader *r, ljp_status st, uint64_t off,
                            const char *fmt, ...) LJP_PRINTF(4, 5);
/* Cursor failure helper: CUR_NEED -> PARSE_NEED (remember where/what for a
 * truncation message), CUR_BAD -> malformed error. */
int ljp__reader_field_fail(ljp_reader *r, int cur_rc, uint64_t off,
                           const char *what);
/* Reads a string field (len + payload) into s and n, pointing into the
 * window. */
int ljp__reader_string(ljp_reader *r, cursor *c, const char *what,
                       const uint8_t **s, uint64_t *n);

/* Symbol payloads, shared by the initial table and mid-stream events (their
 * payloads are byte-for-byte the ljs ones, FORMATS.md §3.6). */
int ljp__dec_sym_lfunc(ljp_reader *r, cursor *c, ljp_symbol *d);
int ljp__dec_sym_cfunc(ljp_reader *r, cursor *c, ljp_symbol *d);
int ljp__dec_sym_trace(ljp_reader *r, cursor *c, ljp_symbol *d, int with_mcode);

/* Reads one ULEB128 field or returns from the calling parser. */
#define GET_ULEB(r, c, dst, what)                                             \
  do {                                                                        \
    uint64_t off_ = cur_off(c);                                               \
    int rc_ = cur_uleb((c), &(dst));                                          \
    if (LJP_UNLIKELY(rc_))                                                    \
      return ljp__reader_field_fail((r), rc_, off_, (what));                  \
  } while (0)

/* GET_ULEB with cur_uleb_w. */
#define GET_ULEB_W(r, c, dst, what)                                           \
  do {                                                                        \
    uint64_t off_ = cur_off(c);                                               \
    int rc_ = cur_uleb_w((c), &(dst));                                        \
    if (LJP_UNLIKELY(rc_))                                                    \
      return ljp__reader_field_fail((r), rc_, off_, (what));                  \
  } while (0)

/* Symbol events shared by the three decoders. */
int ljp__reader_define(ljp_reader *r, ljp_symbol *def, int initial,
                       uint8_t header, uint64_t off);
const ljp_symbol *ljp__reader_cfloor(ljp_reader *r, uint64_t addr);

/* The prototype at addr (its chunk's alias numbered), through the
 * reader's direct-mapped cache. */
static inline const ljp_symbol *reader_proto(ljp_reader *r, uint64_t addr) {
  size_t i = (size_t)(ljp_hash64(addr) & (PROTO_CACHE_SIZE - 1));
  if (r->pc_stamp[i] == r->pc_gen && r->pc_addr[i] == addr)
    return r->pc_sym[i];
  const ljp_symbol *s = symtab_proto(&r->syms, addr);
  if (s) {
    ljp__symtab_use_chunk(&r->syms, s);
    r->pc_addr[i] = addr;
    r->pc_sym[i] = s;
    r->pc_stamp[i] = r->pc_gen;
  }
  return s;
}

/* reader_proto that remembers a miss too: a trace whose start prototype
 * the table does not know names it on every event, and a memprof site in
 * such a function repeats as often as any other.  Every definition that
 * changes what an address resolves to bumps pc_gen, misses included. */
static inline const ljp_symbol *reader_proto_or_miss(ljp_reader *r,
                                                     uint64_t addr) {
  const ljp_symbol *s = reader_proto(r, addr);
  if (!s) {
    size_t i = (size_t)(ljp_hash64(addr) & (PROTO_CACHE_SIZE - 1));
    r->pc_addr[i] = addr;
    r->pc_sym[i] = NULL;
    r->pc_stamp[i] = r->pc_gen;
  }
  return s;
}

/* Fills a trace frame: number, line carried, proto named by the record. */
void ljp__reader_trace_frame(ljp_reader *r, ljp_frame *f, uint64_t traceno,
                             uint64_t proto, uint64_t line);

/* Fast-function name tables, index = ffid, NULL-terminated. */
extern const char *const ljp__ffnames_tarantool[];
extern const char *const ljp__ffnames_luajit[];
extern const char *const ljp__ffnames_openresty[];

#endif
