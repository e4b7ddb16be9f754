/*
 * test_fold.c — stack merging and folding.
 *
 * Hand-built streams (made with the encoder) pin down each merge case to the
 * exact folded text; the bundled captures check the reference dialect
 * against Tarantool's own output and that no view loses a sample.
 */
#include "fold_output.h"
#include "ljp.h"
#include "ljp_testing.h"

#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *testdata = "testdata";

/* ---- helpers ---- */

typedef struct strbuf {
  char *p;
  size_t len, cap;
} strbuf;

static int sb_emit(void *ctx, const char *line, size_t len) {
  strbuf *b = ctx;
  if (b->len + len + 1 > b->cap) {
    b->cap = (b->len + len + 1) * 2;
    b->p = realloc(b->p, b->cap);
  }
  memcpy(b->p + b->len, line, len);
  b->len += len;
  b->p[b->len] = '\0';
  return 0;
}

/* Symbols shared by the hand-built sysprof streams. */
enum {
  A_MAIN = 0x1000, A_PCALL = 0x1100, A_VMPCALL = 0x1200, A_FUNCC = 0x1300,
  A_MYC = 0x1400, A_CALL = 0x1500, A_GC = 0x1600, A_CPCALL = 0x1700,
  A_PMAIN = 0x1800, A_WRAP = 0x1900, A_SORT = 0x1a00,
  P_MAIN = 0x5000, P_F = 0x5100, P_CMP = 0x5200, P_CO = 0x5300
};

static ljp_writer *sysprof_begin(void) {
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  ck_assert_ptr_nonnull(w);
  ck_assert_int_eq(ljp_write_symtab_begin(w, 3, 0), LJP_OK);
  ljp_write_symtab_lfunc(w, P_MAIN, "@a.lua", 6, 0);
  ljp_write_symtab_lfunc(w, P_F, "@a.lua", 6, 4);
  ljp_write_symtab_lfunc(w, P_CMP, "@a.lua", 6, 10);
  ljp_write_symtab_lfunc(w, P_CO, "@b.lua", 6, 20);
  static const struct { uint64_t a; const char *n; } cs[] = {
      {A_MAIN, "main"}, {A_PCALL, "lua_pcall"}, {A_VMPCALL, "lj_vm_pcall"},
      {A_FUNCC, "lj_BC_FUNCC"}, {A_MYC, "my_cfunc"}, {A_CALL, "lua_call"},
      {A_GC, "lj_gc_step"}, {A_CPCALL, "lua_cpcall"}, {A_PMAIN, "pmain"},
      {A_WRAP, "lj_ff_coroutine_wrap_aux"}, {A_SORT, "lj_cf_table_sort"}};
  for (size_t i = 0; i < sizeof(cs) / sizeof(cs[0]); i++)
    ljp_write_symtab_cfunc(w, cs[i].a, cs[i].n, strlen(cs[i].n));
  ljp_write_symtab_trace(w, 1, 0, P_F, 5);
  ck_assert_int_eq(ljp_write_symtab_end(w), LJP_OK);
  ck_assert_int_eq(ljp_write_stream_begin(w, LJP_KIND_SYSPROF, 2, 0, 0), LJP_OK);
  return w;
}

static ljp_frame LF(uint64_t proto, uint64_t line) {
  ljp_frame f = {LJP_FRAME_LUA, proto, line, NULL, NULL, 0};
  return f;
}
static ljp_frame CF(uint64_t addr) {
  ljp_frame f = {LJP_FRAME_CFUNC, addr, 0, NULL, NULL, 0};
  return f;
}
static ljp_frame FF(uint64_t ffid) {
  ljp_frame f = {LJP_FRAME_FFUNC, ffid, 0, NULL, NULL, 0};
  return f;
}

/* Writes a sample whose stacks are given OUTERMOST first (easier to read
 * in tests); the stream wants innermost first. */
