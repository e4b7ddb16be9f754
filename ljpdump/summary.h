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
/* Writes the value of the "report" key (a JSON object, no newline after
 * it); returns 0, -1 on a write error, -2 when out of memory. */
typedef int (*summary_json_extra)(void *ctx, FILE *out);
/* The same as one JSON object (keys documented in docs/ljpdump.1): the
 * keys of the profile's kind only; with extra, a "report" key last.
 * Returns 0, -1 on a write error, or what extra returned. */
int summary_print_json(const ljp_reader *r, const char *name, FILE *out,
                       summary_json_extra extra, void *ctx);
/* One line per event in stream order, names resolved as of that event. */
int events_print(const ljp_reader *r, const ljp_event *ev, ljp_flavor flavor,
                 FILE *out);
/* The same as JSON Lines: one JSON object per event, one per line
 * (events_json.c; keys documented in docs/ljpdump.1). */
int events_print_json(const ljp_reader *r, const ljp_event *ev,
                      ljp_flavor flavor, FILE *out);

#endif
