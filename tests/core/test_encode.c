/*
 * test_encode.c — the encoder writes exactly the bytes of FORMATS.md.
 *
 * Appendix A of the spec (ljs 3, ljm 3, ljp 2) is reproduced byte for byte;
 * the other versions (ljs 1, 2a, 2b; ljm 1, 2, early 3; ljp 1) are checked
 * against bytes computed by hand from the grammar.  Also: ULEB128 helpers,
 * sinks (small buffers, pieces, failures), and every refusal.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "core_util.h"
#include "ljp_testing.h"

#define S(str) str, sizeof(str) - 1

static const ljp_frame LUA_5100 = {
  .kind = LJP_FRAME_LUA, .value = 0x5100, .line = 4
};
static const ljp_frame LUA_5000 = {
  .kind = LJP_FRAME_LUA, .value = 0x5000, .line = 0
};
static const ljp_frame C_1400 = {
  .kind = LJP_FRAME_CFUNC, .value = 0x1400, .line = 0
};
static const ljp_frame FF_79 = {
  .kind = LJP_FRAME_FFUNC, .value = 79, .line = 0
};

/* ---- FORMATS.md Appendix A -------------------------------------------- */

static const uint8_t APPX_LJS3[] = {
  0x6C, 0x6A, 0x73, 0x03, 0x00, 0x00, 0x00,
  0x00, 0x80, 0xA0, 0x01, 0x06, 0x40, 0x61, 0x2E, 0x6C, 0x75, 0x61, 0x00,
  0x00, 0x80, 0xA2, 0x01, 0x06, 0x40, 0x61, 0x2E, 0x6C, 0x75, 0x61, 0x04,
  0x01, 0x80, 0x20, 0x04, 0x6D, 0x61, 0x69, 0x6E,
  0x01, 0x80, 0x40, 0x08, 0x6D, 0x79, 0x5F, 0x63, 0x66, 0x75, 0x6E, 0x63,
  0x02, 0x01, 0x80, 0xA2, 0x01, 0x05,
  0x80
};

static const uint8_t APPX_LJM3[] = {
  0x6C, 0x6A, 0x6D, 0x03, 0x00, 0x00, 0x00,
  0x09, 0x80, 0xA0, 0x01, 0x02, 0x80, 0xC0, 0x02, 0x20,
  0x0B, 0x80, 0xA0, 0x01, 0x03, 0x80, 0xC0, 0x02, 0x20, 0x80, 0xC6, 0x02, 0x40,
  0x0C, 0x80, 0x40, 0x08, 0x6D, 0x79, 0x5F, 0x63, 0x66, 0x75, 0x6E, 0x63,
  0x0D, 0x90, 0x40, 0x80, 0xC4, 0x02, 0x18,
  0x11, 0x01, 0x80, 0xC2, 0x02, 0x10,
  0x06, 0xA0, 0xC0, 0x02, 0x20,
  0x08, 0x80, 0xA4, 0x01, 0x02, 0x3D, 0x78, 0x07,
  0x10, 0x02, 0x80, 0xA4, 0x01, 0x08,
  0x80
};

static const uint8_t APPX_LJP2[] = {
  0x6C, 0x6A, 0x70, 0x02, 0x00, 0x00, 0x00,
  0x01, 0x01, 0x80, 0xA2, 0x01, 0x04, 0x01, 0x80, 0xA0, 0x01, 0x00, 0x80,
  0x90, 0x24, 0x90, 0x22, 0x90, 0x20, 0x00,
  0x03, 0x02, 0x80, 0x28, 0x01, 0x80, 0xA2, 0x01, 0x04, 0x01, 0x80, 0xA0,
  0x01, 0x00, 0x80, 0x90, 0x28, 0x90, 0x26, 0x90, 0x24, 0x90, 0x22, 0x90,
  0x20, 0x00,
  0x02, 0x03, 0x4F, 0x01, 0x80, 0xA2, 0x01, 0x04, 0x80, 0x00,
  0x04, 0x90, 0x2C, 0x90, 0x26, 0x90, 0x24, 0x90, 0x22, 0x90, 0x20, 0x00,
  0x09, 0x01, 0x80, 0xA2, 0x01, 0x04,
  0x0A, 0x80, 0xA4, 0x01, 0x02, 0x3D, 0x78, 0x07,
  0x0C, 0x02, 0x80, 0xA4, 0x01, 0x08,
  0x80
};

static void write_appx_ljs3(ljp_writer *w)
{
  ck_assert_int_eq(ljp_write_symtab_begin(w, 3, 0), LJP_OK);
  ck_assert_int_eq(ljp_write_symtab_lfunc(w, 0x5000, S("@a.lua"), 0), LJP_OK);
  ck_assert_int_eq(ljp_write_symtab_lfunc(w, 0x5100, S("@a.lua"), 4), LJP_OK);
  ck_assert_int_eq(ljp_write_symtab_cfunc(w, 0x1000, S("main")), LJP_OK);
  ck_assert_int_eq(ljp_write_symtab_cfunc(w, 0x2000, S("my_cfunc")), LJP_OK);
  /* mcode is ignored in ljs 3 */
  ck_assert_int_eq(ljp_write_symtab_trace(w, 1, 0xdead, 0x5100, 5), LJP_OK);
  ck_assert_int_eq(ljp_write_symtab_end(w), LJP_OK);
}

