/*
 * tree.c — the call tree: interned frames and a trie of stacks.
 *
 * Frames are (name bytes, class, line) keys interned into dense ids through an
 * open-addressing hash table; names live in an arena of large chunks so the
 * pointers handed out stay valid until the tree is freed.
 *
 * Nodes form a trie keyed by (parent node, frame id).  The key -> node map is
 * a second open-addressing table whose slots carry the whole key, so adding
 * a stack costs one probe sequence (usually one cache line) per frame and
 * never touches the node array while searching.  Each node also keeps an
 * unsorted sibling list (newest child first): listing children sorts on
 * demand, which keeps insertion O(1) however wide a node grows.
 *
 * Memory grows with unique frames and unique stacks only: adding the same
 * stack again only adds weights.
 */
#include "hash.h"
#include "tree_impl.h"

#include <stdlib.h>
#include <string.h>

/* Most nodes of a profile's tree have one child or a few: their children
 * are found by walking the sibling list, which touches nodes that are
 * usually still in cache.  Only parents with more children go into the
 * (parent, frame) hash table, which stays small. */
#define SMALL_FANOUT 8

#define ARENA_CHUNK (64u * 1024u)
#define TABLE_INIT 1024u

/* ------------------------------------------------------------------------ */
/* Hashing                                                                  */
/* ------------------------------------------------------------------------ */

/* A name's hash with its frame class and line mixed in: the same text in
 * another class, or at another line, is another frame.  Line 0 leaves the
 * hash as it was before frames had lines. */
static uint64_t hash_frame(const char *s, size_t n, unsigned cls,
                           uint64_t line)
{
  uint64_t h = ljp_hash64(ljp_hash_bytes(s, n) ^ cls);
  return line ? ljp_hash64(h ^ line) : h;
}

static uint64_t hash_pair(uint32_t parent, uint32_t frame)
{
  return ljp_hash64(((uint64_t)parent << 32) | frame);
}

/* ------------------------------------------------------------------------ */
/* Arena                                                                    */
/* ------------------------------------------------------------------------ */

char *ljp__tree_arena_copy(ljp_tree *t, const char *s, size_t len)
{
  arena_chunk *c = t->arena;
  if (!c || c->cap - c->used < len + 1) {
    size_t cap = len + 1 > ARENA_CHUNK ? len + 1 : ARENA_CHUNK;
    c = malloc(sizeof *c + cap);
    if (!c)
      return NULL;
    c->used = 0;
    c->cap = cap;
    /* A big name gets a chunk of its own behind the current one, so the
     * current chunk's free space is not thrown away. */
    if (t->arena && cap > ARENA_CHUNK) {
      c->next = t->arena->next;
      t->arena->next = c;
    } else {
      c->next = t->arena;
      t->arena = c;
    }
  }
  char *p = c->data + c->used;
  if (len)
    memcpy(p, s, len);
  p[len] = '\0';
  c->used += len + 1;
  return p;
}

/* ------------------------------------------------------------------------ */
/* Life cycle                                                               */
/* ------------------------------------------------------------------------ */

LJP_API ljp_tree *ljp_tree_new(void)
{
  ljp_tree *t = calloc(1, sizeof *t);
  if (!t)
    return NULL;
  t->frames_cap = 256;
  t->frames = malloc(t->frames_cap * sizeof *t->frames);
  t->ftab = calloc(TABLE_INIT, sizeof *t->ftab);
  t->nodes_cap = 256;
  t->nodes = malloc(t->nodes_cap * sizeof *t->nodes);
  t->ntab = calloc(TABLE_INIT, sizeof *t->ntab);
  if (!t->frames || !t->ftab || !t->nodes || !t->ntab) {
    ljp_tree_free(t);
    return NULL;
  }
  t->ftab_mask = TABLE_INIT - 1;
  t->ntab_mask = TABLE_INIT - 1;
  memset(&t->frames[0], 0, sizeof t->frames[0]);
  t->frames[0].name = "";
  t->nframes = 1;
  memset(&t->nodes[0], 0, sizeof t->nodes[0]);
  t->nnodes = 1;
  return t;
}

