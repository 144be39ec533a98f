/* elf_dump.c: print what ktune's ELF readers see in a code object, one line per kernel:
 *
 *     name vgpr sgpr agpr lds scratch vgpr_spills sgpr_spills wave max_wg
 *
 * The reader is picked by e_machine (224 AMDGPU code object, 190 CUDA cubin). With -t it
 * prints the target instead: "amdgpu <amdhsa.target> mach=0x<EF_AMDGPU_MACH>" or "cuda sm_<N>".
 * Used by tests/unit/test_resources_vs_tools.sh to compare against llvm-readelf and ptxas.
 *
 * Build: cc -std=c11 -I. -Ibuild tests/unit/elf_dump.c build/elf*.c build/msgpack_read.c
 * Exit status: 0 ok, 1 the file could not be read or parsed (message on stderr), 2 usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf.h"
#include "elf_amdgpu.h"
#include "elf_cubin.h"

typedef struct dump_names {
    char **v;
    int n, cap;
    int oom;
} dump_names;

static int dump_collect(void *ctx, const char *name, size_t len)
{
    dump_names *d = ctx;
    char *copy;
    if (d->n == d->cap) {
        int cap = d->cap ? 2 * d->cap : 16;
        char **v = realloc(d->v, (size_t)cap * sizeof *v);
        if (!v) return d->oom = 1;
        d->v = v;
        d->cap = cap;
    }
    copy = malloc(len + 1);
    if (!copy) return d->oom = 1;
    memcpy(copy, name, len);
    copy[len] = 0;
    d->v[d->n++] = copy;
    return 0;
}

static unsigned char *dump_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    unsigned char *buf = NULL;
    size_t cap = 0, n = 0, got;
    if (!f) return NULL;
    do {
        if (n == cap) {
            unsigned char *nb = realloc(buf, cap = cap ? 2 * cap : 65536);
            if (!nb) { free(buf); fclose(f); return NULL; }
            buf = nb;
        }
        got = fread(buf + n, 1, cap - n, f);
        n += got;
    } while (got > 0);
    if (ferror(f)) { free(buf); buf = NULL; }
    fclose(f);
    *len = n;
    return buf;
}

static int dump_target(const char *path, const unsigned char *buf, size_t len, uint16_t machine)
{
    char err[512], target[256];
    unsigned mach;
    int sm;
    if (machine == ELF_EM_AMDGPU) {
        if (elf_amdgpu_target(buf, len, target, sizeof target, &mach, err, sizeof err)) goto fail;
        printf("amdgpu %s mach=0x%x\n", target, mach);
    } else {
        if (elf_cubin_sm(buf, len, &sm, err, sizeof err)) goto fail;
        printf("cuda sm_%d\n", sm);
    }
    return 0;
fail:
    fprintf(stderr, "%s: %s\n", path, err);
    return 1;
}

static int dump_kernels(const char *path, const unsigned char *buf, size_t len, uint16_t machine)
{
    dump_names names = { 0 };
    kt_resources r;
    char err[1024];
    int i, rc = 0, n;
    n = machine == ELF_EM_AMDGPU
        ? elf_amdgpu_list_kernels(buf, len, dump_collect, &names, err, sizeof err)
        : elf_cubin_list_kernels(buf, len, dump_collect, &names, err, sizeof err);
    if (n < 0 || names.oom) {
        fprintf(stderr, "%s: %s\n", path, names.oom ? "out of memory" : err);
        rc = 1;
    }
    for (i = 0; i < names.n && rc == 0; i++) {
        int bad = machine == ELF_EM_AMDGPU
            ? elf_amdgpu_read_resources(buf, len, names.v[i], &r, err, sizeof err)
            : elf_cubin_read_resources(buf, len, names.v[i], &r, err, sizeof err);
        if (bad) {
            fprintf(stderr, "%s: %s\n", path, err);
            rc = 1;
            break;
        }
        printf("%s %d %d %d %d %d %d %d %d %d\n", names.v[i], r.vgpr, r.sgpr, r.agpr, r.lds_bytes,
               r.scratch_bytes, r.vgpr_spills, r.sgpr_spills, r.wave_size, r.max_wg_size);
    }
    for (i = 0; i < names.n; i++) free(names.v[i]);
    free(names.v);
    return rc;
}

int main(int argc, char **argv)
{
    int target = argc > 1 && strcmp(argv[1], "-t") == 0;
    const char *path = argv[1 + target];
    unsigned char *buf;
    size_t len = 0;
    elf_file f;
    char err[512];
    int rc;
    if (argc != 2 + target) {
        fprintf(stderr, "usage: elf_dump [-t] FILE\n");
        return 2;
    }
    buf = dump_slurp(path, &len);
    if (!buf) {
        fprintf(stderr, "%s: cannot read the file\n", path);
        return 1;
    }
    if (elf_open(&f, buf, len, err, sizeof err)) {
        fprintf(stderr, "%s: %s\n", path, err);
        free(buf);
        return 1;
    }
    if (f.machine != ELF_EM_AMDGPU && f.machine != ELF_EM_CUDA) {
        fprintf(stderr, "%s: e_machine %u is neither AMDGPU (%d) nor CUDA (%d)\n", path, f.machine,
                ELF_EM_AMDGPU, ELF_EM_CUDA);
        free(buf);
        return 1;
    }
    rc = target ? dump_target(path, buf, len, f.machine) : dump_kernels(path, buf, len, f.machine);
    free(buf);
    return rc;
}
