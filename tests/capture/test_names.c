/*
 * test_names.c — names of the frames the capture core writes: C symbols
 * from separate debug files of stripped objects, Lua-visible names of C
 * functions, builtins by ffid, JIT machine code named as its trace.
 *
 * The capture core's internal interfaces are called directly (the test
 * links the static library).  Names are checked the way a consumer sees
 * them: the symbol events are written with libljp's writer, read back
 * with its reader, and looked up by floor, as profiles resolve them.
 * Each test runs in its own forked process (check's default).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1   /* dl_iterate_phdr, RTLD_DEFAULT */
#endif
#include <check.h>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "capdecode.h"
#include "cap_internal.h"
#include "cap_names.h"
#include "ljp.h"

/* ---- helpers -------------------------------------------------------------- */

/* A sysprof stream in memory: symbol events are written into it, then it
 * is read back and C addresses are resolved as a profile reader does. */
static ljp_writer *stream_new(void)
{
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  ck_assert_ptr_nonnull(w);
  ljp_write_symtab_begin(w, 3, 0);
  ljp_write_symtab_end(w);
  ljp_write_stream_begin(w, LJP_KIND_SYSPROF, 2,
                         (ljp_flavor)ljp_capture_flavor(), 0);
  return w;
}

/* Ends the stream and reads it to its end; the reader's symbol table then
 * holds the final state.  Frees w. */
static size_t copy_len;     /* length of the last stream read */

static ljp_reader *stream_read(ljp_writer *w, uint8_t **copy)
{
  const uint8_t *data;
  size_t len;
  ljp_reader *r;
  const ljp_event *ev;
  ljp_status st;
  ck_assert_int_eq(ljp_write_stream_end(w), LJP_OK);
  data = ljp_writer_data(w, &len);
  *copy = malloc(len);
  ck_assert_ptr_nonnull(*copy);
  memcpy(*copy, data, len);
  copy_len = len;
  ljp_writer_free(w);
  r = ljp_reader_new();
  ck_assert_ptr_nonnull(r);
  ck_assert_int_eq(ljp_reader_open_memory(r, *copy, len), LJP_OK);
  while ((st = ljp_reader_next(r, &ev)) == LJP_OK) {
  }
  ck_assert_int_eq(st, LJP_END);
  return r;
}

/* Mid-stream symbol events in a stream. */
static size_t count_symbol_events(const uint8_t *buf, size_t len)
{
  ljp_reader *r = ljp_reader_new();
  const ljp_event *ev;
  size_t n = 0;
  ck_assert_int_eq(ljp_reader_open_memory(r, buf, len), LJP_OK);
  while (ljp_reader_next(r, &ev) == LJP_OK)
    n += ev->type == LJP_EV_SYMBOL && !ev->u.symbol.initial;
  ljp_reader_free(r);
  return n;
}

/* The name the reader gives addr ("" when none). */
static const char *name_at(const ljp_reader *r, uint64_t addr)
{
  const ljp_symbol *s = ljp_reader_lookup_cfunc(r, addr);
  return s && s->name ? s->name : "";
}

/* Resolves one host address as a profile does: emitted as a return address
 * (is_return) or as the interrupted PC / a function, then looked up by
 * floor. */
static char *resolve(uint64_t addr, int is_return)
{
  ljp_writer *w = stream_new();
  ljp_reader *r;
  uint8_t *copy;
  char *name;
  ck_assert_int_eq(ljp__cap_symbols_emit(w, addr, is_return), LJP_OK);
  r = stream_read(w, &copy);
  /* Readers look host addresses up as they are (no - 1). */
  name = strdup(name_at(r, addr));
  ljp_reader_free(r);
  free(copy);
  return name;
}

static void *open_lib(const char *path)
{
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  ck_assert_msg(h != NULL, "dlopen %s: %s", path, dlerror());
  return h;
}

static uint64_t lib_fn(void *h, int i)
{
  uintptr_t (*fn)(int);
  *(void **)&fn = dlsym(h, "names_dbg_fn");
  ck_assert_ptr_nonnull(*(void **)&fn);
  return (uint64_t)fn(i);
}

/* A file's whole contents (test data only). */
static uint8_t *slurp(const char *path, size_t *len)
{
  FILE *f = fopen(path, "rb");
  uint8_t *p;
  long n;
  ck_assert_msg(f != NULL, "open %s", path);
  fseek(f, 0, SEEK_END);
  n = ftell(f);
  fseek(f, 0, SEEK_SET);
  p = malloc((size_t)n + 1);
  ck_assert_ptr_nonnull(p);
  ck_assert_uint_eq(fread(p, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  *len = (size_t)n;
  return p;
}

static void spit(const char *path, const uint8_t *p, size_t len)
{
  FILE *f = fopen(path, "wb");
  ck_assert_msg(f != NULL, "create %s", path);
  ck_assert_uint_eq(fwrite(p, 1, len, f), len);
  ck_assert_int_eq(fclose(f), 0);
}

/* The build-id of the loaded object whose name contains needle, read from
 * its PT_NOTE segment in memory, as lowercase hex. */
typedef struct bid_ctx {
  const char *needle;
  char hex[129];
} bid_ctx;

static int bid_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
  bid_ctx *c = arg;
  int i;
  (void)size;
  if (!info->dlpi_name || !strstr(info->dlpi_name, c->needle))
    return 0;
  for (i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    const uint8_t *q, *end;
    if (ph->p_type != PT_NOTE)
      continue;
    q = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
    end = q + ph->p_memsz;
    while (q + 12 <= end) {
      const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)q;
      size_t nal = (nh->n_namesz + 3u) & ~3u, dal = (nh->n_descsz + 3u) & ~3u;
      if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4) {
        unsigned k;
        for (k = 0; k < nh->n_descsz && k < 64; k++)
          sprintf(c->hex + 2 * k, "%02x", q[12 + nal + k]);
        return 1;
      }
      q += 12 + nal + dal;
    }
  }
  return 0;
}

static __attribute__((noinline)) unsigned self_static_gamma(unsigned x)
{
  volatile unsigned acc = x;
  for (unsigned i = 0; i < 12; i++)
    acc = acc * 13u + i;
  return acc;
}

/* ---- separate debug files ------------------------------------------------- */

