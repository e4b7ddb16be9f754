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

static uint64_t mix(uint64_t h, uint64_t v)
{
  h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h;
}

static uint64_t sym_print(uint64_t h, const ljp_symbol *s)
{
  if (!s)
    return mix(h, 0xdeadULL);
  h = mix(h, (uint64_t)s->kind);
  h = mix(h, s->addr);
  h = mix(h, s->line);
  h = mix(h, s->traceno);
  h = mix(h, s->mcode);
  h = mix(h, s->generation);
  h = mix(h, s->name_len);
  return h;
}

static uint64_t frame_print(uint64_t h, const ljp_frame *f)
{
  h = mix(h, (uint64_t)f->kind);
  h = mix(h, f->value);
  h = mix(h, f->line);
  return sym_print(h, f->sym);
}

uint64_t core_event_print(const ljp_event *ev)
{
  uint64_t h = mix(0, (uint64_t)ev->type);
  size_t i;
  h = mix(h, ev->offset);
  switch (ev->type) {
  case LJP_EV_PROLOGUE:
    h = mix(h, ev->u.prologue.version);
    h = mix(h, (uint64_t)(uint8_t)ev->u.prologue.magic[2]);
    h = mix(h, ev->u.prologue.interval_ns);
    h = mix(h, (uint64_t)ev->u.prologue.timer);
    break;
  case LJP_EV_SYMBOL:
    h = mix(h, ev->u.symbol.header);
    h = mix(h, (uint64_t)ev->u.symbol.duplicate);
    h = sym_print(h, ev->u.symbol.sym);
    break;
  case LJP_EV_SAMPLE:
    h = mix(h, (uint64_t)ev->u.sample.vmstate);
    h = mix(h, ev->u.sample.lua_count);
    h = mix(h, ev->u.sample.host_count);
    for (i = 0; i < ev->u.sample.lua_count; i++)
      h = frame_print(h, &ev->u.sample.lua[i]);
    for (i = 0; i < ev->u.sample.host_count; i++)
      h = frame_print(h, &ev->u.sample.host[i]);
    if (ev->u.sample.vmstate == LJP_VMST_TRACE)
      h = frame_print(h, &ev->u.sample.trace);
    if (ev->u.sample.has_time) {
      h = mix(h, ev->u.sample.time_ns);
      h = mix(h, ev->u.sample.coro);
      h = mix(h, ev->u.sample.flags);
    }
    break;
  case LJP_EV_MEMORY:
    h = mix(h, (uint64_t)ev->u.mem.kind);
    h = mix(h, (uint64_t)ev->u.mem.source);
    h = frame_print(h, &ev->u.mem.loc);
    h = mix(h, ev->u.mem.mcode);
    h = mix(h, ev->u.mem.old_addr);
    h = mix(h, ev->u.mem.old_size);
    h = mix(h, ev->u.mem.new_addr);
    h = mix(h, ev->u.mem.new_size);
    break;
  case LJP_EV_EPILOGUE:
    break;
  }
  return h;
}

static void keep_event(core_decode *d, const ljp_event *ev)
{
  if (d->nevents == d->cap) {
    size_t cap = d->cap ? d->cap * 2 : 1024;
    uint8_t *t = realloc(d->types, cap);
    uint64_t *o;
    CORE_CHECK(t != NULL, "out of memory");
    d->types = t;
    o = realloc(d->offsets, cap * sizeof(*o));
    CORE_CHECK(o != NULL, "out of memory");
    d->offsets = o;
    o = realloc(d->prints, cap * sizeof(*o));
    CORE_CHECK(o != NULL, "out of memory");
    d->prints = o;
    d->cap = cap;
  }
  d->types[d->nevents] = (uint8_t)ev->type;
  d->offsets[d->nevents] = ev->offset;
  d->prints[d->nevents] = core_event_print(ev);
}

void core_decode_run(ljp_reader *r, core_decode *d, int keep)
{
  const ljp_event *ev;
  ljp_status st;
  for (;;) {
    st = ljp_reader_next(r, &ev);
    if (st != LJP_OK)
      break;
    CORE_CHECK(ev != NULL, "LJP_OK without an event");
    if (keep)
      keep_event(d, ev);
    d->nevents++;
  }
  d->status = st;
  d->error_offset = ljp_reader_error_offset(r);
  snprintf(d->error, sizeof(d->error), "%s", ljp_reader_error(r));
  d->counters = *ljp_reader_counters(r);
  d->complete = ljp_reader_complete(r);
  d->aliases = ljp_reader_alias_count(r);
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
  free(d->prints);
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
