  #  include "c.h"
#include "../d.h"
int b;
