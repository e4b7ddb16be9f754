/* gen_folded — writes a large, deterministic collapsed-stack file for the
 * ljpsvg benchmark: LINES unique stacks of depth 8..DEPTH over a
 * vocabulary of Lua-ish and C-ish frame names, shaped like real profiles
 * (a few hot roots, long shared prefixes, a long tail of rare leaves).
 *   gen_folded LINES DEPTH > big.folded */
#include <stdio.h>
#include <stdlib.h>

static unsigned long long state = 0x9e3779b97f4a7c15ull;

static unsigned next(void)
{
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return (unsigned)(state >> 11);
}

int main(int argc, char **argv)
{
  long lines = argc > 1 ? atol(argv[1]) : 1000000;
  int depth = argc > 2 ? atoi(argv[2]) : 40;
  if (lines <= 0 || depth < 8) {
    fprintf(stderr, "usage: gen_folded LINES DEPTH(>=8)\n");
    return 2;
  }
  /* A walk over a call tree: each stack keeps a prefix of the previous one
   * (mostly long: siblings and cousins) and grows new frames, so lines
   * share prefixes the way real profiles do and come out grouped. */
  unsigned *stack = calloc((size_t)depth, sizeof *stack);
  int len = 4;
  if (!stack)
    return 1;
  for (long i = 0; i < lines; i++) {
    int keep = len - 1 - (int)(next() % 4);
    if (next() % 64 == 0)
      keep = 4 + (int)(next() % 4);     /* now and then a distant branch */
    if (keep < 4)
      keep = 4;
    int d = keep + 1 + (int)(next() % 6);
    if (d > depth)
      d = depth;
    for (int k = keep; k < d; k++) {
      unsigned fan = k < 10 ? 4 : k < 20 ? 16 : 300;
      stack[k] = next() % fan;
    }
    len = d;
    fputs("_start;__libc_start_main;main;lua_pcall", stdout);
    for (int k = 4; k < len; k++) {
      if (k % 5 == 4)
        printf(";lj_BC_FUNCC_%u", stack[k] % 7);
      else
        printf(";@app/module%u.lua:%u", (stack[k] * 7 + (unsigned)k) % 50,
               10 + stack[k]);
    }
    printf(" %u\n", 1 + next() % 20);
  }
  free(stack);
  return 0;
}
