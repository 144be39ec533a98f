/* test_ceiling.c: bench/ceiling.c's choice of measurement, over a scripted backend (no GPU).
 *
 * The fake backend keeps a virtual clock: a graph replay advances it by what its captured work
 * would take on a card where the read kernel streams at 4600 GB/s, a copy kernel at 4200 GB/s
 * (read + write bytes) and the driver's device-to-device memcpy at only 2700 GB/s (the H200's
 * figures). The copy ceiling must be the copy kernel's, and where the cubin has no copy kernel (or
 * there is no cubin) it must be reported unavailable: never a memcpy figure, which would put
 * decode rows above 100 % of "copy". */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "kt_test.h"
#include "backend.h"
#include "ceiling.h"
#include "read.h"

#define FAKE_READ_GBPS 4600.0
#define FAKE_COPY_GBPS 4200.0
#define FAKE_MEMCPY_GBPS 2700.0
#define FAKE_MAX_OPS 64

enum { OP_READ, OP_COPY_KERNEL, OP_MEMCPY };
typedef struct fake_op { int kind; double bytes; } fake_op;    /* bytes moved (read + written) */
typedef struct fake_exec { int n; fake_op ops[FAKE_MAX_OPS]; } fake_exec;

typedef struct fake {
    ktb_backend base;
    char image[256];            /* the loaded module's text: the kernel names it "has" */
    int read_fn, copy_fn;       /* addresses handed out as function handles */
    int capturing;
    fake_exec cap;
    double clock_ms;
    int memcpys, copy_launches, read_launches, bad_args;
    char *buf;                  /* the big buffer's fake device address range */
    size_t buf_bytes;
} fake;

static fake F;

