/*
 * cap_unwind.c — the capture core's own host-stack unwinder (x86-64).
 *
 * Build side (VM thread): dl_iterate_phdr lists the loaded objects; for
 * each, cap_ehframe.c turns its .eh_frame into sorted rows.  All rows live
 * in one array and the objects in another, sorted by address, inside one
 * "set" published through an atomic pointer.
 *
 * Handler side: two binary searches per frame and at most two 8-byte stack
 * reads, each inside the bounds the caller gives and 8-byte aligned.  The
 * CFA must climb strictly, so the walk ends after at most (hi - lo) / 8
 * steps even on a forged stack.
 *
 * A rebuild swaps the pointer and retires the old set; retired sets are
 * freed once no unwind is in progress (uw_inuse, incremented around every
 * unwind, is zero).  seq_cst on both sides: an unwind that increments after
 * the rebuild saw zero loads the pointer after the swap.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1   /* dl_iterate_phdr */
#endif
#include "cap_unwind.h"

#include <errno.h>
#include <link.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cap_ehframe.h"

/* Raw stack reads: AddressSanitizer's redzones are not errors here. */
#if defined(__GNUC__)
#define CAP_UW_RAW __attribute__((no_sanitize_address, noinline))
#else
#define CAP_UW_RAW
#endif

typedef struct uw_obj {
  uint64_t lo, hi;          /* executable segments, absolute */
  uint64_t base;            /* load bias: rows are relative to it */
  size_t row0, nrows;       /* its slice of the set's rows */
  size_t page0;             /* its slice of the set's page index */
} uw_obj;

/* Page index: for each 4 KiB of an object's code, how many of its rows
 * start at or before the page.  A lookup then binary-searches the few rows
 * of one page, not all of them: fewer cache misses on a cold handler. */
#define CAP_UW_PAGE 12

typedef struct uw_set {
  uw_obj *obj;
  size_t nobj;
  cap_uw_row *rows;
  size_t nrows;
  uint32_t *pages;
  size_t npages;
  uint64_t *bases;          /* sorted load biases, for the STALE test */
  size_t nbases;
  unsigned long long adds, subs;
  const struct r_debug *rdbg;   /* the loader's list, for the STALE test */
  struct uw_set *retired;   /* next in the retired list */
} uw_set;

static _Atomic(uw_set *) uw_cur;
static atomic_uint uw_inuse;
static uw_set *uw_retired;  /* VM thread only */

/* ---- building ---------------------------------------------------------- */

typedef struct build {
  uw_set *s;
  size_t objcap, rowcap, basecap;
  int oom;
} build;

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
  size_t nc;
  void *np;
  if (need <= *cap)
    return 0;
  nc = *cap ? *cap * 2 : 64;
  while (nc < need)
    nc *= 2;
  np = realloc(*p, nc * elem);
  if (!np)
    return -1;
  *p = np;
  *cap = nc;
  return 0;
}

#define CAP_UW_MAXSEG 32

