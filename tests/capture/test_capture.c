/*
 * test_capture.c — the capture core (libljpcap) driven from a C host that
 * embeds LuaJIT, its output decoded with libljp's reader.
 *
 * Each test runs in its own forked process (check's default), so the
 * process-wide profiler state starts clean every time.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <luajit.h>
#include <lualib.h>

#include "caphost.h"

static const char fib_lua[] =
  "local function fib(n) if n < 2 then return n end return fib(n-1) + fib(n-2) end\n"
  "local t0 = os.clock()\n"
  "while os.clock() - t0 < 0.4 do fib(22) end\n";

/* Shares of samples are checked with three samples of slack: a tick can
 * land in start-up or shutdown, which weighs on small sample counts. */
#define SLACK 300

/* ---- tests --------------------------------------------------------------- */

START_TEST(flavor_matches_headers)
{
#ifdef OPENRESTY_LUAJIT
  ck_assert_int_eq(ljp_capture_flavor(), LJP_FLAVOR_OPENRESTY);
#else
  ck_assert_int_eq(ljp_capture_flavor(), LJP_FLAVOR_LUAJIT);
#endif
}
END_TEST

START_TEST(round_trip_counts_equal_report)
{
  lua_State *L = new_state();
  struct ljp_capture_options o = opts(LJP_CAPTURE_CALLGRAPH,
                                      LJP_CAPTURE_TIMER_WALL);
  struct ljp_capture_counters c;
  cap_decoded d;
  reset_out();
  ck_assert_int_eq(ljp_capture_start(L, &o), LJP_CAPTURE_SUCCESS);
  run(L, fib_lua, "@fib.lua");
  ck_assert_int_eq(ljp_capture_stop(L), LJP_CAPTURE_SUCCESS);
  ck_assert_int_eq(on_stop_calls, 1);
  ck_assert_int_eq(ljp_capture_report(&c), LJP_CAPTURE_SUCCESS);
  ck_assert_uint_gt(c.samples, 100);
  ck_assert(c.rate_hz > 200.0);
  decode_out(&d);
  check_consistent(&d, &c);
  cap_decoded_free(&d);
  lua_close(L);
}
END_TEST

/* Tests that check what share of the samples lands where use the VM
 * thread's CPU clock: a wall-clock timer also ticks while the test is
 * descheduled (ctest runs tests side by side), which makes shares noisy. */
START_TEST(lua_frames_named_with_first_line)
{
  lua_State *L = new_state();
  struct ljp_capture_options o = opts(LJP_CAPTURE_CALLGRAPH,
                                      LJP_CAPTURE_TIMER_THREAD);
  struct ljp_capture_counters c;
  cap_decoded d;
  reset_out();
  run(L, "jit.off()", "=off");
  ck_assert_int_eq(ljp_capture_start(L, &o), LJP_CAPTURE_SUCCESS);
  run(L, fib_lua, "@fib.lua");
  ck_assert_int_eq(ljp_capture_stop(L), LJP_CAPTURE_SUCCESS);
  ljp_capture_report(&c);
  decode_out(&d);
  check_consistent(&d, &c);
  /* JIT off: nearly everything is fib, whose innermost frame is fib's
   * first line 1, called from the main chunk (line 0). */
  ck_assert_uint_ge(cap_count1(&d, "LFUNC|@fib.lua:1;") * 100 + SLACK, d.samples * 90);
  ck_assert_uint_ge(cap_count1(&d, ";@fib.lua:0|") * 100 + SLACK, d.samples * 90);
  ck_assert_uint_eq(d.vmstate[LJP_VMST_TRACE], 0);
  cap_decoded_free(&d);
  lua_close(L);
}
END_TEST

START_TEST(host_stacks_reach_lua_pcall_and_main)
{
  lua_State *L = new_state();
  struct ljp_capture_options o = opts(LJP_CAPTURE_CALLGRAPH,
                                      LJP_CAPTURE_TIMER_THREAD);
  struct ljp_capture_counters c;
  cap_decoded d;
  reset_out();
  run(L, "jit.off()", "=off");
  ck_assert_int_eq(ljp_capture_start(L, &o), LJP_CAPTURE_SUCCESS);
  run(L, fib_lua, "@fib.lua");
  ck_assert_int_eq(ljp_capture_stop(L), LJP_CAPTURE_SUCCESS);
  ljp_capture_report(&c);
  decode_out(&d);
  check_consistent(&d, &c);
  ck_assert_uint_ge(cap_count2(&d, ";lua_pcall;", ";main;") * 100 + SLACK,
                    d.samples * 90);
  ck_assert_uint_ge(cap_count1(&d, ";run;") * 100 + SLACK, d.samples * 90);
  cap_decoded_free(&d);
  lua_close(L);
}
END_TEST

