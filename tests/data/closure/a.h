#include "sub/b.h"
#include <stdio.h>
int a;
