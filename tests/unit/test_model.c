/* test_model: per-rank GEMM shapes of the shipped models at TP 1/2/4/8 (expected numbers worked out
 * by hand from each config, not by the code under test), KV-head replication, de-duplication of equal
 * shapes, the attention groups of dense, sliding (Gemma 3) and hybrid GDN (Qwen3-Next) models and their
 * attn_decode problems, what is listed as not derived, the M bucket law, key text, and every refusal
 * by its message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "kt_test.h"
#include "tuner/model.h"
#include "runtime/op_attn.h"
#include "runtime/op_attn_model.h"

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



static const kt_model_attn *expect_group(const model_problems *m, int i, const char *kind, int layers, int head_dim,
                                         int heads, int kv, int window, int max_ctx)
{
    KT_CHECK(i < m->nattn);
    if (i >= m->nattn) return NULL;
    const kt_model_attn *a = &m->attn[i];
    if (strcmp(a->kind, kind) || a->layers != layers || a->heads_per_rank != heads || a->kv_heads_per_rank != kv)
        fprintf(stderr, "  %s tp %d group %d: %s x%d %d/%d heads\n", m->config.path, m->tp, i, a->kind, a->layers,
                a->heads_per_rank, a->kv_heads_per_rank);
    KT_CHECK(strcmp(a->kind, kind) == 0);
    KT_CHECK_INT(a->layers, layers);
    KT_CHECK_INT(a->head_dim, head_dim);
    KT_CHECK_INT(a->heads_per_rank, heads);
    KT_CHECK_INT(a->kv_heads_per_rank, kv);
    KT_CHECK_INT(a->window, window);
    KT_CHECK_INT(a->softcap, 0);
    KT_CHECK_INT(a->sinks, 0);
    KT_CHECK_INT(a->max_ctx, max_ctx);
    return a;
}

/* The attn_decode problem of group i: its dims in op_attn.h order, its layers text and calls, and
 * the limits on q, batch and ctx. */
static void expect_attn_problem(const model_problems *m, int i, int g, int hkv, int win, long long ctx_limit)
{
    kt_model_shape shape;
    model_shape_of(m, &shape);
    kt_op_model_problem got[KT_MODEL_MAX_ATTN];
    char err[256] = "";
    int n = kt_attn_model_problems(&shape, got, KT_MODEL_MAX_ATTN, err, sizeof err);
    KT_CHECK_INT(n, m->nattn);
    if (i >= n) return;
    const long long *d = got[i].p.dim;
    KT_CHECK(got[i].p.op == &kt_op_attn_decode);
    KT_CHECK_INT(got[i].p.dtype, 0);   /* bf16 */
    KT_CHECK_INT(d[KT_ATTN_D_D], m->attn[i].head_dim);
    KT_CHECK_INT(d[KT_ATTN_D_G], g);
    KT_CHECK_INT(d[KT_ATTN_D_HKV], hkv);
    KT_CHECK_INT(d[KT_ATTN_D_BS], 16);
    KT_CHECK_INT(d[KT_ATTN_D_WIN], win);
    KT_CHECK_INT(d[KT_ATTN_D_CAP], 0);
    KT_CHECK_INT(d[KT_ATTN_D_SINK], 0);
    KT_CHECK_INT(d[KT_ATTN_D_Q], 1);
    KT_CHECK_INT(d[KT_ATTN_D_BATCH], 1);
    KT_CHECK_INT(d[KT_ATTN_D_CTX], 1);
    char want[32];
    snprintf(want, sizeof want, "attn.%s", m->attn[i].kind);
    KT_CHECK(strcmp(got[i].layers, want) == 0);
    KT_CHECK_INT(got[i].calls, m->attn[i].layers);
    long long limit[KT_OP_MAX_DIMS];
    kt_attn_model_limits(&m->attn[i], limit);
    KT_CHECK_INT(limit[KT_ATTN_D_Q], 8);
    KT_CHECK_INT(limit[KT_ATTN_D_BATCH], 256);
    KT_CHECK_INT(limit[KT_ATTN_D_CTX], ctx_limit);
    KT_CHECK_INT(limit[KT_ATTN_D_D], 0);
    KT_CHECK_INT(limit[KT_ATTN_D_WIN], 0);
}

