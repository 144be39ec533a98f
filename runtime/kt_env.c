/* kt_env.c: the one table of environment knobs and the one place that calls getenv (kt_env.h). */
#include "kt_env.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Keep in step with README.md's Environment table (tests/unit/test_env.c checks both ways). */
static const kt_env_knob kt_env_table[] = {
    /* build: compilers and the cache (build/toolchain.c, build/pipeline.c) */
    {"KT_CACHE",             "out/cache",            "compile cache folder"},
    {"KT_AMD_COMPILER",      "auto",                 "`clang` or `hipcc` forces the AMD compiler"},
    {"HIPCC",                "search",               "hipcc path"},
    {"KT_CLANG",             "search",               "clang-19 path (AMD, device-only)"},
    {"NVCC",                 "search",               "nvcc path"},
    {"KT_OFFLOAD_BUNDLER",   "beside hipcc's clang", "clang-offload-bundler used to unbundle hipcc's output"},
    {"PATH",                 "system",               "searched for hipcc, clang-19, nvcc, clang-offload-bundler"},
    {"CUDA_HOME",            "unset",                "nvcc is also looked for in $CUDA_HOME/bin"},
    {"ROCM_PATH",            "unset",                "hipcc and the bundler are also looked for under $ROCM_PATH"},
    /* libktrt (runtime/ktrt_layers.c, runtime/ktrt.c) */
    {"KT_DB",                "unset",                "libktrt: the first database layer when the caller names none"},
    {"KT_USER_DB",           "~/.local/share/ktune/ktune.ktdb", "libktrt: the user database layer"},
    {"XDG_DATA_HOME",        "~/.local/share",       "libktrt: the user database is $XDG_DATA_HOME/ktune/ktune.ktdb"},
    {"HOME",                 "system",               "libktrt: the user database is under ~/.local/share/ktune"},
    {"KT_SHIPPED_DB",        "/usr/local/share/ktune/ktune.ktdb", "libktrt: the shipped database layer"},
    {"KT_LOG",               "unset",                "libktrt: log each fallback (bucket, law, refused) once per key; `0` silences notices"},
    /* tuner (tuner/sweep.c, tuner/worker_proc.c) */
    {"KT_WORKER_TIMEOUT_S",  "120",                  "a worker silent this long is killed and its variant recorded `timeout`"},
    {"KT_WORKER_EXE",        "out/bin/kt",           "the worker program (tests use a scripted one)"},
    {"KT_SWEEP_FAKE_DEVICE", "unset",                "tests only: \"<arch> <cus> <pci id>\" stands for a GPU"},
    /* a model's problems (runtime/gdn_inputs.c) */
    {"KT_GDN_STATE",         "k-last",               "the GDN state layout the serving vLLM allocates: `k-last` [HV, V, K] (vLLM since #33291) or `kv` [HV, K, V] (earlier vLLM, fla)"},
    /* measurement (runtime/op_gdn_prefill.c) */
    {"KT_GDNP_PARTS",        "unset",                "measurement: the GDN prefill's parts (out beside the state pass) in place of the law's; `1` none"},
    {"KT_GDNP_WY_PARTS",     "unset",                "measurement: `0` keeps the GDN prefill's wy whole ahead of its parts (the plan before wy had parts)"},
    /* bench (bench/cublas_dl.c) */
    {"KT_CUBLAS",            "search",               "bench_gemm: the libcublas to dlopen"},
    /* make run (Makefile) */
    {"KT_MODEL",             "models/llama-3.1-8b",  "`make run`: the model folder"},
    {"KT_TP",                "1",                    "`make run`: tensor-parallel ranks"},
    {"KT_TARGET",            "auto",                 "`make run`: the target"},
    /* tests (tests/ scripts, tests/unit/test_ktrt.c) */
    {"KT_FUZZ_SECONDS",      "20",                   "time per fuzz target in `make test`"},
    {"KT_FUZZ_MAX_LEN",      "65536",                "tests: libFuzzer -max_len"},
    {"KT_FUZZ_TIMEOUT",      "10",                   "tests: libFuzzer -timeout per input (s)"},
    {"KT_TEST_DIR",          "out/test",             "tests: scratch folder of the compile and tuner phases"},
    {"KT_COMPILE_ALL",       "unset",                "tests: `1` builds every recipe whole on every target (`make test-compile-all`)"},
    {"KT_TEST_KEEP",         "unset",                "tests: test_ktrt keeps its databases to look at"},
    {"KT_NVCC_FLAGS",        "-O3",                  "tests: nvcc flags of test_resources_vs_tools.sh"},
    {"KT_NVCC_ARCH",         "sm_<GPU's>",           "tests: nvcc -arch of test_resources_vs_tools.sh"},
    /* device runs (tests/device scripts) */
    {"KT_DEVICE_DB",         "out/device/ktune.ktdb", "device scripts: the database they tune into"},
    {"KT_DEVICE_STEPS",      "check,ref,sweep,dump,ktrt,bench,rms", "device run_all.sh: the steps to run"},
    {"KT_SWEEP_ARGS",        "none",                 "device scripts: extra ./tune arguments"},
    {"KT_SWEEP_TPS",         "4 1",                  "device sweep_all.sh: the tp values"},
    {"KT_DEADLINE_S",        "540",                  "device sweep_all.sh: stop starting sweeps after this long"},
    {"KT_KTRT_ARGS",         "none",                 "device run_all.sh: extra ktrt_check arguments"},
    {"KT_BENCH_ARGS",        "none",                 "device run_all.sh: extra bench_gemm arguments"},
    {"KT_RMS_ARGS",          "none",                 "device run_all.sh: extra bench_rmsnorm.py arguments"},
    {"KT_SWEEP_MODELS",      "models/*/",            "device sweep_all.sh: the model folders to sweep"},
    {"KT_ATTN_ARGS",         "see run_all.sh",       "device run_all.sh: bench_attn.py's timing rows"},
    {"KT_ATTN_BUDGET_MIN",   "3",                    "device run_all.sh: minutes of the attention sweep of KT_ATTN_MODEL"},
    {"KT_ATTN_MODEL",        "models/qwen3-next-80b-a3b", "device run_all.sh: the model whose attention problems are swept"},
    {"KT_ATTN_SHAPES_MIN",   "3",                    "device run_all.sh: minutes of the sweep of tests/device/attn_shapes.json"},
    {"KT_ATTN_SHAPES",       "tests/device/attn_shapes.json", "device run_all.sh: the shapes file of that sweep"},
    {"KT_ATTN_TP",           "4",                    "device run_all.sh: the tensor-parallel size of that sweep"},
    {"KT_PREFILL_ARGS",      "(the issue's grid)",   "device run_all.sh: bench_prefill.py's arguments"},
    {"KT_PREFILL_MIN",       "2",                    "device run_all.sh: minutes of each attn_prefill sweep"},
    {"KT_PREFILL_SHAPES",    "tests/device/attn_prefill_shapes.json", "device run_all.sh: the attn_prefill sweep's shape files, in turn"},
    {"KT_GDN_ARGS",          "(the issue's grid)",   "device run_all.sh: bench_gdn.py's arguments"},
    {"KT_GDN_MIN",           "4",                    "device run_all.sh: minutes of the gdn_decode sweep"},
    {"KT_RETURN_DB",         "1",                    "device run_all.sh: `0` does not copy the database back"},
    {"KT_RETURN_LIMIT",      "16777216",             "device return_db.sh: largest database copied back (bytes)"},
    {"KT_PACK_DB",           "1",                    "device pack.sh: `0` packs no database"},
    {"KT_EXPORT_DB",         "KT_DEVICE_DB",         "device pack.sh: the database whose ok sm_90a GEMM kernels gemm_check runs"},
    {"JOBS",                 "2",                    "device pack.sh: make -j"},
};

const kt_env_knob *kt_env_knobs(int *n)
{
    if (n) *n = (int)(sizeof kt_env_table / sizeof kt_env_table[0]);
    return kt_env_table;
}

const char *kt_env_get(const char *name)
{
    for (size_t i = 0; name && i < sizeof kt_env_table / sizeof kt_env_table[0]; i++)
        if (strcmp(kt_env_table[i].name, name) == 0) return getenv(name);
    fprintf(stderr, "kt_env_get: %s is not in runtime/kt_env.c's table (a programming error)\n",
            name ? name : "(null)");
    return NULL;
}
