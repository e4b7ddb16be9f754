/*
 * report_sys.c — the sysprof report of ljpdump, built incrementally from
 * reader samples: samples per VM state, top functions by self and total
 * samples, the traces sampled, and the distribution of stack depths.
 *
 * The functions come from the profile model every output reads: the
 * samples are folded into a call tree (merged view, toolkit-style names,
 * LJP_VMSTATE_NONE so that a sample with an empty stack gets its VM-state
 * frame, printed "[<STATE>]"), and the function table is the tree's rollup
 * at print time.  Two frames with the same printed name are the same
 * function, as they always were here, even where the tree tells them apart
 * by class (a Lua-C function and the host frame of the same C symbol).
 * The per-sample counters and the traces table are the report's own.
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
/* Trace start names are cached per (trace symbol, proto, line): a small
 * direct-mapped cache, since a profile samples few traces at a time. */
#define TSTART_SLOTS 64

struct trace {
  uint64_t traceno, samples;
  uint32_t start;             /* name id of the start location */
  int used;
};

struct tstart {
  const ljp_symbol *sym, *proto;
  uint64_t line;
  uint32_t name;
  int used;
};

struct sysreport {
  struct sysreport_opts opt;
  uint64_t samples;
  uint64_t timed;             /* x1 samples (with time, coroutine, flags) */
  uint64_t lua_incomplete, host_incomplete;
  uint64_t vm[LJP_VMST__MAX];
  uint64_t lua_depth[NBUCKETS], host_depth[NBUCKETS];

  ljp_tree *tree;
  ljp_folder *folder;

  rep_strpool *starts;        /* names of trace start locations */
  rep_namebuf nb;
  struct tstart tcache[TSTART_SLOTS];
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
  ljp_fold_options fo;
  memset(&fo, 0, sizeof fo);
  fo.view = LJP_VIEW_MERGED;
  fo.style = LJP_NAME_DEFAULT;
  fo.weight = LJP_WEIGHT_SAMPLES;
  fo.vmstate = LJP_VMSTATE_NONE;
  fo.flavor = s->opt.flavor;
  fo.traces = s->opt.traces;
  fo.sources = s->opt.sources;
  s->tree = ljp_tree_new();
  s->folder = s->tree ? ljp_folder_new(s->tree, &fo) : NULL;
  s->starts = rep_strpool_new();
  if (!s->folder || !s->starts) {
    sysreport_free(s);
    return NULL;
  }
  return s;
}

void sysreport_free(sysreport *s)
{
  if (!s)
    return;
  ljp_folder_free(s->folder);
  ljp_tree_free(s->tree);
  rep_strpool_free(s->starts);
  free(s->nb.buf);
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

/* The start location of a TRACE sample's trace: the trace symbol's start
 * (proto, start line) when known, else the proto and first line the sample
 * itself carries. */
static uint32_t trace_start(sysreport *s, const ljp_frame *t, ljp_flavor fl)
{
  uint64_t h = ljp_hash64((uint64_t)(uintptr_t)t->sym ^
                          ljp_hash64((uint64_t)(uintptr_t)t->proto ^ t->line));
  struct tstart *c = &s->tcache[h & (TSTART_SLOTS - 1)];
  if (c->used && c->sym == t->sym && c->proto == t->proto &&
      c->line == t->line)
    return c->name;
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
    return rep_strpool_intern(s->starts, "?", 1);
  }
  size_t n = rep_frame_name_src(&s->nb, &st, LJP_NAME_DEFAULT, fl,
                                s->opt.sources);
  if (n == SIZE_MAX)
    return NONE32;
  uint32_t id = rep_strpool_intern(s->starts, s->nb.buf, n);
  if (id == NONE32)
    return NONE32;
  c->sym = t->sym;
  c->proto = t->proto;
  c->line = t->line;
  c->name = id;
  c->used = 1;
  return id;
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
  /* The fold result describes the sample even when the tree could not
   * take it (out of memory): the counters stay exact. */
  ljp_fold_sample fs;
  ljp_status st = ljp_folder_add_ex(s->folder, r, ev, &fs);

  s->samples++;
  if (fs.vmstate >= 0 && fs.vmstate < LJP_VMST__MAX)
    s->vm[fs.vmstate]++;
  s->lua_depth[bucket(smp->lua_count)]++;
  s->host_depth[bucket(smp->host_count)]++;
  if (fs.has_time) {
    s->timed++;
    if (fs.flags & LJP_SAMPLE_LUA_INCOMPLETE)
      s->lua_incomplete++;
  }
  /* x1 samples say whether the host stack was cut; for older streams the
   * library decides from the frames, as the flame graphs do. */
  if (ljp_sample_host_incomplete(smp))
    s->host_incomplete++;

  if (smp->vmstate == LJP_VMST_TRACE && smp->trace.kind == LJP_FRAME_TRACE) {
    ljp_flavor fl = s->opt.flavor;
    if (fl == LJP_FLAVOR_AUTO)
      fl = r ? ljp_reader_flavor(r) : LJP_FLAVOR_TARANTOOL;
    uint32_t start = trace_start(s, &smp->trace, fl);
    ljp_status tst = start == NONE32 ? LJP_E_NOMEM
                                     : add_trace(s, smp->trace.value, start);
    if (st == LJP_OK)
      st = tst;
  }
  return st;
}