static void write_appx_ljm3(ljp_writer *w)
{
  ck_assert_int_eq(ljp_write_stream_begin(w, LJP_KIND_MEMPROF, 3,
                                          LJP_FLAVOR_TARANTOOL, 0), LJP_OK);
  ck_assert_int_eq(ljp_write_mem(w, LJP_MEM_ALLOC, LJP_SRC_LFUNC, 0x5000, 2, 0,
                                 0, 0, 0xA000, 32), LJP_OK);
  ck_assert_int_eq(ljp_write_mem(w, LJP_MEM_REALLOC, LJP_SRC_LFUNC, 0x5000, 3,
                                 0, 0xA000, 32, 0xA300, 64), LJP_OK);
  ck_assert_int_eq(ljp_write_event_cfunc(w, 0x2000, S("my_cfunc")), LJP_OK);
  ck_assert_int_eq(ljp_write_mem(w, LJP_MEM_ALLOC, LJP_SRC_CFUNC, 0x2010, 0, 0,
                                 0, 0, 0xA200, 24), LJP_OK);
  /* loc_line and mcode are not part of this stream's loc-trace */
  ck_assert_int_eq(ljp_write_mem(w, LJP_MEM_ALLOC, LJP_SRC_TRACE, 1, 77, 0x99,
                                 0, 0, 0xA100, 16), LJP_OK);
  ck_assert_int_eq(ljp_write_mem(w, LJP_MEM_FREE, LJP_SRC_INTERNAL, 0x1234,
                                 5, 6, 0xA020, 32, 0, 0), LJP_OK);
  ck_assert_int_eq(ljp_write_event_lfunc(w, 0x5200, S("=x"), 7), LJP_OK);
  ck_assert_int_eq(ljp_write_event_trace(w, 2, 0x5200, 8), LJP_OK);
  ck_assert_int_eq(ljp_write_stream_end(w), LJP_OK);
}

static void write_appx_ljp2(ljp_writer *w)
{
  const ljp_frame lua1[] = { LUA_5100, LUA_5000 };
  const ljp_frame lua3[] = { C_1400, LUA_5100, LUA_5000 };
  const ljp_frame lua2[] = { FF_79, LUA_5100 };
  const uint64_t host1[] = { 0x1210, 0x1110, 0x1010 };
  const uint64_t host3[] = { 0x1410, 0x1310, 0x1210, 0x1110, 0x1010 };
  const uint64_t host4[] = { 0x1610, 0x1310, 0x1210, 0x1110, 0x1010 };
  ck_assert_int_eq(ljp_write_stream_begin(w, LJP_KIND_SYSPROF, 2,
                                          LJP_FLAVOR_TARANTOOL, 0), LJP_OK);
  ck_assert_int_eq(ljp_write_sample(w, LJP_VMST_LFUNC, lua1, 2, host1, 3),
                   LJP_OK);
  ck_assert_int_eq(ljp_write_sample(w, LJP_VMST_CFUNC, lua3, 3, host3, 5),
                   LJP_OK);
  ck_assert_int_eq(ljp_write_sample(w, LJP_VMST_FFUNC, lua2, 2, NULL, 0),
                   LJP_OK);
  /* Lua frames are not part of a host-state sample: ignored. */
  ck_assert_int_eq(ljp_write_sample(w, LJP_VMST_GC, lua1, 2, host4, 5),
                   LJP_OK);
  ck_assert_int_eq(ljp_write_trace_sample(w, 1, 0x5100, 4), LJP_OK);
  ck_assert_int_eq(ljp_write_event_lfunc(w, 0x5200, S("=x"), 7), LJP_OK);
  ck_assert_int_eq(ljp_write_event_trace(w, 2, 0x5200, 8), LJP_OK);
  ck_assert_int_eq(ljp_write_stream_end(w), LJP_OK);
}

static void expect_writer(ljp_writer *w, const uint8_t *exp, size_t len)
{
  size_t n;
  const uint8_t *got = ljp_writer_data(w, &n);
  ck_assert_ptr_nonnull(got);
  core_expect_bytes(got, n, exp, len);
}

START_TEST(appendix_a_ljs3)
{
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  ck_assert_ptr_nonnull(w);
  write_appx_ljs3(w);
  expect_writer(w, APPX_LJS3, sizeof(APPX_LJS3));
  ljp_writer_free(w);
}
END_TEST

START_TEST(appendix_a_ljm3)
{
  uint8_t exp[sizeof(APPX_LJS3) + sizeof(APPX_LJM3)];
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  memcpy(exp, APPX_LJS3, sizeof(APPX_LJS3));
  memcpy(exp + sizeof(APPX_LJS3), APPX_LJM3, sizeof(APPX_LJM3));
  write_appx_ljs3(w);
  write_appx_ljm3(w);
  expect_writer(w, exp, sizeof(exp));
  ljp_writer_free(w);
}
END_TEST

START_TEST(appendix_a_ljp2)
{
  uint8_t exp[sizeof(APPX_LJS3) + sizeof(APPX_LJP2)];
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  memcpy(exp, APPX_LJS3, sizeof(APPX_LJS3));
  memcpy(exp + sizeof(APPX_LJS3), APPX_LJP2, sizeof(APPX_LJP2));
  write_appx_ljs3(w);
  write_appx_ljp2(w);
  expect_writer(w, exp, sizeof(exp));
  ljp_writer_free(w);
}
END_TEST

/* ---- Older versions, bytes from the grammar --------------------------- */

START_TEST(ljs1_bytes)
{
  static const uint8_t exp[] = {
    0x6C, 0x6A, 0x73, 0x01, 0x00, 0x00, 0x00,
    0x00, 0x80, 0xA0, 0x01, 0x06, '@', 'a', '.', 'l', 'u', 'a', 0x00,
    0x00, 0xAC, 0x02, 0x00, 0x7F,   /* proto 300, "" line 127 */
    0x80
  };
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  ck_assert_int_eq(ljp_write_symtab_begin(w, 1, 0), LJP_OK);
  ck_assert_int_eq(ljp_write_symtab_lfunc(w, 0x5000, S("@a.lua"), 0), LJP_OK);
  ck_assert_int_eq(ljp_write_symtab_lfunc(w, 300, NULL, 0, 127), LJP_OK);
  /* ljs 1 has neither C symbols nor traces */
  ck_assert_int_eq(ljp_write_symtab_cfunc(w, 0x1000, S("main")), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_symtab_trace(w, 1, 0, 0x5000, 1), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_symtab_end(w), LJP_OK);
  expect_writer(w, exp, sizeof(exp));
  ljp_writer_free(w);
}
END_TEST

