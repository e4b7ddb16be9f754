/*
 * inject.h — allocation-failure injection for tests.
 *
 * The test executable is linked with -Wl,--wrap=malloc,--wrap=calloc,
 * --wrap=realloc,--wrap=free, so every allocation the code under test
 * makes (libljp and the tools' cores are linked in statically) goes
 * through inject.c, which can fail the Nth one and counts the blocks that
 * are live.  Allocations inside libc, libxml2 or SQLite are not wrapped.
 */
#ifndef LJP_INJECT_H
#define LJP_INJECT_H

#include <stddef.h>
#include <stdint.h>

/* Arms the injector: the nth allocation from now fails (n >= 1), every
 * later one succeeds.  n = 0 disarms. */
void inject_arm(uint64_t n);
/* Allocations counted since inject_arm(), and whether the failure was
 * delivered. */
uint64_t inject_count(void);
int inject_fired(void);
/* Blocks allocated through the wrappers and not yet freed. */
long inject_live(void);

#endif
