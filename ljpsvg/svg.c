/* svg.c — the SVG document of a flame graph.  See svg.h. */
#include "svg.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_strbuf.h"
#include "ljp.h"
#include "numfmt.h"
#include "utf8.h"
#include "xmltext.h"

/* The embedded script (generated from flamegraph.js at build time). */
extern const char ljpsvg_script[];

#define XPAD 10.0
#define MAX_NAME_CP 2000   /* longer names are cut in titles (file size) */
#define SEARCH_W 110.0

/* Every writer call can fail (memory, output): the first failure ends
 * the function that made it with -1. */
#define CK(x)                                                                \
  do {                                                                       \
    if ((x) < 0)                                                             \
      return -1;                                                             \
  } while (0)

/* ------------------------------------------------------------------------ */
/* Formatting                                                               */
/* ------------------------------------------------------------------------ */

/* Up to two decimals, trailing zeros dropped: coordinates stay exact enough
 * for deep zooms while the file stays small.  Returns the length. */
static size_t num_len(char *buf, double v)
{
  size_t n = numfmt_fixed2(buf, v);
  /* "%.2f" of a finite value always ends in ".dd". */
  if (n >= 3 && buf[n - 3] == '.') {
    if (buf[n - 1] == '0')
      n = buf[n - 2] == '0' ? n - 3 : n - 1;
  }
  if (n == 2 && buf[0] == '-' && buf[1] == '0')
    n = 1, buf[0] = '0';
  buf[n] = '\0';
  return n;
}

static const char *num(char *buf, double v)
{
  num_len(buf, v);
  return buf;
}

/* "1,234,567" (flamegraph.pl's style), rounded to an integer: its length. */
static size_t count_text(char *buf, double v)
{
  char tmp[NUMFMT_MAX];
  size_t n = numfmt_fixed0(tmp, v);
  if (n == 2 && tmp[0] == '-' && tmp[1] == '0') /* "-0" */
    tmp[0] = '0', n = 1;
  int neg = tmp[0] == '-';
  const char *digits = tmp + neg;
  size_t nd = n - (size_t)neg, k = 0;
  if (neg)
    buf[k++] = '-';
  for (size_t i = 0; i < nd; i++) {
    if (i && (nd - i) % 3 == 0)
      buf[k++] = ',';
    buf[k++] = digits[i];
  }
  buf[k] = '\0';
  return k;
}

/* ------------------------------------------------------------------------ */
/* Names: repaired once per frame, lazily                                   */
/* ------------------------------------------------------------------------ */

typedef struct name_cache {
  const ljp_tree *t;
  size_t *off;             /* SIZE_MAX: not yet repaired */
  uint32_t *len, *cps;
  uint32_t *xlen;          /* the name escaped: the name itself when the
                              lengths are equal, else the copy after it */
  uint32_t *color;         /* palette colour + COLOR_SET, 0: not yet */
  strbuf text;
} name_cache;

#define COLOR_SET 0x1000000u

static int names_init(name_cache *nc, const ljp_tree *t)
{
  memset(nc, 0, sizeof *nc);
  nc->t = t;
  size_t n = (size_t)ljp_tree_frame_count(t) + 1;
  nc->off = malloc(n * sizeof *nc->off);
  nc->len = malloc(n * sizeof *nc->len);
  nc->cps = malloc(n * sizeof *nc->cps);
  nc->xlen = malloc(n * sizeof *nc->xlen);
  nc->color = calloc(n, sizeof *nc->color);
  if (!nc->off || !nc->len || !nc->cps || !nc->xlen || !nc->color)
    return -1;
  for (size_t i = 0; i < n; i++)
    nc->off[i] = SIZE_MAX;
  return 0;
}

static void names_free(name_cache *nc)
{
  free(nc->off);
  free(nc->len);
  free(nc->cps);
  free(nc->xlen);
  free(nc->color);
  sb_free(&nc->text);
}

/* The repaired name of frame f (NUL-terminated; valid until the next call,
 * which may move the buffer). */
static const char *name_of(name_cache *nc, uint32_t f, size_t *len,
                           size_t *cps)
{
  if (nc->off[f] == SIZE_MAX) {
    size_t raw_len;
    const char *raw = ljp_tree_frame_name(nc->t, f, &raw_len);
    size_t start = nc->text.len;
    size_t n = utf8_repair(raw ? raw : "", raw ? raw_len : 0, MAX_NAME_CP,
                           &nc->text);
    if (n == (size_t)-1 || sb_put(&nc->text, "", 1) != 0)
      return NULL;
    nc->off[f] = start;
    nc->len[f] = (uint32_t)(nc->text.len - start - 1);
    nc->cps[f] = (uint32_t)n;
    /* Every box of the frame shows the name escaped in its tooltip: a
     * name that needs escaping (rare; it grows then) gets its escaped
     * copy right after it. */
    nc->xlen[f] = nc->len[f];
    if (!xmltext_plain(nc->text.p + start, nc->len[f])) {
      size_t xstart = nc->text.len;
      /* Room first (a byte escapes to at most 6; names are cut at
       * MAX_NAME_CP code points): the name is read from the buffer it is
       * appended to, which must not move meanwhile. */
      if (sb_reserve(&nc->text, 6 * (size_t)nc->len[f] + 1) != 0 ||
          xmltext_put(&nc->text, nc->text.p + start, nc->len[f]) != 0 ||
          sb_put(&nc->text, "", 1) != 0)
        return NULL;
      nc->xlen[f] = (uint32_t)(nc->text.len - xstart - 1);
    }
  }
  *len = nc->len[f];
  *cps = nc->cps[f];
  return nc->text.p + nc->off[f];
}

