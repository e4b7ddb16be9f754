/*
 * cap_unwind.h — the capture core's own host-stack unwinder.
 *
 * libgcc's _Unwind_Backtrace can block or allocate in a signal handler
 * (its FDE mutex, the lazy indexing of frames registered at run time), so
 * the handler unwinds with tables of its own: built on the VM thread, from
 * the .eh_frame sections of the loaded objects (dl_iterate_phdr), into
 * sorted arrays of unwind rows (x86-64: CFA = rsp/rbp + offset, where rbp
 * was saved, return address at CFA - 8).  The handler only binary-searches
 * those arrays and reads the interrupted thread's stack inside the bounds
 * it is given: no lock, no allocation, no fault on a corrupt stack.
 *
 * Tables are published with a release store of one pointer; a rebuild
 * (after dlopen) makes a new set and retires the old one, which is freed
 * only when no handler can be using it (ljp__cap_uw_free, or a later rebuild
 * once the in-handler counter is zero).
 */
#ifndef LJP_CAP_UNWIND_H
#define LJP_CAP_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#ifndef CAP_HIDDEN
#define CAP_HIDDEN __attribute__((visibility("hidden")))
#endif

/* Registers an unwind starts from (the interrupted context, or a frame the
 * caller reconstructed, for example the C frame of the interpreter entry
 * when the PC is in JIT machine code). */
typedef struct cap_uw_regs {
  uint64_t pc;           /* the PC (first frame) */
  uint64_t sp;           /* rsp at pc */
  uint64_t fp;           /* rbp at pc */
  int pc_is_return;      /* pc is a return address (look up pc - 1) */
} cap_uw_regs;

/* ljp__cap_uw_unwind flags (out). */
enum {
  CAP_UW_ROOT = 1,       /* reached the outermost frame (return address
                            undefined by CFI, as _start/clone have, or 0) */
  CAP_UW_NOINFO = 2,     /* stopped at a PC that no table covers */
  CAP_UW_BADSTACK = 4,   /* stopped: a CFA or saved value outside the stack
                            bounds, or not moving outwards */
  CAP_UW_TRUNCATED = 8,  /* stopped at max frames */
  CAP_UW_STALE = 16      /* an unknown PC lies in a mapped object loaded
                            after the last build: ljp__cap_uw_refresh wanted */
};

/* Builds the tables of every loaded object.  VM thread, not signal-safe.
 * 0 on success, -1 (errno set) when out of memory. */
CAP_HIDDEN int ljp__cap_uw_init(void);
/* Rebuilds when objects were loaded or unloaded since the last build
 * (dl_iterate_phdr's adds/subs counters).  Cheap when nothing changed. */
CAP_HIDDEN int ljp__cap_uw_refresh(void);
/* Frees every table; no handler may run any more. */
CAP_HIDDEN void ljp__cap_uw_free(void);

/* Async-signal-safe.  Unwinds from r, writing the PC and then return
 * addresses (innermost first) to out, at most max.  Reads the stack only
 * in [stack_lo, stack_hi), 8-byte aligned; r->fp matters only for frames
 * whose CFA is rbp-based.  When the first frame's CFI gives no plausible
 * return address (LuaJIT's interpreter at its entry/exit sequences or in
 * the subroutines it calls, code without an FDE), the top 16 stack slots
 * are searched for one that follows a direct call into the PC's own
 * function; that reads the code bytes of still-loaded objects, and the
 * loader's object list (as STALE does).  *flags gets CAP_UW_*.  Returns
 * the count. */
CAP_HIDDEN uint32_t ljp__cap_uw_unwind(const cap_uw_regs *r, uint64_t stack_lo,
                                       uint64_t stack_hi, uint64_t *out,
                                       uint32_t max, uint32_t *flags);

/* Size of the published tables: objects, rows, and bytes in all.  VM
 * thread. */
CAP_HIDDEN void ljp__cap_uw_stats(size_t *objects, size_t *rows, size_t *bytes);

/* The [lo, hi) of the FDE (function) covering pc, from the tables; 0 when
 * none.  VM thread. */
CAP_HIDDEN int ljp__cap_uw_function_range(uint64_t pc, uint64_t *lo,
                                          uint64_t *hi);

#endif
