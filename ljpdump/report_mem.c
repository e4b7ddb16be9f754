/*
 * report_mem.c — the memprof report of ljpdump, byte for byte what
 * Tarantool's `luajit -tm` prints (tools/memprof/ of the fork), built incrementally
 * from reader events.
 *
 * Model (FORMATS.md §9.2):
 *   - every ALLOC/REALLOC/FREE event lands in the row of its section keyed by
 *     its location (addr, line, traceno[, generation]); the row keeps the
 *     name of its first event;
 *   - a heap map, address -> {size, location, name of the allocating event},
 *     lets REALLOC and FREE rows record "primary" entries: per allocating
 *     location, the bytes reallocated, the bytes freed and the count;
 *   - HEAP SUMMARY sums ALLOC rows and primary entries by *name*.
 * Memory grows with distinct locations and live chunks, not with events.
 *
 * These tables are the report's own, not the profile model's (ljp_folder
 * into ljp_tree), because the model cannot give these rows: it keys a site
 * by its name (chunk; function; line) and weighs it by bytes, events or
 * live bytes, while the reference keys a row by location (address, line,
 * trace number and, in the generation era, the symbol's definition) and
 * names it after its first event -- two locations of one name are two
 * rows, a location renamed mid-stream stays one -- and its REALLOC and
 * FREE rows list the location that allocated each chunk they took over.
 *
 * Also home of the small helpers both report modules share (string pool,
 * name buffer, index sort): see the end of reports.h.
 */
#include "cli_hash.h"
#include "cli_names.h"
#include "json.h"
#include "reports.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Shared helpers                                                           */
/* ------------------------------------------------------------------------ */

/* Grows *arr (element size esz) to hold at least need elements. */
static int grow(void *arr, size_t *cap, size_t need, size_t esz)
{
  if (need <= *cap)
    return 0;
  size_t ncap = *cap ? *cap : 16;
  while (ncap < need) {
    if (ncap > SIZE_MAX / 2 / esz)
      return -1;
    ncap *= 2;
  }
  void *p = realloc(*(void **)arr, ncap * esz);
  if (!p)
    return -1;
  *(void **)arr = p;
  *cap = ncap;
  return 0;
}

#define NONE32 UINT32_MAX

/* An index of dense ids 0, 1, ... by hash, for tables whose entries live in
 * an array of their own: open addressing, a slot holds id + 1 (0 = empty),
 * at most half the slots used.  The owner compares the keys. */
struct ididx {
  uint32_t *slots;
  size_t nslots;          /* 0 or a power of two */
};

/* The ids filed under hash h, in probe order: idx_first(), then idx_next()
 * until NONE32.  *j is the walk's position. */
static uint32_t idx_first(const struct ididx *x, uint64_t h, size_t *j)
{
  if (!x->nslots)
    return NONE32;
  *j = h & (x->nslots - 1);
  return x->slots[*j] ? x->slots[*j] - 1 : NONE32;
}

static uint32_t idx_next(const struct ididx *x, size_t *j)
{
  *j = (*j + 1) & (x->nslots - 1);
  return x->slots[*j] ? x->slots[*j] - 1 : NONE32;
}

static void idx_put(uint32_t *slots, size_t nslots, uint64_t h, uint32_t id)
{
  size_t j = h & (nslots - 1);
  while (slots[j])
    j = (j + 1) & (nslots - 1);
  slots[j] = id + 1;
}

/* Makes room for one id more than the n filed (ids 0..n-1, whose hashes
 * hash(ctx, id) gives); -1 when out of memory. */
static int idx_reserve(struct ididx *x, size_t n,
                       uint64_t (*hash)(const void *, uint32_t),
                       const void *ctx)
{
  if ((n + 1) * 2 <= x->nslots)
    return 0;
  size_t ns = x->nslots ? x->nslots * 2 : 64;
  uint32_t *s = calloc(ns, sizeof *s);
  if (!s)
    return -1;
  for (size_t i = 0; i < n; i++)
    idx_put(s, ns, hash(ctx, (uint32_t)i), (uint32_t)i);
  free(x->slots);
  x->slots = s;
  x->nslots = ns;
  return 0;
}

/* Files id under h (after idx_reserve). */
static void idx_add(struct ididx *x, uint64_t h, uint32_t id)
{
  idx_put(x->slots, x->nslots, h, id);
}

struct rep_strpool {
  char *bytes;            /* all strings, each followed by a NUL */
  size_t nbytes, capbytes;
  struct { size_t off, len; uint64_t hash; } *ent;
  size_t nent, capent;
  struct ididx idx;
};

rep_strpool *rep_strpool_new(void)
{
  return calloc(1, sizeof(rep_strpool));
}

void rep_strpool_free(rep_strpool *p)
{
  if (!p)
    return;
  free(p->bytes);
  free(p->ent);
  free(p->idx.slots);
  free(p);
}

static uint64_t strpool_hash(const void *ctx, uint32_t id)
{
  return ((const rep_strpool *)ctx)->ent[id].hash;
}

