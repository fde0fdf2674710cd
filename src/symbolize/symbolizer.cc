#include "symbolize/symbolizer.h"  // placeholder until the symbolizer lands
