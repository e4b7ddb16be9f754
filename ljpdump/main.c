/*
 * ljpdump — human-readable dumps and reports of LuaJIT profiles.
 *
 * One pass over the input feeds every requested consumer (summary, event
 * listing, report), so pipes and huge files work the same as small files.
 */
#include "cli.h"
#include "cli_limits.h"
#include "cli_options.h"
#include "cli_source.h"
#include "reports.h"
#include "summary.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static void usage(void) {
  printf(
      "Usage: %s [OPTION]... FILE\n"
      "Dump or report a LuaJIT sysprof or memprof profile.  FILE '-' reads\n"
      "standard input.\n"
      "\n"
      "Without options, a memprof profile prints the report of Tarantool's\n"
      "`luajit -tm` (ALLOCATIONS, REALLOCATIONS, DEALLOCATIONS, HEAP SUMMARY),\n"
      "and a sysprof profile prints its summary and the sysprof report: samples\n"
      "per VM state, top functions by self and total samples, traces, and the\n"
      "stack-depth histogram.\n"
      "\n"
      "  -s, --summary           the summary only: kind, versions, counts,\n"
      "                          symbols, VM-state or event/source breakdown\n"
      "  -e, --events            list every event in stream order\n"
      "      --format=FMT        text (default) or json: the summary and the\n"
      "                          report as one JSON object; with --events, one\n"
      "                          JSON object per event and line (JSON Lines)\n"
      "      --leak-only         memprof: the HEAP SUMMARY only\n"
      "      --human-readable    memprof: sizes as KiB, MiB, GiB\n"
      "      --report-era=ERA    memprof: auto (default), current, bytes,\n"
      "                          generation (see the manual)\n"
      "  -n, --top=N             sysprof: rows of the function tables (20)\n"
      "      --flavor=NAME       fast-function names: auto (default),\n"
      "                          tarantool, luajit, openresty\n"
      CLI_SOURCE_HELP
      CLI_LIMIT_HELP
      CLI_HELP_HELP
      "\n"
      "Exit status: 0 ok, 1 the input is truncated or broken (everything read\n"
      "before the fault is still reported) or output failed, 2 usage error.\n",
      cli_prog());
}

enum { OPT_FORMAT = 256, OPT_LEAK, OPT_HUMAN, OPT_ERA };

typedef struct dump {
  int events, json, summary;
  ljp_flavor flavor;
  memreport *mem;
  sysreport *sys;
  int oom;
} dump;

/* What the command line asks for. */
typedef struct dump_args {
  dump d;
  struct memreport_opts mo;
  struct sysreport_opts so;
  const char *path;
} dump_args;

/* ljpdump's own options: 1 taken, 0 not one of them, 2 usage error. */
static int dump_option(int c, const char *arg, dump_args *a) {
  unsigned long long u;
  switch (c) {
  case 's': a->d.summary = 1; return 1;
  case 'e': a->d.events = 1; return 1;
  case OPT_FORMAT:
    if (!strcmp(arg, "json")) a->d.json = 1;
    else if (!strcmp(arg, "text")) a->d.json = 0;
    else return cli_usage_error("--format takes text or json, not '%s'", arg);
    return 1;
  case OPT_LEAK: a->mo.leak_only = 1; return 1;
  case OPT_HUMAN: a->mo.human_readable = 1; return 1;
  case OPT_ERA: {
    int era = memreport_era_parse(arg);
    if (era < 0)
      return cli_usage_error("--report-era takes auto, current, bytes or "
                             "generation, not '%s'", arg);
    a->mo.era = (memreport_era)era;
    return 1;
  }
  case 'n':
    if (cli_parse_u64(arg, &u) || u == 0 || u > 1000000)
      return cli_usage_error("--top takes a positive count, not '%s'", arg);
    a->so.top = (unsigned)u;
    return 1;
  default:
    return 0;
  }
}

/* Fills a from argv: CLI_OPT_CONTINUE, or the status to exit with (help,
 * version, usage errors). */
static int parse_args(int argc, char **argv, dump_args *a) {
  static const struct option opts[] = {
      {"summary", no_argument, 0, 's'},
      {"events", no_argument, 0, 'e'},
      {"format", required_argument, 0, OPT_FORMAT},
      {"leak-only", no_argument, 0, OPT_LEAK},
      {"human-readable", no_argument, 0, OPT_HUMAN},
      {"report-era", required_argument, 0, OPT_ERA},
      {"top", required_argument, 0, 'n'},
      CLI_FLAVOR_OPTION,
      CLI_SOURCE_OPTIONS,
      CLI_LIMIT_OPTIONS,
      CLI_HELP_OPTIONS,
      {0, 0, 0, 0}};
  int c;
  while ((c = getopt_long(argc, argv, "sen:hV", opts, NULL)) != -1) {
    int rc = dump_option(c, optarg, a);
    if (rc == 0)
      rc = cli_flavor_option(c, optarg, &a->d.flavor);
    rc = cli_end_option(rc, c, optarg, usage);
    if (rc != CLI_OPT_CONTINUE)
      return rc;
  }
  a->so.flavor = a->d.flavor;
  if (optind >= argc)
    return cli_usage_error("no input file");
  if (argc - optind > 1)
    return cli_usage_error("one input file at a time");
  a->path = argv[optind];
  return CLI_OPT_CONTINUE;
}

