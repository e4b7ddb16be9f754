/*
 * test_ljmfast.c — memprof events decode to the values written, whatever
 * the lengths of their fields.
 *
 * The memprof decoder guesses field lengths (seven-byte addresses, one- or
 * two-byte sizes, lines and trace numbers) and hands anything else to the
 * byte-by-byte decoder.  These streams write every kind and source with
 * fields of 1 to 10 bytes, minimal and padded ("80 00"), in ljm 2 (trace
 * locations with machine-code addresses) and ljm 3, and compare each
 * decoded event field by field with what was written.
 *
 * The decoder also keeps the frames that repeated allocation sites
 * resolved to: streams that redefine prototypes, C symbols and traces
 * between repetitions of the same sites check that every frame is the
 * one the symbol table gives at that event, in memory and through a pipe
 * fed in odd pieces.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core_util.h"
#include "ljp_testing.h"

#define NEV 4000

typedef struct ev {
  unsigned kind, src;
  uint64_t loc, line, mcode, oa, os, na, ns;
} ev;

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void)
{
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

/* A value whose ULEB128 takes about the chosen number of bytes, biased to
 * the lengths the decoder guesses. */
static uint64_t value(int addr)
{
  static const unsigned addr_bits[] = {47, 47, 47, 46, 48, 56, 57, 63, 64, 7,
                                       1, 14, 35, 49, 50, 28};
  static const unsigned small_bits[] = {7, 7, 14, 14, 6, 1, 15, 21, 0, 64,
                                        8, 13, 2, 29, 56, 57};
  unsigned b = (addr ? addr_bits : small_bits)[next() & 15];
  if (b == 0)
    return 0;
  uint64_t top = b == 64 ? UINT64_MAX : (UINT64_C(1) << b) - 1;
  return (next() & top) | (UINT64_C(1) << (b - 1));
}

/* Writes v, now and then padded with redundant 0x80 groups (at most ten
 * bytes in all: the longest form a reader accepts). */
static void put(ljp_writer *w, uint64_t v)
{
  uint8_t b[10];
  size_t n = ljp_uleb_encode(v, b);
  size_t pad = (next() & 7) == 0 ? (size_t)(next() % 3) : 0;
  if (n + pad > 10)
    pad = 0;
  /* Padding continues the last group: set its high bit, add 0x80s, end
   * with 0x00.  Only where the value's top group leaves room. */
  if (pad && n < 9) {
    b[n - 1] |= 0x80;
    for (size_t i = 0; i + 1 < pad; i++)
      b[n++] = 0x80;
    b[n++] = 0x00;
  }
  for (size_t i = 0; i < n; i++)
    ljp_write_byte(w, b[i]);
}

