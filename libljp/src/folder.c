/*
 * folder.c — events into a call tree.
 *
 * Every frame of every sample needs a name, and names cost a symbol lookup
 * and a format.  The folder caches the tree's frame id per frame identity
 * (kind, resolved symbols, raw value where nothing resolved), so a stack
 * costs one small-hash probe per frame and each distinct frame is named
 * once.  The identity includes the ljp_symbol pointers, which are distinct
 * per definition: a trace number reused after jit.flush() is a new identity
 * and gets its own (correct) name.
 *
 * The folder is where the profile model gets its facts: a frame new to the
 * tree gets the attributes of the stream frame that named it, and every
 * event's result (ljp_folder_add_ex) comes from the path that folded it.
 * Each memo remembers its leaf, so a hit reports exactly what a first
 * sight would.
 */
#include "internal.h"
#include "livemap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct name_key {
  const void *sym, *proto;
  uint64_t value, line, mcode;
  uint32_t kind;
  uint32_t id; /* 0 = empty slot */
} name_key;

/* memprof sites repeat as samples do: the same location names the same
 * frames, so a direct-mapped memo keyed by the location's identity
 * remembers the frame ids and, once a weight went there, the leaf.  A hit
 * is one probe: no lookups, no "line N" formatting, no trie walk.  The
 * identity holds the ljp_symbol pointers, distinct per definition, so a
 * redefined prototype or trace is a new key, as in the name cache.  The
 * symbol epoch is deliberately not part of it: streams redefine traces
 * every few hundred events, and each bump would empty the memo of sites
 * the new trace does not touch. */
#define SITE_SLOTS 4096
typedef struct site_slot {
  const void *sym, *proto;
  uint64_t value, line, mcode;
  uint32_t kind;
  uint32_t ids[3], n;
  uint32_t leaf; /* UINT32_MAX: no weight added here yet */
  uint32_t used;
} site_slot;

/* Where an event's weight went: the leaf node and the weight added. */
typedef struct fold_to {
  uint32_t leaf;
  int64_t weight;
} fold_to;

/* Samples repeat: the same record bytes against the same symbols fold to
 * the same leaf, so a direct-mapped memo of recent records skips merging,
 * naming and the trie walk.  It is bounded (MEMO_SLOTS records), so memory
 * does not grow with the stream.  "The same symbols" is a stamp (see
 * sample_stamp); the frame-id memo needs none. */
#define MEMO_SLOTS 4096
typedef struct memo_stamp {
  uint64_t a, b;
} memo_stamp;
typedef struct memo_slot {
  uint64_t hash;
  memo_stamp st;
  uint8_t *raw;
  size_t len, cap;
  uint32_t leaf;
} memo_slot;

struct ljp_folder {
  ljp_tree *t;
  ljp_fold_options o;
  const ljp_reader *r; /* the reader of the event being added */
  name_key *cache;
  size_t ccap, ccount;
  ljp_frame *frames;
  size_t fcap;
  uint32_t *ids;
  size_t icap;
  char *name;
  size_t ncap;
  uint32_t vm_ids[LJP_VMST__MAX + 1];
  livemap heap; /* block address -> size and node (LIVE weight) */
  site_slot *sites; /* memprof location -> frame ids and leaf */
  memo_slot *memo;  /* record bytes -> leaf */
  struct { uint64_t key; uint32_t leaf; } *tmemo;
  memo_slot *smemo; /* frame-id sequence -> leaf: the same stack from
                       different bytes (other return addresses in the
                       same functions) skips the trie walk too */
};

LJP_API ljp_folder *ljp_folder_new(ljp_tree *t, const ljp_fold_options *opt) {
  if (!t)
    return NULL;
  ljp_folder *f = calloc(1, sizeof(*f));
  if (!f)
    return NULL;
  f->t = t;
  if (opt)
    f->o = *opt;
  else
    f->o.flavor = LJP_FLAVOR_AUTO;
  if (f->o.view == LJP_VIEW_REFERENCE)
    f->o.style = LJP_NAME_REFERENCE;
  return f;
}