START_TEST(crc32_of_check_string)
{
  /* The CRC-32 check value of "123456789" (zlib, .gnu_debuglink). */
  ck_assert_uint_eq(ljp__cap_crc32(0, (const uint8_t *)"123456789", 9),
                    0xcbf43926u);
  /* Continuation equals one pass. */
  ck_assert_uint_eq(ljp__cap_crc32(ljp__cap_crc32(0, (const uint8_t *)"1234", 4),
                                   (const uint8_t *)"56789", 5),
                    0xcbf43926u);
}
END_TEST

START_TEST(debuglink_names_static_functions)
{
  void *h = open_lib(NAMES_DBG_LINK);
  uint64_t alpha = lib_fn(h, 0), beta = lib_fn(h, 1);
  cap_sym s;
  char *n;
  ck_assert_int_eq(ljp__cap_symbols_init(), 0);
  ck_assert_int_eq(ljp__cap_symbols_lookup(alpha + 4, &s), 1);
  ck_assert_ptr_nonnull(s.name);
  ck_assert_str_eq(s.name, "dbg_static_alpha");
  ck_assert_uint_eq(s.start, alpha);
  ck_assert_uint_gt(s.end, alpha + 4);
  ck_assert_int_eq(ljp__cap_symbols_lookup(beta + 2, &s), 1);
  ck_assert_ptr_nonnull(s.name);
  ck_assert_str_eq(s.name, "dbg_static_beta");
  /* What a profile shows for a return address inside alpha. */
  n = resolve(alpha + 5, 1);
  ck_assert_str_eq(n, "dbg_static_alpha");
  free(n);
  ljp__cap_symbols_free();
  dlclose(h);
}
END_TEST

START_TEST(debuglink_with_wrong_crc_is_ignored)
{
  char dir[] = "/tmp/ljp-names-XXXXXX", lib[256], dbg[256];
  uint8_t *p;
  size_t len;
  void *h;
  cap_sym s;
  ck_assert_ptr_nonnull(mkdtemp(dir));
  snprintf(lib, sizeof lib, "%s/libnames_dbg_link.so", dir);
  snprintf(dbg, sizeof dbg, "%s/libnames_dbg_link.so.debug", dir);
  p = slurp(NAMES_DBG_LINK, &len);
  spit(lib, p, len);
  free(p);
  /* The right debug file with one byte more: same symbols, other CRC. */
  p = slurp(NAMES_DBG_LINK ".debug", &len);
  p[len] = 0;
  spit(dbg, p, len + 1);
  free(p);
  h = open_lib(lib);
  ck_assert_int_eq(ljp__cap_symbols_init(), 0);
  ck_assert_int_eq(ljp__cap_symbols_lookup(lib_fn(h, 0) + 4, &s), 1);
  ck_assert_ptr_null(s.name);
  ck_assert_str_eq(s.module, "libnames_dbg_link.so");
  ljp__cap_symbols_free();
  /* Control: the intact file is taken. */
  p = slurp(NAMES_DBG_LINK ".debug", &len);
  spit(dbg, p, len);
  free(p);
  ck_assert_int_eq(ljp__cap_symbols_init(), 0);
  ck_assert_int_eq(ljp__cap_symbols_lookup(lib_fn(h, 0) + 4, &s), 1);
  ck_assert_ptr_nonnull(s.name);
  ck_assert_str_eq(s.name, "dbg_static_alpha");
  ljp__cap_symbols_free();
  dlclose(h);
  unlink(lib);
  unlink(dbg);
  rmdir(dir);
}
END_TEST

START_TEST(build_id_under_debug_dir)
{
  char dir[] = "/tmp/ljp-names-XXXXXX", sub[256], file[512];
  bid_ctx bc;
  void *h = open_lib(NAMES_DBG_BID);
  uint64_t alpha = lib_fn(h, 0);
  cap_sym s;
  char *n;
  /* No debuglink, nothing under the default roots: no name. */
  unsetenv(CAP_DEBUG_DIR_ENV);
  ck_assert_int_eq(ljp__cap_symbols_init(), 0);
  ck_assert_int_eq(ljp__cap_symbols_lookup(alpha + 4, &s), 1);
  ck_assert_ptr_null(s.name);
  n = resolve(alpha + 4, 0);
  ck_assert_msg(strncmp(n, "libnames_dbg_bid.so+0x", 22) == 0, "%s", n);
  free(n);
  ljp__cap_symbols_free();

  memset(&bc, 0, sizeof bc);
  bc.needle = "libnames_dbg_bid.so";
  ck_assert_int_eq(dl_iterate_phdr(bid_cb, &bc), 1);
  ck_assert_uint_gt(strlen(bc.hex), 8);
  ck_assert_ptr_nonnull(mkdtemp(dir));
  snprintf(sub, sizeof sub, "%s/.build-id", dir);
  ck_assert_int_eq(mkdir(sub, 0700), 0);
  snprintf(sub, sizeof sub, "%s/.build-id/%.2s", dir, bc.hex);
  ck_assert_int_eq(mkdir(sub, 0700), 0);
  snprintf(file, sizeof file, "%s/%s.debug", sub, bc.hex + 2);
  ck_assert_int_eq(symlink(NAMES_DBG_BID ".debug", file), 0);
  /* A list: the first root does not exist. */
  {
    char env[512];
    snprintf(env, sizeof env, "/nonexistent-ljp:%s", dir);
    setenv(CAP_DEBUG_DIR_ENV, env, 1);
  }
  ck_assert_int_eq(ljp__cap_symbols_init(), 0);
  ck_assert_int_eq(ljp__cap_symbols_lookup(alpha + 4, &s), 1);
  ck_assert_ptr_nonnull(s.name);
  ck_assert_str_eq(s.name, "dbg_static_alpha");
  n = resolve(alpha + 4, 0);
  ck_assert_str_eq(n, "dbg_static_alpha");
  free(n);
  ljp__cap_symbols_free();
  unsetenv(CAP_DEBUG_DIR_ENV);
  unlink(file);
  rmdir(sub);
  snprintf(sub, sizeof sub, "%s/.build-id", dir);
  rmdir(sub);
  rmdir(dir);
  dlclose(h);
}
END_TEST