/* x1 names the object of every host address (FORMATS.md 5.5, 0x0D): the
 * test program's own frames lie in an object that is this executable, with
 * its build-id, and no host frame outside JIT code is left without one. */
START_TEST(host_frames_lie_in_named_objects)
{
  lua_State *L = new_state();
  struct ljp_capture_options o = opts(LJP_CAPTURE_CALLGRAPH,
                                      LJP_CAPTURE_TIMER_THREAD);
  ljp_reader *r = ljp_reader_new();
  const ljp_event *ev;
  char exe[4096];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  uint64_t frames = 0, placed = 0, in_exe = 0, objects = 0;
  uintptr_t here = (uintptr_t)&new_state;
  const ljp_symbol *self = NULL;
  ck_assert_int_gt(n, 0);
  exe[n] = '\0';
  reset_out();
  run(L, "jit.off()", "=off");
  ck_assert_int_eq(ljp_capture_start(L, &o), LJP_CAPTURE_SUCCESS);
  run(L, fib_lua, "@fib.lua");
  ck_assert_int_eq(ljp_capture_stop(L), LJP_CAPTURE_SUCCESS);
  ck_assert_int_eq(ljp_reader_open_memory(r, out.p, out.len), LJP_OK);
  while (ljp_reader_next(r, &ev) == LJP_OK) {
    if (ev->type == LJP_EV_SYMBOL && ev->u.symbol.sym->kind == LJP_SYM_OBJECT)
      objects++;
    if (ev->type != LJP_EV_SAMPLE)
      continue;
    for (size_t i = 0; i < ev->u.sample.host_count; i++) {
      const ljp_symbol *ob =
          ljp_reader_lookup_object(r, ev->u.sample.host[i].value);
      frames++;
      placed += ob != NULL;
      if (ob && strcmp(ob->name, exe) == 0)
        in_exe++;
    }
  }
  self = ljp_reader_lookup_object(r, here);
  ck_assert_ptr_nonnull(self);
  ck_assert_str_eq(self->name, exe);
  ck_assert_uint_gt(self->build_id_len, 0);
  ck_assert_uint_le(self->addr, here);
  ck_assert_uint_gt(self->addr + self->size, here);
  ck_assert_uint_gt(frames, 100);
  ck_assert_uint_ge(objects, 2);           /* this program and libc at least */
  ck_assert_uint_eq(placed, frames);       /* jit.off(): no machine code */
  ck_assert_uint_gt(in_exe, 0);            /* main, run, ... */
  ljp_reader_free(r);
  lua_close(L);
}
END_TEST

START_TEST(sandwich_lua_c_lua)
{
  lua_State *L = new_state();
  struct ljp_capture_options o = opts(LJP_CAPTURE_CALLGRAPH,
                                      LJP_CAPTURE_TIMER_THREAD);
  struct ljp_capture_counters c;
  cap_decoded d;
  reset_out();
  ck_assert_int_eq(ljp_capture_start(L, &o), LJP_CAPTURE_SUCCESS);
  run(L,
      "local function inner() local x = 0 for i = 1, 2000 do x = x + i end return x end\n"
      "local function outer() sandwich(inner) end\n"
      "for i = 1, 300 do outer() end\n",
      "@sw.lua");
  ck_assert_int_eq(ljp_capture_stop(L), LJP_CAPTURE_SUCCESS);
  ljp_capture_report(&c);
  decode_out(&d);
  check_consistent(&d, &c);
  /* Ticks in the C busy loop: CFUNC, the C function on the Lua stack under
   * its Lua caller, and c_spin / c_sandwich / lua_pcall on the host stack. */
  {
    const char *const v[] = {"CFUNC|c_sandwich;@sw.lua:2;@sw.lua:0|",
                             "c_spin;c_sandwich;", ";lua_pcall;", NULL};
    ck_assert_uint_ge(cap_count_lines(&d, v) * 100 + SLACK, c.vmst_cfunc * 50);
    ck_assert_uint_gt(cap_count_lines(&d, v), 50);
  }
  /* No 'C' sample keeps the Lua callee of a tick that landed in C. */
  ck_assert_uint_eq(cap_count2(&d, "CFUNC|@sw.lua:1;c_sandwich", "c_spin"), 0);
  cap_decoded_free(&d);
  lua_close(L);
}
END_TEST

