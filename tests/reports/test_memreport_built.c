/* Hand-built memprof streams (writer API) with exactly known reports: the
 * worked example of FORMATS.md §9.2, realloc overrides, human-readable
 * sizes, aliases, trace redefinitions in the current and generation eras,
 * and ljm 2 traces named by machine code. */
#include "report_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OK(x) ck_assert_int_eq((x), LJP_OK)
#define A LJP_MEM_ALLOC
#define R LJP_MEM_REALLOC
#define F LJP_MEM_FREE

static ljp_writer *mem_begin(void)
{
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  ck_assert_ptr_nonnull(w);
  OK(ljp_write_symtab_begin(w, 3, 0));
  return w;
}

static void lfunc(ljp_writer *w, uint64_t proto, const char *chunk,
                  uint64_t line)
{
  OK(ljp_write_symtab_lfunc(w, proto, chunk, strlen(chunk), line));
}

/* Ends the stream and runs the report over it. */
static char *finish(ljp_writer *w, const struct memreport_opts *o)
{
  OK(ljp_write_stream_end(w));
  size_t len;
  const uint8_t *data = ljp_writer_data(w, &len);
  ljp_status st;
  char *text = rt_memreport_buf(data, len, o, &st);
  ck_assert_int_eq(st, LJP_END);
  ljp_writer_free(w);
  return text;
}

static void lua_ev(ljp_writer *w, ljp_mem_kind k, uint64_t proto,
                   uint64_t line, uint64_t oa, uint64_t os, uint64_t na,
                   uint64_t ns)
{
  OK(ljp_write_mem(w, k, LJP_SRC_LFUNC, proto, line, 0, oa, os, na, ns));
}

static void int_free(ljp_writer *w, uint64_t oa, uint64_t os)
{
  OK(ljp_write_mem(w, F, LJP_SRC_INTERNAL, 0, 0, 0, oa, os, 0, 0));
}

/* --- FORMATS.md §9.2 worked example ----------------------------------- */

static ljp_writer *spec_example(void)
{
  ljp_writer *w = mem_begin();
  lfunc(w, 0x5000, "@a.lua", 0);
  lfunc(w, 0x5100, "@a.lua", 4);
  OK(ljp_write_symtab_cfunc(w, 0x2000, "my_cfunc", 8));
  OK(ljp_write_symtab_trace(w, 1, 0, 0x5100, 5));
  OK(ljp_write_symtab_end(w));
  OK(ljp_write_stream_begin(w, LJP_KIND_MEMPROF, 3, LJP_FLAVOR_TARANTOOL, 0));
  lua_ev(w, A, 0x5000, 2, 0, 0, 0xA000, 32);
  lua_ev(w, A, 0x5000, 2, 0, 0, 0xA020, 32);
  lua_ev(w, A, 0x5000, 2, 0, 0, 0xA040, 32);
  OK(ljp_write_mem(w, A, LJP_SRC_TRACE, 1, 0, 0, 0, 0, 0xA100, 16));
  OK(ljp_write_mem(w, A, LJP_SRC_TRACE, 1, 0, 0, 0, 0, 0xA110, 16));
  OK(ljp_write_event_cfunc(w, 0x2000, "my_cfunc", 8));
  OK(ljp_write_mem(w, A, LJP_SRC_CFUNC, 0x2010, 0, 0, 0, 0, 0xA200, 24));
  lua_ev(w, R, 0x5000, 3, 0xA000, 32, 0xA300, 64);
  int_free(w, 0xA020, 32);
  int_free(w, 0xA300, 64);
  return w;
}

static const char spec_heap[] =
  "HEAP SUMMARY:\n"
  "@a.lua:2 holds 96B: 4 allocs, 2 frees\n"
  "TRACE [1] started at @a.lua:5 holds 32B: 2 allocs, 0 frees\n"
  "my_cfunc:0x2000 holds 24B: 1 allocs, 0 frees\n"
  "\n";

