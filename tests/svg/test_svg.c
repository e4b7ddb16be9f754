/* Unit tests of ljpsvg: UTF-8 repair, the folded reader, layout pruning,
 * and whole documents parsed back with libxml2 (well-formed, one element
 * per node above the min width, widths that add up, every name escaped). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/entities.h>
#include <libxml/parser.h>
#include <libxml/xpath.h>
#include <libxml/xpathInternals.h>

#include "folded.h"
#include "layout.h"
#include "svg.h"
#include "utf8.h"
#include "xmltext.h"

/* ------------------------------------------------------------------------ */
/* UTF-8                                                                    */
/* ------------------------------------------------------------------------ */

static char *repair(const char *s, size_t n, size_t max_cp, size_t *cps)
{
  strbuf b = {0};
  *cps = utf8_repair(s, n, max_cp, &b);
  sb_put(&b, "", 0);
  return b.p;
}

START_TEST(utf8_valid_kept)
{
  size_t cps;
  char *r = repair("a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x94\xA5", 10, 100, &cps);
  ck_assert_str_eq(r, "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x94\xA5");
  ck_assert_uint_eq(cps, 4);
  free(r);
}
END_TEST

START_TEST(utf8_invalid_replaced)
{
  size_t cps;
  /* stray continuation, truncated 3-byte, overlong, surrogate, NUL,
   * control, U+FFFE, byte 0xFF */
  const char in[] = "\x80|\xE2\x82|\xC0\xAF|\xED\xA0\x80|\0|\x01|\xEF\xBF\xBE|\xFF";
  char *r = repair(in, sizeof in - 1, 100, &cps);
  ck_assert_str_eq(r, "\xEF\xBF\xBD|\xEF\xBF\xBD\xEF\xBF\xBD|\xEF\xBF\xBD\xEF\xBF\xBD|"
                      "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD|\xEF\xBF\xBD|\xEF\xBF\xBD|"
                      "\xEF\xBF\xBD|\xEF\xBF\xBD");
  free(r);
  r = repair("tab\there", 8, 100, &cps);
  ck_assert_str_eq(r, "tab\there");
  free(r);
}
END_TEST