static void run(unsigned version, int mcode)
{
  ev *e = calloc(NEV, sizeof *e);
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  /* ljs 2 layout a goes with ljm 2, whose trace locations carry mcode. */
  ck_assert_int_eq(
      ljp_write_symtab_begin(w, version == 2 ? 2 : 3, version == 2 ? 'a' : 0),
      LJP_OK);
  ck_assert_int_eq(ljp_write_symtab_end(w), LJP_OK);
  ck_assert_int_eq(
      ljp_write_stream_begin(w, LJP_KIND_MEMPROF, version, LJP_FLAVOR_TARANTOOL,
                             mcode),
      LJP_OK);
  for (size_t i = 0; i < NEV; i++) {
    ev *x = &e[i];
    x->kind = 1 + (unsigned)(next() % 3);
    x->src = 1 + (unsigned)(next() % 4);
    ljp_write_byte(w, (uint8_t)(x->src << 2 | x->kind));
    if (x->src == LJP_SRC_LFUNC) {
      put(w, x->loc = value(1));
      put(w, x->line = value(0));
    } else if (x->src == LJP_SRC_CFUNC) {
      put(w, x->loc = value(1));
    } else if (x->src == LJP_SRC_TRACE) {
      put(w, x->loc = value(0));
      if (mcode)
        put(w, x->mcode = value(1));
    }
    if (x->kind != LJP_MEM_ALLOC) {
      put(w, x->oa = value(1));
      put(w, x->os = value(0));
    }
    if (x->kind != LJP_MEM_FREE) {
      put(w, x->na = value(1));
      put(w, x->ns = value(0));
    }
  }
  ljp_write_byte(w, 0x80);
  size_t len;
  const uint8_t *data = ljp_writer_data(w, &len);

  ljp_reader *r = ljp_reader_new();
  ck_assert_int_eq(ljp_reader_open_memory(r, data, len), LJP_OK);
  const ljp_event *v;
  size_t i = 0;
  ljp_status st;
  while ((st = ljp_reader_next(r, &v)) == LJP_OK) {
    if (v->type != LJP_EV_MEMORY)
      continue;
    ck_assert_uint_lt(i, NEV);
    const ev *x = &e[i];
    const ljp_mem_event *m = &v->u.mem;
    CORE_CHECK(m->kind == (ljp_mem_kind)x->kind &&
                   m->source == (ljp_source)x->src,
               "event %zu: kind %d source %d, wrote %u %u", i, m->kind,
               m->source, x->kind, x->src);
    CORE_CHECK(m->old_addr == x->oa && m->old_size == x->os &&
                   m->new_addr == x->na && m->new_size == x->ns,
               "event %zu: blocks %llx/%llu %llx/%llu", i,
               (unsigned long long)m->old_addr,
               (unsigned long long)m->old_size,
               (unsigned long long)m->new_addr,
               (unsigned long long)m->new_size);
    uint64_t want_val = x->src == LJP_SRC_INTERNAL ? 0 : x->loc;
    CORE_CHECK(m->loc.value == want_val && m->loc.line == x->line,
               "event %zu: location %llx line %llu", i,
               (unsigned long long)m->loc.value,
               (unsigned long long)m->loc.line);
    int tr_mc = x->src == LJP_SRC_TRACE && mcode;
    CORE_CHECK(m->has_mcode == tr_mc && m->mcode == x->mcode &&
                   m->loc.mcode == (tr_mc ? x->mcode : 0),
               "event %zu: mcode %d %llx", i, m->has_mcode,
               (unsigned long long)m->mcode);
    /* The raw bytes run from the header to the next event. */
    CORE_CHECK(v->raw[0] == (uint8_t)(x->src << 2 | x->kind),
               "event %zu: raw header", i);
    i++;
  }
  ck_assert_msg(st == LJP_END, "%s", ljp_reader_error(r));
  ck_assert_uint_eq(i, NEV);
  ljp_reader_free(r);
  ljp_writer_free(w);
  free(e);
}

/* ---- resolutions after mid-stream definitions ----
 *
 * The decoder keeps the frames of repeated sites.  Each round below writes
 * every site three times (so the later ones are decoded from what the
 * first left), then a definition that changes what some site resolves
 * to.  Every event's frame is checked against the symbol table as it
 * stands at that event (the reader's lookups, which read the table
 * itself), and the names the script expects are checked too. */

#define PA UINT64_C(0x7f0000001000)  /* a prototype */
#define PB UINT64_C(0x7f0000002000)  /* another one */
#define PU UINT64_C(0x7f0000100100)  /* unknown until round 4 */
#define CF UINT64_C(0x7f0000100000)  /* a C function */
#define CX UINT64_C(0x7f0000100080)  /* the address the events name */
#define CN UINT64_C(0x7f0000100040)  /* a C symbol defined in round 2 */
#define MC UINT64_C(0x7f0000200000)  /* machine code of trace 5 */

typedef struct site {
  ljp_source src;
  uint64_t loc, line;
} site;

static const site sites[] = {
    {LJP_SRC_LFUNC, PA, 12},  {LJP_SRC_LFUNC, PU, 300},
    {LJP_SRC_CFUNC, CX, 0},   {LJP_SRC_TRACE, 5, 0},
    {LJP_SRC_INTERNAL, 0, 0}, {LJP_SRC_LFUNC, PB, 7},
};
#define NSITES (sizeof sites / sizeof sites[0])
#define NROUNDS 6

static void write_round(ljp_writer *w, int mcode)
{
  for (int rep = 0; rep < 3; rep++)
    for (size_t k = 0; k < NSITES; k++) {
      const site *x = &sites[k];
      ljp_mem_kind kind = (ljp_mem_kind)(1 + (rep + k) % 3);
      uint64_t blk = UINT64_C(0x7f1000000000) + 64 * (rep * NSITES + k);
      ck_assert_int_eq(ljp_write_mem(w, kind, x->src, x->loc, x->line,
                                     mcode ? MC : 0, blk, 48, blk + 8, 96),
                       LJP_OK);
    }
}

