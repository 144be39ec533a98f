/* ktrt.h: libktrt, the thin dispatcher. Opens tuned .ktdb databases read-only and launches the
 * selected kernel for a problem on the caller's stream with the caller's buffers.
 *
 * Links no GPU library: the CUDA or HIP driver is opened with dlopen (runtime/backend.h), chosen by
 * the databases' target (sm_* -> CUDA, gfx* -> HIP). Every call returns a KT_* code and writes a
 * message naming the input at fault into err; nothing aborts the host process.
 *
 * Databases layer in this order (the first that has an answer for a step wins; missing optional
 * layers are skipped):
 *   1. the path given to ktrt_open, else $KT_DB (an error if given and unusable);
 *   2. the user database $KT_USER_DB, else $XDG_DATA_HOME/ktune/ktune.ktdb,
 *      else $HOME/.local/share/ktune/ktune.ktdb;
 *   3. the shipped database $KT_SHIPPED_DB, else /usr/local/share/ktune/ktune.ktdb.
 * A layer whose file exists but is corrupt, truncated, of a newer schema or of another target than
 * the device is refused with a message (ktrt_open fails) rather than silently skipped.
 *
 * Selection chain for a problem (op, dtype, its dimensions: a GEMM's m, n, k), each step tried
 * over all layers in order:
 *   exact   a selection measured on this device for the key: the static dimensions, and every
 *           bucketed one snapped to its edge (a GEMM's (dtype, n, k, bucket(m)));
 *   bucket  the nearest tuned buckets of the same static shape (log2 distance of the edges, summed
 *           over the bucketed dimensions; ties to the larger, first bucketed dimension first; a
 *           GEMM: the nearest M bucket of the same (n, k); attention decode: only at the query's
 *           own rows edge, other rows wanting another kernel form): this device's selections
 *           first, then another device's of the same target (notice);
 *   law     runtime/law.c over the ok kernels of the target, with this device's compute units
 *           (also where the DB's selection for this device and key is itself a law pick);
 *   refused KT_ENOKERNEL with a reason (no kernel of that dtype, a dimension out of range, ...).
 * A selection serves only if its kernel is still in the database with the code hash it was
 * measured with (a kernel recompiled since is stale) and its launch fits (grid limits, split-K
 * workspace); otherwise the chain goes on, and the reason says what was passed over.
 * With KT_LOG set (to anything but "0"), each fallback (bucket, law, refused) is written to
 * stderr once per key: "ktrt: gemm bf16 n=.. k=.. m<=..: path=law: <reason>". The notice that
 * another device's selections serve this one is written once per such device unless KT_LOG=0.
 *
 * Split-K workspace: allocated at open at the largest size any selection needs (and at least
 * opts.workspace_bytes), one per stream slot, so launches allocate nothing and can be captured in
 * a graph. A law pick that would need more workspace than that uses fewer segments.
 *
 * Threads: a ktrt handle may be used from several threads at once. Code objects are loaded on the
 * first launch that needs them (under the handle's lock); a stream binds to one of
 * opts.max_streams workspace slots on its first split-K launch; once all slots are bound, further
 * streams get no workspace: the chain passes over split-K selections there, and the law takes its
 * best one-segment variant (logged with KT_LOG). */
#ifndef KTRT_H
#define KTRT_H
#include <stddef.h>

#define KT_OK          0
#define KT_EINVAL      1   /* a bad argument: NULL pointer, dimension < 1, unknown dtype */
#define KT_ENODB       2   /* no database could be opened, or one given could not be read */
#define KT_EBADDB      3   /* corrupt, truncated, newer schema, wrong target */
#define KT_ENODEVICE   4   /* no GPU, or no driver library */
#define KT_ENOKERNEL   5   /* nothing can serve this problem; the reason says why */
#define KT_EDEVICE     6   /* a driver call failed (module load, launch, allocation) */

typedef struct ktrt ktrt;

