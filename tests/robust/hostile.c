/* hostile.c — see hostile.h. */
#include "hostile.h"
#include "ljp_testing.h"

#include <stdlib.h>
#include <string.h>

static void raw_prologue(ljp_writer *w, const char *magic, unsigned version) {
  for (int i = 0; i < 3; i++)
    ljp_write_byte(w, (uint8_t)magic[i]);
  ljp_write_byte(w, (uint8_t)version);
  for (int i = 0; i < 3; i++)
    ljp_write_byte(w, 0);
}

static ljp_writer *done(ljp_writer *w) {
  if (w && ljp_writer_status(w) != LJP_OK) {
    ljp_writer_free(w);
    return NULL;
  }
  return w;
}

ljp_writer *hostile_huge_string(void) {
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  if (!w)
    return NULL;
  raw_prologue(w, "ljs", 3);
  ljp_write_byte(w, 0x00);               /* Lua symbol */
  ljp_write_uleb(w, 0x1000);             /* proto */
  ljp_write_uleb(w, UINT64_C(1) << 60);  /* chunk name: 2^60 bytes... */
  ljp_write_byte(w, '@');                /* ...of which 3 follow */
  ljp_write_byte(w, 'a');
  ljp_write_byte(w, '\n');
  return done(w);
}

static void empty_symtab_and_ljp2(ljp_writer *w) {
  raw_prologue(w, "ljs", 3);
  ljp_write_byte(w, 0x80);
  raw_prologue(w, "ljp", 2);
}

ljp_writer *hostile_deep_lua(void) {
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  if (!w)
    return NULL;
  empty_symtab_and_ljp2(w);
  ljp_write_byte(w, LJP_VMST_LFUNC);
  for (uint32_t i = 0; i < DEEP_LUA_FRAMES; i++) {
    ljp_write_byte(w, 0x03);             /* fast function */
    ljp_write_byte(w, 0x01);             /* ffid 1 */
  }
  ljp_write_byte(w, 0x80);               /* end of Lua stack */
  ljp_write_byte(w, 0x00);               /* empty host stack */
  ljp_write_byte(w, 0x80);               /* epilogue */
  return done(w);
}

ljp_writer *hostile_deep_host(void) {
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  if (!w)
    return NULL;
  empty_symtab_and_ljp2(w);
  ljp_write_byte(w, LJP_VMST_INTERP);
  for (uint32_t i = 0; i < DEEP_HOST_FRAMES; i++)
    ljp_write_uleb(w, 1);
  ljp_write_uleb(w, 0);
  ljp_write_byte(w, 0x80);
  return done(w);
}

/* "@fNN.lua" names: 8 bytes; each entry is 0x00, ULEB proto (2 bytes for
 * 0x1000 + k*8 < 2^14), ULEB length, 8 bytes, ULEB line (1 byte). */
#define SYM_ENTRY_BYTES (1 + 2 + 1 + 8 + 1)

uint64_t hostile_symbol_offset(unsigned k) {
  return 7 + (uint64_t)k * SYM_ENTRY_BYTES;
}

ljp_writer *hostile_many_symbols(void) {
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  if (!w)
    return NULL;
  raw_prologue(w, "ljs", 3);
  for (unsigned k = 0; k < MANY_SYMBOLS; k++) {
    char name[16];
    name[0] = '@';
    name[1] = 'f';
    name[2] = (char)('0' + k / 10 % 10);
    name[3] = (char)('0' + k % 10);
    memcpy(name + 4, ".lua", 4);
    ljp_write_byte(w, 0x00);
    ljp_write_uleb(w, 0x1000 + (uint64_t)k * 8);
    ljp_write_string(w, name, 8);
    ljp_write_uleb(w, k + 1);
  }
  ljp_write_byte(w, 0x80);
  raw_prologue(w, "ljp", 2);
  ljp_write_byte(w, 0x80);
  return done(w);
}

ljp_writer *hostile_amplify(void) {
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  char *name = malloc(AMPLIFY_NAME_LEN);
  if (!w || !name) {
    ljp_writer_free(w);
    free(name);
    return NULL;
  }
  memset(name, 'x', AMPLIFY_NAME_LEN);
  ljp_write_symtab_begin(w, 3, 0);
  ljp_write_symtab_cfunc(w, 0x1000, name, AMPLIFY_NAME_LEN);
  ljp_write_symtab_end(w);
  ljp_write_stream_begin(w, LJP_KIND_SYSPROF, 2, LJP_FLAVOR_TARANTOOL, 0);
  uint64_t *host = malloc(AMPLIFY_DEPTH * sizeof(*host));
  if (host) {
    for (unsigned i = 0; i < AMPLIFY_DEPTH; i++)
      host[i] = 0x1000 + i % 16;  /* distinct addresses, one symbol */
    ljp_write_sample(w, LJP_VMST_INTERP, NULL, 0, host, AMPLIFY_DEPTH);
    free(host);
  }
  ljp_write_stream_end(w);
  free(name);
  return done(w);
}
