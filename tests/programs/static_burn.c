/* A statically linked program (as fpc, Go and musl produce them) burning 0.4 s of CPU. */
#include "burn.h"

int main(void) { return burn_cpu(0.4) > 0 ? 0 : 1; }
