/*
 * replay_main.c — runs a fuzz target over files and directories of inputs
 * without libFuzzer, so the corpus is replayed by ctest in every build (gcc,
 * clang, sanitizers, valgrind).  Usage: replay_TARGET PATH...
 * Exit 0 when every input ran; a crash or abort in the target is the
 * failure.  Files are run in sorted order so a failing input is easy to
 * name: each is printed before it runs when LJP_FUZZ_VERBOSE is set.
 */
#include "fuzz.h"

#include <dirent.h>
#include <string.h>
#include <sys/stat.h>

static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    return -1;
  }
  size_t cap = 4096, len = 0;
  uint8_t *buf = malloc(cap);
  for (;;) {
    if (!buf) {
      fclose(f);
      fprintf(stderr, "%s: out of memory\n", path);
      return -1;
    }
    size_t n = fread(buf + len, 1, cap - len, f);
    len += n;
    if (len < cap)
      break;
    cap *= 2;
    uint8_t *nb = realloc(buf, cap);
    if (!nb)
      free(buf);
    buf = nb;
  }
  int err = ferror(f);
  fclose(f);
  if (err) {
    free(buf);
    fprintf(stderr, "%s: read error\n", path);
    return -1;
  }
  if (getenv("LJP_FUZZ_VERBOSE"))
    fprintf(stderr, "replay %s (%zu bytes)\n", path, len);
  /* An exact-size copy, so reading one byte too far is caught. */
  uint8_t *exact = malloc(len ? len : 1);
  if (!exact) {
    free(buf);
    return -1;
  }
  memcpy(exact, buf, len);
  free(buf);
  LLVMFuzzerTestOneInput(exact, len);
  free(exact);
  return 0;
}

static int cmp_names(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int run_path(const char *path, unsigned long *count) {
  struct stat st;
  if (stat(path, &st) != 0) {
    perror(path);
    return -1;
  }
  if (!S_ISDIR(st.st_mode)) {
    (*count)++;
    return run_file(path);
  }
  DIR *d = opendir(path);
  if (!d) {
    perror(path);
    return -1;
  }
  char **names = NULL;
  size_t n = 0, cap = 0;
  int rc = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.')
      continue;
    if (n == cap) {
      cap = cap ? cap * 2 : 64;
      char **nn = realloc(names, cap * sizeof(*nn));
      if (!nn) {
        rc = -1;
        break;
      }
      names = nn;
    }
    size_t len = strlen(path) + strlen(e->d_name) + 2;
    names[n] = malloc(len);
    if (!names[n]) {
      rc = -1;
      break;
    }
    snprintf(names[n], len, "%s/%s", path, e->d_name);
    n++;
  }
  closedir(d);
  if (n)
    qsort(names, n, sizeof(*names), cmp_names);
  for (size_t i = 0; i < n; i++) {
    if (rc == 0 && run_path(names[i], count) != 0)
      rc = -1;
    free(names[i]);
  }
  free(names);
  return rc;
}

int main(int argc, char **argv) {
  unsigned long count = 0;
  int rc = 0;
  if (argc < 2) {
    fprintf(stderr, "usage: %s FILE-OR-DIRECTORY...\n", argv[0]);
    return 2;
  }
  for (int i = 1; i < argc; i++)
    if (run_path(argv[i], &count) != 0)
      rc = 1;
  if (count == 0) {
    fprintf(stderr, "%s: no inputs found\n", argv[0]);
    return 1;
  }
  printf("%lu inputs replayed\n", count);
  return rc;
}
