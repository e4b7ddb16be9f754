/* folded.h — the collapsed-stack text reader ("frame;frame;frame N"), as
 * flamegraph.pl accepts it: the count is the last field, after spaces or
 * tabs; a second count before it ("stack BEFORE AFTER", difffolded.pl's
 * output) makes the line differential.  It is a push parser: feed it any
 * bytes in pieces of any size; nothing in the input can make it fail, only
 * running out of memory can. */
#ifndef LJPSVG_FOLDED_H
#define LJPSVG_FOLDED_H

#include <stddef.h>
#include <stdint.h>

#include "ljp.h"

/* Lines longer than this are skipped as invalid (bounded memory). */
#define FOLDED_MAX_LINE ((size_t)64 << 20)

typedef struct folded_reader {
  ljp_tree *after;         /* one-count lines and the second count */
  ljp_tree *before;        /* the first of two counts; may be NULL */
  int reverse;             /* --reverse: leaf frame first */
  uint64_t lines;          /* lines seen */
  uint64_t ignored;        /* lines without a valid count */
  uint64_t rounded;        /* fractional counts rounded to integers */
  uint64_t differential;   /* lines with two counts */
  uint64_t first_ignored;  /* line number (from 1) of the first ignored line */
  uint64_t first_ignored_offset;  /* and the byte offset where it starts */
  /* internal */
  uint64_t fed;            /* bytes fed before the current piece */
  uint64_t line_start;     /* byte offset of the line being read */
  char *buf;
  size_t len, cap;
  int skipping;            /* inside an over-long line */
  int started;             /* a byte-order mark is only checked once */
  uint32_t *frames;
  size_t frames_cap;
  uint32_t *frames2;
  /* The previous stack's text and frames: consecutive lines share long
   * prefixes, whose frames are then reused without hashing. */
  char *prev;
  size_t prev_len, prev_cap, prev_n;
  size_t *prev_ends;       /* end offset of each frame in prev */
  size_t prev_ends_cap;
  /* The node of each depth of the previous stack in the main tree: the
   * shared prefix's walk down the tree is skipped too. */
  uint32_t *prev_nodes;
  size_t prev_nodes_cap;
} folded_reader;

void folded_init(folded_reader *fr, ljp_tree *after, ljp_tree *before,
                 int reverse);
/* 0, or -1 when out of memory. */
int folded_feed(folded_reader *fr, const void *data, size_t len);
/* Processes an unterminated last line.  0, or -1 when out of memory. */
int folded_finish(folded_reader *fr);
void folded_free(folded_reader *fr);

/* Parses one line (no newline): 1 added, 0 ignored, -1 out of memory. */
int folded_line(folded_reader *fr, const char *line, size_t len);

#endif
