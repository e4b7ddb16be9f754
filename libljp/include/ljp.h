/*
 * ljp.h — the public API of libljp, the LuaJIT profile library.
 *
 * libljp reads and writes the three binary streams of the LuaJIT profilers
 * of Tarantool's LuaJIT fork (and of ljp's own capture core):
 *
 *   ljs  the symbol table that starts every profile file,
 *   ljm  the memory profiler (memprof) event stream,
 *   ljp  the sampling profiler (sysprof) sample stream,
 *
 * in every version their producers ever wrote (ljs 1, 2a, 2b, 3; ljm 1, 2, 3
 * with its unversioned stages; ljp 1, 2), and ljp's own extended sysprof
 * stream "ljp x1" (version byte 0x81: times, coroutines, and the callers of
 * samples taken inside JIT traces).  A profile file is an ljs stream
 * followed directly by an ljm or an ljp stream.
 *
 * Layers, each usable alone:
 *
 *   reader   pull decoder: open a path, a buffer or a descriptor, then call
 *            ljp_reader_next() until it returns LJP_END or an error.  Names
 *            are resolved against the symbol table *as it stands at that point
 *            of the stream*, so mid-stream redefinitions (jit.flush(), protos
 *            reused after GC) name each event right.
 *   names    formatting of resolved frames (Lua protos, C symbols, fast
 *            functions, traces) in the toolkit's style or the reference
 *            parser's style.
 *   tree     the call tree: interned frames and a trie of stacks with
 *            self/total weights, shared by folded output, flame graphs and
 *            the SQLite loader.  Memory grows with unique stacks only.
 *   writer   the encoder for all formats and versions.
 *
 * Conventions:
 *   - Nothing here prints, exits or aborts on input.  Functions return an
 *     ljp_status; on failure the handle carries a message that names the
 *     byte offset and what was expected ("offset 1234: truncated ULEB128 in
 *     host stack").  The message never names the file: callers prefix it.
 *   - No global mutable state.  Handles are independent and may be used from
 *     different threads, one thread per handle at a time.
 *   - Memory: pointers returned inside events are valid until the next call
 *     to ljp_reader_next() on the same reader, unless a comment says longer.
 *     Symbols (ljp_symbol) live until the reader is freed.
 */
#ifndef LJP_H
#define LJP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LJP_VERSION_MAJOR 0
#define LJP_VERSION_MINOR 1
#define LJP_VERSION_PATCH 0
#define LJP_VERSION_STRING "0.1.0"

/* Marks the functions of the public API: the shared library is built with
 * hidden visibility, so exactly these are its exports. */
#ifndef LJP_API
#if defined(__GNUC__)
#define LJP_API __attribute__((visibility("default")))
#else
#define LJP_API
#endif
#endif

/* Returns LJP_VERSION_STRING of the library actually linked. */
LJP_API const char *ljp_version(void);

/* ------------------------------------------------------------------------ */
/* Status codes                                                             */
/* ------------------------------------------------------------------------ */

typedef enum ljp_status {
  LJP_OK = 0,              /* an event was returned / the call succeeded */
  LJP_END = 1,             /* clean end: epilogue seen, no bytes follow */
  LJP_E_TRUNCATED = -1,    /* input stopped mid-stream (crashed producer);
                              everything returned before is valid */
  LJP_E_MALFORMED = -2,    /* bytes that no producer writes */
  LJP_E_UNSUPPORTED = -3,  /* unknown magic, or a version this build lacks */
  LJP_E_NOMEM = -4,        /* allocation failed; the handle stays freeable */
  LJP_E_IO = -5,           /* read or write system call failed */
  LJP_E_LIMIT = -6,        /* a resource limit (ljp_limits) was exceeded */
  LJP_E_ARG = -7           /* API misuse (NULL handle, wrong state) */
} ljp_status;

/* A short static description of a status ("truncated input", ...). */
LJP_API const char *ljp_status_name(ljp_status st);

/* ------------------------------------------------------------------------ */
/* Enumerations shared by the reader and the writer                        */
/* ------------------------------------------------------------------------ */

typedef enum ljp_kind {
  LJP_KIND_UNKNOWN = 0,    /* event stream not reached yet */
  LJP_KIND_MEMPROF = 1,    /* ljs + ljm */
  LJP_KIND_SYSPROF = 2     /* ljs + ljp */
} ljp_kind;

/* Which LuaJIT produced the stream: decides fast-function names.  Tarantool
 * leaves the reserved prologue bytes zero; ljp's capture core writes the
 * flavor into the first reserved byte of the ljp prologue. */
typedef enum ljp_flavor {
  LJP_FLAVOR_TARANTOOL = 0,
  LJP_FLAVOR_LUAJIT = 1,     /* stock LuaJIT 2.1 (Debian libluajit-5.1) */
  LJP_FLAVOR_OPENRESTY = 2,  /* OpenResty luajit2 */
  LJP_FLAVOR_AUTO = 255      /* reader option: take it from the stream */
} ljp_flavor;

/* The version byte of ljp's extended sysprof stream (FORMATS.md §5.5):
 * the high bit marks a version of ljp's own, the low bits its revision.
 * Tarantool's parser requires the version byte to equal 2, so it refuses
 * these streams at the prologue instead of misreading them. */
#define LJP_LJP_VERSION_X1 0x81u

/* What the sampling timer of an x1 stream measured. */
typedef enum ljp_timer {
  LJP_TIMER_UNKNOWN = 0,
  LJP_TIMER_PROCESS_CPU = 1,  /* ITIMER_PROF: CPU time of the whole process */
  LJP_TIMER_THREAD_CPU = 2,   /* CPU time of the sampled thread */
  LJP_TIMER_WALL = 3          /* CLOCK_MONOTONIC */
} ljp_timer;

/* "unknown", "process-cpu", "thread-cpu", "wall"; "?" out of range. */
LJP_API const char *ljp_timer_name(ljp_timer timer);

/* Sample flags of x1 streams (ljp_sample.flags, ljp_sample_x1.flags). */
#define LJP_SAMPLE_LUA_INCOMPLETE 1u   /* the Lua frame chain was cut (caught
                                          mid-update, or truncated) */
#define LJP_SAMPLE_HOST_INCOMPLETE 2u  /* the host stack does not reach the
                                          thread's root frame */

/* VM states, Tarantool numbering (stable for every ljm/ljp version). */
enum {
  LJP_VMST_INTERP = 0, LJP_VMST_LFUNC = 1, LJP_VMST_FFUNC = 2,
  LJP_VMST_CFUNC = 3, LJP_VMST_GC = 4, LJP_VMST_EXIT = 5,
  LJP_VMST_RECORD = 6, LJP_VMST_OPT = 7, LJP_VMST_ASM = 8,
  LJP_VMST_TRACE = 9,
  LJP_VMST__MAX = 10
};

/* "INTERP", "LFUNC", ... "TRACE"; "?" out of range. */
LJP_API const char *ljp_vmstate_name(int vmstate);

