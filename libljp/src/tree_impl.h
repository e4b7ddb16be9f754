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

/* 32 bytes: a tree has one per distinct stack prefix, so they are most of
 * its memory.  A node's depth is its parent's plus one and is computed when
 * asked; how many children it has matters only up to SMALL_FANOUT (tree.c),
 * which the sibling list tells, and past it a flag bit says so. */
typedef struct tree_node {
  uint32_t parent, frame;
  uint32_t first_child;    /* 0 = none (node 0 is no child); | NODE_HASHED */
  uint32_t next_sibling;   /* 0 = none */
  int64_t self, total;
} tree_node;

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

  /* Depths of nodes asked about lately, at node id % DEPTH_CACHE (all zero
   * is valid: node 0 has depth 0).  Nodes do not store their depth; a
   * walk down the tree asks about each node after its parent, whose depth
   * is then found here after a step or a few. */
  struct { uint32_t node, depth; } depth_cache[DEPTH_CACHE];

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
/* Sorts nodes h[0..n) as ljp_tree_children orders siblings. */
void ljp__tree_sort_nodes(const ljp_tree *t, uint32_t *h, size_t n);
void ljp__tree_info_free(ljp_tree *t);

/* Weights wrap around instead of overflowing (overflow would be undefined
 * behaviour; wrapping keeps sums of mixed-sign weights exact). */
static inline int64_t ljp__add_wrap(int64_t a, int64_t b)
{
  return (int64_t)((uint64_t)a + (uint64_t)b);
}

#endif
