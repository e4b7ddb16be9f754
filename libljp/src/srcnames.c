/*
 * srcnames.c — naming Lua functions from their sources (see ljp.h).
 *
 * A Lua frame carries only its chunk and the line its function starts on.
 * That line of the source usually says what the function is called
 * ("local function risk_score(", "function M:get(", "M.f = function(").
 * Each chunk's file is read once, on its first lookup; every line is then
 * reduced to at most one name, or to "none" or "ambiguous", so a lookup is
 * a hash probe and an index.
 *
 * The scan is lexical and line by line, not a parse: it finds the keyword
 * "function" outside strings and comments, takes the name after it, or
 * for an anonymous function the assignment target or table key before
 * it.  A line that starts two functions names neither (a sample cannot
 * tell them apart); an anonymous function passed as an argument has no
 * name.  Guessing wrong would mislead; no name keeps "@chunk:line".
 */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Files larger than this are not read: sources are small, and a chunk
 * name that points at something else (a device, a huge log) must not
 * stall a report. */
#define MAX_SOURCE ((size_t)64 << 20)
#define MAX_NAME 128

#define NAME_NONE 0u
#define NAME_AMBIGUOUS UINT32_MAX

typedef struct src_file {
  char *chunk;          /* the chunk name, with its '@' (the key) */
  size_t chunk_len;
  uint64_t hash;
  int found;            /* the file could be read */
  uint32_t nlines;
  uint32_t *name_at;    /* per line (1-based, [0] unused): NAME_NONE,
                           NAME_AMBIGUOUS, or pool offset + 1 */
  char *pool;           /* NUL-terminated names */
  size_t pool_len, pool_cap;
} src_file;

struct ljp_srcnames {
  char **dirs;
  size_t ndirs;
  src_file **files;     /* open addressing on hash, power-of-two capacity */
  size_t fcap, fcount;
  size_t tried, found;
};

LJP_API ljp_srcnames *ljp_srcnames_new(void) {
  return calloc(1, sizeof(ljp_srcnames));
}

static void file_free(src_file *f) {
  if (!f)
    return;
  free(f->chunk);
  free(f->name_at);
  free(f->pool);
  free(f);
}

LJP_API void ljp_srcnames_free(ljp_srcnames *s) {
  if (!s)
    return;
  for (size_t i = 0; i < s->ndirs; i++)
    free(s->dirs[i]);
  free(s->dirs);
  for (size_t i = 0; i < s->fcap; i++)
    file_free(s->files[i]);
  free(s->files);
  free(s);
}

LJP_API ljp_status ljp_srcnames_add_dir(ljp_srcnames *s, const char *dir) {
  if (!s || !dir)
    return LJP_E_ARG;
  char **nd = realloc(s->dirs, (s->ndirs + 1) * sizeof(*nd));
  if (!nd)
    return LJP_E_NOMEM;
  s->dirs = nd;
  size_t n = strlen(dir);
  char *copy = malloc(n + 1);
  if (!copy)
    return LJP_E_NOMEM;
  memcpy(copy, dir, n + 1);
  s->dirs[s->ndirs++] = copy;
  return LJP_OK;
}

LJP_API void ljp_srcnames_stats(const ljp_srcnames *s, size_t *tried,
                                size_t *found) {
  if (tried)
    *tried = s ? s->tried : 0;
  if (found)
    *found = s ? s->found : 0;
}

/* ---- reading ---- */

/* Reads a whole regular file; NULL when it cannot (absent, a directory,
 * too large, out of memory). */
static char *read_file(const char *path, size_t *len) {
  /* O_NONBLOCK: a chunk name may point at a FIFO, whose open would wait
   * for a writer; regular files ignore the flag. */
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0)
    return NULL;
  struct stat st;
  char *buf = NULL;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) &&
      (uint64_t)st.st_size <= MAX_SOURCE) {
    size_t want = (size_t)st.st_size, got = 0;
    buf = malloc(want + 1);
    while (buf && got < want) {
      ssize_t n = read(fd, buf + got, want - got);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        break; /* shrank while reading: use what is there */
      got += (size_t)n;
    }
    if (buf) {
      buf[got] = '\0';
      *len = got;
    }
  }
  close(fd);
  return buf;
}

