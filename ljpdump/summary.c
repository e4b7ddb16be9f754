/*
 * summary.c — see summary.h.
 */
#include "summary.h"
#include "cli_names.h"
#include "json.h"

#include <inttypes.h>
#include <string.h>

static const char *kind_name(ljp_kind k) {
  return k == LJP_KIND_MEMPROF   ? "memprof"
         : k == LJP_KIND_SYSPROF ? "sysprof"
                                 : "unknown";
}

static const char *flavor_name(ljp_flavor f) {
  switch (f) {
  case LJP_FLAVOR_LUAJIT: return "luajit";
  case LJP_FLAVOR_OPENRESTY: return "openresty";
  default: return "tarantool";
  }
}

static double pct(uint64_t a, uint64_t b) {
  return b ? 100.0 * (double)a / (double)b : 0.0;
}

static int is_x1(const ljp_reader *r) {
  return ljp_reader_kind(r) == LJP_KIND_SYSPROF &&
         ljp_reader_event_version(r) == LJP_LJP_VERSION_X1;
}

/* Nanoseconds as milliseconds with all six decimals: exact, and the same
 * on every platform (no floating point). */
static void put_ms(FILE *out, uint64_t ns) {
  fprintf(out, "%" PRIu64 ".%06" PRIu64 "ms", ns / 1000000, ns % 1000000);
}

void summary_print_text(const ljp_reader *r, const char *name, int breakdown,
                        FILE *out) {
  const ljp_counters *c = ljp_reader_counters(r);
  ljp_kind kind = ljp_reader_kind(r);
  fprintf(out, "file:       %s\n", name);
  fprintf(out, "kind:       %s\n", kind_name(kind));
  fprintf(out, "versions:   ljs %u", ljp_reader_ljs_version(r));
  if (ljp_reader_ljs_layout(r))
    fprintf(out, "%c", ljp_reader_ljs_layout(r));
  if (is_x1(r))
    fprintf(out, ", ljp x1");
  else if (kind != LJP_KIND_UNKNOWN)
    fprintf(out, ", %s %u", kind == LJP_KIND_MEMPROF ? "ljm" : "ljp",
            ljp_reader_event_version(r));
  fprintf(out, "\n");
  if (kind == LJP_KIND_SYSPROF)
    fprintf(out, "flavor:     %s\n", flavor_name(ljp_reader_flavor(r)));
  if (is_x1(r)) {
    fprintf(out, "timer:      %s\n", ljp_timer_name(ljp_reader_timer(r)));
    fprintf(out, "interval:   ");
    if (ljp_reader_interval_ns(r))
      put_ms(out, ljp_reader_interval_ns(r));
    else
      fprintf(out, "unknown");
    fprintf(out, "\nduration:   ");
    put_ms(out, ljp_reader_time_ns(r));
    fprintf(out, " (capture start to the last sample)\n");
  }
  fprintf(out, "complete:   %s\n", ljp_reader_complete(r) ? "yes" : "no");
  if (ljp_reader_status(r) != LJP_OK && ljp_reader_status(r) != LJP_END)
    fprintf(out, "error:      %s\n", ljp_reader_error(r));
  fprintf(out, "bytes:      %" PRIu64 "\n", ljp_reader_offset(r));
  fprintf(out, "symbols:    %" PRIu64 " Lua, %" PRIu64 " C, %" PRIu64
               " traces in the initial table\n",
          c->symbols_initial[0], c->symbols_initial[1], c->symbols_initial[2]);
  fprintf(out, "mid-stream: %" PRIu64 " Lua, %" PRIu64 " C, %" PRIu64
               " traces (%" PRIu64 " repeats, %" PRIu64
               " trace redefinitions)\n",
          c->symbols_midstream[0], c->symbols_midstream[1],
          c->symbols_midstream[2], c->symbol_duplicates,
          c->trace_redefinitions);
  if (kind == LJP_KIND_SYSPROF) {
    fprintf(out, "samples:    %" PRIu64 "\n", c->samples);
    fprintf(out, "max depth:  %" PRIu64 " Lua, %" PRIu64 " host\n",
            c->max_lua_depth, c->max_host_depth);
    if (is_x1(r)) {
      fprintf(out, "incomplete: %" PRIu64 " Lua, %" PRIu64 " host stacks\n",
              c->lua_incomplete, c->host_incomplete);
      fprintf(out, "coroutines: %" PRIu64 " (the highest id)\n", c->max_coro);
    }
    if (!breakdown)
      return;
    fprintf(out, "\nVM state   samples       %%\n");
    for (int v = 0; v < LJP_VMST__MAX; v++)
      fprintf(out, "%-8s %9" PRIu64 " %6.2f%%\n", ljp_vmstate_name(v),
              c->vmstate[v], pct(c->vmstate[v], c->samples));
  } else if (kind == LJP_KIND_MEMPROF) {
    fprintf(out, "events:     %" PRIu64 "\n", c->mem_events);
    if (!breakdown)
      return;
    fprintf(out, "\nevent       count       %%\n");
    for (int k = LJP_MEM_ALLOC; k <= LJP_MEM_REALLOC; k++)
      fprintf(out, "%-8s %9" PRIu64 " %6.2f%%\n",
              ljp_mem_kind_name((ljp_mem_kind)k), c->mem_kind[k],
              pct(c->mem_kind[k], c->mem_events));
    fprintf(out, "\nsource      count       %%\n");
    for (int s = LJP_SRC_INTERNAL; s <= LJP_SRC_TRACE; s++)
      fprintf(out, "%-8s %9" PRIu64 " %6.2f%%\n",
              ljp_source_name((ljp_source)s), c->mem_source[s],
              pct(c->mem_source[s], c->mem_events));
  }
}

