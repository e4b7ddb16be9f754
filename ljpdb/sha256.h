/*
 * sha256.h — SHA-256 (FIPS 180-4) for the content hash of imported files.
 *
 * The profiles table identifies a file by the hash of its bytes, so importing
 * the same capture twice (under another name, or from stdin) is detected.
 * SHA-256 because index.tsv of the bundled captures and sha256sum(1) use it:
 * a user can match a row against either by eye.
 */
#ifndef LJPDB_SHA256_H
#define LJPDB_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct sha256_ctx {
  uint32_t h[8];
  uint64_t len;            /* bytes hashed so far */
  uint8_t buf[64];
  size_t fill;
  /* Compresses n 64-byte blocks: the portable code, or x86's SHA
   * extensions when the CPU has them (chosen by sha256_init). */
  void (*blocks)(uint32_t h[8], const uint8_t *p, size_t n);
} sha256_ctx;

void sha256_init(sha256_ctx *c);
/* As sha256_init, always with the portable code (for tests). */
void sha256_init_portable(sha256_ctx *c);
/* Whether sha256_init picks the SHA extensions on this CPU. */
int sha256_accelerated(void);
void sha256_update(sha256_ctx *c, const void *data, size_t len);
void sha256_final(sha256_ctx *c, uint8_t out[32]);
/* Lower-case hex of a digest: 64 characters and a NUL. */
void sha256_hex(const uint8_t digest[32], char out[65]);

#endif
