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
 * demand, which keeps insertion O(1) however wide a node grows.  Sorting
 * compares frames by rank once ranking them has paid (Frame ranks).
 *
 * Memory grows with unique frames and unique stacks only: adding the same
 * stack again only adds weights.
 *
 * The rest of the tree lives beside this file, on the layout in
 * tree_impl.h: frame attributes (tree_info.c), the function view
 * (tree_rollup.c) and folded text (tree_folded.c).
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

/* ------------------------------------------------------------------------ */
/* Sorted children                                                          */
/* ------------------------------------------------------------------------ */

/* n <= 8 bytes as a big-endian number, zero-padded: comparing two of
 * them is comparing the bytes in memcmp order, padding aside. */
static inline uint64_t load_be(const char *p, uint32_t n)
{
  const unsigned char *u = (const unsigned char *)p;
  if (n >= 8)
    return (uint64_t)u[0] << 56 | (uint64_t)u[1] << 48 |
           (uint64_t)u[2] << 40 | (uint64_t)u[3] << 32 |
           (uint64_t)u[4] << 24 | (uint64_t)u[5] << 16 |
           (uint64_t)u[6] << 8 | u[7];
  uint64_t x = 0;
  for (uint32_t i = 0; i < n; i++)
    x |= (uint64_t)u[i] << (56 - 8 * i);
  return x;
}

/* Order of frames: name bytes (a prefix first), then class, then line. */
static int frame_cmp(const ljp_tree *t, uint32_t a, uint32_t b)
{
  const tree_frame *fa = &t->frames[a], *fb = &t->frames[b];
  uint32_t n = fa->len < fb->len ? fa->len : fb->len;
  for (uint32_t i = 0; i < n; i += 8) {
    uint32_t m = n - i < 8 ? n - i : 8;
    uint64_t x = load_be(fa->name + i, m), y = load_be(fb->name + i, m);
    if (x != y)
      return x < y ? -1 : 1;
  }
  if (fa->len != fb->len)
    return fa->len < fb->len ? -1 : 1;
  if (fa->cls != fb->cls)
    return fa->cls < fb->cls ? -1 : 1;
  if (fa->line != fb->line)
    return fa->line < fb->line ? -1 : 1;
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Frame ranks                                                              */
/* ------------------------------------------------------------------------ */

/* Sorting siblings by frame_cmp costs two indirections and a name compare
 * per compare; a frame's rank (its place among all frames in that order)
 * makes a compare two loads.  Ranks are computed for all frames at once
 * and kept while frames are added: a frame interned later has none and
 * is compared by name, which agrees with the ranks, so the mixed order is
 * still frame_cmp's. */

#define RANK_RUN 16

/* The rank sort's view of the frames: the bytes every name starts with
 * (a program's frames often share a long prefix: "@/srv/app/...") are
 * skipped, and of the rest each item carries the first 16 as numbers
 * (zero-padded), which decide most compares without reading the frame
 * or its name.  Items are 24 bytes, twice per frame, while sorting. */
typedef struct rank_sort {
  const ljp_tree *t;
  uint32_t skip;     /* bytes all names share */
} rank_sort;

typedef struct rank_item {
  uint64_t k0, k1;
  uint32_t len, id;
} rank_item;

/* The length of the prefix all frames' names share. */
static uint32_t common_prefix(const ljp_tree *t)
{
  const tree_frame *f1 = &t->frames[1];
  uint32_t n = f1->len;
  for (uint32_t id = 2; id < t->nframes && n; id++) {
    const tree_frame *f = &t->frames[id];
    uint32_t i = 0, m = f->len < n ? f->len : n;
    while (i < m && f->name[i] == f1->name[i])
      i++;
    n = i;
  }
  return n;
}

static void item_init(const rank_sort *rs, rank_item *it, uint32_t id)
{
  const tree_frame *f = &rs->t->frames[id];
  const char *p = f->name + rs->skip;
  uint32_t n = f->len - rs->skip;
  it->k0 = load_be(p, n);
  it->k1 = n > 8 ? load_be(p + 8, n - 8) : 0;
  it->len = f->len;
  it->id = id;
}

/* frame_cmp on rank items.  Keys that differ decide: the bytes before
 * the first difference are equal, and where one name has ended its zero
 * padding is below any byte but 0, as the name is below a longer one
 * (padding equal to a 0 byte leaves the keys equal, and the full compare
 * follows).  Past the keys the names themselves are compared. */
static inline int item_cmp(const rank_sort *rs, const rank_item *a,
                           const rank_item *b)
{
  if (a->k0 != b->k0)
    return a->k0 < b->k0 ? -1 : 1;
  if (a->k1 != b->k1)
    return a->k1 < b->k1 ? -1 : 1;
  uint32_t n = a->len < b->len ? a->len : b->len, from = rs->skip + 16;
  if (n > from) {
    const tree_frame *fr = rs->t->frames;
    int c = memcmp(fr[a->id].name + from, fr[b->id].name + from, n - from);
    if (c)
      return c;
  }
  if (a->len != b->len)
    return a->len < b->len ? -1 : 1;
  return frame_cmp(rs->t, a->id, b->id); /* same name: class, then line */
}

/* Merges the sorted runs a[lo..mid) and a[mid..hi) into b[lo..hi). */
static void merge_items(const rank_sort *rs, const rank_item *a,
                        rank_item *b, size_t lo, size_t mid, size_t hi)
{
  size_t i = lo, j = mid, k = lo;
  while (i < mid && j < hi)
    b[k++] = item_cmp(rs, &a[j], &a[i]) < 0 ? a[j++] : a[i++];
  while (i < mid)
    b[k++] = a[i++];
  while (j < hi)
    b[k++] = a[j++];
}

/* Sorts it[0..n) by frame order with tmp[0..n) as scratch: a bottom-up
 * merge sort over insertion-sorted runs, so O(n log n) compares on any
 * input and no recursion.  Returns the array the result is in. */
static rank_item *sort_items(const rank_sort *rs, rank_item *it,
                             rank_item *tmp, size_t n)
{
  for (size_t lo = 0; lo < n; lo += RANK_RUN) {
    size_t hi = n - lo > RANK_RUN ? lo + RANK_RUN : n;
    for (size_t i = lo + 1; i < hi; i++) {
      rank_item x = it[i];
      size_t j = i;
      for (; j > lo && item_cmp(rs, &x, &it[j - 1]) < 0; j--)
        it[j] = it[j - 1];
      it[j] = x;
    }
  }
  rank_item *a = it, *b = tmp;
  for (size_t w = RANK_RUN; w < n; w *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * w) {
      size_t mid = n - lo > w ? lo + w : n;
      size_t hi = n - mid > w ? mid + w : n;
      merge_items(rs, a, b, lo, mid, hi);
    }
    rank_item *x = a;
    a = b;
    b = x;
  }
  return a;
}