START_TEST(stripped_executable_names_its_statics)
{
  uint64_t g = (uint64_t)(uintptr_t)&self_static_gamma;
  cap_sym s;
  ck_assert_uint_gt(self_static_gamma(3), 0);
  ck_assert_int_eq(ljp__cap_symbols_init(), 0);
  ck_assert_int_eq(ljp__cap_symbols_is_main(g), 1);
  ck_assert_int_eq(ljp__cap_symbols_lookup(g + 3, &s), 1);
  ck_assert_ptr_nonnull(s.name);
  ck_assert_str_eq(s.name, "self_static_gamma");
  ljp__cap_symbols_free();
}
END_TEST

/* Debian's libluajit is stripped and its debug package is not installed
 * here: internal functions keep "object+0xoffset" names. */
START_TEST(stripped_libluajit_keeps_offset_names)
{
  lua_State *L = luaL_newstate();
  uint64_t cf;
  cap_sym s;
  char *n, want[128];
  uint8_t *img;
  size_t len;
  char dbg[4096];
  int has_debug;
  luaL_openlibs(L);
  lua_getglobal(L, "print");
  cf = (uint64_t)(uintptr_t)lua_tocfunction(L, -1);
  lua_pop(L, 1);
  ck_assert_uint_ne(cf, 0);
  ck_assert_int_eq(ljp__cap_symbols_init(), 0);
  ck_assert_int_eq(ljp__cap_symbols_lookup(cf, &s), 1);
  if (ljp__cap_symbols_is_main(cf) || !s.module ||
      strncmp(s.module, "libluajit", 9) != 0) {
    /* LuaJIT linked statically: nothing to check here. */
    ljp__cap_symbols_free();
    lua_close(L);
    return;
  }
  {
    /* The object's own file: is there a debug file after all? */
    Dl_info di;
    ck_assert_int_ne(dladdr((void *)(uintptr_t)cf, &di), 0);
    img = slurp(di.dli_fname, &len);
    has_debug = ljp__cap_debugfile_find(img, len, di.dli_fname, dbg,
                                        sizeof dbg) == 0;
    free(img);
  }
  n = resolve(cf, 0);
  if (has_debug) {
    ck_assert_str_eq(n, "lj_cf_print");
  } else {
    ck_assert_ptr_null(s.name);
    snprintf(want, sizeof want, "%s+0x%" PRIx64, s.module, cf - s.base);
    ck_assert_str_eq(n, want);
  }
  free(n);
  /* Exported functions are still named from .dynsym. */
  n = resolve((uint64_t)(uintptr_t)&lua_pcall, 0);
  ck_assert_str_eq(n, "lua_pcall");
  free(n);
  ljp__cap_symbols_free();
  lua_close(L);
}
END_TEST

/* Debug files' .symtab names versioned symbols "name@@VERSION"; profiles
 * show the plain name either way (libc6-dbg may or may not be installed). */
START_TEST(libc_names_carry_no_symbol_version)
{
  void *f = dlsym(RTLD_DEFAULT, "__libc_start_main");
  char *n;
  ck_assert_ptr_nonnull(f);
  ck_assert_int_eq(ljp__cap_symbols_init(), 0);
  n = resolve((uint64_t)(uintptr_t)f, 0);
  ck_assert_str_eq(n, "__libc_start_main");
  free(n);
  ljp__cap_symbols_free();
}
END_TEST

/* ---- C functions named by where Lua sees them ------------------------------- */

static __attribute__((noinline)) int l_mymod_crc32(lua_State *L)
{
  volatile unsigned acc = 0;
  for (unsigned i = 0; i < 8; i++)
    acc = acc * 33u + i;
  lua_pushinteger(L, (lua_Integer)acc);
  return 1;
}

static int l_twice(lua_State *L)
{
  lua_pushinteger(L, 2);
  return 1;
}

static int l_sub_hash(lua_State *L)
{
  lua_pushinteger(L, 3);
  return 1;
}

static int l_hostlib_fn(lua_State *L)
{
  lua_pushinteger(L, 4);
  return 1;
}

static int l_late_go(lua_State *L)
{
  lua_pushinteger(L, 5);
  return 1;
}

static int l_unreached(lua_State *L)
{
  lua_pushinteger(L, 6);
  return 1;
}

#define CF(f) ((uint64_t)(uintptr_t)&(f))

/* package.loaded.mymod = {crc32, a_name, b_name, a_longer_name (one
 * function), sub = {hash, deeper = {fn}}}; hostlib = {fn} is a global only. */
static lua_State *host_state(void)
{
  lua_State *L = luaL_newstate();
  ck_assert_ptr_nonnull(L);
  luaL_openlibs(L);
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "loaded");
  lua_newtable(L);                      /* mymod */
  lua_pushcfunction(L, l_mymod_crc32);
  lua_setfield(L, -2, "crc32");
  /* One function under three keys: fewest dots, then shortest, then the
   * first in key order wins. */
  lua_pushcfunction(L, l_twice);
  lua_setfield(L, -2, "b_name");
  lua_pushcfunction(L, l_twice);
  lua_setfield(L, -2, "a_name");
  lua_pushcfunction(L, l_twice);
  lua_setfield(L, -2, "a_longer_name");
  lua_newtable(L);                      /* mymod.sub */
  lua_pushcfunction(L, l_sub_hash);
  lua_setfield(L, -2, "hash");
  lua_newtable(L);                      /* mymod.sub.deeper: too deep */
  lua_pushcfunction(L, l_unreached);
  lua_setfield(L, -2, "fn");
  lua_setfield(L, -2, "deeper");
  lua_setfield(L, -2, "sub");
  lua_setfield(L, -2, "mymod");
  lua_pop(L, 2);
  lua_newtable(L);                      /* hostlib: a global, no module */
  lua_pushcfunction(L, l_hostlib_fn);
  lua_setfield(L, -2, "fn");
  lua_setglobal(L, "hostlib");
  return L;
}

static void expect_cname(uint64_t addr, const char *want)
{
  const char *got = ljp__cap_cnames_get(addr);
  if (!want) {
    ck_assert_msg(got == NULL, "unexpected name %s", got);
    return;
  }
  ck_assert_msg(got != NULL, "no name, want %s", want);
  ck_assert_str_eq(got, want);
}

