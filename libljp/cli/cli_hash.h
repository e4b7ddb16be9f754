/*
 * cli_hash.h — the library's hash functions (libljp/src/hash.h) for the
 * tools' own tables: the tools link libljp statically, and one copy keeps
 * every table mixing its keys the same way.
 */
#ifndef LJP_CLI_HASH_H
#define LJP_CLI_HASH_H

#include "../src/hash.h"

#endif