START_TEST(ljs2a_bytes)
{
  static const uint8_t exp[] = {
    0x6C, 0x6A, 0x73, 0x02, 0x00, 0x00, 0x00,
    0x00, 0x80, 0xA2, 0x01, 0x06, '@', 'a', '.', 'l', 'u', 'a', 0x04,
    /* trace type 1: no=1 mcode=0x10000 proto=0x5100 line=5 */
    0x01, 0x01, 0x80, 0x80, 0x04, 0x80, 0xA2, 0x01, 0x05,
    0x80
  };
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  ck_assert_int_eq(ljp_write_symtab_begin(w, 2, 'a'), LJP_OK);
  ck_assert_int_eq(ljp_write_symtab_lfunc(w, 0x5100, S("@a.lua"), 4), LJP_OK);
  ck_assert_int_eq(ljp_write_symtab_cfunc(w, 0x1000, S("main")), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_symtab_trace(w, 1, 0x10000, 0x5100, 5), LJP_OK);
  ck_assert_int_eq(ljp_write_symtab_end(w), LJP_OK);
  expect_writer(w, exp, sizeof(exp));
  ljp_writer_free(w);
}
END_TEST

START_TEST(ljs2b_bytes)
{
  static const uint8_t exp[] = {
    0x6C, 0x6A, 0x73, 0x02, 0x00, 0x00, 0x00,
    0x01, 0x01, 0x80, 0xA2, 0x01, 0x05,   /* trace type 1, no trace-addr */
    0x00, 0x80, 0xA2, 0x01, 0x06, '@', 'a', '.', 'l', 'u', 'a', 0x04,
    0x80
  };
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  ck_assert_int_eq(ljp_write_symtab_begin(w, 2, 'b'), LJP_OK);
  ck_assert_int_eq(ljp_write_symtab_trace(w, 1, 0x10000, 0x5100, 5), LJP_OK);
  ck_assert_int_eq(ljp_write_symtab_lfunc(w, 0x5100, S("@a.lua"), 4), LJP_OK);
  ck_assert_int_eq(ljp_write_symtab_end(w), LJP_OK);
  expect_writer(w, exp, sizeof(exp));
  ljp_writer_free(w);
}
END_TEST

START_TEST(ljm1_bytes)
{
  static const uint8_t exp[] = {
    0x6C, 0x6A, 0x6D, 0x01, 0x00, 0x00, 0x00,
    0x09, 0x80, 0xA0, 0x01, 0x02, 0x80, 0xC0, 0x02, 0x20,  /* ALLOC LFUNC */
    0x0E, 0x90, 0x40, 0x80, 0xC0, 0x02, 0x20,              /* FREE CFUNC */
    0x07, 0xA0, 0xC0, 0x02, 0x20, 0x80, 0xC6, 0x02, 0x40,  /* REALLOC INT */
    0x05, 0x01, 0x02,                                      /* ALLOC INT */
    0x0A, 0x80, 0xA0, 0x01, 0x00, 0x03, 0x04,              /* FREE LFUNC */
    0x80
  };
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  ck_assert_int_eq(ljp_write_stream_begin(w, LJP_KIND_MEMPROF, 1,
                                          LJP_FLAVOR_TARANTOOL, 1), LJP_OK);
  ck_assert_int_eq(ljp_write_mem(w, LJP_MEM_ALLOC, LJP_SRC_LFUNC, 0x5000, 2, 0,
                                 0, 0, 0xA000, 32), LJP_OK);
  ck_assert_int_eq(ljp_write_mem(w, LJP_MEM_FREE, LJP_SRC_CFUNC, 0x2010, 9, 9,
                                 0xA000, 32, 0, 0), LJP_OK);
  ck_assert_int_eq(ljp_write_mem(w, LJP_MEM_REALLOC, LJP_SRC_INTERNAL, 0, 0, 0,
                                 0xA020, 32, 0xA300, 64), LJP_OK);
  /* no TRACE source and no symbol events in ljm 1 */
  ck_assert_int_eq(ljp_write_mem(w, LJP_MEM_ALLOC, LJP_SRC_TRACE, 1, 0, 0,
                                 0, 0, 0xA100, 16), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_event_lfunc(w, 0x5200, S("=x"), 7), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_event_cfunc(w, 0x2000, S("f")), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_event_trace(w, 2, 0x5200, 8), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_mem(w, LJP_MEM_ALLOC, LJP_SRC_INTERNAL, 0, 0, 0,
                                 0, 0, 1, 2), LJP_OK);
  ck_assert_int_eq(ljp_write_mem(w, LJP_MEM_FREE, LJP_SRC_LFUNC, 0x5000, 0, 0,
                                 3, 4, 0, 0), LJP_OK);
  ck_assert_int_eq(ljp_write_stream_end(w), LJP_OK);
  expect_writer(w, exp, sizeof(exp));
  ljp_writer_free(w);
}
END_TEST

