#include "a.h"
int d;
