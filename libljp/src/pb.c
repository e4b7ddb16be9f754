/*
 * pb.c — see pb.h.
 */
#include "pb.h"

#include <stdlib.h>
#include <string.h>

void ljp__pb_init(ljp_pb *b) { memset(b, 0, sizeof(*b)); }

void ljp__pb_free(ljp_pb *b) {
  free(b->data);
  ljp__pb_init(b);
}

void ljp__pb_reset(ljp_pb *b) { b->len = 0; }

static int reserve(ljp_pb *b, size_t n) {
  if (b->oom)
    return -1;
  if (n <= b->cap - b->len)
    return 0;
  if (n > SIZE_MAX / 2 - b->len) {
    b->oom = 1;
    return -1;
  }
  size_t cap = b->cap ? b->cap : 256;
  while (cap - b->len < n)
    cap *= 2;
  uint8_t *nd = realloc(b->data, cap);
  if (!nd) {
    b->oom = 1;
    return -1;
  }
  b->data = nd;
  b->cap = cap;
  return 0;
}

void ljp__pb_raw(ljp_pb *b, const void *p, size_t n) {
  if (n == 0 || reserve(b, n))
    return;
  memcpy(b->data + b->len, p, n);
  b->len += n;
}

void ljp__pb_varint(ljp_pb *b, uint64_t v) {
  uint8_t tmp[10];
  size_t n = 0;
  do {
    uint8_t byte = (uint8_t)(v & 0x7f);
    v >>= 7;
    tmp[n++] = (uint8_t)(byte | (v ? 0x80 : 0));
  } while (v);
  ljp__pb_raw(b, tmp, n);
}

static void tag(ljp_pb *b, unsigned field, unsigned wire) {
  ljp__pb_varint(b, ((uint64_t)field << 3) | wire);
}

void ljp__pb_uint(ljp_pb *b, unsigned field, uint64_t v) {
  tag(b, field, 0);
  ljp__pb_varint(b, v);
}

void ljp__pb_int(ljp_pb *b, unsigned field, int64_t v) {
  ljp__pb_uint(b, field, (uint64_t)v);
}

void ljp__pb_bytes(ljp_pb *b, unsigned field, const void *p, size_t n) {
  tag(b, field, 2);
  ljp__pb_varint(b, n);
  ljp__pb_raw(b, p, n);
}

void ljp__pb_message(ljp_pb *b, unsigned field, const ljp_pb *sub) {
  if (sub->oom)
    b->oom = 1;
  ljp__pb_bytes(b, field, sub->data, sub->len);
}

static size_t varint_len(uint64_t v) {
  size_t n = 1;
  while (v >>= 7)
    n++;
  return n;
}

void ljp__pb_packed_u64(ljp_pb *b, unsigned field, const uint64_t *v,
                       size_t n) {
  if (n == 0)
    return; /* an empty packed field is simply absent */
  size_t len = 0;
  for (size_t i = 0; i < n; i++)
    len += varint_len(v[i]);
  tag(b, field, 2);
  ljp__pb_varint(b, len);
  for (size_t i = 0; i < n; i++)
    ljp__pb_varint(b, v[i]);
}

void ljp__pb_packed_i64(ljp_pb *b, unsigned field, const int64_t *v,
                       size_t n) {
  if (n == 0)
    return;
  size_t len = 0;
  for (size_t i = 0; i < n; i++)
    len += varint_len((uint64_t)v[i]);
  tag(b, field, 2);
  ljp__pb_varint(b, len);
  for (size_t i = 0; i < n; i++)
    ljp__pb_varint(b, (uint64_t)v[i]);
}
