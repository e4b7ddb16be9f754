/*
 * cli_options.c — see cli_options.h.  The value parsers live next to their
 * option (cli_view.c, cli_vmstate.c, cli.c); this file is the one place
 * that turns a bad value into the usage error the user reads.
 */
#include "cli_options.h"
#include "cli.h"
#include "cli_limits.h"
#include "cli_source.h"
#include "cli_view.h"
#include "cli_vmstate.h"

int cli_flavor_option(int opt, const char *arg, ljp_flavor *flavor) {
  if (opt != CLI_OPT_FLAVOR)
    return 0;
  if (cli_parse_flavor(arg, flavor))
    return cli_usage_error("unknown flavor '%s'", arg);
  return 1;
}

int cli_fold_option(int opt, const char *arg, int argc, char **argv,
                    ljp_fold_options *fo) {
  switch (opt) {
  case CLI_OPT_STACK:
    if (cli_parse_stack(arg, &fo->view))
      return cli_usage_error("--stack takes " CLI_STACK_VALUES ", not '%s'",
                             arg);
    return 1;
  case CLI_OPT_VMSTATE:
    /* A bare --vmstate never fails: arg is a name when this reports. */
    if (cli_parse_vmstate(arg, argc, argv, &optind, &fo->vmstate))
      return cli_usage_error("--vmstate takes none, root or leaf, not '%s'",
                             arg);
    return 1;
  case CLI_OPT_ADDRESSES:
    fo->style = LJP_NAME_ADDRESSES;
    return 1;
  case CLI_OPT_WEIGHT:
    if (cli_parse_weight(arg, &fo->weight))
      return cli_usage_error("--weight takes " CLI_WEIGHT_VALUES
                             ", not '%s'", arg);
    return 1;
  default:
    return 0;
  }
}

int cli_end_option(int rc, int opt, const char *arg, void (*usage)(void)) {
  if (rc)
    return rc == 1 ? CLI_OPT_CONTINUE : rc;
  if (opt == 'h') {
    usage();
    return cli_finish_stdout();
  }
  if (opt == 'V') {
    cli_print_version();
    return cli_finish_stdout();
  }
  rc = cli_limit_option(opt, arg);
  if (rc == 0)
    rc = cli_source_option(opt, arg);
  if (rc == 1)
    return CLI_OPT_CONTINUE;
  return rc ? rc : cli_usage_error("unknown option");
}