/* Symbol table entry kinds. */
typedef enum ljp_symbol_kind {
  LJP_SYM_LFUNC = 0,       /* a Lua prototype (GCproto address)          */
  LJP_SYM_CFUNC = 1,       /* a C (host) function symbol                  */
  LJP_SYM_TRACE = 2,       /* a JIT trace                                 */
  LJP_SYM_OBJECT = 3       /* a mapped object file (x1 streams only)      */
} ljp_symbol_kind;

/* memprof event kinds (the EE bits). */
typedef enum ljp_mem_kind {
  LJP_MEM_ALLOC = 1,
  LJP_MEM_FREE = 2,
  LJP_MEM_REALLOC = 3
} ljp_mem_kind;

/* memprof allocation sources. */
typedef enum ljp_source {
  LJP_SRC_INTERNAL = 1,    /* no location */
  LJP_SRC_LFUNC = 2,       /* Lua prototype + current line */
  LJP_SRC_CFUNC = 3,       /* C function address */
  LJP_SRC_TRACE = 4        /* trace number (ljm 2+) */
} ljp_source;

/* "INTERNAL", "LFUNC", "CFUNC", "TRACE" / "ALLOC", "FREE", "REALLOC". */
LJP_API const char *ljp_source_name(ljp_source src);
LJP_API const char *ljp_mem_kind_name(ljp_mem_kind kind);

/* ------------------------------------------------------------------------ */
/* Symbols                                                                  */
/* ------------------------------------------------------------------------ */

/* One definition in the symbol table.  Definitions are immutable: a later
 * definition of the same key (proto address, trace number, C address) is a
 * new ljp_symbol that shadows the old one from that point of the stream on.
 * An exact repeat of the current definition (C-symbol re-dumps) returns the
 * existing one.  Lifetime: until the reader is freed. */
typedef struct ljp_symbol {
  ljp_symbol_kind kind;
  uint64_t addr;           /* LFUNC: proto; CFUNC: function; TRACE: start proto */
  uint64_t line;           /* LFUNC: first line; TRACE: start line; CFUNC: 0 */
  uint64_t traceno;        /* TRACE only */
  uint64_t mcode;          /* TRACE in ljs 2a only: machine-code address */
  int has_mcode;
  const char *name;        /* LFUNC: chunk name; CFUNC: symbol name; TRACE: NULL.
                              NUL-terminated copy; name_len excludes the NUL
                              (names never contain NUL: the producer cuts there) */
  size_t name_len;
  uint32_t generation;     /* 0 for the first definition of this key, then 1, 2.. */
  int initial;             /* 1: from the initial ljs table; 0: mid-stream */
  /* OBJECT only (addr: the first mapped address; name: the file's path):
   * the mapped range's size, the file offset of addr, and the GNU build-id
   * as lowercase hex (NULL, 0 when the object has none). */
  uint64_t size;
  uint64_t offset;
  const char *build_id;
  size_t build_id_len;
} ljp_symbol;

/* LFUNC symbols whose chunk name holds a newline (the chunk is the source
 * text itself) print as "function_alias_<k>".  Returns k, or 0 when the
 * chunk is single-line or no event has used it yet: like the reference
 * parser, the reader numbers aliases 1, 2, ... in the order events first
 * use them.  Symbols sharing a chunk text share the alias. */
LJP_API unsigned ljp_symbol_alias(const ljp_symbol *sym);

/* ------------------------------------------------------------------------ */
/* Frames                                                                   */
/* ------------------------------------------------------------------------ */

typedef enum ljp_frame_kind {
  LJP_FRAME_NONE = 0,
  LJP_FRAME_LUA = 1,       /* Lua function: value = proto address */
  LJP_FRAME_CFUNC = 2,     /* Lua-C function: value = C entry address */
  LJP_FRAME_FFUNC = 3,     /* fast function: value = ffid */
  LJP_FRAME_HOST = 4,      /* host (native) frame: value = PC / return address */
  LJP_FRAME_TRACE = 5,     /* JIT trace: value = trace number */
  LJP_FRAME_MARK = 6       /* not in the stream: a mark the stack builder
                              adds (value = LJP_MARK_*), named by
                              ljp_frame_name like any frame */
} ljp_frame_kind;

/* Marks (LJP_FRAME_MARK values). */
#define LJP_MARK_HOST_INCOMPLETE 1u  /* "[host stack incomplete]": the host
                                        frames outer to this point are
                                        missing from the sample */

/* A frame as read from the stream, with the symbols it resolved to at the
 * moment it was read.  The writer uses only kind, value and line. */
typedef struct ljp_frame {
  ljp_frame_kind kind;
  uint64_t value;          /* see ljp_frame_kind */
  uint64_t line;           /* LUA: the line in the stream (sysprof: first
                              line of the function; memprof: allocation line);
                              TRACE: the line the record carried */
  const ljp_symbol *sym;   /* LUA: the proto; CFUNC/HOST: the nearest C symbol
                              at or below value; TRACE: the trace; or NULL */
  const ljp_symbol *proto; /* TRACE: the trace's start proto (resolved now;
                              for a TRACE sample without a trace symbol, the
                              proto the sample names).  LUA with an unknown
                              proto: the nearest C symbol below value, which
                              the reference parser names it after.  Else NULL */
  uint64_t mcode;          /* TRACE in memprof streams that carry it, else 0 */
} ljp_frame;

/* Name styles for ljp_frame_name(). */
typedef enum ljp_name_style {
  /* Toolkit style: "@a.lua:4", "lua_pcall", "string.rep",
   * "TRACE [3] @a.lua:12", unknown C address "0x7f01...". */
  LJP_NAME_DEFAULT = 0,
  /* As default, but C and host frames carry the symbol address:
   * "lua_pcall:0x4a3f10". */
  LJP_NAME_ADDRESSES = 1,
  /* Exactly what Tarantool's reference parser prints (tools/utils/symtab.lua
   * demangle): "lua_pcall:0x4a3f10", "CFUNC 0x7f..", "@a.lua:4",
   * "TRACE [3] started at @a.lua:12"; fast functions by Tarantool's table. */
  LJP_NAME_REFERENCE = 2
} ljp_name_style;

/* Formats the name of f into buf (snprintf semantics: returns the length the
 * full name needs, writes at most cap bytes including the NUL).  flavor picks
 * the fast-function table (LJP_NAME_REFERENCE always uses Tarantool's).
 * Unknown fast functions print as "ffunc#<id>" (REFERENCE: empty string, the
 * reference parser drops them).  Multi-line chunk names print as their alias. */
LJP_API size_t ljp_frame_name(const ljp_frame *f, ljp_name_style style,
                              ljp_flavor flavor, char *buf, size_t cap);

/* Function names read from Lua sources (see "Source names" below); NULL
 * for none.  Same as ljp_frame_name, except that a Lua frame whose
 * function src can name prints as "risk_score @service.lua:196" (the name,
 * a space, then the default name).  The reference style never uses src. */
