/* ljpsvg — interactive SVG flame graphs from LuaJIT sysprof/memprof files
 * and from collapsed-stack text; flamegraph.pl's options, a LuaJIT palette,
 * differential graphs.  A thin main: options, inputs, layout, writer. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libxml/xmlwriter.h>

#include "cli.h"
#include "cli_limits.h"
#include "cli_options.h"
#include "cli_source.h"
#include "input.h"
#include "layout.h"
#include "ljp.h"
#include "svg.h"

static void usage(void)
{
  printf(
"Usage: ljpsvg [options] [FILE...] > graph.svg\n"
"       ljpsvg --diff [options] BEFORE AFTER > diff.svg\n"
"Draws an interactive SVG flame graph of LuaJIT sysprof or memprof files or\n"
"of collapsed-stack text (\"frame;frame N\"); '-' or no FILE reads stdin.\n"
"Several inputs merge into one graph.\n"
"\n"
"flamegraph.pl options:\n"
"  --title TEXT       title (default \"Flame Graph\"/\"Icicle Graph\")\n"
"  --subtitle TEXT    second title line\n"
"  --width PX         image width (default 1200)\n"
"  --height PX        frame height (default 16)\n"
"  --minwidth PX|N%%   omit frames narrower than this (default 0.1)\n"
"  --fonttype FONT    font family (default Verdana)\n"
"  --fontsize PT      font size (default 12)\n"
"  --fontwidth F      average glyph width / font size (default 0.59)\n"
"  --countname TEXT   what counts are (default samples / bytes)\n"
"  --nametype TEXT    what names are (default \"Function:\")\n"
"  --colors PALETTE   %s\n"
"                     (default lua for profiles, hot for text)\n"
"  --bgcolors COLOR   yellow, blue, green, grey, dark or #rrggbb\n"
"  --hash             colour by flamegraph.pl's name hash\n"
"  --reverse          reverse stacks (leaf frames at the bottom)\n"
"  --inverted         icicle graph (root at the top)\n"
"  --negate           swap the differential hues (blue <-> red)\n"
"  --factor F         multiply displayed counts by F\n"
"  --total N          width of the graph in counts (if above the sum)\n"
"  --notes TEXT       notes embedded as a comment\n"
"\n"
"ljpsvg options:\n"
"  --diff             differential graph of BEFORE and AFTER\n"
"  --no-normalize     do not scale BEFORE to the total of AFTER\n"
"  --colorblind       colour-blind-safe LuaJIT palette (Okabe-Ito)\n"
"  --dark             dark background\n"
"  --no-legend        no frame-class legend\n"
"  --maxframes N      draw at most N frames, the widest (default 50000, 0 = all)\n"
"  --weight W         memprof weight: bytes (default), events, live\n"
"  --stack VIEW       merged (default), lua, host, reference\n"
"  --vmstate[=WHERE]  VM-state frame VMST_<STATE>: none (without the\n"
"                     option), root (--vmstate alone) or leaf\n"
"  --addresses        C and host frames carry their symbol address\n"
"  -o, --output FILE  write to FILE instead of stdout\n"
CLI_READER_LIMIT_HELP
CLI_SOURCE_HELP
"                          (--diff: function unless --traces is given)\n"
"  -h, --help         this help\n"
"  -V, --version      the version\n",
          palette_names());
}

enum {
  OPT_TITLE = 256, OPT_SUBTITLE, OPT_WIDTH, OPT_HEIGHT, OPT_MINWIDTH,
  OPT_FONTTYPE, OPT_FONTSIZE, OPT_FONTWIDTH, OPT_COUNTNAME, OPT_NAMETYPE,
  OPT_COLORS, OPT_BGCOLORS, OPT_HASH, OPT_REVERSE, OPT_INVERTED, OPT_NEGATE,
  OPT_FACTOR, OPT_TOTAL, OPT_NOTES, OPT_DIFF, OPT_NO_NORMALIZE,
  OPT_COLORBLIND, OPT_DARK, OPT_NO_LEGEND, OPT_MAXFRAMES, OPT_RANDOM, OPT_CP
};

static const struct option LONGOPTS[] = {
  {"title", required_argument, NULL, OPT_TITLE},
  {"subtitle", required_argument, NULL, OPT_SUBTITLE},
  {"width", required_argument, NULL, OPT_WIDTH},
  {"height", required_argument, NULL, OPT_HEIGHT},
  {"minwidth", required_argument, NULL, OPT_MINWIDTH},
  {"fonttype", required_argument, NULL, OPT_FONTTYPE},
  {"fontsize", required_argument, NULL, OPT_FONTSIZE},
  {"fontwidth", required_argument, NULL, OPT_FONTWIDTH},
  {"countname", required_argument, NULL, OPT_COUNTNAME},
  {"nametype", required_argument, NULL, OPT_NAMETYPE},
  {"colors", required_argument, NULL, OPT_COLORS},
  {"color", required_argument, NULL, OPT_COLORS},
  {"bgcolors", required_argument, NULL, OPT_BGCOLORS},
  {"hash", no_argument, NULL, OPT_HASH},
  {"random", no_argument, NULL, OPT_RANDOM},
  {"cp", no_argument, NULL, OPT_CP},
  {"reverse", no_argument, NULL, OPT_REVERSE},
  {"inverted", no_argument, NULL, OPT_INVERTED},
  {"negate", no_argument, NULL, OPT_NEGATE},
  {"factor", required_argument, NULL, OPT_FACTOR},
  {"total", required_argument, NULL, OPT_TOTAL},
  {"notes", required_argument, NULL, OPT_NOTES},
  {"diff", no_argument, NULL, OPT_DIFF},
  {"no-normalize", no_argument, NULL, OPT_NO_NORMALIZE},
  {"colorblind", no_argument, NULL, OPT_COLORBLIND},
  {"dark", no_argument, NULL, OPT_DARK},
  {"no-legend", no_argument, NULL, OPT_NO_LEGEND},
  {"maxframes", required_argument, NULL, OPT_MAXFRAMES},
  CLI_FOLD_OPTIONS,
  {"output", required_argument, NULL, 'o'},
  CLI_READER_LIMIT_OPTIONS,
  CLI_SOURCE_OPTIONS,
  CLI_HELP_OPTIONS,
  {NULL, 0, NULL, 0}
};

static int parse_double(const char *s, double lo, double hi, double *out)
{
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (errno || end == s || *end || !(v >= lo && v <= hi))
    return -1;
  *out = v;
  return 0;
}

typedef struct config {
  svg_opts svg;
  input_opts in;
  const char *output;
  const char *minwidth;
  double total;            /* --total; 0 = none */
  int diff, normalize, colors_set, countname_set, title_set, dark;
  int colorblind, legend, hash;
  palette_id pal;
  size_t maxframes;
} config;

