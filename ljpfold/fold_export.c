/*
 * fold_export.c — see fold_export.h.
 *
 * pprof wants every value type of a sample at once and speedscope a
 * profile per coroutine, while a call tree holds one weight: so this reads
 * the inputs into several trees through one folder each, all fed the same
 * events, and the exporters join them by stack.
 */
#include "fold_export.h"

#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int fold_export_label(fold_export *x, char *arg) {
  char *eq = strchr(arg, '=');
  if (!eq || eq == arg)
    return cli_usage_error("--label takes KEY=VALUE, not '%s'", arg);
  if (x->nlabels == FOLD_EXPORT_MAX_LABELS)
    return cli_usage_error("at most %d --label options",
                           FOLD_EXPORT_MAX_LABELS);
  *eq = '\0';
  x->labels[x->nlabels].key = arg;
  x->labels[x->nlabels].value = eq + 1;
  x->nlabels++;
  return 0;
}

int fold_export_interval(fold_export *x, const char *arg) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(arg, &end, 10);
  unsigned long long mul = 1000000;
  if (end == arg || errno || arg[0] == '-')
    return cli_usage_error("--interval takes a duration, not '%s'", arg);
  if (!strcmp(end, "ns")) mul = 1;
  else if (!strcmp(end, "us")) mul = 1000;
  else if (!strcmp(end, "ms") || !*end) mul = 1000000;
  else if (!strcmp(end, "s")) mul = 1000000000;
  else return cli_usage_error("--interval takes a duration, not '%s'", arg);
  if (v == 0 || v > UINT64_MAX / mul)
    return cli_usage_error("--interval takes a duration, not '%s'", arg);
  x->interval_ns = v * mul;
  return 0;
}

/* memprof value types, in the order Go's heap profiles list them. */
enum { M_OBJECTS, M_SPACE, M_INUSE_OBJECTS, M_INUSE_SPACE, M_N };
static const char *const mem_type[M_N] = {"alloc_objects", "alloc_space",
                                          "inuse_objects", "inuse_space"};
static const char *const mem_unit[M_N] = {"count", "bytes", "count", "bytes"};

/* One coroutine's samples (speedscope): its tree, and the leaf of each
 * sample in stream order. */
typedef struct coro_prof {
  ljp_tree *t;
  ljp_folder *f;
  uint32_t *leaves;
  size_t nleaves, capleaves;
  uint64_t first, last;      /* sample times (x1), first = UINT64_MAX: none */
} coro_prof;

typedef struct exp_state {
  const fold_export *x;
  ljp_fold_options fo;
  ljp_kind kind;             /* of the first stream with events */
  /* sysprof: all samples (pprof), and one tree per coroutine id
   * (speedscope; index 0 holds samples without one). */
  ljp_tree *all;
  ljp_folder *all_f;
  coro_prof *coro;
  size_t ncoro;
  int timed;                 /* some sample carried a time */
  /* memprof: one tree per value type. */
  ljp_tree *mem[M_N];
  ljp_folder *mem_f[M_N];
  uint64_t interval_ns;      /* the first stream's, or --interval */
  ljp_timer timer;           /* the first stream's that names one */
  uint64_t duration_ns;      /* summed over the inputs */
  int interval_mixed;
} exp_state;

static void free_folders(exp_state *s) {
  ljp_folder_free(s->all_f);
  s->all_f = NULL;
  for (size_t i = 0; i < s->ncoro; i++) {
    ljp_folder_free(s->coro[i].f);
    s->coro[i].f = NULL;
  }
  for (int k = 0; k < M_N; k++) {
    ljp_folder_free(s->mem_f[k]);
    s->mem_f[k] = NULL;
  }
}

static ljp_folder *folder_for(ljp_tree *t, ljp_folder **f,
                              const ljp_fold_options *fo) {
  if (!*f)
    *f = ljp_folder_new(t, fo);
  return *f;
}

static int grow_coro(exp_state *s, size_t n) {
  if (n <= s->ncoro)
    return 0;
  coro_prof *c = realloc(s->coro, n * sizeof(*c));
  if (!c)
    return -1;
  s->coro = c;
  for (size_t i = s->ncoro; i < n; i++) {
    memset(&c[i], 0, sizeof(c[i]));
    c[i].first = UINT64_MAX;
  }
  s->ncoro = n;
  return 0;
}

