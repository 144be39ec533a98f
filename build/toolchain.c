/* toolchain.c: compiler discovery, identity and command lines. */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "file_io.h"
#include "sha256.h"
#include "toolchain.h"
#include "kt_env.h"

extern char **environ;

#define KT_BASE_FLAGS "-O3 -std=c++17"

int toolchain_run_capture(char *const argv[], char *buf, size_t n)
{
    int fds[2];
    if (pipe(fds) != 0) return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 2);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);
    if (rc != 0) { close(fds[0]); if (n) buf[0] = 0; return -1; }
    size_t used = 0;
    char sink[4096];
    for (;;) {   /* keep draining past n so the child never blocks on a full pipe */
        char *dst = used + 1 < n ? buf + used : sink;
        size_t room = used + 1 < n ? n - 1 - used : sizeof sink;
        ssize_t got = read(fds[0], dst, room);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        if (dst != sink) used += (size_t)got;
    }
    close(fds[0]);
    if (n) buf[used] = 0;
    int status;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

static int tc_executable(const char *p) { return p && *p && access(p, X_OK) == 0; }

static int tc_find_in_path(const char *name, char *out, size_t n)
{
    const char *path = kt_env_get("PATH");
    if (!path) return 0;
    char dir[1024];
    while (*path) {
        size_t len = strcspn(path, ":");
        snprintf(dir, sizeof dir, "%.*s", (int)len, path);
        if (snprintf(out, n, "%s/%s", len ? dir : ".", name) < (int)n && tc_executable(out)) return 1;
        path += len + (path[len] == ':');
    }
    return 0;
}

static int tc_pick(char *out, size_t n, const char *env, const char *name, const char *const *fallbacks)
{
    const char *e = env ? kt_env_get(env) : NULL;
    if (e && *e) {
        snprintf(out, n, "%s", e);
        return tc_executable(out) ? 1 : -1;   /* an explicit choice that does not exist is an error */
    }
    if (tc_find_in_path(name, out, n)) return 1;
    for (int i = 0; fallbacks && fallbacks[i]; i++) {
        if (fallbacks[i][0] == '$') {        /* "$VAR/sub": an environment-relative location */
            const char *slash = strchr(fallbacks[i], '/');
            char var[64];
            snprintf(var, sizeof var, "%.*s", (int)(slash - fallbacks[i] - 1), fallbacks[i] + 1);
            const char *v = kt_env_get(var);
            if (!v) continue;
            snprintf(out, n, "%s%s", v, slash);
        } else {
            snprintf(out, n, "%s", fallbacks[i]);
        }
        if (tc_executable(out)) return 1;
    }
    return 0;
}

/* A compiler's identity for the caches below: its path, size and mtime. */
static void tc_identity(const char *path, const char *extra, char hex[65])
{
    struct stat st;
    char id[1200];
    memset(&st, 0, sizeof st);
    stat(path, &st);
    snprintf(id, sizeof id, "%s|%lld|%lld|%s", path, (long long)st.st_size, (long long)st.st_mtime, extra ? extra : "");
    sha256_hex(id, strlen(id), hex);
}

/* Small cached texts (version lines, probe verdicts): "" when absent. */
static int tc_cache_read(const char *file, char *buf, size_t n)
{
    char *text = file_read_all(file, 0, NULL);
    snprintf(buf, n, "%s", text ? text : "");
    free(text);
    return buf[0] != 0;
}
static void tc_cache_write(const char *dir, const char *file, const char *text)
{
    mkdir(dir, 0777);
    file_write_atomic(file, text);   /* a cache: failing to write only costs a later re-probe */
}
static void tc_version(const char *path, const char *cache_dir, char *out, size_t n)
{
    char key[65], file[1200], dir[1024];
    tc_identity(path, "version", key);
    snprintf(dir, sizeof dir, "%s/toolchains", cache_dir);
    snprintf(file, sizeof file, "%s/%s.version", dir, key);
    if (tc_cache_read(file, out, n)) return;
    char buf[8192];
    char *argv[] = {(char *)path, "--version", NULL};
    toolchain_run_capture(argv, buf, sizeof buf);
    /* hipcc prints a Python traceback from rocm_agent_enumerator on machines without a GPU;
     * keep only the lines that describe the compiler */
    size_t used = 0;
    out[0] = 0;
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
        if (strstr(line, "Traceback") || line[0] == ' ' || strstr(line, "Error") || strstr(line, "File \"")) continue;
        used += (size_t)snprintf(out + used, used < n ? n - used : 0, "%s\n", line);
        if (used >= n) break;
    }
    if (out[0]) tc_cache_write(dir, file, out);
}

