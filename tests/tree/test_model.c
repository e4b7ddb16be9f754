/* Unit tests of the profile model: what ljp_folder_add_ex reports for each
 * event (on first sight and through every memo), frame attributes of
 * frames folded from a stream, line-keyed frames and the function rollup.
 * Streams are built with the encoder. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ljp.h"
#include "ljp_testing.h"

enum {
  A_MAIN = 0x1000, A_PCALL = 0x1100, A_VMPCALL = 0x1200, A_FUNCC = 0x1300,
  A_MYC = 0x1400, A_GC = 0x1600, A_WORK = 0x1700,
  P_MAIN = 0x5000, P_F = 0x5100, P_G = 0x5200, P_X = 0x5300
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static ljp_frame LF(uint64_t proto, uint64_t line)
{
  ljp_frame f = {LJP_FRAME_LUA, proto, line, NULL, NULL, 0};
  return f;
}

static ljp_frame CF(uint64_t addr)
{
  ljp_frame f = {LJP_FRAME_CFUNC, addr, 0, NULL, NULL, 0};
  return f;
}

static ljp_frame FF(uint64_t ffid)
{
  ljp_frame f = {LJP_FRAME_FFUNC, ffid, 0, NULL, NULL, 0};
  return f;
}

static void symtab(ljp_writer *w)
{
  ck_assert_int_eq(ljp_write_symtab_begin(w, 3, 0), LJP_OK);
  ljp_write_symtab_lfunc(w, P_MAIN, "@a.lua", 6, 0);
  ljp_write_symtab_lfunc(w, P_F, "@a.lua", 6, 4);
  ljp_write_symtab_lfunc(w, P_G, "@b.lua", 6, 20);
  static const struct { uint64_t a; const char *n; } cs[] = {
      {A_MAIN, "main"}, {A_PCALL, "lua_pcall"}, {A_VMPCALL, "lj_vm_pcall"},
      {A_FUNCC, "lj_BC_FUNCC"}, {A_MYC, "my_cfunc"}, {A_GC, "lj_gc_step"},
      {A_WORK, "work_loop"}};
  for (size_t i = 0; i < N(cs); i++)
    ljp_write_symtab_cfunc(w, cs[i].a, cs[i].n, strlen(cs[i].n));
  ljp_write_symtab_trace(w, 1, 0, P_F, 5);
  ck_assert_int_eq(ljp_write_symtab_end(w), LJP_OK);
}

static ljp_writer *sysprof_begin(void)
{
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  ck_assert_ptr_nonnull(w);
  symtab(w);
  ck_assert_int_eq(ljp_write_stream_begin(w, LJP_KIND_SYSPROF, 2, 0, 0),
                   LJP_OK);
  return w;
}

/* A sample with stacks OUTERMOST first; host addresses get off added (a
 * return address inside the symbol). */
static void sample(ljp_writer *w, int vmstate, const ljp_frame *lua,
                   size_t nl, const uint64_t *host, size_t nh, uint64_t off)
{
  ljp_frame l[16];
  uint64_t h[64];
  for (size_t i = 0; i < nl; i++)
    l[i] = lua[nl - 1 - i];
  for (size_t i = 0; i < nh; i++)
    h[i] = host[nh - 1 - i] + off;
  ck_assert_int_eq(ljp_write_sample(w, vmstate, l, nl, h, nh), LJP_OK);
}

static void sample_x1(ljp_writer *w, int vmstate, uint64_t dt, uint64_t coro,
                      uint32_t flags, const ljp_frame *lua, size_t nl,
                      const uint64_t *host, size_t nh)
{
  ljp_frame l[16];
  uint64_t h[16];
  ljp_sample_x1 s;
  for (size_t i = 0; i < nl; i++)
    l[i] = lua[nl - 1 - i];
  for (size_t i = 0; i < nh; i++)
    h[i] = host[nh - 1 - i] + 0x10;
  memset(&s, 0, sizeof(s));
  s.vmstate = vmstate;
  s.dt_ns = dt;
  s.coro = coro;
  s.flags = flags;
  s.traceno = 1;
  s.trace_proto = P_F;
  s.trace_line = 4;
  s.lua = l;
  s.nlua = nl;
  s.host = h;
  s.nhost = nh;
  ck_assert_int_eq(ljp_write_sample_x1(w, &s), LJP_OK);
}

/* The stack text of node n ("a;b;c"), in a static buffer. */
static const char *path_of(const ljp_tree *t, uint32_t n)
{
  static char buf[1024];
  const char *parts[64];
  size_t lens[64], k = 0, o = 0;
  for (; n && k < 64; n = ljp_tree_node_parent(t, n), k++)
    parts[k] = ljp_tree_frame_name(t, ljp_tree_node_frame(t, n), &lens[k]);
  while (k--) {
    memcpy(buf + o, parts[k], lens[k]);
    o += lens[k];
    if (k)
      buf[o++] = ';';
  }
  buf[o] = '\0';
  return buf;
}

/* Every sample folded into a fresh tree, checking each event against
 * ground truth taken from the tree itself: exactly the node reported as
 * leaf changed, by exactly the weight reported.  Returns the reports of
 * the samples and memory events, in order. */
typedef struct folded {
  ljp_tree *t;
  ljp_fold_sample rep[64];
  size_t n;
} folded;

