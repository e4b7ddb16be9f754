/*
 * tree_impl.h — the call tree's private layout, shared by the files that
 * implement it: tree.c (frames and the trie), tree_info.c (frame
 * attributes), tree_rollup.c (the function view) and tree_folded.c (folded
 * text).  Nothing outside those files looks inside an ljp_tree.
 */
#ifndef LJP_TREE_IMPL_H
#define LJP_TREE_IMPL_H

#include "ljp.h"

#include <stddef.h>
#include <stdint.h>

typedef struct tree_frame {
  const char *name;        /* in the arena, NUL-terminated */
  uint32_t len;
  uint32_t hash;
  ljp_class cls;
  uint64_t line;           /* part of the key (ljp_tree_intern_line) */
} tree_frame;

/* 24 bytes: a tree has one per distinct stack prefix, so they are most of
 * its memory.  A node's depth is its parent's plus one and is computed when
 * asked; how many children it has matters only up to SMALL_FANOUT (tree.c),
 * which the sibling list tells, and past it a flag bit says so.  Weights
 * are 64-bit, but most fit in 32 bits (sample counts and the sums above
 * them): a node keeps those, and a wider one sits in a side table while
 * the field holds WIDE_MARK. */
typedef struct tree_node {
  uint32_t parent, frame;
  uint32_t first_child;    /* 0 = none (node 0 is no child); | NODE_HASHED */
  uint32_t next_sibling;   /* 0 = none */
  int32_t self, total;     /* or WIDE_MARK: see ljp__node_self/_total */
} tree_node;

#define WIDE_MARK INT32_MIN

/* Node -> 64-bit weight, open addressing. */
typedef struct wide_slot {
  uint32_t key;            /* node + 1; 0 = empty */
  int64_t v;
} wide_slot;

typedef struct wide_tab {
  wide_slot *s;
  uint32_t mask, n;
} wide_tab;

/* In first_child: the node's children are in the (parent, frame) hash
 * table.  Node ids stay below it. */
#define NODE_HASHED 0x80000000u
#define NODE_MAX (NODE_HASHED - 1)

static inline uint32_t ljp__node_first_child(const tree_node *n)
{
  return n->first_child & ~NODE_HASHED;
}

typedef struct node_slot {
  uint32_t parent, frame, node;         /* node 0 = empty slot */
} node_slot;

typedef struct arena_chunk {
  struct arena_chunk *next;
  size_t used, cap;
  char data[];
} arena_chunk;

/* A frame's attributes as stored: ljp_frame_info without the line, which
 * is the frame's key (tree_frame.line). */
typedef struct tree_info {
  const char *chunk;       /* interned in the tree's string table */
  const char *function;
  const char *object;
  const char *build_id;
  size_t chunk_len, object_len, build_id_len;
  uint64_t def_line, address;
  uint64_t object_start, object_size, object_offset;
  ljp_frame_kind kind;
} tree_info;

/* Attribute strings repeat (every function of a chunk names the chunk,
 * and a chunk may be a whole source text): each distinct string is kept
 * once. */
typedef struct info_str {
  const char *s;           /* NULL = empty slot */
  size_t len;
  uint64_t hash;
} info_str;

#define DEPTH_CACHE 256u

struct ljp_tree {
  tree_frame *frames;      /* index 0 unused: ids start at 1 */
  uint32_t nframes;        /* including the unused slot 0 */
  uint32_t frames_cap;
  uint32_t *ftab;          /* frame ids, 0 = empty */
  uint32_t ftab_mask;

  tree_node *nodes;
  uint32_t nnodes;
  uint32_t nodes_cap;
  node_slot *ntab;
  uint32_t ntab_mask;
  uint32_t nhashed;        /* entries in ntab */

  arena_chunk *arena;

  /* The path of the last stack added: frames and the node of each prefix.
   * Consecutive stacks mostly share a prefix (sorted folded text, samples
   * of one loop), and the shared part then costs no probe at all and its
   * nodes are still in cache when their totals grow. */
  uint32_t *last_frames, *last_nodes;
  size_t last_len, last_cap;

