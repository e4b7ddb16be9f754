/*
 * pb.h — a minimal protocol-buffers writer for the pprof export.
 *
 * pprof's profile.proto needs only varints, length-delimited bytes and
 * nested messages, so a growing byte buffer with those three encoders is
 * all the export needs; no descriptor, no reflection.  A nested message is
 * written into its own buffer and appended as a length-delimited field,
 * because the length precedes the bytes on the wire.
 */
#ifndef LJP_PB_H
#define LJP_PB_H

#include <stddef.h>
#include <stdint.h>

typedef struct ljp_pb {
  uint8_t *data;
  size_t len, cap;
  int oom;                 /* sticky: a write failed for lack of memory */
} ljp_pb;

void ljp__pb_init(ljp_pb *b);
void ljp__pb_free(ljp_pb *b);
/* Forgets the contents, keeps the memory (and clears nothing else). */
void ljp__pb_reset(ljp_pb *b);

void ljp__pb_raw(ljp_pb *b, const void *p, size_t n);
void ljp__pb_varint(ljp_pb *b, uint64_t v);
/* Field writers (wire types 0 and 2).  int64 values are written as their
 * two's complement, as protobuf's int64 requires (ten bytes when negative). */
void ljp__pb_uint(ljp_pb *b, unsigned field, uint64_t v);
void ljp__pb_int(ljp_pb *b, unsigned field, int64_t v);
void ljp__pb_bytes(ljp_pb *b, unsigned field, const void *p, size_t n);
/* Appends sub's bytes as a nested message in field. */
void ljp__pb_message(ljp_pb *b, unsigned field, const ljp_pb *sub);
/* Packed repeated varints (proto3's default for repeated scalars). */
void ljp__pb_packed_u64(ljp_pb *b, unsigned field, const uint64_t *v,
                       size_t n);
void ljp__pb_packed_i64(ljp_pb *b, unsigned field, const int64_t *v,
                       size_t n);

#endif