typedef struct ljp_srcnames ljp_srcnames;
LJP_API size_t ljp_frame_name_src(const ljp_frame *f, ljp_name_style style,
                                  ljp_flavor flavor, ljp_srcnames *src,
                                  char *buf, size_t cap);

/* The fast-function name of ffid in flavor's default build, or NULL. */
LJP_API const char *ljp_ffname(ljp_flavor flavor, unsigned ffid);

/* ------------------------------------------------------------------------ */
/* Events                                                                   */
/* ------------------------------------------------------------------------ */

typedef enum ljp_event_type {
  LJP_EV_PROLOGUE = 1,     /* a stream section starts (ljs, then ljm/ljp) */
  LJP_EV_SYMBOL = 2,       /* a symbol entry, initial or mid-stream */
  LJP_EV_SAMPLE = 3,       /* a sysprof sample */
  LJP_EV_MEMORY = 4,       /* a memprof alloc / free / realloc */
  LJP_EV_EPILOGUE = 5      /* the final 0x80 of a section */
} ljp_event_type;

typedef struct ljp_prologue {
  char magic[4];           /* "ljs", "ljm" or "ljp", NUL-terminated */
  unsigned version;        /* LJP_LJP_VERSION_X1 for x1 */
  uint8_t reserved[3];     /* x1: flavor, timer, 0 */
  uint64_t interval_ns;    /* x1: the sampling interval asked for (0 unknown);
                              0 for every other stream */
  ljp_timer timer;         /* x1: reserved[1] when known, else UNKNOWN */
} ljp_prologue;

typedef struct ljp_symbol_event {
  const ljp_symbol *sym;
  int initial;             /* 1 inside the initial ljs table */
  int duplicate;           /* 1 when it repeated the current definition */
  uint8_t header;          /* the record's header byte */
} ljp_symbol_event;

typedef struct ljp_sample {
  int vmstate;             /* LJP_VMST_*; TRACE samples have LJP_VMST_TRACE */
  const ljp_frame *lua;    /* Lua stack, innermost first (stream order) */
  size_t lua_count;
  const ljp_frame *host;   /* host stack, innermost first (stream order) */
  size_t host_count;
  ljp_frame trace;         /* TRACE samples: kind LJP_FRAME_TRACE */
  /* x1 streams only (has_time == 1); zero in ljp 1 and 2.  In x1, TRACE
   * samples also carry lua (the trace's function, then its callers) and
   * host stacks; the trace itself stays in .trace. */
  uint64_t time_ns;        /* monotonic ns since the capture started */
  uint64_t coro;           /* running coroutine: 1 main, 2.. others, 0 unknown */
  uint32_t flags;          /* LJP_SAMPLE_* (reserved bits passed through) */
  int has_time;            /* 1 for x1 samples */
} ljp_sample;

typedef struct ljp_mem_event {
  ljp_mem_kind kind;
  ljp_source source;
  ljp_frame loc;           /* LFUNC: LUA frame (line = allocation line);
                              CFUNC: CFUNC frame; TRACE: TRACE frame;
                              INTERNAL: kind LJP_FRAME_NONE */
  uint64_t mcode;          /* TRACE source in ljm 2 / early ljm 3 */
  int has_mcode;
  uint64_t old_addr, old_size;   /* FREE, REALLOC */
  uint64_t new_addr, new_size;   /* ALLOC, REALLOC */
} ljp_mem_event;

typedef struct ljp_event {
  ljp_event_type type;
  uint64_t offset;         /* byte offset of the record's first byte */
  const uint8_t *raw;      /* the record's bytes as in the stream */
  size_t raw_len;
  union {
    ljp_prologue prologue;
    ljp_symbol_event symbol;
    ljp_sample sample;
    ljp_mem_event mem;
  } u;
} ljp_event;

/* ------------------------------------------------------------------------ */
/* Reader                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct ljp_reader ljp_reader;

/* Resource limits.  Zero fields mean "default". */
typedef struct ljp_limits {
  uint64_t max_string;     /* longest chunk/symbol name, default 64 MiB */
  uint64_t max_frames;     /* frames per stack (Lua or host), default 1<<20 */
  uint64_t max_symbols;    /* distinct symbol definitions, default 1<<26 */
} ljp_limits;

/* Allocates a reader.  NULL only when out of memory. */
LJP_API ljp_reader *ljp_reader_new(void);
LJP_API void ljp_reader_free(ljp_reader *r);

/* Options; call before opening. */
LJP_API ljp_status ljp_reader_set_limits(ljp_reader *r, const ljp_limits *lim);
LJP_API ljp_status ljp_reader_set_flavor(ljp_reader *r, ljp_flavor flavor);

/* Open the input.  A path is mapped into memory (or read, where mapping is
 * impossible); a buffer is used in place and must outlive the reader; a
 * descriptor (pipe, stdin) is read in pieces and never needs to be seekable
 * (the reader does not close it).  Failure to open returns LJP_E_IO with the
 * message set; the reader can then only be freed. */
LJP_API ljp_status ljp_reader_open_path(ljp_reader *r, const char *path);
LJP_API ljp_status ljp_reader_open_memory(ljp_reader *r, const void *buf,
                                          size_t len);
LJP_API ljp_status ljp_reader_open_fd(ljp_reader *r, int fd);

/* Decodes the next event.  Returns LJP_OK and sets *ev, LJP_END after the
 * event-stream epilogue, or an error.  Errors are sticky: later calls return
 * the same status.  Trailing bytes after the epilogue are LJP_E_MALFORMED. */
LJP_API ljp_status ljp_reader_next(ljp_reader *r, const ljp_event **ev);

/* The sticky status and its message ("offset 1234: truncated ULEB128 in host
 * stack"); LJP_OK and "" while no error, also after LJP_END.  The offset of the fault (the byte where the
 * offending record or field starts). */
LJP_API ljp_status ljp_reader_status(const ljp_reader *r);
LJP_API const char *ljp_reader_error(const ljp_reader *r);
LJP_API uint64_t ljp_reader_error_offset(const ljp_reader *r);

/* Stream facts, known once the corresponding prologue was returned. */
LJP_API ljp_kind ljp_reader_kind(const ljp_reader *r);
LJP_API unsigned ljp_reader_ljs_version(const ljp_reader *r); /* 0 unknown */
/* The ljm or ljp version; LJP_LJP_VERSION_X1 (0x81) for ljp x1. */
LJP_API unsigned ljp_reader_event_version(const ljp_reader *r);
/* For ljs 2: 'a' (traces carry mcode) or 'b'; 0 otherwise. */
LJP_API int ljp_reader_ljs_layout(const ljp_reader *r);
LJP_API ljp_flavor ljp_reader_flavor(const ljp_reader *r);
/* x1 streams: the prologue's timer and interval (UNKNOWN / 0 otherwise). */
LJP_API ljp_timer ljp_reader_timer(const ljp_reader *r);
LJP_API uint64_t ljp_reader_interval_ns(const ljp_reader *r);
/* x1 streams: time_ns of the last sample returned (the capture's length so
 * far); 0 otherwise. */
