/* test_closure: include discovery (root-relative, includer-relative, cycles) and hash laws. */
#include <stdio.h>
#include <stdlib.h>
#include "kt_test.h"
#include "build/closure.h"

#define ROOT "tests/data/closure"

int main(void)
{
    char h1[65], h2[65], h3[65], err[512] = "";
    int n = 0;
    const char *a[] = {"a.h"}, *d[] = {"d.h"}, *both[] = {"sub/c.h", "a.h"}, *broken[] = {"broken.h"};
    KT_CHECK_INT(closure_hash(ROOT, a, 1, h1, &n, err, sizeof err), 0);
    KT_CHECK_INT(n, 4);                      /* a.h, sub/b.h, sub/c.h, d.h; the cycle d.h -> a.h ends */
    KT_CHECK_INT(closure_hash(ROOT, d, 1, h2, &n, err, sizeof err), 0);
    KT_CHECK_INT(n, 4);
    KT_CHECK(strcmp(h1, h2) == 0);           /* same set of files, whatever the entry point */
    KT_CHECK_INT(closure_hash(ROOT, both, 2, h3, &n, err, sizeof err), 0);
    KT_CHECK(strcmp(h1, h3) == 0);

    /* editing any file in the closure changes the hash */
    FILE *f = fopen(ROOT "/sub/c.h", "a");
    KT_CHECK(f != NULL);
    if (f) { fputs("/* touched */\n", f); fclose(f); }
    KT_CHECK_INT(closure_hash(ROOT, a, 1, h2, &n, err, sizeof err), 0);
    KT_CHECK(strcmp(h1, h2) != 0);
    f = fopen(ROOT "/sub/c.h", "w");
    if (f) { fputs("int c;\n", f); fclose(f); }
    KT_CHECK_INT(closure_hash(ROOT, a, 1, h2, &n, err, sizeof err), 0);
    KT_CHECK(strcmp(h1, h2) == 0);

    KT_CHECK(closure_hash(ROOT, broken, 1, h2, &n, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "broken.h:3: included file 'nope.h' not found");
    KT_TEST_END();
}
