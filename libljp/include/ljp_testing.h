/*
 * ljp_testing.h — the encoder's raw primitives, for hand-made fixtures.
 *
 * The tests build deliberately broken streams byte by byte (a string that
 * claims 2^60 bytes, a ULEB128 that never ends, a header no version has).
 * That is no use to a program that writes profiles, so these functions are
 * not part of the public API: this header is not installed and the shared
 * library does not export them.  They are in the static library, which the
 * tests link.
 */
#ifndef LJP_TESTING_H
#define LJP_TESTING_H

#include "ljp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One byte, one ULEB128, one ULEB128 length followed by len bytes of s;
 * the same status rules as the other ljp_write_* calls. */
ljp_status ljp_write_byte(ljp_writer *w, uint8_t b);
ljp_status ljp_write_uleb(ljp_writer *w, uint64_t v);
ljp_status ljp_write_string(ljp_writer *w, const char *s, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* LJP_TESTING_H */