LJP_API void ljp_folder_free(ljp_folder *f) {
  if (!f)
    return;
  ljp__livemap_free(&f->heap);
  free(f->sites);
  for (size_t i = 0; i < MEMO_SLOTS; i++) {
    free(f->memo ? f->memo[i].raw : NULL);
    free(f->smemo ? f->smemo[i].raw : NULL);
  }
  free(f->memo);
  free(f->tmemo);
  free(f->smemo);
  free(f->cache);
  free(f->frames);
  free(f->ids);
  free(f->name);
  free(f);
}

static ljp_class frame_class(ljp_frame_kind k) {
  switch (k) {
  case LJP_FRAME_LUA: return LJP_CLASS_LUA;
  case LJP_FRAME_CFUNC: return LJP_CLASS_CFUNC;
  case LJP_FRAME_FFUNC: return LJP_CLASS_FFUNC;
  case LJP_FRAME_HOST: return LJP_CLASS_HOST;
  case LJP_FRAME_TRACE: return LJP_CLASS_TRACE;
  case LJP_FRAME_MARK: return LJP_CLASS_VM;
  default: return LJP_CLASS_VM;
  }
}

static uint64_t key_hash(const name_key *k) {
  uint64_t h = ljp_hash64((uint64_t)(uintptr_t)k->sym ^ k->kind);
  h = ljp_hash64(h ^ (uint64_t)(uintptr_t)k->proto ^ k->value);
  return ljp_hash64(h ^ k->line ^ (k->mcode << 1));
}

static int key_eq(const name_key *a, const name_key *b) {
  return a->sym == b->sym && a->proto == b->proto && a->value == b->value &&
         a->line == b->line && a->mcode == b->mcode && a->kind == b->kind;
}

static int cache_grow(ljp_folder *f) {
  size_t ncap = f->ccap ? f->ccap * 2 : 1024;
  name_key *nc = calloc(ncap, sizeof(*nc));
  if (!nc)
    return -1;
  for (size_t i = 0; i < f->ccap; i++) {
    if (!f->cache[i].id)
      continue;
    size_t j = (size_t)key_hash(&f->cache[i]) & (ncap - 1);
    while (nc[j].id)
      j = (j + 1) & (ncap - 1);
    nc[j] = f->cache[i];
  }
  free(f->cache);
  f->cache = nc;
  f->ccap = ncap;
  return 0;
}

/* The attributes of a stream frame, looked up as ljpdb's symbols always
 * were: a Lua function by its proto, a trace by its start function (the
 * chunk is the proto's), C and host frames by their symbol and, where the
 * stream names objects, the object their address lies in. */
static void frame_info_of(const ljp_folder *f, const ljp_frame *fr,
                          ljp_frame_info *fi) {
  const ljp_symbol *s = fr->sym, *fn = NULL;
  memset(fi, 0, sizeof(*fi));
  fi->kind = fr->kind;
  fi->address = fr->value;
  if (fr->kind == LJP_FRAME_LUA && s) {
    fn = s;
    fi->chunk = s->name;
    fi->chunk_len = s->name_len;
    fi->def_line = s->line;
    fi->address = s->addr;
  } else if (fr->kind == LJP_FRAME_TRACE) {
    fn = fr->proto;
    if (fn) {
      fi->chunk = fn->name;
      fi->chunk_len = fn->name_len;
    }
    fi->def_line = s ? s->line : fr->line;
  } else if (fr->kind == LJP_FRAME_CFUNC || fr->kind == LJP_FRAME_HOST) {
    if (s)
      fi->address = s->addr;
    const ljp_symbol *obj =
        f->r ? ljp_reader_lookup_object(f->r, fr->value) : NULL;
    if (obj) {
      fi->object = obj->name;
      fi->object_len = obj->name_len;
      fi->build_id = obj->build_id;
      fi->build_id_len = obj->build_id ? obj->build_id_len : 0;
      fi->object_start = obj->addr;
      fi->object_size = obj->size;
      fi->object_offset = obj->offset;
    }
  }
  if (fn && fn->name && f->o.sources)
    fi->function =
        ljp_srcnames_lookup(f->o.sources, fn->name, fn->name_len, fn->line);
}

/* The line a frame is keyed by in the tree: its current line when the
 * options ask for lines and the frame has one. */
