/*
 * cap_ehframe.c — .eh_frame_hdr / .eh_frame of a loaded object into the
 * unwind rows of cap_ehframe.h (x86-64).  Runs on the VM thread and may
 * allocate; it reads the object's mapped memory, so every read is checked
 * against the object's PT_LOAD ranges: a corrupt table gives fewer rows,
 * never a fault.
 *
 * Only what the handler can use is kept: the CFA rule (rsp/rbp + offset,
 * the PLT expression, the realigned-stack expression *(rbp + off)), where
 * rbp was saved, and whether the return address is undefined (the
 * outermost frame).  Everything else becomes a NOINFO row.
 */
#include "cap_ehframe.h"

#include <stdlib.h>
#include <string.h>

/* DWARF register numbers (x86-64 psABI). */
#define R_RBP 6
#define R_RSP 7
#define R_RA 16

/* Pointer encodings (LSB 2007, .eh_frame). */
#define PE_OMIT 0xff
#define PE_PCREL 0x10
#define PE_DATAREL 0x30
#define PE_INDIRECT 0x80

/* ---- bounded reader ------------------------------------------------------ */

typedef struct rd {
  uint64_t p, end;      /* current address, end of the readable window */
  int bad;
} rd;

/* The window [p, end) of m's segment that holds p, or bad. */
static rd rd_at(const cap_ehf_mem *m, uint64_t p)
{
  rd r = {p, p, 1};
  size_t i;
  for (i = 0; i < m->nseg; i++)
    if (p >= m->seg[i][0] && p < m->seg[i][1]) {
      r.end = m->seg[i][1];
      r.bad = 0;
      break;
    }
  return r;
}

static int rd_need(rd *r, uint64_t n)
{
  if (r->bad || r->end - r->p < n) {
    r->bad = 1;
    return 0;
  }
  return 1;
}

static uint64_t rd_u(rd *r, unsigned n)
{
  uint64_t v = 0;
  uint8_t b[8];
  unsigned i;
  if (!rd_need(r, n))
    return 0;
  memcpy(b, (const void *)(uintptr_t)r->p, n);
  for (i = 0; i < n; i++)
    v |= (uint64_t)b[i] << (8 * i);
  r->p += n;
  return v;
}

static uint64_t rd_uleb(rd *r)
{
  uint64_t v = 0;
  unsigned shift = 0;
  for (;;) {
    uint8_t b = (uint8_t)rd_u(r, 1);
    if (r->bad)
      return 0;
    if (shift < 64)
      v |= (uint64_t)(b & 0x7f) << shift;
    shift += 7;
    if (!(b & 0x80))
      return v;
  }
}

static int64_t rd_sleb(rd *r)
{
  uint64_t v = 0;
  unsigned shift = 0;
  uint8_t b;
  do {
    b = (uint8_t)rd_u(r, 1);
    if (r->bad)
      return 0;
    if (shift < 64)
      v |= (uint64_t)(b & 0x7f) << shift;
    shift += 7;
  } while (b & 0x80);
  if (shift < 64 && (b & 0x40))
    v |= ~(uint64_t)0 << shift;
  return (int64_t)v;
}

static int64_t sext(uint64_t v, unsigned bytes)
{
  unsigned sh = 64 - 8 * bytes;
  return (int64_t)(v << sh) >> sh;
}

/* Reads a pointer of encoding enc; datarel is relative to dbase.  Indirect
 * and text/func-relative encodings are not used for x86-64 code ranges:
 * bad. */