static int on_object(struct dl_phdr_info *info, size_t size, void *arg)
{
  build *b = arg;
  uw_set *s = b->s;
  uint64_t seg[CAP_UW_MAXSEG][2];
  cap_ehf_mem m = {(const uint64_t (*)[2])seg, 0};
  uint64_t lo = UINT64_MAX, hi = 0, hdr = 0;
  uw_obj *o;
  int i;
  (void)size;
  if (b->oom)
    return 1;
  s->adds = info->dlpi_adds;
  s->subs = info->dlpi_subs;
  if (grow((void **)&s->bases, &b->basecap, s->nbases + 1, sizeof *s->bases)) {
    b->oom = 1;
    return 1;
  }
  s->bases[s->nbases++] = info->dlpi_addr;
  for (i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uint64_t a = info->dlpi_addr + ph->p_vaddr;
    if (ph->p_type == PT_LOAD) {
      if ((ph->p_flags & PF_R) && m.nseg < CAP_UW_MAXSEG) {
        seg[m.nseg][0] = a;
        seg[m.nseg][1] = a + ph->p_memsz;
        m.nseg++;
      }
      if (ph->p_flags & PF_X) {
        if (a < lo)
          lo = a;
        if (a + ph->p_memsz > hi)
          hi = a + ph->p_memsz;
      }
    } else if (ph->p_type == PT_GNU_EH_FRAME) {
      hdr = a;
    } else if (ph->p_type == PT_DYNAMIC && !s->rdbg && s->nbases == 1) {
      /* The program's DT_DEBUG points at the loader's r_debug.  Its
       * exported _r_debug can be a copy made at start-up (a copy
       * relocation in the executable) that the loader no longer updates. */
      const ElfW(Dyn) *d = (const ElfW(Dyn) *)(uintptr_t)a;
      for (; d->d_tag != DT_NULL; d++)
        if (d->d_tag == DT_DEBUG)
          s->rdbg = (const struct r_debug *)(uintptr_t)d->d_un.d_ptr;
    }
  }
  if (hi <= lo)
    return 0;               /* no code */
  if (grow((void **)&s->obj, &b->objcap, s->nobj + 1, sizeof *s->obj)) {
    b->oom = 1;
    return 1;
  }
  o = &s->obj[s->nobj++];
  o->lo = lo;
  o->hi = hi;
  o->base = info->dlpi_addr;
  o->row0 = s->nrows;
  if (hdr) {
    if (ljp__cap_ehf_rows(&m, hdr, o->base, &s->rows, &s->nrows, &b->rowcap)) {
      b->oom = 1;
      return 1;
    }
  } else {
    /* No .eh_frame_hdr: the file's section headers locate .eh_frame. */
    const char *path = info->dlpi_name && info->dlpi_name[0]
                           ? info->dlpi_name
                           : s->nbases == 1 ? "/proc/self/exe" : NULL;
    uint64_t eh = path ? ljp__cap_ehf_file_section(path) : 0;
    if (eh && ljp__cap_ehf_rows_eh(&m, o->base + eh, o->base, &s->rows,
                                   &s->nrows, &b->rowcap)) {
      b->oom = 1;
      return 1;
    }
  }
  o->nrows = s->nrows - o->row0;
  return 0;
}

