/*
 * tree_lookup.h — read-only lookups in an ljp_tree that ljp.h does not (yet)
 * offer.  Differential flame graphs walk one tree and need the matching node
 * of another without creating it; ljp_tree_add() would create it.
 *
 * Private to the toolkit: the CLIs link libljp statically and may use these.
 */
#ifndef LJP_TREE_LOOKUP_H
#define LJP_TREE_LOOKUP_H

#include "ljp.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The frame id of (name, cls), or 0 when it was never interned. */
uint32_t ljp_tree_find_frame(const ljp_tree *t, const char *name, size_t len,
                             ljp_class cls);

/* The child of parent whose frame is frame, or 0 when there is none (node 0
 * is the root and never a child). */
uint32_t ljp_tree_find_child(const ljp_tree *t, uint32_t parent,
                             uint32_t frame);

#ifdef __cplusplus
}
#endif

#endif /* LJP_TREE_LOOKUP_H */