static const model_not_derived *find_not_derived(const model_problems *m, const char *layers)
{
    for (int i = 0; i < m->nnot_derived; i++)
        if (strcmp(m->not_derived[i].layers, layers) == 0) return &m->not_derived[i];
    return NULL;
}

static void test_attention_dense(void)
{
    /* Llama-3.1-8B at TP 4: one full-attention group of all 32 layers, 8 q and 2 kv heads a rank
     * (GQA group 4), max_position_embeddings 131072; nothing left underived. */
    model_problems m;
    char err[768] = "";
    KT_CHECK_INT(model_load("models/llama-3.1-8b", 4, &m, err, sizeof err), 0);
    KT_CHECK_INT(m.nattn, 1);
    expect_group(&m, 0, "full", 32, 128, 8, 2, 0, 131072);
    expect_attn_problem(&m, 0, 4, 2, 0, 131072);
    KT_CHECK_INT(m.linear_attn_layers, 0);
    KT_CHECK_INT(m.nnot_derived, 0);
    kt_model_shape shape;
    model_shape_of(&m, &shape);
    KT_CHECK_INT(shape.nattn, 1);
    KT_CHECK_INT(shape.norm_plus_one, 0);
    /* Qwen2.5-7B says sliding_window 131072 with use_sliding_window false: no layer slides. */
    KT_CHECK_INT(model_load("models/qwen2.5-7b-instruct", 1, &m, err, sizeof err), 0);
    KT_CHECK_INT(m.nattn, 1);
    expect_group(&m, 0, "full", 28, 128, 28, 4, 0, 32768);

    /* The descriptor by name: the same problems once attn_decode is in the table, else a refusal
     * naming it. */
    kt_op_model_problem got[KT_MODEL_MAX_ATTN];
    model_shape_of(&m, &shape);
    int n = kt_attn_model_problems(&shape, got, KT_MODEL_MAX_ATTN, err, sizeof err);
    if (kt_op_find("attn_decode")) {
        KT_CHECK_INT(n, 1);
        KT_CHECK_INT(got[0].p.dim[KT_ATTN_D_G], 7);
    } else {
        KT_CHECK_INT(n, -1);
        KT_CHECK_CONTAINS(err, "attn_decode: no such op");
    }

    /* Mistral with a sliding_window: every layer slides (the ctx limit is window + 8). */
    write_config("MistralForCausalLM", "bfloat16", "\"hidden_size\": 4096, \"intermediate_size\": 14336, "
                 "\"num_attention_heads\": 32, \"num_key_value_heads\": 8, \"num_hidden_layers\": 32, "
                 "\"sliding_window\": 4096, \"max_position_embeddings\": 32768");
    KT_CHECK_INT(model_load(tmpdir, 2, &m, err, sizeof err), 0);
    KT_CHECK_INT(m.nattn, 1);
    expect_group(&m, 0, "sliding", 32, 128, 16, 4, 4096, 32768);
    expect_attn_problem(&m, 0, 4, 4, 4096, 4096 + 8);
    KT_CHECK_INT(m.problems[0].count, 32);   /* GEMMs unchanged by the window */
}

static const model_problem *find_problem(const model_problems *m, int n, int k)
{
    for (int i = 0; i < m->nproblems; i++)
        if (m->problems[i].n == n && m->problems[i].k == k) return &m->problems[i];
    return NULL;
}