/* Ranks every frame interned so far.  Out of memory the old ranks stay
 * (they are still right for the frames they cover). */
static void ranks_build(ljp_tree *t)
{
  size_t n = t->nframes - 1; /* frames 1..n */
  uint32_t *rank = malloc((n + 1) * sizeof *rank);
  rank_item *it = malloc(2 * n * sizeof *it + 1);
  if (!rank || !it) {
    free(rank);
    free(it);
    return;
  }
  rank_sort rs = {t, n ? common_prefix(t) : 0};
  for (size_t i = 0; i < n; i++)
    item_init(&rs, &it[i], (uint32_t)i + 1);
  const rank_item *sorted = sort_items(&rs, it, it + n, n);
  rank[0] = 0;
  for (size_t i = 0; i < n; i++)
    rank[sorted[i].id] = (uint32_t)i + 1;
  free(it);
  free(t->rank);
  t->rank = rank;
  t->rank_n = t->nframes;
}

/* About the name compares sorting n nodes costs: n log2 n. */
static uint64_t sort_cost(uint64_t n)
{
  uint64_t lg = 0;
  if (n < 2)
    return 0;
  while ((uint64_t)1 << lg < n)
    lg++;
  return n * lg;
}

/* Rebuilds the ranks when that pays.  A build costs about the compares
 * of sorting all frames; it waits until sorting siblings by name has
 * cost as much since the last one, so a tree walked once (a flame graph,
 * folded output: about as many compares as ranking its frames) pays
 * nothing for it, and one asked again and again spends on builds no
 * more than it spent comparing names before them.  It also waits until
 * a third of the frames are new, so that over a growing tree the builds
 * cost O(F log F) in all, however queries and new frames interleave. */
static void ranks_consider(ljp_tree *t)
{
  uint32_t unranked = t->nframes - t->rank_n;
  uint64_t cost = sort_cost(t->nframes);
  if (unranked < t->rank_n / 2 || t->rank_work < cost) {
    /* Not yet: queries skip this call until the work is due again (the
     * growth rule is asked again after a frame count's worth). */
    t->rank_due = t->rank_work < cost ? cost : t->rank_work + t->nframes;
    return;
  }
  t->rank_work = 0;
  t->rank_due = 0;
  ranks_build(t);
}

/* Inline, the rest not: every query passes here, and the common cases
 * (all frames ranked, or a build not due) must cost a compare or two. */
