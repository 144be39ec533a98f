/* test_model: per-rank GEMM shapes of the shipped models at TP 1/2/4/8 (expected numbers worked out
 * by hand from each config, not by the code under test), KV-head replication, de-duplication of equal
 * shapes, the M bucket law, key text, and every refusal by its message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "kt_test.h"
#include "tuner/model.h"

static char tmpdir[] = "/tmp/kt_test_model_XXXXXX";
static char tmpconfig[256];

/* Write a config.json into the temp dir: architectures and torch_dtype given, the rest verbatim. */
static void write_config(const char *arch, const char *dtype, const char *fields)
{
    FILE *f = fopen(tmpconfig, "w");
    if (!f) { KT_CHECK(!"cannot write the temp config"); return; }
    fprintf(f, "{\n  \"architectures\": [\"%s\"],\n  \"torch_dtype\": \"%s\",\n  %s\n}\n", arch, dtype, fields);
    fclose(f);
}

static void write_raw(const char *text)
{
    FILE *f = fopen(tmpconfig, "w");
    if (!f) { KT_CHECK(!"cannot write the temp config"); return; }
    fputs(text, f);
    fclose(f);
}

/* The message model_load gives for the temp config at tp, or "(accepted)". */
static const char *refusal(int tp)
{
    static char err[768];
    model_problems m;
    err[0] = 0;
    if (model_load(tmpdir, tp, &m, err, sizeof err) == 0) return "(accepted)";
    return err;
}

/* A shipped model at tp must give exactly these four shapes, one layer each, in forward order. */
static void expect_shapes(const char *dir, int tp, int layers, int qkv_n, int qkv_k, int o_n, int o_k,
                          int gu_n, int gu_k, int down_n, int down_k)
{
    model_problems m;
    char err[768] = "";
    int rc = model_load(dir, tp, &m, err, sizeof err);
    KT_CHECK_INT(rc, 0);
    if (rc) { fprintf(stderr, "  %s tp %d: %s\n", dir, tp, err); return; }
    const int want[4][2] = { {qkv_n, qkv_k}, {o_n, o_k}, {gu_n, gu_k}, {down_n, down_k} };
    KT_CHECK_INT(m.nproblems, 4);
    for (int i = 0; i < 4 && i < m.nproblems; i++) {
        if (m.problems[i].n != want[i][0] || m.problems[i].k != want[i][1])
            fprintf(stderr, "  %s tp %d %s:\n", dir, tp, model_layer_name((model_layer)i));
        KT_CHECK_INT(m.problems[i].n, want[i][0]);
        KT_CHECK_INT(m.problems[i].k, want[i][1]);
        KT_CHECK_INT(m.problems[i].nlayers, 1);
        KT_CHECK_INT(m.problems[i].layers[0], i);
        KT_CHECK_INT(m.problems[i].count, layers);
        KT_CHECK(strcmp(m.problems[i].dtype, "bf16") == 0);
    }
}

