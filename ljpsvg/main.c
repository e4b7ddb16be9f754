/* ljpsvg — interactive SVG flame graphs from LuaJIT sysprof/memprof files
 * and from collapsed-stack text; flamegraph.pl's options, a LuaJIT palette,
 * differential graphs.  A thin main: options, inputs, layout, writer. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libxml/parser.h>

#include "cli.h"
#include "cli_jobs.h"
#include "cli_options.h"
#include "input.h"
#include "layout.h"
#include "ljp.h"
#include "options.h"
#include "output.h"
#include "svg.h"

/* A named input that cannot be opened or read (missing, no permission, a
 * folder) is an error before anything is drawn: a graph of the other
 * inputs, or an empty one, would pass for the real thing. */
static int check_inputs(char **inputs, int nin)
{
  int bad = 0;
  for (int i = 0; i < nin; i++) {
    if (strcmp(inputs[i], "-") == 0)
      continue;
    int fd = open(inputs[i], O_RDONLY);
    struct stat st;
    if (fd < 0) {
      cli_error_in(inputs[i], "%s", strerror(errno));
      bad = 1;
      continue;
    }
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
      cli_error_in(inputs[i], "%s", strerror(EISDIR));
      bad = 1;
    }
    close(fd);
  }
  return bad;
}

/* What the inputs held, beyond their stacks. */
typedef struct inputs_seen {
  int failed;              /* an input could not be read whole */
  int any_profile;         /* a profile (not folded text) among them */
  int memprof;
  uint64_t differential;   /* folded lines with two counts */
} inputs_seen;

/* Says what was skipped or changed in an input that was still read. */
static void input_notes(const char *path, const input_result *res)
{
  if (res->ignored == 1)
    cli_error_in(path, "line %llu (offset %llu): ignored, no count at its end",
                 (unsigned long long)res->first_ignored,
                 (unsigned long long)res->first_ignored_offset);
  else if (res->ignored)
    cli_error_in(path, "ignored %llu lines without a count at their end, "
                 "the first at line %llu (offset %llu)",
                 (unsigned long long)res->ignored,
                 (unsigned long long)res->first_ignored,
                 (unsigned long long)res->first_ignored_offset);
  if (res->rounded)
    cli_error_in(path, "rounded %llu fractional counts",
                 (unsigned long long)res->rounded);
}

/* Says what reading an input left (its error, then its notes) and
 * counts it in seen. */
static void input_done(const char *path, int rc, const input_result *res,
                       inputs_seen *seen)
{
  if (rc != 0) {
    cli_error_in(path, "%s", res->message);
    seen->failed = 1;
  }
  if (res->kind != LJP_KIND_UNKNOWN)
    seen->any_profile = 1;
  if (res->kind == LJP_KIND_MEMPROF)
    seen->memprof = 1;
  input_notes(path, res);
  seen->differential += res->differential;
}

/* The inputs, in turn or on worker threads (--jobs, cli_jobs.h), into
 * after and before; what each says, in input order. */
typedef struct read_job {
  const config *c;
  char **inputs;
  input_result *res;
  int *rc;
  inputs_seen *seen;
} read_job;

/* Input k into after (with --diff, the first into before; else the before
 * counts of two-count lines go to before). */
static void read_one(void *ctx, int k, ljp_tree *const *trees,
                     const ljp_fold_options *fo)
{
  read_job *rj = ctx;
  if (!fo) {
    memset(&rj->res[k], 0, sizeof rj->res[k]);
    snprintf(rj->res[k].message, sizeof rj->res[k].message, "out of memory");
    rj->rc[k] = -1;
    return;
  }
  input_opts io = rj->c->in;
  io.reverse = 0;          /* reversed once, after all inputs are in */
  io.fold = *fo;           /* a worker's own source resolver */
  int diff = rj->c->diff;
  ljp_tree *into = diff && k == 0 ? trees[1] : trees[0];
  ljp_tree *pair = diff ? NULL : trees[1];
  rj->rc[k] = input_read(rj->inputs[k], &io, into, pair, &rj->res[k]);
}

static int read_reported(void *ctx, int k)
{
  read_job *rj = ctx;
  input_done(rj->inputs[k], rj->rc[k], &rj->res[k], rj->seen);
  return rj->rc[k] != 0;
}

/* 0, or -1 when the run could not go on (said; the trees are then NULL).
 * --diff reads its two inputs in turn. */
static int read_inputs(const config *c, char **inputs, int nin,
                       ljp_tree **after, ljp_tree **before, inputs_seen *seen)
{
  read_job rj = {c, inputs, calloc((size_t)nin, sizeof(input_result)),
                 calloc((size_t)nin, sizeof(int)), seen};
  ljp_tree *trees[2] = {NULL, NULL};
  int rc = -1;
  if (!rj.res || !rj.rc)
    cli_error("out of memory");
  else
    rc = cli_jobs_run(nin, c->jobs > 1 && !c->diff ? c->jobs : 1, 2,
                      &c->in.fold, read_one, read_reported, &rj, trees);
  free(rj.res);
  free(rj.rc);
  *after = trees[0];
  *before = trees[1];
  return rc < 0 ? -1 : 0;
}