LJP_API void ljp_tree_free(ljp_tree *t)
{
  if (!t)
    return;
  arena_chunk *c = t->arena;
  while (c) {
    arena_chunk *next = c->next;
    free(c);
    c = next;
  }
  free(t->frames);
  free(t->ftab);
  free(t->nodes);
  free(t->ntab);
  free(t->last_frames);
  free(t->last_nodes);
  ljp__tree_info_free(t);
  free(t);
}

/* ------------------------------------------------------------------------ */
/* Frames                                                                   */
/* ------------------------------------------------------------------------ */

static uint32_t frame_lookup(const ljp_tree *t, const char *name, size_t len,
                             ljp_class cls, uint64_t line, uint32_t hash,
                             uint32_t *slot)
{
  uint32_t i = hash & t->ftab_mask;
  for (;;) {
    uint32_t id = t->ftab[i];
    if (id == 0) {
      *slot = i;
      return 0;
    }
    const tree_frame *f = &t->frames[id];
    if (f->hash == hash && f->cls == cls && f->len == len &&
        f->line == line && (len == 0 || memcmp(f->name, name, len) == 0))
      return id;
    i = (i + 1) & t->ftab_mask;
  }
}

static int frame_table_grow(ljp_tree *t)
{
  uint32_t cap = (t->ftab_mask + 1) * 2;
  uint32_t *tab = calloc(cap, sizeof *tab);
  if (!tab)
    return -1;
  for (uint32_t id = 1; id < t->nframes; id++) {
    uint32_t i = t->frames[id].hash & (cap - 1);
    while (tab[i])
      i = (i + 1) & (cap - 1);
    tab[i] = id;
  }
  free(t->ftab);
  t->ftab = tab;
  t->ftab_mask = cap - 1;
  return 0;
}

LJP_API uint32_t ljp_tree_intern_line(ljp_tree *t, const char *name,
                                      size_t len, ljp_class cls,
                                      uint64_t line)
{
  if (!t || (!name && len) || len >= UINT32_MAX)
    return 0;
  if (!name)
    name = "";
  uint32_t hash = (uint32_t)hash_frame(name, len, (unsigned)cls, line);
  uint32_t slot;
  uint32_t id = frame_lookup(t, name, len, cls, line, hash, &slot);
  if (id)
    return id;
  if (t->nframes == UINT32_MAX - 1)
    return 0;
  /* Keep the load factor at or below 1/2 so probe runs stay short. */
  if ((uint64_t)t->nframes * 2 > t->ftab_mask) {
    if (frame_table_grow(t) != 0)
      return 0;
    frame_lookup(t, name, len, cls, line, hash, &slot);
  }
  if (t->nframes == t->frames_cap) {
    uint32_t cap = t->frames_cap * 2;
    tree_frame *fr = realloc(t->frames, (size_t)cap * sizeof *fr);
    if (!fr)
      return 0;
    t->frames = fr;
    t->frames_cap = cap;
  }
  const char *copy = ljp__tree_arena_copy(t, name, len);
  if (!copy)
    return 0;
  id = t->nframes++;
  t->frames[id].name = copy;
  t->frames[id].len = (uint32_t)len;
  t->frames[id].hash = hash;
  t->frames[id].cls = cls;
  t->frames[id].line = line;
  t->ftab[slot] = id;
  return id;
}

LJP_API uint32_t ljp_tree_intern(ljp_tree *t, const char *name, size_t len,
                                 ljp_class cls)
{
  return ljp_tree_intern_line(t, name, len, cls, 0);
}

