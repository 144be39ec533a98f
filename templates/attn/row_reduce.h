/* row_reduce.h: a query row's reductions in registers, for the templates that hold S and O in
 * registers (prefill.hip, decode_ws.hip), built on rows.h's classes. Included inside the
 * template's anonymous namespace after attn/rows.h (and arch/prefill_ops.h: kt_fmax). */

/* Which accumulator elements of a lane share a query row, and which lane bits a row spans
 * (rows.h), as compile-time scalars (a constexpr table would not be visible to CUDA device code):
 * element i's class is kt_rep(i), 3 bits each; the loops below test them after unrolling. */
KT_LAYOUT_FN unsigned kt_make_row_reps()
{
    unsigned t = 0;
    for (int i = 0; i < kt_acc_elems; i++) t |= (unsigned)kt_rows_rep(i) << (3 * i);
    return t;
}
KT_LAYOUT_FN int kt_make_row_bits()
{
    int m = 0;
    for (int b = 1; b < kt_frag_lanes; b *= 2)
        if (kt_rows_lane_bit(b)) m |= b;
    return m;
}
static_assert(kt_acc_elems <= 8, "3 bits an element's row class");
constexpr unsigned kRepBits = kt_make_row_reps();
constexpr int kRowBits = kt_make_row_bits();
KT_DEV int kt_rep(int i) { return (int)((kRepBits >> (3 * i)) & 7u); }

/* A row class's elements within one tile of a lane (rows.h: kt_class_size, kt_class_member),
 * reduced as a tree: the chains a row's maximum and sum wait on are log-deep, not one element
 * after another. */
template <bool kMax> KT_DEV float kt_class_reduce(const kt_acc &t, int cls)
{
    float v[kt_acc_elems];
    const int n = kt_class_size(cls);
#pragma unroll
    for (int j = 0; j < kt_acc_elems; j++)
        if (j < n) v[j] = kt_acc_get(t, kt_class_member(cls, j));
#pragma unroll
    for (int w = 1; w < kt_acc_elems; w *= 2)
#pragma unroll
        for (int k = 0; k + w < kt_acc_elems; k += 2 * w)
            if (k + w < n) v[k] = kMax ? kt_fmax(v[k], v[k + w]) : v[k] + v[k + w];
    return v[0];
}

KT_DEV float kt_row_max(float x)
{
#pragma unroll
    for (int b = 1; b < KT_WAVE; b *= 2)
        if (kRowBits & b) {
            x = kt_fmax(x, kt_shfl_xor(x, b));
        }
    return x;
}

KT_DEV float kt_row_sum(float x)
{
#pragma unroll
    for (int b = 1; b < KT_WAVE; b *= 2)
        if (kRowBits & b) x += kt_shfl_xor(x, b);
    return x;
}