LJP_API uint64_t ljp_reader_time_ns(const ljp_reader *r);
/* 1 once the event-stream epilogue was read. */
LJP_API int ljp_reader_complete(const ljp_reader *r);
/* Bytes consumed so far (offset of the next record). */
LJP_API uint64_t ljp_reader_offset(const ljp_reader *r);

/* Counters of everything returned so far. */
typedef struct ljp_counters {
  uint64_t samples;                 /* sysprof samples */
  uint64_t vmstate[LJP_VMST__MAX];  /* samples per vmstate */
  uint64_t mem_events;              /* memprof events (alloc+free+realloc) */
  uint64_t mem_kind[4];             /* indexed by ljp_mem_kind */
  uint64_t mem_source[5];           /* indexed by ljp_source */
  uint64_t symbols_initial[3];      /* indexed by ljp_symbol_kind */
  uint64_t symbols_midstream[3];    /* mid-stream symbol events by kind */
  uint64_t symbol_duplicates;       /* mid-stream repeats of a definition */
  uint64_t trace_redefinitions;     /* trace numbers defined again with
                                       another start proto or line */
  uint64_t max_lua_depth, max_host_depth;
  uint64_t lua_incomplete;          /* x1 samples with LJP_SAMPLE_LUA_INCOMPLETE */
  uint64_t host_incomplete;         /* ... with LJP_SAMPLE_HOST_INCOMPLETE */
  uint64_t max_coro;                /* x1: the highest coroutine id seen */
} ljp_counters;

LJP_API const ljp_counters *ljp_reader_counters(const ljp_reader *r);

/* A number that changes whenever the symbol table changes (a new or a
 * shadowing definition; not an exact repeat).  Two records with the same
 * bytes read at the same epoch resolve to the same symbols, which lets
 * consumers cache per record. */
LJP_API uint64_t ljp_reader_symbol_epoch(const ljp_reader *r);
/* For the sample just read: a non-zero token when its stacks are ones the
 * reader recognised from an earlier record by their bytes and that still
 * resolve to the same symbols (then every sample with that token has the
 * same resolved Lua and host stacks); 0 otherwise.  Unlike the symbol
 * epoch it survives definitions that do not touch the stack (a new trace,
 * a new prototype elsewhere), so consumers can cache per token. */
LJP_API uint64_t ljp_reader_stack_token(const ljp_reader *r);

/* Lookups in the symbol table as it stands now (NULL: unknown). */
LJP_API const ljp_symbol *ljp_reader_lookup_proto(const ljp_reader *r,
                                                  uint64_t addr);
LJP_API const ljp_symbol *ljp_reader_lookup_trace(const ljp_reader *r,
                                                  uint64_t traceno);
/* The C symbol with the greatest address <= addr (the reference's AVL floor). */
LJP_API const ljp_symbol *ljp_reader_lookup_cfunc(const ljp_reader *r,
                                                  uint64_t addr);
/* The object (LJP_SYM_OBJECT, x1 streams) whose mapped range holds addr. */
LJP_API const ljp_symbol *ljp_reader_lookup_object(const ljp_reader *r,
                                                   uint64_t addr);

/* Aliases of multi-line chunk names, k = 1..count, in order of first use. */
LJP_API unsigned ljp_reader_alias_count(const ljp_reader *r);
LJP_API const ljp_symbol *ljp_reader_alias(const ljp_reader *r, unsigned k);

/* ------------------------------------------------------------------------ */
/* Stacks: turning a sample into the frames a user reads                   */
/* ------------------------------------------------------------------------ */

typedef enum ljp_stack_view {
  LJP_VIEW_MERGED = 0,     /* host frames to the VM entry, Lua frames spliced
                              in, split again at every C/fast boundary */
  LJP_VIEW_LUA = 1,        /* Lua frames only (like jit.p) */
  LJP_VIEW_HOST = 2,       /* host frames only (like perf) */
  LJP_VIEW_REFERENCE = 3   /* Tarantool's `luajit -ts` merge, bugs included */
} ljp_stack_view;

/* Where TRACE samples put their trace. */
typedef enum ljp_trace_mode {
  /* The trace's function, then the trace: "@service.lua:196;TRACE [4]
   * @service.lua:198".  ljp 1 and 2: the function is the sample's proto
   * (a LUA frame, line = the function's first line); x1: the Lua stack,
   * whose innermost frame already is that function, and the trace on top
   * or, in the merged and host views, in place of the host frame of its
   * machine code (named "TRACE [n] ..."), under the C functions it called. */
  LJP_TRACES_UNDER = 0,
  /* The trace folded into its function: the stack of UNDER without the
   * trace frame, and (merged and host views) without the host frames in
   * trace machine code, named "TRACE [n] ..." by ljp's capture core, in
   * every sample.  Trace numbers differ between runs of the same code;
   * functions do not, so diffs compare like with like. */
  LJP_TRACES_FUNCTION = 1,
  /* The trace frame as the stream has it: alone in ljp 1 and 2 (no
   * function), on top of its stack in x1 (as UNDER). */
  LJP_TRACES_TRACE = 2
} ljp_trace_mode;

typedef struct ljp_stack_options {
  ljp_stack_view view;
  ljp_trace_mode traces;
} ljp_stack_options;

/* Builds the stack of a sample, outermost frame first, into out[0..n).
 * Returns the number of frames the stack has (it may exceed cap: then only
 * cap were written).  TRACE samples as o->traces says (the reference view,
 * which never shows traces, gives x1 stacks alone and ljp 1/2 trace
 * samples no frame).  o == NULL: the merged view, LJP_TRACES_UNDER.
 *
 * Host stacks that do not reach their thread's root
 * (ljp_sample_host_incomplete) are never drawn as the root of a stack:
 *   - merged view: the Lua frames keep their own root.  The visible VM
 *     entries of the partial host stack are matched to the innermost Lua
 *     segments (the stack is cut on its outer side); the outer Lua frames
 *     with no visible entry come first, then the mark
 *     "[host stack incomplete]" (LJP_FRAME_MARK), then the partial host
 *     stack merged with the remaining Lua frames as usual, so the
 *     interrupted PC stays at the leaf.  The outermost Lua segment always
 *     comes first (entries outer to those of the other segments are plain
 *     host frames); with no Lua frame the mark is the root.
 *   - host view: the mark, then the partial host stack.
 *   - Lua and reference views: unchanged (no host frame / the reference's
 *     own merge).
 * Entries are the lua_*call API, the VM's entries and each
 * lj_vm_interpreter frame (a stripped interpreter's activation); a Lua
 * stack holding coroutine.resume or a coroutine.wrap function (ffids 35,
 * 36) carries its resumers, so coroutine switches are entries too.  More
 * entries than Lua segments with a Lua function innermost (or an x1 Lua
 * stack flagged cut): the segments follow the innermost entries.
 * The frames point into the sample or its reader (marks: static storage):
 * same lifetime as the event. */
