/*
 * seedgen.c — writes the seed corpora of the fuzz targets.  Not run by the
 * tests: its output is checked in under corpus/ (regenerate with
 * `fuzz_seedgen TESTDATA OUTDIR`, then minimise as campaign.sh does).
 *
 * Seeds must be small, so the bundled captures are not copied: each is
 * re-encoded with its first few samples or memory events and only the
 * symbols those use, in the capture's own format versions.  Encoder-built
 * fixtures add every format combination with every record kind, and
 * hand-written folded text covers the text reader's corners.
 */
#include "ljp.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define KEEP_EVENTS 12
#define MAX_SYMS 4096
#define MAX_DEPTH 40

static const char *outdir;
static unsigned nseeds;

static void put(const char *target, const char *name, const void *p,
                size_t n, int opt_byte) {
  char path[1024];
  snprintf(path, sizeof(path), "%s/%s", outdir, target);
  mkdir(path, 0777);
  snprintf(path, sizeof(path), "%s/%s/%s", outdir, target, name);
  FILE *f = fopen(path, "wb");
  if (!f) {
    perror(path);
    exit(1);
  }
  if (opt_byte >= 0)
    fputc(opt_byte, f);
  fwrite(p, 1, n, f);
  if (fclose(f) != 0) {
    perror(path);
    exit(1);
  }
}

/* A profile seed goes to every target that reads profiles. */
static void put_profile(const char *name, const uint8_t *p, size_t n) {
  put("reader", name, p, n, -1);
  if (n <= 8192)
    put("reader_fd", name, p, n, -1);
  put("dbimport", name, p, n, -1);
  /* Spread the fold options over the seeds: view, style, weight, vmstate. */
  put("fold", name, p, n, (int)((nseeds * 37u + 5u) & 0xff));
  put("dump", name, p, n, (int)((nseeds * 53u + 1u) & 0xff));
  nseeds++;
}

/* ---- re-encoding the start of a capture ---- */

typedef struct keep {
  const ljp_symbol *syms[MAX_SYMS];
  size_t n;
} keep;

static int kept(const keep *k, const ljp_symbol *s) {
  for (size_t i = 0; i < k->n; i++)
    if (k->syms[i] == s)
      return 1;
  return 0;
}

static void use(keep *k, const ljp_symbol *s) {
  if (s && !kept(k, s) && k->n < MAX_SYMS)
    k->syms[k->n++] = s;
}

static void use_frame(keep *k, const ljp_frame *f) {
  use(k, f->sym);
  use(k, f->proto);
}

static void write_symbol(ljp_writer *w, const ljp_symbol *s, int initial) {
  switch (s->kind) {
  case LJP_SYM_LFUNC:
    if (initial)
      ljp_write_symtab_lfunc(w, s->addr, s->name, s->name_len, s->line);
    else
      ljp_write_event_lfunc(w, s->addr, s->name, s->name_len, s->line);
    break;
  case LJP_SYM_CFUNC:
    if (initial)
      ljp_write_symtab_cfunc(w, s->addr, s->name, s->name_len);
    else
      ljp_write_event_cfunc(w, s->addr, s->name, s->name_len);
    break;
  case LJP_SYM_TRACE:
    if (initial)
      ljp_write_symtab_trace(w, s->traceno, s->mcode, s->addr, s->line);
    else
      ljp_write_event_trace(w, s->traceno, s->addr, s->line);
    break;
  case LJP_SYM_OBJECT:
    ljp_write_event_object(w, s->addr, s->size, s->offset, s->name,
                           s->name_len, s->build_id, s->build_id_len);
    break;
  }
}

