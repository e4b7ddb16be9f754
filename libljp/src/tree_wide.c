/*
 * tree_wide.c — the weights that do not fit a node's 32-bit fields.
 *
 * A node keeps its self weight and total in 32 bits each (tree_impl.h);
 * the rare wider value (byte counts of a hot allocation site, totals near
 * the root of a long profile) lives here, keyed by node.  Linear probing
 * at a load of at most 3/4; entries are never removed one by one, so no
 * tombstones.
 */
#include "hash.h"
#include "tree_impl.h"

#include <stdlib.h>
#include <string.h>

static uint32_t wide_hash(uint32_t key)
{
  return (uint32_t)ljp_hash64(key);
}

static wide_slot *wide_find(const wide_tab *w, uint32_t key)
{
  uint32_t i = wide_hash(key) & w->mask;
  while (w->s[i].key && w->s[i].key != key)
    i = (i + 1) & w->mask;
  return &w->s[i];
}

int64_t ljp__wide_get(const wide_tab *w, uint32_t node)
{
  if (!w->s)
    return 0;
  return wide_find(w, node + 1)->v;
}

static int wide_grow(wide_tab *w)
{
  uint32_t cap = w->s ? (w->mask + 1) * 2 : 16;
  wide_slot *s = calloc(cap, sizeof *s);
  if (!s)
    return -1;
  wide_tab nw = {s, cap - 1, w->n};
  for (uint32_t i = 0; w->s && i <= w->mask; i++)
    if (w->s[i].key)
      *wide_find(&nw, w->s[i].key) = w->s[i];
  free(w->s);
  *w = nw;
  return 0;
}

int ljp__wide_set(wide_tab *w, uint32_t node, int64_t v)
{
  uint32_t key = node + 1;
  if (w->s) {
    wide_slot *e = wide_find(w, key);
    if (e->key) {
      e->v = v;
      return 0;
    }
  }
  if ((!w->s || (uint64_t)(w->n + 1) * 4 > (uint64_t)(w->mask + 1) * 3) &&
      wide_grow(w) != 0)
    return -1;
  wide_slot *e = wide_find(w, key);
  e->key = key;
  e->v = v;
  w->n++;
  return 0;
}

void ljp__wide_clear(wide_tab *w)
{
  if (w->s)
    memset(w->s, 0, ((size_t)w->mask + 1) * sizeof *w->s);
  w->n = 0;
}

void ljp__wide_free(wide_tab *w)
{
  free(w->s);
  memset(w, 0, sizeof *w);
}

int64_t ljp__tree_subtree_total(const ljp_tree *t, uint32_t node)
{
  /* Preorder along the sibling lists and parent links: no stack. */
  int64_t sum = ljp__node_self(t, node);
  uint32_t u = ljp__node_first_child(&t->nodes[node]);
  while (u) {
    sum = ljp__add_wrap(sum, ljp__node_self(t, u));
    uint32_t c = ljp__node_first_child(&t->nodes[u]);
    if (c) {
      u = c;
      continue;
    }
    while (u != node && !t->nodes[u].next_sibling)
      u = t->nodes[u].parent;
    u = u == node ? 0 : t->nodes[u].next_sibling;
  }
  return sum;
}