LJP_API size_t ljp_sample_stack_ex(const ljp_sample *s,
                                   const ljp_stack_options *o, ljp_frame *out,
                                   size_t cap);

/* ljp_sample_stack_ex with {view, LJP_TRACES_UNDER}. */
LJP_API size_t ljp_sample_stack(const ljp_sample *s, ljp_stack_view view,
                                ljp_frame *out, size_t cap);

/* 1 when the host stack of s does not reach its thread's root frame: an
 * x1 sample flagged LJP_SAMPLE_HOST_INCOMPLETE (even with no host frame),
 * or a non-empty host stack none of whose four outermost frames is a known
 * root (_start, __libc_start_main, __libc_start_call_main, main,
 * start_thread, clone, clone3, __clone, thread_start) — how ljp 1 and 2
 * streams, and x1 leaf-mode captures (the PC alone, flag clear), are
 * judged.  An empty host stack without the flag is not incomplete. */
LJP_API int ljp_sample_host_incomplete(const ljp_sample *s);

/* ------------------------------------------------------------------------ */
/* Source names: naming Lua functions from their source                    */
/* ------------------------------------------------------------------------ */

/* The stream names a Lua function by chunk and first line
 * ("@service.lua:196"); a developer thinks "risk_score".  A resolver reads
 * the chunk's source file when it is available and names the function from
 * the text of its first line, which must hold exactly one of these
 * definitions (leading "local " allowed where Lua allows it):
 *
 *   local function f(        -> f
 *   function M.f(            -> M.f        function M:f(  -> M:f
 *   M.f = function(          -> M.f        local f = function(  -> f
 *   ["key"] = function(      -> key        key = function(  -> key
 *                                          (table constructor fields too)
 *
 * Chunk names "@path" are files; "=name" chunks (stdin, names given by C)
 * have no source; any other chunk name is the source text itself (a
 * string loaded without a name, printed as function_alias_<k> when it
 * spans lines) and is indexed as such.  An absolute path is read as is; a relative one is tried
 * under each directory added, in the order added, then against the current
 * directory.  Each file is read once (the first lookup of its chunk) and
 * indexed; later lookups cost a hash probe.  A line with no definition or
 * with more than one (ambiguous), a missing or unreadable file, or a line
 * past its end give no name: the frame keeps "@chunk:line".  Names depend
 * only on the files' contents: deterministic.
 * One thread per resolver at a time (lookups fill its cache). */
LJP_API ljp_srcnames *ljp_srcnames_new(void);
LJP_API void ljp_srcnames_free(ljp_srcnames *s);
/* Adds a directory that relative chunk paths are tried under (copied). */
LJP_API ljp_status ljp_srcnames_add_dir(ljp_srcnames *s, const char *dir);
/* The name of the function defined at line of chunk (len bytes, with its
 * '@'), or NULL.  The string lives until s is freed. */
LJP_API const char *ljp_srcnames_lookup(ljp_srcnames *s, const char *chunk,
                                        size_t len, uint64_t line);
/* Source files read so far and how many of them could be opened
 * (diagnostics: "--source-dir may be missing"). */
LJP_API void ljp_srcnames_stats(const ljp_srcnames *s, size_t *tried,
                                size_t *found);

/* ------------------------------------------------------------------------ */
/* Call tree                                                                */
/* ------------------------------------------------------------------------ */

/* Frame classes: what a frame is, for colouring and filtering. */
typedef enum ljp_class {
  LJP_CLASS_OTHER = 0,     /* from folded text: unknown */
  LJP_CLASS_LUA = 1,
  LJP_CLASS_FFUNC = 2,
  LJP_CLASS_CFUNC = 3,     /* Lua-C function */
  LJP_CLASS_HOST = 4,
  LJP_CLASS_TRACE = 5,
  LJP_CLASS_VM = 6         /* a VM-state pseudo frame, INTERNAL */
} ljp_class;

typedef struct ljp_tree ljp_tree;

/* Node 0 is the root (no frame).  Ids are dense: 1..ljp_tree_node_count()-1. */
LJP_API ljp_tree *ljp_tree_new(void);
LJP_API void ljp_tree_free(ljp_tree *t);

/* Interns a frame name (any bytes, len given) with its class; returns a
 * frame id > 0, or 0 when out of memory.  The same (name, class) gives the
 * same id. */
LJP_API uint32_t ljp_tree_intern(ljp_tree *t, const char *name, size_t len,
                                 ljp_class cls);
LJP_API const char *ljp_tree_frame_name(const ljp_tree *t, uint32_t frame,
                                        size_t *len);
LJP_API ljp_class ljp_tree_frame_class(const ljp_tree *t, uint32_t frame);
LJP_API uint32_t ljp_tree_frame_count(const ljp_tree *t); /* ids are 1..count */
/* The frame id of (name, cls), or 0 when it was never interned.  Creates
 * nothing (differential graphs look up one tree's frames in another). */
LJP_API uint32_t ljp_tree_find_frame(const ljp_tree *t, const char *name,
                                     size_t len, ljp_class cls);

/* Adds weight to the stack frames[0..n) (outermost first): self weight on
 * its leaf node, total weight on every node of the path (the root too).
 * Returns the leaf node id, or UINT32_MAX when out of memory.  Negative
 * weights are allowed (memprof live bytes, differential graphs). */
LJP_API uint32_t ljp_tree_add(ljp_tree *t, const uint32_t *frames, size_t n,
                              int64_t weight);

/* Adds weight to the stack that ends at an existing node (as ljp_tree_add
 * of that node's path would).  Returns node, or UINT32_MAX for a bad id. */
LJP_API uint32_t ljp_tree_add_at(ljp_tree *t, uint32_t node, int64_t weight);

/* Adds weight to the stack that is node's path followed by frames[0..n)
 * (outermost first): the same as ljp_tree_add of the whole stack, but the
 * walk starts at node (0 = the root), so a caller that kept the node of a
 * shared prefix pays lookups only for the frames below it.  When path_out
 * is not NULL, path_out[i] gets the node of frames[0..i] (n entries).
 * Returns the leaf node id (node itself when n == 0), or UINT32_MAX for a
 * bad node or frame id or when out of memory; path_out may then be partly
 * written, and nodes created on the way stay, with zero weights. */
LJP_API uint32_t ljp_tree_add_below(ljp_tree *t, uint32_t node,
                                    const uint32_t *frames, size_t n,
                                    int64_t weight, uint32_t *path_out);

/* Adds every stack of src into dst: each node of src, in id order, is
 * found or created in dst along the same path (frames matched by name,
 * class and line; a frame new to dst takes src's attributes) and its
 * self weight added.  Merging the tree a folder built from file B into
 * the tree a folder built from file A gives the same tree, with the same
 * frame and node ids, as folding A then B into one tree.  LJP_OK,
 * LJP_E_ARG (NULL, or dst == src), LJP_E_NOMEM (dst then holds part of
 * src). */
LJP_API ljp_status ljp_tree_merge(ljp_tree *dst, const ljp_tree *src);

