/*
 * cap_tracenames.c — host addresses inside JIT machine code named as their
 * trace.
 *
 * A host frame inside a trace's machine code (a C function called from the
 * trace: an FFI call, a helper) otherwise reads "0x55d0c3a1f2c0".  Readers
 * resolve C addresses by floor over the C symbol events, so a trace whose
 * code is [lo, hi) gets two events: its name at lo, "TRACE [7] @a.lua:12",
 * and an end marker at hi, so that addresses after the trace do not inherit
 * the name.  Events are written lazily, the first time an address of the
 * range is met, and only once per range.
 *
 * LuaJIT reuses machine-code areas after a flush, so a new range replaces
 * the ones it overlaps, and every address inside it where an event was
 * written before (an old trace's start or end, a raw-address fallback:
 * "marks") gets the new name again: later events win in stream order.
 * An end marker is not written where a trace already named starts.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cap_internal.h"
#include "cap_names.h"

typedef struct range {
  uint64_t lo, hi;
  uint64_t proto, line;
  uint32_t traceno;
  int emitted;
} range;

static range *rv;           /* sorted by lo, disjoint */
static size_t nr, capr;
static uint64_t span_hi;    /* max hi of the ranges */
static uint64_t *marks;     /* sorted, unique */
static size_t nm, capm;

/* Index of the first range with lo > pc. */
static size_t upper(uint64_t pc)
{
  size_t lo = 0, hi = nr;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (rv[mid].lo <= pc)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static range *find(uint64_t pc)
{
  size_t i;
  /* Most host frames lie in no machine code: one comparison each. */
  if (nr == 0 || pc < rv[0].lo || pc >= span_hi)
    return NULL;
  i = upper(pc);
  return i > 0 && pc < rv[i - 1].hi ? &rv[i - 1] : NULL;
}

int ljp__cap_tracenames_add(uint32_t traceno, uint64_t lo, uint64_t hi,
                            uint64_t proto, uint64_t line)
{
  size_t i, j;
  if (hi <= lo)
    return 0;
  /* Drop the ranges [lo, hi) overlaps, and an older range of the same
   * trace number (a trace number is reused after a flush). */
  for (i = j = 0; i < nr; i++)
    if (!(rv[i].lo < hi && lo < rv[i].hi) && rv[i].traceno != traceno)
      rv[j++] = rv[i];
  nr = j;
  if (nr == capr) {
    size_t nc = capr ? capr * 2 : 64;
    range *n = realloc(rv, nc * sizeof *n);
    if (!n)
      return -1;
    rv = n;
    capr = nc;
  }
  i = upper(lo);
  memmove(&rv[i + 1], &rv[i], (nr - i) * sizeof *rv);
  rv[i].lo = lo;
  rv[i].hi = hi;
  rv[i].proto = proto;
  rv[i].line = line;
  rv[i].traceno = traceno;
  rv[i].emitted = 0;
  nr++;
  for (span_hi = 0, j = 0; j < nr; j++)
    if (rv[j].hi > span_hi)
      span_hi = rv[j].hi;
  return 0;
}

int ljp__cap_tracenames_mark(uint64_t addr)
{
  size_t lo = 0, hi = nm;
  while (lo < hi) {            /* first mark >= addr */
    size_t mid = lo + (hi - lo) / 2;
    if (marks[mid] < addr)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo < nm && marks[lo] == addr)
    return 0;
  if (nm == capm) {
    size_t nc = capm ? capm * 2 : 256;
    uint64_t *n = realloc(marks, nc * sizeof *n);
    if (!n)
      return -1;
    marks = n;
    capm = nc;
  }
  memmove(&marks[lo + 1], &marks[lo], (nm - lo) * sizeof *marks);
  marks[lo] = addr;
  nm++;
  return 0;
}

/* "TRACE [7] @a.lua:12": the chunk up to its first newline (chunks that are
 * source text), cut to keep the name short. */
static int trace_name(const range *r, char *buf, size_t len)
{
  const char *chunk = ljp__cap_ids_lfunc_chunk(r->proto);
  size_t cl;
  int n;
  if (!chunk)
    chunk = "?";
  cl = strcspn(chunk, "\n");
  if (cl > 200)
    cl = 200;
  n = snprintf(buf, len, "TRACE [%" PRIu32 "] %.*s:%" PRIu64, r->traceno,
               (int)cl, chunk, r->line);
  if (n < 0)
    n = 0;
  return (size_t)n < len ? n : (int)len - 1;
}

int ljp__cap_tracenames_emit(ljp_writer *w, uint64_t pc, ljp_status *st)
{
  range *r = find(pc), *next;
  char buf[320];
  size_t i, n;
  *st = LJP_OK;
  if (!r)
    return 0;
  if (r->emitted)
    return 1;
  r->emitted = 1;
  n = (size_t)trace_name(r, buf, sizeof buf);
  *st = ljp_write_event_cfunc(w, r->lo, buf, n);
  ljp__cap_tracenames_mark(r->lo);
  /* Older events inside the range would shadow the name for the addresses
   * above them. */
  for (i = 0; i < nm && *st == LJP_OK; i++)
    if (marks[i] > r->lo && marks[i] < r->hi)
      *st = ljp_write_event_cfunc(w, marks[i], buf, n);
  next = find(r->hi);
  if (*st == LJP_OK && !(next && next->lo == r->hi && next->emitted)) {
    *st = ljp_write_event_cfunc(w, r->hi, CAP_MCODE_END_NAME,
                                sizeof CAP_MCODE_END_NAME - 1);
    ljp__cap_tracenames_mark(r->hi);
  }
  return 1;
}

void ljp__cap_tracenames_free(void)
{
  free(rv);
  free(marks);
  rv = NULL;
  marks = NULL;
  nr = capr = nm = capm = 0;
  span_hi = 0;
}