/* The name of frame f escaped, once name_of gave it (same lifetime). */
static const char *xml_name_of(const name_cache *nc, uint32_t f, size_t *xlen)
{
  *xlen = nc->xlen[f];
  size_t off = nc->off[f];
  return nc->text.p + (nc->xlen[f] == nc->len[f] ? off
                                                 : off + nc->len[f] + 1);
}

/* Label fitted to a box of w px: whole code points, ".." when cut; the
 * script applies the same rule after a zoom. */
static int fit_label(strbuf *out, const char *name, size_t len, size_t cps,
                     double w, const svg_opts *o)
{
  out->len = 0;
  double chars_d = floor((w - 3) / (o->fontsize * o->fontwidth));
  if (!(chars_d >= 3))
    return sb_put(out, "", 0);
  size_t chars = chars_d > 1e6 ? 1000000 : (size_t)chars_d;
  if (cps <= chars)
    return sb_put(out, name, len);
  if (sb_put(out, name, utf8_prefix(name, len, chars - 2)) != 0)
    return -1;
  return sb_put(out, "..", 2);
}

/* User-supplied text (titles, count names) repaired like frame names. */
static int write_text_attr(xmlTextWriterPtr w, const char *attr,
                           const char *s)
{
  strbuf b = {0};
  if (utf8_repair(s, strlen(s), (size_t)-2, &b) == (size_t)-1 ||
      sb_put(&b, "", 0) != 0) {
    sb_free(&b);
    return -1;
  }
  int rc = xmlTextWriterWriteAttribute(w, BAD_CAST attr, BAD_CAST b.p);
  sb_free(&b);
  return rc;
}

static int write_string(xmlTextWriterPtr w, const char *s, size_t len)
{
  strbuf b = {0};
  if (utf8_repair(s, len, (size_t)-2, &b) == (size_t)-1 ||
      sb_put(&b, "", 0) != 0) {
    sb_free(&b);
    return -1;
  }
  int rc = xmlTextWriterWriteString(w, BAD_CAST b.p);
  sb_free(&b);
  return rc;
}

static int attr_num(xmlTextWriterPtr w, const char *attr, double v)
{
  char buf[NUMFMT_MAX];
  return xmlTextWriterWriteAttribute(w, BAD_CAST attr, BAD_CAST num(buf, v));
}

static int attr(xmlTextWriterPtr w, const char *a, const char *v)
{
  return xmlTextWriterWriteAttribute(w, BAD_CAST a, BAD_CAST v);
}

/* <text> with plain (already valid) content and optional id/class. */
static int ui_text(xmlTextWriterPtr w, const char *id, const char *cls,
                   double x, double y, const char *anchor, const char *s)
{
  if (xmlTextWriterStartElement(w, BAD_CAST "text") < 0)
    return -1;
  if (id && attr(w, "id", id) < 0)
    return -1;
  if (cls && attr(w, "class", cls) < 0)
    return -1;
  if (anchor && attr(w, "text-anchor", anchor) < 0)
    return -1;
  if (attr_num(w, "x", x) < 0 || attr_num(w, "y", y) < 0)
    return -1;
  if (write_string(w, s, strlen(s)) < 0)
    return -1;
  return xmlTextWriterEndElement(w);
}

/* ------------------------------------------------------------------------ */
/* Differential data                                                        */
/* ------------------------------------------------------------------------ */

typedef struct diff_state {
  uint32_t *fmap;          /* after frame -> before frame (lazily) */
  double *delta;           /* per box: self delta, after - scaled before */
  double maxdelta;
} diff_state;

#define FMAP_UNSET UINT32_MAX

static uint32_t map_frame(diff_state *ds, const ljp_tree *t,
                          const ljp_tree *before, uint32_t f)
{
  if (ds->fmap[f] == FMAP_UNSET) {
    size_t len;
    const char *name = ljp_tree_frame_name(t, f, &len);
    ds->fmap[f] = ljp_tree_find_frame(before, name, len,
                                      ljp_tree_frame_class(t, f));
  }
  return ds->fmap[f];
}

