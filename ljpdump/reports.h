/*
 * reports.h — the report modules of ljpdump: incremental consumers of reader
 * events that print a memprof or a sysprof report at the end.
 *
 * Usage (both reports alike):
 *
 *   memreport *m = memreport_new(&opts);
 *   while ((st = ljp_reader_next(r, &ev)) == LJP_OK)
 *     if (memreport_add(m, r, ev) != LJP_OK) ...out of memory...
 *   memreport_print(m, stdout);      (also after an error: partial report)
 *   memreport_free(m);
 *
 * Every event of the stream must be passed, symbol events and prologues
 * included: the generation-era report counts symbol definitions, and the
 * aliases are copied from the reader as they appear.  Memory never grows
 * with the events: the memprof report keeps the distinct locations, names
 * and live heap chunks, the sysprof report the call tree of the profile
 * model (its distinct stacks) and the traces sampled.
 * Output is deterministic: ties that the reference tools leave to Lua's
 * hash-table order are broken as documented below.
 */
#ifndef LJPDUMP_REPORTS_H
#define LJPDUMP_REPORTS_H

#include <stdint.h>
#include <stdio.h>

#include "ljp.h"

/* ------------------------------------------------------------------------ */
/* memprof report: what `luajit -tm` prints                                 */
/* ------------------------------------------------------------------------ */

/* Which generation of Tarantool's memprof parser to reproduce. */
typedef enum memreport_era {
  /* ljm 1 and ljm 2 streams: MEMREPORT_ERA_BYTES; ljm 3: MEMREPORT_ERA_CURRENT.
   * (An ljm 3 stream does not say which tool era it was meant for.) */
  MEMREPORT_ERA_AUTO = 0,
  /* `luajit -tm` from bc327aed (2024-03) on: sizes as "<n>B"; one row per
   * (addr, line, traceno), named after its first event. */
  MEMREPORT_ERA_CURRENT = 1,
  /* The parsers of 2021-03 .. 2022-04 and 2023-11 .. 2024-03: sizes as
   * "<n> bytes", rows as in the current era.  Also right for ljm 1 and 2,
   * whose streams have no mid-stream symbols to tell print-time naming from
   * event-time naming. */
  MEMREPORT_ERA_BYTES = 2,
  /* The generation-era parser (0b344852 .. 05502eaf, 2022-04 .. 2023-11):
   * sizes as "<n> bytes", and one row per definition ("generation") of the
   * location's symbol: every mid-stream redefinition of a proto or a trace
   * number, and every (re-)dump of the C symbol at the floor address, starts
   * a new row. */
  MEMREPORT_ERA_GENERATION = 3
} memreport_era;

struct memreport_opts {
  int leak_only;         /* --leak-only: HEAP SUMMARY (and ALIASES) only */
  int human_readable;    /* --human-readable: 100B, 2KiB, 2.50KiB, 1MiB */
  memreport_era era;
};

/* "auto", "current", "bytes", "generation" -> era; -1 when unknown. */
int memreport_era_parse(const char *name);

typedef struct memreport memreport;

/* opts may be NULL (defaults: full report, exact sizes, auto era).  NULL only
 * when out of memory. */
memreport *memreport_new(const struct memreport_opts *opts);
/* Feeds one event (any type; memory and symbol events matter).  r is the
 * reader that returned ev.  LJP_OK, or LJP_E_NOMEM (the report stays usable
 * and printable, minus that event). */
ljp_status memreport_add(memreport *m, const ljp_reader *r,
                         const ljp_event *ev);
/* Prints the report.  Order: rows by event count descending, ties by name
 * (bytewise), then by location (addr, line, traceno, generation); HEAP
 * SUMMARY by bytes held descending, ties by name; Overrides by name, as the
 * reference does.  Returns 0, -1 on a write error, -2 when out of memory. */
int memreport_print(memreport *m, FILE *out);
/* The same rows as one JSON object ("allocations", "reallocations",
 * "deallocations", "heap_summary", "aliases"; docs/ljpdump.1), sizes in
 * bytes; no newline after it.  Returns as memreport_print. */
