/* ktrt_select.h: libktrt's choice logic with no GPU (internal; used by ktrt.c and `kt explain`).
 *
 * A catalog is the databases' layers read into memory (ktrt_db.c): per layer its devices, its
 * selections and the metadata of its dispatchable kernels (status ok, code present, an `ops` entry
 * that names a family of the op table, runtime/op.h; reference kernels, ops 'reference:gemm', are
 * never read). Every family field is read through its descriptor: a selection's problem from its
 * key text, a kernel's variant from its params JSON. ktrt_select is a pure function of (catalog,
 * device, problem, workspace): the chain of ktrt.h (exact -> bucket -> law -> refused).
 *
 * A selection serves only when its kernel is in the catalog under the same target and code hash
 * (a kernel recompiled since it was measured is stale: its time belongs to another binary) and its
 * launch fits (grid limits; split-K partials within the workspace given). Selections that do not
 * serve are passed over and the reason of the first one is kept for the final reason string. */
#ifndef KTRT_SELECT_H
#define KTRT_SELECT_H
#include <stddef.h>
#include <stdio.h>
#include "ktrt.h"
#include "target.h"
#include "op.h"
#include "kt_env.h"

#define KTRT_NAME_LEN KT_OP_NAME_LEN
#define KTRT_KEY_LEN 64
#define KTRT_HASH_LEN 72
#define KTRT_TARGET_LEN 16
#define KTRT_MAX_TARGETS 16

_Static_assert(sizeof(((ktrt_choice *)0)->kernel) == KTRT_NAME_LEN, "ktrt_choice.kernel holds any kernel name");

/* A dispatchable kernel for one op (a row serving two ops is two entries). */
typedef struct ktrt_kernel {
    char name[KTRT_NAME_LEN];
    char target[KTRT_TARGET_LEN];
    char code_hash[KTRT_HASH_LEN];
    const kt_op *op;
    int dtype;                /* index into op->dtypes */
    kt_variant v;
    char law_class[32];       /* the recipe's `law`, else the template's stem */
    int threads, regs, lds_bytes;
    int waves_per_simd;       /* 0 when unknown */
    int refused;              /* its code object failed the sha256 check at first load (ktrt_layer_code):
                                 the chain passes over it from then on, as over a stale kernel */
} ktrt_kernel;

typedef struct ktrt_selection {
    char device_key[KTRT_KEY_LEN];
    char target[KTRT_TARGET_LEN];
    kt_problem p;             /* from the key; its bucketed dimensions are edges */
    int measured;             /* 1: source 'measured'; 0: 'law' (a law pick, nothing measured) */
    char kernel[KTRT_NAME_LEN];
    char code_hash[KTRT_HASH_LEN];
    double time_us;           /* 0 when not recorded */
} ktrt_selection;

typedef struct ktrt_device_row {
    char key[KTRT_KEY_LEN];
    char target[KTRT_TARGET_LEN];
    char arch[32];
    int compute_units;
    int pci_device_id;
} ktrt_device_row;

typedef struct ktrt_source ktrt_source;   /* the layer's open read-only connection (ktrt_db.c) */

typedef struct ktrt_layer {
    char path[512];
    const char *role;                     /* "caller" | "user" | "shipped" (static text) */
    ktrt_device_row *devices;
    int ndevices;
    ktrt_selection *selections;
    int nselections;
    ktrt_kernel *kernels;                 /* sorted by (target, op, dtype, name) */
    int nkernels;
    char targets[KTRT_MAX_TARGETS][KTRT_TARGET_LEN];   /* every target any row names */
    int ntargets;
    ktrt_source *src;
} ktrt_layer;

/* The layers in lookup order; owns them. */
typedef struct ktrt_catalog {
    ktrt_layer *layers;
    int nlayers;
} ktrt_catalog;

/* ---- ktrt_db.c: reading layers (the only SQL in libktrt besides ktrt_dbfile.c) ---- */

/* Appends the database at path to the catalog as its last layer (opened read-only through
 * ktrt_dbfile_open). KT_OK, or KT_ENODB (no such file) / KT_EBADDB (refused) / KT_EINVAL with a
 * message naming the file; the catalog is unchanged on failure. */
int ktrt_catalog_add(ktrt_catalog *c, const char *path, const char *role, char *err, size_t errlen);
void ktrt_catalog_free(ktrt_catalog *c);   /* closes every layer; the catalog is empty after */
/* The code object of a kernel of this layer, malloc'd into *code (the caller frees). Checks the
 * row still has the code hash the catalog read, and that the bytes read hash to it (sha256): a
 * mismatch (the database damaged on disk) is KT_EBADDB with a message naming the kernel and the
 * layer, and marks the layer's kernel refused. Not thread-safe per layer: callers serialise. */
int ktrt_layer_code(ktrt_layer *l, const ktrt_kernel *k, void **code, size_t *len, char *err, size_t errlen);

/* ---- ktrt_layers.c ---- */

