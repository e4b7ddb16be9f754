/* output.c — result rows as TSV, CSV, JSON or an aligned table. */
#include "output.h"

#include "cli_json.h"
#include "cli_strbuf.h"

#include <stdlib.h>
#include <string.h>

static void put_hex_blob(FILE *out, const unsigned char *p, int n) {
  static const char hx[] = "0123456789abcdef";
  fputs("x'", out);
  for (int i = 0; i < n; i++) {
    fputc(hx[p[i] >> 4], out);
    fputc(hx[p[i] & 15], out);
  }
  fputc('\'', out);
}

/* TSV and table cells: control characters that would break a line or a
 * column are escaped C-style; everything else passes through. */
static void put_escaped(FILE *out, const char *s, int n) {
  for (int i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    switch (c) {
    case '\t': fputs("\\t", out); break;
    case '\n': fputs("\\n", out); break;
    case '\r': fputs("\\r", out); break;
    case '\\': fputs("\\\\", out); break;
    default: fputc(c, out);
    }
  }
}

static void put_csv(FILE *out, const char *s, int n) {
  if (!memchr(s, ',', (size_t)n) && !memchr(s, '"', (size_t)n) &&
      !memchr(s, '\n', (size_t)n) && !memchr(s, '\r', (size_t)n)) {
    fwrite(s, 1, (size_t)n, out);
    return;
  }
  fputc('"', out);
  for (int i = 0; i < n; i++) {
    if (s[i] == '"') fputc('"', out);
    fputc(s[i], out);
  }
  fputc('"', out);
}

/* Escaped as by every JSON writer of the toolkit (cli_json.h). */
static void put_json_string(FILE *out, const char *s, int n) {
  cli_json_str(out, s, (size_t)n);
}

/* One value in TSV, CSV or JSON. */
static void put_value(FILE *out, sqlite3_stmt *st, int i, out_format f) {
  int type = sqlite3_column_type(st, i);
  if (type == SQLITE_NULL) {
    if (f == OUT_JSON) fputs("null", out);
    return;
  }
  if (type == SQLITE_BLOB) {
    const unsigned char *p = sqlite3_column_blob(st, i);
    int n = sqlite3_column_bytes(st, i);
    if (f == OUT_JSON) fputc('"', out);
    put_hex_blob(out, p, n);
    if (f == OUT_JSON) fputc('"', out);
    return;
  }
  const char *s = (const char *)sqlite3_column_text(st, i);
  int n = sqlite3_column_bytes(st, i);
  if (!s) return;
  if (type == SQLITE_INTEGER || type == SQLITE_FLOAT) {
    /* JSON has no inf/nan; SQLite prints them as Inf/NaN. */
    if (f == OUT_JSON && type == SQLITE_FLOAT && (strchr(s, 'I') || strchr(s, 'N')))
      fputs("null", out);
    else
      fwrite(s, 1, (size_t)n, out);
    return;
  }
  switch (f) {
  case OUT_CSV: put_csv(out, s, n); break;
  case OUT_JSON: put_json_string(out, s, n); break;
  default: put_escaped(out, s, n); break;
  }
}

static int stream_rows(sqlite3_stmt *st, const out_options *o, FILE *out) {
  int ncol = sqlite3_column_count(st);
  int header = o->header >= 0 ? o->header : o->format == OUT_CSV;
  char sep = o->format == OUT_CSV ? ',' : '\t';
  int rc, rows = 0;
  if (header && o->format != OUT_JSON) {
    for (int i = 0; i < ncol; i++) {
      const char *name = sqlite3_column_name(st, i);
      if (i) fputc(sep, out);
      if (o->format == OUT_CSV)
        put_csv(out, name, (int)strlen(name));
      else
        put_escaped(out, name, (int)strlen(name));
    }
    fputc('\n', out);
  }
  if (o->format == OUT_JSON) fputc('[', out);
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (o->format == OUT_JSON) {
      fputs(rows ? ",\n{" : "\n{", out);
      for (int i = 0; i < ncol; i++) {
        const char *name = sqlite3_column_name(st, i);
        if (i) fputc(',', out);
        put_json_string(out, name, (int)strlen(name));
        fputc(':', out);
        put_value(out, st, i, OUT_JSON);
      }
      fputc('}', out);
    } else {
      for (int i = 0; i < ncol; i++) {
        if (i) fputc(sep, out);
        put_value(out, st, i, o->format);
      }
      fputc('\n', out);
    }
    rows++;
  }
  if (o->format == OUT_JSON) fputs(rows ? "\n]\n" : "]\n", out);
  return rc;
}

