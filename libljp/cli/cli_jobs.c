/* cli_jobs.c — several input files read at once.  See cli_jobs.h. */
#include "cli_jobs.h"

#include "cli.h"
#include "cli_source.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_TREES 2

typedef struct pool {
  int nfiles, ntrees;
  const ljp_fold_options *fo;
  cli_job_fold fold;
  void *ctx;
  unsigned char *done;     /* per file, under mu */
  int next;                /* the next file to take, under mu */
  pthread_mutex_t mu;
  pthread_cond_t changed;
} pool;

/* One worker: its trees hold every file it read. */
typedef struct worker_state {
  pool *p;
  ljp_tree *trees[MAX_TREES];
  pthread_t tid;
} worker_state;

static void *worker(void *arg)
{
  worker_state *w = arg;
  pool *p = w->p;
  /* The options of the run, with a source resolver of this thread's own:
   * a resolver fills its cache as it looks up, one thread at a time. */
  ljp_fold_options fo = *p->fo;
  const ljp_fold_options *use = &fo;
  if (fo.sources && cli_sources_new(&fo.sources) != 0)
    use = NULL;
  pthread_mutex_lock(&p->mu);
  while (p->next < p->nfiles) {
    int k = p->next++;
    pthread_mutex_unlock(&p->mu);
    p->fold(p->ctx, k, w->trees, use);
    pthread_mutex_lock(&p->mu);
    p->done[k] = 1;
    pthread_cond_broadcast(&p->changed);
  }
  pthread_mutex_unlock(&p->mu);
  if (fo.sources != p->fo->sources)
    ljp_srcnames_free(fo.sources);
  return NULL;
}

/* Starts up to n workers, each with empty trees: how many run. */
static int start_workers(pool *p, worker_state *w, int n)
{
  int started = 0;
  for (; started < n; started++) {
    worker_state *s = &w[started];
    s->p = p;
    int ok = 1;
    for (int t = 0; t < p->ntrees; t++)
      ok = ok && (s->trees[t] = ljp_tree_new()) != NULL;
    if (!ok || pthread_create(&s->tid, NULL, worker, s) != 0) {
      for (int t = 0; t < p->ntrees; t++)
        ljp_tree_free(s->trees[t]);
      break;
    }
  }
  return started;
}

/* The workers' trees into out[]: 0, or -1 when out of memory. */
static int merge_trees(const pool *p, worker_state *w, int started,
                       ljp_tree **out)
{
  for (int t = 0; t < p->ntrees; t++) {
    out[t] = w[0].trees[t];
    w[0].trees[t] = NULL;
    for (int i = 1; i < started; i++)
      if (ljp_tree_merge(out[t], w[i].trees[t]) != LJP_OK)
        return -1;
  }
  return 0;
}

/* One job: every file on the calling thread, each said as it is done. */
static int run_inline(int nfiles, int ntrees, const ljp_fold_options *fo,
                      cli_job_fold fold, cli_job_report report, void *ctx,
                      ljp_tree **out)
{
  for (int t = 0; t < ntrees; t++)
    if (!(out[t] = ljp_tree_new())) {
      cli_error("out of memory");
      return -1;
    }
  int rc = 0;
  for (int k = 0; k < nfiles; k++) {
    fold(ctx, k, out, fo);
    if (report(ctx, k))
      rc = 1;
  }
  return rc;
}

int cli_jobs_run(int nfiles, int jobs, int ntrees, const ljp_fold_options *fo,
                 cli_job_fold fold, cli_job_report report, void *ctx,
                 ljp_tree **out)
{
  for (int t = 0; t < ntrees; t++)
    out[t] = NULL;
  if (ntrees < 1 || ntrees > MAX_TREES || nfiles < 1 || jobs < 1) {
    cli_error("bad job count");
    return -1;
  }
  if (jobs == 1 || nfiles == 1) {
    int rc = run_inline(nfiles, ntrees, fo, fold, report, ctx, out);
    if (rc < 0)
      for (int t = 0; t < ntrees; t++) {
        ljp_tree_free(out[t]);
        out[t] = NULL;
      }
    return rc;
  }
  pool p;
  memset(&p, 0, sizeof p);
  p.nfiles = nfiles;
  p.ntrees = ntrees;
  p.fo = fo;
  p.fold = fold;
  p.ctx = ctx;
  p.done = calloc((size_t)nfiles, 1);
  int n = jobs < nfiles ? jobs : nfiles;
  worker_state *w = calloc((size_t)n, sizeof *w);
  if (!p.done || !w) {
    free(p.done);
    free(w);
    cli_error("out of memory");
    return -1;
  }
  pthread_mutex_init(&p.mu, NULL);
  pthread_cond_init(&p.changed, NULL);
  int started = start_workers(&p, w, n);
  int rc = 0;
  if (!started) {
    cli_error("cannot start a thread");
    rc = -1;
  }
  /* What each file has to say, in file order, as soon as it is done. */
  for (int k = 0; rc >= 0 && k < nfiles; k++) {
    pthread_mutex_lock(&p.mu);
    while (!p.done[k])
      pthread_cond_wait(&p.changed, &p.mu);
    pthread_mutex_unlock(&p.mu);
    if (report(ctx, k))
      rc = 1;
  }
  for (int i = 0; i < started; i++)
    pthread_join(w[i].tid, NULL);
  if (rc >= 0 && merge_trees(&p, w, started, out) != 0) {
    cli_error("out of memory");
    rc = -1;
  }
  if (rc < 0)
    for (int t = 0; t < ntrees; t++) {
      ljp_tree_free(out[t]);
      out[t] = NULL;
    }
  for (int i = 0; i < started; i++)
    for (int t = 0; t < ntrees; t++)
      ljp_tree_free(w[i].trees[t]);
  pthread_cond_destroy(&p.changed);
  pthread_mutex_destroy(&p.mu);
  free(p.done);
  free(w);
  return rc;
}

int cli_jobs_online(void)
{
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : n > CLI_JOBS_MAX ? CLI_JOBS_MAX : (int)n;
}

int cli_jobs_parse(const char *arg, int *jobs)
{
  unsigned long long u;
  if (cli_parse_u64(arg, &u) || u > CLI_JOBS_MAX)
    return -1;
  *jobs = u ? (int)u : cli_jobs_online();
  return 0;
}
