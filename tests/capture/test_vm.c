/*
 * test_vm.c — the VM-structure reader (cap_vm.c) against a LuaJIT that
 * this host embeds: the probe on the running build, then walks taken in
 * the test's own SIGPROF handler (ITIMER_PROF, 1 ms) while known Lua code
 * runs, compared with the frame chain that code must have.
 *
 * The shares asserted (95 %) leave room for the few ticks that land in
 * the middle of a call or return, where the chain is legitimately one
 * frame off; the counts are printed for the record.  The minimum sample
 * counts allow for a kernel whose profiling timer ticks at 100 Hz.
 */
#define _GNU_SOURCE 1

#include <check.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include <lauxlib.h>
#include <lua.h>
#include <luajit.h>
#include <lualib.h>

#include "cap_vm.h"
#include "ljp.h"

/* ---- sampling ----------------------------------------------------------- */

#define MAXS 6000
#define MAXF 16

typedef struct sample {
  cap_vm_info info;
  uint32_t n;
  int faulted;
  cap_vm_frame fr[MAXF];
} sample;

static cap_vm vm;
static sample samples[MAXS];
static volatile sig_atomic_t nsamp;
static sigjmp_buf guard;
static volatile sig_atomic_t guarded;

static void on_fault(int sig, siginfo_t *si, void *uc)
{
  (void)si; (void)uc;
  if (guarded)
    siglongjmp(guard, 1);
  signal(sig, SIG_DFL);
  raise(sig);
}

static void on_prof(int sig, siginfo_t *si, void *uc)
{
  int e = errno;
  (void)sig; (void)si;
  if (nsamp < MAXS) {
    sample *s = &samples[nsamp];
    s->faulted = 0;
    guarded = 1;
    if (sigsetjmp(guard, 1) == 0) {
      s->n = ljp__cap_vm_walk(&vm, uc, &s->info, s->fr, MAXF);
    } else {
      s->faulted = 1;
      s->n = s->info.nframes;
    }
    guarded = 0;
    nsamp++;
  }
  errno = e;
}

static void guard_faults(void)
{
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_fault;
  sa.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigemptyset(&sa.sa_mask);
  ck_assert_int_eq(sigaction(SIGSEGV, &sa, NULL), 0);
  ck_assert_int_eq(sigaction(SIGBUS, &sa, NULL), 0);
}

static void sampling(int on)
{
  struct itimerval it;
  memset(&it, 0, sizeof it);
  if (on) {
    struct sigaction sa;
    guard_faults();
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    sa.sa_sigaction = on_prof;
    sa.sa_flags = SA_SIGINFO | SA_RESTART;
    ck_assert_int_eq(sigaction(SIGPROF, &sa, NULL), 0);
    nsamp = 0;
    it.it_interval.tv_usec = 1000;
    it.it_value.tv_usec = 1000;
  }
  ck_assert_int_eq(setitimer(ITIMER_PROF, &it, NULL), 0);
}

/* ---- host helpers ------------------------------------------------------- */

