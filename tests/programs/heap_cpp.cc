// operator new and delete in their forms, with known counts, sizes and one leak. No iostream:
// it allocates on its own.
#include <unistd.h>

#include <new>

struct alignas(64) Aligned {
  char bytes[128];
};

int main() {
  for (int i = 0; i < 50; ++i) delete new long(i);    // 50 × new(8)
  for (int i = 0; i < 20; ++i) delete[] new int[10];  // 20 × new[](40)
  delete[] new (std::nothrow) char[3];                // nothrow new[](3)
  delete new Aligned;                                 // aligned new(128)
  int* leaked = new int[25];                          // new[](100), never deleted
  leaked[0] = 1;
  const char done[] = "heap_cpp done\n";
  (void)!write(1, done, sizeof done - 1);
  return 0;
}
