/*
 * test_srcnames.c — function names read from Lua sources.
 *
 * Sources are written to a fresh directory; every definition form has a
 * line, and so have the lines that must stay unnamed (two functions on one
 * line, an anonymous argument, a comparison, text in strings and comments).
 */
#include "ljp.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];

static const char *const service_lua =
    "#!/usr/bin/env luajit\n"                                     /* 1 */
    "local M = {}\n"                                              /* 2 */
    "local function risk_score(x)\n"                              /* 3 */
    "  return x * 2\n"                                            /* 4 */
    "end\n"                                                       /* 5 */
    "function M.get(k) return k end\n"                            /* 6 */
    "function M:put(k, v) self[k] = v end\n"                      /* 7 */
    "M.del = function(k) end\n"                                   /* 8 */
    "local helper = function() end\n"                             /* 9 */
    "local t = {\n"                                               /* 10 */
    "  [\"with key\"] = function() end,\n"                        /* 11 */
    "  method = function(self) end,\n"                            /* 12 */
    "  a = function() end, b = function() end,\n"                 /* 13 */
    "}\n"                                                         /* 14 */
    "local s = \"function fake(\" local function real() end\n"    /* 15 */
    "-- function commented()\n"                                   /* 16 */
    "--[[ function\n"                                             /* 17 */
    "long() ]] local function after_long() end\n"                 /* 18 */
    "table.sort({}, function(a, b) return a < b end)\n"           /* 19 */
    "local x = y == function() end\n"                             /* 20 */
    "function a.b.c:d() end\n"                                    /* 21 */
    "  ['single'] = function() end,\n"                            /* 22 */
    "local function f() return function() end end\n"              /* 23 */
    "return M\n";                                                 /* 24 */

static const char *const want[] = {
    NULL,         NULL,    NULL,       "risk_score", NULL,  NULL,
    "M.get",      "M:put", "M.del",    "helper",     NULL,  "with key",
    "method",     NULL,    NULL,       "real",       NULL,  NULL,
    "after_long", NULL,    NULL,       "a.b.c:d",    "single", NULL,
    NULL};

static void put_file(const char *rel, const char *text) {
  char path[256];
  snprintf(path, sizeof(path), "%s/%s", dir, rel);
  FILE *f = fopen(path, "w");
  ck_assert_ptr_nonnull(f);
  fputs(text, f);
  fclose(f);
}

static void setup(void) {
  strcpy(dir, "/tmp/ljp-srcnames-XXXXXX");
  ck_assert_ptr_nonnull(mkdtemp(dir));
  char sub[128];
  snprintf(sub, sizeof(sub), "%s/app", dir);
  ck_assert_int_eq(mkdir(sub, 0700), 0);
  put_file("app/service.lua", service_lua);
}

static void teardown(void) {
  char cmd[128];
  snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
  ck_assert_int_eq(system(cmd), 0);
}

static const char *look(ljp_srcnames *s, const char *chunk, uint64_t line) {
  return ljp_srcnames_lookup(s, chunk, strlen(chunk), line);
}

START_TEST(every_definition_form) {
  ljp_srcnames *s = ljp_srcnames_new();
  char chunk[256];
  snprintf(chunk, sizeof(chunk), "@%s/app/service.lua", dir);
  for (uint64_t line = 0; line < sizeof(want) / sizeof(want[0]); line++) {
    const char *got = look(s, chunk, line);
    if (want[line])
      ck_assert_msg(got && strcmp(got, want[line]) == 0,
                    "line %d: '%s', want '%s'", (int)line, got ? got : "(none)",
                    want[line]);
    else
      ck_assert_msg(got == NULL, "line %d: '%s', want none", (int)line, got);
  }
  ck_assert_ptr_null(look(s, chunk, 1000)); /* past the end */
  size_t tried, found;
  ljp_srcnames_stats(s, &tried, &found);
  ck_assert_uint_eq(tried, 1); /* one file, read once for every lookup */
  ck_assert_uint_eq(found, 1);
  ljp_srcnames_free(s);
}
END_TEST

/* Relative chunk paths are tried under each directory in the order given;
 * the first that has the file wins. */
START_TEST(relative_paths_and_dirs) {
  char d1[128], d2[128];
  snprintf(d1, sizeof(d1), "%s/none", dir);
  snprintf(d2, sizeof(d2), "%s", dir);
  ljp_srcnames *s = ljp_srcnames_new();
  ck_assert_ptr_null(look(s, "@app/service.lua", 3)); /* no directory yet */
  ljp_srcnames_free(s);
  s = ljp_srcnames_new();
  ck_assert_int_eq(ljp_srcnames_add_dir(s, d1), LJP_OK);
  ck_assert_int_eq(ljp_srcnames_add_dir(s, d2), LJP_OK);
  ck_assert_str_eq(look(s, "@app/service.lua", 3), "risk_score");
  ljp_srcnames_free(s);
}
END_TEST

/* No file, no file chunk, no line: no name, and nothing breaks. */
START_TEST(absent_sources) {
  ljp_srcnames *s = ljp_srcnames_new();
  ck_assert_ptr_null(look(s, "@/nonexistent/x.lua", 3));
  ck_assert_ptr_null(look(s, "=stdin", 3));
  ck_assert_ptr_null(look(s, "=local function f() end", 1));
  ck_assert_ptr_null(look(s, "@", 1));
  ck_assert_ptr_null(ljp_srcnames_lookup(NULL, "@x.lua", 6, 1));
  char chunk[256];
  snprintf(chunk, sizeof(chunk), "@%s/app", dir); /* a directory */
  ck_assert_ptr_null(look(s, chunk, 1));
  /* a FIFO without a writer: opening it must not wait */
  char fifo[160];
  snprintf(fifo, sizeof(fifo), "%s/fifo.lua", dir);
  ck_assert_int_eq(mkfifo(fifo, 0600), 0);
  snprintf(chunk, sizeof(chunk), "@%s", fifo);
  ck_assert_ptr_null(look(s, chunk, 1));
  size_t tried, found;
  ljp_srcnames_stats(s, &tried, &found);
  ck_assert_uint_eq(found, 0);
  ljp_srcnames_free(s);
}
END_TEST

