#include "core_util.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *core_testdata = LJP_TESTDATA_DEFAULT;

void core_set_testdata(int argc, char **argv)
{
  if (argc > 1 && argv[1][0] != '\0')
    core_testdata = argv[1];
}

uint8_t *core_read_file(const char *path, size_t *len)
{
  FILE *f = fopen(path, "rb");
  uint8_t *buf = NULL;
  size_t cap = 0, n = 0;
  if (!f)
    return NULL;
  for (;;) {
    size_t got;
    if (n == cap) {
      uint8_t *nb;
      cap = cap ? cap * 2 : 65536;
      nb = realloc(buf, cap);
      if (!nb) {
        free(buf);
        fclose(f);
        return NULL;
      }
      buf = nb;
    }
    got = fread(buf + n, 1, cap - n, f);
    n += got;
    if (got == 0)
      break;
  }
  fclose(f);
  /* Exact size, so that any read past the end trips AddressSanitizer. */
  {
    uint8_t *exact = malloc(n ? n : 1);
    if (!exact) {
      free(buf);
      return NULL;
    }
    memcpy(exact, buf, n);
    free(buf);
    *len = n;
    return exact;
  }
}

void core_expect_bytes(const uint8_t *got, size_t got_len,
                       const uint8_t *exp, size_t exp_len)
{
  size_t i, n = got_len < exp_len ? got_len : exp_len;
  for (i = 0; i < n; i++)
    if (got[i] != exp[i])
      ck_abort_msg("byte %zu: got %02X, expected %02X (lengths %zu/%zu)",
                   i, got[i], exp[i], got_len, exp_len);
  ck_assert_msg(got_len == exp_len, "length: got %zu bytes, expected %zu",
                got_len, exp_len);
}
