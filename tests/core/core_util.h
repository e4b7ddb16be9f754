/*
 * core_util.h — shared chores of the core tests: the testdata path, whole
 * files in memory, byte comparison with a useful message, and a full decode
 * that keeps what the checks compare.
 */
#ifndef CORE_UTIL_H
#define CORE_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "ljp.h"

/* An assertion for hot loops.  check's ck_assert_* record every passing
 * assertion as a mark point, which in fork mode is a write to the parent:
 * per decoded event that costs more than the decode itself. */
#define CORE_CHECK(expr, ...)                                                 \
  do {                                                                        \
    if (!(expr))                                                              \
      ck_abort_msg(__VA_ARGS__);                                              \
  } while (0)

/* Sanitizer builds run the exhaustive loops with fewer samples: their
 * point is memory errors, which the dense parts already reach. */
#if defined(__SANITIZE_ADDRESS__)
#define CORE_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CORE_SANITIZED 1
#endif
#endif
#ifndef CORE_SANITIZED
#define CORE_SANITIZED 0
#endif

/* argv[1] when given, else the path compiled in. */
extern const char *core_testdata;
void core_set_testdata(int argc, char **argv);

/* Reads a whole file (malloc'd, exact size; NULL when missing). */
uint8_t *core_read_file(const char *path, size_t *len);

/* Fails the running test at the first differing byte, naming it. */
void core_expect_bytes(const uint8_t *got, size_t got_len,
                       const uint8_t *exp, size_t exp_len);

/* What a decode from start to finish leaves behind. */
typedef struct core_decode {
  ljp_status status;            /* LJP_END or the error */
  uint64_t error_offset;
  char error[256];
  size_t nevents;
  ljp_counters counters;
  int complete;
  unsigned aliases;             /* ljp_reader_alias_count at the end */
  ljp_kind kind;
  unsigned ljs_version, event_version;
  int layout;
  ljp_flavor flavor;
  /* Optional per-event record (when keep != 0): type, offset and a
   * fingerprint of the decoded fields, for prefix comparisons. */
  uint8_t *types;
  uint64_t *offsets;
  uint64_t *prints;
  size_t cap;
} core_decode;

/* Decodes everything r yields.  keep: record types and offsets. */
void core_decode_run(ljp_reader *r, core_decode *d, int keep);
void core_decode_clear(core_decode *d);

/* A hash of the fields of an event (and of what its locations resolved
 * to), equal for equal decodes. */
uint64_t core_event_print(const ljp_event *ev);

/* Convenience: decode a buffer in memory. */
void core_decode_memory(const void *buf, size_t len, core_decode *d, int keep);

#endif