LJP_API uint32_t ljp_tree_node_count(const ljp_tree *t);
/* The child of parent with that frame, or 0 when there is none (node 0 is
 * the root and never a child).  Creates nothing. */
LJP_API uint32_t ljp_tree_find_child(const ljp_tree *t, uint32_t parent,
                                     uint32_t frame);
LJP_API uint32_t ljp_tree_node_parent(const ljp_tree *t, uint32_t node);
LJP_API uint32_t ljp_tree_node_frame(const ljp_tree *t, uint32_t node);
LJP_API uint32_t ljp_tree_node_depth(const ljp_tree *t, uint32_t node);
LJP_API int64_t ljp_tree_node_self(const ljp_tree *t, uint32_t node);
LJP_API int64_t ljp_tree_node_total(const ljp_tree *t, uint32_t node);
/* Children of node sorted by frame name (bytewise), then class: fills
 * out[0..cap) and returns the number of children. */
LJP_API size_t ljp_tree_children(const ljp_tree *t, uint32_t node,
                                 uint32_t *out, size_t cap);

/* Folded output ("a;b;c N\n" per node with non-zero self weight), lines in
 * bytewise order of the stack text.  emit receives each line (with its
 * newline) and returns 0 to go on, non-zero to stop (returned as LJP_E_IO).
 * min_weight drops lines whose |self| is smaller. */
typedef int (*ljp_emit_fn)(void *ctx, const char *line, size_t len);
LJP_API ljp_status ljp_tree_write_folded(const ljp_tree *t, int64_t min_weight,
                                         ljp_emit_fn emit, void *ctx);

/* What a frame is beyond its name: the profile model's frame attributes.
 * The folder records them for every frame it interns from a stream: the
 * stream frame that creates a tree frame gives it its attributes (frames
 * of one name from several definitions keep the first's).  Frames interned
 * by name alone (folded text, ljp_tree_intern, the folder's memprof chunk
 * and "line N" frames) have kind LJP_FRAME_NONE and zeros.  Strings live
 * as long as the tree. */
typedef struct ljp_frame_info {
  ljp_frame_kind kind;     /* LUA, CFUNC, FFUNC, HOST, TRACE; MARK for the
                              stack builder's marks (address: the mark);
                              NONE for VM pseudo frames and frames from
                              text */
  const char *chunk;       /* Lua functions and traces: the chunk name
                              ("@a.lua") of the function; else NULL */
  size_t chunk_len;
  uint64_t def_line;       /* Lua: the function's first line; trace: the
                              trace's start line; else 0 */
  uint64_t line;           /* the current line, for trees whose frames are
                              keyed by line (ljp_fold_options.lines); else 0.
                              Always the frame's key: ljp_tree_intern_line's
                              line (ljp_tree_set_frame_info ignores it) */
  uint64_t address;        /* Lua: proto address; CFUNC/HOST: the symbol's
                              address (the PC when unresolved); FFUNC: the
                              ffid; TRACE: the trace number; VM: the state */
  const char *function;    /* the function's name from its source
                              (ljp_fold_options.sources), or NULL */
  /* CFUNC/HOST frames of streams that name objects (x1): the object file
   * the address lies in (ljp_reader_lookup_object), else NULL and zeros. */
  const char *object;      /* its path */
  size_t object_len;
  const char *build_id;    /* its GNU build-id as hex, or NULL */
  size_t build_id_len;
  uint64_t object_start, object_size, object_offset;
} ljp_frame_info;

/* The attributes of frame (zeros for frames interned by name alone).
 * LJP_E_ARG for a bad id. */
LJP_API ljp_status ljp_tree_frame_info(const ljp_tree *t, uint32_t frame,
                                       ljp_frame_info *out);
/* Records the attributes of frame (strings copied); the folder calls it,
 * a program building its own tree may too.  LJP_E_ARG, LJP_E_NOMEM. */
LJP_API ljp_status ljp_tree_set_frame_info(ljp_tree *t, uint32_t frame,
                                           const ljp_frame_info *in);
/* Like ljp_tree_intern, but frames of the same (name, class) with different
 * lines are different frames (ljpdb's call paths keep the line a function
 * was at).  ljp_tree_intern(...) is ljp_tree_intern_line(..., 0), and
 * ljp_tree_find_frame finds line-0 frames only.  Siblings of one name and
 * class are listed (ljp_tree_children) by line. */
LJP_API uint32_t ljp_tree_intern_line(ljp_tree *t, const char *name,
                                      size_t len, ljp_class cls,
                                      uint64_t line);

/* Function view of a tree: per frame id f (1..ljp_tree_frame_count()),
 * self[f] is the self weight of the nodes whose frame is f, and total[f]
 * the weight of the stacks that contain f, each stack counted once however
 * often f recurs in it (so total[f] <= the tree's total for positive
 * weights).  Frames that share a name but not a line are separate.
 * self and total have n entries (n > ljp_tree_frame_count(); index 0 is
 * unused and set to 0); either may be NULL.  LJP_E_ARG when n is too
 * small, LJP_E_NOMEM. */
LJP_API ljp_status ljp_tree_rollup(const ljp_tree *t, int64_t *self,
                                   int64_t *total, size_t n);

/* ------------------------------------------------------------------------ */
/* Profile aggregation: events into a call tree                             */
/* ------------------------------------------------------------------------ */

typedef enum ljp_weight {
  LJP_WEIGHT_SAMPLES = 0,  /* sysprof: 1 per sample */
  LJP_WEIGHT_BYTES = 1,    /* memprof: bytes allocated (new_size) */
  LJP_WEIGHT_EVENTS = 2,   /* memprof: 1 per allocating event */
  LJP_WEIGHT_LIVE = 3      /* memprof: allocated minus freed, by the site
                              that allocated the block */
} ljp_weight;

/* VM-state pseudo frames are named "VMST_<state>" (as the reference's old
 * --split option did).  Stacks that come out empty in a view (host-only
 * samples in the Lua view, leaf-mode samples in the host view) get that
 * frame alone, so no sample is ever dropped. */
typedef enum ljp_vmstate_frame {
  LJP_VMSTATE_NONE = 0,
  LJP_VMSTATE_ROOT = 1,    /* "VMST_LFUNC" as the outermost frame */
  LJP_VMSTATE_LEAF = 2     /* ... or as the innermost */
} ljp_vmstate_frame;

typedef struct ljp_fold_options {
  ljp_stack_view view;
  ljp_name_style style;    /* LJP_VIEW_REFERENCE forces LJP_NAME_REFERENCE */
  ljp_weight weight;
  ljp_vmstate_frame vmstate;
  ljp_flavor flavor;       /* LJP_FLAVOR_AUTO: the reader's */
  ljp_trace_mode traces;   /* where TRACE samples put their trace (memprof
                              trace sites: FUNCTION names the trace's
                              start function instead of the trace) */
  ljp_srcnames *sources;   /* function names from sources, or NULL; not
                              owned, must outlive the folder */
  int lines;               /* 1: Lua and trace frames are keyed by their
                              current line too (ljp_tree_intern_line): a
                              function at two lines is two frames of the
                              same name.  Folded output would repeat
                              names; ljpdb keeps lines in its call paths */
} ljp_fold_options;

