/* test_build_filter.c: a model's build keeps the variants its problems can use (tuner/build_filter.h):
 * Qwen3-Next at tp 4 decodes bf16 attention at head size 256 and GDN in the serving vLLM's layout
 * (KT_GDN_STATE: K-last unless asked). */
#include <stdlib.h>
#include <string.h>
#include "kt_test.h"
#include "build_filter.h"

#define ATTN(dtype, d) "{\"dtype\":\"" dtype "\",\"D\":" #d ",\"MT\":1,\"BN\":16,\"NW\":4,\"SEGMAX\":128,\"RE\":1," \
                       "\"KD\":0,\"ST\":1,\"PD\":1,\"OB\":0,\"PF\":0,\"F8\":0}"
#define GDN(dtype, vk, mt) "{\"dtype\":\"" dtype "\",\"VK\":" #vk ",\"DK\":128,\"DV\":128,\"BV\":32,\"NW\":8," \
                           "\"KPT\":4,\"MT\":" #mt ",\"OB\":0,\"PS\":0}"
#define GEMM(dtype) "{\"dtype\":\"" dtype "\",\"BM\":16,\"BN\":32,\"BK\":32,\"WM\":1,\"WN\":1,\"SK\":1}"

static void test_qwen3_next(void)
{
    unsetenv("KT_GDN_STATE");   /* the default layout, whatever the shell exported */
    kt_build_filter *f = NULL;
    char err[512] = "";
    KT_CHECK_INT(kt_build_filter_open("models/qwen3-next-80b-a3b", 4, NULL, NULL, &f, err, sizeof err), 0);
    KT_CHECK(f != NULL);
    if (!f) return;
    KT_CHECK(kt_build_filter_keeps(f, "attn_decode", ATTN("bf16", 256)));
    KT_CHECK(!kt_build_filter_keeps(f, "attn_decode", ATTN("bf16", 128)));          /* another head size */
    KT_CHECK(!kt_build_filter_keeps(f, "attn_decode", ATTN("fp16", 256)));          /* another dtype */
    KT_CHECK(!kt_build_filter_keeps(f, "attn_decode", ATTN("bf16_e4m3", 256)));     /* no fp8 cache asked */
    KT_CHECK(kt_build_filter_keeps(f, "gdn_decode", GDN("bf16", 1, 1)));            /* vLLM's K-last state */
    KT_CHECK(kt_build_filter_keeps(f, "gdn_decode", GDN("bf16", 1, 8)));            /* speculative steps */
    KT_CHECK(!kt_build_filter_keeps(f, "gdn_decode", GDN("bf16", 0, 1)));           /* the [.., K, V] layout */
    KT_CHECK(kt_build_filter_keeps(f, "gemm", GEMM("bf16")));
    KT_CHECK(!kt_build_filter_keeps(f, "gemm", GEMM("fp16")));
    /* a recipe serving two ops is kept when one of them can use it */
    KT_CHECK(kt_build_filter_keeps(f, "attn_prefill,attn_decode", ATTN("bf16", 256)));
    KT_CHECK(!kt_build_filter_keeps(f, "rmsnorm_add", "{\"dtype\":\"bf16\",\"RB\":1,\"VW\":8,\"TH\":256,\"UN\":1}"));
    /* the references (no op family) are kept whole; unreadable params are built, refused where read */
    KT_CHECK(kt_build_filter_keeps(f, "reference:gemm", GEMM("fp16")));
    KT_CHECK(kt_build_filter_keeps(f, "gemm", "{not json"));
    kt_build_filter_close(f);

    /* --only narrows the problems, and with them the build */
    KT_CHECK_INT(kt_build_filter_open("models/qwen3-next-80b-a3b", 4, NULL, "gdn_decode", &f, err, sizeof err), 0);
    if (f) {
        KT_CHECK(kt_build_filter_keeps(f, "gdn_decode", GDN("bf16", 1, 1)));
        KT_CHECK(!kt_build_filter_keeps(f, "gemm", GEMM("bf16")));
        kt_build_filter_close(f);
    }
    /* an older vLLM's [.., K, V] state (KT_GDN_STATE=kv): the other layout's forms */
    setenv("KT_GDN_STATE", "kv", 1);
    KT_CHECK_INT(kt_build_filter_open("models/qwen3-next-80b-a3b", 4, NULL, "gdn_decode", &f, err, sizeof err), 0);
    if (f) {
        KT_CHECK(kt_build_filter_keeps(f, "gdn_decode", GDN("bf16", 0, 1)));
        KT_CHECK(!kt_build_filter_keeps(f, "gdn_decode", GDN("bf16", 1, 1)));
        kt_build_filter_close(f);
    }
    unsetenv("KT_GDN_STATE");
}

static void test_refusals(void)
{
    kt_build_filter *f = (kt_build_filter *)1;
    char err[512] = "";
    KT_CHECK_INT(kt_build_filter_open("models/no-such-model", 4, NULL, NULL, &f, err, sizeof err), 2);
    KT_CHECK(f == NULL);
    KT_CHECK_CONTAINS(err, "no-such-model");
    KT_CHECK_INT(kt_build_filter_open("models/qwen3-next-80b-a3b", 4, NULL, "no_such_op", &f, err, sizeof err), 2);
    KT_CHECK_CONTAINS(err, "no_such_op");
    kt_build_filter_close(NULL);
}

int main(void)
{
    test_qwen3_next();
    test_refusals();
    KT_TEST_END();
}