static void write_event(ljp_writer *w, const ljp_event *ev) {
  if (ev->type == LJP_EV_SAMPLE) {
    const ljp_sample *s = &ev->u.sample;
    if (s->vmstate == LJP_VMST_TRACE) {
      ljp_write_trace_sample(w, s->trace.value,
                             s->trace.proto ? s->trace.proto->addr : 0,
                             s->trace.line);
      return;
    }
    /* Deep recursion makes big seeds: keep the innermost frames. */
    uint64_t host[MAX_DEPTH];
    size_t nh = s->host_count < MAX_DEPTH ? s->host_count : MAX_DEPTH;
    size_t nl = s->lua_count < MAX_DEPTH ? s->lua_count : MAX_DEPTH;
    for (size_t i = 0; i < nh; i++)
      host[i] = s->host[i].value;
    ljp_write_sample(w, s->vmstate, s->lua, nl, host, nh);
  } else if (ev->type == LJP_EV_MEMORY) {
    const ljp_mem_event *m = &ev->u.mem;
    ljp_write_mem(w, m->kind, m->source, m->loc.value, m->loc.line, m->mcode,
                  m->old_addr, m->old_size, m->new_addr, m->new_size);
  }
}

static void seed_capture(const char *path, const char *base) {
  ljp_reader *r = ljp_reader_new();
  if (!r || ljp_reader_open_path(r, path) != LJP_OK) {
    fprintf(stderr, "%s: %s\n", path, r ? ljp_reader_error(r) : "no memory");
    exit(1);
  }
  /* Pass 1: which symbols the first events use. */
  static keep k;
  k.n = 0;
  const ljp_event *ev;
  unsigned payload = 0, mid = 0;
  while (payload < KEEP_EVENTS && ljp_reader_next(r, &ev) == LJP_OK) {
    if (ev->type == LJP_EV_SAMPLE) {
      const ljp_sample *s = &ev->u.sample;
      for (size_t i = 0; i < s->lua_count && i < MAX_DEPTH; i++)
        use_frame(&k, &s->lua[i]);
      for (size_t i = 0; i < s->host_count && i < MAX_DEPTH; i++)
        use_frame(&k, &s->host[i]);
      use_frame(&k, &s->trace);
      payload++;
    } else if (ev->type == LJP_EV_MEMORY) {
      use_frame(&k, &ev->u.mem.loc);
      payload++;
    } else if (ev->type == LJP_EV_SYMBOL && !ev->u.symbol.initial &&
               mid++ < 4) {
      use(&k, ev->u.symbol.sym);
    }
  }
  ljp_reader_free(r);

  /* Pass 2: the same stream, keeping those symbols and events. */
  r = ljp_reader_new();
  ljp_reader_open_path(r, path);
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  payload = 0;
  while (payload < KEEP_EVENTS && ljp_reader_next(r, &ev) == LJP_OK) {
    switch (ev->type) {
    case LJP_EV_PROLOGUE:
      if (ev->u.prologue.magic[2] == 's') {
        int layout = ljp_reader_ljs_layout(r);
        ljp_write_symtab_begin(w, ev->u.prologue.version,
                               layout ? layout : 'b');
      } else {
        unsigned ljs = ljp_reader_ljs_version(r);
        int mc = ljp_reader_kind(r) == LJP_KIND_MEMPROF &&
                 ljp_reader_event_version(r) == 3 && ljs == 2 &&
                 ljp_reader_ljs_layout(r) == 'a';
        ljp_write_stream_begin(w, ljp_reader_kind(r),
                               ljp_reader_event_version(r),
                               (ljp_flavor)ev->u.prologue.reserved[0], mc);
      }
      break;
    case LJP_EV_SYMBOL:
      if (kept(&k, ev->u.symbol.sym))
        write_symbol(w, ev->u.symbol.sym, ev->u.symbol.initial);
      break;
    case LJP_EV_EPILOGUE:
      if (ljp_reader_kind(r) == LJP_KIND_UNKNOWN)
        ljp_write_symtab_end(w);
      break;
    default:
      write_event(w, ev);
      payload++;
    }
  }
  ljp_write_stream_end(w);
  if (ljp_writer_status(w) != LJP_OK) {
    fprintf(stderr, "%s: re-encoding failed (%s)\n", path,
            ljp_status_name(ljp_writer_status(w)));
    exit(1);
  }
  size_t n;
  const uint8_t *p = ljp_writer_data(w, &n);
  char name[256];
  snprintf(name, sizeof(name), "cap-%s", base);
  put_profile(name, p, n);
  ljp_writer_free(w);
  ljp_reader_free(r);
}