/* The chunk (LFUNC, TRACE's start) or C name a frame resolved to. */
static const char *frame_name(const ljp_frame *f)
{
  const ljp_symbol *s = f->kind == LJP_FRAME_TRACE ? f->proto : f->sym;
  if (!s && f->kind == LJP_FRAME_LUA)
    s = f->proto;
  return s ? s->name : "";
}

/* What the script expects site k to resolve to in round n. */
static const char *want_name(size_t k, int n)
{
  switch (k) {
  case 0: return n >= 1 ? "@a2.lua" : "@a.lua";
  case 1: return n >= 4 ? "@u.lua" : n >= 2 ? "c_new" : "c_func";
  case 2: return n >= 2 ? "c_new" : "c_func";
  case 3:
    return n >= 5   ? "@b2.lua"
           : n >= 3 ? "@b.lua"
           : n >= 1 ? "@a2.lua"
                    : "@a.lua";
  case 4: return "";
  default: return n >= 5 ? "@b2.lua" : "@b.lua";
  }
}

/* C and trace symbol events, as bytes: the writer refuses them in the
 * machine-code stage of ljm 3, whose producer defined prototypes only,
 * but the reader takes them in any ljm 3 stream. */
static void sym_cfunc(ljp_writer *w, uint64_t addr, const char *name)
{
  ck_assert_int_eq(ljp_write_byte(w, 0x0C), LJP_OK);
  ck_assert_int_eq(ljp_write_uleb(w, addr), LJP_OK);
  ck_assert_int_eq(ljp_write_string(w, name, strlen(name)), LJP_OK);
}

static void sym_trace(ljp_writer *w, uint64_t no, uint64_t proto,
                      uint64_t line)
{
  ck_assert_int_eq(ljp_write_byte(w, 0x10), LJP_OK);
  ck_assert_int_eq(ljp_write_uleb(w, no), LJP_OK);
  ck_assert_int_eq(ljp_write_uleb(w, proto), LJP_OK);
  ck_assert_int_eq(ljp_write_uleb(w, line), LJP_OK);
}

static void check_redefined(ljp_reader *r, int mcode);

static void run_redefined(int mcode)
{
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  ck_assert_int_eq(ljp_write_symtab_begin(w, mcode ? 2 : 3, mcode ? 'a' : 0),
                   LJP_OK);
  ck_assert_int_eq(ljp_write_symtab_lfunc(w, PA, "@a.lua", 6, 10), LJP_OK);
  ck_assert_int_eq(ljp_write_symtab_lfunc(w, PB, "@b.lua", 6, 1), LJP_OK);
  ck_assert_int_eq(ljp_write_symtab_trace(w, 5, MC, PA, 10), LJP_OK);
  ck_assert_int_eq(ljp_write_symtab_end(w), LJP_OK);
  ck_assert_int_eq(ljp_write_stream_begin(w, LJP_KIND_MEMPROF, 3,
                                          LJP_FLAVOR_TARANTOOL, mcode),
                   LJP_OK);
  /* (ljs 2a has no C symbols: the stream defines it) */
  sym_cfunc(w, CF, "c_func");
  for (int n = 0; n < NROUNDS; n++) {
    write_round(w, mcode);
    switch (n) {
    case 0: /* the prototype at PA again, another chunk: LFUNC and the
               trace starting there */
      ck_assert_int_eq(ljp_write_event_lfunc(w, PA, "@a2.lua", 7, 10), LJP_OK);
      break;
    case 1: /* a C symbol between CF and CX: the C function and the floor
               of the unknown prototype */
      sym_cfunc(w, CN, "c_new");
      break;
    case 2: /* trace 5 again, now starting in PB */
      sym_trace(w, 5, PB, 1);
      break;
    case 3: /* the unknown prototype becomes known */
      ck_assert_int_eq(ljp_write_event_lfunc(w, PU, "@u.lua", 6, 290), LJP_OK);
      break;
    case 4: /* PB again: the trace's start and the last site */
      ck_assert_int_eq(ljp_write_event_lfunc(w, PB, "@b2.lua", 7, 1), LJP_OK);
      break;
    default:
      break;
    }
  }
  ck_assert_int_eq(ljp_write_stream_end(w), LJP_OK);
  size_t len;
  const uint8_t *data = ljp_writer_data(w, &len);

  ljp_reader *r = ljp_reader_new();
  ck_assert_int_eq(ljp_reader_open_memory(r, data, len), LJP_OK);
  check_redefined(r, mcode);
  ljp_reader_free(r);

  /* Through a pipe fed in odd pieces: the reader's window ends anywhere,
   * so events are decoded both ways, the cached sites still valid. */
  int fds[2], status;
  ck_assert_int_eq(pipe(fds), 0);
  pid_t pid = fork();
  ck_assert_int_ge(pid, 0);
  if (pid == 0) {
    static const size_t pieces[] = {1, 7, 61, 13, 3, 200, 81};
    close(fds[0]);
    for (size_t off = 0, k = 0; off < len;) {
      size_t n = pieces[k++ % (sizeof pieces / sizeof pieces[0])];
      if (n > len - off)
        n = len - off;
      ssize_t wr = write(fds[1], data + off, n);
      if (wr < 0 && errno == EINTR)
        continue;
      if (wr <= 0)
        _exit(1);
      off += (size_t)wr;
    }
    _exit(0);
  }
  close(fds[1]);
  r = ljp_reader_new();
  ck_assert_int_eq(ljp_reader_open_fd(r, fds[0]), LJP_OK);
  check_redefined(r, mcode);
  ljp_reader_free(r);
  close(fds[0]);
  ck_assert_int_eq(waitpid(pid, &status, 0), pid);
  ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ljp_writer_free(w);
}