static void fold_checked(ljp_writer *w, const ljp_fold_options *o,
                         ljp_srcnames *src, folded *out)
{
  ck_assert_int_eq(ljp_write_stream_end(w), LJP_OK);
  size_t len;
  const uint8_t *d = ljp_writer_data(w, &len);
  ljp_reader *r = ljp_reader_new();
  ck_assert_int_eq(ljp_reader_open_memory(r, d, len), LJP_OK);
  ljp_fold_options opt;
  memset(&opt, 0, sizeof(opt));
  if (o)
    opt = *o;
  opt.sources = src;
  out->t = ljp_tree_new();
  out->n = 0;
  ljp_folder *f = ljp_folder_new(out->t, &opt);
  const ljp_event *ev;
  ljp_status st;
  int64_t before[256];
  while ((st = ljp_reader_next(r, &ev)) == LJP_OK) {
    uint32_t nn = ljp_tree_node_count(out->t);
    ck_assert_uint_lt(nn, 256);
    for (uint32_t i = 0; i < nn; i++)
      before[i] = ljp_tree_node_self(out->t, i);
    ljp_fold_sample s;
    memset(&s, 0x5a, sizeof(s));
    ck_assert_int_eq(ljp_folder_add_ex(f, r, ev, &s), LJP_OK);
    uint32_t after = ljp_tree_node_count(out->t);
    /* a realloc of live bytes also takes its old block back, from the
     * old block's stack: the one other change allowed */
    int takeback = ev->type == LJP_EV_MEMORY &&
                   ev->u.mem.kind == LJP_MEM_REALLOC &&
                   opt.weight == LJP_WEIGHT_LIVE;
    for (uint32_t i = 0; i < after; i++) {
      int64_t was = i < nn ? before[i] : 0;
      int64_t want = was + (i == s.leaf ? s.weight : 0);
      if (takeback && i != s.leaf && i < nn &&
          ljp_tree_node_self(out->t, i) - was ==
              -(int64_t)ev->u.mem.old_size) {
        takeback = 0;
        continue;
      }
      ck_assert_msg(ljp_tree_node_self(out->t, i) == want,
                    "event at %llu: node %u self %lld, want %lld (leaf %u)",
                    (unsigned long long)ev->offset, i,
                    (long long)ljp_tree_node_self(out->t, i),
                    (long long)want, s.leaf);
    }
    if (ev->type == LJP_EV_SAMPLE || ev->type == LJP_EV_MEMORY) {
      ck_assert_uint_lt(out->n, N(out->rep));
      out->rep[out->n++] = s;
    } else {
      ck_assert_uint_eq(s.leaf, 0);
      ck_assert_int_eq(s.weight, 0);
      ck_assert_int_eq(s.vmstate, -1);
    }
  }
  ck_assert_int_eq(st, LJP_END);
  ljp_folder_free(f);
  ljp_reader_free(r);
  ljp_writer_free(w);
}

/* ---- where the weight went, on every path through the memos ---- */

/* The reader hands out stack tokens for records it memoises, which are
 * those of 64 bytes or more: DEEP frames of work_loop make them long. */
#define DEEP 30

/* host[] with DEEP work_loop frames after main; returns the count. */
static size_t deep_host(uint64_t *out, const uint64_t *host, size_t n)
{
  size_t k = 0;
  out[k++] = host[0];
  for (int i = 0; i < DEEP; i++)
    out[k++] = A_WORK;
  for (size_t i = 1; i < n; i++)
    out[k++] = host[i];
  return k;
}

/* "main;work_loop;...;work_loop" followed by rest. */
static const char *deep_path(const char *rest)
{
  static char buf[1024];
  size_t o = (size_t)snprintf(buf, sizeof(buf), "main");
  for (int i = 0; i < DEEP; i++)
    o += (size_t)snprintf(buf + o, sizeof(buf) - o, ";work_loop");
  snprintf(buf + o, sizeof(buf) - o, "%s", rest);
  return buf;
}

START_TEST(leaf_on_first_sight_and_memo_hits)
{
  ljp_writer *w = sysprof_begin();
  ljp_frame lua[] = {LF(P_MAIN, 0), LF(P_F, 4)};
  uint64_t h1[] = {A_MAIN, A_PCALL, A_VMPCALL}, host[64];
  size_t nh = deep_host(host, h1, N(h1));
  ljp_frame lua2[] = {LF(P_MAIN, 0), LF(P_F, 4), CF(A_MYC)};
  uint64_t h2[] = {A_MAIN, A_PCALL, A_VMPCALL, A_FUNCC, A_MYC}, host2[64];
  size_t nh2 = deep_host(host2, h2, N(h2));
  sample(w, LJP_VMST_LFUNC, lua, 2, host, nh, 0x10);    /* 0: first sight */
  sample(w, LJP_VMST_CFUNC, lua2, 3, host2, nh2, 0x10); /* 1: first sight */
  /* the same bytes: the stack-token memo */
  sample(w, LJP_VMST_LFUNC, lua, 2, host, nh, 0x10);    /* 2 */
  /* other return addresses in the same functions: the frame-id memo */
  sample(w, LJP_VMST_LFUNC, lua, 2, host, nh, 0x20);    /* 3 */
  sample(w, LJP_VMST_CFUNC, lua2, 3, host2, nh2, 0x30); /* 4 */
  /* trace samples skip the stack-token memo: the record-bytes memo */
  ck_assert_int_eq(ljp_write_trace_sample(w, 1, P_F, 4), LJP_OK); /* 5 */
  ck_assert_int_eq(ljp_write_trace_sample(w, 1, P_F, 4), LJP_OK); /* 6 */
  /* short records get no token: the record-bytes memo too */
  sample(w, LJP_VMST_GC, NULL, 0, h1, N(h1), 0x10);     /* 7 */
  sample(w, LJP_VMST_LFUNC, lua, 2, host, nh, 0x10);    /* 8: token */
  sample(w, LJP_VMST_GC, NULL, 0, h1, N(h1), 0x10);     /* 9 */
  /* a new symbol moves the epoch: the bytes memo misses, the token
   * (the reader knows these stacks still resolve the same) hits */
  ck_assert_int_eq(ljp_write_event_lfunc(w, P_X, "@c.lua", 6, 1), LJP_OK);
  sample(w, LJP_VMST_LFUNC, lua, 2, host, nh, 0x10);    /* 10 */
  sample(w, LJP_VMST_CFUNC, lua2, 3, host2, nh2, 0x10); /* 11 */
  ck_assert_int_eq(ljp_write_trace_sample(w, 1, P_F, 4), LJP_OK); /* 12 */
  folded r;
  fold_checked(w, NULL, NULL, &r);
  ck_assert_uint_eq(r.n, 13);
  char a[1024], b[1024];
  snprintf(a, sizeof(a), "%s", deep_path(";lua_pcall;lj_vm_pcall;"
                                         "@a.lua:0;@a.lua:4"));
  snprintf(b, sizeof(b), "%s", deep_path(";lua_pcall;lj_vm_pcall;"
                                         "@a.lua:0;@a.lua:4;lj_BC_FUNCC;"
                                         "my_cfunc"));
  const char *tr = "@a.lua:4;TRACE [1] @a.lua:5";
  const char *gc = "main;lua_pcall;lj_vm_pcall";
  const char *want[] = {a, b, a, a, b, tr, tr, gc, a, gc, a, b, tr};
  for (size_t i = 0; i < r.n; i++) {
    ck_assert_msg(r.rep[i].leaf != 0, "sample %zu: no leaf", i);
    ck_assert_str_eq(path_of(r.t, r.rep[i].leaf), want[i]);
    ck_assert_int_eq(r.rep[i].weight, 1);
    ck_assert_int_eq(r.rep[i].has_time, 0);
    ck_assert_uint_eq(r.rep[i].time_ns, 0);
  }
  ck_assert_int_eq(r.rep[0].vmstate, LJP_VMST_LFUNC);
  ck_assert_int_eq(r.rep[4].vmstate, LJP_VMST_CFUNC);
  ck_assert_int_eq(r.rep[6].vmstate, LJP_VMST_TRACE);
  ck_assert_int_eq(r.rep[9].vmstate, LJP_VMST_GC);
  ljp_tree_free(r.t);
}
END_TEST

