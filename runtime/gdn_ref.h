/* gdn_ref.h: the float64 reference of one gdn_decode step (templates/abi/gdn.h), at the kernel's
 * rounding points: the conv outputs and o rounded to the dtype, the rest in double. Used by the
 * descriptor (runtime/op_gdn.c: the worker's check), by the host emulation of the template
 * (tests/unit/test_gdn_emu.cpp) and by the device chains. Pure: no I/O, no GPU. Prefix kt_gdn_ref_.
 * Written to compile as C11 and C++17 (the emulation test includes gdn_ref.c). */
#ifndef KT_GDN_REF_H
#define KT_GDN_REF_H
#include "../templates/abi/gdn.h"
#include "../templates/abi/gdn_prefill.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The pools in double, indexed exactly as the device pools the args describe (conv: the conv
 * state's strides; ssm: ssm_slot_stride and the layout vk; log: log_slot_stride). */
typedef struct kt_gdn_ref_pools {
    double *conv, *ssm, *log;
    int vk;                      /* the ssm layout: 0 [.., K, V], 1 K-last */
} kt_gdn_ref_pools;

/* One step over a's host inputs (a's pointers are host memory; its pool pointers unused), the
 * 16-bit values read as fp16 when fp16 is 1, else bf16: updates the pools in place as the
 * kernel updates its own, and writes out[token * out_stride + h * dv + j] for every token of a
 * sequence that is not padded (others untouched). */
void kt_gdn_ref_step(const kt_gdn_decode_args *a, int fp16, kt_gdn_ref_pools *pools, double *out);

/* A prefill (templates/abi/gdn_prefill.h) as the plain decode steps it equals: each sequence's
 * tokens one step at a time through kt_gdn_ref_step, from its slot, whose history columns and
 * state are zeroed first where the sequence has no initial state. a's pointers are host memory;
 * the conv pool has conv_len columns a slot as conv_len says (only 0 .. kw-2 are read or written). */
void kt_gdn_ref_prefill(const kt_gdn_prefill_args *a, int conv_len, int fp16, kt_gdn_ref_pools *pools, double *out);

/* ||x - ref|| / ||ref|| over n values of x (kind 0: 16-bit of the dtype, 1: fp32), skipping those
 * of rows i / per whose live[row] is 0 (live NULL: none skipped); NaN when one is not finite */
double kt_gdn_ref_rel(const double *ref, const void *x, long long n, int kind, int fp16, const unsigned char *live,
                      long long per);

/* The conv output y = rnd(silu(sum_j w[j] * e[j])) the kernel stores (kw taps). */
double kt_gdn_ref_conv(const double *w, const double *e, int kw, int fp16);

/* A 16-bit value of the dtype, and rounding to it */
double kt_gdn_ref_val(unsigned short h, int fp16);
double kt_gdn_ref_rnd(double x, int fp16);

#ifdef __cplusplus
}
#endif
#endif