static int on_event(void *ctx, const ljp_reader *r, const ljp_event *ev) {
  dump *d = ctx;
  if (d->events) {
    ljp_flavor fl = d->flavor == LJP_FLAVOR_AUTO ? ljp_reader_flavor(r)
                                                 : d->flavor;
    if ((d->json ? events_print_json : events_print)(r, ev, fl, stdout)) {
      cli_note_stdout_error();
      return CLI_EXIT_ERROR; /* reported by cli_finish_stdout */
    }
  }
  if (d->mem && ljp_reader_kind(r) != LJP_KIND_SYSPROF &&
      memreport_add(d->mem, r, ev) != LJP_OK)
    d->oom = 1;
  if (d->sys && ljp_reader_kind(r) != LJP_KIND_MEMPROF &&
      sysreport_add(d->sys, r, ev) != LJP_OK)
    d->oom = 1;
  return 0;
}

/* The "report" key of the JSON output: the report of the profile's kind. */
typedef struct json_report {
  dump *d;
  const ljp_reader *r;
} json_report;

static int print_json_report(void *ctx, FILE *out) {
  json_report *jr = ctx;
  return ljp_reader_kind(jr->r) == LJP_KIND_MEMPROF
             ? memreport_print_json(jr->d->mem, out)
             : sysreport_print_json(jr->d->sys, out);
}

/* The report is the default; a listing or the summary replace it.  JSON
 * carries the report too (a "report" key); --events --format=json is the
 * listing as JSON Lines, nothing else. */
static int wants_report(const dump *d) { return !d->events && !d->summary; }

/* Makes the report builders when the report is asked for: 0, or -1 when
 * out of memory (reported). */
static int make_reports(dump_args *a) {
  if (!wants_report(&a->d))
    return 0;
  a->d.mem = memreport_new(&a->mo);
  a->so.traces = cli_traces();
  a->so.sources = cli_sources();
  a->d.sys = sysreport_new(&a->so);
  if (a->d.mem && a->d.sys)
    return 0;
  cli_error("out of memory");
  return -1;
}

/* Reads the whole input into the consumers: 0, or 1 when it was broken,
 * truncated or not all of it went into the report. */
static int read_input(const char *path, ljp_reader *r, dump *d) {
  int rc = cli_drain(path, r, on_event, d) ? CLI_EXIT_ERROR : 0;
  if (cli_stdout_closed())
    rc = 0;   /* the reader of --events stopped reading: a quiet end */
  if (d->oom) {
    cli_error_in(path, "out of memory: the report misses events");
    rc = CLI_EXIT_ERROR;
  }
  return rc;
}

/* The text report of the profile's kind; -2 when out of memory. */
static int print_text_report(dump *d, const ljp_reader *r, const char *name) {
  if (ljp_reader_kind(r) == LJP_KIND_MEMPROF)
    return memreport_print(d->mem, stdout);
  if (ljp_reader_kind(r) != LJP_KIND_SYSPROF)
    return 0;
  /* The report has the VM-state table: the summary's header only. */
  summary_print_text(r, name, 0, stdout);
  fputc('\n', stdout);
  return sysreport_print(d->sys, stdout);
}

/* Prints what was asked for after the events: 0, or 1 when out of memory
 * (reported). */
static int print_results(dump *d, const ljp_reader *r, const char *path) {
  const char *name = cli_input_name(path);
  int report = wants_report(d), prc = 0;
  if (d->json && d->events) {
    /* JSON Lines: the events are all there is. */
  } else if (d->json) {
    json_report jr = {d, r};
    prc = summary_print_json(r, name, stdout,
                             report && ljp_reader_kind(r) != LJP_KIND_UNKNOWN
                                 ? print_json_report : NULL,
                             &jr);
  } else if (d->summary)
    summary_print_text(r, name, 1, stdout);
  else if (report)
    prc = print_text_report(d, r, name);
  if (prc != -2)
    return 0;
  cli_error("out of memory while printing the report");
  return CLI_EXIT_ERROR;
}

int main(int argc, char **argv) {
  cli_init(argv[0]);
  dump_args a;
  memset(&a, 0, sizeof(a));
  a.d.flavor = LJP_FLAVOR_AUTO;
  a.mo = (struct memreport_opts){0, 0, MEMREPORT_ERA_AUTO};
  a.so = (struct sysreport_opts){20, LJP_FLAVOR_AUTO, LJP_TRACES_UNDER, NULL};
  int rc = parse_args(argc, argv, &a);
  if (rc != CLI_OPT_CONTINUE)
    return rc;
  cli_cap_stdout();
  rc = CLI_EXIT_ERROR;
  ljp_reader *r = NULL;
  if (make_reports(&a) == 0 && (r = cli_open_reader(a.path, a.d.flavor))) {
    rc = read_input(a.path, r, &a.d);
    if (print_results(&a.d, r, a.path))
      rc = CLI_EXIT_ERROR;
    if (cli_finish_stdout())
      rc = CLI_EXIT_ERROR;
  }
  memreport_free(a.d.mem);
  sysreport_free(a.d.sys);
  ljp_reader_free(r);
  return rc;
}
