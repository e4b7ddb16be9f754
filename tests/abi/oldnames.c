/*
 * oldnames.c — a program with functions and data named like the internals
 * libljp and libljpcap once exported (input_close, arena_alloc, symtab_init,
 * cap_S, ...), linked against both static libraries.  That it links at all
 * is the test: the archive members that defined those names are pulled in
 * by the calls below.  It then checks that its own definitions are the
 * ones called and that the library still reads a profile.
 *   oldnames PROFILE
 */
#include "ljp.h"
#include "ljp_capture.h"

#include <stdio.h>
#include <string.h>

static int calls;

/* The program's own symbols, unrelated to the libraries' internals. */
int input_close(int fd);
void *arena_alloc(size_t n);
void symtab_init(void);
int cap_now_ns(void);
int reader_fail(void);
int cap_S = 7;
int cap_M = 9;

int input_close(int fd) { return calls += fd; }
void *arena_alloc(size_t n) { calls += (int)n; return NULL; }
void symtab_init(void) { calls += 100; }
int cap_now_ns(void) { return calls += 1000; }
int reader_fail(void) { return calls += 10000; }

int main(int argc, char **argv) {
  ljp_reader *r;
  const ljp_event *ev;
  struct ljp_capture_counters c;
  ljp_status st;
  unsigned long events = 0;

  if (argc != 2) {
    fprintf(stderr, "usage: oldnames PROFILE\n");
    return 2;
  }
  input_close(1);
  arena_alloc(10);
  symtab_init();
  cap_now_ns();
  reader_fail();
  if (calls != 11111 || cap_S != 7 || cap_M != 9) {
    fprintf(stderr, "the program's own definitions were not the ones used\n");
    return 1;
  }

  /* The reader pulls in input, symbol table and arena. */
  r = ljp_reader_new();
  if (!r || ljp_reader_open_path(r, argv[1]) != LJP_OK) {
    fprintf(stderr, "%s: cannot open: %s\n", argv[1],
            r ? ljp_reader_error(r) : "out of memory");
    ljp_reader_free(r);
    return 1;
  }
  while ((st = ljp_reader_next(r, &ev)) == LJP_OK)
    events++;
  if (st != LJP_END || events == 0) {
    fprintf(stderr, "%s: %s after %lu events\n", argv[1], ljp_reader_error(r),
            events);
    ljp_reader_free(r);
    return 1;
  }
  ljp_reader_free(r);

  /* The capture core's state, idle: counters all zero, no error. */
  memset(&c, 0xff, sizeof c);
  if (ljp_capture_report(&c) != LJP_CAPTURE_SUCCESS || c.samples != 0) {
    fprintf(stderr, "capture core: unexpected report of an idle session\n");
    return 1;
  }
  printf("%lu events; own input_close, arena_alloc, symtab_init, cap_S, "
         "cap_M, cap_now_ns, reader_fail in use\n",
         events);
  return 0;
}
