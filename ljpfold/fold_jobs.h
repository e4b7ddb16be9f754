/*
 * fold_jobs.h — several input files folded at once (ljpfold --jobs).
 *
 * Each worker thread takes the next file and folds it, with a folder of
 * its own per file as the serial loop does, into the worker's tree; at the
 * end the workers' trees are merged (ljp_tree_merge).  The merged tree has
 * the stacks and weights of the serial run, and the folded and tarantool
 * formats write their lines sorted, so the output does not depend on the
 * number of jobs or on which worker took which file.  Diagnostics are
 * printed in file order, each as soon as its file is done.
 */
#ifndef LJPFOLD_JOBS_H
#define LJPFOLD_JOBS_H

#include "ljp.h"

/* Folds files[0..nfiles) with up to jobs threads into a new tree (*out).
 * Returns 0, 1 when a file was broken or missing or memory ran out while
 * folding one (reported; the others are still folded), or -1 when the run
 * itself could not go on (reported; *out is then NULL). */
int fold_jobs_run(char *const *files, int nfiles, int jobs,
                  const ljp_fold_options *fo, ljp_tree **out);

/* What --jobs=0 means: the processors online (at least 1). */
int fold_jobs_online(void);

#endif