static uint64_t key_line(const ljp_folder *f, const ljp_frame *fr) {
  if (!f->o.lines)
    return 0;
  return fr->kind == LJP_FRAME_LUA || fr->kind == LJP_FRAME_TRACE ? fr->line
                                                                  : 0;
}

/* Names a formatted string into the tree; a frame new to the tree gets
 * the attributes of the stream frame that named it first. */
static uint32_t intern_text(ljp_folder *f, const ljp_frame *fr) {
  /* asked here, where a name is made, not once per event */
  ljp_flavor flavor = f->o.flavor != LJP_FLAVOR_AUTO ? f->o.flavor
                      : f->r ? ljp_reader_flavor(f->r)
                             : LJP_FLAVOR_TARANTOOL;
  size_t need = ljp_frame_name_src(fr, f->o.style, flavor, f->o.sources,
                                   f->name, f->ncap);
  if (need >= f->ncap) {
    size_t ncap = need + 64;
    char *nn = realloc(f->name, ncap);
    if (!nn)
      return 0;
    f->name = nn;
    f->ncap = ncap;
    ljp_frame_name_src(fr, f->o.style, flavor, f->o.sources, f->name,
                       f->ncap);
  }
  if (need == 0)
    return UINT32_MAX; /* the reference drops nameless frames */
  uint32_t known = ljp_tree_frame_count(f->t);
  uint32_t id = ljp_tree_intern_line(f->t, f->name, need,
                                     frame_class(fr->kind), key_line(f, fr));
  if (id > known) {
    ljp_frame_info fi;
    frame_info_of(f, fr, &fi);
    if (ljp_tree_set_frame_info(f->t, id, &fi) != LJP_OK)
      return 0;
  }
  return id;
}

/* The tree frame id of fr: UINT32_MAX for "no frame", 0 on OOM. */
static uint32_t frame_id(ljp_folder *f, const ljp_frame *fr) {
  name_key k;
  memset(&k, 0, sizeof(k));
  k.kind = (uint32_t)fr->kind;
  k.sym = fr->sym;
  k.proto = fr->proto;
  k.line = fr->line;
  k.mcode = fr->mcode;
  /* Where a symbol resolved, the raw value does not change the name —
   * except Lua protos (the value is the proto) and the reference style's
   * address-0 rule.  The line stays in the key of Lua and trace frames:
   * it may name the frame (ljp_fold_options.lines). */
  if (!fr->sym || fr->kind == LJP_FRAME_FFUNC || fr->value == 0 ||
      fr->kind == LJP_FRAME_TRACE)
    k.value = fr->value;
  if (fr->kind == LJP_FRAME_HOST || fr->kind == LJP_FRAME_CFUNC)
    k.line = 0;
  if ((f->ccount + 1) * 2 > f->ccap && cache_grow(f))
    return 0;
  size_t i = (size_t)key_hash(&k) & (f->ccap - 1);
  while (f->cache[i].id) {
    if (key_eq(&f->cache[i], &k))
      return f->cache[i].id;
    i = (i + 1) & (f->ccap - 1);
  }
  uint32_t id = intern_text(f, fr);
  if (!id)
    return 0;
  k.id = id;
  f->cache[i] = k;
  f->ccount++;
  return id;
}

static uint32_t vm_frame(ljp_folder *f, int vmstate) {
  if (vmstate < 0 || vmstate > LJP_VMST__MAX)
    vmstate = LJP_VMST__MAX;
  if (!f->vm_ids[vmstate]) {
    char buf[32];
    int n = snprintf(buf, sizeof(buf), "VMST_%s", ljp_vmstate_name(vmstate));
    uint32_t known = ljp_tree_frame_count(f->t);
    uint32_t id = ljp_tree_intern(f->t, buf, (size_t)n, LJP_CLASS_VM);
    ljp_frame_info fi;
    memset(&fi, 0, sizeof(fi));
    fi.address = (uint64_t)vmstate;
    if (id > known && ljp_tree_set_frame_info(f->t, id, &fi) != LJP_OK)
      return 0;
    f->vm_ids[vmstate] = id;
  }
  return f->vm_ids[vmstate];
}