int memreport_print_json(memreport *m, FILE *out);
void memreport_free(memreport *m);
/* Slots of the heap model (address -> live chunk), for tests: it follows
 * the chunks live at once, never the addresses a stream ever used. */
size_t memreport_heap_slots(const memreport *m);

/* ------------------------------------------------------------------------ */
/* sysprof report                                                           */
/* ------------------------------------------------------------------------ */

struct sysreport_opts {
  unsigned top;          /* rows of the function tables; 0 = 20 */
  ljp_flavor flavor;     /* fast-function names; LJP_FLAVOR_AUTO = reader's */
  ljp_trace_mode traces; /* where TRACE samples count (ljp_sample_stack_ex) */
  ljp_srcnames *sources; /* function names from sources, or NULL */
};

typedef struct sysreport sysreport;

sysreport *sysreport_new(const struct sysreport_opts *opts);
/* Feeds one event (samples matter; other events are ignored). */
ljp_status sysreport_add(sysreport *s, const ljp_reader *r,
                         const ljp_event *ev);
/* Prints: samples per VM state with percentages, for x1 streams the
 * samples whose Lua or host stack is incomplete, top functions by self and
 * by total samples, the traces sampled, and the histogram of Lua and host
 * stack depths.  Returns 0, -1 on a write error, -2 when out of memory. */
int sysreport_print(sysreport *s, FILE *out);
/* The same tables as one JSON object ("samples", "vmstates", "incomplete",
 * "top_self", "top_total", "traces", "depths"; docs/ljpdump.1); no newline
 * after it.  Returns as sysreport_print. */
int sysreport_print_json(sysreport *s, FILE *out);
void sysreport_free(sysreport *s);

/* Counts so far, for other outputs (JSON) and tests. */
uint64_t sysreport_samples(const sysreport *s);
uint64_t sysreport_vmstate(const sysreport *s, int vmstate);
/* x1 samples with LJP_SAMPLE_LUA_INCOMPLETE or LJP_SAMPLE_HOST_INCOMPLETE
 * (pass one flag); 0 for other streams. */
uint64_t sysreport_incomplete(const sysreport *s, uint32_t flag);

/* ------------------------------------------------------------------------ */
/* Internal helpers shared by the two report modules (report_mem.c)         */
/* ------------------------------------------------------------------------ */

/* An interning pool of byte strings: equal strings get equal ids 0, 1, ... */
typedef struct rep_strpool rep_strpool;
rep_strpool *rep_strpool_new(void);
void rep_strpool_free(rep_strpool *p);
/* UINT32_MAX when out of memory. */
uint32_t rep_strpool_intern(rep_strpool *p, const char *s, size_t len);
const char *rep_strpool_get(const rep_strpool *p, uint32_t id, size_t *len);
/* Bytewise comparison of two interned strings (shorter prefix first). */
int rep_strpool_cmp(const rep_strpool *p, uint32_t a, uint32_t b);

/* A growable name buffer for ljp_frame_name(). */
typedef struct rep_namebuf {
  char *buf;
  size_t cap;
} rep_namebuf;
/* Formats f into nb; returns the length, or SIZE_MAX when out of memory. */
size_t rep_frame_name(rep_namebuf *nb, const ljp_frame *f,
                      ljp_name_style style, ljp_flavor flavor);
/* As rep_frame_name, with function names from src (NULL: none). */
size_t rep_frame_name_src(rep_namebuf *nb, const ljp_frame *f,
                          ljp_name_style style, ljp_flavor flavor,
                          ljp_srcnames *src);

/* Stable sort of n ids with a context-taking comparator; -1 when out of
 * memory (a is then unchanged). */
int rep_sort_u32(uint32_t *a, size_t n,
                 int (*cmp)(uint32_t, uint32_t, const void *),
                 const void *ctx);

#endif /* LJPDUMP_REPORTS_H */