static void json_string(FILE *out, const char *s, size_t n) {
  json_str(out, s, n);
}

static void json_triple(FILE *out, const char *key, const uint64_t v[3]) {
  fprintf(out,
          "  \"%s\": {\"lfunc\": %" PRIu64 ", \"cfunc\": %" PRIu64
          ", \"trace\": %" PRIu64 "},\n",
          key, v[0], v[1], v[2]);
}

int summary_print_json(const ljp_reader *r, const char *name, FILE *out,
                       summary_json_extra extra, void *ctx) {
  const ljp_counters *c = ljp_reader_counters(r);
  ljp_kind kind = ljp_reader_kind(r);
  fprintf(out, "{\n  \"file\": ");
  json_string(out, name, strlen(name));
  fprintf(out, ",\n  \"kind\": ");
  if (kind == LJP_KIND_UNKNOWN)
    fprintf(out, "null");
  else
    fprintf(out, "\"%s\"", kind_name(kind));
  fprintf(out, ",\n  \"versions\": {");
  if (ljp_reader_ljs_version(r))
    fprintf(out, "\"ljs\": %u", ljp_reader_ljs_version(r));
  if (kind != LJP_KIND_UNKNOWN)
    fprintf(out, ", \"%s\": %u", kind == LJP_KIND_MEMPROF ? "ljm" : "ljp",
            ljp_reader_event_version(r));
  fprintf(out, "},\n");
  if (ljp_reader_ljs_layout(r))
    fprintf(out, "  \"ljs_layout\": \"%c\",\n", ljp_reader_ljs_layout(r));
  /* x1 only, so the JSON of every other stream stays as it was. */
  if (is_x1(r))
    fprintf(out,
            "  \"x1\": {\"timer\": \"%s\", \"interval_ns\": %" PRIu64
            ", \"time_ns\": %" PRIu64 ", \"lua_incomplete\": %" PRIu64
            ", \"host_incomplete\": %" PRIu64 ", \"max_coro\": %" PRIu64
            "},\n",
            ljp_timer_name(ljp_reader_timer(r)), ljp_reader_interval_ns(r),
            ljp_reader_time_ns(r), c->lua_incomplete, c->host_incomplete,
            c->max_coro);
  fprintf(out, "  \"flavor\": \"%s\",\n", flavor_name(ljp_reader_flavor(r)));
  fprintf(out, "  \"complete\": %s,\n", ljp_reader_complete(r) ? "true" : "false");
  ljp_status st = ljp_reader_status(r);
  fprintf(out, "  \"error\": ");
  if (st != LJP_OK && st != LJP_END) {
    const char *e = ljp_reader_error(r);
    json_string(out, e, strlen(e));
    fprintf(out, ",\n  \"error_offset\": %" PRIu64, ljp_reader_error_offset(r));
  } else
    fprintf(out, "null");
  fprintf(out, ",\n  \"bytes\": %" PRIu64 ",\n", ljp_reader_offset(r));
  /* A profile's JSON has its own kind's keys only: a sysprof object with
   * "events": {"alloc": 0 ...} would read as a memprof fact. */
  if (kind != LJP_KIND_MEMPROF) {
    fprintf(out, "  \"samples\": %" PRIu64 ",\n  \"vmstates\": {", c->samples);
    for (int v = 0; v < LJP_VMST__MAX; v++)
      fprintf(out, "%s\"%s\": %" PRIu64, v ? ", " : "", ljp_vmstate_name(v),
              c->vmstate[v]);
    fprintf(out, "},\n  \"max_lua_depth\": %" PRIu64
                 ",\n  \"max_host_depth\": %" PRIu64 ",\n",
            c->max_lua_depth, c->max_host_depth);
  }
  if (kind != LJP_KIND_SYSPROF) {
    fprintf(out, "  \"events\": {\"alloc\": %" PRIu64 ", \"realloc\": %" PRIu64
                 ", \"free\": %" PRIu64 "},\n",
            c->mem_kind[LJP_MEM_ALLOC], c->mem_kind[LJP_MEM_REALLOC],
            c->mem_kind[LJP_MEM_FREE]);
    fprintf(out, "  \"sources\": {\"INTERNAL\": %" PRIu64 ", \"LFUNC\": %" PRIu64
                 ", \"CFUNC\": %" PRIu64 ", \"TRACE\": %" PRIu64 "},\n",
            c->mem_source[LJP_SRC_INTERNAL], c->mem_source[LJP_SRC_LFUNC],
            c->mem_source[LJP_SRC_CFUNC], c->mem_source[LJP_SRC_TRACE]);
  }
  json_triple(out, "symbols", c->symbols_initial);
  json_triple(out, "symbol_events", c->symbols_midstream);
  fprintf(out, "  \"symbol_repeats\": %" PRIu64
               ",\n  \"trace_redefinitions\": %" PRIu64,
          c->symbol_duplicates, c->trace_redefinitions);
  int rc = 0;
  if (extra) {
    fputs(",\n  \"report\": ", out);
    rc = extra(ctx, out);
  }
  fputs("\n}\n", out);
  return rc ? rc : ferror(out) ? -1 : 0;
}

