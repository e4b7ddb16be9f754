/*
 * cap_encode.c — writes the ticks that the handler read from the VM's own
 * structures (cap_S.use_vm).
 *
 * Such a tick is complete when the handler publishes it: the VM state, the
 * running coroutine, the Lua frame chain and the host stack, all of the
 * moment of the signal.  So the safe point has nothing to pair or
 * reconcile: it takes every published slot in order, classifies it from
 * g->vmstate and the innermost frame, names what it has not named yet
 * (symbol events, each before the first sample that uses it), and writes
 * one sample.  It runs on the VM thread: LuaJIT's profiler callback, the
 * trace handler (before a flush), drain and stop.
 */
#include <string.h>

#include "cap_internal.h"
#include "cap_unwind.h"

static ljp_frame lua_out[CAP_MAX_GUEST];

/* Coroutine ids: 1 is the main thread, the others are numbered in the
 * order they first appear.  A coroutine's address can be reused after it
 * is collected; the new one then shares the old id. */
#define CAP_MAX_COROS 4096
static uint64_t coro_L[CAP_MAX_COROS];
static uint32_t ncoro;
static uint64_t last_t;

/* The interpreter is one block of machine code without symbols in a
 * stripped libluajit: name it as a whole, once, instead of writing one
 * "libluajit-5.1.so.2+0x..." per PC (the merged view then also treats it
 * as the VM's glue between an entry point and the C function it runs). */
static int interp_state;        /* 0 unknown, 1 named by us, 2 has symbols */

static int interp_frame(uint64_t pc)
{
  const cap_vm *vm = &cap_S.lj;
  if (!vm->interp_hi || pc < vm->interp_lo || pc >= vm->interp_hi)
    return 0;
  if (interp_state == 0) {
    cap_sym s;
    if (ljp__cap_symbols_lookup(vm->interp_lo, &s) && s.name) {
      interp_state = 2;
    } else {
      static const char name[] = "lj_vm_interpreter";
      ljp_write_event_cfunc(cap_S.w, vm->interp_lo, name, sizeof name - 1);
      interp_state = 1;
    }
  }
  return interp_state == 1;
}

static uint64_t coro_id(uint64_t L)
{
  uint32_t i;
  if (!L)
    return 0;
  if (L == cap_S.main_L)
    return 1;
  for (i = 0; i < ncoro; i++)
    if (coro_L[i] == L)
      return i + 2;
  if (ncoro < CAP_MAX_COROS) {
    coro_L[ncoro++] = L;
    return ncoro + 1;
  }
  return 0;
}

void ljp__cap_encode_reset(void)
{
  ncoro = 0;
  interp_state = 0;
  last_t = cap_S.t_mono0;
}

static void count(int vmstate)
{
  uint64_t *b = &cap_S.c.vmst_interp;
  b[vmstate]++;
  cap_S.c.samples++;
}

/* Tarantool's vmstate of a tick: the VM's state, refined by the innermost
 * frame (a builtin running is FFUNC in both the interpreter and C). */
static int classify(const cap_slot_meta *m, const cap_vm_frame *lf)
{
  int inner = m->nlua ? lf[0].kind : 0;
  if (m->vmstate >= 0)
    return LJP_VMST_TRACE;
  switch (m->vmstate) {
  case CAP_VMST_INTERP:
    if (inner == CAP_VMF_FFUNC)
      return LJP_VMST_FFUNC;
    return inner ? LJP_VMST_LFUNC : LJP_VMST_INTERP;
  case CAP_VMST_C:
    return inner == CAP_VMF_FFUNC ? LJP_VMST_FFUNC : LJP_VMST_CFUNC;
  case CAP_VMST_GC: return LJP_VMST_GC;
  case CAP_VMST_EXIT: return LJP_VMST_EXIT;
  case CAP_VMST_RECORD: return LJP_VMST_RECORD;
  case CAP_VMST_OPT: return LJP_VMST_OPT;
  case CAP_VMST_ASM: return LJP_VMST_ASM;
  default: return LJP_VMST_CFUNC;
  }
}

/* The Lua frames of a slot as stream frames, innermost first; symbol
 * events for those not named yet.  Boundary markers are dropped: the C
 * function on either side of a Lua -> C -> Lua boundary is a frame of its
 * own, and a resumed coroutine's chain simply continues with its
 * resumer's. */
static size_t lua_frames(const cap_vm_frame *lf, uint32_t n, int emit)
{
  size_t k = 0;
  uint32_t i;
  for (i = 0; i < n && k < CAP_MAX_GUEST; i++) {
    ljp_frame *f = &lua_out[k];
    memset(f, 0, sizeof *f);
    switch (lf[i].kind) {
    case CAP_VMF_LUA:
      f->kind = LJP_FRAME_LUA;
      f->value = ljp__cap_protos_id(lf[i].addr, lf[i].chunk, lf[i].firstline);
      f->line = lf[i].firstline;
      if (!f->value)
        continue;       /* the name could not be read: skip the frame */
      if (emit)
        ljp__cap_ids_emit_lfunc(cap_S.w, f->value);
      break;
    case CAP_VMF_CFUNC:
      f->kind = LJP_FRAME_CFUNC;
      f->value = lf[i].addr;
      if (emit)
        ljp__cap_symbols_emit(cap_S.w, f->value, 0);
      break;
    case CAP_VMF_FFUNC:
      f->kind = LJP_FRAME_FFUNC;
      f->value = lf[i].ffid;
      break;
    default:
      continue;
    }
    k++;
  }
  return k;
}

