/* cli_view.c — see cli_view.h. */
#include "cli_view.h"

#include <string.h>

int cli_parse_stack(const char *s, ljp_stack_view *out) {
  static const struct {
    const char *name;
    ljp_stack_view view;
  } views[] = {{"merged", LJP_VIEW_MERGED},
               {"lua", LJP_VIEW_LUA},
               {"host", LJP_VIEW_HOST},
               {"reference", LJP_VIEW_REFERENCE}};
  for (size_t i = 0; i < sizeof(views) / sizeof(views[0]); i++)
    if (strcmp(s, views[i].name) == 0) {
      *out = views[i].view;
      return 0;
    }
  return -1;
}

int cli_parse_weight(const char *s, ljp_weight *out) {
  /* samples is not offered: it is what sysprof profiles always weigh by. */
  static const struct {
    const char *name;
    ljp_weight weight;
  } weights[] = {{"bytes", LJP_WEIGHT_BYTES},
                 {"events", LJP_WEIGHT_EVENTS},
                 {"live", LJP_WEIGHT_LIVE}};
  for (size_t i = 0; i < sizeof(weights) / sizeof(weights[0]); i++)
    if (strcmp(s, weights[i].name) == 0) {
      *out = weights[i].weight;
      return 0;
    }
  return -1;
}
