/*
 * capcheck — test helper: decodes a capture file and prints a summary line
 *   samples=N complete=0|1 status=S flavor=F ljs=3 ljp=2 undefined=U LFUNC=.. ...
 * then, with -v, one line per sample (see capdecode.h).
 */
#include <stdio.h>
#include <string.h>

#include "capdecode.h"

int main(int argc, char **argv)
{
  cap_decoded d;
  int verbose = argc > 2 && strcmp(argv[1], "-v") == 0;
  const char *path = argv[argc - 1];
  size_t i;
  if (argc < 2) {
    fprintf(stderr, "usage: capcheck [-v] FILE\n");
    return 2;
  }
  cap_decode_file(path, &d);
  printf("samples=%llu complete=%d status=%d flavor=%d ljs=%u ljp=%u "
         "undefined=%llu",
         (unsigned long long)d.samples, d.complete, (int)d.status, d.flavor,
         d.ljs_version, d.ljp_version, (unsigned long long)d.undefined_refs);
  for (i = 0; i < LJP_VMST__MAX; i++)
    printf(" %s=%llu", ljp_vmstate_name((int)i),
           (unsigned long long)d.vmstate[i]);
  printf("\n");
  if (verbose)
    for (i = 0; i < d.nlines; i++)
      printf("%s\n", d.lines[i]);
  cap_decoded_free(&d);
  return 0;
}
