/*
 * stack.c — turning a sample's two stacks into the one a user reads.
 *
 * A sample carries the Lua stack of the running coroutine and the host
 * stack, both innermost first.  The merged view reads like the program ran:
 * host frames from _start down to where C entered the VM, then the Lua
 * frames that run there, and again host frames where a C or fast function
 * called back into Lua, and so on.
 *
 * The join points are the host frames that enter the VM: the lua_*call API
 * and the VM's own entries (call entries), and the coroutine switches
 * (thread entries).  The Lua stack covers only the running coroutine, so
 * its frames belong after the innermost thread entry.  The Lua stack is cut
 * into segments after every C or fast-function frame that has Lua frames
 * inside it; segment i goes after the i-th entry.  Producers drop host
 * frames (the default backtracer loses the innermost dozen, leaf mode keeps
 * none), so entries may be missing: leftover segments go at the end, in
 * order.  Lua frames are never dropped or reordered and no frame is
 * invented — except that a Lua C-function frame is left out where the host
 * stack shows the very same function right after it.
 */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct out_buf {
  ljp_frame *out;
  size_t cap, n;
  int drop_code; /* leave out host frames in trace machine code */
  const ljp_frame *code;    /* this host frame of the sample ... */
  const ljp_frame *code_as; /* ... is emitted as this one */
  int replaced;
} out_buf;

/* A host frame in the machine code of a trace: ljp's capture core names
 * trace code "TRACE [<n>] <chunk>:<line>". */
static int is_trace_code(const ljp_frame *f) {
  return f->sym && f->sym->name_len > 7 &&
         strncmp(f->sym->name, "TRACE [", 7) == 0;
}

static void emit(out_buf *o, const ljp_frame *f) {
  if (o->drop_code && f->kind == LJP_FRAME_HOST && is_trace_code(f))
    return;
  if (f == o->code) {
    f = o->code_as;
    o->replaced = 1;
  }
  if (o->n < o->cap)
    o->out[o->n] = *f;
  o->n++;
}

static int name_is(const ljp_frame *f, const char *const *names) {
  const char *n = f->sym ? f->sym->name : NULL;
  /* Every entry name starts "lua_" or "lj_": most host frames (libc, the
   * host program) are turned away without a string compare. */
  if (!n || n[0] != 'l' || (n[1] != 'u' && n[1] != 'j'))
    return 0;
  for (; *names; names++)
    if (strcmp(f->sym->name, *names) == 0)
      return 1;
  return 0;
}

static const char *const call_entries[] = {
    "lua_call", "lua_pcall", "lua_cpcall", "lua_callk", "lua_pcallk",
    "lj_vm_call", "lj_vm_pcall", "lj_vm_cpcall", NULL};
static const char *const thread_entries[] = {
    "lua_resume", "lj_vm_resume", "lj_ff_coroutine_resume",
    "lj_ff_coroutine_wrap_aux", NULL};
/* ljp's capture core names the whole interpreter of a stripped libluajit
 * after the start of its code: each such frame is one activation of the
 * VM, whichever API or fast function entered it. */
static const char *const vm_activation[] = {"lj_vm_interpreter", NULL};

/* coroutine.resume and the functions coroutine.wrap makes (ids 35 and 36
 * in every flavor's numbering).  A Lua stack that holds one carries the
 * frames of the coroutines that resumed the running one (ljp's capture
 * core writes them), so its entries are not those of one coroutine. */
static int resume_ffunc(const ljp_frame *f) {
  return f->kind == LJP_FRAME_FFUNC && (f->value == 35 || f->value == 36);
}

/* pcall and xpcall call Lua inside the VM itself (ids 20 and 21 in every
 * flavor's numbering): no host frame, no new entry. */
static int vm_internal_ffunc(const ljp_frame *f) {
  return f->value == 20 || f->value == 21;
}

