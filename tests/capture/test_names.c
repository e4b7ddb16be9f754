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
#include <sys/stat.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

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
  ljp_writer_free(w);
  r = ljp_reader_new();
  ck_assert_ptr_nonnull(r);
  ck_assert_int_eq(ljp_reader_open_memory(r, *copy, len), LJP_OK);
  while ((st = ljp_reader_next(r, &ev)) == LJP_OK) {
  }
  ck_assert_int_eq(st, LJP_END);
  return r;
}

/* The name the reader gives addr ("" when none). */
static const char *name_at(const ljp_reader *r, uint64_t addr)
{
  const ljp_symbol *s = ljp_reader_lookup_cfunc(r, addr);
  return s && s->name ? s->name : "";
}

/* Resolves one host address as a profile does: emitted as a return address
 * (is_return) or a function entry, then looked up by floor. */
static char *resolve(uint64_t addr, int is_return)
{
  ljp_writer *w = stream_new();
  ljp_reader *r;
  uint8_t *copy;
  char *name;
  ck_assert_int_eq(cap_symbols_emit(w, addr, is_return), LJP_OK);
  r = stream_read(w, &copy);
  name = strdup(name_at(r, is_return ? addr - 1 : addr));
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
  ck_assert_uint_eq(cap_crc32(0, (const uint8_t *)"123456789", 9),
                    0xcbf43926u);
  /* Continuation equals one pass. */
  ck_assert_uint_eq(cap_crc32(cap_crc32(0, (const uint8_t *)"1234", 4),
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
  ck_assert_int_eq(cap_symbols_init(), 0);
  ck_assert_int_eq(cap_symbols_lookup(alpha + 4, &s), 1);
  ck_assert_ptr_nonnull(s.name);
  ck_assert_str_eq(s.name, "dbg_static_alpha");
  ck_assert_uint_eq(s.start, alpha);
  ck_assert_uint_gt(s.end, alpha + 4);
  ck_assert_int_eq(cap_symbols_lookup(beta + 2, &s), 1);
  ck_assert_ptr_nonnull(s.name);
  ck_assert_str_eq(s.name, "dbg_static_beta");
  /* What a profile shows for a return address inside alpha. */
  n = resolve(alpha + 5, 1);
  ck_assert_str_eq(n, "dbg_static_alpha");
  free(n);
  cap_symbols_free();
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
  ck_assert_int_eq(cap_symbols_init(), 0);
  ck_assert_int_eq(cap_symbols_lookup(lib_fn(h, 0) + 4, &s), 1);
  ck_assert_ptr_null(s.name);
  ck_assert_str_eq(s.module, "libnames_dbg_link.so");
  cap_symbols_free();
  /* Control: the intact file is taken. */
  p = slurp(NAMES_DBG_LINK ".debug", &len);
  spit(dbg, p, len);
  free(p);
  ck_assert_int_eq(cap_symbols_init(), 0);
  ck_assert_int_eq(cap_symbols_lookup(lib_fn(h, 0) + 4, &s), 1);
  ck_assert_ptr_nonnull(s.name);
  ck_assert_str_eq(s.name, "dbg_static_alpha");
  cap_symbols_free();
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
  ck_assert_int_eq(cap_symbols_init(), 0);
  ck_assert_int_eq(cap_symbols_lookup(alpha + 4, &s), 1);
  ck_assert_ptr_null(s.name);
  n = resolve(alpha + 4, 0);
  ck_assert_msg(strncmp(n, "libnames_dbg_bid.so+0x", 22) == 0, "%s", n);
  free(n);
  cap_symbols_free();

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
  ck_assert_int_eq(cap_symbols_init(), 0);
  ck_assert_int_eq(cap_symbols_lookup(alpha + 4, &s), 1);
  ck_assert_ptr_nonnull(s.name);
  ck_assert_str_eq(s.name, "dbg_static_alpha");
  n = resolve(alpha + 4, 0);
  ck_assert_str_eq(n, "dbg_static_alpha");
  free(n);
  cap_symbols_free();
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
  ck_assert_int_eq(cap_symbols_init(), 0);
  ck_assert_int_eq(cap_symbols_is_main(g), 1);
  ck_assert_int_eq(cap_symbols_lookup(g + 3, &s), 1);
  ck_assert_ptr_nonnull(s.name);
  ck_assert_str_eq(s.name, "self_static_gamma");
  cap_symbols_free();
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
  ck_assert_int_eq(cap_symbols_init(), 0);
  ck_assert_int_eq(cap_symbols_lookup(cf, &s), 1);
  if (cap_symbols_is_main(cf) || !s.module ||
      strncmp(s.module, "libluajit", 9) != 0) {
    /* LuaJIT linked statically: nothing to check here. */
    cap_symbols_free();
    lua_close(L);
    return;
  }
  {
    /* The object's own file: is there a debug file after all? */
    Dl_info di;
    ck_assert_int_ne(dladdr((void *)(uintptr_t)cf, &di), 0);
    img = slurp(di.dli_fname, &len);
    has_debug = cap_debugfile_find(img, len, di.dli_fname, dbg, sizeof dbg) == 0;
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
  cap_symbols_free();
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
