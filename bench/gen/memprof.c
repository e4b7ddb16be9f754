/*
 * memprof.c — ljm 3 event streams with a live heap.
 *
 * A fixed set of allocation sites (Lua proto + current line, Lua-C
 * functions, traces, internal) drawn from the seed, so longer streams
 * repeat the same sites.  The heap keeps about --live blocks: an event
 * picks a slot, allocates into it when empty, else reallocates (growth,
 * like tables and string buffers) or frees it.  Freed addresses are
 * reused, as allocators do, so one address is allocated many times over.
 * As in real programs, most frees come from the garbage collector (INTERNAL)
 * and most reallocations from the code that allocated the block.
 */
#include "gen.h"

#include <stdlib.h>
#include <string.h>

typedef struct site {
  ljp_source src;
  uint64_t addr, line;     /* proto+line, C function, trace number */
} site;

typedef struct block {
  uint64_t addr, size;     /* addr 0: slot empty */
  unsigned site;           /* where it was allocated */
} block;

#define RECYCLE 1024

static void draw_sites(site *s, unsigned n, const gen_world *w,
                       const gen_opts *o) {
  gen_rng r = {o->seed ^ 0x7369746573ULL}; /* "sites" */
  for (unsigned k = 0; k < n; k++) {
    unsigned x = gen_below(&r, 100);
    if (x < 55) {
      unsigned p = gen_below(&r, w->nprotos);
      s[k].src = LJP_SRC_LFUNC;
      s[k].addr = p; /* index: the address is looked up when written */
      s[k].line = w->protos[p].line + gen_below(&r, 200);
    } else if (x < 70) {
      s[k].src = LJP_SRC_INTERNAL;
    } else if (x < 85) {
      s[k].src = LJP_SRC_CFUNC;
      s[k].addr = w->cs[world_luac(w, gen_below(&r, GEN_NLUAC))].addr;
    } else {
      s[k].src = LJP_SRC_TRACE;
      s[k].addr = 1 + gen_below(&r, w->ntraces);
    }
  }
}

static uint64_t draw_size(gen_rng *r) {
  unsigned x = gen_below(r, 100);
  if (x < 70)
    return 16 + 8 * gen_below(r, 15);
  if (x < 90)
    return 128 + 16 * gen_below(r, 56);
  if (x < 98)
    return 1024 + 64 * gen_below(r, 240);
  return 16384 + 1024 * gen_below(r, 240);
}

typedef struct heap {
  block *b;
  unsigned nslots;
  uint64_t recycle[RECYCLE];
  unsigned nrecycle;
  uint64_t bump;
} heap;

static uint64_t heap_addr(heap *h, gen_rng *r, uint64_t size) {
  if (h->nrecycle && gen_pct(r, 60))
    return h->recycle[--h->nrecycle];
  uint64_t a = h->bump;
  h->bump += (size + 31) & ~(uint64_t)15;
  return a;
}

static void heap_release(heap *h, uint64_t addr) {
  if (h->nrecycle < RECYCLE)
    h->recycle[h->nrecycle++] = addr;
}

ljp_status gen_memprof(const gen_opts *o, gen_world *w, ljp_writer *wr,
                       gen_full_fn full, void *ctx, gen_stats *st) {
  unsigned nsites = o->unique ? o->unique : 1;
  heap h;
  memset(&h, 0, sizeof(h));
  h.nslots = (o->live ? o->live : 1) * 7 / 4 + 1; /* ~4/7 full when steady */
  h.bump = 0x7f2a40000010ULL;
  h.b = calloc(h.nslots, sizeof(*h.b));
  site *sites = calloc(nsites, sizeof(*sites));
  if (!h.b || !sites) {
    free(h.b);
    free(sites);
    return LJP_E_NOMEM;
  }
  draw_sites(sites, nsites, w, o);
  gen_rng r = {o->seed ^ 0x6576656e7473ULL}; /* "events" */
  ljp_status s = world_write_symtab(w, wr);
  if (s == LJP_OK)
    s = ljp_write_stream_begin(wr, LJP_KIND_MEMPROF, 3, LJP_FLAVOR_TARANTOOL, 0);
  uint64_t cfunc_events = 0;
  for (uint64_t i = 0; s == LJP_OK; i++) {
    if (o->count ? i >= o->count : (i % 64 == 0 && full(ctx)))
      break;
    if (o->trace_churn && i && i % o->trace_churn == 0) {
      s = world_churn_trace(w, wr);
      st->symbol_events++;
    }
    if (s == LJP_OK && o->proto_churn && i && i % o->proto_churn == 0) {
      s = world_churn_proto(w, wr);
      st->symbol_events++;
    }
    unsigned k = i < nsites ? (unsigned)i
                 : (unsigned)((uint64_t)gen_below(&r, nsites) *
                              gen_below(&r, nsites) / nsites);
    block *b = &h.b[gen_below(&r, h.nslots)];
    int realloc_ = b->addr && gen_pct(&r, 25);
    if (b->addr && !realloc_ && gen_pct(&r, 70))
      k = nsites; /* a free by the collector */
    else if (realloc_ && gen_pct(&r, 60))
      k = b->site;
    static const site gc_site = {LJP_SRC_INTERNAL, 0, 0};
    const site *si = k < nsites ? &sites[k] : &gc_site;
    uint64_t loc = si->src == LJP_SRC_LFUNC ? w->protos[si->addr].addr
                                            : si->addr;
    uint64_t line = si->src == LJP_SRC_LFUNC ? si->line : 0;
    if (s == LJP_OK && si->src == LJP_SRC_CFUNC && o->redump &&
        cfunc_events++ % o->redump == 0) {
      s = world_redump_cfuncs(w, wr);
      st->symbol_events += w->ncs;
    }
    if (s != LJP_OK)
      break;
    if (!b->addr) {
      b->site = k;
      b->size = draw_size(&r);
      b->addr = heap_addr(&h, &r, b->size);
      s = ljp_write_mem(wr, LJP_MEM_ALLOC, si->src, loc, line, 0, 0, 0,
                        b->addr, b->size);
      st->live_blocks++;
      st->live_bytes += b->size;
    } else if (realloc_) {
      uint64_t ns = b->size < 262144 && gen_pct(&r, 85) ? b->size * 2
                                                         : (b->size + 1) / 2;
      uint64_t na = heap_addr(&h, &r, ns);
      s = ljp_write_mem(wr, LJP_MEM_REALLOC, si->src, loc, line, 0, b->addr,
                        b->size, na, ns);
      heap_release(&h, b->addr);
      st->live_bytes += ns - b->size;
      b->addr = na;
      b->size = ns;
    } else {
      s = ljp_write_mem(wr, LJP_MEM_FREE, si->src, loc, line, 0, b->addr,
                        b->size, 0, 0);
      heap_release(&h, b->addr);
      st->live_blocks--;
      st->live_bytes -= b->size;
      b->addr = 0;
    }
    if (s == LJP_OK)
      st->records++;
  }
  st->unique = st->records < nsites ? (unsigned)st->records : nsites;
  if (s == LJP_OK)
    s = ljp_write_stream_end(wr);
  free(h.b);
  free(sites);
  return s;
}
