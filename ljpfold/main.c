/*
 * ljpfold — folded stacks from LuaJIT profiles, for flamegraph.pl,
 * speedscope, Firefox Profiler, Pyroscope and every tool that reads them.
 */
#include "cli.h"
#include "cli_limits.h"
#include "cli_source.h"
#include "cli_view.h"
#include "cli_vmstate.h"
#include "fold_output.h"
#include "fold_export.h"

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
      CLI_LIMIT_HELP
      "  -h, --help              show this help and exit\n"
      "  -V, --version           show the version and exit\n"
      "\n"
      "Exit status: 0 ok, 1 a file was truncated or broken (what was read is\n"
      "still folded) or output failed, 2 usage error.\n",
      cli_prog());
}

enum { OPT_STACK = 256, OPT_VMSTATE, OPT_ADDRESSES, OPT_FLAVOR, OPT_WEIGHT,
       OPT_MIN, OPT_INCLUDE, OPT_EXCLUDE, OPT_BASE, OPT_FORMAT,
       OPT_LABEL, OPT_INTERVAL };

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

static int fold_event(void *ctx, const ljp_reader *r, const ljp_event *ev) {
  if (ljp_folder_add(ctx, r, ev) != LJP_OK) {
    cli_error("out of memory");
    return CLI_EXIT_ERROR;
  }
  return 0;
}

