/* problem_key.h: the GEMM's key texts in the form its callers had before the op layer (the edges
 * and the text are the GEMM descriptor's, runtime/op_gemm.c; any op's key is kt_problem_key in
 * runtime/op.h), and device keys. Written once because a key spelt two ways is a lookup that
 * silently misses (the runtime would fall back to the law).
 *
 * M buckets are part of the key schema: decode 1 2 4 8 16 32 64, prefill 128 .. 8192 (powers of
 * two). A token count m is served by the smallest edge >= m; above the last edge, by the last (the
 * largest prefill shape serves longer prompts chunk-wise). */
#ifndef KT_PROBLEM_KEY_H
#define KT_PROBLEM_KEY_H
#include <stddef.h>

int kt_m_bucket_count(void);
int kt_m_bucket_at(int i);              /* the i-th edge, ascending; -1 out of range */
int kt_m_bucket(long m);                /* the edge serving m; -1 when m < 1 */
int kt_m_bucket_index(int bucket);      /* i with kt_m_bucket_at(i) == bucket; -1 for a non-edge */
const char *kt_m_phase(int bucket);     /* "decode" for edges <= 64, "prefill" above */

/* `gemm bf16 n=1536 k=4096 m<=16`. Returns the key's length, or -1 when it does not fit in len
 * (buf then holds a truncated, terminated prefix), the bucket is not an edge, or dtype is NULL. */
int kt_gemm_problem_key(char *buf, size_t len, const char *dtype, int n, int k, int bucket);

/* A device: `<arch>/<compute units>/<PCI product id as 0x%04x>`, e.g. `sm_90/132/0x2335`; an
 * unknown product id (pci_device_id < 0, see backend.h) is spelt `unknown`. Returns the length,
 * or -1 when it does not fit or arch is NULL/empty. */
int kt_device_key(char *buf, size_t len, const char *arch, int compute_units, int pci_device_id);

/* The pseudo-device of a law-only database: `<target>/law`. Same return convention. */
int kt_law_device_key(char *buf, size_t len, const char *target);

#endif