static int reserve_ids(ljp_folder *f, size_t n) {
  if (n <= f->icap)
    return 0;
  size_t ncap = n + 64;
  uint32_t *ni = realloc(f->ids, ncap * sizeof(*ni));
  if (!ni)
    return -1;
  f->ids = ni;
  f->icap = ncap;
  return 0;
}

/* Looks key up in a memo; a hit gives its leaf. */
static memo_slot *memo_find(memo_slot *memo, const void *key, size_t len,
                            uint64_t h, memo_stamp st, int *hit) {
  memo_slot *m = &memo[h & (MEMO_SLOTS - 1)];
  *hit = m->raw && m->hash == h && m->st.a == st.a && m->st.b == st.b &&
         m->len == len && memcmp(m->raw, key, len) == 0;
  return m;
}

static void memo_store(memo_slot *m, const void *key, size_t len, uint64_t h,
                       memo_stamp st, uint32_t leaf) {
  if (m->cap < len) {
    uint8_t *nr = realloc(m->raw, len);
    if (!nr)
      return; /* not memoised, nothing else lost */
    m->raw = nr;
    m->cap = len;
  }
  if (len)
    memcpy(m->raw, key, len);
  m->len = len;
  m->hash = h;
  m->st = st;
  m->leaf = leaf;
}

/* Adds one sample at the stack ids[0..n). */
static ljp_status add_stack(ljp_folder *f, const uint32_t *ids, size_t n,
                            uint32_t *leaf) {
  if (!f->smemo && !(f->smemo = calloc(MEMO_SLOTS, sizeof(*f->smemo))))
    return LJP_E_NOMEM;
  size_t len = n * sizeof(*ids);
  uint64_t h = ljp__hash_bytes(ids, len);
  int hit;
  memo_stamp none = {0, 0};
  memo_slot *m = memo_find(f->smemo, ids, len, h, none, &hit);
  if (hit) {
    *leaf = m->leaf;
    return ljp_tree_add_at(f->t, m->leaf, 1) == UINT32_MAX ? LJP_E_NOMEM
                                                           : LJP_OK;
  }
  *leaf = ljp_tree_add(f->t, ids, n, 1);
  if (*leaf == UINT32_MAX)
    return LJP_E_NOMEM;
  memo_store(m, ids, len, h, none, *leaf);
  return LJP_OK;
}

static ljp_status add_sample(ljp_folder *f, const ljp_sample *s,
                             uint32_t *leaf) {
  ljp_stack_options so = {f->o.view, f->o.traces};
  size_t n = ljp_sample_stack_ex(s, &so, f->frames, f->fcap);
  if (n > f->fcap) {
    ljp_frame *nf = realloc(f->frames, (n + 64) * sizeof(*nf));
    if (!nf)
      return LJP_E_NOMEM;
    f->frames = nf;
    f->fcap = n + 64;
    n = ljp_sample_stack_ex(s, &so, f->frames, f->fcap);
  }
  if (reserve_ids(f, n + 2))
    return LJP_E_NOMEM;
  size_t k = 0;
  int ref = f->o.view == LJP_VIEW_REFERENCE;
  if (f->o.vmstate == LJP_VMSTATE_ROOT && !ref)
    f->ids[k++] = vm_frame(f, s->vmstate);
  size_t first = k;
  for (size_t i = 0; i < n; i++) {
    uint32_t id = frame_id(f, &f->frames[i]);
    if (!id)
      return LJP_E_NOMEM;
    if (id != UINT32_MAX)
      f->ids[k++] = id;
  }
  /* A view can leave a sample with no frames (host-only samples in the
   * Lua view, leaf-mode samples in the host view): name it by its VM state
   * rather than lose it. */
  if (!ref && (f->o.vmstate == LJP_VMSTATE_LEAF ||
               (k == first && f->o.vmstate == LJP_VMSTATE_NONE)))
    f->ids[k++] = vm_frame(f, s->vmstate);
  for (size_t i = 0; i < k; i++)
    if (!f->ids[i])
      return LJP_E_NOMEM;
  return add_stack(f, f->ids, k, leaf);
}