static int f_ok(void) { return 0; }
static void f_close(ktb_backend *b) { (void)b; }
static int f_info(ktb_backend *b, ktb_device_info *i, char *e, size_t n) { (void)b; (void)i; (void)e; (void)n; return f_ok(); }
static int f_module_load(ktb_backend *b, const void *image, size_t len, void **module, char *e, size_t n)
{
    (void)b;
    if (len < 5 || memcmp(image, "FAKE\n", 5) != 0) return ktb_fail(e, n, "fake: cuModuleLoadData: CUDA_ERROR_INVALID_IMAGE");
    snprintf(F.image, sizeof F.image, "%.*s", (int)len, (const char *)image);
    *module = F.image;
    return 0;
}
static int f_module_unload(ktb_backend *b, void *m, char *e, size_t n) { (void)b; (void)m; (void)e; (void)n; return 0; }
static int f_function(ktb_backend *b, void *module, const char *name, void **fn, char *e, size_t n)
{
    (void)b;
    char line[80];
    snprintf(line, sizeof line, "\n%s\n", name);
    if (!strstr((const char *)module, line)) return ktb_fail(e, n, "fake: cuModuleGetFunction: CUDA_ERROR_NOT_FOUND: %s", name);
    if (!strcmp(name, KT_READ_KERNEL)) *fn = &F.read_fn;
    else if (!strcmp(name, KT_COPY_KERNEL)) *fn = &F.copy_fn;
    else return ktb_fail(e, n, "fake: no such kernel %s", name);
    return 0;
}
static int in_buf(const void *p, size_t bytes)
{
    return (const char *)p >= F.buf && (const char *)p + bytes <= F.buf + F.buf_bytes;
}
static void f_record(int kind, double bytes)
{
    if (F.capturing && F.cap.n < FAKE_MAX_OPS) F.cap.ops[F.cap.n++] = (fake_op){ kind, bytes };
}
static int f_launch(ktb_backend *b, void *fn, const unsigned grid[3], const unsigned block[3], unsigned shared,
                    void *stream, const void *args, size_t size, char *e, size_t n)
{
    (void)b; (void)grid; (void)shared; (void)stream;
    if (!F.capturing) return ktb_fail(e, n, "fake: launch outside a capture");
    if (fn == &F.read_fn) {
        const kt_read_args *a = args;
        if (size != sizeof *a || block[0] != KT_READ_THREADS || !in_buf(a->src, a->n16 * 16)) F.bad_args++;
        F.read_launches++;
        f_record(OP_READ, (double)a->n16 * 16);
    } else if (fn == &F.copy_fn) {
        const kt_copy_args *a = args;
        if (size != sizeof *a || block[0] != KT_COPY_THREADS || !in_buf(a->src, a->n16 * 16) ||
            !in_buf(a->dst, a->n16 * 16) ||
            ((const char *)a->dst < (const char *)a->src + a->n16 * 16 && (const char *)a->src < (const char *)a->dst + a->n16 * 16))
            F.bad_args++;
        F.copy_launches++;
        f_record(OP_COPY_KERNEL, 2.0 * a->n16 * 16);
    } else {
        return ktb_fail(e, n, "fake: unknown function");
    }
    return 0;
}
static int f_alloc(ktb_backend *b, size_t bytes, void **p, char *e, size_t n)
{
    (void)b; (void)e; (void)n;
    /* fake device addresses: never dereferenced on the host */
    static uintptr_t next = 0x100000000ull;
    *p = (void *)next;
    if (bytes > F.buf_bytes) { F.buf = (char *)next; F.buf_bytes = bytes; }
    next += (bytes + 0xFFFFF) & ~(uintptr_t)0xFFFFF;
    return 0;
}
static int f_free(ktb_backend *b, void *p, char *e, size_t n) { (void)b; (void)p; (void)e; (void)n; return 0; }
static int f_h2d(ktb_backend *b, void *d, const void *s, size_t z, char *e, size_t n) { (void)b; (void)d; (void)s; (void)z; (void)e; (void)n; return 0; }
static int f_d2h(ktb_backend *b, void *d, const void *s, size_t z, char *e, size_t n) { (void)b; (void)d; (void)s; (void)z; (void)e; (void)n; return 0; }
static int f_memset8(ktb_backend *b, void *d, unsigned char v, size_t z, char *e, size_t n) { (void)b; (void)d; (void)v; (void)z; (void)e; (void)n; return 0; }
static int f_d2d_async(ktb_backend *b, void *dst, const void *src, size_t bytes, void *s, char *e, size_t n)
{
    (void)b; (void)dst; (void)src; (void)s; (void)e; (void)n;
    F.memcpys++;
    f_record(OP_MEMCPY, 2.0 * bytes);
    return 0;
}
static int f_stream_create(ktb_backend *b, void **s, char *e, size_t n) { (void)b; (void)e; (void)n; *s = &F; return 0; }
static int f_stream_destroy(ktb_backend *b, void *s, char *e, size_t n) { (void)b; (void)s; (void)e; (void)n; return 0; }
static int f_sync(ktb_backend *b, void *s, char *e, size_t n) { (void)b; (void)s; (void)e; (void)n; return 0; }
static int f_event_create(ktb_backend *b, void **ev, char *e, size_t n) { (void)b; (void)e; (void)n; *ev = calloc(1, sizeof(double)); return *ev ? 0 : -1; }
static int f_event_record(ktb_backend *b, void *ev, void *s, char *e, size_t n) { (void)b; (void)s; (void)e; (void)n; *(double *)ev = F.clock_ms; return 0; }
static int f_event_elapsed(ktb_backend *b, void *s, void *t, float *ms, char *e, size_t n)
{
    (void)b; (void)e; (void)n;
    *ms = (float)(*(double *)t - *(double *)s);
    return 0;
}
static int f_event_destroy(ktb_backend *b, void *ev, char *e, size_t n) { (void)b; (void)e; (void)n; free(ev); return 0; }
static int f_begin(ktb_backend *b, void *s, char *e, size_t n) { (void)b; (void)s; (void)e; (void)n; F.capturing = 1; F.cap.n = 0; return 0; }
static int f_end(ktb_backend *b, void *s, void **exec, char *e, size_t n)
{
    (void)b; (void)s; (void)e; (void)n;
    F.capturing = 0;
    fake_exec *x = malloc(sizeof *x);
    if (!x) return -1;
    *x = F.cap;
    *exec = x;
    return 0;
}
static int f_graph_launch(ktb_backend *b, void *exec, void *s, char *e, size_t n)
{
    (void)b; (void)s; (void)e; (void)n;
    const fake_exec *x = exec;
    for (int i = 0; i < x->n; i++) {
        double gbps = x->ops[i].kind == OP_READ ? FAKE_READ_GBPS : x->ops[i].kind == OP_COPY_KERNEL ? FAKE_COPY_GBPS
                                                                                                  : FAKE_MEMCPY_GBPS;
        F.clock_ms += x->ops[i].bytes / (gbps * 1e6);
    }
    return 0;
}
static int f_graph_destroy(ktb_backend *b, void *exec, char *e, size_t n) { (void)b; (void)e; (void)n; free(exec); return 0; }

static const ktb_ops fake_ops = {
    .vendor = "fake", .close = f_close, .info = f_info, .module_load = f_module_load, .module_unload = f_module_unload,
    .function = f_function, .launch = f_launch, .alloc = f_alloc, .free = f_free, .copy_h2d = f_h2d,
    .copy_d2h = f_d2h, .memset8 = f_memset8, .copy_d2d_async = f_d2d_async, .stream_create = f_stream_create,
    .stream_destroy = f_stream_destroy, .sync = f_sync, .event_create = f_event_create,
    .event_record = f_event_record, .event_elapsed_ms = f_event_elapsed, .event_destroy = f_event_destroy,
    .graph_begin_capture = f_begin, .graph_end_capture = f_end, .graph_launch = f_graph_launch,
    .graph_destroy = f_graph_destroy,
};

