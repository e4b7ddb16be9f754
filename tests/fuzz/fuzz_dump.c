/*
 * fuzz_dump.c — ljpdump's consumers of the event stream: the memprof report
 * (every era, leak-only, human-readable sizes), the sysprof report, the
 * summary in text and JSON, and the event listing, on any bytes.
 *
 * Input: one option byte, then the profile.  Option bits: 0-1 report era,
 * 2 leak-only, 3 human-readable, 4-7 rows of the sysprof tables (1-16).
 *
 * Output goes to /dev/null: what is checked is that nothing crashes,
 * leaks or overflows whatever the stream holds.
 */
#include "fuzz.h"

#include "reports.h"
#include "summary.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static FILE *null;
  if (!null && !(null = fopen("/dev/null", "w")))
    return 0;
  if (size < 1)
    return 0;
  uint8_t o = data[0];
  struct memreport_opts mo = {(o >> 2) & 1, (o >> 3) & 1,
                              (memreport_era)(o & 3)};
  struct sysreport_opts so = {1u + (o >> 4), LJP_FLAVOR_AUTO,
                             LJP_TRACES_UNDER, NULL};
  memreport *m = memreport_new(&mo);
  sysreport *s = sysreport_new(&so);
  ljp_reader *r = ljp_reader_new();
  if (m && s && r) {
    ljp_limits lim = {FUZZ_MAX_STRING, FUZZ_MAX_FRAMES, FUZZ_MAX_SYMBOLS};
    ljp_reader_set_limits(r, &lim);
    ljp_reader_open_memory(r, data + 1, size - 1);
    const ljp_event *ev;
    while (ljp_reader_next(r, &ev) == LJP_OK) {
      events_print(r, ev, ljp_reader_flavor(r), null);
      events_print_json(r, ev, ljp_reader_flavor(r), null);
      if (ljp_reader_kind(r) != LJP_KIND_SYSPROF)
        memreport_add(m, r, ev);
      if (ljp_reader_kind(r) != LJP_KIND_MEMPROF)
        sysreport_add(s, r, ev);
    }
    summary_print_text(r, "fuzz", 1, null);
    summary_print_json(r, "fuzz \"\\\n", null, NULL, NULL);
    if (ljp_reader_kind(r) == LJP_KIND_MEMPROF) {
      memreport_print(m, null);
      memreport_print_json(m, null);
    } else {
      sysreport_print(s, null);
      sysreport_print_json(s, null);
    }
  }
  ljp_reader_free(r);
  memreport_free(m);
  sysreport_free(s);
  return 0;
}