START_TEST(spec_example_report)
{
  char *got = finish(spec_example(), NULL);
  ck_assert_str_eq(got,
    "ALLOCATIONS\n"
    "@a.lua:2: 3 events\t+96B\t-0B\n"
    "TRACE [1] started at @a.lua:5: 2 events\t+32B\t-0B\n"
    "my_cfunc:0x2000: 1 events\t+24B\t-0B\n"
    "\n"
    "REALLOCATIONS\n"
    "@a.lua:3: 1 events\t+64B\t-32B\n"
    "\tOverrides:\n"
    "\t\t@a.lua:2\n"
    "\n"
    "\n"
    "DEALLOCATIONS\n"
    "INTERNAL: 2 events\t+0B\t-96B\n"
    "\tOverrides:\n"
    "\t\t@a.lua:2\n"
    "\t\t@a.lua:3\n"
    "\n"
    "\n"
    "HEAP SUMMARY:\n"
    "@a.lua:2 holds 96B: 4 allocs, 2 frees\n"
    "TRACE [1] started at @a.lua:5 holds 32B: 2 allocs, 0 frees\n"
    "my_cfunc:0x2000 holds 24B: 1 allocs, 0 frees\n"
    "\n");
  free(got);
}
END_TEST

START_TEST(spec_example_leak_only)
{
  struct memreport_opts o = {1, 0, MEMREPORT_ERA_AUTO};
  char *got = finish(spec_example(), &o);
  ck_assert_str_eq(got, spec_heap);
  free(got);
}
END_TEST

START_TEST(spec_example_bytes_era)
{
  struct memreport_opts o = {1, 0, MEMREPORT_ERA_BYTES};
  char *got = finish(spec_example(), &o);
  ck_assert_str_eq(got,
    "HEAP SUMMARY:\n"
    "@a.lua:2 holds 96 bytes: 4 allocs, 2 frees\n"
    "TRACE [1] started at @a.lua:5 holds 32 bytes: 2 allocs, 0 frees\n"
    "my_cfunc:0x2000 holds 24 bytes: 1 allocs, 0 frees\n"
    "\n");
  free(got);
}
END_TEST

/* --- realloc overrides -------------------------------------------------- */

START_TEST(realloc_overrides)
{
  ljp_writer *w = mem_begin();
  lfunc(w, 0x5000, "@r.lua", 0);
  OK(ljp_write_symtab_end(w));
  OK(ljp_write_stream_begin(w, LJP_KIND_MEMPROF, 3, LJP_FLAVOR_TARANTOOL, 0));
  lua_ev(w, A, 0x5000, 10, 0, 0, 0x100, 100);
  lua_ev(w, A, 0x5000, 20, 0, 0, 0x200, 200);
  lua_ev(w, A, 0x5000, 20, 0, 0, 0x300, 300);
  lua_ev(w, R, 0x5000, 30, 0x100, 100, 0x400, 150);
  lua_ev(w, R, 0x5000, 30, 0x200, 200, 0x500, 250);
  lua_ev(w, R, 0x5000, 30, 0x300, 300, 0x600, 350);
  /* A chunk allocated before the profile started: no primary entry. */
  lua_ev(w, R, 0x5000, 30, 0x999, 64, 0x700, 128);
  lua_ev(w, R, 0x5000, 40, 0x400, 150, 0x800, 160);
  int_free(w, 0x800, 160);
  int_free(w, 0x500, 250);
  char *got = finish(w, NULL);
  ck_assert_str_eq(got,
    "ALLOCATIONS\n"
    "@r.lua:20: 2 events\t+500B\t-0B\n"
    "@r.lua:10: 1 events\t+100B\t-0B\n"
    "\n"
    "REALLOCATIONS\n"
    "@r.lua:30: 4 events\t+878B\t-664B\n"
    "\tOverrides:\n"
    "\t\t@r.lua:10\n"
    "\t\t@r.lua:20\n"
    "\n"
    "@r.lua:40: 1 events\t+160B\t-150B\n"
    "\tOverrides:\n"
    "\t\t@r.lua:30\n"
    "\n"
    "\n"
    "DEALLOCATIONS\n"
    "INTERNAL: 2 events\t+0B\t-410B\n"
    "\tOverrides:\n"
    "\t\t@r.lua:30\n"
    "\t\t@r.lua:40\n"
    "\n"
    "\n"
    "HEAP SUMMARY:\n"
    "@r.lua:20 holds 600B: 4 allocs, 2 frees\n"
    "@r.lua:10 holds 150B: 2 allocs, 1 frees\n"
    "\n");
  free(got);
}
END_TEST

