/*
 * fuzz.h — what every fuzz target in this folder shares.
 *
 * Each target defines LLVMFuzzerTestOneInput.  It is linked twice: with
 * libFuzzer (-fsanitize=fuzzer, clang only, LJP_BUILD_FUZZERS=ON) for
 * campaigns, and with replay_main.c into a plain executable that runs the
 * checked-in corpus under ctest, with any compiler and sanitizer.
 *
 * A target reports a broken invariant by abort(): libFuzzer and the replay
 * both treat that as a finding.
 */
#ifndef LJP_FUZZ_H
#define LJP_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Aborts with a message naming the broken invariant. */
#define FUZZ_CHECK(cond)                                                      \
  do {                                                                        \
    if (!(cond)) {                                                            \
      fprintf(stderr, "%s:%d: invariant broken: %s\n", __FILE__, __LINE__,    \
              #cond);                                                         \
      abort();                                                                \
    }                                                                         \
  } while (0)

/* Limits for fuzzing: small enough that one input cannot take the memory
 * budget of a campaign (the defaults allow 2^20-frame stacks of 64 MiB
 * strings), large enough for every seed. */
#define FUZZ_MAX_STRING (1u << 16)
#define FUZZ_MAX_FRAMES (1u << 12)
#define FUZZ_MAX_SYMBOLS (1u << 16)

#endif
