/*
 * names_enum.c — static names of the library's enumerations and version.
 */
#include "internal.h"

LJP_API const char *ljp_version(void)
{
  return LJP_VERSION_STRING;
}

LJP_API const char *ljp_status_name(ljp_status st)
{
  switch (st) {
  case LJP_OK: return "ok";
  case LJP_END: return "end of stream";
  case LJP_E_TRUNCATED: return "truncated input";
  case LJP_E_MALFORMED: return "malformed input";
  case LJP_E_UNSUPPORTED: return "unsupported format";
  case LJP_E_NOMEM: return "out of memory";
  case LJP_E_IO: return "I/O error";
  case LJP_E_LIMIT: return "limit exceeded";
  case LJP_E_ARG: return "invalid argument";
  }
  return "unknown status";
}

/* Tarantool numbering, the same for every ljm and ljp version. */
static const char *const vmstate_names[LJP_VMST__MAX] = {
  "INTERP", "LFUNC", "FFUNC", "CFUNC", "GC",
  "EXIT", "RECORD", "OPT", "ASM", "TRACE"
};

LJP_API const char *ljp_vmstate_name(int vmstate)
{
  if (vmstate < 0 || vmstate >= LJP_VMST__MAX)
    return "?";
  return vmstate_names[vmstate];
}

static const char *const source_names[] = {
  "?", "INTERNAL", "LFUNC", "CFUNC", "TRACE"
};

LJP_API const char *ljp_source_name(ljp_source src)
{
  unsigned i = (unsigned)src;
  if (i == 0 || i >= sizeof(source_names) / sizeof(source_names[0]))
    return "?";
  return source_names[i];
}

static const char *const mem_kind_names[] = {
  "?", "ALLOC", "FREE", "REALLOC"
};

LJP_API const char *ljp_mem_kind_name(ljp_mem_kind kind)
{
  unsigned i = (unsigned)kind;
  if (i == 0 || i >= sizeof(mem_kind_names) / sizeof(mem_kind_names[0]))
    return "?";
  return mem_kind_names[i];
}

static const char *const timer_names[] = {
  "unknown", "process-cpu", "thread-cpu", "wall"
};

LJP_API const char *ljp_timer_name(ljp_timer timer)
{
  unsigned i = (unsigned)timer;
  if (i >= sizeof(timer_names) / sizeof(timer_names[0]))
    return "?";
  return timer_names[i];
}