uint32_t rep_strpool_intern(rep_strpool *p, const char *s, size_t len)
{
  uint64_t h = ljp__hash_bytes(s, len);
  size_t j;
  for (uint32_t id = idx_first(&p->idx, h, &j); id != NONE32;
       id = idx_next(&p->idx, &j))
    if (p->ent[id].hash == h && p->ent[id].len == len &&
        memcmp(p->bytes + p->ent[id].off, s, len) == 0)
      return id;
  if (p->nent >= UINT32_MAX - 1)
    return UINT32_MAX;
  if (idx_reserve(&p->idx, p->nent, strpool_hash, p) != 0)
    return UINT32_MAX;
  if (len > SIZE_MAX - 1 - p->nbytes ||
      grow(&p->bytes, &p->capbytes, p->nbytes + len + 1, 1) != 0 ||
      grow(&p->ent, &p->capent, p->nent + 1, sizeof *p->ent) != 0)
    return UINT32_MAX;
  if (len)
    memcpy(p->bytes + p->nbytes, s, len);
  p->bytes[p->nbytes + len] = '\0';
  uint32_t id = (uint32_t)p->nent++;
  p->ent[id].off = p->nbytes;
  p->ent[id].len = len;
  p->ent[id].hash = h;
  p->nbytes += len + 1;
  idx_add(&p->idx, h, id);
  return id;
}

const char *rep_strpool_get(const rep_strpool *p, uint32_t id, size_t *len)
{
  if (len)
    *len = p->ent[id].len;
  return p->bytes + p->ent[id].off;
}

static size_t strpool_count(const rep_strpool *p)
{
  return p->nent;
}

int rep_strpool_cmp(const rep_strpool *p, uint32_t a, uint32_t b)
{
  size_t la = p->ent[a].len, lb = p->ent[b].len;
  int c = memcmp(p->bytes + p->ent[a].off, p->bytes + p->ent[b].off,
                 la < lb ? la : lb);
  if (c)
    return c;
  return la < lb ? -1 : la > lb;
}

size_t rep_frame_name(rep_namebuf *nb, const ljp_frame *f,
                      ljp_name_style style, ljp_flavor flavor)
{
  return rep_frame_name_src(nb, f, style, flavor, NULL);
}

size_t rep_frame_name_src(rep_namebuf *nb, const ljp_frame *f,
                          ljp_name_style style, ljp_flavor flavor,
                          ljp_srcnames *src)
{
  cli_namebuf b = {nb->buf, nb->cap, 1};
  size_t n = cli_frame_name(&b, f, style, flavor, src);
  nb->buf = b.p;
  nb->cap = b.cap;
  return n == (size_t)-1 ? SIZE_MAX : n;
}

int rep_sort_u32(uint32_t *a, size_t n,
                 int (*cmp)(uint32_t, uint32_t, const void *),
                 const void *ctx)
{
  /* Bottom-up merge sort: stable, and unlike qsort it takes a context. */
  if (n < 2)
    return 0;
  uint32_t *tmp = malloc(n * sizeof *tmp);
  if (!tmp)
    return -1;
  uint32_t *src = a, *dst = tmp;
  for (size_t w = 1; w < n; w *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * w) {
      size_t mid = lo + w < n ? lo + w : n;
      size_t hi = lo + 2 * w < n ? lo + 2 * w : n;
      size_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi)
        dst[k++] = cmp(src[j], src[i], ctx) < 0 ? src[j++] : src[i++];
      while (i < mid)
        dst[k++] = src[i++];
      while (j < hi)
        dst[k++] = src[j++];
    }
    uint32_t *t = src;
    src = dst;
    dst = t;
  }
  if (src != a)
    memcpy(a, src, n * sizeof *a);
  free(tmp);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* The memprof report                                                       */
/* ------------------------------------------------------------------------ */

enum { SEC_ALLOC = 0, SEC_REALLOC = 1, SEC_FREE = 2, SEC__N = 3 };

/* A location: the reference's aggregation id "f<addr>l<line>t<traceno>g<gen>". */
struct loc {
  uint64_t addr, line, traceno, gen;
  uint64_t hash;
  uint32_t name;              /* name of the latest event seen here */
  const ljp_symbol *sym, *proto; /* what that name was made from */
  uint64_t mcode;
  int named;
  uint32_t row[SEC__N];       /* row of this location per section */
};

struct row {
  uint32_t loc, name;         /* name: of the row's first event */
  uint64_t num, alloc, free;
  uint32_t prim;              /* first primary entry, NONE32 */
  uint32_t nprim;
};

/* One "primary" entry of a REALLOC/FREE row: the chunks it took over that
 * were allocated at location loc. */
struct prim {
  uint32_t row, loc, name, next;
  uint64_t allocated, freed, count;
};

/* A live chunk of the heap model. */
struct chunk {
  uint64_t addr, size;
  uint32_t loc, name;
};

/* Definitions counted per symbol key, for generation-era rows. */
struct defcount {
  uint64_t key;               /* address or trace number; kind in `kind` */
  uint32_t kind, count;
};

struct memreport {
  struct memreport_opts opt;
  unsigned ljm_version;
  rep_strpool *names;
  rep_namebuf nb;
  uint32_t internal_name;

  struct loc *locs; size_t nlocs, caplocs;
  struct ididx locidx;

  struct row *rows; size_t nrows, caprows;

  struct prim *prims; size_t nprims, capprims;
  struct ididx primidx;

  struct chunk *heap; size_t nheap, nheapslots; /* addr 0 kept aside */
  unsigned char *heapused;
  struct chunk zero_chunk; int has_zero_chunk;