/* Host frame i of the sample, outermost first. */
#define HOST(s, i) (&(s)->host[(s)->host_count - 1 - (i)])
/* Lua frame i of the sample, outermost first. */
#define LUA(s, i) (&(s)->lua[(s)->lua_count - 1 - (i)])

/* Does host frame h run the function of Lua frame b?  A Lua C function is
 * the very symbol; a fast function is implemented by lj_cf_<lib>_<name> or
 * lj_ff_<lib>_<name> (Tarantool's and LuaJIT's own names, the ones symbol
 * tables have; matched by the default numbering). */
static int host_runs(const ljp_frame *h, const ljp_frame *b) {
  if (!h->sym || !h->sym->name)
    return 0;
  if (b->kind == LJP_FRAME_CFUNC)
    return b->sym && h->sym == b->sym;
  const char *ff = ljp_ffname(LJP_FLAVOR_TARANTOOL,
                              b->value > 0xffff ? 0xffff : (unsigned)b->value);
  const char *n = h->sym->name;
  if (!ff || strncmp(n, "lj_", 3) != 0 ||
      (strncmp(n + 3, "cf_", 3) != 0 && strncmp(n + 3, "ff_", 3) != 0))
    return 0;
  n += 6;
  for (; *ff; ff++, n++)
    if (*n != (*ff == '.' ? '_' : *ff))
      return 0;
  return *n == '\0';
}

/* The interpreter's own frames between a VM entry and the C function it
 * calls (lj_BC_FUNCC, lj_vm_*). */
static int vm_glue(const ljp_frame *h) {
  const char *n = h->sym ? h->sym->name : NULL;
  return n && (strncmp(n, "lj_BC_", 6) == 0 || strncmp(n, "lj_vm_", 6) == 0);
}

static int is_boundary(const ljp_frame *f) {
  return f->kind == LJP_FRAME_CFUNC ||
         (f->kind == LJP_FRAME_FFUNC && !vm_internal_ffunc(f));
}

/* The merge.  entries[] holds, per Lua segment, the end (exclusive,
 * outermost-first host index) of the host frames that lead to it; seg_end
 * the segments' ends in the Lua stack.  incomplete: the host stack is cut
 * on its outer side (see ljp_sample_stack_ex in ljp.h). */
