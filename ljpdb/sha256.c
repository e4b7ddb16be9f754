/* sha256.c — FIPS 180-4 SHA-256: portable C, and x86's SHA extensions
 * where the CPU has them (hashing was a third of ljpdb's import time). */
#include "sha256.h"

#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define SHA256_X86 1
#include <cpuid.h>
#include <immintrin.h>
#endif

static const uint32_t K[64] = {
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1,
  0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3,
  0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147,
  0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
  0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208,
  0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void block(uint32_t hs[8], const uint8_t *p) {
  uint32_t w[64], a, b, d, e, f, g, h, cc;
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
           (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
  for (int i = 16; i < 64; i++) {
    uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  a = hs[0]; b = hs[1]; cc = hs[2]; d = hs[3];
  e = hs[4]; f = hs[5]; g = hs[6]; h = hs[7];
  for (int i = 0; i < 64; i++) {
    uint32_t t1 = h + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) +
                  ((e & f) ^ (~e & g)) + K[i] + w[i];
    uint32_t t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) +
                  ((a & b) ^ (a & cc) ^ (b & cc));
    h = g; g = f; f = e; e = d + t1;
    d = cc; cc = b; b = a; a = t1 + t2;
  }
  hs[0] += a; hs[1] += b; hs[2] += cc; hs[3] += d;
  hs[4] += e; hs[5] += f; hs[6] += g; hs[7] += h;
}

static void blocks_portable(uint32_t h[8], const uint8_t *p, size_t n) {
  for (; n; n--, p += 64) block(h, p);
}

#ifdef SHA256_X86
/* The state is kept as ABEF and CDGH, the layout sha256rnds2 works on;
 * each step does four rounds, and the message schedule is extended four
 * words at a time with sha256msg1/msg2. */
__attribute__((target("sha,sse4.1,ssse3")))
static void blocks_shani(uint32_t h[8], const uint8_t *p, size_t n) {
  const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL,
                                       0x0405060700010203LL);
  __m128i tmp = _mm_loadu_si128((const __m128i *)(const void *)&h[0]);
  __m128i st1 = _mm_loadu_si128((const __m128i *)(const void *)&h[4]);
  tmp = _mm_shuffle_epi32(tmp, 0xB1);           /* CDAB */
  st1 = _mm_shuffle_epi32(st1, 0x1B);           /* EFGH */
  __m128i st0 = _mm_alignr_epi8(tmp, st1, 8);   /* ABEF */
  st1 = _mm_blend_epi16(st1, tmp, 0xF0);        /* CDGH */
  for (; n; n--, p += 64) {
    __m128i save0 = st0, save1 = st1, w[4];
    for (int i = 0; i < 16; i++) {
      __m128i cur;
      if (i < 4) {
        cur = _mm_shuffle_epi8(
            _mm_loadu_si128((const __m128i *)(const void *)(p + 16 * i)), bswap);
      } else {
        /* W[i] from W[i-4..i-1]: msg1 does the sigma0 part, the aligned
         * pair brings W[t-7], msg2 the sigma1 part. */
        cur = _mm_sha256msg1_epu32(w[i & 3], w[(i + 1) & 3]);
        cur = _mm_add_epi32(cur, _mm_alignr_epi8(w[(i + 3) & 3],
                                                 w[(i + 2) & 3], 4));
        cur = _mm_sha256msg2_epu32(cur, w[(i + 3) & 3]);
      }
      w[i & 3] = cur;
      __m128i msg = _mm_add_epi32(
          cur, _mm_loadu_si128((const __m128i *)(const void *)&K[4 * i]));
      st1 = _mm_sha256rnds2_epu32(st1, st0, msg);
      msg = _mm_shuffle_epi32(msg, 0x0E);
      st0 = _mm_sha256rnds2_epu32(st0, st1, msg);
    }
    st0 = _mm_add_epi32(st0, save0);
    st1 = _mm_add_epi32(st1, save1);
  }
  tmp = _mm_shuffle_epi32(st0, 0x1B);           /* FEBA */
  st1 = _mm_shuffle_epi32(st1, 0xB1);           /* DCHG */
  st0 = _mm_blend_epi16(tmp, st1, 0xF0);        /* DCBA */
  st1 = _mm_alignr_epi8(st1, tmp, 8);           /* HGFE */
  _mm_storeu_si128((__m128i *)(void *)&h[0], st0);
  _mm_storeu_si128((__m128i *)(void *)&h[4], st1);
}
#endif

int sha256_accelerated(void) {
#ifdef SHA256_X86
  unsigned a, b, c, d;
  /* Leaf 7 EBX bit 29: SHA; leaf 1 ECX bits 19 and 9: SSE4.1, SSSE3. */
  if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 19)) || !(c & (1u << 9)))
    return 0;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d))
    return 0;
  return (b >> 29) & 1;
#else
  return 0;
#endif
}

void sha256_init_portable(sha256_ctx *c) {
  static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372,
                                 0xa54ff53a, 0x510e527f, 0x9b05688c,
                                 0x1f83d9ab, 0x5be0cd19};
  memcpy(c->h, iv, sizeof iv);
  c->len = 0;
  c->fill = 0;
  c->blocks = blocks_portable;
}

void sha256_init(sha256_ctx *c) {
  sha256_init_portable(c);
#ifdef SHA256_X86
  if (sha256_accelerated())
    c->blocks = blocks_shani;
#endif
}

void sha256_update(sha256_ctx *c, const void *data, size_t len) {
  const uint8_t *p = data;
  c->len += len;
  if (c->fill) {
    size_t n = 64 - c->fill < len ? 64 - c->fill : len;
    memcpy(c->buf + c->fill, p, n);
    c->fill += n; p += n; len -= n;
    if (c->fill < 64) return;
    c->blocks(c->h, c->buf, 1);
    c->fill = 0;
  }
  if (len >= 64) {
    c->blocks(c->h, p, len / 64);
    p += len / 64 * 64;
    len %= 64;
  }
  memcpy(c->buf, p, len);
  c->fill = len;
}

void sha256_final(sha256_ctx *c, uint8_t out[32]) {
  uint64_t bits = c->len * 8;
  uint8_t pad[72] = {0x80};
  size_t n = c->fill < 56 ? 56 - c->fill : 120 - c->fill;
  for (int i = 0; i < 8; i++) pad[n + i] = (uint8_t)(bits >> (56 - 8 * i));
  sha256_update(c, pad, n + 8);
  for (int i = 0; i < 8; i++) {
    out[4 * i] = (uint8_t)(c->h[i] >> 24);
    out[4 * i + 1] = (uint8_t)(c->h[i] >> 16);
    out[4 * i + 2] = (uint8_t)(c->h[i] >> 8);
    out[4 * i + 3] = (uint8_t)c->h[i];
  }
}

void sha256_hex(const uint8_t digest[32], char out[65]) {
  static const char hx[] = "0123456789abcdef";
  for (int i = 0; i < 32; i++) {
    out[2 * i] = hx[digest[i] >> 4];
    out[2 * i + 1] = hx[digest[i] & 15];
  }
  out[64] = 0;
}