  struct defcount *defs; size_t ndefs, ndefslots;

  /* Alias texts copied from the reader, k = 1..naliases. */
  uint32_t *aliases; size_t naliases, capaliases;
};

int memreport_era_parse(const char *name)
{
  static const char *const names[] = {"auto", "current", "bytes",
                                      "generation"};
  for (int i = 0; i < 4; i++)
    if (strcmp(name, names[i]) == 0)
      return i;
  return -1;
}

memreport *memreport_new(const struct memreport_opts *opts)
{
  memreport *m = calloc(1, sizeof *m);
  if (!m)
    return NULL;
  if (opts)
    m->opt = *opts;
  m->names = rep_strpool_new();
  if (!m->names) {
    free(m);
    return NULL;
  }
  m->internal_name = rep_strpool_intern(m->names, "INTERNAL", 8);
  if (m->internal_name == NONE32) {
    memreport_free(m);
    return NULL;
  }
  return m;
}

void memreport_free(memreport *m)
{
  if (!m)
    return;
  rep_strpool_free(m->names);
  free(m->nb.buf);
  free(m->locs);
  free(m->locidx.slots);
  free(m->rows);
  free(m->prims);
  free(m->primidx.slots);
  free(m->heap);
  free(m->heapused);
  free(m->defs);
  free(m->aliases);
  free(m);
}

/* --- generation counting ------------------------------------------------ */

static uint64_t def_hash(uint32_t kind, uint64_t key)
{
  return ljp_hash64(key * 4 + kind);
}

static struct defcount *def_find(memreport *m, uint32_t kind, uint64_t key)
{
  if (!m->ndefslots)
    return NULL;
  size_t j = def_hash(kind, key) & (m->ndefslots - 1);
  while (m->defs[j].count) {
    if (m->defs[j].kind == kind && m->defs[j].key == key)
      return &m->defs[j];
    j = (j + 1) & (m->ndefslots - 1);
  }
  return NULL;
}

static ljp_status def_add(memreport *m, uint32_t kind, uint64_t key)
{
  struct defcount *d = def_find(m, kind, key);
  if (d) {
    d->count++;
    return LJP_OK;
  }
  if ((m->ndefs + 1) * 2 > m->ndefslots) {
    size_t n = m->ndefslots ? m->ndefslots * 2 : 256;
    struct defcount *nd = calloc(n, sizeof *nd);
    if (!nd)
      return LJP_E_NOMEM;
    for (size_t i = 0; i < m->ndefslots; i++) {
      if (!m->defs[i].count)
        continue;
      size_t j = def_hash(m->defs[i].kind, m->defs[i].key) & (n - 1);
      while (nd[j].count)
        j = (j + 1) & (n - 1);
      nd[j] = m->defs[i];
    }
    free(m->defs);
    m->defs = nd;
    m->ndefslots = n;
  }
  size_t j = def_hash(kind, key) & (m->ndefslots - 1);
  while (m->defs[j].count)
    j = (j + 1) & (m->ndefslots - 1);
  m->defs[j].kind = kind;
  m->defs[j].key = key;
  m->defs[j].count = 1;
  m->ndefs++;
  return LJP_OK;
}

static uint64_t def_count(memreport *m, uint32_t kind, uint64_t key)
{
  struct defcount *d = def_find(m, kind, key);
  return d ? d->count : 0;
}

/* The generation-era parser's "gen" of a location: the number of
 * definitions of its symbol so far (for C addresses: of the floor symbol,
 * or 1 without one). */
static uint64_t loc_generation(memreport *m, const ljp_mem_event *me)
{
  switch (me->loc.kind) {
  case LJP_FRAME_LUA:
    return def_count(m, LJP_SYM_LFUNC, me->loc.value);
  case LJP_FRAME_TRACE:
    return def_count(m, LJP_SYM_TRACE, me->loc.value);
  case LJP_FRAME_CFUNC:
  case LJP_FRAME_HOST:
    if (me->loc.sym && me->loc.sym->kind == LJP_SYM_CFUNC) {
      uint64_t n = def_count(m, LJP_SYM_CFUNC, me->loc.sym->addr);
      return n ? n : 1;
    }
    return 1;
  default:
    return 0;
  }
}

/* --- locations ------------------------------------------------------------ */

static uint64_t loc_hash(uint64_t a, uint64_t l, uint64_t t, uint64_t g)
{
  return ljp_hash64(ljp_hash64(ljp_hash64(ljp_hash64(a) ^ l) ^ t) ^ g);
}

static uint64_t loc_hash_of(const void *ctx, uint32_t id)
{
  return ((const memreport *)ctx)->locs[id].hash;
}

static uint32_t loc_get(memreport *m, uint64_t a, uint64_t l, uint64_t t,
                        uint64_t g)
{
  uint64_t h = loc_hash(a, l, t, g);
  size_t j;
  for (uint32_t id = idx_first(&m->locidx, h, &j); id != NONE32;
       id = idx_next(&m->locidx, &j)) {
    const struct loc *c = &m->locs[id];
    if (c->hash == h && c->addr == a && c->line == l && c->traceno == t &&
        c->gen == g)
      return id;
  }
  if (m->nlocs >= NONE32 - 1)
    return NONE32;
  if (idx_reserve(&m->locidx, m->nlocs, loc_hash_of, m) != 0)
    return NONE32;
  if (grow(&m->locs, &m->caplocs, m->nlocs + 1, sizeof *m->locs) != 0)
    return NONE32;
  uint32_t id = (uint32_t)m->nlocs++;
  struct loc *c = &m->locs[id];
  memset(c, 0, sizeof *c);
  c->addr = a;
  c->line = l;
  c->traceno = t;
  c->gen = g;
  c->hash = h;
  for (int s = 0; s < SEC__N; s++)
    c->row[s] = NONE32;
  idx_add(&m->locidx, h, id);
  return id;
}