START_TEST(table_sort_is_a_fast_function)
{
  lua_State *L = new_state();
  struct ljp_capture_options o = opts(LJP_CAPTURE_CALLGRAPH,
                                      LJP_CAPTURE_TIMER_THREAD);
  struct ljp_capture_counters c;
  cap_decoded d;
  reset_out();
  run(L, "jit.off()", "=off");
  ck_assert_int_eq(ljp_capture_start(L, &o), LJP_CAPTURE_SUCCESS);
  run(L,
      "local t0 = os.clock()\n"
      "while os.clock() - t0 < 0.8 do\n"
      "  local t = {} for i = 1, 20000 do t[i] = (i * 7919) % 10007 end\n"
      "  table.sort(t, function(a, b) return a > b end)\n"
      "end\n",
      "@sort.lua");
  ck_assert_int_eq(ljp_capture_stop(L), LJP_CAPTURE_SUCCESS);
  ljp_capture_report(&c);
  decode_out(&d);
  check_consistent(&d, &c);
  /* The comparator (line 4) runs under table.sort, named by its ffid in
   * the producing flavor. */
  ck_assert_uint_gt(cap_count1(&d, "|@sort.lua:4;table.sort;@sort.lua:0|"), 10);
  ck_assert_uint_eq(cap_count1(&d, "ffunc#"), 0);
  cap_decoded_free(&d);
  lua_close(L);
}
END_TEST

START_TEST(trace_samples_name_the_loop)
{
  lua_State *L = new_state();
  struct ljp_capture_options o = opts(LJP_CAPTURE_CALLGRAPH,
                                      LJP_CAPTURE_TIMER_WALL);
  struct ljp_capture_counters c;
  cap_decoded d;
  reset_out();
  ck_assert_int_eq(ljp_capture_start(L, &o), LJP_CAPTURE_SUCCESS);
  run(L,
      "local function hot(n)\n"
      "  local s = 0\n"
      "  for i = 1, n do\n"
      "    s = s + i % 7\n"
      "  end\n"
      "  return s\n"
      "end\n"
      "local t0 = os.clock()\n"
      "while os.clock() - t0 < 0.4 do hot(1e6) end\n",
      "@hot.lua");
  ck_assert_int_eq(ljp_capture_stop(L), LJP_CAPTURE_SUCCESS);
  ljp_capture_report(&c);
  decode_out(&d);
  check_consistent(&d, &c);
  ck_assert_uint_gt(c.vmst_trace, 100);
  ck_assert_uint_ge(d.sym_trace, 1);
  /* The hot loop's trace starts at line 3 (what jit.v reports). */
  ck_assert_uint_ge(cap_count1(&d, "TRACE|TRACE [") * 100 + SLACK, c.samples * 50);
  ck_assert_uint_ge(cap_count1(&d, "@hot.lua:3") * 100 + SLACK, c.vmst_trace * 90);
  cap_decoded_free(&d);
  lua_close(L);
}
END_TEST

START_TEST(coroutine_samples_show_the_coroutine)
{
  lua_State *L = new_state();
  struct ljp_capture_options o = opts(LJP_CAPTURE_CALLGRAPH,
                                      LJP_CAPTURE_TIMER_THREAD);
  struct ljp_capture_counters c;
  cap_decoded d;
  reset_out();
  run(L, "jit.off()", "=off");
  ck_assert_int_eq(ljp_capture_start(L, &o), LJP_CAPTURE_SUCCESS);
  run(L,
      "local function work() local x = 0 for i = 1, 1e5 do x = x + i end return x end\n"
      "local co = coroutine.create(function() while true do work() coroutine.yield() end end)\n"
      "local t0 = os.clock()\n"
      "while os.clock() - t0 < 0.3 do coroutine.resume(co) end\n",
      "@co.lua");
  ck_assert_int_eq(ljp_capture_stop(L), LJP_CAPTURE_SUCCESS);
  ljp_capture_report(&c);
  decode_out(&d);
  check_consistent(&d, &c);
  /* The coroutine's frames sit under their resume site: work under the
   * coroutine body, under coroutine.resume in the main chunk (read at the
   * signal); at the safe point only the coroutine's own frames are seen. */
  if (c.vm_reader)
    ck_assert_uint_ge(cap_count1(&d, "LFUNC|@co.lua:1;@co.lua:2;"
                                     "coroutine.resume;@co.lua:0|") * 100 +
                      SLACK, d.samples * 80);
  else
    ck_assert_uint_ge(cap_count1(&d, "LFUNC|@co.lua:1;@co.lua:2|") * 100 +
                      SLACK, d.samples * 80);
  cap_decoded_free(&d);
  lua_close(L);
}
END_TEST