LJP_API uint32_t ljp_tree_find_frame(const ljp_tree *t, const char *name, size_t len,
                             ljp_class cls)
{
  if (!t || (!name && len) || len >= UINT32_MAX)
    return 0;
  if (!name)
    name = "";
  uint32_t slot;
  /* Frames interned with a line are not found by name alone. */
  return frame_lookup(t, name, len, cls, 0,
                      (uint32_t)hash_frame(name, len, (unsigned)cls, 0),
                      &slot);
}

LJP_API const char *ljp_tree_frame_name(const ljp_tree *t, uint32_t frame,
                                size_t *len)
{
  if (!t || frame == 0 || frame >= t->nframes) {
    if (len)
      *len = 0;
    return NULL;
  }
  if (len)
    *len = t->frames[frame].len;
  return t->frames[frame].name;
}

LJP_API ljp_class ljp_tree_frame_class(const ljp_tree *t, uint32_t frame)
{
  if (!t || frame == 0 || frame >= t->nframes)
    return LJP_CLASS_OTHER;
  return t->frames[frame].cls;
}

LJP_API uint32_t ljp_tree_frame_count(const ljp_tree *t)
{
  return t ? t->nframes - 1 : 0;
}

/* ------------------------------------------------------------------------ */
/* Nodes                                                                    */
/* ------------------------------------------------------------------------ */

static node_slot *node_probe(const ljp_tree *t, uint32_t parent,
                             uint32_t frame)
{
  uint32_t i = (uint32_t)hash_pair(parent, frame) & t->ntab_mask;
  for (;;) {
    node_slot *s = &t->ntab[i];
    if (s->node == 0 || (s->parent == parent && s->frame == frame))
      return s;
    i = (i + 1) & t->ntab_mask;
  }
}

static int node_table_grow(ljp_tree *t)
{
  uint32_t cap = (t->ntab_mask + 1) * 2;
  node_slot *tab = calloc(cap, sizeof *tab);
  if (!tab)
    return -1;
  for (uint32_t i = 0; i <= t->ntab_mask; i++) {
    node_slot s = t->ntab[i];
    if (!s.node)
      continue;
    uint32_t j = (uint32_t)hash_pair(s.parent, s.frame) & (cap - 1);
    while (tab[j].node)
      j = (j + 1) & (cap - 1);
    tab[j] = s;
  }
  free(t->ntab);
  t->ntab = tab;
  t->ntab_mask = cap - 1;
  return 0;
}

static uint32_t child_lookup(const ljp_tree *t, uint32_t parent,
                             uint32_t frame)
{
  if (t->nodes[parent].nchildren <= SMALL_FANOUT) {
    for (uint32_t c = t->nodes[parent].first_child; c;
         c = t->nodes[c].next_sibling)
      if (t->nodes[c].frame == frame)
        return c;
    return 0;
  }
  return node_probe(t, parent, frame)->node;
}

static int hash_child(ljp_tree *t, uint32_t parent, uint32_t frame,
                      uint32_t node)
{
  if ((uint64_t)(t->nhashed + 1) * 2 > t->ntab_mask &&
      node_table_grow(t) != 0)
    return -1;
  node_slot *s = node_probe(t, parent, frame);
  s->parent = parent;
  s->frame = frame;
  s->node = node;
  t->nhashed++;
  return 0;
}

/* The child (parent, frame), created with zero weights when missing;
 * UINT32_MAX when out of memory. */