static void seed_captures(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) {
    perror(dir);
    exit(1);
  }
  struct dirent *e;
  char *names[256];
  size_t n = 0;
  while ((e = readdir(d)) && n < 256) {
    size_t len = strlen(e->d_name);
    if (len > 4 && strcmp(e->d_name + len - 4, ".bin") == 0)
      names[n++] = strdup(e->d_name);
  }
  closedir(d);
  for (size_t i = 0; i < n; i++) {
    char path[1024];
    snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
    names[i][strlen(names[i]) - 4] = '\0';
    seed_capture(path, names[i]);
    free(names[i]);
  }
}

/* ---- encoder-built fixtures: every combination, every record ---- */

static void fixture(unsigned ljs, int layout, ljp_kind kind, unsigned ev,
                    int mcode) {
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  static const char multi[] = "local x = 1\nreturn x\n";
  ljp_write_symtab_begin(w, ljs, layout);
  ljp_write_symtab_lfunc(w, 0x1000, "@a.lua", 6, 1);
  ljp_write_symtab_lfunc(w, 0x1100, multi, sizeof(multi) - 1, 2);
  if (ljs == 3) {
    ljp_write_symtab_cfunc(w, 0x400000, "main", 4);
    ljp_write_symtab_cfunc(w, 0x401000, "lua_pcall", 9);
  }
  if (ljs >= 2)
    ljp_write_symtab_trace(w, 1, 0x7f000000, 0x1000, 3);
  ljp_write_symtab_end(w);
  ljp_write_stream_begin(w, kind, ev, kind == LJP_KIND_SYSPROF && ev == 2
                                          ? LJP_FLAVOR_LUAJIT
                                          : LJP_FLAVOR_TARANTOOL,
                         mcode);
  if (kind == LJP_KIND_MEMPROF) {
    ljp_write_mem(w, LJP_MEM_ALLOC, LJP_SRC_INTERNAL, 0, 0, 0, 0, 0, 0x10, 32);
    ljp_write_mem(w, LJP_MEM_ALLOC, LJP_SRC_LFUNC, 0x1000, 2, 0, 0, 0, 0x20, 64);
    ljp_write_mem(w, LJP_MEM_REALLOC, LJP_SRC_LFUNC, 0x1100, 3, 0, 0x20, 64,
                  0x30, 128);
    ljp_write_mem(w, LJP_MEM_FREE, LJP_SRC_CFUNC, 0x401010, 0, 0, 0x10, 32, 0,
                  0);
    if (ev >= 2)
      ljp_write_mem(w, LJP_MEM_ALLOC, LJP_SRC_TRACE, 1, 0, 0x7f000010, 0, 0,
                    0x40, 16);
    if (ev == 3) {
      ljp_write_event_lfunc(w, 0x1200, "@b.lua", 6, 7);
      ljp_write_event_cfunc(w, 0x402000, "lua_call", 8);
      ljp_write_event_trace(w, 2, 0x1200, 8);
      ljp_write_mem(w, LJP_MEM_ALLOC, LJP_SRC_LFUNC, 0x1200, 9, 0, 0, 0, 0x50,
                    8);
      ljp_write_mem(w, LJP_MEM_ALLOC, LJP_SRC_TRACE, 2, 0, 0, 0, 0, 0x60, 8);
    }
  } else {
    ljp_frame lua[3];
    memset(lua, 0, sizeof(lua));
    lua[0].kind = LJP_FRAME_LUA;
    lua[0].value = 0x1000;
    lua[0].line = 1;
    lua[1].kind = LJP_FRAME_FFUNC;
    lua[1].value = 20;
    lua[2].kind = LJP_FRAME_CFUNC;
    lua[2].value = 0x401000;
    uint64_t host[4] = {0x401050, 0x401020, 0x400010, 0x400004};
    for (int vm = 0; vm <= 8; vm++)
      ljp_write_sample(w, vm, lua, vm >= 1 && vm <= 3 ? 3 : 0, host,
                       (size_t)(vm % 5));
    ljp_write_trace_sample(w, 1, 0x1000, 3);
    ljp_write_event_cfunc(w, 0x403000, "lua_cpcall", 10);
    if (ev == 2) {
      ljp_write_event_lfunc(w, 0x1100, "@c.lua", 6, 4);
      ljp_write_event_trace(w, 1, 0x1100, 5);
      ljp_write_trace_sample(w, 1, 0x1100, 5);
    }
    ljp_write_sample(w, 1, lua, 1, host, 4);
  }
  ljp_write_stream_end(w);
  if (ljp_writer_status(w) != LJP_OK) {
    fprintf(stderr, "fixture ljs %u%c %u %u: writer failed\n", ljs,
            layout ? layout : ' ', kind, ev);
    exit(1);
  }
  size_t n;
  const uint8_t *p = ljp_writer_data(w, &n);
  char name[64];
  snprintf(name, sizeof(name), "enc-ljs%u%c-%s%u%s", ljs,
           layout ? layout : '_', kind == LJP_KIND_MEMPROF ? "ljm" : "ljp",
           ev, mcode ? "-mcode" : "");
  put_profile(name, p, n);
  /* The same cut short: crashed producers. */
  snprintf(name, sizeof(name), "enc-ljs%u%c-%s%u%s-cut", ljs,
           layout ? layout : '_', kind == LJP_KIND_MEMPROF ? "ljm" : "ljp",
           ev, mcode ? "-mcode" : "");
  put_profile(name, p, n * 2 / 3);
  ljp_writer_free(w);
}

