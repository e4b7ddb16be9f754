/*
 * cli.c — see cli.h.  The tools keep their one piece of global state here:
 * the program name for messages.
 */
#include "cli.h"
#include "cli_limits.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static const char *prog_name = "ljp";
static int out_errno; /* errno of the first failed write to stdout */

void cli_init(const char *prog) {
  const char *slash = prog ? strrchr(prog, '/') : NULL;
  prog_name = slash ? slash + 1 : (prog ? prog : "ljp");
  signal(SIGPIPE, SIG_IGN);
}

const char *cli_prog(void) { return prog_name; }

/* "prog: [file: ]message\n", after what stdout holds so far (the two
 * streams may be one terminal or one file). */
static void verror(const char *file, const char *fmt, va_list ap) {
  fflush(stdout);
  fprintf(stderr, "%s: ", prog_name);
  if (file)
    fprintf(stderr, "%s: ", cli_input_name(file));
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
}

void cli_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  verror(NULL, fmt, ap);
  va_end(ap);
}

void cli_error_in(const char *file, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  verror(file, fmt, ap);
  va_end(ap);
}

int cli_usage_error(const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "%s: ", prog_name);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\nTry '%s --help' for more information.\n", prog_name);
  return CLI_EXIT_USAGE;
}

void cli_print_version(void) {
  printf("%s (ljp) %s\n", prog_name, ljp_version());
}

const char *cli_input_name(const char *path) {
  return strcmp(path, "-") == 0 ? "<stdin>" : path;
}

ljp_status cli_reader_open(ljp_reader **out, const char *path, int fd,
                           const void *mem, size_t len, ljp_flavor flavor,
                           const ljp_limits *limits) {
  ljp_reader *r = *out = ljp_reader_new();
  if (!r)
    return LJP_E_NOMEM;
  if (flavor != LJP_FLAVOR_AUTO)
    ljp_reader_set_flavor(r, flavor);
  if (limits)
    ljp_reader_set_limits(r, limits);
  return mem ? ljp_reader_open_memory(r, mem, len)
         : fd >= 0 ? ljp_reader_open_fd(r, fd)
                   : ljp_reader_open_path(r, path);
}

ljp_reader *cli_open_reader(const char *path, ljp_flavor flavor) {
  ljp_reader *r;
  int fd = strcmp(path, "-") == 0 ? 0 : -1;
  ljp_status st = cli_reader_open(&r, path, fd, NULL, 0, flavor, cli_limits());
  if (!r) {
    cli_error_in(path, "out of memory");
    return NULL;
  }
  if (st != LJP_OK) {
    cli_error_in(path, "%s", ljp_reader_error(r));
    ljp_reader_free(r);
    return NULL;
  }
  return r;
}

/* What a truncated input means for the user, beside the technical
 * detail: profilers write as they go, so a cut file is almost always a
 * producer that did not finish. */
static const char *truncation_meaning(const ljp_reader *r) {
  const char *msg = ljp_reader_error(r);
  if (ljp_reader_kind(r) == LJP_KIND_UNKNOWN)
    return "the file ends inside its symbol table: was the producer killed "
           "as it started, or the file copied while it was being written?";
  if (ljp_reader_error_offset(r) == ljp_reader_offset(r))
    return "the file ends between two records, without its end marker: was "
           "the producer killed, or is it still writing?";
  if (strstr(msg, "symbol"))
    return "the file ends inside a symbol record: was the producer killed?";
  return ljp_reader_kind(r) == LJP_KIND_SYSPROF
             ? "the file ends inside a sample: was the producer killed?"
             : "the file ends inside an event: was the producer killed?";
}

void cli_reader_error(const char *path, const ljp_reader *r) {
  cli_error_in(path, "%s", ljp_reader_error(r));
  if (ljp_reader_status(r) == LJP_E_TRUNCATED)
    cli_error_in(path, "%s Everything before it is shown.",
                 truncation_meaning(r));
}

int cli_drain(const char *path, ljp_reader *r, cli_event_fn fn, void *ctx) {
  const ljp_event *ev;
  ljp_status st;
  while ((st = ljp_reader_next(r, &ev)) == LJP_OK) {
    if (fn) {
      int rc = fn(ctx, r, ev);
      if (rc)
        return rc;
    }
  }
  if (st == LJP_END)
    return 0;
  cli_reader_error(path, r);
  return CLI_EXIT_ERROR;
}

int cli_emit_stdout(void *ctx, const char *line, size_t len) {
  (void)ctx;
  if (fwrite(line, 1, len, stdout) == len)
    return 0;
  if (!out_errno)
    out_errno = errno;
  return -1;
}

void cli_note_stdout_error(void) {
  if (!out_errno)
    out_errno = errno ? errno : EIO;
}

int cli_stdout_closed(void) { return out_errno == EPIPE; }

/* 1 when stdout is a pipe or socket whose reading end is closed: poll
 * reports an error condition on it. */
static int reader_gone(void) {
  struct pollfd p = {1, POLLOUT, 0};
  return poll(&p, 1, 0) == 1 && (p.revents & (POLLERR | POLLHUP)) != 0;
}

int cli_finish_stdout(void) {
  errno = 0;
  if (fflush(stdout) != 0 || ferror(stdout)) {
    if (cli_output_capped()) {
      fprintf(stderr, "%s: output stopped at the --max-output limit of %llu "
              "bytes\n", prog_name, (unsigned long long)cli_max_output());
      return CLI_EXIT_ERROR;
    }
    int e = out_errno ? out_errno : errno ? errno : EIO;
    /* The reader closed the pipe (head, a pager that quit): it has what it
     * wanted, so this is the end of the output, not an error.  A writer
     * that lost the errno is told by the pipe itself. */
    if (e == EPIPE || reader_gone()) {
      out_errno = EPIPE;
      return 0;
    }
    fprintf(stderr, "%s: write error: %s\n", prog_name, strerror(e));
    return CLI_EXIT_ERROR;
  }
  return 0;
}

int cli_parse_flavor(const char *s, ljp_flavor *out) {
  static const struct { const char *name; ljp_flavor flavor; } names[] = {
      {"auto", LJP_FLAVOR_AUTO},
      {"tarantool", LJP_FLAVOR_TARANTOOL},
      {"luajit", LJP_FLAVOR_LUAJIT},
      {"openresty", LJP_FLAVOR_OPENRESTY}};
  for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
    if (strcmp(s, names[i].name) == 0) {
      *out = names[i].flavor;
      return 0;
    }
  return -1;
}

int cli_parse_u64(const char *s, unsigned long long *out) {
  char *end;
  if (!s || !*s || *s == '-')
    return -1;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || *end)
    return -1;
  *out = v;
  return 0;
}
