/* cli_names.c — see cli_names.h. */
#include "cli_names.h"

#include <stdlib.h>

size_t cli_frame_name(cli_namebuf *b, const ljp_frame *f, ljp_name_style style,
                      ljp_flavor flavor, ljp_srcnames *src) {
  size_t n = ljp_frame_name_src(f, style, flavor, src, b->p, b->cap);
  if (n < b->cap)
    return n;
  if (n == (size_t)-1)
    return (size_t)-1; /* no room for the terminator */
  /* Some slack, so that a run of slightly longer names does not
   * reallocate for each. */
  size_t cap = n + 64 > n ? n + 64 : n + 1;
  char *p = b->owned ? realloc(b->p, cap) : malloc(cap);
  if (!p)
    return (size_t)-1;
  b->p = p;
  b->cap = cap;
  b->owned = 1;
  return ljp_frame_name_src(f, style, flavor, src, b->p, b->cap);
}

int cli_put_frame_name(FILE *out, const ljp_frame *f, ljp_name_style style,
                       ljp_flavor flavor,
                       void (*put)(FILE *, const char *, size_t)) {
  char small[512];
  cli_namebuf b = {small, sizeof(small), 0};
  size_t n = cli_frame_name(&b, f, style, flavor, NULL);
  if (n != (size_t)-1)
    put(out, b.p, n);
  cli_namebuf_free(&b);
  return n == (size_t)-1 ? -1 : 0;
}

void cli_namebuf_free(cli_namebuf *b) {
  if (b->owned)
    free(b->p);
  b->p = NULL;
  b->cap = 0;
  b->owned = 0;
}
