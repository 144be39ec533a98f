/* test_recipe: the generator's enumeration laws and its error messages (file and line). */
#include <stdlib.h>
#include "kt_test.h"
#include "gen/recipe.h"

#define DIR "tests/data/recipes/toy/"

static const char *fail_message(const char *file, const char *target)
{
    static char err[1024];
    gen_space s;
    err[0] = 0;
    if (gen_enumerate(file, kt_target_find(target), &s, err, sizeof err) == 0) {
        gen_space_free(&s);
        return "(unexpected success)";
    }
    return err;
}

int main(void)
{
    char err[1024] = "";
    gen_space s;
    const kt_target *gfx = kt_target_find("gfx1201"), *cdna = kt_target_find("gfx942");

    /* 2 dtypes x 3 BM x 2 WM = 12; BM=16 with WM=2 is not divisible (2 rejected); lds budget
     * 65536/16 = 4096 B admits BM*128 <= 4096, i.e. BM <= 32: BM=64 rejected (4) */
    KT_CHECK_INT(gen_enumerate(DIR "good.lua", gfx, &s, err, sizeof err), 0);
    KT_CHECK_INT(s.total, 12);
    KT_CHECK_INT(s.nvariants, 6);
    KT_CHECK_INT(s.nrejected, 2);
    int div = 0, lds = 0;
    for (int i = 0; i < s.nrejected; i++) {
        if (strcmp(s.rejected[i].reason, "tile not divisible by waves") == 0) div = s.rejected[i].count;
        if (strcmp(s.rejected[i].reason, "lds over budget") == 0) lds = s.rejected[i].count;
    }
    KT_CHECK_INT(div, 2);
    KT_CHECK_INT(lds, 4);
    /* enumeration order: first axis slowest; names deterministic from the parameters */
    KT_CHECK(strcmp(s.variants[0].name, "kt_toy_bf16_bm16_wm1") == 0);
    KT_CHECK(strcmp(s.variants[1].name, "kt_toy_bf16_bm32_wm1") == 0);
    KT_CHECK(strcmp(s.variants[2].name, "kt_toy_bf16_bm32_wm2") == 0);
    KT_CHECK(strcmp(s.variants[3].name, "kt_toy_fp16_bm16_wm1") == 0);
    KT_CHECK(strcmp(s.variants[2].params_json, "{\"dtype\":\"bf16\",\"BM\":32,\"WM\":2}") == 0);
    KT_CHECK_INT(s.variants[2].threads, 64);
    KT_CHECK_INT(s.variants[2].lds_estimate, 32 * 64);
    KT_CHECK_CONTAINS(s.variants[2].source, "#include \"arch/gfx12.h\"\n");
    KT_CHECK_CONTAINS(s.variants[2].source, "#define KT_KERNEL_NAME kt_toy_bf16_bm32_wm2\n");
    KT_CHECK_CONTAINS(s.variants[2].source, "#define KT_DTYPE bf16\n#define KT_BM 32\n#define KT_WM 2\n");
    KT_CHECK_CONTAINS(s.variants[2].source, "#include \"toy/toy.hip\"\n");
    KT_CHECK(strcmp(s.templates_root, "tests/data/recipes") == 0);
    KT_CHECK(strcmp(s.ops, "toy") == 0);
    gen_space_free(&s);

    /* the target is in scope: gfx942 is wave64, so threads double */
    KT_CHECK_INT(gen_enumerate(DIR "good.lua", cdna, &s, err, sizeof err), 0);
    KT_CHECK_INT(s.variants[2].threads, 128);
    KT_CHECK_CONTAINS(s.variants[2].source, "#include \"arch/cdna.h\"");
    gen_space_free(&s);

    /* errors name the file and, where Lua knows it, the line */
    KT_CHECK_CONTAINS(fail_message(DIR "syntax.lua", "gfx1201"), DIR "syntax.lua:5:");
    KT_CHECK_CONTAINS(fail_message(DIR "unknown_axis.lua", "gfx1201"), DIR "unknown_axis.lua:6: unknown axis 'BN'");
    KT_CHECK_CONTAINS(fail_message(DIR "throws.lua", "gfx1201"), DIR "throws.lua:6: no 32 here");
    KT_CHECK_CONTAINS(fail_message(DIR "empty.lua", "gfx1201"), DIR "empty.lua:5: recipe admits no variant for gfx1201");
    KT_CHECK_CONTAINS(fail_message(DIR "empty.lua", "gfx1201"), "never x2");
    KT_CHECK_CONTAINS(fail_message(DIR "unknown_field.lua", "gfx1201"), "unknown recipe field 'constraints'");
    KT_CHECK_CONTAINS(fail_message(DIR "bad_target_field.lua", "gfx1201"), "bad_target_field.lua:6: unknown target field 'lds_limit'");
    KT_CHECK_CONTAINS(fail_message(DIR "sandbox.lua", "gfx1201"), "sandbox.lua:6:");
    KT_CHECK_CONTAINS(fail_message(DIR "missing.lua", "gfx1201"), "missing.lua");
    KT_TEST_END();
}
