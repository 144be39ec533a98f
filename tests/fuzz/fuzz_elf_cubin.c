/* fuzz_elf_cubin.c: libFuzzer target for the NVIDIA cubin reader. Every entry point runs on
 * the input: resources of the first kernel, of kernels by name (ones in the seed cubin that
 * exercise shared memory, spill annotations and stack records, and one that never exists,
 * which walks the not-found listing), the listing and the SM query. Any outcome is fine
 * except a crash, a sanitizer report or a fault without a message.
 *
 * Seeds: tests/fuzz/corpus_elf_cubin/ (the fixture and cuts of it). */
/* fuzz-sources: build/elf.c build/elf_cubin.c */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "elf_cubin.h"

static int fuzz_count(void *ctx, const char *name, size_t len)
{
    size_t *total = ctx;
    *total += len;
    if (len) (void)name[len - 1];
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const names[] = { NULL, "k_shared", "k_mixed", "k_frame", "not_a_kernel" };
    char err[256];
    kt_resources r;
    size_t total = 0, i;
    int sm;
    for (i = 0; i < sizeof names / sizeof names[0]; i++) {
        err[0] = 0;
        if (elf_cubin_read_resources(data, size, names[i], &r, err, sizeof err) != 0 && !err[0])
            abort();
    }
    elf_cubin_read_resources(data, size, "k_spill", &r, NULL, 0);
    elf_cubin_list_kernels(data, size, fuzz_count, &total, err, sizeof err);
    elf_cubin_sm(data, size, &sm, err, sizeof err);
    return 0;
}