/* ljp x1: every vmstate with both stacks, trace samples with callers,
 * flags and coroutines, symbol events in between, multi-byte times. */
static void fixture_x1(void) {
  ljp_writer *w = ljp_writer_new(NULL, NULL, 0);
  ljp_frame lua[3];
  uint64_t host[4] = {0x401050, 0x401020, 0x400010, 0x400004};
  memset(lua, 0, sizeof(lua));
  lua[0].kind = LJP_FRAME_LUA;
  lua[0].value = 0x1000;
  lua[0].line = 1;
  lua[1].kind = LJP_FRAME_FFUNC;
  lua[1].value = 20;
  lua[2].kind = LJP_FRAME_CFUNC;
  lua[2].value = 0x401000;
  ljp_write_symtab_begin(w, 3, 0);
  ljp_write_symtab_lfunc(w, 0x1000, "@a.lua", 6, 1);
  ljp_write_symtab_cfunc(w, 0x400000, "main", 4);
  ljp_write_symtab_cfunc(w, 0x401000, "lua_pcall", 9);
  ljp_write_symtab_trace(w, 1, 0, 0x1000, 3);
  ljp_write_symtab_end(w);
  ljp_write_stream_begin_x1(w, LJP_FLAVOR_LUAJIT, LJP_TIMER_WALL, 1000000);
  for (int vm = 0; vm <= LJP_VMST_TRACE; vm++) {
    ljp_sample_x1 s;
    memset(&s, 0, sizeof(s));
    s.vmstate = vm;
    s.dt_ns = vm % 3 ? 999000u + (unsigned)vm : (uint64_t)1 << 33;
    s.coro = (uint64_t)(vm % 3);
    s.flags = (uint32_t)(vm % 4);
    s.traceno = 1;
    s.trace_proto = 0x1000;
    s.trace_line = 1;
    s.lua = lua;
    s.nlua = (size_t)(vm % 4);
    s.host = host;
    s.nhost = (size_t)(vm % 5);
    ljp_write_sample_x1(w, &s);
    if (vm == 4) {
      ljp_write_event_lfunc(w, 0x1100, "@c.lua", 6, 4);
      ljp_write_event_cfunc(w, 0x403000, "lua_cpcall", 10);
      ljp_write_event_trace(w, 2, 0x1100, 5);
    }
  }
  ljp_write_stream_end(w);
  if (ljp_writer_status(w) != LJP_OK) {
    fprintf(stderr, "fixture x1: writer failed\n");
    exit(1);
  }
  size_t n;
  const uint8_t *p = ljp_writer_data(w, &n);
  put_profile("enc-ljs3_-ljpx1", p, n);
  put_profile("enc-ljs3_-ljpx1-cut", p, n * 2 / 3);
  ljp_writer_free(w);
}

