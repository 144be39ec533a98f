/* reduce.h: the split-KV merge kernel (KT_NAME(_reduce)) of the attention templates (decode.hip,
 * decode_ws.hip, prefill.hip), included at file scope after the template's namespace, which defines kD and
 * kt_elem. Partials: {m, l} then head_size accumulators (already times v_scale) per (token, head,
 * segment), as runtime/op_attn.c sizes them. */
/* The split-KV merge. The seed's lesson, twice over: the reduce is what batch 1 pays for. A reduce
 * whose every thread walks the whole segment list cost ~30 us of 34 at 64 segments (first H200
 * run); one block a (token, head) row whose threads share the segments still left 6 blocks on
 * the device at 6/1/256 batch 1, each walking 128-256 segments of 256 columns (ncu: 113 us of
 * the 134, the main kernel 21). So a row's columns may be sliced over gridDim.y blocks (a power of
 * two, from kD / 256 to kD / 32: runtime/op_attn.c takes as many as the rows need to fill the
 * device): block (x, y) = (row, slice of C = kD / gridDim.y columns), its 256 threads C columns
 * x 256 / C segment lanes. Every block takes the segments' maximum and weights w_s = 2^(m_s - M)
 * into LDS and L = sum l_s w_s (each block the same, in the same order), its lanes sum their
 * segments' columns in four chains, and the lanes' sums meet in LDS in a fixed order:
 * deterministic for a given segment count and launch. A lane's accumulators are loaded before the
 * statistics, up to kt_reduce_row's N at once, so that batch 1 waits for about one round trip
 * to L2 instead of one per few segments. Slicing is not free: ncu on the H200 at 16/2/256 q 4
 * batch 8 (512 rows, 24 segments) put the 8-slice reduce at 20.7 us against the main kernel's 227,
 * issue-bound on eight copies of each row's statistics; rows that fill the device take one slice.
 * m is in log2 units (the main kernel's). */
constexpr int kReduceThreads = 256;
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

struct kt_reduce_lds {
    float w[KT_SEGMAX];
    float scratch[kReduceWaves];
    float lanes[kReduceThreads];
};

/* a lane's accumulators i0 .. i0 + N - 1 (segment lane + i * L), zero past the segments; L is a
 * constant so that the loads are one base and immediate offsets */
template <int N, int L> KT_DEV void kt_reduce_load(float (&av)[N], const float *col, int lane_s, int i0, int nseg)
{
#pragma unroll
    for (int i = 0; i < N; i++) av[i] = lane_s + (i0 + i) * L < nseg ? col[(i0 + i) * L * kD] : 0.0f;
}
template <int N, int L> KT_DEV void kt_reduce_add(float (&part)[4], const float (&av)[N], const float *w, int lane_s, int i0, int nseg)
{
#pragma unroll
    for (int i = 0; i < N; i++) {
        const int sg = lane_s + (i0 + i) * L;
        if (sg < nseg) part[(i0 + i) & 3] += av[i] * w[sg];
    }
}

/* One row's merge (the block's slice of it) by L segment lanes of 256 / L columns, a lane's first N
 * accumulators loaded up front; N is chosen per launch from the segments a lane has
 * (block-uniform), so that few segments do not pay for a long unrolled list. */
