/* Unit tests of the exports: the protobuf writer's encodings, the pprof
 * message read back field by field (a small decoder of its own), gzip
 * framing, labels, and speedscope's JSON (escaping, sample order, errors). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "export.h"
#include "ljp.h"
#include "pb.h"

typedef struct buf {
  unsigned char *p;
  size_t len, cap;
  int fail_after;          /* > 0: the n-th write fails */
} buf;

static int buf_sink(void *ctx, const void *data, size_t len)
{
  buf *b = ctx;
  if (b->fail_after && --b->fail_after == 0)
    return -1;
  if (b->len + len + 1 > b->cap) {
    b->cap = (b->len + len + 1) * 2;
    b->p = realloc(b->p, b->cap);
    ck_assert_ptr_nonnull(b->p);
  }
  memcpy(b->p + b->len, data, len);
  b->len += len;
  b->p[b->len] = 0;
  return 0;
}

static uint32_t add(ljp_tree *t, const char *stack, ljp_class cls, int64_t w)
{
  uint32_t fr[32];
  size_t n = 0;
  const char *p = stack;
  for (;;) {
    const char *e = strchr(p, ';');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    /* Classes as the folder gives them: traces and VM states by name. */
    ljp_class c = !e ? cls : LJP_CLASS_LUA;
    if (len > 7 && !memcmp(p, "TRACE [", 7))
      c = LJP_CLASS_TRACE;
    fr[n++] = ljp_tree_intern(t, p, len, c);
    if (!e)
      break;
    p = e + 1;
  }
  return ljp_tree_add(t, fr, n, w);
}

