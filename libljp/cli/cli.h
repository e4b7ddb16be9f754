/*
 * cli.h — chores shared by the ljp command-line tools: the program name in
 * diagnostics, opening inputs ("-" is stdin), reporting reader errors as
 * "tool: file: offset N: what", and checked output to stdout.
 *
 * Exit codes used by every tool: 0 ok, 1 input or output error (partial
 * results are still written), 2 usage error.
 */
#ifndef LJP_CLI_H
#define LJP_CLI_H

#include "ljp.h"

#include <stdio.h>

#define CLI_EXIT_OK 0
#define CLI_EXIT_ERROR 1
#define CLI_EXIT_USAGE 2

/* Sets the program name used in messages; ignores SIGPIPE so that a closed
 * pipe ends the tool through its own exit path (see cli_finish_stdout)
 * instead of killing it. */
void cli_init(const char *prog);
const char *cli_prog(void);

#if defined(__GNUC__)
#define CLI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CLI_PRINTF(a, b)
#endif

/* "prog: message" on stderr. */
void cli_error(const char *fmt, ...) CLI_PRINTF(1, 2);
/* "prog: file: message" on stderr, the file named as cli_input_name()
 * names it; file NULL: "prog: message". */
void cli_error_in(const char *file, const char *fmt, ...) CLI_PRINTF(2, 3);
/* "prog: message" + "Try 'prog --help' for more information.", returns 2. */
int cli_usage_error(const char *fmt, ...) CLI_PRINTF(1, 2);
/* Prints "prog (ljp) VERSION". */
void cli_print_version(void);

/* The name of an input in messages: "-" reads as "<stdin>". */
const char *cli_input_name(const char *path);

/* Opens path ("-" = standard input) with a new reader.  On failure prints
 * "prog: path: reason" and returns NULL. */
ljp_reader *cli_open_reader(const char *path, ljp_flavor flavor);
/* The one way the tools open a profile, for those that report errors their
 * own way (ljpsvg, ljpdb's importer): a new reader with flavor (unless
 * LJP_FLAVOR_AUTO) and limits (unless NULL), opened on mem when it is not
 * NULL, else on fd when it is >= 0, else on path.  Prints nothing.  Returns
 * the open status; *out is the reader, also on failure so that its error
 * can be read (the caller frees it), and NULL only when out of memory
 * (LJP_E_NOMEM). */
ljp_status cli_reader_open(ljp_reader **out, const char *path, int fd,
                           const void *mem, size_t len, ljp_flavor flavor,
                           const ljp_limits *limits);
/* Reports the reader's error: "prog: path: offset N: what". */
void cli_reader_error(const char *path, const ljp_reader *r);
/* Drains r to its end, calling fn for every event; reports an error as
 * above and returns 1 then, 0 on a clean end.  fn returns non-zero to stop
 * (out of memory, output failure), which is returned as is. */
typedef int (*cli_event_fn)(void *ctx, const ljp_reader *r,
                            const ljp_event *ev);
int cli_drain(const char *path, ljp_reader *r, cli_event_fn fn, void *ctx);

/* ljp_emit_fn writing to stdout. */
int cli_emit_stdout(void *ctx, const char *line, size_t len);
/* Flushes stdout; on a write error (full disk) prints "prog: write error:
 * reason" and returns 1, else 0.  A closed pipe (the reader stopped
 * reading, as head does) is the quiet end of the output: 0, no message. */
int cli_finish_stdout(void);
/* Records errno as the reason a write to stdout failed (the first reason
 * is kept), for writers other than cli_emit_stdout. */
void cli_note_stdout_error(void);
/* 1 when a write to stdout failed because the pipe was closed. */
int cli_stdout_closed(void);

/* Parses a --flavor argument (auto, tarantool, luajit, openresty): returns
 * 0 and *out on success, -1 for an unknown name. */
int cli_parse_flavor(const char *s, ljp_flavor *out);

/* Parses "name=value" style numbers: returns 0 and *out on success. */
int cli_parse_u64(const char *s, unsigned long long *out);

#endif
