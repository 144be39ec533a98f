/* toolchain.h: find the compiler for a target and describe it by a fingerprint.
 *
 * AMD: hipcc when a ROCm install is found (env HIPCC, then PATH, then /opt/rocm/bin) AND it can
 * target the target (probed once per compiler binary and cached); otherwise clang-19 (env
 * KT_CLANG overrides) compiling device-only without HIP headers. NVIDIA: nvcc (env NVCC, PATH,
 * $CUDA_HOME/bin, /usr/local/cuda/bin). KT_AMD_COMPILER=clang|hipcc forces the AMD choice.
 * The fingerprint hashes kind, path, version text and flags, so a new compiler or a changed flag
 * changes every cache key it affects. */
#ifndef KT_TOOLCHAIN_H
#define KT_TOOLCHAIN_H
#include <stddef.h>
#include "target.h"

#define KT_TC_MAX_ARGS 48

typedef struct kt_toolchain {
    char kind[8];            /* "clang" | "hipcc" | "nvcc" */
    char path[512];
    char version[512];       /* first lines of --version */
    char flags[512];         /* optimisation/language flags plus the user's extra flags */
    char bundler[512];       /* hipcc only: clang-offload-bundler that unbundles --genco output */
    char fingerprint[65];
    const kt_target *target;
} kt_toolchain;

/* cache_dir holds the compiler identity cache (version texts, hipcc target probes) so a run
 * with nothing to compile does not spawn compilers. extra_flags may be NULL. */
int toolchain_find(const kt_target *t, const char *extra_flags, const char *cache_dir,
                   kt_toolchain *tc, char *err, size_t errlen);

/* The argument vectors that compile src (include root templates_root) into a code object at out.
 * step 0 compiles; a second step (hipcc) unbundles tmp into out. Returns the number of steps. */
typedef struct kt_compile_steps {
    int nsteps;
    char *argv[2][KT_TC_MAX_ARGS];
    char storage[4096];
} kt_compile_steps;
int toolchain_compile_steps(const kt_toolchain *tc, const char *templates_root, const char *src,
                            const char *tmp, const char *out, kt_compile_steps *steps);

/* Run argv, capture stdout+stderr into buf (NUL-terminated, truncated to n). Returns exit status,
 * or -1 if it could not be started. */
int toolchain_run_capture(char *const argv[], char *buf, size_t n);

#endif
