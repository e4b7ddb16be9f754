/*
 * ljpgen — writes large, realistic, deterministic sysprof (ljs 3 + ljp 2)
 * and memprof (ljs 3 + ljm 3) streams with libljp's encoder, as inputs for
 * the reader benchmarks.  Not installed.
 *
 * On success it prints one line of facts about what it wrote to stderr
 * (key=value pairs), for scripts: records, bytes, unique stacks, depths.
 */
#include "gen.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out) {
  fprintf(out,
      "Usage: ljpgen [OPTION]...\n"
      "Write a synthetic sysprof or memprof profile (deterministic: the same\n"
      "options give the same bytes).  K, M, G suffixes are powers of 1024.\n"
      "\n"
      "  -k, --kind=KIND        sysprof (default) or memprof\n"
      "  -o, --output=FILE      output file (default: standard output)\n"
      "  -s, --size=BYTES       stop once the stream has this size (default 38M)\n"
      "  -n, --count=N          write N samples / memory events instead\n"
      "  -d, --depth=N          Lua stack depth of a typical stack (default 400)\n"
      "      --host-depth=N     host frames outside the VM (default 20);\n"
      "                         each Lua->C->Lua round trip adds 5 more\n"
      "  -u, --unique=N         distinct stacks (sysprof) or allocation sites\n"
      "                         (memprof) the records cycle over (default 1000)\n"
      "      --sandwiches=N     most Lua->C->Lua round trips per stack (3)\n"
      "      --csyms=N          C symbols in the initial symtab (default 4000)\n"
      "      --protos=N         Lua prototypes in the initial symtab (60)\n"
      "      --traces=N         traces in the initial symtab (40)\n"
      "      --trace-churn=N    redefine a trace number every N records (2000;\n"
      "                         0 = never), like jit.flush() and new traces\n"
      "      --proto-churn=N    redefine a prototype every N records (5000)\n"
      "      --redump=N         full C-symbol re-dump before every N-th host\n"
      "                         sample / CFUNC event, as old producers did (0)\n"
      "      --locality=PCT     %% of samples repeating the previous stack (50)\n"
      "      --live=N           memprof: blocks live at once (default 20000)\n"
      "      --leaf             sysprof LEAF mode: no host stacks\n"
      "      --x1               sysprof: write ljp x1 (times, coroutines,\n"
      "                         stacks on every sample) instead of ljp 2\n"
      "      --recursive=PCT    %% of stacks that are one prototype calling\n"
      "                         itself 1..depth frames deep (0)\n"
      "      --trace-pct=PCT    %% of stacks sampled in TRACE state (default\n"
      "                         mix: 12)\n"      "      --seed=N           PRNG seed (default 1)\n"
      "  -q, --quiet            no facts line on stderr\n"
      "  -h, --help             show this help\n");
}

static int parse_u64(const char *s, uint64_t *out, int suffix) {
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno || end == s || *s == '-')
    return -1;
  if (suffix && *end) {
    unsigned shift = *end == 'K' || *end == 'k' ? 10
                     : *end == 'M' || *end == 'm' ? 20
                     : *end == 'G' || *end == 'g' ? 30 : 0;
    if (!shift)
      return -1;
    end++;
    v <<= shift;
  }
  if (*end)
    return -1;
  *out = v;
  return 0;
}

typedef struct out_ctx {
  FILE *f;
  uint64_t bytes, goal;
} out_ctx;

static int file_sink(void *ctx, const void *data, size_t len) {
  out_ctx *o = ctx;
  o->bytes += len;
  return fwrite(data, 1, len, o->f) == len ? 0 : -1;
}

static int out_full(void *ctx) {
  out_ctx *o = ctx;
  return o->bytes >= o->goal;
}

enum { OPT_HOST = 256, OPT_SANDW, OPT_CSYMS, OPT_PROTOS, OPT_TRACES,
       OPT_TCHURN, OPT_PCHURN, OPT_REDUMP, OPT_LOCAL, OPT_LIVE, OPT_LEAF,
       OPT_SEED, OPT_X1, OPT_RECUR, OPT_TPCT };