START_TEST(default_mode_writes_nothing)
{
  lua_State *L = new_state();
  struct ljp_capture_options o = opts(LJP_CAPTURE_DEFAULT,
                                      LJP_CAPTURE_TIMER_WALL);
  struct ljp_capture_counters c;
  reset_out();
  o.buf = NULL;
  o.len = 0;
  ck_assert_int_eq(ljp_capture_start(L, &o), LJP_CAPTURE_SUCCESS);
  run(L, fib_lua, "@fib.lua");
  ck_assert_int_eq(ljp_capture_stop(L), LJP_CAPTURE_SUCCESS);
  ljp_capture_report(&c);
  ck_assert_int_eq(out.calls, 0);
  ck_assert_uint_eq(out.len, 0);
  ck_assert_uint_gt(c.samples, 100);
  ck_assert_uint_eq(c.vmst_interp + c.vmst_lfunc + c.vmst_ffunc + c.vmst_cfunc +
                    c.vmst_gc + c.vmst_exit + c.vmst_record + c.vmst_opt +
                    c.vmst_asm + c.vmst_trace, c.samples);
  ck_assert_int_eq(on_stop_calls, 1);
  lua_close(L);
}
END_TEST

START_TEST(leaf_mode_keeps_top_frames)
{
  lua_State *L = new_state();
  struct ljp_capture_options o = opts(LJP_CAPTURE_LEAF, LJP_CAPTURE_TIMER_THREAD);
  struct ljp_capture_counters c;
  cap_decoded d;
  reset_out();
  run(L, "jit.off()", "=off");
  ck_assert_int_eq(ljp_capture_start(L, &o), LJP_CAPTURE_SUCCESS);
  run(L, fib_lua, "@fib.lua");
  ck_assert_int_eq(ljp_capture_stop(L), LJP_CAPTURE_SUCCESS);
  ljp_capture_report(&c);
  decode_out(&d);
  check_consistent(&d, &c);
  ck_assert_uint_eq(cap_count1(&d, ";"), 0);   /* one frame per stack */
  ck_assert_uint_ge(cap_count1(&d, "LFUNC|@fib.lua:1|") * 100 + SLACK, d.samples * 50);
  cap_decoded_free(&d);
  lua_close(L);
}
END_TEST

START_TEST(lifecycle_and_error_codes)
{
  lua_State *L = new_state();
  struct ljp_capture_options o = opts(LJP_CAPTURE_CALLGRAPH,
                                      LJP_CAPTURE_TIMER_ITIMER);
  struct ljp_capture_counters c;
  reset_out();
  ck_assert_int_eq(ljp_capture_stop(L), LJP_CAPTURE_ERRRUN);
  ck_assert_int_eq(ljp_capture_drain(L), LJP_CAPTURE_ERRRUN);
  ck_assert_int_eq(ljp_capture_report(NULL), LJP_CAPTURE_ERRUSE);
  ck_assert_int_eq(ljp_capture_set_writer(NULL), LJP_CAPTURE_ERRUSE);
  ck_assert_int_eq(ljp_capture_set_on_stop(NULL), LJP_CAPTURE_ERRUSE);
  o.mode = 3;
  ck_assert_int_eq(ljp_capture_start(L, &o), LJP_CAPTURE_ERRUSE);
  o = opts(LJP_CAPTURE_CALLGRAPH, LJP_CAPTURE_TIMER_ITIMER);
  o.interval = 0;
  ck_assert_int_eq(ljp_capture_start(L, &o), LJP_CAPTURE_ERRUSE);
  o = opts(LJP_CAPTURE_CALLGRAPH, LJP_CAPTURE_TIMER_ITIMER);
  o.buf = NULL;
  ck_assert_int_eq(ljp_capture_start(L, &o), LJP_CAPTURE_ERRUSE);
  o = opts(LJP_CAPTURE_CALLGRAPH, 7);
  ck_assert_int_eq(ljp_capture_start(L, &o), LJP_CAPTURE_ERRUSE);
  /* Tarantool calls on_stop on every failed start, to free the buffer. */
  ck_assert_int_eq(on_stop_calls, 4);
  ck_assert_int_eq(out.calls, 0);

  on_stop_calls = 0;
  o = opts(LJP_CAPTURE_CALLGRAPH, LJP_CAPTURE_TIMER_ITIMER);
  ck_assert_int_eq(ljp_capture_start(L, &o), LJP_CAPTURE_SUCCESS);
  ck_assert_int_eq(ljp_capture_start(L, &o), LJP_CAPTURE_ERRRUN);
  ck_assert_int_eq(on_stop_calls, 1);     /* the refused start's */
  ck_assert_int_eq(ljp_capture_set_writer(mem_writer), LJP_CAPTURE_ERRUSE);
  ck_assert_int_eq(ljp_capture_set_backtracer(NULL), LJP_CAPTURE_ERRUSE);
  ck_assert_int_eq(ljp_capture_report(&c), LJP_CAPTURE_SUCCESS);
  run(L, fib_lua, "@fib.lua");
  ck_assert_int_eq(ljp_capture_stop(L), LJP_CAPTURE_SUCCESS);
  ck_assert_int_eq(on_stop_calls, 2);
  ck_assert_int_eq(ljp_capture_stop(L), LJP_CAPTURE_ERRRUN);
  ck_assert_int_eq(on_stop_calls, 2);
  lua_close(L);
}
END_TEST

