/*
 * fold_export.h — ljpfold's pprof and speedscope outputs: reads the inputs
 * into the call trees the formats need (one per value type, one per
 * coroutine) and hands them to libljp's exporters.
 */
#ifndef LJPFOLD_EXPORT_H
#define LJPFOLD_EXPORT_H

#include "ljp.h"

enum { FOLD_EXPORT_NONE = 0, FOLD_EXPORT_PPROF = 1, FOLD_EXPORT_SPEEDSCOPE = 2 };

#define FOLD_EXPORT_MAX_LABELS 32

typedef struct fold_export {
  int format;                       /* FOLD_EXPORT_* */
  const char *output;               /* -o FILE; NULL: standard output */
  ljp_export_label labels[FOLD_EXPORT_MAX_LABELS];
  size_t nlabels;
  uint64_t interval_ns;             /* --interval, for streams without one */
  int vmstate_given;                /* --vmstate was on the command line */
} fold_export;

/* --label KEY=VALUE (the argument is kept, not copied); 0 ok, else the
 * usage error's exit status. */
int fold_export_label(fold_export *x, char *arg);
/* --interval=N[ns|us|ms|s] (a bare number is microseconds, like the
 * capture core's option); 0 ok, else a usage error. */
int fold_export_interval(fold_export *x, const char *arg);

/* Reads files[0..n) and writes the export; returns the exit status. */
int fold_export_run(const fold_export *x, const ljp_fold_options *fo,
                    char **files, int n);

#endif