/* Short records get no stack token, so repeats fold through the memo of
 * record bytes, which outlives definitions that cannot change a stack's
 * names (a new trace) but not those that can: a C symbol, a prototype or
 * the sampled trace redefined mid-stream must give the same bytes their
 * new names. */
START_TEST(record_memo_after_redefinition)
{
  ljp_writer *w = sysprof_begin();
  ljp_frame lua[] = {LF(P_MAIN, 0), LF(P_F, 4)};
  uint64_t h1[] = {A_MAIN, A_PCALL, A_VMPCALL};
  sample(w, LJP_VMST_LFUNC, lua, 2, h1, N(h1), 0x10);             /* 0 */
  sample(w, LJP_VMST_LFUNC, lua, 2, h1, N(h1), 0x10);             /* 1 */
  ck_assert_int_eq(ljp_write_event_cfunc(w, A_PCALL, "pcall2", 6), LJP_OK);
  sample(w, LJP_VMST_LFUNC, lua, 2, h1, N(h1), 0x10);             /* 2 */
  ck_assert_int_eq(ljp_write_event_lfunc(w, P_F, "@z.lua", 6, 9), LJP_OK);
  sample(w, LJP_VMST_LFUNC, lua, 2, h1, N(h1), 0x10);             /* 3 */
  /* a trace of its own: these bytes stay memoised, and still right */
  ck_assert_int_eq(ljp_write_event_trace(w, 7, P_G, 21), LJP_OK);
  sample(w, LJP_VMST_LFUNC, lua, 2, h1, N(h1), 0x10);             /* 4 */
  ck_assert_int_eq(ljp_write_trace_sample(w, 1, P_F, 4), LJP_OK); /* 5 */
  ck_assert_int_eq(ljp_write_event_trace(w, 1, P_G, 21), LJP_OK);
  ck_assert_int_eq(ljp_write_trace_sample(w, 1, P_F, 4), LJP_OK); /* 6 */
  folded r;
  fold_checked(w, NULL, NULL, &r);
  ck_assert_uint_eq(r.n, 7);
  const char *a = "main;lua_pcall;lj_vm_pcall;@a.lua:0;@a.lua:4";
  ck_assert_str_eq(path_of(r.t, r.rep[0].leaf), a);
  ck_assert_uint_eq(r.rep[1].leaf, r.rep[0].leaf);
  ck_assert_str_eq(path_of(r.t, r.rep[2].leaf),
                   "main;pcall2;lj_vm_pcall;@a.lua:0;@a.lua:4");
  const char *z = "main;pcall2;lj_vm_pcall;@a.lua:0;@z.lua:4";
  ck_assert_str_eq(path_of(r.t, r.rep[3].leaf), z);
  ck_assert_str_eq(path_of(r.t, r.rep[4].leaf), z);
  char t5[256];
  snprintf(t5, sizeof(t5), "%s", path_of(r.t, r.rep[5].leaf));
  const char *t6 = path_of(r.t, r.rep[6].leaf);
  ck_assert_msg(strstr(t5, "TRACE [1] @z.lua:5") != NULL, "before: %s", t5);
  ck_assert_msg(strstr(t6, "TRACE [1] @b.lua:21") != NULL, "after: %s", t6);
  ljp_tree_free(r.t);
}
END_TEST

/* x1: the memos skip time, coroutine and flags, the report must not. */
START_TEST(x1_metadata_on_memo_hits)
{
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  symtab(w);
  ck_assert_int_eq(ljp_write_stream_begin_x1(w, LJP_FLAVOR_TARANTOOL,
                                             LJP_TIMER_WALL, 1000),
                   LJP_OK);
  ljp_frame lua[] = {LF(P_MAIN, 0), LF(P_F, 4)};
  uint64_t host[] = {A_MAIN, A_PCALL, A_VMPCALL};
  sample_x1(w, LJP_VMST_LFUNC, 100, 1, 0, lua, 2, host, 3);
  sample_x1(w, LJP_VMST_LFUNC, 50, 2, 0, lua, 2, host, 3);
  sample_x1(w, LJP_VMST_LFUNC, 7, 3, LJP_SAMPLE_LUA_INCOMPLETE, lua, 2,
            host, 3);
  sample_x1(w, LJP_VMST_TRACE, 1, 2, 0, lua, 2, host, 3);
  sample_x1(w, LJP_VMST_TRACE, 2, 5, 0, lua, 2, host, 3);
  sample_x1(w, LJP_VMST_LFUNC, 3, 4, 0, lua, 2, host, 3);
  folded r;
  fold_checked(w, NULL, NULL, &r);
  ck_assert_uint_eq(r.n, 6);
  static const uint64_t t[] = {100, 150, 157, 158, 160, 163};
  static const uint64_t co[] = {1, 2, 3, 2, 5, 4};
  for (size_t i = 0; i < r.n; i++) {
    ck_assert_int_eq(r.rep[i].has_time, 1);
    ck_assert_uint_eq(r.rep[i].time_ns, t[i]);
    ck_assert_uint_eq(r.rep[i].coro, co[i]);
    ck_assert_int_eq(r.rep[i].weight, 1);
  }
  ck_assert_uint_eq(r.rep[2].flags, LJP_SAMPLE_LUA_INCOMPLETE);
  ck_assert_uint_eq(r.rep[1].flags, 0);
  ck_assert_uint_eq(r.rep[1].leaf, r.rep[0].leaf);
  ck_assert_uint_eq(r.rep[5].leaf, r.rep[0].leaf);
  ck_assert_uint_eq(r.rep[4].leaf, r.rep[3].leaf);
  ck_assert_uint_ne(r.rep[3].leaf, r.rep[0].leaf);
  ck_assert_int_eq(r.rep[3].vmstate, LJP_VMST_TRACE);
  ck_assert_str_eq(path_of(r.t, r.rep[3].leaf),
                   "main;lua_pcall;lj_vm_pcall;@a.lua:0;@a.lua:4;"
                   "TRACE [1] @a.lua:5");
  ljp_tree_free(r.t);
}
END_TEST