/* Two protos of one chunk allocating on the same line: two rows with one
 * name (the key is the proto address), two Overrides lines, one HEAP
 * SUMMARY line (summed by name), ties broken deterministically. */
START_TEST(same_name_rows)
{
  ljp_writer *w = mem_begin();
  lfunc(w, 0x5000, "@s.lua", 0);
  lfunc(w, 0x6000, "@s.lua", 8);
  OK(ljp_write_symtab_end(w));
  OK(ljp_write_stream_begin(w, LJP_KIND_MEMPROF, 3, LJP_FLAVOR_TARANTOOL, 0));
  lua_ev(w, A, 0x5000, 10, 0, 0, 0x100, 10);
  lua_ev(w, A, 0x6000, 10, 0, 0, 0x200, 20);
  lua_ev(w, A, 0x6000, 10, 0, 0, 0x210, 20);
  lua_ev(w, A, 0x6000, 11, 0, 0, 0x220, 5);
  lua_ev(w, A, 0x5000, 11, 0, 0, 0x230, 5);
  int_free(w, 0x100, 10);
  int_free(w, 0x200, 20);
  char *got = finish(w, NULL);
  ck_assert_str_eq(got,
    "ALLOCATIONS\n"
    "@s.lua:10: 2 events\t+40B\t-0B\n"
    "@s.lua:10: 1 events\t+10B\t-0B\n"
    "@s.lua:11: 1 events\t+5B\t-0B\n"
    "@s.lua:11: 1 events\t+5B\t-0B\n"
    "\n"
    "REALLOCATIONS\n"
    "\n"
    "DEALLOCATIONS\n"
    "INTERNAL: 2 events\t+0B\t-30B\n"
    "\tOverrides:\n"
    "\t\t@s.lua:10\n"
    "\t\t@s.lua:10\n"
    "\n"
    "\n"
    "HEAP SUMMARY:\n"
    "@s.lua:10 holds 20B: 3 allocs, 2 frees\n"
    "@s.lua:11 holds 10B: 2 allocs, 0 frees\n"
    "\n");
  free(got);
}
END_TEST

/* --- human-readable sizes ------------------------------------------------ */

/* Exact binary ties round away from zero, as LuaJIT's string.format("%.2f")
 * in Tarantool's report does (C's printf gives 256.12KiB and 2.12KiB). */
START_TEST(human_readable_ties)
{
  ljp_writer *w = mem_begin();
  lfunc(w, 0x5000, "@h.lua", 0);
  OK(ljp_write_symtab_end(w));
  OK(ljp_write_stream_begin(w, LJP_KIND_MEMPROF, 3, LJP_FLAVOR_TARANTOOL, 0));
  lua_ev(w, A, 0x5000, 1, 0, 0, 0x1000, 262272); /* 256.125 KiB */
  lua_ev(w, A, 0x5000, 2, 0, 0, 0x2000, 2176);   /* 2.125 KiB */
  lua_ev(w, A, 0x5000, 3, 0, 0, 0x3000, 262271); /* 256.1240... KiB */
  lua_ev(w, A, 0x5000, 4, 0, 0, 0x4000, 1408);   /* 1.375 KiB */
  struct memreport_opts o = {0, 1, MEMREPORT_ERA_AUTO};
  char *got = finish(w, &o);
  ck_assert_ptr_nonnull(strstr(got, "@h.lua:1: 1 events\t+256.13KiB\t-0B\n"));
  ck_assert_ptr_nonnull(strstr(got, "@h.lua:2: 1 events\t+2.13KiB\t-0B\n"));
  ck_assert_ptr_nonnull(strstr(got, "@h.lua:3: 1 events\t+256.12KiB\t-0B\n"));
  ck_assert_ptr_nonnull(strstr(got, "@h.lua:4: 1 events\t+1.38KiB\t-0B\n"));
  free(got);
}
END_TEST