START_TEST(cfunctions_named_by_lua_path)
{
  lua_State *L = host_state();
  uint64_t print_cf;
  lua_getglobal(L, "print");
  print_cf = (uint64_t)(uintptr_t)lua_tocfunction(L, -1);
  lua_pop(L, 1);
  ck_assert_int_eq(ljp__cap_ids_init(L), 0);
  expect_cname(CF(l_mymod_crc32), "mymod.crc32");
  expect_cname(CF(l_twice), "mymod.a_name");
  expect_cname(CF(l_sub_hash), "mymod.sub.hash");
  expect_cname(CF(l_hostlib_fn), "hostlib.fn");
  expect_cname(CF(l_unreached), NULL);
  expect_cname(CF(l_late_go), NULL);
  /* print is a builtin (a fast function with a C body): named by ffid. */
  ck_assert_uint_ne(print_cf, 0);
  expect_cname(print_cf, NULL);
  expect_cname(CF(luaopen_base), NULL);     /* in no table */
  /* string.gmatch's iterator: a new builtin closure per call, named by
   * its builtin name through its C body. */
  ck_assert_int_eq(luaL_dostring(L, "return string.gmatch('a b', '%a')"), 0);
  ck_assert_int_lt(ljp__cap_ids_ffid(lua_topointer(L, -1)), 0);
  expect_cname((uint64_t)(uintptr_t)lua_tocfunction(L, -1), "string.gmatch_aux");
  lua_pop(L, 1);
  ck_assert_int_eq(lua_gettop(L), 0);
  ljp__cap_ids_free();
  expect_cname(CF(l_mymod_crc32), NULL);
  lua_close(L);
}
END_TEST

START_TEST(cfunc_symbol_events_carry_the_lua_name)
{
  lua_State *L = host_state();
  uint64_t crc = CF(l_mymod_crc32);
  cap_sym s;
  ljp_writer *w;
  ljp_reader *r;
  uint8_t *copy;
  ljp__cap_cnames_set_over_elf(1);
  ck_assert_int_eq(ljp__cap_symbols_init(), 0);
  ck_assert_int_eq(ljp__cap_ids_init(L), 0);
  /* The ELF name stays what lookups give. */
  ck_assert_int_eq(ljp__cap_symbols_lookup(crc + 3, &s), 1);
  ck_assert_ptr_nonnull(s.name);
  ck_assert_str_eq(s.name, "l_mymod_crc32");
  ck_assert_uint_eq(s.start, crc);
  w = stream_new();
  /* The CFUNC frame, and a host frame returning into the function. */
  ck_assert_int_eq(ljp__cap_symbols_emit(w, crc, 0), LJP_OK);
  ck_assert_int_eq(ljp__cap_symbols_emit(w, crc + 6, 1), LJP_OK);
  ck_assert_int_eq(ljp__cap_symbols_emit(w, CF(l_hostlib_fn), 0), LJP_OK);
  r = stream_read(w, &copy);
  ck_assert_str_eq(name_at(r, crc), "mymod.crc32");
  ck_assert_str_eq(name_at(r, crc + 5), "mymod.crc32");
  ck_assert_str_eq(name_at(r, CF(l_hostlib_fn)), "hostlib.fn");
  ljp_reader_free(r);
  free(copy);
  ljp__cap_ids_free();
  ljp__cap_symbols_free();
  lua_close(L);
}
END_TEST

/* By default ELF names stay, and the Lua path names the functions that
 * have none: here a static function of a stripped object. */
START_TEST(lua_names_fill_in_for_stripped_functions)
{
  lua_State *L = host_state();
  void *h = open_lib(NAMES_DBG_BID);
  uint64_t alpha = lib_fn(h, 0), crc = CF(l_mymod_crc32);
  ljp_writer *w;
  ljp_reader *r;
  uint8_t *copy;
  char want[64];
  unsetenv(CAP_DEBUG_DIR_ENV);
  ck_assert_int_eq(ljp__cap_cnames_over_elf(), 0);
  /* stripped.alpha = the static function (only its address is used). */
  lua_newtable(L);
  lua_pushcfunction(L, (lua_CFunction)(uintptr_t)alpha);
  lua_setfield(L, -2, "alpha");
  lua_setglobal(L, "stripped");
  ck_assert_int_eq(ljp__cap_symbols_init(), 0);
  ck_assert_int_eq(ljp__cap_ids_init(L), 0);
  expect_cname(alpha, "stripped.alpha");
  w = stream_new();
  ck_assert_int_eq(ljp__cap_symbols_emit(w, alpha, 0), LJP_OK);
  ck_assert_int_eq(ljp__cap_symbols_emit(w, crc, 0), LJP_OK);
  /* Again: nothing new to write. */
  ck_assert_int_eq(ljp__cap_symbols_emit(w, alpha, 0), LJP_OK);
  ck_assert_int_eq(ljp__cap_symbols_emit(w, crc, 0), LJP_OK);
  /* A return address inside keeps its object+offset fallback. */
  ck_assert_int_eq(ljp__cap_symbols_emit(w, alpha + 9, 1), LJP_OK);
  r = stream_read(w, &copy);
  ck_assert_str_eq(name_at(r, alpha), "stripped.alpha");
  ck_assert_str_eq(name_at(r, crc), "l_mymod_crc32");
  {
    cap_sym s;
    ck_assert_int_eq(ljp__cap_symbols_lookup(alpha, &s), 1);
    snprintf(want, sizeof want, "libnames_dbg_bid.so+0x%" PRIx64,
             alpha + 9 - s.base);
  }
  ck_assert_str_eq(name_at(r, alpha + 9), want);
  ljp_reader_free(r);
  /* Three symbol events in all: no repeats. */
  ck_assert_uint_eq(count_symbol_events(copy, copy_len), 3);
  free(copy);
  ljp__cap_ids_free();
  ljp__cap_symbols_free();
  lua_close(L);
  dlclose(h);
}
END_TEST

