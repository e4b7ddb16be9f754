/*
 * cli_vmstate.h — the --vmstate option of ljpfold and ljpsvg:
 * --vmstate[=WHERE] with WHERE none, root or leaf; bare --vmstate means
 * root; without the option, none.  "--vmstate WHERE" (a separate word) is
 * taken too when the word is one of the three names.
 */
#ifndef LJP_CLI_VMSTATE_H
#define LJP_CLI_VMSTATE_H

#include "ljp.h"

/* The default when --vmstate is not given. */
#define CLI_VMSTATE_DEFAULT LJP_VMSTATE_NONE

/* Parses one --vmstate (getopt's optarg, NULL for the bare option); may
 * consume argv[*optind_].  Returns 0, or -1 for an unknown WHERE. */
int cli_parse_vmstate(const char *optarg_, int argc, char **argv, int *optind_,
                      ljp_vmstate_frame *out);

#endif
