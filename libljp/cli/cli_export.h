/*
 * cli_export.h — the exporters' tree helpers (libljp/src/export.h) for the
 * tools' own writers: the tools link libljp statically, and one copy of
 * the walk from a node to its stack serves the library's outputs and
 * ljpfold's alike.
 */
#ifndef LJP_CLI_EXPORT_H
#define LJP_CLI_EXPORT_H

#include "../src/export.h"

#endif