START_TEST(refresh_names_modules_required_later)
{
  lua_State *L = host_state();
  uint64_t late = CF(l_late_go);
  ljp_writer *w;
  ljp_reader *r;
  uint8_t *copy;
  const ljp_event *ev;
  ljp__cap_cnames_set_over_elf(1);
  ck_assert_int_eq(ljp__cap_symbols_init(), 0);
  ck_assert_int_eq(ljp__cap_ids_init(L), 0);
  /* Nothing missed yet: no rescan. */
  ck_assert_int_eq(ljp__cap_names_refresh(L), 0);
  /* A module appears after start. */
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "loaded");
  lua_newtable(L);
  lua_pushcfunction(L, l_late_go);
  lua_setfield(L, -2, "go");
  lua_setfield(L, -2, "late");
  lua_pop(L, 2);
  w = stream_new();
  /* First sample: the ELF name, and the miss is noted. */
  ck_assert_int_eq(ljp__cap_symbols_emit(w, late, 0), LJP_OK);
  /* Rate limit: too soon after the start's scan. */
  ck_assert_int_eq(ljp__cap_names_refresh(L), 0);
  usleep((CAP_NAMES_REFRESH_MS + 20) * 1000);
  ck_assert_int_eq(ljp__cap_names_refresh(L), 1);
  expect_cname(late, "late.go");
  /* No new miss: no rescan, however long ago the last was. */
  ck_assert_int_eq(ljp__cap_names_refresh(L), 0);
  /* Misses that no rescan can name (interrupted PCs in stripped code):
   * after a fruitless rescan the wait doubles. */
  usleep((CAP_NAMES_REFRESH_MS + 20) * 1000);
  ljp__cap_cnames_miss(0x1111);
  ck_assert_int_eq(ljp__cap_names_refresh(L), 1);
  ljp__cap_cnames_miss(0x2222);
  usleep((CAP_NAMES_REFRESH_MS + 20) * 1000);
  ck_assert_int_eq(ljp__cap_names_refresh(L), 0);
  usleep((CAP_NAMES_REFRESH_MS + 20) * 1000);
  ck_assert_int_eq(ljp__cap_names_refresh(L), 1);
  /* The same address again is no new miss. */
  ljp__cap_cnames_miss(0x2222);
  usleep((4 * CAP_NAMES_REFRESH_MS + 20) * 1000);
  ck_assert_int_eq(ljp__cap_names_refresh(L), 0);
  /* Next sample: written again under the Lua name; then never again. */
  ck_assert_int_eq(ljp__cap_symbols_emit(w, late, 0), LJP_OK);
  ck_assert_int_eq(ljp__cap_symbols_emit(w, late, 0), LJP_OK);
  r = stream_read(w, &copy);
  ck_assert_str_eq(name_at(r, late), "late.go");
  ljp_reader_free(r);
  /* In stream order: the ELF name first, then the Lua name, once each. */
  {
    char *seen[4] = {NULL, NULL, NULL, NULL};
    int n = 0;
    ljp_status st;
    r = ljp_reader_new();
    ck_assert_int_eq(ljp_reader_open_memory(r, copy, copy_len), LJP_OK);
    while ((st = ljp_reader_next(r, &ev)) == LJP_OK)
      if (ev->type == LJP_EV_SYMBOL && ev->u.symbol.sym->addr == late) {
        ck_assert_int_lt(n, 4);
        seen[n++] = strdup(ev->u.symbol.sym->name);
      }
    ck_assert_int_eq(st, LJP_END);
    ck_assert_int_eq(n, 2);
    ck_assert_str_eq(seen[0], "l_late_go");
    ck_assert_str_eq(seen[1], "late.go");
    free(seen[0]);
    free(seen[1]);
    ljp_reader_free(r);
  }
  free(copy);
  ljp__cap_ids_free();
  ljp__cap_symbols_free();
  lua_close(L);
}
END_TEST

/* A whole capture: a static C function of a stripped object, called from
 * Lua as stripped.spin, shows under that name in the decoded samples. */
static size_t mem_writer(const void **data, size_t len, void *ctx)
{
  struct { uint8_t *p; size_t len, cap; } *m = ctx;
  if (m->len + len > m->cap) {
    size_t nc = (m->len + len) * 2;
    uint8_t *np = realloc(m->p, nc);
    ck_assert_ptr_nonnull(np);
    m->p = np;
    m->cap = nc;
  }
  memcpy(m->p + m->len, *data, len);
  m->len += len;
  return len;
}

static int mem_on_stop(void *ctx, uint8_t *buf)
{
  (void)ctx;
  (void)buf;
  return 0;
}

/* sandwich(f): C work, then a call back into Lua, so that the C function
 * is on the Lua stack when the profiler's safe point walks it. */
static __attribute__((noinline)) int l_sandwich(lua_State *L)
{
  volatile unsigned acc = 0;
  for (unsigned i = 0; i < 300000; i++)
    acc = acc * 7u + i;
  lua_pushvalue(L, 1);
  lua_call(L, 0, 0);
  return 0;
}

/* A whole capture with Lua paths over ELF names: the C function shows as
 * mymod.sandwich in the decoded samples, never as l_sandwich. */
START_TEST(profile_names_cfunction_by_lua_path)
{
  static uint8_t hostbuf[16384];
  static const char code[] =
      "local function inner() local x = 0 for i = 1, 3000 do x = x + i end end\n"
      "local t0 = os.clock()\n"
      "while os.clock() - t0 < 0.4 do mymod.sandwich(inner) end\n";
  struct { uint8_t *p; size_t len, cap; } out = {NULL, 0, 0};
  lua_State *L = host_state();
  struct ljp_capture_options o;
  cap_decoded d;
  size_t named, elf;
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "loaded");
  lua_getfield(L, -1, "mymod");
  lua_pushcfunction(L, l_sandwich);
  lua_setfield(L, -2, "sandwich");
  lua_setglobal(L, "mymod");
  lua_pop(L, 2);
  ljp__cap_cnames_set_over_elf(1);
  memset(&o, 0, sizeof o);
  o.mode = LJP_CAPTURE_CALLGRAPH;
  o.interval = 1;
  o.buf = hostbuf;
  o.len = sizeof hostbuf;
  o.ctx = &out;
  o.timer = LJP_CAPTURE_TIMER_THREAD;
  ck_assert_int_eq(ljp_capture_set_writer(mem_writer), LJP_CAPTURE_SUCCESS);
  ck_assert_int_eq(ljp_capture_set_on_stop(mem_on_stop), LJP_CAPTURE_SUCCESS);
  ck_assert_int_eq(ljp_capture_start(L, &o), LJP_CAPTURE_SUCCESS);
  ck_assert_int_eq(luaL_loadbuffer(L, code, sizeof code - 1, "@sw.lua"), 0);
  ck_assert_int_eq(lua_pcall(L, 0, 0, 0), 0);
  ck_assert_int_eq(ljp_capture_stop(L), LJP_CAPTURE_SUCCESS);
  ck_assert_int_eq(cap_decode_memory(out.p, out.len, &d), 0);
  ck_assert_int_eq(d.complete, 1);
  /* Ticks in the C loop and in its Lua callee: the C function under the
   * main chunk (the share of each depends on the build's speed). */
  named = cap_count1(&d, "mymod.sandwich;@sw.lua:0|");
  elf = cap_count1(&d, "l_sandwich");
  ck_assert_msg(named > 10, "%zu samples named, of %" PRIu64, named,
                d.samples);
  ck_assert_uint_eq(elf, 0);
  cap_decoded_free(&d);
  free(out.p);
  lua_close(L);
}
END_TEST

