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

static const char *const layer_names[MODEL_LAYER_COUNT] = {
    "qkv", "o", "gate_up", "down", "gdn.in_proj_qkvz", "gdn.in_proj_ba", "gdn.out_proj",
    "moe.router", "shared_expert.gate_up", "shared_expert.down",
};

static const char *const supported_archs[] = {
    "LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM",
    "Gemma3ForCausalLM", "Gemma3ForConditionalGeneration", "Qwen3NextForCausalLM",
};
#define N_SUPPORTED_ARCHS ((int)(sizeof supported_archs / sizeof supported_archs[0]))

/* The architectures' families: what their layers are and which HF defaults fill absent fields. */
typedef enum model_family { FAMILY_DENSE, FAMILY_GEMMA3, FAMILY_QWEN3_NEXT } model_family;

static model_family family_of(const char *arch)
{
    if (strncmp(arch, "Gemma3", 6) == 0) return FAMILY_GEMMA3;
    if (strcmp(arch, "Qwen3NextForCausalLM") == 0) return FAMILY_QWEN3_NEXT;
    return FAMILY_DENSE;
}

/* Where the language model's fields live: the top level, or text_config (multimodal configs nest
 * the LM there). prefix names it in messages: "text_config.num_attention_heads". */
typedef struct cfg_obj {
    const cJSON *json;
    const char *file;
    const char *prefix;                 /* "" or "text_config." */
} cfg_obj;

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

static const cJSON *field_of(const cfg_obj *o, const char *field)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o->json, field);
    return v && !cJSON_IsNull(v) ? v : NULL;
}

/* 1: present and a positive integer in *out. 0: absent or null (HF treats null as "use the
 * default"). -1: present but not a positive integer, err set. */
static int read_int(const cfg_obj *o, const char *field, int *out, char *err, size_t errlen)
{
    const cJSON *v = field_of(o, field);
    if (!v) return 0;
    if (cJSON_IsNumber(v)) {
        double d = v->valuedouble;
        if (d >= 1 && d <= INT_MAX && (double)(int)d == d) { *out = (int)d; return 1; }
    }
    char shown[48];
    describe(v, shown, sizeof shown);
    return fail(err, errlen, "%s: %s%s: expected a positive integer, got %s", o->file, o->prefix, field, shown);
}

/* A required integer field: missing is an error too. */
static int need_int(const cfg_obj *o, const char *field, int *out, char *err, size_t errlen)
{
    int r = read_int(o, field, out, err, errlen);
    if (r == 0)
        return fail(err, errlen, "%s: %s%s: missing (a positive integer is required)", o->file, o->prefix, field);
    return r < 0 ? -1 : 0;
}

/* An optional integer with the family's default where absent. */
static int int_or(const cfg_obj *o, const char *field, int dflt, int *out, char *err, size_t errlen)
{
    int r = read_int(o, field, out, err, errlen);
    if (r == 0) *out = dflt;
    return r < 0 ? -1 : 0;
}

/* An optional boolean: 1/0 in *out, dflt when absent or null; -1 when not a boolean. */
static int read_bool(const cfg_obj *o, const char *field, int dflt, int *out, char *err, size_t errlen)
{
    const cJSON *v = field_of(o, field);
    if (!v) { *out = dflt; return 0; }
    if (cJSON_IsBool(v)) { *out = cJSON_IsTrue(v); return 0; }
    char shown[48];
    describe(v, shown, sizeof shown);
    return fail(err, errlen, "%s: %s%s: expected true or false, got %s", o->file, o->prefix, field, shown);
}

