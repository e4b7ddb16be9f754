/*
 * cap_vm.h — reading LuaJIT 2.1's own structures from the SIGPROF handler.
 *
 * LuaJIT installs no internal headers, so the layouts of lua_State,
 * global_State, GCfunc, GCproto and GCstr, and the frame encoding, are
 * described here as offset tables for the builds that exist (GC64 and
 * non-GC64; stock LuaJIT 2.1 and OpenResty's luajit2).  ljp__cap_vm_probe()
 * picks the table that fits the running VM and proves it against the
 * public API (lua_getstack/lua_getinfo) before anything relies on it; a VM
 * that does not match is refused with a message, never guessed at.
 *
 * ljp__cap_vm_walk() runs in signal context: it reads only, takes no lock,
 * allocates nothing, and checks every pointer it follows for plausibility
 * (alignment, range, GC type byte).  It may still read a stale pointer
 * whose page is gone; the caller runs it under a SIGSEGV/SIGBUS guard
 * (sigsetjmp), and a faulted walk keeps the frames written before the
 * fault (cap_vm_info.nframes counts them).
 */
#ifndef LJP_CAP_VM_H
#define LJP_CAP_VM_H

#include <stddef.h>
#include <stdint.h>

#include <lua.h>

#ifndef CAP_HIDDEN
#define CAP_HIDDEN __attribute__((visibility("hidden")))
#endif

/* Frame kinds, innermost first in a walk. */
enum {
  CAP_VMF_LUA = 1,     /* Lua function: addr = GCproto, chunk = GCstr name */
  CAP_VMF_CFUNC = 2,   /* lua_CFunction: addr = the C function pointer */
  CAP_VMF_FFUNC = 3,   /* builtin (fast function): ffid; addr = GCfunc */
  /* A Lua -> C -> Lua boundary: the frames outside (after) this entry were
   * running when C code called back into Lua (lua_call/lua_pcall, a C
   * frame, an FFI callback, a coroutine's resume).  addr = the C frame's
   * stack address (L->cframe chain), so host frames can be placed between;
   * 0 when the chain of C frames ran out. */
  CAP_VMF_CBOUND = 4,
  /* A coroutine boundary, after the CBOUND of the coroutine's resume: the
   * frames after this entry belong to the coroutine that resumed the one
   * before (addr = that lua_State).  Only a resume by coroutine.resume or
   * a coroutine.wrap function is followed; a coroutine resumed by C code
   * (lua_resume) ends the walk with its CBOUND. */
  CAP_VMF_CORO = 5
};

typedef struct cap_vm_frame {
  uint8_t kind;          /* CAP_VMF_* */
  uint8_t ffid;          /* FFUNC: the fast-function id */
  uint16_t pad;
  uint32_t firstline;    /* LUA: pt->firstline (0 for a main chunk) */
  uint64_t addr;         /* see the kinds */
  uint64_t chunk;        /* LUA: address of the chunk-name GCstr */
} cap_vm_frame;

/* Outcome of a walk (cap_vm_info.status). */
enum {
  CAP_VMS_OK = 0,        /* the chain reached the bottom of the stack */
  CAP_VMS_TRUNCATED = 1, /* more frames than max: the outermost are cut */
  CAP_VMS_REJECTED = 2,  /* the chain was inconsistent (caught mid-update):
                            the frames before the bad link are kept */
  CAP_VMS_NOLUA = 3      /* no Lua frame to read (the VM is not running Lua,
                            or cur_L/base are implausible) */
};

/* What the handler learns besides the frames. */
typedef struct cap_vm_info {
  int32_t vmstate;       /* g->vmstate as read: >= 0 a trace number
                            (inside a trace), else ~LJ_VMST_* (-1 INTERP,
                            -2 C, -3 GC, -4 EXIT, -5 RECORD, -6 OPT,
                            -7 ASM) */
  uint32_t status;       /* CAP_VMS_* */
  uint64_t L;            /* g->cur_L: the running coroutine */
  uint64_t cframe;       /* cur_L->cframe (raw, low bits masked), or 0 */
  uint64_t base;         /* the frame base the walk started from */
  uint32_t nframes;      /* frames written to out so far: kept up to date
                            during the walk, so that it still counts them
                            when the walk faulted (its return value is then
                            lost) */
  uint32_t pad;
} cap_vm_info;