/* ---- builtins by ffid ------------------------------------------------------- */

START_TEST(builtins_are_fast_functions_by_name)
{
  /* (table.remove is Lua code in LuaJIT 2.1: an LFUNC frame.) */
  static const char *const names[] = {
    "table.sort", "string.format", "table.concat", "string.rep", "pairs",
    "ipairs", "coroutine.resume", "coroutine.wrap", "coroutine.yield",
    "pcall", "xpcall", "error", "select", "tostring", "tonumber", "next",
    "math.floor", "math.sqrt", "math.max", "math.random", "string.byte",
    "string.sub", "string.find", "string.gsub", "table.insert",
    "unpack", "type", "print", "setmetatable",
    "rawget", "assert", "io.write", "os.clock", "bit.band",
  };
  static const char *const extra[] = {     /* luajit2 only */
    "table.isempty", "table.nkeys", "thread.exdata", "table.isarray",
    "table.clone",
  };
  lua_State *L = luaL_newstate();
  ljp_flavor fl = (ljp_flavor)ljp_capture_flavor();
  size_t i, nextra = fl == LJP_FLAVOR_OPENRESTY ? 5 : 0;
  char code[256];
  luaL_openlibs(L);
  for (i = 0; i < nextra; i++) {
    /* Required as applications do: the function is the module. */
    snprintf(code, sizeof code, "require('%s')", extra[i]);
    ck_assert_msg(luaL_dostring(L, code) == 0, "%s", code);
  }
  ck_assert_int_eq(ljp__cap_ids_init(L), 0);
  for (i = 0; i < sizeof names / sizeof names[0] + nextra; i++) {
    const char *nm = i < sizeof names / sizeof names[0]
                         ? names[i] : extra[i - sizeof names / sizeof names[0]];
    int ffid;
    const char *got;
    snprintf(code, sizeof code, "return %s", nm);
    if (strncmp(nm, "table.", 6) == 0 || strncmp(nm, "thread.", 7) == 0)
      snprintf(code, sizeof code, "return package.loaded['%s'] or %s", nm, nm);
    ck_assert_int_eq(luaL_dostring(L, code), 0);
    ck_assert_msg(lua_isfunction(L, -1), "%s is no function", nm);
    ffid = ljp__cap_ids_ffid(lua_topointer(L, -1));
    ck_assert_msg(ffid >= 0, "%s not in the builtin map", nm);
    got = ljp_ffname(fl, (unsigned)ffid);
    ck_assert_msg(got && strcmp(got, nm) == 0, "%s: ffid %d is %s", nm,
                  ffid, got ? got : "(none)");
    lua_pop(L, 1);
  }
  /* The iterator ipairs returns lives in no table. */
  ck_assert_int_eq(luaL_dostring(L, "return (ipairs({}))"), 0);
  ck_assert_str_eq(ljp_ffname(fl, (unsigned)ljp__cap_ids_ffid(lua_topointer(L, -1))),
                   "ipairs_aux");
  lua_pop(L, 1);
  ck_assert_str_eq(ljp_ffname(fl, (unsigned)ljp__cap_ids_wrap_ffid()),
                   "coroutine.wrap_aux");
  ljp__cap_ids_free();
  lua_close(L);
}
END_TEST

START_TEST(rescan_adds_builtins_required_later)
{
  lua_State *L = luaL_newstate();
  ljp_flavor fl = (ljp_flavor)ljp_capture_flavor();
  luaL_openlibs(L);
  ck_assert_int_eq(ljp__cap_ids_init(L), 0);
  if (fl == LJP_FLAVOR_OPENRESTY) {
    ck_assert_int_eq(luaL_dostring(L, "return require('table.nkeys')"), 0);
    ck_assert_int_lt(ljp__cap_ids_ffid(lua_topointer(L, -1)), 0);
    ck_assert_int_eq(ljp__cap_ids_rescan(L), 0);
    ck_assert_str_eq(ljp_ffname(fl, (unsigned)ljp__cap_ids_ffid(lua_topointer(L, -1))),
                     "table.nkeys");
  } else {
    /* Stock: table.new is a preloaded builtin module. */
    ck_assert_int_eq(luaL_dostring(L, "return require('table.new')"), 0);
    ck_assert_int_lt(ljp__cap_ids_ffid(lua_topointer(L, -1)), 0);
    ck_assert_int_eq(ljp__cap_ids_rescan(L), 0);
    ck_assert_str_eq(ljp_ffname(fl, (unsigned)ljp__cap_ids_ffid(lua_topointer(L, -1))),
                     "table.new");
  }
  lua_pop(L, 1);
  ljp__cap_ids_free();
  lua_close(L);
}
END_TEST

/* ---- JIT machine code named as its trace -------------------------------------- */