/* The parsers of ljm 1 and ljm 2 predate aliases (ed3358c9, 2022-04): they
 * print a multi-line chunk name as it is, and no ALIASES section. */
static int pre_alias(const memreport *m)
{
  return m->ljm_version == 1 || m->ljm_version == 2;
}

/* "<chunk>:<line>" with the chunk text verbatim. */
static uint32_t verbatim_name(memreport *m, const ljp_symbol *sym,
                              uint64_t line)
{
  char num[24];
  int nl = snprintf(num, sizeof num, ":%" PRIu64, line);
  size_t len = sym->name_len + (size_t)nl;
  char *buf = malloc(len + 1);
  if (!buf)
    return NONE32;
  memcpy(buf, sym->name, sym->name_len);
  memcpy(buf + sym->name_len, num, (size_t)nl + 1);
  uint32_t id = rep_strpool_intern(m->names, buf, len);
  free(buf);
  return id;
}

/* The reference demangle of the event's location, interned; cached per
 * location while the symbols it resolved to stay the same. */
static uint32_t loc_name(memreport *m, struct loc *c, const ljp_mem_event *me)
{
  if (me->loc.kind == LJP_FRAME_NONE)
    return m->internal_name;
  if (c->named && c->sym == me->loc.sym && c->proto == me->loc.proto &&
      c->mcode == me->loc.mcode)
    return c->name;
  uint32_t name;
  const ljp_symbol *sym = me->loc.sym;
  if (pre_alias(m) && me->loc.kind == LJP_FRAME_LUA && sym &&
      sym->kind == LJP_SYM_LFUNC && sym->name &&
      memchr(sym->name, '\n', sym->name_len)) {
    name = verbatim_name(m, sym, me->loc.line);
  } else {
    /* ljm 2 traces ("TRACE [n] 0x<mcode>[ started at ...]") are named by
     * the library too, from loc.mcode. */
    size_t n = rep_frame_name(&m->nb, &me->loc, LJP_NAME_REFERENCE,
                              LJP_FLAVOR_TARANTOOL);
    if (n == SIZE_MAX)
      return NONE32;
    name = rep_strpool_intern(m->names, m->nb.buf, n);
  }
  if (name == NONE32)
    return NONE32;
  c->named = 1;
  c->name = name;
  c->sym = me->loc.sym;
  c->proto = me->loc.proto;
  c->mcode = me->loc.mcode;
  return name;
}

/* --- rows and primary entries -------------------------------------------- */

static uint32_t row_get(memreport *m, uint32_t locid, int sec, uint32_t name)
{
  if (m->locs[locid].row[sec] != NONE32)
    return m->locs[locid].row[sec];
  if (m->nrows >= NONE32 - 1 ||
      grow(&m->rows, &m->caprows, m->nrows + 1, sizeof *m->rows) != 0)
    return NONE32;
  uint32_t id = (uint32_t)m->nrows++;
  struct row *r = &m->rows[id];
  memset(r, 0, sizeof *r);
  r->loc = locid;
  r->name = name;
  r->prim = NONE32;
  m->locs[locid].row[sec] = id;
  return id;
}

static uint64_t prim_hash(uint32_t row, uint32_t loc)
{
  return ljp_hash64(((uint64_t)row << 32) | loc);
}

static uint64_t prim_hash_of(const void *ctx, uint32_t id)
{
  const struct prim *p = &((const memreport *)ctx)->prims[id];
  return prim_hash(p->row, p->loc);
}

/* The reference's link_to_previous(): the row took over a chunk. */
static ljp_status link_chunk(memreport *m, uint32_t rowid,
                             const struct chunk *ch, uint64_t nsize)
{
  uint64_t h = prim_hash(rowid, ch->loc);
  struct prim *p = NULL;
  size_t j;
  for (uint32_t id = idx_first(&m->primidx, h, &j); id != NONE32 && !p;
       id = idx_next(&m->primidx, &j))
    if (m->prims[id].row == rowid && m->prims[id].loc == ch->loc)
      p = &m->prims[id];
  if (!p) {
    if (m->nprims >= NONE32 - 1)
      return LJP_E_NOMEM;
    if (idx_reserve(&m->primidx, m->nprims, prim_hash_of, m) != 0)
      return LJP_E_NOMEM;
    if (grow(&m->prims, &m->capprims, m->nprims + 1, sizeof *m->prims) != 0)
      return LJP_E_NOMEM;
    uint32_t id = (uint32_t)m->nprims++;
    p = &m->prims[id];
    memset(p, 0, sizeof *p);
    p->row = rowid;
    p->loc = ch->loc;
    p->name = ch->name; /* the name the chunk's allocation had */
    p->next = m->rows[rowid].prim;
    m->rows[rowid].prim = id;
    m->rows[rowid].nprim++;
    idx_add(&m->primidx, h, id);
  }
  p->allocated += nsize;
  p->freed += ch->size;
  p->count++;
  return LJP_OK;
}