/* LuaJIT's VM states (LJ_VMST_*), as g->vmstate holds them. */
enum {
  CAP_VMST_INTERP = -1, CAP_VMST_C = -2, CAP_VMST_GC = -3,
  CAP_VMST_EXIT = -4, CAP_VMST_RECORD = -5, CAP_VMST_OPT = -6,
  CAP_VMST_ASM = -7
};

/* The layout of one LuaJIT build, and the addresses found at probe time.
 * Plain data: the handler reads it, nothing in it is freed. */
typedef struct cap_vm {
  int ok;                /* probe succeeded */
  int gc64;              /* GC64 layout */
  int flavor;            /* ljp_flavor: LJP_FLAVOR_LUAJIT / _OPENRESTY */
  uint64_t g;            /* the global_State of the probed VM */
  uint64_t interp_lo, interp_hi;   /* the interpreter's machine code
                                      (lj_vm_asm_begin up to the FFI call
                                      helper: the range of its FDE); 0..0
                                      when not found, and then BASE is
                                      never taken from a register */
  /* Offsets (bytes) and constants of the build; see cap_vm.c. */
  uint32_t off_L_glref, off_L_base, off_L_top, off_L_stack, off_L_maxstack,
           off_L_cframe, off_L_status;
  uint32_t off_g_vmstate, off_g_cur_L, off_g_jit_base, off_g_mainthref;
  uint32_t off_fn_ffid, off_fn_pc, off_fn_cf;
  uint32_t sizeof_proto, off_pt_firstline, off_pt_chunkname, off_pt_numline;
  uint32_t sizeof_str, off_str_len;
  uint32_t off_cf_prev, off_cf_L;  /* C frame: previous cframe, saved L */
  uint32_t off_gct;      /* GC type byte of every GC object */
  uint32_t off_pt_sizebc;          /* GCproto: bytecode count (validates
                                      return PCs) */
  /* A coroutine's chain continues into the thread that resumed it only
   * when the probe saw that work: the host may have replaced
   * coroutine.resume (lua-nginx-module does), and then nothing proves the
   * resume frame's layout. */
  int follow_coro;
} cap_vm;

/* Probes the VM that runs L, on the VM thread, outside signal context
 * (it calls Lua): chooses the layout, detects the flavor at run time,
 * finds the interpreter's code range, then walks known stacks (nested Lua
 * functions, a C function, a builtin, a coroutine) both with
 * ljp__cap_vm_walk() and with lua_getstack/lua_getinfo and requires them to
 * agree.  Returns 0 on success; otherwise -1 with a message in err (for
 * example "lua_State.base does not match lua_gettop"). */
CAP_HIDDEN int ljp__cap_vm_probe(lua_State *L, cap_vm *vm, char *err,
                                 size_t errlen);

/* Async-signal-safe.  Reads the running coroutine's frame chain at the
 * moment of the signal.  ucontext: the handler's third argument (registers
 * of the interrupted code; the interpreter keeps BASE in a register and
 * leaves L->base stale), or NULL when called on the VM thread from C code
 * (then L->base is current).  Inside a trace the walk starts at the
 * trace's start frame (g->jit_base): frames of calls the trace inlined
 * are not on the stack.  Writes at most max frames to out, innermost
 * first, and returns their number; info gets the state.  A frame that
 * has lost its function (a builtin returning) is left out. */
CAP_HIDDEN uint32_t ljp__cap_vm_walk(const cap_vm *vm, const void *ucontext,
                                     cap_vm_info *info, cap_vm_frame *out,
                                     uint32_t max);

/* Safe point (VM thread): the bytes of the GCstr at addr, bounded by
 * max_len; NULL when addr does not look like a string.  *len gets the
 * length. */
