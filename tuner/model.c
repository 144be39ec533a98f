/* model.c: config.json -> validated model_config -> per-rank GEMM problems and their keys.
 * Every refusal names the file and the field, because a wrong guess here would not fail later: it
 * would tune the wrong shapes and the runtime would fall back silently on the real ones. */
#include "model.h"
#include "build/file_io.h"
#include "runtime/problem_key.h"
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <cjson/cJSON.h>

/* config.json files are a few kilobytes; anything far larger is not one. */
#define MODEL_CONFIG_MAX_BYTES (4 << 20)

static const char *const layer_names[MODEL_LAYER_COUNT] = { "qkv", "o", "gate_up", "down" };

static const char *const supported_archs[] = {
    "LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM",
};
#define N_SUPPORTED_ARCHS ((int)(sizeof supported_archs / sizeof supported_archs[0]))

const char *model_layer_name(model_layer l)
{
    return (int)l >= 0 && l < MODEL_LAYER_COUNT ? layer_names[l] : "?";
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err && errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* The file's bytes, NUL-terminated for cJSON; NULL with err set when it cannot be read whole. */
static char *read_whole(const char *file, char *err, size_t errlen)
{
    char *buf = file_read_all(file, MODEL_CONFIG_MAX_BYTES, NULL);
    if (!buf)
        fail(err, errlen, "cannot read %s: %s", file,
             errno == EFBIG ? "larger than 4 MiB, not a model config" : strerror(errno));
    return buf;
}

/* A short rendering of a JSON value for messages: `"4096"`, `40.5`, `null`, `[...]`. */
static void describe(const cJSON *v, char *out, size_t len)
{
    char *text = cJSON_PrintUnformatted(v);
    if (!text) { snprintf(out, len, "(unprintable)"); return; }
    if (strlen(text) > 40) snprintf(out, len, "%.37s...", text);
    else snprintf(out, len, "%s", text);
    cJSON_free(text);
}

/* 1: present and a positive integer in *out. 0: absent or null (HF treats null as "use the
 * default"). -1: present but not a positive integer, err set. */
static int read_int(const cJSON *root, const char *file, const char *field, int *out, char *err, size_t errlen)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, field);
    if (!v || cJSON_IsNull(v)) return 0;
    if (cJSON_IsNumber(v)) {
        double d = v->valuedouble;
        if (d >= 1 && d <= INT_MAX && (double)(int)d == d) { *out = (int)d; return 1; }
    }
    char shown[48];
    describe(v, shown, sizeof shown);
    return fail(err, errlen, "%s: %s: expected a positive integer, got %s", file, field, shown);
}

/* A required integer field: missing is an error too. */
static int need_int(const cJSON *root, const char *file, const char *field, int *out, char *err, size_t errlen)
{
    int r = read_int(root, file, field, out, err, errlen);
    if (r == 0) return fail(err, errlen, "%s: %s: missing (a positive integer is required)", file, field);
    return r < 0 ? -1 : 0;
}

static int read_architecture(const cJSON *root, const char *file, model_config *c, char *err, size_t errlen)
{
    const cJSON *archs = cJSON_GetObjectItemCaseSensitive(root, "architectures");
    char supported[160] = "";
    for (int i = 0; i < N_SUPPORTED_ARCHS; i++)
        snprintf(supported + strlen(supported), sizeof supported - strlen(supported), "%s%s", i ? ", " : "",
                 supported_archs[i]);
    if (!archs) return fail(err, errlen, "%s: architectures: missing (supported: %s)", file, supported);
    if (!cJSON_IsArray(archs)) {
        char shown[48];
        describe(archs, shown, sizeof shown);
        return fail(err, errlen, "%s: architectures: expected a list of names, got %s", file, shown);
    }
    const cJSON *a;
    cJSON_ArrayForEach(a, archs) {
        if (!cJSON_IsString(a)) continue;
        for (int i = 0; i < N_SUPPORTED_ARCHS; i++)
            if (strcmp(a->valuestring, supported_archs[i]) == 0) {
                snprintf(c->architecture, sizeof c->architecture, "%s", supported_archs[i]);
                return 0;
            }
    }
    char shown[48];
    describe(archs, shown, sizeof shown);
    return fail(err, errlen, "%s: architectures %s: not supported (supported: %s; dense decoders only)", file,
                shown, supported);
}

