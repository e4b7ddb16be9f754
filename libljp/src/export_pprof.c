/*
 * export_pprof.c — call trees into pprof's profile.proto, gzip-compressed
 * as Go's runtime/pprof writes it, so go tool pprof, Grafana Pyroscope and
 * Parca read ljp profiles as they read Go's.
 *
 * Every distinct frame becomes one function and one location (ids equal);
 * a sample is a stack, leaf first, with one value per tree and its labels.
 * Host frames whose object the stream names (x1) point their location at a
 * mapping of that object (file, range, build-id) with the frame's address,
 * so viewers group host code by object and symbolizers find the file.
 * Stacks that only differ in labels (the VM state moved from a leaf frame
 * into a label) stay separate samples, which is how pprof keeps labels.
 */
#include "export.h"
#include "internal.h"
#include "pb.h"

#include <stdlib.h>
#include <string.h>
#include <zlib.h>

/* profile.proto field numbers. */
enum {
  P_SAMPLE_TYPE = 1, P_SAMPLE = 2, P_MAPPING = 3, P_LOCATION = 4,
  P_FUNCTION = 5,
  P_STRING_TABLE = 6, P_DURATION = 10, P_PERIOD_TYPE = 11, P_PERIOD = 12,
  VT_TYPE = 1, VT_UNIT = 2,
  S_LOCATION = 1, S_VALUE = 2, S_LABEL = 3,
  L_KEY = 1, L_STR = 2, L_NUM = 3,
  LOC_ID = 1, LOC_MAPPING = 2, LOC_ADDRESS = 3, LOC_LINE = 4,
  LINE_FUNCTION = 1, LINE_LINE = 2,
  M_ID = 1, M_START = 2, M_LIMIT = 3, M_OFFSET = 4, M_FILENAME = 5,
  M_BUILD_ID = 6, M_HAS_FUNCTIONS = 7,
  F_ID = 1, F_NAME = 2, F_SYSTEM_NAME = 3, F_FILENAME = 4, F_START_LINE = 5
};

typedef struct pfunc {
  uint32_t name, file;     /* string table indexes */
  int64_t line;
  uint32_t mapping;        /* mapping id, 0: none */
  uint64_t address;        /* with a mapping: the frame's address */
} pfunc;

typedef struct pmap {
  uint64_t start, size, offset;
  uint32_t file, build_id; /* string table indexes */
} pmap;

typedef struct pprof_build {
  const ljp_pprof_options *o;
  ljp_xtab str;            /* the string table; "" is index 0 */
  ljp_xtab fkeys;          /* (frame name, class) -> function index */
  pfunc *funcs;
  size_t nfuncs, capfuncs;
  pmap *maps;              /* a process maps tens of objects: a list */
  size_t nmaps, capmaps;
  ljp_xkeys samples;       /* [vmstate str, trace+1, locations leaf first] */
  int64_t *values;         /* samples x ntypes */
  size_t capvalues;
  uint32_t *path;
  size_t pathcap;
  uint64_t *key;
  size_t keycap;
  uint32_t vmstate_key, trace_key;
  uint32_t label_keys[64], label_vals[64];
} pprof_build;

static uint32_t str(pprof_build *b, const char *s, size_t len) {
  return ljp__xtab_intern(&b->str, s, len, 0);
}

static uint32_t cstr(pprof_build *b, const char *s) {
  return str(b, s, strlen(s));
}

/* The mapping id (1-based) of a frame's object; 0 when it has none,
 * UINT32_MAX on OOM. */
static uint32_t mapping_of(pprof_build *b, const ljp_frame_info *fi) {
  if (!fi->object || !fi->object_size)
    return 0;
  uint32_t file = str(b, fi->object, fi->object_len);
  uint32_t id = fi->build_id ? str(b, fi->build_id, fi->build_id_len) : 0;
  if (file == UINT32_MAX || id == UINT32_MAX)
    return UINT32_MAX;
  for (size_t i = 0; i < b->nmaps; i++)
    if (b->maps[i].start == fi->object_start &&
        b->maps[i].size == fi->object_size && b->maps[i].file == file)
      return (uint32_t)i + 1;
  if (b->nmaps == b->capmaps) {
    size_t nc = b->capmaps ? b->capmaps * 2 : 16;
    pmap *nm = realloc(b->maps, nc * sizeof(*nm));
    if (!nm)
      return UINT32_MAX;
    b->maps = nm;
    b->capmaps = nc;
  }
  pmap m = {fi->object_start, fi->object_size, fi->object_offset, file, id};
  b->maps[b->nmaps++] = m;
  return (uint32_t)b->nmaps;
}

