/*
 * cap_sample.c — the safe point: LuaJIT's profiler callback, run on the VM
 * thread at the next bytecode the interpreter dispatches after a tick.
 *
 * The callback reports `samples` ticks; each has a slot in the ring, oldest
 * first (our handler captured it before chaining to LuaJIT's).  We take
 * exactly that many slots, walk the Lua stack once, classify each tick and
 * encode one ljp sample per tick, symbol events first.  No Lua is called and
 * nothing is allocated by the Lua allocator here: lua_getstack/lua_getinfo
 * only read, and the one value "f" pushes is popped at once.
 *
 * Classification (first match):
 *   PC, or one of the first host frames, in a trace's machine code -> TRACE
 *   full host stack that never entered the VM (no lua_pcall & co.)  -> CFUNC
 *                                                 with an empty Lua stack
 *   LuaJIT state 'G' -> GC, 'J' -> RECORD (EXIT/OPT/ASM are folded into 'J')
 *   'C' -> CFUNC with the Lua stack reconciled against the host stack
 *   'I', and 'N' without a known trace -> LFUNC
 * Only the first tick of a callback carries LuaJIT's state; the others of a
 * coalesced callback are classified by PC: inside the VM's object -> LFUNC,
 * outside -> CFUNC.
 */
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "cap_internal.h"

#define TRACE_PROBE_FRAMES 4

static ljp_frame guest[CAP_MAX_GUEST + 1];
static uint8_t guest_hostc[CAP_MAX_GUEST + 1];   /* 1: host C function */
static size_t nguest;
static ljp_frame recon[CAP_MAX_GUEST + 1];

static void count(int vmstate)
{
  uint64_t *b = &cap_S.c.vmst_interp;
  b[vmstate]++;
  cap_S.c.samples++;
}

static int writing(void)
{
  return cap_S.mode != LJP_CAPTURE_DEFAULT && cap_S.w &&
         ljp_writer_status(cap_S.w) == LJP_OK;
}

/* Walks the running coroutine's stack once: innermost first. */
static void walk_guest(lua_State *L)
{
  lua_Debug ar;
  int level;
  size_t max = cap_S.mode == LJP_CAPTURE_LEAF ? 1 : CAP_MAX_GUEST;
  nguest = 0;
  for (level = 0; nguest < max && lua_getstack(L, level, &ar); level++) {
    ljp_frame *f = &guest[nguest];
    memset(f, 0, sizeof *f);
    guest_hostc[nguest] = 0;
    if (!lua_getinfo(L, "S", &ar))
      break;
    if (ar.what && ar.what[0] == 'C') {
      const void *p;
      lua_CFunction cf;
      int ffid;
      /* "f" pushes one slot on the profiled thread; popped at once. */
      if (!lua_getinfo(L, "f", &ar))
        break;
      p = lua_topointer(L, -1);
      cf = lua_tocfunction(L, -1);
      lua_pop(L, 1);
      ffid = ljp__cap_ids_ffid(p);
      if (ffid < 0 && !cf)
        ffid = ljp__cap_ids_wrap_ffid();
      if (ffid >= 0) {
        f->kind = LJP_FRAME_FFUNC;
        f->value = (uint64_t)ffid;
      } else if (cf) {
        f->kind = LJP_FRAME_CFUNC;
        f->value = (uint64_t)(uintptr_t)cf;
        guest_hostc[nguest] = 1;
      } else {
        continue;   /* an ASM closure we cannot name: skip the frame */
      }
    } else {
      f->kind = LJP_FRAME_LUA;
      f->value = ljp__cap_ids_lfunc(ar.source, ar.linedefined);
      f->line = ar.linedefined > 0 ? (uint64_t)ar.linedefined : 0;
      if (!f->value)
        break;      /* out of memory: a shorter stack */
    }
    nguest++;
  }
}

static int in_vm(uint64_t pc)
{
  return pc >= cap_S.lj_lo && pc < cap_S.lj_hi;
}

/* Did the host stack ever enter the VM through an API call? */
static int entered_vm(const uint64_t *h, uint32_t n)
{
  uint32_t i;
  int k;
  for (i = 0; i < n; i++)
    for (k = 0; k < cap_S.nentry; k++)
      if (h[i] > cap_S.entry_lo[k] && h[i] <= cap_S.entry_hi[k])
        return 1;
  return 0;
}

/* A tick taken while no Lua ran: the full host stack never went through a
 * Lua entry point.  A stack the unwinder cut short must not look like that,
 * so it must also stay out of the VM's object (or, when the VM is linked into
 * the executable, be long enough to have reached the entry points). */