static int diff_init(diff_state *ds, const ljp_tree *t, const fg_layout *l,
                     const svg_diff *d)
{
  memset(ds, 0, sizeof *ds);
  size_t nf = (size_t)ljp_tree_frame_count(t) + 1;
  ds->fmap = malloc(nf * sizeof *ds->fmap);
  ds->delta = malloc(l->n * sizeof *ds->delta);
  if (!ds->fmap || !ds->delta)
    return -1;
  for (size_t i = 0; i < nf; i++)
    ds->fmap[i] = FMAP_UNSET;
  ds->maxdelta = 1;
  /* The before node (UINT32_MAX: none) of the box on the current path at
   * each depth: a box's parent is the last box seen one level up. */
  uint32_t *path = malloc(((size_t)l->max_depth + 1) * sizeof *path);
  if (!path)
    return -1;
  for (size_t i = 0; i < l->n; i++) {
    const fg_box *b = &l->boxes[i];
    uint32_t bn = 0;
    if (i) {
      uint32_t pb = path[b->depth - 1];
      uint32_t bf = map_frame(ds, t, d->before, ljp_tree_node_frame(t, b->node));
      bn = (pb == UINT32_MAX || !bf) ? 0 : ljp_tree_find_child(d->before, pb, bf);
      if (!bn)
        bn = UINT32_MAX;
    }
    path[b->depth] = bn;
    double before = bn == UINT32_MAX ? 0
                    : (double)ljp_tree_node_self(d->before, bn) * d->scale;
    double after = (double)ljp_tree_node_self(t, b->node);
    ds->delta[i] = i ? after - before : 0;
    if (fabs(ds->delta[i]) > ds->maxdelta)
      ds->maxdelta = fabs(ds->delta[i]);
  }
  free(path);
  return 0;
}

static void diff_free(diff_state *ds)
{
  free(ds->fmap);
  free(ds->delta);
}

/* A row of the largest-changes table: a frame's self weight summed over
 * all its nodes, after minus scaled before. */
typedef struct change {
  const ljp_tree *tree;    /* where the name lives */
  uint32_t frame;
  double delta;
} change;

static int change_cmp(const void *pa, const void *pb)
{
  const change *a = pa, *b = pb;
  if (a->delta != b->delta)
    return a->delta > b->delta ? -1 : 1;
  size_t la, lb;
  const char *na = ljp_tree_frame_name(a->tree, a->frame, &la);
  const char *nb = ljp_tree_frame_name(b->tree, b->frame, &lb);
  size_t n = la < lb ? la : lb;
  int c = n ? memcmp(na, nb, n) : 0;
  if (c)
    return c;
  return la < lb ? -1 : la > lb;
}

/* Fills *out with every frame whose self weight changed, sorted by delta
 * (largest growth first). */
static int collect_changes(const ljp_tree *t, const svg_diff *d, change **out,
                           size_t *nout)
{
  size_t na = (size_t)ljp_tree_frame_count(t) + 1;
  size_t nb = (size_t)ljp_tree_frame_count(d->before) + 1;
  double *sa = calloc(na, sizeof *sa), *sb = calloc(nb, sizeof *sb);
  change *ch = malloc((na + nb) * sizeof *ch);
  if (!sa || !sb || !ch) {
    free(sa);
    free(sb);
    free(ch);
    return -1;
  }
  for (uint32_t n = 1; n < ljp_tree_node_count(t); n++)
    sa[ljp_tree_node_frame(t, n)] += (double)ljp_tree_node_self(t, n);
  for (uint32_t n = 1; n < ljp_tree_node_count(d->before); n++)
    sb[ljp_tree_node_frame(d->before, n)] +=
        (double)ljp_tree_node_self(d->before, n) * d->scale;
  size_t k = 0;
  for (uint32_t f = 1; f < na; f++) {
    size_t len;
    const char *name = ljp_tree_frame_name(t, f, &len);
    uint32_t bf = ljp_tree_find_frame(d->before, name, len,
                                      ljp_tree_frame_class(t, f));
    double delta = sa[f] - (bf ? sb[bf] : 0);
    if (bf)
      sb[bf] = NAN;        /* accounted for */
    if (fabs(delta) >= 0.5)
      ch[k++] = (change){t, f, delta};
  }
  for (uint32_t f = 1; f < nb; f++)
    if (!isnan(sb[f]) && sb[f] >= 0.5)
      ch[k++] = (change){d->before, f, -sb[f]};
  qsort(ch, k, sizeof *ch, change_cmp);
  free(sa);
  free(sb);
  *out = ch;
  *nout = k;
  return 0;
}

/* One row of the changes table: "+1.23%  name", fitted to colw px. */
static int change_row(xmlTextWriterPtr w, const change *c, const svg_opts *o,
                      int64_t total, strbuf *label, strbuf *row, double x,
                      double y, double colw, const char *cls)
{
  size_t rl;
  const char *raw = ljp_tree_frame_name(c->tree, c->frame, &rl);
  strbuf nm = {0};
  size_t cp = utf8_repair(raw ? raw : "", raw ? rl : 0, MAX_NAME_CP, &nm);
  double dd = o->negate ? -c->delta : c->delta;
  char pct[64];
  snprintf(pct, sizeof pct, "%s%.2f%%  ", dd > 0 ? "+" : "",
           total ? 100 * dd / (double)total : 0.0);
  int rc = cp == (size_t)-1 ? -1
           : fit_label(label, nm.p ? nm.p : "", nm.len, cp,
                       colw - (double)strlen(pct) * o->fontsize * o->fontwidth - 10, o);
  sb_free(&nm);
  if (rc < 0)
    return -1;
  row->len = 0;
  if (sb_puts(row, pct) || sb_put(row, label->p ? label->p : "", label->len))
    return -1;
  return ui_text(w, NULL, cls, x, y, NULL, row->p);
}

