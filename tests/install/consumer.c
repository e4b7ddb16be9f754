/* A program using the installed libljp: counts the samples of a profile. */
#include <ljp.h>
#include <stdio.h>

int main(int argc, char **argv) {
  ljp_reader *r = ljp_reader_new();
  if (argc < 2 || !r || ljp_reader_open_path(r, argv[1]) != LJP_OK)
    return 1;
  const ljp_event *ev;
  ljp_status st;
  while ((st = ljp_reader_next(r, &ev)) == LJP_OK)
    ;
  printf("%s %llu\n", ljp_version(),
         (unsigned long long)ljp_reader_counters(r)->samples);
  ljp_reader_free(r);
  return st == LJP_END ? 0 : 1;
}
