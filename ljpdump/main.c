/*
 * ljpdump — human-readable dumps and reports of LuaJIT profiles.
 *
 * One pass over the input feeds every requested consumer (summary, event
 * listing, report), so pipes and huge files work the same as small files.
 */
#include "cli.h"
#include "cli_limits.h"
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
      "  -h, --help              show this help and exit\n"
      "  -V, --version           show the version and exit\n"
      "\n"
      "Exit status: 0 ok, 1 the input is truncated or broken (everything read\n"
      "before the fault is still reported) or output failed, 2 usage error.\n",
      cli_prog());
}

enum { OPT_FORMAT = 256, OPT_LEAK, OPT_HUMAN, OPT_ERA, OPT_FLAVOR };

typedef struct dump {
  int events, json, summary;
  ljp_flavor flavor;
  memreport *mem;
  sysreport *sys;
  int oom;
} dump;

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

int main(int argc, char **argv) {
  static const struct option opts[] = {
      {"summary", no_argument, 0, 's'},
      {"events", no_argument, 0, 'e'},
      {"format", required_argument, 0, OPT_FORMAT},
      {"leak-only", no_argument, 0, OPT_LEAK},
      {"human-readable", no_argument, 0, OPT_HUMAN},
      {"report-era", required_argument, 0, OPT_ERA},
      {"top", required_argument, 0, 'n'},
      {"flavor", required_argument, 0, OPT_FLAVOR},
      CLI_SOURCE_OPTIONS,
      CLI_LIMIT_OPTIONS,
      {"help", no_argument, 0, 'h'},
      {"version", no_argument, 0, 'V'},
      {0, 0, 0, 0}};
  cli_init(argv[0]);
  dump d;
  memset(&d, 0, sizeof(d));
  d.flavor = LJP_FLAVOR_AUTO;
  struct memreport_opts mo = {0, 0, MEMREPORT_ERA_AUTO};
  struct sysreport_opts so = {20, LJP_FLAVOR_AUTO, LJP_TRACES_UNDER, NULL};
  unsigned long long u;
  int c;
  while ((c = getopt_long(argc, argv, "sen:hV", opts, NULL)) != -1) {
    switch (c) {
    case 's': d.summary = 1; break;
    case 'e': d.events = 1; break;
    case OPT_FORMAT:
      if (!strcmp(optarg, "json")) d.json = 1;
      else if (!strcmp(optarg, "text")) d.json = 0;
      else return cli_usage_error("--format takes text or json, not '%s'", optarg);
      break;
    case OPT_LEAK: mo.leak_only = 1; break;
    case OPT_HUMAN: mo.human_readable = 1; break;
    case OPT_ERA: {
      int era = memreport_era_parse(optarg);
      if (era < 0)
        return cli_usage_error("--report-era takes auto, current, bytes or "
                               "generation, not '%s'", optarg);
      mo.era = (memreport_era)era;
      break;
    }
    case 'n':
      if (cli_parse_u64(optarg, &u) || u == 0 || u > 1000000)
        return cli_usage_error("--top takes a positive count, not '%s'", optarg);
      so.top = (unsigned)u;
      break;
    case OPT_FLAVOR:
      if (cli_parse_flavor(optarg, &d.flavor))
        return cli_usage_error("unknown flavor '%s'", optarg);
      so.flavor = d.flavor;
      break;
    case 'h': usage(); return cli_finish_stdout();
    case 'V': cli_print_version(); return cli_finish_stdout();
    default: {
      int lrc = cli_limit_option(c, optarg);
      if (lrc == 0)
        lrc = cli_source_option(c, optarg);
      if (lrc == 1)
        break;
      return lrc ? lrc : cli_usage_error("unknown option");
    }
    }
  }
  if (optind >= argc)
    return cli_usage_error("no input file");
  if (argc - optind > 1)
    return cli_usage_error("one input file at a time");
  cli_cap_stdout();
  const char *path = argv[optind];
  /* The report is the default; a listing or the summary replace it.  JSON
   * carries the report too (a "report" key); --events --format=json is
   * the listing as JSON Lines, nothing else. */
  int report = !d.events && !d.summary;
  if (report) {
    d.mem = memreport_new(&mo);
    so.traces = cli_traces();
    so.sources = cli_sources();
    d.sys = sysreport_new(&so);
    if (!d.mem || !d.sys) {
      cli_error("out of memory");
      return CLI_EXIT_ERROR;
    }
  }
  ljp_reader *r = cli_open_reader(path, d.flavor);
  if (!r) {
    memreport_free(d.mem);
    sysreport_free(d.sys);
    return CLI_EXIT_ERROR;
  }
  int rc = cli_drain(path, r, on_event, &d) ? CLI_EXIT_ERROR : 0;
  if (cli_stdout_closed())
    rc = 0;   /* the reader of --events stopped reading: a quiet end */
  if (d.oom) {
    cli_error("%s: out of memory: the report misses events", cli_input_name(path));
    rc = CLI_EXIT_ERROR;
  }
  const char *name = cli_input_name(path);
  if (d.json && d.events) {
    /* JSON Lines: the events are all there is. */
  } else if (d.json) {
    json_report jr = {&d, r};
    int prc = summary_print_json(r, name, stdout,
                                 report && ljp_reader_kind(r) != LJP_KIND_UNKNOWN
                                     ? print_json_report : NULL,
                                 &jr);
    if (prc == -2) {
      cli_error("out of memory while printing the report");
      rc = CLI_EXIT_ERROR;
    }
  } else if (d.summary)
    summary_print_text(r, name, 1, stdout);
  else if (report) {
    int prc = 0;
    if (ljp_reader_kind(r) == LJP_KIND_MEMPROF)
      prc = memreport_print(d.mem, stdout);
    else if (ljp_reader_kind(r) == LJP_KIND_SYSPROF) {
      /* The report has the VM-state table: the summary's header only. */
      summary_print_text(r, name, 0, stdout);
      fputc('\n', stdout);
      prc = sysreport_print(d.sys, stdout);
    }
    if (prc == -2) {
      cli_error("out of memory while printing the report");
      rc = CLI_EXIT_ERROR;
    }
  }
  if (cli_finish_stdout())
    rc = CLI_EXIT_ERROR;
  memreport_free(d.mem);
  sysreport_free(d.sys);
  ljp_reader_free(r);
  return rc;
}
