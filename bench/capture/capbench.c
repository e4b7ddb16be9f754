/*
 * capbench — what the capture core costs.
 *
 * For each payload (fib, binary-trees) and each setting (10 ms and 1 ms
 * ITIMER_PROF, 1 ms wall-clock timer) it runs R rounds of a pair: the payload
 * without profiling, then with the capture core in CALLGRAPH mode writing to
 * a memory sink, each on a fresh lua_State.  It reports:
 *   - the per-sample cost measured inside the process: handler ns (our
 *     SIGPROF handler including the chained LuaJIT handler) and safe-point
 *     ns (pairing, Lua stack walk, symbols, encoding), from the counters;
 *   - the CPU share those costs take at the achieved rate;
 *   - the median over rounds of the wall-time ratio profiled/plain.
 * Wall ratios on a shared 2-vCPU machine carry +-10 % noise; the in-process
 * per-sample cost is the stable number.
 *
 *   capbench [-r ROUNDS] [-p fib|trees]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "ljp_capture.h"

static const char fib_lua[] =
  "local function fib(n) if n < 2 then return n end return fib(n-1) + fib(n-2) end\n"
  "for i = 1, 40 do fib(30) end\n";

static const char trees_lua[] =
  "local function bottom(d) if d == 0 then return {} end d = d - 1\n"
  "  return {bottom(d), bottom(d)} end\n"
  "local function check(t) if t[1] then return 1 + check(t[1]) + check(t[2]) end return 1 end\n"
  "local n = 0\n"
  "for d = 4, 16, 2 do\n"
  "  for i = 1, 2 ^ (16 - d + 4) do n = n + check(bottom(d)) end\n"
  "end\n";

static size_t sink_bytes;
static uint8_t hostbuf[1 << 16];

static size_t sink(const void **data, size_t len, void *ctx)
{
  (void)data;
  (void)ctx;
  sink_bytes += len;
  return len;
}

static int on_stop(void *ctx, uint8_t *buf)
{
  (void)ctx;
  (void)buf;
  return 0;
}

static double now(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu(void)
{
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Runs code once; with opt != NULL under the capture core. */
static double run_once(const char *code, const struct ljp_capture_options *opt,
                       struct ljp_capture_counters *c, double *cpu_s)
{
  lua_State *L = luaL_newstate();
  double t0, t1, c0;
  luaL_openlibs(L);
  if (luaL_loadbuffer(L, code, strlen(code), "=payload") != 0) {
    fprintf(stderr, "capbench: %s\n", lua_tostring(L, -1));
    exit(1);
  }
  if (opt && ljp_capture_start(L, opt) != LJP_CAPTURE_SUCCESS) {
    fprintf(stderr, "capbench: start failed\n");
    exit(1);
  }
  c0 = cpu();
  t0 = now();
  if (lua_pcall(L, 0, 0, 0) != 0) {
    fprintf(stderr, "capbench: %s\n", lua_tostring(L, -1));
    exit(1);
  }
  t1 = now();
  if (opt) {
    ljp_capture_stop(L);
    ljp_capture_report(c);
  }
  *cpu_s = cpu() - c0;
  lua_close(L);
  return t1 - t0;
}

static int cmp(const void *a, const void *b)
{
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static void bench(const char *name, const char *code, int rounds)
{
  static const struct {
    const char *label;
    int timer;
    uint64_t ms;
  } set[] = {
    {"10 ms itimer", LJP_CAPTURE_TIMER_ITIMER, 10},
    {"1 ms itimer", LJP_CAPTURE_TIMER_ITIMER, 1},
    {"1 ms wall", LJP_CAPTURE_TIMER_WALL, 1},
  };
  size_t k;
  for (k = 0; k < sizeof set / sizeof set[0]; k++) {
    double ratio[64], base_med[64];
    uint64_t samples = 0, hns = 0, sns = 0, ticks = 0;
    double rate = 0, cpu_prof = 0;
    int r;
    for (r = 0; r < rounds; r++) {
      struct ljp_capture_options o;
      struct ljp_capture_counters c;
      double cb, cp, tb, tp;
      memset(&o, 0, sizeof o);
      o.mode = LJP_CAPTURE_CALLGRAPH;
      o.interval = set[k].ms;
      o.timer = set[k].timer;
      o.buf = hostbuf;
      o.len = sizeof hostbuf;
      tb = run_once(code, NULL, NULL, &cb);
      tp = run_once(code, &o, &c, &cp);
      ratio[r] = tp / tb;
      base_med[r] = tb;
      samples += c.samples;
      ticks += c.ticks;
      hns += c.handler_ns;
      sns += c.safepoint_ns;
      rate += c.rate_hz;
      cpu_prof += cp;
    }
    qsort(ratio, (size_t)rounds, sizeof ratio[0], cmp);
    qsort(base_med, (size_t)rounds, sizeof base_med[0], cmp);
    {
      double h = ticks ? (double)hns / (double)ticks : 0;
      double s = samples ? (double)sns / (double)samples : 0;
      double share = cpu_prof > 0 ? (double)(hns + sns) * 1e-9 / cpu_prof * 100 : 0;
      printf("%-6s %-13s plain %.3f s  samples/run %6.0f  rate %6.0f Hz  "
             "handler %6.0f ns  safepoint %6.0f ns  per-sample %5.1f us  "
             "in-process %.2f %%  wall ratio median %.3f [%.3f..%.3f]\n",
             name, set[k].label, base_med[rounds / 2],
             (double)samples / rounds, rate / rounds, h, s, (h + s) / 1000,
             share, ratio[rounds / 2], ratio[0], ratio[rounds - 1]);
      fflush(stdout);
    }
  }
}

int main(int argc, char **argv)
{
  int rounds = 5, i;
  const char *only = NULL;
  for (i = 1; i < argc; i++) {
    if (strcmp(argv[i], "-r") == 0 && i + 1 < argc)
      rounds = atoi(argv[++i]);
    else if (strcmp(argv[i], "-p") == 0 && i + 1 < argc)
      only = argv[++i];
    else {
      printf("usage: capbench [-r ROUNDS] [-p fib|trees]\n");
      return strcmp(argv[i], "--help") == 0 ? 0 : 2;
    }
  }
  if (rounds < 1 || rounds > 64)
    rounds = 5;
  ljp_capture_set_writer(sink);
  ljp_capture_set_on_stop(on_stop);
  if (!only || strcmp(only, "fib") == 0)
    bench("fib", fib_lua, rounds);
  if (!only || strcmp(only, "trees") == 0)
    bench("trees", trees_lua, rounds);
  return 0;
}
