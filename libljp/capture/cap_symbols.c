/*
 * cap_symbols.c — names for host addresses, from the ELF symbol tables of
 * the loaded objects.
 *
 * dladdr() alone is not enough: it sees only dynamic symbols, so static
 * functions of the host (and everything in an executable linked without
 * -rdynamic) stay nameless.  Like Tarantool's lj_symtab.c we read each
 * object's file: .symtab when present, else the .symtab of its separate
 * debug file (cap_debuglink.c), else .dynsym; function symbols only.
 * Objects are listed with dl_iterate_phdr at start (and again when an address
 * falls outside all of them: a dlopen during the run), and each file is read
 * the first time one of its addresses needs a name.  Addresses inside no
 * sized symbol (stripped libluajit internals, JIT machine code) get a
 * fallback entry at the address itself, "libluajit-5.1.so.2+0xaa26", so the
 * floor lookup of a reader can never pick a wrong neighbour.
 *
 *
 * Two kinds of addresses get other names when their events are written
 * (ljp__cap_symbols_emit): a C function that Lua code reaches through a table
 * and that has no ELF name (or any, see ljp__cap_cnames_over_elf) is named by
 * that path, "cjson.encode" (cap_cnames.c; ljp__cap_symbols_lookup keeps giving
 * the ELF name), and JIT machine code of a known trace is named as the
 * trace (cap_tracenames.c).
 *
 * Runs on the VM thread only (start and safe points), never in the handler.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1   /* dl_iterate_phdr */
#endif
#include <elf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <gnu/libc-version.h>
#include <link.h>
#include <unwind.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cap_hash.h"
#include "cap_internal.h"
#include "cap_names.h"

#if UINTPTR_MAX > 0xffffffffu
#define SYM_TYPE(i) ELF64_ST_TYPE(i)
#define SYM_BIND(i) ELF64_ST_BIND(i)
#else
#define SYM_TYPE(i) ELF32_ST_TYPE(i)
#define SYM_BIND(i) ELF32_ST_BIND(i)
#endif

typedef struct cap_elfsym {
  uint64_t addr, size;
  uint32_t name;      /* offset in the module's pool */
  uint8_t global;
} cap_elfsym;

typedef struct cap_module {
  uint64_t base, lo, hi;
  uint64_t xlo, xhi;  /* executable segments */
  char *path;         /* file to read */
  const char *short_name;
  int loaded;         /* file read (or failed) */
  int announced;      /* its object event is written */
  uint64_t foff;      /* file offset of lo (the lowest PT_LOAD's) */
  char build_id[72];  /* GNU build-id as hex, "" when none */
  cap_elfsym *syms;
  size_t nsyms;
  char *pool;
} cap_module;

static cap_module *mods;
static size_t nmods;
static unsigned long long adds_seen;
static cap_map emitted;     /* address -> 1: symbol event written */

static void module_free(cap_module *m)
{
  free(m->path);
  free(m->syms);
  free(m->pool);
}

/* ---- listing objects ----------------------------------------------------- */

typedef struct list_ctx {
  cap_module *v;
  size_t n, cap;
  int oom;
} list_ctx;

static int list_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
  list_ctx *c = arg;
  cap_module m;
  uint64_t lo = UINT64_MAX, hi = 0, xlo = UINT64_MAX, xhi = 0;
  size_t i;
  (void)size;
  memset(&m, 0, sizeof m);
  for (i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    /* The loader mapped the notes: read the build-id there, not from the
     * file. */
    if (ph->p_type == PT_NOTE && !m.build_id[0])
      ljp__cap_notes_build_id(
          (const uint8_t *)(uintptr_t)(info->dlpi_addr + ph->p_vaddr),
          ph->p_memsz, m.build_id, sizeof m.build_id);
    if (ph->p_type != PT_LOAD)
      continue;
    if (info->dlpi_addr + ph->p_vaddr < lo)
      m.foff = ph->p_offset; /* this segment starts the range */
    if (ph->p_flags & PF_X) {
      if (info->dlpi_addr + ph->p_vaddr < xlo)
        xlo = info->dlpi_addr + ph->p_vaddr;
      if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > xhi)
        xhi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
    }
    if (info->dlpi_addr + ph->p_vaddr < lo)
      lo = info->dlpi_addr + ph->p_vaddr;
    if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > hi)
      hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
  }
  if (hi <= lo)
    return 0;
  m.base = info->dlpi_addr;
  m.lo = lo;
  m.hi = hi;
  m.xlo = xhi > xlo ? xlo : 0;
  m.xhi = xhi > xlo ? xhi : 0;
  if (info->dlpi_name && info->dlpi_name[0]) {
    m.path = strdup(info->dlpi_name);
  } else {
    /* The main executable has no name here. */
    char buf[4096];
    ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n < 0)
      n = 0;
    buf[n] = '\0';
    m.path = strdup(buf);
  }
  if (!m.path) {
    c->oom = 1;
    return 1;
  }
  m.short_name = strrchr(m.path, '/') ? strrchr(m.path, '/') + 1 : m.path;
  if (c->n == c->cap) {
    size_t nc = c->cap ? c->cap * 2 : 32;
    cap_module *nv = realloc(c->v, nc * sizeof *nv);
    if (!nv) {
      free(m.path);
      c->oom = 1;
      return 1;
    }
    c->v = nv;
    c->cap = nc;
  }
  c->v[c->n++] = m;
  return 0;
}

