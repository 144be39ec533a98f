/* test_backend.c: runtime/backend.h without a GPU.
 *
 * What a machine with no GPU can check: ktb_open finds (or cleanly fails to find) each vendor's
 * library, resolves every HIP entry point, and fails with a "no device" message rather than
 * crashing; an unknown vendor is refused by name; every call on a NULL backend is an error.
 * Where a device is present (a GPU machine running the unit tests), the open succeeds and the
 * test checks the device attributes and a memory round trip instead. */
#include "backend.h"
#include "kt_test.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* Does this machine have the library the backend would open? Decided here independently of
 * the backend, so the test checks the right message either way. */
static int have_library(const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
        if (h) {
            dlclose(h);
            return 1;
        }
    }
    return 0;
}

/* With a device: attributes look sane and memory round-trips. */
static void check_open_backend(ktb_backend *b, const char *vendor)
{
    char err[512] = "";
    ktb_device_info info;
    KT_CHECK(!strcmp(ktb_vendor(b), vendor));
    KT_CHECK_INT(ktb_info(b, &info, err, sizeof err), 0);
    printf("%s device 0: %s, %s, %d CUs, L2 %lld, pci %s id 0x%x, wave %d, mem %lld\n", vendor, info.name,
           info.arch, info.compute_units, info.l2_bytes, info.pci_address, (unsigned)info.pci_device_id,
           info.wave_size, info.global_mem_bytes);
    KT_CHECK(info.name[0] != '\0');
    KT_CHECK_CONTAINS(info.arch, !strcmp(vendor, "cuda") ? "sm_" : "gfx");
    KT_CHECK(strchr(info.arch, ':') == NULL);
    KT_CHECK(info.compute_units > 0);
    KT_CHECK(info.global_mem_bytes > 0);
    KT_CHECK(info.wave_size == 32 || info.wave_size == 64);

    unsigned char in[256], out[256];
    for (int i = 0; i < 256; i++)
        in[i] = (unsigned char)(i * 7 + 3);
    void *d = NULL;
    KT_CHECK_INT(ktb_alloc(b, sizeof in, &d, err, sizeof err), 0);
    KT_CHECK_INT(ktb_memset8(b, d, 0x5a, sizeof in, err, sizeof err), 0);
    KT_CHECK_INT(ktb_copy_d2h(b, out, d, sizeof out, err, sizeof err), 0);
    KT_CHECK(out[0] == 0x5a && out[255] == 0x5a);
    KT_CHECK_INT(ktb_copy_h2d(b, d, in, sizeof in, err, sizeof err), 0);
    KT_CHECK_INT(ktb_copy_d2h(b, out, d, sizeof out, err, sizeof err), 0);
    KT_CHECK(!memcmp(in, out, sizeof in));
    KT_CHECK_INT(ktb_free(b, d, err, sizeof err), 0);

    void *s = NULL, *e0 = NULL, *e1 = NULL;
    float ms = -1;
    KT_CHECK_INT(ktb_stream_create(b, &s, err, sizeof err), 0);
    KT_CHECK_INT(ktb_event_create(b, &e0, err, sizeof err), 0);
    KT_CHECK_INT(ktb_event_create(b, &e1, err, sizeof err), 0);
    KT_CHECK_INT(ktb_event_record(b, e0, s, err, sizeof err), 0);
    KT_CHECK_INT(ktb_event_record(b, e1, s, err, sizeof err), 0);
    KT_CHECK_INT(ktb_event_elapsed_ms(b, e0, e1, &ms, err, sizeof err), 0);
    KT_CHECK(ms >= 0);
    KT_CHECK_INT(ktb_sync(b, s, err, sizeof err), 0);
    KT_CHECK_INT(ktb_event_destroy(b, e0, err, sizeof err), 0);
    KT_CHECK_INT(ktb_event_destroy(b, e1, err, sizeof err), 0);
    KT_CHECK_INT(ktb_stream_destroy(b, s, err, sizeof err), 0);

    /* A bad image is an error with the driver's name for it, not a crash. */
    static const unsigned char junk[64] = { 'n', 'o', 't', ' ', 'a', 'n', ' ', 'E', 'L', 'F' };
    void *m = NULL;
    err[0] = '\0';
    KT_CHECK(ktb_module_load(b, junk, sizeof junk, &m, err, sizeof err) != 0);
    KT_CHECK(m == NULL);
    KT_CHECK_CONTAINS(err, !strcmp(vendor, "cuda") ? "cuda: cuModuleLoadData: " : "hip: hipModuleLoadData: ");
}