/* --- heap model: address -> chunk, linear probing, backward-shift delete - */

static size_t heap_slot(const memreport *m, uint64_t addr)
{
  return ljp_hash64(addr) & (m->nheapslots - 1);
}

static struct chunk *heap_find(memreport *m, uint64_t addr)
{
  if (addr == 0)
    return m->has_zero_chunk ? &m->zero_chunk : NULL;
  if (!m->nheapslots)
    return NULL;
  size_t j = heap_slot(m, addr);
  while (m->heapused[j]) {
    if (m->heap[j].addr == addr)
      return &m->heap[j];
    j = (j + 1) & (m->nheapslots - 1);
  }
  return NULL;
}

static void heap_del(memreport *m, uint64_t addr)
{
  if (addr == 0) {
    m->has_zero_chunk = 0;
    return;
  }
  struct chunk *c = heap_find(m, addr);
  if (!c)
    return;
  size_t mask = m->nheapslots - 1;
  size_t i = (size_t)(c - m->heap);
  m->heapused[i] = 0;
  m->nheap--;
  /* Backward-shift: move later members of the probe run into the hole. */
  for (size_t j = (i + 1) & mask; m->heapused[j]; j = (j + 1) & mask) {
    size_t home = heap_slot(m, m->heap[j].addr);
    /* The entry at j may move to i when i lies cyclically in [home, j). */
    if (((j - home) & mask) >= ((j - i) & mask)) {
      m->heap[i] = m->heap[j];
      m->heapused[i] = 1;
      m->heapused[j] = 0;
      i = j;
    }
  }
}

static ljp_status heap_put(memreport *m, uint64_t addr, uint64_t size,
                           uint32_t loc, uint32_t name)
{
  struct chunk nc = {addr, size, loc, name};
  if (addr == 0) {
    m->zero_chunk = nc;
    m->has_zero_chunk = 1;
    return LJP_OK;
  }
  struct chunk *c = heap_find(m, addr);
  if (c) {
    *c = nc;
    return LJP_OK;
  }
  if ((m->nheap + 1) * 4 > m->nheapslots * 3) {
    size_t n = m->nheapslots ? m->nheapslots * 2 : 1024;
    struct chunk *nh = malloc(n * sizeof *nh);
    unsigned char *nu = calloc(n, 1);
    if (!nh || !nu) {
      free(nh);
      free(nu);
      return LJP_E_NOMEM;
    }
    for (size_t i = 0; i < m->nheapslots; i++) {
      if (!m->heapused[i])
        continue;
      size_t j = ljp_hash64(m->heap[i].addr) & (n - 1);
      while (nu[j])
        j = (j + 1) & (n - 1);
      nh[j] = m->heap[i];
      nu[j] = 1;
    }
    free(m->heap);
    free(m->heapused);
    m->heap = nh;
    m->heapused = nu;
    m->nheapslots = n;
  }
  size_t j = heap_slot(m, addr);
  while (m->heapused[j])
    j = (j + 1) & (m->nheapslots - 1);
  m->heap[j] = nc;
  m->heapused[j] = 1;
  m->nheap++;
  return LJP_OK;
}

size_t memreport_heap_slots(const memreport *m)
{
  return m ? m->nheapslots : 0;
}

/* --- events ---------------------------------------------------------------- */

static ljp_status copy_aliases(memreport *m, const ljp_reader *r)
{
  unsigned n = ljp_reader_alias_count(r);
  while (m->naliases < n) {
    const ljp_symbol *s = ljp_reader_alias(r, (unsigned)m->naliases + 1);
    uint32_t id = rep_strpool_intern(m->names, s && s->name ? s->name : "",
                                     s && s->name ? s->name_len : 0);
    if (id == NONE32 || grow(&m->aliases, &m->capaliases, m->naliases + 1,
                             sizeof *m->aliases) != 0)
      return LJP_E_NOMEM;
    m->aliases[m->naliases++] = id;
  }
  return LJP_OK;
}

static ljp_status add_mem(memreport *m, const ljp_mem_event *me)
{
  uint64_t a = 0, l = 0, t = 0, g = 0;
  switch (me->loc.kind) {
  case LJP_FRAME_LUA:
    a = me->loc.value;
    l = me->loc.line;
    break;
  case LJP_FRAME_TRACE:
    t = me->loc.value;
    if (me->has_mcode)
      a = me->mcode; /* ljm 2 keys traces by (mcode, 0, traceno) */
    break;
  case LJP_FRAME_NONE:
    break;
  default:
    a = me->loc.value;
    break;
  }
  if (m->opt.era == MEMREPORT_ERA_GENERATION)
    g = loc_generation(m, me);
  uint32_t locid = loc_get(m, a, l, t, g);
  if (locid == NONE32)
    return LJP_E_NOMEM;
  uint32_t name = loc_name(m, &m->locs[locid], me);
  if (name == NONE32)
    return LJP_E_NOMEM;
  int sec = me->kind == LJP_MEM_ALLOC     ? SEC_ALLOC
            : me->kind == LJP_MEM_REALLOC ? SEC_REALLOC
                                          : SEC_FREE;
  uint32_t rowid = row_get(m, locid, sec, name);
  if (rowid == NONE32)
    return LJP_E_NOMEM;
  struct row *r = &m->rows[rowid];
  r->num++;
  if (sec != SEC_FREE)
    r->alloc += me->new_size;
  if (sec != SEC_ALLOC) {
    r->free += me->old_size;
    struct chunk *ch = heap_find(m, me->old_addr);
    if (ch) {
      struct chunk copy = *ch;
      ljp_status st = link_chunk(m, rowid, &copy,
                                 sec == SEC_REALLOC ? me->new_size : 0);
      if (st != LJP_OK)
        return st;
      heap_del(m, me->old_addr);
    }
  }
  if (sec != SEC_FREE)
    return heap_put(m, me->new_addr, me->new_size, locid, name);
  return LJP_OK;
}

