/*
 * leb128.c — unsigned LEB128, the only multi-byte number of every stream.
 *
 * The encoder emits the canonical minimal form, exactly as LuaJIT's
 * lj_utils_write_uleb128 does.  The decoder accepts at most 10 bytes (a
 * uint64_t needs 64 bits = 9 * 7 + 1), so a 10th byte may carry only the
 * value 0 or 1 and must end the number; anything else cannot be a uint64_t
 * and no producer writes it.  Non-minimal forms inside 10 bytes ("80 00")
 * are accepted, as the reference reader accepts them.
 */
#include "internal.h"

LJP_API size_t ljp_uleb_encode(uint64_t v, uint8_t out[10])
{
  size_t n = 0;
  while (v >= 0x80) {
    out[n++] = (uint8_t)((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out[n++] = (uint8_t)v;
  return n;
}

LJP_API int ljp_uleb_decode(const uint8_t *p, size_t avail, uint64_t *v)
{
  uint64_t value = 0;
  size_t i;
  for (i = 0; i < avail && i < 10; i++) {
    uint8_t b = p[i];
    if (i == 9) {
      /* Bit 63 is the only room left: payload 0 or 1, no continuation. */
      if ((b & 0x80) || (b & 0x7f) > 1)
        return -1;
      value |= (uint64_t)b << 63;
      if (v)
        *v = value;
      return 10;
    }
    value |= (uint64_t)(b & 0x7f) << (7 * i);
    if (!(b & 0x80)) {
      if (v)
        *v = value;
      return (int)(i + 1);
    }
  }
  return 0; /* the input ended inside the number */
}