/* The function id (1-based) of frame fr of tree t, or 0 on OOM. */
static uint64_t func_of(pprof_build *b, const ljp_tree *t, uint32_t fr) {
  size_t len;
  const char *name = ljp_tree_frame_name(t, fr, &len);
  ljp_class cls = ljp_tree_frame_class(t, fr);
  uint32_t idx = ljp__xtab_intern(&b->fkeys, name, len, (uint32_t)cls);
  if (idx == UINT32_MAX)
    return 0;
  if (idx < b->nfuncs)
    return (uint64_t)idx + 1;
  if (b->nfuncs == b->capfuncs) {
    size_t nc = b->capfuncs ? b->capfuncs * 2 : 64;
    pfunc *nf = realloc(b->funcs, nc * sizeof(*nf));
    if (!nf)
      return 0;
    b->funcs = nf;
    b->capfuncs = nc;
  }
  const char *file;
  size_t flen;
  pfunc f = {0, 0, 0, 0, 0};
  ljp_frame_info fi;
  f.name = str(b, name, len);
  if (ljp__export_source(name, len, cls, &file, &flen, &f.line))
    f.file = str(b, file, flen);
  if (f.name == UINT32_MAX || f.file == UINT32_MAX)
    return 0;
  if (ljp_tree_frame_info(t, fr, &fi) == LJP_OK &&
      (fi.kind == LJP_FRAME_HOST || fi.kind == LJP_FRAME_CFUNC)) {
    if ((f.mapping = mapping_of(b, &fi)) == UINT32_MAX)
      return 0;
    f.address = f.mapping ? fi.address : 0;
  }
  b->funcs[b->nfuncs++] = f;
  return (uint64_t)idx + 1;
}

/* The number in "TRACE [n] ...", or 0. */
static uint64_t trace_number(const char *name, size_t len) {
  if (len < 8 || memcmp(name, "TRACE [", 7) != 0)
    return 0;
  uint64_t v = 0;
  for (size_t i = 7; i < len && name[i] >= '0' && name[i] <= '9'; i++)
    v = v * 10 + (uint64_t)(name[i] - '0');
  return v;
}

static ljp_status add_stack(pprof_build *b, size_t k, uint32_t node,
                            uint64_t *fcache) {
  const ljp_export_type *ty = &b->o->types[k];
  const ljp_tree *t = ty->tree;
  size_t n = ljp__export_path(t, node, &b->path, &b->pathcap);
  if (n == SIZE_MAX)
    return LJP_E_NOMEM;
  uint64_t vm = 0, trace = 0;
  if (b->o->vmstate_labels && n > 0 &&
      ljp_tree_frame_class(t, b->path[n - 1]) == LJP_CLASS_VM) {
    size_t len;
    const char *name = ljp_tree_frame_name(t, b->path[n - 1], &len);
    if (len > 5 && memcmp(name, "VMST_", 5) == 0) {
      uint32_t s = str(b, name + 5, len - 5);
      if (s == UINT32_MAX)
        return LJP_E_NOMEM;
      vm = s;
      if (n > 1) /* alone, it is the stack's only frame: keep it */
        n--;
    }
  }
  for (size_t i = n; i > 0 && !trace; i--)
    if (ljp_tree_frame_class(t, b->path[i - 1]) == LJP_CLASS_TRACE) {
      size_t len;
      const char *name = ljp_tree_frame_name(t, b->path[i - 1], &len);
      trace = trace_number(name, len);
    }
  if (n + 2 > b->keycap) {
    uint64_t *nk = realloc(b->key, (n + 18) * sizeof(*nk));
    if (!nk)
      return LJP_E_NOMEM;
    b->key = nk;
    b->keycap = n + 18;
  }
  b->key[0] = vm;
  b->key[1] = trace ? trace + 1 : 0;
  for (size_t i = 0; i < n; i++) {
    uint32_t fr = b->path[n - 1 - i]; /* pprof wants the leaf first */
    if (!fcache[fr] && !(fcache[fr] = func_of(b, t, fr)))
      return LJP_E_NOMEM;
    b->key[2 + i] = fcache[fr];
  }
  uint32_t s = ljp__xkeys_intern(&b->samples, b->key, n + 2);
  if (s == UINT32_MAX)
    return LJP_E_NOMEM;
  size_t nt = b->o->ntypes;
  if (((size_t)s + 1) * nt > b->capvalues) {
    size_t nc = b->capvalues ? b->capvalues * 2 : 256 * nt;
    int64_t *nv = realloc(b->values, nc * sizeof(*nv));
    if (!nv)
      return LJP_E_NOMEM;
    memset(nv + b->capvalues, 0, (nc - b->capvalues) * sizeof(*nv));
    b->values = nv;
    b->capvalues = nc;
  }
  int64_t scale = ty->scale ? ty->scale : 1;
  b->values[(size_t)s * nt + k] += ljp_tree_node_self(t, node) * scale;
  return LJP_OK;
}