static int obj_cmp(const void *a, const void *b)
{
  const uw_obj *x = a, *y = b;
  return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int u64_cmp(const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

static size_t obj_pages(const uw_obj *o)
{
  return (size_t)((o->hi - o->lo) >> CAP_UW_PAGE) + 1;
}

static int index_pages(uw_set *s)
{
  size_t i, total = 0, at = 0;
  for (i = 0; i < s->nobj; i++)
    total += obj_pages(&s->obj[i]);
  s->pages = malloc((total ? total : 1) * sizeof *s->pages);
  if (!s->pages)
    return -1;
  s->npages = total;
  for (i = 0; i < s->nobj; i++) {
    uw_obj *o = &s->obj[i];
    const cap_uw_row *r = s->rows + o->row0;
    uint64_t start = o->lo - o->base;
    size_t p, np = obj_pages(o), j = 0;
    o->page0 = at;
    for (p = 0; p < np; p++, start += (uint64_t)1 << CAP_UW_PAGE) {
      while (j < o->nrows && r[j].pc <= start)
        j++;
      s->pages[at++] = (uint32_t)j;
    }
  }
  return 0;
}

static void set_free(uw_set *s)
{
  if (!s)
    return;
  free(s->obj);
  free(s->rows);
  free(s->pages);
  free(s->bases);
  free(s);
}

static uw_set *set_build(void)
{
  build b;
  memset(&b, 0, sizeof b);
  b.s = calloc(1, sizeof *b.s);
  if (!b.s)
    return NULL;
  dl_iterate_phdr(on_object, &b);
  if (b.oom) {
    set_free(b.s);
    errno = ENOMEM;
    return NULL;
  }
  qsort(b.s->obj, b.s->nobj, sizeof *b.s->obj, obj_cmp);
  qsort(b.s->bases, b.s->nbases, sizeof *b.s->bases, u64_cmp);
  if (index_pages(b.s) != 0) {
    set_free(b.s);
    errno = ENOMEM;
    return NULL;
  }
  return b.s;
}

static void reap(void)
{
  if (atomic_load(&uw_inuse) != 0)
    return;
  while (uw_retired) {
    uw_set *n = uw_retired->retired;
    set_free(uw_retired);
    uw_retired = n;
  }
}

static int publish(void)
{
  uw_set *s = set_build(), *old;
  if (!s)
    return -1;
  old = atomic_exchange(&uw_cur, s);
  if (old) {
    old->retired = uw_retired;
    uw_retired = old;
  }
  reap();
  return 0;
}

int ljp__cap_uw_init(void)
{
  return publish();
}

static int first_counts(struct dl_phdr_info *info, size_t size, void *arg)
{
  unsigned long long *c = arg;
  (void)size;
  c[0] = info->dlpi_adds;
  c[1] = info->dlpi_subs;
  return 1;
}

int ljp__cap_uw_refresh(void)
{
  unsigned long long c[2] = {0, 0};
  uw_set *s = atomic_load(&uw_cur);
  reap();
  dl_iterate_phdr(first_counts, c);
  if (s && s->adds == c[0] && s->subs == c[1])
    return 0;
  return publish();
}

void ljp__cap_uw_free(void)
{
  uw_set *s = atomic_exchange(&uw_cur, NULL);
  set_free(s);
  while (uw_retired) {
    uw_set *n = uw_retired->retired;
    set_free(uw_retired);
    uw_retired = n;
  }
}

void ljp__cap_uw_stats(size_t *objects, size_t *rows, size_t *bytes)
{
  uw_set *s = atomic_load(&uw_cur);
  *objects = s ? s->nobj : 0;
  *rows = s ? s->nrows : 0;
  *bytes = s ? sizeof *s + s->nobj * sizeof *s->obj +
               s->nrows * sizeof *s->rows + s->npages * sizeof *s->pages +
               s->nbases * sizeof *s->bases
             : 0;
}

/* ---- lookups (signal-safe) ------------------------------------------------- */

static const uw_obj *find_obj(const uw_set *s, uint64_t pc)
{
  size_t lo = 0, hi = s->nobj;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (s->obj[mid].lo <= pc)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0 || pc >= s->obj[lo - 1].hi)
    return NULL;
  return &s->obj[lo - 1];
}

/* Index (in s->rows) of the row covering pc in o, or SIZE_MAX. */
static size_t find_row(const uw_set *s, const uw_obj *o, uint64_t pc)
{
  uint64_t rel = pc - o->base;
  const cap_uw_row *r = s->rows + o->row0;
  size_t p = (size_t)((pc - o->lo) >> CAP_UW_PAGE), lo, hi;
  if (pc < o->base || rel > UINT32_MAX)
    return SIZE_MAX;
  lo = s->pages[o->page0 + p];
  hi = p + 1 < obj_pages(o) ? s->pages[o->page0 + p + 1] : o->nrows;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (r[mid].pc <= rel)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo == 0 ? SIZE_MAX : o->row0 + lo - 1;
}

/* Whether the loader lists an object the set does not know: the link map
 * in r_debug is what dl_iterate_phdr walks, and its nodes stay allocated
 * until the object is unloaded.  While the loader changes the list
 * (r_state not consistent) the answer is yes.  Without DT_DEBUG (a static
 * program) nothing can be loaded later: no. */
static int stale(const uw_set *s)
{
  const struct link_map *lm;
  int k;
  if (!s->rdbg)
    return 0;
  if (s->rdbg->r_state != RT_CONSISTENT)
    return 1;
  for (lm = s->rdbg->r_map, k = 0; lm && k < 4096; lm = lm->l_next, k++) {
    uint64_t a = (uint64_t)lm->l_addr;
    size_t lo = 0, hi = s->nbases;
    while (lo < hi) {
      size_t mid = lo + (hi - lo) / 2;
      if (s->bases[mid] < a)
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo == s->nbases || s->bases[lo] != a)
      return 1;
  }
  return 0;
}

/* Whether object o is still loaded, so that its code can be read: the
 * loader unmaps an object only with r_state at RT_DELETE, and unlinks it
 * from the list before it says RT_CONSISTENT again.  (Between this check
 * and the read, another thread would have to start and finish unmapping
 * it.)  Without DT_DEBUG nothing is ever unloaded. */
static int obj_loaded(const uw_set *s, const uw_obj *o)
{
  const struct link_map *lm;
  int k;
  if (!s->rdbg)
    return 1;
  if (s->rdbg->r_state != RT_CONSISTENT)
    return 0;
  for (lm = s->rdbg->r_map, k = 0; lm && k < 4096; lm = lm->l_next, k++)
    if ((uint64_t)lm->l_addr == o->base)
      return 1;
  return 0;
}

CAP_UW_RAW static uint64_t raw64(uint64_t a)
{
  return *(const volatile uint64_t *)(uintptr_t)a;
}

static int in_stack(uint64_t a, uint64_t lo, uint64_t hi)
{
  return !(a & 7) && a >= lo && a < hi && hi - a >= 8;
}

/* One step of frame w: the CFA and the return address, and rbp updated.
 * 0, or -1 when a value is off the stack or the CFA does not climb. */
static int step(const cap_uw_row *w, uint64_t pc, uint64_t sp, uint64_t *fp,
                int *fp_ok, uint64_t lo, uint64_t hi, uint64_t *cfa_out,
                uint64_t *ra)
{
  uint64_t cfa, a;
  switch (w->kind & CAP_CFA_MASK) {
  case CAP_CFA_RSP:
    cfa = sp + (uint64_t)((int64_t)w->off * 8);
    break;
  case CAP_CFA_RBP:
    if (!*fp_ok)
      return -1;
    cfa = *fp + (uint64_t)((int64_t)w->off * 8);
    break;
  case CAP_CFA_DEREF_RBP:
    a = *fp + (uint64_t)((int64_t)w->off * 8);
    if (!*fp_ok || !in_stack(a, lo, hi))
      return -1;
    cfa = raw64(a);
    break;
  case CAP_CFA_PLT:
    cfa = sp + 8 + ((pc & 15) >= (uint64_t)w->off ? 8 : 0);
    break;
  default:
    return -1;
  }
  /* The return address sits at CFA - 8, which must be on the stack and
   * above the previous frame's. */
  if (cfa <= sp || cfa < 8 || !in_stack(cfa - 8, lo, hi))
    return -1;
  *ra = raw64(cfa - 8);
  if (w->kind & CAP_ROW_RBP_AT_FP) {
    a = *fp + (uint64_t)((int64_t)w->rbp * 8);
    if (!*fp_ok || !in_stack(a, lo, hi))
      return -1;
    *fp = raw64(a);
  } else if (w->rbp) {
    a = cfa + (uint64_t)((int64_t)w->rbp * 8);
    if (!in_stack(a, lo, hi))
      return -1;
    *fp = raw64(a);
    *fp_ok = 1;
  } else if (w->kind & CAP_ROW_RBP_LOST) {
    *fp_ok = 0;
  }
  *cfa_out = cfa;
  return 0;
}

/* Whether a and b lie in the same FDE of one object: no function start
 * or gap between their rows (at most 4096 rows apart). */
static int same_fde(const uw_set *s, uint64_t a, uint64_t b)
{
  const uw_obj *o = find_obj(s, a);
  size_t ia, ib, i;
  if (!o || find_obj(s, b) != o)
    return 0;
  ia = find_row(s, o, a);
  ib = find_row(s, o, b);
  if (ia == SIZE_MAX || ib == SIZE_MAX)
    return 0;
  if (ia > ib) {
    i = ia;
    ia = ib;
    ib = i;
  }
  if (ib - ia > 4096 || (s->rows[ia].kind & CAP_ROW_GAP))
    return 0;
  for (i = ia + 1; i <= ib; i++)
    if (s->rows[i].kind & (CAP_ROW_FSTART | CAP_ROW_GAP))
      return 0;
  return 1;
}

/* The interrupted PC may be where the CFI does not describe the frame:
 * LuaJIT's interpreter has one FDE for all its code, exact in the body
 * but not in its entry and exit sequences (pushes, pops) nor in the
 * subroutines it calls inside (vm_mod, vm_floor...); or the PC is in code
 * without an FDE.  Then, for the first frame only, the return address is
 * looked for in the 16 slots on top of the stack: a value just after a
 * direct call (e8 rel32) in a known object, whose target lies in the
 * PC's own FDE.  *slot gets its index. */
#define CAP_UW_SCAN 16
CAP_UW_RAW static int leaf_call(const uw_set *s, uint64_t pc, uint64_t sp,
                                uint64_t lo, uint64_t hi, uint64_t *ra,
                                unsigned *slot)
{
  unsigned k;
  for (k = 0; k < CAP_UW_SCAN; k++) {
    uint64_t at = sp + 8 * k, a, target;
    const uw_obj *o;
    const volatile uint8_t *code;
    uint32_t rel;
    if (!in_stack(at, lo, hi))
      return 0;
    a = raw64(at);
    o = find_obj(s, a - 1);
    if (!o || a < 5 || a - 5 < o->lo || !obj_loaded(s, o))
      continue;
    code = (const volatile uint8_t *)(uintptr_t)(a - 5);
    if (code[0] != 0xe8)
      continue;
    rel = (uint32_t)code[1] | (uint32_t)code[2] << 8 |
          (uint32_t)code[3] << 16 | (uint32_t)code[4] << 24;
    target = a + (uint64_t)(int64_t)(int32_t)rel;
    if (target == pc || same_fde(s, target, pc)) {
      *ra = a;
      *slot = k;
      return 1;
    }
  }
  return 0;
}

static uint32_t walk(const uw_set *s, const cap_uw_regs *r, uint64_t lo,
                     uint64_t hi, uint64_t *out, uint32_t max,
                     uint32_t *flags)
{
  uint64_t pc = r->pc, sp = r->sp, fp = r->fp;
  uint64_t look = r->pc_is_return ? pc - 1 : pc;
  int fp_ok = 1;
  uint32_t n = 0;
  for (;;) {
    const uw_obj *o;
    const cap_uw_row *w;
    size_t i;
    uint64_t cfa = 0, ra = 0;
    unsigned slot;
    int rc, kind;
    if (n >= max) {
      *flags |= CAP_UW_TRUNCATED;
      return n;
    }
    out[n++] = pc;
    o = s ? find_obj(s, look) : NULL;
    i = o ? find_row(s, o, look) : SIZE_MAX;
    w = i != SIZE_MAX ? &s->rows[i] : NULL;
    kind = w ? w->kind & CAP_CFA_MASK : CAP_CFA_NOINFO;
    if (kind == CAP_CFA_ROOT) {
      *flags |= CAP_UW_ROOT;
      return n;
    }
    rc = kind == CAP_CFA_NOINFO
             ? -1
             : step(w, pc, sp, &fp, &fp_ok, lo, hi, &cfa, &ra);
    if (n == 1 && !r->pc_is_return && o &&
        (rc != 0 || !find_obj(s, ra - 1)) &&
        leaf_call(s, pc, sp, lo, hi, &ra, &slot)) {
      rc = 0;
      cfa = sp + 8 * slot + 8;
      /* Slots skipped may hold the caller's rbp: then it is unknown. */
      fp = r->fp;
      fp_ok = slot == 0;
    }
    if (rc != 0) {
      if (kind != CAP_CFA_NOINFO) {
        *flags |= CAP_UW_BADSTACK;
      } else {
        *flags |= CAP_UW_NOINFO;
        if (s && !o && stale(s))
          *flags |= CAP_UW_STALE;
      }
      return n;
    }
    if (ra == 0) {
      *flags |= CAP_UW_ROOT;
      return n;
    }
    sp = cfa;
    pc = ra;
    look = ra - 1;
  }
}

uint32_t ljp__cap_uw_unwind(const cap_uw_regs *r, uint64_t stack_lo,
                            uint64_t stack_hi, uint64_t *out, uint32_t max,
                            uint32_t *flags)
{
  uint32_t n;
  *flags = 0;
  atomic_fetch_add(&uw_inuse, 1);
  n = walk(atomic_load(&uw_cur), r, stack_lo, stack_hi, out, max, flags);
  atomic_fetch_sub(&uw_inuse, 1);
  return n;
}

int ljp__cap_uw_function_range(uint64_t pc, uint64_t *lo, uint64_t *hi)
{
  const uw_set *s = atomic_load(&uw_cur);
  const uw_obj *o = s ? find_obj(s, pc) : NULL;
  size_t i = o ? find_row(s, o, pc) : SIZE_MAX, a, b;
  const size_t end = o ? o->row0 + o->nrows : 0;
  if (i == SIZE_MAX || (s->rows[i].kind & CAP_ROW_GAP))
    return 0;
  for (a = i; a > o->row0 && !(s->rows[a].kind & CAP_ROW_FSTART); a--)
    if (s->rows[a - 1].kind & CAP_ROW_GAP)
      break;
  for (b = i + 1; b < end; b++)
    if (s->rows[b].kind & (CAP_ROW_GAP | CAP_ROW_FSTART))
      break;
  if (b == end)
    return 0;
  *lo = o->base + s->rows[a].pc;
  *hi = o->base + s->rows[b].pc;
  return 1;
}
