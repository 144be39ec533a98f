/* dtype.h: the paged-attention templates' element types from the recipe's dtype axis: q/out's
 * 16-bit type (kt_elem, S = Q K^T's operand type but where decode.hip's KT_S_F16 makes it f16),
 * KT_KV8 = 1 where the cache holds fp8 e4m3
 * instead of kt_elem, KT_ELEM_IS_BF16 = 1 where kt_elem is bf16 (K's e4m3 conversion, attn/kv.h),
 * and kt_pv_elem, the operand type of O = P V: f16 wherever the cache is fp8. e4m3 -> f16 is one
 * instruction a pair on sm_89+ (e4m3 -> bf16 five, ncu on the H200: the conversions took 65
 * instructions a key at d256), every e4m3 value is an f16, and P in [0, 1] keeps more bits in f16
 * than in bf16. S takes q's type where the conversion to f16 would not be one instruction; over
 * an fp8 cache on sm_89+ decode.hip runs S in f16 (KT_S_F16, Q converted once a block). */
#ifndef KT_ATTN_DTYPE_H
#define KT_ATTN_DTYPE_H
#define KT_CAT_(a, b) a##b
#define KT_CAT(a, b) KT_CAT_(a, b)
#define KT_NAME(suffix) KT_CAT(KT_KERNEL_NAME, suffix)

#define KT_ELEM_bf16 kt_bf16
#define KT_ELEM_fp16 kt_f16
#define KT_ELEM_bf16_e4m3 kt_bf16
#define KT_ELEM_fp16_e4m3 kt_f16
#define KT_KV8_bf16 0
#define KT_KV8_fp16 0
#define KT_KV8_bf16_e4m3 1
#define KT_KV8_fp16_e4m3 1
#define KT_PV_bf16 kt_bf16
#define KT_PV_fp16 kt_f16
#define KT_PV_bf16_e4m3 kt_f16
#define KT_PV_fp16_e4m3 kt_f16
typedef KT_CAT(KT_ELEM_, KT_DTYPE) kt_elem;
typedef KT_CAT(KT_PV_, KT_DTYPE) kt_pv_elem;
#define KT_KV8 KT_CAT(KT_KV8_, KT_DTYPE)
#define KT_ELEM_IS_BF16_bf16 1
#define KT_ELEM_IS_BF16_fp16 0
#define KT_ELEM_IS_BF16_bf16_e4m3 1
#define KT_ELEM_IS_BF16_fp16_e4m3 0
#define KT_ELEM_IS_BF16 KT_CAT(KT_ELEM_IS_BF16_, KT_DTYPE)
#endif
