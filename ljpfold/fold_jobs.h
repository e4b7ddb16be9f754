/*
 * fold_jobs.h — ljpfold's input files into one tree, in turn or on several
 * threads (--jobs, through cli_jobs.h): each file with a folder of its
 * own, its diagnostics printed in file order.  The folded and tarantool
 * formats write their lines sorted, so the output does not depend on the
 * number of jobs or on which worker took which file.
 */
#ifndef LJPFOLD_JOBS_H
#define LJPFOLD_JOBS_H

#include "ljp.h"

/* Folds files[0..nfiles) with up to jobs threads (1: on the calling
 * thread) into a new tree (*out).
 * Returns 0, 1 when a file was broken or missing or memory ran out while
 * folding one (reported; the others are still folded), or -1 when the run
 * itself could not go on (reported; *out is then NULL). */
int fold_jobs_run(char *const *files, int nfiles, int jobs,
                  const ljp_fold_options *fo, ljp_tree **out);

#endif
