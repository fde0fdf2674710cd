// Four threads, each burning a known CPU time, and a named one.
#include <pthread.h>

#include <cstdio>
#include <thread>
#include <vector>

#include "burn.h"

int main() {
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([i] {
      if (i == 0) pthread_setname_np(pthread_self(), "worker-zero");
      burn_cpu(0.25);
    });
  for (auto& t : threads) t.join();
  std::printf("threads done\n");
  return 0;
}
