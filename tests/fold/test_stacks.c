/*
 * test_stacks.c — stacks that are never upside down, traces under their
 * functions, and coroutine and C boundaries on stripped programs.
 *
 * Each case is a hand-built stream whose folded text before these rules
 * is noted beside the assertion: it shows what the rule fixes.
 */
#include "ljp.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

enum {
  A_START = 0x1000, A_LIBC = 0x1100, A_MAIN = 0x1200, A_CPCALL = 0x1300,
  A_VM = 0x1400, A_DOCALL = 0x1500, A_PCALL = 0x1600, A_CALL = 0x1700,
  A_MYC = 0x1800, A_SIN = 0x1900, A_PMAIN = 0x1a00, A_TRACE1 = 0x1b00,
  A_TRACE7 = 0x1c00, A_PC = 0x1d00,
  P_MAIN = 0x5000, P_F = 0x5100, P_CMP = 0x5200, P_CO = 0x5300
};

/* The symbol table of a stripped stock luajit as ljp's capture core names
 * it: lua_* API exported, the interpreter one frame, the rest object+off. */
static void symtab(ljp_writer *w) {
  ck_assert_int_eq(ljp_write_symtab_begin(w, 3, 0), LJP_OK);
  ljp_write_symtab_lfunc(w, P_MAIN, "@a.lua", 6, 0);
  ljp_write_symtab_lfunc(w, P_F, "@a.lua", 6, 4);
  ljp_write_symtab_lfunc(w, P_CMP, "@a.lua", 6, 10);
  ljp_write_symtab_lfunc(w, P_CO, "@b.lua", 6, 20);
  static const struct { uint64_t a; const char *n; } cs[] = {
      {A_START, "_start"}, {A_LIBC, "__libc_start_main"},
      {A_MAIN, "main"}, {A_CPCALL, "lua_cpcall"},
      {A_VM, "lj_vm_interpreter"}, {A_DOCALL, "luajit+0x886b"},
      {A_PCALL, "lua_pcall"}, {A_CALL, "lua_call"}, {A_MYC, "my_cfunc"},
      {A_SIN, "__sin_fma"}, {A_PMAIN, "luajit+0x92c0"},
      {A_TRACE1, "TRACE [1] @a.lua:5"}, {A_TRACE7, "TRACE [7] @a.lua:5"},
      {A_PC, "luajit+0xa2a6"}};
  for (size_t i = 0; i < sizeof(cs) / sizeof(cs[0]); i++)
    ljp_write_symtab_cfunc(w, cs[i].a, cs[i].n, strlen(cs[i].n));
  ljp_write_symtab_trace(w, 1, 0, P_F, 5);
  ljp_write_symtab_trace(w, 7, 0, P_F, 5);
  ck_assert_int_eq(ljp_write_symtab_end(w), LJP_OK);
}

static ljp_writer *begin_v2(void) {
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  ck_assert_ptr_nonnull(w);
  symtab(w);
  ck_assert_int_eq(
      ljp_write_stream_begin(w, LJP_KIND_SYSPROF, 2, LJP_FLAVOR_LUAJIT, 0),
      LJP_OK);
  return w;
}