static uint32_t node_child(ljp_tree *t, uint32_t parent, uint32_t frame)
{
  uint32_t found = child_lookup(t, parent, frame);
  if (found)
    return found;
  if (t->nnodes >= UINT32_MAX - 1)
    return UINT32_MAX;
  if (t->nnodes == t->nodes_cap) {
    uint32_t cap = t->nodes_cap > UINT32_MAX / 2 ? UINT32_MAX : t->nodes_cap * 2;
    tree_node *n = realloc(t->nodes, (size_t)cap * sizeof *n);
    if (!n)
      return UINT32_MAX;
    t->nodes = n;
    t->nodes_cap = cap;
  }
  /* Make room in the hash table first, so failing leaves no trace. */
  uint32_t after = t->nodes[parent].nchildren + 1;
  if (after > SMALL_FANOUT) {
    uint32_t need = t->nhashed + (after == SMALL_FANOUT + 1 ? after : 1);
    while ((uint64_t)need * 2 > t->ntab_mask)
      if (node_table_grow(t) != 0)
        return UINT32_MAX;
  }
  uint32_t id = t->nnodes++;
  tree_node *n = &t->nodes[id];
  n->parent = parent;
  n->frame = frame;
  n->depth = t->nodes[parent].depth + 1;
  n->first_child = 0;
  n->next_sibling = t->nodes[parent].first_child;
  n->nchildren = 0;
  n->self = 0;
  n->total = 0;
  t->nodes[parent].first_child = id;
  t->nodes[parent].nchildren = after;
  if (after == SMALL_FANOUT + 1) {
    /* The parent outgrew its list: hash all its children from now on. */
    for (uint32_t c = t->nodes[parent].first_child; c;
         c = t->nodes[c].next_sibling)
      hash_child(t, parent, t->nodes[c].frame, c);
  } else if (after > SMALL_FANOUT) {
    hash_child(t, parent, frame, id);
  }
  return id;
}

LJP_API uint32_t ljp_tree_add(ljp_tree *t, const uint32_t *frames, size_t n,
                              int64_t weight)
{
  if (!t || (!frames && n))
    return UINT32_MAX;
  if (n > t->last_cap) {
    size_t cap = t->last_cap ? t->last_cap : 64;
    while (cap < n)
      cap *= 2;
    uint32_t *f = realloc(t->last_frames, cap * sizeof *f);
    if (!f)
      return UINT32_MAX;
    t->last_frames = f;
    uint32_t *p = realloc(t->last_nodes, cap * sizeof *p);
    if (!p)
      return UINT32_MAX;
    t->last_nodes = p;
    t->last_cap = cap;
  }
  /* Find or create the path first, then add weights: running out of
   * memory midway leaves only zero-weight nodes behind. */
  size_t k = 0;
  while (k < n && k < t->last_len && t->last_frames[k] == frames[k])
    k++;
  uint32_t node = k ? t->last_nodes[k - 1] : 0;
  for (size_t i = k; i < n; i++) {
    uint32_t f = frames[i];
    if (f == 0 || f >= t->nframes ||
        (node = node_child(t, node, f)) == UINT32_MAX) {
      t->last_len = i;
      return UINT32_MAX;
    }
    t->last_frames[i] = f;
    t->last_nodes[i] = node;
  }
  t->last_len = n;
  t->nodes[node].self = ljp__add_wrap(t->nodes[node].self, weight);
  t->totals_dirty = 1;
  return node;
}

/* Recomputes every total from the self weights, leaves first. */
void ljp__tree_sum_totals(ljp_tree *t)
{
  for (uint32_t i = 0; i < t->nnodes; i++)
    t->nodes[i].total = t->nodes[i].self;
  for (uint32_t i = t->nnodes; i-- > 1;)
    t->nodes[t->nodes[i].parent].total =
        ljp__add_wrap(t->nodes[t->nodes[i].parent].total, t->nodes[i].total);
  t->totals_dirty = 0;
}

LJP_API uint32_t ljp_tree_add_at(ljp_tree *t, uint32_t node, int64_t weight)
{
  if (!t || node >= t->nnodes)
    return UINT32_MAX;
  t->nodes[node].self = ljp__add_wrap(t->nodes[node].self, weight);
  t->totals_dirty = 1;
  return node;
}

LJP_API uint32_t ljp_tree_find_child(const ljp_tree *t, uint32_t parent,
                             uint32_t frame)
{
  if (!t || parent >= t->nnodes || frame == 0)
    return 0;
  return child_lookup(t, parent, frame);
}

LJP_API uint32_t ljp_tree_node_count(const ljp_tree *t)
{
  return t ? t->nnodes : 0;
}

