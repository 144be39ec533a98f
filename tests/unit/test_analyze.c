/* test_analyze: the analysis refuses a code object built for another target than the one it is
 * analysed for (a mixed-up cache or compiler flag must not store another GPU's code as ok). */
#include <stdint.h>
#include <stdlib.h>
#include "build/analyze.h"
#include "build/elf_cubin.h"
#include "kt_test.h"

static unsigned char *load(const char *name, size_t *len)
{
    char path[512];
    snprintf(path, sizeof path, "tests/data/%s", name);
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL;
    long n = -1;
    if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)n)) && fread(buf, 1, (size_t)n, f) != (size_t)n) { free(buf); buf = NULL; }
    if (f) fclose(f);
    if (!buf) fprintf(stderr, "cannot read fixture %s (run from the repository root)\n", path);
    *len = buf ? (size_t)n : 0;
    return buf;
}

static int analyse(const char *target, const unsigned char *p, size_t n, char *err, size_t errlen)
{
    kt_analysis *a = malloc(sizeof *a);
    err[0] = 0;
    int rc = analyze_code_object(kt_target_find(target), p, n, "(fixture)", "k_axpy", 64, 0, a, err, errlen);
    free(a);
    return rc;
}

static void test_amd(void)
{
    static const char *const fixtures[][2] = {
        {"amd_kernels_gfx942.co", "gfx942"}, {"amd_kernels_gfx1100.co", "gfx1100"}, {"amd_kernels_gfx1201.co", "gfx1201"},
    };
    char err[512];
    for (int i = 0; i < 3; i++) {
        size_t n;
        unsigned char *p = load(fixtures[i][0], &n);
        if (!p) { KT_CHECK(p != NULL); continue; }
        KT_CHECK_INT(analyse(fixtures[i][1], p, n, err, sizeof err), 0);
        /* gfx1100 is wave32 like gfx1201: only the target check tells them apart */
        const char *other = strcmp(fixtures[i][1], "gfx1201") == 0 ? "gfx1100" : "gfx1201";
        KT_CHECK(analyse(other, p, n, err, sizeof err) != 0);
        char want[128];
        snprintf(want, sizeof want, "code object is for %s", fixtures[i][1]);
        KT_CHECK_CONTAINS(err, want);
        snprintf(want, sizeof want, "built for %s", other);
        KT_CHECK_CONTAINS(err, want);
        free(p);
    }
}

static void test_cubin(void)
{
    size_t n;
    unsigned char *p = load("nv_kernels_sm_90a.cubin", &n);
    char err[512];
    int sm = 0;
    if (!p) { KT_CHECK(p != NULL); return; }
    KT_CHECK_INT(analyse("sm_90a", p, n, err, sizeof err), 0);
    /* the same cubin claiming sm_80 SASS (the SM byte of e_flags: bits 8-15 from ABI v2, else 0-7) */
    if (p[8] >= 8) p[0x31] = 80;   /* e_flags at 0x30, little-endian */
    else p[0x30] = 80;
    KT_CHECK_INT(elf_cubin_sm(p, n, &sm, err, sizeof err), 0);
    KT_CHECK_INT(sm, 80);
    KT_CHECK(analyse("sm_90a", p, n, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "code object is for sm_80");
    KT_CHECK_CONTAINS(err, "built for sm_90a");
    free(p);
}

int main(void)
{
    test_amd();
    test_cubin();
    KT_TEST_END();
}