START_TEST(ljm2_bytes)
{
  static const uint8_t exp[] = {
    0x6C, 0x6A, 0x6D, 0x02, 0x00, 0x00, 0x00,
    /* ALLOC TRACE 1 mcode 0x10000 -> 0xA100, 16 */
    0x11, 0x01, 0x80, 0x80, 0x04, 0x80, 0xC2, 0x02, 0x10,
    /* REALLOC TRACE 3 mcode 0x7f: 0xA100/16 -> 0xA300/64 */
    0x13, 0x03, 0x7F, 0x80, 0xC2, 0x02, 0x10, 0x80, 0xC6, 0x02, 0x40,
    /* FREE TRACE 2^64-1 mcode 0 */
    0x12, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01, 0x00,
    0xA0, 0xC0, 0x02, 0x20,
    0x0D, 0x90, 0x40, 0x80, 0xC4, 0x02, 0x18,              /* ALLOC CFUNC */
    0x80
  };
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  /* ljm 2 always carries mcode, whatever with_mcode says */
  ck_assert_int_eq(ljp_write_stream_begin(w, LJP_KIND_MEMPROF, 2,
                                          LJP_FLAVOR_TARANTOOL, 0), LJP_OK);
  ck_assert_int_eq(ljp_write_mem(w, LJP_MEM_ALLOC, LJP_SRC_TRACE, 1, 0,
                                 0x10000, 0, 0, 0xA100, 16), LJP_OK);
  ck_assert_int_eq(ljp_write_mem(w, LJP_MEM_REALLOC, LJP_SRC_TRACE, 3, 0, 0x7f,
                                 0xA100, 16, 0xA300, 64), LJP_OK);
  ck_assert_int_eq(ljp_write_mem(w, LJP_MEM_FREE, LJP_SRC_TRACE, UINT64_MAX, 0,
                                 0, 0xA020, 32, 0, 0), LJP_OK);
  ck_assert_int_eq(ljp_write_event_lfunc(w, 0x5200, S("=x"), 7), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_event_cfunc(w, 0x2000, S("f")), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_event_trace(w, 2, 0x5200, 8), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_mem(w, LJP_MEM_ALLOC, LJP_SRC_CFUNC, 0x2010, 0, 0,
                                 0, 0, 0xA200, 24), LJP_OK);
  ck_assert_int_eq(ljp_write_stream_end(w), LJP_OK);
  expect_writer(w, exp, sizeof(exp));
  ljp_writer_free(w);
}
END_TEST

START_TEST(ljm3_mcode_bytes)
{
  /* ljm 3 before 0243fb72: loc-trace keeps mcode, proto events only. */
  static const uint8_t exp[] = {
    0x6C, 0x6A, 0x6D, 0x03, 0x00, 0x00, 0x00,
    0x12, 0x01, 0x80, 0x80, 0x04, 0xA0, 0xC0, 0x02, 0x20,
    0x08, 0x80, 0xA4, 0x01, 0x02, 0x3D, 0x78, 0x07,
    0x80
  };
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  ck_assert_int_eq(ljp_write_stream_begin(w, LJP_KIND_MEMPROF, 3,
                                          LJP_FLAVOR_TARANTOOL, 1), LJP_OK);
  ck_assert_int_eq(ljp_write_mem(w, LJP_MEM_FREE, LJP_SRC_TRACE, 1, 0, 0x10000,
                                 0xA020, 32, 0, 0), LJP_OK);
  ck_assert_int_eq(ljp_write_event_lfunc(w, 0x5200, S("=x"), 7), LJP_OK);
  ck_assert_int_eq(ljp_write_event_trace(w, 2, 0x5200, 8), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_event_cfunc(w, 0x2000, S("f")), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_stream_end(w), LJP_OK);
  expect_writer(w, exp, sizeof(exp));
  ljp_writer_free(w);
}
END_TEST

START_TEST(ljp1_bytes)
{
  static const uint8_t exp[] = {
    0x6C, 0x6A, 0x70, 0x01, 0x00, 0x00, 0x00,
    0x0A, 0x80, 0x40, 0x08, 'm', 'y', '_', 'c', 'f', 'u', 'n', 'c',
    0x00, 0x90, 0x20, 0x00,                      /* INTERP, host [0x1010] */
    0x08, 0x00,                                  /* ASM, empty host */
    0x01, 0x80, 0x00,                            /* LFUNC, no stacks */
    0x09, 0x07, 0x80, 0xA2, 0x01, 0x04,          /* TRACE 7 */
    0x80
  };
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  const uint64_t host[] = { 0x1010 };
  ck_assert_int_eq(ljp_write_stream_begin(w, LJP_KIND_SYSPROF, 1,
                                          LJP_FLAVOR_TARANTOOL, 0), LJP_OK);
  ck_assert_int_eq(ljp_write_event_cfunc(w, 0x2000, S("my_cfunc")), LJP_OK);
  ck_assert_int_eq(ljp_write_event_lfunc(w, 0x5200, S("=x"), 7), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_event_trace(w, 2, 0x5200, 8), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_sample(w, LJP_VMST_INTERP, NULL, 0, host, 1),
                   LJP_OK);
  ck_assert_int_eq(ljp_write_sample(w, LJP_VMST_ASM, NULL, 0, NULL, 0),
                   LJP_OK);
  ck_assert_int_eq(ljp_write_sample(w, LJP_VMST_LFUNC, NULL, 0, NULL, 0),
                   LJP_OK);
  ck_assert_int_eq(ljp_write_trace_sample(w, 7, 0x5100, 4), LJP_OK);
  ck_assert_int_eq(ljp_write_stream_end(w), LJP_OK);
  expect_writer(w, exp, sizeof(exp));
  ljp_writer_free(w);
}
END_TEST

START_TEST(ljp2_cfunc_event_and_flavor)
{
  static const uint8_t exp[] = {
    0x6C, 0x6A, 0x70, 0x02, 0x02, 0x00, 0x00,    /* flavor OpenResty */
    0x0B, 0x80, 0x40, 0x01, 'f',
    0x80
  };
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  ck_assert_int_eq(ljp_write_stream_begin(w, LJP_KIND_SYSPROF, 2,
                                          LJP_FLAVOR_OPENRESTY, 0), LJP_OK);
  ck_assert_int_eq(ljp_write_event_cfunc(w, 0x2000, S("f")), LJP_OK);
  ck_assert_int_eq(ljp_write_stream_end(w), LJP_OK);
  expect_writer(w, exp, sizeof(exp));
  ljp_writer_free(w);
}
END_TEST

START_TEST(ljm_flavor_byte)
{
  static const uint8_t exp[] = { 0x6C, 0x6A, 0x6D, 0x03, 0x01, 0x00, 0x00,
                                 0x80 };
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  ck_assert_int_eq(ljp_write_stream_begin(w, LJP_KIND_MEMPROF, 3,
                                          LJP_FLAVOR_LUAJIT, 0), LJP_OK);
  ck_assert_int_eq(ljp_write_stream_end(w), LJP_OK);
  expect_writer(w, exp, sizeof(exp));
  ljp_writer_free(w);
}
END_TEST

