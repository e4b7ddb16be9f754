/*
 * cap_vm_raw.h — what the walk (cap_vm.c) and the probe (cap_vm_probe.c)
 * share: the layout tables, plain reads of the VM's memory and the checks
 * of GC objects.  Internal to the capture core.
 */
#ifndef LJP_CAP_VM_RAW_H
#define LJP_CAP_VM_RAW_H

#include <stdint.h>

#include "cap_vm.h"

/* Raw reads of the VM's memory: AddressSanitizer knows nothing of
 * LuaJIT's own allocator and the VM's C frames, so its checks do not
 * apply here. */
#if defined(__GNUC__)
#define CAP_VM_RAW __attribute__((no_sanitize_address))
#else
#define CAP_VM_RAW
#endif

/* The layouts and the C frame encoding known are x86-64's. */
#if defined(__x86_64__)
#define CAP_VM_X64 1
#else
#define CAP_VM_X64 0
#endif

/* GC type bytes (~LJ_T*) at the object's gct field. */
enum { GCT_STR = 4, GCT_THREAD = 6, GCT_PROTO = 7, GCT_FUNC = 8 };

/* itype of a GC64 TValue (its top 17 bits, sign-extended). */
enum { ITYPE_THREAD = -7, ITYPE_FUNC = -9, ITYPE_TAB = -12 };

#define PTR47 ((UINT64_C(1) << 47) - 1)
#define FF_LUA 0   /* ffid of a Lua function */
#define FF_C 1     /* ffid of a lua_CFunction */

/* The layouts of LuaJIT 2.1 on x86-64 (cap_vm.c). */
CAP_HIDDEN extern const cap_vm ljp__cap_vm_layout_gc64;
CAP_HIDDEN extern const cap_vm ljp__cap_vm_layout_gc32;

/* ---- raw reads ---------------------------------------------------------- */

/* Callers check alignment first: the reads are plain aligned loads, so a
 * torn value is impossible and a bad address faults (under the caller's
 * guard) instead of being read byte by byte. */
CAP_VM_RAW static inline uint64_t rd64(uint64_t a)
{
  return *(const volatile uint64_t *)(uintptr_t)a;
}

CAP_VM_RAW static inline uint32_t rd32(uint64_t a)
{
  return *(const volatile uint32_t *)(uintptr_t)a;
}

CAP_VM_RAW static inline uint8_t rd8(uint64_t a)
{
  return *(const volatile uint8_t *)(uintptr_t)a;
}

/* GCRef/MRef: 64-bit under GC64, else 32-bit (the VM lives below 4 GiB). */
static inline uint64_t rdref(const cap_vm *vm, uint64_t a)
{
  return vm->gc64 ? rd64(a) : rd32(a);
}

/* A GC object of type gct at a: aligned, non-null, its type byte right. */
static inline int is_gcobj(const cap_vm *vm, uint64_t a, uint8_t gct)
{
  uint64_t end = vm->gc64 ? UINT64_C(1) << 47 : UINT64_C(1) << 32;
  if (a < 4096 || (a & 7) != 0 || a >= end)
    return 0;
  return rd8(a + vm->off_gct) == gct;
}

/* The proto of a Lua function, or 0 when fn does not hold one. */
static inline uint64_t fn_proto(const cap_vm *vm, uint64_t fn)
{
  uint64_t pc = rdref(vm, fn + vm->off_fn_pc);
  uint64_t pt = pc - vm->sizeof_proto;
  return is_gcobj(vm, pt, GCT_PROTO) ? pt : 0;
}

#endif