START_TEST(human_readable)
{
  ljp_writer *w = mem_begin();
  lfunc(w, 0x5000, "@h.lua", 0);
  OK(ljp_write_symtab_end(w));
  OK(ljp_write_stream_begin(w, LJP_KIND_MEMPROF, 3, LJP_FLAVOR_TARANTOOL, 0));
  uint64_t a = 0x1000;
  for (int i = 0; i < 4; i++)
    lua_ev(w, A, 0x5000, 1, 0, 0, a += 0x100, 25);        /* 100B */
  lua_ev(w, A, 0x5000, 2, 0, 0, a += 0x100, 1000);        /* 2048 */
  lua_ev(w, A, 0x5000, 2, 0, 0, a += 0x100, 1000);
  lua_ev(w, A, 0x5000, 2, 0, 0, a += 0x100, 48);
  lua_ev(w, A, 0x5000, 3, 0, 0, a += 0x100, 1280);        /* 2560 */
  lua_ev(w, A, 0x5000, 3, 0, 0, a += 0x100, 1280);
  lua_ev(w, A, 0x5000, 4, 0, 0, a += 0x100, 1048576);     /* 1MiB */
  for (int i = 0; i < 5; i++)                             /* 3.5GiB */
    lua_ev(w, A, 0x5000, 5, 0, 0, a += 0x100, 751619276u + (i == 0 ? 4 : 0));
  for (int i = 0; i < 6; i++)                             /* capped at GiB */
    lua_ev(w, A, 0x5000, 6, 0, 0, a += 0x100, (uint64_t)256 << 30);
  int_free(w, 0x1100, 25);
  struct memreport_opts o = {0, 1, MEMREPORT_ERA_AUTO};
  char *got = finish(w, &o);
  ck_assert_str_eq(got,
    "ALLOCATIONS\n"
    "@h.lua:6: 6 events\t+1536GiB\t-0B\n"
    "@h.lua:5: 5 events\t+3.50GiB\t-0B\n"
    "@h.lua:1: 4 events\t+100B\t-0B\n"
    "@h.lua:2: 3 events\t+2KiB\t-0B\n"
    "@h.lua:3: 2 events\t+2.50KiB\t-0B\n"
    "@h.lua:4: 1 events\t+1MiB\t-0B\n"
    "\n"
    "REALLOCATIONS\n"
    "\n"
    "DEALLOCATIONS\n"
    "INTERNAL: 1 events\t+0B\t-25B\n"
    "\tOverrides:\n"
    "\t\t@h.lua:1\n"
    "\n"
    "\n"
    "HEAP SUMMARY:\n"
    "@h.lua:6 holds 1536GiB: 6 allocs, 0 frees\n"
    "@h.lua:5 holds 3.50GiB: 5 allocs, 0 frees\n"
    "@h.lua:4 holds 1MiB: 1 allocs, 0 frees\n"
    "@h.lua:3 holds 2.50KiB: 2 allocs, 0 frees\n"
    "@h.lua:2 holds 2KiB: 3 allocs, 0 frees\n"
    "@h.lua:1 holds 75B: 4 allocs, 1 frees\n"
    "\n");
  free(got);
}
END_TEST

/* --- aliases ------------------------------------------------------------- */

static ljp_writer *alias_stream(void)
{
  ljp_writer *w = mem_begin();
  lfunc(w, 0x5000, "local t = {}\n\nreturn t\n", 0);
  lfunc(w, 0x6000, "x\ny", 1);
  lfunc(w, 0x7000, "@plain.lua", 0);
  OK(ljp_write_symtab_end(w));
  OK(ljp_write_stream_begin(w, LJP_KIND_MEMPROF, 3, LJP_FLAVOR_TARANTOOL, 0));
  lua_ev(w, A, 0x5000, 1, 0, 0, 0x100, 16);
  lua_ev(w, A, 0x5000, 1, 0, 0, 0x110, 16);
  lua_ev(w, A, 0x5000, 1, 0, 0, 0x120, 16);
  lua_ev(w, A, 0x6000, 2, 0, 0, 0x130, 16);
  lua_ev(w, A, 0x6000, 2, 0, 0, 0x140, 16);
  lua_ev(w, A, 0x7000, 3, 0, 0, 0x150, 16);
  return w;
}