#define NODE_FIELD(fn, type, field)                                          \
  LJP_API type fn(const ljp_tree *t, uint32_t node)                         \
  {                                                                          \
    if (!t || node >= t->nnodes)                                             \
      return 0;                                                              \
    return t->nodes[node].field;                                             \
  }

NODE_FIELD(ljp_tree_node_parent, uint32_t, parent)
NODE_FIELD(ljp_tree_node_frame, uint32_t, frame)
NODE_FIELD(ljp_tree_node_depth, uint32_t, depth)
NODE_FIELD(ljp_tree_node_self, int64_t, self)
LJP_API int64_t ljp_tree_node_total(const ljp_tree *t, uint32_t node)
{
  if (!t || node >= t->nnodes)
    return 0;
  if (t->totals_dirty) /* logically const: a cache of the self weights */
    ljp__tree_sum_totals((ljp_tree *)t);
  return t->nodes[node].total;
}

/* ------------------------------------------------------------------------ */
/* Sorted children                                                          */
/* ------------------------------------------------------------------------ */

/* Order of frames: name bytes (a prefix first), then class, then line. */
static int frame_cmp(const ljp_tree *t, uint32_t a, uint32_t b)
{
  const tree_frame *fa = &t->frames[a], *fb = &t->frames[b];
  uint32_t n = fa->len < fb->len ? fa->len : fb->len;
  int c = n ? memcmp(fa->name, fb->name, n) : 0;
  if (c)
    return c;
  if (fa->len != fb->len)
    return fa->len < fb->len ? -1 : 1;
  if (fa->cls != fb->cls)
    return fa->cls < fb->cls ? -1 : 1;
  if (fa->line != fb->line)
    return fa->line < fb->line ? -1 : 1;
  return 0;
}

static int node_cmp(const ljp_tree *t, uint32_t a, uint32_t b)
{
  return frame_cmp(t, t->nodes[a].frame, t->nodes[b].frame);
}

/* Max-heap sift-down over h[0..n) by node_cmp. */
static void sift_down(const ljp_tree *t, uint32_t *h, size_t n, size_t i)
{
  for (;;) {
    size_t l = 2 * i + 1, m = i;
    if (l < n && node_cmp(t, h[l], h[m]) > 0)
      m = l;
    if (l + 1 < n && node_cmp(t, h[l + 1], h[m]) > 0)
      m = l + 1;
    if (m == i)
      return;
    uint32_t tmp = h[i];
    h[i] = h[m];
    h[m] = tmp;
    i = m;
  }
}

/* Heapsort: in place, no allocation, O(n log n) on any input.  Siblings
 * never compare equal (distinct frames), so stability does not matter. */
void ljp__tree_sort_nodes(const ljp_tree *t, uint32_t *h, size_t n)
{
  for (size_t i = n / 2; i-- > 0;)
    sift_down(t, h, n, i);
  for (size_t end = n; end > 1; end--) {
    uint32_t tmp = h[0];
    h[0] = h[end - 1];
    h[end - 1] = tmp;
    sift_down(t, h, end - 1, 0);
  }
}

LJP_API size_t ljp_tree_children(const ljp_tree *t, uint32_t node, uint32_t *out,
                         size_t cap)
{
  if (!t || node >= t->nnodes)
    return 0;
  if (!out)
    cap = 0;
  /* The first cap children in order: keep the cap smallest seen so far in
   * a max-heap, then sort the heap. */
  size_t count = 0, k = 0;
  for (uint32_t c = t->nodes[node].first_child; c;
       c = t->nodes[c].next_sibling, count++) {
    if (k < cap) {
      out[k++] = c;
      if (k == cap)
        for (size_t i = k / 2; i-- > 0;)
          sift_down(t, out, k, i);
    } else if (cap && node_cmp(t, c, out[0]) < 0) {
      out[0] = c;
      sift_down(t, out, k, 0);
    }
  }
  ljp__tree_sort_nodes(t, out, k);
  return count;
}