ljp_status memreport_add(memreport *m, const ljp_reader *r,
                         const ljp_event *ev)
{
  if (!m || !ev)
    return LJP_E_ARG;
  ljp_status st = LJP_OK;
  switch (ev->type) {
  case LJP_EV_PROLOGUE:
    if (strcmp(ev->u.prologue.magic, "ljm") == 0)
      m->ljm_version = ev->u.prologue.version;
    break;
  case LJP_EV_SYMBOL:
    if (m->opt.era == MEMREPORT_ERA_GENERATION && ev->u.symbol.sym) {
      const ljp_symbol *s = ev->u.symbol.sym;
      st = def_add(m, (uint32_t)s->kind,
                   s->kind == LJP_SYM_TRACE ? s->traceno : s->addr);
    }
    break;
  case LJP_EV_MEMORY:
    st = add_mem(m, &ev->u.mem);
    break;
  default:
    break;
  }
  if (st == LJP_OK && r)
    st = copy_aliases(m, r);
  return st;
}

/* --- printing ------------------------------------------------------------- */

enum size_style { SIZE_B, SIZE_BYTES, SIZE_HUMAN };

/* Lua's string.format of the reference: "%dB" / "%d bytes", or with
 * --human-readable the value divided by 1024 while >= 1024 (up to GiB),
 * "%d" when whole and "%.2f" otherwise, computed in doubles like Lua. */
static void fmt_size(char *buf, size_t cap, int64_t v, enum size_style st)
{
  if (st == SIZE_BYTES) {
    snprintf(buf, cap, "%" PRId64 " bytes", v);
    return;
  }
  if (st == SIZE_B) {
    snprintf(buf, cap, "%" PRId64 "B", v);
    return;
  }
  static const char *const units[] = {"B", "KiB", "MiB", "GiB"};
  double d = (double)v;
  int mag = 0;
  while (d >= 1024 && mag < 3) {
    d /= 1024;
    mag++;
  }
  if (d == (double)(int64_t)d) {
    snprintf(buf, cap, "%" PRId64 "%s", (int64_t)d, units[mag]);
    return;
  }
  /* LuaJIT's "%.2f" rounds a value exactly halfway between two hundredths
   * away from zero (262272 B = 256.125 KiB prints 256.13KiB); C's printf
   * rounds it to even.  Such a value is a multiple of 1/8, and then d * 100
   * is exact, so the tie is seen exactly. */
  double h = d * 100;
  if (d > 0 && d < 1e15 && d * 8 == (double)(int64_t)(d * 8) &&
      h - (double)(int64_t)h == 0.5) {
    int64_t q = (int64_t)h + 1;
    snprintf(buf, cap, "%" PRId64 ".%02d%s", q / 100, (int)(q % 100),
             units[mag]);
    return;
  }
  snprintf(buf, cap, "%.2f%s", d, units[mag]);
}

struct sortctx {
  const memreport *m;
  const int64_t *dbytes;
};

static int cmp_rows(uint32_t a, uint32_t b, const void *vctx)
{
  const memreport *m = ((const struct sortctx *)vctx)->m;
  const struct row *ra = &m->rows[a], *rb = &m->rows[b];
  if (ra->num != rb->num)
    return ra->num > rb->num ? -1 : 1;
  int c = rep_strpool_cmp(m->names, ra->name, rb->name);
  if (c)
    return c;
  const struct loc *la = &m->locs[ra->loc], *lb = &m->locs[rb->loc];
  if (la->addr != lb->addr)
    return la->addr < lb->addr ? -1 : 1;
  if (la->line != lb->line)
    return la->line < lb->line ? -1 : 1;
  if (la->traceno != lb->traceno)
    return la->traceno < lb->traceno ? -1 : 1;
  if (la->gen != lb->gen)
    return la->gen < lb->gen ? -1 : 1;
  return 0;
}

static int cmp_names(uint32_t a, uint32_t b, const void *vctx)
{
  const memreport *m = ((const struct sortctx *)vctx)->m;
  return rep_strpool_cmp(m->names, a, b);
}

static int cmp_heap(uint32_t a, uint32_t b, const void *vctx)
{
  const struct sortctx *ctx = vctx;
  if (ctx->dbytes[a] != ctx->dbytes[b])
    return ctx->dbytes[a] > ctx->dbytes[b] ? -1 : 1;
  return rep_strpool_cmp(ctx->m->names, a, b);
}