/* flamegraph.pl's defaults. */
static void config_init(config *c)
{
  memset(c, 0, sizeof *c);
  c->svg.title = "Flame Graph";
  c->svg.fonttype = "Verdana";
  c->svg.countname = "samples";
  c->svg.nametype = "Function:";
  c->svg.width = 1200;
  c->svg.frame_height = 16;
  c->svg.fontsize = 12;
  c->svg.fontwidth = 0.59;
  c->svg.factor = 1;
  c->minwidth = "0.1";
  c->normalize = 1;
  c->legend = 1;
  c->maxframes = 50000;
  c->pal = PAL_HOT;
  c->in.fold.flavor = LJP_FLAVOR_AUTO;
  c->in.fold.weight = LJP_WEIGHT_BYTES;
}

static int bad_value(const char *opt, const char *v)
{
  return cli_usage_error("invalid value for --%s: '%s'", opt, v);
}

/* A number option of the drawing into *out, within [lo, hi]. */
static int number_option(const char *opt, const char *v, double lo, double hi,
                         double *out)
{
  return parse_double(v, lo, hi, out) ? bad_value(opt, v) : 1;
}

/* The drawing options flamegraph.pl has, with flamegraph.pl's words: 1
 * taken, 0 not one of them, 2 usage error. */
static int graph_option(int ch, const char *arg, config *c)
{
  char a[8], b[8];
  int dk;
  switch (ch) {
  case OPT_TITLE: c->svg.title = arg; c->title_set = 1; return 1;
  case OPT_SUBTITLE: c->svg.subtitle = arg; return 1;
  case OPT_WIDTH: return number_option("width", arg, 50, 1e6, &c->svg.width);
  case OPT_HEIGHT:
    return number_option("height", arg, 2, 1000, &c->svg.frame_height);
  case OPT_MINWIDTH: c->minwidth = arg; return 1;
  case OPT_FONTTYPE: c->svg.fonttype = arg; return 1;
  case OPT_FONTSIZE:
    return number_option("fontsize", arg, 1, 500, &c->svg.fontsize);
  case OPT_FONTWIDTH:
    return number_option("fontwidth", arg, 0.05, 10, &c->svg.fontwidth);
  case OPT_COUNTNAME: c->svg.countname = arg; c->countname_set = 1; return 1;
  case OPT_NAMETYPE: c->svg.nametype = arg; return 1;
  case OPT_COLORS:
    if (palette_parse(arg, &c->pal))
      return bad_value("colors", arg);
    c->colors_set = 1;
    return 1;
  case OPT_BGCOLORS:
    if (palette_background(PAL_HOT, arg, a, b, &dk))
      return bad_value("bgcolors", arg);
    c->svg.bgcolors = arg;
    return 1;
  case OPT_HASH: c->hash = 1; return 1;
  case OPT_RANDOM: case OPT_CP: return 1;  /* colours are always stable */
  case OPT_REVERSE: c->in.reverse = 1; return 1;
  case OPT_INVERTED: c->svg.inverted = 1; return 1;
  case OPT_NEGATE: c->svg.negate = 1; return 1;
  case OPT_FACTOR:
    return number_option("factor", arg, -1e300, 1e300, &c->svg.factor);
  case OPT_TOTAL: return number_option("total", arg, 0, 9.2e18, &c->total);
  case OPT_NOTES: c->svg.notes = arg; return 1;
  default: return 0;
  }
}