static int read_architecture(const cJSON *root, const char *file, model_config *c, char *err, size_t errlen)
{
    const cJSON *archs = cJSON_GetObjectItemCaseSensitive(root, "architectures");
    char supported[320] = "";
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
    return fail(err, errlen, "%s: architectures %s: not supported (supported: %s)", file, shown, supported);
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

/* HF's defaults where a family's config omits a field: the values of its *Config class
 * (Gemma3TextConfig, Qwen3NextConfig), so an absent field means what transformers and vLLM take.
 * The dense families keep their own rules (kv heads = heads, head_dim = hidden / heads). */
typedef struct family_defaults {
    int head_dim, kv_heads, max_ctx, sliding_window, sliding_pattern, full_interval;
    int experts, experts_per_tok, moe_intermediate, shared_intermediate, sparse_step;
    int linear_key_heads, linear_value_heads, linear_key_dim, linear_value_dim, linear_conv_kw;
} family_defaults;

static const family_defaults gemma3_defaults = {
    .head_dim = 256, .kv_heads = 4, .max_ctx = 131072, .sliding_window = 4096, .sliding_pattern = 6,
};
static const family_defaults qwen3_next_defaults = {
    .head_dim = 256, .kv_heads = 2, .max_ctx = 32768, .full_interval = 4, .experts = 512, .experts_per_tok = 10,
    .moe_intermediate = 512, .shared_intermediate = 512, .sparse_step = 1, .linear_key_heads = 16,
    .linear_value_heads = 32, .linear_key_dim = 128, .linear_value_dim = 128, .linear_conv_kw = 4,
};

/* The object the language model's fields are read from: text_config where the config nests one
 * (Gemma 3's multimodal configs), else the top level. */
static int lm_object(const cJSON *root, const char *file, cfg_obj *o, model_config *c, char *err, size_t errlen)
{
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(root, "text_config");
    *o = (cfg_obj){ root, file, "" };
    if (!t || cJSON_IsNull(t)) return 0;
    if (!cJSON_IsObject(t)) {
        char shown[48];
        describe(t, shown, sizeof shown);
        return fail(err, errlen, "%s: text_config: expected an object, got %s", file, shown);
    }
    *o = (cfg_obj){ t, file, "text_config." };
    c->text_config = 1;
    return 0;
}

/* A quantized checkpoint runs W4A16/W8A8 kernels, not these dense GEMMs: deriving dense keys for
 * it would report coverage for kernels the model never calls (seed 003). */
static int refuse_quantized(const cfg_obj *o, char *err, size_t errlen)
{
    const cJSON *q = field_of(o, "quantization_config");
    if (!q) return 0;
    const cJSON *method = cJSON_GetObjectItemCaseSensitive(q, "quant_method");
    return fail(err, errlen, "%s: %squantization_config (quant_method %s): quantized checkpoints are not "
                "supported; only unquantized bfloat16/float16 GEMMs are derived", o->file, o->prefix,
                cJSON_IsString(method) ? method->valuestring : "unknown");
}

static int mixer_of_word(const char *w)
{
    if (strcmp(w, "full_attention") == 0) return MODEL_MIXER_FULL;
    if (strcmp(w, "sliding_attention") == 0) return MODEL_MIXER_SLIDING;
    if (strcmp(w, "linear_attention") == 0) return MODEL_MIXER_LINEAR;
    return -1;
}

static const char *mixer_word(int k)
{
    return k == MODEL_MIXER_SLIDING ? "sliding_attention" : k == MODEL_MIXER_LINEAR ? "linear_attention"
                                                                                  : "full_attention";
}

/* layer_types, where the config writes one (newer transformers do for every hybrid model): 1 read,
 * 0 absent, -1 malformed. */
static int read_layer_types(const cfg_obj *o, model_config *c, char *err, size_t errlen)
{
    const cJSON *lt = field_of(o, "layer_types"), *e;
    if (!lt) return 0;
    char shown[48];
    if (!cJSON_IsArray(lt)) {
        describe(lt, shown, sizeof shown);
        return fail(err, errlen, "%s: %slayer_types: expected a list of names, got %s", o->file, o->prefix, shown);
    }
    if (cJSON_GetArraySize(lt) != c->layers)
        return fail(err, errlen, "%s: %slayer_types: %d entries for num_hidden_layers %d", o->file, o->prefix,
                    cJSON_GetArraySize(lt), c->layers);
    int i = 0;
    cJSON_ArrayForEach(e, lt) {
        int k = cJSON_IsString(e) ? mixer_of_word(e->valuestring) : -1;
        if (k < 0) {
            describe(e, shown, sizeof shown);
            return fail(err, errlen, "%s: %slayer_types[%d] %s: not supported (full_attention, sliding_attention, "
                        "linear_attention)", o->file, o->prefix, i, shown);
        }
        c->mixer[i++] = (unsigned char)k;
    }
    return 1;
}

/* Every layer k, or the family's periodic pattern: one layer in `period` (the last of each run) is
 * `every`, the others `rest`. Gemma 3: sliding_window_pattern 6 (five sliding, then one full);
 * Qwen3-Next: full_attention_interval 4 (three GDN, then one full). */
static void fill_pattern(model_config *c, int period, model_mixer every, model_mixer rest)
{
    for (int i = 0; i < c->layers; i++)
        c->mixer[i] = (unsigned char)(period > 0 && (i + 1) % period == 0 ? every : rest);
}

/* The layers' mixers when layer_types is absent, by family. */
static int default_layout(const cfg_obj *o, model_family f, model_config *c, char *err, size_t errlen)
{
    int period = 0;
    if (f == FAMILY_GEMMA3) {
        if (int_or(o, "sliding_window_pattern", gemma3_defaults.sliding_pattern, &period, err, errlen)) return -1;
        fill_pattern(c, period, MODEL_MIXER_FULL, MODEL_MIXER_SLIDING);
        return 0;
    }
    if (f == FAMILY_QWEN3_NEXT) {
        if (int_or(o, "full_attention_interval", qwen3_next_defaults.full_interval, &period, err, errlen)) return -1;
        fill_pattern(c, period, MODEL_MIXER_FULL, MODEL_MIXER_LINEAR);
        return 0;
    }
    /* Qwen2/Qwen3 apply sliding_window only with use_sliding_window, and then from
     * max_window_layers on: a split this loader does not derive, so it is refused, not guessed. */
    int qwen = strncmp(c->architecture, "Qwen", 4) == 0, use = 0;
    if (qwen && read_bool(o, "use_sliding_window", 0, &use, err, errlen)) return -1;
    if (use)
        return fail(err, errlen, "%s: %suse_sliding_window true: the per-layer window (from max_window_layers) "
                    "is not derived; give layer_types", o->file, o->prefix);
    /* Llama/Mistral: a sliding_window applies to every layer (Mistral-7B-v0.1 has 4096). */
    int window = 0;
    if (!qwen && read_int(o, "sliding_window", &window, err, errlen) < 0) return -1;
    fill_pattern(c, 0, MODEL_MIXER_FULL, window ? MODEL_MIXER_SLIDING : MODEL_MIXER_FULL);
    return 0;
}

/* The per-layer mixers, checked against what the family's layers can be, and the window. */
static int read_layout(const cfg_obj *o, model_family f, model_config *c, char *err, size_t errlen)
{
    if (c->layers > MODEL_MAX_LAYERS)
        return fail(err, errlen, "%s: %snum_hidden_layers %d: more than %d layers", o->file, o->prefix, c->layers,
                    MODEL_MAX_LAYERS);
    int r = read_layer_types(o, c, err, errlen);
    if (r < 0 || (r == 0 && default_layout(o, f, c, err, errlen))) return -1;
    int sliding = 0;
    for (int i = 0; i < c->layers; i++) {
        int k = c->mixer[i];
        /* vLLM's Qwen3-Next attention has no window; the other families have no GDN layers. */
        int allowed = f == FAMILY_QWEN3_NEXT ? k != MODEL_MIXER_SLIDING : k != MODEL_MIXER_LINEAR;
        if (!allowed)
            return fail(err, errlen, "%s: %slayer_types[%d] \"%s\": not a layer %s has", o->file, o->prefix, i,
                        mixer_word(k), c->architecture);
        sliding += k == MODEL_MIXER_SLIDING;
    }
    if (!sliding) return 0;
    r = int_or(o, "sliding_window", f == FAMILY_GEMMA3 ? gemma3_defaults.sliding_window : 0, &c->sliding_window,
               err, errlen);
    if (r < 0) return -1;
    if (c->sliding_window == 0)
        return fail(err, errlen, "%s: %ssliding_window: missing, and %d layers are sliding_attention", o->file,
                    o->prefix, sliding);
    return 0;
}

/* attn_logit_softcapping (Gemma): null is none. attn_decode's cap is an integer, as models set it. */
static int read_softcap(const cfg_obj *o, model_config *c, char *err, size_t errlen)
{
    const cJSON *v = field_of(o, "attn_logit_softcapping");
    if (!v) return 0;
    if (cJSON_IsNumber(v) && v->valuedouble >= 1 && v->valuedouble <= 1e6 &&
        (double)(int)v->valuedouble == v->valuedouble) {
        c->softcap = (int)v->valuedouble;
        return 0;
    }
    char shown[48];
    describe(v, shown, sizeof shown);
    return fail(err, errlen, "%s: %sattn_logit_softcapping %s: expected null or a positive whole number", o->file,
                o->prefix, shown);
}

/* mlp_only_layers: the layer indices whose MLP stays dense in a MoE model. */
static int read_mlp_only(const cfg_obj *o, unsigned char *dense, int layers, char *err, size_t errlen)
{
    const cJSON *v = field_of(o, "mlp_only_layers"), *e;
    if (!v) return 0;
    char shown[48];
    if (!cJSON_IsArray(v)) {
        describe(v, shown, sizeof shown);
        return fail(err, errlen, "%s: %smlp_only_layers: expected a list of layer indices, got %s", o->file,
                    o->prefix, shown);
    }
    cJSON_ArrayForEach(e, v) {
        if (!cJSON_IsNumber(e) || e->valuedouble < 0 || e->valuedouble >= layers ||
            (double)(int)e->valuedouble != e->valuedouble) {
            describe(e, shown, sizeof shown);
            return fail(err, errlen, "%s: %smlp_only_layers: %s is not a layer index below %d", o->file, o->prefix,
                        shown, layers);
        }
        dense[(int)e->valuedouble] = 1;
    }
    return 0;
}

/* Qwen3-Next's MoE and GDN fields, as vLLM's Qwen3NextDecoderLayer reads them: layer i's MLP is
 * the routed-expert block unless it is in mlp_only_layers or off the decoder_sparse_step. */
static int read_qwen3_next(const cfg_obj *o, model_config *c, char *err, size_t errlen)
{
    const family_defaults *d = &qwen3_next_defaults;
    int step = 0;
    if (int_or(o, "num_experts", d->experts, &c->experts, err, errlen) ||
        int_or(o, "num_experts_per_tok", d->experts_per_tok, &c->experts_per_tok, err, errlen) ||
        int_or(o, "moe_intermediate_size", d->moe_intermediate, &c->moe_intermediate, err, errlen) ||
        int_or(o, "shared_expert_intermediate_size", d->shared_intermediate, &c->shared_intermediate, err, errlen) ||
        int_or(o, "decoder_sparse_step", d->sparse_step, &step, err, errlen) ||
        int_or(o, "linear_num_key_heads", d->linear_key_heads, &c->linear_key_heads, err, errlen) ||
        int_or(o, "linear_num_value_heads", d->linear_value_heads, &c->linear_value_heads, err, errlen) ||
        int_or(o, "linear_key_head_dim", d->linear_key_dim, &c->linear_key_dim, err, errlen) ||
        int_or(o, "linear_value_head_dim", d->linear_value_dim, &c->linear_value_dim, err, errlen) ||
        int_or(o, "linear_conv_kernel_dim", d->linear_conv_kw, &c->linear_conv_kw, err, errlen) ||
        read_bool(o, "attn_output_gate", 1, &c->attn_output_gate, err, errlen))
        return -1;
    unsigned char dense[MODEL_MAX_LAYERS] = {0};
    if (read_mlp_only(o, dense, c->layers, err, errlen)) return -1;
    for (int i = 0; i < c->layers; i++) c->moe[i] = (unsigned char)(!dense[i] && (i + 1) % step == 0);
    return 0;
}

/* head_dim, else the architecture's default. */
static int read_head_dim(const cfg_obj *o, model_family f, model_config *c, char *err, size_t errlen)
{
    int r = read_int(o, "head_dim", &c->head_dim, err, errlen);
    if (r != 0) return r < 0 ? -1 : 0;
    /* HF's Qwen3Config defaults head_dim to 128 whatever the hidden size, Gemma3TextConfig and
     * Qwen3NextConfig to 256; the others derive it. */
    if (f == FAMILY_GEMMA3 || f == FAMILY_QWEN3_NEXT) c->head_dim = 256;
    else if (strcmp(c->architecture, "Qwen3ForCausalLM") == 0) c->head_dim = 128;
    else if (c->hidden % c->heads)
        return fail(err, errlen, "%s: hidden_size %d is not divisible by num_attention_heads %d and there is "
                    "no head_dim", o->file, c->hidden, c->heads);
    else c->head_dim = c->hidden / c->heads;
    return 0;
}

/* Validate the parsed document into c. */
static int read_config(const cJSON *root, const char *file, model_config *c, char *err, size_t errlen)
{
    if (!cJSON_IsObject(root)) return fail(err, errlen, "%s: expected a JSON object at the top level", file);
    if (read_architecture(root, file, c, err, errlen)) return -1;
    model_family f = family_of(c->architecture);
    cfg_obj top = { root, file, "" }, lm;
    if (refuse_quantized(&top, err, errlen) || lm_object(root, file, &lm, c, err, errlen) ||
        (c->text_config && refuse_quantized(&lm, err, errlen)))
        return -1;
    /* Multimodal configs give the dtype at the top level; a text_config may repeat it. */
    int top_dtype = field_of(&top, "torch_dtype") || field_of(&top, "dtype");
    if (read_dtype(top_dtype || !c->text_config ? root : lm.json, file, c, err, errlen)) return -1;

    if (need_int(&lm, "hidden_size", &c->hidden, err, errlen) ||
        need_int(&lm, "intermediate_size", &c->intermediate, err, errlen) ||
        need_int(&lm, "num_attention_heads", &c->heads, err, errlen) ||
        need_int(&lm, "num_hidden_layers", &c->layers, err, errlen))
        return -1;
    /* HF's default where absent: multi-head attention for the dense families, the *Config's value
     * for the others. */
    int kv_default = f == FAMILY_GEMMA3 ? gemma3_defaults.kv_heads
                   : f == FAMILY_QWEN3_NEXT ? qwen3_next_defaults.kv_heads : c->heads;
    if (int_or(&lm, "num_key_value_heads", kv_default, &c->kv_heads, err, errlen)) return -1;
    if (c->heads % c->kv_heads)
        return fail(err, errlen, "%s: %snum_key_value_heads %d does not divide num_attention_heads %d", file,
                    lm.prefix, c->kv_heads, c->heads);
    if (read_head_dim(&lm, f, c, err, errlen)) return -1;
    if (read_int(&lm, "vocab_size", &c->vocab, err, errlen) < 0) return -1;

    int max_ctx_default = f == FAMILY_GEMMA3 ? gemma3_defaults.max_ctx
                        : f == FAMILY_QWEN3_NEXT ? qwen3_next_defaults.max_ctx : 0;
    if (int_or(&lm, "max_position_embeddings", max_ctx_default, &c->max_ctx, err, errlen) ||
        read_layout(&lm, f, c, err, errlen))
        return -1;
    /* Gemma 3 and Qwen3-Next normalize with GemmaRMSNorm; Gemma 3 runs four norms a layer (input,
     * post-attention, pre- and post-feedforward), the others two. */
    c->norm_plus_one = f != FAMILY_DENSE;
    c->norms_per_layer = f == FAMILY_GEMMA3 ? 4 : 2;
    if (f == FAMILY_GEMMA3 && read_softcap(&lm, c, err, errlen)) return -1;
    if (f == FAMILY_QWEN3_NEXT && read_qwen3_next(&lm, c, err, errlen)) return -1;
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

/* Add (n, k) produced by layer l, `count` calls per forward pass, merging with an existing
 * problem of the same shape. */
static void add_shape(model_problems *m, model_layer l, long long n, long long k, int count)
{
    if (count == 0) return;
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
    p->count += count;
}

static int same_geometry(const kt_model_attn *a, const kt_model_attn *b)
{
    return a->head_dim == b->head_dim && a->heads_per_rank == b->heads_per_rank &&
           a->kv_heads_per_rank == b->kv_heads_per_rank && a->window == b->window && a->softcap == b->softcap &&
           a->sinks == b->sinks && a->max_ctx == b->max_ctx && strcmp(a->kind, b->kind) == 0;
}

/* Layer i's attention joins the group of its geometry, or opens one. */
static int add_attn_layer(model_problems *m, int i, char *err, size_t errlen)
{
    const model_config *c = &m->config;
    kt_model_attn g;
    memset(&g, 0, sizeof g);
    int sliding = c->mixer[i] == MODEL_MIXER_SLIDING;
    g.head_dim = c->head_dim;
    g.heads_per_rank = m->heads_per_rank;
    g.kv_heads_per_rank = m->kv_heads_per_rank;
    g.window = sliding ? c->sliding_window : 0;
    g.softcap = c->softcap;
    g.max_ctx = c->max_ctx;
    snprintf(g.kind, sizeof g.kind, "%s", sliding ? "sliding" : "full");
    for (int j = 0; j < m->nattn; j++)
        if (same_geometry(&m->attn[j], &g)) { m->attn[j].layers++; return 0; }
    if (m->nattn == KT_MODEL_MAX_ATTN)
        return fail(err, errlen, "%s: more than %d distinct attention geometries", c->path, KT_MODEL_MAX_ATTN);
    g.layers = 1;
    m->attn[m->nattn++] = g;
    return 0;
}

static void add_not_derived(model_problems *m, const char *layers, int count, const char *fmt, ...)
{
    if (count == 0 || m->nnot_derived == MODEL_MAX_NOT_DERIVED) return;
    model_not_derived *d = &m->not_derived[m->nnot_derived++];
    snprintf(d->layers, sizeof d->layers, "%s", layers);
    d->count = count;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->reason, sizeof d->reason, fmt, ap);
    va_end(ap);
}

/* What the model runs that no op family derives, each with its reason (model.h). */
static void list_not_derived(model_problems *m)
{
    const model_config *c = &m->config;
    int moe_layers = c->layers - m->dense_mlp_layers;
    add_not_derived(m, "moe.experts", moe_layers, "%d routed experts (top %d, moe_intermediate_size %d) run as "
                    "fused MoE: no op family", c->experts, c->experts_per_tok, c->moe_intermediate);
    add_not_derived(m, "moe.shared_expert_gate", c->shared_intermediate ? moe_layers : 0, "the shared expert's "
                    "sigmoid gate, a torch Linear(hidden, 1) inside vLLM's MoE block, is no GEMM of ours");
    add_not_derived(m, "norms", c->norm_plus_one ? c->norms_per_layer * c->layers : 0, "GemmaRMSNorm scales by "
                    "(1 + weight); rmsnorm_add scales by weight");
}

/* The same divisibility vLLM asserts when it builds the layers; refusing here says which field. */
static int check_split(const model_config *c, int tp, int dense_mlp_layers, int linear_layers, char *err,
                       size_t errlen)
{
    const char *file = c->path;
    if (tp < 1) return fail(err, errlen, "%s: tp %d: tensor parallelism must be at least 1", file, tp);
    if (c->heads % tp)
        return fail(err, errlen, "%s: num_attention_heads %d is not divisible by tp %d", file, c->heads, tp);
    if (dense_mlp_layers && c->intermediate % tp)
        return fail(err, errlen, "%s: intermediate_size %d is not divisible by tp %d", file, c->intermediate, tp);
    if (c->kv_heads >= tp && c->kv_heads % tp)
        return fail(err, errlen, "%s: num_key_value_heads %d is not divisible by tp %d", file, c->kv_heads, tp);
    if (c->kv_heads < tp && tp % c->kv_heads)
        return fail(err, errlen, "%s: num_key_value_heads %d does not divide tp %d, so its heads cannot be "
                    "replicated evenly", file, c->kv_heads, tp);
    if (c->experts && c->shared_intermediate % tp)
        return fail(err, errlen, "%s: shared_expert_intermediate_size %d is not divisible by tp %d", file,
                    c->shared_intermediate, tp);
    /* vLLM's GDN layer shards its key and value heads with no replication. */
    if (linear_layers && c->linear_key_heads % tp)
        return fail(err, errlen, "%s: linear_num_key_heads %d is not divisible by tp %d", file, c->linear_key_heads, tp);
    if (linear_layers && c->linear_value_heads % tp)
        return fail(err, errlen, "%s: linear_num_value_heads %d is not divisible by tp %d", file,
                    c->linear_value_heads, tp);
    return 0;
}

int model_problems_derive(const model_config *c, int tp, model_problems *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (err && errlen) err[0] = 0;
    out->config = *c;
    out->tp = tp;
    for (int i = 0; i < c->layers; i++) {
        out->linear_attn_layers += c->mixer[i] == MODEL_MIXER_LINEAR;
        out->dense_mlp_layers += !c->moe[i];
    }
    out->attn_layers = c->layers - out->linear_attn_layers;
    if (check_split(c, tp, out->dense_mlp_layers, out->linear_attn_layers, err, errlen)) return -1;

    out->heads_per_rank = c->heads / tp;
    out->kv_heads_per_rank = c->kv_heads >= tp ? c->kv_heads / tp : 1;
    out->kv_replicas = c->kv_heads >= tp ? 1 : tp / c->kv_heads;

    /* Qwen3-Next's q_proj writes each head's query and its output gate: twice the q columns. */
    long long q_columns = c->attn_output_gate ? 2 : 1;
    long long hd = c->head_dim, hidden = c->hidden, inter_rank = c->intermediate / tp;
    long long n_qkv = (q_columns * out->heads_per_rank + 2LL * out->kv_heads_per_rank) * hd;
    long long k_o = out->heads_per_rank * hd;
    if (n_qkv > INT_MAX || 2 * inter_rank > INT_MAX)
        return fail(err, errlen, "%s: head_dim %d and the head counts give a GEMM dimension beyond %d", c->path,
                    c->head_dim, INT_MAX);
    add_shape(out, MODEL_LAYER_QKV, n_qkv, hidden, out->attn_layers);
    add_shape(out, MODEL_LAYER_O, hidden, k_o, out->attn_layers);
    add_shape(out, MODEL_LAYER_GATE_UP, 2 * inter_rank, hidden, out->dense_mlp_layers);
    add_shape(out, MODEL_LAYER_DOWN, hidden, inter_rank, out->dense_mlp_layers);
    /* The GDN layers' projections (vLLM's Qwen3NextGatedDeltaNet): in_proj_qkvz and in_proj_ba
     * column-parallel (q, k, v, z of the rank's heads; b and a of its value heads), out_proj
     * row-parallel over the rank's value channels. */
    long long key_dim = (long long)c->linear_key_heads * c->linear_key_dim;
    long long value_dim = (long long)c->linear_value_heads * c->linear_value_dim;
    add_shape(out, MODEL_LAYER_GDN_QKVZ, (2 * key_dim + 2 * value_dim) / tp, hidden, out->linear_attn_layers);
    add_shape(out, MODEL_LAYER_GDN_BA, 2LL * c->linear_value_heads / tp, hidden, out->linear_attn_layers);
    add_shape(out, MODEL_LAYER_GDN_OUT, hidden, value_dim / tp, out->linear_attn_layers);
    /* A routed-MoE layer's router (replicated: every rank scores every expert) and its shared
     * expert, a plain MLP sharded as the dense one. */
    int moe_layers = c->layers - out->dense_mlp_layers;
    if (c->experts) add_shape(out, MODEL_LAYER_ROUTER, c->experts, hidden, moe_layers);
    if (c->experts && c->shared_intermediate) {
        add_shape(out, MODEL_LAYER_SHARED_GATE_UP, 2LL * c->shared_intermediate / tp, hidden, moe_layers);
        add_shape(out, MODEL_LAYER_SHARED_DOWN, hidden, c->shared_intermediate / tp, moe_layers);
    }
    for (int i = 0; i < c->layers; i++)
        if (c->mixer[i] != MODEL_MIXER_LINEAR && add_attn_layer(out, i, err, errlen)) return -1;
    list_not_derived(out);
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
    out->nattn = mp->nattn;
    memcpy(out->attn, mp->attn, sizeof out->attn);
    if (mp->linear_attn_layers) {
        /* vLLM's GDN layer shards its key and value heads over the ranks (check_split) */
        out->gdn.layers = mp->linear_attn_layers;
        out->gdn.k_heads_per_rank = c->linear_key_heads / mp->tp;
        out->gdn.v_heads_per_rank = c->linear_value_heads / mp->tp;
        out->gdn.key_dim = c->linear_key_dim;
        out->gdn.value_dim = c->linear_value_dim;
        out->gdn.conv_kw = c->linear_conv_kw;
    }
    out->norm_plus_one = c->norm_plus_one;
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
