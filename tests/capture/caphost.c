/* caphost.c — see caphost.h. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "caphost.h"



membuf out;
int on_stop_calls;
uint8_t hostbuf[16384];

size_t mem_writer(const void **data, size_t len, void *ctx)
{
  membuf *m = ctx;
  if (m->fail_after >= 0 && m->calls >= m->fail_after) {
    m->calls++;
    errno = ENOSPC;
    return 0;
  }
  m->calls++;
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

int mem_on_stop(void *ctx, uint8_t *buf)
{
  (void)ctx;
  ck_assert(buf == hostbuf || buf == NULL);
  on_stop_calls++;
  return 0;
}

void reset_out(void)
{
  free(out.p);
  memset(&out, 0, sizeof out);
  out.fail_after = -1;
  on_stop_calls = 0;
  ck_assert_int_eq(ljp_capture_set_writer(mem_writer), LJP_CAPTURE_SUCCESS);
  ck_assert_int_eq(ljp_capture_set_on_stop(mem_on_stop), LJP_CAPTURE_SUCCESS);
  ck_assert_int_eq(ljp_capture_set_backtracer(NULL), LJP_CAPTURE_SUCCESS);
}

struct ljp_capture_options opts(int mode, int timer)
{
  struct ljp_capture_options o;
  memset(&o, 0, sizeof o);
  o.mode = (uint8_t)mode;
  o.interval = 1;
  o.buf = hostbuf;
  o.len = sizeof hostbuf;
  o.ctx = &out;
  o.timer = timer;
  return o;
}

__attribute__((noinline)) void c_spin(double seconds)
{
  struct timespec a, b;
  volatile unsigned x = 0;
  clock_gettime(CLOCK_MONOTONIC, &a);
  do {
    for (int i = 0; i < 1000; i++)
      x += (unsigned)i;
    clock_gettime(CLOCK_MONOTONIC, &b);
  } while ((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9 <
           seconds);
  (void)x;
}

/* sandwich(f): C work, then calls back into Lua. */
int c_sandwich(lua_State *L)
{
  c_spin(0.002);
  lua_pushvalue(L, 1);
  lua_call(L, 0, 0);
  return 0;
}

__attribute__((noinline)) void host_spin(double seconds)
{
  c_spin(seconds);
}

/* churn(n): n host allocations, for ticks that land inside malloc. */
int c_churn(lua_State *L)
{
  int n = (int)luaL_optinteger(L, 1, 100);
  for (int i = 0; i < n; i++) {
    void *p = malloc((size_t)(16 + (i * 37) % 4000));
    if (!p)
      return luaL_error(L, "out of memory");
    ((volatile char *)p)[0] = 1;
    free(p);
  }
  return 0;
}

lua_State *new_state(void)
{
  lua_State *L = luaL_newstate();
  ck_assert_ptr_nonnull(L);
  luaL_openlibs(L);
  lua_register(L, "sandwich", c_sandwich);
  lua_register(L, "churn", c_churn);
  return L;
}

/* noinline: the tests look for it by name on host stacks. */
__attribute__((noinline)) void run(lua_State *L, const char *code,
                                   const char *name)
{
  if (luaL_loadbuffer(L, code, strlen(code), name) != 0 ||
      lua_pcall(L, 0, 0, 0) != 0)
    ck_abort_msg("lua error: %s", lua_tostring(L, -1));
}

void decode_out(cap_decoded *d)
{
  const char *dump = getenv("LJP_CAPTURE_DUMP");
  cap_decode_memory(out.p, out.len, d);
  if (dump) {   /* debugging aid: keep the last stream of the test */
    FILE *f = fopen(dump, "wb");
    if (f) {
      fwrite(out.p, 1, out.len, f);
      fclose(f);
    }
  }
}

/* Report and stream agree, and every tick is accounted for. */
void check_consistent(const cap_decoded *d,
                             const struct ljp_capture_counters *c)
{
  const uint64_t *b = &c->vmst_interp;
  uint64_t sum = 0;
  int i;
  ck_assert_int_eq(d->status, LJP_END);
  ck_assert_int_eq(d->complete, 1);
  ck_assert_uint_eq(d->ljs_version, 3);
  /* ljp x1 by default when the VM's layout is proven, else ljp 2. */
  ck_assert_uint_eq(d->ljp_version, c->vm_reader ? 0x81 : 2);
  if (d->ljp_version == 0x81) {
    ck_assert_uint_eq(d->x1_samples, d->samples);
    ck_assert_uint_eq(d->time_backwards, 0);
  }
  ck_assert_int_eq(d->flavor, ljp_capture_flavor());
  ck_assert_uint_eq(d->undefined_refs, 0);
  ck_assert_uint_eq(d->samples, c->samples);
  for (i = 0; i < LJP_VMST__MAX; i++) {
    ck_assert_uint_eq(d->vmstate[i], b[i]);
    sum += b[i];
  }
  ck_assert_uint_eq(sum, c->samples);
  ck_assert_uint_eq(c->unpaired, 0);
  ck_assert_uint_eq(c->ticks, c->samples + c->dropped);
}

int cap_run_suite(const char *suite, const cap_test *tests, size_t n,
                  int argc, char **argv)
{
  Suite *s = suite_create(suite);
  SRunner *sr;
  size_t i;
  int failed;
  for (i = 0; i < n; i++) {
    TCase *tc = tcase_create(tests[i].name);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, tests[i].test);
    suite_add_tcase(s, tc);
  }
  sr = srunner_create(s);
  srunner_run(sr, NULL, argc > 1 ? argv[1] : NULL, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