/* --reverse: both trees replaced by their reversed copies.  0, or -1 when
 * out of memory (the trees are then unchanged). */
static int reverse_trees(ljp_tree **after, ljp_tree **before)
{
  ljp_tree *ra = input_reverse_tree(*after);
  ljp_tree *rb = input_reverse_tree(*before);
  if (!ra || !rb) {
    ljp_tree_free(ra);
    ljp_tree_free(rb);
    return -1;
  }
  ljp_tree_free(*after);
  ljp_tree_free(*before);
  *after = ra;
  *before = rb;
  return 0;
}

/* Palette, legend, title and count name for what was read, where the
 * command line left them to ljpsvg. */
static void style_graph(config *c, const inputs_seen *seen, int differential)
{
  if (!c->colors_set)
    c->pal = seen->any_profile ? PAL_LUA : PAL_HOT;
  c->svg.pal.id = c->pal;
  c->svg.pal.name_hash = c->hash;
  c->svg.pal.colorblind = c->colorblind;
  c->svg.legend = c->legend && c->pal == PAL_LUA && !differential;
  if (!c->title_set && c->svg.inverted)
    c->svg.title = "Icicle Graph";
  if (!c->title_set && differential)
    c->svg.title = c->svg.inverted ? "Differential Icicle Graph"
                                   : "Differential Flame Graph";
  if (!c->countname_set && seen->memprof)
    c->svg.countname = c->in.fold.weight == LJP_WEIGHT_EVENTS ? "allocations"
                                                               : "bytes";
}

/* The graph's width in counts: the tree's total, or --total when above
 * it.  *empty is set when there is nothing to draw (said here). */
static int64_t graph_total(const config *c, const ljp_tree *after,
                           char **inputs, int nin, int *empty)
{
  int64_t total = ljp_tree_node_total(after, 0);
  if (total < 0)
    total = 0;
  if (c->total > 0) {
    if (c->total >= (double)total)
      total = (int64_t)c->total;
    else if (c->total / (double)total > 0.02 || total == 0)
      cli_error("specified --total %.0f is less than actual total %lld, "
                "so ignored", c->total, (long long)total);
  }
  *empty = total == 0;
  if (total == 0) {
    if (nin == 1)
      cli_error_in(inputs[0], "no stack counts found");
    else
      cli_error("no stack counts found in %d inputs", nin);
  }
  return total;
}

/* Lays out and writes the graph of after (against before when
 * differential): 0, or 1 after reporting an error. */
static int draw(const config *c, const ljp_tree *after,
                const ljp_tree *before, int differential, int64_t total)
{
  double min_weight = 0;
  options_min_weight(c->minwidth, c->svg.width, total, &min_weight);
  fg_layout l;
  if (fg_layout_build(after, total, min_weight, c->maxframes, &l) != 0) {
    cli_error("out of memory");
    return 1;
  }
  svg_diff d = {NULL, 1.0, 5};
  if (differential) {
    d.before = before;
    int64_t bt = ljp_tree_node_total(before, 0);
    if (c->normalize && bt > 0 && total > 0)
      d.scale = (double)ljp_tree_node_total(after, 0) / (double)bt;
  }
  int rc = output_svg(c->output, after, &l, &c->svg, &d) != 0;
  fg_layout_free(&l);
  return rc;
}

/* Reads, styles and draws: the exit status. */
static int run(config *c, char **inputs, int nin)
{
  ljp_tree *after = NULL, *before = NULL;
  int status = 1;
  inputs_seen seen = {0, 0, 0, 0};
  if (read_inputs(c, inputs, nin, &after, &before, &seen) != 0)
    goto done;
  if (c->in.reverse && reverse_trees(&after, &before) != 0) {
    cli_error("out of memory");
    goto done;
  }
  int differential = c->diff || seen.differential > 0;
  style_graph(c, &seen, differential);
  int empty;
  int64_t total = graph_total(c, after, inputs, nin, &empty);
  status = draw(c, after, before, differential, total) || seen.failed ||
           empty;
done:
  ljp_tree_free(after);
  ljp_tree_free(before);
  return status;
}

int main(int argc, char **argv)
{
  config c;
  cli_init("ljpsvg");
  config_init(&c);
  int rc = options_parse(argc, argv, &c);
  if (rc != CLI_OPT_CONTINUE)
    return rc;
  int nin = argc - optind;
  char *stdin_arg[] = {"-"};
  char **inputs = nin ? argv + optind : stdin_arg;
  if (!nin)
    nin = 1;
  if (c.diff && nin != 2)
    return cli_usage_error("--diff takes two inputs: BEFORE AFTER");
  if (check_inputs(inputs, nin))
    return 1;
  double mw;
  if (options_min_weight(c.minwidth, c.svg.width, 1, &mw))
    return options_bad_value("minwidth", c.minwidth);
  rc = run(&c, inputs, nin);
  xmlCleanupParser();
  return rc;
}