/* The same stack bytes with and without an incomplete host stack fold to
 * different stacks (the flag puts a mark in), memos or not. */
START_TEST(x1_flags_change_the_stack)
{
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  symtab(w);
  ck_assert_int_eq(ljp_write_stream_begin_x1(w, LJP_FLAVOR_TARANTOOL,
                                             LJP_TIMER_WALL, 1000),
                   LJP_OK);
  ljp_frame lua[] = {LF(P_MAIN, 0)};
  uint64_t host[] = {A_MAIN, A_PCALL};
  sample_x1(w, LJP_VMST_LFUNC, 1, 1, 0, lua, 1, host, 2);
  sample_x1(w, LJP_VMST_LFUNC, 1, 1, LJP_SAMPLE_HOST_INCOMPLETE, lua, 1,
            host, 2);
  sample_x1(w, LJP_VMST_LFUNC, 1, 1, 0, lua, 1, host, 2);
  sample_x1(w, LJP_VMST_LFUNC, 1, 1, LJP_SAMPLE_HOST_INCOMPLETE, lua, 1,
            host, 2);
  folded r;
  fold_checked(w, NULL, NULL, &r);
  ck_assert_str_eq(path_of(r.t, r.rep[0].leaf), "main;lua_pcall;@a.lua:0");
  ck_assert_str_eq(path_of(r.t, r.rep[1].leaf),
                   "@a.lua:0;[host stack incomplete];main;lua_pcall");
  ck_assert_uint_eq(r.rep[2].leaf, r.rep[0].leaf);
  ck_assert_uint_eq(r.rep[3].leaf, r.rep[1].leaf);
  /* the mark is a frame of kind MARK, its value the mark */
  ljp_frame_info fi;
  uint32_t mark = ljp_tree_find_frame(r.t, "[host stack incomplete]", 23,
                                      LJP_CLASS_VM);
  ck_assert_int_eq(ljp_tree_frame_info(r.t, mark, &fi), LJP_OK);
  ck_assert_int_eq(fi.kind, LJP_FRAME_MARK);
  ck_assert_uint_eq(fi.address, LJP_MARK_HOST_INCOMPLETE);
  ljp_tree_free(r.t);
}
END_TEST

/* Memory events: the weight each one added, and where. */
START_TEST(memprof_reports)
{
  static const ljp_weight ws[] = {LJP_WEIGHT_BYTES, LJP_WEIGHT_EVENTS,
                                  LJP_WEIGHT_LIVE};
  for (size_t k = 0; k < N(ws); k++) {
    ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
    symtab(w);
    ck_assert_int_eq(ljp_write_stream_begin(w, LJP_KIND_MEMPROF, 3, 0, 1),
                     LJP_OK);
    ljp_write_mem(w, LJP_MEM_ALLOC, LJP_SRC_LFUNC, P_F, 6, 0, 0, 0, 0x100, 32);
    ljp_write_mem(w, LJP_MEM_REALLOC, LJP_SRC_CFUNC, A_MYC, 0, 0, 0x100, 32,
                  0x200, 64);
    ljp_write_mem(w, LJP_MEM_FREE, LJP_SRC_INTERNAL, 0, 0, 0, 0x200, 64, 0, 0);
    ljp_write_mem(w, LJP_MEM_ALLOC, LJP_SRC_LFUNC, P_F, 6, 0, 0, 0, 0x300, 8);
    /* a block from before the profile: nothing to take back */
    ljp_write_mem(w, LJP_MEM_FREE, LJP_SRC_INTERNAL, 0, 0, 0, 0x999, 16, 0, 0);
    ljp_fold_options o;
    memset(&o, 0, sizeof(o));
    o.weight = ws[k];
    folded r;
    fold_checked(w, &o, NULL, &r);
    ck_assert_uint_eq(r.n, 5);
    ck_assert_uint_eq(r.rep[4].leaf, 0);
    ck_assert_int_eq(r.rep[4].weight, 0);
    for (size_t i = 0; i < r.n; i++)
      ck_assert_int_eq(r.rep[i].vmstate, -1);
    ck_assert_str_eq(path_of(r.t, r.rep[0].leaf), "@a.lua;@a.lua:4;line 6");
    ck_assert_str_eq(path_of(r.t, r.rep[1].leaf), "my_cfunc");
    ck_assert_uint_eq(r.rep[3].leaf, r.rep[0].leaf);
    if (ws[k] == LJP_WEIGHT_LIVE) {
      /* the free took the realloc's block back from its stack */
      ck_assert_uint_eq(r.rep[2].leaf, r.rep[1].leaf);
      ck_assert_int_eq(r.rep[2].weight, -64);
      ck_assert_int_eq(r.rep[1].weight, 64);
    } else {
      ck_assert_uint_eq(r.rep[2].leaf, 0); /* frees add nothing */
      ck_assert_int_eq(r.rep[2].weight, 0);
      ck_assert_int_eq(r.rep[1].weight, ws[k] == LJP_WEIGHT_BYTES ? 64 : 1);
    }
    ljp_tree_free(r.t);
  }
}
END_TEST