static uint64_t rd_ptr(rd *r, uint8_t enc, uint64_t dbase)
{
  uint64_t at = r->p, v;
  if (enc == PE_OMIT || (enc & PE_INDIRECT)) {
    r->bad = 1;
    return 0;
  }
  switch (enc & 0x0f) {
  case 0x00: v = rd_u(r, 8); break;
  case 0x01: v = rd_uleb(r); break;
  case 0x02: v = rd_u(r, 2); break;
  case 0x03: v = rd_u(r, 4); break;
  case 0x04: v = rd_u(r, 8); break;
  case 0x09: v = (uint64_t)rd_sleb(r); break;
  case 0x0a: v = (uint64_t)sext(rd_u(r, 2), 2); break;
  case 0x0b: v = (uint64_t)sext(rd_u(r, 4), 4); break;
  case 0x0c: v = rd_u(r, 8); break;
  default: r->bad = 1; return 0;
  }
  switch (enc & 0x70) {
  case 0x00: return v;
  case PE_PCREL: return v + at;
  case PE_DATAREL: return v + dbase;
  default: r->bad = 1; return 0;
  }
}

/* Skips a pointer of encoding enc (personality, LSDA). */
static void rd_skip_ptr(rd *r, uint8_t enc)
{
  if (enc == PE_OMIT)
    return;
  switch (enc & 0x0f) {
  case 0x00: case 0x04: case 0x0c: rd_u(r, 8); break;
  case 0x01: rd_uleb(r); break;
  case 0x09: rd_sleb(r); break;
  case 0x02: case 0x0a: rd_u(r, 2); break;
  case 0x03: case 0x0b: rd_u(r, 4); break;
  default: r->bad = 1; break;
  }
}

/* An entry (CIE or FDE) at p: its body window after the length field. */
static rd rd_entry(const cap_ehf_mem *m, uint64_t p, int *terminator)
{
  rd r = rd_at(m, p);
  uint64_t len = rd_u(&r, 4);
  *terminator = !r.bad && len == 0;
  if (len == 0xffffffffu)
    len = rd_u(&r, 8);
  if (!rd_need(&r, len))
    return r;
  r.end = r.p + len;
  return r;
}

/* ---- CIE ----------------------------------------------------------------- */

typedef struct cie {
  uint64_t addr;
  uint64_t code_align;
  int64_t data_align;
  uint64_t ra_reg;
  uint8_t fde_enc;
  int has_z;
  uint64_t insn, insn_end;
  int ok;
} cie;

static void parse_cie(const cap_ehf_mem *m, uint64_t addr, cie *c)
{
  int term;
  rd r = rd_entry(m, addr, &term);
  char aug[16];
  size_t na = 0;
  uint8_t ver;
  memset(c, 0, sizeof *c);
  c->addr = addr;
  c->fde_enc = 0;
  if (r.bad || term || rd_u(&r, 4) != 0)
    return;
  ver = (uint8_t)rd_u(&r, 1);
  if (ver != 1 && ver != 3 && ver != 4)
    return;
  for (;;) {
    char ch = (char)rd_u(&r, 1);
    if (r.bad || na + 1 >= sizeof aug)
      return;
    aug[na++] = ch;
    if (!ch)
      break;
  }
  if (ver == 4) {
    rd_u(&r, 1);        /* address size */
    rd_u(&r, 1);        /* segment selector size */
  }
  c->code_align = rd_uleb(&r);
  c->data_align = rd_sleb(&r);
  c->ra_reg = ver == 1 ? rd_u(&r, 1) : rd_uleb(&r);
  if (aug[0] == 'z') {
    uint64_t alen = rd_uleb(&r), aend;
    size_t i;
    c->has_z = 1;
    if (!rd_need(&r, alen))
      return;
    aend = r.p + alen;
    for (i = 1; aug[i]; i++) {
      switch (aug[i]) {
      case 'R': c->fde_enc = (uint8_t)rd_u(&r, 1); break;
      case 'P': rd_skip_ptr(&r, (uint8_t)rd_u(&r, 1)); break;
      case 'L': rd_u(&r, 1); break;
      case 'S': case 'B': break;
      default: r.p = aend; break;  /* unknown: the length says where */
      }
      if (r.bad || r.p >= aend)
        break;
    }
    r.p = aend;
  } else if (aug[0]) {
    return;             /* "eh" and other pre-'z' forms: not for x86-64 */
  }
  /* Rows know the return address only as column 16 (x86-64's). */
  if (r.bad || c->ra_reg != R_RA)
    return;
  c->insn = r.p;
  c->insn_end = r.end;
  c->ok = 1;
}