static int host_only(const uint64_t *h, uint32_t nh)
{
  uint32_t i;
  if (cap_S.mode != LJP_CAPTURE_CALLGRAPH || cap_S.nentry == 0 || nh < 2 ||
      cap_S.backtracer || entered_vm(h, nh))
    return 0;
  if (cap_S.lj_is_main)
    return nh >= 4;
  for (i = 0; i < nh; i++)
    if (in_vm(h[i]))
      return 0;
  return 1;
}

static cap_trace *find_trace(const uint64_t *h, uint32_t n)
{
  uint32_t i;
  for (i = 0; i < n && i < TRACE_PROBE_FRAMES; i++) {
    cap_trace *t = ljp__cap_traces_find(h[i]);
    if (t)
      return t;
  }
  return NULL;
}

/* For a 'C' tick, the guest stack was taken later than the host stack: it
 * may carry a Lua callee the C function called afterwards, or miss the C
 * frame when the C function returned before the safe point.  Count the
 * VM -> C transitions on the host stack (a frame outside the VM's object
 * right above one inside) and keep the guest stack up to the matching C
 * frame.  Returns the frames to write in recon[]. */
static size_t reconcile(const uint64_t *h, uint32_t nh, const ljp_frame **out)
{
  uint32_t i;
  size_t t = 0, gc = 0, g, skip = 0, seen = 0;
  uint64_t inner_c = 0;
  *out = guest;
  if (cap_S.lj_is_main || nh < 2)
    return nguest;
  for (i = 0; i + 1 < nh; i++)
    if (!in_vm(h[i]) && in_vm(h[i + 1])) {
      if (t == 0)
        inner_c = h[i];
      t++;
    }
  for (g = 0; g < nguest; g++)
    gc += guest_hostc[g];
  if (t == 0)
    return nguest;
  if (gc >= t) {
    /* Keep from the t-th host C frame counted from the outermost. */
    for (g = 0; g < nguest; g++) {
      if (guest_hostc[g]) {
        if (seen == gc - t) {
          skip = g;
          break;
        }
        seen++;
      }
    }
    *out = guest + skip;
    return nguest - skip;
  }
  if (gc + 1 == t && nguest < CAP_MAX_GUEST) {
    /* The C function returned before the safe point: put it back. */
    cap_sym s;
    ljp__cap_symbols_lookup(inner_c - 1, &s);
    memset(&recon[0], 0, sizeof recon[0]);
    recon[0].kind = LJP_FRAME_CFUNC;
    recon[0].value = s.name ? s.start : inner_c;
    memcpy(recon + 1, guest, nguest * sizeof *guest);
    *out = recon;
    return nguest + 1;
  }
  return nguest;
}

static void emit_symbols(const ljp_frame *lua, size_t nlua, const uint64_t *h,
                         uint32_t nh)
{
  size_t i;
  for (i = 0; i < nlua; i++) {
    if (lua[i].kind == LJP_FRAME_LUA)
      ljp__cap_ids_emit_lfunc(cap_S.w, lua[i].value);
    else if (lua[i].kind == LJP_FRAME_CFUNC)
      ljp__cap_symbols_emit(cap_S.w, lua[i].value, 0);
  }
  for (i = 0; i < nh; i++)
    ljp__cap_symbols_emit(cap_S.w, h[i], i > 0);
}

/* Encodes one tick.  state: LuaJIT's 'I','C','G','J','N', or 0 when the
 * guest stack is not available (drain/stop) or not of this tick. */
static void one_tick(const uint64_t *h, uint32_t nh, int state, int have_guest)
{
  cap_trace *t = find_trace(h, nh);
  int vmstate;
  const ljp_frame *lua = NULL;
  size_t nlua = 0;

  if (t) {
    count(LJP_VMST_TRACE);
    if (writing()) {
      ljp__cap_ids_emit_lfunc(cap_S.w, t->proto);
      if (!t->emitted) {
        ljp_write_event_trace(cap_S.w, t->traceno, t->proto, t->line);
        t->emitted = 1;
      }
      ljp_write_trace_sample(cap_S.w, t->traceno, t->proto, t->firstline);
    }
    return;
  }
  if (host_only(h, nh)) {
    vmstate = LJP_VMST_CFUNC;     /* host-only time: no Lua stack */
  } else {
    if (state == 0)
      state = in_vm(h[0]) ? 'I' : 'C';
    switch (state) {
    case 'G': vmstate = LJP_VMST_GC; break;
    case 'J': vmstate = LJP_VMST_RECORD; break;
    case 'C': vmstate = LJP_VMST_CFUNC; break;
    default: vmstate = LJP_VMST_LFUNC; break;
    }
    if (have_guest && vmstate != LJP_VMST_GC && vmstate != LJP_VMST_RECORD) {
      if (vmstate == LJP_VMST_CFUNC &&
          cap_S.mode == LJP_CAPTURE_CALLGRAPH)
        nlua = reconcile(h, nh, &lua);
      else {
        lua = guest;
        nlua = nguest;
      }
    }
  }
  count(vmstate);
  if (writing()) {
    emit_symbols(lua, nlua, h, nh);
    ljp_write_sample(cap_S.w, vmstate, lua, nlua, h, nh);
  }
}