/* memprof sites repeat through a memo of their locations: a site
 * redefined mid-stream (a prototype, trace or C symbol at an address
 * seen before) must fold to its new name, not the memo's old leaf. */
START_TEST(memprof_memo_after_redefinition)
{
  static const ljp_weight ws[] = {LJP_WEIGHT_BYTES, LJP_WEIGHT_EVENTS,
                                  LJP_WEIGHT_LIVE};
  for (size_t k = 0; k < N(ws); k++) {
    ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
    symtab(w);
    ck_assert_int_eq(ljp_write_stream_begin(w, LJP_KIND_MEMPROF, 3, 0, 0),
                     LJP_OK);
    ljp_write_mem(w, LJP_MEM_ALLOC, LJP_SRC_LFUNC, P_F, 6, 0, 0, 0, 0x100, 8);
    ljp_write_mem(w, LJP_MEM_ALLOC, LJP_SRC_LFUNC, P_F, 6, 0, 0, 0, 0x110, 16);
    ljp_write_mem(w, LJP_MEM_ALLOC, LJP_SRC_TRACE, 1, 0, 0, 0, 0, 0x120, 4);
    ljp_write_mem(w, LJP_MEM_ALLOC, LJP_SRC_CFUNC, A_MYC, 0, 0, 0, 0, 0x130, 2);
    ck_assert_int_eq(ljp_write_event_lfunc(w, P_F, "@z.lua", 6, 9), LJP_OK);
    ck_assert_int_eq(ljp_write_event_trace(w, 1, P_G, 21), LJP_OK);
    ck_assert_int_eq(ljp_write_event_cfunc(w, A_MYC, "other_c", 7), LJP_OK);
    /* 4..6: the same locations, new symbols */
    ljp_write_mem(w, LJP_MEM_ALLOC, LJP_SRC_LFUNC, P_F, 6, 0, 0, 0, 0x140, 32);
    ljp_write_mem(w, LJP_MEM_ALLOC, LJP_SRC_TRACE, 1, 0, 0, 0, 0, 0x150, 64);
    ljp_write_mem(w, LJP_MEM_ALLOC, LJP_SRC_CFUNC, A_MYC, 0, 0, 0, 0, 0x160,
                  128);
    /* 7: a block of the old definition goes back where it was charged */
    ljp_write_mem(w, LJP_MEM_FREE, LJP_SRC_LFUNC, P_F, 6, 0, 0x100, 8, 0, 0);
    /* 8: a realloc at the new site moves a block of the old one */
    ljp_write_mem(w, LJP_MEM_REALLOC, LJP_SRC_LFUNC, P_F, 6, 0, 0x110, 16,
                  0x170, 24);
    ljp_fold_options o;
    memset(&o, 0, sizeof(o));
    o.weight = ws[k];
    folded r;
    fold_checked(w, &o, NULL, &r);
    ck_assert_uint_eq(r.n, 9);
    char old_t[256], new_t[256];
    snprintf(old_t, sizeof(old_t), "%s",
             path_of(r.t, r.rep[2].leaf));
    snprintf(new_t, sizeof(new_t), "%s",
             path_of(r.t, r.rep[5].leaf));
    ck_assert_str_eq(path_of(r.t, r.rep[0].leaf), "@a.lua;@a.lua:4;line 6");
    ck_assert_uint_eq(r.rep[1].leaf, r.rep[0].leaf);
    ck_assert_str_eq(path_of(r.t, r.rep[3].leaf), "my_cfunc");
    ck_assert_str_eq(path_of(r.t, r.rep[4].leaf), "@z.lua;@z.lua:9;line 6");
    ck_assert_str_eq(path_of(r.t, r.rep[6].leaf), "other_c");
    ck_assert_msg(strstr(old_t, "@a.lua:4") && strstr(new_t, "@b.lua:20"),
                  "traces: before %s, after %s", old_t, new_t);
    ck_assert_int_eq(r.rep[4].weight, ws[k] == LJP_WEIGHT_EVENTS ? 1 : 32);
    if (ws[k] == LJP_WEIGHT_LIVE) {
      ck_assert_uint_eq(r.rep[7].leaf, r.rep[0].leaf);
      ck_assert_int_eq(r.rep[7].weight, -8);
      ck_assert_uint_eq(r.rep[8].leaf, r.rep[4].leaf);
      ck_assert_int_eq(r.rep[8].weight, 24);
      ck_assert_int_eq(ljp_tree_node_self(r.t, r.rep[0].leaf), 0);
      ck_assert_int_eq(ljp_tree_node_self(r.t, r.rep[4].leaf), 32 + 24);
    } else {
      ck_assert_uint_eq(r.rep[8].leaf, r.rep[4].leaf);
    }
    ljp_tree_free(r.t);
  }
}
END_TEST

/* The reference view gives ljp 2 trace samples no frame: the weight goes
 * to the root, reported as leaf 0 with its weight. */
START_TEST(reference_view_empty_stack)
{
  ljp_writer *w = sysprof_begin();
  ljp_frame lua[] = {LF(P_MAIN, 0), LF(P_F, 4)};
  uint64_t host[] = {A_MAIN, A_PCALL, A_VMPCALL};
  sample(w, LJP_VMST_LFUNC, lua, 2, host, 3, 0x10);
  ck_assert_int_eq(ljp_write_trace_sample(w, 1, P_F, 4), LJP_OK);
  ck_assert_int_eq(ljp_write_trace_sample(w, 1, P_F, 4), LJP_OK);
  ljp_fold_options o;
  memset(&o, 0, sizeof(o));
  o.view = LJP_VIEW_REFERENCE;
  folded r;
  fold_checked(w, &o, NULL, &r);
  ck_assert_uint_eq(r.n, 3);
  ck_assert_uint_ne(r.rep[0].leaf, 0);
  ck_assert_uint_eq(r.rep[1].leaf, 0);
  ck_assert_int_eq(r.rep[1].weight, 1);
  ck_assert_uint_eq(r.rep[2].leaf, 0);
  ck_assert_int_eq(ljp_tree_node_self(r.t, 0), 2);
  ljp_tree_free(r.t);
}
END_TEST