static ljp_status collect(pprof_build *b) {
  const ljp_pprof_options *o = b->o;
  for (size_t k = 0; k < o->ntypes; k++) {
    const ljp_tree *t = o->types[k].tree;
    uint64_t *fcache = calloc((size_t)ljp_tree_frame_count(t) + 1,
                              sizeof(*fcache));
    if (!fcache)
      return LJP_E_NOMEM;
    uint32_t nodes = ljp_tree_node_count(t);
    ljp_status st = LJP_OK;
    for (uint32_t node = 1; node < nodes && st == LJP_OK; node++)
      if (ljp_tree_node_self(t, node) != 0)
        st = add_stack(b, k, node, fcache);
    free(fcache);
    if (st != LJP_OK)
      return st;
  }
  return LJP_OK;
}

static void value_type(ljp_pb *out, ljp_pb *sub, unsigned field,
                       uint32_t type, uint32_t unit) {
  ljp__pb_reset(sub);
  ljp__pb_uint(sub, VT_TYPE, type);
  ljp__pb_uint(sub, VT_UNIT, unit);
  ljp__pb_message(out, field, sub);
}

/* A string label (str: its string index, "" included) or, with str
 * UINT32_MAX, a number label. */
static void label(ljp_pb *sub, ljp_pb *lab, uint32_t key, uint32_t str,
                  int64_t num) {
  ljp__pb_reset(lab);
  ljp__pb_uint(lab, L_KEY, key);
  if (str != UINT32_MAX)
    ljp__pb_uint(lab, L_STR, str);
  else
    ljp__pb_int(lab, L_NUM, num);
  ljp__pb_message(sub, S_LABEL, lab);
}

static void write_samples(pprof_build *b, ljp_pb *out, ljp_pb *sub,
                          ljp_pb *lab) {
  const ljp_pprof_options *o = b->o;
  for (size_t s = 0; s < b->samples.count; s++) {
    const uint64_t *w = b->samples.words + b->samples.start[s];
    size_t n = b->samples.start[s + 1] - b->samples.start[s];
    ljp__pb_reset(sub);
    ljp__pb_packed_u64(sub, S_LOCATION, w + 2, n - 2);
    ljp__pb_packed_i64(sub, S_VALUE, b->values + s * o->ntypes, o->ntypes);
    for (size_t i = 0; i < o->nlabels; i++)
      label(sub, lab, b->label_keys[i], b->label_vals[i], 0);
    if (w[0])
      label(sub, lab, b->vmstate_key, (uint32_t)w[0], 0);
    if (w[1])
      label(sub, lab, b->trace_key, UINT32_MAX, (int64_t)(w[1] - 1));
    ljp__pb_message(out, P_SAMPLE, sub);
  }
}

/* Mappings say the functions are known (has_functions), so pprof does not
 * try to symbolize the addresses again. */