START_TEST(raw_primitives)
{
  static const uint8_t exp[] = {
    0xFF, 0x00, 0x80, 0x01, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
    0xFF, 0x01, 0x03, 'a', 0x00, 'b', 0x00
  };
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  ck_assert_int_eq(ljp_write_byte(w, 0xFF), LJP_OK);
  ck_assert_int_eq(ljp_write_uleb(w, 0), LJP_OK);
  ck_assert_int_eq(ljp_write_uleb(w, 128), LJP_OK);
  ck_assert_int_eq(ljp_write_uleb(w, UINT64_MAX), LJP_OK);
  /* bytes are copied verbatim, NUL included */
  ck_assert_int_eq(ljp_write_string(w, "a\0b", 3), LJP_OK);
  ck_assert_int_eq(ljp_write_string(w, NULL, 0), LJP_OK);
  ck_assert_int_eq(ljp_write_string(w, NULL, 1), LJP_E_ARG);
  expect_writer(w, exp, sizeof(exp));
  ljp_writer_free(w);
}
END_TEST

/* ---- Refusals ---------------------------------------------------------- */

static size_t writer_len(ljp_writer *w)
{
  size_t n;
  ljp_writer_data(w, &n);
  return n;
}

START_TEST(misuse_is_refused_without_bytes)
{
  ljp_writer *w = ljp_writer_new(NULL, NULL, 16);
  const ljp_frame bad[] = { { .kind = LJP_FRAME_HOST, .value = 1, .line = 0 } };
  const ljp_frame tr[] = { { .kind = LJP_FRAME_TRACE, .value = 1, .line = 0 } };
  const uint64_t zero_host[] = { 0x1010, 0 };

  ck_assert_int_eq(ljp_writer_status(NULL), LJP_E_ARG);
  ck_assert_int_eq(ljp_writer_flush(NULL), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_byte(NULL, 0), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_symtab_begin(NULL, 3, 0), LJP_E_ARG);
  ljp_writer_free(NULL);

  /* nothing open */
  ck_assert_int_eq(ljp_write_symtab_lfunc(w, 1, S("x"), 0), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_symtab_end(w), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_stream_end(w), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_mem(w, LJP_MEM_ALLOC, LJP_SRC_INTERNAL, 0, 0, 0,
                                 0, 0, 1, 1), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_sample(w, 0, NULL, 0, NULL, 0), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_trace_sample(w, 1, 1, 1), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_event_lfunc(w, 1, S("x"), 0), LJP_E_ARG);
  /* bad versions and layouts */
  ck_assert_int_eq(ljp_write_symtab_begin(w, 0, 0), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_symtab_begin(w, 4, 0), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_symtab_begin(w, 2, 0), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_symtab_begin(w, 2, 'c'), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_stream_begin(w, LJP_KIND_MEMPROF, 0, 0, 0),
                   LJP_E_ARG);
  ck_assert_int_eq(ljp_write_stream_begin(w, LJP_KIND_MEMPROF, 4, 0, 0),
                   LJP_E_ARG);
  ck_assert_int_eq(ljp_write_stream_begin(w, LJP_KIND_SYSPROF, 3, 0, 0),
                   LJP_E_ARG);
  ck_assert_int_eq(ljp_write_stream_begin(w, LJP_KIND_UNKNOWN, 1, 0, 0),
                   LJP_E_ARG);
  ck_assert_int_eq(ljp_write_stream_begin(w, LJP_KIND_SYSPROF, 2,
                                          LJP_FLAVOR_AUTO, 0), LJP_E_ARG);
  ck_assert_uint_eq(writer_len(w), 0);

  /* inside a symtab: no stream, no second symtab */
  ck_assert_int_eq(ljp_write_symtab_begin(w, 3, 0), LJP_OK);
  ck_assert_uint_eq(writer_len(w), 7);
  ck_assert_int_eq(ljp_write_symtab_begin(w, 3, 0), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_stream_begin(w, LJP_KIND_SYSPROF, 2, 0, 0),
                   LJP_E_ARG);
  ck_assert_int_eq(ljp_write_symtab_lfunc(w, 1, NULL, 3, 0), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_symtab_cfunc(w, 1, NULL, 3), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_stream_end(w), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_symtab_end(w), LJP_OK);

  /* memprof stream: no samples */
  ck_assert_int_eq(ljp_write_stream_begin(w, LJP_KIND_MEMPROF, 3, 0, 0),
                   LJP_OK);
  ck_assert_uint_eq(writer_len(w), 15);
  ck_assert_int_eq(ljp_write_sample(w, 0, NULL, 0, NULL, 0), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_trace_sample(w, 1, 1, 1), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_mem(w, 0, LJP_SRC_INTERNAL, 0, 0, 0, 0, 0, 1, 1),
                   LJP_E_ARG);
  ck_assert_int_eq(ljp_write_mem(w, 4, LJP_SRC_INTERNAL, 0, 0, 0, 0, 0, 1, 1),
                   LJP_E_ARG);
  ck_assert_int_eq(ljp_write_mem(w, LJP_MEM_ALLOC, 0, 0, 0, 0, 0, 0, 1, 1),
                   LJP_E_ARG);
  ck_assert_int_eq(ljp_write_mem(w, LJP_MEM_ALLOC, 5, 0, 0, 0, 0, 0, 1, 1),
                   LJP_E_ARG);
  ck_assert_int_eq(ljp_write_event_lfunc(w, 1, NULL, 2, 0), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_event_cfunc(w, 1, NULL, 2), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_symtab_begin(w, 3, 0), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_stream_begin(w, LJP_KIND_MEMPROF, 3, 0, 0),
                   LJP_E_ARG);
  ck_assert_uint_eq(writer_len(w), 15);
  ck_assert_int_eq(ljp_write_stream_end(w), LJP_OK);

  /* sysprof stream: no memory events, bad states, frames, hosts */
  ck_assert_int_eq(ljp_write_stream_begin(w, LJP_KIND_SYSPROF, 2, 0, 0),
                   LJP_OK);
  ck_assert_uint_eq(writer_len(w), 23);
  ck_assert_int_eq(ljp_write_mem(w, LJP_MEM_ALLOC, LJP_SRC_INTERNAL, 0, 0, 0,
                                 0, 0, 1, 1), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_sample(w, -1, NULL, 0, NULL, 0), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_sample(w, LJP_VMST_TRACE, NULL, 0, NULL, 0),
                   LJP_E_ARG);
  ck_assert_int_eq(ljp_write_sample(w, 10, NULL, 0, NULL, 0), LJP_E_ARG);
  ck_assert_int_eq(ljp_write_sample(w, LJP_VMST_LFUNC, bad, 1, NULL, 0),
                   LJP_E_ARG);
  ck_assert_int_eq(ljp_write_sample(w, LJP_VMST_LFUNC, tr, 1, NULL, 0),
                   LJP_E_ARG);
  ck_assert_int_eq(ljp_write_sample(w, LJP_VMST_LFUNC, NULL, 1, NULL, 0),
                   LJP_E_ARG);
  ck_assert_int_eq(ljp_write_sample(w, LJP_VMST_GC, NULL, 0, NULL, 1),
                   LJP_E_ARG);
  ck_assert_int_eq(ljp_write_sample(w, LJP_VMST_GC, NULL, 0, zero_host, 2),
                   LJP_E_ARG);
  ck_assert_uint_eq(writer_len(w), 23);
  /* misuse is not sticky */
  ck_assert_int_eq(ljp_writer_status(w), LJP_OK);
  ck_assert_int_eq(ljp_write_stream_end(w), LJP_OK);
  ck_assert_uint_eq(writer_len(w), 24);
  ljp_writer_free(w);
}
END_TEST