/* Reads the stream of run_redefined, checking every frame. */
static void check_redefined(ljp_reader *r, int mcode)
{
  const ljp_event *v;
  ljp_status st;
  size_t i = 0;
  while ((st = ljp_reader_next(r, &v)) == LJP_OK) {
    if (v->type != LJP_EV_MEMORY)
      continue;
    size_t k = i % NSITES;
    int n = (int)(i / (3 * NSITES));
    const ljp_frame *f = &v->u.mem.loc;
    const site *x = &sites[k];
    const ljp_symbol *want_sym = NULL, *want_proto = NULL;
    if (x->src == LJP_SRC_LFUNC) {
      want_sym = ljp_reader_lookup_proto(r, x->loc);
      want_proto = want_sym ? NULL : ljp_reader_lookup_cfunc(r, x->loc);
    } else if (x->src == LJP_SRC_CFUNC) {
      want_sym = ljp_reader_lookup_cfunc(r, x->loc);
    } else if (x->src == LJP_SRC_TRACE) {
      want_sym = ljp_reader_lookup_trace(r, x->loc);
      want_proto = ljp_reader_lookup_proto(r, want_sym->addr);
    }
    CORE_CHECK(f->sym == want_sym && f->proto == want_proto,
               "round %d site %zu: a stale frame (sym %p proto %p, the "
               "table has %p %p)",
               n, k, (const void *)f->sym, (const void *)f->proto,
               (const void *)want_sym, (const void *)want_proto);
    CORE_CHECK(strcmp(frame_name(f), want_name(k, n)) == 0,
               "round %d site %zu: \"%s\", expected \"%s\"", n, k,
               frame_name(f), want_name(k, n));
    CORE_CHECK(f->value == x->loc && f->line == x->line &&
                   f->mcode == (x->src == LJP_SRC_TRACE && mcode ? MC : 0),
               "round %d site %zu: location %llx line %llu", n, k,
               (unsigned long long)f->value, (unsigned long long)f->line);
    i++;
  }
  ck_assert_msg(st == LJP_END, "%s", ljp_reader_error(r));
  ck_assert_uint_eq(i, NROUNDS * 3 * NSITES);
}

START_TEST(ljm3_sites_after_redefinitions) { run_redefined(0); }
END_TEST

START_TEST(ljm3_mcode_sites_after_redefinitions) { run_redefined(1); }
END_TEST

START_TEST(ljm3_fields_of_every_length) { run(3, 0); }
END_TEST

START_TEST(ljm2_with_mcode) { run(2, 1); }
END_TEST

int main(int argc, char **argv)
{
  core_set_testdata(argc, argv);
  Suite *s = suite_create("core_ljmfast");
  TCase *tc = tcase_create("ljmfast");
  tcase_add_test(tc, ljm3_fields_of_every_length);
  tcase_add_test(tc, ljm2_with_mcode);
  tcase_add_test(tc, ljm3_sites_after_redefinitions);
  tcase_add_test(tc, ljm3_mcode_sites_after_redefinitions);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
