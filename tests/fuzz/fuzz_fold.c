/*
 * fuzz_fold.c — the fold and merge path: events of a reader into a call
 * tree through ljp_folder (every view, name style, weight and VM-state
 * option), a second folder with another view merged into the same tree,
 * then the folded writers (ljp_tree_write_folded and ljpfold's reference
 * dialect) and ljpfold's re-rooting filter.
 *
 * Input: one option byte, then the profile.  Option bits: 0-1 view,
 * 2-3 name style, 4-5 weight, 6-7 VM-state frame.
 *
 * Invariants: every node's total is its self weight plus its children's
 * totals (wrapping, as the tree adds), children come sorted by name, and
 * the folded lines add up to the root's total (less the weight of empty
 * stacks, which no line carries).
 */
#include "fuzz.h"

#include "fold_output.h"
#include "ljp.h"

#include <string.h>

typedef struct sum_ctx {
  uint64_t sum;   /* wrapping sum of the line counts */
  size_t lines;
} sum_ctx;

static int sum_line(void *ctx, const char *line, size_t len) {
  sum_ctx *s = ctx;
  FUZZ_CHECK(len >= 3 && line[len - 1] == '\n');
  /* The count is the last field: digits, maybe a minus sign. */
  size_t i = len - 1;
  while (i > 0 && line[i - 1] >= '0' && line[i - 1] <= '9')
    i--;
  FUZZ_CHECK(i < len - 1);
  int neg = i > 0 && line[i - 1] == '-';
  uint64_t v = 0;
  for (size_t k = i; k < len - 1; k++)
    v = v * 10 + (uint64_t)(line[k] - '0');
  s->sum += neg ? (uint64_t)0 - v : v;
  s->lines++;
  return 0;
}

static int discard(void *ctx, const char *line, size_t len) {
  (void)ctx;
  (void)line;
  (void)len;
  return 0;
}

static void check_tree(const ljp_tree *t) {
  uint32_t n = ljp_tree_node_count(t);
  uint32_t kids[16];
  for (uint32_t node = 0; node < n; node++) {
    size_t k = ljp_tree_children(t, node, kids, 16);
    uint64_t sum = (uint64_t)ljp_tree_node_self(t, node);
    uint32_t *all = k > 16 ? malloc(k * sizeof(*all)) : kids;
    if (!all)
      return;
    if (k > 16)
      FUZZ_CHECK(ljp_tree_children(t, node, all, k) == k);
    for (size_t i = 0; i < k; i++) {
      FUZZ_CHECK(all[i] > 0 && all[i] < n);
      FUZZ_CHECK(ljp_tree_node_parent(t, all[i]) == node);
      FUZZ_CHECK(ljp_tree_node_depth(t, all[i]) ==
                 ljp_tree_node_depth(t, node) + 1);
      sum += (uint64_t)ljp_tree_node_total(t, all[i]);
      if (i > 0) {
        size_t la, lb;
        const char *a = ljp_tree_frame_name(t, ljp_tree_node_frame(t, all[i - 1]), &la);
        const char *b = ljp_tree_frame_name(t, ljp_tree_node_frame(t, all[i]), &lb);
        int c = memcmp(a, b, la < lb ? la : lb);
        FUZZ_CHECK(c < 0 || (c == 0 && la <= lb));
      }
    }
    FUZZ_CHECK(sum == (uint64_t)ljp_tree_node_total(t, node));
    if (all != kids)
      free(all);
  }
}

static int fold_into(ljp_tree *t, const ljp_fold_options *fo,
                     const uint8_t *data, size_t size) {
  ljp_reader *r = ljp_reader_new();
  ljp_folder *f = ljp_folder_new(t, fo);
  int ok = r && f;
  if (ok) {
    ljp_limits lim = {FUZZ_MAX_STRING, FUZZ_MAX_FRAMES, FUZZ_MAX_SYMBOLS};
    ljp_reader_set_limits(r, &lim);
    ljp_reader_open_memory(r, data, size);
    const ljp_event *ev;
    while (ljp_reader_next(r, &ev) == LJP_OK)
      if (ljp_folder_add(f, r, ev) != LJP_OK) {
        ok = 0;
        break;
      }
  }
  ljp_folder_free(f);
  ljp_reader_free(r);
  return ok;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1)
    return 0;
  uint8_t o = data[0];
  ljp_fold_options fo;
  memset(&fo, 0, sizeof(fo));
  fo.view = (ljp_stack_view)(o & 3);
  fo.style = (ljp_name_style)((o >> 2) & 3);
  if (fo.style > LJP_NAME_REFERENCE)
    fo.style = LJP_NAME_DEFAULT;
  fo.weight = (ljp_weight)((o >> 4) & 3);
  fo.vmstate = (ljp_vmstate_frame)((o >> 6) % 3);
  fo.flavor = LJP_FLAVOR_AUTO;
  ljp_tree *t = ljp_tree_new();
  if (!t)
    return 0;
  int ok = fold_into(t, &fo, data + 1, size - 1);
  /* Merge: the same profile in another view into the same tree. */
  ljp_fold_options fo2 = fo;
  fo2.view = (ljp_stack_view)((fo.view + 1) & 3);
  if (fo2.view == LJP_VIEW_REFERENCE)
    fo2.style = LJP_NAME_REFERENCE;
  if (ok)
    ok = fold_into(t, &fo2, data + 1, size - 1);
  if (ok) {
    check_tree(t);
    sum_ctx s = {0, 0};
    if (ljp_tree_write_folded(t, 0, sum_line, &s) == LJP_OK)
      FUZZ_CHECK(s.sum == (uint64_t)ljp_tree_node_total(t, 0) -
                              (uint64_t)ljp_tree_node_self(t, 0));
    fold_write_tarantool(t, 0, discard, NULL);
    fold_write_tarantool(t, 2, discard, NULL);
    /* Re-root at the first frame interned, as --base does. */
    if (ljp_tree_frame_count(t) > 0) {
      size_t len;
      const char *name = ljp_tree_frame_name(t, 1, &len);
      char *base = malloc(len + 1);
      if (base) {
        memcpy(base, name, len);
        base[len] = '\0';
        fold_filter ff;
        memset(&ff, 0, sizeof(ff));
        ff.base = base;
        ljp_tree *sub = fold_filter_tree(t, &ff);
        if (sub) {
          check_tree(sub);
          ljp_tree_write_folded(sub, 1, discard, NULL);
          ljp_tree_free(sub);
        }
        free(base);
      }
    }
  }
  ljp_tree_free(t);
  return 0;
}