/* The bytes of an x1 sample record that decide its stack: all but the
 * header, dt-ns, coro and flags (FORMATS.md §5.5).  The time changes with
 * every sample, so keying the memo on the whole record would never hit.
 * Returns the offset of those bytes, or 0 when the record is not x1. */
static size_t x1_stack_bytes(const ljp_event *ev) {
  if (!ev->u.sample.has_time)
    return 0;
  size_t off = 1;
  for (int i = 0; i < 3; i++) {
    uint64_t v;
    int n = ljp_uleb_decode(ev->raw + off, ev->raw_len - off, &v);
    if (n <= 0)
      return 0;
    off += (size_t)n;
  }
  return off < ev->raw_len ? off : 0;
}

/* What a sample's frames were resolved against.  A trace sample names
 * its trace, so any definition may change it: the symbol epoch.  Other
 * stacks resolve through prototypes and C symbols only, and the reader
 * counts exactly the definitions that change those (the generation of C
 * symbols, the epoch of prototype resolution: what its own record memo
 * is stamped with), so new traces, objects and unused prototypes, which
 * streams define all the time, leave these records memoised. */
static memo_stamp sample_stamp(const ljp_reader *r, const ljp_sample *s) {
  memo_stamp st = {r->syms_epoch, 0};
  if (s->vmstate != LJP_VMST_TRACE) {
    st.a = r->syms_gen;
    st.b = (r->lua_epoch << 1) | 1;
  }
  return st;
}

/* Adds weight 1 at a leaf a memo remembered. */
static ljp_status add_at(ljp_folder *f, uint32_t leaf, uint32_t *out) {
  *out = leaf;
  return ljp_tree_add_at(f->t, leaf, 1) == UINT32_MAX ? LJP_E_NOMEM : LJP_OK;
}

/* Folds a sample through the memos: the stack token (the reader knows the
 * stacks), the record bytes, then (inside add_sample) the frame ids; each
 * remembers the leaf, so every path reports where the weight went. */
static ljp_status add_sample_memo(ljp_folder *f, const ljp_reader *r,
                                  const ljp_event *ev,
                                  uint32_t *leaf) {
  if (!r || !ev->raw || !ev->raw_len)
    return add_sample(f, &ev->u.sample, leaf);
  if (!f->memo && !(f->memo = calloc(MEMO_SLOTS, sizeof(*f->memo))))
    return LJP_E_NOMEM;
  const uint8_t *key = ev->raw;
  size_t klen = ev->raw_len;
  memo_stamp stamp = sample_stamp(r, &ev->u.sample);
  size_t skip = x1_stack_bytes(ev);
  if (skip) {
    /* The header and flags left the key, so the vmstate (which may name
     * a frame) and the flags (an incomplete host stack gets a mark) join
     * the stamp instead (counters of definitions never reach 2^55). */
    key += skip;
    klen -= skip;
    stamp.b = (stamp.b << 8) | ((uint64_t)(ev->u.sample.flags & 0xf) << 4) |
              (uint64_t)(ev->u.sample.vmstate & 0xf);
  }
  uint64_t tok = ljp_reader_stack_token(r);
  size_t ti = 0;
  uint64_t tkey = 0;
  if (tok && ev->u.sample.vmstate != LJP_VMST_TRACE) {
    if (!f->tmemo && !(f->tmemo = calloc(MEMO_SLOTS, sizeof(*f->tmemo))))
      return LJP_E_NOMEM;
    tkey = (tok << 8) | ((uint64_t)(ev->u.sample.flags & 0xf) << 4) |
           (uint64_t)(ev->u.sample.vmstate & 0xf);
    ti = (size_t)(ljp_hash64(tkey) & (MEMO_SLOTS - 1));
    /* key 0 marks an empty slot: such a token is simply not memoised */
    if (tkey && f->tmemo[ti].key == tkey)
      return add_at(f, f->tmemo[ti].leaf, leaf);
  }
  uint64_t h = ljp__hash_bytes(key, klen);
  int hit;
  memo_slot *m = memo_find(f->memo, key, klen, h, stamp, &hit);
  ljp_status st;
  if (hit) {
    st = add_at(f, m->leaf, leaf);
  } else {
    st = add_sample(f, &ev->u.sample, leaf);
    if (st == LJP_OK)
      memo_store(m, key, klen, h, stamp, *leaf);
  }
  if (st == LJP_OK && tkey) {
    f->tmemo[ti].key = tkey;
    f->tmemo[ti].leaf = *leaf;
  }
  return st;
}