/* --- the function table ----------------------------------------------------- */

struct fname {
  const char *p;
  size_t len;
};

/* The functions of the tree: frames grouped by printed name. */
struct funcs {
  uint32_t nframes;           /* frame ids are 1..nframes */
  int64_t *self, *total;      /* by frame id; a function's at its first
                                 frame (the smallest id of its name) */
  struct fname *name;         /* printed name by frame id */
  char *vmtext;               /* storage of the "[STATE]" names */
  uint32_t *fn;               /* first frame of each function */
  size_t nfn;
};

static void funcs_free(struct funcs *f)
{
  free(f->self);
  free(f->total);
  free(f->name);
  free(f->vmtext);
  free(f->fn);
}

/* The folder names a VM-state frame "VMST_<STATE>"; this report always
 * printed "[<STATE>]". */
static int vm_frame(const ljp_tree *t, uint32_t id, const char *p, size_t len)
{
  return ljp_tree_frame_class(t, id) == LJP_CLASS_VM && len >= 5 &&
         memcmp(p, "VMST_", 5) == 0;
}

static int name_cmp(const struct fname *a, const struct fname *b)
{
  int c = memcmp(a->p, b->p, a->len < b->len ? a->len : b->len);
  if (c)
    return c;
  return a->len < b->len ? -1 : a->len > b->len;
}

static int cmp_frame_names(uint32_t a, uint32_t b, const void *ctx)
{
  const struct funcs *f = ctx;
  return name_cmp(&f->name[a], &f->name[b]);
}

/* Printed names into f->name. */
static int funcs_names(const ljp_tree *t, struct funcs *f)
{
  size_t vmlen = 0;
  for (uint32_t i = 1; i <= f->nframes; i++) {
    size_t len;
    const char *p = ljp_tree_frame_name(t, i, &len);
    f->name[i].p = p;
    f->name[i].len = len;
    if (vm_frame(t, i, p, len))
      vmlen += len - 5 + 2;
  }
  f->vmtext = malloc(vmlen ? vmlen : 1);
  if (!f->vmtext)
    return -1;
  char *w = f->vmtext;
  for (uint32_t i = 1; i <= f->nframes; i++) {
    struct fname *n = &f->name[i];
    if (!vm_frame(t, i, n->p, n->len))
      continue;
    w[0] = '[';
    memcpy(w + 1, n->p + 5, n->len - 5);
    w[n->len - 4] = ']';
    n->p = w;
    n->len -= 3;
    w += n->len;
  }
  return 0;
}

/* Each stack counted once per function: the rollup does that per frame.
 * A function of several frames sums their self weights, and its total is
 * the sum of the totals of its outermost nodes (no ancestor of the same
 * function). */
static int funcs_merge(const ljp_tree *t, struct funcs *f, uint32_t *order)
{
  uint32_t *grp = calloc((size_t)f->nframes + 1, sizeof *grp);
  unsigned char *multi = calloc((size_t)f->nframes + 1, 1);
  if (!grp || !multi) {
    free(grp);
    free(multi);
    return -1;
  }
  /* order: frames by name, ids ascending within a name (stable sort). */
  for (uint32_t i = 0; i < f->nframes; i++) {
    uint32_t id = order[i], first = id;
    if (i && name_cmp(&f->name[order[i - 1]], &f->name[id]) == 0) {
      first = grp[order[i - 1]];
      f->self[first] += f->self[id];
      multi[first] = 1;
    } else {
      f->fn[f->nfn++] = id;
    }
    grp[id] = first;
  }
  for (uint32_t i = 1; i <= f->nframes; i++)
    if (multi[i])
      f->total[i] = 0;
  uint32_t nn = ljp_tree_node_count(t);
  for (uint32_t n = 1; n < nn; n++) {
    uint32_t g = grp[ljp_tree_node_frame(t, n)];
    if (!multi[g])
      continue;
    uint32_t p = ljp_tree_node_parent(t, n);
    while (p && grp[ljp_tree_node_frame(t, p)] != g)
      p = ljp_tree_node_parent(t, p);
    if (!p)
      f->total[g] += ljp_tree_node_total(t, n);
  }
  free(grp);
  free(multi);
  return 0;
}