/* The display text of a table cell, escaped like TSV. */
static int table_cell(strbuf *b, sqlite3_stmt *st, int i) {
  int type = sqlite3_column_type(st, i);
  if (type == SQLITE_NULL) return sb_put(b, "", 0);
  if (type == SQLITE_BLOB) {
    static const char hx[] = "0123456789abcdef";
    const unsigned char *p = sqlite3_column_blob(st, i);
    int n = sqlite3_column_bytes(st, i);
    if (sb_put(b, "x'", 2)) return -1;
    for (int k = 0; k < n; k++) {
      char two[2] = {hx[p[k] >> 4], hx[p[k] & 15]};
      if (sb_put(b, two, 2)) return -1;
    }
    return sb_put(b, "'", 1);
  }
  const char *s = (const char *)sqlite3_column_text(st, i);
  int n = sqlite3_column_bytes(st, i);
  for (int k = 0; s && k < n; k++) {
    const char *e = NULL;
    switch (s[k]) {
    case '\t': e = "\\t"; break;
    case '\n': e = "\\n"; break;
    case '\r': e = "\\r"; break;
    case '\\': e = "\\\\"; break;
    }
    if (e ? sb_put(b, e, 2) : sb_put(b, s + k, 1)) return -1;
  }
  return 0;
}

/* Display width: UTF-8 continuation bytes take no column. */
static size_t text_width(const char *s) {
  size_t w = 0;
  for (; *s; s++)
    if (((unsigned char)*s & 0xC0) != 0x80) w++;
  return w;
}

static void pad(FILE *out, size_t n) {
  while (n--) fputc(' ', out);
}

static int table_rows(sqlite3_stmt *st, const out_options *o, FILE *out) {
  int ncol = sqlite3_column_count(st);
  int header = o->header != 0;
  strbuf cells = {0};
  size_t *offs = NULL, nrows = 0, ncells = 0, cap = 0;
  size_t *width = calloc((size_t)ncol, sizeof *width);
  int *numeric = calloc((size_t)ncol, sizeof *numeric);
  int rc;
  if (!width || !numeric) goto oom;
  for (int i = 0; i < ncol; i++) {
    width[i] = header ? text_width(sqlite3_column_name(st, i)) : 0;
    numeric[i] = -1; /* unknown until a non-NULL value is seen */
  }
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    for (int i = 0; i < ncol; i++) {
      if (ncells == cap) {
        cap = cap ? cap * 2 : 256;
        size_t *p = realloc(offs, cap * sizeof *p);
        if (!p) goto oom;
        offs = p;
      }
      offs[ncells++] = cells.len;
      if (table_cell(&cells, st, i) || sb_put(&cells, "", 1)) goto oom;
      size_t w = text_width(cells.p + offs[ncells - 1]);
      if (w > width[i]) width[i] = w;
      int t = sqlite3_column_type(st, i);
      if (t != SQLITE_NULL) {
        int num = t == SQLITE_INTEGER || t == SQLITE_FLOAT;
        const char *s = (const char *)sqlite3_column_text(st, i);
        /* printf('%.2f') percentages come back as text: align them too. */
        if (!num && s && *s) {
          char *end;
          strtod(s, &end);
          num = *end == 0 && strchr("+-.0123456789", *s) != NULL;
        }
        numeric[i] = numeric[i] == -1 ? num : numeric[i] && num;
      }
    }
    nrows++;
  }
  if (header) {
    for (int i = 0; i < ncol; i++) {
      const char *name = sqlite3_column_name(st, i);
      size_t w = text_width(name);
      if (i) fputs("  ", out);
      if (numeric[i] == 1) pad(out, width[i] - w);
      fputs(name, out);
      if (numeric[i] != 1 && i + 1 < ncol) pad(out, width[i] - w);
    }
    fputc('\n', out);
  }
  for (size_t r = 0; r < nrows; r++) {
    for (int i = 0; i < ncol; i++) {
      const char *s = cells.p + offs[r * (size_t)ncol + (size_t)i];
      size_t w = text_width(s);
      if (i) fputs("  ", out);
      if (numeric[i] == 1) pad(out, width[i] - w);
      fputs(s, out);
      if (numeric[i] != 1 && i + 1 < ncol) pad(out, width[i] - w);
    }
    fputc('\n', out);
  }
  free(cells.p);
  free(offs);
  free(width);
  free(numeric);
  return rc;
oom:
  free(cells.p);
  free(offs);
  free(width);
  free(numeric);
  return SQLITE_NOMEM;
}

int out_statement(sqlite3 *db, sqlite3_stmt *st, const out_options *o,
                  FILE *out, char *err, size_t errlen) {
  int rc;
  if (sqlite3_column_count(st) == 0) {
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {}
  } else if (o->format == OUT_TABLE) {
    rc = table_rows(st, o, out);
  } else {
    rc = stream_rows(st, o, out);
  }
  sqlite3_reset(st);
  if (rc != SQLITE_DONE) {
    snprintf(err, errlen, "%s",
             rc == SQLITE_NOMEM ? "out of memory" : sqlite3_errmsg(db));
    return -1;
  }
  return 0;
}

int out_sql(sqlite3 *db, const char *sql, const out_options *o, FILE *out,
            char *err, size_t errlen) {
  while (sql && *sql) {
    sqlite3_stmt *st = NULL;
    const char *tail = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, &tail) != SQLITE_OK) {
      snprintf(err, errlen, "%s", sqlite3_errmsg(db));
      return -1;
    }
    sql = tail;
    if (!st) continue; /* whitespace or a comment */
    int rc = out_statement(db, st, o, out, err, errlen);
    sqlite3_finalize(st);
    if (rc) return -1;
  }
  return 0;
}