template <int N, int L> KT_DEV void kt_reduce_row(const kt_attn_args &a, kt_reduce_lds &sm, long long row, int tid)
{
    constexpr int kCols = kReduceThreads / L;
    /* rows (tokens x heads) stay under 2^31 (kt_attn_problem_of_args): a 32-bit division, not a
     * 64-bit one (a subroutine on every target) on batch 1's critical path */
    const int nseg = a.num_segments, h = (int)row % a.num_heads;
    const long long tok = (int)row / a.num_heads;
    const int c = tid % kCols, lane_s = tid / kCols, d = kt_block_id_y() * kCols + c;
    const int per_lane = (nseg + L - 1) / L;
    const float *ml = a.partials + row * nseg * 2;
    const float *col = a.partials + 2LL * a.num_tokens * a.num_heads * nseg + row * nseg * kD + (long long)lane_s * kD + d;
    float av[N];
    kt_reduce_load<N, L>(av, col, lane_s, 0, nseg);
    const float sink = a.sinks ? a.sinks[h] * kLog2e : kt_neg_inf();
    /* an empty segment has l = 0 (and m = -inf): weight 0 */
    float mx = sink;
    for (int sg = tid; sg < nseg; sg += kReduceThreads)
        if (ml[2 * sg + 1] > 0.0f && ml[2 * sg] > mx) mx = ml[2 * sg];
    mx = kt_block_reduce<0>(mx, sm.scratch, tid);
    float l = 0.0f;
    for (int sg = tid; sg < nseg; sg += kReduceThreads) {
        const float ls = ml[2 * sg + 1];
        const float ws = ls > 0.0f ? kt_exp2(ml[2 * sg] - mx) : 0.0f;
        sm.w[sg] = ws;
        l += ls * ws;
    }
    l = kt_block_reduce<1>(l, sm.scratch, tid) + (a.sinks ? kt_exp2(sink - mx) : 0.0f);
    kt_barrier();   /* the weights */
    float part[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    kt_reduce_add<N, L>(part, av, sm.w, lane_s, 0, nseg);
    for (int i0 = N; i0 < per_lane; i0 += 8) {   /* past N: eight loads in flight at a time */
        float rest[8];
        kt_reduce_load<8, L>(rest, col, lane_s, i0, nseg);
        kt_reduce_add<8, L>(part, rest, sm.w, lane_s, i0, nseg);
    }
    sm.lanes[tid] = (part[0] + part[1]) + (part[2] + part[3]);
    kt_barrier();
    if (lane_s == 0) {
        float sum = 0.0f;
#pragma unroll
        for (int i = 0; i < L; i++) sum += sm.lanes[i * kCols + c];
        const kt_elem out = kt_from_float<kt_elem>(l > 0.0f ? sum / l : 0.0f);
        ((unsigned short *)a.out)[tok * a.o_stride_tok + (long long)h * a.o_stride_head + d] = out.bits;
    }
}

KT_KERNEL(KT_NAME(_reduce), kReduceThreads)(kt_attn_args a)
{
    KT_SHARED kt_reduce_lds sm;
    const int tid = kt_thread_id();
    const long long row = kt_block_id_x();            /* token * num_heads + head */
    const int slices = kt_grid_blocks_y();
    /* Launched early (the variant's PD axis: runtime/op_attn.c): its launch overlaps the main
     * kernel's tail, and nothing is read or written before that kernel has finished. Every block
     * waits, even one about to write nothing, so that this grid never ends before the main one
     * (the stream's next work waits for this grid only). The graph node of a dependent launch
     * cost ~1 us of batch 1's ~3.4 for the reduce (bench/NOTES.md, twelfth session). */
    kt_grid_dependency_wait();
    /* uniform over the block: one segment wrote out itself; bind never gives more than SEGMAX; a
     * slice count the layout cannot take (op_attn.c gives powers of two from kD / 256 to kD / 32)
     * writes nothing */
    if (row >= (long long)a.num_tokens * a.num_heads || a.num_segments <= 1 || !a.partials ||
        a.num_segments > KT_SEGMAX || slices < 1 || kD % slices)
        return;
    /* 32 columns a slice (the most slices: few rows) keeps all of a lane's segments in flight;
     * wider slices have rows enough to hide their latency, eight loads at a time */
    const int nseg = a.num_segments;
    switch (kD / slices) {
    case 32:
        if (nseg <= 8 * 8) kt_reduce_row<8, 8>(a, sm, row, tid);
        else kt_reduce_row<32, 8>(a, sm, row, tid);
        break;
    case 64: kt_reduce_row<8, 4>(a, sm, row, tid); break;
    case 128: kt_reduce_row<8, 2>(a, sm, row, tid); break;
    case 256: kt_reduce_row<8, 1>(a, sm, row, tid); break;
    default: break;
    }
}