/* ------------------------------------------------------------------------ */
/* Folded output                                                            */
/* ------------------------------------------------------------------------ */

/*
 * Lines must come out in bytewise order of their full text.  A depth-first
 * walk over name-sorted children gives exactly that, because a node's own
 * line ("a b N") sorts before its descendants' ("a b;c N": ' ' < ';') and
 * the subtrees of two siblings whose names differ within their common length
 * occupy disjoint, ordered ranges.  The walk is wrong only between siblings
 * where one name is a prefix of the other ("a" vs "a b", "a" vs "a;x", or
 * equal names of different classes): then lines of both subtrees interleave
 * by bytes that follow the shorter name.  A name's extensions follow it in
 * sorted order (if a is a prefix of c and a < b < c then a is a prefix of
 * b), so such siblings form contiguous runs; each run is rendered into
 * memory and sorted as text, everything else streams.  Memory stays proportional to the
 * output of those runs at most.
 */

typedef struct fold_buf {
  char *p;
  size_t len, cap;
} fold_buf;

static int buf_reserve(fold_buf *b, size_t extra)
{
  if (b->cap - b->len >= extra)
    return 0;
  size_t cap = b->cap ? b->cap : 256;
  while (cap - b->len < extra) {
    if (cap > SIZE_MAX / 2)
      return -1;
    cap *= 2;
  }
  char *p = realloc(b->p, cap);
  if (!p)
    return -1;
  b->p = p;
  b->cap = cap;
  return 0;
}

static int buf_put(fold_buf *b, const char *s, size_t n)
{
  if (buf_reserve(b, n) != 0)
    return -1;
  if (n)
    memcpy(b->p + b->len, s, n);
  b->len += n;
  return 0;
}