static void write_mappings(pprof_build *b, ljp_pb *out, ljp_pb *sub) {
  for (size_t i = 0; i < b->nmaps; i++) {
    const pmap *m = &b->maps[i];
    ljp__pb_reset(sub);
    ljp__pb_uint(sub, M_ID, i + 1);
    ljp__pb_uint(sub, M_START, m->start);
    ljp__pb_uint(sub, M_LIMIT, m->start + m->size);
    ljp__pb_uint(sub, M_OFFSET, m->offset);
    ljp__pb_uint(sub, M_FILENAME, m->file);
    if (m->build_id)
      ljp__pb_uint(sub, M_BUILD_ID, m->build_id);
    ljp__pb_uint(sub, M_HAS_FUNCTIONS, 1);
    ljp__pb_message(out, P_MAPPING, sub);
  }
}

static void write_functions(pprof_build *b, ljp_pb *out, ljp_pb *sub,
                            ljp_pb *line) {
  for (size_t i = 0; i < b->nfuncs; i++) {
    const pfunc *f = &b->funcs[i];
    ljp__pb_reset(line);
    ljp__pb_uint(line, LINE_FUNCTION, i + 1);
    if (f->line > 0)
      ljp__pb_int(line, LINE_LINE, f->line);
    ljp__pb_reset(sub);
    ljp__pb_uint(sub, LOC_ID, i + 1);
    if (f->mapping) {
      ljp__pb_uint(sub, LOC_MAPPING, f->mapping);
      ljp__pb_uint(sub, LOC_ADDRESS, f->address);
    }
    ljp__pb_message(sub, LOC_LINE, line);
    ljp__pb_message(out, P_LOCATION, sub);
  }
  for (size_t i = 0; i < b->nfuncs; i++) {
    const pfunc *f = &b->funcs[i];
    ljp__pb_reset(sub);
    ljp__pb_uint(sub, F_ID, i + 1);
    ljp__pb_uint(sub, F_NAME, f->name);
    ljp__pb_uint(sub, F_SYSTEM_NAME, f->name);
    if (f->file)
      ljp__pb_uint(sub, F_FILENAME, f->file);
    if (f->line > 0)
      ljp__pb_int(sub, F_START_LINE, f->line);
    ljp__pb_message(out, P_FUNCTION, sub);
  }
}

/* The whole message into out.  The string table is written last of the
 * interning, so every string the message needs is in it by then. */
static ljp_status serialize(pprof_build *b, ljp_pb *out) {
  const ljp_pprof_options *o = b->o;
  uint32_t types[LJP_EXPORT_MAX_TYPES], units[LJP_EXPORT_MAX_TYPES];
  uint32_t ptype = 0, punit = 0;
  for (size_t k = 0; k < o->ntypes; k++) {
    types[k] = cstr(b, o->types[k].type);
    units[k] = cstr(b, o->types[k].unit);
    if (types[k] == UINT32_MAX || units[k] == UINT32_MAX)
      return LJP_E_NOMEM;
  }
  if (o->period_type) {
    ptype = cstr(b, o->period_type);
    punit = cstr(b, o->period_unit ? o->period_unit : "");
    if (ptype == UINT32_MAX || punit == UINT32_MAX)
      return LJP_E_NOMEM;
  }
  ljp_pb sub, lab;
  ljp__pb_init(&sub);
  ljp__pb_init(&lab);
  for (size_t k = 0; k < o->ntypes; k++)
    value_type(out, &sub, P_SAMPLE_TYPE, types[k], units[k]);
  write_samples(b, out, &sub, &lab);
  write_mappings(b, out, &sub);
  write_functions(b, out, &sub, &lab);
  for (size_t i = 0; i < b->str.count; i++)
    ljp__pb_bytes(out, P_STRING_TABLE, b->str.items[i].text,
                 b->str.items[i].len);
  if (o->duration_ns > 0)
    ljp__pb_int(out, P_DURATION, o->duration_ns);
  if (o->period_type) {
    value_type(out, &sub, P_PERIOD_TYPE, ptype, punit);
    ljp__pb_int(out, P_PERIOD, o->period);
  }
  int oom = sub.oom || lab.oom || out->oom;
  ljp__pb_free(&sub);
  ljp__pb_free(&lab);
  return oom ? LJP_E_NOMEM : LJP_OK;
}

/* gzip with a fixed header (mtime 0, OS unknown as Go writes it), so the
 * same profile always gives the same bytes. */