/* ------------------------------------------------------------------------ */
/* The document                                                             */
/* ------------------------------------------------------------------------ */

static const char STYLE[] =
    "\n"
    ".f:hover rect{stroke:#000;stroke-width:.5;cursor:pointer}\n"
    ".f rect{rx:2px;ry:2px}\n"
    ".f text{fill:#000;pointer-events:none}\n"
    ".parent{opacity:.5}\n"
    ".hide{display:none}\n"
    ".ui{fill:#000}\n"
    ".dark .ui{fill:#ddd}\n"
    "#title{font-size:1.4em}\n"
    ".button{cursor:pointer}\n"
    ".button:hover{text-decoration:underline}\n"
    ".off{opacity:0;pointer-events:none}\n"
    "#ignorecase.on,#search.on{fill:rgb(230,0,230)}\n"
    ".grew{fill:#b00}\n"
    ".shrank{fill:#00b}\n"
    ".dark .grew{fill:#f66}\n"
    ".dark .shrank{fill:#79f}\n";

/* Which classes appear among the drawn boxes (for the legend). */
static unsigned classes_present(const ljp_tree *t, const fg_layout *l)
{
  unsigned mask = 0;
  for (size_t i = 1; i < l->n; i++) {
    uint32_t f = ljp_tree_node_frame(t, l->boxes[i].node);
    ljp_class c = ljp_tree_frame_class(t, f);
    if (c == LJP_CLASS_OTHER) {
      size_t len;
      const char *name = ljp_tree_frame_name(t, f, &len);
      c = palette_guess_class(name, len);
    }
    if ((unsigned)c <= LJP_CLASS_VM)
      mask |= 1u << c;
  }
  return mask;
}

/* What the parts of the document are drawn from, computed once. */
typedef struct doc {
  xmlTextWriterPtr w;
  const ljp_tree *t;
  const fg_layout *l;
  const svg_opts *o;
  const svg_diff *d;
  int differential;
  name_cache nc;
  diff_state ds;
  change *changes;
  size_t nchanges;
  strbuf label, title;     /* scratch for frame labels and titles */
  strbuf text;             /* scratch: a title repaired */
  strbuf cname_xml;        /* the count name escaped, when plain_countname */
  strbuf raw;              /* frames built here, written in large chunks */
  svg_direct direct;       /* where they go when not through the writer */
  void *direct_ctx;
  strbuf rows;             /* attributes shared by a depth's boxes */
  size_t *row_off;         /* their offsets in rows (see row_attrs) */
  char bg_top[8], bg_bottom[8];
  int dark;
  unsigned classes;        /* frame classes drawn, for the legend */
  int legend;
  int plain_countname;     /* valid XML text as it is: titles need no repair */
  /* Geometry (px). */
  double fs, fh, W, H, ypad1, ypad2, graph_h, per_weight;
  size_t diff_rows;        /* rows of the changes table, heading included */
} doc;

/* Rows of the changes table: a heading and the longer of the two sides. */
static size_t changes_rows(const doc *g)
{
  size_t grew = 0, shrank = 0;
  for (size_t i = 0; i < g->nchanges; i++)
    *(g->changes[i].delta > 0 ? &grew : &shrank) += 1;
  int top = g->d->top > 0 ? g->d->top : 5;
  grew = grew < (size_t)top ? grew : (size_t)top;
  shrank = shrank < (size_t)top ? shrank : (size_t)top;
  return 1 + (grew > shrank ? grew : shrank);
}

static void doc_geometry(doc *g)
{
  const svg_opts *o = g->o;
  g->fs = o->fontsize;
  g->fh = o->frame_height;
  g->W = o->width;
  g->ypad1 = g->fs * 3 + (o->subtitle ? g->fs * 2 : 0) +
             (g->legend ? g->fs * 1.8 : 0);
  g->ypad2 = g->fs * 2 + 10;
  g->diff_rows = g->differential ? changes_rows(g) : 0;
  double table_h = g->diff_rows ? (double)g->diff_rows * g->fs * 1.5 + g->fs : 0;
  g->graph_h = ((double)g->l->max_depth + 1) * g->fh;
  g->H = g->ypad1 + g->graph_h + g->ypad2 + table_h;
  g->per_weight = g->l->total > 0 ? (g->W - 2 * XPAD) / (double)g->l->total : 0;
}