/* Can this hipcc compile for t? Debian's ROCm 5.2 hipcc cannot target RDNA3/4; ask it once. */
static int tc_hipcc_supports(const char *hipcc, const kt_target *t, const char *cache_dir)
{
    char key[65], file[1200], dir[1024], verdict[8];
    char probe_id[64];
    snprintf(probe_id, sizeof probe_id, "probe-v2 %s", t->name);   /* bump when the probe changes */
    tc_identity(hipcc, probe_id, key);
    snprintf(dir, sizeof dir, "%s/toolchains", cache_dir);
    snprintf(file, sizeof file, "%s/%s.probe", dir, key);
    if (tc_cache_read(file, verdict, sizeof verdict)) return verdict[0] == 'y';
    char src[1200], obj[1200], arch[64], log[4096];
    snprintf(src, sizeof src, "%s/probe-%d.hip", dir, (int)getpid());
    snprintf(obj, sizeof obj, "%s/probe-%d.co", dir, (int)getpid());
    snprintf(arch, sizeof arch, "--offload-arch=%s", t->name);
    mkdir(dir, 0777);
    /* no runtime names: Debian's hipcc --genco does not include hip_runtime.h */
    tc_cache_write(dir, src, "extern \"C\" __global__ void kt_probe(float *x) { *x = 1.0f; }\n");
    char *argv[] = {(char *)hipcc, "--genco", arch, "-O1", src, "-o", obj, NULL};
    int ok = toolchain_run_capture(argv, log, sizeof log) == 0 && access(obj, R_OK) == 0;
    unlink(src);
    unlink(obj);
    tc_cache_write(dir, file, ok ? "yes" : "no");
    return ok;
}

/* The offload bundler that belongs to hipcc's clang. ROCm keeps it beside clang (InstalledDir in
 * the version text); Debian's hipcc reports InstalledDir /usr/bin and runs clang-<major>, whose
 * tools live in /usr/lib/llvm-<major>/bin. KT_OFFLOAD_BUNDLER overrides. */
static int tc_find_bundler(const kt_toolchain *tc, char *out, size_t n)
{
    const char *env = kt_env_get("KT_OFFLOAD_BUNDLER");
    if (env && *env) { snprintf(out, n, "%s", env); return tc_executable(out); }
    char dir[512] = "";
    const char *dirline = strstr(tc->version, "InstalledDir: ");
    if (dirline) {
        dirline += strlen("InstalledDir: ");
        snprintf(dir, sizeof dir, "%.*s", (int)strcspn(dirline, "\n"), dirline);
        snprintf(out, n, "%s/clang-offload-bundler", dir);
        if (tc_executable(out)) return 1;
    }
    const char *ver = strstr(tc->version, "clang version ");
    int major = ver ? atoi(ver + strlen("clang version ")) : 0;
    if (major > 0) {
        snprintf(out, n, "/usr/lib/llvm-%d/bin/clang-offload-bundler", major);
        if (tc_executable(out)) return 1;
        if (dir[0]) {
            snprintf(out, n, "%s/clang-offload-bundler-%d", dir, major);
            if (tc_executable(out)) return 1;
        }
    }
    static const char *const fb[] = {"$ROCM_PATH/llvm/bin/clang-offload-bundler", "/opt/rocm/llvm/bin/clang-offload-bundler", NULL};
    return tc_pick(out, n, NULL, "clang-offload-bundler", fb) == 1;
}