/* " N\n" for a weight; returns its length (at most 23). */
static size_t format_count(char *out, int64_t v)
{
  char tmp[24];
  size_t n = 0;
  uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  do {
    tmp[n++] = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  size_t k = 0;
  out[k++] = ' ';
  if (v < 0)
    out[k++] = '-';
  while (n)
    out[k++] = tmp[--n];
  out[k++] = '\n';
  return k;
}

static int keep_line(int64_t self, int64_t min_weight)
{
  if (self == 0)
    return 0;
  uint64_t mag = self < 0 ? (uint64_t)0 - (uint64_t)self : (uint64_t)self;
  return min_weight <= 0 || mag >= (uint64_t)min_weight;
}

typedef struct fold_ctx {
  const ljp_tree *t;
  int64_t min_weight;
  ljp_emit_fn emit;
  void *emit_ctx;
  uint32_t *child_start;   /* CSR: children of n are kids[child_start[n]..] */
  uint32_t *kids;
  fold_buf path;           /* the stack text of the current node */
  size_t *path_len;        /* path length at each depth of the walk */
} fold_ctx;

static uint32_t nkids(const fold_ctx *c, uint32_t n)
{
  return c->child_start[n + 1] - c->child_start[n];
}

/* Whether node a's name is a prefix of (or equal to) node b's. */
static int is_prefix(const ljp_tree *t, uint32_t a, uint32_t b)
{
  const tree_frame *fa = &t->frames[t->nodes[a].frame];
  const tree_frame *fb = &t->frames[t->nodes[b].frame];
  return fa->len <= fb->len &&
         (fa->len == 0 || memcmp(fa->name, fb->name, fa->len) == 0);
}

/* Appends ";name" (or "name" at depth 1) of node n to the path. */
static int path_push(fold_ctx *c, uint32_t n)
{
  const tree_frame *f = &c->t->frames[c->t->nodes[n].frame];
  if (c->t->nodes[n].depth > 1 && buf_put(&c->path, ";", 1) != 0)
    return -1;
  return buf_put(&c->path, f->name, f->len);
}

static ljp_status emit_line(fold_ctx *c, int64_t self)
{
  char num[24];
  size_t k = format_count(num, self);
  size_t base = c->path.len;
  if (buf_put(&c->path, num, k) != 0)
    return LJP_E_NOMEM;
  int stop = c->emit(c->emit_ctx, c->path.p, c->path.len);
  c->path.len = base;
  return stop ? LJP_E_IO : LJP_OK;
}

typedef struct line_ref {
  size_t off, len;
  const char *base;        /* set once the arena stops moving */
} line_ref;

static int line_cmp(const void *pa, const void *pb)
{
  const line_ref *a = pa, *b = pb;
  size_t n = a->len < b->len ? a->len : b->len;
  int r = memcmp(a->base + a->off, b->base + b->off, n);
  if (r)
    return r;
  return a->len < b->len ? -1 : a->len > b->len;
}

/* Renders every line of the subtrees of run[0..nrun) (children of the node
 * whose path is current), sorts them as text and emits them.  stack,
 * stack_idx and plen are free walk space deep enough for the subtrees. */
static ljp_status emit_run(fold_ctx *c, const uint32_t *run, size_t nrun,
                           uint32_t *stack, uint32_t *stack_idx, size_t *plen)
{
  fold_buf text = {0};
  line_ref *lines = NULL;
  size_t nlines = 0, lines_cap = 0;
  ljp_status st = LJP_OK;
  size_t base_len = c->path.len;

  for (size_t r = 0; r < nrun && st == LJP_OK; r++) {
    /* Depth-first over one subtree with an explicit stack. */
    size_t sp = 0;
    stack[sp] = run[r];
    stack_idx[sp] = 0;
    plen[sp] = c->path.len;
    if (path_push(c, run[r]) != 0) {
      st = LJP_E_NOMEM;
      break;
    }
    for (;;) {
      uint32_t n = stack[sp];
      if (stack_idx[sp] == 0) {
        int64_t self = c->t->nodes[n].self;
        if (keep_line(self, c->min_weight)) {
          char num[24];
          size_t k = format_count(num, self);
          if (nlines == lines_cap) {
            size_t cap = lines_cap ? lines_cap * 2 : 64;
            line_ref *l = realloc(lines, cap * sizeof *l);
            if (!l) {
              st = LJP_E_NOMEM;
              break;
            }
            lines = l;
            lines_cap = cap;
          }
          lines[nlines].off = text.len;
          lines[nlines].len = c->path.len + k;
          if (buf_put(&text, c->path.p, c->path.len) != 0 ||
              buf_put(&text, num, k) != 0) {
            st = LJP_E_NOMEM;
            break;
          }
          nlines++;
        }
      }
      if (stack_idx[sp] < nkids(c, n)) {
        uint32_t child = c->kids[c->child_start[n] + stack_idx[sp]++];
        sp++;
        stack[sp] = child;
        stack_idx[sp] = 0;
        plen[sp] = c->path.len;
        if (path_push(c, child) != 0) {
          st = LJP_E_NOMEM;
          break;
        }
        continue;
      }
      c->path.len = plen[sp];
      if (sp == 0)
        break;
      sp--;
    }
    c->path.len = base_len;
  }
  c->path.len = base_len;

  if (st == LJP_OK && nlines) {
    for (size_t i = 0; i < nlines; i++)
      lines[i].base = text.p;
    qsort(lines, nlines, sizeof *lines, line_cmp);
    for (size_t i = 0; i < nlines && st == LJP_OK; i++)
      if (c->emit(c->emit_ctx, text.p + lines[i].off, lines[i].len))
        st = LJP_E_IO;
  }
  free(lines);
  free(text.p);
  return st;
}

LJP_API ljp_status ljp_tree_write_folded(const ljp_tree *t, int64_t min_weight,
                                 ljp_emit_fn emit, void *ctx)
{
  if (!t || !emit)
    return LJP_E_ARG;
  uint32_t nn = t->nnodes;
  uint32_t maxdepth = 0;
  for (uint32_t i = 1; i < nn; i++)
    if (t->nodes[i].depth > maxdepth)
      maxdepth = t->nodes[i].depth;

  fold_ctx c = {0};
  c.t = t;
  c.min_weight = min_weight;
  c.emit = emit;
  c.emit_ctx = ctx;
  c.child_start = calloc((size_t)nn + 1, sizeof *c.child_start);
  c.kids = malloc((size_t)nn * sizeof *c.kids);
  c.path_len = malloc(((size_t)maxdepth + 2) * sizeof *c.path_len);
  /* Walk stacks: the outer walk and emit_run's inner walk never overlap in
   * time, so they share these two arrays. */
  uint32_t *stack = malloc(((size_t)maxdepth + 2) * sizeof *stack);
  uint32_t *stack_idx = malloc(((size_t)maxdepth + 2) * sizeof *stack_idx);
  uint32_t *chain = malloc((size_t)nn * sizeof *chain);
  ljp_status st = LJP_OK;
  if (!c.child_start || !c.kids || !c.path_len || !stack || !stack_idx ||
      !chain) {
    st = LJP_E_NOMEM;
    goto out;
  }

  /* Children of every node, sorted, in one array (CSR layout). */
  for (uint32_t i = 1; i < nn; i++)
    c.child_start[t->nodes[i].parent + 1]++;
  for (uint32_t i = 0; i < nn; i++)
    c.child_start[i + 1] += c.child_start[i];
  for (uint32_t i = 0; i < nn; i++) {
    uint32_t k = c.child_start[i];
    for (uint32_t ch = t->nodes[i].first_child; ch; ch = t->nodes[ch].next_sibling)
      c.kids[k++] = ch;
    ljp__tree_sort_nodes(t, c.kids + c.child_start[i], k - c.child_start[i]);
  }

  /* The outer walk: stack[sp] is a node whose children are being visited,
   * stack_idx[sp] the next child index. The root has no line. */
  size_t sp = 0;
  stack[0] = 0;
  stack_idx[0] = 0;
  c.path_len[0] = 0;
  c.path.len = 0;
  while (st == LJP_OK) {
    uint32_t n = stack[sp];
    uint32_t m = nkids(&c, n);
    const uint32_t *kid = c.kids + c.child_start[n];
    uint32_t i = stack_idx[sp];
    if (i < m) {
      /* The run of siblings starting at i: it goes on while the next name
       * has a prefix among the run's names.  Those prefixes form a chain
       * (each a prefix of the next); names that are no prefix of the next
       * sibling can be no prefix of any later one, so they leave the chain. */
      uint32_t j = i, depth = 0;
      chain[depth++] = kid[i];
      while (j + 1 < m) {
        while (depth && !is_prefix(t, chain[depth - 1], kid[j + 1]))
          depth--;
        if (!depth)
          break;
        chain[depth++] = kid[++j];
      }
      stack_idx[sp] = j + 1;
      if (j > i) {
        /* The run's walk uses the stack entries above ours. */
        st = emit_run(&c, kid + i, j - i + 1, stack + sp + 1,
                      stack_idx + sp + 1, c.path_len + sp + 1);
        continue;
      }
      uint32_t child = kid[i];
      size_t before = c.path.len;
      if (path_push(&c, child) != 0) {
        st = LJP_E_NOMEM;
        break;
      }
      sp++;
      stack[sp] = child;
      stack_idx[sp] = 0;
      c.path_len[sp] = before;
      if (keep_line(t->nodes[child].self, min_weight))
        st = emit_line(&c, t->nodes[child].self);
      continue;
    }
    if (sp == 0)
      break;
    c.path.len = c.path_len[sp];
    sp--;
  }

out:
  free(c.child_start);
  free(c.kids);
  free(c.path_len);
  free(c.path.p);
  free(stack);
  free(stack_idx);
  free(chain);
  return st;
}