static int read_dtype(const cJSON *root, const char *file, model_config *c, char *err, size_t errlen)
{
    /* transformers >= 4.56 writes `dtype`; the published configs here still say torch_dtype. */
    const char *field = "torch_dtype";
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, field);
    if (!v) { field = "dtype"; v = cJSON_GetObjectItemCaseSensitive(root, field); }
    if (!v) return fail(err, errlen, "%s: torch_dtype: missing (bfloat16 or float16 is required)", file);
    if (cJSON_IsString(v) && strcmp(v->valuestring, "bfloat16") == 0) { strcpy(c->dtype, "bf16"); return 0; }
    if (cJSON_IsString(v) && strcmp(v->valuestring, "float16") == 0) { strcpy(c->dtype, "fp16"); return 0; }
    char shown[48];
    describe(v, shown, sizeof shown);
    return fail(err, errlen, "%s: %s %s: not supported (bfloat16, float16)", file, field, shown);
}

/* Validate the parsed document into c. */
static int read_config(const cJSON *root, const char *file, model_config *c, char *err, size_t errlen)
{
    if (!cJSON_IsObject(root)) return fail(err, errlen, "%s: expected a JSON object at the top level", file);
    if (read_architecture(root, file, c, err, errlen)) return -1;

    /* A quantized checkpoint runs W4A16/W8A8 kernels, not these dense GEMMs: deriving dense keys for
     * it would report coverage for kernels the model never calls (seed 003). */
    const cJSON *q = cJSON_GetObjectItemCaseSensitive(root, "quantization_config");
    if (q && !cJSON_IsNull(q)) {
        const cJSON *method = cJSON_GetObjectItemCaseSensitive(q, "quant_method");
        return fail(err, errlen, "%s: quantization_config (quant_method %s): quantized checkpoints are not "
                    "supported; only unquantized bfloat16/float16 GEMMs are derived", file,
                    cJSON_IsString(method) ? method->valuestring : "unknown");
    }
    if (read_dtype(root, file, c, err, errlen)) return -1;

    if (need_int(root, file, "hidden_size", &c->hidden, err, errlen) ||
        need_int(root, file, "intermediate_size", &c->intermediate, err, errlen) ||
        need_int(root, file, "num_attention_heads", &c->heads, err, errlen) ||
        need_int(root, file, "num_hidden_layers", &c->layers, err, errlen))
        return -1;
    int r = read_int(root, file, "num_key_value_heads", &c->kv_heads, err, errlen);
    if (r < 0) return -1;
    if (r == 0) c->kv_heads = c->heads;   /* HF's default: multi-head attention */
    if (c->heads % c->kv_heads)
        return fail(err, errlen, "%s: num_key_value_heads %d does not divide num_attention_heads %d", file,
                    c->kv_heads, c->heads);

    r = read_int(root, file, "head_dim", &c->head_dim, err, errlen);
    if (r < 0) return -1;
    if (r == 0) {
        /* HF's Qwen3Config defaults head_dim to 128 whatever the hidden size; the others derive it. */
        if (strcmp(c->architecture, "Qwen3ForCausalLM") == 0) c->head_dim = 128;
        else if (c->hidden % c->heads)
            return fail(err, errlen, "%s: hidden_size %d is not divisible by num_attention_heads %d and there is "
                        "no head_dim", file, c->hidden, c->heads);
        else c->head_dim = c->hidden / c->heads;
    }
    if (read_int(root, file, "vocab_size", &c->vocab, err, errlen) < 0) return -1;
    return 0;
}

int model_config_load(const char *path, model_config *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (err && errlen) err[0] = 0;
    struct stat st;
    if (stat(path, &st) != 0) return fail(err, errlen, "cannot read %s: %s", path, strerror(errno));
    /* Drop trailing slashes so messages name `models/x/config.json`, not `models/x//config.json`. */
    size_t plen = strlen(path);
    while (plen > 1 && path[plen - 1] == '/') plen--;
    int n = S_ISDIR(st.st_mode) ? snprintf(out->path, sizeof out->path, "%.*s/config.json", (int)plen, path)
                                : snprintf(out->path, sizeof out->path, "%s", path);
    if (n < 0 || (size_t)n >= sizeof out->path) return fail(err, errlen, "%s: path too long", path);
    const char *file = out->path;

    char *text = read_whole(file, err, errlen);
    if (!text) return -1;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithOpts(text, &end, 0);
    if (!root) {
        /* cJSON reports where it stopped; turn that into a line and column a person can find. */
        const char *at = end && end >= text ? end : text;
        int line = 1, col = 1;
        for (const char *p = text; p < at && *p; p++) {
            if (*p == '\n') { line++; col = 1; }
            else col++;
        }
        fail(err, errlen, "%s: malformed JSON at line %d, column %d (byte %ld)", file, line, col, (long)(at - text));
        free(text);
        return -1;
    }
    int rc = read_config(root, file, out, err, errlen);
    cJSON_Delete(root);
    free(text);
    return rc;
}