int toolchain_find(const kt_target *t, const char *extra_flags, const char *cache_dir,
                   kt_toolchain *tc, char *err, size_t errlen)
{
    memset(tc, 0, sizeof *tc);
    tc->target = t;
    const char *extra = extra_flags ? extra_flags : "";
    /* HIP compiles name a local symbol __hip_cuid_<hash of the source path>: without
     * -fuse-cuid=none the same kernel from another cache path is another binary, and its
     * code hash (which measurements key on) would change for nothing */
    snprintf(tc->flags, sizeof tc->flags, "%s%s%s%s", KT_BASE_FLAGS,
             t->vendor == KT_VENDOR_AMD ? " -fuse-cuid=none" : "", *extra ? " " : "", extra);
    if (t->vendor == KT_VENDOR_NVIDIA) {
        static const char *const fb[] = {"$CUDA_HOME/bin/nvcc", "/usr/local/cuda/bin/nvcc", NULL};
        int r = tc_pick(tc->path, sizeof tc->path, "NVCC", "nvcc", fb);
        if (r != 1) {
            snprintf(err, errlen, r < 0 ? "NVCC=%s is not an executable" : "%snvcc not found (PATH, CUDA_HOME, "
                     "/usr/local/cuda/bin): install the CUDA toolkit to build %s", r < 0 ? kt_env_get("NVCC") : "", t->name);
            return 1;
        }
        snprintf(tc->kind, sizeof tc->kind, "nvcc");
    } else {
        const char *force = kt_env_get("KT_AMD_COMPILER");
        static const char *const hfb[] = {"$ROCM_PATH/bin/hipcc", "/opt/rocm/bin/hipcc", NULL};
        int have_hipcc = (!force || strcmp(force, "clang") != 0) &&
                         tc_pick(tc->path, sizeof tc->path, "HIPCC", "hipcc", hfb) == 1;
        if (have_hipcc && tc_hipcc_supports(tc->path, t, cache_dir)) {
            snprintf(tc->kind, sizeof tc->kind, "hipcc");
        } else if (force && strcmp(force, "hipcc") == 0) {
            snprintf(err, errlen, "KT_AMD_COMPILER=hipcc but %s", have_hipcc ?
                     "the hipcc found cannot target this GPU (probe compile failed)" : "no hipcc was found (HIPCC, PATH, /opt/rocm/bin)");
            return 1;
        } else {
            int r = tc_pick(tc->path, sizeof tc->path, "KT_CLANG", "clang-19", NULL);
            if (r != 1) {
                snprintf(err, errlen, "no AMD compiler for %s: no hipcc that supports it and no clang-19 "
                         "(install Debian package clang-19, or run 'make deps')", t->name);
                return 1;
            }
            snprintf(tc->kind, sizeof tc->kind, "clang");
        }
    }
    tc_version(tc->path, cache_dir, tc->version, sizeof tc->version);
    if (!tc->version[0]) {
        snprintf(err, errlen, "%s --version printed nothing: is it a working compiler?", tc->path);
        return 1;
    }
    if (strcmp(tc->kind, "hipcc") == 0 && !tc_find_bundler(tc, tc->bundler, sizeof tc->bundler)) {
        snprintf(err, errlen, "hipcc found at %s but no clang-offload-bundler beside its clang to unbundle --genco output", tc->path);
        return 1;
    }
    sha256_ctx c;
    sha256_init(&c);
    const char *parts[5] = {tc->kind, tc->path, tc->version, tc->flags, t->name};
    for (int i = 0; i < 5; i++) sha256_update(&c, parts[i], strlen(parts[i]) + 1);
    sha256_final_hex(&c, tc->fingerprint);
    return 0;
}

/* Append a copy of s to the steps' storage and return it. */
static char *tc_store(kt_compile_steps *st, size_t *used, const char *s)
{
    size_t len = strlen(s) + 1;
    if (*used + len > sizeof st->storage) return NULL;
    char *dst = st->storage + *used;
    memcpy(dst, s, len);
    *used += len;
    return dst;
}

int toolchain_compile_steps(const kt_toolchain *tc, const char *templates_root, const char *src,
                            const char *tmp, const char *out, kt_compile_steps *st)
{
    size_t used = 0;
    int a = 0;
    char buf[1100];
    memset(st, 0, sizeof *st);
    char **argv = st->argv[0];
#define ARG(s) do { if (a >= KT_TC_MAX_ARGS - 1 || !(argv[a++] = tc_store(st, &used, (s)))) return -1; } while (0)
    ARG(tc->path);
    if (strcmp(tc->kind, "nvcc") == 0) {
        ARG("-cubin");
        snprintf(buf, sizeof buf, "arch=compute_%s,code=%s", tc->target->name + 3, tc->target->name);
        ARG("-gencode"); ARG(buf);
        ARG("-x"); ARG("cu");
    } else if (strcmp(tc->kind, "hipcc") == 0) {
        ARG("--genco");
        snprintf(buf, sizeof buf, "--offload-arch=%s", tc->target->name); ARG(buf);
    } else {
        ARG("-x"); ARG("hip");
        snprintf(buf, sizeof buf, "--offload-arch=%s", tc->target->name); ARG(buf);
        ARG("--offload-device-only"); ARG("--no-gpu-bundle-output"); ARG("-nogpulib"); ARG("-nogpuinc");
    }
    /* base and user flags, split on blanks (flags are tokens, never quoted strings) */
    snprintf(buf, sizeof buf, "%s", tc->flags);
    for (char *tok = strtok(buf, " \t"); tok; tok = strtok(NULL, " \t")) ARG(tok);
    snprintf(buf, sizeof buf, "-I%s", templates_root); ARG(buf);
    ARG(src);
    ARG("-o");
    ARG(strcmp(tc->kind, "hipcc") == 0 ? tmp : out);
    argv[a] = NULL;
    st->nsteps = 1;
    if (strcmp(tc->kind, "hipcc") == 0) {
        argv = st->argv[1];
        a = 0;
        ARG(tc->bundler);
        ARG("--type=o");
        ARG("--unbundle");
        snprintf(buf, sizeof buf, "--targets=hipv4-amdgcn-amd-amdhsa--%s", tc->target->name); ARG(buf);
        snprintf(buf, sizeof buf, "--input=%s", tmp); ARG(buf);
        snprintf(buf, sizeof buf, "--output=%s", out); ARG(buf);
        argv[a] = NULL;
        st->nsteps = 2;
    }
#undef ARG
    return st->nsteps;
}
