/*
 * tree_merge.c — one call tree added into another.
 *
 * Files folded on several threads give several trees.  Merged in file
 * order, per-file trees give the tree serial folding would have built, ids
 * and all, which matters to outputs that number functions and locations by
 * frame id or list stacks in node order.  (The tools' --jobs merge one tree
 * per worker and write outputs ordered by name, which need only the same
 * stacks and weights.)  Serial folding of a second file appends the
 * frames and nodes new to the tree in the order that file first meets
 * them, which is the order of their ids in the file's own tree.  So the
 * merge walks src's frames, then src's nodes, by id: each one new to dst
 * gets the next id there, as it would have.
 */
#include "tree_impl.h"

#include <stdlib.h>

LJP_API ljp_status ljp_tree_merge(ljp_tree *dst, const ljp_tree *src)
{
  if (!dst || !src || dst == src)
    return LJP_E_ARG;
  /* src id -> dst id, frames then nodes, in one block: the only memory
   * the merge itself needs, linear in src. */
  size_t nf = src->nframes, nn = src->nnodes;
  uint32_t *map = malloc((nf + nn) * sizeof *map);
  if (!map)
    return LJP_E_NOMEM;
  uint32_t *fmap = map, *nmap = map + nf;
  ljp_status st = LJP_OK;

  /* Every frame first, even one no node uses: the folder interns before
   * it adds, and such a frame still takes an id in the serial tree. */
  fmap[0] = 0;
  for (uint32_t f = 1; f < nf && st == LJP_OK; f++) {
    const tree_frame *fr = &src->frames[f];
    uint32_t known = dst->nframes;
    uint32_t id = ljp_tree_intern_line(dst, fr->name, fr->len, fr->cls,
                                       fr->line);
    if (id == 0) {
      st = LJP_E_NOMEM;
      break;
    }
    fmap[f] = id;
    /* The folder gives a frame attributes only when it interns it first:
     * a frame dst already had keeps its own.  A src frame past info_cap
     * has none, and copying zeros would only make dst allocate. */
    if (id >= known && f < src->info_cap) {
      ljp_frame_info fi;
      st = ljp_tree_frame_info(src, f, &fi);
      if (st == LJP_OK)
        st = ljp_tree_set_frame_info(dst, id, &fi);
    }
  }

  /* Then the nodes: a parent's id is below its children's, so its mapping
   * is known when they come.  Nodes of zero self weight are created too
   * (serial folding makes them: samples of weight 0, live bytes freed to
   * nothing), and the root's own weight goes to dst's root. */
  if (st == LJP_OK) {
    nmap[0] = 0;
    if (ljp_tree_add_at(dst, 0, ljp__node_self(src, 0)) == UINT32_MAX)
      st = LJP_E_NOMEM;
  }
  for (uint32_t n = 1; n < nn && st == LJP_OK; n++) {
    const tree_node *sn = &src->nodes[n];
    uint32_t frame = fmap[sn->frame];
    uint32_t id = ljp_tree_add_below(dst, nmap[sn->parent], &frame, 1,
                                     ljp__node_self(src, n), NULL);
    if (id == UINT32_MAX)
      st = LJP_E_NOMEM;
    else
      nmap[n] = id;
  }
  free(map);
  return st;
}