/* Records the leaf a sample's weight went to, in stream order. */
static int keep_leaf(coro_prof *c, uint32_t leaf) {
  if (leaf == 0)
    return 0; /* an empty stack: the weight went to the root */
  if (c->nleaves == c->capleaves) {
    size_t cap = c->capleaves ? c->capleaves * 2 : 256;
    uint32_t *nl = realloc(c->leaves, cap * sizeof(*nl));
    if (!nl)
      return -1;
    c->leaves = nl;
    c->capleaves = cap;
  }
  c->leaves[c->nleaves++] = leaf;
  return 0;
}

static int add_sample(exp_state *s, const ljp_reader *r, const ljp_event *ev) {
  if (s->x->format == FOLD_EXPORT_PPROF) {
    if (!s->all && !(s->all = ljp_tree_new()))
      return -1;
    /* The VM state goes to a label: fold it as the leaf, the exporter
     * moves it (unless the user asked for it as a frame). */
    ljp_fold_options fo = s->fo;
    if (!s->x->vmstate_given)
      fo.vmstate = LJP_VMSTATE_LEAF;
    ljp_folder *f = folder_for(s->all, &s->all_f, &fo);
    return f && ljp_folder_add(f, r, ev) == LJP_OK ? 0 : -1;
  }
  const ljp_sample *sm = &ev->u.sample;
  if (sm->coro >= SIZE_MAX - 1 || grow_coro(s, (size_t)sm->coro + 1))
    return -1;
  coro_prof *c = &s->coro[sm->coro];
  if (!c->t && !(c->t = ljp_tree_new()))
    return -1;
  if (sm->has_time) {
    s->timed = 1;
    if (sm->time_ns < c->first)
      c->first = sm->time_ns;
    if (sm->time_ns > c->last)
      c->last = sm->time_ns;
  }
  ljp_folder *f = folder_for(c->t, &c->f, &s->fo);
  ljp_fold_sample out;
  if (!f || ljp_folder_add_ex(f, r, ev, &out) != LJP_OK)
    return -1;
  return keep_leaf(c, out.leaf);
}

static int add_mem(exp_state *s, const ljp_reader *r, const ljp_event *ev) {
  static const ljp_weight w[M_N] = {LJP_WEIGHT_EVENTS, LJP_WEIGHT_BYTES,
                                    LJP_WEIGHT_LIVE, LJP_WEIGHT_LIVE};
  for (int k = 0; k < M_N; k++) {
    if (!s->mem[k] && !(s->mem[k] = ljp_tree_new()))
      return -1;
    ljp_fold_options fo = s->fo;
    fo.weight = w[k];
    ljp_folder *f = folder_for(s->mem[k], &s->mem_f[k], &fo);
    if (!f)
      return -1;
    ljp_event e = *ev;
    /* Live objects: the live-bytes accounting with every block one byte
     * long counts blocks instead of bytes. */
    if (k == M_INUSE_OBJECTS && e.u.mem.kind != LJP_MEM_FREE)
      e.u.mem.new_size = 1;
    if (ljp_folder_add(f, r, &e) != LJP_OK)
      return -1;
  }
  return 0;
}

static int on_event(void *ctx, const ljp_reader *r, const ljp_event *ev) {
  exp_state *s = ctx;
  if (ev->type != LJP_EV_SAMPLE && ev->type != LJP_EV_MEMORY)
    return 0;
  ljp_kind kind = ev->type == LJP_EV_SAMPLE ? LJP_KIND_SYSPROF
                                            : LJP_KIND_MEMPROF;
  if (s->kind == LJP_KIND_UNKNOWN)
    s->kind = kind;
  if (kind != s->kind) {
    cli_error("sysprof and memprof profiles cannot be exported together");
    return CLI_EXIT_USAGE;
  }
  int rc = kind == LJP_KIND_SYSPROF ? add_sample(s, r, ev) : add_mem(s, r, ev);
  if (rc) {
    cli_error("out of memory");
    return CLI_EXIT_ERROR;
  }
  return 0;
}

