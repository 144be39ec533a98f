/* dtype.h: the paged-attention templates' element types from the recipe's dtype axis: q/out's
 * 16-bit type (kt_elem), KT_KV8 = 1 where the cache holds fp8 e4m3 instead of kt_elem, and
 * KT_ELEM_IS_BF16 = 1 where kt_elem is bf16 (the fp8 pairs' conversion, attn/kv.h). */
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
typedef KT_CAT(KT_ELEM_, KT_DTYPE) kt_elem;
#define KT_KV8 KT_CAT(KT_KV8_, KT_DTYPE)
#define KT_ELEM_IS_BF16_bf16 1
#define KT_ELEM_IS_BF16_fp16 0
#define KT_ELEM_IS_BF16_bf16_e4m3 1
#define KT_ELEM_IS_BF16_fp16_e4m3 0
#define KT_ELEM_IS_BF16 KT_CAT(KT_ELEM_IS_BF16_, KT_DTYPE)
#endif