START_TEST(other_vm_is_refused)
{
  lua_State *L = new_state(), *L2 = new_state();
  struct ljp_capture_options o = opts(LJP_CAPTURE_CALLGRAPH,
                                      LJP_CAPTURE_TIMER_ITIMER);
  reset_out();
  ck_assert_int_eq(ljp_capture_start(L, &o), LJP_CAPTURE_SUCCESS);
  ck_assert_int_eq(ljp_capture_stop(L2), LJP_CAPTURE_ERRUSE);
  ck_assert_int_eq(ljp_capture_start(L2, &o), LJP_CAPTURE_ERRRUN);
  ck_assert_int_eq(ljp_capture_stop(L), LJP_CAPTURE_SUCCESS);
  /* LuaJIT's profiler held by another VM (jit.profile in L2). */
  run(L2, "require('jit.profile').start('i10', function() end)", "=p");
  ck_assert_int_eq(ljp_capture_start(L, &o), LJP_CAPTURE_ERRRUN);
  run(L2, "require('jit.profile').stop()", "=p");
  ck_assert_int_eq(ljp_capture_start(L, &o), LJP_CAPTURE_SUCCESS);
  ck_assert_int_eq(ljp_capture_stop(L), LJP_CAPTURE_SUCCESS);
  lua_close(L2);
  lua_close(L);
}
END_TEST

static void noop_handler(int sig)
{
  (void)sig;
}

START_TEST(sigprof_disposition_restored)
{
  lua_State *L = new_state();
  struct ljp_capture_options o = opts(LJP_CAPTURE_CALLGRAPH,
                                      LJP_CAPTURE_TIMER_WALL);
  struct sigaction sa, now;
  struct itimerval it;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = noop_handler;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGPROF, &sa, NULL);
  reset_out();
  ck_assert_int_eq(ljp_capture_start(L, &o), LJP_CAPTURE_SUCCESS);
  sigaction(SIGPROF, NULL, &now);
  ck_assert(now.sa_handler != noop_handler);
  run(L, "local x = 0 for i = 1, 1e6 do x = x + i end", "=x");
  ck_assert_int_eq(ljp_capture_stop(L), LJP_CAPTURE_SUCCESS);
  sigaction(SIGPROF, NULL, &now);
  ck_assert(now.sa_handler == noop_handler);
  getitimer(ITIMER_PROF, &it);
  ck_assert_int_eq(it.it_value.tv_sec + it.it_value.tv_usec, 0);
  lua_close(L);
}
END_TEST

START_TEST(writer_failure_keeps_earlier_samples)
{
  lua_State *L = new_state();
  struct ljp_capture_options o = opts(LJP_CAPTURE_CALLGRAPH,
                                      LJP_CAPTURE_TIMER_WALL);
  cap_decoded d;
  reset_out();
  o.len = 1024;              /* flush often */
  out.fail_after = 3;
  run(L, "jit.off()", "=off");   /* big interpreter samples */
  ck_assert_int_eq(ljp_capture_start(L, &o), LJP_CAPTURE_SUCCESS);
  run(L, fib_lua, "@fib.lua");
  errno = 0;
  ck_assert_int_eq(ljp_capture_stop(L), LJP_CAPTURE_ERRIO);
  ck_assert_int_eq(errno, ENOSPC);
  ck_assert_int_eq(on_stop_calls, 1);
  ck_assert_int_eq(out.calls, 4);      /* no call after the failure */
  decode_out(&d);
  ck_assert_int_eq(d.status, LJP_E_TRUNCATED);
  ck_assert_uint_gt(d.samples, 0);
  ck_assert_uint_eq(d.undefined_refs, 0);
  cap_decoded_free(&d);

  /* A writer failing on the header fails the start. */
  reset_out();
  out.fail_after = 0;
  ck_assert_int_eq(ljp_capture_start(L, &o), LJP_CAPTURE_ERRIO);
  ck_assert_int_eq(errno, ENOSPC);
  ck_assert_int_eq(on_stop_calls, 1);
  ck_assert_int_eq(ljp_capture_stop(L), LJP_CAPTURE_ERRRUN);
  lua_close(L);
}
END_TEST