static int write_file(void *ctx, const void *data, size_t len) {
  return fwrite(data, 1, len, ctx) == len ? 0 : -1;
}

static ljp_status export_pprof(exp_state *s, FILE *out) {
  ljp_pprof_options po;
  memset(&po, 0, sizeof(po));
  po.labels = s->x->labels;
  po.nlabels = s->x->nlabels;
  if (s->kind == LJP_KIND_MEMPROF) {
    for (int k = 0; k < M_N; k++)
      po.types[k] = (ljp_export_type){mem_type[k], mem_unit[k], s->mem[k], 1};
    po.ntypes = M_N;
    po.period_type = "space";
    po.period_unit = "bytes";
  } else {
    po.types[0] = (ljp_export_type){"samples", "count", s->all, 1};
    po.ntypes = 1;
    po.vmstate_labels = !s->x->vmstate_given;
    if (s->interval_ns && s->interval_ns <= INT64_MAX) {
      /* A wall-clock timer samples time off the CPU too: pprof and the
       * backends call that "wall", not "cpu". */
      const char *what = s->timer == LJP_TIMER_WALL ? "wall" : "cpu";
      po.types[1] = (ljp_export_type){what, "nanoseconds", s->all,
                                      (int64_t)s->interval_ns};
      po.ntypes = 2;
      po.period_type = what;
      po.period_unit = "nanoseconds";
      po.period = (int64_t)s->interval_ns;
    }
    if (s->duration_ns <= INT64_MAX)
      po.duration_ns = (int64_t)s->duration_ns;
  }
  return ljp_pprof_write(&po, write_file, out);
}

static ljp_status export_speedscope(exp_state *s, FILE *out,
                                    const char *name) {
  ljp_speedscope_profile p[M_N];
  ljp_speedscope_profile *ps = p;
  size_t n = 0;
  char (*names)[48] = NULL;
  ljp_status st;
  if (s->kind == LJP_KIND_MEMPROF) {
    for (int k = 0; k < M_N; k++)
      p[n++] = (ljp_speedscope_profile){
          mem_type[k], s->mem[k],
          mem_unit[k][0] == 'b' ? "bytes" : "none", 1, 0, 0, NULL, NULL, 0};
    return ljp_speedscope_write(name, p, n, write_file, out);
  }
  ps = calloc(s->ncoro ? s->ncoro : 1, sizeof(*ps));
  names = calloc(s->ncoro ? s->ncoro : 1, sizeof(*names));
  if (!ps || !names) {
    free(ps);
    free(names);
    return LJP_E_NOMEM;
  }
  /* Coroutine 1 (the main one) first: the viewer opens the first. */
  for (size_t pass = 0; pass < 2; pass++)
    for (size_t c = 0; c < s->ncoro; c++) {
      const coro_prof *cp = &s->coro[c];
      if (!cp->t || (pass == 0) != (c == 1))
        continue;
      ljp_speedscope_profile *q = &ps[n];
      if (c == 0)
        snprintf(names[n], sizeof(names[n]), s->timed ? "no coroutine"
                                                       : "all samples");
      else
        snprintf(names[n], sizeof(names[n]), "coroutine %zu", c);
      q->name = names[n];
      q->tree = cp->t;
      q->nodes = cp->leaves;
      q->nsamples = cp->nleaves;
      q->unit = s->interval_ns ? "nanoseconds" : "none";
      q->scale = s->interval_ns && s->interval_ns <= INT64_MAX
                     ? (int64_t)s->interval_ns : 1;
      /* The samples, in the order they were taken, each one interval
       * long; the first sample's time (x1) puts the profile on the
       * capture's clock. */
      if (s->interval_ns && cp->first != UINT64_MAX &&
          cp->first <= INT64_MAX)
        q->start = (int64_t)cp->first;
      n++;
    }
  st = n ? ljp_speedscope_write(name, ps, n, write_file, out) : LJP_E_ARG;
  free(ps);
  free(names);
  return st;
}

