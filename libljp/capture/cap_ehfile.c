/*
 * cap_ehfile.c — where an object's .eh_frame is when it has no
 * PT_GNU_EH_FRAME (linked with --no-eh-frame-hdr): the section headers of
 * its file say, since the loader does not map them.  VM thread only.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1   /* pread, O_CLOEXEC */
#endif
#include "cap_ehframe.h"

#include <elf.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int read_at(int fd, void *buf, size_t len, uint64_t off)
{
  ssize_t got = pread(fd, buf, len, (off_t)off);
  return got >= 0 && (size_t)got == len ? 0 : -1;
}

uint64_t ljp__cap_ehf_file_section(const char *path)
{
  Elf64_Ehdr eh;
  Elf64_Shdr *sh = NULL, str;
  char *names = NULL;
  uint64_t addr = 0;
  size_t i;
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return 0;
  if (read_at(fd, &eh, sizeof eh, 0) != 0 ||
      memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64 ||
      eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0 ||
      eh.e_shstrndx >= eh.e_shnum)
    goto out;
  sh = malloc(eh.e_shnum * sizeof *sh);
  if (!sh || read_at(fd, sh, eh.e_shnum * sizeof *sh, eh.e_shoff) != 0)
    goto out;
  str = sh[eh.e_shstrndx];
  if (str.sh_size == 0 || str.sh_size > (1u << 20))
    goto out;
  names = malloc(str.sh_size + 1);
  if (!names || read_at(fd, names, str.sh_size, str.sh_offset) != 0)
    goto out;
  names[str.sh_size] = '\0';
  for (i = 0; i < eh.e_shnum; i++)
    /* GNU ld says PROGBITS, other linkers SHT_X86_64_UNWIND. */
    if (sh[i].sh_name < str.sh_size &&
        (sh[i].sh_type == SHT_PROGBITS || sh[i].sh_type == 0x70000001) &&
        (sh[i].sh_flags & SHF_ALLOC) &&
        strcmp(names + sh[i].sh_name, ".eh_frame") == 0) {
      addr = sh[i].sh_addr;
      break;
    }
out:
  free(names);
  free(sh);
  close(fd);
  return addr;
}