/* memprof sites: chunk; function; line — or the single reference name.
 * A trace site stands under its start function (chunk; function; trace),
 * is folded into it (chunk; function; line of the trace's start) or, with
 * LJP_TRACES_TRACE, stands alone as before. */
static size_t mem_site(ljp_folder *f, const ljp_mem_event *m,
                       uint32_t ids[3]) {
  const ljp_frame *loc = &m->loc;
  const ljp_frame *trace = NULL;
  ljp_frame tfn;
  if (loc->kind == LJP_FRAME_TRACE && loc->proto &&
      f->o.traces != LJP_TRACES_TRACE && f->o.style != LJP_NAME_REFERENCE) {
    memset(&tfn, 0, sizeof(tfn));
    tfn.kind = LJP_FRAME_LUA;
    tfn.value = loc->proto->addr;
    tfn.sym = loc->proto;
    /* the allocation's own line is not recorded: the trace's start */
    tfn.line = loc->sym ? loc->sym->line : loc->line;
    if (f->o.traces == LJP_TRACES_UNDER)
      trace = loc;
    loc = &tfn;
  }
  if (loc->kind == LJP_FRAME_LUA && loc->sym &&
      f->o.style != LJP_NAME_REFERENCE) {
    const ljp_symbol *p = loc->sym;
    char buf[64];
    unsigned alias = ljp_symbol_alias(p);
    if (alias) {
      int n = snprintf(buf, sizeof(buf), "function_alias_%u", alias);
      ids[0] = ljp_tree_intern(f->t, buf, (size_t)n, LJP_CLASS_LUA);
    } else
      ids[0] = ljp_tree_intern(f->t, p->name, p->name_len, LJP_CLASS_LUA);
    ljp_frame fn = *loc;
    fn.line = p->line; /* the function: chunk:linedefined */
    ids[1] = frame_id(f, &fn);
    if (trace) {
      ids[2] = frame_id(f, trace);
      return ids[2] == UINT32_MAX ? 2 : 3;
    }
    int n = snprintf(buf, sizeof(buf), "line %llu",
                     (unsigned long long)loc->line);
    ids[2] = ljp_tree_intern(f->t, buf, (size_t)n, LJP_CLASS_LUA);
    return 3;
  }
  if (loc->kind == LJP_FRAME_NONE) {
    ids[0] = ljp_tree_intern(f->t, "INTERNAL", 8, LJP_CLASS_VM);
    return 1;
  }
  ids[0] = frame_id(f, loc);
  return ids[0] == UINT32_MAX ? 0 : 1;
}

/* The memo slot of m's location, filled on a miss by naming the site;
 * NULL on OOM. */
static site_slot *site_of(ljp_folder *f, const ljp_mem_event *m) {
  if (!f->sites && !(f->sites = calloc(SITE_SLOTS, sizeof(*f->sites))))
    return NULL;
  const ljp_frame *loc = &m->loc;
  /* one mix of the fields spread by odd multipliers: a chain of mixes
   * would put its latency before the slot's load on every event */
  uint64_t sym = (uint64_t)(uintptr_t)loc->sym;
  uint64_t proto = (uint64_t)(uintptr_t)loc->proto;
  uint64_t h = ljp_hash64(sym ^ proto * 0x9e3779b97f4a7c15ULL ^
                          loc->value * 0xc2b2ae3d27d4eb4fULL ^
                          loc->line * 0x165667b19e3779f9ULL ^
                          loc->mcode * 0x27d4eb2f165667c5ULL ^
                          (uint64_t)loc->kind << 56);
  site_slot *s = &f->sites[h & (SITE_SLOTS - 1)];
  if (s->used && s->sym == loc->sym && s->proto == loc->proto &&
      s->value == loc->value && s->line == loc->line &&
      s->mcode == loc->mcode && s->kind == (uint32_t)loc->kind)
    return s;
  uint32_t ids[3] = {0, 0, 0};
  size_t n = mem_site(f, m, ids);
  for (size_t i = 0; i < n; i++)
    if (!ids[i])
      return NULL; /* the slot keeps its old, still valid, contents */
  s->sym = loc->sym;
  s->proto = loc->proto;
  s->value = loc->value;
  s->line = loc->line;
  s->mcode = loc->mcode;
  s->kind = (uint32_t)loc->kind;
  memcpy(s->ids, ids, sizeof(ids));
  s->n = (uint32_t)n;
  s->leaf = UINT32_MAX;
  s->used = 1;
  return s;
}