static void merged(out_buf *o, const ljp_sample *s, size_t *entries,
                   size_t *seg_end, int incomplete) {
  static const ljp_frame mark = {LJP_FRAME_MARK, LJP_MARK_HOST_INCOMPLETE,
                                 0, NULL, NULL, 0};
  size_t nh = s->host_count, nl = s->lua_count;
  /* Entry positions (outermost-first host indices, stored + 1).  A run of
   * adjacent entry frames (lua_pcall then lj_vm_pcall) is one entry, at
   * its last frame. */
  int resumers = 0;
  for (size_t i = 0; i < nl && !resumers; i++)
    resumers = resume_ffunc(LUA(s, i));
  size_t nentries = 0;
  int prev_activation = 0;
  for (size_t i = 0; i < nh; i++) {
    const ljp_frame *f = HOST(s, i);
    int thread = name_is(f, thread_entries);
    int activation = !thread && name_is(f, vm_activation);
    if (!thread && !activation && !name_is(f, call_entries)) {
      prev_activation = 0;
      continue;
    }
    if (thread && !resumers)
      nentries = 0; /* entries of outer coroutines do not run this stack */
    /* lua_pcall then the VM code it enters is one entry; two activations
     * of the interpreter in a row are two (a coroutine resumed from Lua). */
    if (nentries && entries[nentries - 1] == i && !prev_activation)
      entries[nentries - 1] = i + 1;
    else
      entries[nentries++] = i + 1;
    prev_activation = activation;
  }
  /* Segments: the Lua stack cut after each C or fast function that has
   * Lua frames inside it. */
  size_t nseg = 0;
  for (size_t i = 0; i < nl; i++)
    if (is_boundary(LUA(s, i)) || i + 1 == nl)
      seg_end[nseg++] = i + 1;
  size_t virt = 0; /* segments with no host frame before them */
  if (!incomplete && nl && nentries > nseg &&
      ((s->has_time && (s->flags & LJP_SAMPLE_LUA_INCOMPLETE)) ||
       LUA(s, nl - 1)->kind == LJP_FRAME_LUA)) {
    /* More entries than the Lua stack has segments.  A running Lua
     * function runs in the innermost VM activation, so when the innermost
     * frame is one (or the x1 flag says the Lua stack was cut on its outer
     * side, caught mid-update) the segments go after the innermost
     * entries and the outer entries are plain host frames.  (When a C
     * function runs, extra inner entries may be its own calls into the
     * VM, such as load's lua_cpcall of the parser: matched from the
     * outside as before.) */
    memmove(&entries[0], &entries[nentries - nseg], nseg * sizeof(*entries));
    nentries = nseg;
  }
  if (incomplete) {
    /* The stack was cut on its outer side: the entries that are left are
     * the innermost ones and lead to the innermost segments.  The outer
     * segments get empty entries (no host frame before them), so the Lua
     * stack keeps its root and the partial host stack goes inside. */
    size_t skip = nseg > nentries ? nseg - nentries : 0;
    if (nseg && !skip)
      skip = 1; /* the outermost Lua frames are the root, always */
    size_t drop = nentries + skip > nseg ? nentries + skip - nseg : 0;
    if (skip || drop) {
      memmove(&entries[skip], &entries[drop],
              (nentries - drop) * sizeof(*entries));
      for (size_t j = 0; j < skip; j++)
        entries[j] = 0;
      virt = skip;
      nentries = nentries - drop + skip;
    }
  }
  size_t h = 0, start = 0;
  int pending = incomplete; /* the mark goes before the first host frame */
#define EMIT_HOST(i)                                                          \
  do {                                                                        \
    if (pending)                                                              \
      emit(o, &mark), pending = 0;                                            \
    emit(o, HOST(s, (i)));                                                    \
  } while (0)
  if (nentries == 0) {
    /* No visible entry: where the VM was entered is unknown, so every host
     * frame is outer to every Lua frame. */
    for (; h < nh; h++)
      EMIT_HOST(h);
  }
  for (size_t j = 0; j < nseg; j++) {
    if (j < nentries)
      for (; h < entries[j]; h++)
        EMIT_HOST(h);
    /* Host frames this segment's C function can be among: up to the entry
     * that starts the next segment, or all that are left. */
    size_t region = nh;
    if (j + 1 < nentries)
      region = entries[j + 1] ? entries[j + 1] - 1 : 0;
    size_t end = seg_end[j];
    const ljp_frame *b = is_boundary(LUA(s, end - 1)) ? LUA(s, end - 1) : NULL;
    for (size_t i = start; i < (b ? end - 1 : end); i++)
      emit(o, LUA(s, i));
    start = end;
    if (!b)
      continue;
    /* The C or fast function goes where the host stack runs it, named as
     * the Lua stack names it; if the host frame is not there, after the
     * interpreter's glue frames. */
    size_t p = h;
    while (p < region && !host_runs(HOST(s, p), b))
      p++;
    if (p < region) {
      for (; h < p; h++)
        EMIT_HOST(h);
      h++; /* the host frame of b itself */
      if (pending) /* it was the first host frame: the cut is above it */
        emit(o, &mark), pending = 0;
    } else if (j >= virt) {
      while (h < region && vm_glue(HOST(s, h)))
        EMIT_HOST(h++);
    } /* a segment with no visible entry: b before any host frame */
    emit(o, b);
    /* With no entry left, every remaining host frame runs inside b,
     * before whatever Lua it calls next. */
    if (j + 1 >= nentries)
      for (; h < nh; h++)
        EMIT_HOST(h);
  }
  for (; h < nh; h++)
    EMIT_HOST(h);
#undef EMIT_HOST
}

