/*
 * runstat — runs a command and prints "wall user sys maxrss_kib" on the
 * last line of stderr (seconds with microseconds; getrusage of the child).
 * /usr/bin/time reports CPU time in 10 ms steps, too coarse for runs
 * that should take well under 0.1 s.  The command's stdout goes to
 * /dev/null, its stderr to the file given with -e (default /dev/null), its
 * stdin comes from the file given with -i (a pipe fed by runstat, so the
 * command cannot map it: peak RSS then counts the command's own memory).
 *
 *   runstat [-e ERRFILE] [-i INFILE] COMMAND [ARG]...
 *
 * Exit status: the command's (128 + signal when killed), 127 when it could
 * not be started.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int write_all(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t k = write(fd, p, n);
    if (k < 0)
      return -1;
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

static double tv(struct timeval t) {
  return (double)t.tv_sec + (double)t.tv_usec / 1e6;
}

int main(int argc, char **argv) {
  const char *errfile = "/dev/null", *infile = NULL;
  int i = 1;
  while (i + 1 < argc && argv[i][0] == '-' &&
         (strcmp(argv[i], "-e") == 0 || strcmp(argv[i], "-i") == 0)) {
    if (argv[i][1] == 'e')
      errfile = argv[i + 1];
    else
      infile = argv[i + 1];
    i += 2;
  }
  if (i >= argc) {
    fprintf(stderr, "usage: runstat [-e ERRFILE] [-i INFILE] COMMAND [ARG]...\n");
    return 2;
  }
  int in = -1, pfd[2] = {-1, -1};
  if (infile && ((in = open(infile, O_RDONLY)) < 0 || pipe(pfd) < 0)) {
    perror("runstat: input");
    return 127;
  }
  signal(SIGPIPE, SIG_IGN);
  double t0 = now();
  pid_t pid = fork();
  if (pid < 0) {
    perror("runstat: fork");
    return 127;
  }
  if (pid == 0) {
    int out = open("/dev/null", O_WRONLY);
    int err = open(errfile, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0 || err < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
      _exit(127);
    if (infile && (dup2(pfd[0], 0) < 0 || close(pfd[1]) < 0))
      _exit(127);
    signal(SIGPIPE, SIG_DFL);
    execvp(argv[i], &argv[i]);
    _exit(127);
  }
  if (infile) {
    /* Feed the pipe from here: a cat process would add its own usage. */
    static char buf[1 << 16];
    ssize_t n;
    close(pfd[0]);
    while ((n = read(in, buf, sizeof(buf))) > 0)
      if (write_all(pfd[1], buf, (size_t)n))
        break;
    close(pfd[1]);
    close(in);
  }
  int status;
  struct rusage ru;
  if (wait4(pid, &status, 0, &ru) < 0) {
    perror("runstat: wait4");
    return 127;
  }
  double wall = now() - t0;
  fprintf(stderr, "%.6f %.6f %.6f %ld\n", wall, tv(ru.ru_utime),
          tv(ru.ru_stime), ru.ru_maxrss);
  if (WIFSIGNALED(status))
    return 128 + WTERMSIG(status);
  return WEXITSTATUS(status);
}