/* ---- CFA programs ---------------------------------------------------------- */

enum { CFA_REG, CFA_DEREF_RBP, CFA_PLT, CFA_OTHER };
enum { RULE_SAME, RULE_OFFSET, RULE_UNDEF, RULE_OTHER, RULE_AT_FP };

typedef struct cfs {
  uint8_t cfa_how, cfa_reg, rbp_how, ra_how;
  int64_t cfa_off, rbp_off, ra_off;
} cfs;

#define CAP_EHF_STACK 16

typedef struct prog {
  const cie *c;
  cfs s, init;          /* current, after the CIE's instructions */
  cfs stack[CAP_EHF_STACK];
  int depth;
  uint64_t loc, end, base;
  cap_uw_row **rows;
  size_t *n, *cap, floor;
  int started;         /* the FDE's first row is out */
  int oom;
} prog;

static int fits(int64_t v, int64_t lo, int64_t hi)
{
  return v >= lo && v <= hi;
}

static cap_uw_row to_row(const cfs *s)
{
  cap_uw_row w = {0, 0, 0, CAP_CFA_NOINFO};
  int64_t off = s->cfa_off;
  if (s->ra_how == RULE_UNDEF) {
    w.kind = CAP_CFA_ROOT;
    return w;
  }
  if (s->ra_how != RULE_OFFSET || s->ra_off != -8)
    return w;
  switch (s->cfa_how) {
  case CFA_REG:
    if (s->cfa_reg == R_RSP)
      w.kind = CAP_CFA_RSP;
    else if (s->cfa_reg == R_RBP)
      w.kind = CAP_CFA_RBP;
    else
      return w;
    break;
  case CFA_DEREF_RBP:
    w.kind = CAP_CFA_DEREF_RBP;
    break;
  case CFA_PLT:
    w.kind = CAP_CFA_PLT;
    break;
  default:
    return w;
  }
  if (w.kind == CAP_CFA_PLT) {
    w.off = (int16_t)off;
  } else {
    if (off % 8 || !fits(off / 8, INT16_MIN, INT16_MAX)) {
      w.kind = CAP_CFA_NOINFO;
      return w;
    }
    w.off = (int16_t)(off / 8);
  }
  if (s->rbp_how == RULE_OFFSET && s->rbp_off % 8 == 0 && s->rbp_off != 0 &&
      fits(s->rbp_off / 8, INT8_MIN, INT8_MAX)) {
    w.rbp = (int8_t)(s->rbp_off / 8);
  } else if (s->rbp_how == RULE_AT_FP && s->rbp_off % 8 == 0 &&
             fits(s->rbp_off / 8, INT8_MIN, INT8_MAX)) {
    w.rbp = (int8_t)(s->rbp_off / 8);
    w.kind |= CAP_ROW_RBP_AT_FP;
  } else if (s->rbp_how != RULE_SAME) {
    w.kind |= CAP_ROW_RBP_LOST;
  }
  return w;
}

static int row_same(const cap_uw_row *a, const cap_uw_row *b)
{
  return a->off == b->off && a->rbp == b->rbp && a->kind == b->kind;
}

/* Appends row w at object-relative pc, keeping the rows from floor on (this
 * object's) sorted: a row at
 * the same pc replaces the last one (keeping its FSTART), a row equal to
 * the previous one is dropped, a pc below the last row's (overlapping
 * FDEs) drops the rows it overlaps. */
