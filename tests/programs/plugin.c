/* The library dlopener.c loads: its time must land in a module the profile knows. */
#include "burn.h"

double plugin_work(double seconds) { return burn_cpu(seconds); }