static ljp_writer *begin_x1(void) {
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  ck_assert_ptr_nonnull(w);
  symtab(w);
  ck_assert_int_eq(ljp_write_stream_begin_x1(w, LJP_FLAVOR_LUAJIT,
                                             LJP_TIMER_WALL, 1000000),
                   LJP_OK);
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

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Stacks are given OUTERMOST first; streams want innermost first. */
static void flip(const ljp_frame *lua, size_t nl, const uint64_t *host,
                 size_t nh, ljp_frame *l, uint64_t *h) {
  for (size_t i = 0; i < nl; i++)
    l[i] = lua[nl - 1 - i];
  for (size_t i = 0; i < nh; i++)
    h[i] = host[nh - 1 - i] + 0x10; /* return addresses inside the symbol */
}

static void sample_v2(ljp_writer *w, int vmstate, const ljp_frame *lua,
                      size_t nl, const uint64_t *host, size_t nh) {
  ljp_frame l[32];
  uint64_t h[32];
  flip(lua, nl, host, nh, l, h);
  ck_assert_int_eq(ljp_write_sample(w, vmstate, l, nl, h, nh), LJP_OK);
}

static void sample_x1(ljp_writer *w, int vmstate, uint32_t flags,
                      uint64_t traceno, const ljp_frame *lua, size_t nl,
                      const uint64_t *host, size_t nh) {
  ljp_frame l[32];
  uint64_t h[32];
  flip(lua, nl, host, nh, l, h);
  ljp_sample_x1 s;
  memset(&s, 0, sizeof(s));
  s.vmstate = vmstate;
  s.dt_ns = 1000;
  s.coro = 1;
  s.flags = flags;
  s.traceno = traceno;
  s.trace_proto = P_F;
  s.trace_line = 4;
  s.lua = l;
  s.nlua = nl;
  s.host = h;
  s.nhost = nh;
  ck_assert_int_eq(ljp_write_sample_x1(w, &s), LJP_OK);
}

static char *fold_opts(ljp_writer *w, ljp_stack_view view,
                       ljp_trace_mode traces) {
  ck_assert_int_eq(ljp_write_stream_end(w), LJP_OK);
  size_t len;
  const uint8_t *d = ljp_writer_data(w, &len);
  ljp_fold_options o;
  memset(&o, 0, sizeof(o));
  o.view = view;
  o.flavor = LJP_FLAVOR_AUTO;
  o.traces = traces;
  ljp_reader *r = ljp_reader_new();
  ck_assert_int_eq(ljp_reader_open_memory(r, d, len), LJP_OK);
  ljp_tree *t = ljp_tree_new();
  ljp_folder *f = ljp_folder_new(t, &o);
  const ljp_event *ev;
  ljp_status st;
  while ((st = ljp_reader_next(r, &ev)) == LJP_OK)
    ck_assert_int_eq(ljp_folder_add(f, r, ev), LJP_OK);
  ck_assert_msg(st == LJP_END, "decode: %s", ljp_reader_error(r));
  strbuf b = {calloc(1, 1), 0, 1};
  ck_assert_int_eq(ljp_tree_write_folded(t, 0, sb_emit, &b), LJP_OK);
  ljp_folder_free(f);
  ljp_tree_free(t);
  ljp_reader_free(r);
  ljp_writer_free(w);
  return b.p;
}

static char *fold(ljp_writer *w, ljp_stack_view view) {
  return fold_opts(w, view, LJP_TRACES_UNDER);
}

/* ---- host stacks that miss their root ---- */

/* Only the interrupted PC and one caller: before, they were the root
 * ("luajit+0x92c0;luajit+0xa2a6;@a.lua:0;@a.lua:4"). */
START_TEST(cut_host_goes_to_the_leaf) {
  ljp_writer *w = begin_v2();
  ljp_frame lua[] = {LF(P_MAIN, 0), LF(P_F, 4)};
  uint64_t host[] = {A_PMAIN, A_PC};
  sample_v2(w, LJP_VMST_LFUNC, lua, N(lua), host, N(host));
  char *s = fold(w, LJP_VIEW_MERGED);
  ck_assert_str_eq(s, "@a.lua:0;@a.lua:4;[host stack incomplete];"
                      "luajit+0x92c0;luajit+0xa2a6 1\n");
  free(s);
}
END_TEST

/* The cut stack still shows the innermost entry: it leads to the
 * innermost Lua segment, the outer segment keeps the root (before:
 * "my_cfunc;lua_call;@a.lua:0;@a.lua:4;my_cfunc;__sin_fma;@a.lua:10"). */
START_TEST(cut_host_keeps_inner_entries) {
  ljp_writer *w = begin_v2();
  ljp_frame lua[] = {LF(P_MAIN, 0), LF(P_F, 4), CF(A_MYC), LF(P_CMP, 10)};
  uint64_t host[] = {A_MYC, A_CALL, A_SIN};
  sample_v2(w, LJP_VMST_LFUNC, lua, N(lua), host, N(host));
  char *s = fold(w, LJP_VIEW_MERGED);
  ck_assert_str_eq(s, "@a.lua:0;@a.lua:4;[host stack incomplete];my_cfunc;"
                      "lua_call;@a.lua:10;__sin_fma 1\n");
  free(s);
}
END_TEST

/* Every view: the host view puts the mark at the root, the Lua view has no
 * host frame to place, a complete stack (main reached) has no mark. */
START_TEST(cut_host_every_view) {
  ljp_frame lua[] = {LF(P_MAIN, 0), LF(P_F, 4)};
  uint64_t cut[] = {A_PMAIN, A_PC};
  uint64_t full[] = {A_MAIN, A_PCALL, A_VM};
  ljp_writer *w = begin_v2();
  sample_v2(w, LJP_VMST_LFUNC, lua, N(lua), cut, N(cut));
  sample_v2(w, LJP_VMST_LFUNC, lua, N(lua), full, N(full));
  char *s = fold(w, LJP_VIEW_HOST);
  ck_assert_str_eq(s, "[host stack incomplete];luajit+0x92c0;luajit+0xa2a6 1\n"
                      "main;lua_pcall;lj_vm_interpreter 1\n");
  free(s);
  w = begin_v2();
  sample_v2(w, LJP_VMST_LFUNC, lua, N(lua), cut, N(cut));
  s = fold(w, LJP_VIEW_LUA);
  ck_assert_str_eq(s, "@a.lua:0;@a.lua:4 1\n");
  free(s);
}
END_TEST

/* x1 samples: the flag counts even where the outermost frame looks like a
 * root; a leaf-mode capture (the PC alone, flag clear) is judged by its
 * frames, like older streams (before: "luajit+0xa2a6;@a.lua:4"). */
START_TEST(cut_host_x1_flag) {
  ljp_writer *w = begin_x1();
  ljp_frame lua[] = {LF(P_MAIN, 0), LF(P_F, 4)};
  uint64_t host[] = {A_MAIN, A_PC};
  sample_x1(w, LJP_VMST_LFUNC, LJP_SAMPLE_HOST_INCOMPLETE, 0, lua, N(lua),
            host, N(host));
  sample_x1(w, LJP_VMST_LFUNC, 0, 0, lua + 1, 1, host + 1, 1);
  char *s = fold(w, LJP_VIEW_MERGED);
  ck_assert_str_eq(s, "@a.lua:0;@a.lua:4;[host stack incomplete];main;"
                      "luajit+0xa2a6 1\n"
                      "@a.lua:4;[host stack incomplete];luajit+0xa2a6 1\n");
  free(s);
}
END_TEST

/* Leaf mode (the innermost Lua frame, the PC): the Lua frame is the root
 * even where the PC is the interpreter, an entry of the VM (before:
 * "lj_vm_interpreter;@a.lua:4" and "lj_vm_interpreter;my_cfunc"). */
START_TEST(cut_host_leaf_mode) {
  ljp_writer *w = begin_x1();
  ljp_frame l1[] = {LF(P_F, 4)}, l2[] = {CF(A_MYC)};
  uint64_t vm[] = {A_VM};
  sample_x1(w, LJP_VMST_LFUNC, 0, 0, l1, 1, vm, 1);
  sample_x1(w, LJP_VMST_CFUNC, 0, 0, l2, 1, vm, 1);
  char *s = fold(w, LJP_VIEW_MERGED);
  ck_assert_str_eq(s, "@a.lua:4;[host stack incomplete];lj_vm_interpreter 1\n"
                      "my_cfunc;[host stack incomplete];lj_vm_interpreter 1\n");
  free(s);
}
END_TEST

/* The decision for streams without flags. */
START_TEST(host_incomplete_decision) {
  ljp_writer *w = begin_v2();
  ljp_frame lua[] = {LF(P_MAIN, 0)};
  uint64_t rooted[] = {A_START, A_LIBC, A_PMAIN, A_DOCALL, A_VM};
  uint64_t libc2[] = {A_PMAIN, A_LIBC, A_DOCALL, A_VM}; /* stripped _start */
  uint64_t deep[] = {A_PMAIN, A_PMAIN, A_PMAIN, A_PMAIN, A_LIBC};
  uint64_t cut[] = {A_PMAIN, A_PC};
  sample_v2(w, LJP_VMST_LFUNC, lua, 1, rooted, N(rooted));
  sample_v2(w, LJP_VMST_LFUNC, lua, 1, libc2, N(libc2));
  sample_v2(w, LJP_VMST_LFUNC, lua, 1, deep, N(deep));
  sample_v2(w, LJP_VMST_LFUNC, lua, 1, cut, N(cut));
  sample_v2(w, LJP_VMST_LFUNC, lua, 1, NULL, 0);
  ck_assert_int_eq(ljp_write_stream_end(w), LJP_OK);
  size_t len;
  const uint8_t *d = ljp_writer_data(w, &len);
  ljp_reader *r = ljp_reader_new();
  ck_assert_int_eq(ljp_reader_open_memory(r, d, len), LJP_OK);
  const ljp_event *ev;
  int want[] = {0, 0, 1, 1, 0}, k = 0;
  while (ljp_reader_next(r, &ev) == LJP_OK)
    if (ev->type == LJP_EV_SAMPLE) {
      ck_assert_int_lt(k, 5);
      ck_assert_int_eq(ljp_sample_host_incomplete(&ev->u.sample), want[k]);
      k++;
    }
  ck_assert_int_eq(k, 5);
  ljp_reader_free(r);
  ljp_writer_free(w);
}
END_TEST

/* ---- boundaries on a stripped program ---- */

/* Stock luajit, stripped: pmain is entered by lua_cpcall, the script by
 * lua_pcall, the coroutine by coroutine.resume; each VM activation is one
 * lj_vm_interpreter frame, and the Lua stack holds the resumer's frames.
 * Before, the C function the coroutine called hung under
 * coroutine.resume, above the coroutine's own frames: "...;lua_pcall;
 * @a.lua:0;@a.lua:4;lj_vm_interpreter;lj_vm_interpreter;coroutine.resume;
 * __sin_fma;@b.lua:20;math.sqrt". */
START_TEST(stripped_coroutine) {
  ljp_frame lua[] = {CF(A_PMAIN), LF(P_MAIN, 0), LF(P_F, 4), FF(35),
                     LF(P_CO, 20), FF(41) /* math.sqrt */};
  uint64_t host[] = {A_START, A_LIBC, A_MAIN, A_CPCALL, A_VM, A_DOCALL,
                     A_PCALL, A_VM, A_VM, A_SIN};
  const char *want =
      "_start;__libc_start_main;main;lua_cpcall;lj_vm_interpreter;"
      "luajit+0x92c0;luajit+0x886b;lua_pcall;lj_vm_interpreter;@a.lua:0;"
      "@a.lua:4;coroutine.resume;lj_vm_interpreter;@b.lua:20;math.sqrt;"
      "__sin_fma 1\n";
  /* the same in ljp 2 and in x1 */
  ljp_writer *w = begin_v2();
  sample_v2(w, LJP_VMST_FFUNC, lua, N(lua), host, N(host));
  char *s = fold(w, LJP_VIEW_MERGED);
  ck_assert_str_eq(s, want);
  free(s);
  w = begin_x1();
  sample_x1(w, LJP_VMST_FFUNC, 0, 0, lua, N(lua), host, N(host));
  s = fold(w, LJP_VIEW_MERGED);
  ck_assert_str_eq(s, want);
  free(s);
}
END_TEST

/* A C function called by Lua that calls Lua back (lua_call), stripped:
 * lua_call is drawn inside the C function, never as a callee of the Lua
 * function that called the C function. */
START_TEST(stripped_lua_c_lua) {
  ljp_frame lua[] = {CF(A_PMAIN), LF(P_MAIN, 0), CF(A_MYC), LF(P_CMP, 10)};
  uint64_t host[] = {A_START, A_LIBC, A_MAIN, A_CPCALL, A_VM, A_DOCALL,
                     A_PCALL, A_VM, A_MYC, A_CALL, A_VM};
  ljp_writer *w = begin_x1();
  sample_x1(w, LJP_VMST_LFUNC, 0, 0, lua, N(lua), host, N(host));
  char *s = fold(w, LJP_VIEW_MERGED);
  ck_assert_str_eq(s, "_start;__libc_start_main;main;lua_cpcall;"
                      "lj_vm_interpreter;luajit+0x92c0;luajit+0x886b;"
                      "lua_pcall;lj_vm_interpreter;@a.lua:0;my_cfunc;"
                      "lua_call;lj_vm_interpreter;@a.lua:10 1\n");
  free(s);
}
END_TEST

/* A Lua stack cut on its outer side (x1 LUA_INCOMPLETE, caught
 * mid-update): its frames run in the innermost activation, not under
 * lua_cpcall (before: "main;lua_cpcall;lj_vm_interpreter;@a.lua:10;
 * luajit+0x886b;lua_pcall;...;my_cfunc;lj_vm_interpreter"). */
START_TEST(cut_lua_stack) {
  ljp_frame lua[] = {LF(P_CMP, 10)};
  uint64_t host[] = {A_START, A_LIBC, A_MAIN, A_CPCALL, A_VM, A_DOCALL,
                     A_PCALL, A_VM, A_MYC, A_VM};
  ljp_writer *w = begin_x1();
  sample_x1(w, LJP_VMST_LFUNC, LJP_SAMPLE_LUA_INCOMPLETE, 0, lua, N(lua),
            host, N(host));
  char *s = fold(w, LJP_VIEW_MERGED);
  ck_assert_str_eq(s, "_start;__libc_start_main;main;lua_cpcall;"
                      "lj_vm_interpreter;luajit+0x886b;lua_pcall;"
                      "lj_vm_interpreter;my_cfunc;lj_vm_interpreter;"
                      "@a.lua:10 1\n");
  free(s);
}
END_TEST

/* ---- traces ---- */

START_TEST(traces_ljp2_modes) {
  ljp_writer *w = begin_v2();
  ck_assert_int_eq(ljp_write_trace_sample(w, 1, P_F, 4), LJP_OK);
  char *s = fold_opts(w, LJP_VIEW_MERGED, LJP_TRACES_UNDER);
  ck_assert_str_eq(s, "@a.lua:4;TRACE [1] @a.lua:5 1\n");
  free(s);
  w = begin_v2();
  ck_assert_int_eq(ljp_write_trace_sample(w, 1, P_F, 4), LJP_OK);
  s = fold_opts(w, LJP_VIEW_MERGED, LJP_TRACES_FUNCTION);
  ck_assert_str_eq(s, "@a.lua:4 1\n");
  free(s);
  w = begin_v2();
  ck_assert_int_eq(ljp_write_trace_sample(w, 1, P_F, 4), LJP_OK);
  s = fold_opts(w, LJP_VIEW_MERGED, LJP_TRACES_TRACE);
  ck_assert_str_eq(s, "TRACE [1] @a.lua:5 1\n");
  free(s);
}
END_TEST

/* x1: the trace stands where its machine code is in the host stack, the
 * C function it called above it (before: the code frame, the C function,
 * then the trace on top of both). */
START_TEST(traces_x1_in_place) {
  ljp_frame lua[] = {LF(P_MAIN, 0), LF(P_F, 4)};
  uint64_t host[] = {A_MAIN, A_PCALL, A_VM, A_TRACE1, A_SIN};
  ljp_writer *w = begin_x1();
  sample_x1(w, LJP_VMST_TRACE, 0, 1, lua, N(lua), host, N(host));
  char *s = fold_opts(w, LJP_VIEW_MERGED, LJP_TRACES_UNDER);
  ck_assert_str_eq(s, "main;lua_pcall;lj_vm_interpreter;@a.lua:0;@a.lua:4;"
                      "TRACE [1] @a.lua:5;__sin_fma 1\n");
  free(s);
  w = begin_x1();
  sample_x1(w, LJP_VMST_TRACE, 0, 1, lua, N(lua), host, N(host));
  s = fold_opts(w, LJP_VIEW_MERGED, LJP_TRACES_FUNCTION);
  ck_assert_str_eq(s, "main;lua_pcall;lj_vm_interpreter;@a.lua:0;@a.lua:4;"
                      "__sin_fma 1\n");
  free(s);
  /* the VM state may lag behind the code: a FFUNC sample whose PC is in
   * a trace loses the trace's frame too */
  w = begin_x1();
  ljp_frame lff[] = {LF(P_MAIN, 0), LF(P_F, 4), FF(41)};
  sample_x1(w, LJP_VMST_FFUNC, 0, 0, lff, N(lff), host, N(host) - 1);
  s = fold_opts(w, LJP_VIEW_MERGED, LJP_TRACES_FUNCTION);
  ck_assert_str_eq(s, "main;lua_pcall;lj_vm_interpreter;@a.lua:0;@a.lua:4;"
                      "math.sqrt 1\n");
  free(s);
  w = begin_x1();
  sample_x1(w, LJP_VMST_TRACE, 0, 1, lua, N(lua), host, N(host));
  s = fold_opts(w, LJP_VIEW_LUA, LJP_TRACES_UNDER);
  ck_assert_str_eq(s, "@a.lua:0;@a.lua:4;TRACE [1] @a.lua:5 1\n");
  free(s);
}
END_TEST

/* Two runs of the same code whose traces got different numbers: folded
 * into their functions they are the same profile, so a diff shows no
 * change (with traces kept, every trace row would differ). */
START_TEST(traces_stable_across_runs) {
  ljp_frame lua[] = {LF(P_MAIN, 0), LF(P_F, 4)};
  uint64_t h1[] = {A_MAIN, A_PCALL, A_VM, A_TRACE1, A_SIN};
  uint64_t h7[] = {A_MAIN, A_PCALL, A_VM, A_TRACE7, A_SIN};
  char *run[2][2];
  for (int m = 0; m < 2; m++) {
    ljp_trace_mode mode = m ? LJP_TRACES_FUNCTION : LJP_TRACES_UNDER;
    ljp_writer *a = begin_v2(), *b = begin_v2();
    ck_assert_int_eq(ljp_write_trace_sample(a, 1, P_F, 4), LJP_OK);
    ck_assert_int_eq(ljp_write_trace_sample(b, 7, P_F, 4), LJP_OK);
    char *va = fold_opts(a, LJP_VIEW_MERGED, mode);
    char *vb = fold_opts(b, LJP_VIEW_MERGED, mode);
    ljp_writer *xa = begin_x1(), *xb = begin_x1();
    sample_x1(xa, LJP_VMST_TRACE, 0, 1, lua, N(lua), h1, N(h1));
    sample_x1(xb, LJP_VMST_TRACE, 0, 7, lua, N(lua), h7, N(h7));
    run[m][0] = fold_opts(xa, LJP_VIEW_MERGED, mode);
    run[m][1] = fold_opts(xb, LJP_VIEW_MERGED, mode);
    if (m) {
      ck_assert_str_eq(va, vb);
      ck_assert_str_eq(run[m][0], run[m][1]);
    } else {
      ck_assert_str_ne(va, vb);
      ck_assert_str_ne(run[m][0], run[m][1]);
    }
    free(va);
    free(vb);
  }
  for (int m = 0; m < 2; m++)
    free(run[m][0]), free(run[m][1]);
}
END_TEST

/* ljp_sample_stack_ex reports the same count whatever the capacity,
 * including the trace replaced or removed in place. */
START_TEST(stack_count_independent_of_cap) {
  ljp_frame lua[] = {LF(P_MAIN, 0), LF(P_F, 4)};
  uint64_t host[] = {A_PMAIN, A_VM, A_TRACE1, A_SIN};
  ljp_writer *w = begin_x1();
  sample_x1(w, LJP_VMST_TRACE, LJP_SAMPLE_HOST_INCOMPLETE, 1, lua, N(lua),
            host, N(host));
  ck_assert_int_eq(ljp_write_stream_end(w), LJP_OK);
  size_t len;
  const uint8_t *d = ljp_writer_data(w, &len);
  ljp_reader *r = ljp_reader_new();
  ck_assert_int_eq(ljp_reader_open_memory(r, d, len), LJP_OK);
  const ljp_event *ev;
  while (ljp_reader_next(r, &ev) == LJP_OK) {
    if (ev->type != LJP_EV_SAMPLE)
      continue;
    for (int v = 0; v < 4; v++)
      for (int m = 0; m < 3; m++) {
        ljp_stack_options o = {(ljp_stack_view)v, (ljp_trace_mode)m};
        ljp_frame big[64];
        size_t n = ljp_sample_stack_ex(&ev->u.sample, &o, big, 64);
        for (size_t cap = 0; cap <= n; cap++) {
          ljp_frame small[64];
          ck_assert_uint_eq(ljp_sample_stack_ex(&ev->u.sample, &o, small,
                                                cap), n);
          for (size_t i = 0; i < cap; i++)
            ck_assert_int_eq(small[i].kind, big[i].kind);
        }
      }
  }
  ljp_reader_free(r);
  ljp_writer_free(w);
}
END_TEST

/* Random stacks from the symbols above, every view and trace mode, with
 * and without flags: the count does not depend on the capacity, the Lua
 * frames appear exactly once and in order in the merged view, and the host
 * frames that appear keep their order. */
START_TEST(random_stacks_keep_every_lua_frame) {
  static const uint64_t hs[] = {A_START, A_LIBC, A_MAIN, A_CPCALL, A_VM,
                                A_DOCALL, A_PCALL, A_CALL, A_MYC, A_SIN,
                                A_PMAIN, A_TRACE1, A_PC};
  uint64_t seed = 12345;
#define RND(n) ((seed = seed * 6364136223846793005u + 1442695040888963407u), \
                (size_t)((seed >> 33) % (n)))
  ljp_writer *w = begin_x1();
  for (int k = 0; k < 3000; k++) {
    ljp_frame lua[12];
    uint64_t host[16];
    size_t nl = RND(8), nh = RND(14);
    for (size_t i = 0; i < nl; i++) {
      size_t c = RND(6);
      lua[i] = c < 3   ? LF(c == 0 ? P_MAIN : c == 1 ? P_F : P_CO, 4)
               : c == 3 ? CF(c & 1 ? A_MYC : A_PMAIN)
               : c == 4 ? FF(35)
                        : FF(RND(2) ? 41 : 20);
    }
    for (size_t i = 0; i < nh; i++)
      host[i] = hs[RND(sizeof(hs) / sizeof(hs[0]))];
    uint32_t flags = (uint32_t)RND(4);
    int vm = RND(5) == 0 ? LJP_VMST_TRACE : LJP_VMST_LFUNC;
    sample_x1(w, vm, flags, vm == LJP_VMST_TRACE ? 1 : 0, lua, nl, host, nh);
  }
  ck_assert_int_eq(ljp_write_stream_end(w), LJP_OK);
  size_t len;
  const uint8_t *d = ljp_writer_data(w, &len);
  ljp_reader *r = ljp_reader_new();
  ck_assert_int_eq(ljp_reader_open_memory(r, d, len), LJP_OK);
  const ljp_event *ev;
  size_t samples = 0;
  while (ljp_reader_next(r, &ev) == LJP_OK) {
    if (ev->type != LJP_EV_SAMPLE)
      continue;
    const ljp_sample *sm = &ev->u.sample;
    samples++;
    for (int v = 0; v < 4; v++)
      for (int m = 0; m < 3; m++) {
        ljp_stack_options o = {(ljp_stack_view)v, (ljp_trace_mode)m};
        ljp_frame big[64];
        size_t n = ljp_sample_stack_ex(sm, &o, big, 64);
        ck_assert_uint_le(n, 64);
        size_t cap = RND(n + 1);
        ljp_frame small[64];
        ck_assert_uint_eq(ljp_sample_stack_ex(sm, &o, small, cap), n);
        for (size_t i = 0; i < cap; i++)
          ck_assert(small[i].kind == big[i].kind &&
                    small[i].value == big[i].value);
        if (v != LJP_VIEW_MERGED)
          continue;
        size_t li = sm->lua_count, hi = sm->host_count;
        for (size_t i = 0; i < n; i++) {
          const ljp_frame *f = &big[i];
          if (f->kind == LJP_FRAME_MARK || f->kind == LJP_FRAME_TRACE)
            continue;
          if (f->kind == LJP_FRAME_HOST) {
            while (hi > 0 && sm->host[hi - 1].value != f->value)
              hi--;
            ck_assert_msg(hi > 0, "host frame out of order");
            hi--;
            continue;
          }
          ck_assert_msg(li > 0, "extra Lua frame");
          li--;
          ck_assert(sm->lua[li].kind == f->kind &&
                    sm->lua[li].value == f->value);
        }
        ck_assert_msg(li == 0, "a Lua frame was lost");
      }
  }
  ck_assert_uint_eq(samples, 3000);
  ljp_reader_free(r);
  ljp_writer_free(w);
#undef RND
}
END_TEST

int main(void) {
  Suite *s = suite_create("stacks");
  TCase *tc = tcase_create("stacks");
  tcase_add_test(tc, cut_host_goes_to_the_leaf);
  tcase_add_test(tc, cut_host_keeps_inner_entries);
  tcase_add_test(tc, cut_host_every_view);
  tcase_add_test(tc, cut_host_x1_flag);
  tcase_add_test(tc, cut_host_leaf_mode);
  tcase_add_test(tc, host_incomplete_decision);
  tcase_add_test(tc, stripped_coroutine);
  tcase_add_test(tc, stripped_lua_c_lua);
  tcase_add_test(tc, cut_lua_stack);
  tcase_add_test(tc, traces_ljp2_modes);
  tcase_add_test(tc, traces_x1_in_place);
  tcase_add_test(tc, traces_stable_across_runs);
  tcase_add_test(tc, stack_count_independent_of_cap);
  tcase_add_test(tc, random_stacks_keep_every_lua_frame);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
