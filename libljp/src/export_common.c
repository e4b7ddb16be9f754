/*
 * export_common.c — see export.h.
 */
#include "export.h"
#include "internal.h"

#include <stdlib.h>
#include <string.h>

void ljp__xtab_init(ljp_xtab *t) { memset(t, 0, sizeof(*t)); }

void ljp__xtab_free(ljp_xtab *t) {
  for (size_t i = 0; i < t->count; i++)
    free(t->items[i].text);
  free(t->items);
  free(t->slots);
  ljp__xtab_init(t);
}

static uint64_t str_hash(const char *s, size_t len, uint32_t tag) {
  return ljp_hash64(ljp__hash_bytes(s, len) ^ tag);
}

/* Rebuilds the slot array at twice the size; hashes come from the items,
 * so nothing else needs storing. */
static int xtab_grow(ljp_xtab *t) {
  size_t n = t->nslots ? t->nslots * 2 : 64;
  uint32_t *ns = calloc(n, sizeof(*ns));
  if (!ns)
    return -1;
  for (size_t i = 0; i < t->count; i++) {
    const ljp_xstr *x = &t->items[i];
    size_t h = (size_t)str_hash(x->text, x->len, x->tag) & (n - 1);
    while (ns[h])
      h = (h + 1) & (n - 1);
    ns[h] = (uint32_t)i + 1;
  }
  free(t->slots);
  t->slots = ns;
  t->nslots = n;
  return 0;
}

uint32_t ljp__xtab_intern(ljp_xtab *t, const char *s, size_t len,
                         uint32_t tag) {
  if ((t->count + 1) * 2 > t->nslots && xtab_grow(t))
    return UINT32_MAX;
  size_t mask = t->nslots - 1;
  size_t h = (size_t)str_hash(s, len, tag) & mask;
  for (; t->slots[h]; h = (h + 1) & mask) {
    const ljp_xstr *x = &t->items[t->slots[h] - 1];
    if (x->len == len && x->tag == tag && memcmp(x->text, s, len) == 0)
      return t->slots[h] - 1;
  }
  if (t->count >= UINT32_MAX - 1)
    return UINT32_MAX;
  if (t->count == t->cap) {
    size_t nc = t->cap ? t->cap * 2 : 64;
    ljp_xstr *ni = realloc(t->items, nc * sizeof(*ni));
    if (!ni)
      return UINT32_MAX;
    t->items = ni;
    t->cap = nc;
  }
  char *copy = malloc(len + 1);
  if (!copy)
    return UINT32_MAX;
  if (len)
    memcpy(copy, s, len);
  copy[len] = '\0';
  t->items[t->count] = (ljp_xstr){copy, len, tag};
  t->slots[h] = (uint32_t)t->count + 1;
  return (uint32_t)t->count++;
}

void ljp__xkeys_init(ljp_xkeys *k) { memset(k, 0, sizeof(*k)); }

void ljp__xkeys_free(ljp_xkeys *k) {
  free(k->words);
  free(k->start);
  free(k->slots);
  ljp__xkeys_init(k);
}

static uint64_t key_hash(const uint64_t *w, size_t n) {
  return ljp__hash_bytes(w, n * sizeof(*w));
}

static int xkeys_grow(ljp_xkeys *k) {
  size_t n = k->nslots ? k->nslots * 2 : 64;
  uint32_t *ns = calloc(n, sizeof(*ns));
  if (!ns)
    return -1;
  for (size_t i = 0; i < k->count; i++) {
    size_t h = (size_t)key_hash(k->words + k->start[i],
                                k->start[i + 1] - k->start[i]) & (n - 1);
    while (ns[h])
      h = (h + 1) & (n - 1);
    ns[h] = (uint32_t)i + 1;
  }
  free(k->slots);
  k->slots = ns;
  k->nslots = n;
  return 0;
}

