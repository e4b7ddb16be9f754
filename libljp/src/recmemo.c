/*
 * recmemo.c — resolved stacks of sample records already seen, keyed by the
 * records' raw bytes.
 *
 * A real capture is mostly repetition: tens of thousands of samples over a
 * few hundred distinct stacks.  Decoding a 400-frame stack again (a ULEB128
 * pair and a symbol lookup per frame) costs far more than recognising its
 * bytes, so the reader first asks this memo whether the bytes at the cursor
 * begin with the stack bytes of a record it resolved before.
 *
 * Recognising needs no delimiting scan.  The stack grammar is prefix-free
 * (the parser is deterministic and stops by itself), so when the input
 * begins with the bytes of an earlier successful record, it holds exactly
 * that record again.  The lookup tries the entry found last (samples come
 * in runs), then hashes the input in 64-byte blocks with four independent
 * lanes and, at every block boundary, probes a table for entries whose
 * last whole block ends there; a candidate is accepted only after a memcmp
 * of all its bytes.  A bit filter of the boundaries some entry goes past
 * stops the lookup of an unknown record early.  Every read stays inside the bytes the
 * caller says are available, so a record cut by the end of the input is
 * never matched and falls through to the decoder and its messages.
 *
 * Memory is bounded: a fixed number of entries and a byte budget, evicted
 * first in, first out (once full, rarely: see FULL_ADMIT).  A record is stored only the second time its bytes
 * are seen, so streams without repetition pay no copies.
 */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

#define BLK 64            /* bytes per hashed block and between probes */
#define MIN_LEN 64        /* shorter records decode as fast as they hash */
#define MAX_CHAIN 8       /* entries sharing one boundary key */
#define NENT 4096         /* entries */
#define BUCKET_BITS 13    /* 8192 buckets: most probes find an empty one */
#define SEEN_SLOTS 4096   /* first sightings (hashes only) */
#define NONE UINT32_MAX
#define BUDGET (8u << 20) /* bytes of raw copies and frames */
#define FULL_ADMIT 8      /* once full, one candidate in this many evicts */
#define MAX_DEPS 64       /* distinct prototype addresses kept per entry */
#define PRE_BITS 18       /* prefix filter: 2^18 bits, 32 KiB */
#define REBUILD 512       /* evictions before the prefix filter is rebuilt */

struct recmemo {
  recmemo_ent ent[NENT];
  uint32_t bucket[1u << BUCKET_BITS];
  uint64_t seen[SEEN_SLOTS];
  /* Bit (key of a boundary) is set when some entry goes on past that
   * boundary: a lookup stops at the first boundary where none does, so an
   * unknown record costs a block or two, not the longest entry.  Evicted
   * entries leave their bits behind until the next rebuild. */
  uint64_t pre[(1u << PRE_BITS) / 64];
  unsigned evicted;        /* since the last rebuild */
  uint32_t last;           /* the entry found or stored last, or NONE */
  uint64_t serial;         /* of the last entry stored or refreshed */
  size_t bytes;           /* held by entries */
  size_t max_len;         /* longest entry: how far a lookup may hash */
  unsigned hand;          /* next entry to evict (first in, first out) */
  unsigned count;
  unsigned declined;       /* candidates turned away while full */
};

typedef struct lanes {
  uint64_t a, b, c, d;
} lanes;

static inline uint64_t rd64(const uint8_t *p) {
  uint64_t w;
  memcpy(&w, p, 8);
  return w;
}

static inline uint64_t rotl(uint64_t x, unsigned k) {
  return (x << k) | (x >> (64 - k));
}

/* One lane step: multiply, then fold the high bits down, so every input
 * bit reaches the low bits the bucket index is not taken from. */
static inline uint64_t mixw(uint64_t h, uint64_t w) {
  h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
  return h ^ (h >> 29);
}

static inline void lanes_init(lanes *l, int has_lua) {
  l->a = 0x243f6a8885a308d3ULL ^ (uint64_t)has_lua;
  l->b = 0x13198a2e03707344ULL;
  l->c = 0xa4093822299f31d0ULL;
  l->d = 0x082efa98ec4e6c89ULL;
}

static inline void absorb(lanes *l, const uint8_t *p) {
  l->a = mixw(mixw(l->a, rd64(p)), rd64(p + 32));
  l->b = mixw(mixw(l->b, rd64(p + 8)), rd64(p + 40));
  l->c = mixw(mixw(l->c, rd64(p + 16)), rd64(p + 48));
  l->d = mixw(mixw(l->d, rd64(p + 24)), rd64(p + 56));
}

/* The key of the bytes hashed so far, off of them: one multiply, its high
 * half folded down (bucket index from the top bits, filter from the low). */