/* ---- frame attributes ---- */

static uint32_t frame_named(const ljp_tree *t, const char *name, ljp_class c)
{
  uint32_t id = ljp_tree_find_frame(t, name, strlen(name), c);
  ck_assert_msg(id != 0, "no frame %s", name);
  return id;
}

static ljp_frame_info info_of(const ljp_tree *t, uint32_t id)
{
  ljp_frame_info fi;
  memset(&fi, 0x5a, sizeof(fi));
  ck_assert_int_eq(ljp_tree_frame_info(t, id, &fi), LJP_OK);
  return fi;
}

START_TEST(frame_info_from_stream)
{
  ljp_writer *w = sysprof_begin();
  ljp_frame lua[] = {LF(P_MAIN, 0), LF(P_F, 4), FF(1), CF(A_MYC)};
  uint64_t host[] = {A_MAIN, A_PCALL, A_VMPCALL, A_FUNCC, A_MYC};
  sample(w, LJP_VMST_CFUNC, lua, 4, host, 5, 0x10);
  ck_assert_int_eq(ljp_write_trace_sample(w, 1, P_F, 4), LJP_OK);
  sample(w, LJP_VMST_GC, NULL, 0, host, 1, 0x10);
  ljp_fold_options o;
  memset(&o, 0, sizeof(o));
  o.vmstate = LJP_VMSTATE_ROOT;
  folded r;
  fold_checked(w, &o, NULL, &r);
  const ljp_tree *t = r.t;

  ljp_frame_info fi = info_of(t, frame_named(t, "@a.lua:4", LJP_CLASS_LUA));
  ck_assert_int_eq(fi.kind, LJP_FRAME_LUA);
  ck_assert_uint_eq(fi.chunk_len, 6);
  ck_assert_mem_eq(fi.chunk, "@a.lua", 6);
  ck_assert_uint_eq(fi.def_line, 4);
  ck_assert_uint_eq(fi.address, P_F);
  ck_assert_uint_eq(fi.line, 0);
  ck_assert_ptr_null(fi.function);

  fi = info_of(t, frame_named(t, "TRACE [1] @a.lua:5", LJP_CLASS_TRACE));
  ck_assert_int_eq(fi.kind, LJP_FRAME_TRACE);
  ck_assert_mem_eq(fi.chunk, "@a.lua", 6);
  ck_assert_uint_eq(fi.def_line, 5); /* the trace's start line */
  ck_assert_uint_eq(fi.address, 1);  /* the trace number */

  fi = info_of(t, frame_named(t, "my_cfunc", LJP_CLASS_CFUNC));
  ck_assert_int_eq(fi.kind, LJP_FRAME_CFUNC);
  ck_assert_uint_eq(fi.address, A_MYC);
  ck_assert_ptr_null(fi.chunk);
  ck_assert_uint_eq(fi.def_line, 0);

  fi = info_of(t, frame_named(t, ljp_ffname(LJP_FLAVOR_TARANTOOL, 1),
                              LJP_CLASS_FFUNC));
  ck_assert_int_eq(fi.kind, LJP_FRAME_FFUNC);
  ck_assert_uint_eq(fi.address, 1); /* the ffid */

  /* host frames: the symbol's address, not the return address */
  fi = info_of(t, frame_named(t, "lua_pcall", LJP_CLASS_HOST));
  ck_assert_int_eq(fi.kind, LJP_FRAME_HOST);
  ck_assert_uint_eq(fi.address, A_PCALL);

  fi = info_of(t, frame_named(t, "VMST_GC", LJP_CLASS_VM));
  ck_assert_int_eq(fi.kind, LJP_FRAME_NONE);
  ck_assert_uint_eq(fi.address, LJP_VMST_GC);
  ck_assert_ptr_null(fi.chunk);

  ck_assert_int_eq(ljp_tree_frame_info(t, 0, &fi), LJP_E_ARG);
  ck_assert_int_eq(
      ljp_tree_frame_info(t, ljp_tree_frame_count(t) + 1, &fi), LJP_E_ARG);
  ljp_tree_free(r.t);
}
END_TEST

/* x1 streams name the objects host addresses lie in: C and host frames
 * carry theirs. */
START_TEST(frame_info_objects)
{
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  symtab(w);
  ck_assert_int_eq(ljp_write_stream_begin_x1(w, LJP_FLAVOR_TARANTOOL,
                                             LJP_TIMER_WALL, 1000),
                   LJP_OK);
  ck_assert_int_eq(ljp_write_event_object(w, 0x1000, 0x500, 0x200,
                                          "/usr/bin/app", 12, "abcd", 4),
                   LJP_OK);
  ljp_frame lua[] = {LF(P_MAIN, 0), CF(A_MYC)};
  uint64_t host[] = {A_MAIN, A_PCALL, A_VMPCALL, A_FUNCC, A_MYC};
  sample_x1(w, LJP_VMST_CFUNC, 1, 1, 0, lua, N(lua), host, N(host));
  folded r;
  fold_checked(w, NULL, NULL, &r);
  ljp_frame_info fi =
      info_of(r.t, frame_named(r.t, "my_cfunc", LJP_CLASS_CFUNC));
  ck_assert_uint_eq(fi.object_len, 12);
  ck_assert_mem_eq(fi.object, "/usr/bin/app", 12);
  ck_assert_uint_eq(fi.build_id_len, 4);
  ck_assert_mem_eq(fi.build_id, "abcd", 4);
  ck_assert_uint_eq(fi.object_start, 0x1000);
  ck_assert_uint_eq(fi.object_size, 0x500);
  ck_assert_uint_eq(fi.object_offset, 0x200);
  fi = info_of(r.t, frame_named(r.t, "main", LJP_CLASS_HOST));
  ck_assert_mem_eq(fi.object, "/usr/bin/app", 12);
  fi = info_of(r.t, frame_named(r.t, "@a.lua:0", LJP_CLASS_LUA));
  ck_assert_ptr_null(fi.object);
  ck_assert_uint_eq(fi.object_size, 0);
  ljp_tree_free(r.t);
}
END_TEST