/* A chunk loaded from a string without a name is its own source. */
START_TEST(string_chunks) {
  ljp_srcnames *s = ljp_srcnames_new();
  const char *code = "local M = {}\nfunction M.run(x)\n  return x\nend\n"
                     "return M\n";
  ck_assert_str_eq(look(s, code, 2), "M.run");
  ck_assert_ptr_null(look(s, code, 1));
  ck_assert_str_eq(look(s, "local function one() end", 1), "one");
  size_t tried, found;
  ljp_srcnames_stats(s, &tried, &found);
  ck_assert_uint_eq(tried, 0); /* no file was read */
  ljp_srcnames_free(s);
}
END_TEST

/* Through the folder: "name @chunk:line" where the source names the
 * function, "@chunk:line" where it cannot. */
START_TEST(folded_names) {
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  ljp_write_symtab_begin(w, 3, 0);
  ljp_write_symtab_lfunc(w, 0x5000, "@app/service.lua", 16, 0);
  ljp_write_symtab_lfunc(w, 0x5100, "@app/service.lua", 16, 3);
  ljp_write_symtab_lfunc(w, 0x5200, "@app/service.lua", 16, 13);
  ljp_write_symtab_lfunc(w, 0x5300, "@app/missing.lua", 16, 3);
  ljp_write_symtab_trace(w, 2, 0, 0x5100, 4);
  ljp_write_symtab_end(w);
  ljp_write_stream_begin(w, LJP_KIND_SYSPROF, 2, LJP_FLAVOR_LUAJIT, 0);
  ljp_frame l[] = {{LJP_FRAME_LUA, 0x5200, 13, NULL, NULL, 0},
                   {LJP_FRAME_LUA, 0x5300, 3, NULL, NULL, 0},
                   {LJP_FRAME_LUA, 0x5100, 3, NULL, NULL, 0},
                   {LJP_FRAME_LUA, 0x5000, 0, NULL, NULL, 0}};
  ck_assert_int_eq(ljp_write_sample(w, LJP_VMST_LFUNC, l, 4, NULL, 0),
                   LJP_OK);
  ck_assert_int_eq(ljp_write_trace_sample(w, 2, 0x5100, 3), LJP_OK);
  ck_assert_int_eq(ljp_write_stream_end(w), LJP_OK);
  size_t len;
  const uint8_t *d = ljp_writer_data(w, &len);
  for (int with = 0; with < 2; with++) {
    ljp_srcnames *src = ljp_srcnames_new();
    ljp_srcnames_add_dir(src, dir);
    ljp_fold_options o;
    memset(&o, 0, sizeof(o));
    o.flavor = LJP_FLAVOR_AUTO;
    o.sources = with ? src : NULL;
    ljp_reader *r = ljp_reader_new();
    ck_assert_int_eq(ljp_reader_open_memory(r, d, len), LJP_OK);
    ljp_tree *t = ljp_tree_new();
    ljp_folder *f = ljp_folder_new(t, &o);
    const ljp_event *ev;
    while (ljp_reader_next(r, &ev) == LJP_OK)
      ck_assert_int_eq(ljp_folder_add(f, r, ev), LJP_OK);
    char buf[1024];
    buf[0] = '\0';
    for (uint32_t n = 1; n < ljp_tree_node_count(t); n++) {
      if (ljp_tree_node_self(t, n) == 0)
        continue;
      /* the leaf's path, outermost first */
      uint32_t path[16], k = 0;
      for (uint32_t m = n; m; m = ljp_tree_node_parent(t, m))
        path[k++] = m;
      while (k--) {
        size_t nl;
        const char *nm = ljp_tree_frame_name(t, ljp_tree_node_frame(t, path[k]),
                                             &nl);
        strncat(buf, nm, nl);
        strcat(buf, k ? ";" : "\n");
      }
    }
    if (with)
      ck_assert_str_eq(buf, "@app/service.lua:0;risk_score @app/service.lua:3;"
                            "@app/missing.lua:3;@app/service.lua:13\n"
                            "risk_score @app/service.lua:3;"
                            "TRACE [2] @app/service.lua:4\n");
    else
      ck_assert_str_eq(buf, "@app/service.lua:0;@app/service.lua:3;"
                            "@app/missing.lua:3;@app/service.lua:13\n"
                            "@app/service.lua:3;TRACE [2] @app/service.lua:4\n");
    ljp_folder_free(f);
    ljp_tree_free(t);
    ljp_reader_free(r);
    ljp_srcnames_free(src);
  }
  ljp_writer_free(w);
}
END_TEST

int main(void) {
  Suite *s = suite_create("srcnames");
  TCase *tc = tcase_create("srcnames");
  tcase_add_checked_fixture(tc, setup, teardown);
  tcase_add_test(tc, every_definition_form);
  tcase_add_test(tc, relative_paths_and_dirs);
  tcase_add_test(tc, absent_sources);
  tcase_add_test(tc, string_chunks);
  tcase_add_test(tc, folded_names);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