START_TEST(pb_varints)
{
  ljp_pb b;
  ljp__pb_init(&b);
  ljp__pb_varint(&b, 0);
  ljp__pb_varint(&b, 1);
  ljp__pb_varint(&b, 300);
  ljp__pb_varint(&b, UINT64_MAX);
  const unsigned char want[] = {0x00, 0x01, 0xac, 0x02, 0xff, 0xff, 0xff,
                                0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
  ck_assert_uint_eq(b.len, sizeof(want));
  ck_assert_mem_eq(b.data, want, sizeof(want));
  ljp__pb_reset(&b);
  ljp__pb_int(&b, 2, -1); /* tag 0x10, then ten bytes of two's complement */
  ck_assert_uint_eq(b.len, 11);
  ck_assert_uint_eq(b.data[0], 0x10);
  ck_assert_uint_eq(b.data[10], 0x01);
  ljp__pb_reset(&b);
  ljp__pb_bytes(&b, 6, "go", 2);
  const unsigned char s[] = {0x32, 0x02, 'g', 'o'};
  ck_assert_mem_eq(b.data, s, sizeof(s));
  ljp__pb_reset(&b);
  const uint64_t v[] = {1, 300};
  ljp__pb_packed_u64(&b, 1, v, 2);
  const unsigned char pk[] = {0x0a, 0x03, 0x01, 0xac, 0x02};
  ck_assert_uint_eq(b.len, sizeof(pk));
  ck_assert_mem_eq(b.data, pk, sizeof(pk));
  ljp__pb_reset(&b);
  ljp__pb_packed_u64(&b, 1, v, 0); /* empty: absent */
  ck_assert_uint_eq(b.len, 0);
  ljp__pb_free(&b);
}
END_TEST

/* ---- a minimal profile.proto reader for the checks ---- */

typedef struct field {
  unsigned num, wire;
  uint64_t v;              /* wire 0 */
  const unsigned char *p;  /* wire 2 */
  size_t len;
} field;

static uint64_t rd_varint(const unsigned char **p, const unsigned char *end)
{
  uint64_t v = 0;
  for (int sh = 0; *p < end; sh += 7) {
    unsigned char c = *(*p)++;
    v |= (uint64_t)(c & 0x7f) << sh;
    if (!(c & 0x80))
      return v;
  }
  ck_abort_msg("truncated varint");
  return 0;
}

static int next_field(const unsigned char **p, const unsigned char *end,
                      field *f)
{
  if (*p >= end)
    return 0;
  uint64_t tag = rd_varint(p, end);
  f->num = (unsigned)(tag >> 3);
  f->wire = (unsigned)(tag & 7);
  if (f->wire == 0) {
    f->v = rd_varint(p, end);
  } else {
    ck_assert_uint_eq(f->wire, 2);
    f->len = (size_t)rd_varint(p, end);
    ck_assert(f->len <= (size_t)(end - *p));
    f->p = *p;
    *p += f->len;
  }
  return 1;
}

typedef struct profile {
  char *strings[64];
  size_t nstrings;
  uint64_t types[4][2];
  size_t ntypes;
  int64_t values[16][4];   /* per sample */
  uint64_t locs[16][16];
  size_t nlocs[16];
  uint64_t labels[16][8][4]; /* key, str, num, fields present (bits) */
  size_t nlabels[16];
  size_t nsamples;
  uint64_t fn_name[32], fn_file[32], fn_line[32];
  size_t nfuncs;
  int64_t period, duration;
} profile;

static void parse(profile *pr, const unsigned char *p, size_t len)
{
  memset(pr, 0, sizeof(*pr));
  const unsigned char *end = p + len;
  field f, g, h;
  while (next_field(&p, end, &f)) {
    const unsigned char *q = f.p, *qe = f.p + f.len;
    switch (f.num) {
    case 1:
      while (next_field(&q, qe, &g))
        pr->types[pr->ntypes][g.num - 1] = g.v;
      pr->ntypes++;
      break;
    case 2: {
      size_t s = pr->nsamples++;
      while (next_field(&q, qe, &g)) {
        const unsigned char *r = g.p, *re = g.p + g.len;
        size_t k = 0;
        if (g.num == 1)
          while (r < re)
            pr->locs[s][pr->nlocs[s]++] = rd_varint(&r, re);
        else if (g.num == 2)
          while (r < re)
            pr->values[s][k++] = (int64_t)rd_varint(&r, re);
        else if (g.num == 3) {
          size_t l = pr->nlabels[s]++;
          while (next_field(&r, re, &h)) {
            pr->labels[s][l][h.num - 1] = h.v;
            pr->labels[s][l][3] |= 1u << h.num;
          }
        }
      }
      break;
    }
    case 5: {
      size_t i = pr->nfuncs++;
      while (next_field(&q, qe, &g)) {
        if (g.num == 1) ck_assert_uint_eq(g.v, i + 1);
        if (g.num == 2) pr->fn_name[i] = g.v;
        if (g.num == 4) pr->fn_file[i] = g.v;
        if (g.num == 5) pr->fn_line[i] = g.v;
      }
      break;
    }
    case 6: {
      char *s = malloc(f.len + 1);
      memcpy(s, f.p, f.len);
      s[f.len] = 0;
      pr->strings[pr->nstrings++] = s;
      break;
    }
    case 10: pr->duration = (int64_t)f.v; break;
    case 12: pr->period = (int64_t)f.v; break;
    default: break;
    }
  }
}

static void profile_free(profile *pr)
{
  for (size_t i = 0; i < pr->nstrings; i++)
    free(pr->strings[i]);
}

static const char *S(const profile *pr, uint64_t i)
{
  ck_assert_uint_lt(i, pr->nstrings);
  return pr->strings[i];
}

START_TEST(pprof_message)
{
  ljp_tree *t = ljp_tree_new();
  add(t, "main;@a.lua:4;VMST_LFUNC", LJP_CLASS_VM, 3);
  add(t, "main;@a.lua:4;TRACE [7] @a.lua:5;VMST_TRACE", LJP_CLASS_VM, 2);
  add(t, "VMST_GC", LJP_CLASS_VM, 1);
  ljp_export_label lab[] = {{"service", "api"}, {"zone", ""}};
  ljp_pprof_options o;
  memset(&o, 0, sizeof(o));
  o.types[0] = (ljp_export_type){"samples", "count", t, 1};
  o.types[1] = (ljp_export_type){"cpu", "nanoseconds", t, 1000};
  o.ntypes = 2;
  o.period_type = "cpu";
  o.period_unit = "nanoseconds";
  o.period = 1000;
  o.duration_ns = 6000;
  o.labels = lab;
  o.nlabels = 2;
  o.vmstate_labels = 1;
  o.uncompressed = 1;
  buf b = {0};
  ck_assert_int_eq(ljp_pprof_write(&o, buf_sink, &b), LJP_OK);
  profile pr;
  parse(&pr, b.p, b.len);
  ck_assert_str_eq(S(&pr, 0), "");
  ck_assert_uint_eq(pr.ntypes, 2);
  ck_assert_str_eq(S(&pr, pr.types[1][0]), "cpu");
  ck_assert_str_eq(S(&pr, pr.types[1][1]), "nanoseconds");
  ck_assert_int_eq(pr.period, 1000);
  ck_assert_int_eq(pr.duration, 6000);
  ck_assert_uint_eq(pr.nsamples, 3);
  /* Sample 0: @a.lua:4 (leaf first) then main; vmstate LFUNC; 3 and 3000. */
  ck_assert_uint_eq(pr.nlocs[0], 2);
  ck_assert_str_eq(S(&pr, pr.fn_name[pr.locs[0][0] - 1]), "@a.lua:4");
  ck_assert_str_eq(S(&pr, pr.fn_file[pr.locs[0][0] - 1]), "a.lua");
  ck_assert_uint_eq(pr.fn_line[pr.locs[0][0] - 1], 4);
  ck_assert_str_eq(S(&pr, pr.fn_name[pr.locs[0][1] - 1]), "main");
  ck_assert_int_eq(pr.values[0][0], 3);
  ck_assert_int_eq(pr.values[0][1], 3000);
  ck_assert_uint_eq(pr.nlabels[0], 3);
  ck_assert_str_eq(S(&pr, pr.labels[0][0][0]), "service");
  ck_assert_str_eq(S(&pr, pr.labels[0][0][1]), "api");
  ck_assert_str_eq(S(&pr, pr.labels[0][1][0]), "zone");
  ck_assert_str_eq(S(&pr, pr.labels[0][1][1]), ""); /* a string, empty */
  ck_assert_uint_eq(pr.labels[0][1][3], 1u << 1 | 1u << 2);
  ck_assert_str_eq(S(&pr, pr.labels[0][2][0]), "vmstate");
  ck_assert_str_eq(S(&pr, pr.labels[0][2][1]), "LFUNC");
  /* Sample 1: the trace on top, trace label 7. */
  ck_assert_uint_eq(pr.nlocs[1], 3);
  ck_assert_str_eq(S(&pr, pr.fn_name[pr.locs[1][0] - 1]), "TRACE [7] @a.lua:5");
  ck_assert_uint_eq(pr.nlabels[1], 4);
  ck_assert_str_eq(S(&pr, pr.labels[1][3][0]), "trace");
  ck_assert_uint_eq(pr.labels[1][3][2], 7);
  ck_assert_uint_eq(pr.labels[1][3][3], 1u << 1 | 1u << 3); /* a number */
  /* Sample 2: the VM frame alone stays a frame and is a label too. */
  ck_assert_uint_eq(pr.nlocs[2], 1);
  ck_assert_str_eq(S(&pr, pr.fn_name[pr.locs[2][0] - 1]), "VMST_GC");
  ck_assert_str_eq(S(&pr, pr.labels[2][2][1]), "GC");
  ck_assert_int_eq(pr.values[2][1], 1000);
  profile_free(&pr);

  /* gzip: header without a time, and the same message inside. */
  o.uncompressed = 0;
  buf z = {0};
  ck_assert_int_eq(ljp_pprof_write(&o, buf_sink, &z), LJP_OK);
  const unsigned char gz[] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0};
  ck_assert_mem_eq(z.p, gz, sizeof(gz));
  unsigned char *raw = malloc(b.len + 16);
  z_stream zs;
  memset(&zs, 0, sizeof(zs));
  ck_assert_int_eq(inflateInit2(&zs, 15 + 16), Z_OK);
  zs.next_in = z.p;
  zs.avail_in = (uInt)z.len;
  zs.next_out = raw;
  zs.avail_out = (uInt)(b.len + 16);
  ck_assert_int_eq(inflate(&zs, Z_FINISH), Z_STREAM_END);
  ck_assert_uint_eq(zs.total_out, b.len);
  ck_assert_mem_eq(raw, b.p, b.len);
  inflateEnd(&zs);
  /* Deterministic: a second run gives the same bytes. */
  buf z2 = {0};
  ck_assert_int_eq(ljp_pprof_write(&o, buf_sink, &z2), LJP_OK);
  ck_assert_uint_eq(z2.len, z.len);
  ck_assert_mem_eq(z2.p, z.p, z.len);
  free(raw);
  free(b.p);
  free(z.p);
  free(z2.p);
  ljp_tree_free(t);
}
END_TEST

