/*
 * srcnames.c — naming Lua functions from their sources (see ljp.h).
 */
#include "internal.h"

#include <stdlib.h>

struct ljp_srcnames {
  int unused;
};

LJP_API ljp_srcnames *ljp_srcnames_new(void) {
  return calloc(1, sizeof(ljp_srcnames));
}

LJP_API void ljp_srcnames_free(ljp_srcnames *s) { free(s); }

LJP_API ljp_status ljp_srcnames_add_dir(ljp_srcnames *s, const char *dir) {
  return s && dir ? LJP_OK : LJP_E_ARG;
}

LJP_API const char *ljp_srcnames_lookup(ljp_srcnames *s, const char *chunk,
                                        size_t len, uint64_t line) {
  (void)s, (void)chunk, (void)len, (void)line;
  return NULL;
}

LJP_API void ljp_srcnames_stats(const ljp_srcnames *s, size_t *tried,
                                size_t *found) {
  (void)s;
  if (tried)
    *tried = 0;
  if (found)
    *found = 0;
}