/* Opens vendor device 0 and checks the outcome fits what this machine has. */
static void check_vendor(const char *vendor, int have_lib, const char *not_found)
{
    char err[512] = "";
    ktb_backend *b = (ktb_backend *)&err; /* must be reset to NULL on failure */
    int rc = ktb_open(vendor, 0, &b, err, sizeof err);
    if (rc == 0) {
        KT_CHECK(have_lib);
        KT_CHECK(b != NULL);
        check_open_backend(b, vendor);
        ktb_close(b);
        return;
    }
    printf("%s: %s\n", vendor, err);
    KT_CHECK(b == NULL);
    char prefix[32];
    snprintf(prefix, sizeof prefix, "%s: ", vendor);
    KT_CHECK(!strncmp(err, prefix, strlen(prefix)));
    if (!have_lib) {
        KT_CHECK_CONTAINS(err, "no device: ");
        KT_CHECK_CONTAINS(err, not_found);
    } else {
        /* The library loaded and every symbol resolved (a missing one would name it and not say
         * "no device"); then init or the device count found nothing. */
        KT_CHECK_CONTAINS(err, "no device: ");
        KT_CHECK(strstr(err, " has no ") == NULL);
        KT_CHECK(strstr(err, "not found") == NULL);
    }
}

static void check_null_backend(void)
{
    char err[256];
    void *p = (void *)&err, *q = NULL;
    float ms = 0;
    unsigned g[3] = { 1, 1, 1 };
    unsigned char buf[4] = { 0 };
    ktb_device_info info;
    int n = 0;
#define NULLB(call)                                                                     \
    do {                                                                                \
        err[0] = '\0';                                                                  \
        KT_CHECK((call) != 0);                                                          \
        KT_CHECK_CONTAINS(err, "NULL backend");                                         \
        n++;                                                                            \
    } while (0)
    NULLB(ktb_info(NULL, &info, err, sizeof err));
    NULLB(ktb_module_load(NULL, buf, sizeof buf, &q, err, sizeof err));
    NULLB(ktb_module_unload(NULL, p, err, sizeof err));
    NULLB(ktb_function(NULL, p, "k", &q, err, sizeof err));
    NULLB(ktb_launch(NULL, p, g, g, 0, NULL, buf, sizeof buf, err, sizeof err));
    NULLB(ktb_launch_early(NULL, p, g, g, 0, NULL, buf, sizeof buf, err, sizeof err));
    NULLB(ktb_alloc(NULL, 16, &q, err, sizeof err));
    NULLB(ktb_free(NULL, p, err, sizeof err));
    NULLB(ktb_copy_h2d(NULL, p, buf, sizeof buf, err, sizeof err));
    NULLB(ktb_copy_d2h(NULL, buf, p, sizeof buf, err, sizeof err));
    NULLB(ktb_memset8(NULL, p, 0, sizeof buf, err, sizeof err));
    NULLB(ktb_stream_create(NULL, &q, err, sizeof err));
    NULLB(ktb_stream_destroy(NULL, p, err, sizeof err));
    NULLB(ktb_sync(NULL, NULL, err, sizeof err));
    NULLB(ktb_event_create(NULL, &q, err, sizeof err));
    NULLB(ktb_event_record(NULL, p, NULL, err, sizeof err));
    NULLB(ktb_event_elapsed_ms(NULL, p, p, &ms, err, sizeof err));
    NULLB(ktb_event_destroy(NULL, p, err, sizeof err));
    NULLB(ktb_graph_begin_capture(NULL, p, err, sizeof err));
    NULLB(ktb_graph_end_capture(NULL, p, &q, err, sizeof err));
    NULLB(ktb_graph_launch(NULL, p, NULL, err, sizeof err));
    NULLB(ktb_graph_destroy(NULL, p, err, sizeof err));
#undef NULLB
    KT_CHECK_INT(n, 22);
    /* A NULL err buffer is allowed too. */
    KT_CHECK(ktb_alloc(NULL, 16, &q, NULL, 0) != 0);
    ktb_close(NULL);
    KT_CHECK(ktb_vendor(NULL) == NULL);
}

