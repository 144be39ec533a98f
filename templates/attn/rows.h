/* rows.h: which fp32 accumulator elements hold the same query row of a 16x16 score or output
 * tile, derived from kt_s_q (arch/prefill_ops.h: the row of S on NVIDIA, the column of S^T on AMD),
 * so a template can reduce a row in registers without knowing the target. Every map is
 * row = f(lane) + h(i): the elements of one row are, in each holding lane,
 * a class of element indices (kt_rows_rep: the class's first index), and across lanes the lanes
 * that differ from it only in the bits kt_rows_lane_bit admits (a butterfly over those bits
 * reaches all of them). tests/unit/test_fragment_layouts.cpp checks, for every prelude, that the
 * classes and the butterfly together cover each row's 16 columns exactly once. No include guard:
 * the layout test includes it once per prelude namespace. */

/* 1 when lanes l and l ^ b hold the same rows at every element index (b a power of two). */
KT_LAYOUT_FN bool kt_rows_lane_bit(int b)
{
    for (int l = 0; l < kt_frag_lanes; l++)
        for (int i = 0; i < kt_acc_elems; i++)
            if (kt_s_q(l ^ b, i) != kt_s_q(l, i)) return false;
    return true;
}

/* The first element index that holds the same row as element i in every lane. */
KT_LAYOUT_FN int kt_rows_rep(int i)
{
    for (int j = 0; j < i; j++) {
        bool same = true;
        for (int l = 0; l < kt_frag_lanes; l++)
            if (kt_s_q(l, j) != kt_s_q(l, i)) same = false;
        if (same) return j;
    }
    return i;
}

/* The size of element class cls (a class's first index) and its j-th member, so a template can
 * walk a class's elements as a list (prefill.hip's tree reductions). */
KT_LAYOUT_FN int kt_class_size(int cls)
{
    int n = 0;
    for (int e = 0; e < kt_acc_elems; e++) n += kt_rows_rep(e) == cls;
    return n;
}
KT_LAYOUT_FN int kt_class_member(int cls, int j)
{
    for (int e = 0; e < kt_acc_elems; e++)
        if (kt_rows_rep(e) == cls && j-- == 0) return e;
    return 0;
}
