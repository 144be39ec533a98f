/* reduce.h: the split-KV merge kernel (KT_NAME(_reduce)) of the decode templates (decode.hip,
 * decode_ws.hip), included at file scope after the template's namespace, which defines kD and
 * kt_elem. Partials: {m, l} then head_size accumulators (already times v_scale) per (token, head,
 * segment), as runtime/op_attn.c sizes them. */
/* The split-KV merge. The seed's lesson, twice over: the reduce is what batch 1 pays for. A reduce
 * whose every thread walks the whole segment list cost ~30 us of 34 at 64 segments (first H200
 * run); one block a (token, head) row whose threads share the segments still left 6 blocks on
 * the device at 6/1/256 batch 1, each walking 128-256 segments of 256 columns (ncu: 113 us of
 * the 134, the main kernel 21). Now block (x, y) = (row, 32-column slice): every block takes the
 * segments' maximum and weights w_s = 2^(m_s - M) into LDS and L = sum l_s w_s (each block the
 * same, in the same order), then its 8 segment lanes x 32 columns sum their segments' columns in
 * four independent chains, and the lanes' sums meet in LDS in a fixed order. Deterministic for a
 * given segment count. m is in log2 units (the main kernel's). */
constexpr int kReduceCols = 32;
constexpr int kReduceLanes = 8;
constexpr int kReduceThreads = kReduceCols * kReduceLanes;
constexpr int kReduceWaves = kReduceThreads / KT_WAVE > 0 ? kReduceThreads / KT_WAVE : 1;

/* max (op 0) or sum (op 1) over the block; every thread gets the result */
template <int kOp> KT_DEV float kt_block_reduce(float v, float *scratch, int tid)
{
#pragma unroll
    for (int w = KT_WAVE / 2; w >= 1; w /= 2) {
        const float o = kt_shfl_xor(v, w);
        v = kOp == 0 ? (v > o ? v : o) : v + o;
    }
    if constexpr (kReduceWaves > 1) {
        if (tid % KT_WAVE == 0) scratch[tid / KT_WAVE] = v;
        kt_barrier();
        v = scratch[0];
#pragma unroll
        for (int i = 1; i < kReduceWaves; i++) v = kOp == 0 ? (v > scratch[i] ? v : scratch[i]) : v + scratch[i];
        kt_barrier();   /* the scratch is reused by the next reduction */
    }
    return v;
}

KT_KERNEL(KT_NAME(_reduce), kReduceThreads)(kt_attn_args a)
{
    KT_SHARED float w[KT_SEGMAX];
    KT_SHARED float scratch[kReduceWaves];
    KT_SHARED float lanes[kReduceLanes][kReduceCols];
    const int tid = kt_thread_id();
    const long long row = kt_block_id_x();            /* token * num_heads + head */
    /* uniform over the block: one segment wrote out itself; bind never gives more than SEGMAX */
    if (row >= (long long)a.num_tokens * a.num_heads || a.num_segments <= 1 || !a.partials ||
        a.num_segments > KT_SEGMAX)
        return;
    const int nseg = a.num_segments, h = (int)(row % a.num_heads);
    const long long tok = row / a.num_heads;
    const float *ml = a.partials + row * nseg * 2;
    const float *acc = a.partials + 2LL * a.num_tokens * a.num_heads * nseg + row * nseg * kD;
    const float sink = a.sinks ? a.sinks[h] * kLog2e : kt_neg_inf();
    /* an empty segment has l = 0 (and m = -inf): weight 0 */
    float mx = sink;
    for (int sg = tid; sg < nseg; sg += kReduceThreads)
        if (ml[2 * sg + 1] > 0.0f && ml[2 * sg] > mx) mx = ml[2 * sg];
    mx = kt_block_reduce<0>(mx, scratch, tid);
    float l = 0.0f;
    for (int sg = tid; sg < nseg; sg += kReduceThreads) {
        const float ls = ml[2 * sg + 1];
        const float ws = ls > 0.0f ? kt_exp2(ml[2 * sg] - mx) : 0.0f;
        w[sg] = ws;
        l += ls * ws;
    }
    l = kt_block_reduce<1>(l, scratch, tid) + (a.sinks ? kt_exp2(sink - mx) : 0.0f);
    kt_barrier();   /* the weights */
    const int c = tid % kReduceCols, lane_s = tid / kReduceCols;
    const int d = kt_block_id_y() * kReduceCols + c;
    float part[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    if (d < kD) {
        int sg = lane_s, u = 0;
        for (; sg < nseg; sg += kReduceLanes, u = (u + 1) & 3) part[u] += acc[(long long)sg * kD + d] * w[sg];
    }
    lanes[lane_s][c] = (part[0] + part[1]) + (part[2] + part[3]);
    kt_barrier();
    if (lane_s == 0 && d < kD) {
        float sum = 0.0f;
#pragma unroll
        for (int i = 0; i < kReduceLanes; i++) sum += lanes[i][c];
        const kt_elem out = kt_from_float<kt_elem>(l > 0.0f ? sum / l : 0.0f);
        ((unsigned short *)a.out)[tok * a.o_stride_tok + (long long)h * a.o_stride_head + d] = out.bits;
    }
}
