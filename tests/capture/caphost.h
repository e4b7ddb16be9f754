/*
 * caphost.h — test helper: a C host that embeds LuaJIT and runs the capture
 * core into memory (writer, on_stop, options), with C functions of known
 * cost registered in the state, and the checks every capture must pass.
 */
#ifndef CAPHOST_H
#define CAPHOST_H

#include <stddef.h>
#include <stdint.h>

#include <check.h>
#include <lua.h>

#include "capdecode.h"
#include "ljp_capture.h"

typedef struct membuf {
  uint8_t *p;
  size_t len, cap;
  int calls;
  int fail_after;      /* >= 0: the (fail_after+1)-th call fails */
} membuf;

extern membuf out;            /* the stream of the last run */
extern int on_stop_calls;
extern uint8_t hostbuf[16384];

size_t mem_writer(const void **data, size_t len, void *ctx);
int mem_on_stop(void *ctx, uint8_t *buf);
/* Empties out and installs the writer, on_stop and the default unwinder. */
void reset_out(void);
struct ljp_capture_options opts(int mode, int timer);
/* Burns CPU for seconds of wall time. */
void c_spin(double seconds);
void host_spin(double seconds);
/* sandwich(f): C work, then calls back into Lua. */
int c_sandwich(lua_State *L);
/* churn(n): n host allocations. */
int c_churn(lua_State *L);
/* A state with the standard libraries and sandwich/churn registered. */
lua_State *new_state(void);
/* Loads and runs code as chunk name (aborts the test on a Lua error). */
void run(lua_State *L, const char *code, const char *name);
/* Decodes out (LJP_CAPTURE_DUMP=path keeps a copy of the stream). */
void decode_out(cap_decoded *d);
/* Report and stream agree, and every tick is accounted for. */
void check_consistent(const cap_decoded *d,
                      const struct ljp_capture_counters *c);

/* One check case per test, so a single one can be run by name
 * (program NAME); returns the exit status. */
typedef struct cap_test {
  const char *name;
  const TTest *test;
} cap_test;
int cap_run_suite(const char *suite, const cap_test *tests, size_t n,
                  int argc, char **argv);

#endif