/* The function table of the tree, functions in name order.  -1 when out
 * of memory. */
static int funcs_build(const sysreport *s, struct funcs *f)
{
  memset(f, 0, sizeof *f);
  f->nframes = ljp_tree_frame_count(s->tree);
  size_t n = (size_t)f->nframes + 1;
  f->self = malloc(n * sizeof *f->self);
  f->total = malloc(n * sizeof *f->total);
  f->name = calloc(n, sizeof *f->name);
  f->fn = malloc(n * sizeof *f->fn);
  uint32_t *order = malloc(n * sizeof *order);
  int rc = -1;
  if (f->self && f->total && f->name && f->fn && order &&
      ljp_tree_rollup(s->tree, f->self, f->total, n) == LJP_OK &&
      funcs_names(s->tree, f) == 0) {
    for (uint32_t i = 0; i < f->nframes; i++)
      order[i] = i + 1;
    if (rep_sort_u32(order, f->nframes, cmp_frame_names, f) == 0)
      rc = funcs_merge(s->tree, f, order);
  }
  free(order);
  return rc;
}

/* --- printing ------------------------------------------------------------- */

/* The text and the JSON report (ljpdump --format=json, key "report") are
 * the same tables in the same order; each table has one printer that
 * writes either form. */

static double pct(uint64_t part, uint64_t whole)
{
  return whole ? (double)part * 100.0 / (double)whole : 0.0;
}

static void put_str(const char *p, size_t len, int json, FILE *out)
{
  if (json)
    json_str(out, p, len);
  else
    fwrite(p, 1, len, out);
}

struct rank {
  const struct funcs *f;
  int by_total;
};

/* By self (or total, then self) descending, then by name: names are
 * unique per function, so the order is total. */
static int cmp_func(uint32_t a, uint32_t b, const void *ctx)
{
  const struct rank *r = ctx;
  const struct funcs *f = r->f;
  if (r->by_total && f->total[a] != f->total[b])
    return f->total[a] > f->total[b] ? -1 : 1;
  if (f->self[a] != f->self[b])
    return f->self[a] > f->self[b] ? -1 : 1;
  return name_cmp(&f->name[a], &f->name[b]);
}

static int put_funcs(const sysreport *s, const struct funcs *f, int by_total,
                     int json, FILE *out)
{
  size_t nn = 0;
  uint32_t *ids = malloc((f->nfn ? f->nfn : 1) * sizeof *ids);
  if (!ids)
    return -2;
  for (size_t i = 0; i < f->nfn; i++)
    if (by_total ? f->total[f->fn[i]] : f->self[f->fn[i]])
      ids[nn++] = f->fn[i];
  struct rank r = {f, by_total};
  if (rep_sort_u32(ids, nn, cmp_func, &r) != 0) {
    free(ids);
    return -2;
  }
  if (json)
    fprintf(out, "    \"%s\": [", by_total ? "top_total" : "top_self");
  else
    fprintf(out, "TOP FUNCTIONS BY %s SAMPLES\n%10s %8s  %s\n",
            by_total ? "TOTAL" : "SELF", by_total ? "total" : "self", "%",
            "function");
  for (size_t i = 0; i < nn && i < s->opt.top; i++) {
    uint32_t id = ids[i];
    uint64_t self = (uint64_t)f->self[id], total = (uint64_t)f->total[id];
    if (json) {
      fputs(i ? ",\n      {\"function\": " : "\n      {\"function\": ", out);
      put_str(f->name[id].p, f->name[id].len, 1, out);
      fprintf(out, ", \"self\": %" PRIu64 ", \"total\": %" PRIu64 "}", self,
              total);
    } else {
      uint64_t v = by_total ? total : self;
      fprintf(out, "%10" PRIu64 " %7.2f%%  ", v, pct(v, s->samples));
      put_str(f->name[id].p, f->name[id].len, 0, out);
      fputc('\n', out);
    }
  }
  if (json)
    fprintf(out, "%s],\n    \"%s\": %zu,\n", nn && s->opt.top ? "\n    " : "",
            by_total ? "functions_with_total" : "functions_with_self", nn);
  else if (nn > s->opt.top)
    fprintf(out, "(%zu more)\n\n", nn - s->opt.top);
  else
    fputc('\n', out);
  free(ids);
  return 0;
}

