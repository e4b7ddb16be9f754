/*
 * cli_source.h — the options that decide how Lua code is named, shared by
 * the tools that draw or rank stacks:
 *
 *   --traces=MODE      under (default): a trace stands on its function,
 *                      "...;@a.lua:196;TRACE [4] @a.lua:198";
 *                      function: the trace folds into its function (stable
 *                      across runs: diffs compare like with like);
 *                      trace: the trace frame as the stream has it
 *   --source-dir=DIR   where relative chunk paths are looked for (repeatable,
 *                      tried in order, then the current directory)
 *   --no-source        do not read Lua sources: "@a.lua:196" stays as is
 *
 * By default sources are read where they are found, and functions are
 * named "risk_score @a.lua:196" (see ljp_srcnames in ljp.h).
 */
#ifndef LJP_CLI_SOURCE_H
#define LJP_CLI_SOURCE_H

#include "ljp.h"

#include <getopt.h>

enum {
  CLI_OPT_TRACES = 0x4c20,
  CLI_OPT_SOURCE_DIR,
  CLI_OPT_NO_SOURCE
};

#define CLI_SOURCE_OPTIONS                                                    \
  {"traces", required_argument, 0, CLI_OPT_TRACES},                           \
  {"source-dir", required_argument, 0, CLI_OPT_SOURCE_DIR},                   \
  {"no-source", no_argument, 0, CLI_OPT_NO_SOURCE}

#define CLI_SOURCE_HELP                                                       \
  "Naming:\n"                                                                 \
  "      --traces=MODE       under (default: a trace on its function),\n"     \
  "                          function (traces folded into their functions,\n" \
  "                          stable across runs), trace (the trace alone)\n" \
  "      --source-dir=DIR    look for relative chunk paths under DIR\n"       \
  "                          (repeatable; then the current directory)\n"      \
  "      --no-source         do not read Lua sources to name functions\n"

/* Handles opt if it is one of the options above: 1 when handled, 0 when it
 * is not one of them, or the usage exit status (2, after a message). */
int cli_source_option(int opt, const char *arg);

/* Parses a --traces value: 0 and *out, or -1 for an unknown mode. */
int cli_parse_traces(const char *s, ljp_trace_mode *out);

/* The --traces mode given (LJP_TRACES_UNDER by default). */
ljp_trace_mode cli_traces(void);
/* 1 when --traces was on the command line (a tool may default otherwise). */
int cli_traces_given(void);

/* The resolver for the run, made on first call with the --source-dir
 * directories; NULL with --no-source or when out of memory (names then
 * stay "@chunk:line").  Freed at exit. */
ljp_srcnames *cli_sources(void);

/* A resolver of its own for another thread (a resolver serves one thread
 * at a time), with the same directories: *out is NULL under --no-source.
 * 0, or -1 when out of memory.  The caller frees it. */
int cli_sources_new(ljp_srcnames **out);

#endif
