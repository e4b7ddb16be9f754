/*
 * test_robust.c — cut and corrupted real captures never crash the reader
 * and never make it lie.
 *
 * Cuts (every offset of the first 2 KiB, then offsets spread over the file,
 * each on or next to a record boundary): the result is LJP_E_TRUNCATED at an
 * offset inside the first record that did not come back, never "malformed",
 * and the events returned are exactly the start of the full decode.
 * Flipped bytes: any status, but the error offset lies within the input and
 * every record that ends before the flipped byte comes back unchanged.
 * Every input is an exact-size heap copy, so a read past its end trips
 * AddressSanitizer in sanitizer builds.
 *
 * LJP_TEST_CUTS=<n> (environment) sets the number of spread cuts per file
 * (default 96, 24 in sanitizer builds) for a longer or shorter run.
 */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core_util.h"

#define MAXFILES 64

static char *files[MAXFILES];
static int dense[MAXFILES];    /* cut at every offset of the first 2 KiB */
static int nfiles;
static size_t spread_cuts = CORE_SANITIZED ? 24 : 96;
static size_t spread_flips = CORE_SANITIZED ? 16 : 48;
static size_t head_flip_stride = CORE_SANITIZED ? 23 : 7;

static int cmp_str(const void *a, const void *b)
{
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void list_captures(const char *sub)
{
  char dir[600];
  DIR *d;
  struct dirent *e;
  snprintf(dir, sizeof(dir), "%s/%s", core_testdata, sub);
  d = opendir(dir);
  if (!d)
    return;
  while ((e = readdir(d)) != NULL && nfiles < MAXFILES) {
    size_t n = strlen(e->d_name);
    if (n > 4 && strcmp(e->d_name + n - 4, ".bin") == 0) {
      size_t len = strlen(dir) + 1 + n + 1;
      files[nfiles] = malloc(len);
      snprintf(files[nfiles], len, "%s/%s", dir, e->d_name);
      nfiles++;
    }
  }
  closedir(d);
}

/* The full decode of a capture, with where each record ends. */
typedef struct full {
  uint8_t *data;
  size_t len;
  core_decode d;
  int ljs2;
  uint64_t ljs_end;        /* offset just after the ljs final byte */
} full;

static void load_full(full *f, const char *path)
{
  memset(f, 0, sizeof(*f));
  f->data = core_read_file(path, &f->len);
  ck_assert_msg(f->data != NULL, "cannot read %s", path);
  core_decode_memory(f->data, f->len, &f->d, 1);
  ck_assert_msg(f->d.status == LJP_END, "%s: %s", path, f->d.error);
  f->ljs2 = f->d.ljs_version == 2;
  {
    size_t i;
    for (i = 0; i < f->d.nevents; i++)
      if (f->d.types[i] == LJP_EV_EPILOGUE) {
        f->ljs_end = f->d.offsets[i] + 1;
        break;
      }
  }
}

static void free_full(full *f)
{
  core_decode_clear(&f->d);
  free(f->data);
}

static uint64_t record_end(const full *f, size_t i)
{
  return i + 1 < f->d.nevents ? f->d.offsets[i + 1] : f->len;
}

/* Number of records that end at or before cut. */
static size_t records_within(const full *f, size_t cut)
{
  size_t lo = 0, hi = f->d.nevents;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (record_end(f, mid) <= cut)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

static void check_cut(const full *f, size_t cut, const char *path)
{
  uint8_t *copy = malloc(cut ? cut : 1);
  core_decode d = { 0 };
  size_t expect = records_within(f, cut), i;
  memcpy(copy, f->data, cut);
  core_decode_memory(copy, cut, &d, 1);
  ck_assert_msg(d.status == LJP_E_TRUNCATED, "%s cut at %zu: %s (%s)", path,
                cut, ljp_status_name(d.status), d.error);
  /* ljs 2 tables cut before their end may hold back undecidable traces */
  if (f->ljs2)
    ck_assert_msg(d.nevents <= expect, "%s cut at %zu: %zu events, at most "
                  "%zu expected", path, cut, d.nevents, expect);
  else
    ck_assert_msg(d.nevents == expect, "%s cut at %zu: %zu events, expected "
                  "%zu", path, cut, d.nevents, expect);
  ck_assert_msg(d.error_offset <= cut &&
                d.error_offset >= (d.nevents < f->d.nevents
                                   ? f->d.offsets[d.nevents] : f->len),
                "%s cut at %zu: error offset %llu (%s)", path, cut,
                (unsigned long long)d.error_offset, d.error);
  for (i = 0; i < d.nevents; i++)
    CORE_CHECK(d.prints[i] == f->d.prints[i], "%s cut at %zu: event %zu "
                  "(offset %llu) differs from the full decode", path, cut, i,
                  (unsigned long long)d.offsets[i]);
  ck_assert_int_eq(d.complete, 0);
  core_decode_clear(&d);
  free(copy);
}

START_TEST(cuts_head)
{
  full f;
  size_t cut, n;
  load_full(&f, files[_i]);
  n = f.len < 2048 ? f.len : 2048;
  for (cut = 0; cut < n; cut += dense[_i] ? 1 : 16)
    check_cut(&f, cut, files[_i]);
  free_full(&f);
}
END_TEST

START_TEST(cuts_spread)
{
  full f;
  size_t k;
  load_full(&f, files[_i]);
  for (k = 0; k < spread_cuts; k++) {
    /* a point spread over the file, moved onto the nearest record start,
     * then cut just before it, on it, or just after it */
    size_t at = (size_t)((double)f.len * (double)(k + 1) /
                         (double)(spread_cuts + 1));
    size_t rec = records_within(&f, at);
    size_t cut = rec < f.d.nevents ? (size_t)f.d.offsets[rec] : f.len - 1;
    cut = cut + (k % 3) - 1;
    if (cut >= f.len || cut == (size_t)-1)
      cut = at;
    check_cut(&f, cut, files[_i]);
  }
  /* the very last byte (the epilogue) missing */
  check_cut(&f, f.len - 1, files[_i]);
  free_full(&f);
}
END_TEST

/* Corrupt one byte at pos; decode up to window bytes past it (0: all). */
static void check_flip(const full *f, size_t pos, uint8_t how, size_t window,
                       const char *path)
{
  size_t len = window && pos + window < f->len ? pos + window : f->len;
  uint8_t *copy = malloc(len);
  core_decode d = { 0 };
  size_t intact = records_within(f, pos), i;
  static const uint8_t values[] = { 0xFF, 0x80, 0x01, 0x7F };
  memcpy(copy, f->data, len);
  switch (how % 6) {
  case 0: case 1: case 2: case 3:
    copy[pos] ^= values[how % 4];
    break;
  case 4:
    copy[pos] = 0x80;
    break;
  default:
    copy[pos] = 0x00;
    break;
  }
  core_decode_memory(copy, len, &d, 1);
  ck_assert_msg(d.status == LJP_END || d.status < 0, "%s flip at %zu", path,
                pos);
  ck_assert_msg(d.status != LJP_E_ARG && d.status != LJP_E_IO,
                "%s flip at %zu: %s", path, pos, ljp_status_name(d.status));
  if (d.status < 0)
    ck_assert_msg(d.error_offset <= len, "%s flip at %zu: error offset %llu "
                  "beyond %zu (%s)", path, pos,
                  (unsigned long long)d.error_offset, len, d.error);
  /* records wholly before the flip are decoded as before (an ljs 2 table
   * may hold entries back until it knows its layout) */
  if (!f->ljs2 || pos >= f->ljs_end)
    ck_assert_msg(d.nevents >= intact, "%s flip at %zu: %zu events, the "
                  "first %zu were intact", path, pos, d.nevents, intact);
  for (i = 0; i < intact && i < d.nevents; i++)
    CORE_CHECK(d.prints[i] == f->d.prints[i], "%s flip at %zu: event %zu "
                  "changed", path, pos, i);
  core_decode_clear(&d);
  free(copy);
}

START_TEST(flips)
{
  full f;
  size_t k, n;
  load_full(&f, files[_i]);
  /* headers and the first entries, densely */
  n = f.len < 4096 ? f.len : 4096;
  for (k = 0; k < n; k += head_flip_stride)
    check_flip(&f, k, (uint8_t)k, 4096, files[_i]);
  /* spread over the file, each decoded for 64 KiB after the flip */
  for (k = 0; k < spread_flips; k++) {
    size_t pos = (size_t)((double)f.len * (double)(k + 1) /
                          (double)(spread_flips + 1));
    check_flip(&f, pos, (uint8_t)k, 65536, files[_i]);
  }
  /* a few decoded to the real end */
  check_flip(&f, f.len / 2, 0, 0, files[_i]);
  check_flip(&f, f.len - 1, 5, 0, files[_i]);
  check_flip(&f, f.len - 2, 0, 0, files[_i]);
  free_full(&f);
}
END_TEST

/* Bytes after the epilogue are malformed, at the first extra byte. */
START_TEST(trailing_bytes)
{
  full f;
  uint8_t *copy;
  core_decode d = { 0 };
  load_full(&f, files[_i]);
  copy = malloc(f.len + 1);
  memcpy(copy, f.data, f.len);
  copy[f.len] = 0x00;
  core_decode_memory(copy, f.len + 1, &d, 0);
  ck_assert_msg(d.status == LJP_E_MALFORMED, "%s: %s", files[_i],
                ljp_status_name(d.status));
  ck_assert_uint_eq(d.error_offset, f.len);
  ck_assert_uint_eq(d.nevents, f.d.nevents);
  core_decode_clear(&d);
  free(copy);
  free_full(&f);
}
END_TEST

int main(int argc, char **argv)
{
  Suite *s = suite_create("core_robust");
  TCase *tc;
  SRunner *sr;
  int failed;
  const char *env = getenv("LJP_TEST_CUTS");
  core_set_testdata(argc, argv);
  if (env && atoi(env) > 0)
    spread_cuts = (size_t)atoi(env);
  list_captures("captures");
  list_captures("captures/old");
  if (nfiles == 0) {
    fprintf(stderr, "core_robust: no captures under %s\n", core_testdata);
    return 1;
  }
  qsort(files, (size_t)nfiles, sizeof(files[0]), cmp_str);
  /* Sanitizer builds cut every offset only in one capture per producer
   * era (each old one, the first current memprof and sysprof ones) and
   * every 16th offset in the others: a decode costs ~1 ms there. */
  {
    int i, seen_mp = 0, seen_sp = 0;
    for (i = 0; i < nfiles; i++) {
      const char *base = strrchr(files[i], '/') + 1;
      dense[i] = !CORE_SANITIZED || strncmp(base, "old_", 4) == 0 ||
                 (strncmp(base, "mp_", 3) == 0 && !seen_mp++) ||
                 (strncmp(base, "sp_", 3) == 0 && !seen_sp++);
    }
  }
  tc = tcase_create("cuts");
  tcase_set_timeout(tc, 300);
  tcase_add_loop_test(tc, cuts_head, 0, nfiles);
  tcase_add_loop_test(tc, cuts_spread, 0, nfiles);
  suite_add_tcase(s, tc);
  tc = tcase_create("flips");
  tcase_set_timeout(tc, 300);
  tcase_add_loop_test(tc, flips, 0, nfiles);
  tcase_add_loop_test(tc, trailing_bytes, 0, nfiles);
  suite_add_tcase(s, tc);
  sr = srunner_create(s);
  srunner_run_all(sr, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? 1 : 0;
}
