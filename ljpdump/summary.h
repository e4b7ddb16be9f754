/*
 * summary.h — ljpdump's own outputs besides the reports: the summary of a
 * profile (text or JSON) and the event listing.
 */
#ifndef LJPDUMP_SUMMARY_H
#define LJPDUMP_SUMMARY_H

#include "ljp.h"

#include <stdio.h>

/* Prints what the reader counted: kind, versions, flavor, completeness,
 * symbols, and (with breakdown) the vmstate or event/source breakdown. */
void summary_print_text(const ljp_reader *r, const char *name, int breakdown,
                        FILE *out);
/* The same as one JSON object (keys documented in docs/ljpdump.1). */
void summary_print_json(const ljp_reader *r, const char *name, FILE *out);
/* One line per event in stream order, names resolved as of that event. */
int events_print(const ljp_reader *r, const ljp_event *ev, ljp_flavor flavor,
                 FILE *out);

#endif