/* 0, or -1 when out of memory (doc_free still frees what was made). */
static int doc_init(doc *g, xmlTextWriterPtr w, const ljp_tree *t,
                    const fg_layout *l, const svg_opts *o, const svg_diff *d)
{
  memset(g, 0, sizeof *g);
  g->w = w;
  g->t = t;
  g->l = l;
  g->o = o;
  g->d = d;
  g->differential = d && d->before;
  if (names_init(&g->nc, t) != 0)
    return -1;
  if (g->differential && (diff_init(&g->ds, t, l, d) != 0 ||
                          collect_changes(t, d, &g->changes, &g->nchanges) != 0))
    return -1;
  if (palette_background(o->pal.id, o->bgcolors, g->bg_top, g->bg_bottom,
                         &g->dark) != 0)
    palette_background(o->pal.id, NULL, g->bg_top, g->bg_bottom, &g->dark);
  g->classes = o->legend ? classes_present(t, l) : 0;
  g->legend = o->legend && g->classes != 0;
  size_t cn = strlen(o->countname);
  if (utf8_repair(o->countname, cn, (size_t)-2, &g->text) == (size_t)-1)
    return -1;
  g->plain_countname =
      g->text.len == cn && (!cn || memcmp(g->text.p, o->countname, cn) == 0);
  g->text.len = 0;
  if (g->plain_countname && (sb_reserve(&g->cname_xml, 1) != 0 ||
                             xmltext_put(&g->cname_xml, o->countname, cn) != 0))
    return -1;
  doc_geometry(g);
  return 0;
}

static void doc_free(doc *g)
{
  names_free(&g->nc);
  if (g->differential)
    diff_free(&g->ds);
  free(g->changes);
  sb_free(&g->label);
  sb_free(&g->title);
  sb_free(&g->text);
  sb_free(&g->cname_xml);
  sb_free(&g->raw);
  sb_free(&g->rows);
  free(g->row_off);
}

/* --notes as a comment, which may not hold "--": such pairs are broken. */
static int write_notes(xmlTextWriterPtr w, const char *notes)
{
  strbuf nt = {0};
  if (utf8_repair(notes, strlen(notes), (size_t)-2, &nt) == (size_t)-1)
    return -1;
  for (size_t i = 0; i < nt.len; i++)
    if (nt.p[i] == '-' && (i + 1 == nt.len || nt.p[i + 1] == '-'))
      nt.p[i] = '_';
  int r = xmlTextWriterWriteFormatComment(w, " NOTES: %s ", nt.p ? nt.p : "");
  sb_free(&nt);
  return r;
}

/* The XML declaration and the <svg> element's start: size, fonts, and the
 * data the script reads. */
static int write_header(const doc *g)
{
  xmlTextWriterPtr w = g->w;
  const svg_opts *o = g->o;
  char nb[NUMFMT_MAX], cb[NUMFMT_MAX + 8];
  CK(xmlTextWriterStartDocument(w, "1.0", "UTF-8", NULL));
  CK(xmlTextWriterStartElement(w, BAD_CAST "svg"));
  CK(attr(w, "xmlns", "http://www.w3.org/2000/svg"));
  CK(attr(w, "version", "1.1"));
  CK(attr_num(w, "width", g->W));
  CK(attr_num(w, "height", g->H));
  snprintf(cb, sizeof cb, "0 0 %s ", num(nb, g->W));
  CK(xmlTextWriterWriteFormatAttribute(w, BAD_CAST "viewBox", "%s%s", cb,
                                       num(nb, g->H)));
  CK(attr(w, "onload", "init(evt)"));
  if (g->dark)
    CK(attr(w, "class", "dark"));
  CK(write_text_attr(w, "font-family", o->fonttype));
  CK(attr_num(w, "font-size", g->fs));
  CK(attr_num(w, "data-xpad", XPAD));
  CK(attr_num(w, "data-fontsize", g->fs));
  CK(attr_num(w, "data-fontwidth", o->fontwidth));
  CK(write_text_attr(w, "data-nametype", o->nametype));
  CK(attr(w, "data-inverted", o->inverted ? "1" : "0"));
  if (o->notes)
    CK(write_notes(w, o->notes));
  return 0;
}

static int gradient_stop(xmlTextWriterPtr w, const char *color,
                         const char *offset)
{
  CK(xmlTextWriterStartElement(w, BAD_CAST "stop"));
  CK(attr(w, "stop-color", color));
  CK(attr(w, "offset", offset));
  return xmlTextWriterEndElement(w);
}

/* The style sheet, the background gradient and the rectangle it fills. */
static int write_background(const doc *g)
{
  xmlTextWriterPtr w = g->w;
  CK(xmlTextWriterStartElement(w, BAD_CAST "style"));
  CK(xmlTextWriterWriteString(w, BAD_CAST STYLE));
  CK(xmlTextWriterEndElement(w));
  CK(xmlTextWriterStartElement(w, BAD_CAST "defs"));
  CK(xmlTextWriterStartElement(w, BAD_CAST "linearGradient"));
  CK(attr(w, "id", "background"));
  CK(attr(w, "y1", "0"));
  CK(attr(w, "y2", "1"));
  CK(attr(w, "x1", "0"));
  CK(attr(w, "x2", "0"));
  CK(gradient_stop(w, g->bg_top, "5%"));
  CK(gradient_stop(w, g->bg_bottom, "95%"));
  CK(xmlTextWriterEndElement(w));
  CK(xmlTextWriterEndElement(w));
  CK(xmlTextWriterStartElement(w, BAD_CAST "rect"));
  CK(attr(w, "x", "0"));
  CK(attr(w, "y", "0"));
  CK(attr_num(w, "width", g->W));
  CK(attr_num(w, "height", g->H));
  CK(attr(w, "fill", "url(#background)"));
  return xmlTextWriterEndElement(w);
}

