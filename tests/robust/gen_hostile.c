/* gen_hostile.c — writes the streams of hostile.h as files into DIR, for
 * the command-line limit tests.  Usage: gen_hostile DIR */
#include "hostile.h"

#include <stdio.h>

static int put(const char *dir, const char *name, ljp_writer *w) {
  char path[1024];
  size_t n;
  if (!w)
    return 1;
  const uint8_t *p = ljp_writer_data(w, &n);
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  int bad = !f || fwrite(p, 1, n, f) != n;
  if (f && fclose(f) != 0)
    bad = 1;
  ljp_writer_free(w);
  if (bad)
    perror(path);
  return bad;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  int bad = put(argv[1], "huge-string.bin", hostile_huge_string());
  bad |= put(argv[1], "deep-lua.bin", hostile_deep_lua());
  bad |= put(argv[1], "deep-host.bin", hostile_deep_host());
  bad |= put(argv[1], "many-symbols.bin", hostile_many_symbols());
  bad |= put(argv[1], "amplify.bin", hostile_amplify());
  return bad;
}