static const char alias_tail[] =
  "HEAP SUMMARY:\n"
  "function_alias_1:1 holds 48B: 3 allocs, 0 frees\n"
  "function_alias_2:2 holds 32B: 2 allocs, 0 frees\n"
  "@plain.lua:3 holds 16B: 1 allocs, 0 frees\n"
  "\n"
  "ALIASES:\n"
  "function_alias_1:\n"
  "1\t| local t = {}\n"
  "2\t| return t\n"
  "\n\n"
  "function_alias_2:\n"
  "1\t| x\n"
  "2\t| y\n"
  "\n\n";

START_TEST(aliases_report)
{
  char *got = finish(alias_stream(), NULL);
  const char *head =
    "ALLOCATIONS\n"
    "function_alias_1:1: 3 events\t+48B\t-0B\n"
    "function_alias_2:2: 2 events\t+32B\t-0B\n"
    "@plain.lua:3: 1 events\t+16B\t-0B\n"
    "\n"
    "REALLOCATIONS\n"
    "\n"
    "DEALLOCATIONS\n"
    "\n";
  size_t hl = strlen(head);
  ck_assert_int_ge(strlen(got), hl);
  ck_assert_msg(strncmp(got, head, hl) == 0, "got:\n%s", got);
  ck_assert_str_eq(got + hl, alias_tail);
  free(got);
}
END_TEST

START_TEST(aliases_leak_only)
{
  struct memreport_opts o = {1, 0, MEMREPORT_ERA_AUTO};
  char *got = finish(alias_stream(), &o);
  ck_assert_str_eq(got, alias_tail);
  free(got);
}
END_TEST

/* --- trace number reused after jit.flush() ------------------------------ */

static ljp_writer *flush_stream(void)
{
  ljp_writer *w = mem_begin();
  lfunc(w, 0x5000, "@t.lua", 0);
  lfunc(w, 0x5100, "@t.lua", 10);
  OK(ljp_write_symtab_trace(w, 1, 0, 0x5000, 5));
  OK(ljp_write_symtab_end(w));
  OK(ljp_write_stream_begin(w, LJP_KIND_MEMPROF, 3, LJP_FLAVOR_TARANTOOL, 0));
  OK(ljp_write_mem(w, A, LJP_SRC_TRACE, 1, 0, 0, 0, 0, 0x100, 16));
  OK(ljp_write_mem(w, A, LJP_SRC_TRACE, 1, 0, 0, 0, 0, 0x110, 16));
  OK(ljp_write_event_trace(w, 1, 0x5100, 12));
  OK(ljp_write_mem(w, A, LJP_SRC_TRACE, 1, 0, 0, 0, 0, 0x120, 16));
  int_free(w, 0x120, 16);
  int_free(w, 0x100, 16);
  return w;
}

/* Today's tool: one row per trace number, named by its first event; the
 * primary entry keeps the name of the first chunk it took over. */
START_TEST(trace_flush_current)
{
  char *got = finish(flush_stream(), NULL);
  ck_assert_str_eq(got,
    "ALLOCATIONS\n"
    "TRACE [1] started at @t.lua:5: 3 events\t+48B\t-0B\n"
    "\n"
    "REALLOCATIONS\n"
    "\n"
    "DEALLOCATIONS\n"
    "INTERNAL: 2 events\t+0B\t-32B\n"
    "\tOverrides:\n"
    "\t\tTRACE [1] started at @t.lua:12\n"
    "\n"
    "\n"
    "HEAP SUMMARY:\n"
    "TRACE [1] started at @t.lua:5 holds 48B: 3 allocs, 0 frees\n"
    "\n");
  free(got);
}
END_TEST