CAP_HIDDEN const char *ljp__cap_vm_str(const cap_vm *vm, uint64_t addr,
                                       size_t max_len, size_t *len);

/* ---- the source of an allocation (cap_vm_site.c) ------------------------ */

/* Sources, with the values of ljp_source (LJP_SRC_*). */
enum {
  CAP_SITE_INT = 1,      /* no location: GC, trace compiler, no Lua frame */
  CAP_SITE_LFUNC = 2,    /* Lua function: addr = GCproto, line = current */
  CAP_SITE_CFUNC = 3,    /* C function (or a builtin called from C):
                            addr = its C entry point */
  CAP_SITE_TRACE = 4     /* a trace runs: addr = its number */
};

typedef struct cap_vm_site {
  uint32_t source;       /* CAP_SITE_* */
  uint32_t line;         /* LFUNC: the current line of the frame */
  uint64_t addr;         /* see the sources */
  uint64_t chunk;        /* LFUNC: the chunk name's GCstr */
  uint32_t firstline;    /* LFUNC: pt->firstline */
  uint8_t ffid;          /* CFUNC: the builtin's ffid, 0 for a lua_CFunction */
  uint8_t pad[3];
} cap_vm_site;

/* What the allocation reader needs besides cap_vm: where the saved PC of a
 * C frame is, the line tables of prototypes, and the JIT's trace array. */
typedef struct cap_vm_sitelayout {
  int ok;                /* ljp__cap_vm_site_probe succeeded */
  int traces;            /* trace symbols can be read (JIT seen working) */
  uint32_t off_cf_pc;    /* C frame: saved PC of the innermost Lua frame */
  uint32_t off_pt_lineinfo;
  uint32_t off_J;        /* jit_State, from the global_State */
  uint32_t off_J_trace, off_J_sizetrace;
  uint32_t off_T_startpt, off_T_startpc, off_T_traceno;
} cap_vm_sitelayout;

/* A trace as its symbol event names it. */
typedef struct cap_vm_trace {
  uint64_t T;            /* the GCtrace */
  uint64_t proto;        /* its start prototype */
  uint64_t chunk;        /* the prototype's chunk name (GCstr) */
  uint32_t firstline;    /* the prototype's first line */
  uint32_t line;         /* the line of the trace's first bytecode */
} cap_vm_trace;

/* Proves the allocation reader on the VM that runs L (vm probed already):
 * runs a short chunk under a probing allocator and requires every
 * allocation to be attributed as built (a table at a known line, a builtin
 * called from Lua, a C function, a JIT loop), and the line reader to agree
 * with lua_getinfo("l").currentline.  Calls Lua and replaces the allocator
 * for the duration.  0, or -1 with a message in err. */
CAP_HIDDEN int ljp__cap_vm_site_probe(lua_State *L, const cap_vm *vm,
                                      cap_vm_sitelayout *sl, char *err,
                                      size_t errlen);

/* The source of an allocation the VM makes now, read from g->vmstate and
 * the running coroutine's innermost frame (LuaJIT saves BASE and PC before
 * it calls anything that allocates).  Called from inside the allocator:
 * reads only, allocates nothing, calls nothing. */
CAP_HIDDEN void ljp__cap_vm_site_read(const cap_vm *vm,
                                      const cap_vm_sitelayout *sl,
                                      cap_vm_site *out);

/* The live trace numbered traceno (0 when there is none, or traces cannot
 * be read). */
CAP_HIDDEN int ljp__cap_vm_site_trace(const cap_vm *vm,
                                      const cap_vm_sitelayout *sl,
                                      uint32_t traceno, cap_vm_trace *out);

/* The line of bytecode position pos in prototype pt (lj_debug_line). */
CAP_HIDDEN uint32_t ljp__cap_vm_site_line(const cap_vm *vm,
                                          const cap_vm_sitelayout *sl,
                                          uint64_t pt, uint64_t pos);

#endif