typedef struct ktrt_options {
    const char *db_path;            /* NULL: $KT_DB, then the layers above */
    int device;                     /* device ordinal, default 0 */
    int no_default_layers;          /* 1: only db_path (tests; no user or shipped layer) */
    size_t workspace_bytes;         /* minimum of every op's first workspace buffer per slot (the
                                       GEMM's split-K partials, gdn_prefill's intermediates, ...);
                                       0 = what selections and the ops' floors need */
    int max_streams;                /* workspace slots; 0 = 4 */
} ktrt_options;

/* Opens the databases and the device. opts may be NULL (all defaults). */
int ktrt_open(const ktrt_options *opts, ktrt **out, char *err, size_t errlen);
void ktrt_close(ktrt *rt); /* NULL is fine; frees modules, workspace, handles */

/* Which kernel serves a problem and why; filled by ktrt_choose and ktrt_gemm. */
typedef struct ktrt_choice {
    char path[8];                   /* "exact" | "bucket" | "law" | "refused" */
    char kernel[192];               /* the kernel's name, "" when refused; KT_KERNEL_NAME_MAX
                                       (build/kernel_name.h): was 128, an ABI change (the struct grew) */
    char problem_key[128];          /* "gemm bf16 n=4096 k=4096 m<=16" */
    char reason[256];               /* one line: why this path, or why refused */
    char db_path[512];              /* the layer that answered */
    double tuned_us;                /* the selection's measured time, 0 when not measured */
    int splitk;                     /* GEMM: K segments the launch uses, 0 = stream-K; -1 for an op
                                       that does not split */
} ktrt_choice;

/* Chooses without launching (no GPU work), as a launch on a stream that holds or can take a
 * workspace slot would. Returns KT_OK or KT_ENOKERNEL (choice filled either way; err holds the
 * reason), or KT_EINVAL. */
int ktrt_choose_gemm(ktrt *rt, const char *dtype, int m, int n, int k, ktrt_choice *choice,
                     char *err, size_t errlen);

/* C[m][n] = A[m][k] . W[n][k]^T, row-major with leading dimensions in elements; dtype "bf16" or
 * "fp16"; stream is a CUstream / hipStream_t (NULL = the default stream). Asynchronous: returns
 * once the launch is queued. choice may be NULL. */
int ktrt_gemm(ktrt *rt, const char *dtype, int m, int n, int k,
              const void *a, int lda, const void *w, int ldw, void *c, int ldc,
              void *stream, ktrt_choice *choice, char *err, size_t errlen);

/* Any op family of the table (runtime/op.h): args points at the family's argument struct
 * (templates/abi/<family>.h, e.g. kt_rmsnorm_add_args for op "rmsnorm_add"), of args_size bytes,
 * with the caller's fields filled (operands, dimensions, strides); libktrt fills the variant's
 * fields (split sizes, workspace) in its own copy, so args is only read. The problem is read from
 * the struct and checked by the family (a NULL operand or a bad stride is KT_EINVAL naming the
 * field); then the chain above chooses and the kernel is launched on stream. ktrt_choose chooses
 * without launching (operand pointers are not read, but must pass the checks). */
int ktrt_run(ktrt *rt, const char *op, const char *dtype, const void *args, size_t args_size, void *stream,
             ktrt_choice *choice, char *err, size_t errlen);
int ktrt_choose(ktrt *rt, const char *op, const char *dtype, const void *args, size_t args_size,
                ktrt_choice *choice, char *err, size_t errlen);

/* Launches (ktrt_gemm and ktrt_run) since ktrt_open, by the path that served them (refused: answered KT_ENOKERNEL).
 * The fallbacks (bucket, law, refused) are what a serving image watches; KT_LOG=1 names their keys
 * once each. Thread-safe. Returns KT_OK, or KT_EINVAL for a NULL argument. */
typedef struct ktrt_stats {
    unsigned long long exact, bucket, law, refused;
} ktrt_stats;
int ktrt_get_stats(ktrt *rt, ktrt_stats *out);

/* The device key the handle matched selections against: "sm_90/132/0x2335" ("sm_90/132/unknown"
 * where the PCI product id cannot be read; see runtime/problem_key.h). "" for NULL. */
const char *ktrt_device_key(const ktrt *rt);

#endif
