/* output.c — the SVG's destination.  See output.h. */
#include "output.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <libxml/xmlwriter.h>

#include "cli.h"

#define OUT_BUF (32 * 1024)

/* libxml2 reports write errors itself ("I/O error : Broken pipe") on
 * stderr: ljpsvg says what happened in its own words instead. */
static void xml_quiet(void *ctx, const char *msg, ...)
{
  (void)ctx;
  (void)msg;
}

/* The output file: written by our callback so that the errno of the first
 * failed write is known (a closed pipe is not an error, a full disk is). */
typedef struct out_sink {
  int fd;
  int err;
  size_t len;              /* bytes waiting in buf */
  char buf[OUT_BUF];
} out_sink;

/* Writes buf[0..len) whole: 0, or -1 with the errno kept. */
static int write_all(out_sink *o, const char *buf, size_t len)
{
  size_t done = 0;
  while (done < len) {
    ssize_t n = write(o->fd, buf + done, len - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      if (!o->err)
        o->err = n < 0 ? errno : EIO;
      return -1;
    }
    done += (size_t)n;
  }
  return 0;
}

/* Appends n bytes, writing out OUT_BUF at a time: 0, or -1.  The frames,
 * which ljpsvg formats itself, come here directly (svg_direct). */
static int sink_put(void *ctx, const char *buf, size_t n)
{
  out_sink *o = ctx;
  if (o->err)
    return -1;
  if (o->len + n > OUT_BUF) {
    if (write_all(o, o->buf, o->len) != 0)
      return -1;
    o->len = 0;
  }
  if (n >= OUT_BUF)
    return write_all(o, buf, n);
  memcpy(o->buf + o->len, buf, n);
  o->len += n;
  return 0;
}

/* libxml2 flushes every 4000 bytes: those are gathered into OUT_BUF
 * before a write, a few hundred system calls fewer per graph. */
static int sink_write(void *ctx, const char *buf, int len)
{
  if (len < 0)
    return -1;
  return sink_put(ctx, buf, (size_t)len) != 0 ? -1 : len;
}

/* Called once the writer has flushed its last bytes. */
static int sink_close(void *ctx)
{
  out_sink *o = ctx;
  if (o->err)
    return -1;
  int rc = write_all(o, o->buf, o->len);
  o->len = 0;
  return rc;
}

int output_svg(const char *path, const ljp_tree *t, const fg_layout *l,
               const svg_opts *opts, const svg_diff *d)
{
  static out_sink o;       /* its buffer is large: not on the stack */
  o.fd = 1;
  o.err = 0;
  o.len = 0;
  const char *name = path && strcmp(path, "-") != 0 ? path : NULL;
  if (name) {
    o.fd = open(name, O_WRONLY | O_CREAT | O_TRUNC, 0666);
    if (o.fd < 0) {
      cli_error_in(name, "%s", strerror(errno));
      return -1;
    }
  }
  xmlSetGenericErrorFunc(NULL, xml_quiet);
  xmlOutputBufferPtr ob = xmlOutputBufferCreateIO(sink_write, sink_close, &o, NULL);
  xmlTextWriterPtr w = ob ? xmlNewTextWriter(ob) : NULL;
  if (!w) {
    if (ob)
      xmlOutputBufferClose(ob);
    if (name)
      close(o.fd);
    cli_error("out of memory");
    return -1;
  }
  int rc = svg_write_direct(w, sink_put, &o, t, l, opts, d);
  /* Frees the output buffer too, flushing it. */
  xmlFreeTextWriter(w);
  if (o.err)
    rc = -1;
  if (name && close(o.fd) != 0 && !o.err) {
    o.err = errno;
    rc = -1;
  }
  if (rc != 0 && !name && o.err == EPIPE)
    return 0;
  if (rc != 0)
    cli_error_in(name ? name : "stdout", "write failed: %s",
                 strerror(o.err ? o.err : EIO));
  return rc;
}
