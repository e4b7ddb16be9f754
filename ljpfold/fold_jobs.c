/* fold_jobs.c — ljpfold's input files into one tree.  See fold_jobs.h. */
#include "fold_jobs.h"

#include "cli.h"
#include "cli_jobs.h"
#include "cli_limits.h"

#include <stdlib.h>
#include <string.h>

/* One input file and what folding it left. */
typedef struct job {
  ljp_reader *failed;      /* kept for its message when it failed */
  int open_failed;         /* ... before the first event */
  int nomem;               /* memory ran out while folding the file */
} job;

typedef struct run {
  char *const *files;
  job *jobs;
} run;

/* Folds file k into the tree with a folder of its own (the folder caches
 * symbol pointers of its reader: one folder per reader, the tree is what
 * is shared), printing nothing: what went wrong is kept. */
static void fold_one(void *ctx, int k, ljp_tree *const *trees,
                     const ljp_fold_options *fo)
{
  run *rn = ctx;
  job *j = &rn->jobs[k];
  const char *path = rn->files[k];
  ljp_folder *folder = fo ? ljp_folder_new(trees[0], fo) : NULL;
  if (!folder) {
    j->nomem = 1;
    return;
  }
  ljp_reader *r;
  int fd = strcmp(path, "-") == 0 ? 0 : -1;
  ljp_status st = cli_reader_open(&r, path, fd, NULL, 0, fo->flavor,
                                  cli_limits());
  if (!r) {
    j->open_failed = 1;
  } else if (st != LJP_OK) {
    j->open_failed = 1;
    j->failed = r;
  } else {
    const ljp_event *ev;
    while ((st = ljp_reader_next(r, &ev)) == LJP_OK)
      if (ljp_folder_add(folder, r, ev) != LJP_OK) {
        j->nomem = 1;
        break;
      }
    if (!j->nomem && st != LJP_END)
      j->failed = r;
    else
      ljp_reader_free(r);
  }
  ljp_folder_free(folder);
}

/* The messages for file k, those cli_open_reader and cli_drain would
 * print: 0, or 1 when the file counts as an error. */
static int report(void *ctx, int k)
{
  run *rn = ctx;
  const job *j = &rn->jobs[k];
  const char *path = rn->files[k];
  if (j->open_failed) {
    if (j->failed)
      cli_error_in(path, "%s", ljp_reader_error(j->failed));
    else
      cli_error_in(path, "out of memory");
    return 1;
  }
  if (j->nomem) {
    cli_error("out of memory");
    return 1;
  }
  if (j->failed) {
    cli_reader_error(path, j->failed);
    return 1;
  }
  return 0;
}

int fold_jobs_run(char *const *files, int nfiles, int jobs,
                  const ljp_fold_options *fo, ljp_tree **out)
{
  run rn = {files, calloc((size_t)nfiles, sizeof(job))};
  if (!rn.jobs) {
    *out = NULL;
    cli_error("out of memory");
    return -1;
  }
  int rc = cli_jobs_run(nfiles, jobs, 1, fo, fold_one, report, &rn, out);
  for (int k = 0; k < nfiles; k++)
    ljp_reader_free(rn.jobs[k].failed);
  free(rn.jobs);
  return rc;
}
