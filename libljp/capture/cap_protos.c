/*
 * cap_protos.c — from a prototype address read at the signal to the
 * synthetic id of its function.
 *
 * The handler records each Lua frame as (GCproto address, chunk-name GCstr
 * address, first line).  The stream names functions by synthetic ids of
 * (chunk name, first line) (cap_ids.c), so that two closures of one
 * function, or a function loaded twice, are one frame.  Reading the chunk
 * name costs a string copy and a hash, so the id is cached by prototype
 * address.  A prototype can be freed and its memory reused by another one
 * between two ticks: the cached entry is only taken when the chunk-name
 * address and the first line match too.  Runs on the VM thread only.
 */
#include <stdlib.h>
#include <string.h>

#include "cap_internal.h"

typedef struct proto_entry {
  uint64_t proto, chunk, id;
  uint32_t firstline;
} proto_entry;

static proto_entry *tab;
static size_t cap_tab, used;

static size_t slot_of(uint64_t proto, size_t mask)
{
  uint64_t h = proto * 0x9E3779B97F4A7C15ull;
  return (size_t)(h >> 17) & mask;
}

static int grow(void)
{
  size_t nc = cap_tab ? cap_tab * 2 : 1024, i;
  proto_entry *n = calloc(nc, sizeof *n);
  if (!n)
    return -1;
  for (i = 0; i < cap_tab; i++) {
    if (tab[i].proto) {
      size_t j = slot_of(tab[i].proto, nc - 1);
      while (n[j].proto)
        j = (j + 1) & (nc - 1);
      n[j] = tab[i];
    }
  }
  free(tab);
  tab = n;
  cap_tab = nc;
  return 0;
}

uint64_t ljp__cap_protos_id(uint64_t proto, uint64_t chunk, uint32_t firstline)
{
  size_t i, len;
  const char *s;
  char buf[4096];
  uint64_t id;
  if (!proto)
    return 0;
  if ((used + 1) * 4 >= cap_tab * 3 && grow() != 0)
    return 0;
  i = slot_of(proto, cap_tab - 1);
  while (tab[i].proto && tab[i].proto != proto)
    i = (i + 1) & (cap_tab - 1);
  if (tab[i].proto == proto && tab[i].chunk == chunk &&
      tab[i].firstline == firstline)
    return tab[i].id;
  s = ljp__cap_vm_str(&cap_S.lj, chunk, sizeof buf - 1, &len);
  if (!s)
    return 0;
  /* cap_ids keys on a C string: chunk names never hold NUL in practice,
   * and one that does is cut there, as Tarantool's writer cuts it. */
  memcpy(buf, s, len);
  buf[len] = '\0';
  id = ljp__cap_ids_lfunc(buf, (int)firstline);
  if (!id)
    return 0;
  if (!tab[i].proto)
    used++;
  tab[i].proto = proto;
  tab[i].chunk = chunk;
  tab[i].firstline = firstline;
  tab[i].id = id;
  return id;
}

void ljp__cap_protos_free(void)
{
  free(tab);
  tab = NULL;
  cap_tab = used = 0;
}
