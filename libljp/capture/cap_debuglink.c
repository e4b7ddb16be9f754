/*
 * cap_debuglink.c — where the separate debug file of a stripped object is.
 *
 * Distributions strip their libraries (Debian's libluajit-5.1.so.2 keeps
 * .dynsym only) and ship the full .symtab in a debug package.  The two
 * conventions gdb follows are used here, in its order:
 *
 *   build-id  the NT_GNU_BUILD_ID note names <root>/.build-id/ab/cdef….debug;
 *   debuglink .gnu_debuglink holds a file name and the CRC32 of that file,
 *             looked for in the object's directory, in its .debug/
 *             subdirectory and under <root>/<the object's directory>/.
 *
 * The roots are those of $LJP_DEBUG_DIR (':'-separated), then /usr/lib/debug.
 * A build-id hit is trusted (the name carries the id); a debuglink hit must
 * match the CRC, since a file of that name may belong to another build.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1   /* realpath */
#endif
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cap_names.h"

#define SYSTEM_DEBUG_ROOT "/usr/lib/debug"

uint32_t ljp__cap_crc32(uint32_t crc, const uint8_t *p, size_t n)
{
  size_t i;
  int k;
  crc = ~crc;
  for (i = 0; i < n; i++) {
    crc ^= p[i];
    for (k = 0; k < 8; k++)
      crc = (crc >> 1) ^ (0xedb88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

/* The section headers of p, validated; NULL when p is no usable ELF. */
static const ElfW(Shdr) *sections(const uint8_t *p, size_t size, size_t *n)
{
  const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)p;
  if (size < sizeof *eh || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
      eh->e_shentsize != sizeof(ElfW(Shdr)) || eh->e_shoff == 0 ||
      eh->e_shoff > size ||
      (size - eh->e_shoff) / sizeof(ElfW(Shdr)) < eh->e_shnum)
    return NULL;
  *n = eh->e_shnum;
  return (const ElfW(Shdr) *)(p + eh->e_shoff);
}

static int in_file(const ElfW(Shdr) *s, size_t size)
{
  return s->sh_type != SHT_NOBITS && s->sh_offset <= size &&
         s->sh_size <= size - s->sh_offset;
}

int ljp__cap_notes_build_id(const uint8_t *q, size_t len, char *hex,
                            size_t hexlen)
{
  const uint8_t *end = q + len;
  /* Notes: namesz, descsz, type, then name and desc, each 4-aligned. */
  while ((size_t)(end - q) >= 12) {
    uint32_t nsz, dsz, type;
    size_t nal, dal, k;
    memcpy(&nsz, q, 4);
    memcpy(&dsz, q + 4, 4);
    memcpy(&type, q + 8, 4);
    nal = ((size_t)nsz + 3) & ~(size_t)3;
    dal = ((size_t)dsz + 3) & ~(size_t)3;
    if (nal < nsz || dal < dsz || (size_t)(end - q) - 12 < nal ||
        (size_t)(end - q) - 12 - nal < dal)
      break;
    if (type == NT_GNU_BUILD_ID && nsz == 4 &&
        memcmp(q + 12, "GNU", 4) == 0 && dsz >= 2 &&
        (size_t)dsz * 2 + 1 <= hexlen) {
      for (k = 0; k < dsz; k++)
        snprintf(hex + 2 * k, 3, "%02x", q[12 + nal + k]);
      return 1;
    }
    q += 12 + nal + dal;
  }
  return 0;
}

/* The build-id of the file's note sections, as lowercase hex; 0 when there
 * is none. */
static int build_id(const uint8_t *p, size_t size, char *hex, size_t hexlen)
{
  size_t n, i;
  const ElfW(Shdr) *sh = sections(p, size, &n);
  if (!sh)
    return 0;
  for (i = 0; i < n; i++)
    if (sh[i].sh_type == SHT_NOTE && in_file(&sh[i], size) &&
        ljp__cap_notes_build_id(p + sh[i].sh_offset, sh[i].sh_size, hex,
                                hexlen))
      return 1;
  return 0;
}

/* The .gnu_debuglink file name and CRC; 0 when there is none. */
static int debuglink(const uint8_t *p, size_t size, const char **name,
                     uint32_t *crc)
{
  size_t n, i;
  const ElfW(Ehdr) *eh = (const ElfW(Ehdr) *)p;
  const ElfW(Shdr) *sh = sections(p, size, &n), *strs;
  if (!sh || eh->e_shstrndx >= n || !in_file(&sh[eh->e_shstrndx], size))
    return 0;
  strs = &sh[eh->e_shstrndx];
  for (i = 0; i < n; i++) {
    const char *nm, *d;
    size_t len, off;
    if (sh[i].sh_name >= strs->sh_size || !in_file(&sh[i], size))
      continue;
    nm = (const char *)p + strs->sh_offset + sh[i].sh_name;
    if (strnlen(nm, strs->sh_size - sh[i].sh_name) !=
            sizeof ".gnu_debuglink" - 1 ||
        memcmp(nm, ".gnu_debuglink", sizeof ".gnu_debuglink" - 1) != 0)
      continue;
    d = (const char *)p + sh[i].sh_offset;
    len = strnlen(d, sh[i].sh_size);
    off = (len + 1 + 3) & ~(size_t)3;       /* the CRC is 4-aligned */
    if (len == 0 || len == sh[i].sh_size || off + 4 > sh[i].sh_size ||
        memchr(d, '/', len))
      return 0;
    *name = d;
    memcpy(crc, d + off, 4);
    return 1;
  }
  return 0;
}

static int file_crc(const char *path, uint32_t *crc)
{
  uint8_t buf[65536];
  ssize_t n;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  *crc = 0;
  while ((n = read(fd, buf, sizeof buf)) > 0)
    *crc = ljp__cap_crc32(*crc, buf, (size_t)n);
  close(fd);
  return n < 0 ? -1 : 0;
}

static int is_file(const char *path)
{
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Calls try(root) for each debug root in order; stops at the first 0. */
typedef int (*root_fn)(const char *root, size_t len, void *ctx);

static int each_root(root_fn fn, void *ctx)
{
  const char *env = getenv(CAP_DEBUG_DIR_ENV);
  while (env && *env) {
    const char *c = strchr(env, ':');
    size_t len = c ? (size_t)(c - env) : strlen(env);
    if (len && fn(env, len, ctx) == 0)
      return 0;
    env += len + (c ? 1 : 0);
  }
  return fn(SYSTEM_DEBUG_ROOT, sizeof SYSTEM_DEBUG_ROOT - 1, ctx);
}

typedef struct find_ctx {
  const char *hex;        /* build-id */
  const char *dir;        /* the object's directory (absolute) */
  const char *link;       /* debuglink name */
  uint32_t crc;
  char *out;
  size_t outlen;
} find_ctx;

static int fits(int n, size_t outlen)
{
  return n > 0 && (size_t)n < outlen;
}

static int try_build_id(const char *root, size_t len, void *arg)
{
  find_ctx *c = arg;
  int n = snprintf(c->out, c->outlen, "%.*s/.build-id/%.2s/%s.debug",
                   (int)len, root, c->hex, c->hex + 2);
  return fits(n, c->outlen) && is_file(c->out) ? 0 : -1;
}

static int link_ok(find_ctx *c)
{
  uint32_t crc;
  return is_file(c->out) && file_crc(c->out, &crc) == 0 && crc == c->crc;
}

static int try_link_root(const char *root, size_t len, void *arg)
{
  find_ctx *c = arg;
  int n = snprintf(c->out, c->outlen, "%.*s%s/%s", (int)len, root, c->dir,
                   c->link);
  return fits(n, c->outlen) && link_ok(c) ? 0 : -1;
}

int ljp__cap_debugfile_find(const uint8_t *p, size_t size, const char *path,
                            char *out, size_t outlen)
{
  char hex[129], *real, *slash;
  find_ctx c;
  int n;
  memset(&c, 0, sizeof c);
  c.out = out;
  c.outlen = outlen;
  if (build_id(p, size, hex, sizeof hex)) {
    c.hex = hex;
    if (each_root(try_build_id, &c) == 0)
      return 0;
  }
  if (!debuglink(p, size, &c.link, &c.crc))
    return -1;
  /* Symlinks (libfoo.so.2 -> libfoo.so.2.1.0) are followed: the link is
   * relative to where the file really is. */
  real = realpath(path, NULL);
  if (!real)
    return -1;
  slash = strrchr(real, '/');
  if (!slash) {
    free(real);
    return -1;
  }
  *slash = '\0';
  c.dir = real;
  n = snprintf(out, outlen, "%s/%s", real, c.link);
  if (fits(n, outlen) && strcmp(out, path) != 0 && link_ok(&c))
    goto found;
  n = snprintf(out, outlen, "%s/.debug/%s", real, c.link);
  if (fits(n, outlen) && link_ok(&c))
    goto found;
  if (each_root(try_link_root, &c) == 0)
    goto found;
  free(real);
  return -1;
found:
  free(real);
  return 0;
}
