/*
 * symtab.c — the symbol table as the stream builds it.
 *
 * Semantics follow the reference parser (FORMATS.md §8): a later definition
 * of a proto address, trace number or C address shadows the earlier one
 * from that point of the stream on, and C addresses resolve by floor (the
 * greatest dumped address <= the query).  Unlike the reference, shadowed
 * definitions stay alive (events already returned keep pointing at them),
 * and each carries a generation number so aggregations can keep reused
 * trace numbers apart.
 *
 * C symbols arrive by the thousand and are re-dumped identically over and
 * over (T16), so an exact repeat is detected with one hash probe and costs
 * nothing.  New C symbols go to an unsorted pending list that is merged into
 * the sorted array lazily, at the next floor lookup.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

void ljp__symtab_init(symtab *s, uint64_t max_symbols) {
  memset(s, 0, sizeof(*s));
  ljp__arena_init(&s->mem);
  s->max_symbols = max_symbols;
}

void ljp__symtab_free(symtab *s) {
  ljp__arena_free(&s->mem);
  ljp__u64map_free(&s->lfunc);
  ljp__u64map_free(&s->trace);
  ljp__u64map_free(&s->cfunc);
  ljp__u64map_free(&s->cnamed);
  ljp__u64map_free(&s->chunks);
  free(s->sorted);
  free(s->pending);
  free(s->aliases);
  free(s->objects);
  memset(s, 0, sizeof(*s));
}

static const char *intern_chunk(symtab *s, const char *text, size_t len) {
  uint64_t h = ljp__hash_bytes(text, len) | 1; /* never 0: keeps keys distinct from nothing */
  chunk_rec *head = ljp__u64map_get(&s->chunks, h);
  for (chunk_rec *c = head; c; c = c->next)
    if (c->len == len && memcmp(c->text, text, len) == 0)
      return c->text;
  chunk_rec *c = ljp__arena_alloc(&s->mem, sizeof(*c) + len + 1);
  if (!c)
    return NULL;
  c->next = head;
  c->len = len;
  c->alias = 0;
  c->multiline = memchr(text, '\n', len) != NULL;
  memcpy(c->text, text, len);
  c->text[len] = '\0';
  if (ljp__u64map_put(&s->chunks, h, c))
    return NULL;
  return c->text;
}

int ljp__symtab_use_chunk(symtab *s, const ljp_symbol *sym) {
  chunk_rec *c = chunk_of(sym);
  if (!c->multiline || c->alias)
    return 0;
  if (s->naliases == s->capaliases) {
    unsigned ncap = s->capaliases ? s->capaliases * 2 : 8;
    const ljp_symbol **na = realloc(s->aliases, ncap * sizeof(*na));
    if (!na) {
      s->oom = 1; /* callers resolve names mid-record: checked per record */
      return -1;
    }
    s->aliases = na;
    s->capaliases = ncap;
  }
  s->aliases[s->naliases++] = sym;
  c->alias = s->naliases;
  return 0;
}

void ljp__symtab_aliases_rollback(symtab *s, unsigned mark) {
  while (s->naliases > mark)
    chunk_of(s->aliases[--s->naliases])->alias = 0;
}

static int merge_pending(symtab *s);

/* Pending entries stay sorted by address (and definition order), so a
 * floor lookup is two binary searches.  They join the sorted array once
 * there are more than about sqrt(sorted) of them: a stream that defines a
 * new C symbol before every sample then costs O(sqrt n) per definition,
 * where merging at every lookup cost O(n) (quadratic over the stream). */