/* Adds weight w at the site's stack and reports it in *to. */
static ljp_status add_site(ljp_folder *f, site_slot *s, int64_t w,
                           fold_to *to) {
  uint32_t leaf = s->leaf != UINT32_MAX
                      ? ljp_tree_add_at(f->t, s->leaf, w)
                      : ljp_tree_add(f->t, s->ids, s->n, w);
  if (leaf == UINT32_MAX)
    return LJP_E_NOMEM;
  s->leaf = leaf;
  to->leaf = leaf;
  to->weight = w;
  return LJP_OK;
}

static ljp_status add_mem(ljp_folder *f, const ljp_mem_event *m,
                          fold_to *to) {
  ljp_weight w = f->o.weight;
  if (w != LJP_WEIGHT_LIVE && m->kind == LJP_MEM_FREE)
    return LJP_OK;
  /* Every event names its site, frees included (live weight): the tree's
   * frames are those of every location seen, in order of first sight. */
  site_slot *s = site_of(f, m);
  if (!s)
    return LJP_E_NOMEM;
  if (w == LJP_WEIGHT_BYTES)
    return add_site(f, s, (int64_t)m->new_size, to);
  if (w != LJP_WEIGHT_LIVE)
    return add_site(f, s, 1, to);
  /* Live bytes: a block is charged to the site that allocated it until
   * it is freed or moved; blocks from before the profile started are not
   * known and not charged.  A free reports the weight it took back, at
   * the freed block's node; a realloc reports its new block. */
  if (m->kind != LJP_MEM_ALLOC) {
    live_block b;
    if (ljp__livemap_del(&f->heap, m->old_addr, &b)) {
      if (ljp_tree_add_at(f->t, b.node, -(int64_t)b.size) == UINT32_MAX)
        return LJP_E_NOMEM;
      to->leaf = b.node;
      to->weight = -(int64_t)b.size;
    }
  }
  if (m->kind != LJP_MEM_FREE) {
    ljp_status st = add_site(f, s, (int64_t)m->new_size, to);
    if (st != LJP_OK)
      return st;
    live_block *b = ljp__livemap_put(&f->heap, m->new_addr);
    if (!b)
      return LJP_E_NOMEM;
    b->size = m->new_size;
    b->node = to->leaf;
  }
  return LJP_OK;
}

LJP_API ljp_status ljp_folder_add_ex(ljp_folder *f, const ljp_reader *r,
                                     const ljp_event *ev,
                                     ljp_fold_sample *out) {
  fold_to to = {0, 0};
  ljp_status st = LJP_OK;
  if (out) {
    memset(out, 0, sizeof(*out));
    out->vmstate = -1;
  }
  if (!f || !ev)
    return LJP_E_ARG;
  f->r = r;
  if (ev->type == LJP_EV_SAMPLE) {
    const ljp_sample *s = &ev->u.sample;
    st = add_sample_memo(f, r, ev, &to.leaf);
    to.weight = 1;
    if (out) {
      out->vmstate = s->vmstate;
      out->has_time = s->has_time;
      out->time_ns = s->time_ns;
      out->coro = s->coro;
      out->flags = s->flags;
    }
  } else if (ev->type == LJP_EV_MEMORY) {
    st = add_mem(f, &ev->u.mem, &to);
  }
  if (out && st == LJP_OK) {
    out->leaf = to.leaf;
    out->weight = to.weight;
  }
  return st;
}

LJP_API ljp_status ljp_folder_add(ljp_folder *f, const ljp_reader *r,
                                  const ljp_event *ev) {
  return ljp_folder_add_ex(f, r, ev, NULL);
}