static void sample(ljp_writer *w, int vmstate, const ljp_frame *lua, size_t nl,
                   const uint64_t *host, size_t nh) {
  /* Zeroed: with nl == 0 gcc -O3 cannot see that the writer reads no
   * frame, and warns. */
  ljp_frame l[64] = {{0}};
  uint64_t h[64] = {0};
  ck_assert_uint_le(nl, 64);
  ck_assert_uint_le(nh, 64);
  for (size_t i = 0; i < nl; i++)
    l[i] = lua[nl - 1 - i];
  for (size_t i = 0; i < nh; i++)
    h[i] = host[nh - 1 - i] + 0x10; /* return addresses inside the symbol */
  ck_assert_int_eq(ljp_write_sample(w, vmstate, l, nl, h, nh), LJP_OK);
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Folds the stream in w with the options; returns the output text. */
static char *fold_bytes(const uint8_t *data, size_t len,
                        const ljp_fold_options *o, int tarantool) {
  ljp_reader *r = ljp_reader_new();
  ck_assert_int_eq(ljp_reader_open_memory(r, data, len), LJP_OK);
  ljp_tree *t = ljp_tree_new();
  ljp_folder *f = ljp_folder_new(t, o);
  const ljp_event *ev;
  ljp_status st;
  while ((st = ljp_reader_next(r, &ev)) == LJP_OK)
    ck_assert_int_eq(ljp_folder_add(f, r, ev), LJP_OK);
  ck_assert_msg(st == LJP_END, "decode: %s", ljp_reader_error(r));
  strbuf b = {calloc(1, 1), 0, 1};
  if (tarantool)
    ck_assert_int_eq(fold_write_tarantool(t, 0, sb_emit, &b), LJP_OK);
  else
    ck_assert_int_eq(ljp_tree_write_folded(t, 0, sb_emit, &b), LJP_OK);
  ljp_folder_free(f);
  ljp_tree_free(t);
  ljp_reader_free(r);
  return b.p;
}

static char *fold_writer(ljp_writer *w, ljp_stack_view view, int vmstate) {
  ck_assert_int_eq(ljp_write_stream_end(w), LJP_OK);
  size_t len;
  const uint8_t *d = ljp_writer_data(w, &len);
  ljp_fold_options o;
  memset(&o, 0, sizeof(o));
  o.view = view;
  o.vmstate = (ljp_vmstate_frame)vmstate;
  o.flavor = LJP_FLAVOR_AUTO;
  char *s = fold_bytes(d, len, &o, view == LJP_VIEW_REFERENCE);
  ljp_writer_free(w);
  return s;
}

/* The worked example of FORMATS.md §9.3. */
static ljp_writer *spec_example(void) {
  ljp_writer *w = sysprof_begin();
  ljp_frame lua1[] = {LF(P_MAIN, 0), LF(P_F, 4)};
  uint64_t host1[] = {A_MAIN, A_PCALL, A_VMPCALL};
  sample(w, LJP_VMST_LFUNC, lua1, 2, host1, 3);
  sample(w, LJP_VMST_LFUNC, lua1, 2, host1, 3);
  ljp_frame lua2[] = {LF(P_MAIN, 0), LF(P_F, 4), CF(A_MYC)};
  uint64_t host2[] = {A_MAIN, A_PCALL, A_VMPCALL, A_FUNCC, A_MYC};
  sample(w, LJP_VMST_CFUNC, lua2, 3, host2, 5);
  uint64_t host3[] = {A_MAIN, A_PCALL, A_VMPCALL, A_FUNCC, A_GC};
  sample(w, LJP_VMST_GC, NULL, 0, host3, 5);
  ck_assert_int_eq(ljp_write_trace_sample(w, 1, P_F, 4), LJP_OK);
  return w;
}

START_TEST(reference_spec_example) {
  char *s = fold_writer(spec_example(), LJP_VIEW_REFERENCE, 0);
  ck_assert_str_eq(
      s, ";\t1\n"
         "main:0x1000;lua_pcall:0x1100;@a.lua:0;@a.lua:4;lj_vm_pcall:0x1200;\t2\n"
         "main:0x1000;lua_pcall:0x1100;@a.lua:0;@a.lua:4;lj_vm_pcall:0x1200;"
         "lj_BC_FUNCC:0x1300;my_cfunc:0x1400;\t1\n"
         "main:0x1000;lua_pcall:0x1100;lj_vm_pcall:0x1200;lj_BC_FUNCC:0x1300;"
         "lj_gc_step:0x1600;\t1\n");
  free(s);
}
END_TEST

START_TEST(merged_spec_example) {
  char *s = fold_writer(spec_example(), LJP_VIEW_MERGED, 0);
  ck_assert_str_eq(s,
                   "@a.lua:4;TRACE [1] @a.lua:5 1\n"
                   "main;lua_pcall;lj_vm_pcall;@a.lua:0;@a.lua:4 2\n"
                   "main;lua_pcall;lj_vm_pcall;@a.lua:0;@a.lua:4;lj_BC_FUNCC;my_cfunc 1\n"
                   "main;lua_pcall;lj_vm_pcall;lj_BC_FUNCC;lj_gc_step 1\n");
  free(s);
}
END_TEST

START_TEST(lua_and_host_views) {
  char *s = fold_writer(spec_example(), LJP_VIEW_LUA, 0);
  ck_assert_str_eq(s, "@a.lua:0;@a.lua:4 2\n"
                      "@a.lua:0;@a.lua:4;my_cfunc 1\n"
                      "@a.lua:4;TRACE [1] @a.lua:5 1\n"
                      "VMST_GC 1\n");
  free(s);
  s = fold_writer(spec_example(), LJP_VIEW_HOST, 0);
  ck_assert_str_eq(s, "@a.lua:4;TRACE [1] @a.lua:5 1\n"
                      "main;lua_pcall;lj_vm_pcall 2\n"
                      "main;lua_pcall;lj_vm_pcall;lj_BC_FUNCC;lj_gc_step 1\n"
                      "main;lua_pcall;lj_vm_pcall;lj_BC_FUNCC;my_cfunc 1\n");
  free(s);
}
END_TEST

START_TEST(vmstate_root_and_leaf) {
  char *s = fold_writer(spec_example(), LJP_VIEW_LUA, LJP_VMSTATE_ROOT);
  ck_assert_str_eq(s, "VMST_CFUNC;@a.lua:0;@a.lua:4;my_cfunc 1\n"
                      "VMST_GC 1\n"
                      "VMST_LFUNC;@a.lua:0;@a.lua:4 2\n"
                      "VMST_TRACE;@a.lua:4;TRACE [1] @a.lua:5 1\n");
  free(s);
  s = fold_writer(spec_example(), LJP_VIEW_LUA, LJP_VMSTATE_LEAF);
  ck_assert_str_eq(s, "@a.lua:0;@a.lua:4;VMST_LFUNC 2\n"
                      "@a.lua:0;@a.lua:4;my_cfunc;VMST_CFUNC 1\n"
                      "@a.lua:4;TRACE [1] @a.lua:5;VMST_TRACE 1\n"
                      "VMST_GC 1\n");
  free(s);
}
END_TEST

/* Lua -> C -> Lua: table.sort's comparator runs inside lua_call. */
START_TEST(merged_sandwich) {
  ljp_writer *w = sysprof_begin();
  ljp_frame lua[] = {LF(P_MAIN, 0), LF(P_F, 4), FF(93), LF(P_CMP, 10)};
  uint64_t host[] = {A_MAIN, A_PCALL, A_FUNCC, A_SORT, A_CALL, A_FUNCC};
  sample(w, LJP_VMST_LFUNC, lua, N(lua), host, N(host));
  char *s = fold_writer(w, LJP_VIEW_MERGED, 0);
  /* table.sort stands where the host runs it (lj_cf_table_sort) */
  ck_assert_str_eq(s, "main;lua_pcall;@a.lua:0;@a.lua:4;lj_BC_FUNCC;table.sort;"
                      "lua_call;@a.lua:10;lj_BC_FUNCC 1\n");
  free(s);
}
END_TEST

/* The standalone luajit binary: pmain is a C function entered through
 * lua_cpcall; its Lua frame is the host frame pmain, not a second copy. */
START_TEST(merged_cli_cpcall) {
  ljp_writer *w = sysprof_begin();
  ljp_frame lua[] = {CF(A_PMAIN), LF(P_MAIN, 0), LF(P_F, 4)};
  uint64_t host[] = {A_MAIN, A_CPCALL, A_FUNCC, A_PMAIN, A_PCALL};
  sample(w, LJP_VMST_LFUNC, lua, N(lua), host, N(host));
  char *s = fold_writer(w, LJP_VIEW_MERGED, 0);
  ck_assert_str_eq(s, "main;lua_cpcall;lj_BC_FUNCC;pmain;lua_pcall;@a.lua:0;"
                      "@a.lua:4 1\n");
  free(s);
  /* The reference removes the innermost Lua frame at lua_cpcall and stops
   * at pmain: no Lua frame at all (T8). */
  w = sysprof_begin();
  sample(w, LJP_VMST_LFUNC, lua, N(lua), host, N(host));
  s = fold_writer(w, LJP_VIEW_REFERENCE, 0);
  ck_assert_str_eq(s, "main:0x1000;lua_cpcall:0x1700;lj_BC_FUNCC:0x1300;"
                      "pmain:0x1800;lua_pcall:0x1100;\t1\n");
  free(s);
}
END_TEST

/* The Lua stack is the running coroutine's: it goes after the innermost
 * thread entry, not after the main thread's lua_pcall. */
START_TEST(merged_coroutine) {
  ljp_writer *w = sysprof_begin();
  ljp_frame lua[] = {LF(P_CO, 20)};
  uint64_t host[] = {A_MAIN, A_PCALL, A_WRAP, A_FUNCC};
  sample(w, LJP_VMST_LFUNC, lua, N(lua), host, N(host));
  char *s = fold_writer(w, LJP_VIEW_MERGED, 0);
  ck_assert_str_eq(s, "main;lua_pcall;lj_ff_coroutine_wrap_aux;@b.lua:20;"
                      "lj_BC_FUNCC 1\n");
  free(s);
}
END_TEST

/* Host frames dropped by the producer: no entry is visible; Lua frames
 * still all appear, in order, after the host frames that are there. */
START_TEST(merged_degrades) {
  ljp_writer *w = sysprof_begin();
  ljp_frame lua[] = {LF(P_MAIN, 0), LF(P_F, 4), FF(93), LF(P_CMP, 10)};
  uint64_t host[] = {A_MAIN};
  sample(w, LJP_VMST_LFUNC, lua, N(lua), host, N(host));
  /* leaf mode: no host stack at all */
  sample(w, LJP_VMST_LFUNC, lua, N(lua), NULL, 0);
  /* only the outer entry survived: the rest of Lua follows the host */
  uint64_t host2[] = {A_MAIN, A_PCALL, A_FUNCC, A_SORT};
  sample(w, LJP_VMST_LFUNC, lua, N(lua), host2, N(host2));
  char *s = fold_writer(w, LJP_VIEW_MERGED, 0);
  ck_assert_str_eq(s,
                   "@a.lua:0;@a.lua:4;table.sort;@a.lua:10 1\n"
                   "main;@a.lua:0;@a.lua:4;table.sort;@a.lua:10 1\n"
                   "main;lua_pcall;@a.lua:0;@a.lua:4;lj_BC_FUNCC;table.sort;"
                   "@a.lua:10 1\n");
  free(s);
}
END_TEST

/* The host stack lost pmain: the Lua C-function frame still goes after the
 * interpreter frame that calls it, and the C function's callees before the
 * Lua it calls back. */
START_TEST(merged_boundary_placement) {
  ljp_writer *w = sysprof_begin();
  ljp_frame lua[] = {CF(A_PMAIN), LF(P_MAIN, 0), FF(93), LF(P_CMP, 10)};
  uint64_t host[] = {A_MAIN, A_CPCALL, A_FUNCC};
  sample(w, LJP_VMST_LFUNC, lua, N(lua), host, N(host));
  uint64_t host2[] = {A_MAIN, A_CPCALL, A_FUNCC, A_PMAIN, A_PCALL, A_FUNCC,
                      A_SORT, A_MYC};
  sample(w, LJP_VMST_LFUNC, lua, N(lua), host2, N(host2));
  char *s = fold_writer(w, LJP_VIEW_MERGED, 0);
  ck_assert_str_eq(s, "main;lua_cpcall;lj_BC_FUNCC;pmain;@a.lua:0;table.sort;"
                      "@a.lua:10 1\n"
                      "main;lua_cpcall;lj_BC_FUNCC;pmain;lua_pcall;@a.lua:0;"
                      "lj_BC_FUNCC;table.sort;my_cfunc;@a.lua:10 1\n");
  free(s);
}
END_TEST

/* pcall runs its callee inside the VM: no host entry, no split. */
START_TEST(merged_pcall_is_not_a_boundary) {
  ljp_writer *w = sysprof_begin();
  ljp_frame lua[] = {LF(P_MAIN, 0), FF(20), LF(P_F, 4), FF(93), LF(P_CMP, 10)};
  uint64_t host[] = {A_MAIN, A_PCALL, A_FUNCC, A_SORT, A_CALL};
  sample(w, LJP_VMST_LFUNC, lua, N(lua), host, N(host));
  char *s = fold_writer(w, LJP_VIEW_MERGED, 0);
  ck_assert_str_eq(s, "main;lua_pcall;@a.lua:0;pcall;@a.lua:4;lj_BC_FUNCC;"
                      "table.sort;lua_call;@a.lua:10 1\n");
  free(s);
}
END_TEST

/* Names follow the symbol table as it was at each sample: a trace number
 * reused after jit.flush() and a proto address reused after GC. */
START_TEST(names_follow_redefinitions) {
  ljp_writer *w = sysprof_begin();
  ljp_frame lua[] = {LF(P_CMP, 10)};
  ck_assert_int_eq(ljp_write_trace_sample(w, 1, P_F, 4), LJP_OK);
  sample(w, LJP_VMST_LFUNC, lua, 1, NULL, 0);
  ck_assert_int_eq(ljp_write_event_trace(w, 1, P_CO, 22), LJP_OK);
  ck_assert_int_eq(ljp_write_event_lfunc(w, P_CMP, "=gen_1", 6, 3), LJP_OK);
  ck_assert_int_eq(ljp_write_trace_sample(w, 1, P_CO, 20), LJP_OK);
  ljp_frame lua2[] = {LF(P_CMP, 3)};
  sample(w, LJP_VMST_LFUNC, lua2, 1, NULL, 0);
  char *s = fold_writer(w, LJP_VIEW_MERGED, 0);
  ck_assert_str_eq(s, "=gen_1:3 1\n"
                      "@a.lua:10 1\n"
                      "@a.lua:4;TRACE [1] @a.lua:5 1\n"
                      "@b.lua:20;TRACE [1] @b.lua:22 1\n");
  free(s);
}
END_TEST

/* Ends w's memprof stream, folds it by weight and frees w. */
static char *fold_mem_writer(ljp_writer *w, ljp_weight weight) {
  ck_assert_int_eq(ljp_write_stream_end(w), LJP_OK);
  size_t len;
  const uint8_t *d = ljp_writer_data(w, &len);
  ljp_fold_options o;
  memset(&o, 0, sizeof(o));
  o.weight = weight;
  o.flavor = LJP_FLAVOR_AUTO;
  char *s = fold_bytes(d, len, &o, 0);
  ljp_writer_free(w);
  return s;
}

/* memprof weights: bytes, events and live bytes per allocation site. */
static char *fold_mem(ljp_weight weight) {
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  ljp_write_symtab_begin(w, 3, 0);
  ljp_write_symtab_lfunc(w, P_MAIN, "@m.lua", 6, 0);
  ljp_write_symtab_lfunc(w, P_F, "@m.lua", 6, 7);
  ljp_write_symtab_cfunc(w, A_MYC, "my_cfunc", 8);
  ljp_write_symtab_trace(w, 3, 0, P_F, 9);
  ljp_write_symtab_end(w);
  ljp_write_stream_begin(w, LJP_KIND_MEMPROF, 3, 0, 0);
  ljp_write_mem(w, LJP_MEM_ALLOC, LJP_SRC_LFUNC, P_F, 8, 0, 0, 0, 0xa000, 100);
  ljp_write_mem(w, LJP_MEM_ALLOC, LJP_SRC_LFUNC, P_F, 8, 0, 0, 0, 0xa100, 50);
  ljp_write_mem(w, LJP_MEM_ALLOC, LJP_SRC_CFUNC, A_MYC + 4, 0, 0, 0, 0, 0xb000, 30);
  ljp_write_mem(w, LJP_MEM_ALLOC, LJP_SRC_TRACE, 3, 0, 0, 0, 0, 0xc000, 16);
  ljp_write_mem(w, LJP_MEM_ALLOC, LJP_SRC_INTERNAL, 0, 0, 0, 0, 0, 0xd000, 8);
  /* realloc at main: the old block leaves line 8, the new one is main's */
  ljp_write_mem(w, LJP_MEM_REALLOC, LJP_SRC_LFUNC, P_MAIN, 2, 0, 0xa100, 50, 0xa200, 70);
  ljp_write_mem(w, LJP_MEM_FREE, LJP_SRC_INTERNAL, 0, 0, 0, 0xa000, 100, 0, 0);
  ljp_write_mem(w, LJP_MEM_FREE, LJP_SRC_INTERNAL, 0, 0, 0, 0xe000, 999, 0, 0);
  return fold_mem_writer(w, weight);
}

START_TEST(memprof_weights) {
  char *s = fold_mem(LJP_WEIGHT_BYTES);
  ck_assert_str_eq(s, "@m.lua;@m.lua:0;line 2 70\n"
                      "@m.lua;@m.lua:7;TRACE [3] @m.lua:9 16\n"
                      "@m.lua;@m.lua:7;line 8 150\n"
                      "INTERNAL 8\n"
                      "my_cfunc 30\n");
  free(s);
  s = fold_mem(LJP_WEIGHT_EVENTS);
  ck_assert_str_eq(s, "@m.lua;@m.lua:0;line 2 1\n"
                      "@m.lua;@m.lua:7;TRACE [3] @m.lua:9 1\n"
                      "@m.lua;@m.lua:7;line 8 2\n"
                      "INTERNAL 1\n"
                      "my_cfunc 1\n");
  free(s);
  /* live: line 8 allocated 150 and lost both blocks (100 freed, 50 moved);
   * the free of an unknown block charges nobody */
  s = fold_mem(LJP_WEIGHT_LIVE);
  ck_assert_str_eq(s, "@m.lua;@m.lua:0;line 2 70\n"
                      "@m.lua;@m.lua:7;TRACE [3] @m.lua:9 16\n"
                      "INTERNAL 8\n"
                      "my_cfunc 30\n");
  free(s);
}
END_TEST

/* Live bytes under heavy churn: thousands of blocks allocated, moved and
 * freed at random addresses (the live map deletes as it goes) must leave
 * exactly what a simple model says is still held, per site. */
START_TEST(memprof_live_churn) {
  enum { NADDR = 3000, NEV = 40000 };
  static uint64_t size_at[NADDR];
  static int site_at[NADDR];
  memset(size_at, 0, sizeof(size_at));
  int64_t held[3] = {0, 0, 0};
  uint64_t rng = 12345;
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  ljp_write_symtab_begin(w, 3, 0);
  ljp_write_symtab_lfunc(w, P_MAIN, "@m.lua", 6, 0);
  ljp_write_symtab_end(w);
  ljp_write_stream_begin(w, LJP_KIND_MEMPROF, 3, 0, 0);
  for (int i = 0; i < NEV; i++) {
    rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
    unsigned a = (unsigned)(rng >> 33) % NADDR, site = (unsigned)(rng >> 20) % 3;
    uint64_t addr = 0x100000 + (uint64_t)a * 64, sz = 1 + (rng >> 50) % 500;
    if (!size_at[a]) {
      ljp_write_mem(w, LJP_MEM_ALLOC, LJP_SRC_LFUNC, P_MAIN, site + 1, 0, 0, 0,
                    addr, sz);
      size_at[a] = sz;
      site_at[a] = (int)site;
      held[site] += (int64_t)sz;
    } else if (rng & 0x100) {
      ljp_write_mem(w, LJP_MEM_FREE, LJP_SRC_INTERNAL, 0, 0, 0, addr,
                    size_at[a], 0, 0);
      held[site_at[a]] -= (int64_t)size_at[a];
      size_at[a] = 0;
    } else {
      unsigned b = (a + 1 + (unsigned)(rng >> 40) % (NADDR - 1)) % NADDR;
      if (size_at[b])
        continue;
      uint64_t baddr = 0x100000 + (uint64_t)b * 64;
      ljp_write_mem(w, LJP_MEM_REALLOC, LJP_SRC_LFUNC, P_MAIN, site + 1, 0, addr,
                    size_at[a], baddr, sz);
      held[site_at[a]] -= (int64_t)size_at[a];
      size_at[a] = 0;
      size_at[b] = sz;
      site_at[b] = (int)site;
      held[site] += (int64_t)sz;
    }
  }
  char *got = fold_mem_writer(w, LJP_WEIGHT_LIVE);
  char expect[256];
  snprintf(expect, sizeof(expect),
           "@m.lua;@m.lua:0;line 1 %lld\n@m.lua;@m.lua:0;line 2 %lld\n"
           "@m.lua;@m.lua:0;line 3 %lld\n",
           (long long)held[0], (long long)held[1], (long long)held[2]);
  ck_assert_str_eq(got, expect);
  free(got);
}
END_TEST

/* ---- the bundled captures ---- */

/* testdata/captures/<name><ext>, allocated. */
static char *capture_path(const char *name, const char *ext) {
  int n = snprintf(NULL, 0, "%s/captures/%s%s", testdata, name, ext);
  char *p = malloc((size_t)n + 1);
  snprintf(p, (size_t)n + 1, "%s/captures/%s%s", testdata, name, ext);
  return p;
}

static uint8_t *slurp(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  ck_assert_msg(f != NULL, "cannot open %s", path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = malloc((size_t)n + 1);
  ck_assert_int_eq(fread(b, 1, (size_t)n, f), (size_t)n);
  b[n] = 0;
  fclose(f);
  *len = (size_t)n;
  return b;
}

/* The bytes of testdata/captures/<name><ext>. */
static uint8_t *load_capture(const char *name, const char *ext, size_t *len) {
  char *path = capture_path(name, ext);
  uint8_t *data = slurp(path, len);
  free(path);
  return data;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted lines of text (modified in place). */
static char **lines_of(char *text, size_t *n) {
  size_t cap = 64, k = 0;
  char **v = malloc(cap * sizeof(*v));
  for (char *p = text; *p;) {
    char *nl = strchr(p, '\n');
    if (nl)
      *nl = '\0';
    if (k == cap)
      v = realloc(v, (cap *= 2) * sizeof(*v));
    v[k++] = p;
    if (!nl)
      break;
    p = nl + 1;
  }
  qsort(v, k, sizeof(*v), cmp_str);
  *n = k;
  return v;
}

static int list_captures(const char *prefix, char names[][128], int max) {
  char *dir = capture_path("", "");
  DIR *d = opendir(dir);
  ck_assert_msg(d != NULL, "no %s", dir);
  free(dir);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) && n < max) {
    size_t l = strlen(e->d_name);
    if (strncmp(e->d_name, prefix, strlen(prefix)) == 0 && l > 4 &&
        strcmp(e->d_name + l - 4, ".bin") == 0 && l < 120) {
      memcpy(names[n], e->d_name, l - 4);
      names[n][l - 4] = '\0';
      n++;
    }
  }
  closedir(d);
  qsort(names, (size_t)n, 128, (int (*)(const void *, const void *))strcmp);
  return n;
}

START_TEST(captures_reference_fold) {
  char names[64][128];
  int n = list_captures("sp_", names, 64);
  ck_assert_int_ge(n, 12);
  for (int i = 0; i < n; i++) {
    size_t len, rlen;
    uint8_t *data = load_capture(names[i], ".bin", &len);
    char *ref = (char *)load_capture(names[i], ".fold.txt", &rlen);
    ljp_fold_options o;
    memset(&o, 0, sizeof(o));
    o.view = LJP_VIEW_REFERENCE;
    o.flavor = LJP_FLAVOR_AUTO;
    char *got = fold_bytes(data, len, &o, 1);
    size_t ng, nr;
    char **g = lines_of(got, &ng), **rl = lines_of(ref, &nr);
    ck_assert_msg(ng == nr, "%s: %zu lines, reference %zu", names[i], ng, nr);
    for (size_t k = 0; k < ng; k++)
      ck_assert_msg(strcmp(g[k], rl[k]) == 0, "%s: line %zu:\n got %.300s\n ref %.300s",
                    names[i], k, g[k], rl[k]);
    free(g);
    free(rl);
    free(got);
    free(ref);
    free(data);
  }
}
END_TEST

/* Default output of every view: well-formed collapsed stacks, sorted, and
 * the counts add up to the samples of the stream. */
START_TEST(captures_every_view_keeps_every_sample) {
  char names[64][128];
  int n = list_captures("sp_", names, 64);
  for (int i = 0; i < n; i++) {
    size_t len;
    uint8_t *data = load_capture(names[i], ".bin", &len);
    ljp_reader *r = ljp_reader_new();
    ljp_reader_open_memory(r, data, len);
    const ljp_event *ev;
    while (ljp_reader_next(r, &ev) == LJP_OK)
      ;
    uint64_t samples = ljp_reader_counters(r)->samples;
    ljp_reader_free(r);
    for (int view = LJP_VIEW_MERGED; view <= LJP_VIEW_HOST; view++) {
      for (int style = 0; style < 2; style++) {
        ljp_fold_options o;
        memset(&o, 0, sizeof(o));
        o.view = (ljp_stack_view)view;
        o.style = (ljp_name_style)style;
        o.flavor = LJP_FLAVOR_AUTO;
        char *got = fold_bytes(data, len, &o, 0);
        uint64_t sum = 0;
        const char *prev = NULL;
        for (char *p = got; *p;) {
          char *nl = strchr(p, '\n');
          ck_assert_ptr_nonnull(nl);
          *nl = '\0';
          char *sp = strrchr(p, ' ');
          ck_assert_ptr_nonnull(sp);
          ck_assert_msg(sp > p && sp[-1] != ';' && p[0] != ';' &&
                            !strstr(p, ";;"),
                        "%s view %d: bad line %.200s", names[i], view, p);
          sum += strtoull(sp + 1, NULL, 10);
          if (prev)
            ck_assert_msg(strcmp(prev, p) < 0, "%s: unsorted", names[i]);
          prev = p;
          p = nl + 1;
        }
        ck_assert_msg(sum == samples, "%s view %d: %llu of %llu samples",
                      names[i], view, (unsigned long long)sum,
                      (unsigned long long)samples);
        free(got);
      }
    }
    free(data);
  }
}
END_TEST

/* memprof bytes: every allocated byte is on exactly one line. */
START_TEST(captures_memprof_bytes) {
  char names[64][128];
  int n = list_captures("mp_", names, 64);
  ck_assert_int_ge(n, 7);
  for (int i = 0; i < n; i++) {
    size_t len;
    uint8_t *data = load_capture(names[i], ".bin", &len);
    ljp_reader *r = ljp_reader_new();
    ljp_reader_open_memory(r, data, len);
    const ljp_event *ev;
    uint64_t bytes = 0;
    while (ljp_reader_next(r, &ev) == LJP_OK)
      if (ev->type == LJP_EV_MEMORY && ev->u.mem.kind != LJP_MEM_FREE)
        bytes += ev->u.mem.new_size;
    ljp_reader_free(r);
    ljp_fold_options o;
    memset(&o, 0, sizeof(o));
    o.weight = LJP_WEIGHT_BYTES;
    o.flavor = LJP_FLAVOR_AUTO;
    char *got = fold_bytes(data, len, &o, 0);
    uint64_t sum = 0;
    for (char *p = got; *p;) {
      char *nl = strchr(p, '\n');
      *nl = '\0';
      sum += strtoull(strrchr(p, ' ') + 1, NULL, 10);
      p = nl + 1;
    }
    ck_assert_msg(sum == bytes, "%s: %llu of %llu bytes", names[i],
                  (unsigned long long)sum, (unsigned long long)bytes);
    free(got);
    free(data);
  }
}
END_TEST

/* ---- ljp x1 ---- */

/* sysprof_begin's symbol table, then an x1 stream instead of ljp 2. */
static ljp_writer *x1_begin(void) {
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  ljp_writer *v2 = sysprof_begin();
  size_t len;
  const uint8_t *d = ljp_writer_data(v2, &len);
  /* the symbol table is everything before the 7-byte ljp 2 prologue */
  for (size_t i = 0; i + 7 < len; i++)
    ck_assert_int_eq(ljp_write_byte(w, d[i]), LJP_OK);
  ljp_writer_free(v2);
  ck_assert_int_eq(ljp_write_stream_begin_x1(w, LJP_FLAVOR_TARANTOOL,
                                             LJP_TIMER_WALL, 1000000),
                   LJP_OK);
  return w;
}

/* An x1 sample, stacks OUTERMOST first as sample() takes them. */
static void sample_x1(ljp_writer *w, int vmstate, uint64_t dt, uint64_t coro,
                      uint64_t traceno, const ljp_frame *lua, size_t nl,
                      const uint64_t *host, size_t nh) {
  ljp_frame l[64];
  uint64_t h[64];
  ljp_sample_x1 s;
  for (size_t i = 0; i < nl; i++)
    l[i] = lua[nl - 1 - i];
  for (size_t i = 0; i < nh; i++)
    h[i] = host[nh - 1 - i] + 0x10;
  memset(&s, 0, sizeof(s));
  s.vmstate = vmstate;
  s.dt_ns = dt;
  s.coro = coro;
  s.traceno = traceno;
  s.trace_proto = P_F;
  s.trace_line = 4;
  s.lua = l;
  s.nlua = nl;
  s.host = h;
  s.nhost = nh;
  ck_assert_int_eq(ljp_write_sample_x1(w, &s), LJP_OK);
}

/* Trace samples fold as their stack with the trace on top; GC samples with
 * a Lua stack fold with it; samples differing only in time and coroutine
 * merge. */
static ljp_writer *x1_example(void) {
  ljp_writer *w = x1_begin();
  ljp_frame lua[] = {LF(P_MAIN, 0), LF(P_F, 4)};
  uint64_t host[] = {A_MAIN, A_PCALL, A_VMPCALL};
  sample_x1(w, LJP_VMST_TRACE, 1000, 1, 1, lua, N(lua), host, N(host));
  sample_x1(w, LJP_VMST_TRACE, 123456789, 3, 1, lua, N(lua), host, N(host));
  sample_x1(w, LJP_VMST_LFUNC, 5, 1, 0, lua, N(lua), host, N(host));
  uint64_t hgc[] = {A_MAIN, A_PCALL, A_VMPCALL, A_GC};
  sample_x1(w, LJP_VMST_GC, 7, 1, 0, lua, N(lua), hgc, N(hgc));
  /* leaf mode: no host stack */
  sample_x1(w, LJP_VMST_TRACE, 1, 1, 1, lua, N(lua), NULL, 0);
  return w;
}

START_TEST(x1_merged) {
  char *s = fold_writer(x1_example(), LJP_VIEW_MERGED, 0);
  ck_assert_str_eq(s, "@a.lua:0;@a.lua:4;TRACE [1] @a.lua:5 1\n"
                      "main;lua_pcall;lj_vm_pcall;@a.lua:0;@a.lua:4 1\n"
                      "main;lua_pcall;lj_vm_pcall;@a.lua:0;@a.lua:4;"
                      "TRACE [1] @a.lua:5 2\n"
                      "main;lua_pcall;lj_vm_pcall;@a.lua:0;@a.lua:4;"
                      "lj_gc_step 1\n");
  free(s);
}
END_TEST

START_TEST(x1_lua_view) {
  char *s = fold_writer(x1_example(), LJP_VIEW_LUA, 0);
  ck_assert_str_eq(s, "@a.lua:0;@a.lua:4 2\n"
                      "@a.lua:0;@a.lua:4;TRACE [1] @a.lua:5 3\n");
  free(s);
}
END_TEST

/* The fold memo skips an x1 record's time and coroutine, but not its VM
 * state: with VM-state frames, equal stacks in two states stay apart. */
START_TEST(x1_vmstate_frames) {
  char *s = fold_writer(x1_example(), LJP_VIEW_LUA, LJP_VMSTATE_ROOT);
  ck_assert_str_eq(s, "VMST_GC;@a.lua:0;@a.lua:4 1\n"
                      "VMST_LFUNC;@a.lua:0;@a.lua:4 1\n"
                      "VMST_TRACE;@a.lua:0;@a.lua:4;TRACE [1] @a.lua:5 3\n");
  free(s);
  /* the same stack bytes in two states, back to back */
  ljp_writer *w = x1_begin();
  ljp_frame lua[] = {LF(P_MAIN, 0)};
  sample_x1(w, LJP_VMST_LFUNC, 1, 1, 0, lua, N(lua), NULL, 0);
  sample_x1(w, LJP_VMST_GC, 1, 1, 0, lua, N(lua), NULL, 0);
  sample_x1(w, LJP_VMST_LFUNC, 2, 2, 0, lua, N(lua), NULL, 0);
  s = fold_writer(w, LJP_VIEW_LUA, LJP_VMSTATE_LEAF);
  ck_assert_str_eq(s, "@a.lua:0;VMST_GC 1\n"
                      "@a.lua:0;VMST_LFUNC 2\n");
  free(s);
}
END_TEST

/* A coroutine's trace: its Lua stack after the innermost thread entry. */
START_TEST(x1_coroutine_trace) {
  ljp_writer *w = x1_begin();
  ljp_frame lua[] = {LF(P_CO, 20)};
  uint64_t host[] = {A_MAIN, A_PCALL, A_WRAP};
  sample_x1(w, LJP_VMST_TRACE, 1, 2, 1, lua, N(lua), host, N(host));
  char *s = fold_writer(w, LJP_VIEW_MERGED, 0);
  ck_assert_str_eq(s, "main;lua_pcall;lj_ff_coroutine_wrap_aux;@b.lua:20;"
                      "TRACE [1] @a.lua:5 1\n");
  free(s);
}
END_TEST

int main(int argc, char **argv) {
  if (argc > 1)
    testdata = argv[1];
  Suite *s = suite_create("fold");
  TCase *tc = tcase_create("merge");
  tcase_add_test(tc, reference_spec_example);
  tcase_add_test(tc, merged_spec_example);
  tcase_add_test(tc, lua_and_host_views);
  tcase_add_test(tc, vmstate_root_and_leaf);
  tcase_add_test(tc, merged_sandwich);
  tcase_add_test(tc, merged_cli_cpcall);
  tcase_add_test(tc, merged_coroutine);
  tcase_add_test(tc, merged_degrades);
  tcase_add_test(tc, merged_pcall_is_not_a_boundary);
  tcase_add_test(tc, merged_boundary_placement);
  tcase_add_test(tc, names_follow_redefinitions);
  tcase_add_test(tc, memprof_weights);
  tcase_add_test(tc, memprof_live_churn);
  tcase_add_test(tc, x1_merged);
  tcase_add_test(tc, x1_lua_view);
  tcase_add_test(tc, x1_vmstate_frames);
  tcase_add_test(tc, x1_coroutine_trace);
  suite_add_tcase(s, tc);
  TCase *tc2 = tcase_create("captures");
  tcase_set_timeout(tc2, 120);
  tcase_add_test(tc2, captures_reference_fold);
  tcase_add_test(tc2, captures_every_view_keeps_every_sample);
  tcase_add_test(tc2, captures_memprof_bytes);
  suite_add_tcase(s, tc2);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