/* The generation-era tool: one row per definition of trace 1. */
START_TEST(trace_flush_generation)
{
  struct memreport_opts o = {0, 0, MEMREPORT_ERA_GENERATION};
  char *got = finish(flush_stream(), &o);
  ck_assert_str_eq(got,
    "ALLOCATIONS\n"
    "TRACE [1] started at @t.lua:5: 2 events\t+32 bytes\t-0 bytes\n"
    "TRACE [1] started at @t.lua:12: 1 events\t+16 bytes\t-0 bytes\n"
    "\n"
    "REALLOCATIONS\n"
    "\n"
    "DEALLOCATIONS\n"
    "INTERNAL: 2 events\t+0 bytes\t-32 bytes\n"
    "\tOverrides:\n"
    "\t\tTRACE [1] started at @t.lua:12\n"
    "\t\tTRACE [1] started at @t.lua:5\n"
    "\n"
    "\n"
    "HEAP SUMMARY:\n"
    "TRACE [1] started at @t.lua:5 holds 16 bytes: 2 allocs, 1 frees\n"
    "\n");
  free(got);
}
END_TEST

/* --- ljm 2: traces named by machine code -------------------------------- */

START_TEST(ljm2_mcode_traces)
{
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  ck_assert_ptr_nonnull(w);
  OK(ljp_write_symtab_begin(w, 2, 'a'));
  lfunc(w, 0x5000, "@m.lua", 0);
  OK(ljp_write_symtab_trace(w, 1, 0xabc, 0x5000, 5));
  OK(ljp_write_symtab_end(w));
  OK(ljp_write_stream_begin(w, LJP_KIND_MEMPROF, 2, LJP_FLAVOR_TARANTOOL, 1));
  OK(ljp_write_mem(w, A, LJP_SRC_TRACE, 1, 0, 0xabc, 0, 0, 0x100, 8));
  OK(ljp_write_mem(w, A, LJP_SRC_TRACE, 1, 0, 0xdef, 0, 0, 0x200, 32));
  OK(ljp_write_mem(w, A, LJP_SRC_TRACE, 1, 0, 0xdef, 0, 0, 0x300, 32));
  int_free(w, 0x100, 8);
  char *got = finish(w, NULL);
  ck_assert_str_eq(got,
    "ALLOCATIONS\n"
    "TRACE [1] 0xdef: 2 events\t+64 bytes\t-0 bytes\n"
    "TRACE [1] 0xabc started at @m.lua:5: 1 events\t+8 bytes\t-0 bytes\n"
    "\n"
    "REALLOCATIONS\n"
    "\n"
    "DEALLOCATIONS\n"
    "INTERNAL: 1 events\t+0 bytes\t-8 bytes\n"
    "\tOverrides:\n"
    "\t\tTRACE [1] 0xabc started at @m.lua:5\n"
    "\n"
    "\n"
    "HEAP SUMMARY:\n"
    "TRACE [1] 0xdef holds 64 bytes: 2 allocs, 0 frees\n"
    "\n");
  free(got);
}
END_TEST

/* ljm 1 tools predate aliases: the chunk text is the name. */
START_TEST(ljm1_multiline_verbatim)
{
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  ck_assert_ptr_nonnull(w);
  OK(ljp_write_symtab_begin(w, 1, 0));
  lfunc(w, 0x5000, "x = 1\ny = {}", 0);
  OK(ljp_write_symtab_end(w));
  OK(ljp_write_stream_begin(w, LJP_KIND_MEMPROF, 1, LJP_FLAVOR_TARANTOOL, 0));
  lua_ev(w, A, 0x5000, 2, 0, 0, 0x100, 40);
  char *got = finish(w, NULL);
  ck_assert_str_eq(got,
    "ALLOCATIONS\n"
    "x = 1\ny = {}:2: 1 events\t+40 bytes\t-0 bytes\n"
    "\n"
    "REALLOCATIONS\n"
    "\n"
    "DEALLOCATIONS\n"
    "\n"
    "HEAP SUMMARY:\n"
    "x = 1\ny = {}:2 holds 40 bytes: 1 allocs, 0 frees\n"
    "\n");
  free(got);
}
END_TEST

/* --- memory follows the live heap ---------------------------------------- */

/* live chunks allocated, then `cycles` times: the oldest freed and a chunk
 * at an address never used before allocated.  Returns the heap slots the
 * report used; *text gets its HEAP SUMMARY. */