static void test_qwen3_next(void)
{
    /* Qwen3-Next-80B-A3B: 48 layers, full_attention_interval 4 -> layers 3, 7, ..., 47 are gated full
     * attention (12), the other 36 Gated DeltaNet; 16 q heads, 2 kv heads, head_dim 256, hidden
     * 2048; every layer's MLP is routed MoE (mlp_only_layers [], decoder_sparse_step 1). */
    const char *dir = "models/qwen3-next-80b-a3b";
    const int tps[] = {1, 2, 4, 8};
    const int kv_rank[] = {2, 1, 1, 1}, replicas[] = {1, 1, 2, 4};
    for (int t = 0; t < 4; t++) {
        int tp = tps[t], heads = 16 / tp, kv = kv_rank[t];
        model_problems m;
        char err[768] = "";
        int rc = model_load(dir, tp, &m, err, sizeof err);
        KT_CHECK_INT(rc, 0);
        if (rc) { fprintf(stderr, "  %s tp %d: %s\n", dir, tp, err); continue; }
        KT_CHECK_INT(m.heads_per_rank, heads);
        KT_CHECK_INT(m.kv_heads_per_rank, kv);
        KT_CHECK_INT(m.kv_replicas, replicas[t]);
        KT_CHECK_INT(m.attn_layers, 12);
        KT_CHECK_INT(m.linear_attn_layers, 36);
        KT_CHECK_INT(m.dense_mlp_layers, 0);
        KT_CHECK_INT(m.nattn, 1);
        expect_group(&m, 0, "full", 12, 256, heads, kv, 0, 262144);
        /* g = q heads over kv heads of a rank: 8, 8, 4, 2 (at TP 8 the 2 kv heads are replicated
         * 4 ways, 1 a rank). */
        expect_attn_problem(&m, 0, heads / kv, kv, 0, 262144);
        /* The full-attention layers' projections (q_proj holds query and gate, 2 * heads), the GDN
         * layers' (in_proj_qkvz, in_proj_ba column-parallel, out_proj row-parallel: the same shape
         * as o_proj, so one problem), every layer's router (replicated) and shared expert. */
        /* at TP 8 q_proj's (2*2 + 2*1) * 256 is in_proj_qkvz's 12288 / 8: one problem */
        KT_CHECK_INT(m.problems[0].layers[0], MODEL_LAYER_QKV);
        KT_CHECK_INT(m.problems[0].n, (2 * heads + 2 * kv) * 256);
        KT_CHECK_INT(m.problems[0].k, 2048);
        KT_CHECK_INT(m.problems[0].count, tp == 8 ? 12 + 36 : 12);
        KT_CHECK_INT(m.problems[1].layers[0], MODEL_LAYER_O);
        KT_CHECK_INT(m.problems[1].layers[1], MODEL_LAYER_GDN_OUT);
        KT_CHECK_INT(m.problems[1].n, 2048);
        KT_CHECK_INT(m.problems[1].k, heads * 256);
        KT_CHECK_INT(m.problems[1].count, 12 + 36);
        const model_problem *qkvz = find_problem(&m, (2 * 2048 + 2 * 4096) / tp, 2048);
        KT_CHECK(qkvz && qkvz->layers[qkvz->nlayers - 1] == MODEL_LAYER_GDN_QKVZ && qkvz->count == (tp == 8 ? 48 : 36));
        const model_problem *ba = find_problem(&m, 64 / tp, 2048);
        KT_CHECK(ba && ba->layers[0] == MODEL_LAYER_GDN_BA && ba->count == 36);
        const model_problem *router = find_problem(&m, 512, 2048);
        KT_CHECK(router && router->layers[0] == MODEL_LAYER_ROUTER);
        const model_problem *sgu = find_problem(&m, 1024 / tp, 2048), *sd = find_problem(&m, 2048, 512 / tp);
        KT_CHECK(sgu && sd && sd->layers[0] == MODEL_LAYER_SHARED_DOWN && sd->count == 48);
        /* at TP 2 the shared expert's gate_up is the router's shape: one problem, 96 calls */
        KT_CHECK_INT(router ? router->count : 0, tp == 2 ? 96 : 48);
        KT_CHECK_INT(m.nproblems, tp == 2 || tp == 8 ? 6 : 7);
        /* The rest is listed, never derived as something else. */
        KT_CHECK_INT(m.nnot_derived, 3);
        KT_CHECK(!find_not_derived(&m, "gdn.prefill"));   /* gdn_prefill derives it from shape.gdn */
        const model_not_derived *e = find_not_derived(&m, "moe.experts");
        KT_CHECK(e && e->count == 48);
        if (e) KT_CHECK_CONTAINS(e->reason, "512 routed experts (top 10, moe_intermediate_size 512)");
        KT_CHECK(!find_not_derived(&m, "moe.shared_expert"));
        const model_not_derived *sh = find_not_derived(&m, "moe.shared_expert_gate");
        KT_CHECK(sh && sh->count == 48);
        const model_not_derived *nm = find_not_derived(&m, "norms");
        KT_CHECK(nm && nm->count == 96);
        /* ... and rmsnorm_add derives nothing for its (1 + weight) norms. */
        kt_model_shape shape;
        model_shape_of(&m, &shape);
        KT_CHECK_INT(shape.gdn.layers, m.linear_attn_layers);
        KT_CHECK_INT(shape.norm_plus_one, 1);
        /* the decode step is gdn_decode's: heads sharded over the ranks, 128/128, 4 taps */
        KT_CHECK_INT(shape.gdn.layers, 36);
        KT_CHECK_INT(shape.gdn.k_heads_per_rank * m.tp, 16);
        KT_CHECK_INT(shape.gdn.v_heads_per_rank * m.tp, 32);
        KT_CHECK_INT(shape.gdn.key_dim, 128);
        KT_CHECK_INT(shape.gdn.value_dim, 128);
        KT_CHECK_INT(shape.gdn.conv_kw, 4);
        kt_op_model_problem got[4];
        const kt_op *gdn = kt_op_find("gdn_decode");
        KT_CHECK(gdn && gdn->from_model(&shape, got, 4, err, sizeof err) == 1);
        const kt_op *rms = kt_op_find("rmsnorm_add");
        KT_CHECK(rms && rms->from_model(&shape, got, 4, err, sizeof err) == 0);
    }
    model_config c;
    char err[768] = "";
    KT_CHECK_INT(model_config_load(dir, &c, err, sizeof err), 0);
    KT_CHECK(strcmp(c.architecture, "Qwen3NextForCausalLM") == 0);
    KT_CHECK_INT(c.mixer[0], MODEL_MIXER_LINEAR);
    KT_CHECK_INT(c.mixer[3], MODEL_MIXER_FULL);
    KT_CHECK_INT(c.mixer[47], MODEL_MIXER_FULL);
    KT_CHECK_INT(c.attn_output_gate, 1);
    KT_CHECK_INT(c.vocab, 151936);

    /* Dense layers through mlp_only_layers get gate_up/down for exactly those layers; an explicit
     * layer_types wins over the interval. */
    write_config("Qwen3NextForCausalLM", "bfloat16", "\"hidden_size\": 2048, \"intermediate_size\": 5120, "
                 "\"num_attention_heads\": 16, \"num_key_value_heads\": 2, \"head_dim\": 256, \"num_hidden_layers\": 4, "
                 "\"mlp_only_layers\": [0, 2], \"attn_output_gate\": false, "
                 "\"layer_types\": [\"full_attention\", \"linear_attention\", \"full_attention\", \"linear_attention\"]");
    model_problems m;
    KT_CHECK_INT(model_load(tmpdir, 2, &m, err, sizeof err), 0);
    KT_CHECK_INT(m.attn_layers, 2);
    KT_CHECK_INT(m.dense_mlp_layers, 2);
    /* qkv, o, gate_up, down; in_proj_qkvz, in_proj_ba, out_proj of the 2 GDN layers; the 2 MoE
     * layers' router, shared gate_up and down (Qwen3-Next's defaults: 512 experts, 512 wide); at tp 2
     * out_proj has o's shape (2048 x 2048) and the shared gate_up the router's (512 x 2048): 8 */
    KT_CHECK_INT(m.nproblems, 8);
    KT_CHECK_INT(m.problems[0].n, (8 + 2 * 1) * 256);   /* no gate: plain qkv */
    KT_CHECK_INT(m.problems[0].count, 2);
    KT_CHECK_INT(m.problems[2].n, 5120);                /* 2 * 5120 / 2 */
    KT_CHECK_INT(m.problems[2].count, 2);
    KT_CHECK_INT(m.problems[3].k, 2560);
    const model_not_derived *e = find_not_derived(&m, "moe.experts");
    KT_CHECK(e && e->count == 2);
}

