/*
 * tree.c — the call tree: interned frames and a trie of stacks.
 *
 * Frames are (name bytes, class, line) keys interned into dense ids through
 * an open-addressing hash table; names live in an arena of large chunks so the
 * pointers handed out stay valid until the tree is freed.
 *
 * Nodes form a trie keyed by (parent node, frame id).  The key -> node map is
 * a second open-addressing table whose slots carry the whole key, so adding
 * a stack costs one probe sequence (usually one cache line) per frame and
 * never touches the node array while searching.  Each node also keeps an
 * unsorted sibling list (newest child first): listing children sorts on
 * demand (tree_order.c), which keeps insertion O(1) however wide a node
 * grows.
 *
 * Memory grows with unique frames and unique stacks only: adding the same
 * stack again only adds weights.
 *
 * The rest of the tree lives beside this file, on the layout in
 * tree_impl.h: the order of siblings (tree_order.c), frame attributes
 * (tree_info.c), the function view (tree_rollup.c) and folded text
 * (tree_folded.c).
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
  uint64_t h = ljp_hash64(ljp__hash_bytes(s, n) ^ cls);
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
  ljp__wide_free(&t->wide_self);
  ljp__wide_free(&t->wide_total);
  ljp__tree_info_free(t);
  free(t->rank);
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

/* The child (parent, frame), 0 when missing.  *count gets the number of
 * children of a parent that is not hashed (at most SMALL_FANOUT). */
static uint32_t child_find(const ljp_tree *t, uint32_t parent,
                           uint32_t frame, uint32_t *count)
{
  uint32_t fc = t->nodes[parent].first_child;
  if (fc & NODE_HASHED)
    return node_probe(t, parent, frame)->node;
  uint32_t k = 0;
  for (uint32_t c = fc; c; c = t->nodes[c].next_sibling, k++)
    if (t->nodes[c].frame == frame)
      return c;
  *count = k;
  return 0;
}

