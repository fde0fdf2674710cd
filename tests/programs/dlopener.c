/* dlopens the plugin named by argv[1], calls into it for 0.3 s of CPU, closes it. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char** argv) {
  if (argc < 2) return 2;
  void* lib = dlopen(argv[1], RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 1;
  }
  double (*work)(double) = (double (*)(double))dlsym(lib, "plugin_work");
  if (!work) return 1;
  double r = work(0.3);
  dlclose(lib);
  printf("plugin done %d\n", r > 0);
  return 0;
}