START_TEST(lua_close_while_running_completes_stream)
{
  lua_State *L = new_state();
  struct ljp_capture_options o = opts(LJP_CAPTURE_CALLGRAPH,
                                      LJP_CAPTURE_TIMER_WALL);
  struct ljp_capture_counters c;
  cap_decoded d;
  reset_out();
  ck_assert_int_eq(ljp_capture_start(L, &o), LJP_CAPTURE_SUCCESS);
  run(L, fib_lua, "@fib.lua");
  lua_close(L);
  ck_assert_int_eq(on_stop_calls, 1);
  ck_assert_int_eq(ljp_capture_stop(NULL), LJP_CAPTURE_ERRRUN);
  ljp_capture_report(&c);
  decode_out(&d);
  check_consistent(&d, &c);
  cap_decoded_free(&d);
  /* Our wall timer is gone: no stray SIGPROF kills the process. */
  c_spin(0.05);
}
END_TEST

START_TEST(hundred_start_stop_cycles)
{
  lua_State *L = new_state();
  int i;
  for (i = 0; i < 100; i++) {
    struct ljp_capture_options o = opts(i % 3, i % 2 ? LJP_CAPTURE_TIMER_WALL
                                                     : LJP_CAPTURE_TIMER_THREAD);
    struct ljp_capture_counters c;
    cap_decoded d;
    reset_out();
    ck_assert_int_eq(ljp_capture_start(L, &o), LJP_CAPTURE_SUCCESS);
    run(L, "local x = 0 for i = 1, 3e5 do x = x + i % 3 end", "=cycle");
    ck_assert_int_eq(ljp_capture_stop(L), LJP_CAPTURE_SUCCESS);
    ck_assert_int_eq(on_stop_calls, 1);
    ljp_capture_report(&c);
    if (i % 3 != 0) {
      decode_out(&d);
      check_consistent(&d, &c);
      cap_decoded_free(&d);
    }
  }
  free(out.p);
  out.p = NULL;
  lua_close(L);
}
END_TEST

static atomic_int burn_stop;

static void *burner(void *arg)
{
  volatile unsigned x = 0;
  (void)arg;
  while (!atomic_load(&burn_stop))
    x++;
  return NULL;
}

/* A fixed amount of work, not a time budget: os.clock() counts the
 * burner's CPU too, and under load the VM thread would get little of it. */
static const char fib_fixed_lua[] =
  "local function fib(n) if n < 2 then return n end return fib(n-1) + fib(n-2) end\n"
  "for i = 1, 500 do fib(24) end\n";

static void multithreaded(int timer, uint64_t *foreign)
{
  lua_State *L = new_state();
  struct ljp_capture_options o = opts(LJP_CAPTURE_CALLGRAPH, timer);
  struct ljp_capture_counters c;
  cap_decoded d;
  pthread_t th;
  reset_out();
  atomic_store(&burn_stop, 0);
  ck_assert_int_eq(pthread_create(&th, NULL, burner, NULL), 0);
  ck_assert_int_eq(ljp_capture_start(L, &o), LJP_CAPTURE_SUCCESS);
  run(L, fib_fixed_lua, "@fib.lua");
  ck_assert_int_eq(ljp_capture_stop(L), LJP_CAPTURE_SUCCESS);
  atomic_store(&burn_stop, 1);
  pthread_join(th, NULL);
  ljp_capture_report(&c);
  decode_out(&d);
  check_consistent(&d, &c);
  ck_assert_uint_gt(c.samples, 5);
  /* Nothing from the burner thread is written. */
  ck_assert_uint_eq(cap_count1(&d, "burner"), 0);
  *foreign = c.foreign;
  cap_decoded_free(&d);
  lua_close(L);
}

START_TEST(multithreaded_host)
{
  uint64_t foreign;
  multithreaded(LJP_CAPTURE_TIMER_THREAD, &foreign);
  ck_assert_uint_eq(foreign, 0);
  multithreaded(LJP_CAPTURE_TIMER_WALL, &foreign);
  ck_assert_uint_eq(foreign, 0);
  /* ITIMER_PROF is process-wide: ticks landing on the burner are counted
   * as foreign and dropped (check_consistent: none is written). */
  multithreaded(LJP_CAPTURE_TIMER_ITIMER, &foreign);
  ck_assert_uint_gt(foreign, 0);
}
END_TEST