START_TEST(pprof_memprof_joins_trees)
{
  /* Two trees, stacks partly shared: one sample per stack, 0 where a tree
   * lacks it. */
  ljp_tree *a = ljp_tree_new(), *b = ljp_tree_new();
  add(a, "@m.lua;@m.lua:3;line 5", LJP_CLASS_LUA, 100);
  add(a, "INTERNAL", LJP_CLASS_VM, 7);
  add(b, "@m.lua;@m.lua:3;line 5", LJP_CLASS_LUA, 40);
  ljp_pprof_options o;
  memset(&o, 0, sizeof(o));
  o.types[0] = (ljp_export_type){"alloc_space", "bytes", a, 0};
  o.types[1] = (ljp_export_type){"inuse_space", "bytes", b, 0};
  o.ntypes = 2;
  o.uncompressed = 1;
  buf out = {0};
  ck_assert_int_eq(ljp_pprof_write(&o, buf_sink, &out), LJP_OK);
  profile pr;
  parse(&pr, out.p, out.len);
  ck_assert_uint_eq(pr.nsamples, 2);
  ck_assert_int_eq(pr.values[0][0], 100);
  ck_assert_int_eq(pr.values[0][1], 40);
  ck_assert_int_eq(pr.values[1][0], 7);
  ck_assert_int_eq(pr.values[1][1], 0);
  ck_assert_uint_eq(pr.nlocs[0], 3);
  ck_assert_str_eq(S(&pr, pr.fn_name[pr.locs[0][0] - 1]), "line 5");
  ck_assert_uint_eq(pr.fn_file[pr.locs[0][0] - 1], 0);
  ck_assert_str_eq(S(&pr, pr.fn_file[pr.locs[0][2] - 1]), "m.lua");
  ck_assert_uint_eq(pr.fn_line[pr.locs[0][2] - 1], 0);
  profile_free(&pr);
  free(out.p);
  ljp_tree_free(a);
  ljp_tree_free(b);
}
END_TEST

