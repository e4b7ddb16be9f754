/* cli_json.c — see cli_json.h. */
#include "cli_json.h"

/* The library's private escaper: the tools link libljp statically, and one
 * copy keeps their JSON and the exporters' identical. */
#include "../src/json_text.h"

void cli_json_str(FILE *out, const char *s, size_t n) {
  fputc('"', out);
  size_t i = 0;
  while (i < n) {
    size_t k = ljp__json_plain(s + i, n - i);
    fwrite(s + i, 1, k, out);
    i += k;
    if (i < n) {
      char esc[LJP_JSON_ESC_MAX];
      fwrite(esc, 1, ljp__json_escape(s + i, esc), out);
      i++;
    }
  }
  fputc('"', out);
}
