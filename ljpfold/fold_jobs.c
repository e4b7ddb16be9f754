/* fold_jobs.c — several input files folded at once.  See fold_jobs.h. */
#include "fold_jobs.h"

#include "cli.h"
#include "cli_limits.h"
#include "cli_source.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One input file and what folding it left. */
typedef struct job {
  ljp_reader *failed;      /* kept for its message when it failed */
  int open_failed;         /* ... before the first event */
  int nomem;               /* memory ran out while folding the file */
  int done;
} job;

/* One worker: its tree holds every file it folded. */
typedef struct worker_state {
  struct pool *p;
  ljp_tree *tree;
  pthread_t tid;
} worker_state;

typedef struct pool {
  char *const *files;
  int nfiles;
  const ljp_fold_options *fo;
  job *jobs;
  int next;                /* the next file to take, under mu */
  int stop;
  pthread_mutex_t mu;
  pthread_cond_t done;
} pool;

/* Folds one file into tree with a folder of its own (as the serial loop
 * does), printing nothing: what went wrong is kept in j and reported by
 * the main thread, in file order. */
static void fold_one(ljp_tree *tree, const ljp_fold_options *fo,
                     const char *path, job *j)
{
  ljp_folder *folder = tree ? ljp_folder_new(tree, fo) : NULL;
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

static void *worker(void *arg)
{
  worker_state *w = arg;
  pool *p = w->p;
  /* The options of the run, with a source resolver of this thread's own:
   * a resolver fills its cache as it looks up, one thread at a time. */
  ljp_fold_options fo = *p->fo;
  int nomem = 0;
  if (fo.sources && cli_sources_new(&fo.sources) != 0)
    nomem = 1;
  pthread_mutex_lock(&p->mu);
  while (!p->stop && p->next < p->nfiles) {
    int k = p->next++;
    pthread_mutex_unlock(&p->mu);
    if (nomem)
      p->jobs[k].nomem = 1;
    else
      fold_one(w->tree, &fo, p->files[k], &p->jobs[k]);
    pthread_mutex_lock(&p->mu);
    p->jobs[k].done = 1;
    pthread_cond_broadcast(&p->done);
  }
  pthread_mutex_unlock(&p->mu);
  if (fo.sources != p->fo->sources)
    ljp_srcnames_free(fo.sources);
  return NULL;
}

/* The messages the serial loop prints for a file, at its turn: 0, or 1
 * when the file counts as an error. */
static int report(const char *path, const job *j)
{
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

/* Starts up to n workers, each with an empty tree: how many run. */
static int start_workers(pool *p, worker_state *w, int n)
{
  int started = 0;
  for (; started < n; started++) {
    w[started].p = p;
    if (!(w[started].tree = ljp_tree_new()))
      break;
    if (pthread_create(&w[started].tid, NULL, worker, &w[started]) != 0) {
      ljp_tree_free(w[started].tree);
      w[started].tree = NULL;
      break;
    }
  }
  return started;
}

int fold_jobs_run(char *const *files, int nfiles, int jobs,
                  const ljp_fold_options *fo, ljp_tree **out)
{
  *out = NULL;
  pool p;
  memset(&p, 0, sizeof p);
  p.files = files;
  p.nfiles = nfiles;
  p.fo = fo;
  p.jobs = calloc((size_t)nfiles, sizeof *p.jobs);
  int n = jobs < nfiles ? jobs : nfiles;
  worker_state *w = calloc((size_t)n, sizeof *w);
  if (!p.jobs || !w) {
    free(p.jobs);
    free(w);
    cli_error("out of memory");
    return -1;
  }
  pthread_mutex_init(&p.mu, NULL);
  pthread_cond_init(&p.done, NULL);
  int started = start_workers(&p, w, n);
  int rc = 0;
  if (!started) {
    cli_error("cannot start a thread");
    rc = -1;
  }
  /* Diagnostics in file order, each as soon as its file is done. */
  for (int k = 0; rc >= 0 && k < nfiles; k++) {
    pthread_mutex_lock(&p.mu);
    while (!p.jobs[k].done)
      pthread_cond_wait(&p.done, &p.mu);
    pthread_mutex_unlock(&p.mu);
    if (report(files[k], &p.jobs[k]))
      rc = 1;
  }
  pthread_mutex_lock(&p.mu);
  p.stop = 1;
  pthread_mutex_unlock(&p.mu);
  for (int i = 0; i < started; i++)
    pthread_join(w[i].tid, NULL);
  /* The workers' trees into one.  Which worker folded which file varies
   * from run to run, so the ids in the merged tree do too, but its stacks
   * and weights do not, and the folded lines are written sorted. */
  if (rc >= 0) {
    *out = w[0].tree;
    w[0].tree = NULL;
    for (int i = 1; i < started; i++)
      if (ljp_tree_merge(*out, w[i].tree) != LJP_OK) {
        cli_error("out of memory");
        ljp_tree_free(*out);
        *out = NULL;
        rc = -1;
        break;
      }
  }
  for (int i = 0; i < started; i++)
    ljp_tree_free(w[i].tree);
  for (int k = 0; k < nfiles; k++)
    ljp_reader_free(p.jobs[k].failed);
  pthread_cond_destroy(&p.done);
  pthread_mutex_destroy(&p.mu);
  free(p.jobs);
  free(w);
  return rc;
}

int fold_jobs_online(void)
{
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : n > 256 ? 256 : (int)n;
}
