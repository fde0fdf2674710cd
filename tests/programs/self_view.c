/* What a program can see of itself, printed in sections a test compares between a plain and a
 * profiled run (safety_test.cc):
 *   self_view view              signals (dispositions, mask, /proc's Sig* lines), descriptors,
 *                               environment (environ and /proc/self/environ), threads, mappings
 *   self_view eintr             a SIGINT handler without SA_RESTART; a timer sends SIGINT while
 *                               the program blocks in read(): plain, read fails with EINTR
 *   self_view ignore-exec SIG.. ignores the signals, blocks SIGUSR1, then executes `view`
 *   self_view libc-ignored CMD  ignores the C library's own signals 32 and 33, as a shell
 *                               started by a threaded program's posix_spawn has them, then
 *                               executes CMD
 *   self_view setxid            setuid and setgid to what they are (glibc then signals every
 *                               thread), then `view`
 * Each section begins with "== name". */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

extern char** environ;

static int CompareStrings(const void* a, const void* b) {
  return strcmp(*(const char* const*)a, *(const char* const*)b);
}

static void PrintStatusLines(const char* prefix) {
  FILE* f = fopen("/proc/self/status", "r");
  char line[512];
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, prefix, strlen(prefix)) == 0) fputs(line, stdout);
  if (f) fclose(f);
}

static void PrintSignals(void) {
  printf("== dispositions\n");
  for (int sig = 1; sig < NSIG; ++sig) {
    struct sigaction act;
    if (sigaction(sig, NULL, &act) != 0) continue;
    const char* what = (act.sa_flags & SA_SIGINFO) ? "handler"
                       : act.sa_handler == SIG_DFL ? "default"
                       : act.sa_handler == SIG_IGN ? "ignored"
                                                   : "handler";
    printf("%d %s flags=%x\n", sig, what, (unsigned)act.sa_flags);
  }
  printf("== mask\n");
  sigset_t none, mask;
  sigemptyset(&none);
  sigprocmask(SIG_BLOCK, &none, &mask);
  for (int sig = 1; sig < NSIG; ++sig)
    if (sigismember(&mask, sig) == 1) printf("blocked %d\n", sig);
  printf("== kernel-signals\n");
  PrintStatusLines("SigBlk");
  PrintStatusLines("SigIgn");
  PrintStatusLines("SigCgt");
}

static void PrintDescriptors(void) {
  printf("== descriptors\n");
  DIR* dir = opendir("/proc/self/fd");
  int own = dir ? dirfd(dir) : -1;
  struct dirent* e;
  char* lines[1024];
  size_t n = 0;
  while (dir && (e = readdir(dir)) && n < 1024) {
    if (e->d_name[0] == '.' || atoi(e->d_name) == own) continue;
    char path[300], target[4096];
    snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
    ssize_t len = readlink(path, target, sizeof target - 1);
    target[len > 0 ? len : 0] = '\0';
    /* A pipe's or socket's inode differs from run to run: its kind is what a program sees. */
    char* bracket = strchr(target, '[');
    if (bracket && (strncmp(target, "pipe:", 5) == 0 || strncmp(target, "socket:", 7) == 0))
      *bracket = '\0';
    if (asprintf(&lines[n], "%s %s", e->d_name, target) > 0) ++n;
  }
  if (dir) closedir(dir);
  qsort(lines, n, sizeof lines[0], CompareStrings);
  for (size_t i = 0; i < n; ++i) printf("%s\n", lines[i]), free(lines[i]);
}

static void PrintEnvironment(void) {
  printf("== environ\n");
  size_t n = 0;
  while (environ[n]) ++n;
  char** sorted = calloc(n + 1, sizeof *sorted);
  memcpy(sorted, environ, n * sizeof *sorted);
  qsort(sorted, n, sizeof *sorted, CompareStrings);
  for (size_t i = 0; i < n; ++i) printf("%s\n", sorted[i]);
  free(sorted);
  printf("== proc-environ\n");
  FILE* f = fopen("/proc/self/environ", "r");
  char* entry = NULL;
  size_t size = 0;
  char* entries[4096];
  n = 0;
  while (f && n < 4096 && getdelim(&entry, &size, '\0', f) > 0) entries[n++] = strdup(entry);
  if (f) fclose(f);
  free(entry);
  qsort(entries, n, sizeof entries[0], CompareStrings);
  for (size_t i = 0; i < n; ++i) printf("%s\n", entries[i]), free(entries[i]);
}