/* A name as the text report writes it, or as a JSON string. */
static void put_name(const memreport *m, uint32_t id, int json, FILE *out)
{
  size_t len;
  const char *s = rep_strpool_get(m->names, id, &len);
  if (json)
    json_str(out, s, len);
  else
    fwrite(s, 1, len, out);
}

/* The rows of section sec in report order (malloc'ed), or NULL when out of
 * memory. */
static uint32_t *section_rows(const memreport *m, int sec, size_t *n)
{
  struct sortctx ctx = {m, NULL};
  uint32_t *ids = malloc((m->nrows ? m->nrows : 1) * sizeof *ids);
  *n = 0;
  if (!ids)
    return NULL;
  for (size_t i = 0; i < m->nlocs; i++)
    if (m->locs[i].row[sec] != NONE32)
      ids[(*n)++] = m->locs[i].row[sec];
  if (rep_sort_u32(ids, *n, cmp_rows, &ctx) != 0) {
    free(ids);
    return NULL;
  }
  return ids;
}

/* The names of a row's primary entries ("Overrides") in name order, into
 * *buf (grown as needed); their count, or SIZE_MAX when out of memory. */
static size_t row_overrides(const memreport *m, const struct row *r,
                            uint32_t **buf, size_t *cap)
{
  struct sortctx ctx = {m, NULL};
  if (!r->nprim)
    return 0;
  if (grow(buf, cap, r->nprim, sizeof **buf) != 0)
    return SIZE_MAX;
  size_t k = 0;
  for (uint32_t p = r->prim; p != NONE32; p = m->prims[p].next)
    (*buf)[k++] = m->prims[p].name;
  return rep_sort_u32(*buf, k, cmp_names, &ctx) != 0 ? SIZE_MAX : k;
}

/* One section, as `luajit -tm` prints it or as a JSON array of rows (sizes
 * in bytes). */
static int print_section(memreport *m, int sec, enum size_style sst, int json,
                         FILE *out)
{
  static const char *const titles[] = {"ALLOCATIONS", "REALLOCATIONS",
                                       "DEALLOCATIONS"};
  static const char *const keys[] = {"allocations", "reallocations",
                                     "deallocations"};
  size_t n;
  uint32_t *ids = section_rows(m, sec, &n);
  if (!ids)
    return -2;
  if (json)
    fprintf(out, "    \"%s\": [", keys[sec]);
  else
    fprintf(out, "%s\n", titles[sec]);
  uint32_t *prim = NULL;
  size_t capprim = 0;
  int rc = 0;
  for (size_t i = 0; i < n; i++) {
    const struct row *r = &m->rows[ids[i]];
    size_t k = row_overrides(m, r, &prim, &capprim);
    if (k == SIZE_MAX) {
      rc = -2;
      break;
    }
    if (json) {
      fputs(i ? ",\n      {\"location\": " : "\n      {\"location\": ", out);
      put_name(m, r->name, 1, out);
      fprintf(out, ", \"events\": %" PRIu64 ", \"allocated\": %" PRIu64
                   ", \"freed\": %" PRIu64, r->num, r->alloc, r->free);
      if (k)
        fputs(", \"overrides\": [", out);
      for (size_t j = 0; j < k; j++) {
        fputs(j ? ", " : "", out);
        put_name(m, prim[j], 1, out);
      }
      fputs(k ? "]}" : "}", out);
      continue;
    }
    char a[64], f[64];
    fmt_size(a, sizeof a, (int64_t)r->alloc, sst);
    fmt_size(f, sizeof f, (int64_t)r->free, sst);
    put_name(m, r->name, 0, out);
    fprintf(out, ": %" PRIu64 " events\t+%s\t-%s\n", r->num, a, f);
    if (k)
      fputs("\tOverrides:\n", out);
    for (size_t j = 0; j < k; j++) {
      fputs("\t\t", out);
      put_name(m, prim[j], 0, out);
      fputc('\n', out);
    }
    if (k)
      fputc('\n', out);
  }
  if (rc == 0)
    fputs(!json ? "\n" : n ? "\n    ],\n" : "],\n", out);
  free(prim);
  free(ids);
  return rc;
}

/* HEAP SUMMARY: per name, the bytes its allocations still hold. */
struct heap_sum {
  int64_t *dbytes;            /* indexed by name id */
  uint64_t *nalloc, *nfree;
  uint32_t *ids;              /* names holding bytes, in report order */
  size_t n;
};

static void heap_sum_free(struct heap_sum *h)
{
  free(h->dbytes);
  free(h->nalloc);
  free(h->nfree);
  free(h->ids);
}

/* The reference sums ALLOC rows and primary entries by name; a name is
 * listed when its sum is positive.  -2 when out of memory. */
