/*
 * ljpfold — folded stacks from LuaJIT profiles, for flamegraph.pl,
 * speedscope, Firefox Profiler, Pyroscope and every tool that reads them.
 */
#include "cli.h"
#include "cli_limits.h"
#include "cli_options.h"
#include "cli_source.h"
#include "fold_output.h"
#include "fold_export.h"
#include "fold_jobs.h"
#include "cli_jobs.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static void usage(void) {
  printf(
      "Usage: %s [OPTION]... FILE...\n"
      "Fold sysprof or memprof profiles into collapsed stacks, one line per\n"
      "distinct stack: \"frame;frame;frame COUNT\", outermost frame first.\n"
      "Several files merge into one output.  FILE '-' reads standard input.\n"
      "\n"
      "Stacks (sysprof):\n"
      "      --stack=VIEW        merged (default): host frames down to the VM\n"
      "                          entry, Lua frames spliced in at every entry;\n"
      "                          lua: Lua frames only; host: host frames only;\n"
      "                          reference: Tarantool's luajit -ts merge\n"
      "      --vmstate[=WHERE]   add the VM state as a frame, VMST_<STATE>:\n"
      "                          none (without the option), root (--vmstate\n"
      "                          alone) or leaf\n"
      "      --addresses         name C and host frames name:0xADDR\n"
      "      --flavor=NAME       fast-function names: auto (default), tarantool,\n"
      "                          luajit, openresty\n"
      CLI_SOURCE_HELP
      "Weights (memprof):\n"
      "      --weight=W          bytes (default): bytes allocated; events:\n"
      "                          allocating events; live: bytes still held\n"
      "Filters:\n"
      "      --min-count=N       drop stacks whose count is below N\n"
      "      --include=REGEX     keep only stacks with a frame matching REGEX\n"
      "      --exclude=REGEX     drop stacks with a frame matching REGEX\n"
      "      --base=FRAME        re-root stacks at their outermost FRAME frame;\n"
      "                          stacks without it are dropped\n"
      "Output:\n"
      "      --format=FMT        folded (default) or tarantool: exactly what\n"
      "                          Tarantool's `luajit -ts` prints (lines sorted)\n"
      "                          pprof: gzip'd profile.proto for go tool pprof,\n"
      "                          Pyroscope, Parca; speedscope: speedscope JSON,\n"
      "                          a profile per coroutine (filters do not apply)\n"
      "  -o, --output=FILE       write pprof/speedscope output to FILE\n"
      "      --label=KEY=VALUE   pprof: a label on every sample (service, host)\n"
      "      --interval=DURATION the sampling interval of streams that do not\n"
      "                          carry it (N ms, or Nns/Nus/Nms/Ns): cpu time\n"
      "Files:\n"
      "  -j, --jobs=N            fold up to N files at once (0: one per\n"
      "                          processor; default 1): the same output and\n"
      "                          messages whatever N (folded and tarantool\n"
      "                          formats; exports read their files in turn)\n"
      CLI_LIMIT_HELP
      CLI_HELP_HELP
      "\n"
      "Exit status: 0 ok, 1 a file was truncated or broken (what was read is\n"
      "still folded) or output failed, 2 usage error.\n",
      cli_prog());
}

enum { OPT_MIN = 256, OPT_INCLUDE, OPT_EXCLUDE, OPT_BASE, OPT_FORMAT,
       OPT_LABEL, OPT_INTERVAL };

/* What the command line asks for.  The filters are the caller's, so that
 * every exit path, usage errors included, frees them. */
typedef struct fold_args {
  ljp_fold_options fo;
  fold_filter *ff;
  fold_export xp;
  int tarantool;           /* --format=tarantool */
  int jobs;                /* --jobs: files folded at once (0: one) */
  char **files;
  int nfiles;
} fold_args;

static int add_regex(regex_t **arr, size_t *n, const char *re) {
  regex_t *na = realloc(*arr, (*n + 1) * sizeof(*na));
  if (!na)
    return -1;
  *arr = na;
  int rc = regcomp(&na[*n], re, REG_EXTENDED | REG_NOSUB);
  if (rc) {
    char msg[128];
    regerror(rc, &na[*n], msg, sizeof(msg));
    cli_usage_error("bad regular expression '%s': %s", re, msg);
    return -1;
  }
  (*n)++;
  return 0;
}

