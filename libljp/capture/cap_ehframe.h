/*
 * cap_ehframe.h — unwind rows of one loaded object, from its .eh_frame.
 *
 * The rows are what the signal handler reads (cap_unwind.c), so they are
 * small and need no further decoding: for x86-64 each says how to find the
 * CFA at a PC range, where rbp was saved, and whether the frame is the
 * outermost one.  The return address is always at CFA - 8; a CIE that puts
 * it elsewhere gives NOINFO rows.
 */
#ifndef LJP_CAP_EHFRAME_H
#define LJP_CAP_EHFRAME_H

#include <stddef.h>
#include <stdint.h>

#ifndef CAP_HIDDEN
#define CAP_HIDDEN __attribute__((visibility("hidden")))
#endif

/* cap_uw_row.kind, low 3 bits: how the CFA is found. */
enum {
  CAP_CFA_NOINFO = 0,   /* no rule we can follow: the unwind stops */
  CAP_CFA_RSP = 1,      /* CFA = rsp + off*8 */
  CAP_CFA_RBP = 2,      /* CFA = rbp + off*8 */
  CAP_CFA_DEREF_RBP = 3,/* CFA = *(rbp + off*8) (realigned stack frames) */
  CAP_CFA_PLT = 4,      /* CFA = rsp + 8 + ((pc & 15) >= off ? 8 : 0) */
  CAP_CFA_ROOT = 5,     /* return address undefined: outermost frame */
  CAP_CFA_MASK = 7
};
/* cap_uw_row.kind, flags. */
enum {
  CAP_ROW_FSTART = 8,   /* first row of an FDE (a function's start) */
  CAP_ROW_RBP_LOST = 16,/* rbp's caller value is not recoverable */
  CAP_ROW_GAP = 32,     /* no FDE covers this range (after an FDE's end) */
  CAP_ROW_RBP_AT_FP = 64/* rbp saved at this frame's rbp + rbp*8 instead
                           (realigned stack frames) */
};

/* One row: from pc (object-relative) up to the next row's pc. */
typedef struct cap_uw_row {
  uint32_t pc;          /* offset from the object's load base */
  int16_t off;          /* CFA offset in 8-byte units (or PLT threshold) */
  int8_t rbp;           /* rbp saved at CFA + rbp*8; 0: unchanged */
  uint8_t kind;         /* CAP_CFA_* | CAP_ROW_* */
} cap_uw_row;

/* The readable memory of one object: its PT_LOAD ranges [lo, hi). */
typedef struct cap_ehf_mem {
  const uint64_t (*seg)[2];
  size_t nseg;
} cap_ehf_mem;

/* Appends the rows of the object whose .eh_frame_hdr is at hdr to *rows
 * (realloc'd; *n rows, *cap capacity), with PCs relative to base.  Every
 * read stays inside m's ranges.  Rows come out sorted by pc; an FDE's end
 * gets a NOINFO|GAP row unless the next FDE starts there.  Returns 0, or -1
 * when out of memory (a malformed table just yields fewer rows). */
CAP_HIDDEN int ljp__cap_ehf_rows(const cap_ehf_mem *m, uint64_t hdr,
                                 uint64_t base, cap_uw_row **rows, size_t *n,
                                 size_t *cap);

/* The same from the .eh_frame at eh itself, for an object without
 * .eh_frame_hdr (its FDEs walked up to the zero terminator). */
CAP_HIDDEN int ljp__cap_ehf_rows_eh(const cap_ehf_mem *m, uint64_t eh,
                                    uint64_t base, cap_uw_row **rows, size_t *n,
                                    size_t *cap);

/* The link-time address of the .eh_frame section of the ELF file at path,
 * from its section headers; 0 when there is none.  May allocate. */
CAP_HIDDEN uint64_t ljp__cap_ehf_file_section(const char *path);

#endif
