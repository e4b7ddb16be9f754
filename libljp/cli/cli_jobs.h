/*
 * cli_jobs.h — several input files read at once (the tools' --jobs).
 *
 * With one job, the files are read in turn on the calling thread.  With
 * more, worker threads take the files in turn; each folds a file into the
 * worker's own trees through the tool's callback, and at the end the
 * workers' trees are merged (ljp_tree_merge).  The merged trees hold the
 * stacks and weights of reading the files one after the other; their ids
 * depend on which worker took which file, so a tool uses this for outputs
 * that are ordered by name (folded lines, flame graphs).  What each file
 * has to say is printed by the tool's report callback on the calling
 * thread, in file order, as soon as that file is done.
 */
#ifndef CLI_JOBS_H
#define CLI_JOBS_H

#include "ljp.h"

/* File k into trees[0..ntrees), with the run's fold options as given to
 * cli_jobs_run (on a worker thread, with a source resolver of the
 * worker's own); fo is NULL when the worker could not be set up (out of
 * memory: say so at report time).  It must not print: it keeps what to
 * say in the tool's own per-file state. */
typedef void (*cli_job_fold)(void *ctx, int k, ljp_tree *const *trees,
                             const ljp_fold_options *fo);

/* Prints what reading file k has to say, on the calling thread: 0, or 1
 * when the file counts as an error. */
typedef int (*cli_job_report)(void *ctx, int k);

/* Reads nfiles files with up to jobs threads into ntrees (1 or 2) new
 * trees, out[0..ntrees).  0, 1 when a report said 1, or -1 when the run
 * could not go on (said; out[] are then NULL). */
int cli_jobs_run(int nfiles, int jobs, int ntrees, const ljp_fold_options *fo,
                 cli_job_fold fold, cli_job_report report, void *ctx,
                 ljp_tree **out);

#define CLI_JOBS_MAX 256

/* What --jobs=0 means: the processors online (1 to CLI_JOBS_MAX). */
int cli_jobs_online(void);

/* A --jobs value: a count from 0 (cli_jobs_online) to CLI_JOBS_MAX into
 * *jobs: 0, or -1 when arg is not one. */
int cli_jobs_parse(const char *arg, int *jobs);

#endif