/* cburn(seconds): CPU time spent in C, called from Lua. */
static __attribute__((noinline)) int cburn(lua_State *L)
{
  double budget = luaL_checknumber(L, 1);
  struct timespec a, b;
  volatile unsigned x = 0;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
  do {
    for (int i = 0; i < 10000; i++)
      x += (unsigned)i;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
  } while ((double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9 <
           budget);
  lua_pushinteger(L, (lua_Integer)x);
  return 1;
}

static lua_State *new_state(void)
{
  lua_State *L = luaL_newstate();
  char err[256];
  ck_assert_ptr_nonnull(L);
  luaL_openlibs(L);
  lua_register(L, "cburn", cburn);
  if (ljp__cap_vm_probe(L, &vm, err, sizeof err) != 0)
    ck_abort_msg("probe failed: %s", err);
  /* Protos and chunk names are read after the run: keep them. */
  lua_gc(L, LUA_GCSTOP, 0);
  return L;
}

static void run(lua_State *L, const char *code, const char *name)
{
  if (luaL_loadbuffer(L, code, strlen(code), name) != 0 ||
      lua_pcall(L, 0, 0, 0) != 0)
    ck_abort_msg("lua error: %s", lua_tostring(L, -1));
}

/* Loads code as chunk name (kept on the stack, so that its protos stay),
 * then runs it under the sampler with argument budget (seconds). */
static void sample_run(lua_State *L, const char *code, const char *name,
                       double budget)
{
  if (luaL_loadbuffer(L, code, strlen(code), name) != 0)
    ck_abort_msg("lua error: %s", lua_tostring(L, -1));
  lua_pushvalue(L, -1);
  lua_pushnumber(L, budget);
  sampling(1);
  if (lua_pcall(L, 1, 0, 0) != 0)
    ck_abort_msg("lua error: %s", lua_tostring(L, -1));
  sampling(0);
}

static int lua_int(lua_State *L, const char *expr)
{
  int r;
  if (luaL_loadstring(L, expr) != 0 || lua_pcall(L, 0, 1, 0) != 0)
    ck_abort_msg("lua error: %s", lua_tostring(L, -1));
  r = (int)lua_tointeger(L, -1);
  lua_pop(L, 1);
  return r;
}

/* Expected frame: kind, then firstline (LUA), ffid (FFUNC) or address
 * (CFUNC); CBOUND matches any C frame address. */
typedef struct want {
  int kind;
  uint64_t v;
} want;

static int chunk_is(const cap_vm_frame *f, const char *name)
{
  size_t len;
  const char *s = ljp__cap_vm_str(&vm, f->chunk, 256, &len);
  return s && len == strlen(name) && memcmp(s, name, len) == 0;
}

static int frame_is(const cap_vm_frame *f, const want *w, const char *chunk)
{
  if (f->kind != w->kind)
    return 0;
  switch (w->kind) {
  case CAP_VMF_LUA: return f->firstline == w->v && chunk_is(f, chunk);
  case CAP_VMF_FFUNC: return f->ffid == w->v;
  case CAP_VMF_CFUNC: return f->addr == w->v;
  default: return 1;
  }
}

static int chain_is(const sample *s, const want *w, int nw, const char *chunk)
{
  int i;
  if (s->faulted || s->info.status != CAP_VMS_OK || s->n != (uint32_t)nw)
    return 0;
  for (i = 0; i < nw; i++)
    if (!frame_is(&s->fr[i], &w[i], chunk))
      return 0;
  return 1;
}

typedef struct tally {
  int total, selected, match, rejected, faulted, truncated;
} tally;

static void count_bad(tally *t)
{
  int i;
  t->total = nsamp;
  for (i = 0; i < nsamp; i++) {
    t->rejected += samples[i].info.status == CAP_VMS_REJECTED;
    t->truncated += samples[i].info.status == CAP_VMS_TRUNCATED;
    t->faulted += samples[i].faulted;
  }
}

static void report(const char *what, const tally *t)
{
  fprintf(stderr, "test_vm %s: %d samples, %d selected, %d match (%.1f %%), "
          "%d rejected, %d faulted, %d truncated\n", what, t->total, t->selected,
          t->match, t->selected ? 100.0 * t->match / t->selected : 0.0,
          t->rejected, t->faulted, t->truncated);
}

static void assert_share(const char *what, const tally *t, int min_selected)
{
  report(what, t);
  ck_assert_msg(t->selected >= min_selected, "%s: only %d samples selected",
                what, t->selected);
  ck_assert_msg(t->match * 100 >= t->selected * 95, "%s: %d of %d match",
                what, t->match, t->selected);
  /* A rejected or faulted walk is a tick caught mid-update: rare. */
  ck_assert_msg((t->rejected + t->faulted) * 100 <= t->total * 5,
                "%s: %d rejected, %d faulted of %d", what, t->rejected,
                t->faulted, t->total);
}

/* ---- tests -------------------------------------------------------------- */

START_TEST(probe_detects_build)
{
  lua_State *L = new_state();
  ck_assert_int_eq(vm.ok, 1);
  ck_assert_int_eq(vm.gc64, lua_int(L, "return require('ffi').abi('gc64') and 1 or 0"));
#ifdef OPENRESTY_LUAJIT
  ck_assert_int_eq(vm.flavor, LJP_FLAVOR_OPENRESTY);
#else
  ck_assert_int_eq(vm.flavor, LJP_FLAVOR_LUAJIT);
#endif
  ck_assert_uint_ne(vm.g, 0);
  /* The interpreter's machine code (16 KiB on x86-64 GC64), found by
   * its FDE. */
  ck_assert_uint_gt(vm.interp_hi - vm.interp_lo, 8192);
  ck_assert_uint_lt(vm.interp_hi - vm.interp_lo, 1u << 22);
  fprintf(stderr, "test_vm probe: gc64 %d flavor %d interpreter %#llx..%#llx\n",
          vm.gc64, vm.flavor, (unsigned long long)vm.interp_lo,
          (unsigned long long)vm.interp_hi);
  lua_close(L);
}
END_TEST

/* reprobe(): ljp__cap_vm_probe from Lua code (a module's situation); returns
 * true or false and the message. */
static int reprobe(lua_State *L)
{
  cap_vm again;
  char err[256];
  int r = ljp__cap_vm_probe(L, &again, err, sizeof err);
  lua_pushboolean(L, r == 0 && again.ok && again.g == vm.g &&
                     again.interp_lo == vm.interp_lo);
  lua_pushstring(L, err);
  return 2;
}

START_TEST(probe_from_lua_and_coroutines)
{
  lua_State *L = new_state();
  lua_register(L, "reprobe", reprobe);
  run(L, "local function check(ok, msg) if not ok then error(msg, 0) end end\n"
         "check(reprobe())\n"
         "check(select(2, pcall(reprobe)))\n"
         "check(coroutine.wrap(function() return reprobe() end)())\n"
         "jit.off() check(reprobe())\n", "=reprobe");
  lua_close(L);
}
END_TEST

START_TEST(walk_outside_lua_reads_nothing)
{
  lua_State *L = new_state();
  cap_vm_frame fr[4];
  cap_vm_info info;
  cap_vm none;
  ck_assert_uint_eq(ljp__cap_vm_walk(&vm, NULL, &info, fr, 4), 0);
  ck_assert_uint_eq(info.status, CAP_VMS_NOLUA);
  ck_assert_uint_eq(info.L, (uint64_t)(uintptr_t)L);
  memset(&none, 0, sizeof none);
  ck_assert_uint_eq(ljp__cap_vm_walk(&none, NULL, &info, fr, 4), 0);
  ck_assert_uint_eq(info.status, CAP_VMS_NOLUA);
  lua_close(L);
}
END_TEST

/* vmstr(): the chunk name of the calling Lua function, through the walk
 * and ljp__cap_vm_str, bounded at 4 bytes and in full. */
static int vmstr(lua_State *L)
{
  cap_vm_frame fr[8];
  cap_vm_info info;
  size_t len;
  const char *s;
  uint32_t n = ljp__cap_vm_walk(&vm, NULL, &info, fr, 8);
  ck_assert_uint_ge(n, 2);
  ck_assert_uint_eq(info.nframes, n);
  ck_assert_int_eq(fr[1].kind, CAP_VMF_LUA);
  s = ljp__cap_vm_str(&vm, fr[1].chunk, 4, &len);
  ck_assert_ptr_nonnull(s);
  ck_assert_uint_eq(len, 4);
  ck_assert_int_eq(memcmp(s, "=str", 4), 0);
  s = ljp__cap_vm_str(&vm, fr[1].chunk, 100, &len);
  ck_assert_uint_eq(len, strlen("=strchunk"));
  ck_assert_int_eq(memcmp(s, "=strchunk", len), 0);
  /* A table is no string. */
  lua_newtable(L);
  ck_assert_ptr_null(ljp__cap_vm_str(&vm, (uint64_t)(uintptr_t)lua_topointer(L, -1),
                                     100, &len));
  /* A walk cut at two frames says so. */
  ck_assert_uint_eq(ljp__cap_vm_walk(&vm, NULL, &info, fr, 2), 2);
  ck_assert_uint_eq(info.status, CAP_VMS_TRUNCATED);
  return 0;
}

START_TEST(str_reads_chunk_names)
{
  lua_State *L = new_state();
  lua_register(L, "vmstr", vmstr);
  run(L, "local function f() vmstr() return 1 end f()", "=strchunk");
  lua_close(L);
}
END_TEST

/* A VM made up in the test's memory: a global_State, a lua_State and a
 * stack holding one C function's frame with link `link`, in the probed
 * layout (GC64). */
static struct {
  _Alignas(16) uint8_t g[1024];
  _Alignas(16) uint8_t L[256];
  _Alignas(16) uint8_t fn[128];
  _Alignas(16) uint64_t stack[64];
} fake;

static void fake_vm(cap_vm *fv, uint64_t link)
{
  uint64_t g = (uint64_t)(uintptr_t)fake.g, L = (uint64_t)(uintptr_t)fake.L;
  uint64_t fn = (uint64_t)(uintptr_t)fake.fn, st = (uint64_t)(uintptr_t)fake.stack;
  uint64_t v;
  int32_t vms = CAP_VMST_C;
  lua_CFunction cf = cburn;
  memset(&fake, 0, sizeof fake);
  *fv = vm;
  fv->g = g;
  fv->interp_lo = fv->interp_hi = 0;
  memcpy(fake.g + vm.off_g_vmstate, &vms, 4);
  memcpy(fake.g + vm.off_g_cur_L, &L, 8);
  fake.L[vm.off_gct] = 6;                    /* thread */
  memcpy(fake.L + vm.off_L_glref, &g, 8);
  memcpy(fake.L + vm.off_L_stack, &st, 8);
  v = st + 60 * 8;
  memcpy(fake.L + vm.off_L_maxstack, &v, 8);
  v = st + 4 * 8;                            /* base: slot 4 */
  memcpy(fake.L + vm.off_L_base, &v, 8);
  fake.fn[vm.off_gct] = 8;                   /* function */
  fake.fn[vm.off_fn_ffid] = 1;               /* a lua_CFunction */
  memcpy(fake.fn + vm.off_fn_cf, &cf, sizeof cf);
  fake.stack[2] = (UINT64_C(0x1fff7) << 47) | fn;   /* itype -9: function */
  fake.stack[3] = link;
}

static uint32_t fake_walk(const cap_vm *fv, cap_vm_info *info, cap_vm_frame *fr,
                          int *faulted)
{
  volatile uint32_t n = 0;
  guard_faults();
  *faulted = 0;
  guarded = 1;
  if (sigsetjmp(guard, 1) == 0) {
    n = ljp__cap_vm_walk(fv, NULL, info, fr, MAXF);
  } else {
    *faulted = 1;
    n = info->nframes;
  }
  guarded = 0;
  return n;
}

START_TEST(made_up_stacks)
{
  lua_State *L = new_state();
  cap_vm fv;
  cap_vm_info info;
  cap_vm_frame fr[MAXF];
  int faulted;
  uint32_t n;
  if (!vm.gc64) {   /* the test's memory is not below 4 GiB */
    lua_close(L);
    return;
  }
  /* A C frame called from C (FRAME_CP) whose delta reaches the bottom. */
  fake_vm(&fv, 16 | 5);
  n = fake_walk(&fv, &info, fr, &faulted);
  ck_assert_int_eq(faulted, 0);
  ck_assert_uint_eq(info.status, CAP_VMS_OK);
  ck_assert_uint_eq(n, 2);
  ck_assert_int_eq(fr[0].kind, CAP_VMF_CFUNC);
  ck_assert_uint_eq(fr[0].addr, (uint64_t)(uintptr_t)cburn);
  ck_assert_int_eq(fr[1].kind, CAP_VMF_CBOUND);
  ck_assert_uint_eq(fr[1].addr, 0);          /* no C frame chain */
  /* A delta past the bottom of the stack. */
  fake_vm(&fv, 24 | 5);
  n = fake_walk(&fv, &info, fr, &faulted);
  ck_assert_int_eq(faulted, 0);
  ck_assert_uint_eq(info.status, CAP_VMS_REJECTED);
  ck_assert_uint_eq(n, 2);
  /* A frame that links to itself. */
  fake_vm(&fv, 0 | 1);
  n = fake_walk(&fv, &info, fr, &faulted);
  ck_assert_uint_eq(info.status, CAP_VMS_REJECTED);
  /* A function slot that holds no function. */
  fake_vm(&fv, 16 | 5);
  fake.stack[2] = UINT64_C(0x4045000000000000);   /* 42.0 */
  n = fake_walk(&fv, &info, fr, &faulted);
  ck_assert_uint_eq(info.status, CAP_VMS_REJECTED);
  ck_assert_uint_eq(n, 0);
  /* A return PC into unmapped memory: the walk faults after the first
   * frame and says how many it wrote. */
  fake_vm(&fv, 0x8000);
  n = fake_walk(&fv, &info, fr, &faulted);
  ck_assert_int_eq(faulted, 1);
  ck_assert_uint_eq(n, 1);
  ck_assert_int_eq(fr[0].kind, CAP_VMF_CFUNC);
  /* cur_L that is no thread. */
  fake_vm(&fv, 16 | 5);
  fake.L[vm.off_gct] = 8;
  n = fake_walk(&fv, &info, fr, &faulted);
  ck_assert_uint_eq(n, 0);
  ck_assert_uint_eq(info.status, CAP_VMS_NOLUA);
  lua_close(L);
}
END_TEST

static const char burn_lua[] =
  "local budget, n = ...\n"
  "local function burn(n) local x = 0 for i = 1, n do x = x + i % 7 end return x end\n"
  "local function mid(n) local r = burn(n) return r end\n"
  "local function outer(n) local r = mid(n) return r end\n"
  "local t0 = os.clock()\n"
  "repeat outer(n) until os.clock() - t0 > budget\n";

static const want burn_chain[] = {
  {CAP_VMF_LUA, 2}, {CAP_VMF_LUA, 3}, {CAP_VMF_LUA, 4}, {CAP_VMF_LUA, 0},
  {CAP_VMF_CBOUND, 0}
};

static void burn_run(lua_State *L, double budget, int n)
{
  ck_assert_int_eq(luaL_loadbuffer(L, burn_lua, sizeof burn_lua - 1, "@vmtest.lua"), 0);
  lua_pushvalue(L, -1);
  lua_pushnumber(L, budget);
  lua_pushinteger(L, n);
  sampling(1);
  if (lua_pcall(L, 2, 0, 0) != 0)
    ck_abort_msg("lua error: %s", lua_tostring(L, -1));
  sampling(0);
}

START_TEST(interpreter_chain_at_the_signal)
{
  lua_State *L = new_state();
  tally t = {0};
  int i;
  run(L, "jit.off()", "=off");
  burn_run(L, 0.6, 2000000);
  count_bad(&t);
  for (i = 0; i < nsamp; i++) {
    if (samples[i].info.vmstate != CAP_VMST_INTERP)
      continue;
    t.selected++;
    t.match += chain_is(&samples[i], burn_chain, 5, "@vmtest.lua");
  }
  assert_share("interpreter", &t, 40);
  lua_close(L);
}
END_TEST

START_TEST(trace_chain_at_the_signal)
{
  lua_State *L = new_state();
  tally t = {0};
  int i;
  run(L, "jit.on() jit.flush()", "=on");
  burn_run(L, 0.6, 20000000);
  count_bad(&t);
  for (i = 0; i < nsamp; i++) {
    if (samples[i].info.vmstate < 0)
      continue;
    t.selected++;
    t.match += chain_is(&samples[i], burn_chain, 5, "@vmtest.lua");
  }
  assert_share("trace", &t, 40);
  lua_close(L);
}
END_TEST

static const char cburn_lua[] =
  "local budget = ...\n"
  "local function cmid(b) local r = cburn(b) return r end\n"
  "cmid(budget)\n";

START_TEST(c_function_innermost_in_c_state)
{
  lua_State *L = new_state();
  tally t = {0};
  const want w[] = {
    {CAP_VMF_CFUNC, (uint64_t)(uintptr_t)cburn}, {CAP_VMF_LUA, 2},
    {CAP_VMF_LUA, 0}, {CAP_VMF_CBOUND, 0}
  };
  int i;
  sample_run(L, cburn_lua, "@cburn.lua", 0.5);
  count_bad(&t);
  for (i = 0; i < nsamp; i++) {
    if (samples[i].info.vmstate != CAP_VMST_C)
      continue;
    t.selected++;
    t.match += chain_is(&samples[i], w, 4, "@cburn.lua");
  }
  assert_share("C function", &t, 40);
  lua_close(L);
}
END_TEST

static const char sort_lua[] =
  "local budget = ...\n"
  "local function cmp(a, b) local x = 0 for i = 1, 30 do x = x + i end return a < b end\n"
  "local t0 = os.clock()\n"
  "repeat\n"
  "  local t = {} for i = 1, 20000 do t[i] = (i * 7919) % 20011 end\n"
  "  table.sort(t, cmp)\n"
  "until os.clock() - t0 > budget\n";

START_TEST(sort_comparator_under_its_builtin)
{
  lua_State *L = new_state();
  tally t = {0}, tc = {0};
  int i, sortid;
  want w[5] = {
    {CAP_VMF_LUA, 2}, {CAP_VMF_CBOUND, 0}, {CAP_VMF_FFUNC, 0},
    {CAP_VMF_LUA, 0}, {CAP_VMF_CBOUND, 0}
  };
  run(L, "jit.off()", "=off");
  sortid = lua_int(L, "return require('jit.util').funcinfo(table.sort).ffid");
  ck_assert_int_gt(sortid, 1);
  w[2].v = (uint64_t)sortid;
  sample_run(L, sort_lua, "@sort.lua", 0.6);
  count_bad(&t);
  tc.total = t.total;
  for (i = 0; i < nsamp; i++) {
    const sample *s = &samples[i];
    if (s->n == 0 || s->faulted)
      continue;
    /* Ticks in the comparator: its whole chain. */
    if (s->info.vmstate == CAP_VMST_INTERP && s->fr[0].kind == CAP_VMF_LUA &&
        s->fr[0].firstline == 2) {
      t.selected++;
      t.match += chain_is(s, w, 5, "@sort.lua");
    }
    /* Ticks in C inside the sort: the builtin, under the main chunk. */
    if (s->info.vmstate == CAP_VMST_C && s->fr[0].kind == CAP_VMF_FFUNC &&
        s->fr[0].ffid == sortid) {
      tc.selected++;
      tc.match += chain_is(s, w + 2, 3, "@sort.lua");
    }
  }
  assert_share("sort comparator", &t, 30);
  assert_share("sort builtin", &tc, 5);
  lua_close(L);
}
END_TEST

static const char co_lua[] =
  "local budget = ...\n"
  "local function coburn(n) local x = 0 for i = 1, n do x = x + i % 7 end return x end\n"
  "local function cobody(n) local r = coburn(n) return r end\n"
  "local t0 = os.clock()\n"
  "repeat\n"
  "  local co = coroutine.create(cobody)\n"
  "  coroutine.resume(co, 1000000)\n"
  "until os.clock() - t0 > budget\n";

START_TEST(coroutine_frames_are_its_own)
{
  lua_State *L = new_state();
  tally t = {0};
  int i;
  want w[] = {
    {CAP_VMF_LUA, 2}, {CAP_VMF_LUA, 3}, {CAP_VMF_CBOUND, 0},
    {CAP_VMF_CORO, 0}, {CAP_VMF_FFUNC, 0}, {CAP_VMF_LUA, 0},
    {CAP_VMF_CBOUND, 0}
  };
  run(L, "jit.off()", "=off");
  w[4].v = (uint64_t)lua_int(L, "return require('jit.util').funcinfo(coroutine.resume).ffid");
  sample_run(L, co_lua, "@co.lua", 0.6);
  count_bad(&t);
  for (i = 0; i < nsamp; i++) {
    const sample *s = &samples[i];
    if (s->info.vmstate != CAP_VMST_INTERP || s->info.L == (uint64_t)(uintptr_t)L)
      continue;
    t.selected++;
    /* The coroutine's frames, then its resumer: this thread. */
    t.match += chain_is(s, w, 7, "@co.lua") && s->fr[3].addr == (uint64_t)(uintptr_t)L;
  }
  assert_share("coroutine", &t, 40);
  lua_close(L);
}
END_TEST

/* cresume(f, n): runs f(n) in a new coroutine through the C API. */
static int cresume(lua_State *L)
{
  lua_State *co = lua_newthread(L);
  lua_pushvalue(L, 1);
  lua_pushvalue(L, 2);
  lua_xmove(L, co, 2);
  if (lua_resume(co, 1) != 0)
    return luaL_error(L, "resume failed");
  return 0;
}

static const char cres_lua[] =
  "local budget = ...\n"
  "local function coburn(n) local x = 0 for i = 1, n do x = x + i % 7 end return x end\n"
  "local function cobody(n) local r = coburn(n) return r end\n"
  "local t0 = os.clock()\n"
  "repeat cresume(cobody, 1000000) until os.clock() - t0 > budget\n";

START_TEST(c_api_resume_ends_at_the_coroutine)
{
  lua_State *L = new_state();
  tally t = {0};
  const want w[] = {{CAP_VMF_LUA, 2}, {CAP_VMF_LUA, 3}, {CAP_VMF_CBOUND, 0}};
  int i;
  lua_register(L, "cresume", cresume);
  run(L, "jit.off()", "=off");
  sample_run(L, cres_lua, "@cres.lua", 0.4);
  count_bad(&t);
  for (i = 0; i < nsamp; i++) {
    const sample *s = &samples[i];
    if (s->info.vmstate != CAP_VMST_INTERP || s->info.L == (uint64_t)(uintptr_t)L)
      continue;
    t.selected++;
    /* No resumer is claimed: C code resumed the coroutine. */
    t.match += chain_is(s, w, 3, "@cres.lua");
  }
  assert_share("C-API resume", &t, 30);
  lua_close(L);
}
END_TEST

/* walkhere(): a walk from a C function, kept for the test to look at. */
static cap_vm_frame here_fr[MAXF];
static cap_vm_info here_info;
static uint32_t here_n;

static int walkhere(lua_State *L)
{
  (void)L;
  if (here_n == 0)
    here_n = ljp__cap_vm_walk(&vm, NULL, &here_info, here_fr, MAXF);
  return 0;
}

static const char ffi_cb_lua[] =
  "local ffi = require('ffi')\n"
  "ffi.cdef[[void qsort(void *, size_t, size_t, int (*)(const void *, const void *));]]\n"
  "local cb = ffi.cast('int (*)(const void *, const void *)', function(a, b)\n"
  "  walkhere() return ffi.cast('const int *', a)[0] - ffi.cast('const int *', b)[0] end)\n"
  "local a = ffi.new('int[3]', 3, 1, 2)\n"
  "local function sorter() ffi.C.qsort(a, 3, 4, cb) return 1 end\n"
  "sorter()\n"
  "cb:free()\n";

/* A Lua callback called by C code through the FFI: its frame's link is a
 * continuation, which is a C boundary like lua_call's. */
START_TEST(ffi_callback_is_a_c_boundary)
{
  lua_State *L = new_state();
  want w[] = {
    {CAP_VMF_CFUNC, (uint64_t)(uintptr_t)walkhere}, {CAP_VMF_LUA, 3},
    {CAP_VMF_CBOUND, 0}, {CAP_VMF_FFUNC, 0}, {CAP_VMF_LUA, 6},
    {CAP_VMF_LUA, 0}, {CAP_VMF_CBOUND, 0}
  };
  sample s;
  lua_register(L, "walkhere", walkhere);
  /* Calling a cdata function is the __call builtin of cdata. */
  w[3].v = (uint64_t)lua_int(L, "local ffi = require('ffi') "
                             "return require('jit.util').funcinfo("
                             "debug.getmetatable(ffi.new('int[1]')).__call).ffid");
  here_n = 0;
  run(L, ffi_cb_lua, "@ffi.lua");
  memset(&s, 0, sizeof s);
  s.info = here_info;
  s.n = here_n;
  memcpy(s.fr, here_fr, sizeof s.fr);
  ck_assert_msg(chain_is(&s, w, 7, "@ffi.lua"), "status %u, %u frames",
                (unsigned)s.info.status, (unsigned)s.n);
  /* Two different C frames, the callback's nearer the stack top. */
  ck_assert_uint_ne(s.fr[2].addr, 0);
  ck_assert_uint_lt(s.fr[2].addr, s.fr[6].addr);
  lua_close(L);
}
END_TEST

/* walkcost(): the time of one walk of the caller's chain, in ns. */
static int walkcost(lua_State *L)
{
  cap_vm_frame fr[MAXF];
  cap_vm_info info;
  struct timespec a, b;
  uint32_t n = 0;
  int i;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (i = 0; i < 100000; i++)
    n += ljp__cap_vm_walk(&vm, NULL, &info, fr, MAXF);
  clock_gettime(CLOCK_MONOTONIC, &b);
  lua_pushnumber(L, ((double)(b.tv_sec - a.tv_sec) * 1e9 +
                     (double)(b.tv_nsec - a.tv_nsec)) / 100000.0);
  lua_pushinteger(L, (lua_Integer)(n / 100000));
  return 2;
}

START_TEST(walk_cost)
{
  lua_State *L = new_state();
  double ns;
  int frames;
  lua_register(L, "walkcost", walkcost);
  run(L, "local function c() ns, frames = walkcost() return 1 end\n"
         "local function b() local r = c() return r end\n"
         "local function a() local r = b() return r end\n"
         "pcall(a)", "=cost");
  lua_getglobal(L, "ns");
  lua_getglobal(L, "frames");
  ns = lua_tonumber(L, -2);
  frames = (int)lua_tointeger(L, -1);
  fprintf(stderr, "test_vm walk cost: %.0f ns for %d frames\n", ns, frames);
  /* walkcost, c, b, a, pcall, main chunk, C boundary. */
  ck_assert_int_eq(frames, 7);
  /* Generous: a handler that runs every millisecond must stay in the
   * microseconds. */
  ck_assert_double_lt(ns, 20000.0);
  lua_close(L);
}
END_TEST

/* Everything that moves frames around: metamethods (continuation
 * frames), errors caught by pcall, deep recursion that reallocates the
 * stack, varargs, tail calls, coroutines that yield, builtins calling
 * back, string building and the GC. */
static const char soak_lua[] =
  "local budget = ...\n"
  "local mt = {__index = function(t, k) return k * 2 end}\n"
  "local function deep(n) if n == 0 then return 0 end return 1 + deep(n - 1) end\n"
  "local function va(...) local s = 0 for i = 1, select('#', ...) do s = s + select(i, ...) end return s end\n"
  "local function tail(n) if n == 0 then return 0 end return tail(n - 1) end\n"
  "local function work()\n"
  "  local t, s, parts = setmetatable({}, mt), 0, {}\n"
  "  for i = 1, 200 do s = s + t[i] end\n"
  "  for i = 1, 100 do parts[#parts + 1] = string.format('%d:%s', i, tostring(i * 1.5)) end\n"
  "  pcall(error, 'x')\n"
  "  pcall(function() local x = nil; return x.y end)\n"
  "  deep(3000)\n"
  "  va(1, 2, 3, 4, 5, 6, 7, 8)\n"
  "  tail(100)\n"
  "  local co = coroutine.wrap(function(a) for i = 1, 10 do a = coroutine.yield(a + i) end end)\n"
  "  for i = 1, 11 do co(i) end\n"
  "  table.sort({5, 3, 1, 4, 2}, function(a, b) return a > b end)\n"
  "  return s + #table.concat(parts, ',')\n"
  "end\n"
  "local t0 = os.clock()\n"
  "repeat work() until os.clock() - t0 > budget\n";

/* Debugging aid: every sample, one line each. */
static void dump_samples(void)
{
  int i;
  uint32_t j;
  for (i = 0; i < nsamp; i++) {
    const sample *s = &samples[i];
    fprintf(stderr, "#%d vmstate %d status %u%s:", i, (int)s->info.vmstate,
            (unsigned)s->info.status, s->faulted ? " faulted" : "");
    for (j = 0; j < s->n && !s->faulted; j++)
      fprintf(stderr, " %d/%u", s->fr[j].kind,
              s->fr[j].kind == CAP_VMF_LUA ? (unsigned)s->fr[j].firstline
                                           : (unsigned)s->fr[j].ffid);
    fprintf(stderr, "\n");
  }
}

static void soak(lua_State *L, const char *what)
{
  tally t = {0};
  int i;
  lua_gc(L, LUA_GCRESTART, 0);
  sample_run(L, soak_lua, "@soak.lua", 1.5);
  count_bad(&t);
  for (i = 0; i < nsamp; i++) {
    const sample *s = &samples[i];
    if (s->faulted || s->info.status != CAP_VMS_OK || s->n == 0)
      continue;
    t.selected++;
    /* A complete chain ends in the main chunk, called from C (a
     * coroutine's, through its resumer). */
    t.match += s->n >= 2 && s->fr[s->n - 1].kind == CAP_VMF_CBOUND &&
               s->fr[s->n - 2].kind == CAP_VMF_LUA && s->fr[s->n - 2].firstline == 0;
  }
  report(what, &t);
  if (getenv("LJP_VM_DUMP"))
    dump_samples();
  ck_assert_int_ge(t.selected, 40);
  ck_assert_msg(t.match * 100 >= t.selected * 98, "%s: %d of %d complete chains "
                "end in the main chunk", what, t.match, t.selected);
  ck_assert_msg((t.rejected + t.faulted) * 100 <= t.total * 5,
                "%s: %d rejected, %d faulted of %d", what, t.rejected,
                t.faulted, t.total);
}

START_TEST(soak_interpreter)
{
  lua_State *L = new_state();
  run(L, "jit.off()", "=off");
  soak(L, "soak, interpreter");
  lua_close(L);
}
END_TEST

START_TEST(soak_jit)
{
  lua_State *L = new_state();
  soak(L, "soak, JIT");
  lua_close(L);
}
END_TEST

static Suite *vm_suite(void)
{
  const struct {
    const char *name;
    const TTest *test;
  } tests[] = {
    {"probe_detects_build", probe_detects_build},
    {"probe_from_lua_and_coroutines", probe_from_lua_and_coroutines},
    {"walk_outside_lua_reads_nothing", walk_outside_lua_reads_nothing},
    {"str_reads_chunk_names", str_reads_chunk_names},
    {"made_up_stacks", made_up_stacks},
    {"interpreter_chain_at_the_signal", interpreter_chain_at_the_signal},
    {"trace_chain_at_the_signal", trace_chain_at_the_signal},
    {"c_function_innermost_in_c_state", c_function_innermost_in_c_state},
    {"sort_comparator_under_its_builtin", sort_comparator_under_its_builtin},
    {"coroutine_frames_are_its_own", coroutine_frames_are_its_own},
    {"c_api_resume_ends_at_the_coroutine", c_api_resume_ends_at_the_coroutine},
    {"ffi_callback_is_a_c_boundary", ffi_callback_is_a_c_boundary},
    {"walk_cost", walk_cost},
    {"soak_interpreter", soak_interpreter},
    {"soak_jit", soak_jit},
  };
  Suite *s = suite_create("capture_vm");
  size_t i;
  for (i = 0; i < sizeof tests / sizeof tests[0]; i++) {
    TCase *tc = tcase_create(tests[i].name);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, tests[i].test);
    suite_add_tcase(s, tc);
  }
  return s;
}

int main(int argc, char **argv)
{
  SRunner *sr = srunner_create(vm_suite());
  int failed;
  srunner_run(sr, NULL, argc > 1 ? argv[1] : NULL, CK_NORMAL);
  failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
