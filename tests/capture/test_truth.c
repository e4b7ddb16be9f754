/*
 * test_truth.c — attribution against ground truth built by construction:
 * C functions of known cost, a JIT loop at a known depth, builtins, errors
 * thrown through C, coroutines.  Each test says where the time must be,
 * and the profile must say the same.
 *
 * Shares are measured on the VM thread's CPU clock (timer "thread"): a
 * wall-clock timer also ticks while ctest runs other tests beside this one.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "caphost.h"

/* Three samples of slack on shares: a tick can land in start-up. */
#define SLACK 300

/* ---- C functions of known cost ------------------------------------------- */

static __attribute__((noinline)) uint32_t crc32_buf(const uint8_t *p,
                                                    size_t n, uint32_t c)
{
  size_t i;
  int k;
  c = ~c;
  for (i = 0; i < n; i++) {
    c ^= p[i];
    for (k = 0; k < 8; k++)
      c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

/* burn.crc(n): n CRC-32 passes over 256 bytes; pure C time. */
static int l_crc_burn(lua_State *L)
{
  static uint8_t buf[256];
  int n = (int)luaL_checkinteger(L, 1), i;
  uint32_t c = 0;
  for (i = 0; i < n; i++)
    c = crc32_buf(buf, sizeof buf, c);
  lua_pushnumber(L, (lua_Number)c);
  return 1;
}

/* burn.call(f): calls the Lua function f at once; almost no time. */
static int l_call_cb(lua_State *L)
{
  lua_pushvalue(L, 1);
  lua_call(L, 0, 1);
  return 1;
}

static lua_State *truth_state(void)
{
  lua_State *L = new_state();
  static const luaL_Reg burn[] = {
    {"crc", l_crc_burn}, {"call", l_call_cb}, {NULL, NULL}
  };
  luaL_register(L, "burn", burn);
  lua_pop(L, 1);
  return L;
}

/* Runs code under the profiler (mode C, thread CPU timer) and decodes. */
static void profile(lua_State *L, const char *code, const char *name,
                    struct ljp_capture_counters *c, cap_decoded *d)
{
  struct ljp_capture_options o = opts(LJP_CAPTURE_CALLGRAPH,
                                      LJP_CAPTURE_TIMER_THREAD);
  reset_out();
  ck_assert_int_eq(ljp_capture_start(L, &o), LJP_CAPTURE_SUCCESS);
  run(L, code, name);
  ck_assert_int_eq(ljp_capture_stop(L), LJP_CAPTURE_SUCCESS);
  ljp_capture_report(c);
  decode_out(d);
  check_consistent(d, c);
}

/* ---- tests --------------------------------------------------------------- */

START_TEST(vm_layout_is_proven)
{
  lua_State *L = truth_state();
  struct ljp_capture_counters c;
  cap_decoded d;
  profile(L, "local x = 0 for i = 1, 1e6 do x = x + i end", "@v.lua", &c, &d);
  ck_assert_msg(c.vm_reader == 1, "VM reader refused: %s",
                ljp_capture_error());
  ck_assert_uint_eq(d.ljp_version, 0x81);
  cap_decoded_free(&d);
  lua_close(L);
}
END_TEST

/* (crc32_buf may carry a compiler suffix such as ".constprop.0".) */

/* A C function that burns CPU, then one that calls a trivial Lua
 * callback: the time belongs to the first, never to the callback. */
START_TEST(c_time_is_charged_to_the_c_function)
{
  lua_State *L = truth_state();
  struct ljp_capture_counters c;
  cap_decoded d;
  const char *const in_c[] = {"|l_crc_burn;", "|burn.crc;", NULL};
  size_t burn_host, burn_named, cb_inner;
  run(L, "jit.off()", "=off");
  profile(L,
          "local function cb() return 1 end\n"
          "local function each(n)\n"
          "  for i = 1, n do burn.crc(400) burn.call(cb) end\n"
          "end\n"
          "local t0 = os.clock()\n"
          "while os.clock() - t0 < 1.0 do each(10) end\n",
          "@each.lua", &c, &d);
  burn_host = cap_count1(&d, "|crc32_buf");
  {
    size_t i;
    const char *const *k;
    burn_named = 0;
    for (i = 0; i < d.nlines; i++)
      if (strstr(d.lines[i], "|crc32_buf"))
        for (k = in_c; *k; k++)
          if (strstr(d.lines[i], *k)) {
            burn_named++;
            break;
          }
  }
  cb_inner = cap_count1(&d, "|@each.lua:1;");
  ck_assert_uint_gt(burn_host, 100);
  /* >= 95 % of the samples in the burning function have it as the
   * innermost Lua-visible frame, under each and the main chunk. */
  ck_assert_uint_ge(burn_named * 100, burn_host * 95);
  ck_assert_uint_ge(cap_count2(&d, "|crc32_buf", ";@each.lua:2;@each.lua:0|")
                    * 100, burn_host * 95);
  /* The callback gets at most 5 %. */
  ck_assert_uint_le(cb_inner * 100, d.samples * 5 + SLACK);
  cap_decoded_free(&d);
  lua_close(L);
}
END_TEST

/* A JIT-compiled loop three named functions deep: the trace samples carry
 * the whole caller chain. */
START_TEST(trace_samples_carry_their_callers)
{
  lua_State *L = truth_state();
  struct ljp_capture_counters c;
  cap_decoded d;
  size_t chain;
  profile(L,
          "local function leaf(n)\n"
          "  local s = 0\n"
          "  for i = 1, n do s = s + i % 7 end\n"
          "  return s\n"
          "end\n"
          "local function mid(n) return leaf(n) + 1 end\n"
          "local function top(n) return mid(n) + 1 end\n"
          "local t0 = os.clock()\n"
          "while os.clock() - t0 < 1.0 do top(1e6) end\n",
          "@deep.lua", &c, &d);
  ck_assert_uint_gt(c.vmst_trace, 50);
  chain = cap_count2(&d, "TRACE|TRACE [",
                     "@deep.lua:3;@deep.lua:1;@deep.lua:6;@deep.lua:7;"
                     "@deep.lua:0|");
  ck_assert_uint_ge(chain * 100, c.vmst_trace * 95);
  /* And they reach main on the host side through the interpreter's entry. */
  ck_assert_uint_ge(cap_count2(&d, "TRACE|", ";main;") * 100,
                    c.vmst_trace * 90);
  cap_decoded_free(&d);
  lua_close(L);
}
END_TEST

/* string.format / table.concat-heavy code: the builtins are frames with
 * their names. */
START_TEST(builtins_are_named_frames)
{
  lua_State *L = truth_state();
  struct ljp_capture_counters c;
  cap_decoded d;
  run(L, "jit.off()", "=off");
  profile(L,
          "local function fmt()\n"
          "  local t = {}\n"
          "  for i = 1, 200 do t[i] = string.format('%5.2f|%d|%s', i / 3, i, 'x') end\n"
          "  return table.concat(t, ',')\n"
          "end\n"
          "local t0 = os.clock()\n"
          "while os.clock() - t0 < 0.8 do fmt() end\n",
          "@fmt.lua", &c, &d);
  ck_assert_uint_gt(cap_count1(&d, "|string.format;@fmt.lua:1;"), 20);
  ck_assert_uint_gt(cap_count1(&d, "|table.concat;@fmt.lua:1;") +
                    cap_count1(&d, "|string.format;@fmt.lua:1;"),
                    d.samples / 4);
  ck_assert_uint_eq(cap_count1(&d, "ffunc#"), 0);
  cap_decoded_free(&d);
  lua_close(L);
}
END_TEST

/* Host stacks: outside traces, >= 95 % reach the thread's root frame, also
 * while errors are thrown through C in a loop. */
START_TEST(host_stacks_reach_the_root)
{
  lua_State *L = truth_state();
  struct ljp_capture_counters c;
  cap_decoded d;
  uint64_t outside;
  run(L, "jit.off()", "=off");
  profile(L,
          "local function fib(n) if n < 2 then return n end return fib(n-1) + fib(n-2) end\n"
          "local function boom(i) error('boom ' .. i) end\n"
          "local t0 = os.clock()\n"
          "while os.clock() - t0 < 1.0 do\n"
          "  fib(15)\n"
          "  for i = 1, 50 do pcall(boom, i) end\n"
          "  burn.crc(50)\n"
          "end\n",
          "@roots.lua", &c, &d);
  outside = d.samples - c.vmst_trace;
  ck_assert_uint_gt(outside, 100);
  ck_assert_uint_le(d.host_incomplete * 100, outside * 5 + SLACK);
  ck_assert_uint_ge(cap_count1(&d, ";main;") * 100 + SLACK, outside * 95);
  ck_assert_uint_eq(c.host_incomplete, d.host_incomplete);
  cap_decoded_free(&d);
  lua_close(L);
}
END_TEST

/* format = 2 writes Tarantool's ljp 2: trace samples without stacks. */
START_TEST(format_2_is_tarantool_compatible)
{
  lua_State *L = truth_state();
  struct ljp_capture_options o = opts(LJP_CAPTURE_CALLGRAPH,
                                      LJP_CAPTURE_TIMER_WALL);
  struct ljp_capture_counters c;
  cap_decoded d;
  reset_out();
  o.format = 2;
  ck_assert_int_eq(ljp_capture_start(L, &o), LJP_CAPTURE_SUCCESS);
  run(L,
      "local function hot(n) local s = 0 for i = 1, n do s = s + i % 7 end return s end\n"
      "local t0 = os.clock()\n"
      "while os.clock() - t0 < 0.3 do hot(1e5) end\n",
      "@f2.lua");
  ck_assert_int_eq(ljp_capture_stop(L), LJP_CAPTURE_SUCCESS);
  ljp_capture_report(&c);
  cap_decode_memory(out.p, out.len, &d);
  ck_assert_int_eq(d.status, LJP_END);
  ck_assert_uint_eq(d.ljp_version, 2);
  ck_assert_uint_eq(d.x1_samples, 0);
  ck_assert_uint_eq(d.samples, c.samples);
  ck_assert_uint_gt(c.vmst_trace, 10);
  /* "TRACE|TRACE [n] @f2.lua:1|": no stacks. */
  {
    size_t i, bare = 0;
    for (i = 0; i < d.nlines; i++) {
      const char *l = d.lines[i];
      size_t n = strlen(l);
      if (strncmp(l, "TRACE|", 6) == 0 && !strchr(l, ';') && n &&
          l[n - 1] == '|' && strchr(l + 6, '|') == l + n - 1)
        bare++;
    }
    ck_assert_uint_eq(cap_count1(&d, "TRACE|"), bare);
  }
  cap_decoded_free(&d);
  lua_close(L);
}
END_TEST

int main(int argc, char **argv)
{
  /* One case per test, so a single one can be run: program NAME. */
  const cap_test tests[] = {
      {"vm_layout_is_proven", vm_layout_is_proven},
      {"c_time_is_charged_to_the_c_function", c_time_is_charged_to_the_c_function},
      {"trace_samples_carry_their_callers", trace_samples_carry_their_callers},
      {"builtins_are_named_frames", builtins_are_named_frames},
      {"host_stacks_reach_the_root", host_stacks_reach_the_root},
      {"format_2_is_tarantool_compatible", format_2_is_tarantool_compatible},
  };
  return cap_run_suite("truth", tests, sizeof tests / sizeof tests[0],
                       argc, argv);
}
