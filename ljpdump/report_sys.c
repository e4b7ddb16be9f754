/*
 * report_sys.c — the sysprof report of ljpdump, built incrementally from
 * reader samples: samples per VM state, top functions by self and total
 * samples, the traces sampled, and the distribution of stack depths.
 *
 * Functions are identified by their toolkit-style name (LJP_NAME_DEFAULT)
 * of the merged stack (LJP_VIEW_MERGED): two frames with the same name are
 * the same function.  A sample with an empty merged stack is charged to a
 * pseudo function "[<VMSTATE>]", so self samples always add up to the total.
 * Names are cached per distinct frame (kind, value, line and the symbols it
 * resolved to), so a deep stack costs hash probes, not formatting.
 */
#include "cli_hash.h"
#include "json.h"
#include "reports.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define NONE32 UINT32_MAX
#define DEFAULT_TOP 20u
/* Depth buckets: 0, 1, 2-3, 4-7, ..., 2^k .. 2^(k+1)-1. */
#define NBUCKETS 66

struct fkey {                 /* a frame, as far as its name depends on it */
  uint64_t kind, value, line;
  const ljp_symbol *sym, *proto;
};

struct fcache {
  struct fkey k;
  uint64_t hash;
  uint32_t name;
  int used;
};

struct func {                 /* indexed by name id */
  uint64_t self, total;
  uint64_t stamp;             /* last sample counted in total */
};

struct trace {
  uint64_t traceno, samples;
  uint32_t start;             /* name id of the start location */
  int used;
};

struct sysreport {
  struct sysreport_opts opt;
  uint64_t samples;
  uint64_t timed;             /* x1 samples (with time, coroutine, flags) */
  uint64_t lua_incomplete, host_incomplete;
  uint64_t vm[LJP_VMST__MAX];
  uint64_t lua_depth[NBUCKETS], host_depth[NBUCKETS];

  rep_strpool *names;
  rep_namebuf nb;
  ljp_frame *frames;
  size_t capframes;

  struct fcache *cache;
  size_t ncache, ncacheslots;

  struct func *funcs;
  size_t capfuncs;

  struct trace *traces;
  size_t ntraces, ntraceslots;
};

sysreport *sysreport_new(const struct sysreport_opts *opts)
{
  sysreport *s = calloc(1, sizeof *s);
  if (!s)
    return NULL;
  if (opts)
    s->opt = *opts;
  else
    s->opt.flavor = LJP_FLAVOR_AUTO;
  if (!s->opt.top)
    s->opt.top = DEFAULT_TOP;
  s->names = rep_strpool_new();
  if (!s->names) {
    free(s);
    return NULL;
  }
  return s;
}

void sysreport_free(sysreport *s)
{
  if (!s)
    return;
  rep_strpool_free(s->names);
  free(s->nb.buf);
  free(s->frames);
  free(s->cache);
  free(s->funcs);
  free(s->traces);
  free(s);
}

uint64_t sysreport_samples(const sysreport *s)
{
  return s ? s->samples : 0;
}

uint64_t sysreport_incomplete(const sysreport *s, uint32_t flag)
{
  if (!s)
    return 0;
  return flag == LJP_SAMPLE_LUA_INCOMPLETE    ? s->lua_incomplete
         : flag == LJP_SAMPLE_HOST_INCOMPLETE ? s->host_incomplete
                                              : 0;
}

uint64_t sysreport_vmstate(const sysreport *s, int vmstate)
{
  if (!s || vmstate < 0 || vmstate >= LJP_VMST__MAX)
    return 0;
  return s->vm[vmstate];
}

static unsigned bucket(size_t depth)
{
  unsigned b = 0;
  while (depth) {
    depth >>= 1;
    b++;
  }
  return b; /* 0 -> 0, 1 -> 1, 2..3 -> 2, 4..7 -> 3, ... */
}