typedef struct ljp_folder ljp_folder;

/* A folder feeds events of one reader into a tree (several folders may feed
 * the same tree: profiles merge).  It caches frame names, so a stack costs
 * one hash probe per frame. */
LJP_API ljp_folder *ljp_folder_new(ljp_tree *t, const ljp_fold_options *opt);
LJP_API void ljp_folder_free(ljp_folder *f);
/* Adds ev (samples and memory events; other events are ignored).  r is the
 * reader that returned ev.  Returns LJP_OK or LJP_E_NOMEM. */
LJP_API ljp_status ljp_folder_add(ljp_folder *f, const ljp_reader *r,
                                  const ljp_event *ev);

/* One folded event as the model keeps it: where its weight went, and the
 * per-sample metadata the stream carries.  The tree holds the aggregate;
 * a consumer that wants every sample (ljpdb's rows, speedscope's time
 * order) takes them from here, so memory stays bounded by distinct stacks
 * unless the consumer itself keeps samples. */
typedef struct ljp_fold_sample {
  uint32_t leaf;           /* the node whose stack the weight went to; 0
                              when the event added nothing (symbols, a free
                              under a weight that ignores frees, a LIVE free
                              of a block never seen allocated), or when the
                              stack came out empty (reference view: the
                              weight went to the root, weight is 1) */
  int64_t weight;          /* weight added at leaf.  LIVE: an alloc or a
                              realloc reports its new block's size (a
                              realloc also took its old block back from
                              that block's stack); a free reports the
                              negative size it took back, at the freed
                              block's stack */
  int vmstate;             /* samples: LJP_VMST_*; memory events: -1 */
  int has_time;            /* x1 samples: time_ns, coro and flags are set */
  uint64_t time_ns;
  uint64_t coro;
  uint32_t flags;          /* LJP_SAMPLE_* */
} ljp_fold_sample;

/* ljp_folder_add, and out (may be NULL) describes what the event added. */
LJP_API ljp_status ljp_folder_add_ex(ljp_folder *f, const ljp_reader *r,
                                     const ljp_event *ev,
                                     ljp_fold_sample *out);

/* ------------------------------------------------------------------------ */
/* Writer (encoder)                                                         */
/* ------------------------------------------------------------------------ */

typedef struct ljp_writer ljp_writer;

/* Sink for encoded bytes: return 0 on success, non-zero on failure. */
typedef int (*ljp_sink_fn)(void *ctx, const void *data, size_t len);

/* Creates a writer.  With sink == NULL the bytes accumulate in memory
 * (ljp_writer_data); otherwise they go to sink in pieces of at most
 * buffer_size bytes (0 = 64 KiB) when the buffer fills and at flush. */
LJP_API ljp_writer *ljp_writer_new(ljp_sink_fn sink, void *ctx,
                                   size_t buffer_size);
LJP_API void ljp_writer_free(ljp_writer *w);

/* The bytes written so far (memory writers only). */
LJP_API const uint8_t *ljp_writer_data(const ljp_writer *w, size_t *len);
LJP_API ljp_status ljp_writer_flush(ljp_writer *w);
/* Sticky status of the writer (LJP_E_IO once the sink failed). */
LJP_API ljp_status ljp_writer_status(const ljp_writer *w);

/* Symbol table.  version: 1, 2 or 3; layout 'a' or 'b' for version 2.
 * ljp_write_symtab_trace ignores mcode in layouts without it. */
LJP_API ljp_status ljp_write_symtab_begin(ljp_writer *w, unsigned version,
                                          int layout);
LJP_API ljp_status ljp_write_symtab_lfunc(ljp_writer *w, uint64_t proto,
                                          const char *chunk, size_t len,
                                          uint64_t line);
LJP_API ljp_status ljp_write_symtab_cfunc(ljp_writer *w, uint64_t addr,
                                          const char *name, size_t len);
LJP_API ljp_status ljp_write_symtab_trace(ljp_writer *w, uint64_t traceno,
                                          uint64_t mcode, uint64_t proto,
                                          uint64_t line);
LJP_API ljp_status ljp_write_symtab_end(ljp_writer *w);

/* Event stream prologue: kind memprof (ljm version 1..3) or sysprof (ljp
 * version 1..2; x1 has its own call, ljp_write_stream_begin_x1).  flavor goes into the first reserved byte (0 = Tarantool).
 * For ljm 2 and ljm 3, with_mcode says whether loc-trace carries mcode
 * (ljm 2: always; ljm 3: the stage before 0243fb72). */
LJP_API ljp_status ljp_write_stream_begin(ljp_writer *w, ljp_kind kind,
                                          unsigned version, ljp_flavor flavor,
                                          int with_mcode);

/* Sysprof records.  lua/host frames innermost first; lua frames use kind
 * LUA (value = proto, line), CFUNC (value = address), FFUNC (value = ffid).
 * vmstate 0..8 (TRACE uses ljp_write_trace_sample).  Host stacks are written
 * for guest and host states alike; lua frames only for states 1..3. */
LJP_API ljp_status ljp_write_sample(ljp_writer *w, int vmstate,
                                    const ljp_frame *lua, size_t nlua,
                                    const uint64_t *host, size_t nhost);
LJP_API ljp_status ljp_write_trace_sample(ljp_writer *w, uint64_t traceno,
                                          uint64_t proto, uint64_t line);

/* The x1 sysprof stream (FORMATS.md §5.5).  flavor as above; interval_ns
 * is the sampling interval asked for (0 unknown).  In an x1 stream samples
 * are written with ljp_write_sample_x1 only (ljp_write_sample and
 * ljp_write_trace_sample return LJP_E_ARG); the mid-stream symbol writers
 * use the ljp 2 header bytes, ljp_write_stream_end ends it as usual. */
LJP_API ljp_status ljp_write_stream_begin_x1(ljp_writer *w, ljp_flavor flavor,
                                             ljp_timer timer,
                                             uint64_t interval_ns);

typedef struct ljp_sample_x1 {
  int vmstate;                 /* 0..9 */
  uint64_t dt_ns;              /* ns since the previous sample (the first:
                                  since the capture started) */
  uint64_t coro;               /* 1 main thread, 2.. in order of first
                                  appearance, 0 unknown / no Lua running */
  uint32_t flags;              /* LJP_SAMPLE_*; other bits must be 0 */
  uint64_t traceno, trace_proto, trace_line;   /* vmstate 9 only */
  const ljp_frame *lua;        /* innermost first; kinds LUA (value = proto,
                                  line), CFUNC (value = address), FFUNC
                                  (value = ffid), for every vmstate */
  size_t nlua;
  const uint64_t *host;        /* innermost first; no zero address */
  size_t nhost;
} ljp_sample_x1;

