/*
 * events_json.c — ljpdump --events --format=json: one JSON object per
 * event, one per line (JSON Lines), so that a script reads a huge profile
 * line by line as the text listing is read.
 *
 * Addresses are strings ("0x7f01...") because 64-bit values do not fit a
 * JSON number's exact range in most readers; counts and sizes are numbers.
 * Stacks are arrays of frame names, outermost frame first, as folded
 * stacks read.
 */
#include "cli_names.h"
#include "json.h"
#include "summary.h"

#include <inttypes.h>
#include <string.h>

/* The whole name, however long; out of memory, null stands in for it. */
static void frame(FILE *out, const ljp_frame *f, ljp_flavor flavor) {
  if (cli_put_frame_name(out, f, LJP_NAME_ADDRESSES, flavor, json_str))
    fputs("null", out);
}

/* frames[] is innermost first in the stream: written outermost first. */
static void stack(FILE *out, const char *key, const ljp_frame *frames,
                  size_t n, ljp_flavor flavor) {
  fprintf(out, ", \"%s\": [", key);
  for (size_t i = n; i > 0; i--) {
    frame(out, &frames[i - 1], flavor);
    if (i > 1)
      fputs(", ", out);
  }
  fputc(']', out);
}

static void sample(FILE *out, const ljp_sample *s, ljp_flavor flavor) {
  fputs("\"sample\", \"vmstate\": ", out);
  fprintf(out, "\"%s\"", ljp_vmstate_name(s->vmstate));
  if (s->has_time)
    fprintf(out, ", \"time_ns\": %" PRIu64 ", \"coro\": %" PRIu64
                 ", \"lua_incomplete\": %s, \"host_incomplete\": %s",
            s->time_ns, s->coro,
            s->flags & LJP_SAMPLE_LUA_INCOMPLETE ? "true" : "false",
            s->flags & LJP_SAMPLE_HOST_INCOMPLETE ? "true" : "false");
  if (s->vmstate == LJP_VMST_TRACE) {
    fputs(", \"trace\": ", out);
    frame(out, &s->trace, flavor);
  }
  /* The keys the stream has: ljp 1/2 write a Lua stack for LFUNC..CFUNC
   * only and no stack at all for TRACE; x1 writes both for every state. */
  int has_lua = s->has_time ||
                (s->vmstate >= LJP_VMST_LFUNC && s->vmstate <= LJP_VMST_CFUNC);
  if (has_lua)
    stack(out, "lua", s->lua, s->lua_count, flavor);
  if (s->has_time || s->vmstate != LJP_VMST_TRACE)
    stack(out, "host", s->host, s->host_count, flavor);
}

static void symbol(FILE *out, const ljp_event *ev) {
  const ljp_symbol *s = ev->u.symbol.sym;
  static const char *const kinds[] = {"lfunc", "cfunc", "trace", "object"};
  fprintf(out, "\"symbol\", \"kind\": \"%s\"",
          s->kind <= LJP_SYM_OBJECT ? kinds[s->kind] : "?");
  if (s->kind == LJP_SYM_OBJECT) {
    fprintf(out, ", \"start\": \"0x%" PRIx64 "\", \"size\": %" PRIu64
                 ", \"file_offset\": %" PRIu64 ", \"path\": ",
            s->addr, s->size, s->offset);
    json_str(out, s->name, s->name_len);
    fputs(", \"build_id\": ", out);
    if (s->build_id)
      json_str(out, s->build_id, s->build_id_len);
    else
      fputs("null", out);
  } else if (s->kind == LJP_SYM_TRACE) {
    fprintf(out, ", \"traceno\": %" PRIu64 ", \"proto\": \"0x%" PRIx64
                 "\", \"line\": %" PRIu64,
            s->traceno, s->addr, s->line);
    if (s->has_mcode)
      fprintf(out, ", \"mcode\": \"0x%" PRIx64 "\"", s->mcode);
  } else {
    fprintf(out, ", \"addr\": \"0x%" PRIx64 "\"", s->addr);
    if (s->kind == LJP_SYM_LFUNC)
      fprintf(out, ", \"line\": %" PRIu64, s->line);
    fputs(", \"name\": ", out);
    json_str(out, s->name, s->name_len);
  }
  fprintf(out, ", \"midstream\": %s, \"repeat\": %s",
          ev->u.symbol.initial ? "false" : "true",
          ev->u.symbol.duplicate ? "true" : "false");
}

static void memory(FILE *out, const ljp_mem_event *m, ljp_flavor flavor) {
  fprintf(out, "\"%s\", \"source\": \"%s\"", ljp_mem_kind_name(m->kind),
          ljp_source_name(m->source));
  fputs(", \"location\": ", out);
  if (m->loc.kind != LJP_FRAME_NONE)
    frame(out, &m->loc, flavor);
  else
    fputs("null", out);
  if (m->kind != LJP_MEM_ALLOC)
    fprintf(out, ", \"old_addr\": \"0x%" PRIx64 "\", \"old_size\": %" PRIu64,
            m->old_addr, m->old_size);
  if (m->kind != LJP_MEM_FREE)
    fprintf(out, ", \"new_addr\": \"0x%" PRIx64 "\", \"new_size\": %" PRIu64,
            m->new_addr, m->new_size);
}

int events_print_json(const ljp_reader *r, const ljp_event *ev,
                      ljp_flavor flavor, FILE *out) {
  (void)r;
  fprintf(out, "{\"offset\": %" PRIu64 ", \"event\": ", ev->offset);
  switch (ev->type) {
  case LJP_EV_PROLOGUE: {
    const char *m = ev->u.prologue.magic;
    fputs("\"prologue\", \"stream\": ", out);
    json_str(out, m, strlen(m));
    if (ev->u.prologue.version == LJP_LJP_VERSION_X1 && !strcmp(m, "ljp"))
      fprintf(out, ", \"version\": \"x1\", \"flavor\": %u, \"timer\": \"%s\", "
                   "\"interval_ns\": %" PRIu64,
              ev->u.prologue.reserved[0], ljp_timer_name(ev->u.prologue.timer),
              ev->u.prologue.interval_ns);
    else
      fprintf(out, ", \"version\": %u, \"reserved\": [%u, %u, %u]",
              ev->u.prologue.version, ev->u.prologue.reserved[0],
              ev->u.prologue.reserved[1], ev->u.prologue.reserved[2]);
    break;
  }
  case LJP_EV_EPILOGUE:
    fputs("\"epilogue\"", out);
    break;
  case LJP_EV_SYMBOL:
    symbol(out, ev);
    break;
  case LJP_EV_SAMPLE:
    sample(out, &ev->u.sample, flavor);
    break;
  case LJP_EV_MEMORY:
    memory(out, &ev->u.mem, flavor);
    break;
  }
  fputs("}\n", out);
  return ferror(out) ? -1 : 0;
}
