/*
 * fuzz_reader.c — the decoder entry points on arbitrary bytes: the pull
 * reader over a memory buffer (every ljs/ljm/ljp version), the stack views
 * of every sample, frame names in every style, the symbol lookups, and the
 * ULEB128 helpers.
 *
 * Invariants checked besides "no crash, no leak, no out-of-bounds":
 *   - events come in stream order, each inside the input;
 *   - a stream ends in LJP_END or a sticky error whose message starts with
 *     "offset N:" where N is ljp_reader_error_offset() and lies in the input;
 *   - ljp_sample_stack reports the same count whatever the capacity;
 *   - ljp_frame_name follows snprintf semantics;
 *   - ljp_uleb_decode agrees with ljp_uleb_encode;
 *   - samples carry a time exactly in ljp x1 streams, and x1 times never
 *     go back; the reader's clock is the last sample's time.
 */
#include "fuzz.h"

#include "ljp.h"

#include <string.h>

static void check_name(const ljp_frame *f, ljp_flavor flavor) {
  char big[512], small[8];
  for (int style = 0; style <= 2; style++) {
    size_t n = ljp_frame_name(f, (ljp_name_style)style, flavor, big,
                              sizeof(big));
    FUZZ_CHECK(strlen(big) == (n < sizeof(big) ? n : sizeof(big) - 1));
    size_t m = ljp_frame_name(f, (ljp_name_style)style, flavor, small,
                              sizeof(small));
    FUZZ_CHECK(m == n);
    FUZZ_CHECK(strlen(small) == (n < sizeof(small) ? n : sizeof(small) - 1));
    FUZZ_CHECK(strncmp(big, small, strlen(small)) == 0);
    FUZZ_CHECK(ljp_frame_name(f, (ljp_name_style)style, flavor, NULL, 0) == n);
  }
}

static void check_sample(const ljp_sample *s, ljp_flavor flavor) {
  ljp_frame frames[64];
  for (int view = 0; view <= 3; view++) {
    size_t n = ljp_sample_stack(s, (ljp_stack_view)view, NULL, 0);
    size_t m = ljp_sample_stack(s, (ljp_stack_view)view, frames, 64);
    FUZZ_CHECK(n == m);
    for (size_t i = 0; i < n && i < 64; i++)
      check_name(&frames[i], flavor);
  }
  if (s->trace.kind == LJP_FRAME_TRACE)
    check_name(&s->trace, flavor);
}

static void check_uleb(const uint8_t *data, size_t size) {
  uint64_t v;
  int k = ljp_uleb_decode(data, size, &v);
  FUZZ_CHECK(k >= -1 && k <= 10);
  if (k == 0)
    FUZZ_CHECK(size < 10);
  if (k > 0) {
    uint8_t enc[10];
    size_t e = ljp_uleb_encode(v, enc);
    uint64_t w;
    FUZZ_CHECK(e >= 1 && e <= (size_t)k);
    FUZZ_CHECK(ljp_uleb_decode(enc, e, &w) == (int)e && w == v);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  check_uleb(data, size);
  ljp_reader *r = ljp_reader_new();
  if (!r)
    return 0;
  ljp_limits lim = {FUZZ_MAX_STRING, FUZZ_MAX_FRAMES, FUZZ_MAX_SYMBOLS};
  FUZZ_CHECK(ljp_reader_set_limits(r, &lim) == LJP_OK);
  FUZZ_CHECK(ljp_reader_open_memory(r, data, size) == LJP_OK);
  const ljp_event *ev;
  ljp_status st;
  uint64_t last = 0, last_time = 0;
  while ((st = ljp_reader_next(r, &ev)) == LJP_OK) {
    FUZZ_CHECK(ev != NULL);
    FUZZ_CHECK(ev->offset >= last && ev->offset < size);
    FUZZ_CHECK(ljp_reader_offset(r) > ev->offset &&
               ljp_reader_offset(r) <= size);
    last = ev->offset;
    ljp_flavor flavor = ljp_reader_flavor(r);
    switch (ev->type) {
    case LJP_EV_SAMPLE:
      check_sample(&ev->u.sample, flavor);
      FUZZ_CHECK(ev->u.sample.has_time ==
                 (ljp_reader_event_version(r) == LJP_LJP_VERSION_X1));
      if (ev->u.sample.has_time) {
        FUZZ_CHECK(ev->u.sample.time_ns >= last_time);
        last_time = ev->u.sample.time_ns;
        FUZZ_CHECK(ljp_reader_time_ns(r) == last_time);
      }
      break;
    case LJP_EV_MEMORY:
      if (ev->u.mem.loc.kind != LJP_FRAME_NONE)
        check_name(&ev->u.mem.loc, flavor);
      break;
    case LJP_EV_SYMBOL: {
      const ljp_symbol *sym = ev->u.symbol.sym;
      FUZZ_CHECK(sym != NULL);
      if (sym->name)
        FUZZ_CHECK(strlen(sym->name) == sym->name_len);
      if (sym->kind == LJP_SYM_LFUNC)
        FUZZ_CHECK(ljp_reader_lookup_proto(r, sym->addr) == sym);
      else if (sym->kind == LJP_SYM_TRACE)
        FUZZ_CHECK(ljp_reader_lookup_trace(r, sym->traceno) == sym);
      else /* the newest definition at an address wins the floor lookup */
        FUZZ_CHECK(ljp_reader_lookup_cfunc(r, sym->addr) == sym);
      break;
    }
    default:
      break;
    }
  }
  if (st == LJP_END) {
    FUZZ_CHECK(ljp_reader_complete(r));
    FUZZ_CHECK(ljp_reader_offset(r) == size);
    FUZZ_CHECK(ljp_reader_error(r)[0] == '\0');
  } else {
    FUZZ_CHECK(st < 0 && st != LJP_E_ARG && st != LJP_E_IO);
    FUZZ_CHECK(ljp_reader_status(r) == st);
    FUZZ_CHECK(ljp_reader_next(r, &ev) == st); /* sticky */
    uint64_t off = ljp_reader_error_offset(r);
    FUZZ_CHECK(off <= size);
    char prefix[40];
    snprintf(prefix, sizeof(prefix), "offset %llu: ", (unsigned long long)off);
    FUZZ_CHECK(strncmp(ljp_reader_error(r), prefix, strlen(prefix)) == 0);
    FUZZ_CHECK(strlen(ljp_reader_error(r)) > strlen(prefix));
  }
  for (unsigned k = 1; k <= ljp_reader_alias_count(r); k++)
    FUZZ_CHECK(ljp_reader_alias(r, k) != NULL);
  ljp_reader_free(r);
  return 0;
}