/* The filter options: 1 taken, 0 not one of them, 2 usage error. */
static int filter_option(int c, const char *arg, fold_filter *ff) {
  unsigned long long u;
  switch (c) {
  case OPT_MIN:
    if (cli_parse_u64(arg, &u) || u > INT64_MAX)
      return cli_usage_error("--min-count takes a count, not '%s'", arg);
    ff->min_count = (int64_t)u;
    return 1;
  case OPT_INCLUDE:
    return add_regex(&ff->include, &ff->ninclude, arg) ? CLI_EXIT_USAGE : 1;
  case OPT_EXCLUDE:
    return add_regex(&ff->exclude, &ff->nexclude, arg) ? CLI_EXIT_USAGE : 1;
  case OPT_BASE:
    ff->base = arg;
    return 1;
  default:
    return 0;
  }
}

/* The output options: 1 taken, 0 not one of them, 2 usage error. */
static int output_option(int c, char *arg, fold_args *a) {
  switch (c) {
  case OPT_FORMAT:
    a->xp.format = FOLD_EXPORT_NONE;
    if (!strcmp(arg, "folded")) a->tarantool = 0;
    else if (!strcmp(arg, "tarantool")) a->tarantool = 1;
    else if (!strcmp(arg, "pprof")) a->xp.format = FOLD_EXPORT_PPROF;
    else if (!strcmp(arg, "speedscope")) a->xp.format = FOLD_EXPORT_SPEEDSCOPE;
    else return cli_usage_error("--format takes folded, tarantool, pprof or speedscope, not '%s'", arg);
    return 1;
  case 'o': a->xp.output = arg; return 1;
  case OPT_LABEL:
    return fold_export_label(&a->xp, arg) ? CLI_EXIT_USAGE : 1;
  case OPT_INTERVAL:
    return fold_export_interval(&a->xp, arg) ? CLI_EXIT_USAGE : 1;
  default:
    return 0;
  }
}

/* -j/--jobs: 1 taken, 0 not it, 2 usage error. */
static int jobs_option(int c, const char *arg, fold_args *a) {
  if (c != 'j')
    return 0;
  if (cli_jobs_parse(arg, &a->jobs))
    return cli_usage_error("--jobs takes a count from 0 to %d, not '%s'",
                           CLI_JOBS_MAX, arg);
  return 1;
}

/* One option: CLI_OPT_CONTINUE, or the status to exit with. */
static int one_option(int c, int argc, char **argv, fold_args *a) {
  if (c == CLI_OPT_VMSTATE)
    a->xp.vmstate_given = 1;
  int rc = cli_fold_option(c, optarg, argc, argv, &a->fo);
  if (rc == 0)
    rc = cli_flavor_option(c, optarg, &a->fo.flavor);
  if (rc == 0)
    rc = filter_option(c, optarg, a->ff);
  if (rc == 0)
    rc = output_option(c, optarg, a);
  if (rc == 0)
    rc = jobs_option(c, optarg, a);
  return cli_end_option(rc, c, optarg, usage);
}

/* Fills a from argv: CLI_OPT_CONTINUE, or the status to exit with (help,
 * version, usage errors). */
static int parse_args(int argc, char **argv, fold_args *a) {
  static const struct option opts[] = {
      CLI_FOLD_OPTIONS,
      CLI_FLAVOR_OPTION,
      {"min-count", required_argument, 0, OPT_MIN},
      {"include", required_argument, 0, OPT_INCLUDE},
      {"exclude", required_argument, 0, OPT_EXCLUDE},
      {"base", required_argument, 0, OPT_BASE},
      {"format", required_argument, 0, OPT_FORMAT},
      {"output", required_argument, 0, 'o'},
      {"label", required_argument, 0, OPT_LABEL},
      {"interval", required_argument, 0, OPT_INTERVAL},
      {"jobs", required_argument, 0, 'j'},
      CLI_LIMIT_OPTIONS,
      CLI_SOURCE_OPTIONS,
      CLI_HELP_OPTIONS,
      {0, 0, 0, 0}};
  int c;
  while ((c = getopt_long(argc, argv, "hVo:j:", opts, NULL)) != -1) {
    int rc = one_option(c, argc, argv, a);
    if (rc != CLI_OPT_CONTINUE)
      return rc;
  }
  if (optind >= argc)
    return cli_usage_error("no input file");
  a->files = argv + optind;
  a->nfiles = argc - optind;
  return CLI_OPT_CONTINUE;
}