static int adds_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
  (void)size;
  *(unsigned long long *)arg = info->dlpi_adds;
  return 1;
}

/* (Re)lists the loaded objects, keeping the symbols already read. */
static int list_modules(void)
{
  list_ctx c;
  size_t i, j;
  memset(&c, 0, sizeof c);
  dl_iterate_phdr(list_cb, &c);
  if (c.oom) {
    for (i = 0; i < c.n; i++)
      module_free(&c.v[i]);
    free(c.v);
    return -1;
  }
  for (i = 0; i < c.n; i++)
    for (j = 0; j < nmods; j++)
      if (mods[j].loaded && mods[j].base == c.v[i].base &&
          mods[j].lo == c.v[i].lo && strcmp(mods[j].path, c.v[i].path) == 0) {
        c.v[i].loaded = 1;
        c.v[i].announced = mods[j].announced;
        c.v[i].syms = mods[j].syms;
        c.v[i].nsyms = mods[j].nsyms;
        c.v[i].pool = mods[j].pool;
        mods[j].syms = NULL;
        mods[j].pool = NULL;
        mods[j].nsyms = 0;
        break;
      }
  for (j = 0; j < nmods; j++)
    module_free(&mods[j]);
  free(mods);
  mods = c.v;
  nmods = c.n;
  dl_iterate_phdr(adds_cb, &adds_seen);
  {
    uint64_t lo[512], hi[512];
    size_t n = 0;
    for (i = 0; i < nmods && n < 512; i++)
      if (mods[i].xhi > mods[i].xlo) {
        lo[n] = mods[i].xlo;
        hi[n] = mods[i].xhi;
        n++;
      }
    ljp__cap_signal_publish_text(lo, hi, n);
  }
  return 0;
}

/* ---- reading one ELF file ------------------------------------------------ */

static int sym_cmp(const void *a, const void *b)
{
  const cap_elfsym *x = a, *y = b;
  if (x->addr != y->addr)
    return x->addr < y->addr ? -1 : 1;
  /* Same address: sized before unsized, global before local. */
  if ((x->size != 0) != (y->size != 0))
    return x->size ? -1 : 1;
  if (x->global != y->global)
    return x->global ? -1 : 1;
  return 0;
}

/* Maps the file at path read-only; NULL on failure. */
static const uint8_t *map_file(const char *path, size_t *size)
{
  struct stat st;
  void *p;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return NULL;
  if (fstat(fd, &st) != 0 || st.st_size < (off_t)sizeof(ElfW(Ehdr))) {
    close(fd);
    return NULL;
  }
  *size = (size_t)st.st_size;
  p = mmap(NULL, *size, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  return p == MAP_FAILED ? NULL : p;
}

/* The first section of the given type in the image, validated; NULL if
 * none or p is no ELF file of this process's class. */
static const ElfW(Shdr) *find_symsec(const uint8_t *p, size_t size,
                                     uint32_t type)
{
  const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)p;
  const ElfW(Shdr) *sh;
  size_t i;
  if (memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
      eh->e_ident[EI_CLASS] != (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32) ||
      eh->e_shentsize != sizeof(ElfW(Shdr)) || eh->e_shoff == 0 ||
      eh->e_shoff > size ||
      (size - eh->e_shoff) / sizeof(ElfW(Shdr)) < eh->e_shnum)
    return NULL;
  sh = (const ElfW(Shdr) *)(p + eh->e_shoff);
  for (i = 0; i < eh->e_shnum; i++)
    if (sh[i].sh_type == type) {
      const ElfW(Shdr) *s = &sh[i], *strsec;
      if (s->sh_link >= eh->e_shnum || s->sh_entsize != sizeof(ElfW(Sym)) ||
          s->sh_offset > size || s->sh_size > size - s->sh_offset)
        return NULL;
      strsec = &sh[s->sh_link];
      if (strsec->sh_type == SHT_NOBITS || strsec->sh_offset > size ||
          strsec->sh_size > size - strsec->sh_offset)
        return NULL;
      return s;
    }
  return NULL;
}