/* Interns a name; makes sure funcs[] covers its id. */
static uint32_t intern(sysreport *s, const char *p, size_t len)
{
  uint32_t id = rep_strpool_intern(s->names, p, len);
  if (id == NONE32)
    return NONE32;
  if (id >= s->capfuncs) {
    size_t n = s->capfuncs ? s->capfuncs * 2 : 256;
    while (n <= id)
      n *= 2;
    struct func *f = realloc(s->funcs, n * sizeof *f);
    if (!f)
      return NONE32;
    memset(f + s->capfuncs, 0, (n - s->capfuncs) * sizeof *f);
    s->funcs = f;
    s->capfuncs = n;
  }
  return id;
}

static uint64_t fkey_hash(const struct fkey *k)
{
  uint64_t h = ljp_hash64(k->kind * 0x9e3779b97f4a7c15ULL ^ k->value);
  h = ljp_hash64(h ^ k->line);
  h = ljp_hash64(h ^ (uint64_t)(uintptr_t)k->sym);
  return ljp_hash64(h ^ (uint64_t)(uintptr_t)k->proto);
}

static int cache_grow(sysreport *s)
{
  size_t n = s->ncacheslots ? s->ncacheslots * 2 : 1024;
  struct fcache *c = calloc(n, sizeof *c);
  if (!c)
    return -1;
  for (size_t i = 0; i < s->ncacheslots; i++) {
    if (!s->cache[i].used)
      continue;
    size_t j = s->cache[i].hash & (n - 1);
    while (c[j].used)
      j = (j + 1) & (n - 1);
    c[j] = s->cache[i];
  }
  free(s->cache);
  s->cache = c;
  s->ncacheslots = n;
  return 0;
}

static uint32_t frame_name(sysreport *s, const ljp_frame *f, ljp_flavor fl)
{
  struct fkey k;
  memset(&k, 0, sizeof k);
  k.kind = f->kind;
  k.value = f->value;
  k.line = f->line;
  k.sym = f->sym;
  k.proto = f->proto;
  uint64_t h = fkey_hash(&k);
  if (s->ncacheslots) {
    size_t j = h & (s->ncacheslots - 1);
    while (s->cache[j].used) {
      const struct fcache *c = &s->cache[j];
      if (c->hash == h && c->k.kind == k.kind && c->k.value == k.value &&
          c->k.line == k.line && c->k.sym == k.sym && c->k.proto == k.proto)
        return c->name;
      j = (j + 1) & (s->ncacheslots - 1);
    }
  }
  size_t n = rep_frame_name_src(&s->nb, f, LJP_NAME_DEFAULT, fl,
                                s->opt.sources);
  if (n == SIZE_MAX)
    return NONE32;
  uint32_t id = intern(s, s->nb.buf, n);
  if (id == NONE32)
    return NONE32;
  if ((s->ncache + 1) * 2 > s->ncacheslots && cache_grow(s) != 0)
    return NONE32;
  size_t j = h & (s->ncacheslots - 1);
  while (s->cache[j].used)
    j = (j + 1) & (s->ncacheslots - 1);
  s->cache[j].k = k;
  s->cache[j].hash = h;
  s->cache[j].name = id;
  s->cache[j].used = 1;
  s->ncache++;
  return id;
}

/* The start location of a TRACE sample's trace: the trace symbol's start
 * (proto, start line) when known, else the proto and first line the sample
 * itself carries. */
static uint32_t trace_start(sysreport *s, const ljp_frame *t, ljp_flavor fl)
{
  ljp_frame st;
  memset(&st, 0, sizeof st);
  st.kind = LJP_FRAME_LUA;
  st.sym = t->proto;
  if (t->sym && t->sym->kind == LJP_SYM_TRACE) {
    st.value = t->sym->addr;
    st.line = t->sym->line;
  } else if (t->proto) {
    st.value = t->proto->addr;
    st.line = t->line;
  } else {
    return intern(s, "?", 1);
  }
  return frame_name(s, &st, fl);
}