/* The options that go together: CLI_OPT_CONTINUE, or a usage error. */
static int check_args(const fold_args *a) {
  const fold_filter *ff = a->ff;
  if (a->xp.format) {
    if (a->tarantool || ff->ninclude || ff->nexclude || ff->base || ff->min_count)
      return cli_usage_error("--format=pprof and speedscope take no filters");
  } else if (a->xp.output || a->xp.nlabels) {
    return cli_usage_error("-o and --label go with --format=pprof or speedscope");
  }
  return CLI_OPT_CONTINUE;
}

/* Writes the folded lines of the (filtered) tree to stdout: 0 or 1. */
static int write_folded(const ljp_tree *tree, const fold_args *a) {
  const fold_filter *ff = a->ff;
  const ljp_tree *out = tree;
  ljp_tree *filtered = NULL;
  if (ff->ninclude || ff->nexclude || ff->base) {
    out = filtered = fold_filter_tree(tree, ff);
    if (!out) {
      cli_error("out of memory");
      return CLI_EXIT_ERROR;
    }
  }
  int rc = 0;
  /* One deep stack of long names can make a line far longer than the
   * input: refuse before building it. */
  if (cli_check_output_size(cli_folded_size(out))) {
    rc = CLI_EXIT_ERROR;
  } else {
    ljp_status st =
        a->tarantool ? fold_write_tarantool(out, ff->min_count, cli_emit_stdout, NULL)
                     : ljp_tree_write_folded(out, ff->min_count, cli_emit_stdout, NULL);
    if (st == LJP_E_NOMEM) {
      cli_error("out of memory");
      rc = CLI_EXIT_ERROR;
    }
  }
  if (cli_finish_stdout())
    rc = CLI_EXIT_ERROR;
  ljp_tree_free(filtered);
  return rc;
}

/* Folded output: the inputs into one tree, then the lines. */
static int fold_run(fold_args *a) {
  if (a->tarantool) {
    a->fo.view = LJP_VIEW_REFERENCE;
    a->fo.style = LJP_NAME_REFERENCE;
    a->fo.vmstate = LJP_VMSTATE_NONE;
  }
  ljp_tree *tree;
  int rc = fold_jobs_run(a->files, a->nfiles, a->jobs > 1 ? a->jobs : 1,
                         &a->fo, &tree);
  if (rc >= 0) {
    int wrc = write_folded(tree, a);
    rc = rc ? rc : wrc;
  } else {
    rc = CLI_EXIT_ERROR;
  }
  ljp_tree_free(tree);
  return rc;
}

static int fold_main(int argc, char **argv, fold_filter *ff) {
  cli_init(argv[0]);
  fold_args a;
  memset(&a, 0, sizeof(a));
  a.fo.flavor = LJP_FLAVOR_AUTO;
  a.fo.weight = LJP_WEIGHT_BYTES;
  a.ff = ff;
  int rc = parse_args(argc, argv, &a);
  if (rc == CLI_OPT_CONTINUE)
    rc = check_args(&a);
  if (rc != CLI_OPT_CONTINUE)
    return rc;
  cli_cap_stdout();
  a.fo.traces = cli_traces();
  if (!a.tarantool)
    a.fo.sources = cli_sources();
  if (a.xp.format)
    return fold_export_run(&a.xp, &a.fo, a.files, a.nfiles);
  return fold_run(&a);
}

int main(int argc, char **argv) {
  fold_filter ff;
  memset(&ff, 0, sizeof(ff));
  int rc = fold_main(argc, argv, &ff);
  for (size_t i = 0; i < ff.ninclude; i++)
    regfree(&ff.include[i]);
  for (size_t i = 0; i < ff.nexclude; i++)
    regfree(&ff.exclude[i]);
  free(ff.include);
  free(ff.exclude);
  return rc;
}
