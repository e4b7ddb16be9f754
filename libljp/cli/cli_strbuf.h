/*
 * cli_strbuf.h — the tools take libljp's growable byte buffer
 * (libljp/src/strbuf.h): one copy of the overflow-checked growth.
 */
#ifndef LJP_CLI_STRBUF_H
#define LJP_CLI_STRBUF_H

#include "../src/strbuf.h"

#endif
