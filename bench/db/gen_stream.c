/* gen_stream.c — deterministic synthetic sysprof and memprof streams. */
#include "gen_stream.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define NPROTO 256
#define NCFUNC 64
#define NTRACE 16
#define NSTACK 4096
#define LIVE 4096          /* memprof: blocks kept live at once */

static uint32_t rnd(uint32_t *s) {
  /* xorshift32: fast, deterministic, good enough for shapes. */
  uint32_t x = *s;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return *s = x;
}

static int file_sink(void *ctx, const void *data, size_t len) {
  return fwrite(data, 1, len, ctx) == len ? 0 : -1;
}

static uint64_t proto_addr(unsigned i) { return 0x40000000u + i * 0x100u; }
static uint64_t cfunc_addr(unsigned i) { return 0x00400000u + i * 0x1000u; }

static int write_symtab(ljp_writer *w) {
  char name[32];
  int bad = ljp_write_symtab_begin(w, 3, 0) != LJP_OK;
  for (unsigned i = 0; i < NPROTO; i++) {
    int n = snprintf(name, sizeof name, "@gen/mod%u.lua", i % 17);
    bad |= ljp_write_symtab_lfunc(w, proto_addr(i), name, (size_t)n,
                                  10 + i) != LJP_OK;
  }
  for (unsigned i = 0; i < NCFUNC; i++) {
    int n = snprintf(name, sizeof name, "host_func_%u", i);
    bad |= ljp_write_symtab_cfunc(w, cfunc_addr(i), name, (size_t)n) != LJP_OK;
  }
  for (unsigned i = 1; i <= NTRACE; i++)
    bad |= ljp_write_symtab_trace(w, i, 0, proto_addr(i), 20 + i) != LJP_OK;
  bad |= ljp_write_symtab_end(w) != LJP_OK;
  return bad ? -1 : 0;
}

static int write_sysprof(ljp_writer *w, uint64_t n, uint32_t seed,
                         int local) {
  static uint16_t stack_depth[NSTACK];
  static uint16_t stack_proto[NSTACK][14];
  ljp_frame lua[14];
  uint64_t host[8];
  uint32_t s = seed | 1;
  unsigned prev = 0;
  for (unsigned k = 0; k < NSTACK; k++) {
    stack_depth[k] = (uint16_t)(3 + rnd(&s) % 12);
    /* Shared roots, varied leaves: like a real program's call tree. */
    for (unsigned d = 0; d < stack_depth[k]; d++)
      stack_proto[k][d] = (uint16_t)(d < 2 ? d : rnd(&s) % NPROTO);
  }
  if (ljp_write_stream_begin(w, LJP_KIND_SYSPROF, 2, LJP_FLAVOR_TARANTOOL, 0))
    return -1;
  for (uint64_t i = 0; i < n; i++) {
    uint32_t r = rnd(&s);
    ljp_status st;
    if (r % 100 < 5) {
      unsigned t = 1 + r / 100 % NTRACE;
      st = ljp_write_trace_sample(w, t, proto_addr(t), 10 + t);
    } else {
      unsigned k = r / 128 % NSTACK;
      if (local && r % 16 != 0) k = (prev & ~7u) | (r / 128 % 8);
      prev = k;
      unsigned depth = stack_depth[k], nhost = 3;
      int vmstate = r % 100 < 12 ? LJP_VMST_GC
                  : r % 100 < 16 ? LJP_VMST_INTERP : LJP_VMST_LFUNC;
      for (unsigned d = 0; d < depth; d++) {
        unsigned p = stack_proto[k][depth - 1 - d]; /* innermost first */
        memset(&lua[d], 0, sizeof lua[d]);
        lua[d].kind = LJP_FRAME_LUA;
        lua[d].value = proto_addr(p);
        lua[d].line = 10 + p;
      }
      for (unsigned h = 0; h < nhost; h++)
        host[h] = cfunc_addr((h + k) % NCFUNC) + 0x10 * h;
      st = ljp_write_sample(w, vmstate, lua, depth, host, nhost);
    }
    if (st != LJP_OK) return -1;
  }
  return ljp_write_stream_end(w) == LJP_OK ? 0 : -1;
}

static int write_memprof(ljp_writer *w, uint64_t n, uint32_t seed) {
  static uint64_t addr[LIVE], size[LIVE];
  uint32_t s = seed | 1;
  uint64_t next = 0x10000000;
  memset(addr, 0, sizeof addr);
  if (ljp_write_stream_begin(w, LJP_KIND_MEMPROF, 3, LJP_FLAVOR_TARANTOOL, 0))
    return -1;
  for (uint64_t i = 0; i < n; i++) {
    uint32_t r = rnd(&s);
    unsigned slot = r / 7 % LIVE, p = r / 64 % NPROTO;
    ljp_source src = r % 10 < 6 ? LJP_SRC_LFUNC
                   : r % 10 < 8 ? LJP_SRC_INTERNAL
                   : r % 10 < 9 ? LJP_SRC_TRACE : LJP_SRC_CFUNC;
    uint64_t loc = src == LJP_SRC_LFUNC ? proto_addr(p)
                 : src == LJP_SRC_TRACE ? 1 + p % NTRACE
                 : src == LJP_SRC_CFUNC ? cfunc_addr(p % NCFUNC) : 0;
    uint64_t line = src == LJP_SRC_LFUNC ? 10 + p + r % 5 : 0;
    uint64_t sz = 16 + (r >> 20) % 512;
    ljp_status st;
    if (!addr[slot]) {
      addr[slot] = next += 0x400;
      size[slot] = sz;
      st = ljp_write_mem(w, LJP_MEM_ALLOC, src, loc, line, 0, 0, 0, addr[slot],
                         sz);
    } else if (r % 3 == 0) {
      uint64_t na = next += 0x400;
      st = ljp_write_mem(w, LJP_MEM_REALLOC, src, loc, line, 0, addr[slot],
                         size[slot], na, sz);
      addr[slot] = na;
      size[slot] = sz;
    } else {
      st = ljp_write_mem(w, LJP_MEM_FREE, src, loc, line, 0, addr[slot],
                         size[slot], 0, 0);
      addr[slot] = 0;
    }
    if (st != LJP_OK) return -1;
  }
  return ljp_write_stream_end(w) == LJP_OK ? 0 : -1;
}

static int gen(const char *path, ljp_kind kind, uint64_t n, uint32_t seed,
               int local) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  ljp_writer *w = ljp_writer_new(file_sink, f, 1 << 20);
  int rc = -1;
  if (w && write_symtab(w) == 0)
    rc = kind == LJP_KIND_SYSPROF ? write_sysprof(w, n, seed, local)
                                  : write_memprof(w, n, seed);
  if (w && ljp_writer_flush(w) != LJP_OK) rc = -1;
  ljp_writer_free(w);
  if (fclose(f) != 0) rc = -1;
  if (rc && !errno) errno = EIO;
  return rc;
}

int gen_stream(const char *path, ljp_kind kind, uint64_t n, uint32_t seed) {
  return gen(path, kind, n, seed, 0);
}

int gen_sysprof(const char *path, uint64_t n, uint32_t seed, int local) {
  return gen(path, LJP_KIND_SYSPROF, n, seed, local);
}