START_TEST(host_only_time_is_not_attached_to_lua)
{
  lua_State *L = new_state();
  struct ljp_capture_options o = opts(LJP_CAPTURE_CALLGRAPH,
                                      LJP_CAPTURE_TIMER_WALL);
  struct ljp_capture_counters c;
  cap_decoded d;
  reset_out();
  o.ring_slots = 4096;
  ck_assert_int_eq(ljp_capture_start(L, &o), LJP_CAPTURE_SUCCESS);
  run(L, "local x = 0 for i = 1, 1e5 do x = x + i end", "@a.lua");
  host_spin(0.15);
  ck_assert_int_eq(ljp_capture_drain(L), LJP_CAPTURE_SUCCESS);
  host_spin(0.15);
  run(L, fib_lua, "@fib.lua");
  ck_assert_int_eq(ljp_capture_stop(L), LJP_CAPTURE_SUCCESS);
  ljp_capture_report(&c);
  decode_out(&d);
  check_consistent(&d, &c);
  /* c_spin under this test function (host_spin in between or not, as
   * the optimiser decides). */
  const char *const host_only[] = {"CFUNC||", "c_spin;", "host_only_time", NULL};
  const char *const attached[] = {"@", "c_spin;", "host_only_time", NULL};
  ck_assert_uint_gt(cap_count_lines(&d, host_only), 20);
  ck_assert_uint_eq(cap_count_lines(&d, attached), 0);
  cap_decoded_free(&d);
  lua_close(L);
}
END_TEST

static int soak_seconds(void)
{
  const char *e = getenv("LJP_CAPTURE_SOAK_SECONDS");
  int s = e ? atoi(e) : 3;
  return s > 0 ? s : 3;
}

static void *soak_bg(void *arg)
{
  atomic_int *stop = arg;
  while (!atomic_load(stop)) {
    void *p = malloc(64 + (size_t)(rand() % 4096));
    free(p);
  }
  return NULL;
}

START_TEST(signal_safety_soak)
{
  lua_State *L = new_state();
  struct ljp_capture_options o = opts(LJP_CAPTURE_CALLGRAPH,
                                      LJP_CAPTURE_TIMER_WALL);
  struct ljp_capture_counters c;
  cap_decoded d;
  char code[4096];
  pthread_t th;
  atomic_int stop_bg = 0;
  reset_out();
  o.ring_slots = 64;      /* small: exercise drops too */
  o.interval_us = 100;    /* 10 kHz asked: as many ticks as the kernel gives */
  /* A second host thread allocating all along: a multithreaded host. */
  ck_assert_int_eq(pthread_create(&th, NULL, soak_bg, &stop_bg), 0);
  ck_assert_int_eq(ljp_capture_start(L, &o), LJP_CAPTURE_SUCCESS);
  snprintf(code, sizeof code,
    "local function bt(d) if d == 0 then return {} end return {bt(d-1), bt(d-1)} end\n"
    "local function check(t) if not t[1] then return 1 end return 1 + check(t[1]) + check(t[2]) end\n"
    "local mt = {__gc = function(u) local t = {} for i = 1, 10 do t[i] = i end end}\n"
    "local t0 = os.time()\n"
    "local n = 0\n"
    "while os.time() - t0 < %d do\n"
    "  n = n + 1\n"
    "  check(bt(10))\n"
    "  for i = 1, 200 do pcall(error, {i}) end\n"
    "  for i = 1, 50 do local p = newproxy(true); getmetatable(p).__gc = mt.__gc end\n"
    "  sandwich(function() for i = 1, 1000 do local s = tostring(i) .. 'x' end end)\n"
    "  if n %% 50 == 0 then collectgarbage() end\n"
    "  local co = coroutine.wrap(function() for i = 1, 100 do coroutine.yield(i) end end)\n"
    "  for i = 1, 100 do co() end\n"
    "  loadstring('local s = 0 for i = 1, 200 do s = s + i * ' .. n .. ' churn(2) end')()\n"
    "  if n %% 25 == 0 then jit.flush() end\n"
    "  local function deep(k) if k == 0 then return 0 end return 1 + deep(k - 1) end\n"
    "  deep(300)\n"
    "end\n", soak_seconds());
  run(L, code, "@soak.lua");
  ck_assert_int_eq(ljp_capture_stop(L), LJP_CAPTURE_SUCCESS);
  atomic_store(&stop_bg, 1);
  pthread_join(th, NULL);
  ljp_capture_report(&c);
  decode_out(&d);
  check_consistent(&d, &c);
  ck_assert_uint_gt(c.samples, 50u * (unsigned)soak_seconds());
  /* Every frame chain the handler rejected is marked in the stream. */
  if (c.vm_reader)
    ck_assert_uint_ge(d.lua_incomplete, c.lua_rejected);
  cap_decoded_free(&d);
  lua_close(L);
}
END_TEST


/* ---- malloc while traces come and go ------------------------------------- */

/* Host mallocs, new traces and flushes (new machine-code areas registered
 * with libgcc) under a 200 us wall timer: with the shim preloaded, catches
 * a handler that allocates. */