static void test_shipped_models(void)
{
    /* Llama-3.1-8B and Mistral-7B-v0.3 share every dimension: hidden 4096, intermediate 14336,
     * 32 heads, 8 kv heads, head_dim 4096/32 = 128, 32 layers. */
    const char *llama_like[] = { "models/llama-3.1-8b", "models/mistral-7b-instruct-v0.3" };
    for (int i = 0; i < 2; i++) {
        const char *d = llama_like[i];
        expect_shapes(d, 1, 32, (32 + 2 * 8) * 128, 4096, 4096, 32 * 128, 2 * 14336, 4096, 4096, 14336);
        expect_shapes(d, 2, 32, (16 + 2 * 4) * 128, 4096, 4096, 16 * 128, 2 * 7168, 4096, 4096, 7168);
        expect_shapes(d, 4, 32, 1536, 4096, 4096, 1024, 7168, 4096, 4096, 3584);   /* (8+2*2)*128, 8*128, 2*3584 */
        expect_shapes(d, 8, 32, (4 + 2 * 1) * 128, 4096, 4096, 4 * 128, 2 * 1792, 4096, 4096, 1792);
    }

    /* Qwen2.5-7B-Instruct: hidden 3584, intermediate 18944, 28 heads, 4 kv heads, head_dim
     * 3584/28 = 128, 28 layers. TP 8 divides neither 28 heads nor (with 4 kv heads) evenly. */
    const char *q25 = "models/qwen2.5-7b-instruct";
    expect_shapes(q25, 1, 28, (28 + 2 * 4) * 128, 3584, 3584, 28 * 128, 2 * 18944, 3584, 3584, 18944);
    expect_shapes(q25, 2, 28, (14 + 2 * 2) * 128, 3584, 3584, 14 * 128, 2 * 9472, 3584, 3584, 9472);
    expect_shapes(q25, 4, 28, (7 + 2 * 1) * 128, 3584, 3584, 7 * 128, 2 * 4736, 3584, 3584, 4736);
    model_problems m;
    char err[768] = "";
    KT_CHECK(model_load(q25, 8, &m, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "models/qwen2.5-7b-instruct/config.json");
    KT_CHECK_CONTAINS(err, "num_attention_heads 28 is not divisible by tp 8");

    /* Qwen3-8B: hidden 4096, intermediate 12288, 32 heads, 8 kv heads, head_dim 128 (given), 36 layers. */
    const char *q3 = "models/qwen3-8b";
    expect_shapes(q3, 1, 36, (32 + 2 * 8) * 128, 4096, 4096, 32 * 128, 2 * 12288, 4096, 4096, 12288);
    expect_shapes(q3, 2, 36, (16 + 2 * 4) * 128, 4096, 4096, 16 * 128, 2 * 6144, 4096, 4096, 6144);
    expect_shapes(q3, 4, 36, (8 + 2 * 2) * 128, 4096, 4096, 8 * 128, 2 * 3072, 4096, 4096, 3072);
    expect_shapes(q3, 8, 36, (4 + 2 * 1) * 128, 4096, 4096, 4 * 128, 2 * 1536, 4096, 4096, 1536);

    /* The config facts themselves, as read. */
    model_config c;
    KT_CHECK_INT(model_config_load("models/llama-3.1-8b/", &c, err, sizeof err), 0);
    KT_CHECK(strcmp(c.path, "models/llama-3.1-8b/config.json") == 0);   /* trailing slash dropped */
    KT_CHECK(strcmp(c.architecture, "LlamaForCausalLM") == 0);
    KT_CHECK(strcmp(c.dtype, "bf16") == 0);
    KT_CHECK_INT(c.vocab, 128256);
    KT_CHECK_INT(c.layers, 32);
    KT_CHECK_INT(model_config_load("models/qwen3-8b/config.json", &c, err, sizeof err), 0);   /* the file itself */
    KT_CHECK(strcmp(c.architecture, "Qwen3ForCausalLM") == 0);
    KT_CHECK_INT(c.head_dim, 128);
    KT_CHECK_INT(c.vocab, 151936);
    KT_CHECK_INT(model_config_load("models/qwen2.5-7b-instruct", &c, err, sizeof err), 0);
    KT_CHECK_INT(c.vocab, 152064);
    KT_CHECK_INT(model_config_load("models/mistral-7b-instruct-v0.3", &c, err, sizeof err), 0);
    KT_CHECK_INT(c.vocab, 32768);
}

static void test_synthetic_shapes(void)
{
    model_problems m;
    char err[768] = "";

    /* KV replication: 16 heads, 2 kv heads at TP 4 -> 4 q heads and 1 kv head per rank, each kv
     * head held by 2 ranks; qkv N = (4 + 2*1) * 128 = 768. */
    write_config("Qwen2ForCausalLM", "bfloat16", "\"hidden_size\": 2048, \"intermediate_size\": 11008, "
                 "\"num_attention_heads\": 16, \"num_key_value_heads\": 2, \"num_hidden_layers\": 36");
    KT_CHECK_INT(model_load(tmpdir, 4, &m, err, sizeof err), 0);
    KT_CHECK_INT(m.heads_per_rank, 4);
    KT_CHECK_INT(m.kv_heads_per_rank, 1);
    KT_CHECK_INT(m.kv_replicas, 2);
    KT_CHECK_INT(m.problems[0].n, 768);
    KT_CHECK_INT(m.problems[0].k, 2048);
    KT_CHECK_INT(m.problems[1].k, 4 * 128);
    KT_CHECK_INT(model_load(tmpdir, 2, &m, err, sizeof err), 0);   /* kv 2 >= tp 2: split, not replicated */
    KT_CHECK_INT(m.kv_heads_per_rank, 1);
    KT_CHECK_INT(m.kv_replicas, 1);
    KT_CHECK_INT(m.problems[0].n, (8 + 2 * 1) * 128);

    /* head_dim given and unlike hidden/heads (64 heads x 128 = 8192 != 5120): it wins.
     * TP 8: qkv N = (8 + 2*1) * 128 = 1280, o K = 8 * 128 = 1024. */
    write_config("Qwen3ForCausalLM", "bfloat16", "\"hidden_size\": 5120, \"intermediate_size\": 25600, "
                 "\"num_attention_heads\": 64, \"num_key_value_heads\": 8, \"head_dim\": 128, \"num_hidden_layers\": 64");
    KT_CHECK_INT(model_load(tmpdir, 8, &m, err, sizeof err), 0);
    KT_CHECK_INT(m.problems[0].n, 1280);
    KT_CHECK_INT(m.problems[0].k, 5120);
    KT_CHECK_INT(m.problems[1].n, 5120);
    KT_CHECK_INT(m.problems[1].k, 1024);
    KT_CHECK_INT(m.problems[2].n, 2 * 3200);
    KT_CHECK_INT(m.problems[3].k, 3200);
    /* Without head_dim a Qwen3 config still has 128 (HF's Qwen3Config default) ... */
    write_config("Qwen3ForCausalLM", "bfloat16", "\"hidden_size\": 5120, \"intermediate_size\": 25600, "
                 "\"num_attention_heads\": 64, \"num_key_value_heads\": 8, \"num_hidden_layers\": 64");
    KT_CHECK_INT(model_load(tmpdir, 8, &m, err, sizeof err), 0);
    KT_CHECK_INT(m.config.head_dim, 128);
    KT_CHECK_INT(m.problems[0].n, 1280);
    /* ... while Llama derives hidden/heads = 80: qkv N = (8 + 2*1) * 80 = 800. */
    write_config("LlamaForCausalLM", "bfloat16", "\"hidden_size\": 5120, \"intermediate_size\": 25600, "
                 "\"num_attention_heads\": 64, \"num_key_value_heads\": 8, \"num_hidden_layers\": 64");
    KT_CHECK_INT(model_load(tmpdir, 8, &m, err, sizeof err), 0);
    KT_CHECK_INT(m.config.head_dim, 80);
    KT_CHECK_INT(m.problems[0].n, 800);
    KT_CHECK_INT(m.problems[1].k, 640);
    /* null head_dim is "absent", as in HF. */
    write_config("LlamaForCausalLM", "bfloat16", "\"hidden_size\": 5120, \"intermediate_size\": 25600, "
                 "\"num_attention_heads\": 64, \"num_key_value_heads\": 8, \"head_dim\": null, \"num_hidden_layers\": 64");
    KT_CHECK_INT(model_load(tmpdir, 8, &m, err, sizeof err), 0);
    KT_CHECK_INT(m.config.head_dim, 80);

    /* De-duplication and the kv default: no num_key_value_heads -> 32 kv heads (MHA); intermediate 4096
     * makes down (N 4096, K 4096) the same shape as o (N 4096, K 32*128), so they are one problem. */
    write_config("MistralForCausalLM", "float16", "\"hidden_size\": 4096, \"intermediate_size\": 4096, "
                 "\"num_attention_heads\": 32, \"num_hidden_layers\": 10");
    KT_CHECK_INT(model_load(tmpdir, 1, &m, err, sizeof err), 0);
    KT_CHECK_INT(m.config.kv_heads, 32);
    KT_CHECK_INT(m.nproblems, 3);
    KT_CHECK_INT(m.problems[0].n, (32 + 2 * 32) * 128);
    KT_CHECK_INT(m.problems[1].n, 4096);
    KT_CHECK_INT(m.problems[1].k, 4096);
    KT_CHECK_INT(m.problems[1].nlayers, 2);
    KT_CHECK_INT(m.problems[1].layers[0], MODEL_LAYER_O);
    KT_CHECK_INT(m.problems[1].layers[1], MODEL_LAYER_DOWN);
    KT_CHECK_INT(m.problems[1].count, 2 * 10);
    KT_CHECK_INT(m.problems[2].n, 8192);
    KT_CHECK_INT(m.problems[2].layers[0], MODEL_LAYER_GATE_UP);
    KT_CHECK(strcmp(m.problems[1].dtype, "fp16") == 0);
    char key[96];
    KT_CHECK(model_problem_key(&m.problems[1], 64, key, sizeof key) > 0);
    KT_CHECK(strcmp(key, "gemm fp16 n=4096 k=4096 m<=64") == 0);

    /* Newer transformers write `dtype` instead of torch_dtype. */
    write_raw("{\"architectures\": [\"LlamaForCausalLM\"], \"dtype\": \"bfloat16\", \"hidden_size\": 4096, "
              "\"intermediate_size\": 14336, \"num_attention_heads\": 32, \"num_hidden_layers\": 32}");
    KT_CHECK_INT(model_load(tmpdir, 1, &m, err, sizeof err), 0);
    KT_CHECK(strcmp(m.config.dtype, "bf16") == 0);
    /* The first supported entry of architectures is taken. */
    write_raw("{\"architectures\": [\"SomethingElse\", \"Qwen2ForCausalLM\"], \"torch_dtype\": \"bfloat16\", "
              "\"hidden_size\": 4096, \"intermediate_size\": 14336, \"num_attention_heads\": 32, \"num_hidden_layers\": 32}");
    KT_CHECK_INT(model_load(tmpdir, 1, &m, err, sizeof err), 0);
    KT_CHECK(strcmp(m.config.architecture, "Qwen2ForCausalLM") == 0);
}

/* A base config that passes at TP 1, with one field's text replaced. */
#define BASE_FIELDS(hidden, inter, heads, kv, layers) \
    "\"hidden_size\": " hidden ", \"intermediate_size\": " inter ", \"num_attention_heads\": " heads \
    ", \"num_key_value_heads\": " kv ", \"num_hidden_layers\": " layers

static void test_refusals(void)
{
    const char *r;
    /* Missing and non-integer fields: each message names the field and the file. */
    write_config("LlamaForCausalLM", "bfloat16", "\"intermediate_size\": 14336, \"num_attention_heads\": 32, "
                 "\"num_key_value_heads\": 8, \"num_hidden_layers\": 32");
    r = refusal(1);
    KT_CHECK_CONTAINS(r, tmpconfig);
    KT_CHECK_CONTAINS(r, "hidden_size: missing");
    write_config("LlamaForCausalLM", "bfloat16", "\"hidden_size\": 4096, \"num_attention_heads\": 32, "
                 "\"num_key_value_heads\": 8, \"num_hidden_layers\": 32");
    KT_CHECK_CONTAINS(refusal(1), "intermediate_size: missing");
    write_config("LlamaForCausalLM", "bfloat16", "\"hidden_size\": 4096, \"intermediate_size\": 14336, "
                 "\"num_key_value_heads\": 8, \"num_hidden_layers\": 32");
    KT_CHECK_CONTAINS(refusal(1), "num_attention_heads: missing");
    write_config("LlamaForCausalLM", "bfloat16", "\"hidden_size\": 4096, \"intermediate_size\": 14336, "
                 "\"num_attention_heads\": 32, \"num_key_value_heads\": 8");
    KT_CHECK_CONTAINS(refusal(1), "num_hidden_layers: missing");
    write_config("LlamaForCausalLM", "bfloat16", BASE_FIELDS("\"4096\"", "14336", "32", "8", "32"));
    r = refusal(1);
    KT_CHECK_CONTAINS(r, tmpconfig);
    KT_CHECK_CONTAINS(r, "hidden_size: expected a positive integer, got \"4096\"");
    write_config("LlamaForCausalLM", "bfloat16", BASE_FIELDS("4096", "14336.5", "32", "8", "32"));
    KT_CHECK_CONTAINS(refusal(1), "intermediate_size: expected a positive integer, got 14336.5");
    write_config("LlamaForCausalLM", "bfloat16", BASE_FIELDS("4096", "14336", "0", "8", "32"));
    KT_CHECK_CONTAINS(refusal(1), "num_attention_heads: expected a positive integer, got 0");
    write_config("LlamaForCausalLM", "bfloat16", BASE_FIELDS("4096", "14336", "32", "[8]", "32"));
    KT_CHECK_CONTAINS(refusal(1), "num_key_value_heads: expected a positive integer, got [8]");
    write_config("LlamaForCausalLM", "bfloat16", BASE_FIELDS("4096", "14336", "32", "8", "true"));
    KT_CHECK_CONTAINS(refusal(1), "num_hidden_layers: expected a positive integer, got true");
    write_config("LlamaForCausalLM", "bfloat16", BASE_FIELDS("4096", "14336", "32", "8", "32") ", \"head_dim\": -128");
    KT_CHECK_CONTAINS(refusal(1), "head_dim: expected a positive integer, got -128");
    write_config("LlamaForCausalLM", "bfloat16", BASE_FIELDS("4096", "1e12", "32", "8", "32"));
    KT_CHECK_CONTAINS(refusal(1), "intermediate_size: expected a positive integer");

    /* Architectures: unsupported ones are named with the supported list; MoE is not dense. */
    write_config("Gemma2ForCausalLM", "bfloat16", BASE_FIELDS("4096", "14336", "32", "8", "32"));
    r = refusal(1);
    KT_CHECK_CONTAINS(r, tmpconfig);
    KT_CHECK_CONTAINS(r, "architectures [\"Gemma2ForCausalLM\"]: not supported");
    KT_CHECK_CONTAINS(r, "LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM");
    write_config("Qwen3MoeForCausalLM", "bfloat16", BASE_FIELDS("4096", "14336", "32", "8", "32"));
    KT_CHECK_CONTAINS(refusal(1), "Qwen3MoeForCausalLM");
    write_raw("{\"torch_dtype\": \"bfloat16\", " BASE_FIELDS("4096", "14336", "32", "8", "32") "}");
    KT_CHECK_CONTAINS(refusal(1), "architectures: missing");
    write_raw("{\"architectures\": \"LlamaForCausalLM\", \"torch_dtype\": \"bfloat16\", "
              BASE_FIELDS("4096", "14336", "32", "8", "32") "}");
    KT_CHECK_CONTAINS(refusal(1), "architectures: expected a list of names");

    /* dtype and quantization: only unquantized bf16/fp16 models have these dense GEMMs. */
    write_config("LlamaForCausalLM", "float32", BASE_FIELDS("4096", "14336", "32", "8", "32"));
    KT_CHECK_CONTAINS(refusal(1), "torch_dtype \"float32\": not supported");
    write_raw("{\"architectures\": [\"LlamaForCausalLM\"], " BASE_FIELDS("4096", "14336", "32", "8", "32") "}");
    KT_CHECK_CONTAINS(refusal(1), "torch_dtype: missing");
    write_config("LlamaForCausalLM", "bfloat16", BASE_FIELDS("4096", "14336", "32", "8", "32")
                 ", \"quantization_config\": {\"quant_method\": \"awq\", \"bits\": 4}");
    r = refusal(1);
    KT_CHECK_CONTAINS(r, "quantization_config (quant_method awq)");
    KT_CHECK_CONTAINS(r, tmpconfig);

    /* Shapes that do not divide. */
    write_config("LlamaForCausalLM", "bfloat16", BASE_FIELDS("4096", "14336", "32", "5", "32"));
    KT_CHECK_CONTAINS(refusal(1), "num_key_value_heads 5 does not divide num_attention_heads 32");
    write_config("LlamaForCausalLM", "bfloat16", BASE_FIELDS("4000", "14336", "48", "8", "32"));
    KT_CHECK_CONTAINS(refusal(1), "hidden_size 4000 is not divisible by num_attention_heads 48");

    /* Sharding refusals, in the order vLLM would hit them. */
    write_config("LlamaForCausalLM", "bfloat16", BASE_FIELDS("4096", "14336", "32", "8", "32"));
    r = refusal(0);
    KT_CHECK_CONTAINS(r, "tp 0: tensor parallelism must be at least 1");
    KT_CHECK_CONTAINS(r, tmpconfig);
    KT_CHECK_CONTAINS(refusal(-2), "tp -2");
    KT_CHECK_CONTAINS(refusal(3), "num_attention_heads 32 is not divisible by tp 3");
    write_config("LlamaForCausalLM", "bfloat16", BASE_FIELDS("4096", "1000", "32", "8", "32"));
    r = refusal(16);
    KT_CHECK_CONTAINS(r, "intermediate_size 1000 is not divisible by tp 16");
    KT_CHECK_CONTAINS(r, tmpconfig);
    write_config("LlamaForCausalLM", "bfloat16", BASE_FIELDS("6144", "24576", "48", "6", "32"));
    KT_CHECK(strcmp(refusal(2), "(accepted)") == 0);
    KT_CHECK_CONTAINS(refusal(4), "num_key_value_heads 6 is not divisible by tp 4");
    write_config("LlamaForCausalLM", "bfloat16", BASE_FIELDS("6144", "24576", "48", "3", "32"));
    KT_CHECK(strcmp(refusal(3), "(accepted)") == 0);
    KT_CHECK_CONTAINS(refusal(4), "num_key_value_heads 3 does not divide tp 4");

    /* Malformed JSON names where cJSON stopped; a non-object is refused too. */
    write_raw("{\n  \"hidden_size\": 4096,\n  \"x\": ]\n}\n");
    r = refusal(1);
    KT_CHECK_CONTAINS(r, tmpconfig);
    KT_CHECK_CONTAINS(r, "malformed JSON at line 3");
    write_raw("");
    KT_CHECK_CONTAINS(refusal(1), "malformed JSON at line 1, column 1");
    write_raw("[1, 2]");
    KT_CHECK_CONTAINS(refusal(1), "expected a JSON object at the top level");

    /* Unreadable: no such directory, and a directory without config.json. */
    model_problems m;
    char err[768] = "", empty[300];
    KT_CHECK(model_load("/nonexistent/kt-model", 1, &m, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "cannot read /nonexistent/kt-model");
    snprintf(empty, sizeof empty, "%s/empty", tmpdir);
    KT_CHECK_INT(mkdir(empty, 0700), 0);
    KT_CHECK(model_load(empty, 1, &m, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "cannot read");
    KT_CHECK_CONTAINS(err, "/empty/config.json");
    rmdir(empty);
}

static void test_buckets_and_keys(void)
{
    const int edges[] = { 1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192 };
    KT_CHECK_INT(model_m_bucket_count(), 14);
    for (int i = 0; i < 14; i++) KT_CHECK_INT(model_m_bucket_at(i), edges[i]);
    KT_CHECK_INT(model_m_bucket_at(14), -1);
    KT_CHECK_INT(model_m_bucket_at(-1), -1);

    KT_CHECK_INT(model_m_bucket(1), 1);
    KT_CHECK_INT(model_m_bucket(2), 2);
    KT_CHECK_INT(model_m_bucket(3), 4);
    KT_CHECK_INT(model_m_bucket(16), 16);
    KT_CHECK_INT(model_m_bucket(17), 32);
    KT_CHECK_INT(model_m_bucket(64), 64);
    KT_CHECK_INT(model_m_bucket(65), 128);
    KT_CHECK_INT(model_m_bucket(4097), 8192);
    KT_CHECK_INT(model_m_bucket(8192), 8192);
    KT_CHECK_INT(model_m_bucket(9000), 8192);
    KT_CHECK_INT(model_m_bucket(1000000), 8192);
    KT_CHECK_INT(model_m_bucket(0), -1);
    KT_CHECK_INT(model_m_bucket(-5), -1);
    KT_CHECK(strcmp(model_m_phase(64), "decode") == 0);
    KT_CHECK(strcmp(model_m_phase(128), "prefill") == 0);

    model_problems m;
    char err[768] = "", key[96];
    KT_CHECK_INT(model_load("models/llama-3.1-8b", 4, &m, err, sizeof err), 0);
    const char *want = "gemm bf16 n=1536 k=4096 m<=16";
    KT_CHECK_INT(model_problem_key(&m.problems[0], 16, key, sizeof key), (int)strlen(want));
    KT_CHECK(strcmp(key, want) == 0);
    KT_CHECK(model_problem_key(&m.problems[3], 8192, key, sizeof key) > 0);
    KT_CHECK(strcmp(key, "gemm bf16 n=4096 k=3584 m<=8192") == 0);
    KT_CHECK_INT(model_problem_key(&m.problems[0], 3, key, sizeof key), -1);    /* not an edge */
    KT_CHECK_INT(model_problem_key(&m.problems[0], 0, key, sizeof key), -1);
    KT_CHECK_INT(model_problem_key(&m.problems[0], 16, key, 10), -1);            /* too small: truncated */
    KT_CHECK(strcmp(key, "gemm bf16") == 0);
    KT_CHECK(strcmp(model_layer_name(MODEL_LAYER_GATE_UP), "gate_up") == 0);
    KT_CHECK(strcmp(model_layer_name(MODEL_LAYER_COUNT), "?") == 0);
}

int main(void)
{
    if (!mkdtemp(tmpdir)) { perror("mkdtemp"); return 1; }
    snprintf(tmpconfig, sizeof tmpconfig, "%s/config.json", tmpdir);
    test_shipped_models();
    test_synthetic_shapes();
    test_refusals();
    test_buckets_and_keys();
    unlink(tmpconfig);
    rmdir(tmpdir);
    KT_TEST_END();
}