static ljp_status gzip_out(const ljp_pb *msg, ljp_xout *xo) {
  z_stream z;
  memset(&z, 0, sizeof(z));
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
                   Z_DEFAULT_STRATEGY) != Z_OK)
    return LJP_E_NOMEM;
  gz_header h;
  memset(&h, 0, sizeof(h));
  h.os = 255;
  ljp_status st = LJP_OK;
  if (deflateSetHeader(&z, &h) != Z_OK)
    st = LJP_E_NOMEM;
  const uint8_t *in = msg->data ? msg->data : (const uint8_t *)"";
  size_t left = msg->len;
  int flush = Z_NO_FLUSH, zr = Z_OK;
  unsigned char buf[16384];
  while (st == LJP_OK && zr != Z_STREAM_END) {
    if (z.avail_in == 0) {
      uInt chunk = left > 1u << 30 ? 1u << 30 : (uInt)left;
      z.next_in = (Bytef *)(uintptr_t)in;
      z.avail_in = chunk;
      in += chunk;
      left -= chunk;
      flush = left ? Z_NO_FLUSH : Z_FINISH;
    }
    z.next_out = buf;
    z.avail_out = sizeof(buf);
    zr = deflate(&z, flush);
    if (zr == Z_STREAM_ERROR) {
      st = LJP_E_NOMEM;
      break;
    }
    ljp__xout_write(xo, buf, sizeof(buf) - z.avail_out);
    st = xo->st;
  }
  deflateEnd(&z);
  return st;
}

static ljp_status check_options(const ljp_pprof_options *o, ljp_sink_fn sink) {
  if (!o || !sink || o->ntypes == 0 || o->ntypes > LJP_EXPORT_MAX_TYPES ||
      o->nlabels > 64 || (o->nlabels && !o->labels))
    return LJP_E_ARG;
  for (size_t k = 0; k < o->ntypes; k++)
    if (!o->types[k].tree || !o->types[k].type || !o->types[k].unit)
      return LJP_E_ARG;
  for (size_t i = 0; i < o->nlabels; i++)
    if (!o->labels[i].key || !o->labels[i].value)
      return LJP_E_ARG;
  return LJP_OK;
}

LJP_API ljp_status ljp_pprof_write(const ljp_pprof_options *o,
                                   ljp_sink_fn sink, void *ctx) {
  ljp_status st = check_options(o, sink);
  if (st != LJP_OK)
    return st;
  pprof_build b;
  memset(&b, 0, sizeof(b));
  b.o = o;
  ljp__xtab_init(&b.str);
  ljp__xtab_init(&b.fkeys);
  ljp__xkeys_init(&b.samples);
  ljp_pb msg;
  ljp__pb_init(&msg);
  if (str(&b, "", 0) != 0 ||
      (b.vmstate_key = cstr(&b, "vmstate")) == UINT32_MAX ||
      (b.trace_key = cstr(&b, "trace")) == UINT32_MAX)
    st = LJP_E_NOMEM;
  for (size_t i = 0; i < o->nlabels && st == LJP_OK; i++) {
    b.label_keys[i] = cstr(&b, o->labels[i].key);
    b.label_vals[i] = cstr(&b, o->labels[i].value);
    if (b.label_keys[i] == UINT32_MAX || b.label_vals[i] == UINT32_MAX)
      st = LJP_E_NOMEM;
  }
  if (st == LJP_OK)
    st = collect(&b);
  if (st == LJP_OK)
    st = serialize(&b, &msg);
  if (st == LJP_OK) {
    ljp_xout xo;
    ljp__xout_init(&xo, sink, ctx);
    if (o->uncompressed)
      ljp__xout_write(&xo, msg.data, msg.len);
    else
      st = gzip_out(&msg, &xo);
    ljp_status fst = ljp__xout_flush(&xo);
    if (st == LJP_OK)
      st = fst;
  }
  ljp__pb_free(&msg);
  ljp__xtab_free(&b.str);
  ljp__xtab_free(&b.fkeys);
  ljp__xkeys_free(&b.samples);
  free(b.funcs);
  free(b.maps);
  free(b.values);
  free(b.path);
  free(b.key);
  return st;
}