/* The length of a .symtab name without its symbol version: a debug file's
 * table names "__libc_start_main@@GLIBC_2.34" where .dynsym (and every
 * profile taken without the debug file) says "__libc_start_main". */
static size_t unversioned_len(const char *name, size_t len)
{
  const char *at = len > 1 ? memchr(name + 1, '@', len - 1) : NULL;
  return at ? (size_t)(at - name) : len;
}

/* Copies the function symbols of symsec into m.  Returns 1 when some were
 * read.  Every offset is checked against the file. */
static int read_syms(cap_module *m, const uint8_t *p, const ElfW(Shdr) *symsec)
{
  const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)p;
  const ElfW(Shdr) *strsec =
      (const ElfW(Shdr) *)(p + eh->e_shoff) + symsec->sh_link;
  const ElfW(Sym) *sy = (const ElfW(Sym) *)(p + symsec->sh_offset);
  size_t n = symsec->sh_size / sizeof(ElfW(Sym));
  const char *strs = (const char *)(p + strsec->sh_offset);
  size_t strsz = strsec->sh_size, i, k, best = 0;
  for (k = 0; k < 2; k++) {      /* pass 0 counts, pass 1 copies */
    size_t cnt = 0, pl = 0;
    for (i = 1; i < n; i++) {
      int type = SYM_TYPE(sy[i].st_info);
      size_t len;
      if ((type != STT_FUNC && type != STT_GNU_IFUNC) ||
          sy[i].st_shndx == SHN_UNDEF || sy[i].st_value == 0 ||
          sy[i].st_name == 0 || sy[i].st_name >= strsz)
        continue;
      len = strnlen(strs + sy[i].st_name, strsz - sy[i].st_name);
      len = unversioned_len(strs + sy[i].st_name, len);
      if (k == 1) {
        cap_elfsym *e = &m->syms[cnt];
        e->addr = m->base + sy[i].st_value;
        e->size = sy[i].st_size;
        e->name = (uint32_t)pl;
        e->global = SYM_BIND(sy[i].st_info) != STB_LOCAL;
        memcpy(m->pool + pl, strs + sy[i].st_name, len);
        m->pool[pl + len] = '\0';
      }
      cnt++;
      pl += len + 1;
    }
    if (k == 0) {
      if (cnt == 0 || pl > UINT32_MAX)
        return 0;
      m->syms = malloc(cnt * sizeof *m->syms);
      m->pool = malloc(pl);
      if (!m->syms || !m->pool) {
        free(m->syms);
        free(m->pool);
        m->syms = NULL;
        m->pool = NULL;
        return 0;
      }
    } else {
      m->nsyms = cnt;
    }
  }
  qsort(m->syms, m->nsyms, sizeof *m->syms, sym_cmp);
  /* Keep the best entry per address. */
  for (i = 0; i < m->nsyms; i++)
    if (best == 0 || m->syms[i].addr != m->syms[best - 1].addr)
      m->syms[best++] = m->syms[i];
  m->nsyms = best;
  return 1;
}

/* The .symtab of the separate debug file of a stripped object (see
 * cap_debuglink.c).  Only its symbols are used: its code sections are
 * NOBITS, and the symbol values are the same link-time addresses. */
static int read_debug_syms(cap_module *m, const uint8_t *p, size_t size)
{
  char path[4096];
  const uint8_t *d;
  const ElfW(Shdr) *s;
  size_t dsize;
  int ok = 0;
  if (ljp__cap_debugfile_find(p, size, m->path, path, sizeof path) != 0)
    return 0;
  d = map_file(path, &dsize);
  if (!d)
    return 0;
  s = find_symsec(d, dsize, SHT_SYMTAB);
  if (s)
    ok = read_syms(m, d, s);
  munmap((void *)d, dsize);
  return ok;
}

/* Reads the function symbols of m's file: .symtab, else the debug file's
 * .symtab, else .dynsym.  On any failure m simply has none (fallback names
 * are used). */