static inline void ranks_refresh(const ljp_tree *ct)
{
  if (ct->rank_n != ct->nframes && ct->rank_work >= ct->rank_due)
    ranks_consider((ljp_tree *)ct); /* logically const: a cache */
}

static inline void ranks_note_work(const ljp_tree *ct, size_t n)
{
  ljp_tree *t = (ljp_tree *)ct; /* logically const: a cache */
  if (t->rank_n != t->nframes)
    t->rank_work += sort_cost(n);
}

/* ------------------------------------------------------------------------ */
/* Sorting siblings                                                         */
/* ------------------------------------------------------------------------ */

/* Whether node a comes before node b: by rank when both frames have one,
 * else by frame_cmp. */
static inline int node_before(const ljp_tree *t, uint32_t a, uint32_t b)
{
  uint32_t fa = t->nodes[a].frame, fb = t->nodes[b].frame;
  if (fa < t->rank_n && fb < t->rank_n)
    return t->rank[fa] < t->rank[fb];
  return frame_cmp(t, fa, fb) < 0;
}

/* Max-heap sift-down over h[0..n) by node_before. */
static void sift_down(const ljp_tree *t, uint32_t *h, size_t n, size_t i)
{
  for (;;) {
    size_t l = 2 * i + 1, m = i;
    if (l < n && node_before(t, h[m], h[l]))
      m = l;
    if (l + 1 < n && node_before(t, h[m], h[l + 1]))
      m = l + 1;
    if (m == i)
      return;
    uint32_t tmp = h[i];
    h[i] = h[m];
    h[m] = tmp;
    i = m;
  }
}

static void heapify(const ljp_tree *t, uint32_t *h, size_t n)
{
  for (size_t i = n / 2; i-- > 0;)
    sift_down(t, h, n, i);
}

/* Most nodes have a few children: below this many an insertion sort
 * beats the heap. */
#define SMALL_SORT 16

/* Insertion sort of a few nodes whose frames are all ranked, on keys
 * (rank, node) that hold all a compare needs; -1 (h untouched) when a
 * frame has no rank. */
static int sort_small_ranked(const ljp_tree *t, uint32_t *h, size_t n)
{
  uint64_t key[SMALL_SORT];
  for (size_t i = 0; i < n; i++) {
    uint32_t f = t->nodes[h[i]].frame;
    if (f >= t->rank_n)
      return -1;
    uint64_t x = (uint64_t)t->rank[f] << 32 | h[i];
    size_t j = i;
    for (; j > 0 && x < key[j - 1]; j--)
      key[j] = key[j - 1];
    key[j] = x;
  }
  for (size_t i = 0; i < n; i++)
    h[i] = (uint32_t)key[i];
  return 0;
}

/* Siblings never compare equal (distinct frames), so stability does not
 * matter.  A few: insertion sort; more: heapsort, in place, no
 * allocation, O(n log n) on any input. */
static void sort_nodes(const ljp_tree *t, uint32_t *h, size_t n)
{
  if (n <= SMALL_SORT) {
    if (n < 2 || sort_small_ranked(t, h, n) == 0)
      return;
    for (size_t i = 1; i < n; i++) {
      uint32_t x = h[i];
      size_t j = i;
      for (; j > 0 && node_before(t, x, h[j - 1]); j--)
        h[j] = h[j - 1];
      h[j] = x;
    }
    return;
  }
  heapify(t, h, n);
  for (size_t end = n; end > 1; end--) {
    uint32_t tmp = h[0];
    h[0] = h[end - 1];
    h[end - 1] = tmp;
    sift_down(t, h, end - 1, 0);
  }
}

void ljp__tree_sort_nodes(const ljp_tree *t, uint32_t *h, size_t n)
{
  ranks_refresh(t);
  sort_nodes(t, h, n);
  ranks_note_work(t, n);
}

LJP_API size_t ljp_tree_children(const ljp_tree *t, uint32_t node, uint32_t *out,
                         size_t cap)
{
  if (!t || node >= t->nnodes)
    return 0;
  if (!out)
    cap = 0;
  ranks_refresh(t);
  /* The first cap children in order: once more than cap are seen, keep
   * the cap smallest in a max-heap; then sort what was kept. */
  size_t count = 0, k = 0;
  int heap = 0;
  for (uint32_t c = ljp__node_first_child(&t->nodes[node]); c;
       c = t->nodes[c].next_sibling, count++) {
    if (k < cap) {
      out[k++] = c;
    } else if (cap) {
      if (!heap) {
        heapify(t, out, k);
        heap = 1;
      }
      if (node_before(t, c, out[0])) {
        out[0] = c;
        sift_down(t, out, k, 0);
      }
    }
  }
  sort_nodes(t, out, k);
  ranks_note_work(t, count);
  return count;
}
