/* capdecode.c — see capdecode.h. */
#include "capdecode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sb {
  char *p;
  size_t len, cap;
} sb;

static void sb_add(sb *b, const char *s, size_t n)
{
  if (b->len + n + 1 > b->cap) {
    size_t nc = (b->cap + n + 1) * 2;
    char *np = realloc(b->p, nc);
    if (!np)
      abort();
    b->p = np;
    b->cap = nc;
  }
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = '\0';
}

static void sb_frame(sb *b, const ljp_frame *f, ljp_flavor fl)
{
  char buf[256];
  size_t n = ljp_frame_name(f, LJP_NAME_DEFAULT, fl, buf, sizeof buf);
  if (n >= sizeof buf)
    n = sizeof buf - 1;
  sb_add(b, buf, n);
}

static void add_line(cap_decoded *d, char *line)
{
  char **nl = realloc(d->lines, (d->nlines + 1) * sizeof *nl);
  if (!nl)
    abort();
  d->lines = nl;
  d->lines[d->nlines++] = line;
}

static int decode(ljp_reader *r, cap_decoded *d)
{
  const ljp_event *ev;
  ljp_status st;
  while ((st = ljp_reader_next(r, &ev)) == LJP_OK) {
    ljp_flavor fl = ljp_reader_flavor(r);
    if (ev->type == LJP_EV_SYMBOL) {
      switch (ev->u.symbol.sym->kind) {
      case LJP_SYM_LFUNC: d->sym_lfunc++; break;
      case LJP_SYM_CFUNC: d->sym_cfunc++; break;
      default: d->sym_trace++; break;
      }
    } else if (ev->type == LJP_EV_SAMPLE) {
      const ljp_sample *s = &ev->u.sample;
      sb b = {NULL, 0, 0};
      size_t i;
      d->samples++;
      if (s->vmstate >= 0 && s->vmstate < LJP_VMST__MAX)
        d->vmstate[s->vmstate]++;
      sb_add(&b, ljp_vmstate_name(s->vmstate),
             strlen(ljp_vmstate_name(s->vmstate)));
      sb_add(&b, "|", 1);
      if (s->has_time) {
        d->x1_samples++;
        if (s->flags & LJP_SAMPLE_LUA_INCOMPLETE)
          d->lua_incomplete++;
        if (s->flags & LJP_SAMPLE_HOST_INCOMPLETE)
          d->host_incomplete++;
        if (s->time_ns < d->last_time_ns)
          d->time_backwards++;
        d->last_time_ns = s->time_ns;
      }
      if (s->vmstate == LJP_VMST_TRACE) {
        if (!s->trace.sym)
          d->undefined_refs++;
        sb_frame(&b, &s->trace, fl);
      }
      {
        for (i = 0; i < s->lua_count; i++) {
          if (i || s->vmstate == LJP_VMST_TRACE)
            sb_add(&b, ";", 1);
          if (!s->lua[i].sym && s->lua[i].kind != LJP_FRAME_FFUNC)
            d->undefined_refs++;
          sb_frame(&b, &s->lua[i], fl);
        }
        sb_add(&b, "|", 1);
        for (i = 0; i < s->host_count; i++) {
          if (i)
            sb_add(&b, ";", 1);
          if (!s->host[i].sym)
            d->undefined_refs++;
          sb_frame(&b, &s->host[i], fl);
        }
      }
      if (s->has_time) {
        char co[32];
        snprintf(co, sizeof co, "|co=%llu", (unsigned long long)s->coro);
        sb_add(&b, co, strlen(co));
      }
      add_line(d, b.p ? b.p : calloc(1, 1));
    }
  }
  d->status = st;
  d->complete = ljp_reader_complete(r);
  d->flavor = ljp_reader_flavor(r);
  d->ljs_version = ljp_reader_ljs_version(r);
  d->ljp_version = ljp_reader_event_version(r);
  return 0;
}

int cap_decode_memory(const void *buf, size_t len, cap_decoded *d)
{
  ljp_reader *r = ljp_reader_new();
  int rc;
  memset(d, 0, sizeof *d);
  if (!r)
    return -1;
  if (ljp_reader_open_memory(r, buf, len) != LJP_OK) {
    d->status = ljp_reader_status(r);
    ljp_reader_free(r);
    return -1;
  }
  rc = decode(r, d);
  ljp_reader_free(r);
  return rc;
}

int cap_decode_file(const char *path, cap_decoded *d)
{
  ljp_reader *r = ljp_reader_new();
  int rc;
  memset(d, 0, sizeof *d);
  if (!r)
    return -1;
  if (ljp_reader_open_path(r, path) != LJP_OK) {
    d->status = ljp_reader_status(r);
    ljp_reader_free(r);
    return -1;
  }
  rc = decode(r, d);
  ljp_reader_free(r);
  return rc;
}

void cap_decoded_free(cap_decoded *d)
{
  size_t i;
  for (i = 0; i < d->nlines; i++)
    free(d->lines[i]);
  free(d->lines);
  d->lines = NULL;
  d->nlines = 0;
}

size_t cap_count_lines(const cap_decoded *d, const char *const *needles)
{
  size_t i, n = 0;
  for (i = 0; i < d->nlines; i++) {
    const char *const *k;
    int ok = 1;
    for (k = needles; *k; k++)
      if (!strstr(d->lines[i], *k)) {
        ok = 0;
        break;
      }
    n += ok;
  }
  return n;
}

size_t cap_count1(const cap_decoded *d, const char *needle)
{
  const char *const v[] = {needle, NULL};
  return cap_count_lines(d, v);
}

size_t cap_count2(const cap_decoded *d, const char *a, const char *b)
{
  const char *const v[] = {a, b, NULL};
  return cap_count_lines(d, v);
}
