/* Forks while another thread allocates: neither process may deadlock, and the child's own
 * allocations are counted exactly in its own profile. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static atomic_int stop;

static void* churn(void* arg) {
  (void)arg;
  while (!atomic_load(&stop)) {
    void* volatile p = malloc(40);
    free(p);
  }
  return NULL;
}

__attribute__((noinline)) static void child_work(void) {
  for (int i = 0; i < 10; ++i) {
    void* volatile p = malloc(72);
    free(p);
  }
}

int main(void) {
  pthread_t thread;
  pthread_create(&thread, NULL, churn, NULL);
  usleep(20000);
  int status = 0;
  for (int round = 0; round < 5; ++round) {
    pid_t child = fork();
    if (child == 0) {
      child_work();
      _exit(0);
    }
    waitpid(child, &status, 0);
  }
  atomic_store(&stop, 1);
  pthread_join(thread, NULL);
  const char done[] = "heap_fork done\n";
  (void)!write(1, done, sizeof done - 1);
  return WEXITSTATUS(status);
}