uint32_t ljp__xkeys_intern(ljp_xkeys *k, const uint64_t *w, size_t n) {
  if ((k->count + 1) * 2 > k->nslots && xkeys_grow(k))
    return UINT32_MAX;
  if (k->count + 2 > k->capstart) {
    size_t nc = k->capstart ? k->capstart * 2 : 64;
    size_t *ns = realloc(k->start, nc * sizeof(*ns));
    if (!ns)
      return UINT32_MAX;
    if (k->capstart == 0)
      ns[0] = 0;
    k->start = ns;
    k->capstart = nc;
  }
  size_t mask = k->nslots - 1;
  size_t h = (size_t)key_hash(w, n) & mask;
  for (; k->slots[h]; h = (h + 1) & mask) {
    size_t i = k->slots[h] - 1;
    size_t len = k->start[i + 1] - k->start[i];
    if (len == n && memcmp(k->words + k->start[i], w, n * sizeof(*w)) == 0)
      return (uint32_t)i;
  }
  if (k->count >= UINT32_MAX - 1 || n > SIZE_MAX / 16 - k->nwords)
    return UINT32_MAX;
  if (k->nwords + n > k->capwords) {
    size_t nc = k->capwords ? k->capwords : 256;
    while (nc < k->nwords + n)
      nc *= 2;
    uint64_t *nw = realloc(k->words, nc * sizeof(*nw));
    if (!nw)
      return UINT32_MAX;
    k->words = nw;
    k->capwords = nc;
  }
  if (n)
    memcpy(k->words + k->nwords, w, n * sizeof(*w));
  k->nwords += n;
  k->start[k->count + 1] = k->nwords;
  k->slots[h] = (uint32_t)k->count + 1;
  return (uint32_t)k->count++;
}

size_t ljp__export_path(const ljp_tree *t, uint32_t node, uint32_t **buf,
                       size_t *cap) {
  size_t depth = ljp_tree_node_depth(t, node);
  if (depth > *cap) {
    uint32_t *nb = realloc(*buf, (depth + 16) * sizeof(*nb));
    if (!nb)
      return SIZE_MAX;
    *buf = nb;
    *cap = depth + 16;
  }
  for (size_t i = depth; i > 0; i--) {
    (*buf)[i - 1] = ljp_tree_node_frame(t, node);
    node = ljp_tree_node_parent(t, node);
  }
  return depth;
}

int ljp__export_source(const char *name, size_t len, ljp_class cls,
                      const char **file, size_t *flen, int64_t *line) {
  *file = NULL;
  *flen = 0;
  *line = 0;
  if (cls != LJP_CLASS_LUA || len == 0)
    return 0;
  /* A trailing ":<digits>" is the function's first line. */
  size_t end = len, d = len;
  while (d > 0 && name[d - 1] >= '0' && name[d - 1] <= '9')
    d--;
  if (d < len && d > 0 && name[d - 1] == ':' && len - d <= 18) {
    int64_t v = 0;
    for (size_t i = d; i < len; i++)
      v = v * 10 + (name[i] - '0');
    *line = v;
    end = d - 1;
  }
  /* "name @chunk": names from sources precede the chunk; the last " @"
   * starts it, since a function name never holds one. */
  size_t from = 0;
  for (size_t i = end; i > 1; i--)
    if (name[i - 1] == '@' && name[i - 2] == ' ') {
      from = i - 1;
      break;
    }
  if (from == 0 && !(name[0] == '@' || *line))
    return 0; /* "line 12", "function_alias_1": no file */
  if (name[from] == '@')
    from++;
  if (from >= end)
    return 0;
  *file = name + from;
  *flen = end - from;
  return 1;
}

void ljp__xout_init(ljp_xout *o, ljp_sink_fn sink, void *ctx) {
  o->sink = sink;
  o->ctx = ctx;
  o->len = 0;
  o->st = LJP_OK;
}

ljp_status ljp__xout_flush(ljp_xout *o) {
  if (o->st == LJP_OK && o->len && o->sink(o->ctx, o->buf, o->len))
    o->st = LJP_E_IO;
  o->len = 0;
  return o->st;
}

void ljp__xout_write(ljp_xout *o, const void *p, size_t n) {
  const char *s = p;
  while (n && o->st == LJP_OK) {
    if (o->len == sizeof(o->buf))
      ljp__xout_flush(o);
    size_t k = sizeof(o->buf) - o->len;
    if (k > n)
      k = n;
    memcpy(o->buf + o->len, s, k);
    o->len += k;
    s += k;
    n -= k;
  }
}