static void module_load(cap_module *m)
{
  const uint8_t *p;
  const ElfW(Shdr) *s;
  size_t size;

  m->loaded = 1;
  p = map_file(m->path, &size);
  if (!p)
    return;
  s = find_symsec(p, size, SHT_SYMTAB);
  if (s)
    read_syms(m, p, s);
  else if (!read_debug_syms(m, p, size)) {
    s = find_symsec(p, size, SHT_DYNSYM);
    if (s)
      read_syms(m, p, s);
  }
  munmap((void *)p, size);
}

/* ---- lookups ------------------------------------------------------------- */

static cap_module *find_module(uint64_t addr)
{
  size_t i;
  for (i = 0; i < nmods; i++)
    if (addr >= mods[i].lo && addr < mods[i].hi)
      return &mods[i];
  return NULL;
}

static cap_module *find_module_rescan(uint64_t addr)
{
  cap_module *m = find_module(addr);
  unsigned long long adds = 0;
  if (m)
    return m;
  dl_iterate_phdr(adds_cb, &adds);
  if (adds != adds_seen && list_modules() == 0)
    m = find_module(addr);
  return m;
}

int ljp__cap_symbols_init(void)
{
  size_t i;
  if (list_modules() != 0)
    return -1;
  /* Read the symbol tables now rather than at the first safe points: start
   * is the place for one-time costs. */
  for (i = 0; i < nmods; i++)
    if (!mods[i].loaded)
      module_load(&mods[i]);
  return 0;
}

static uint64_t *libc_fn;

static int unsafe_name(const char *n)
{
  return strstr(n, "mutex") != NULL || strncmp(n, "__lll_", 6) == 0 ||
         strstr(n, "rwlock") != NULL || strstr(n, "find_object") != NULL;
}

int ljp__cap_symbols_unsafe_setup(void)
{
  cap_module *g, *c;
  size_t i, n = 0;
  uint64_t glo = 0, ghi = 0, clo = 0, chi = 0;
  ljp__cap_signal_set_unsafe(0, 0, 0, 0, NULL, 0);
  free(libc_fn);
  libc_fn = NULL;
  /* libgcc_s is found by a function nobody wraps: a preloaded library
   * that interposes _Unwind_Backtrace would otherwise pass for it. */
  g = find_module((uint64_t)(uintptr_t)&_Unwind_GetCFA);
  if (g) {
    glo = g->xlo;
    ghi = g->xhi;
  }
  /* Not pthread_mutex_lock: sanitizers interpose it, and the mutex that
   * matters is libc's. */
  c = find_module((uint64_t)(uintptr_t)&gnu_get_libc_version);
  if (c && c != g && c != &mods[0]) {
    if (!c->loaded)
      module_load(c);
    libc_fn = malloc((c->nsyms + 1) * 2 * sizeof *libc_fn);
    if (!libc_fn)
      return -1;
    for (i = 0; i < c->nsyms; i++)
      if (c->syms[i].size && !unsafe_name(c->pool + c->syms[i].name)) {
        libc_fn[2 * n] = c->syms[i].addr;
        libc_fn[2 * n + 1] = c->syms[i].addr + c->syms[i].size;
        n++;
      }
    clo = c->xlo;
    chi = c->xhi;
  }
  ljp__cap_signal_set_unsafe(glo, ghi, clo, chi, libc_fn, n);
  return 0;
}

void ljp__cap_symbols_free(void)
{
  size_t i;
  ljp__cap_signal_set_unsafe(0, 0, 0, 0, NULL, 0);
  free(libc_fn);
  libc_fn = NULL;
  for (i = 0; i < nmods; i++)
    module_free(&mods[i]);
  free(mods);
  mods = NULL;
  nmods = 0;
  cap_map_free(&emitted);
  ljp__cap_tracenames_free();
}

int ljp__cap_symbols_module_range(uint64_t addr, uint64_t *lo, uint64_t *hi)
{
  cap_module *m = find_module_rescan(addr);
  if (!m)
    return 0;
  *lo = m->lo;
  *hi = m->hi;
  return 1;
}

int ljp__cap_symbols_is_main(uint64_t addr)
{
  /* dl_iterate_phdr lists the main program first. */
  return nmods > 0 && find_module_rescan(addr) == &mods[0];
}

