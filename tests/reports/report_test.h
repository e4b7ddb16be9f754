/* Shared helpers of the report tests. */
#ifndef REPORT_TEST_H
#define REPORT_TEST_H

#include <check.h>
#include <stddef.h>

#include "reports.h"

/* Reads a whole file (NUL-terminated); NULL when it cannot be read. */
char *rt_slurp(const char *path, size_t *len);

/* Runs a memprof report over a stream (a file path or a buffer); returns the
 * printed text (malloc'ed) and the reader's final status in *st. */
char *rt_memreport_path(const char *path, const struct memreport_opts *o,
                        ljp_status *st);
char *rt_memreport_buf(const void *buf, size_t len,
                       const struct memreport_opts *o, ljp_status *st);
/* Same for sysprof; *out_report (optional) receives the report handle, which
 * the caller frees. */
char *rt_sysreport_buf(const void *buf, size_t len,
                       const struct sysreport_opts *o, sysreport **keep);

/* Canonical form of a memprof report: inside every tie group (rows of a
 * section with the same event count with their Overrides block; HEAP
 * SUMMARY lines with the same printed size) the entries are sorted
 * bytewise.  The reference leaves that order to Lua's hash tables. */
char *rt_canon(const char *report);
/* 1 when, in every section of a report, rows with the same count are in
 * bytewise order of their names (ljpdump's documented tie-break), and HEAP
 * SUMMARY lines with equal sizes too. */
int rt_ties_sorted(const char *report);

Suite *memreport_golden_suite(void);
Suite *memreport_built_suite(void);
Suite *sysreport_suite(void);

#endif