static void PrintThreadsAndMappings(void) {
  printf("== threads\n");
  PrintStatusLines("Threads");
  printf("== mappings\n");
  /* The files mapped, without addresses (they move with ASLR). */
  FILE* f = fopen("/proc/self/maps", "r");
  char line[4096];
  char* files[1024];
  size_t n = 0;
  while (f && fgets(line, sizeof line, f) && n < 1024) {
    char* path = strchr(line, '/');
    if (!path) continue;
    path[strcspn(path, "\n")] = '\0';
    int seen = 0;
    for (size_t i = 0; i < n; ++i) seen |= strcmp(files[i], path) == 0;
    if (!seen) files[n++] = strdup(path);
  }
  if (f) fclose(f);
  qsort(files, n, sizeof files[0], CompareStrings);
  for (size_t i = 0; i < n; ++i) printf("%s\n", files[i]), free(files[i]);
}

static void OnInterrupt(int sig) { (void)sig; }

/* The signal comes from a timer, so no test has to guess when the program reached read(). */
static int Eintr(void) {
  struct sigaction act;
  memset(&act, 0, sizeof act);
  act.sa_handler = OnInterrupt; /* no SA_RESTART */
  sigaction(SIGINT, &act, NULL);
  alarm(20); /* a read that restarts would otherwise wait for ever */
  int fds[2];
  if (pipe(fds) != 0) return 1;
  struct sigevent ev;
  memset(&ev, 0, sizeof ev);
  ev.sigev_notify = SIGEV_SIGNAL;
  ev.sigev_signo = SIGINT;
  timer_t timer;
  struct itimerspec when = {{0, 0}, {0, 200 * 1000 * 1000}};
  if (timer_create(CLOCK_MONOTONIC, &ev, &timer) != 0 || timer_settime(timer, 0, &when, NULL))
    return 1;
  char c;
  ssize_t got = read(fds[0], &c, 1);
  printf("read=%zd %s\n", got, got < 0 ? strerror(errno) : "");
  return 0;
}

static int IgnoreThenExec(int argc, char** argv) {
  for (int i = 2; i < argc; ++i) {
    int sig = 0;
    for (int s = 1; s < NSIG && !sig; ++s)
      if (sigabbrev_np(s) && strcmp(sigabbrev_np(s), argv[i]) == 0) sig = s;
    if (sig) signal(sig, SIG_IGN);
  }
  sigset_t usr1;
  sigemptyset(&usr1);
  sigaddset(&usr1, SIGUSR1);
  sigprocmask(SIG_BLOCK, &usr1, NULL);
  execl("/proc/self/exe", argv[0], "view", (char*)NULL);
  perror("exec");
  return 127;
}

/* glibc's sigaction refuses its own signals: the kernel's takes them. */
static int LibcSignalsIgnoredThenExec(char** command) {
  struct {
    void* handler;
    unsigned long flags;
    void* restorer;
    unsigned long mask;
  } ignore = {(void*)SIG_IGN, 0, NULL, 0};
  for (int sig = 32; sig <= 33; ++sig)
    if (syscall(SYS_rt_sigaction, sig, &ignore, NULL, sizeof(unsigned long)) != 0) return 126;
  execvp(command[0], command);
  perror("exec");
  return 127;
}

static int Setxid(void) {
  alarm(20); /* a thread that never answers glibc's signal would hang the call for ever */
  int uid = setuid(getuid());
  int gid = setgid(getgid());
  alarm(0);
  printf("== setxid\nsetuid=%d setgid=%d\n", uid, gid);
  PrintSignals();
  return 0;
}

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "view";
  if (strcmp(mode, "eintr") == 0) return Eintr();
  if (strcmp(mode, "ignore-exec") == 0) return IgnoreThenExec(argc, argv);
  if (strcmp(mode, "libc-ignored") == 0 && argc > 2) return LibcSignalsIgnoredThenExec(argv + 2);
  if (strcmp(mode, "setxid") == 0) return Setxid();
  PrintSignals();
  PrintDescriptors();
  PrintEnvironment();
  PrintThreadsAndMappings();
  return 0;
}