/* Writes one x1 sample; the whole record is checked before a byte of it is
 * written (LJP_E_ARG: not an x1 stream, vmstate out of range, a frame kind
 * the stream cannot carry, a zero host address, reserved flag bits). */
LJP_API ljp_status ljp_write_sample_x1(ljp_writer *w, const ljp_sample_x1 *s);

/* Memprof event.  loc_addr/loc_line: proto+line (LFUNC), address (CFUNC),
 * trace number (TRACE, loc_line unused); mcode for streams with mcode. */
LJP_API ljp_status ljp_write_mem(ljp_writer *w, ljp_mem_kind kind,
                                 ljp_source src, uint64_t loc_addr,
                                 uint64_t loc_line, uint64_t mcode,
                                 uint64_t old_addr, uint64_t old_size,
                                 uint64_t new_addr, uint64_t new_size);

/* Mid-stream symbol events, with the header byte the stream's kind and
 * version use (ljm 3: 0x08/0x0C/0x10; ljp 1: 0x0A C symbols only; ljp 2:
 * 0x0A/0x0B/0x0C).  LJP_E_ARG where the version has no such event. */
LJP_API ljp_status ljp_write_event_lfunc(ljp_writer *w, uint64_t proto,
                                         const char *chunk, size_t len,
                                         uint64_t line);
LJP_API ljp_status ljp_write_event_cfunc(ljp_writer *w, uint64_t addr,
                                         const char *name, size_t len);
LJP_API ljp_status ljp_write_event_trace(ljp_writer *w, uint64_t traceno,
                                         uint64_t proto, uint64_t line);

/* x1 only (FORMATS.md §5.5): the object file path is mapped at start ..
 * start + size, start being byte offset of the file; build_id is its GNU
 * build-id as hex (len 0: none).  LJP_E_ARG in other streams or for size 0. */
LJP_API ljp_status ljp_write_event_object(ljp_writer *w, uint64_t start,
                                          uint64_t size, uint64_t offset,
                                          const char *path, size_t path_len,
                                          const char *build_id,
                                          size_t build_id_len);

/* The event-stream epilogue (0x80), then a flush. */
LJP_API ljp_status ljp_write_stream_end(ljp_writer *w);

/* ULEB128, the integer encoding of every stream: the codec for the fields
 * of an event's raw bytes (ljp_event.raw).  ljp_uleb_encode writes at most
 * 10 bytes and returns the count.  ljp_uleb_decode returns the bytes
 * consumed (1..10), 0 when the input ends first (truncated), or -1 on
 * overflow / over-long encoding. */
LJP_API size_t ljp_uleb_encode(uint64_t v, uint8_t out[10]);
LJP_API int ljp_uleb_decode(const uint8_t *p, size_t avail, uint64_t *v);

/* ------------------------------------------------------------------------ */
/* Exports: pprof and speedscope                                            */
/* ------------------------------------------------------------------------ */

/* Both exports read finished call trees (one tree per value type: a memprof
 * profile has four), so every output shares the one aggregation path and
 * the exporters only translate.  Frame names are written exactly as the
 * folded output spells them; Lua frames ("@a.lua:4", "f @a.lua:4", memprof
 * "line 12") also give a file name and a line.  Output is deterministic:
 * frames, functions and samples are numbered in the order of the trees'
 * node ids, which depend only on the input. */

#define LJP_EXPORT_MAX_TYPES 4

/* One value of every sample: the self weight of a stack's leaf in tree,
 * times scale (0 means 1).  Stacks missing from a tree have value 0 there. */
typedef struct ljp_export_type {
  const char *type;        /* "samples", "cpu", "alloc_space", ... */
  const char *unit;        /* "count", "nanoseconds", "bytes" */
  const ljp_tree *tree;
  int64_t scale;
} ljp_export_type;

typedef struct ljp_export_label {
  const char *key, *value; /* a string label on every sample ("service");
                              at most 64 of them */
} ljp_export_label;

typedef struct ljp_pprof_options {
  ljp_export_type types[LJP_EXPORT_MAX_TYPES];
  size_t ntypes;                /* 1..LJP_EXPORT_MAX_TYPES */
  const char *period_type;      /* NULL: no period */
  const char *period_unit;
  int64_t period;
  int64_t duration_ns;          /* 0: unknown */
  const ljp_export_label *labels;
  size_t nlabels;
  /* 1: a stack whose leaf is a VM frame "VMST_<STATE>" (folded with
   * LJP_VMSTATE_LEAF) loses that frame and carries the string label
   * vmstate=<STATE> instead; a stack of that frame alone keeps it (as the
   * folded output does) and gets the label too.  Stacks with a trace frame
   * always carry the number label trace=<n> of their innermost trace. */
  int vmstate_labels;
  int uncompressed;             /* 1: the bare protobuf message, no gzip */
} ljp_pprof_options;

/* Writes the profile.proto message as Go's runtime/pprof does: gzip
 * (header mtime 0) of the serialized Profile; sample location ids leaf
 * first; one function and one location per distinct frame.  Host frames
 * whose tree carries their object (ljp_frame_info.object: x1 streams name
 * objects) get a mapping per object (file, range, file offset, build-id,
 * has_functions) and a location with the frame's address in it; Tarantool's
 * streams name no objects, so their profiles have no mappings.  The
 * bytes go to sink in pieces.  LJP_E_ARG for bad options, LJP_E_NOMEM,
 * LJP_E_IO when sink fails. */
LJP_API ljp_status ljp_pprof_write(const ljp_pprof_options *o, ljp_sink_fn sink,
                                   void *ctx);

/* One profile of a speedscope file, "sampled".  Without nodes, its samples
 * are the tree's stacks with non-zero self weight, each weighted by it
 * times scale (0 means 1).  With nodes, they are the stacks ending at
 * nodes[0..nsamples) of the tree in that order (the order samples were
 * taken: speedscope's time-order view), each weighted weights[i] * scale,
 * or scale when weights is NULL.  start/end are the profile's
 * startValue/endValue in unit; end == 0 means start + the total weight. */
typedef struct ljp_speedscope_profile {
  const char *name;        /* "coroutine 1", "alloc_space" */
  const ljp_tree *tree;
  const char *unit;        /* a speedscope unit: "none", "nanoseconds",
                              "bytes", ... */
  int64_t scale;
  int64_t start, end;
  const uint32_t *nodes;   /* NULL: the tree's stacks */
  const int64_t *weights;
  size_t nsamples;
} ljp_speedscope_profile;

/* Writes a speedscope JSON file (https://www.speedscope.app/file-format-
 * schema.json) named name, with profiles p[0..n) sharing one frame table;
 * the viewer opens the first.  Strings are escaped as JSON requires; bytes
 * that are not UTF-8 become U+FFFD.  Same errors as ljp_pprof_write. */
LJP_API ljp_status ljp_speedscope_write(const char *name,
                                        const ljp_speedscope_profile *p,
                                        size_t n, ljp_sink_fn sink, void *ctx);

#ifdef __cplusplus
}
#endif

#endif /* LJP_H */