static int push_row(cap_uw_row **rows, size_t *n, size_t *cap, size_t floor,
                    uint64_t pc, cap_uw_row w)
{
  if (pc > UINT32_MAX)
    return 0;
  w.pc = (uint32_t)pc;
  while (*n > floor && (*rows)[*n - 1].pc > w.pc)
    (*n)--;
  if (*n > floor && (*rows)[*n - 1].pc == w.pc) {
    cap_uw_row *last = &(*rows)[*n - 1];
    if (!(w.kind & CAP_ROW_GAP))
      w.kind = (uint8_t)(w.kind | (last->kind & CAP_ROW_FSTART));
    *last = w;
    return 0;
  }
  if (*n > floor && row_same(&(*rows)[*n - 1], &w))
    return 0;
  if (*n == *cap) {
    size_t nc = *cap ? *cap * 2 : 1024;
    cap_uw_row *np = realloc(*rows, nc * sizeof *np);
    if (!np)
      return -1;
    *rows = np;
    *cap = nc;
  }
  (*rows)[(*n)++] = w;
  return 0;
}

/* The row for [loc, next advance) is the state before the advance. */
static void emit(prog *g)
{
  cap_uw_row w = to_row(&g->s);
  if (g->loc >= g->end || g->loc < g->base)
    return;
  if (!g->started)
    w.kind |= CAP_ROW_FSTART;
  g->started = 1;
  if (push_row(g->rows, g->n, g->cap, g->floor, g->loc - g->base, w) != 0)
    g->oom = 1;
}

static void advance(prog *g, uint64_t delta)
{
  uint64_t d = delta * g->c->code_align;
  emit(g);
  g->loc = d > g->end - g->loc ? g->end : g->loc + d;
}

static void set_rule(cfs *s, uint64_t reg, int how, int64_t off)
{
  if (reg == R_RBP) {
    s->rbp_how = (uint8_t)how;
    s->rbp_off = off;
  } else if (reg == R_RA) {
    s->ra_how = (uint8_t)how;
    s->ra_off = off;
  }
}

static void restore_rule(prog *g, uint64_t reg)
{
  if (reg == R_RBP) {
    g->s.rbp_how = g->init.rbp_how;
    g->s.rbp_off = g->init.rbp_off;
  } else if (reg == R_RA) {
    g->s.ra_how = g->init.ra_how;
    g->s.ra_off = g->init.ra_off;
  }
}

/* The CFA expressions we can evaluate in the handler: glibc's and
 * binutils' PLT rule and the realigned-stack rule *(rbp + off). */
static void cfa_expr(cfs *s, rd *r, uint64_t len)
{
  static const uint8_t plt_head[] = {0x77, 0x08, 0x80, 0x00, 0x3f, 0x1a};
  static const uint8_t plt_tail[] = {0x2a, 0x33, 0x24, 0x22};
  uint8_t b[16];
  s->cfa_how = CFA_OTHER;
  if (!rd_need(r, len))
    return;
  if (len <= sizeof b) {
    memcpy(b, (const void *)(uintptr_t)r->p, (size_t)len);
    /* breg7 8; breg16 0; lit15; and; litN; ge; lit3; shl; plus */
    if (len == 11 && !memcmp(b, plt_head, 6) && b[6] >= 0x30 &&
        b[6] <= 0x3f && !memcmp(b + 7, plt_tail, 4)) {
      s->cfa_how = CFA_PLT;
      s->cfa_off = b[6] - 0x30;
    } else if (len >= 3 && b[0] == 0x76 && b[len - 1] == 0x06) {
      /* breg6 <sleb off>; deref */
      rd e = {r->p + 1, r->p + len - 1, 0};
      int64_t off = rd_sleb(&e);
      if (!e.bad && e.p == e.end) {
        s->cfa_how = CFA_DEREF_RBP;
        s->cfa_off = off;
      }
    }
  }
  r->p += len;
}

/* Whether the len-byte expression at r is "breg6 off" (*off set): where
 * gcc's realigned frames keep the caller's rbp, relative to their own. */
static int rbp_at_rbp(const rd *r, uint64_t len, int64_t *off)
{
  rd e = *r;
  if (len < 2 || !rd_need(&e, len) || rd_u(&e, 1) != 0x76)
    return 0;
  e.end = r->p + len;
  *off = rd_sleb(&e);
  return !e.bad && e.p == e.end;
}

/* A new CFA offset is meaningful only for a register rule; after an
 * expression the CFA is no longer known. */