static uint64_t *slot_frames(uint32_t idx, uint32_t *n)
{
  cap_ring *r = &cap_S.ring;
  uint32_t i = idx % r->nslots;
  *n = r->nframes[i];
  return r->frames + (size_t)i * r->stride;
}

void ljp__cap_profile_cb(void *data, lua_State *L, int samples, int vmstate)
{
  cap_ring *r = &cap_S.ring;
  uint64_t t0 = ljp__cap_now_ns(CLOCK_MONOTONIC);
  uint32_t head, tail, avail, take, n, i, skip;
  int walked = 0;
  (void)data;
  if (!cap_S.running || samples <= 0)
    return;
  if (cap_S.use_vm) {
    /* Every tick is complete in its slot: nothing to pair. */
    (void)L;
    (void)vmstate;
    ljp__cap_core_enter();
    ljp__cap_encode_pending();
    ljp__cap_note_writer();
    cap_S.c.safepoint_ns += ljp__cap_now_ns(CLOCK_MONOTONIC) - t0;
    ljp__cap_core_leave();
    return;
  }
  ljp__cap_core_enter();
  /* Without trace events there is no compile to settle after: do it here. */
  if (!ljp__cap_traces_attached())
    ljp__cap_unwind_settle();
  n = (uint32_t)samples;
  /* Ticks that drain() already wrote are part of this report. */
  skip = n < cap_S.drained_pending ? n : cap_S.drained_pending;
  cap_S.drained_pending -= skip;
  n -= skip;
  head = atomic_load_explicit(&r->head, memory_order_acquire);
  tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
  avail = head - tail;
  take = n < avail ? n : avail;
  if (take < n) {
    /* Ticks without a slot: the ring was full (already counted as
     * dropped), else a genuine pairing failure. */
    uint32_t missing = n - take, d;
    uint32_t dp = atomic_load_explicit(&cap_S.drops_pending,
                                       memory_order_relaxed);
    d = missing < dp ? missing : dp;
    atomic_fetch_sub_explicit(&cap_S.drops_pending, d, memory_order_relaxed);
    cap_S.c.unpaired += missing - d;
  }
  for (i = 0; i < take; i++) {
    uint32_t nh;
    uint64_t *h = slot_frames(tail + i, &nh);
    int st = i == 0 ? vmstate : 0;
    if (!walked && cap_S.mode != LJP_CAPTURE_DEFAULT) {
      walk_guest(L);
      walked = 1;
    }
    if (nh == 0) {
      /* No PC at all: count it where LuaJIT says. */
      count(st == 'G' ? LJP_VMST_GC : st == 'J' ? LJP_VMST_RECORD :
            st == 'C' ? LJP_VMST_CFUNC : LJP_VMST_LFUNC);
      continue;
    }
    one_tick(h, nh, st, walked);
  }
  atomic_store_explicit(&r->tail, tail + take, memory_order_release);
  ljp__cap_note_writer();
  cap_S.c.safepoint_ns += ljp__cap_now_ns(CLOCK_MONOTONIC) - t0;
  ljp__cap_core_leave();
}

void ljp__cap_flush_pending(void)
{
  cap_ring *r = &cap_S.ring;
  uint32_t head, tail, i;
  uint64_t t0 = ljp__cap_now_ns(CLOCK_MONOTONIC);
  if (!r->frames)
    return;
  if (cap_S.use_vm) {
    ljp__cap_core_enter();
    ljp__cap_encode_pending();
    ljp__cap_note_writer();
    cap_S.c.safepoint_ns += ljp__cap_now_ns(CLOCK_MONOTONIC) - t0;
    ljp__cap_core_leave();
    return;
  }
  ljp__cap_core_enter();
  head = atomic_load_explicit(&r->head, memory_order_acquire);
  tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
  for (i = tail; i != head; i++) {
    uint32_t nh;
    uint64_t *h = slot_frames(i, &nh);
    if (nh == 0) {
      count(LJP_VMST_CFUNC);
      continue;
    }
    one_tick(h, nh, 'C', 0);
  }
  atomic_store_explicit(&r->tail, head, memory_order_release);
  cap_S.drained_pending += head - tail;
  ljp__cap_note_writer();
  cap_S.c.safepoint_ns += ljp__cap_now_ns(CLOCK_MONOTONIC) - t0;
  ljp__cap_core_leave();
}

void ljp__cap_sample_free(void)
{
  nguest = 0;
}
