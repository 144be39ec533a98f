/* wgmma_tile.h: the parts the wgmma GEMMs (wgmma.hip, wgmma_ws.hip) share: copying a tile into
 * a shared-memory stage in the swizzled K-major layout of arch/sm90_async.h, the grouped order of
 * output tiles, and the in-launch split-K finish of templates/abi/gemm.h. Included after the
 * target's prelude, arch/sm90_async.h and abi/gemm.h. */
#ifndef KT_GEMM_WGMMA_TILE_H
#define KT_GEMM_WGMMA_TILE_H

/* One matrix's share of a stage for one copying thread: rows row0 + i * kRowStep of the tile,
 * k chunk kc8..kc8+7, where kRowStep = copying threads / (BK / 8). */
struct kt_copier {
    const unsigned short *src;   /* element (row0, kc8) of the block's rows, segment start */
    const unsigned short *safe;  /* a valid address to name when nothing is read */
    long long step;              /* elements between the thread's rows: kRowStep * ld */
    int row0, kc8, rows;         /* first row (block-relative), its k, valid rows of the block */
    unsigned dst;                /* swizzled byte offset of (row0, kc8) in the tile */
    bool vec;
};

template <int kRowStep, int kRowBytes>
KT_DEV kt_copier kt_copier_make(const unsigned short *base, int ld, int rows, bool vec, int tid)
{
    constexpr int kChunksPerRow = kRowBytes / 16;
    kt_copier c;
    c.row0 = tid / kChunksPerRow;
    c.kc8 = (tid % kChunksPerRow) * 8;
    c.src = base + (long long)c.row0 * ld + c.kc8;
    c.safe = base;
    c.step = (long long)kRowStep * ld;
    c.rows = rows;
    c.dst = kt_swz_offset(c.row0, c.kc8 / 8, kRowBytes);
    c.vec = vec;
    return c;
}

/* The thread's chunks of a kRows-row tile at K offset k0 (of the segment's k_len) into the tile at
 * shared address tile: rows past c.rows and k past k_len are zeros. cp.async where the rows are
 * 16-byte aligned (the caller waits for them), st.shared element by element where not. kUnroll:
 * chunks unrolled (a tile has at most 32 a thread); 1 keeps the element path's loads few. */
template <int kRows, int kRowStep, int kRowBytes, int kUnroll = 32>
KT_DEV void kt_copy_tile(const kt_copier &c, unsigned tile, int k0, int k_len)
{
    constexpr int kIters = (kRows + kRowStep - 1) / kRowStep;
    const int left = k_len - k0 - c.kc8;                     /* elements of the chunk inside K */
    const int bytes = left >= 8 ? 16 : left > 0 ? 2 * left : 0;
#pragma unroll kUnroll
    for (int i = 0; i < kIters; i++) {
        const int row = c.row0 + i * kRowStep;
        if (kRows % kRowStep != 0 && row >= kRows) break;   /* a tile shorter than the threads */
        const bool live = row < c.rows;
        const unsigned short *p = c.src + k0 + i * c.step;
        const unsigned dst = tile + c.dst + (unsigned)(i * kRowStep * kRowBytes);
        if (c.vec) {
            kt_cp_async16(dst, live && bytes ? p : c.safe, live ? bytes : 0);
        } else {
            unsigned w[4];
#pragma unroll
            for (int j = 0; j < 4; j++) {
                const unsigned lo = live && 2 * j < left ? p[2 * j] : 0u;
                const unsigned hi = live && 2 * j + 1 < left ? p[2 * j + 1] : 0u;
                w[j] = lo | (hi << 16);
            }
            kt_sts16_addr(dst, kt_v16_make(w[0], w[1], w[2], w[3]));
        }
    }
}

/* kt_copy_tile for a tile wholly inside the matrix (every row below c.rows, k0 + BK <= k_len) and
 * 16-byte aligned rows: no predicates, no zero-fill operand, so a chunk costs its cp.async and an
 * address add (the copying warps' issue slots bound a warp-specialized kernel). */
template <int kRows, int kRowStep, int kRowBytes>
KT_DEV void kt_copy_tile_whole(const kt_copier &c, unsigned tile, int k0)
{
    constexpr int kIters = (kRows + kRowStep - 1) / kRowStep;
    const unsigned short *p = c.src + k0;
#pragma unroll
    for (int i = 0; i < kIters; i++) {
        if (kRows % kRowStep != 0 && c.row0 + i * kRowStep >= kRows) break;
        kt_cp_async16_whole(tile + c.dst + (unsigned)(i * kRowStep * kRowBytes), p + i * c.step);
    }
}

/* Linear block id -> output tile (tile_m, tile_n), walking kGroupM tile rows at a time so that the
 * blocks in flight together reuse each other's A rows and W columns in L2. */
template <int kGroupM>
KT_DEV void kt_grouped_tile(int id, int tiles_n, int tiles_m, int &tile_m, int &tile_n)
{
    const int group = id / (kGroupM * tiles_n);
    const int first = group * kGroupM;
    const int rows = tiles_m - first < kGroupM ? tiles_m - first : kGroupM;
    const int in = id - group * kGroupM * tiles_n;
    tile_m = first + in % rows;
    tile_n = in / rows;
}

/* Split-K in the launch (templates/abi/gemm.h), after every thread's slab stores: the block that
 * arrives last at the tile's counter adds the slabs in segment order and writes C. Every thread of
 * the block calls it; last_arrival is a shared flag. */
template <class T, int kBM, int kBN, int kSK, int kThreads>
KT_DEV void kt_splitk_finish(const kt_gemm_args &args, int tile_m, int tile_n, int tid, bool &last_arrival)
{
    kt_fence_device();
    kt_barrier();
    const int gx = (args.n + kBN - 1) / kBN, gy = (args.m + kBM - 1) / kBM;
    const int ntiles = gx * gy, word = (tile_m * gx + tile_n) % KT_GEMM_TILE_COUNTERS;
    unsigned *const counters = (unsigned *)(args.partials + args.partials_elems) - KT_GEMM_TILE_COUNTERS;
    if (tid == 0) {
        /* tiles share a counter only past KT_GEMM_TILE_COUNTERS of them; its last block reduces all */
        const unsigned sharing = (unsigned)((ntiles - 1 - word) / KT_GEMM_TILE_COUNTERS + 1);
        last_arrival = kt_atomic_add_device(&counters[word], 1u) + 1u == sharing * kSK;
    }
    kt_barrier();
    if (!last_arrival) return;
    kt_fence_device();
    T *const c = (T *)args.c;
    const long long mn = (long long)args.m * args.n;
    for (int tile = word; tile < ntiles; tile += KT_GEMM_TILE_COUNTERS) {
        const int bn0 = (tile % gx) * kBN, bm0 = (tile / gx) * kBM;
        const int rn = args.n - bn0 < kBN ? args.n - bn0 : kBN;
        const int rm = args.m - bm0 < kBM ? args.m - bm0 : kBM;
        for (int x = tid; x < kBM * kBN; x += kThreads) {
            const int r = x / kBN, cc = x % kBN;
            if (r >= rm || cc >= rn) continue;
            const long long at = (long long)(bm0 + r) * args.n + bn0 + cc;
            float s = kt_load_coherent(args.partials + at);   /* from slab 0 itself: -0.0 survives */
#pragma unroll
            for (int q = 1; q < kSK; q++) s += kt_load_coherent(args.partials + q * mn + at);
            c[(long long)(bm0 + r) * args.ldc + bn0 + cc] = kt_from_float<T>(s);
        }
    }
    if (tid == 0) counters[word] = 0u;   /* as the next launch expects it */
}

#endif
