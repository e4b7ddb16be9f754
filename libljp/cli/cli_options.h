/*
 * cli_options.h — the option blocks that several tools take alike, parsed
 * in one place so that the tools accept the same values and word their
 * errors the same way:
 *
 *   --flavor=NAME        fast-function names (ljpdump, ljpfold)
 *   --stack=VIEW, --vmstate[=WHERE], --addresses, --weight=W
 *                        how stacks are folded (ljpfold, ljpsvg)
 *   -h/--help, -V/--version, and the limit and naming options of
 *   cli_limits.h and cli_source.h, which every tool takes
 *
 * Each handler returns 1 when it took the option, 0 when the option is not
 * one of its own, or the usage exit status (2, after a message) for a bad
 * value, like cli_limit_option().
 */
#ifndef LJP_CLI_OPTIONS_H
#define LJP_CLI_OPTIONS_H

#include "ljp.h"

#include <getopt.h>

enum {
  CLI_OPT_FLAVOR = 0x4c40,
  CLI_OPT_STACK,
  CLI_OPT_VMSTATE,
  CLI_OPT_ADDRESSES,
  CLI_OPT_WEIGHT
};

/* Entries for a getopt_long option table. */
#define CLI_FLAVOR_OPTION {"flavor", required_argument, 0, CLI_OPT_FLAVOR}
#define CLI_FOLD_OPTIONS                                                      \
  {"stack", required_argument, 0, CLI_OPT_STACK},                             \
  {"vmstate", optional_argument, 0, CLI_OPT_VMSTATE},                         \
  {"addresses", no_argument, 0, CLI_OPT_ADDRESSES},                           \
  {"weight", required_argument, 0, CLI_OPT_WEIGHT}
#define CLI_HELP_OPTIONS                                                      \
  {"help", no_argument, 0, 'h'},                                              \
  {"version", no_argument, 0, 'V'}

/* The --help lines of -h and -V, for the tools that word them alike. */
#define CLI_HELP_HELP                                                         \
  "  -h, --help              show this help and exit\n"                      \
  "  -V, --version           show the version and exit\n"

/* --flavor into *flavor. */
int cli_flavor_option(int opt, const char *arg, ljp_flavor *flavor);

/* --stack, --vmstate, --addresses and --weight into fo.  --vmstate may
 * take the next word of argv (see cli_vmstate.h), hence argc and argv. */
int cli_fold_option(int opt, const char *arg, int argc, char **argv,
                    ljp_fold_options *fo);

/* What cli_end_option returns when the option was taken and parsing goes
 * on; any other value is the status the tool exits with. */
#define CLI_OPT_CONTINUE (-1)

/* The end of every tool's chain of option handlers.  rc is what the
 * tool's own handlers returned for opt (1 taken, 0 none of theirs, else
 * an exit status); when none took it, the limit and naming options, -h
 * (usage() prints the tool's help to stdout), -V, and "unknown option"
 * for anything else. */
int cli_end_option(int rc, int opt, const char *arg, void (*usage)(void));

#endif
