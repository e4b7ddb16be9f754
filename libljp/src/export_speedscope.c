/*
 * export_speedscope.c — call trees into speedscope's JSON file format
 * (https://www.speedscope.app/file-format-schema.json): one "sampled"
 * profile per tree, all sharing one frame table, so a file with a profile
 * per coroutine opens with a profile switcher in the viewer.
 */
#include "export.h"
#include "internal.h"
#include "json_text.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Names as JSON strings, escaped as by every JSON writer of the toolkit
 * (json_text.h). */
static void json_string(ljp_xout *o, const char *s, size_t n) {
  ljp__xout_write(o, "\"", 1);
  size_t i = 0;
  while (i < n) {
    size_t k = ljp__json_plain(s + i, n - i);
    ljp__xout_write(o, s + i, k);
    i += k;
    if (i < n) {
      char esc[LJP_JSON_ESC_MAX];
      ljp__xout_write(o, esc, ljp__json_escape(s + i, esc));
      i++;
    }
  }
  ljp__xout_write(o, "\"", 1);
}

static void json_cstring(ljp_xout *o, const char *s) {
  json_string(o, s, strlen(s));
}

/* Digits by hand: a file holds a frame index per frame of every sample,
 * millions of them, and snprintf was most of the export's time. */
static void json_int(ljp_xout *o, int64_t v) {
  char b[24];
  size_t i = sizeof(b);
  uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
  do {
    b[--i] = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  if (v < 0)
    b[--i] = '-';
  ljp__xout_write(o, b + i, sizeof(b) - i);
}

static void lit(ljp_xout *o, const char *s) { ljp__xout_write(o, s, strlen(s)); }

typedef struct ss_build {
  ljp_xtab frames;         /* (name, class) -> frame index */
  uint32_t **fmap;         /* per profile: tree frame id -> index + 1 */
  uint32_t *path;
  size_t pathcap;
} ss_build;

static ljp_status map_frames(ss_build *b, const ljp_speedscope_profile *p,
                             size_t n) {
  for (size_t i = 0; i < n; i++) {
    const ljp_tree *t = p[i].tree;
    uint32_t nf = ljp_tree_frame_count(t);
    b->fmap[i] = calloc((size_t)nf + 1, sizeof(uint32_t));
    if (!b->fmap[i])
      return LJP_E_NOMEM;
    /* Frames in node order, so the table depends only on the stacks. */
    uint32_t nodes = ljp_tree_node_count(t);
    for (uint32_t node = 1; node < nodes; node++) {
      uint32_t fr = ljp_tree_node_frame(t, node);
      if (b->fmap[i][fr])
        continue;
      size_t len;
      const char *name = ljp_tree_frame_name(t, fr, &len);
      uint32_t x = ljp__xtab_intern(&b->frames, name, len,
                                   (uint32_t)ljp_tree_frame_class(t, fr));
      if (x == UINT32_MAX)
        return LJP_E_NOMEM;
      b->fmap[i][fr] = x + 1;
    }
  }
  return LJP_OK;
}

static void write_frames(ss_build *b, ljp_xout *o) {
  lit(o, "\"shared\":{\"frames\":[");
  for (size_t i = 0; i < b->frames.count; i++) {
    const ljp_xstr *x = &b->frames.items[i];
    const char *file;
    size_t flen;
    int64_t line;
    lit(o, i ? ",\n{\"name\":" : "\n{\"name\":");
    json_string(o, x->text, x->len);
    if (ljp__export_source(x->text, x->len, (ljp_class)x->tag, &file, &flen,
                          &line)) {
      lit(o, ",\"file\":");
      json_string(o, file, flen);
    }
    if (line > 0) {
      lit(o, ",\"line\":");
      json_int(o, line);
    }
    lit(o, "}");
  }
  lit(o, "]}");
}

/* Sample i of p: its leaf node and weight (before scale); 0 when it has
 * none (a tree node without self weight is no sample). */
static uint32_t sample_at(const ljp_speedscope_profile *p, size_t i,
                          int64_t *w) {
  if (p->nodes) {
    *w = p->weights ? p->weights[i] : 1;
    return p->nodes[i];
  }
  *w = ljp_tree_node_self(p->tree, (uint32_t)i);
  return *w ? (uint32_t)i : 0;
}

static size_t sample_count(const ljp_speedscope_profile *p) {
  return p->nodes ? p->nsamples : ljp_tree_node_count(p->tree);
}

static ljp_status write_profile(ss_build *b, ljp_xout *o,
                                const ljp_speedscope_profile *p,
                                const uint32_t *fmap) {
  const ljp_tree *t = p->tree;
  int64_t scale = p->scale ? p->scale : 1, total = 0, w;
  size_t count = sample_count(p);
  for (size_t i = 0; i < count; i++)
    if (sample_at(p, i, &w))
      total += w * scale;
  lit(o, "{\"type\":\"sampled\",\"name\":");
  json_cstring(o, p->name ? p->name : "");
  lit(o, ",\"unit\":");
  json_cstring(o, p->unit ? p->unit : "none");
  lit(o, ",\"startValue\":");
  json_int(o, p->start);
  lit(o, ",\"endValue\":");
  json_int(o, p->end ? p->end : p->start + total);
  lit(o, ",\"samples\":[");
  int first = 1;
  for (size_t i = 0; i < count; i++) {
    uint32_t node = sample_at(p, i, &w);
    if (!node)
      continue;
    size_t n = ljp__export_path(t, node, &b->path, &b->pathcap);
    if (n == SIZE_MAX)
      return LJP_E_NOMEM;
    lit(o, first ? "\n[" : ",\n[");
    first = 0;
    for (size_t i = 0; i < n; i++) {
      if (i)
        lit(o, ",");
      json_int(o, (int64_t)fmap[b->path[i]] - 1);
    }
    lit(o, "]");
  }
  lit(o, "],\"weights\":[");
  first = 1;
  for (size_t i = 0; i < count; i++) {
    if (!sample_at(p, i, &w))
      continue;
    if (!first)
      lit(o, ",");
    first = 0;
    json_int(o, w * scale);
  }
  lit(o, "]}");
  return LJP_OK;
}

LJP_API ljp_status ljp_speedscope_write(const char *name,
                                        const ljp_speedscope_profile *p,
                                        size_t n, ljp_sink_fn sink,
                                        void *ctx) {
  if (!sink || n == 0 || !p)
    return LJP_E_ARG;
  for (size_t i = 0; i < n; i++) {
    if (!p[i].tree || (p[i].nsamples && !p[i].nodes))
      return LJP_E_ARG;
    for (size_t k = 0; p[i].nodes && k < p[i].nsamples; k++)
      if (p[i].nodes[k] >= ljp_tree_node_count(p[i].tree))
        return LJP_E_ARG;
  }
  ss_build b;
  memset(&b, 0, sizeof(b));
  ljp__xtab_init(&b.frames);
  b.fmap = calloc(n, sizeof(*b.fmap));
  ljp_status st = b.fmap ? map_frames(&b, p, n) : LJP_E_NOMEM;
  ljp_xout *o = malloc(sizeof(*o));
  if (!o && st == LJP_OK)
    st = LJP_E_NOMEM;
  if (st == LJP_OK) {
    ljp__xout_init(o, sink, ctx);
    lit(o, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\",\n");
    lit(o, "\"name\":");
    json_cstring(o, name ? name : "");
    lit(o, ",\"exporter\":\"ljp\",\"activeProfileIndex\":0,\n");
    write_frames(&b, o);
    lit(o, ",\n\"profiles\":[");
    for (size_t i = 0; i < n && st == LJP_OK; i++) {
      if (i)
        lit(o, ",\n");
      st = write_profile(&b, o, &p[i], b.fmap[i]);
    }
    lit(o, "]}\n");
    ljp_status fst = ljp__xout_flush(o);
    if (st == LJP_OK)
      st = fst;
  }
  free(o);
  if (b.fmap)
    for (size_t i = 0; i < n; i++)
      free(b.fmap[i]);
  free(b.fmap);
  free(b.path);
  ljp__xtab_free(&b.frames);
  return st;
}