/* ---- Sinks ------------------------------------------------------------- */

typedef struct sink_log {
  uint8_t *data;
  size_t len, cap;
  size_t calls, max_piece;
  size_t fail_at;        /* fail the call with this number (1-based), 0 never */
} sink_log;

static int log_sink(void *ctx, const void *data, size_t len)
{
  sink_log *s = ctx;
  s->calls++;
  if (s->fail_at && s->calls >= s->fail_at)
    return -1;
  ck_assert_uint_gt(len, 0);
  if (len > s->max_piece)
    s->max_piece = len;
  if (s->len + len > s->cap) {
    s->cap = (s->len + len) * 2;
    s->data = realloc(s->data, s->cap);
    ck_assert_ptr_nonnull(s->data);
  }
  memcpy(s->data + s->len, data, len);
  s->len += len;
  return 0;
}

/* A stream with every record type and a string longer than most buffers. */
static void write_everything(ljp_writer *w, const char *big, size_t big_len)
{
  write_appx_ljs3(w);
  write_appx_ljp2(w);
  ck_assert_int_eq(ljp_write_symtab_begin(w, 3, 0), LJP_OK);
  ck_assert_int_eq(ljp_write_symtab_lfunc(w, 1, big, big_len, 1), LJP_OK);
  ck_assert_int_eq(ljp_write_symtab_end(w), LJP_OK);
  write_appx_ljm3(w);
}

START_TEST(sink_pieces_equal_memory)
{
  static const size_t sizes[] = { 1, 2, 3, 7, 10, 11, 64, 4093, 0 };
  size_t big_len = 100000, i, mem_len;
  char *big = malloc(big_len);
  ljp_writer *m = ljp_writer_new(NULL, NULL, 1);  /* grows from 1 byte */
  const uint8_t *mem;
  for (i = 0; i < big_len; i++)
    big[i] = (char)('a' + i % 26);
  write_everything(m, big, big_len);
  mem = ljp_writer_data(m, &mem_len);
  for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
    sink_log log = { 0 };
    size_t limit = sizes[i] ? sizes[i] : 64 * 1024;
    size_t n = 99;
    ljp_writer *w = ljp_writer_new(log_sink, &log, sizes[i]);
    ck_assert_ptr_nonnull(w);
    write_everything(w, big, big_len);
    /* stream_end flushed: everything arrived, in pieces <= buffer size */
    ck_assert_ptr_null(ljp_writer_data(w, &n));
    ck_assert_uint_eq(n, 0);
    ck_assert_int_eq(ljp_writer_flush(w), LJP_OK);
    ck_assert_uint_le(log.max_piece, limit);
    core_expect_bytes(log.data, log.len, mem, mem_len);
    ljp_writer_free(w);
    free(log.data);
  }
  ljp_writer_free(m);
  free(big);
}
END_TEST

START_TEST(sink_buffers_until_full_or_flush)
{
  sink_log log = { 0 };
  ljp_writer *w = ljp_writer_new(log_sink, &log, 16);
  ck_assert_int_eq(ljp_write_symtab_begin(w, 3, 0), LJP_OK);  /* 7 bytes */
  ck_assert_uint_eq(log.calls, 0);
  ck_assert_int_eq(ljp_write_symtab_cfunc(w, 0x2000, S("my_cfunc")), LJP_OK);
  /* 7 + 12 = 19 > 16: one full buffer went out */
  ck_assert_uint_eq(log.calls, 1);
  ck_assert_uint_eq(log.len, 16);
  ck_assert_int_eq(ljp_writer_flush(w), LJP_OK);
  ck_assert_uint_eq(log.calls, 2);
  ck_assert_uint_eq(log.len, 19);
  ck_assert_int_eq(ljp_writer_flush(w), LJP_OK);  /* nothing pending */
  ck_assert_uint_eq(log.calls, 2);
  ljp_writer_free(w);
  free(log.data);
}
END_TEST

