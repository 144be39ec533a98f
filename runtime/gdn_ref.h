/* gdn_ref.h: the float64 reference of one gdn_decode step (templates/abi/gdn.h), at the kernel's
 * rounding points: the conv outputs and o rounded to the dtype, the rest in double. Used by the
 * descriptor (runtime/op_gdn.c: the worker's check), by the host emulation of the template
 * (tests/unit/test_gdn_emu.cpp) and by the device chains. Pure: no I/O, no GPU. Prefix kt_gdn_ref_.
 * Written to compile as C11 and C++17 (the emulation test includes gdn_ref.c). */
#ifndef KT_GDN_REF_H
#define KT_GDN_REF_H
#include "../templates/abi/gdn.h"

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

/* The conv output y = rnd(silu(sum_j w[j] * e[j])) the kernel stores (kw taps). */
double kt_gdn_ref_conv(const double *w, const double *e, int kw, int fp16);

/* A 16-bit value of the dtype, and rounding to it */
double kt_gdn_ref_val(unsigned short h, int fp16);
double kt_gdn_ref_rnd(double x, int fp16);

#ifdef __cplusplus
}
#endif
#endif