/* Titles and the buttons the script makes live. */
static int write_controls(const doc *g)
{
  xmlTextWriterPtr w = g->w;
  double W = g->W, fs = g->fs;
  CK(ui_text(w, "title", "ui", W / 2, fs * 2, "middle", g->o->title));
  if (g->o->subtitle)
    CK(ui_text(w, "subtitle", "ui", W / 2, fs * 4, "middle", g->o->subtitle));
  CK(ui_text(w, "unzoom", "ui button off", XPAD, fs * 2, NULL, "Reset Zoom"));
  CK(ui_text(w, "search", "ui button", W - XPAD - SEARCH_W, fs * 2, NULL,
             "Search"));
  return ui_text(w, "ignorecase", "ui button", W - XPAD - 16, fs * 2, NULL, "ic");
}

static int rect_fill(xmlTextWriterPtr w, rgb col)
{
  return xmlTextWriterWriteFormatAttribute(w, BAD_CAST "fill", "rgb(%d,%d,%d)",
                                           col.r, col.g, col.b);
}

/* A swatch and a label per frame class drawn. */
static int write_legend(const doc *g)
{
  xmlTextWriterPtr w = g->w;
  double fs = g->fs, x = XPAD, y = g->ypad1 - fs * 1.2;
  for (unsigned c = 0; c <= LJP_CLASS_VM; c++) {
    if (!(g->classes & (1u << c)))
      continue;
    CK(xmlTextWriterStartElement(w, BAD_CAST "rect"));
    CK(attr_num(w, "x", x));
    CK(attr_num(w, "y", y - fs * 0.8));
    CK(attr_num(w, "width", fs));
    CK(attr_num(w, "height", fs));
    CK(rect_fill(w, palette_class_color(&g->o->pal, (ljp_class)c)));
    CK(xmlTextWriterEndElement(w));
    const char *lab = palette_class_label((ljp_class)c);
    CK(ui_text(w, NULL, "ui", x + fs * 1.4, y + fs * 0.1, NULL, lab));
    x += fs * 1.4 + (double)strlen(lab) * fs * g->o->fontwidth + fs * 1.5;
  }
  return 0;
}

/* The tooltip of box i after its name, " (count countname, pct%[;
 * delta%])", appended to g->title with the count name as given (as the
 * user wrote it, or already escaped). */
static int title_tail(doc *g, size_t i, int64_t width, const char *cname,
                      size_t cnlen)
{
  const svg_opts *o = g->o;
  /* " (" count " " | cname | ", " pct "%" ["; " [+] delta "%"] ")": two
   * numbers (numfmt may use all of NUMFMT_MAX) and eight more bytes, or
   * the count with its commas and four. */
  char buf[2 * NUMFMT_MAX + 16], cb[NUMFMT_MAX * 4 / 3 + 2];
  double total_disp = (double)g->l->total * o->factor;
  double shown = (double)width * o->factor;
  size_t cn = count_text(cb, shown), k = 0;
  buf[k++] = ' ';
  buf[k++] = '(';
  memcpy(buf + k, cb, cn);
  k += cn;
  buf[k++] = ' ';
  if (sb_put(&g->title, buf, k) || sb_put(&g->title, cname, cnlen))
    return -1;
  k = 0;
  buf[k++] = ',';
  buf[k++] = ' ';
  if (i)
    k += numfmt_fixed2(buf + k, total_disp != 0 ? 100 * shown / total_disp
                                                : 0.0);
  else
    memcpy(buf + k, "100", 3), k += 3;
  buf[k++] = '%';
  if (g->differential && i) {
    double dd = o->negate ? -g->ds.delta[i] : g->ds.delta[i];
    buf[k++] = ';';
    buf[k++] = ' ';
    if (dd > 0)
      buf[k++] = '+';
    k += numfmt_fixed2(buf + k, g->l->total ? 100 * dd / (double)g->l->total
                                            : 0.0);
    buf[k++] = '%';
  }
  buf[k++] = ')';
  return sb_put(&g->title, buf, k);
}

/* Box i's tooltip, escaped, into r.  The name is valid text (repaired
 * once per frame) and the numbers need no escaping: with a count name that
 * is valid text too, the pieces go out as they are.  Otherwise the title
 * is repaired whole, as the writer was given it (the name and the numbers
 * are valid, and valid pieces make valid text). */
static int frame_title(doc *g, strbuf *r, size_t i, int64_t width,
                       const char *name, size_t len, const char *xname,
                       size_t xlen)
{
  g->title.len = 0;
  if (g->plain_countname)
    return sb_put(r, xname, xlen) ||
                   title_tail(g, i, width, g->cname_xml.p,
                              g->cname_xml.len) ||
                   sb_put(r, g->title.p, g->title.len)
               ? -1
               : 0;
  g->text.len = 0;
  if (sb_put(&g->title, name, len) ||
      title_tail(g, i, width, g->o->countname, strlen(g->o->countname)) ||
      utf8_repair(g->title.p, g->title.len, (size_t)-2, &g->text) ==
          (size_t)-1)
    return -1;
  return xmltext_put(r, g->text.p, g->text.len);
}

/* The fill of box i (frame f): grey root, a differential hue, or the
 * palette's colour of the frame, hashed from its name once per frame (a
 * frame is drawn at many places). */
