/*
 * cli_limits.h — the resource-limit options every ljp tool takes, so that a
 * hostile or broken profile cannot make a tool allocate or write without
 * bound:
 *
 *   --max-frames=N    frames per stack (Lua or host), default 2^20
 *   --max-string=N    bytes of one chunk or symbol name, default 64 MiB
 *   --max-symbols=N   symbol definitions per file, default 2^26
 *   --max-output=N    bytes written to standard output, default 4 GiB
 *
 * N takes a K, M, G or T suffix (powers of 1024); --max-output=0 lifts the
 * output cap.  The reader limits go to every reader cli_open_reader()
 * opens; a run that hits one stops that input with
 * "tool: file: offset N: ... (the limit)" and exit status 1.
 */
#ifndef LJP_CLI_LIMITS_H
#define LJP_CLI_LIMITS_H

#include "ljp.h"

#include <getopt.h>
#include <stdint.h>

enum {
  CLI_OPT_MAX_FRAMES = 0x4c00,
  CLI_OPT_MAX_STRING,
  CLI_OPT_MAX_SYMBOLS,
  CLI_OPT_MAX_OUTPUT
};

#define CLI_DEFAULT_MAX_OUTPUT (UINT64_C(4) << 30)

/* Entries for a getopt_long option table: the reader limits, and the
 * output cap (for tools that write through stdout). */
#define CLI_READER_LIMIT_OPTIONS                                              \
  {"max-frames", required_argument, 0, CLI_OPT_MAX_FRAMES},                   \
  {"max-string", required_argument, 0, CLI_OPT_MAX_STRING},                   \
  {"max-symbols", required_argument, 0, CLI_OPT_MAX_SYMBOLS}
#define CLI_LIMIT_OPTIONS                                                     \
  CLI_READER_LIMIT_OPTIONS,                                                   \
  {"max-output", required_argument, 0, CLI_OPT_MAX_OUTPUT}

/* The --help lines of the options above. */
#define CLI_READER_LIMIT_HELP                                                 \
  "Limits (against broken or hostile input; N takes K, M, G, T):\n"          \
  "      --max-frames=N      frames per stack (default 1M)\n"                 \
  "      --max-string=N      bytes per symbol or chunk name (default 64M)\n"  \
  "      --max-symbols=N     symbol definitions per file (default 64M)\n"
#define CLI_LIMIT_HELP                                                        \
  CLI_READER_LIMIT_HELP                                                       \
  "      --max-output=N      bytes of output, 0 for no limit (default 4G)\n"

/* Handles opt if it is one of the limit options: returns 1 when handled,
 * 0 when opt is not a limit option, or the usage exit status (2, after a
 * message) for a bad value. */
int cli_limit_option(int opt, const char *arg);

/* The reader limits given on the command line (zero fields: defaults). */
const ljp_limits *cli_limits(void);
/* The output cap in bytes, 0 = none. */
uint64_t cli_max_output(void);

/* Parses "123", "64K", "4G" (powers of 1024).  0 ok, -1 bad. */
int cli_parse_size(const char *s, uint64_t *out);

/* Bytes the folded text of t would take (lines "a;b;c N\n" of every node
 * with a non-zero self weight), saturating at UINT64_MAX.  Checked before
 * writing, because one line of a deep stack of long names can be far
 * longer than the input (a 64 MiB name repeated in a 2^20-frame stack). */
uint64_t cli_folded_size(const ljp_tree *t);

/* Enforces --max-output on everything written through stdout: replaces
 * stdout by a stream that passes bytes to descriptor 1 up to the cap and
 * fails every write after it (the tools stop at a failed write, and
 * cli_finish_stdout() then says the limit was hit).  Call once; the cap
 * is read at every write, so options parsed later still count.  0 ok, -1
 * when the stream cannot be made. */
int cli_cap_stdout(void);
/* 1 once a write was refused at the cap. */
int cli_output_capped(void);

/* Checks a size against --max-output: 0 when it fits, else prints
 * "prog: output would be N bytes, over the --max-output limit of M" and
 * returns 1. */
int cli_check_output_size(uint64_t bytes);

#endif
