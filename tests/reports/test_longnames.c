/* ljpdump's event lines (text and JSON) print a frame's whole name, however
 * long: a memprof event at a Lua function whose chunk name is 2000 bytes
 * must show all 2000 bytes, not the first 511. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ljp.h"
#include "summary.h"

#define OK(x) ck_assert_int_eq((x), LJP_OK)
#define NAME_LEN 2000

typedef int (*printer)(const ljp_reader *, const ljp_event *, ljp_flavor,
                       FILE *);

/* A memprof stream with one allocation at line 7 of a function defined in
 * a chunk "@aaa...a.lua" of NAME_LEN bytes. */
static void build(char *chunk, uint8_t **data, size_t *len) {
  memset(chunk, 'a', NAME_LEN);
  memcpy(chunk, "@", 1);
  memcpy(chunk + NAME_LEN - 4, ".lua", 4);
  chunk[NAME_LEN] = '\0';
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  ck_assert_ptr_nonnull(w);
  OK(ljp_write_symtab_begin(w, 3, 0));
  OK(ljp_write_symtab_lfunc(w, 0x5000, chunk, NAME_LEN, 1));
  OK(ljp_write_symtab_end(w));
  OK(ljp_write_stream_begin(w, LJP_KIND_MEMPROF, 3, LJP_FLAVOR_TARANTOOL, 0));
  OK(ljp_write_mem(w, LJP_MEM_ALLOC, LJP_SRC_LFUNC, 0x5000, 7, 0, 0, 0,
                   0xA000, 32));
  OK(ljp_write_stream_end(w));
  const uint8_t *p = ljp_writer_data(w, len);
  *data = malloc(*len);
  ck_assert_ptr_nonnull(*data);
  memcpy(*data, p, *len);
  ljp_writer_free(w);
}

/* Every event line of the stream through print. */
static char *print_all(printer print) {
  char chunk[NAME_LEN + 1];
  uint8_t *data;
  size_t len;
  build(chunk, &data, &len);
  char *text = NULL;
  size_t tlen = 0;
  FILE *out = open_memstream(&text, &tlen);
  ck_assert_ptr_nonnull(out);
  ljp_reader *r = ljp_reader_new();
  OK(ljp_reader_open_memory(r, data, len));
  const ljp_event *ev;
  ljp_status st;
  while ((st = ljp_reader_next(r, &ev)) == LJP_OK)
    ck_assert_int_eq(print(r, ev, LJP_FLAVOR_TARANTOOL, out), 0);
  ck_assert_int_eq(st, LJP_END);
  ljp_reader_free(r);
  fclose(out);
  free(data);
  return text;
}

static void expect_whole(const char *text) {
  char want[NAME_LEN + 8];
  memset(want, 'a', NAME_LEN);
  memcpy(want, "@", 1);
  memcpy(want + NAME_LEN - 4, ".lua:7", 7); /* the event's line */
  ck_assert_msg(strstr(text, want) != NULL,
                "the %d-byte name is not printed whole:\n%.200s", NAME_LEN,
                text);
}

START_TEST(text_lines) {
  char *t = print_all(events_print);
  expect_whole(t);
  free(t);
}
END_TEST

START_TEST(json_lines) {
  char *t = print_all(events_print_json);
  expect_whole(t);
  free(t);
}
END_TEST

int main(void) {
  Suite *s = suite_create("longnames");
  TCase *tc = tcase_create("events");
  tcase_add_test(tc, text_lines);
  tcase_add_test(tc, json_lines);
  suite_add_tcase(s, tc);
  SRunner *sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