static int pending_push(symtab *s, uint64_t addr, const ljp_symbol *sym) {
  if (s->npending == s->cappending) {
    size_t ncap = s->cappending ? s->cappending * 2 : 256;
    csym_entry *np = realloc(s->pending, ncap * sizeof(*np));
    if (!np)
      return -1;
    s->pending = np;
    s->cappending = ncap;
  }
  size_t lo = 0, hi = s->npending;
  while (lo < hi) { /* after every entry at or below addr: newest last */
    size_t mid = lo + (hi - lo) / 2;
    if (s->pending[mid].addr <= addr)
      lo = mid + 1;
    else
      hi = mid;
  }
  memmove(s->pending + lo + 1, s->pending + lo,
          (s->npending - lo) * sizeof(*s->pending));
  csym_entry *e = &s->pending[lo];
  e->addr = addr;
  e->seq = s->pseq++;
  e->sym = sym;
  s->npending++;
  if (s->npending > 64 && (uint64_t)s->npending * s->npending > s->nsorted)
    merge_pending(s); /* out of memory: lookups still search both */
  return 0;
}

/* An arena copy of p[0..n), NUL-terminated; NULL when out of memory. */
static char *copy_text(symtab *s, const char *p, size_t n) {
  char *c = ljp__arena_alloc(&s->mem, n + 1);
  if (c) {
    if (n)
      memcpy(c, p, n);
    c[n] = '\0';
  }
  return c;
}

const ljp_symbol *ljp__symtab_define(symtab *s, const ljp_symbol *def, int *dup,
                                     int *redefined, ljp_status *err) {
  u64map *map;
  uint64_t key;
  *dup = *redefined = 0;
  switch (def->kind) {
  case LJP_SYM_LFUNC: map = &s->lfunc; key = def->addr; break;
  case LJP_SYM_CFUNC: map = &s->cfunc; key = def->addr; break;
  default: map = &s->trace; key = def->traceno; break;
  }
  const ljp_symbol *old = ljp__u64map_get(map, key);
  uint64_t named_key = 0;
  if (def->kind == LJP_SYM_CFUNC) {
    /* One address often carries several names (undefined symbols sit at
     * an object's load base), so every re-dump walks the same names in
     * the same order: a definition seen before is reused, never copied. */
    named_key = ljp_hash64(def->addr ^ ljp__hash_bytes(def->name, def->name_len));
    const ljp_symbol *seen = ljp__u64map_get(&s->cnamed, named_key);
    if (seen && seen->addr == def->addr && seen->name_len == def->name_len &&
        memcmp(seen->name, def->name, def->name_len) == 0) {
      *dup = 1;
      if (old == seen)
        return old;
      *redefined = 1;
      if (ljp__u64map_put(map, key, (void *)seen) ||
          pending_push(s, key, seen)) {
        *err = LJP_E_NOMEM;
        return NULL;
      }
      return seen;
    }
  }
  if (old) {
    *redefined = 1;
    /* An identical repeat (C re-dumps, a proto re-announced, the same
     * loop recompiled under its old number after jit.flush()) names
     * exactly what the current definition names: keep one. */
    if (old->line == def->line && old->addr == def->addr &&
        old->mcode == def->mcode &&
        old->name_len == def->name_len &&
        (def->name_len == 0 || memcmp(old->name, def->name, def->name_len) == 0)) {
      *dup = 1;
      return old;
    }
  }
  if (s->nsymbols >= s->max_symbols) {
    *err = LJP_E_LIMIT;
    return NULL;
  }
  ljp_symbol *n = ljp__arena_alloc(&s->mem, sizeof(*n));
  if (!n) {
    *err = LJP_E_NOMEM;
    return NULL;
  }
  *n = *def;
  n->generation = old ? old->generation + 1 : 0;
  if (def->kind == LJP_SYM_LFUNC) {
    n->name = intern_chunk(s, def->name, def->name_len);
  } else if (def->kind == LJP_SYM_CFUNC) {
    n->name = copy_text(s, def->name, def->name_len);
  } else {
    n->name = NULL;
    n->name_len = 0;
  }
  if ((def->kind != LJP_SYM_TRACE && !n->name) ||
      ljp__u64map_put(map, key, n) ||
      (def->kind == LJP_SYM_CFUNC &&
       (pending_push(s, key, n) ||
        ljp__u64map_put(&s->cnamed, named_key, n)))) {
    *err = LJP_E_NOMEM;
    return NULL;
  }
  s->nsymbols++;
  return n;
}

