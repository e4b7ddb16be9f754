/*
 * ljpdb.h — what the subcommands of ljpdb share.
 */
#ifndef LJPDB_LJPDB_H
#define LJPDB_LJPDB_H

#include "cli.h"
#include "output.h"

#include <sqlite3.h>
#include <stdint.h>

#define LJPDB_EXIT_OK 0
#define LJPDB_EXIT_ERROR 1
#define LJPDB_EXIT_USAGE 2

/* Diagnostics are the tools' own: cli_error_in(file, ...) prints
 * "ljpdb: <file>: <message>" and cli_usage_error(...) a usage error
 * (cli.h). */
/* Flushes and checks stdout; returns the exit status to use. */
int ljpdb_finish_output(int status);

/* Opens an existing database for reading (and writing views), printing the
 * error itself; NULL on failure. */
sqlite3 *ljpdb_open_existing(const char *path);

/* Resolves a profile given as an id, a label or a path.  Returns the id, or
 * 0 after printing why none matches exactly one profile. */
int64_t ljpdb_profile(sqlite3 *db, const char *dbpath, const char *spec);

/* The --help text, on stdout. */
void ljpdb_print_usage(void);

int cmd_import(int argc, char **argv);
int cmd_query(int argc, char **argv);
int cmd_schema(int argc, char **argv);
int cmd_profiles(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_vmstates(int argc, char **argv);
int cmd_traces(int argc, char **argv);
int cmd_leaks(int argc, char **argv);
int cmd_diff(int argc, char **argv);

#endif