/* Tarantool's `luajit -ts` merge (FORMATS.md §9.3), bugs included (T8):
 * Lua frames are spliced in only at lua_call/lua_pcall, up to the first C
 * function, and at lua_cpcall the innermost Lua frame is removed. */
static void reference(out_buf *o, const ljp_sample *s, size_t *L) {
  /* L: the Lua stack as outermost-first indices, with removals. */
  size_t n = s->lua_count;
  for (size_t i = 0; i < n; i++)
    L[i] = i;
  for (size_t hi = 0; hi < s->host_count; hi++) {
    const ljp_frame *h = HOST(s, hi);
    emit(o, h);
    const char *nm = h->sym ? h->sym->name : NULL;
    if (!nm)
      continue;
    if (strncmp(nm, "lua_cpcall", 10) == 0) {
      if (n)
        n--;
    } else if (strncmp(nm, "lua_call", 8) == 0 ||
               strncmp(nm, "lua_pcall", 9) == 0) {
      if (!n)
        continue;
      size_t k = 0;
      while (k < n && LUA(s, L[k])->kind != LJP_FRAME_CFUNC)
        emit(o, LUA(s, L[k++]));
      if (k == n)
        k = n - 1; /* no C frame met: the last element goes */
      memmove(&L[k], &L[k + 1], (n - k - 1) * sizeof(*L));
      n--;
    }
  }
}

/* Outermost frames of a complete host stack: the process's and the
 * threads' entry points, in glibc and musl spellings. */
static const char *const host_roots[] = {
    "_start", "__libc_start_main", "__libc_start_call_main", "main",
    "start_thread", "clone", "clone3", "__clone", "thread_start", NULL};

LJP_API int ljp_sample_host_incomplete(const ljp_sample *s) {
  if (!s)
    return 0;
  if (s->has_time && (s->flags & LJP_SAMPLE_HOST_INCOMPLETE))
    return 1;
  if (s->host_count == 0)
    return 0; /* a state with no host stack: nothing cut */
  /* Older streams do not say, and leaf-mode x1 captures (the PC alone)
   * leave the flag clear: a stack is complete when one of its outermost
   * frames is a known root (stripped programs may leave _start and main
   * unnamed, but libc's start routine keeps its name). */
  for (size_t i = 0; i < s->host_count && i < 4; i++) {
    const ljp_frame *f = HOST(s, i);
    const char *n = f->sym ? f->sym->name : NULL;
    if (!n)
      continue;
    for (const char *const *r = host_roots; *r; r++)
      if (strcmp(n, *r) == 0)
        return 0;
  }
  return 1;
}

/* The host frame in the machine code of an x1 TRACE sample's trace, or
 * NULL: the innermost host frame named "TRACE [<n>]", n its number. */
static const ljp_frame *trace_code(const ljp_sample *s) {
  if (!s->has_time || s->trace.kind != LJP_FRAME_TRACE)
    return NULL;
  char want[32];
  int n = snprintf(want, sizeof(want), "TRACE [%llu]",
                   (unsigned long long)s->trace.value);
  for (size_t i = 0; i < s->host_count; i++) {
    const ljp_frame *f = &s->host[i];
    const char *nm = f->sym ? f->sym->name : NULL;
    if (nm && f->sym->name_len >= (size_t)n &&
        strncmp(nm, want, (size_t)n) == 0 &&
        (nm[n] == '\0' || nm[n] == ' '))
      return f;
  }
  return NULL;
}

/* The function a trace runs in, as a Lua frame (ljp 1 and 2 trace samples
 * carry only the trace and its start proto). */
static int trace_function(const ljp_sample *s, ljp_frame *fn) {
  const ljp_symbol *p = s->trace.proto;
  if (s->trace.kind != LJP_FRAME_TRACE || !p)
    return 0;
  memset(fn, 0, sizeof(*fn));
  fn->kind = LJP_FRAME_LUA;
  fn->value = p->addr;
  fn->line = p->line;
  fn->sym = p;
  return 1;
}

