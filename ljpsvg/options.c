/* options.c — ljpsvg's command line.  See options.h. */
#include "options.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_jobs.h"
#include "cli_limits.h"
#include "cli_options.h"
#include "cli_source.h"

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
"  -j, --jobs N       read up to N inputs at once (0: one per processor;\n"
"                     default 1); the graph is the same whatever N\n"
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
  {"jobs", required_argument, NULL, 'j'},
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


void config_init(config *c)
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

int options_bad_value(const char *opt, const char *v)
{
  return cli_usage_error("invalid value for --%s: '%s'", opt, v);
}

/* A number option of the drawing into *out, within [lo, hi]. */
static int number_option(const char *opt, const char *v, double lo, double hi,
                         double *out)
{
  return parse_double(v, lo, hi, out) ? options_bad_value(opt, v) : 1;
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
      return options_bad_value("colors", arg);
    c->colors_set = 1;
    return 1;
  case OPT_BGCOLORS:
    if (palette_background(PAL_HOT, arg, a, b, &dk))
      return options_bad_value("bgcolors", arg);
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
      return options_bad_value("maxframes", arg);
    c->maxframes = (size_t)v;
    return 1;
  case 'o': c->output = arg; return 1;
  case 'j':
    if (parse_double(arg, 0, CLI_JOBS_MAX, &v) || v != floor(v))
      return options_bad_value("jobs", arg);
    c->jobs = v ? (int)v : cli_jobs_online();
    return 1;
  default: return 0;
  }
}

int options_parse(int argc, char **argv, config *c)
{
  int ch;
  while ((ch = getopt_long(argc, argv, "o:j:hV", LONGOPTS, NULL)) != -1) {
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

int options_min_weight(const char *s, double width, int64_t total,
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