/* The chunk's file: the path as is when absolute, else under each added
 * directory in order, then against the current directory. */
static char *read_chunk(const ljp_srcnames *s, const char *path,
                        size_t plen, size_t *len) {
  if (plen == 0 || memchr(path, '\0', plen))
    return NULL;
  char *p = malloc(plen + 1);
  if (!p)
    return NULL;
  memcpy(p, path, plen);
  p[plen] = '\0';
  char *text = NULL;
  if (p[0] != '/') {
    for (size_t i = 0; i < s->ndirs && !text; i++) {
      size_t dl = strlen(s->dirs[i]);
      char *full = malloc(dl + 1 + plen + 1);
      if (!full)
        break;
      memcpy(full, s->dirs[i], dl);
      full[dl] = '/';
      memcpy(full + dl + 1, p, plen + 1);
      text = read_file(full, len);
      free(full);
    }
  }
  if (!text)
    text = read_file(p, len);
  free(p);
  return text;
}

/* ---- scanning ---- */

static int is_name_start(int c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static int is_name_char(int c) {
  return is_name_start(c) || (c >= '0' && c <= '9');
}

static int is_space(int c) { return c == ' ' || c == '\t' || c == '\r'; }

/* A name found on a line: text and length (into the line or a copy). */
typedef struct found_name {
  const char *p;
  size_t len;
} found_name;

/* After "function": "f(", "M.f(", "M.a.b:f(" give that name (spaces
 * around the dots allowed, dropped); "(" gives an anonymous function
 * (returns 0 with *anon set).  Copies the name into buf. */
static int name_after(const char *p, const char *end, char *buf, size_t *len,
                      int *anon) {
  size_t n = 0;
  *anon = 0;
  while (p < end && is_space(*p))
    p++;
  if (p < end && *p == '(') {
    *anon = 1;
    return 0;
  }
  for (;;) {
    if (p >= end || !is_name_start(*p))
      return 0;
    while (p < end && is_name_char(*p)) {
      if (n >= MAX_NAME)
        return 0;
      buf[n++] = *p++;
    }
    while (p < end && is_space(*p))
      p++;
    if (p < end && (*p == '.' || *p == ':')) {
      if (n >= MAX_NAME)
        return 0;
      buf[n++] = *p++;
      while (p < end && is_space(*p))
        p++;
      continue;
    }
    break;
  }
  if (p >= end || *p != '(')
    return 0;
  *len = n;
  return n > 0;
}

/* Before an anonymous "function": "<target> =" where target is a name
 * chain ("f", "M.f", "self.cb") or a string key ("["key"]"), as in an
 * assignment, a local declaration or a table constructor field. */
static int name_before(const char *line, const char *p, char *buf,
                       size_t *len) {
  while (p > line && is_space(p[-1]))
    p--;
  if (p == line || p[-1] != '=')
    return 0;
  p--;
  if (p > line && (p[-1] == '=' || p[-1] == '~' || p[-1] == '<' ||
                   p[-1] == '>'))
    return 0; /* a comparison, not an assignment */
  while (p > line && is_space(p[-1]))
    p--;
  const char *e = p;
  if (p > line && p[-1] == ']') {
    /* ["key"] or ['key'] */
    p--;
    if (p == line || (p[-1] != '"' && p[-1] != '\''))
      return 0;
    char q = p[-1];
    const char *ke = --p;
    while (p > line && p[-1] != q)
      p--;
    if (p == line || p - 1 == line || p[-2] != '[')
      return 0;
    size_t n = (size_t)(ke - p);
    if (n == 0 || n > MAX_NAME)
      return 0;
    for (size_t i = 0; i < n; i++)
      if ((unsigned char)p[i] < 0x20 || p[i] == ';' || p[i] == '\\' ||
          p[i] == 0x7f)
        return 0; /* would not survive folded text, or is escaped */
    memcpy(buf, p, n);
    *len = n;
    return 1;
  }
  while (p > line && (is_name_char(p[-1]) || p[-1] == '.'))
    p--;
  if (p == e || !is_name_start(*p) || e[-1] == '.' || (size_t)(e - p) > MAX_NAME)
    return 0;
  memcpy(buf, p, (size_t)(e - p));
  *len = (size_t)(e - p);
  return 1;
}

/* The long bracket level at p ("[[" 0, "[==[" 2), or -1. */
static int long_open(const char *p, const char *end) {
  if (p >= end || *p != '[')
    return -1;
  int level = 0;
  p++;
  while (p < end && *p == '=')
    level++, p++;
  return p < end && *p == '[' ? level : -1;
}

/* Where the long bracket of level closes in [p, end), or NULL. */
static const char *long_close(const char *p, const char *end, int level) {
  for (; p < end; p++) {
    if (*p != ']')
      continue;
    const char *q = p + 1;
    int l = 0;
    while (q < end && *q == '=')
      l++, q++;
    if (l == level && q < end && *q == ']')
      return q + 1;
  }
  return NULL;
}

/* Scans one line.  *longlevel carries a long string or comment across
 * lines (-1: none).  Returns the number of functions starting on the line
 * and the name of the first (len 0: anonymous and unnamed). */
static int scan_line(const char *line, const char *end, int *longlevel,
                     char *buf, size_t *len) {
  const char *p = line;
  int count = 0;
  *len = 0;
  if (*longlevel >= 0) {
    const char *c = long_close(p, end, *longlevel);
    if (!c)
      return 0;
    *longlevel = -1;
    p = c;
  }
  while (p < end) {
    char c = *p;
    if (c == '-' && p + 1 < end && p[1] == '-') {
      int lvl = long_open(p + 2, end);
      if (lvl < 0)
        break; /* a comment to the end of the line */
      const char *open_end = p + 2 + lvl + 2;
      const char *cl = long_close(open_end, end, lvl);
      if (!cl) {
        *longlevel = lvl;
        break;
      }
      p = cl;
      continue;
    }
    if (c == '[') {
      int lvl = long_open(p, end);
      if (lvl >= 0) {
        const char *cl = long_close(p + lvl + 2, end, lvl);
        if (!cl) {
          *longlevel = lvl;
          break;
        }
        p = cl;
        continue;
      }
    }
    if (c == '"' || c == '\'') {
      p++;
      while (p < end && *p != c)
        p += *p == '\\' && p + 1 < end ? 2 : 1;
      p++;
      continue;
    }
    if (is_name_start(c)) {
      const char *w = p;
      while (p < end && is_name_char(*p))
        p++;
      if (p - w != 8 || memcmp(w, "function", 8) != 0 ||
          (w > line && (w[-1] == '.' || w[-1] == ':')))
        continue;
      if (++count > 1)
        continue;
      int anon;
      if (!name_after(p, end, buf, len, &anon) &&
          (!anon || !name_before(line, w, buf, len)))
        *len = 0;
      continue;
    }
    p++;
  }
  return count;
}

static int pool_add(src_file *f, const char *s, size_t n, uint32_t *off) {
  if (f->pool_len + n + 1 > f->pool_cap) {
    size_t cap = f->pool_cap ? f->pool_cap * 2 : 1024;
    while (cap < f->pool_len + n + 1)
      cap *= 2;
    char *np = realloc(f->pool, cap);
    if (!np)
      return -1;
    f->pool = np;
    f->pool_cap = cap;
  }
  if (f->pool_len + n + 1 >= NAME_AMBIGUOUS)
    return -1;
  memcpy(f->pool + f->pool_len, s, n);
  f->pool[f->pool_len + n] = '\0';
  *off = (uint32_t)f->pool_len + 1;
  f->pool_len += n + 1;
  return 0;
}

/* Indexes text: the name, if any, of every line. */
static int index_text(src_file *f, const char *text, size_t len) {
  uint32_t lines = 1;
  for (size_t i = 0; i < len; i++)
    if (text[i] == '\n' && lines < UINT32_MAX - 1)
      lines++;
  f->name_at = calloc((size_t)lines + 1, sizeof(*f->name_at));
  if (!f->name_at)
    return -1;
  f->nlines = lines;
  const char *p = text, *end = text + len;
  int longlevel = -1;
  char buf[MAX_NAME + 1];
  for (uint32_t ln = 1; ln <= lines && p <= end; ln++) {
    const char *e = memchr(p, '\n', (size_t)(end - p));
    if (!e)
      e = end;
    /* A first line "#!..." is skipped by Lua's loader. */
    if (!(ln == 1 && p < e && *p == '#')) {
      size_t n;
      int count = scan_line(p, e, &longlevel, buf, &n);
      if (count > 1)
        f->name_at[ln] = NAME_AMBIGUOUS;
      else if (count == 1 && n && pool_add(f, buf, n, &f->name_at[ln]))
        return -1;
    }
    p = e + 1;
  }
  return 0;
}

/* ---- the cache ---- */

static int files_grow(ljp_srcnames *s) {
  size_t ncap = s->fcap ? s->fcap * 2 : 16;
  src_file **nf = calloc(ncap, sizeof(*nf));
  if (!nf)
    return -1;
  for (size_t i = 0; i < s->fcap; i++) {
    src_file *f = s->files[i];
    if (!f)
      continue;
    size_t j = (size_t)f->hash & (ncap - 1);
    while (nf[j])
      j = (j + 1) & (ncap - 1);
    nf[j] = f;
  }
  free(s->files);
  s->files = nf;
  s->fcap = ncap;
  return 0;
}

/* The indexed file of a chunk, read on first use; NULL when out of
 * memory (an unreadable file is an entry with found == 0). */
static src_file *file_of(ljp_srcnames *s, const char *chunk, size_t len) {
  uint64_t h = ljp__hash_bytes(chunk, len);
  if (s->fcap) {
    for (size_t j = (size_t)h & (s->fcap - 1); s->files[j];
         j = (j + 1) & (s->fcap - 1)) {
      src_file *f = s->files[j];
      if (f->hash == h && f->chunk_len == len && !memcmp(f->chunk, chunk, len))
        return f;
    }
  }
  if ((s->fcount + 1) * 2 > s->fcap && files_grow(s))
    return NULL;
  src_file *f = calloc(1, sizeof(*f));
  if (!f || !(f->chunk = malloc(len + 1))) {
    free(f);
    return NULL;
  }
  memcpy(f->chunk, chunk, len);
  f->chunk[len] = '\0';
  f->chunk_len = len;
  f->hash = h;
  size_t tlen = 0;
  char *text = NULL;
  int is_file = chunk[0] == '@';
  if (is_file) {
    s->tried++;
    text = read_chunk(s, chunk + 1, len - 1, &tlen);
  }
  /* A chunk loaded from a string without a name is named by the string:
   * the chunk name is the source itself. */
  const char *src = is_file ? text : chunk;
  if (src) {
    if (index_text(f, src, is_file ? tlen : len) == 0) {
      f->found = 1;
      s->found += is_file;
    } else { /* out of memory: no names from this file, nothing else lost */
      free(f->name_at);
      f->name_at = NULL;
      f->nlines = 0;
    }
    free(text);
  }
  size_t j = (size_t)h & (s->fcap - 1);
  while (s->files[j])
    j = (j + 1) & (s->fcap - 1);
  s->files[j] = f;
  s->fcount++;
  return f;
}

LJP_API const char *ljp_srcnames_lookup(ljp_srcnames *s, const char *chunk,
                                        size_t len, uint64_t line) {
  /* "=name" chunks (stdin, C-given names) have no source to read. */
  if (!s || !chunk || len < 2 || chunk[0] == '=' || line == 0)
    return NULL;
  src_file *f = file_of(s, chunk, len);
  if (!f || !f->found || line > f->nlines)
    return NULL;
  uint32_t at = f->name_at[line];
  if (at == NAME_NONE || at == NAME_AMBIGUOUS)
    return NULL;
  return f->pool + at - 1;
}