START_TEST(sink_failure_is_sticky)
{
  sink_log log = { 0 };
  ljp_writer *w = ljp_writer_new(log_sink, &log, 16);
  log.fail_at = 2;
  ck_assert_int_eq(ljp_write_symtab_begin(w, 3, 0), LJP_OK);     /* 7 */
  ck_assert_int_eq(ljp_write_symtab_lfunc(w, 0x5000, S("@a.lua"), 0), LJP_OK);
  ck_assert_uint_eq(log.calls, 1);                               /* 16 out */
  ck_assert_int_eq(ljp_write_symtab_lfunc(w, 0x5000, S("@a.lua"), 0), LJP_OK);
  ck_assert_uint_eq(log.calls, 1);                               /* 15 held */
  /* the second piece fails */
  ck_assert_int_eq(ljp_write_symtab_lfunc(w, 0x5000, S("@a.lua"), 0),
                   LJP_E_IO);
  ck_assert_uint_eq(log.calls, 2);
  ck_assert_int_eq(ljp_writer_status(w), LJP_E_IO);
  /* every later call reports it and never reaches the sink again */
  ck_assert_int_eq(ljp_write_symtab_end(w), LJP_E_IO);
  ck_assert_int_eq(ljp_write_byte(w, 1), LJP_E_IO);
  ck_assert_int_eq(ljp_write_uleb(w, 1), LJP_E_IO);
  ck_assert_int_eq(ljp_write_string(w, S("abc")), LJP_E_IO);
  ck_assert_int_eq(ljp_write_stream_begin(w, LJP_KIND_SYSPROF, 2, 0, 0),
                   LJP_E_IO);
  ck_assert_int_eq(ljp_writer_flush(w), LJP_E_IO);
  ck_assert_uint_eq(log.calls, 2);
  ljp_writer_free(w);
  free(log.data);
}
END_TEST

START_TEST(sink_failure_at_final_flush)
{
  sink_log log = { 0 };
  ljp_writer *w = ljp_writer_new(log_sink, &log, 0);
  log.fail_at = 1;
  ck_assert_int_eq(ljp_write_stream_begin(w, LJP_KIND_SYSPROF, 2, 0, 0),
                   LJP_OK);
  ck_assert_int_eq(ljp_write_trace_sample(w, 1, 2, 3), LJP_OK);
  ck_assert_int_eq(ljp_write_stream_end(w), LJP_E_IO);
  ck_assert_int_eq(ljp_writer_status(w), LJP_E_IO);
  ljp_writer_free(w);
}
END_TEST

/* ---- ULEB128 helpers --------------------------------------------------- */

typedef struct uleb_case {
  uint64_t v;
  size_t n;
  uint8_t bytes[10];
} uleb_case;

static const uleb_case ULEB_CASES[] = {
  { 0, 1, { 0x00 } },
  { 1, 1, { 0x01 } },
  { 127, 1, { 0x7F } },
  { 128, 2, { 0x80, 0x01 } },
  { 300, 2, { 0xAC, 0x02 } },
  { 16383, 2, { 0xFF, 0x7F } },
  { 16384, 3, { 0x80, 0x80, 0x01 } },
  { 0x5000, 3, { 0x80, 0xA0, 0x01 } },
  { 0x7f12345678ULL, 6, { 0xF8, 0xAC, 0xD1, 0x91, 0xF1, 0x0F } },
  { UINT64_C(0x7FFFFFFFFFFFFFFF), 9,
    { 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F } },
  { UINT64_C(1) << 63, 10,
    { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01 } },
  { UINT64_MAX, 10,
    { 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01 } },
};

START_TEST(uleb_encode_decode_table)
{
  size_t i;
  for (i = 0; i < sizeof(ULEB_CASES) / sizeof(ULEB_CASES[0]); i++) {
    const uleb_case *c = &ULEB_CASES[i];
    uint8_t out[10], in[12];
    uint64_t v = 12345;
    size_t n = ljp_uleb_encode(c->v, out);
    ck_assert_uint_eq(n, c->n);
    core_expect_bytes(out, n, c->bytes, c->n);
    /* exact input, and input with bytes after the number */
    ck_assert_int_eq(ljp_uleb_decode(c->bytes, c->n, &v), (int)c->n);
    ck_assert_uint_eq(v, c->v);
    memcpy(in, c->bytes, c->n);
    in[c->n] = 0xFF;
    in[c->n + 1] = 0x80;
    v = 12345;
    ck_assert_int_eq(ljp_uleb_decode(in, c->n + 2, &v), (int)c->n);
    ck_assert_uint_eq(v, c->v);
    /* every shorter input is truncated */
    for (n = 0; n < c->n; n++)
      ck_assert_int_eq(ljp_uleb_decode(c->bytes, n, &v), 0);
  }
}
END_TEST

START_TEST(uleb_decode_rejects)
{
  static const uint8_t overlong11[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                                        0x80, 0x80, 0x80, 0x80, 0x00 };
  static const uint8_t tenth2[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                                    0x80, 0x80, 0x80, 0x02 };
  static const uint8_t tenth7f[] = { 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                     0xFF, 0xFF, 0xFF, 0x7F };
  static const uint8_t tenth81[] = { 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                                     0xFF, 0xFF, 0xFF, 0x81, 0x00 };
  static const uint8_t nonmin[] = { 0x80, 0x80, 0x00 };
  static const uint8_t tenth0[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
                                    0x80, 0x80, 0x80, 0x00 };
  uint64_t v = 7;
  ck_assert_int_eq(ljp_uleb_decode(overlong11, sizeof(overlong11), &v), -1);
  /* 10 continuation bytes are over-long even before the 11th arrives */
  ck_assert_int_eq(ljp_uleb_decode(overlong11, 10, &v), -1);
  ck_assert_int_eq(ljp_uleb_decode(tenth2, sizeof(tenth2), &v), -1);
  ck_assert_int_eq(ljp_uleb_decode(tenth7f, sizeof(tenth7f), &v), -1);
  ck_assert_int_eq(ljp_uleb_decode(tenth81, sizeof(tenth81), &v), -1);
  /* 9 continuation bytes and the end: truncated, not overflow */
  ck_assert_int_eq(ljp_uleb_decode(tenth2, 9, &v), 0);
  ck_assert_int_eq(ljp_uleb_decode(NULL, 0, &v), 0);
  /* non-minimal forms within 10 bytes are read (the reference reads them) */
  ck_assert_int_eq(ljp_uleb_decode(nonmin, sizeof(nonmin), &v), 3);
  ck_assert_uint_eq(v, 0);
  v = 7;
  ck_assert_int_eq(ljp_uleb_decode(tenth0, sizeof(tenth0), &v), 10);
  ck_assert_uint_eq(v, 0);
}
END_TEST