/* With sources, Lua functions and traces carry their function's name. */
START_TEST(frame_info_function_names)
{
  const char *dir = "test_model_src";
  char path[256];
  FILE *fp;
  (void)mkdir(dir, 0755);
  snprintf(path, sizeof(path), "%s/a.lua", dir);
  fp = fopen(path, "w");
  ck_assert_ptr_nonnull(fp);
  fputs("-- 1\n-- 2\n-- 3\nlocal function work(n)\nend\n", fp);
  fclose(fp);
  ljp_srcnames *src = ljp_srcnames_new();
  ck_assert_int_eq(ljp_srcnames_add_dir(src, dir), LJP_OK);

  ljp_writer *w = sysprof_begin();
  ljp_frame lua[] = {LF(P_MAIN, 0), LF(P_F, 4)};
  uint64_t host[] = {A_MAIN, A_PCALL, A_VMPCALL};
  sample(w, LJP_VMST_LFUNC, lua, 2, host, 3, 0x10);
  ck_assert_int_eq(ljp_write_trace_sample(w, 1, P_F, 4), LJP_OK);
  folded r;
  fold_checked(w, NULL, src, &r);
  ljp_frame_info fi =
      info_of(r.t, frame_named(r.t, "work @a.lua:4", LJP_CLASS_LUA));
  ck_assert_str_eq(fi.function, "work");
  fi = info_of(r.t, frame_named(r.t, "TRACE [1] @a.lua:5", LJP_CLASS_TRACE));
  ck_assert_str_eq(fi.function, "work");
  fi = info_of(r.t, frame_named(r.t, "@a.lua:0", LJP_CLASS_LUA));
  ck_assert_ptr_null(fi.function);
  ljp_tree_free(r.t);
  ljp_srcnames_free(src);
  (void)remove(path);
  (void)remove(dir);
}
END_TEST

START_TEST(frame_info_set_and_get)
{
  ljp_tree *t = ljp_tree_new();
  uint32_t a = ljp_tree_intern(t, "a", 1, LJP_CLASS_LUA);
  uint32_t b = ljp_tree_intern(t, "b", 1, LJP_CLASS_LUA);
  ljp_frame_info fi = info_of(t, a);
  ck_assert_int_eq(fi.kind, LJP_FRAME_NONE);
  ck_assert_ptr_null(fi.chunk);
  ck_assert_uint_eq(fi.address, 0);
  char chunk[] = "@x.lua", fn[] = "f";
  ljp_frame_info in;
  memset(&in, 0, sizeof(in));
  in.kind = LJP_FRAME_LUA;
  in.chunk = chunk;
  in.chunk_len = 6;
  in.def_line = 3;
  in.line = 99;
  in.address = 0x10;
  in.function = fn;
  ck_assert_int_eq(ljp_tree_set_frame_info(t, b, &in), LJP_OK);
  ck_assert_int_eq(ljp_tree_set_frame_info(t, a, &in), LJP_OK);
  chunk[1] = 'y'; /* copied */
  fn[0] = 'g';
  fi = info_of(t, b);
  ck_assert_mem_eq(fi.chunk, "@x.lua", 6);
  ck_assert_str_eq(fi.function, "f");
  ck_assert_uint_eq(fi.def_line, 3);
  ck_assert_uint_eq(fi.address, 0x10);
  ck_assert_uint_eq(fi.line, 0); /* a frame's line is its key */
  ck_assert_ptr_eq(info_of(t, a).chunk, fi.chunk); /* stored once */
  ck_assert_int_eq(ljp_tree_set_frame_info(t, 3, &in), LJP_E_ARG);
  in.chunk = NULL;
  ck_assert_int_eq(ljp_tree_set_frame_info(t, a, &in), LJP_E_ARG);
  ljp_tree_free(t);
}
END_TEST

/* ---- line-keyed frames ---- */

START_TEST(intern_line_keys)
{
  ljp_tree *t = ljp_tree_new();
  uint32_t a = ljp_tree_intern(t, "f", 1, LJP_CLASS_LUA);
  uint32_t a0 = ljp_tree_intern_line(t, "f", 1, LJP_CLASS_LUA, 0);
  uint32_t a7 = ljp_tree_intern_line(t, "f", 1, LJP_CLASS_LUA, 7);
  uint32_t a9 = ljp_tree_intern_line(t, "f", 1, LJP_CLASS_LUA, 9);
  ck_assert_uint_eq(a, a0);
  ck_assert_uint_ne(a7, a);
  ck_assert_uint_ne(a9, a7);
  ck_assert_uint_eq(ljp_tree_intern_line(t, "f", 1, LJP_CLASS_LUA, 7), a7);
  ck_assert_uint_eq(ljp_tree_frame_count(t), 3);
  ck_assert_uint_eq(info_of(t, a9).line, 9);
  ck_assert_uint_eq(ljp_tree_find_frame(t, "f", 1, LJP_CLASS_LUA), a);
  /* siblings of one name order by line */
  uint32_t s1[] = {a9}, s2[] = {a7}, s3[] = {a};
  ljp_tree_add(t, s1, 1, 1);
  ljp_tree_add(t, s2, 1, 1);
  ljp_tree_add(t, s3, 1, 1);
  uint32_t kids[3];
  ck_assert_uint_eq(ljp_tree_children(t, 0, kids, 3), 3);
  ck_assert_uint_eq(ljp_tree_node_frame(t, kids[0]), a);
  ck_assert_uint_eq(ljp_tree_node_frame(t, kids[1]), a7);
  ck_assert_uint_eq(ljp_tree_node_frame(t, kids[2]), a9);
  ljp_tree_free(t);
}
END_TEST

/* One trace sampled with two lines on record (ljp 2 trace samples carry
 * their start function's line, which the trace's name does not show):
 * one frame without lines, one per line with them. */
static void lines_stream(int lines, folded *r)
{
  ljp_writer *w = sysprof_begin();
  ck_assert_int_eq(ljp_write_trace_sample(w, 1, P_F, 4), LJP_OK);
  ck_assert_int_eq(ljp_write_trace_sample(w, 1, P_F, 9), LJP_OK);
  ck_assert_int_eq(ljp_write_trace_sample(w, 1, P_F, 9), LJP_OK);
  ljp_fold_options o;
  memset(&o, 0, sizeof(o));
  o.lines = lines;
  o.traces = LJP_TRACES_TRACE;
  fold_checked(w, &o, NULL, r);
}