static void test_gemma3(void)
{
    /* Gemma-3-27B-it: the LM in text_config; 62 layers, sliding_window_pattern absent -> HF's 6:
     * layers 5, 11, ..., 59 full (10), the other 52 sliding (window 1024); max_position_embeddings
     * absent -> 131072; 32 q heads, 16 kv heads, head_dim 128, hidden 5376, intermediate 21504. */
    const char *dir = "models/gemma-3-27b-it";
    const int tps[] = {1, 2, 4, 8};
    for (int t = 0; t < 4; t++) {
        int tp = tps[t], heads = 32 / tp, kv = 16 / tp;
        model_problems m;
        char err[768] = "";
        int rc = model_load(dir, tp, &m, err, sizeof err);
        KT_CHECK_INT(rc, 0);
        if (rc) { fprintf(stderr, "  %s tp %d: %s\n", dir, tp, err); continue; }
        KT_CHECK_INT(m.kv_replicas, 1);
        KT_CHECK_INT(m.nattn, 2);
        expect_group(&m, 0, "sliding", 52, 128, heads, kv, 1024, 131072);   /* layer 0 slides: first */
        expect_group(&m, 1, "full", 10, 128, heads, kv, 0, 131072);
        expect_attn_problem(&m, 0, 2, kv, 1024, 1024 + 8);
        expect_attn_problem(&m, 1, 2, kv, 0, 131072);
        /* Its MLP is dense: the four GEMMs of every layer. */
        KT_CHECK_INT(m.nproblems, 4);
        const int want[4][2] = { {(heads + 2 * kv) * 128, 5376}, {5376, heads * 128}, {2 * 21504 / tp, 5376},
                                 {5376, 21504 / tp} };
        for (int i = 0; i < 4 && i < m.nproblems; i++) {
            KT_CHECK_INT(m.problems[i].n, want[i][0]);
            KT_CHECK_INT(m.problems[i].k, want[i][1]);
            KT_CHECK_INT(m.problems[i].count, 62);
        }
        /* Only its four GemmaRMSNorms a layer are left. */
        KT_CHECK_INT(m.nnot_derived, 1);
        const model_not_derived *nm = find_not_derived(&m, "norms");
        KT_CHECK(nm && nm->count == 4 * 62);
    }
    model_config c;
    char err[768] = "";
    KT_CHECK_INT(model_config_load(dir, &c, err, sizeof err), 0);
    KT_CHECK(strcmp(c.architecture, "Gemma3ForConditionalGeneration") == 0);
    KT_CHECK_INT(c.text_config, 1);
    KT_CHECK(strcmp(c.dtype, "bf16") == 0);   /* from the top level */
    KT_CHECK_INT(c.mixer[4], MODEL_MIXER_SLIDING);
    KT_CHECK_INT(c.mixer[5], MODEL_MIXER_FULL);
    KT_CHECK_INT(c.mixer[61], MODEL_MIXER_SLIDING);
    /* TP 16: 16 kv heads split 1 a rank, 2 q heads. TP 32 divides no head count of it. */
    model_problems m;
    KT_CHECK_INT(model_load(dir, 16, &m, err, sizeof err), 0);
    KT_CHECK_INT(m.kv_heads_per_rank, 1);
    KT_CHECK(model_load(dir, 3, &m, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "models/gemma-3-27b-it/config.json: num_attention_heads 32 is not divisible by tp 3");
}

static void test_nested_text_config(void)
{
    /* A nested LM with its own pattern words, a soft-cap and the dtype inside text_config only. */
    write_raw("{\"architectures\": [\"Gemma3ForConditionalGeneration\"], \"text_config\": {\"torch_dtype\": \"float16\", "
              "\"hidden_size\": 1024, \"intermediate_size\": 4096, \"num_attention_heads\": 8, \"num_key_value_heads\": 4, "
              "\"num_hidden_layers\": 3, \"head_dim\": 64, \"sliding_window\": 512, \"attn_logit_softcapping\": 50.0, "
              "\"max_position_embeddings\": 8192, "
              "\"layer_types\": [\"full_attention\", \"sliding_attention\", \"sliding_attention\"]}}");
    model_problems m;
    char err[768] = "";
    KT_CHECK_INT(model_load(tmpdir, 2, &m, err, sizeof err), 0);
    KT_CHECK(strcmp(m.config.dtype, "fp16") == 0);
    KT_CHECK_INT(m.nattn, 2);
    KT_CHECK(strcmp(m.attn[0].kind, "full") == 0);
    KT_CHECK_INT(m.attn[0].layers, 1);
    KT_CHECK_INT(m.attn[0].softcap, 50);
    KT_CHECK_INT(m.attn[1].window, 512);
    KT_CHECK_INT(m.attn[1].layers, 2);
    KT_CHECK_INT(m.attn[1].max_ctx, 8192);
    kt_model_shape shape;
    model_shape_of(&m, &shape);
    kt_op_model_problem got[4];
    KT_CHECK_INT(kt_attn_model_problems(&shape, got, 4, err, sizeof err), 2);
    KT_CHECK_INT(got[0].p.dtype, 1);   /* fp16 */
    KT_CHECK_INT(got[0].p.dim[KT_ATTN_D_CAP], 50);
    KT_CHECK_INT(got[0].p.dim[KT_ATTN_D_G], 2);
    KT_CHECK_INT(kt_attn_model_problems(&shape, got, 1, err, sizeof err), 1);   /* max */

    /* The field at fault is named with its path inside the file. */
    write_raw("{\"architectures\": [\"Gemma3ForConditionalGeneration\"], \"torch_dtype\": \"bfloat16\", "
              "\"text_config\": {\"hidden_size\": 1024, \"intermediate_size\": 4096, \"num_hidden_layers\": 3}}");
    const char *r = refusal(1);
    KT_CHECK_CONTAINS(r, tmpconfig);
    KT_CHECK_CONTAINS(r, "text_config.num_attention_heads: missing");
    write_raw("{\"architectures\": [\"Gemma3ForConditionalGeneration\"], \"torch_dtype\": \"bfloat16\", "
              "\"text_config\": [1]}");
    KT_CHECK_CONTAINS(refusal(1), "text_config: expected an object, got [1]");
}

static void test_layout_refusals(void)
{
    const char *r;
#define Q3N "\"hidden_size\": 2048, \"intermediate_size\": 5120, \"num_attention_heads\": 16, " \
            "\"num_key_value_heads\": 2, \"num_hidden_layers\": 4"
#define DENSE2 "\"hidden_size\": 4096, \"intermediate_size\": 14336, \"num_attention_heads\": 32, \"num_hidden_layers\": 2"
#define GEMMA1B "\"hidden_size\": 1152, \"intermediate_size\": 6912, \"num_attention_heads\": 4, " \
                "\"num_key_value_heads\": 1, \"num_hidden_layers\": 6"
    /* Layouts each family cannot have, or that are malformed: the message names the field. */
    static const struct { const char *arch, *fields; int tp; const char *want; } bad[] = {
        {"Qwen3NextForCausalLM", "\"hidden_size\": 2048, \"intermediate_size\": 5120, \"num_key_value_heads\": 2, "
         "\"num_hidden_layers\": 48", 1, ": num_attention_heads: missing"},
        {"Qwen3NextForCausalLM", Q3N ", \"layer_types\": [\"full_attention\"]", 1,
         "layer_types: 1 entries for num_hidden_layers 4"},
        {"Qwen3NextForCausalLM", Q3N ", \"layer_types\": [\"full_attention\", \"mamba\", \"full_attention\", "
         "\"full_attention\"]", 1, "layer_types[1] \"mamba\": not supported"},
        {"Qwen3NextForCausalLM", Q3N ", \"sliding_window\": 64, \"layer_types\": [\"full_attention\", "
         "\"sliding_attention\", \"full_attention\", \"full_attention\"]", 1,
         "layer_types[1] \"sliding_attention\": not a layer Qwen3NextForCausalLM has"},
        {"Qwen3NextForCausalLM", Q3N ", \"mlp_only_layers\": [7]", 1, "mlp_only_layers: 7 is not a layer index below 4"},
        {"Qwen3NextForCausalLM", Q3N ", \"linear_num_key_heads\": 12", 4, "(accepted)"},
        {"Qwen3NextForCausalLM", Q3N ", \"linear_num_key_heads\": 12", 8, "linear_num_key_heads 12 is not divisible by tp 8"},
        {"LlamaForCausalLM", DENSE2 ", \"layer_types\": [\"full_attention\", \"linear_attention\"]", 1,
         "layer_types[1] \"linear_attention\": not a layer LlamaForCausalLM has"},
        {"Qwen2ForCausalLM", DENSE2 ", \"use_sliding_window\": true, \"sliding_window\": 4096", 1, "use_sliding_window true"},
        {"Qwen3ForCausalLM", DENSE2 ", \"layer_types\": [\"full_attention\", \"sliding_attention\"]", 1,
         "sliding_window: missing, and 1 layers are sliding_attention"},
        {"Gemma3ForCausalLM", GEMMA1B ", \"attn_logit_softcapping\": 30.5", 1,
         "attn_logit_softcapping 30.5: expected null or a positive whole number"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_config(bad[i].arch, "bfloat16", bad[i].fields);
        r = refusal(bad[i].tp);
        if (!strstr(r, bad[i].want)) fprintf(stderr, "  layout case %zu: %s\n", i, r);
        KT_CHECK_CONTAINS(r, bad[i].want);
        if (strcmp(bad[i].want, "(accepted)")) KT_CHECK_CONTAINS(r, tmpconfig);   /* names the file */
    }
    /* Gemma3ForCausalLM (text only, top level): Gemma3TextConfig's defaults, window 4096. */
    write_config("Gemma3ForCausalLM", "bfloat16", GEMMA1B ", \"attn_logit_softcapping\": null, \"sliding_window_pattern\": 3");
    model_problems m;
    char err[768] = "";
    KT_CHECK_INT(model_load(tmpdir, 2, &m, err, sizeof err), 0);
    KT_CHECK_INT(m.config.head_dim, 256);
    KT_CHECK_INT(m.nattn, 2);
    KT_CHECK_INT(m.attn[0].window, 4096);
    KT_CHECK_INT(m.attn[0].layers, 4);
    KT_CHECK_INT(m.attn[1].layers, 2);
    KT_CHECK_INT(m.kv_replicas, 2);
    KT_CHECK_INT(m.attn[1].kv_heads_per_rank, 1);
}

int main(void)
{
    if (!mkdtemp(tmpdir)) { perror("mkdtemp"); return 1; }
    snprintf(tmpconfig, sizeof tmpconfig, "%s/config.json", tmpdir);
    test_shipped_models();
    test_synthetic_shapes();
    test_refusals();
    test_buckets_and_keys();
    test_attention_dense();
    test_qwen3_next();
    test_gemma3();
    test_nested_text_config();
    test_layout_refusals();
    unlink(tmpconfig);
    rmdir(tmpdir);
    KT_TEST_END();
}