static ljp_status add_trace(sysreport *s, uint64_t traceno, uint32_t start)
{
  uint64_t h = ljp_hash64(traceno * 31 + start);
  if (s->ntraceslots) {
    size_t j = h & (s->ntraceslots - 1);
    while (s->traces[j].used) {
      if (s->traces[j].traceno == traceno && s->traces[j].start == start) {
        s->traces[j].samples++;
        return LJP_OK;
      }
      j = (j + 1) & (s->ntraceslots - 1);
    }
  }
  if ((s->ntraces + 1) * 2 > s->ntraceslots) {
    size_t n = s->ntraceslots ? s->ntraceslots * 2 : 64;
    struct trace *t = calloc(n, sizeof *t);
    if (!t)
      return LJP_E_NOMEM;
    for (size_t i = 0; i < s->ntraceslots; i++) {
      if (!s->traces[i].used)
        continue;
      size_t j = ljp_hash64(s->traces[i].traceno * 31 + s->traces[i].start) & (n - 1);
      while (t[j].used)
        j = (j + 1) & (n - 1);
      t[j] = s->traces[i];
    }
    free(s->traces);
    s->traces = t;
    s->ntraceslots = n;
  }
  size_t j = h & (s->ntraceslots - 1);
  while (s->traces[j].used)
    j = (j + 1) & (s->ntraceslots - 1);
  s->traces[j].used = 1;
  s->traces[j].traceno = traceno;
  s->traces[j].start = start;
  s->traces[j].samples = 1;
  s->ntraces++;
  return LJP_OK;
}

ljp_status sysreport_add(sysreport *s, const ljp_reader *r,
                         const ljp_event *ev)
{
  if (!s || !ev)
    return LJP_E_ARG;
  if (ev->type != LJP_EV_SAMPLE)
    return LJP_OK;
  const ljp_sample *smp = &ev->u.sample;
  ljp_flavor fl = s->opt.flavor;
  if (fl == LJP_FLAVOR_AUTO)
    fl = r ? ljp_reader_flavor(r) : LJP_FLAVOR_TARANTOOL;

  s->samples++;
  if (smp->vmstate >= 0 && smp->vmstate < LJP_VMST__MAX)
    s->vm[smp->vmstate]++;
  s->lua_depth[bucket(smp->lua_count)]++;
  s->host_depth[bucket(smp->host_count)]++;
  if (smp->has_time) {
    s->timed++;
    if (smp->flags & LJP_SAMPLE_LUA_INCOMPLETE)
      s->lua_incomplete++;
  }
  /* x1 samples say whether the host stack was cut; for older streams the
   * library decides from the frames, as the flame graphs do. */
  if (ljp_sample_host_incomplete(smp))
    s->host_incomplete++;

  ljp_stack_options so = {LJP_VIEW_MERGED, s->opt.traces};
  size_t n = ljp_sample_stack_ex(smp, &so, s->frames, s->capframes);
  if (n > s->capframes) {
    size_t cap = s->capframes ? s->capframes : 64;
    while (cap < n)
      cap *= 2;
    ljp_frame *f = realloc(s->frames, cap * sizeof *f);
    if (!f)
      return LJP_E_NOMEM;
    s->frames = f;
    s->capframes = cap;
    n = ljp_sample_stack_ex(smp, &so, s->frames, s->capframes);
    if (n > s->capframes)
      n = s->capframes;
  }

  if (n == 0) {
    char buf[32];
    int len = snprintf(buf, sizeof buf, "[%s]",
                       ljp_vmstate_name(smp->vmstate));
    uint32_t id = intern(s, buf, (size_t)len);
    if (id == NONE32)
      return LJP_E_NOMEM;
    s->funcs[id].self++;
    s->funcs[id].total++;
    s->funcs[id].stamp = s->samples;
  } else {
    /* frames[] runs outermost first: the leaf is the last. */
    for (size_t i = 0; i < n; i++) {
      uint32_t id = frame_name(s, &s->frames[i], fl);
      if (id == NONE32)
        return LJP_E_NOMEM;
      struct func *f = &s->funcs[id];
      if (i + 1 == n)
        f->self++;
      if (f->stamp != s->samples) { /* once per sample, recursion or not */
        f->stamp = s->samples;
        f->total++;
      }
    }
  }

  if (smp->vmstate == LJP_VMST_TRACE && smp->trace.kind == LJP_FRAME_TRACE) {
    uint32_t start = trace_start(s, &smp->trace, fl);
    if (start == NONE32)
      return LJP_E_NOMEM;
    return add_trace(s, smp->trace.value, start);
  }
  return LJP_OK;
}

