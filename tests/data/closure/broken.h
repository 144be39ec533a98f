int x;

#include "nope.h"