START_TEST(lines_option_separates_frames)
{
  folded r0, r1;
  lines_stream(0, &r0);
  lines_stream(1, &r1);
  ck_assert_uint_eq(r0.rep[0].leaf, r0.rep[1].leaf);
  ck_assert_uint_eq(ljp_tree_frame_count(r0.t), 1);
  ck_assert_uint_ne(r1.rep[0].leaf, r1.rep[1].leaf);
  ck_assert_uint_eq(r1.rep[1].leaf, r1.rep[2].leaf);
  ck_assert_uint_eq(ljp_tree_frame_count(r1.t), 2);
  uint32_t f0 = ljp_tree_node_frame(r1.t, r1.rep[0].leaf);
  uint32_t f1 = ljp_tree_node_frame(r1.t, r1.rep[1].leaf);
  size_t l0, l1;
  const char *n0 = ljp_tree_frame_name(r1.t, f0, &l0);
  const char *n1 = ljp_tree_frame_name(r1.t, f1, &l1);
  ck_assert_str_eq(n0, "TRACE [1] @a.lua:5");
  ck_assert_str_eq(n1, n0);
  ck_assert_uint_eq(info_of(r1.t, f0).line, 4);
  ck_assert_uint_eq(info_of(r1.t, f1).line, 9);
  ck_assert_int_eq(info_of(r1.t, f1).kind, LJP_FRAME_TRACE);
  ck_assert_uint_eq(info_of(r0.t, 1).line, 0);
  ljp_tree_free(r0.t);
  ljp_tree_free(r1.t);
}
END_TEST

/* ---- rollup ---- */

static uint32_t add_path(ljp_tree *t, const char *stack, int64_t w)
{
  uint32_t frames[32];
  size_t n = 0;
  for (const char *p = stack; *p; p++)
    frames[n++] = ljp_tree_intern(t, p, 1, LJP_CLASS_OTHER);
  return ljp_tree_add(t, frames, n, w);
}

START_TEST(rollup_counts_recursion_once)
{
  ljp_tree *t = ljp_tree_new();
  add_path(t, "abab", 3); /* a and b recur */
  add_path(t, "ac", 2);
  add_path(t, "b", 1);
  add_path(t, "aba", 4);
  add_path(t, "cbc", -1);
  uint32_t a = ljp_tree_find_frame(t, "a", 1, LJP_CLASS_OTHER);
  uint32_t b = ljp_tree_find_frame(t, "b", 1, LJP_CLASS_OTHER);
  uint32_t c = ljp_tree_find_frame(t, "c", 1, LJP_CLASS_OTHER);
  int64_t self[4], total[4];
  memset(self, 0x5a, sizeof(self));
  memset(total, 0x5a, sizeof(total));
  ck_assert_int_eq(ljp_tree_rollup(t, self, total, 4), LJP_OK);
  ck_assert_int_eq(self[0], 0);
  ck_assert_int_eq(total[0], 0);
  ck_assert_int_eq(self[a], 4);
  ck_assert_int_eq(self[b], 3 + 1);
  ck_assert_int_eq(self[c], 2 - 1);
  ck_assert_int_eq(total[a], 3 + 2 + 4);
  ck_assert_int_eq(total[b], 3 + 1 + 4 - 1);
  ck_assert_int_eq(total[c], 2 - 1);
  /* either array may be left out; too small is refused */
  int64_t only[4];
  ck_assert_int_eq(ljp_tree_rollup(t, NULL, only, 4), LJP_OK);
  ck_assert_int_eq(only[b], total[b]);
  ck_assert_int_eq(ljp_tree_rollup(t, only, NULL, 4), LJP_OK);
  ck_assert_int_eq(only[b], self[b]);
  ck_assert_int_eq(ljp_tree_rollup(t, self, total, 3), LJP_E_ARG);
  ck_assert_int_eq(ljp_tree_rollup(NULL, self, total, 4), LJP_E_ARG);
  ljp_tree_free(t);
}
END_TEST

/* A frame's total equals the brute-force count over its stacks. */
START_TEST(rollup_matches_brute_force)
{
  ljp_tree *t = ljp_tree_new();
  static const char *stacks[] = {"abcabc", "abd", "dd", "ddd", "bcab",
                                 "a", "cccc", "dabc", "abcd", "b"};
  int64_t want[5] = {0};
  for (size_t i = 0; i < N(stacks); i++) {
    int64_t w = (int64_t)i + 1;
    add_path(t, stacks[i], w);
    for (char ch = 'a'; ch <= 'd'; ch++)
      if (strchr(stacks[i], ch))
        want[ljp_tree_find_frame(t, &ch, 1, LJP_CLASS_OTHER)] += w;
  }
  int64_t total[5];
  ck_assert_int_eq(ljp_tree_rollup(t, NULL, total, 5), LJP_OK);
  for (int f = 1; f <= 4; f++)
    ck_assert_int_eq(total[f], want[f]);
  ljp_tree_free(t);
}
END_TEST

int main(void)
{
  Suite *s = suite_create("model");
  TCase *tc = tcase_create("model");
  tcase_add_test(tc, leaf_on_first_sight_and_memo_hits);
  tcase_add_test(tc, record_memo_after_redefinition);
  tcase_add_test(tc, x1_metadata_on_memo_hits);
  tcase_add_test(tc, x1_flags_change_the_stack);
  tcase_add_test(tc, memprof_reports);
  tcase_add_test(tc, memprof_memo_after_redefinition);
  tcase_add_test(tc, reference_view_empty_stack);
  tcase_add_test(tc, frame_info_from_stream);
  tcase_add_test(tc, frame_info_objects);
  tcase_add_test(tc, frame_info_function_names);
  tcase_add_test(tc, frame_info_set_and_get);
  tcase_add_test(tc, intern_line_keys);
  tcase_add_test(tc, lines_option_separates_frames);
  tcase_add_test(tc, rollup_counts_recursion_once);
  tcase_add_test(tc, rollup_matches_brute_force);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