/* --- printing ------------------------------------------------------------- */

static double pct(uint64_t part, uint64_t whole)
{
  return whole ? (double)part * 100.0 / (double)whole : 0.0;
}

static void put_name(const sysreport *s, uint32_t id, FILE *out)
{
  size_t len;
  const char *p = rep_strpool_get(s->names, id, &len);
  fwrite(p, 1, len, out);
}

static int cmp_self(uint32_t a, uint32_t b, const void *ctx)
{
  const sysreport *s = ctx;
  if (s->funcs[a].self != s->funcs[b].self)
    return s->funcs[a].self > s->funcs[b].self ? -1 : 1;
  return rep_strpool_cmp(s->names, a, b);
}

static int cmp_total(uint32_t a, uint32_t b, const void *ctx)
{
  const sysreport *s = ctx;
  if (s->funcs[a].total != s->funcs[b].total)
    return s->funcs[a].total > s->funcs[b].total ? -1 : 1;
  if (s->funcs[a].self != s->funcs[b].self)
    return s->funcs[a].self > s->funcs[b].self ? -1 : 1;
  return rep_strpool_cmp(s->names, a, b);
}

static int cmp_trace(uint32_t a, uint32_t b, const void *ctx)
{
  const sysreport *s = ctx;
  const struct trace *x = &s->traces[a], *y = &s->traces[b];
  if (x->samples != y->samples)
    return x->samples > y->samples ? -1 : 1;
  if (x->traceno != y->traceno)
    return x->traceno < y->traceno ? -1 : 1;
  return rep_strpool_cmp(s->names, x->start, y->start);
}

static int print_funcs(sysreport *s, int by_total, FILE *out)
{
  size_t nn = 0;
  uint32_t *ids = malloc((s->capfuncs ? s->capfuncs : 1) * sizeof *ids);
  if (!ids)
    return -2;
  for (size_t i = 0; i < s->capfuncs; i++)
    if (by_total ? s->funcs[i].total : s->funcs[i].self)
      ids[nn++] = (uint32_t)i;
  if (rep_sort_u32(ids, nn, by_total ? cmp_total : cmp_self, s) != 0) {
    free(ids);
    return -2;
  }
  fprintf(out, "TOP FUNCTIONS BY %s SAMPLES\n", by_total ? "TOTAL" : "SELF");
  fprintf(out, "%10s %8s  %s\n", by_total ? "total" : "self", "%",
          "function");
  for (size_t i = 0; i < nn && i < s->opt.top; i++) {
    uint64_t v = by_total ? s->funcs[ids[i]].total : s->funcs[ids[i]].self;
    fprintf(out, "%10" PRIu64 " %7.2f%%  ", v, pct(v, s->samples));
    put_name(s, ids[i], out);
    fputc('\n', out);
  }
  if (nn > s->opt.top)
    fprintf(out, "(%zu more)\n", nn - s->opt.top);
  fputc('\n', out);
  free(ids);
  return 0;
}

