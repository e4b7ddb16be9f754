/*
 * cli_vmstate.c — see cli_vmstate.h.  One parser, so that ljpfold and
 * ljpsvg cannot drift apart in what --vmstate takes.
 */
#include "cli_vmstate.h"

#include <string.h>

static int named(const char *s, ljp_vmstate_frame *out) {
  if (strcmp(s, "none") == 0)
    *out = LJP_VMSTATE_NONE;
  else if (strcmp(s, "root") == 0)
    *out = LJP_VMSTATE_ROOT;
  else if (strcmp(s, "leaf") == 0)
    *out = LJP_VMSTATE_LEAF;
  else
    return -1;
  return 0;
}

int cli_parse_vmstate(const char *optarg_, int argc, char **argv, int *optind_,
                      ljp_vmstate_frame *out) {
  if (optarg_)
    return named(optarg_, out);
  /* getopt gives an optional argument only as --vmstate=WHERE; the
   * spelling "--vmstate WHERE" worked before and reads naturally. */
  if (*optind_ < argc && named(argv[*optind_], out) == 0) {
    (*optind_)++;
    return 0;
  }
  *out = LJP_VMSTATE_ROOT;
  return 0;
}