static int fold_main(int argc, char **argv, fold_filter *ffp) {
  static const struct option opts[] = {
      {"stack", required_argument, 0, OPT_STACK},
      {"vmstate", optional_argument, 0, OPT_VMSTATE},
      {"addresses", no_argument, 0, OPT_ADDRESSES},
      {"flavor", required_argument, 0, OPT_FLAVOR},
      {"weight", required_argument, 0, OPT_WEIGHT},
      {"min-count", required_argument, 0, OPT_MIN},
      {"include", required_argument, 0, OPT_INCLUDE},
      {"exclude", required_argument, 0, OPT_EXCLUDE},
      {"base", required_argument, 0, OPT_BASE},
      {"format", required_argument, 0, OPT_FORMAT},
      {"output", required_argument, 0, 'o'},
      {"label", required_argument, 0, OPT_LABEL},
      {"interval", required_argument, 0, OPT_INTERVAL},
      CLI_LIMIT_OPTIONS,
      CLI_SOURCE_OPTIONS,
      {"help", no_argument, 0, 'h'},
      {"version", no_argument, 0, 'V'},
      {0, 0, 0, 0}};
  cli_init(argv[0]);
  ljp_fold_options fo;
  memset(&fo, 0, sizeof(fo));
  fo.flavor = LJP_FLAVOR_AUTO;
  fo.weight = LJP_WEIGHT_BYTES;
  int tarantool = 0, c;
  fold_export xp;
  memset(&xp, 0, sizeof(xp));
  unsigned long long u;
  while ((c = getopt_long(argc, argv, "hVo:", opts, NULL)) != -1) {
    switch (c) {
    case OPT_STACK:
      if (cli_parse_stack(optarg, &fo.view))
        return cli_usage_error("--stack takes " CLI_STACK_VALUES ", not '%s'", optarg);
      break;
    case OPT_VMSTATE:
      if (cli_parse_vmstate(optarg, argc, argv, &optind, &fo.vmstate))
        return cli_usage_error("--vmstate takes none, root or leaf, not '%s'", optarg);
      xp.vmstate_given = 1;
      break;
    case OPT_ADDRESSES: fo.style = LJP_NAME_ADDRESSES; break;
    case OPT_FLAVOR:
      if (cli_parse_flavor(optarg, &fo.flavor))
        return cli_usage_error("unknown flavor '%s'", optarg);
      break;
    case OPT_WEIGHT:
      if (cli_parse_weight(optarg, &fo.weight))
        return cli_usage_error("--weight takes " CLI_WEIGHT_VALUES ", not '%s'", optarg);
      break;
    case OPT_MIN:
      if (cli_parse_u64(optarg, &u) || u > INT64_MAX)
        return cli_usage_error("--min-count takes a count, not '%s'", optarg);
      ffp->min_count = (int64_t)u;
      break;
    case OPT_INCLUDE:
      if (add_regex(&ffp->include, &ffp->ninclude, optarg)) return CLI_EXIT_USAGE;
      break;
    case OPT_EXCLUDE:
      if (add_regex(&ffp->exclude, &ffp->nexclude, optarg)) return CLI_EXIT_USAGE;
      break;
    case OPT_BASE: ffp->base = optarg; break;
    case OPT_FORMAT:
      xp.format = FOLD_EXPORT_NONE;
      if (!strcmp(optarg, "folded")) tarantool = 0;
      else if (!strcmp(optarg, "tarantool")) tarantool = 1;
      else if (!strcmp(optarg, "pprof")) xp.format = FOLD_EXPORT_PPROF;
      else if (!strcmp(optarg, "speedscope")) xp.format = FOLD_EXPORT_SPEEDSCOPE;
      else return cli_usage_error("--format takes folded, tarantool, pprof or speedscope, not '%s'", optarg);
      break;
    case 'o': xp.output = optarg; break;
    case OPT_LABEL:
      if (fold_export_label(&xp, optarg)) return CLI_EXIT_USAGE;
      break;
    case OPT_INTERVAL:
      if (fold_export_interval(&xp, optarg)) return CLI_EXIT_USAGE;
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
  cli_cap_stdout();
  fo.traces = cli_traces();
  if (!tarantool)
    fo.sources = cli_sources();
  if (xp.format) {
    if (tarantool || ffp->ninclude || ffp->nexclude || ffp->base || ffp->min_count)
      return cli_usage_error("--format=pprof and speedscope take no filters");
    return fold_export_run(&xp, &fo, argv + optind, argc - optind);
  }
  if (xp.output || xp.nlabels)
    return cli_usage_error("-o and --label go with --format=pprof or speedscope");
  if (tarantool) {
    fo.view = LJP_VIEW_REFERENCE;
    fo.style = LJP_NAME_REFERENCE;
    fo.vmstate = LJP_VMSTATE_NONE;
  }
  ljp_tree *tree = ljp_tree_new();
  ljp_folder *folder = tree ? ljp_folder_new(tree, &fo) : NULL;
  if (!folder) {
    cli_error("out of memory");
    return CLI_EXIT_ERROR;
  }
  int rc = 0;
  for (int i = optind; i < argc; i++) {
    ljp_reader *r = cli_open_reader(argv[i], fo.flavor);
    if (!r) {
      rc = CLI_EXIT_ERROR;
      continue;
    }
    int drc = cli_drain(argv[i], r, fold_event, folder);
    if (drc)
      rc = CLI_EXIT_ERROR;
    /* The folder caches symbol pointers of this reader: one folder per
     * reader, the tree is what is shared. */
    ljp_folder_free(folder);
    ljp_reader_free(r);
    folder = ljp_folder_new(tree, &fo);
    if (!folder) {
      cli_error("out of memory");
      return CLI_EXIT_ERROR;
    }
  }
  ljp_folder_free(folder);
  ljp_tree *out = tree;
  if (ffp->ninclude || ffp->nexclude || ffp->base) {
    out = fold_filter_tree(tree, ffp);
    if (!out) {
      cli_error("out of memory");
      return CLI_EXIT_ERROR;
    }
  }
  /* One deep stack of long names can make a line far longer than the
   * input: refuse before building it. */
  if (cli_check_output_size(cli_folded_size(out))) {
    rc = CLI_EXIT_ERROR;
  } else {
    ljp_status st =
        tarantool ? fold_write_tarantool(out, ffp->min_count, cli_emit_stdout, NULL)
                  : ljp_tree_write_folded(out, ffp->min_count, cli_emit_stdout, NULL);
    if (st == LJP_E_NOMEM) {
      cli_error("out of memory");
      rc = CLI_EXIT_ERROR;
    }
  }
  if (cli_finish_stdout())
    rc = CLI_EXIT_ERROR;
  if (out != tree)
    ljp_tree_free(out);
  ljp_tree_free(tree);
  return rc;
}

int main(int argc, char **argv) {
  /* The filters outlive fold_main so that every exit path, usage errors
   * included, frees them. */
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