  /* Totals are derived: adding a sample touches only its leaf's self
   * weight, and the totals are summed up the tree (children have larger
   * ids than their parents) when next asked for.  A deep stack then costs
   * one write instead of one cache miss per ancestor. */
  int totals_dirty;
  /* The last sum ran out of memory for wide totals: each total is then
   * summed over its subtree when asked (slow, but right). */
  int totals_slow;
  wide_tab wide_self, wide_total;

  /* Depths of nodes asked about lately, at node id % DEPTH_CACHE (all zero
   * is valid: node 0 has depth 0).  Nodes do not store their depth; a
   * walk down the tree asks about each node after its parent, whose depth
   * is then found here after a step or a few. */
  struct { uint32_t node, depth; } depth_cache[DEPTH_CACHE];

  /* Each frame's place in sibling order (tree.c), so that sorting
   * children compares integers, not names: rank[f] for frame ids below
   * rank_n (0 = none ranked yet).  Frames interned since the last build
   * are compared by name.  rank_work estimates the name compares spent
   * while some frames were unranked, which a rebuild waits to be worth;
   * rank_due is when to look again.  A cache like the depths: filled by
   * const calls. */
  uint32_t *rank;
  uint32_t rank_n;
  uint64_t rank_work, rank_due;

  /* Frame attributes, indexed by frame id; frames past info_cap have
   * none.  Allocated on first use: trees from folded text never pay. */
  tree_info *info;
  uint32_t info_cap;
  info_str *strs;
  size_t strs_cap, nstrs;
};

/* A copy of s[0..len) plus a NUL in the tree's arena; NULL on OOM. */
char *ljp__tree_arena_copy(ljp_tree *t, const char *s, size_t len);
/* Brings every node's total up to date with the self weights. */
void ljp__tree_sum_totals(ljp_tree *t);

/* The wide table (tree_wide.c).  get: the value of a node that is in it;
 * set: -1 when out of memory (the table unchanged). */
int64_t ljp__wide_get(const wide_tab *w, uint32_t node);
int ljp__wide_set(wide_tab *w, uint32_t node, int64_t v);
void ljp__wide_clear(wide_tab *w);
void ljp__wide_free(wide_tab *w);
/* A node's total summed over its subtree, for when totals_slow is set. */
int64_t ljp__tree_subtree_total(const ljp_tree *t, uint32_t node);
/* Sorts nodes h[0..n) as ljp_tree_children orders siblings. */
void ljp__tree_sort_nodes(const ljp_tree *t, uint32_t *h, size_t n);
void ljp__tree_info_free(ljp_tree *t);

/* Weights wrap around instead of overflowing (overflow would be undefined
 * behaviour; wrapping keeps sums of mixed-sign weights exact). */
static inline int64_t ljp__add_wrap(int64_t a, int64_t b)
{
  return (int64_t)((uint64_t)a + (uint64_t)b);
}

static inline int ljp__fits32(int64_t v)
{
  return v > INT32_MIN && v <= INT32_MAX;
}

static inline int64_t ljp__node_self(const ljp_tree *t, uint32_t n)
{
  int32_t v = t->nodes[n].self;
  return v != WIDE_MARK ? v : ljp__wide_get(&t->wide_self, n);
}

/* A self weight once wide stays in the table: no entry goes stale. */
static inline int ljp__node_set_self(ljp_tree *t, uint32_t n, int64_t v)
{
  if (t->nodes[n].self != WIDE_MARK && ljp__fits32(v)) {
    t->nodes[n].self = (int32_t)v;
    return 0;
  }
  if (ljp__wide_set(&t->wide_self, n, v) != 0)
    return -1;
  t->nodes[n].self = WIDE_MARK;
  return 0;
}

/* Totals must be up to date (ljp__tree_sum_totals). */
static inline int64_t ljp__node_total(const ljp_tree *t, uint32_t n)
{
  int32_t v = t->nodes[n].total;
  if (v != WIDE_MARK)
    return v;
  return t->totals_slow ? ljp__tree_subtree_total(t, n)
                        : ljp__wide_get(&t->wide_total, n);
}

#endif