static const ktb_device_info h200 = { .name = "fake H200", .arch = "sm_90", .compute_units = 132,
                                      .l2_bytes = 50331648, .global_mem_bytes = 150754820096ll, .wave_size = 32 };

/* A "cubin" the fake module loader accepts: FAKE, then one kernel name a line. */
static const char *write_cubin(const char *name, const char *kernels)
{
    static char path[4][256];
    static int k;
    char *p = path[k++ % 4];
    snprintf(p, 256, "/tmp/kt_test_ceiling_%d_%s.cubin", (int)getpid(), name);
    FILE *f = fopen(p, "w");
    if (f) { fprintf(f, "FAKE\n%s", kernels); fclose(f); }
    return p;
}

static int measure(const char *cubin, bce_ceilings *c)
{
    memset(&F, 0, sizeof F);
    F.base.ops = &fake_ops;
    void *stream = NULL;
    char err[512] = "";
    ktb_stream_create(&F.base, &stream, err, sizeof err);
    int rc = bce_measure(&F.base, stream, &h200, cubin, 5, c, err, sizeof err);
    if (rc) fprintf(stderr, "bce_measure: %s\n", err);
    return rc;
}

static int near(double got, double want) { return fabs(got - want) <= 0.01 * want; }

static void test_both_kernels(void)
{
    bce_ceilings c;
    KT_CHECK_INT(measure(write_cubin("both", KT_READ_KERNEL "\n" KT_COPY_KERNEL "\n"), &c), 0);
    KT_CHECK(near(c.read_gbps, FAKE_READ_GBPS));
    KT_CHECK(near(c.copy_gbps, FAKE_COPY_GBPS));            /* the kernel's, not 2700 */
    if (!near(c.copy_gbps, FAKE_COPY_GBPS)) fprintf(stderr, "  copy ceiling %.0f GB/s, want the copy kernel's %.0f\n", c.copy_gbps, FAKE_COPY_GBPS);
    KT_CHECK_INT(F.memcpys, 0);
    KT_CHECK(F.copy_launches > 0);
    KT_CHECK_INT(F.bad_args, 0);
    KT_CHECK(c.copy_blocks > 0);
    KT_CHECK_INT(c.copy_note[0], 0);
    KT_CHECK_INT(c.read_note[0], 0);
}

static void test_no_copy_kernel(void)
{
    bce_ceilings c;
    KT_CHECK_INT(measure(write_cubin("readonly", KT_READ_KERNEL "\n"), &c), 0);
    KT_CHECK(near(c.read_gbps, FAKE_READ_GBPS));
    KT_CHECK(c.copy_gbps == 0);
    if (c.copy_gbps != 0) fprintf(stderr, "  copy ceiling %.0f GB/s from a cubin with no copy kernel\n", c.copy_gbps);
    KT_CHECK_CONTAINS(c.copy_note, "unavailable");
    KT_CHECK_CONTAINS(c.copy_note, KT_COPY_KERNEL);
    KT_CHECK_INT(F.memcpys, 0);
    KT_CHECK_INT(F.bad_args, 0);
}

static void test_no_cubin(void)
{
    const char *cubins[] = { "/nonexistent/read.cubin", NULL, write_cubin("garbage", "") };
    for (int i = 0; i < 3; i++) {
        bce_ceilings c;
        if (i == 2) {   /* a file the loader refuses */
            FILE *f = fopen(cubins[2], "w");
            if (f) { fputs("not a cubin", f); fclose(f); }
        }
        KT_CHECK_INT(measure(cubins[i], &c), 0);
        KT_CHECK(c.read_gbps == 0);
        KT_CHECK(c.copy_gbps == 0);
        if (c.copy_gbps != 0) fprintf(stderr, "  copy ceiling %.0f GB/s with cubin %s\n", c.copy_gbps, cubins[i] ? cubins[i] : "(none)");
        KT_CHECK_CONTAINS(c.read_note, "unavailable");
        KT_CHECK_CONTAINS(c.copy_note, "unavailable");
        KT_CHECK_INT(F.memcpys, 0);
    }
}

int main(void)
{
    test_both_kernels();
    test_no_copy_kernel();
    test_no_cubin();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -f /tmp/kt_test_ceiling_%d_*.cubin", (int)getpid());
    if (system(cmd) != 0) fprintf(stderr, "could not remove the test cubins\n");
    KT_TEST_END();
}
