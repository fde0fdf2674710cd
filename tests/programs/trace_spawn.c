// Runs itself three times, each child calling leaf() once: by posix_spawn with the environment
// it has, by posix_spawn with one of its own making (FOO=1 alone), and by fork and execve with
// that same environment. Under --follow-exec each child has a profile with its call.
#include <spawn.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

__attribute__((noinline)) int leaf(int x) { return x + 1; }

int main(int argc, char **argv) {
  if (argc > 1) {
    printf("%s %d\n", argv[1], leaf(1));
    return 0;
  }
  char *own_environment[] = {"FOO=1", NULL};
  pid_t pid;
  char *inherited[] = {argv[0], "spawn", NULL};
  if (posix_spawn(&pid, argv[0], NULL, NULL, inherited, environ) != 0) return 1;
  waitpid(pid, NULL, 0);
  char *own[] = {argv[0], "spawn-own-environment", NULL};
  if (posix_spawn(&pid, argv[0], NULL, NULL, own, own_environment) != 0) return 1;
  waitpid(pid, NULL, 0);
  fflush(stdout);
  if ((pid = fork()) == 0) {
    char *exec[] = {argv[0], "execve-own-environment", NULL};
    execve(argv[0], exec, own_environment);
    _exit(127);
  }
  waitpid(pid, NULL, 0);
  return 0;
}
