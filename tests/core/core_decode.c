/*
 * core_decode.c — a whole decode in one call, keeping what the checks
 * compare (counters, stream facts, and optionally each event's type and
 * offset for prefix comparisons).
 */
#include "core_util.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void keep_event(core_decode *d, const ljp_event *ev)
{
  if (d->nevents == d->cap) {
    size_t cap = d->cap ? d->cap * 2 : 1024;
    uint8_t *t = realloc(d->types, cap);
    uint64_t *o;
    ck_assert_ptr_nonnull(t);
    d->types = t;
    o = realloc(d->offsets, cap * sizeof(*o));
    ck_assert_ptr_nonnull(o);
    d->offsets = o;
    d->cap = cap;
  }
  d->types[d->nevents] = (uint8_t)ev->type;
  d->offsets[d->nevents] = ev->offset;
}

void core_decode_run(ljp_reader *r, core_decode *d, int keep)
{
  const ljp_event *ev;
  ljp_status st;
  for (;;) {
    st = ljp_reader_next(r, &ev);
    if (st != LJP_OK)
      break;
    ck_assert_ptr_nonnull(ev);
    if (keep)
      keep_event(d, ev);
    d->nevents++;
  }
  d->status = st;
  d->error_offset = ljp_reader_error_offset(r);
  snprintf(d->error, sizeof(d->error), "%s", ljp_reader_error(r));
  d->counters = *ljp_reader_counters(r);
  d->complete = ljp_reader_complete(r);
  d->kind = ljp_reader_kind(r);
  d->ljs_version = ljp_reader_ljs_version(r);
  d->event_version = ljp_reader_event_version(r);
  d->layout = ljp_reader_ljs_layout(r);
  d->flavor = ljp_reader_flavor(r);
}

void core_decode_clear(core_decode *d)
{
  free(d->types);
  free(d->offsets);
  memset(d, 0, sizeof(*d));
}

void core_decode_memory(const void *buf, size_t len, core_decode *d, int keep)
{
  ljp_reader *r = ljp_reader_new();
  ck_assert_ptr_nonnull(r);
  ck_assert_int_eq(ljp_reader_open_memory(r, buf, len), LJP_OK);
  core_decode_run(r, d, keep);
  ljp_reader_free(r);
}