static int print_traces(sysreport *s, FILE *out)
{
  size_t n = 0;
  uint32_t *ids = malloc((s->ntraceslots ? s->ntraceslots : 1) * sizeof *ids);
  if (!ids)
    return -2;
  for (size_t i = 0; i < s->ntraceslots; i++)
    if (s->traces[i].used)
      ids[n++] = (uint32_t)i;
  if (rep_sort_u32(ids, n, cmp_trace, s) != 0) {
    free(ids);
    return -2;
  }
  fputs("TRACES\n", out);
  fprintf(out, "%10s %8s %7s  %s\n", "samples", "%", "trace", "start");
  for (size_t i = 0; i < n; i++) {
    const struct trace *t = &s->traces[ids[i]];
    fprintf(out, "%10" PRIu64 " %7.2f%% %7" PRIu64 "  ", t->samples,
            pct(t->samples, s->samples), t->traceno);
    put_name(s, t->start, out);
    fputc('\n', out);
  }
  fputc('\n', out);
  free(ids);
  return 0;
}

static void print_depths(const sysreport *s, FILE *out)
{
  unsigned last = 0;
  for (unsigned b = 0; b < NBUCKETS; b++)
    if (s->lua_depth[b] || s->host_depth[b])
      last = b;
  fputs("STACK DEPTH\n", out);
  fprintf(out, "%-22s %10s %10s\n", "depth", "lua", "host");
  for (unsigned b = 0; b <= last; b++) {
    char range[48];
    if (b < 2)
      snprintf(range, sizeof range, "%u", b);
    else
      snprintf(range, sizeof range, "%" PRIu64 "-%" PRIu64,
               (uint64_t)1 << (b - 1),
               b == 64 ? UINT64_MAX : ((uint64_t)1 << b) - 1);
    fprintf(out, "%-22s %10" PRIu64 " %10" PRIu64 "\n", range,
            s->lua_depth[b], s->host_depth[b]);
  }
}

int sysreport_print(sysreport *s, FILE *out)
{
  if (!s || !out)
    return -1;
  fprintf(out, "SAMPLES: %" PRIu64 "\n\n", s->samples);
  fputs("VM STATES\n", out);
  fprintf(out, "%-8s %10s %8s\n", "state", "samples", "%");
  for (int v = 0; v < LJP_VMST__MAX; v++)
    fprintf(out, "%-8s %10" PRIu64 " %7.2f%%\n", ljp_vmstate_name(v), s->vm[v],
            pct(s->vm[v], s->samples));
  fputc('\n', out);
  /* x1 streams say whether a stack was cut; for older streams only host
   * stacks that miss their root are known (the Lua row would be a guess),
   * and reports without any keep their exact form. */
  if (s->timed || s->host_incomplete) {
    fputs("INCOMPLETE STACKS\n", out);
    fprintf(out, "%-8s %10s %8s\n", "stack", "samples", "%");
    if (s->timed)
      fprintf(out, "%-8s %10" PRIu64 " %7.2f%%\n", "lua", s->lua_incomplete,
              pct(s->lua_incomplete, s->samples));
    fprintf(out, "%-8s %10" PRIu64 " %7.2f%%\n", "host", s->host_incomplete,
            pct(s->host_incomplete, s->samples));
    fputc('\n', out);
  }
  int rc = print_funcs(s, 0, out);
  if (rc == 0)
    rc = print_funcs(s, 1, out);
  if (rc == 0)
    rc = print_traces(s, out);
  if (rc == 0)
    print_depths(s, out);
  if (rc == 0 && (ferror(out) || fflush(out) != 0))
    rc = -1;
  return rc;
}

/* --- JSON ----------------------------------------------------------------- */

/* The report as one JSON object (ljpdump --format=json, key "report"):
 * the same tables as the text, in the same order, with exact counts. */

static void json_name(const sysreport *s, uint32_t id, FILE *out)
{
  size_t len;
  const char *p = rep_strpool_get(s->names, id, &len);
  json_str(out, p, len);
}