START_TEST(utf8_cut)
{
  size_t cps;
  char *r = repair("abc\xC3\xA9" "def", 8, 4, &cps);
  ck_assert_str_eq(r, "abc\xC3\xA9\xE2\x80\xA6");
  ck_assert_uint_eq(cps, 5);
  free(r);
  ck_assert_uint_eq(utf8_prefix("\xC3\xA9\xC3\xA9x", 5, 2), 4);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Folded reader                                                            */
/* ------------------------------------------------------------------------ */

typedef struct sink {
  char buf[8192];
  size_t len;
} sink;

static int sink_emit(void *ctx, const char *line, size_t len)
{
  sink *s = ctx;
  ck_assert_uint_lt(s->len + len, sizeof s->buf);
  memcpy(s->buf + s->len, line, len);
  s->len += len;
  s->buf[s->len] = '\0';
  return 0;
}

static const char *folded_of(const ljp_tree *t, sink *s)
{
  s->len = 0;
  s->buf[0] = '\0';
  ck_assert_int_eq(ljp_tree_write_folded(t, 0, sink_emit, s), LJP_OK);
  return s->buf;
}

static const char FOLDED_IN[] =
    "\xEF\xBB\xBF" "a;b 3\n"       /* byte-order mark */
    "a;b\t4\r\n"                   /* tab, CRLF */
    "a;c   2.5\n"                  /* spaces, fraction rounds up */
    "a;d 7 9\n"                    /* differential: before 7, after 9 */
    "a;e;; 1\n"                    /* trailing empty frames dropped */
    ";x 1\n"                       /* leading empty frame kept */
    " 5\n"                         /* the empty stack: root only */
    "\n"                           /* blank: no error */
    "no count\n"
    "a;b 12x\n"
    "a;b 1.2.3\n"
    "a;b 99999999999999999999\n"   /* beyond int64 */
    "a;b 3";                       /* no final newline */

static void check_folded_result(ljp_tree *after, ljp_tree *before,
                                folded_reader *fr)
{
  sink s;
  ck_assert_str_eq(folded_of(after, &s), ";x 1\na;b 10\na;c 3\na;d 9\na;e 1\n");
  ck_assert_str_eq(folded_of(before, &s), "a;d 7\n");
  ck_assert_uint_eq(fr->lines, 13);
  ck_assert_uint_eq(fr->ignored, 4);
  /* "no count": line 9, after 3 + 6 + 7 + 10 + 8 + 8 + 5 + 3 + 1 bytes. */
  ck_assert_uint_eq(fr->first_ignored, 9);
  ck_assert_uint_eq(fr->first_ignored_offset, 51);
  ck_assert_uint_eq(fr->rounded, 1);
  ck_assert_uint_eq(fr->differential, 1);
  ck_assert_int_eq(ljp_tree_node_total(after, 0), 5 + 1 + 10 + 3 + 9 + 1);
}

START_TEST(folded_parse)
{
  ljp_tree *after = ljp_tree_new(), *before = ljp_tree_new();
  folded_reader fr;
  folded_init(&fr, after, before, 0);
  ck_assert_int_eq(folded_feed(&fr, FOLDED_IN, sizeof FOLDED_IN - 1), 0);
  ck_assert_int_eq(folded_finish(&fr), 0);
  check_folded_result(after, before, &fr);
  folded_free(&fr);
  ljp_tree_free(after);
  ljp_tree_free(before);
}
END_TEST

START_TEST(folded_byte_by_byte)
{
  /* Pieces of any size give the same result. */
  ljp_tree *after = ljp_tree_new(), *before = ljp_tree_new();
  folded_reader fr;
  folded_init(&fr, after, before, 0);
  for (size_t i = 0; i < sizeof FOLDED_IN - 1; i++)
    ck_assert_int_eq(folded_feed(&fr, FOLDED_IN + i, 1), 0);
  ck_assert_int_eq(folded_finish(&fr), 0);
  check_folded_result(after, before, &fr);
  folded_free(&fr);
  ljp_tree_free(after);
  ljp_tree_free(before);
}
END_TEST

START_TEST(folded_shared_prefixes)
{
  /* Lines sharing text prefixes that are, or are not, whole frames. */
  ljp_tree *t = ljp_tree_new();
  folded_reader fr;
  folded_init(&fr, t, NULL, 0);
  const char in[] = "a;b;c 1\na;b;d 2\na;b 4\na;bc 8\na;b;c;e 16\nab;c 32\n"
                    "ab;c 64\nab 128\n 256\na;b;c 512\na;b;;c 1024\n";
  ck_assert_int_eq(folded_feed(&fr, in, sizeof in - 1), 0);
  ck_assert_int_eq(folded_finish(&fr), 0);
  sink s;
  ck_assert_str_eq(folded_of(t, &s), "a;b 4\na;b;;c 1024\na;b;c 513\n"
                                     "a;b;c;e 16\na;b;d 2\na;bc 8\nab 128\n"
                                     "ab;c 96\n");
  ck_assert_int_eq(ljp_tree_node_total(t, 0), 2047);
  folded_free(&fr);
  ljp_tree_free(t);
}
END_TEST

/* Folded text of any size, malloc'ed. */
typedef struct big_sink {
  char *p;
  size_t len, cap;
} big_sink;

static int big_emit(void *ctx, const char *line, size_t len)
{
  big_sink *s = ctx;
  if (s->len + len + 1 > s->cap) {
    s->cap = (s->len + len + 1) * 2;
    s->p = realloc(s->p, s->cap);
    ck_assert_ptr_nonnull(s->p);
  }
  memcpy(s->p + s->len, line, len);
  s->len += len;
  s->p[s->len] = '\0';
  return 0;
}

static char *big_folded_of(const ljp_tree *t)
{
  big_sink s = {NULL, 0, 0};
  ck_assert_int_eq(ljp_tree_write_folded(t, 0, big_emit, &s), LJP_OK);
  return s.p ? s.p : strdup("");
}

/* Random lines, each a variation of the one before (a frame cut, grown by
 * a character, replaced, or the stack cut and regrown), so that they
 * first differ at every offset, inside and at the edge of a compared
 * word and right at separators.  The reader that reuses the previous
 * line's frames must build the same tree as readers that see each line
 * alone. */
START_TEST(folded_prefix_random)
{
  static const char *const names[] = {
      "a", "ab", "abc", "abcdefgh", "abcdefghi", "abcdefghijklmnop",
      "abcdefghijklmnopq", "@app/module12.lua:11", "@app/module12.lua:1",
      "lj_BC_FUNCC_1", "lj_BC_FUNCC_12", "x"};
  enum { NNAMES = sizeof names / sizeof names[0], LINES = 3000, DEPTH = 24 };
  ljp_tree *cached = ljp_tree_new(), *alone = ljp_tree_new();
  folded_reader fr;
  folded_init(&fr, cached, NULL, 0);
  unsigned st = 99, stack[DEPTH], extra[DEPTH];
  size_t depth = 1;
  stack[0] = 0, extra[0] = 0;
  char line[DEPTH * 24 + 32];
  for (int k = 0; k < LINES; k++) {
    st = st * 1103515245u + 12345u;
    unsigned r = st >> 16;
    size_t at = depth ? (r >> 4) % depth : 0;
    switch (r & 3) {
    case 0: /* replace one frame */
      stack[at] = (r >> 9) % NNAMES;
      extra[at] = 0;
      break;
    case 1: /* grow one frame by a character */
      extra[at] = (extra[at] + 1) % 3;
      break;
    case 2: /* cut the stack */
      depth = at + 1;
      break;
    default: /* push a frame */
      if (depth < DEPTH) {
        stack[depth] = (r >> 9) % NNAMES;
        extra[depth++] = (r >> 13) % 3;
      }
    }
    size_t n = 0;
    for (size_t i = 0; i < depth; i++) {
      n += (size_t)sprintf(line + n, "%s%s%.*s", i ? ";" : "",
                           names[stack[i]], (int)extra[i], "zz");
    }
    n += (size_t)sprintf(line + n, " %u\n", 1 + (r >> 20) % 5);
    ck_assert_int_eq(folded_feed(&fr, line, n), 0);
    folded_reader one;
    folded_init(&one, alone, NULL, 0);
    ck_assert_int_eq(folded_feed(&one, line, n), 0);
    ck_assert_int_eq(folded_finish(&one), 0);
    folded_free(&one);
  }
  ck_assert_int_eq(folded_finish(&fr), 0);
  char *a = big_folded_of(cached), *b = big_folded_of(alone);
  ck_assert_uint_gt(strlen(a), 10000);
  size_t d = 0;
  while (a[d] && a[d] == b[d])
    d++;
  ck_assert_msg(a[d] == b[d], "folded text differs at byte %zu", d);
  free(a);
  free(b);
  ck_assert_uint_eq(ljp_tree_node_count(cached), ljp_tree_node_count(alone));
  folded_free(&fr);
  ljp_tree_free(cached);
  ljp_tree_free(alone);
}
END_TEST

START_TEST(folded_reverse_and_binary)
{
  ljp_tree *t = ljp_tree_new();
  folded_reader fr;
  folded_init(&fr, t, NULL, 1);
  const char in[] = "a;b\0c;d 2\n\xff;\xfe 1\n";
  ck_assert_int_eq(folded_feed(&fr, in, sizeof in - 1), 0);
  ck_assert_int_eq(folded_finish(&fr), 0);
  sink s;
  folded_of(t, &s);
  ck_assert_uint_eq(s.len, 16);
  ck_assert_int_eq(memcmp(s.buf, "d;b\0c;a 2\n\xfe;\xff 1\n", 16), 0);
  ck_assert_uint_eq(fr.differential, 1 - 1);
  folded_free(&fr);
  ljp_tree_free(t);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Layout                                                                   */
/* ------------------------------------------------------------------------ */

static ljp_tree *tree_of(const char *text)
{
  ljp_tree *t = ljp_tree_new();
  folded_reader fr;
  folded_init(&fr, t, NULL, 0);
  ck_assert_int_eq(folded_feed(&fr, text, strlen(text)), 0);
  ck_assert_int_eq(folded_finish(&fr), 0);
  folded_free(&fr);
  return t;
}

static int cmp_width_desc(const void *a, const void *b)
{
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? 1 : x > y ? -1 : 0;
}

/* The widths of boxes 1..n of l, widest first. */
static int64_t *sorted_widths(const fg_layout *l)
{
  int64_t *w = malloc(l->n * sizeof *w);
  for (size_t i = 1; i < l->n; i++)
    w[i - 1] = fg_box_width(l, i);
  qsort(w, l->n - 1, sizeof *w, cmp_width_desc);
  return w;
}

/* Every cap keeps exactly that many boxes, and they are the widest: the
 * kept widths are the first of all widths sorted (many equal ones). */
START_TEST(layout_cap_keeps_widest)
{
  char *text = malloc(64 * 400);
  size_t len = 0;
  unsigned st = 12345;
  for (int i = 0; i < 400; i++) {
    st = st * 1103515245u + 12345u;
    unsigned a = st >> 16 & 7, b = st >> 20 & 15, c = st >> 24 & 3;
    len += (size_t)sprintf(text + len, "m;a%u;b%u;c%u %u\n", a, b, c,
                           1 + (st >> 8 & (i % 2 ? 3 : 1023)));
  }
  ljp_tree *t = tree_of(text);
  fg_layout all;
  ck_assert_int_eq(fg_layout_build(t, ljp_tree_node_total(t, 0), 0, 0, &all),
                   0);
  int64_t *want = sorted_widths(&all);
  for (size_t cap = 1; cap < all.n; cap += cap < 40 ? 1 : 37) {
    fg_layout l;
    ck_assert_int_eq(fg_layout_build(t, ljp_tree_node_total(t, 0), 0, cap, &l),
                     0);
    ck_assert_uint_eq(l.n, cap);
    int64_t *got = sorted_widths(&l);
    for (size_t i = 0; i + 1 < cap; i++)
      ck_assert_int_eq(got[i], want[i]);
    for (size_t i = 1; i < l.n; i++) { /* parents are kept and come first */
      size_t p = fg_box_parent(&l, i);
      ck_assert_uint_lt(p, i);
      ck_assert_uint_eq(l.boxes[p].node,
                        ljp_tree_node_parent(t, l.boxes[i].node));
      ck_assert_uint_eq(l.boxes[i].depth, l.boxes[p].depth + 1);
    }
    free(got);
    fg_layout_free(&l);
  }
  free(want);
  fg_layout_free(&all);
  ljp_tree_free(t);
  free(text);
}
END_TEST

START_TEST(layout_prune_and_cap)
{
  ljp_tree *t = tree_of("m;a 50\nm;b 30\nm;b;x 15\nm;c 4\nm;d 1\n");
  fg_layout l;
  /* Everything: root, m, a, b, x, c, d. */
  ck_assert_int_eq(fg_layout_build(t, 100, 0, 0, &l), 0);
  ck_assert_uint_eq(l.n, 7);
  ck_assert_uint_eq(l.max_depth, 3);
  /* Order: root, m, a, b, x, c, d; positions by name order. */
  ck_assert_int_eq(l.boxes[2].start, 0);
  ck_assert_int_eq(l.boxes[3].start, 50);
  ck_assert_int_eq(l.boxes[4].start, 50);
  ck_assert_int_eq(l.boxes[5].start, 95);
  ck_assert_int_eq(l.boxes[6].start, 99);
  ck_assert_uint_eq(fg_box_parent(&l, 4), 3);
  ck_assert_uint_eq(fg_box_parent(&l, 5), 1);
  ck_assert_uint_eq(fg_box_parent(&l, 0), SIZE_MAX);
  ck_assert_int_eq(fg_box_width(&l, 0), 100);
  ck_assert_int_eq(fg_box_width(&l, 4), 15);
  fg_layout_free(&l);
  /* min width 4: d goes. */
  ck_assert_int_eq(fg_layout_build(t, 100, 4, 0, &l), 0);
  ck_assert_uint_eq(l.n, 6);
  fg_layout_free(&l);
  /* cap 4: root, m, a, b (the widest). */
  ck_assert_int_eq(fg_layout_build(t, 100, 0, 4, &l), 0);
  ck_assert_uint_eq(l.n, 4);
  ck_assert_uint_eq(l.max_depth, 2);
  ck_assert_int_eq(fg_box_width(&l, 3), 45);
  ck_assert_uint_eq(fg_box_parent(&l, 3), 1);
  fg_layout_free(&l);
  ljp_tree_free(t);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Whole documents                                                          */
/* ------------------------------------------------------------------------ */

static svg_opts default_opts(void)
{
  svg_opts o;
  memset(&o, 0, sizeof o);
  o.title = "T <&> \"t\"";
  o.fonttype = "Verdana";
  o.countname = "samples";
  o.nametype = "Function:";
  o.width = 1200;
  o.frame_height = 16;
  o.fontsize = 12;
  o.fontwidth = 0.59;
  o.factor = 1;
  o.pal.id = PAL_LUA;
  o.legend = 1;
  return o;
}

static xmlDocPtr render(const ljp_tree *t, const fg_layout *l,
                        const svg_opts *o, const svg_diff *d)
{
  xmlBufferPtr buf = xmlBufferCreate();
  xmlTextWriterPtr w = xmlNewTextWriterMemory(buf, 0);
  ck_assert_int_eq(svg_write(w, t, l, o, d), 0);
  xmlFreeTextWriter(w);
  /* Strict parse: no recovery, no network, errors are failures. */
  xmlDocPtr doc = xmlReadMemory((const char *)xmlBufferContent(buf),
                                xmlBufferLength(buf), "graph.svg", NULL,
                                XML_PARSE_NONET | XML_PARSE_NOERROR);
  ck_assert_msg(doc != NULL, "output is not well-formed XML");
  xmlBufferFree(buf);
  return doc;
}

/* The document's bytes, through the writer only or with the frames handed
 * to a direct sink (as ljpsvg writes files). */
static int to_buffer(void *ctx, const char *p, size_t len)
{
  return xmlBufferAdd(ctx, BAD_CAST p, (int)len) == 0 ? 0 : -1;
}

static char *render_bytes(const ljp_tree *t, const fg_layout *l,
                          const svg_opts *o, const svg_diff *d, int direct)
{
  xmlBufferPtr buf = xmlBufferCreate();
  xmlTextWriterPtr w = xmlNewTextWriterMemory(buf, 0);
  ck_assert_int_eq(direct ? svg_write_direct(w, to_buffer, buf, t, l, o, d)
                          : svg_write(w, t, l, o, d), 0);
  xmlFreeTextWriter(w);
  char *s = strdup((const char *)xmlBufferContent(buf));
  xmlBufferFree(buf);
  return s;
}

/* User text in attributes keeps its characters (the document declares
 * UTF-8: no character references), and handing the frames to a direct
 * sink changes no byte. */
START_TEST(document_direct_same_bytes)
{
  ljp_tree *t = tree_of("m;a\xc3\xa9 5\nm;<b> 3\nm;c 1\n");
  fg_layout l;
  ck_assert_int_eq(fg_layout_build(t, ljp_tree_node_total(t, 0), 0, 0, &l), 0);
  svg_opts o = default_opts();
  o.fonttype = "N\xc3\xb6t\xc3\xb6 \xe2\x82\xac";
  o.nametype = "Fn \xc3\xa9:";
  ljp_tree *before = tree_of("m;a\xc3\xa9 2\nm;c 4\n");
  svg_diff none = {0}, diff = {before, 1.0, 5};
  for (int k = 0; k < 2; k++) {
    const svg_diff *dd = k ? &diff : &none;
    char *a = render_bytes(t, &l, &o, dd, 0), *b = render_bytes(t, &l, &o, dd, 1);
    ck_assert_str_eq(a, b);
    ck_assert_ptr_nonnull(strstr(a, "font-family=\"N\xc3\xb6t\xc3\xb6 \xe2\x82\xac\""));
    ck_assert_ptr_nonnull(strstr(a, "data-nametype=\"Fn \xc3\xa9:\""));
    ck_assert_ptr_nonnull(strstr(a, "<title>a\xc3\xa9 ("));
    ck_assert_ptr_nonnull(strstr(a, "<title>&lt;b&gt; ("));
    free(a);
    free(b);
  }
  fg_layout_free(&l);
  ljp_tree_free(t);
  ljp_tree_free(before);
}
END_TEST

static xmlXPathObjectPtr xpath(xmlDocPtr doc, const char *expr)
{
  xmlXPathContextPtr ctx = xmlXPathNewContext(doc);
  xmlXPathRegisterNs(ctx, BAD_CAST "s", BAD_CAST "http://www.w3.org/2000/svg");
  xmlXPathObjectPtr r = xmlXPathEvalExpression(BAD_CAST expr, ctx);
  xmlXPathFreeContext(ctx);
  ck_assert_ptr_nonnull(r);
  return r;
}

static double attr_d(xmlNodePtr n, const char *a)
{
  xmlChar *v = xmlGetProp(n, BAD_CAST a);
  ck_assert_ptr_nonnull(v);
  double d = strtod((const char *)v, NULL);
  xmlFree(v);
  return d;
}

static xmlNodePtr child(xmlNodePtr n, const char *name)
{
  for (xmlNodePtr c = n->children; c; c = c->next)
    if (c->type == XML_ELEMENT_NODE && !strcmp((const char *)c->name, name))
      return c;
  return NULL;
}

START_TEST(document_names_escaped)
{
  /* Names XML must escape, and invalid UTF-8. */
  ljp_tree *t = tree_of("main;a<b>&c 10\nmain;\"q\" 'r' 5\n"
                        "main;bad\xff\xc3(\x80 4\nmain;]]> 3\n");
  fg_layout l;
  ck_assert_int_eq(fg_layout_build(t, ljp_tree_node_total(t, 0), 0, 0, &l), 0);
  svg_opts o = default_opts();
  o.subtitle = "sub\xff";
  o.notes = "a -- note -";
  xmlDocPtr doc = render(t, &l, &o, NULL);
  xmlXPathObjectPtr r = xpath(doc, "//s:g[@class='f']/s:title");
  ck_assert_int_eq(r->nodesetval->nodeNr, 6);
  const char *want[] = {"all (22 samples, 100%)",
                        "main (22 samples, 100.00%)",
                        "\"q\" 'r' (5 samples, 22.73%)",
                        "]]> (3 samples, 13.64%)",
                        "a<b>&c (10 samples, 45.45%)",
                        "bad\xEF\xBF\xBD\xEF\xBF\xBD(\xEF\xBF\xBD (4 samples, 18.18%)"};
  for (int i = 0; i < 6; i++) {
    xmlChar *s = xmlNodeGetContent(r->nodesetval->nodeTab[i]);
    ck_assert_str_eq((const char *)s, want[i]);
    xmlFree(s);
  }
  xmlXPathFreeObject(r);
  r = xpath(doc, "string(//s:text[@id='title'])");
  ck_assert_str_eq((const char *)r->stringval, "T <&> \"t\"");
  xmlXPathFreeObject(r);
  r = xpath(doc, "string(//s:text[@id='subtitle'])");
  ck_assert_str_eq((const char *)r->stringval, "sub\xEF\xBF\xBD");
  xmlXPathFreeObject(r);
  r = xpath(doc, "string(//comment())");
  ck_assert_str_eq((const char *)r->stringval, " NOTES: a _- note _ ");
  xmlXPathFreeObject(r);
  xmlFreeDoc(doc);
  fg_layout_free(&l);
  ljp_tree_free(t);
}
END_TEST

START_TEST(document_widths_add_up)
{
  /* Random-ish tree; every drawn frame's children fit inside it, and
   * where nothing was pruned they fill it up to the self weight. */
  char text[65536];
  size_t k = 0;
  unsigned seed = 7;
  for (int i = 0; i < 400; i++) {
    seed = seed * 1103515245u + 12345u;
    k += (size_t)snprintf(text + k, sizeof text - k, "root;f%u;g%u;h%u %u\n",
                          (seed >> 8) % 5, (seed >> 12) % 7, (seed >> 16) % 9,
                          1 + (seed >> 20) % 50);
  }
  ljp_tree *t = tree_of(text);
  int64_t total = ljp_tree_node_total(t, 0);
  double min_weight = 0.1 * (double)total / 1180.0;
  fg_layout l;
  ck_assert_int_eq(fg_layout_build(t, total, min_weight, 0, &l), 0);
  /* The oracle: nodes whose total is at least the min width. */
  size_t expect = 1;
  for (uint32_t n = 1; n < ljp_tree_node_count(t); n++)
    if ((double)ljp_tree_node_total(t, n) >= min_weight)
      expect++;
  ck_assert_uint_eq(l.n, expect);
  svg_opts o = default_opts();
  xmlDocPtr doc = render(t, &l, &o, NULL);
  xmlXPathObjectPtr r = xpath(doc, "//s:g[@class='f']");
  ck_assert_int_eq(r->nodesetval->nodeNr, (int)l.n);
  double per = 1180.0 / (double)total;
  double *sum = calloc(l.n, sizeof *sum);
  for (size_t i = 0; i < l.n; i++) {
    xmlNodePtr rect = child(r->nodesetval->nodeTab[i], "rect");
    double w = attr_d(rect, "width"), x = attr_d(rect, "x");
    ck_assert_double_eq_tol(w, (double)fg_box_width(&l, i) * per, 0.006);
    ck_assert_double_eq_tol(x, 10 + (double)l.boxes[i].start * per, 0.006);
    if (i)
      sum[fg_box_parent(&l, i)] += w;
  }
  ck_assert_double_eq_tol(attr_d(child(r->nodesetval->nodeTab[0], "rect"), "width"),
                          1180, 0.001);
  for (size_t i = 0; i < l.n; i++) {
    double self = (double)ljp_tree_node_self(t, l.boxes[i].node) * per;
    double w = (double)fg_box_width(&l, i) * per;
    ck_assert(sum[i] <= w + 0.01 * (double)l.n);
    if (i && ljp_tree_node_depth(t, l.boxes[i].node) < 3)
      ck_assert_double_eq_tol(sum[i] + self, w, 0.01 * 9);
  }
  free(sum);
  xmlXPathFreeObject(r);
  xmlFreeDoc(doc);
  fg_layout_free(&l);
  ljp_tree_free(t);
}
END_TEST

START_TEST(document_labels_fitted)
{
  ljp_tree *t = tree_of("m;short 100\nm;a_rather_long_function_name 3\n");
  fg_layout l;
  ck_assert_int_eq(fg_layout_build(t, ljp_tree_node_total(t, 0), 0, 0, &l), 0);
  svg_opts o = default_opts();
  xmlDocPtr doc = render(t, &l, &o, NULL);
  /* 3/103 of 1180 px = 34.4 px: floor((34.4-3)/7.08) = 4 chars -> "a_.." */
  xmlXPathObjectPtr r = xpath(doc, "string(//s:g[s:title[starts-with(., 'a_rather')]]/s:text)");
  ck_assert_str_eq((const char *)r->stringval, "a_..");
  xmlXPathFreeObject(r);
  r = xpath(doc, "string(//s:g[s:title[starts-with(., 'short')]]/s:text)");
  ck_assert_str_eq((const char *)r->stringval, "short");
  xmlXPathFreeObject(r);
  /* The legend names the classes present: other (m, short, ...). */
  r = xpath(doc, "count(//s:text[.='other'])");
  ck_assert_double_eq(r->floatval, 1);
  xmlXPathFreeObject(r);
  xmlFreeDoc(doc);
  fg_layout_free(&l);
  ljp_tree_free(t);
}
END_TEST

START_TEST(document_differential)
{
  ljp_tree *before = tree_of("m;a 10\nm;b 10\nm;gone 5\n");
  ljp_tree *after = tree_of("m;a 30\nm;b 5\n");
  fg_layout l;
  ck_assert_int_eq(fg_layout_build(after, 35, 0, 0, &l), 0);
  svg_opts o = default_opts();
  svg_diff d = {before, 1.0, 5};
  xmlDocPtr doc = render(after, &l, &o, &d);
  xmlXPathObjectPtr r = xpath(doc, "string(//s:g[s:title[starts-with(., 'a ')]]/s:rect/@fill)");
  ck_assert_str_eq((const char *)r->stringval, "rgb(255,0,0)");   /* +20, the max */
  xmlXPathFreeObject(r);
  r = xpath(doc, "string(//s:g[s:title[starts-with(., 'b ')]]/s:rect/@fill)");
  ck_assert_str_eq((const char *)r->stringval, "rgb(157,157,255)"); /* -5 of 20 */
  xmlXPathFreeObject(r);
  r = xpath(doc, "string(//s:g[s:title[starts-with(., 'a ')]]/s:title)");
  ck_assert_str_eq((const char *)r->stringval, "a (30 samples, 85.71%; +57.14%)");
  xmlXPathFreeObject(r);
  r = xpath(doc, "//s:g[@id='changes']/s:text");
  ck_assert_int_eq(r->nodesetval->nodeNr, 4);
  const char *want[] = {"Largest changes of self weight (% of the total after):",
                        "+57.14%  a", "-14.29%  gone", "-14.29%  b"};
  for (int i = 0; i < 4; i++) {
    xmlChar *s = xmlNodeGetContent(r->nodesetval->nodeTab[i]);
    ck_assert_str_eq((const char *)s, want[i]);
    xmlFree(s);
  }
  xmlXPathFreeObject(r);
  xmlFreeDoc(doc);
  /* --negate swaps the hues. */
  o.negate = 1;
  doc = render(after, &l, &o, &d);
  r = xpath(doc, "string(//s:g[s:title[starts-with(., 'a ')]]/s:rect/@fill)");
  ck_assert_str_eq((const char *)r->stringval, "rgb(0,0,255)");
  xmlXPathFreeObject(r);
  xmlFreeDoc(doc);
  fg_layout_free(&l);
  ljp_tree_free(before);
  ljp_tree_free(after);
}
END_TEST

START_TEST(document_deterministic)
{
  ljp_tree *t = tree_of("m;x 1\nm;y;z 2\n");
  fg_layout l;
  ck_assert_int_eq(fg_layout_build(t, 3, 0, 0, &l), 0);
  svg_opts o = default_opts();
  xmlBufferPtr b1 = xmlBufferCreate(), b2 = xmlBufferCreate();
  xmlTextWriterPtr w = xmlNewTextWriterMemory(b1, 0);
  ck_assert_int_eq(svg_write(w, t, &l, &o, NULL), 0);
  xmlFreeTextWriter(w);
  w = xmlNewTextWriterMemory(b2, 0);
  ck_assert_int_eq(svg_write(w, t, &l, &o, NULL), 0);
  xmlFreeTextWriter(w);
  ck_assert_int_eq(xmlBufferLength(b1), xmlBufferLength(b2));
  ck_assert_int_eq(memcmp(xmlBufferContent(b1), xmlBufferContent(b2),
                          (size_t)xmlBufferLength(b1)), 0);
  xmlBufferFree(b1);
  xmlBufferFree(b2);
  fg_layout_free(&l);
  ljp_tree_free(t);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Raw element text: escaped as libxml2's writer escapes it                 */
/* ------------------------------------------------------------------------ */

START_TEST(xmltext_like_libxml2)
{
  static const char alphabet[] = "ab<>&\"'\r\t\n;. \xC3\xA9";
  unsigned long long st = 0x853c49e6748fea9bull;
  strbuf b = {0};
  for (int round = 0; round < 20000; round++) {
    char s[40];
    size_t n = 0, want = (size_t)(round % 39);
    while (n < want) {
      st ^= st << 13;
      st ^= st >> 7;
      st ^= st << 17;
      size_t k = (size_t)(st % (sizeof alphabet - 1));
      if ((unsigned char)alphabet[k] == 0xC3) {  /* whole characters only */
        if (n + 2 > want)
          break;
        s[n++] = '\xC3';
        s[n++] = '\xA9';
      } else {
        s[n++] = alphabet[k];
      }
    }
    s[n] = '\0';
    b.len = 0;
    ck_assert_int_eq(xmltext_put(&b, s, n), 0);
    sb_put(&b, "", 0);
    xmlChar *ref = xmlEncodeSpecialChars(NULL, BAD_CAST s);
    ck_assert_str_eq(b.p, (const char *)ref);
    xmlFree(ref);
  }
  const int ints[] = {0, 7, -7, 255, 1000, -2147483647 - 1, 2147483647};
  for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
    char want[16];
    snprintf(want, sizeof want, "%d", ints[i]);
    b.len = 0;
    ck_assert_int_eq(xmltext_int(&b, ints[i]), 0);
    ck_assert_str_eq(b.p, want);
  }
  sb_free(&b);
}
END_TEST

static Suite *svg_suite(void)
{
  Suite *s = suite_create("svg");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, utf8_valid_kept);
  tcase_add_test(tc, utf8_invalid_replaced);
  tcase_add_test(tc, utf8_cut);
  tcase_add_test(tc, xmltext_like_libxml2);
  tcase_add_test(tc, folded_parse);
  tcase_add_test(tc, folded_byte_by_byte);
  tcase_add_test(tc, folded_shared_prefixes);
  tcase_add_test(tc, folded_prefix_random);
  tcase_add_test(tc, folded_reverse_and_binary);
  tcase_add_test(tc, layout_prune_and_cap);
  tcase_add_test(tc, layout_cap_keeps_widest);
  tcase_add_test(tc, document_names_escaped);
  tcase_add_test(tc, document_widths_add_up);
  tcase_add_test(tc, document_labels_fitted);
  tcase_add_test(tc, document_differential);
  tcase_add_test(tc, document_deterministic);
  tcase_add_test(tc, document_direct_same_bytes);
  suite_add_tcase(s, tc);
  return s;
}

int main(void)
{
  SRunner *sr = srunner_create(svg_suite());
  srunner_run_all(sr, CK_NORMAL);
  int failed = srunner_ntests_failed(sr);
  srunner_free(sr);
  xmlCleanupParser();
  return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