/* ljpsvg's own options: 1 taken, 0 not one of them, 2 usage error. */
static int tool_option(int ch, const char *arg, config *c)
{
  double v;
  switch (ch) {
  case OPT_DIFF: c->diff = 1; return 1;
  case OPT_NO_NORMALIZE: c->normalize = 0; return 1;
  case OPT_COLORBLIND: c->colorblind = 1; return 1;
  case OPT_DARK: c->svg.bgcolors = "dark"; return 1;
  case OPT_NO_LEGEND: c->legend = 0; return 1;
  case OPT_MAXFRAMES:
    if (parse_double(arg, 0, 1e9, &v) || v != floor(v))
      return bad_value("maxframes", arg);
    c->maxframes = (size_t)v;
    return 1;
  case 'o': c->output = arg; return 1;
  default: return 0;
  }
}

/* Fills c from argv: CLI_OPT_CONTINUE, or the status to exit with (help,
 * version, usage errors). */
static int parse_args(int argc, char **argv, config *c)
{
  int ch;
  while ((ch = getopt_long(argc, argv, "o:hV", LONGOPTS, NULL)) != -1) {
    int rc = graph_option(ch, optarg, c);
    if (rc == 0)
      rc = tool_option(ch, optarg, c);
    if (rc == 0)
      rc = cli_fold_option(ch, optarg, argc, argv, &c->in.fold);
    rc = cli_end_option(rc, ch, optarg, usage);
    if (rc != CLI_OPT_CONTINUE)
      return rc;
  }
  c->in.limits = *cli_limits();
  /* A differential graph compares two runs, whose trace numbers differ for
   * the same code: traces fold into their functions unless asked. */
  c->in.fold.traces = c->diff && !cli_traces_given() ? LJP_TRACES_FUNCTION
                                                     : cli_traces();
  /* The reference view names frames as Tarantool's parser does. */
  if (c->in.fold.view != LJP_VIEW_REFERENCE)
    c->in.fold.sources = cli_sources();
  return CLI_OPT_CONTINUE;
}

/* Minimum width in weight units from "PX" or "N%". */
static int min_weight_of(const char *s, double width, int64_t total,
                         double *out)
{
  size_t n = strlen(s);
  char buf[64];
  if (n == 0 || n >= sizeof buf)
    return -1;
  memcpy(buf, s, n + 1);
  int pct = buf[n - 1] == '%';
  if (pct)
    buf[n - 1] = '\0';
  double v;
  if (parse_double(buf, 0, pct ? 100 : 1e9, &v))
    return -1;
  *out = pct ? (double)total * v / 100 : v * (double)total / (width - 20);
  return 0;
}