/* Names may hold anything (a chunk name is source text): keep one line. */
static void put_escaped(FILE *out, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)s[i];
    if (ch == '\n')
      fputs("\\n", out);
    else if (ch == '\\')
      fputs("\\\\", out);
    else if (ch < 0x20 || ch == 0x7f)
      fprintf(out, "\\x%02x", ch);
    else
      fputc(ch, out);
  }
}

/* The whole name, however long: a name cut short would read as another
 * function's.  Out of memory, the line says so rather than lying. */
static void put_frame(FILE *out, const ljp_frame *f, ljp_flavor flavor) {
  if (cli_put_frame_name(out, f, LJP_NAME_ADDRESSES, flavor, put_escaped))
    fputs("(name: out of memory)", out);
}

int events_print(const ljp_reader *r, const ljp_event *ev, ljp_flavor flavor,
                 FILE *out) {
  (void)r;
  fprintf(out, "%-9" PRIu64 " ", ev->offset);
  switch (ev->type) {
  case LJP_EV_PROLOGUE:
    if (ev->u.prologue.version == LJP_LJP_VERSION_X1 &&
        !strcmp(ev->u.prologue.magic, "ljp")) {
      fprintf(out, "prologue  ljp version x1 (0x81) flavor %02x timer %s "
                   "interval %" PRIu64 "ns\n",
              ev->u.prologue.reserved[0], ljp_timer_name(ev->u.prologue.timer),
              ev->u.prologue.interval_ns);
      break;
    }
    fprintf(out, "prologue  %s version %u reserved %02x %02x %02x\n",
            ev->u.prologue.magic, ev->u.prologue.version,
            ev->u.prologue.reserved[0], ev->u.prologue.reserved[1],
            ev->u.prologue.reserved[2]);
    break;
  case LJP_EV_EPILOGUE:
    fprintf(out, "epilogue\n");
    break;
  case LJP_EV_SYMBOL: {
    const ljp_symbol *s = ev->u.symbol.sym;
    const char *where = ev->u.symbol.initial ? "" : " (mid-stream)";
    if (s->kind == LJP_SYM_LFUNC) {
      fprintf(out, "symbol    lfunc 0x%" PRIx64 " line %" PRIu64 " ", s->addr,
              s->line);
      put_escaped(out, s->name, s->name_len);
    } else if (s->kind == LJP_SYM_CFUNC) {
      fprintf(out, "symbol    cfunc 0x%" PRIx64 " ", s->addr);
      put_escaped(out, s->name, s->name_len);
    } else if (s->kind == LJP_SYM_OBJECT) {
      fprintf(out, "symbol    object 0x%" PRIx64 "-0x%" PRIx64
                   " file-offset 0x%" PRIx64 " ",
              s->addr, s->addr + s->size, s->offset);
      put_escaped(out, s->name, s->name_len);
      if (s->build_id) {
        fputs(" build-id ", out);
        put_escaped(out, s->build_id, s->build_id_len);
      }
    } else {
      fprintf(out, "symbol    trace %" PRIu64 " proto 0x%" PRIx64
                   " line %" PRIu64,
              s->traceno, s->addr, s->line);
      if (s->has_mcode)
        fprintf(out, " mcode 0x%" PRIx64, s->mcode);
    }
    fprintf(out, "%s%s\n", where, ev->u.symbol.duplicate ? " (repeat)" : "");
    break;
  }
  case LJP_EV_SAMPLE: {
    const ljp_sample *s = &ev->u.sample;
    /* A TRACE sample is named by its trace ("sample    TRACE [4] ..."),
     * which already says TRACE. */
    int traced = s->vmstate == LJP_VMST_TRACE;
    if (traced)
      fputs("sample    ", out), put_frame(out, &s->trace, flavor);
    else
      fprintf(out, "sample    %s", ljp_vmstate_name(s->vmstate));
    if (s->has_time) {
      fprintf(out, " t=");
      put_ms(out, s->time_ns);
      fprintf(out, " coro=%" PRIu64, s->coro);
      if (s->flags & LJP_SAMPLE_LUA_INCOMPLETE)
        fprintf(out, " lua-incomplete");
      if (s->flags & LJP_SAMPLE_HOST_INCOMPLETE)
        fprintf(out, " host-incomplete");
    }
    if (traced && !s->has_time) {
      fputc('\n', out);
      break;
    }
    /* x1 samples carry a Lua stack in every state (maybe empty). */
    if (s->has_time ||
        (s->vmstate >= LJP_VMST_LFUNC && s->vmstate <= LJP_VMST_CFUNC)) {
      fprintf(out, " lua=[");
      for (size_t i = s->lua_count; i > 0; i--) {
        put_frame(out, &s->lua[i - 1], flavor);
        if (i > 1)
          fputc(';', out);
      }
      fputc(']', out);
    }
    fprintf(out, " host=[");
    for (size_t i = s->host_count; i > 0; i--) {
      put_frame(out, &s->host[i - 1], flavor);
      if (i > 1)
        fputc(';', out);
    }
    fprintf(out, "]\n");
    break;
  }
  case LJP_EV_MEMORY: {
    const ljp_mem_event *m = &ev->u.mem;
    fprintf(out, "%-9s %s ", ljp_mem_kind_name(m->kind),
            ljp_source_name(m->source));
    if (m->loc.kind != LJP_FRAME_NONE) {
      put_frame(out, &m->loc, flavor);
      fputc(' ', out);
    }
    if (m->kind != LJP_MEM_ALLOC)
      fprintf(out, "old=0x%" PRIx64 "/%" PRIu64, m->old_addr, m->old_size);
    if (m->kind == LJP_MEM_REALLOC)
      fputc(' ', out);
    if (m->kind != LJP_MEM_FREE)
      fprintf(out, "new=0x%" PRIx64 "/%" PRIu64, m->new_addr, m->new_size);
    fputc('\n', out);
    break;
  }
  }
  return ferror(out) ? -1 : 0;
}