START_TEST(malloc_storm_with_trace_churn)
{
  lua_State *L = new_state();
  struct ljp_capture_options o = opts(LJP_CAPTURE_CALLGRAPH,
                                      LJP_CAPTURE_TIMER_WALL);
  struct ljp_capture_counters c;
  cap_decoded d;
  static const char code[] =
    "local t0 = os.clock()\n"
    "local k = 0\n"
    "while os.clock() - t0 < 2 do\n"
    "  k = k + 1\n"
    "  local f = loadstring('local s = 0 for i = 1, 300 do s = s + i * ' .. k .. ' churn(3) end return s')\n"
    "  f()\n"
    "  churn(200)\n"
    "  if k % 20 == 0 then jit.flush() end\n"
    "end\n";
  reset_out();
  o.interval = 0;
  o.interval_us = 200;
  ck_assert_int_eq(ljp_capture_start(L, &o), LJP_CAPTURE_SUCCESS);
  run(L, code, "@churn.lua");
  ck_assert_int_eq(ljp_capture_stop(L), LJP_CAPTURE_SUCCESS);
  ljp_capture_report(&c);
  decode_out(&d);
  check_consistent(&d, &c);
  cap_decoded_free(&d);
  lua_close(L);
}
END_TEST

/* ---- custom backtracer --------------------------------------------------- */

static void *my_frames[4] = {(void *)0x1000, (void *)0x2000};
static void tiny_backtracer(void *(*fw)(int, void *))
{
  fw(0, my_frames[0]);
  fw(1, my_frames[1]);
}

START_TEST(custom_backtracer_is_used)
{
  lua_State *L = new_state();
  struct ljp_capture_options o = opts(LJP_CAPTURE_CALLGRAPH,
                                      LJP_CAPTURE_TIMER_THREAD);
  struct ljp_capture_counters c;
  cap_decoded d;
  reset_out();
  ck_assert_int_eq(ljp_capture_set_backtracer(tiny_backtracer),
                   LJP_CAPTURE_SUCCESS);
  run(L, "jit.off()", "=off");
  ck_assert_int_eq(ljp_capture_start(L, &o), LJP_CAPTURE_SUCCESS);
  run(L, fib_lua, "@fib.lua");
  ck_assert_int_eq(ljp_capture_stop(L), LJP_CAPTURE_SUCCESS);
  ljp_capture_report(&c);
  decode_out(&d);
  check_consistent(&d, &c);
  ck_assert_uint_ge(cap_count1(&d, "|0x1000;0x2000") * 100 + SLACK, d.samples * 90);
  cap_decoded_free(&d);
  lua_close(L);
}
END_TEST

int main(int argc, char **argv)
{
  /* One case per test, so a single one can be run: program NAME. */
  const cap_test tests[] = {
      {"flavor_matches_headers", flavor_matches_headers},
      {"round_trip_counts_equal_report", round_trip_counts_equal_report},
      {"lua_frames_named_with_first_line", lua_frames_named_with_first_line},
      {"host_stacks_reach_lua_pcall_and_main", host_stacks_reach_lua_pcall_and_main},
      {"host_frames_lie_in_named_objects", host_frames_lie_in_named_objects},
      {"sandwich_lua_c_lua", sandwich_lua_c_lua},
      {"table_sort_is_a_fast_function", table_sort_is_a_fast_function},
      {"trace_samples_name_the_loop", trace_samples_name_the_loop},
      {"coroutine_samples_show_the_coroutine", coroutine_samples_show_the_coroutine},
      {"default_mode_writes_nothing", default_mode_writes_nothing},
      {"leaf_mode_keeps_top_frames", leaf_mode_keeps_top_frames},
      {"lifecycle_and_error_codes", lifecycle_and_error_codes},
      {"other_vm_is_refused", other_vm_is_refused},
      {"sigprof_disposition_restored", sigprof_disposition_restored},
      {"writer_failure_keeps_earlier_samples", writer_failure_keeps_earlier_samples},
      {"lua_close_while_running_completes_stream", lua_close_while_running_completes_stream},
      {"hundred_start_stop_cycles", hundred_start_stop_cycles},
      {"multithreaded_host", multithreaded_host},
      {"host_only_time_is_not_attached_to_lua", host_only_time_is_not_attached_to_lua},
      {"custom_backtracer_is_used", custom_backtracer_is_used},
      {"signal_safety_soak", signal_safety_soak},
      {"malloc_storm_with_trace_churn", malloc_storm_with_trace_churn},
  };
  return cap_run_suite("capture", tests, sizeof tests / sizeof tests[0],
                       argc, argv);
}
