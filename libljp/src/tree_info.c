/*
 * tree_info.c — frame attributes: what a frame is beyond its name.
 *
 * The attributes sit in an array beside the frames, indexed by frame id and
 * grown only when a frame gets some, so trees built from folded text carry
 * none.  Their strings are interned: a chunk name is shared by every
 * function of the chunk and may be a whole source text, so each distinct
 * string is stored once in the tree's arena.
 */
#include "hash.h"
#include "tree_impl.h"

#include <stdlib.h>
#include <string.h>

void ljp__tree_info_free(ljp_tree *t)
{
  free(t->info);
  free(t->strs);
}

static int strs_grow(ljp_tree *t)
{
  size_t cap = t->strs_cap ? t->strs_cap * 2 : 64;
  info_str *tab = calloc(cap, sizeof *tab);
  if (!tab)
    return -1;
  for (size_t i = 0; i < t->strs_cap; i++) {
    if (!t->strs[i].s)
      continue;
    size_t j = (size_t)t->strs[i].hash & (cap - 1);
    while (tab[j].s)
      j = (j + 1) & (cap - 1);
    tab[j] = t->strs[i];
  }
  free(t->strs);
  t->strs = tab;
  t->strs_cap = cap;
  return 0;
}

/* The tree's copy of s[0..len); NULL for no string, or on OOM (*oom). */
static const char *str_intern(ljp_tree *t, const char *s, size_t len,
                              int *oom)
{
  if (!s)
    return NULL;
  if ((t->nstrs + 1) * 2 > t->strs_cap && strs_grow(t)) {
    *oom = 1;
    return NULL;
  }
  uint64_t h = ljp__hash_bytes(s, len);
  size_t i = (size_t)h & (t->strs_cap - 1);
  for (; t->strs[i].s; i = (i + 1) & (t->strs_cap - 1)) {
    const info_str *e = &t->strs[i];
    if (e->hash == h && e->len == len && memcmp(e->s, s, len) == 0)
      return e->s;
  }
  char *copy = ljp__tree_arena_copy(t, s, len);
  if (!copy) {
    *oom = 1;
    return NULL;
  }
  t->strs[i].s = copy;
  t->strs[i].len = len;
  t->strs[i].hash = h;
  t->nstrs++;
  return copy;
}

/* Room for the attributes of frame ids below need (new entries zero). */
static int info_reserve(ljp_tree *t, uint32_t need)
{
  if (need <= t->info_cap)
    return 0;
  uint32_t cap = t->info_cap ? t->info_cap : 64;
  while (cap < need)
    cap = cap > UINT32_MAX / 2 ? need : cap * 2;
  tree_info *ni = realloc(t->info, (size_t)cap * sizeof *ni);
  if (!ni)
    return -1;
  memset(ni + t->info_cap, 0, (size_t)(cap - t->info_cap) * sizeof *ni);
  t->info = ni;
  t->info_cap = cap;
  return 0;
}

LJP_API ljp_status ljp_tree_frame_info(const ljp_tree *t, uint32_t frame,
                                       ljp_frame_info *out)
{
  if (!t || !out || frame == 0 || frame >= t->nframes)
    return LJP_E_ARG;
  memset(out, 0, sizeof *out);
  out->line = t->frames[frame].line;
  if (frame >= t->info_cap)
    return LJP_OK;
  const tree_info *i = &t->info[frame];
  out->kind = i->kind;
  out->chunk = i->chunk;
  out->chunk_len = i->chunk_len;
  out->def_line = i->def_line;
  out->address = i->address;
  out->function = i->function;
  out->object = i->object;
  out->object_len = i->object_len;
  out->build_id = i->build_id;
  out->build_id_len = i->build_id_len;
  out->object_start = i->object_start;
  out->object_size = i->object_size;
  out->object_offset = i->object_offset;
  return LJP_OK;
}

LJP_API ljp_status ljp_tree_set_frame_info(ljp_tree *t, uint32_t frame,
                                           const ljp_frame_info *in)
{
  if (!t || !in || frame == 0 || frame >= t->nframes ||
      (!in->chunk && in->chunk_len) || (!in->object && in->object_len) ||
      (!in->build_id && in->build_id_len))
    return LJP_E_ARG;
  int oom = 0;
  const char *chunk = str_intern(t, in->chunk, in->chunk_len, &oom);
  const char *fn = in->function ? str_intern(t, in->function,
                                             strlen(in->function), &oom)
                                : NULL;
  const char *obj = str_intern(t, in->object, in->object_len, &oom);
  const char *bid = str_intern(t, in->build_id, in->build_id_len, &oom);
  if (oom || info_reserve(t, frame + 1))
    return LJP_E_NOMEM;
  tree_info *i = &t->info[frame];
  i->kind = in->kind;
  i->chunk = chunk;
  i->chunk_len = chunk ? in->chunk_len : 0;
  i->def_line = in->def_line;
  i->address = in->address;
  i->function = fn;
  i->object = obj;
  i->object_len = obj ? in->object_len : 0;
  i->build_id = bid;
  i->build_id_len = bid ? in->build_id_len : 0;
  i->object_start = in->object_start;
  i->object_size = in->object_size;
  i->object_offset = in->object_offset;
  return LJP_OK;
}