int main(int argc, char **argv) {
  static const struct option opts[] = {
      {"kind", required_argument, 0, 'k'},
      {"output", required_argument, 0, 'o'},
      {"size", required_argument, 0, 's'},
      {"count", required_argument, 0, 'n'},
      {"depth", required_argument, 0, 'd'},
      {"unique", required_argument, 0, 'u'},
      {"host-depth", required_argument, 0, OPT_HOST},
      {"sandwiches", required_argument, 0, OPT_SANDW},
      {"csyms", required_argument, 0, OPT_CSYMS},
      {"protos", required_argument, 0, OPT_PROTOS},
      {"traces", required_argument, 0, OPT_TRACES},
      {"trace-churn", required_argument, 0, OPT_TCHURN},
      {"proto-churn", required_argument, 0, OPT_PCHURN},
      {"redump", required_argument, 0, OPT_REDUMP},
      {"locality", required_argument, 0, OPT_LOCAL},
      {"live", required_argument, 0, OPT_LIVE},
      {"leaf", no_argument, 0, OPT_LEAF},
      {"seed", required_argument, 0, OPT_SEED},
      {"x1", no_argument, 0, OPT_X1},
      {"recursive", required_argument, 0, OPT_RECUR},
      {"trace-pct", required_argument, 0, OPT_TPCT},
      {"quiet", no_argument, 0, 'q'},
      {"help", no_argument, 0, 'h'},
      {0, 0, 0, 0}};
  gen_opts o = {.kind = LJP_KIND_SYSPROF, .size = 38u << 20, .depth = 400,
                .host_depth = 20, .unique = 1000, .sandwiches = 3,
                .csyms = 4000, .protos = 60, .traces = 40,
                .trace_churn = 2000, .proto_churn = 5000, .locality = 50,
                .live = 20000, .seed = 1, .trace_pct = -1};
  const char *path = NULL;
  int quiet = 0, c;
  while ((c = getopt_long(argc, argv, "k:o:s:n:d:u:qh", opts, NULL)) != -1) {
    uint64_t v = 0;
    int bad = 0;
    if (optarg && c != 'k' && c != 'o')
      bad = parse_u64(optarg, &v, c == 's');
    if (!bad && optarg && c != 'k' && c != 'o' && c != 's' &&
        c != 'n' && c != OPT_TCHURN && c != OPT_PCHURN && c != OPT_REDUMP &&
        c != OPT_SEED && v > 0xffffff)
      bad = 1; /* counts stored in 24-bit token indices or unsigned */
    if (bad) {
      fprintf(stderr, "ljpgen: bad value '%s'\n", optarg);
      return 2;
    }
    switch (c) {
    case 'k':
      if (strcmp(optarg, "sysprof") == 0) o.kind = LJP_KIND_SYSPROF;
      else if (strcmp(optarg, "memprof") == 0) o.kind = LJP_KIND_MEMPROF;
      else {
        fprintf(stderr, "ljpgen: --kind takes sysprof or memprof\n");
        return 2;
      }
      break;
    case 'o': path = optarg; break;
    case 's': o.size = v; o.count = 0; break;
    case 'n': o.count = v; break;
    case 'd': o.depth = (unsigned)(v ? v : 1); break;
    case 'u': o.unique = (unsigned)(v ? v : 1); break;
    case OPT_HOST: o.host_depth = (unsigned)v; break;
    case OPT_SANDW: o.sandwiches = (unsigned)v; break;
    case OPT_CSYMS: o.csyms = (unsigned)v; break;
    case OPT_PROTOS: o.protos = (unsigned)v; break;
    case OPT_TRACES: o.traces = (unsigned)v; break;
    case OPT_TCHURN: o.trace_churn = v; break;
    case OPT_PCHURN: o.proto_churn = v; break;
    case OPT_REDUMP: o.redump = v; break;
    case OPT_LOCAL: o.locality = (unsigned)(v > 100 ? 100 : v); break;
    case OPT_LIVE: o.live = (unsigned)v; break;
    case OPT_LEAF: o.leaf = 1; break;
    case OPT_X1: o.x1 = 1; break;
    case OPT_RECUR: o.recursive = (unsigned)(v > 100 ? 100 : v); break;
    case OPT_TPCT: o.trace_pct = (int)(v > 100 ? 100 : v); break;
    case OPT_SEED: o.seed = v; break;
    case 'q': quiet = 1; break;
    case 'h': usage(stdout); return 0;
    default: usage(stderr); return 2;
    }
  }
  if (optind < argc) {
    fprintf(stderr, "ljpgen: unexpected argument '%s'\n", argv[optind]);
    return 2;
  }
  if (o.host_depth > 900) {
    fprintf(stderr, "ljpgen: --host-depth is at most 900\n");
    return 2;
  }
  out_ctx out = {path ? fopen(path, "wb") : stdout, 0, o.size};
  if (!out.f) {
    fprintf(stderr, "ljpgen: %s: %s\n", path, strerror(errno));
    return 1;
  }
  gen_world w;
  gen_stats st;
  memset(&st, 0, sizeof(st));
  ljp_writer *wr = ljp_writer_new(file_sink, &out, 1 << 20);
  ljp_status s = LJP_E_NOMEM;
  if (wr && world_build(&w, &o) == 0) {
    s = o.kind == LJP_KIND_SYSPROF
            ? gen_sysprof(&o, &w, wr, out_full, &out, &st)
            : gen_memprof(&o, &w, wr, out_full, &out, &st);
    if (s == LJP_OK)
      s = ljp_writer_flush(wr);
    world_free(&w);
  }
  ljp_writer_free(wr);
  int closed = path ? fclose(out.f) : fflush(out.f);
  if (s != LJP_OK || closed != 0) {
    fprintf(stderr, "ljpgen: %s: %s\n", path ? path : "stdout",
            s != LJP_OK ? ljp_status_name(s) : strerror(errno));
    return 1;
  }
  if (!quiet)
    fprintf(stderr,
            "kind=%s records=%llu bytes=%llu unique=%u symbol_events=%llu "
            "max_lua=%llu max_host=%llu live_blocks=%llu live_bytes=%llu\n",
            o.kind == LJP_KIND_SYSPROF ? "sysprof" : "memprof",
            (unsigned long long)st.records, (unsigned long long)out.bytes,
            st.unique, (unsigned long long)st.symbol_events,
            (unsigned long long)st.max_lua, (unsigned long long)st.max_host,
            (unsigned long long)st.live_blocks,
            (unsigned long long)st.live_bytes);
  return 0;
}