int ljp__cap_symbols_lookup(uint64_t addr, cap_sym *s)
{
  cap_module *m = find_module_rescan(addr);
  size_t lo, hi;
  memset(s, 0, sizeof *s);
  s->start = s->end = addr;
  if (!m)
    return 0;
  s->module = m->short_name;
  s->base = m->base;
  if (!m->loaded)
    module_load(m);
  lo = 0;
  hi = m->nsyms;
  while (lo < hi) {            /* first symbol with addr > target */
    size_t mid = lo + (hi - lo) / 2;
    if (m->syms[mid].addr <= addr)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo > 0) {
    const cap_elfsym *e = &m->syms[lo - 1];
    if (addr < e->addr + e->size || (e->size == 0 && addr == e->addr)) {
      s->start = e->addr;
      s->end = e->addr + e->size;
      s->name = m->pool + e->name;
    }
  }
  return 1;
}

/* Should a C function at q that has no Lua-visible name make the names be
 * scanned again?  Only an address that can be a function Lua calls: a
 * function's entry, or an unnamed address in an object other than the
 * VM's (whose own C functions are builtins).  Interrupted PCs inside
 * functions and machine code do not count. */
static int maybe_cfunc(uint64_t q, const cap_sym *s)
{
  if (!s->module)
    return 0;
  if (s->name)
    return s->start == q;
  return cap_S.lj_is_main || q < cap_S.lj_lo || q >= cap_S.lj_hi;
}

/* x1 streams name the object of every host address (FORMATS.md §5.5,
 * 0x0D) before the first event that names an address inside it: profile
 * viewers group host code by object, and symbolizers need file and
 * build-id (pprof's mappings).  Tarantool's ljp 2 has no such event. */
static ljp_status announce_object(ljp_writer *w, uint64_t addr)
{
  cap_module *m;
  if (cap_S.format != 0x81 || !(m = find_module_rescan(addr)) ||
      m->announced)
    return LJP_OK;
  m->announced = 1;
  return ljp_write_event_object(w, m->lo, m->hi - m->lo, m->foff, m->path,
                                strlen(m->path), m->build_id,
                                strlen(m->build_id));
}

/* The emitted map: 1 = written under a fallback name, 2 = under its
 * Lua-visible name (cap_cnames.c), 3 = under its ELF name.  An address
 * written as 1 (or 3, when Lua names replace ELF names) is written again
 * once a rescan finds a Lua name for it: later events win. */
ljp_status ljp__cap_symbols_emit(ljp_writer *w, uint64_t addr, int is_return)
{
  cap_sym s;
  char buf[512];
  int n;
  uint64_t q = is_return && addr > 0 ? addr - 1 : addr, *v;
  const char *lname;
  ljp_status st;
  if (addr == 0)
    return LJP_OK;
  /* Machine code of a known trace: named as the trace. */
  if (ljp__cap_tracenames_emit(w, q, &st))
    return st;
  v = cap_map_get(&emitted, addr);
  if (v && (*v == 2 || (*v == 3 && !ljp__cap_cnames_over_elf()) ||
            !ljp__cap_cnames_get(addr)))
    return LJP_OK;
  /* Addresses met before were announced with their first event. */
  if ((st = announce_object(w, q)) != LJP_OK)
    return st;
  ljp__cap_symbols_lookup(q, &s);
  if (s.name) {
    lname = ljp__cap_cnames_over_elf() ? ljp__cap_cnames_get(s.start) : NULL;
    if (s.start != addr) {
      cap_map_put(&emitted, addr, 3);
      v = cap_map_get(&emitted, s.start);
      if (v && (*v == 2 || !lname))
        return LJP_OK;
    }
    if (!lname && !is_return && ljp__cap_cnames_over_elf() &&
        maybe_cfunc(q, &s))
      ljp__cap_cnames_miss(q);
    cap_map_put(&emitted, s.start, lname ? 2 : 3);
    if (lname)
      return ljp_write_event_cfunc(w, s.start, lname, strlen(lname));
    return ljp_write_event_cfunc(w, s.start, s.name, strlen(s.name));
  }
  lname = is_return ? NULL : ljp__cap_cnames_get(addr);
  if (lname) {
    cap_map_put(&emitted, addr, 2);
    return ljp_write_event_cfunc(w, addr, lname, strlen(lname));
  }
  if (!is_return && maybe_cfunc(q, &s))
    ljp__cap_cnames_miss(q);
  if (s.module)
    n = snprintf(buf, sizeof buf, "%s+0x%" PRIx64, s.module, addr - s.base);
  else
    n = snprintf(buf, sizeof buf, "0x%" PRIx64, addr);
  if (n < 0)
    n = 0;
  if ((size_t)n >= sizeof buf)
    n = (int)sizeof buf - 1;
  cap_map_put(&emitted, addr, 1);
  if (!s.module)
    ljp__cap_tracenames_mark(addr);
  return ljp_write_event_cfunc(w, addr, buf, (size_t)n);
}