static uint32_t child_lookup(const ljp_tree *t, uint32_t parent,
                             uint32_t frame)
{
  uint32_t count;
  return child_find(t, parent, frame, &count);
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
  uint32_t count = SMALL_FANOUT + 1;   /* stays so for a hashed parent */
  uint32_t found = child_find(t, parent, frame, &count);
  if (found)
    return found;
  if (t->nnodes > NODE_MAX)
    return UINT32_MAX;
  if (t->nnodes == t->nodes_cap) {
    uint32_t cap = t->nodes_cap > NODE_MAX / 2 ? NODE_MAX + 1 : t->nodes_cap * 2;
    tree_node *n = realloc(t->nodes, (size_t)cap * sizeof *n);
    if (!n)
      return UINT32_MAX;
    t->nodes = n;
    t->nodes_cap = cap;
  }
  /* Make room in the hash table first, so failing leaves no trace. */
  uint32_t after = count + 1;
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
  uint32_t hashed = t->nodes[parent].first_child & NODE_HASHED;
  n->first_child = 0;
  n->next_sibling = t->nodes[parent].first_child & ~NODE_HASHED;
  n->self = 0;
  n->total = 0;
  t->nodes[parent].first_child = id | hashed;
  if (after == SMALL_FANOUT + 1) {
    /* The parent outgrew its list: hash all its children from now on. */
    t->nodes[parent].first_child = id | NODE_HASHED;
    for (uint32_t c = id; c; c = t->nodes[c].next_sibling)
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
  if (ljp__node_set_self(t, node,
                         ljp__add_wrap(ljp__node_self(t, node), weight)) != 0)
    return UINT32_MAX;
  t->totals_dirty = 1;
  return node;
}

/* The walk of ljp_tree_add without its last-path memo: the caller knows
 * the node its stack shares with the previous one (folded text keeps the
 * node of each depth), so only the new part costs lookups.  The memo stays
 * right: nodes are never removed, so the root paths it remembers still end
 * at the nodes it has. */
LJP_API uint32_t ljp_tree_add_below(ljp_tree *t, uint32_t node,
                                    const uint32_t *frames, size_t n,
                                    int64_t weight, uint32_t *path_out)
{
  if (!t || (!frames && n) || node >= t->nnodes)
    return UINT32_MAX;
  /* The path first, then the weight, as in ljp_tree_add. */
  for (size_t i = 0; i < n; i++) {
    uint32_t f = frames[i];
    if (f == 0 || f >= t->nframes ||
        (node = node_child(t, node, f)) == UINT32_MAX)
      return UINT32_MAX;
    if (path_out)
      path_out[i] = node;
  }
  if (ljp__node_set_self(t, node,
                         ljp__add_wrap(ljp__node_self(t, node), weight)) != 0)
    return UINT32_MAX;
  t->totals_dirty = 1;
  return node;
}

static int set_total(ljp_tree *t, uint32_t n, int64_t v)
{
  if (ljp__fits32(v)) {
    t->nodes[n].total = (int32_t)v;
    return 0;
  }
  if (ljp__wide_set(&t->wide_total, n, v) != 0)
    return -1;
  t->nodes[n].total = WIDE_MARK;
  return 0;
}

/* Recomputes every total from the self weights, leaves first.  The wide
 * totals are all rewritten, so their table starts empty. */
void ljp__tree_sum_totals(ljp_tree *t)
{
  tree_node *nodes = t->nodes;
  ljp__wide_clear(&t->wide_total);
  t->totals_slow = 0;
  t->totals_dirty = 0;
  int ok = 1;
  for (uint32_t i = 0; i < t->nnodes && ok; i++) {
    if (nodes[i].self != WIDE_MARK)
      nodes[i].total = nodes[i].self;
    else
      ok = set_total(t, i, ljp__node_self(t, i)) == 0;
  }
  for (uint32_t i = t->nnodes; i-- > 1 && ok;) {
    uint32_t p = nodes[i].parent;
    int32_t a = nodes[p].total, b = nodes[i].total;
    /* Both narrow: the sum fits 64 bits, usually 32. */
    int64_t sum = a != WIDE_MARK && b != WIDE_MARK
                      ? (int64_t)a + b
                      : ljp__add_wrap(ljp__node_total(t, p),
                                      ljp__node_total(t, i));
    if (ljp__fits32(sum))
      nodes[p].total = (int32_t)sum;
    else
      ok = set_total(t, p, sum) == 0;
  }
  if (!ok) {
    /* Out of memory for the wide table: every total is summed when
     * asked instead. */
    for (uint32_t i = 0; i < t->nnodes; i++)
      nodes[i].total = WIDE_MARK;
    t->totals_slow = 1;
  }
}

LJP_API uint32_t ljp_tree_add_at(ljp_tree *t, uint32_t node, int64_t weight)
{
  if (!t || node >= t->nnodes)
    return UINT32_MAX;
  if (ljp__node_set_self(t, node,
                         ljp__add_wrap(ljp__node_self(t, node), weight)) != 0)
    return UINT32_MAX;
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

LJP_API int64_t ljp_tree_node_self(const ljp_tree *t, uint32_t node)
{
  if (!t || node >= t->nnodes)
    return 0;
  return ljp__node_self(t, node);
}

/* Not stored (a node is 4 bytes smaller for it): the walk up ends at the
 * root or at an ancestor whose depth was asked about lately.  The nodes
 * walked are remembered too, so asking about every node of a depth-first
 * walk costs a step or two per node. */
LJP_API uint32_t ljp_tree_node_depth(const ljp_tree *t, uint32_t node)
{
  if (!t || node >= t->nnodes)
    return 0;
  ljp_tree *m = (ljp_tree *)t; /* logically const: a cache */
  uint32_t u = node, steps = 0, d;
  for (;;) {
    if (u == 0) {
      d = 0;
      break;
    }
    if (m->depth_cache[u % DEPTH_CACHE].node == u) {
      d = m->depth_cache[u % DEPTH_CACHE].depth;
      break;
    }
    u = t->nodes[u].parent;
    steps++;
  }
  d += steps;
  for (uint32_t v = node, dv = d; v != u; v = t->nodes[v].parent, dv--) {
    m->depth_cache[v % DEPTH_CACHE].node = v;
    m->depth_cache[v % DEPTH_CACHE].depth = dv;
  }
  return d;
}

LJP_API int64_t ljp_tree_node_total(const ljp_tree *t, uint32_t node)
{
  if (!t || node >= t->nnodes)
    return 0;
  if (t->totals_dirty) /* logically const: a cache of the self weights */
    ljp__tree_sum_totals((ljp_tree *)t);
  return ljp__node_total(t, node);
}