static int heap_sum(const memreport *m, struct heap_sum *h)
{
  size_t nn = strpool_count(m->names);
  h->dbytes = calloc(nn ? nn : 1, sizeof *h->dbytes);
  h->nalloc = calloc(nn ? nn : 1, sizeof *h->nalloc);
  h->nfree = calloc(nn ? nn : 1, sizeof *h->nfree);
  h->ids = malloc((nn ? nn : 1) * sizeof *h->ids);
  h->n = 0;
  if (!h->dbytes || !h->nalloc || !h->nfree || !h->ids)
    return -2;
  for (size_t i = 0; i < m->nlocs; i++) {
    uint32_t rid = m->locs[i].row[SEC_ALLOC];
    if (rid == NONE32 || m->rows[rid].alloc == 0)
      continue;
    h->dbytes[m->rows[rid].name] += (int64_t)m->rows[rid].alloc;
    h->nalloc[m->rows[rid].name] += m->rows[rid].num;
  }
  for (size_t i = 0; i < m->nprims; i++) {
    const struct prim *p = &m->prims[i];
    if (p->allocated > 0) {
      h->dbytes[p->name] += (int64_t)p->allocated;
      h->nalloc[p->name] += p->count;
    }
    if (p->freed > 0) {
      h->dbytes[p->name] -= (int64_t)p->freed;
      h->nfree[p->name] += p->count;
    }
  }
  for (size_t i = 0; i < nn; i++)
    if (h->dbytes[i] > 0)
      h->ids[h->n++] = (uint32_t)i;
  struct sortctx ctx = {m, h->dbytes};
  return rep_sort_u32(h->ids, h->n, cmp_heap, &ctx) != 0 ? -2 : 0;
}

static int print_heap_summary(memreport *m, enum size_style sst, int json,
                              FILE *out)
{
  struct heap_sum h;
  int rc = heap_sum(m, &h);
  if (rc != 0) {
    heap_sum_free(&h);
    return rc;
  }
  fputs(json ? "    \"heap_summary\": [" : "HEAP SUMMARY:\n", out);
  for (size_t i = 0; i < h.n; i++) {
    uint32_t id = h.ids[i];
    if (json) {
      fputs(i ? ",\n      {\"location\": " : "\n      {\"location\": ", out);
      put_name(m, id, 1, out);
      fprintf(out, ", \"holds\": %" PRId64 ", \"allocs\": %" PRIu64
                   ", \"frees\": %" PRIu64 "}",
              h.dbytes[id], h.nalloc[id], h.nfree[id]);
    } else {
      char s[64];
      fmt_size(s, sizeof s, h.dbytes[id], sst);
      put_name(m, id, 0, out);
      fprintf(out, " holds %s: %" PRIu64 " allocs, %" PRIu64 " frees\n", s,
              h.nalloc[id], h.nfree[id]);
    }
  }
  fputs(!json ? "\n" : h.n ? "\n    ],\n" : "],\n", out);
  heap_sum_free(&h);
  return 0;
}

/* "function_alias_<k>:", then every non-empty line of the chunk text
 * numbered from 1 (empty lines neither printed nor counted), then Lua's
 * print("\n"): two newlines. */
static void print_aliases(const memreport *m, FILE *out)
{
  if (!m->naliases || pre_alias(m))
    return;
  fputs("ALIASES:\n", out);
  for (size_t k = 0; k < m->naliases; k++) {
    size_t len;
    const char *s = rep_strpool_get(m->names, m->aliases[k], &len);
    fprintf(out, "function_alias_%zu:\n", k + 1);
    unsigned lineno = 1;
    size_t i = 0;
    while (i < len) {
      size_t j = i;
      while (j < len && s[j] != '\n')
        j++;
      if (j > i) {
        fprintf(out, "%u\t| ", lineno++);
        fwrite(s + i, 1, j - i, out);
        fputc('\n', out);
      }
      i = j + 1;
    }
    fputs("\n\n", out);
  }
}

int memreport_print(memreport *m, FILE *out)
{
  if (!m || !out)
    return -1;
  memreport_era era = m->opt.era;
  if (era == MEMREPORT_ERA_AUTO)
    era = m->ljm_version == 1 || m->ljm_version == 2 ? MEMREPORT_ERA_BYTES
                                                     : MEMREPORT_ERA_CURRENT;
  enum size_style sst = m->opt.human_readable ? SIZE_HUMAN
                        : era == MEMREPORT_ERA_CURRENT ? SIZE_B
                                                       : SIZE_BYTES;
  int rc = 0;
  if (!m->opt.leak_only)
    for (int sec = 0; sec < SEC__N && rc == 0; sec++)
      rc = print_section(m, sec, sst, 0, out);
  if (rc == 0)
    rc = print_heap_summary(m, sst, 0, out);
  if (rc == 0)
    print_aliases(m, out);
  if (rc == 0 && (ferror(out) || fflush(out) != 0))
    rc = -1;
  return rc;
}

/* --- JSON ----------------------------------------------------------------- */

/* The report as one JSON object (ljpdump --format=json, key "report"): the
 * rows of `luajit -tm` in its order, sizes in bytes as numbers. */

int memreport_print_json(memreport *m, FILE *out)
{
  if (!m || !out)
    return -1;
  fputs("{\n", out);
  int rc = 0;
  if (!m->opt.leak_only)
    for (int sec = 0; sec < SEC__N && rc == 0; sec++)
      rc = print_section(m, sec, SIZE_B, 1, out);
  if (rc == 0)
    rc = print_heap_summary(m, SIZE_B, 1, out);
  if (rc == 0) {
    /* The alias texts: function_alias_<k> is aliases[k - 1]. */
    fputs("    \"aliases\": [", out);
    for (size_t k = 0; k < m->naliases && !pre_alias(m); k++) {
      fputs(k ? ", " : "", out);
      put_name(m, m->aliases[k], 1, out);
    }
    fputs("]\n  }", out);
  }
  if (rc == 0 && ferror(out))
    rc = -1;
  return rc;
}
