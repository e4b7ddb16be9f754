/*
 * fuzz_folded.c — ljpsvg's collapsed-stack text reader and what it feeds:
 * folded text of any bytes, fed in pieces, into the call trees; then the
 * flame-graph layout and the SVG writer, whose output is parsed back with
 * libxml2 (an SVG that a browser refuses is a finding too).
 *
 * Input: one option byte, then the text.  Option bits: 0 reverse, 1 keep
 * the first count of two-count lines (differential graph), 2-5 palette,
 * 6 icicle, 7 colour-blind hues.
 *
 * Invariant: feeding the text in pieces (sizes from a generator seeded by
 * the input) builds the same tree as feeding it whole.
 */
#include "fuzz.h"

#include "folded.h"
#include "layout.h"
#include "svg.h"

#include <libxml/parser.h>
#include <libxml/xmlwriter.h>
#include <string.h>

static int read_text(const uint8_t *p, size_t n, int reverse, int pieces,
                     ljp_tree *after, ljp_tree *before) {
  folded_reader fr;
  folded_init(&fr, after, before, reverse);
  int rc = 0;
  if (!pieces) {
    rc = folded_feed(&fr, p, n);
  } else {
    uint32_t x = 2463534242u ^ (uint32_t)n;
    size_t pos = 0;
    while (rc == 0 && pos < n) {
      x ^= x << 13;
      x ^= x >> 17;
      x ^= x << 5;
      size_t k = 1 + x % 23;
      if (k > n - pos)
        k = n - pos;
      rc = folded_feed(&fr, p + pos, k);
      pos += k;
    }
  }
  if (rc == 0)
    rc = folded_finish(&fr);
  folded_free(&fr);
  return rc;
}

typedef struct text {
  char *p;
  size_t len, cap;
} text;

static int collect(void *ctx, const char *line, size_t len) {
  text *t = ctx;
  if (t->len + len > t->cap) {
    size_t cap = (t->len + len) * 2 + 64;
    char *np = realloc(t->p, cap);
    if (!np)
      return -1;
    t->p = np;
    t->cap = cap;
  }
  memcpy(t->p + t->len, line, len);
  t->len += len;
  return 0;
}

static void render(const ljp_tree *after, const ljp_tree *before, uint8_t o) {
  int64_t total = ljp_tree_node_total(after, 0);
  if (total < 0)
    total = 0;
  fg_layout l;
  if (fg_layout_build(after, total, 0.1 * (double)total / 1180.0, 50000, &l))
    return;
  svg_opts so;
  memset(&so, 0, sizeof(so));
  so.title = "Flame Graph";
  so.fonttype = "Verdana";
  so.countname = "samples";
  so.nametype = "Function:";
  so.notes = "fuzz <&> \x01";
  so.width = 1200;
  so.frame_height = 16;
  so.fontsize = 12;
  so.fontwidth = 0.59;
  so.factor = 1;
  so.inverted = (o >> 6) & 1;
  so.pal.id = (palette_id)((o >> 2) & 15);
  so.pal.colorblind = (o >> 7) & 1;
  so.legend = so.pal.id == PAL_LUA;
  svg_diff d = {NULL, 1.0, 5};
  if (before && ljp_tree_node_count(before) > 1)
    d.before = before;
  xmlBufferPtr buf = xmlBufferCreate();
  xmlTextWriterPtr w = buf ? xmlNewTextWriterMemory(buf, 0) : NULL;
  if (w) {
    int rc = svg_write(w, after, &l, &so, &d);
    xmlFreeTextWriter(w);
    if (rc == 0) {
      xmlDocPtr doc = xmlReadMemory((const char *)xmlBufferContent(buf),
                                    xmlBufferLength(buf), "fuzz.svg", NULL,
                                    XML_PARSE_NONET | XML_PARSE_NOERROR |
                                        XML_PARSE_NOWARNING | XML_PARSE_HUGE);
      FUZZ_CHECK(doc != NULL);
      xmlFreeDoc(doc);
    }
  }
  if (buf)
    xmlBufferFree(buf);
  fg_layout_free(&l);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  uint8_t o = data[0];
  int reverse = o & 1, diff = (o >> 1) & 1;
  ljp_tree *a1 = ljp_tree_new(), *a2 = ljp_tree_new();
  ljp_tree *b1 = diff ? ljp_tree_new() : NULL;
  if (a1 && a2 && (!diff || b1) &&
      read_text(data + 1, size - 1, reverse, 0, a1, b1) == 0 &&
      read_text(data + 1, size - 1, reverse, 1, a2, NULL) == 0) {
    text t1 = {0}, t2 = {0};
    if (ljp_tree_write_folded(a1, 0, collect, &t1) == LJP_OK &&
        ljp_tree_write_folded(a2, 0, collect, &t2) == LJP_OK) {
      FUZZ_CHECK(t1.len == t2.len && (t1.len == 0 || memcmp(t1.p, t2.p, t1.len) == 0));
      FUZZ_CHECK(ljp_tree_node_total(a1, 0) == ljp_tree_node_total(a2, 0));
    }
    free(t1.p);
    free(t2.p);
    render(a1, b1, o);
  }
  ljp_tree_free(a1);
  ljp_tree_free(a2);
  ljp_tree_free(b1);
  return 0;
}