/* The empty profile of a run with no events still gets a valid file. */
static int ensure_trees(exp_state *s) {
  if (s->kind == LJP_KIND_MEMPROF) {
    for (int k = 0; k < M_N; k++)
      if (!s->mem[k] && !(s->mem[k] = ljp_tree_new()))
        return -1;
    return 0;
  }
  if (s->x->format == FOLD_EXPORT_PPROF)
    return s->all || (s->all = ljp_tree_new()) ? 0 : -1;
  if (grow_coro(s, 1))
    return -1;
  for (size_t c = 0; c < s->ncoro; c++)
    if (s->coro[c].t)
      return 0;
  return (s->coro[0].t = ljp_tree_new()) ? 0 : -1;
}

static int read_inputs(exp_state *s, char **files, int n) {
  int rc = 0;
  for (int i = 0; i < n; i++) {
    ljp_reader *r = cli_open_reader(files[i], s->fo.flavor);
    if (!r) {
      rc = CLI_EXIT_ERROR;
      continue;
    }
    int drc = cli_drain(files[i], r, on_event, s);
    uint64_t iv = ljp_reader_interval_ns(r);
    if (!iv)
      iv = s->x->interval_ns;
    if (iv && !s->interval_ns)
      s->interval_ns = iv;
    else if (iv && iv != s->interval_ns)
      s->interval_mixed = 1;
    s->duration_ns += ljp_reader_time_ns(r);
    if (s->timer == LJP_TIMER_UNKNOWN)
      s->timer = ljp_reader_timer(r);
    /* Folders cache this reader's symbols: new ones for the next. */
    free_folders(s);
    ljp_reader_free(r);
    if (drc == CLI_EXIT_USAGE)
      return drc;
    if (drc)
      rc = CLI_EXIT_ERROR;
  }
  if (s->interval_mixed)
    cli_error("inputs were sampled at different intervals; times use %llu ns",
              (unsigned long long)s->interval_ns);
  return rc;
}

int fold_export_run(const fold_export *x, const ljp_fold_options *fo,
                    char **files, int n) {
  if (x->format == FOLD_EXPORT_SPEEDSCOPE && x->nlabels)
    return cli_usage_error("--label is for --format=pprof (speedscope files "
                           "have no labels)");
  exp_state s;
  memset(&s, 0, sizeof(s));
  s.x = x;
  s.fo = *fo;
  int rc = read_inputs(&s, files, n);
  FILE *out = NULL;
  if (rc != CLI_EXIT_USAGE && ensure_trees(&s) == 0) {
    out = x->output ? fopen(x->output, "wb") : stdout;
    if (!out) {
      cli_error("%s: %s", x->output, strerror(errno));
      rc = CLI_EXIT_ERROR;
    } else {
      /* The file's own name titles the viewer; the directory it was read
       * from says nothing about the profile (and would change the bytes). */
      const char *name = n == 1 ? cli_input_name(files[0]) : "ljp profile";
      const char *slash = strrchr(name, '/');
      if (slash && slash[1])
        name = slash + 1;
      ljp_status st = x->format == FOLD_EXPORT_PPROF
                          ? export_pprof(&s, out)
                          : export_speedscope(&s, out, name);
      if (st == LJP_E_NOMEM) {
        cli_error("out of memory");
        rc = CLI_EXIT_ERROR;
      } else if (st != LJP_OK) {
        if (out == stdout)
          cli_note_stdout_error();
        else
          cli_error("%s: write error", x->output);
        rc = CLI_EXIT_ERROR;
      }
      if (out == stdout && cli_finish_stdout())
        rc = CLI_EXIT_ERROR;
      if (out != stdout && fclose(out)) {
        cli_error("%s: %s", x->output, strerror(errno));
        rc = CLI_EXIT_ERROR;
      }
    }
  } else if (rc != CLI_EXIT_USAGE) {
    cli_error("out of memory");
    rc = CLI_EXIT_ERROR;
  }
  free_folders(&s);
  ljp_tree_free(s.all);
  for (size_t c = 0; c < s.ncoro; c++) {
    ljp_tree_free(s.coro[c].t);
    free(s.coro[c].leaves);
  }
  free(s.coro);
  for (int k = 0; k < M_N; k++)
    ljp_tree_free(s.mem[k]);
  return rc;
}