static rgb frame_color(doc *g, size_t i, uint32_t f)
{
  if (i == 0)
    return g->differential ? (rgb){255, 255, 255} : (rgb){180, 180, 180};
  if (g->differential)
    return palette_diff(g->ds.delta[i], g->ds.maxdelta, g->o->negate);
  uint32_t c = g->nc.color[f];
  if (!c) {
    size_t rl;
    const char *raw = ljp_tree_frame_name(g->t, f, &rl);
    rgb col = palette_color(&g->o->pal, raw, rl, ljp_tree_frame_class(g->t, f));
    c = COLOR_SET | (uint32_t)col.r << 16 | (uint32_t)col.g << 8 | col.b;
    g->nc.color[f] = c;
  }
  return (rgb){(uint8_t)(c >> 16), (uint8_t)(c >> 8), (uint8_t)c};
}

/* Appends a number attribute: ' name="', the value, '"'. */
static int raw_num(strbuf *r, const char *attr_eq, size_t attr_len, double v)
{
  if (sb_reserve(r, attr_len + NUMFMT_MAX + 1) != 0)
    return -1;
  memcpy(r->p + r->len, attr_eq, attr_len);
  r->len += attr_len;
  r->len += num_len(r->p + r->len, v);
  r->p[r->len++] = '"';
  r->p[r->len] = '\0';
  return 0;
}

/* A string literal and its length. */
#define LIT(s) s, sizeof s - 1

/* The y of the boxes at a depth. */
static double row_y(const doc *g, uint32_t depth)
{
  return g->o->inverted ? g->ypad1 + (double)depth * g->fh
                        : g->ypad1 + (double)(g->l->max_depth - depth) * g->fh;
}

/* The attributes every box of a depth shares, formatted once per depth
 * instead of once per box: entry 2d is the ' y="..."' of the rectangles
 * at depth d, 2d + 1 that of their labels; the last entry is the
 * rectangles' ' height="..."'.  Entry k is rows[row_off[k]..row_off[k+1]). */
static int row_attrs(doc *g)
{
  size_t depths = (size_t)g->l->max_depth + 1;
  g->row_off = malloc((2 * depths + 2) * sizeof *g->row_off);
  if (!g->row_off)
    return -1;
  strbuf *s = &g->rows;
  for (size_t d = 0; d < depths; d++) {
    double y = row_y(g, (uint32_t)d);
    g->row_off[2 * d] = s->len;
    CK(raw_num(s, LIT(" y=\""), y));
    g->row_off[2 * d + 1] = s->len;
    CK(raw_num(s, LIT(" y=\""), y + g->fh / 2 + 3));
  }
  g->row_off[2 * depths] = s->len;
  CK(raw_num(s, LIT(" height=\""), g->fh - 1));
  g->row_off[2 * depths + 1] = s->len;
  return 0;
}

/* Appends entry k of row_attrs. */
static int row_attr(strbuf *r, const doc *g, size_t k)
{
  return sb_put(r, g->rows.p + g->row_off[k],
                g->row_off[k + 1] - g->row_off[k]);
}

/* Hands the frames built so far to the writer. */
static int raw_flush(doc *g)
{
  if (g->raw.len == 0)
    return 0;
  if (g->direct) {
    if (g->direct(g->direct_ctx, g->raw.p, g->raw.len) != 0)
      return -1;
  } else if (g->raw.len > INT32_MAX ||
             xmlTextWriterWriteRawLen(g->w, BAD_CAST g->raw.p,
                                      (int)g->raw.len) < 0) {
    return -1;
  }
  g->raw.len = 0;
  return 0;
}

/* Frames are flushed in chunks of this size: large enough that the
 * writer's per-call cost vanishes, small enough to stay in cache. */
#define RAW_CHUNK 16384

/* Box i: a group of its tooltip, rectangle and fitted label, built in
 * g->raw as the writer would write it (the golden SVGs hold it to that). */
static int write_frame(doc *g, size_t i)
{
  const fg_box *b = &g->l->boxes[i];
  double x = XPAD + (double)b->start * g->per_weight;
  int64_t width = fg_box_width(g->l, i);
  double wpx = (double)width * g->per_weight;
  size_t depths = (size_t)g->l->max_depth + 1;
  const char *name, *xname;
  size_t len, cps, xlen;
  uint32_t f = b->node ? ljp_tree_node_frame(g->t, b->node) : 0;
  if (i == 0) {
    name = xname = "all";
    len = cps = xlen = 3;
  } else if (!(name = name_of(&g->nc, f, &len, &cps))) {
    return -1;
  } else {
    xname = xml_name_of(&g->nc, f, &xlen);
  }
  rgb col = frame_color(g, i, f);
  strbuf *r = &g->raw;
  if ((i == 0 ? sb_put(r, LIT("<g class=\"f\" id=\"root\"><title>"))
              : sb_put(r, LIT("<g class=\"f\"><title>"))) ||
      frame_title(g, r, i, width, name, len, xname, xlen) ||
      sb_put(r, LIT("</title><rect")) ||
      raw_num(r, LIT(" x=\""), x) || row_attr(r, g, 2 * (size_t)b->depth) ||
      raw_num(r, LIT(" width=\""), wpx) || row_attr(r, g, 2 * depths) ||
      sb_put(r, LIT(" fill=\"rgb(")) || xmltext_int(r, col.r) ||
      sb_put(r, ",", 1) || xmltext_int(r, col.g) || sb_put(r, ",", 1) ||
      xmltext_int(r, col.b) || sb_put(r, LIT(")\"/>")))
    return -1;
  CK(fit_label(&g->label, name, len, cps, wpx, g->o));
  if (g->label.len &&
      (sb_put(r, LIT("<text")) || raw_num(r, LIT(" x=\""), x + 3) ||
       row_attr(r, g, 2 * (size_t)b->depth + 1) || sb_put(r, ">", 1) ||
       xmltext_put(r, g->label.p, g->label.len) ||
       sb_put(r, LIT("</text>"))))
    return -1;
  if (sb_put(r, LIT("</g>")))
    return -1;
  return r->len >= RAW_CHUNK ? raw_flush(g) : 0;
}

