// Opens a library, calls it and closes it, then opens another that the loader maps at the same
// address and calls it: an address means the image mapped there at that time. Built three
// ways: the program (no define), the first library (-DFIRST: fa) and the second (-DSECOND: fb2
// calling fb1 twice). Truth: fa 1, fb2 1, fb1 2. Usage: reused_address FIRST.so SECOND.so
#include <dlfcn.h>
#include <stdio.h>

#if defined(FIRST)
void fa(void) {}
#elif defined(SECOND)
void fb1(void) {}
void fb2(void) {
  fb1();
  fb1();
}
#else
static int call(const char* library, const char* function) {
  void* handle = dlopen(library, RTLD_NOW);
  if (!handle) {
    puts(dlerror());
    return 1;
  }
  ((void (*)(void))dlsym(handle, function))();
  return dlclose(handle);
}

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  return call(argv[1], "fa") || call(argv[2], "fb2");
}
#endif