static int cmp_entry(const void *a, const void *b) {
  const csym_entry *x = a, *y = b;
  if (x->addr != y->addr)
    return x->addr < y->addr ? -1 : 1;
  return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Merges the pending C symbols into the sorted array; for equal addresses
 * the latest definition wins (the reference AVL replaces on equal keys). */
static int merge_pending(symtab *s) {
  qsort(s->pending, s->npending, sizeof(csym_entry), cmp_entry);
  size_t w = 0;
  for (size_t i = 0; i < s->npending; i++) {
    if (w && s->pending[w - 1].addr == s->pending[i].addr)
      s->pending[w - 1] = s->pending[i];
    else
      s->pending[w++] = s->pending[i];
  }
  s->npending = w; /* still sorted if the allocation below fails */
  size_t need = s->nsorted + w;
  csym_entry *out = malloc((need ? need : 1) * sizeof(*out));
  if (!out)
    return -1;
  size_t i = 0, j = 0, k = 0;
  while (i < s->nsorted || j < w) {
    if (j == w || (i < s->nsorted && s->sorted[i].addr < s->pending[j].addr))
      out[k++] = s->sorted[i++];
    else if (i == s->nsorted || s->pending[j].addr < s->sorted[i].addr)
      out[k++] = s->pending[j++];
    else {
      out[k++] = s->pending[j++]; /* same address: the newer one */
      i++;
    }
  }
  free(s->sorted);
  s->sorted = out;
  s->nsorted = k;
  s->capsorted = need;
  s->npending = 0;
  return 0;
}

/* Index of the first entry above addr in a[0..n) sorted by address. */
static size_t upper_bound(const csym_entry *a, size_t n, uint64_t addr) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (a[mid].addr <= addr)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

const ljp_symbol *ljp__symtab_cfloor(symtab *s, uint64_t addr) {
  size_t i = upper_bound(s->sorted, s->nsorted, addr);
  size_t j = upper_bound(s->pending, s->npending, addr);
  const csym_entry *a = i ? &s->sorted[i - 1] : NULL;
  const csym_entry *b = j ? &s->pending[j - 1] : NULL;
  /* Pending entries are newer than sorted ones: at equal addresses they win. */
  if (b && (!a || b->addr >= a->addr))
    return b->sym;
  return a ? a->sym : NULL;
}

/* ---- objects (x1) ---------------------------------------------------------
 * A process maps tens of objects, and consumers look one up once per
 * distinct host frame, so a list searched newest first is enough; newest
 * first makes a range mapped again (dlclose, dlopen) name its new file. */

const ljp_symbol *ljp__symtab_object(symtab *s, const ljp_symbol *def,
                                     ljp_status *err) {
  if (s->nsymbols >= s->max_symbols) {
    *err = LJP_E_LIMIT;
    return NULL;
  }
  if (s->nobjects == s->capobjects) {
    size_t cap = s->capobjects ? s->capobjects * 2 : 16;
    const ljp_symbol **v = realloc(s->objects, cap * sizeof(*v));
    if (!v) {
      *err = LJP_E_NOMEM;
      return NULL;
    }
    s->objects = v;
    s->capobjects = cap;
  }
  ljp_symbol *n = ljp__arena_alloc(&s->mem, sizeof(*n));
  if (!n) {
    *err = LJP_E_NOMEM;
    return NULL;
  }
  *n = *def;
  n->name = copy_text(s, def->name, def->name_len);
  n->build_id = def->build_id_len ? copy_text(s, def->build_id,
                                              def->build_id_len)
                                  : NULL;
  if (!n->name || (def->build_id_len && !n->build_id)) {
    *err = LJP_E_NOMEM;
    return NULL;
  }
  s->objects[s->nobjects++] = n;
  s->nsymbols++;
  return n;
}

const ljp_symbol *ljp__symtab_object_at(const symtab *s, uint64_t addr) {
  for (size_t i = s->nobjects; i-- > 0;) {
    const ljp_symbol *o = s->objects[i];
    if (addr >= o->addr && addr - o->addr < o->size)
      return o;
  }
  return NULL;
}