START_TEST(uleb_exhaustive_small_and_powers)
{
  uint64_t x;
  int shift;
  for (x = 0; x < 70000; x++) {
    uint8_t out[10];
    uint64_t v;
    size_t n = ljp_uleb_encode(x, out);
    CORE_CHECK(n == (x < 128 ? 1u : x < 16384 ? 2u : 3u), "%llu: %zu bytes",
               (unsigned long long)x, n);
    CORE_CHECK(ljp_uleb_decode(out, n, &v) == (int)n && v == x,
               "%llu does not decode back", (unsigned long long)x);
  }
  for (shift = 0; shift < 64; shift++) {
    uint64_t vals[3];
    int k;
    vals[0] = UINT64_C(1) << shift;
    vals[1] = vals[0] - 1;
    vals[2] = vals[0] | (vals[0] >> 1);
    for (k = 0; k < 3; k++) {
      uint8_t out[10];
      uint64_t v;
      size_t n = ljp_uleb_encode(vals[k], out);
      size_t bits = 0;
      uint64_t t = vals[k];
      while (t) {
        bits++;
        t >>= 1;
      }
      ck_assert_uint_eq(n, bits ? (bits + 6) / 7 : 1);
      ck_assert_uint_eq(out[n - 1] & 0x80, 0);
      ck_assert_int_eq(ljp_uleb_decode(out, n, &v), (int)n);
      ck_assert_uint_eq(v, vals[k]);
    }
  }
}
END_TEST

/* ---- Names ------------------------------------------------------------- */

START_TEST(enum_names)
{
  ck_assert_str_eq(ljp_version(), LJP_VERSION_STRING);
  ck_assert_str_eq(ljp_vmstate_name(LJP_VMST_INTERP), "INTERP");
  ck_assert_str_eq(ljp_vmstate_name(LJP_VMST_FFUNC), "FFUNC");
  ck_assert_str_eq(ljp_vmstate_name(LJP_VMST_ASM), "ASM");
  ck_assert_str_eq(ljp_vmstate_name(LJP_VMST_TRACE), "TRACE");
  ck_assert_str_eq(ljp_vmstate_name(-1), "?");
  ck_assert_str_eq(ljp_vmstate_name(10), "?");
  ck_assert_str_eq(ljp_source_name(LJP_SRC_INTERNAL), "INTERNAL");
  ck_assert_str_eq(ljp_source_name(LJP_SRC_LFUNC), "LFUNC");
  ck_assert_str_eq(ljp_source_name(LJP_SRC_CFUNC), "CFUNC");
  ck_assert_str_eq(ljp_source_name(LJP_SRC_TRACE), "TRACE");
  ck_assert_str_eq(ljp_source_name((ljp_source)0), "?");
  ck_assert_str_eq(ljp_source_name((ljp_source)5), "?");
  ck_assert_str_eq(ljp_mem_kind_name(LJP_MEM_ALLOC), "ALLOC");
  ck_assert_str_eq(ljp_mem_kind_name(LJP_MEM_FREE), "FREE");
  ck_assert_str_eq(ljp_mem_kind_name(LJP_MEM_REALLOC), "REALLOC");
  ck_assert_str_eq(ljp_mem_kind_name((ljp_mem_kind)0), "?");
  ck_assert_str_eq(ljp_mem_kind_name((ljp_mem_kind)4), "?");
  ck_assert_str_eq(ljp_status_name(LJP_OK), "ok");
  ck_assert_str_eq(ljp_status_name(LJP_E_TRUNCATED), "truncated input");
  ck_assert_str_eq(ljp_status_name(LJP_E_IO), "I/O error");
  ck_assert_str_eq(ljp_status_name((ljp_status)-100), "unknown status");
  {
    int s;
    for (s = LJP_E_ARG; s <= LJP_END; s++)
      ck_assert_str_ne(ljp_status_name((ljp_status)s), "unknown status");
  }
}
END_TEST

int main(int argc, char **argv)
{
  Suite *s = suite_create("core_encode");
  TCase *tc = tcase_create("appendix_a");
  SRunner *sr;
  int failed;
  core_set_testdata(argc, argv);
  tcase_add_test(tc, appendix_a_ljs3);
  tcase_add_test(tc, appendix_a_ljm3);
  tcase_add_test(tc, appendix_a_ljp2);
  suite_add_tcase(s, tc);
  tc = tcase_create("versions");
  tcase_add_test(tc, ljs1_bytes);
  tcase_add_test(tc, ljs2a_bytes);
  tcase_add_test(tc, ljs2b_bytes);
  tcase_add_test(tc, ljm1_bytes);
  tcase_add_test(tc, ljm2_bytes);
  tcase_add_test(tc, ljm3_mcode_bytes);
  tcase_add_test(tc, ljp1_bytes);
  tcase_add_test(tc, ljp2_cfunc_event_and_flavor);
  tcase_add_test(tc, ljm_flavor_byte);
  tcase_add_test(tc, raw_primitives);
  tcase_add_test(tc, misuse_is_refused_without_bytes);
  suite_add_tcase(s, tc);
  tc = tcase_create("sinks");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, sink_pieces_equal_memory);
  tcase_add_test(tc, sink_buffers_until_full_or_flush);
  tcase_add_test(tc, sink_failure_is_sticky);
  tcase_add_test(tc, sink_failure_at_final_flush);
  suite_add_tcase(s, tc);
  tc = tcase_create("uleb");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, uleb_encode_decode_table);
  tcase_add_test(tc, uleb_decode_rejects);
  tcase_add_test(tc, uleb_exhaustive_small_and_powers);
  tcase_add_test(tc, enum_names);
  suite_add_tcase(s, tc);
  sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
