/*
 * hostile.h — streams built to exhaust a naive decoder, written with the
 * encoder's raw primitives (ljp_write_byte / ljp_write_uleb): a string that
 * claims 2^60 bytes, a 10-million-frame stack, a flood of symbols, and a
 * small file whose folded output is huge.  Shared by the library test and
 * the generator the command-line test uses.
 */
#ifndef LJP_TEST_HOSTILE_H
#define LJP_TEST_HOSTILE_H

#include "ljp.h"

#include <stddef.h>
#include <stdint.h>

/* Offsets the tests assert on. */
#define HUGE_STRING_LEN_OFFSET 10      /* "ljs" 3 0 0 0 | 0x00 | proto(2) | len */
#define DEEP_FIRST_FRAME_OFFSET 16     /* ljs(7) 0x80 ljp(7) | 0x01 | frames */
#define DEEP_LUA_FRAMES 10000000u      /* 2 bytes each: 0x03 ffid */
#define DEEP_HOST_FRAMES 2000000u      /* 1 byte each: ULEB128 1 */
#define MANY_SYMBOLS 100u
#define AMPLIFY_NAME_LEN 60000u
#define AMPLIFY_DEPTH 2000u

/* Each returns a memory writer holding the stream (NULL when out of
 * memory); read the bytes with ljp_writer_data(), free with
 * ljp_writer_free(). */
ljp_writer *hostile_huge_string(void);
ljp_writer *hostile_deep_lua(void);
ljp_writer *hostile_deep_host(void);
/* MANY_SYMBOLS distinct Lua symbols in the initial table, then one sample;
 * symbol k (0-based) starts at hostile_symbol_offset(k). */
ljp_writer *hostile_many_symbols(void);
uint64_t hostile_symbol_offset(unsigned k);
/* One C symbol with an AMPLIFY_NAME_LEN-byte name and one host sample
 * AMPLIFY_DEPTH frames deep in it: ~60 KB of input, one 120 MB line of
 * folded output. */
ljp_writer *hostile_amplify(void);

#endif