static void seed_fixtures(void) {
  fixture(1, 0, LJP_KIND_MEMPROF, 1, 0);
  fixture(2, 'a', LJP_KIND_MEMPROF, 2, 1);
  fixture(2, 'a', LJP_KIND_MEMPROF, 3, 1);
  fixture(2, 'b', LJP_KIND_MEMPROF, 3, 0);
  fixture(3, 0, LJP_KIND_MEMPROF, 3, 0);
  fixture(2, 'b', LJP_KIND_SYSPROF, 1, 0);
  fixture(3, 0, LJP_KIND_SYSPROF, 1, 0);
  fixture(3, 0, LJP_KIND_SYSPROF, 2, 0);
  fixture_x1();
}

/* ---- folded text ---- */

static void text(const char *name, int opt, const char *s) {
  put("folded", name, s, strlen(s), opt);
}

static void seed_folded_file(const char *path, const char *name, int opt) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return;
  char buf[2048];
  size_t n = fread(buf, 1, sizeof(buf), f);
  fclose(f);
  /* Whole lines only. */
  while (n > 0 && buf[n - 1] != '\n')
    n--;
  put("folded", name, buf, n, opt);
}

static void seed_folded(const char *testdata) {
  text("plain", 0x3c, "main;foo;bar 10\nmain;foo;baz 5\nmain;qux 1\n");
  text("reverse", 0x01, "a;b;c 3\na;b 2\na 1\n");
  text("diff", 0x02, "a;b 3 5\na;c 4 0\nd 0 7\n");
  text("fractions", 0x04, "a;b 1.5\na;c 2.49\na;d 0.0\nx 1.2.3\n");
  text("bom-crlf", 0x08, "\xEF\xBB\xBFroot;child 7\r\nroot 2\r\n\r\n");
  text("spaces-tabs", 0x10, "frame with spaces;x\t3\n  \n;;; 4\na;;b; 1\n");
  text("utf8", 0x7c, "caf\xc3\xa9;\xe2\x82\xac;\xf0\x9f\x94\xa5 2\n\xff\xfe;\xc3 1\n"
                     "\x01\x02;<&>\"' 3\n");
  text("big-counts", 0x20, "a 9223372036854775807\nb 9223372036854775808\n"
                           "a;b 1\nc 99999999999999999999\n");
  text("no-newline", 0x40, "a;b 1\na;b;c 2");
  text("lua-names", 0x3c, "VMST_LFUNC;@a.lua:4;string.rep;lua_pcall;TRACE [3] "
                          "@a.lua:12 5\nINTERNAL 1\n");
  text("invalid", 0x80, "no count here\n123\n 5\nx -3\n");
  char path[1024];
  snprintf(path, sizeof(path), "%s/captures/sp_c_sandwich_jitoff_1ms.fold.txt",
           testdata);
  seed_folded_file(path, "ref-sandwich", 0x3c);
  snprintf(path, sizeof(path), "%s/captures/old/old_sp_v1_c_jiton.split.txt",
           testdata);
  seed_folded_file(path, "ref-split", 0x00);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s TESTDATA OUTDIR\n", argv[0]);
    return 2;
  }
  outdir = argv[2];
  if (mkdir(outdir, 0777) != 0 && errno != EEXIST) {
    perror(outdir);
    return 1;
  }
  char dir[1024];
  seed_fixtures();
  snprintf(dir, sizeof(dir), "%s/captures", argv[1]);
  seed_captures(dir);
  snprintf(dir, sizeof(dir), "%s/captures/old", argv[1]);
  seed_captures(dir);
  seed_folded(argv[1]);
  return 0;
}
