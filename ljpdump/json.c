/* json.c — see json.h. */
#include "json.h"

#include "cli_json.h"

void json_str(FILE *out, const char *s, size_t n) { cli_json_str(out, s, n); }