/* Addresses in no loaded object, as JIT machine code is. */
static uint64_t mcode_area(void)
{
  void *p = mmap(NULL, 1 << 16, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ck_assert_ptr_ne(p, MAP_FAILED);
  return (uint64_t)(uintptr_t)p;
}

START_TEST(trace_machine_code_named_as_trace)
{
  uint64_t a = mcode_area(), lo = a + 0x100, hi = a + 0x400;
  uint64_t proto = ljp__cap_ids_lfunc("@a.lua", 10);
  cap_sym s;
  ljp_writer *w;
  ljp_reader *r;
  uint8_t *copy;
  ck_assert_uint_ne(proto, 0);
  ck_assert_int_eq(ljp__cap_symbols_init(), 0);
  ck_assert_int_eq(ljp__cap_symbols_lookup(lo, &s), 0);   /* in no object */
  ck_assert_int_eq(ljp__cap_tracenames_add(7, lo, hi, proto, 12), 0);
  w = stream_new();
  /* A host frame returning into the trace, and a frame after it. */
  ck_assert_int_eq(ljp__cap_symbols_emit(w, lo + 0x40, 1), LJP_OK);
  ck_assert_int_eq(ljp__cap_symbols_emit(w, hi + 0x10, 1), LJP_OK);
  r = stream_read(w, &copy);
  ck_assert_str_eq(name_at(r, lo), "TRACE [7] @a.lua:12");
  ck_assert_str_eq(name_at(r, lo + 0x3f), "TRACE [7] @a.lua:12");
  ck_assert_str_eq(name_at(r, hi - 1), "TRACE [7] @a.lua:12");
  ck_assert_str_eq(name_at(r, hi), CAP_MCODE_END_NAME);
  {
    char want[64];
    snprintf(want, sizeof want, "0x%" PRIx64, hi + 0x10);
    ck_assert_str_eq(name_at(r, hi + 0x10), want);
  }
  ljp_reader_free(r);
  free(copy);
  ljp__cap_symbols_free();
  ljp__cap_ids_free();
  munmap((void *)(uintptr_t)a, 1 << 16);
}
END_TEST

START_TEST(reused_machine_code_is_renamed)
{
  uint64_t a = mcode_area(), x = a + 0x800;
  uint64_t p1 = ljp__cap_ids_lfunc("@a.lua", 10), p2 = ljp__cap_ids_lfunc("@b.lua", 3);
  char raw[64];
  ljp_writer *w;
  ljp_reader *r;
  uint8_t *copy;
  ck_assert_int_eq(ljp__cap_symbols_init(), 0);
  w = stream_new();
  /* A PC met before any trace is known gets its raw address. */
  ck_assert_int_eq(ljp__cap_symbols_emit(w, x, 0), LJP_OK);
  /* Trace 1 covers it: the raw event inside must not shadow the name. */
  ck_assert_int_eq(ljp__cap_tracenames_add(1, x - 0x20, x + 0x40, p1, 11), 0);
  ck_assert_int_eq(ljp__cap_symbols_emit(w, x, 0), LJP_OK);
  ck_assert_int_eq(ljp__cap_symbols_emit(w, x + 8, 1), LJP_OK);
  /* After a flush the area is reused: trace 2 at the start of trace 1's
   * code, trace 3 right after it.  3 is met first; 2's end marker must
   * not hide 3's start. */
  ck_assert_int_eq(ljp__cap_tracenames_add(2, x - 0x20, x, p2, 4), 0);
  ck_assert_int_eq(ljp__cap_tracenames_add(3, x, x + 0x30, p2, 5), 0);
  ck_assert_int_eq(ljp__cap_symbols_emit(w, x + 4, 1), LJP_OK);
  ck_assert_int_eq(ljp__cap_symbols_emit(w, x - 0x10, 0), LJP_OK);
  r = stream_read(w, &copy);
  ck_assert_str_eq(name_at(r, x - 0x20), "TRACE [2] @b.lua:4");
  ck_assert_str_eq(name_at(r, x - 1), "TRACE [2] @b.lua:4");
  ck_assert_str_eq(name_at(r, x), "TRACE [3] @b.lua:5");
  ck_assert_str_eq(name_at(r, x + 0x2f), "TRACE [3] @b.lua:5");
  ck_assert_str_eq(name_at(r, x + 0x30), CAP_MCODE_END_NAME);
  ljp_reader_free(r);
  free(copy);
  /* Trace 1 alone, the first half of that stream: named, raw PC renamed. */
  w = stream_new();
  ljp__cap_symbols_free();
  ck_assert_int_eq(ljp__cap_symbols_init(), 0);
  ck_assert_int_eq(ljp__cap_symbols_emit(w, x, 0), LJP_OK);
  r = stream_read(w, &copy);
  snprintf(raw, sizeof raw, "0x%" PRIx64, x);
  ck_assert_str_eq(name_at(r, x), raw);
  ljp_reader_free(r);
  free(copy);
  w = stream_new();
  ck_assert_int_eq(ljp__cap_symbols_emit(w, x, 0), LJP_OK);
  ck_assert_int_eq(ljp__cap_tracenames_add(1, x - 0x20, x + 0x40, p1, 11), 0);
  ck_assert_int_eq(ljp__cap_symbols_emit(w, x - 4, 0), LJP_OK);
  r = stream_read(w, &copy);
  ck_assert_str_eq(name_at(r, x - 4), "TRACE [1] @a.lua:11");
  ck_assert_str_eq(name_at(r, x + 4), "TRACE [1] @a.lua:11");
  ck_assert_str_eq(name_at(r, x + 0x40), CAP_MCODE_END_NAME);
  ljp_reader_free(r);
  free(copy);
  ljp__cap_symbols_free();
  ljp__cap_ids_free();
  munmap((void *)(uintptr_t)a, 1 << 16);
}
END_TEST

/* Real machine code: a C chain called through the FFI from a compiled
 * loop.  The chain is deeper than the frames the sampler probes for a
 * trace, so the tick keeps its host stack, and the return address into
 * the trace's machine code is a host frame.  The test's own jit.attach
 * handler reports each trace's code, as the capture core's trace handler
 * does. */
static __attribute__((noinline)) int deep_leaf(int n)
{
  /* The sampler does not unwind when a libgcc address lies in the 16 KiB
   * above the stack pointer (its unwinder may hold a lock).  The trace
   * handler's unwind-table lookups leave such words on this very stack,
   * so the leaf covers that window with its own zeroed words. */
  volatile unsigned char pad[32768];
  volatile unsigned acc = (unsigned)n;
  memset((void *)pad, 0, sizeof pad);
  for (unsigned i = 0; i < 20000; i++)
    acc = acc * 7u + i;
  return (int)(acc & 1u) + pad[n & 1023];
}

#define DEEP(name, callee)                                                   \
  static __attribute__((noinline)) int name(int n)                          \
  {                                                                          \
    volatile int r = callee(n + 1);                                          \
    return r + 1;                                                            \
  }
DEEP(deep_5, deep_leaf)
DEEP(deep_4, deep_5)
DEEP(deep_3, deep_4)
DEEP(deep_2, deep_3)
DEEP(deep_1, deep_2)

/* note_trace(traceno, addr, size, chunk, linedefined, line) */
static int l_note_trace(lua_State *L)
{
  uint64_t lo = (uint64_t)lua_tonumber(L, 2);
  uint64_t proto = ljp__cap_ids_lfunc(lua_tostring(L, 4), (int)lua_tointeger(L, 5));
  ljp__cap_tracenames_add((uint32_t)lua_tointeger(L, 1), lo,
                          lo + (uint64_t)lua_tointeger(L, 3), proto,
                          (uint64_t)lua_tointeger(L, 6));
  return 0;
}

START_TEST(profile_names_machine_code_as_trace)
{
  static uint8_t hostbuf[16384];
  static const char setup[] =
      "local jit, ju = require('jit'), require('jit.util')\n"
      "local starts = {}\n"
      "jit.attach(function(what, tr, func, pc)\n"
      "  if what == 'start' then\n"
      "    starts[tr] = ju.funcinfo(func, pc).currentline\n"
      "  elseif what == 'stop' then\n"
      "    local mc, addr = ju.tracemc(tr)\n"
      "    local fi = ju.funcinfo(func)\n"
      "    if mc then note_trace(tr, addr, #mc, fi.source, fi.linedefined,\n"
      "                          starts[tr] or fi.linedefined) end\n"
      "  end\n"
      "end, 'trace')\n";
  static const char code[] =
      "local ffi = require('ffi')\n"
      "local deep = ffi.cast('int (*)(int)', deep_addr)\n"
      "local acc = 0\n"
      "\n"
      "\n"
      "for i = 1, 15000 do acc = acc + deep(i) end\n";
  struct { uint8_t *p; size_t len, cap; } out = {NULL, 0, 0};
  lua_State *L = luaL_newstate();
  struct ljp_capture_options o;
  cap_decoded d;
  size_t named, raw, k;
  luaL_openlibs(L);
  lua_pushcfunction(L, l_note_trace);
  lua_setglobal(L, "note_trace");
  lua_pushnumber(L, (lua_Number)(uintptr_t)&deep_1);
  lua_setglobal(L, "deep_addr");
  memset(&o, 0, sizeof o);
  o.mode = LJP_CAPTURE_CALLGRAPH;
  o.interval = 1;
  o.buf = hostbuf;
  o.len = sizeof hostbuf;
  o.ctx = &out;
  o.timer = LJP_CAPTURE_TIMER_THREAD;
  ck_assert_int_eq(ljp_capture_set_writer(mem_writer), LJP_CAPTURE_SUCCESS);
  ck_assert_int_eq(ljp_capture_set_on_stop(mem_on_stop), LJP_CAPTURE_SUCCESS);
  ck_assert_int_eq(ljp_capture_start(L, &o), LJP_CAPTURE_SUCCESS);
  ck_assert_int_eq(luaL_dostring(L, setup), 0);
  ck_assert_int_eq(luaL_loadbuffer(L, code, sizeof code - 1, "@deep.lua"), 0);
  ck_assert_int_eq(lua_pcall(L, 0, 0, 0), 0);
  ck_assert_int_eq(ljp_capture_stop(L), LJP_CAPTURE_SUCCESS);
  ck_assert_int_eq(cap_decode_memory(out.p, out.len, &d), 0);
  ck_assert_int_eq(d.complete, 1);
  /* The loop's trace starts at line 6 of the main chunk. */
  named = cap_count2(&d, "deep_leaf;deep_5;deep_4;deep_3;deep_2;deep_1;",
                     ";TRACE [");
  raw = 0;
  for (k = 0; k < d.nlines; k++) {
    const char *p = strstr(d.lines[k], "deep_1;");
    if (p && strncmp(p + 7, "0x", 2) == 0)
      raw++;
  }
  ck_assert_msg(named > 20, "%zu samples named, %zu raw, of %" PRIu64,
                named, raw, d.samples);
  ck_assert_uint_eq(raw, 0);
  ck_assert_uint_gt(cap_count1(&d, "deep_1;TRACE [1] @deep.lua:6"), 0);
  cap_decoded_free(&d);
  free(out.p);
  lua_close(L);
}
END_TEST

/* ---- the suite -------------------------------------------------------------- */

static Suite *names_suite(void)
{
  const struct {
    const char *name;
    const TTest *test;
  } tests[] = {
    {"crc32_of_check_string", crc32_of_check_string},
    {"debuglink_names_static_functions", debuglink_names_static_functions},
    {"debuglink_with_wrong_crc_is_ignored", debuglink_with_wrong_crc_is_ignored},
    {"build_id_under_debug_dir", build_id_under_debug_dir},
    {"stripped_executable_names_its_statics", stripped_executable_names_its_statics},
    {"stripped_libluajit_keeps_offset_names", stripped_libluajit_keeps_offset_names},
    {"cfunctions_named_by_lua_path", cfunctions_named_by_lua_path},
    {"cfunc_symbol_events_carry_the_lua_name", cfunc_symbol_events_carry_the_lua_name},
    {"lua_names_fill_in_for_stripped_functions", lua_names_fill_in_for_stripped_functions},
    {"refresh_names_modules_required_later", refresh_names_modules_required_later},
    {"profile_names_cfunction_by_lua_path", profile_names_cfunction_by_lua_path},
    {"libc_names_carry_no_symbol_version", libc_names_carry_no_symbol_version},
    {"profile_names_machine_code_as_trace", profile_names_machine_code_as_trace},
    {"builtins_are_fast_functions_by_name", builtins_are_fast_functions_by_name},
    {"rescan_adds_builtins_required_later", rescan_adds_builtins_required_later},
    {"trace_machine_code_named_as_trace", trace_machine_code_named_as_trace},
    {"reused_machine_code_is_renamed", reused_machine_code_is_renamed},
  };
  Suite *s = suite_create("names");
  size_t i;
  for (i = 0; i < sizeof tests / sizeof tests[0]; i++) {
    TCase *tc = tcase_create(tests[i].name);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, tests[i].test);
    suite_add_tcase(s, tc);
  }
  return s;
}

int main(int argc, char **argv)
{
  SRunner *sr = srunner_create(names_suite());
  int failed;
  srunner_run(sr, NULL, argc > 1 ? argv[1] : NULL, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