static int json_funcs(sysreport *s, int by_total, FILE *out)
{
  size_t nn = 0;
  uint32_t *ids = malloc((s->capfuncs ? s->capfuncs : 1) * sizeof *ids);
  if (!ids)
    return -2;
  for (size_t i = 0; i < s->capfuncs; i++)
    if (by_total ? s->funcs[i].total : s->funcs[i].self)
      ids[nn++] = (uint32_t)i;
  if (rep_sort_u32(ids, nn, by_total ? cmp_total : cmp_self, s) != 0) {
    free(ids);
    return -2;
  }
  fprintf(out, "    \"%s\": [", by_total ? "top_total" : "top_self");
  for (size_t i = 0; i < nn && i < s->opt.top; i++) {
    const struct func *f = &s->funcs[ids[i]];
    fputs(i ? ",\n      {\"function\": " : "\n      {\"function\": ", out);
    json_name(s, ids[i], out);
    fprintf(out, ", \"self\": %" PRIu64 ", \"total\": %" PRIu64 "}", f->self,
            f->total);
  }
  fprintf(out, "%s],\n    \"%s\": %zu,\n", nn && s->opt.top ? "\n    " : "",
          by_total ? "functions_with_total" : "functions_with_self", nn);
  free(ids);
  return 0;
}

static int json_traces(sysreport *s, FILE *out)
{
  size_t n = 0;
  uint32_t *ids = malloc((s->ntraceslots ? s->ntraceslots : 1) * sizeof *ids);
  if (!ids)
    return -2;
  for (size_t i = 0; i < s->ntraceslots; i++)
    if (s->traces[i].used)
      ids[n++] = (uint32_t)i;
  if (rep_sort_u32(ids, n, cmp_trace, s) != 0) {
    free(ids);
    return -2;
  }
  fputs("    \"traces\": [", out);
  for (size_t i = 0; i < n; i++) {
    const struct trace *t = &s->traces[ids[i]];
    fprintf(out, "%s{\"trace\": %" PRIu64 ", \"start\": ",
            i ? ",\n      " : "\n      ", t->traceno);
    json_name(s, t->start, out);
    fprintf(out, ", \"samples\": %" PRIu64 "}", t->samples);
  }
  fputs(n ? "\n    ],\n" : "],\n", out);
  free(ids);
  return 0;
}

static void json_depths(const sysreport *s, FILE *out)
{
  unsigned last = 0;
  for (unsigned b = 0; b < NBUCKETS; b++)
    if (s->lua_depth[b] || s->host_depth[b])
      last = b;
  fputs("    \"depths\": [", out);
  for (unsigned b = 0; b <= last; b++) {
    uint64_t lo = b < 2 ? b : (uint64_t)1 << (b - 1);
    uint64_t hi = b < 2 ? b : b == 64 ? UINT64_MAX : ((uint64_t)1 << b) - 1;
    fprintf(out, "%s{\"min\": %" PRIu64 ", \"max\": %" PRIu64
                 ", \"lua\": %" PRIu64 ", \"host\": %" PRIu64 "}",
            b ? ",\n      " : "\n      ", lo, hi, s->lua_depth[b],
            s->host_depth[b]);
  }
  fputs("\n    ]", out);
}

int sysreport_print_json(sysreport *s, FILE *out)
{
  if (!s || !out)
    return -1;
  fprintf(out, "{\n    \"samples\": %" PRIu64 ",\n    \"vmstates\": {",
          s->samples);
  for (int v = 0; v < LJP_VMST__MAX; v++)
    fprintf(out, "%s\"%s\": %" PRIu64, v ? ", " : "", ljp_vmstate_name(v),
            s->vm[v]);
  fputs("},\n", out);
  /* As the text: the Lua count is known for x1 streams only (null). */
  fputs("    \"incomplete\": {\"lua\": ", out);
  if (s->timed)
    fprintf(out, "%" PRIu64, s->lua_incomplete);
  else
    fputs("null", out);
  fprintf(out, ", \"host\": %" PRIu64 "},\n", s->host_incomplete);
  fprintf(out, "    \"top\": %u,\n", s->opt.top);
  int rc = json_funcs(s, 0, out);
  if (rc == 0)
    rc = json_funcs(s, 1, out);
  if (rc == 0)
    rc = json_traces(s, out);
  if (rc == 0) {
    json_depths(s, out);
    fputs("\n  }", out);
  }
  if (rc == 0 && ferror(out))
    rc = -1;
  return rc;
}