static void cfa_offset(cfs *s, int64_t off)
{
  if (s->cfa_how == CFA_REG)
    s->cfa_off = off;
  else
    s->cfa_how = CFA_OTHER;
}

/* Runs the instructions in [r.p, r.end), emitting rows as it advances. */
static int run(prog *g, rd r)
{
  const cie *c = g->c;
  while (r.p < r.end && !r.bad) {
    uint8_t op = (uint8_t)rd_u(&r, 1);
    uint64_t reg, v;
    int64_t off;
    switch (op >> 6) {
    case 1: advance(g, op & 0x3f); continue;
    case 2:
      off = (int64_t)rd_uleb(&r) * c->data_align;
      set_rule(&g->s, op & 0x3f, RULE_OFFSET, off);
      continue;
    case 3: restore_rule(g, op & 0x3f); continue;
    default: break;
    }
    switch (op) {
    case 0x00: break;                                   /* nop */
    case 0x01:                                          /* set_loc */
      v = rd_ptr(&r, c->fde_enc, 0);
      if (r.bad || v < g->loc)
        return -1;
      emit(g);
      g->loc = v < g->end ? v : g->end;
      break;
    case 0x02: advance(g, rd_u(&r, 1)); break;
    case 0x03: advance(g, rd_u(&r, 2)); break;
    case 0x04: advance(g, rd_u(&r, 4)); break;
    case 0x05:                                          /* offset_extended */
      reg = rd_uleb(&r);
      set_rule(&g->s, reg, RULE_OFFSET, (int64_t)rd_uleb(&r) * c->data_align);
      break;
    case 0x06: restore_rule(g, rd_uleb(&r)); break;
    case 0x07: set_rule(&g->s, rd_uleb(&r), RULE_UNDEF, 0); break;
    case 0x08: set_rule(&g->s, rd_uleb(&r), RULE_SAME, 0); break;
    case 0x09:                                          /* register */
      reg = rd_uleb(&r);
      rd_uleb(&r);
      set_rule(&g->s, reg, RULE_OTHER, 0);
      break;
    case 0x0a:                                          /* remember_state */
      if (g->depth >= CAP_EHF_STACK)
        return -1;
      g->stack[g->depth++] = g->s;
      break;
    case 0x0b:                                          /* restore_state */
      if (g->depth <= 0)
        return -1;
      g->s = g->stack[--g->depth];
      break;
    case 0x0c:                                          /* def_cfa */
      g->s.cfa_how = CFA_REG;
      g->s.cfa_reg = (uint8_t)rd_uleb(&r);
      g->s.cfa_off = (int64_t)rd_uleb(&r);
      break;
    case 0x0d:                                          /* def_cfa_register */
      g->s.cfa_reg = (uint8_t)rd_uleb(&r);
      if (g->s.cfa_how != CFA_REG) {
        g->s.cfa_how = CFA_REG;
        g->s.cfa_off = 0;
      }
      break;
    case 0x0e:                                          /* def_cfa_offset */
      cfa_offset(&g->s, (int64_t)rd_uleb(&r));
      break;
    case 0x0f: cfa_expr(&g->s, &r, rd_uleb(&r)); break;
    case 0x10: case 0x16:                   /* expression, val_expression */
      reg = rd_uleb(&r);
      v = rd_uleb(&r);
      if (op == 0x10 && reg == R_RBP && rbp_at_rbp(&r, v, &off))
        set_rule(&g->s, reg, RULE_AT_FP, off);
      else
        set_rule(&g->s, reg, RULE_OTHER, 0);
      if (rd_need(&r, v))
        r.p += v;
      break;
    case 0x11:                                      /* offset_extended_sf */
      reg = rd_uleb(&r);
      set_rule(&g->s, reg, RULE_OFFSET, rd_sleb(&r) * c->data_align);
      break;
    case 0x12:                                          /* def_cfa_sf */
      g->s.cfa_how = CFA_REG;
      g->s.cfa_reg = (uint8_t)rd_uleb(&r);
      g->s.cfa_off = rd_sleb(&r) * c->data_align;
      break;
    case 0x13:                                      /* def_cfa_offset_sf */
      cfa_offset(&g->s, rd_sleb(&r) * c->data_align);
      break;
    case 0x14: case 0x15:                       /* val_offset(_sf) */
      reg = rd_uleb(&r);
      if (op == 0x14)
        rd_uleb(&r);
      else
        rd_sleb(&r);
      set_rule(&g->s, reg, RULE_OTHER, 0);
      break;
    case 0x2e: rd_uleb(&r); break;                      /* GNU_args_size */
    case 0x2f:                          /* GNU_negative_offset_extended */
      reg = rd_uleb(&r);
      set_rule(&g->s, reg, RULE_OFFSET, -(int64_t)rd_uleb(&r) * c->data_align);
      break;
    default:
      return -1;
    }
    if (g->oom)
      return -1;
  }
  return r.bad ? -1 : 0;
}