static ljp_timer timer_kind(void)
{
  switch (cap_S.timer) {
  case LJP_CAPTURE_TIMER_THREAD: return LJP_TIMER_THREAD_CPU;
  case LJP_CAPTURE_TIMER_WALL: return LJP_TIMER_WALL;
  default: return LJP_TIMER_PROCESS_CPU;
  }
}

ljp_status ljp__cap_encode_begin(ljp_writer *w)
{
  ljp_flavor fl = (ljp_flavor)ljp_capture_flavor();
  if (cap_S.format == 2)
    return ljp_write_stream_begin(w, LJP_KIND_SYSPROF, 2, fl, 0);
  return ljp_write_stream_begin_x1(w, fl, timer_kind(), cap_S.period_ns);
}

/* Encodes slot idx (published by the handler). */
void ljp__cap_encode_slot(uint32_t idx)
{
  cap_ring *r = &cap_S.ring;
  const cap_slot_meta *m = &r->meta[idx];
  const cap_vm_frame *lf = r->lframes + (size_t)idx * r->lstride;
  const uint64_t *h = r->frames + (size_t)idx * r->stride;
  uint32_t nh = r->nframes[idx], i;
  int vmstate = classify(m, lf);
  int emit = cap_S.mode != LJP_CAPTURE_DEFAULT && cap_S.w &&
             ljp_writer_status(cap_S.w) == LJP_OK;
  cap_trace *t = NULL;
  size_t nlua;
  uint32_t flags = 0;

  if (m->lua_status == CAP_VMS_REJECTED)
    cap_S.c.lua_rejected++;
  if (m->lua_status == CAP_VMS_REJECTED || m->lua_status == CAP_VMS_TRUNCATED)
    flags |= LJP_SAMPLE_LUA_INCOMPLETE;
  if (cap_S.mode == LJP_CAPTURE_CALLGRAPH &&
      (m->host_flags & CAP_SLOT_HOST_PARTIAL)) {
    flags |= LJP_SAMPLE_HOST_INCOMPLETE;
    if (vmstate != LJP_VMST_TRACE)
      cap_S.c.host_incomplete++;
  }
  count(vmstate);
  if (!emit)
    return;
  nlua = lua_frames(lf, m->nlua, 1);
  if (cap_S.mode == LJP_CAPTURE_LEAF && nh > 1)
    nh = 1;
  for (i = 0; i < nh; i++)
    if (!interp_frame(h[i]))
      ljp__cap_symbols_emit(cap_S.w, h[i], i > 0);
  if (vmstate == LJP_VMST_TRACE) {
    t = ljp__cap_traces_by_no((uint32_t)m->vmstate);
    if (t) {
      ljp__cap_ids_emit_lfunc(cap_S.w, t->proto);
      if (!t->emitted) {
        ljp_write_event_trace(cap_S.w, t->traceno, t->proto, t->line);
        t->emitted = 1;
      }
    }
  }
  if (cap_S.format == 2) {
    /* Tarantool's grammar: no stacks for traces, no Lua stack in host
     * states. */
    if (vmstate == LJP_VMST_TRACE) {
      if (t)
        ljp_write_trace_sample(cap_S.w, t->traceno, t->proto, t->firstline);
      else if (nlua && lua_out[0].kind == LJP_FRAME_LUA)
        ljp_write_trace_sample(cap_S.w, (uint64_t)m->vmstate,
                               lua_out[0].value, lua_out[0].line);
      else
        ljp_write_sample(cap_S.w, LJP_VMST_INTERP, NULL, 0, h, nh);
      return;
    }
    if (vmstate == LJP_VMST_LFUNC || vmstate == LJP_VMST_FFUNC ||
        vmstate == LJP_VMST_CFUNC)
      ljp_write_sample(cap_S.w, vmstate, lua_out, nlua, h, nh);
    else
      ljp_write_sample(cap_S.w, vmstate, NULL, 0, h, nh);
    return;
  }
  {
    ljp_sample_x1 s;
    memset(&s, 0, sizeof s);
    s.vmstate = vmstate;
    s.dt_ns = m->t_ns > last_t ? m->t_ns - last_t : 0;
    if (m->t_ns > last_t)
      last_t = m->t_ns;
    s.coro = coro_id(m->L);
    s.flags = flags;
    if (vmstate == LJP_VMST_TRACE) {
      s.traceno = (uint64_t)m->vmstate;
      if (t) {
        s.trace_proto = t->proto;
        s.trace_line = t->firstline;
      } else if (nlua && lua_out[0].kind == LJP_FRAME_LUA) {
        /* A trace the map does not know (compiled while the trace
         * handler was detached): its function is the innermost frame. */
        s.trace_proto = lua_out[0].value;
        s.trace_line = lua_out[0].line;
      }
    }
    s.lua = lua_out;
    s.nlua = nlua;
    s.host = h;
    s.nhost = nh;
    ljp_write_sample_x1(cap_S.w, &s);
  }
}

/* Writes every published slot. */
void ljp__cap_encode_pending(void)
{
  cap_ring *r = &cap_S.ring;
  uint32_t head, tail, i;
  int stale = 0;
  head = atomic_load_explicit(&r->head, memory_order_acquire);
  tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
  for (i = tail; i != head; i++) {
    uint32_t idx = i % r->nslots;
    stale |= (r->meta[idx].host_flags & CAP_UW_STALE) != 0;
    ljp__cap_encode_slot(idx);
  }
  atomic_store_explicit(&r->tail, head, memory_order_release);
  /* An object loaded since the unwind tables were built (dlopen): build
   * its tables now, on the VM thread. */
  if (stale && cap_S.own_unwinder)
    ljp__cap_uw_refresh();
}