static int cmp_trace(uint32_t a, uint32_t b, const void *ctx)
{
  const sysreport *s = ctx;
  const struct trace *x = &s->traces[a], *y = &s->traces[b];
  if (x->samples != y->samples)
    return x->samples > y->samples ? -1 : 1;
  if (x->traceno != y->traceno)
    return x->traceno < y->traceno ? -1 : 1;
  return rep_strpool_cmp(s->starts, x->start, y->start);
}

static int put_traces(const sysreport *s, int json, FILE *out)
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
  if (json)
    fputs("    \"traces\": [", out);
  else
    fprintf(out, "TRACES\n%10s %8s %7s  %s\n", "samples", "%", "trace",
            "start");
  for (size_t i = 0; i < n; i++) {
    const struct trace *t = &s->traces[ids[i]];
    size_t len;
    const char *name = rep_strpool_get(s->starts, t->start, &len);
    if (json) {
      fprintf(out, "%s{\"trace\": %" PRIu64 ", \"start\": ",
              i ? ",\n      " : "\n      ", t->traceno);
      put_str(name, len, 1, out);
      fprintf(out, ", \"samples\": %" PRIu64 "}", t->samples);
    } else {
      fprintf(out, "%10" PRIu64 " %7.2f%% %7" PRIu64 "  ", t->samples,
              pct(t->samples, s->samples), t->traceno);
      put_str(name, len, 0, out);
      fputc('\n', out);
    }
  }
  fputs(!json ? "\n" : n ? "\n    ],\n" : "],\n", out);
  free(ids);
  return 0;
}

static void put_depths(const sysreport *s, int json, FILE *out)
{
  unsigned last = 0;
  for (unsigned b = 0; b < NBUCKETS; b++)
    if (s->lua_depth[b] || s->host_depth[b])
      last = b;
  if (json)
    fputs("    \"depths\": [", out);
  else
    fprintf(out, "STACK DEPTH\n%-22s %10s %10s\n", "depth", "lua", "host");
  for (unsigned b = 0; b <= last; b++) {
    uint64_t lo = b < 2 ? b : (uint64_t)1 << (b - 1);
    uint64_t hi = b < 2 ? b : b == 64 ? UINT64_MAX : ((uint64_t)1 << b) - 1;
    if (json) {
      fprintf(out, "%s{\"min\": %" PRIu64 ", \"max\": %" PRIu64
                   ", \"lua\": %" PRIu64 ", \"host\": %" PRIu64 "}",
              b ? ",\n      " : "\n      ", lo, hi, s->lua_depth[b],
              s->host_depth[b]);
      continue;
    }
    char range[48];
    if (b < 2)
      snprintf(range, sizeof range, "%" PRIu64, lo);
    else
      snprintf(range, sizeof range, "%" PRIu64 "-%" PRIu64, lo, hi);
    fprintf(out, "%-22s %10" PRIu64 " %10" PRIu64 "\n", range,
            s->lua_depth[b], s->host_depth[b]);
  }
  if (json)
    fputs("\n    ]", out);
}

/* The function tables, the traces and the depths, in either form. */
static int put_tables(sysreport *s, int json, FILE *out)
{
  struct funcs f;
  int rc = funcs_build(s, &f) == 0 ? 0 : -2;
  if (rc == 0)
    rc = put_funcs(s, &f, 0, json, out);
  if (rc == 0)
    rc = put_funcs(s, &f, 1, json, out);
  funcs_free(&f);
  if (rc == 0)
    rc = put_traces(s, json, out);
  if (rc == 0)
    put_depths(s, json, out);
  return rc;
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
  int rc = put_tables(s, 0, out);
  if (rc == 0 && (ferror(out) || fflush(out) != 0))
    rc = -1;
  return rc;
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
  int rc = put_tables(s, 1, out);
  if (rc == 0)
    fputs("\n  }", out);
  if (rc == 0 && ferror(out))
    rc = -1;
  return rc;
}