/* ---- FDEs -------------------------------------------------------------------- */

typedef struct fde_ref {
  uint64_t start, addr;
} fde_ref;

static int ref_cmp(const void *a, const void *b)
{
  const fde_ref *x = a, *y = b;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Parses the FDE at addr and appends its rows.  -1 only when out of
 * memory. */
static int do_fde(const cap_ehf_mem *m, uint64_t addr, uint64_t base,
                  cie *cc, cap_uw_row **rows, size_t *n, size_t *cap,
                  size_t floor)
{
  int term;
  rd r = rd_entry(m, addr, &term);
  uint64_t idp, id, start, range, cend;
  prog g;
  if (r.bad || term)
    return 0;
  idp = r.p;
  id = rd_u(&r, 4);
  if (r.bad || id == 0 || id > idp)
    return 0;
  if (cc->addr != idp - id)
    parse_cie(m, idp - id, cc);
  if (!cc->ok)
    return 0;
  start = rd_ptr(&r, cc->fde_enc, 0);
  range = rd_ptr(&r, cc->fde_enc & 0x0f, 0);
  if (cc->has_z) {
    uint64_t alen = rd_uleb(&r);
    if (rd_need(&r, alen))
      r.p += alen;
  }
  if (r.bad || start < base || range == 0 || start + range < start)
    return 0;
  memset(&g, 0, sizeof g);
  g.c = cc;
  g.s.cfa_how = CFA_OTHER;
  g.s.rbp_how = RULE_SAME;
  g.s.ra_how = RULE_OTHER;
  g.loc = start;
  g.end = start + range;
  g.base = base;
  g.rows = rows;
  g.n = n;
  g.cap = cap;
  g.floor = floor;
  {
    rd ci = {cc->insn, cc->insn_end, 0};
    /* A CIE's instructions must not advance: with loc at the end, any
     * advance emits nothing. */
    g.loc = g.end;
    if (run(&g, ci) != 0)
      g.s.cfa_how = CFA_OTHER;
    g.loc = start;
    g.init = g.s;
  }
  /* Rows of an FDE whose program we cannot follow end at the failure:
   * from there on the function is NOINFO. */
  if (run(&g, r) != 0) {
    if (g.oom)
      return -1;
    g.s.cfa_how = CFA_OTHER;
    g.s.ra_how = RULE_OTHER;
  }
  emit(&g);
  if (g.oom)
    return -1;
  cend = g.end - base;
  {
    cap_uw_row gap = {0, 0, 0, CAP_CFA_NOINFO | CAP_ROW_GAP};
    return push_row(rows, n, cap, floor, cend, gap);
  }
}

/* Adds an FDE reference to *v. */
static int add_ref(fde_ref **v, size_t *n, size_t *cap, uint64_t start,
                   uint64_t addr)
{
  if (*n == *cap) {
    size_t nc = *cap ? *cap * 2 : 256;
    fde_ref *nv = realloc(*v, nc * sizeof *nv);
    if (!nv)
      return -1;
    *v = nv;
    *cap = nc;
  }
  (*v)[*n].start = start;
  (*v)[*n].addr = addr;
  (*n)++;
  return 0;
}

/* The FDEs of the .eh_frame at eh, walked up to its zero terminator or
 * its segment's end.  -1 when out of memory. */
static int walk_eh(const cap_ehf_mem *m, uint64_t eh, fde_ref **v,
                   size_t *n)
{
  size_t cap = 0;
  uint64_t p = eh;
  cie cc;
  memset(&cc, 0, sizeof cc);
  for (;;) {
    int term;
    rd e = rd_entry(m, p, &term);
    uint64_t idp, id, next;
    if (e.bad || term)
      return 0;
    next = e.end;
    idp = e.p;
    id = rd_u(&e, 4);
    if (!e.bad && id != 0 && id <= idp) {
      if (cc.addr != idp - id)
        parse_cie(m, idp - id, &cc);
      if (cc.ok) {
        uint64_t st = rd_ptr(&e, cc.fde_enc, 0);
        if (!e.bad && add_ref(v, n, &cap, st, p) != 0)
          return -1;
      }
    }
    p = next;
  }
}

/* The FDEs listed by the binary-search table of .eh_frame_hdr, or found by
 * walking .eh_frame when there is no usable table.  -1 when out of
 * memory. */
static int list_fdes(const cap_ehf_mem *m, uint64_t hdr, fde_ref **v,
                     size_t *count)
{
  rd r = rd_at(m, hdr);
  uint8_t ver = (uint8_t)rd_u(&r, 1);
  uint8_t fp_enc = (uint8_t)rd_u(&r, 1);
  uint8_t cnt_enc = (uint8_t)rd_u(&r, 1);
  uint8_t tab_enc = (uint8_t)rd_u(&r, 1);
  uint64_t eh, n, i;
  if (r.bad || ver != 1)
    return 0;
  eh = rd_ptr(&r, fp_enc, hdr);
  if (r.bad)
    return 0;
  if (cnt_enc == PE_OMIT || tab_enc != 0x3b)
    return walk_eh(m, eh, v, count);
  n = rd_ptr(&r, cnt_enc, hdr);
  if (r.bad || n > ((uint64_t)1 << 26) || !rd_need(&r, n * 8))
    return 0;
  *v = malloc((n ? n : 1) * sizeof **v);
  if (!*v)
    return -1;
  for (i = 0; i < n; i++) {
    (*v)[i].start = hdr + (uint64_t)sext(rd_u(&r, 4), 4);
    (*v)[i].addr = hdr + (uint64_t)sext(rd_u(&r, 4), 4);
  }
  *count = (size_t)n;
  return 0;
}

static int rows_of(const cap_ehf_mem *m, fde_ref *v, size_t nf, int st,
                   uint64_t base, cap_uw_row **rows, size_t *n, size_t *cap)
{
  size_t i, floor = *n;
  cie cc;
  memset(&cc, 0, sizeof cc);
  for (i = 1; i < nf; i++)
    if (v[i].start < v[i - 1].start) {
      qsort(v, nf, sizeof *v, ref_cmp);
      break;
    }
  for (i = 0; st == 0 && i < nf; i++)
    if (do_fde(m, v[i].addr, base, &cc, rows, n, cap, floor) != 0)
      st = -1;
  free(v);
  return st;
}

int ljp__cap_ehf_rows(const cap_ehf_mem *m, uint64_t hdr, uint64_t base,
                      cap_uw_row **rows, size_t *n, size_t *cap)
{
  fde_ref *v = NULL;
  size_t nf = 0;
  int st = list_fdes(m, hdr, &v, &nf);
  return rows_of(m, v, nf, st, base, rows, n, cap);
}

int ljp__cap_ehf_rows_eh(const cap_ehf_mem *m, uint64_t eh, uint64_t base,
                         cap_uw_row **rows, size_t *n, size_t *cap)
{
  fde_ref *v = NULL;
  size_t nf = 0;
  int st = walk_eh(m, eh, &v, &nf);
  return rows_of(m, v, nf, st, base, rows, n, cap);
}
