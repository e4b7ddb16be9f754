/*
 * cli_limits.c — see cli_limits.h.  The values live here for the whole run,
 * next to the program name in cli.c: one command line, one set of limits.
 */
#define _GNU_SOURCE /* fopencookie */
#include "cli_limits.h"
#include "cli.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static ljp_limits limits;
static uint64_t max_output = CLI_DEFAULT_MAX_OUTPUT;
static uint64_t written;   /* bytes that went to descriptor 1 */
static int capped;         /* a write was refused at the cap */

int cli_parse_size(const char *s, uint64_t *out) {
  char *end;
  if (!s || *s < '0' || *s > '9')
    return -1;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno)
    return -1;
  unsigned shift = 0;
  if (*end) {
    const char *units = "KMGT";
    const char *u = strchr(units, end[0] & ~0x20);
    if (!u || end[1])
      return -1;
    shift = 10u * (unsigned)(u - units + 1);
  }
  if (shift && v > (UINT64_MAX >> shift))
    return -1;
  *out = (uint64_t)v << shift;
  return 0;
}

int cli_limit_option(int opt, const char *arg) {
  const char *name;
  uint64_t *dst;
  switch (opt) {
  case CLI_OPT_MAX_FRAMES: name = "--max-frames"; dst = &limits.max_frames; break;
  case CLI_OPT_MAX_STRING: name = "--max-string"; dst = &limits.max_string; break;
  case CLI_OPT_MAX_SYMBOLS: name = "--max-symbols"; dst = &limits.max_symbols; break;
  case CLI_OPT_MAX_OUTPUT: name = "--max-output"; dst = &max_output; break;
  default: return 0;
  }
  uint64_t v;
  if (cli_parse_size(arg, &v) || (v == 0 && dst != &max_output))
    return cli_usage_error("%s takes a positive size (like 1000, 64K, 2G), "
                           "not '%s'", name, arg);
  *dst = v;
  return 1;
}

const ljp_limits *cli_limits(void) { return &limits; }

uint64_t cli_max_output(void) { return max_output; }

static uint64_t sat_add(uint64_t a, uint64_t b) {
  return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

static unsigned count_digits(int64_t v) {
  uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  unsigned n = v < 0 ? 2 : 1;
  while (u >= 10) {
    u /= 10;
    n++;
  }
  return n;
}

uint64_t cli_folded_size(const ljp_tree *t) {
  uint32_t n = ljp_tree_node_count(t);
  uint64_t *path = malloc((n ? n : 1) * sizeof(*path));
  if (!path)
    return UINT64_MAX; /* cannot tell: refuse rather than guess */
  uint64_t total = 0;
  path[0] = 0;
  for (uint32_t i = 1; i < n; i++) {
    /* A parent is always created before its children: its id is lower. */
    uint32_t p = ljp_tree_node_parent(t, i);
    size_t len = 0;
    ljp_tree_frame_name(t, ljp_tree_node_frame(t, i), &len);
    path[i] = sat_add(sat_add(p < i ? path[p] : 0, len), p ? 1 : 0);
    int64_t self = ljp_tree_node_self(t, i);
    if (self)
      total = sat_add(total, sat_add(path[i], 2 + count_digits(self)));
  }
  free(path);
  return total;
}

int cli_check_output_size(uint64_t bytes) {
  if (!max_output || bytes <= max_output)
    return 0;
  if (bytes == UINT64_MAX)
    cli_error("output would exceed the --max-output limit of %llu bytes",
              (unsigned long long)max_output);
  else
    cli_error("output would be %llu bytes, over the --max-output limit of "
              "%llu bytes",
              (unsigned long long)bytes, (unsigned long long)max_output);
  return CLI_EXIT_ERROR;
}

/* The write function of the capped stdout: everything up to the cap goes
 * to descriptor 1 (so the output is a true prefix), the rest is refused
 * with EFBIG, which the tools see as a failed write and stop on. */
static ssize_t capped_write(void *cookie, const char *buf, size_t len) {
  (void)cookie;
  size_t room = len;
  if (max_output && max_output - written < len) {
    room = (size_t)(max_output - written);
    capped = 1;
  }
  size_t done = 0;
  while (done < room) {
    ssize_t n = write(1, buf + done, room - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return done ? (ssize_t)done : -1;
    done += (size_t)n;
    written += (uint64_t)n;
  }
  if (done < len) {
    errno = EFBIG;
    return done ? (ssize_t)done : -1;
  }
  return (ssize_t)done;
}

int cli_cap_stdout(void) {
  cookie_io_functions_t io = {NULL, capped_write, NULL, NULL};
  FILE *f = fopencookie(NULL, "w", io);
  if (!f)
    return -1;
  fflush(stdout);
  setvbuf(f, NULL, _IOFBF, 1 << 16);
  stdout = f;
  return 0;
}

int cli_output_capped(void) { return capped; }
