/*
 * cmd_import.c — `ljpdb import DB FILE...`: options, signals, progress bar.
 */
#include "ljpdb.h"

#include "cli.h"
#include "cli_limits.h"
#include "cli_source.h"
#include "import.h"
#include "schema.h"

#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* Inputs smaller than this finish before a bar would be worth reading. */
#define PROGRESS_MIN_BYTES (32u << 20)

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig) {
  (void)sig;
  stop_requested = 1;
}

/* SIGINT and friends ask the import to stop and roll back cleanly; without
 * SA_RESTART so a blocked read of stdin returns. */
static void catch_signals(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGHUP, &sa, NULL);
}

typedef struct progress {
  const char *name;
  int mode;                /* -1 auto, 0 off, 1 forced */
  int shown, last;         /* a bar is on the line; last permille drawn */
} progress;

static void progress_cb(void *ctx, uint64_t done, uint64_t total) {
  progress *p = ctx;
  if (p->mode == 0 || total == 0) return;
  if (p->mode < 0 && (total < PROGRESS_MIN_BYTES || !isatty(STDERR_FILENO)))
    return;
  int permille = (int)(done >= total ? 1000 : done * 1000 / total);
  if (p->shown && permille == p->last) return;
  int fill = permille * 30 / 1000;
  char bar[31];
  memset(bar, '#', (size_t)fill);
  memset(bar + fill, '.', (size_t)(30 - fill));
  bar[30] = 0;
  fprintf(stderr, "\rljpdb: %s [%s] %3d.%d%% of %.1f MiB", p->name, bar,
          permille / 10, permille % 10, (double)total / (1 << 20));
  fflush(stderr);
  p->shown = 1;
  p->last = permille;
}

static void progress_clear(progress *p) {
  if (p->shown) fputs("\r\033[K", stderr);
  p->shown = 0;
}

int cmd_import(int argc, char **argv) {
  static const struct option longopts[] = {
    {"label", required_argument, NULL, 'l'},
    {"replace", no_argument, NULL, 'r'},
    {"progress", no_argument, NULL, 'p'},
    {"no-progress", no_argument, NULL, 'P'},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    CLI_LIMIT_OPTIONS,
    {"source-dir", required_argument, NULL, CLI_OPT_SOURCE_DIR},
    {"no-source", no_argument, NULL, CLI_OPT_NO_SOURCE},
    {NULL, 0, NULL, 0}};
  import_options opt = {0};
  progress prog = {NULL, -1, 0, -1};
  int verbose = 0, c;
  opterr = 0;
  while ((c = getopt_long(argc, argv, ":l:rv", longopts, NULL)) != -1) {
    switch (c) {
    case 'l': opt.label = optarg; break;
    case 'r': opt.replace = 1; break;
    case 'p': prog.mode = 1; break;
    case 'P': prog.mode = 0; break;
    case 'v': verbose = 1; break;
    case 'h': ljpdb_print_usage(); return LJPDB_EXIT_OK;
    case ':': return cli_usage_error("import: %s needs a value", argv[optind - 1]);
    default: {
      int lrc = cli_limit_option(c, optarg);
      if (lrc == 0) lrc = cli_source_option(c, optarg);
      if (lrc == 1) break;
      if (lrc) return lrc;
      return cli_usage_error("import: unknown option '%s'", argv[optind - 1]);
    }
    }
  }
  opt.limits = cli_limits();
  opt.sources = cli_sources();
  if (argc - optind < 2)
    return cli_usage_error("import: needs DB and at least one FILE");
  const char *dbpath = argv[optind];
  int stdin_uses = 0;
  for (int i = optind + 1; i < argc; i++) stdin_uses += strcmp(argv[i], "-") == 0;
  if (stdin_uses > 1)
    return cli_usage_error("import: standard input ('-') given twice");

  sqlite3 *db;
  char err[1024];
  if (db_open(dbpath, DB_CREATE, &db, err, sizeof err)) {
    cli_error_in(dbpath, "%s", err);
    return LJPDB_EXIT_ERROR;
  }
  catch_signals();
  opt.stop = &stop_requested;
  opt.progress = progress_cb;
  opt.progress_ctx = &prog;
  importer *im = importer_begin(db, &opt, err, sizeof err);
  if (!im) {
    cli_error_in(dbpath, "%s", err);
    sqlite3_close(db);
    return LJPDB_EXIT_ERROR;
  }
  int status = LJPDB_EXIT_OK, fatal = 0;
  for (int i = optind + 1; i < argc && !fatal; i++) {
    const char *path = argv[i];
    const char *shown = cli_input_name(path);
    int64_t id;
    prog.name = shown;
    prog.shown = 0;
    import_result r = import_file(im, path, &id, err, sizeof err);
    progress_clear(&prog);
    switch (r) {
    case IMPORT_OK:
      if (verbose) cli_error_in(shown, "imported as profile %lld", (long long)id);
      break;
    case IMPORT_SKIPPED:
      cli_error_in(shown, "%s", err);
      break;
    case IMPORT_TRUNCATED:
      cli_error_in(shown, "%s (profile %lld)", err, (long long)id);
      status = LJPDB_EXIT_ERROR;
      break;
    case IMPORT_FAILED:
      cli_error_in(shown, "%s; not imported", err);
      status = LJPDB_EXIT_ERROR;
      break;
    case IMPORT_FATAL:
      cli_error_in(dbpath, "%s", err);
      fatal = 1;
      break;
    case IMPORT_INTERRUPTED:
      fatal = 1;
      break;
    }
  }
  if (stop_requested) {
    importer_rollback(im);
    cli_error_in(dbpath, "interrupted; database left unchanged");
    sqlite3_close(db);
    return LJPDB_EXIT_ERROR;
  }
  if (fatal) {
    importer_rollback(im);
    cli_error_in(dbpath, "import abandoned; database left unchanged");
    sqlite3_close(db);
    return LJPDB_EXIT_ERROR;
  }
  if (importer_commit(im, err, sizeof err)) {
    cli_error_in(dbpath, "%s; database left unchanged", err);
    status = LJPDB_EXIT_ERROR;
  }
  if (sqlite3_close(db) != SQLITE_OK) {
    cli_error_in(dbpath, "%s", sqlite3_errmsg(db));
    status = LJPDB_EXIT_ERROR;
  }
  return status;
}
