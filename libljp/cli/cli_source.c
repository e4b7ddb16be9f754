/*
 * cli_source.c — see cli_source.h.  One command line, one resolver: the
 * sources are read once per run, whatever the number of inputs.
 */
#include "cli_source.h"
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static ljp_trace_mode traces = LJP_TRACES_UNDER;
static int traces_given;
static int no_source;
static const char **dirs;
static size_t ndirs;
static ljp_srcnames *sources;
static int made;

int cli_parse_traces(const char *s, ljp_trace_mode *out) {
  if (!s)
    return -1;
  if (!strcmp(s, "under"))
    *out = LJP_TRACES_UNDER;
  else if (!strcmp(s, "function"))
    *out = LJP_TRACES_FUNCTION;
  else if (!strcmp(s, "trace"))
    *out = LJP_TRACES_TRACE;
  else
    return -1;
  return 0;
}

static void free_sources(void) {
  ljp_srcnames_free(sources);
  sources = NULL;
  free(dirs);
  dirs = NULL;
}

int cli_source_option(int opt, const char *arg) {
  switch (opt) {
  case CLI_OPT_TRACES:
    if (cli_parse_traces(arg, &traces))
      return cli_usage_error("--traces takes under, function or trace, "
                             "not '%s'", arg ? arg : "");
    traces_given = 1;
    return 1;
  case CLI_OPT_NO_SOURCE:
    no_source = 1;
    return 1;
  case CLI_OPT_SOURCE_DIR: {
    const char **nd = realloc(dirs, (ndirs + 1) * sizeof(*nd));
    if (!nd) { /* 1 would read as "handled": stop with status 2 */
      cli_error("out of memory");
      return CLI_EXIT_USAGE;
    }
    dirs = nd;
    dirs[ndirs++] = arg; /* argv outlives the run */
    return 1;
  }
  default:
    return 0;
  }
}

ljp_trace_mode cli_traces(void) { return traces; }

int cli_traces_given(void) { return traces_given; }

int cli_sources_new(ljp_srcnames **out) {
  *out = NULL;
  if (no_source)
    return 0;
  ljp_srcnames *s = ljp_srcnames_new();
  for (size_t i = 0; s && i < ndirs; i++)
    if (ljp_srcnames_add_dir(s, dirs[i]) != LJP_OK) {
      ljp_srcnames_free(s);
      s = NULL;
    }
  *out = s;
  return s ? 0 : -1;
}

ljp_srcnames *cli_sources(void) {
  if (made)
    return sources;
  made = 1;
  if (!no_source) {
    sources = ljp_srcnames_new();
    for (size_t i = 0; sources && i < ndirs; i++)
      if (ljp_srcnames_add_dir(sources, dirs[i]) != LJP_OK) {
        ljp_srcnames_free(sources);
        sources = NULL;
      }
  }
  atexit(free_sources);
  return sources;
}