/* Add (n, k) produced by layer l, merging with an existing problem of the same shape. */
static void add_shape(model_problems *m, model_layer l, long long n, long long k)
{
    model_problem *p = NULL;
    for (int i = 0; i < m->nproblems; i++)
        if (m->problems[i].n == n && m->problems[i].k == k) p = &m->problems[i];
    if (!p) {
        p = &m->problems[m->nproblems++];
        memset(p, 0, sizeof *p);
        snprintf(p->dtype, sizeof p->dtype, "%s", m->config.dtype);
        p->n = (int)n;
        p->k = (int)k;
    }
    p->layers[p->nlayers++] = l;
    p->count += m->config.layers;
}

int model_problems_derive(const model_config *c, int tp, model_problems *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (err && errlen) err[0] = 0;
    out->config = *c;
    out->tp = tp;
    const char *file = c->path;
    if (tp < 1) return fail(err, errlen, "%s: tp %d: tensor parallelism must be at least 1", file, tp);
    /* The same divisibility vLLM asserts when it builds the layers; refusing here says which field. */
    if (c->heads % tp)
        return fail(err, errlen, "%s: num_attention_heads %d is not divisible by tp %d", file, c->heads, tp);
    if (c->intermediate % tp)
        return fail(err, errlen, "%s: intermediate_size %d is not divisible by tp %d", file, c->intermediate, tp);
    if (c->kv_heads >= tp && c->kv_heads % tp)
        return fail(err, errlen, "%s: num_key_value_heads %d is not divisible by tp %d", file, c->kv_heads, tp);
    if (c->kv_heads < tp && tp % c->kv_heads)
        return fail(err, errlen, "%s: num_key_value_heads %d does not divide tp %d, so its heads cannot be "
                    "replicated evenly", file, c->kv_heads, tp);

    out->heads_per_rank = c->heads / tp;
    out->kv_heads_per_rank = c->kv_heads >= tp ? c->kv_heads / tp : 1;
    out->kv_replicas = c->kv_heads >= tp ? 1 : tp / c->kv_heads;

    long long hd = c->head_dim, hidden = c->hidden, inter_rank = c->intermediate / tp;
    long long n_qkv = (out->heads_per_rank + 2LL * out->kv_heads_per_rank) * hd;
    long long k_o = out->heads_per_rank * hd;
    if (n_qkv > INT_MAX || 2 * inter_rank > INT_MAX)
        return fail(err, errlen, "%s: head_dim %d and the head counts give a GEMM dimension beyond %d", file,
                    c->head_dim, INT_MAX);
    add_shape(out, MODEL_LAYER_QKV, n_qkv, hidden);
    add_shape(out, MODEL_LAYER_O, hidden, k_o);
    add_shape(out, MODEL_LAYER_GATE_UP, 2 * inter_rank, hidden);
    add_shape(out, MODEL_LAYER_DOWN, hidden, inter_rank);
    return 0;
}

int model_load(const char *path, int tp, model_problems *out, char *err, size_t errlen)
{
    model_config c;
    if (model_config_load(path, &c, err, errlen)) {
        memset(out, 0, sizeof *out);
        return -1;
    }
    return model_problems_derive(&c, tp, out, err, errlen);
}

/* The edges and key texts live in runtime/problem_key.c, which libktrt links without the tuner. */
int model_m_bucket_count(void) { return kt_m_bucket_count(); }

int model_m_bucket_at(int i) { return kt_m_bucket_at(i); }

int model_m_bucket(long m) { return kt_m_bucket(m); }

const char *model_m_phase(int bucket) { return kt_m_phase(bucket); }

int model_problem_key(const model_problem *p, int m_bucket, char *buf, size_t len)
{
    return kt_gemm_problem_key(buf, len, p->dtype, p->n, p->k, m_bucket);
}

void model_shape_of(const model_problems *mp, kt_model_shape *out)
{
    memset(out, 0, sizeof *out);
    const model_config *c = &mp->config;
    out->dtype = c->dtype;
    out->hidden = c->hidden;
    out->intermediate = c->intermediate;
    out->heads = c->heads;
    out->kv_heads = c->kv_heads;
    out->head_dim = c->head_dim;
    out->layers = c->layers;
    out->tp = mp->tp;
    out->heads_per_rank = mp->heads_per_rank;
    out->kv_heads_per_rank = mp->kv_heads_per_rank;
    for (int i = 0; i < mp->nproblems && out->nlinear < KT_MODEL_MAX_LINEAR; i++) {
        kt_model_linear *l = &out->linear[out->nlinear++];
        const model_problem *p = &mp->problems[i];
        l->n = p->n;
        l->k = p->k;
        l->count = p->count;
        l->layers[0] = 0;
        for (int j = 0; j < p->nlayers; j++) {
            size_t used = strlen(l->layers);
            snprintf(l->layers + used, sizeof l->layers - used, "%s%s", j ? "," : "", model_layer_name(p->layers[j]));
        }
    }
}