/* The <g id="frames"> of every box, then the status lines below it. */
static int write_frames(doc *g)
{
  xmlTextWriterPtr w = g->w;
  CK(xmlTextWriterStartElement(w, BAD_CAST "g"));
  CK(attr(w, "id", "frames"));
  CK(row_attrs(g));
  if (g->direct) {
    /* The frames go to the writer's destination themselves: the start
     * tag is closed (an empty text) and everything before it flushed,
     * so the bytes stay in order without passing through the writer's
     * buffer and its UTF-8 output conversion, two copies of the bulk of
     * the file. */
    CK(xmlTextWriterWriteRawLen(w, BAD_CAST "", 0));
    CK(xmlTextWriterFlush(w));
  }
  for (size_t i = 0; i < g->l->n; i++)
    CK(write_frame(g, i));
  CK(raw_flush(g));
  CK(xmlTextWriterEndElement(w));
  double ybottom = g->ypad1 + g->graph_h + g->ypad2 / 2 + g->fs / 2;
  CK(ui_text(w, "details", "ui", XPAD, ybottom, NULL, " "));
  return ui_text(w, "matched", "ui off", g->W - XPAD - SEARCH_W, ybottom, NULL,
                 " ");
}

/* The largest-changes table of a differential graph. */
static int write_changes(doc *g)
{
  xmlTextWriterPtr w = g->w;
  int top = g->d->top > 0 ? g->d->top : 5;
  double fs = g->fs, y0 = g->ypad1 + g->graph_h + g->ypad2 + fs;
  CK(xmlTextWriterStartElement(w, BAD_CAST "g"));
  CK(attr(w, "id", "changes"));
  CK(ui_text(w, NULL, "ui", XPAD, y0,
             NULL, "Largest changes of self weight (% of the total after):"));
  double colw = (g->W - 2 * XPAD) / 2;
  size_t n = g->nchanges;
  /* Growth is sorted first, shrinkage last: take each from its end. */
  for (int side = 0; side < 2; side++)
    for (int row = 0; row < top; row++) {
      size_t idx = side == 0 ? (size_t)row : n - 1 - (size_t)row;
      if ((size_t)row >= n ||
          (side == 0 ? g->changes[idx].delta <= 0 : g->changes[idx].delta >= 0))
        break;
      CK(change_row(w, &g->changes[idx], g->o, g->l->total, &g->label,
                    &g->title, XPAD + side * colw, y0 + (row + 1) * fs * 1.5,
                    colw, side == 0 ? "ui grew" : "ui shrank"));
    }
  return xmlTextWriterEndElement(w);
}

/* The script, and the end of the document. */
static int write_footer(xmlTextWriterPtr w)
{
  CK(xmlTextWriterStartElement(w, BAD_CAST "script"));
  CK(attr(w, "type", "text/ecmascript"));
  CK(xmlTextWriterWriteCDATA(w, BAD_CAST ljpsvg_script));
  CK(xmlTextWriterEndElement(w));
  CK(xmlTextWriterEndElement(w));
  return xmlTextWriterEndDocument(w);
}

static int write_document(doc *g)
{
  CK(write_header(g));
  CK(write_background(g));
  CK(write_controls(g));
  if (g->legend)
    CK(write_legend(g));
  CK(write_frames(g));
  if (g->diff_rows)
    CK(write_changes(g));
  return write_footer(g->w);
}

int svg_write_direct(xmlTextWriterPtr w, svg_direct direct, void *ctx,
                     const ljp_tree *t, const fg_layout *l, const svg_opts *o,
                     const svg_diff *d)
{
  doc g;
  int rc = -1;
  if (doc_init(&g, w, t, l, o, d) == 0) {
    g.direct = direct;
    g.direct_ctx = ctx;
    rc = write_document(&g) >= 0 ? 0 : -1;
  }
  doc_free(&g);
  return rc;
}

int svg_write(xmlTextWriterPtr w, const ljp_tree *t, const fg_layout *l,
              const svg_opts *o, const svg_diff *d)
{
  return svg_write_direct(w, NULL, NULL, t, l, o, d);
}