START_TEST(pprof_errors)
{
  ljp_tree *t = ljp_tree_new();
  add(t, "a;b", LJP_CLASS_LUA, 1);
  ljp_pprof_options o;
  memset(&o, 0, sizeof(o));
  buf b = {0};
  ck_assert_int_eq(ljp_pprof_write(NULL, buf_sink, &b), LJP_E_ARG);
  ck_assert_int_eq(ljp_pprof_write(&o, buf_sink, &b), LJP_E_ARG);
  o.types[0] = (ljp_export_type){"samples", "count", NULL, 1};
  o.ntypes = 1;
  ck_assert_int_eq(ljp_pprof_write(&o, buf_sink, &b), LJP_E_ARG);
  o.types[0].tree = t;
  ck_assert_int_eq(ljp_pprof_write(&o, NULL, &b), LJP_E_ARG);
  b.fail_after = 1;
  ck_assert_int_eq(ljp_pprof_write(&o, buf_sink, &b), LJP_E_IO);
  free(b.p);
  ljp_tree_free(t);
}
END_TEST

START_TEST(source_of_names)
{
  const char *f;
  size_t fl;
  int64_t line;
  ck_assert_int_eq(ljp__export_source("@a/b.lua:12", 11, LJP_CLASS_LUA, &f,
                                     &fl, &line), 1);
  ck_assert_uint_eq(fl, 7);
  ck_assert_mem_eq(f, "a/b.lua", 7);
  ck_assert_int_eq(line, 12);
  const char *named = "risk_score @svc.lua:196";
  ck_assert_int_eq(ljp__export_source(named, strlen(named), LJP_CLASS_LUA, &f,
                                     &fl, &line), 1);
  ck_assert_mem_eq(f, "svc.lua", fl);
  ck_assert_int_eq(line, 196);
  ck_assert_int_eq(ljp__export_source("@m.lua", 6, LJP_CLASS_LUA, &f, &fl,
                                     &line), 1);
  ck_assert_int_eq(line, 0);
  ck_assert_int_eq(ljp__export_source("line 5", 6, LJP_CLASS_LUA, &f, &fl,
                                     &line), 0);
  ck_assert_int_eq(ljp__export_source("=stdin:3", 8, LJP_CLASS_LUA, &f, &fl,
                                     &line), 1);
  ck_assert_mem_eq(f, "=stdin", fl);
  ck_assert_int_eq(ljp__export_source("lua_pcall", 9, LJP_CLASS_HOST, &f,
                                     &fl, &line), 0);
}
END_TEST