static size_t churn_slots(unsigned live, unsigned cycles, char **text)
{
  ljp_writer *w = mem_begin();
  lfunc(w, 0x5000, "@h.lua", 0);
  OK(ljp_write_symtab_end(w));
  OK(ljp_write_stream_begin(w, LJP_KIND_MEMPROF, 3, LJP_FLAVOR_TARANTOOL, 0));
  const uint64_t base = 0x100000, step = 0x40;
  for (unsigned i = 0; i < live + cycles; i++) {
    if (i >= live)
      int_free(w, base + (i - live) * step, 16);
    lua_ev(w, A, 0x5000, 7, 0, 0, base + i * step, 16);
  }
  OK(ljp_write_stream_end(w));
  size_t len;
  const uint8_t *data = ljp_writer_data(w, &len);
  ljp_reader *r = ljp_reader_new();
  ck_assert_ptr_nonnull(r);
  OK(ljp_reader_open_memory(r, data, len));
  struct memreport_opts o = {1, 0, MEMREPORT_ERA_AUTO}; /* --leak-only */
  memreport *m = memreport_new(&o);
  ck_assert_ptr_nonnull(m);
  const ljp_event *ev;
  ljp_status st;
  while ((st = ljp_reader_next(r, &ev)) == LJP_OK)
    OK(memreport_add(m, r, ev));
  ck_assert_int_eq(st, LJP_END);
  size_t tlen = 0;
  FILE *out = open_memstream(text, &tlen);
  ck_assert_ptr_nonnull(out);
  ck_assert_int_eq(memreport_print(m, out), 0);
  fclose(out);
  size_t slots = memreport_heap_slots(m);
  memreport_free(m);
  ljp_reader_free(r);
  ljp_writer_free(w);
  return slots;
}

/* Ten times the events over ten times the addresses, the same live set:
 * the same heap model, and the leak report sees the same live bytes. */
START_TEST(heap_follows_live_chunks)
{
  char *t1, *t10;
  size_t s1 = churn_slots(3000, 3000, &t1);
  size_t s10 = churn_slots(3000, 60000, &t10);
  ck_assert_uint_ge(s1, 3000);
  ck_assert_uint_eq(s10, s1);
  ck_assert_uint_le(s10, 4 * 3000);
  ck_assert_str_eq(t1, "HEAP SUMMARY:\n"
                       "@h.lua:7 holds 48000B: 6000 allocs, 3000 frees\n"
                       "\n");
  ck_assert_str_eq(t10, "HEAP SUMMARY:\n"
                        "@h.lua:7 holds 48000B: 63000 allocs, 60000 frees\n"
                        "\n");
  free(t1);
  free(t10);
}
END_TEST

START_TEST(era_names)
{
  ck_assert_int_eq(memreport_era_parse("auto"), MEMREPORT_ERA_AUTO);
  ck_assert_int_eq(memreport_era_parse("current"), MEMREPORT_ERA_CURRENT);
  ck_assert_int_eq(memreport_era_parse("bytes"), MEMREPORT_ERA_BYTES);
  ck_assert_int_eq(memreport_era_parse("generation"),
                   MEMREPORT_ERA_GENERATION);
  ck_assert_int_eq(memreport_era_parse("2021"), -1);
}
END_TEST

Suite *memreport_built_suite(void)
{
  Suite *s = suite_create("memreport_built");
  TCase *tc = tcase_create("built");
  tcase_add_test(tc, spec_example_report);
  tcase_add_test(tc, spec_example_leak_only);
  tcase_add_test(tc, spec_example_bytes_era);
  tcase_add_test(tc, realloc_overrides);
  tcase_add_test(tc, same_name_rows);
  tcase_add_test(tc, human_readable);
  tcase_add_test(tc, human_readable_ties);
  tcase_add_test(tc, aliases_report);
  tcase_add_test(tc, aliases_leak_only);
  tcase_add_test(tc, trace_flush_current);
  tcase_add_test(tc, trace_flush_generation);
  tcase_add_test(tc, ljm2_mcode_traces);
  tcase_add_test(tc, ljm1_multiline_verbatim);
  tcase_add_test(tc, era_names);
  tcase_add_test(tc, heap_follows_live_chunks);
  suite_add_tcase(s, tc);
  return s;
}