/* ktb_launch_early: the backend's early launch where it has one, its plain launch where it has
 * none (HIP), both with the same arguments (a backend of two recording entries) */
static int plain_calls, early_calls;
static unsigned last_grid0;
static int rec_launch(ktb_backend *b, void *fn, const unsigned grid[3], const unsigned block[3], unsigned shared,
                      void *stream, const void *args, size_t args_size, char *err, size_t errlen)
{
    plain_calls++;
    last_grid0 = grid[0];
    return 0;
}
static int rec_launch_early(ktb_backend *b, void *fn, const unsigned grid[3], const unsigned block[3], unsigned shared,
                            void *stream, const void *args, size_t args_size, char *err, size_t errlen)
{
    early_calls++;
    last_grid0 = grid[0];
    return 0;
}
static void check_launch_early(void)
{
    static const ktb_ops with = {.vendor = "rec", .launch = rec_launch, .launch_early = rec_launch_early};
    static const ktb_ops without = {.vendor = "rec", .launch = rec_launch};
    ktb_backend b = {&with, 0};
    const unsigned g[3] = {7, 1, 1}, t[3] = {32, 1, 1};
    char args[16] = {0}, err[128];
    int fn = 0;
    KT_CHECK_INT(ktb_launch_early(&b, &fn, g, t, 0, NULL, args, sizeof args, err, sizeof err), 0);
    KT_CHECK(early_calls == 1 && plain_calls == 0 && last_grid0 == 7);
    b.ops = &without;
    KT_CHECK_INT(ktb_launch_early(&b, &fn, g, t, 0, NULL, args, sizeof args, err, sizeof err), 0);
    KT_CHECK(early_calls == 1 && plain_calls == 1);
    KT_CHECK(ktb_launch_early(&b, NULL, g, t, 0, NULL, args, sizeof args, err, sizeof err) != 0);   /* no function */
    KT_CHECK_CONTAINS(err, "ktb_launch_early");
}

int main(void)
{
    static const char *const hip_libs[] = { "libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so" };
    static const char *const cuda_libs[] = { "libcuda.so.1" };
    int have_hip = have_library(hip_libs, 3), have_cuda = have_library(cuda_libs, 1);
    printf("libamdhip64 %s, libcuda.so.1 %s\n", have_hip ? "present" : "absent", have_cuda ? "present" : "absent");

    check_vendor("hip", have_hip, "libamdhip64.so not found");
    check_vendor("cuda", have_cuda, "libcuda.so.1 not found");

    char err[256] = "";
    ktb_backend *b = NULL;
    KT_CHECK(ktb_open("opencl", 0, &b, err, sizeof err) != 0);
    KT_CHECK(b == NULL);
    KT_CHECK_CONTAINS(err, "unknown vendor \"opencl\"");
    KT_CHECK(ktb_open(NULL, 0, &b, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "NULL vendor");
    KT_CHECK(ktb_open("hip", -1, &b, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "device -1");
    KT_CHECK(ktb_open("cuda", 0, NULL, err, sizeof err) != 0);

    check_null_backend();
    check_launch_early();
    KT_TEST_END();
}