START_TEST(speedscope_json)
{
  ljp_tree *t = ljp_tree_new();
  uint32_t l1 = add(t, "main;f\"q\\", LJP_CLASS_HOST, 2);
  uint32_t l2 = add(t, "main;\x01" "bad\xff", LJP_CLASS_HOST, 1);
  ljp_speedscope_profile p;
  memset(&p, 0, sizeof(p));
  p.name = "coroutine 1";
  p.tree = t;
  p.unit = "nanoseconds";
  p.scale = 10;
  buf b = {0};
  ck_assert_int_eq(ljp_speedscope_write("x", &p, 1, buf_sink, &b), LJP_OK);
  const char *s = (const char *)b.p;
  ck_assert_ptr_nonnull(strstr(s, "{\"name\":\"f\\\"q\\\\\"}"));
  ck_assert_ptr_nonnull(strstr(s, "{\"name\":\"\\u0001bad\xef\xbf\xbd\"}"));
  ck_assert_ptr_nonnull(strstr(s, "\"startValue\":0,\"endValue\":30,"));
  ck_assert_ptr_nonnull(strstr(s, "\"weights\":[20,10]"));
  /* Samples in a given order, one weight each. */
  uint32_t order[] = {l2, l1, l2};
  p.nodes = order;
  p.nsamples = 3;
  p.start = 5;
  buf c = {0};
  ck_assert_int_eq(ljp_speedscope_write("x", &p, 1, buf_sink, &c), LJP_OK);
  s = (const char *)c.p;
  ck_assert_ptr_nonnull(strstr(s, "\"samples\":[\n[0,2],\n[0,1],\n[0,2]],"
                                  "\"weights\":[10,10,10]"));
  ck_assert_ptr_nonnull(strstr(s, "\"startValue\":5,\"endValue\":35,"));
  /* A node the tree does not have is an argument error. */
  uint32_t bad[] = {999};
  p.nodes = bad;
  p.nsamples = 1;
  ck_assert_int_eq(ljp_speedscope_write("x", &p, 1, buf_sink, &c),
                   LJP_E_ARG);
  ck_assert_int_eq(ljp_speedscope_write("x", &p, 0, buf_sink, &c),
                   LJP_E_ARG);
  free(b.p);
  free(c.p);
  ljp_tree_free(t);
}
END_TEST

static Suite *export_suite(void)
{
  Suite *s = suite_create("export");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, pb_varints);
  tcase_add_test(tc, pprof_message);
  tcase_add_test(tc, pprof_memprof_joins_trees);
  tcase_add_test(tc, pprof_errors);
  tcase_add_test(tc, source_of_names);
  tcase_add_test(tc, speedscope_json);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(export_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