LJP_API size_t ljp_sample_stack_ex(const ljp_sample *s,
                                   const ljp_stack_options *opt,
                                   ljp_frame *out, size_t cap) {
  out_buf o = {out, out ? cap : 0, 0, 0, NULL, NULL, 0};
  if (!s)
    return 0;
  ljp_stack_view view = opt ? opt->view : LJP_VIEW_MERGED;
  ljp_trace_mode traces = opt ? opt->traces : LJP_TRACES_UNDER;
  /* Folded into their functions, traces leave no frame, their machine
   * code neither (in any sample: the VM state may lag behind the code):
   * its name carries the trace number, which differs between runs. */
  o.drop_code = traces == LJP_TRACES_FUNCTION &&
                (view == LJP_VIEW_MERGED || view == LJP_VIEW_HOST);
  int is_trace = s->vmstate == LJP_VMST_TRACE &&
                 s->trace.kind == LJP_FRAME_TRACE;
  /* ljp 1 and 2 trace samples have no stacks: the trace and the function
   * it starts in are all there is.  x1 trace samples have both; the trace
   * goes on top of their stack, whose innermost frame is the function. */
  int trace_on_top = is_trace && view != LJP_VIEW_REFERENCE &&
                     traces != LJP_TRACES_FUNCTION;
  if (s->vmstate == LJP_VMST_TRACE && !s->has_time) {
    ljp_frame fn;
    if (view == LJP_VIEW_REFERENCE || !is_trace)
      return o.n;
    if (traces != LJP_TRACES_TRACE && trace_function(s, &fn)) {
      /* The function's frame lives in the caller's buffer only: a frame
       * that is not the sample's, built here. */
      emit(&o, &fn);
      if (traces == LJP_TRACES_UNDER)
        emit(&o, &s->trace);
    } else
      emit(&o, &s->trace);
    return o.n;
  }
  /* Scratch index arrays: on the stack for ordinary depths. */
  size_t small[2][256];
  size_t *a = small[0], *b = small[1];
  size_t need = s->host_count > s->lua_count ? s->host_count : s->lua_count;
  if (need > 256) {
    a = malloc(2 * need * sizeof(size_t));
    if (!a) /* no memory for the merge: still show every frame */
      view = view == LJP_VIEW_REFERENCE ? LJP_VIEW_HOST : LJP_VIEW_LUA;
    b = a ? a + need : NULL;
  }
  static const ljp_frame mark = {LJP_FRAME_MARK, LJP_MARK_HOST_INCOMPLETE,
                                 0, NULL, NULL, 0};
  /* x1: the host stack may hold the trace's machine code itself (named
   * "TRACE [n] ..."), with the C functions the trace called inside it.  The trace stands there, in
   * place of that frame; in any other case on top of the stack. */
  if (trace_on_top && (view == LJP_VIEW_MERGED || view == LJP_VIEW_HOST)) {
    o.code = trace_code(s);
    o.code_as = &s->trace;
  }
  switch (view) {
  case LJP_VIEW_LUA:
    for (size_t i = 0; i < s->lua_count; i++)
      emit(&o, LUA(s, i));
    break;
  case LJP_VIEW_HOST:
    if (ljp_sample_host_incomplete(s))
      emit(&o, &mark);
    for (size_t i = 0; i < s->host_count; i++)
      emit(&o, HOST(s, i));
    break;
  case LJP_VIEW_REFERENCE:
    reference(&o, s, a);
    break;
  default:
    merged(&o, s, a, b, ljp_sample_host_incomplete(s));
    break;
  }
  if (a != small[0])
    free(a);
  if (trace_on_top && !o.replaced)
    emit(&o, &s->trace);
  return o.n;
}

LJP_API size_t ljp_sample_stack(const ljp_sample *s, ljp_stack_view view,
                                ljp_frame *out, size_t cap) {
  ljp_stack_options o = {view, LJP_TRACES_UNDER};
  return ljp_sample_stack_ex(s, &o, out, cap);
}