/* Adds the layers of ktrt.h's order to an empty catalog: opts->db_path or $KT_DB (must load), then
 * unless opts->no_default_layers the user and shipped databases when their files exist. KT_OK, or
 * the first layer's failure (KT_ENODB / KT_EBADDB) with the setting it came from in err. */
int ktrt_layers_open(ktrt_catalog *c, const ktrt_options *opts, char *err, size_t errlen);

/* ---- ktrt_select.c ---- */

/* vsnprintf into err (when err/errlen allow), then return code: libktrt's one error formatter. */
int ktrt_fail(char *err, size_t errlen, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* The device as the chain sees it. */
typedef struct ktrt_device {
    char key[KTRT_KEY_LEN];               /* "sm_90/132/0x2335", or "<target>/law" */
    const kt_target *target;
    int compute_units;
} ktrt_device;

/* A device named by its key: a catalog device row when one has the key (its target and CU count),
 * else parsed from "<arch>/<cus>/<pci>". "<target>/law" needs its row (the row carries the CU count
 * the law used). KT_OK or KT_EINVAL with a message naming the key. */
int ktrt_device_from_key(const ktrt_catalog *c, const char *key, ktrt_device *out, char *err, size_t errlen);

/* Refuses (KT_EBADDB, naming the file and the targets it has) a layer that has rows but none of
 * this target. An empty layer is not refused: it only has nothing to say. */
int ktrt_catalog_check_target(const ktrt_catalog *c, const kt_target *t, char *err, size_t errlen);

/* Bytes of workspace buffer i of op the largest selection of this target needs on a device of
 * `units` compute units (the op's workspace_bytes over the selections whose kernel is in the
 * catalog; 0 when none needs it). */
long long ktrt_catalog_workspace(const ktrt_catalog *c, const kt_target *t, int units, const kt_op *op, int i);
/* The GEMM's split-K partials: ktrt_catalog_workspace(c, t, units, gemm, 0). */
long long ktrt_catalog_workspace_bytes(const ktrt_catalog *c, const kt_target *t, int units);

typedef struct ktrt_op_query {
    const ktrt_device *device;
    kt_problem p;                         /* actual dimensions; each bucketed one is served by its edge */
    long long workspace[KT_OP_MAX_WORKSPACES];   /* bytes a launch may use per workspace buffer */
} ktrt_op_query;

/* A GEMM query by its fields (the form `kt explain`, tune's coverage and the tests use). */
typedef struct ktrt_query {
    const ktrt_device *device;
    const char *dtype;
    int m, n, k;
    long long workspace_bytes;            /* partials a launch may use; 0: one-segment variants only */
} ktrt_query;

typedef struct ktrt_pick {
    ktrt_choice choice;                   /* path, kernel, problem_key, reason, db_path, tuned_us, splitk */
    const ktrt_kernel *kernel;            /* NULL when refused */
    int kernel_layer;                     /* index of the layer holding the kernel's code; -1 refused */
    long long bucket;                     /* the edge serving the query's first bucketed dimension */
    long long served_bucket;              /* the selection's edge there (exact, bucket; law from a stored
                                             pick); its other edges are in its key, choice.reason */
    char other_device[KTRT_KEY_LEN];      /* bucket path over another device's selection, else "" */
} ktrt_pick;

/* The chain of ktrt.h for one problem. KT_OK (served), KT_ENOKERNEL (refused; choice.reason says
 * why), or KT_EINVAL (a NULL argument, a dimension < 1; choice.reason says which). */
int ktrt_select(const ktrt_catalog *c, const ktrt_op_query *q, ktrt_pick *out);
/* The same for a GEMM query (an unknown dtype is KT_EINVAL). */
int ktrt_select_gemm(const ktrt_catalog *c, const ktrt_query *q, ktrt_pick *out);

/* Why kernel k cannot launch problem p with this workspace on a device of `units` compute units,
 * or NULL when it can. The text is static or written into buf. */
const char *ktrt_launch_misfit(const ktrt_kernel *k, const kt_problem *p, int units, const long long *workspace,
                               char *buf, size_t len);

/* ---- ktrt_log.c: what a handle writes to stderr, each line once ---- */

typedef struct ktrt_log {
    int level;                        /* 0: KT_LOG=0, silent; 1: KT_LOG unset, notices; 2: every fallback */
    char (*seen)[KTRT_NAME_LEN];      /* keys already written */
    int nseen, capseen;
} ktrt_log;

int ktrt_log_level(const char *kt_log_env);      /* the level for a value of $KT_LOG (NULL: unset) */
/* 1 the first time key is seen (then the caller writes its line), 0 after or when out of memory. */
int ktrt_log_first(ktrt_log *log, const char *key);
/* Writes the lines a pick calls for to f: the other-device notice (level >= 1, once per device
 * key) and the fallback line (level 2, once per path and problem key) of ktrt.h. */
void ktrt_log_pick(ktrt_log *log, FILE *f, const ktrt_device *dev, const ktrt_pick *p);
void ktrt_log_free(ktrt_log *log);

#endif