static inline uint64_t lanes_key(const lanes *l, size_t off) {
  uint64_t k = l->a ^ rotl(l->b, 17) ^ rotl(l->c, 31) ^ rotl(l->d, 47) ^
               (uint64_t)off;
  k *= 0xc2b2ae3d27d4eb4fULL;
  return k ^ (k >> 32);
}

static inline int pre_has(const recmemo *m, uint64_t k) {
  size_t b = (size_t)(k & ((1u << PRE_BITS) - 1));
  return (int)((m->pre[b >> 6] >> (b & 63)) & 1);
}

static inline void pre_set(recmemo *m, uint64_t k) {
  size_t b = (size_t)(k & ((1u << PRE_BITS) - 1));
  m->pre[b >> 6] |= 1ULL << (b & 63);
}

static inline uint32_t *bucket_of(recmemo *m, uint64_t key) {
  return &m->bucket[key >> (64 - BUCKET_BITS)];
}

recmemo *ljp__recmemo_new(void) {
  recmemo *m = calloc(1, sizeof(*m));
  if (!m)
    return NULL;
  for (size_t i = 0; i < (1u << BUCKET_BITS); i++)
    m->bucket[i] = NONE;
  m->last = NONE;
  return m;
}

void ljp__recmemo_free(recmemo *m) {
  if (!m)
    return;
  for (size_t i = 0; i < NENT; i++)
    free(m->ent[i].frames);
  free(m);
}

recmemo_ent *ljp__recmemo_find(recmemo *m, const uint8_t *p, size_t avail,
                               int has_lua) {
  if (!m->count)
    return NULL;
  /* Samples come in runs of one stack: the last entry is tried first,
   * with a memcmp and no hashing. */
  if (m->last != NONE) {
    recmemo_ent *e = &m->ent[m->last];
    if (e->frames && e->has_lua == has_lua && e->len <= avail &&
        memcmp(e->raw, p, e->len) == 0)
      return e;
  }
  size_t limit = avail < m->max_len ? avail : m->max_len;
  if (limit < MIN_LEN)
    return NULL;
  lanes l;
  lanes_init(&l, has_lua);
  size_t off = 0;
  for (; off < MIN_LEN; off += BLK)
    absorb(&l, p + off);
  for (;;) {
    uint64_t k = lanes_key(&l, off);
    for (uint32_t i = m->bucket[k >> (64 - BUCKET_BITS)]; i != NONE;
         i = m->ent[i].next) {
      recmemo_ent *e = &m->ent[i];
      if (e->key == k && e->has_lua == has_lua && e->len <= avail &&
          memcmp(e->raw, p, e->len) == 0) {
        m->last = i;
        return e;
      }
    }
    if (off + BLK > limit || !pre_has(m, k))
      return NULL;
    absorb(&l, p + off);
    off += BLK;
  }
}

/* The key an entry of len bytes is filed under: its last whole block.
 * With m, also marks the boundaries before it in the prefix filter. */
static uint64_t entry_key(recmemo *m, const uint8_t *p, size_t len,
                          int has_lua) {
  lanes l;
  lanes_init(&l, has_lua);
  size_t off = 0;
  for (; off + BLK <= len; off += BLK) {
    if (m && off >= MIN_LEN)
      pre_set(m, lanes_key(&l, off));
    absorb(&l, p + off);
  }
  return lanes_key(&l, off);
}

static void rebuild_prefixes(recmemo *m) {
  memset(m->pre, 0, sizeof(m->pre));
  for (size_t i = 0; i < NENT; i++)
    if (m->ent[i].frames)
      entry_key(m, m->ent[i].raw, m->ent[i].len, m->ent[i].has_lua);
  m->evicted = 0;
}

static void unlink_entry(recmemo *m, uint32_t idx) {
  recmemo_ent *e = &m->ent[idx];
  uint32_t *link = bucket_of(m, e->key);
  while (*link != idx)
    link = &m->ent[*link].next;
  *link = e->next;
  m->bytes -= e->cost;
  free(e->frames);
  e->frames = NULL;
  e->raw = NULL;
  e->cost = 0;
  m->count--;
  m->evicted++;
}

/* The distinct prototype addresses of the Lua frames and what they
 * resolved to, into deps (at most MAX_DEPS); RECMEMO_MANY when there are
 * more.
 * A set of twice MAX_DEPS slots finds repeats in one probe or two; stacks
 * repeat their frames, so the previous address is checked first. */