/* libxml2 reports write errors itself ("I/O error : Broken pipe") on
 * stderr: ljpsvg says what happened in its own words instead. */
static void xml_quiet(void *ctx, const char *msg, ...)
{
  (void)ctx;
  (void)msg;
}

/* The output file: written by our callback so that the errno of the first
 * failed write is known (a closed pipe is not an error, a full disk is). */
typedef struct out_sink {
  int fd;
  int err;
} out_sink;

static int sink_write(void *ctx, const char *buf, int len)
{
  out_sink *o = ctx;
  int done = 0;
  while (done < len) {
    ssize_t n = write(o->fd, buf + done, (size_t)(len - done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      if (!o->err)
        o->err = n < 0 ? errno : EIO;
      return -1;
    }
    done += (int)n;
  }
  return len;
}

static int sink_close(void *ctx)
{
  (void)ctx;
  return 0;
}

/* Returns 0, -1 after reporting an error; a closed pipe on stdout ends the
 * output quietly with 0 (the reader, e.g. head, has what it wanted). */
static int write_output(const config *c, const ljp_tree *t,
                        const fg_layout *l, const svg_diff *d)
{
  out_sink o = {1, 0};
  const char *name = c->output && strcmp(c->output, "-") != 0 ? c->output : NULL;
  if (name) {
    o.fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (o.fd < 0) {
      cli_error_in(name, "%s", strerror(errno));
      return -1;
    }
  }
  xmlSetGenericErrorFunc(NULL, xml_quiet);
  xmlOutputBufferPtr ob = xmlOutputBufferCreateIO(sink_write, sink_close, &o, NULL);
  xmlTextWriterPtr w = ob ? xmlNewTextWriter(ob) : NULL;
  if (!w) {
    if (ob)
      xmlOutputBufferClose(ob);
    if (name)
      close(o.fd);
    cli_error("out of memory");
    return -1;
  }
  int rc = svg_write(w, t, l, &c->svg, d);
  /* Frees the output buffer too, flushing it. */
  xmlFreeTextWriter(w);
  if (o.err)
    rc = -1;
  if (name && close(o.fd) != 0 && !o.err) {
    o.err = errno;
    rc = -1;
  }
  if (rc != 0 && !name && o.err == EPIPE)
    return 0;
  if (rc != 0)
    cli_error_in(name ? name : "stdout", "write failed: %s",
                 strerror(o.err ? o.err : EIO));
  return rc;
}

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

/* Reads every input into after (with --diff, the first into before; else
 * the before counts of two-count lines go to before). */
static void read_inputs(const config *c, char **inputs, int nin,
                        ljp_tree *after, ljp_tree *before, inputs_seen *seen)
{
  input_opts io = c->in;
  io.reverse = 0;          /* reversed once, after all inputs are in */
  for (int i = 0; i < nin; i++) {
    input_result res;
    ljp_tree *into = c->diff && i == 0 ? before : after;
    ljp_tree *pair = c->diff ? NULL : before;
    if (input_read(inputs[i], &io, into, pair, &res) != 0) {
      cli_error_in(inputs[i], "%s", res.message);
      seen->failed = 1;
    }
    if (res.kind != LJP_KIND_UNKNOWN)
      seen->any_profile = 1;
    if (res.kind == LJP_KIND_MEMPROF)
      seen->memprof = 1;
    input_notes(inputs[i], &res);
    seen->differential += res.differential;
  }
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
  min_weight_of(c->minwidth, c->svg.width, total, &min_weight);
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
  int rc = write_output(c, after, &l, &d) != 0;
  fg_layout_free(&l);
  return rc;
}

/* Reads, styles and draws: the exit status. */
static int run(config *c, char **inputs, int nin)
{
  ljp_tree *after = ljp_tree_new(), *before = ljp_tree_new();
  int status = 1;
  inputs_seen seen = {0, 0, 0, 0};
  if (!after || !before) {
    cli_error("out of memory");
    goto done;
  }
  read_inputs(c, inputs, nin, after, before, &seen);
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
  int rc = parse_args(argc, argv, &c);
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
  if (min_weight_of(c.minwidth, c.svg.width, 1, &mw))
    return bad_value("minwidth", c.minwidth);
  rc = run(&c, inputs, nin);
  xmlCleanupParser();
  return rc;
}