static size_t collect_deps(const ljp_frame *lua, size_t nlua,
                           recmemo_dep *deps) {
  uint64_t set[2 * MAX_DEPS];
  unsigned char used[2 * MAX_DEPS] = {0};
  size_t n = 0;
  uint64_t last = 0;
  for (size_t i = 0; i < nlua; i++) {
    uint64_t a = lua[i].value;
    if (lua[i].kind != LJP_FRAME_LUA || (n && a == last))
      continue;
    last = a;
    size_t j = (size_t)(ljp_hash64(a) & (2 * MAX_DEPS - 1));
    while (used[j] && set[j] != a)
      j = (j + 1) & (2 * MAX_DEPS - 1);
    if (used[j])
      continue;
    if (n == MAX_DEPS)
      return RECMEMO_MANY;
    used[j] = 1;
    set[j] = a;
    deps[n].addr = a;
    deps[n].sym = lua[i].sym;
    n++;
  }
  return n;
}

size_t ljp__recmemo_deps(recmemo_ent *e) {
  if (e->ndeps == RECMEMO_UNKNOWN)
    e->ndeps = collect_deps(e->frames, e->nlua, e->deps);
  return e->ndeps;
}

static void put_frames(recmemo_ent *e, const ljp_frame *lua, size_t nlua,
                       const ljp_frame *host, size_t nhost,
                       const recmemo_stamp *st) {
  if (nlua)
    memcpy(e->frames, lua, nlua * sizeof(*lua));
  if (nhost)
    memcpy(e->frames + nlua, host, nhost * sizeof(*host));
  e->nlua = nlua;
  e->nhost = nhost;
  e->ndeps = RECMEMO_UNKNOWN; /* collected when first needed */
  e->stamp = *st;
}

uint64_t ljp__recmemo_store(recmemo *m, const uint8_t *p, size_t len,
                            int has_lua, const ljp_frame *lua, size_t nlua,
                            const ljp_frame *host, size_t nhost,
                            const recmemo_stamp *st) {
  if (len < MIN_LEN)
    return 0;
  uint64_t k = entry_key(NULL, p, len, has_lua);
  unsigned chain = 0;
  for (uint32_t i = *bucket_of(m, k); i != NONE; i = m->ent[i].next) {
    recmemo_ent *e = &m->ent[i];
    if (e->key == k && e->has_lua == has_lua && e->len == len &&
        memcmp(e->raw, p, len) == 0) {
      /* Seen before, resolved against an older table: refresh it.  The
       * same bytes hold the same number of frames. */
      if (e->nlua == nlua && e->nhost == nhost)
        put_frames(e, lua, nlua, host, nhost, st);
      return 0;
    }
    chain++;
  }
  if (chain >= MAX_CHAIN)
    return 0;
  /* Only records that repeat are worth a copy. */
  uint64_t fh = ljp_hash64(k ^ ljp__hash_bytes(p + (len & ~(size_t)(BLK - 1)),
                                              len & (BLK - 1)) ^
                           len);
  uint64_t *seen = &m->seen[fh & (SEEN_SLOTS - 1)];
  if (*seen != fh) {
    *seen = fh;
    return 0;
  }
  size_t nfr = nlua + nhost;
  size_t cost = nfr * sizeof(ljp_frame) + MAX_DEPS * sizeof(recmemo_dep) + len;
  if (cost > BUDGET / 16)
    return 0;
  /* A full memo evicts for one candidate in FULL_ADMIT: when the distinct
   * stacks outnumber what it holds, replacing an entry for every new one
   * would copy more than the hits save (and fault in fresh pages). */
  if (m->bytes + cost > BUDGET && m->declined++ % FULL_ADMIT)
    return 0;
  while (m->bytes + cost > BUDGET || m->ent[m->hand].frames) {
    if (m->ent[m->hand].frames)
      unlink_entry(m, m->hand);
    else
      m->hand = (m->hand + 1) % NENT;
  }
  recmemo_ent *e = &m->ent[m->hand];
  uint32_t idx = m->hand;
  m->hand = (m->hand + 1) % NENT;
  /* Frames and deps first: they need the alignment malloc gives. */
  e->frames = malloc(cost);
  if (!e->frames)
    return 0; /* not memoised, nothing else lost */
  e->deps = (recmemo_dep *)(void *)(e->frames + nfr);
  uint8_t *raw = (uint8_t *)(e->deps + MAX_DEPS);
  memcpy(raw, p, len);
  e->raw = raw;
  e->len = len;
  e->key = k;
  e->has_lua = has_lua;
  e->cost = cost;
  put_frames(e, lua, nlua, host, nhost, st);
  if (m->evicted >= REBUILD)
    rebuild_prefixes(m);
  entry_key(m, p, len, has_lua);
  uint32_t *b = bucket_of(m, k);
  e->next = *b;
  *b = idx;
  m->last = idx;
  m->bytes += cost;
  m->count++;
  if (len > m->max_len)
    m->max_len = len;
  e->serial = ++m->serial;
  return e->serial;
}
