/* decode.hip: one gated delta-net layer step for a batch of sequences, in one launch: the causal
 * conv1d update of the q/k/v channels, q/k L2 norms, the gates, the delta rule on the fp32 state
 * in place, the output and, optionally, the gated RMSNorm (vLLM's decode chain for Qwen3-Next /
 * Qwen3.5, fused). ABI and the exact math: templates/abi/gdn.h; launch geometry and law:
 * runtime/op_gdn.c. The recipe's axes (decode.lua) read as
 *   VK   the state layout the kernel reads and writes (0: [.., K, V]; 1: K-last),
 *   DK   the key head size, compiled in (the state's rows),
 *   DV   the value head size, compiled in (its columns),
 *   BV   value columns a block owns (grid.x = dv / BV; under the gated norm, BV < dv splits a
 *        head over dv / BV blocks and the last of them to finish normalizes the head's rows),
 *   NW   warps (waves) a block,
 *   KPT  state rows a thread holds (keys per thread); it holds KPT x VPT of the block's DK x BV
 *        state in registers, VPT = BV / (threads * KPT / DK),
 *   MT   tokens a sequence the variant steps at most (1: plain decode, whose conv inputs take a
 *        quarter of the registers; 8: speculative verify). Any variant replays up to the log's
 *        KT_GDN_MAX_TOKENS accepted tokens,
 *   OB   blocks the register allocator must keep resident on an SM (0: its own choice; NVIDIA
 *        only): with the gated norm a block holds a whole head's state, 64 floats a thread at
 *        8 warps, and one block an SM leaves the state's stream idle while it computes,
 *   PF   1: the OB forms prefetch into L2 the state of the block the device starts next (below).
 *
 * Grid (dv / BV, HV, batch): block (vb, h, i) owns columns [vb*BV, vb*BV + BV) of value head h's
 * state for sequence i, for every token of the sequence (PS > 0: a 1-D grid of PS blocks a unit,
 * each stepping those items in turn, x fastest). Decode is a state stream (64 KiB a
 * 128 x 128 head, read and written once a step whatever the token count) with a little compute
 * a token, so the block's first act is to issue its state loads; the conv, the gates and the
 * norms run while they are in flight. Threads are laid over the tile so that the state moves in
 * 16-byte pieces along its contiguous axis (columns for VK 0, rows for VK 1). Both sums over
 * the rows a token needs (S^T k and S^T q, both of the decayed state: o = S'^T q + d (k . q))
 * are reduced together, in-thread, by butterflies in the wave, then through LDS across waves,
 * at OB 0 with the rows' k.k, q.q and k.q beside them (the L2 norms scale the sums after): one
 * barrier a token (two with a head's norm in one block, unless each wave holds all its columns).
 *
 * The conv: each block convolves the channels it reads (its key head's q and k, its own v
 * columns), a thread a channel, every token at once. Every input a thread's channels need (the
 * history columns, the tokens, the replayed tokens' columns) is loaded into registers before any
 * is used, so the conv costs one memory round trip behind the metadata, whatever the token count;
 * the new conv state is stored from those registers, never read back. The v channels are the
 * block's alone, so it rewrites their conv state at once; the q/k channels are shared by the
 * blocks of every value head of the key head, so each counts its reads and the last to arrive
 * rewrites them (abi) at its end, from a copy of their inputs in LDS: the count's round trip
 * flies behind the step's tokens instead of before them. */
#include "abi/gdn.h"
#include "gdn/gdn_ops.h"
#include "arch/copy_ops.h"

/* KT_GDN_TRACE (a measurement build, NVIDIA only, never in a database that serves): thread 0 and
 * the last thread of each block store the SM clock at the step's phase boundaries into spec_log
 * (a plain step does not read it), 32 words a block (16 each), thread 0's word 15 the global timer
 * at entry and 14 at its end: where a step's time goes (tests/device/trace_gdn.py reads them) */
#ifdef KT_GDN_TRACE
#define KT_TR(i) do { const int tr_ = kt_thread_id(); \
    if ((tr_ == 0 || tr_ == blockDim.x - 1) && args.spec_log && !args.num_accepted) { \
    unsigned long long c_; \
    if ((i) >= 14) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(c_) :: "memory"); \
    else asm volatile("mov.u64 %0, %%clock64;" : "=l"(c_) :: "memory"); \
    ((unsigned long long *)args.spec_log)[(((long long)blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x) * 32 \
                                          + (tr_ ? 16 : 0) + (i)] = c_; } } while (0)
#else
#define KT_TR(i) do { } while (0)
#endif

#ifndef KT_PS
#define KT_PS 0   /* kernels built before the axis */
#endif
#ifndef KT_PF
#define KT_PF 0   /* kernels built before the axis */
#endif

namespace {

constexpr int kNT = KT_NW * KT_WAVE;         /* threads */
constexpr int kTI = KT_DK / KT_KPT;          /* threads along the rows (keys) */
constexpr int kTJ = kNT / kTI;               /* threads along the block's columns */
constexpr int kVPT = KT_BV / kTJ;            /* columns a thread */
constexpr int kMaxT = KT_MT;                 /* tokens a sequence this variant steps at most */
constexpr int kMaxNA = KT_GDN_MAX_TOKENS;    /* logged tokens it can replay (the log's capacity) */
constexpr int kMaxKW = KT_GDN_MAX_KW;
constexpr int kCh = 2 * KT_DK + KT_BV;       /* channels a block convolves: q, k, its v */
constexpr int kRounds = (kCh + kNT - 1) / kNT;   /* channels a thread */
constexpr int kE = kMaxKW - 1 + kMaxT;       /* a channel's inputs E (history, then tokens), at most */
constexpr int kR = kMaxKW - 1 + kMaxNA;      /* a k channel's replayed inputs, at most */
constexpr int kLogV4 = KT_BV / 2;            /* a token's log entries of the block's columns, in 16-byte pieces */
constexpr int kLogRounds = (kMaxNA * kLogV4 + kNT - 1) / kNT;
constexpr bool kSplitNorm = KT_BV < KT_DV;   /* the gated norm, where used, over dv / BV blocks */
/* the step's q/k norms reduced beside the row sums (no pass of their own before the tokens) where
 * the register allocator is free (OB 0); held to two blocks an SM (OB 2: large grids, throughput
 * not latency) the three more sums spilled every sm_90a vk0 BV 128 NW 8 form, so there they keep
 * their pass */
constexpr bool kFoldNorms = KT_OB == 0;
constexpr bool kZAhead = !kSplitNorm && KT_OB == 0 && kVPT <= 8;   /* the gated norm's inputs loaded with the conv's */
/* the taps, the replayed log's and the gates' inputs loaded ahead (the taps and the per-head ones
 * before the metadata arrives), but at OB 2, where their registers beside the conv's spilled (and
 * the other block hides their round trip) */
constexpr bool kAuxAhead = KT_OB == 0;
/* the replayed tokens' k inputs (history columns 0 .. na + kw - 2 of the k channels) loaded with
 * the conv's too, in the speculative forms at OB 0 whose k channels all fall in one channel round
 * (kKRound: 256 or more threads hold them in round 0, 128 in round 1), not a round trip after the
 * conv */
constexpr bool kReplayAhead = KT_MT > 1 && KT_OB == 0 && kNT >= KT_DK;
constexpr int kKRound = KT_DK / kNT < kRounds ? KT_DK / kNT : 0;
constexpr int kTail = (kMaxT * KT_DV + kNT - 1) / kNT;   /* a thread's outputs in the split norm's rows */
/* the gated norm's sum of squares within each wave, no barrier, where every wave holds all the
 * block's columns (VK 0 with the columns' threads within a wave): its lanes below kTJ hold each
 * column once */
constexpr bool kNormInWave = !KT_VK && kTJ <= KT_WAVE;
/* several tokens a step (MT > 1): the decay kept as a block-uniform scale of the thread's piece
 * (the state is alpha * s) instead of a multiply of every element a token; the row sums take the
 * scale after their reduction, the update divides it out of d (a few columns, not the piece), and
 * the piece takes it once, at the end, where the state is stored */
constexpr bool kLazyDecay = KT_MT > 1;
/* PS > 0: a persistent grid (PS blocks a compute unit) whose blocks step work items (a head's
 * columns of a sequence) in turn; where the target copies global -> LDS without registers
 * (KT_ASYNC_COPY), the next item's state is copied into the block's LDS while this item computes,
 * so each block keeps a head's state in flight through its whole life instead of only at its
 * start; the item takes its state from LDS where it first needs it (no registers held while it
 * flies). Elsewhere the loop alone (the item loads its state there, one round trip) */
constexpr bool kPersist = KT_PS > 0;
constexpr bool kPrefetch = kPersist && KT_ASYNC_COPY;
/* PF (OB > 0 without PS: the state stream's forms, a grid of many waves of blocks): each block
 * brings into L2, behind its own loads, the state piece of the block args.ahead after it (the
 * device's resident blocks: about the one that starts when this one ends), so that block's loads
 * return at L2's latency and the stream's DRAM reads go on while the resident blocks compute */
constexpr bool kL2Ahead = KT_PF && KT_OB > 0 && !kPersist && kt_has_l2_prefetch;
constexpr unsigned kBufBytes = kPersist ? KT_DK * KT_BV * 4u : 0u;   /* the LDS given at launch */
static_assert(kMaxT >= 1 && kMaxT <= KT_GDN_MAX_TOKENS, "MT: 1 to the ABI's tokens a sequence");

static_assert(KT_DK % KT_KPT == 0 && kNT % kTI == 0, "KPT divides DK, and DK / KPT divides the threads");
static_assert(kTJ >= 1 && KT_BV % kTJ == 0 && kVPT >= 1, "the threads' columns tile BV");
static_assert(KT_DV % KT_BV == 0, "BV divides DV");
static_assert((kTI & (kTI - 1)) == 0 && (kTJ & (kTJ - 1)) == 0, "powers of two along both axes");
static_assert(!kSplitNorm || KT_DV % KT_WAVE == 0, "the split norm sums a token's dv outputs by whole waves");

/* Thread t's place: VK 0 runs the columns fastest (a wave reads along a row), VK 1 the rows. */
KT_DEV int kt_ti(int t) { return KT_VK ? t % kTI : t / kTJ; }
KT_DEV int kt_tj(int t) { return KT_VK ? t / kTI : t % kTJ; }
/* The state row (key) of the thread's r-th: VK 0, rows ti*KPT + r (a wave runs along the columns,
 * so a thread's rows need not be adjacent). VK 1 runs down a column, so its rows go in KPT / 4
 * pieces of 4, piece m at rows 4 (ti + kTI m) .. + 3: the kTI lanes of a column read adjacent 16-byte
 * pieces with each load, whole sectors (whole 128-byte lines from kTI 8 on); rows ti*KPT .. + KPT - 1 put those lanes
 * KPT * 4 bytes apart, so each load used half of every sector it touched (the K-last forms at batch
 * 128 x hv 32 moved their state at 50-58% of copy against [.., K, V]'s 85%, call E1). */
static_assert(!KT_VK || KT_KPT % 4 == 0, "VK 1: the thread's rows in pieces of 4");
KT_DEV int kt_row(int ti, int r) { return KT_VK ? 4 * (ti + kTI * (r / 4)) + r % 4 : ti * KT_KPT + r; }

/* The sum over rows: butterflies over the wave's lanes that share the thread's columns (xor
 * masks kShufLo .. kShufHi/2), then kParts partials through LDS. */
constexpr int kShufLo = KT_VK ? 1 : kTJ;
constexpr int kShufHi = KT_VK ? (kTI < KT_WAVE ? kTI : KT_WAVE) : KT_WAVE;
constexpr int kParts = KT_VK ? (kTI > KT_WAVE ? kTI / KT_WAVE : 1) : (kTJ < KT_WAVE ? KT_NW : kTI);
KT_DEV int kt_part(int t) { return KT_VK ? (kt_ti(t) / KT_WAVE) : (kTJ < KT_WAVE ? kt_wave_id() : kt_ti(t)); }
/* the lane that writes its wave's partial for its columns */
KT_DEV bool kt_part_writer(int t)
{
    if constexpr (KT_VK) return kTI > KT_WAVE ? kt_lane_id() == 0 : true;
    else return kTJ < KT_WAVE ? kt_lane_id() < kTJ : true;
}

struct alignas(8) kt_w2 { unsigned a, b; };

KT_DEV float kt_bits_f(unsigned u) { return __builtin_bit_cast(float, u); }
KT_DEV unsigned kt_f_bits(float f) { return __builtin_bit_cast(unsigned, f); }

/* N contiguous floats, in the widest aligned pieces the count allows (the callers keep the
 * addresses aligned to them: abi's 16-byte rule) */
template <int N> KT_DEV void kt_ld_f32(const float *p, float *d)
{
    if constexpr (N % 4 == 0) {
#pragma unroll
        for (int k = 0; k < N / 4; k++) {
            const kt_v16 v = *(const kt_v16 *)(p + 4 * k);
#pragma unroll
            for (int e = 0; e < 4; e++) d[4 * k + e] = kt_bits_f(kt_v16_word(v, e));
        }
    } else if constexpr (N % 2 == 0) {
#pragma unroll
        for (int k = 0; k < N / 2; k++) {
            const kt_w2 v = *(const kt_w2 *)(p + 2 * k);
            d[2 * k] = kt_bits_f(v.a);
            d[2 * k + 1] = kt_bits_f(v.b);
        }
    } else {
#pragma unroll
        for (int k = 0; k < N; k++) d[k] = p[k];
    }
}

template <int N> KT_DEV void kt_st_f32(float *p, const float *d)
{
    if constexpr (N % 4 == 0) {
#pragma unroll
        for (int k = 0; k < N / 4; k++)
            *(kt_v16 *)(p + 4 * k) = kt_v16_make(kt_f_bits(d[4 * k]), kt_f_bits(d[4 * k + 1]), kt_f_bits(d[4 * k + 2]),
                                                 kt_f_bits(d[4 * k + 3]));
    } else if constexpr (N % 2 == 0) {
#pragma unroll
        for (int k = 0; k < N / 2; k++) {
            kt_w2 v;
            v.a = kt_f_bits(d[2 * k]);
            v.b = kt_f_bits(d[2 * k + 1]);
            *(kt_w2 *)(p + 2 * k) = v;
        }
    } else {
#pragma unroll
        for (int k = 0; k < N; k++) p[k] = d[k];
    }
}

/* The thread's KPT x VPT piece of the head's state: element (r, c) is state row kt_row(ti, r),
 * column j0 + c (j0 = the block's first column + tj*VPT), at s[r * VPT + c]. */
template <bool Store> KT_DEV void kt_state_io(float *head, int ti, int j0, float (&s)[KT_KPT * kVPT])
{
    if constexpr (!KT_VK) {
#pragma unroll
        for (int r = 0; r < KT_KPT; r++) {
            float *p = head + kt_row(ti, r) * KT_DV + j0;
            if constexpr (Store) kt_st_f32<kVPT>(p, s + r * kVPT);
            else kt_ld_f32<kVPT>(p, s + r * kVPT);
        }
    } else {
#pragma unroll
        for (int c = 0; c < kVPT; c++) {
            float col[KT_KPT];
            if constexpr (Store) {
#pragma unroll
                for (int r = 0; r < KT_KPT; r++) col[r] = s[r * kVPT + c];
            }
#pragma unroll
            for (int m = 0; m < KT_KPT / 4; m++) {
                float *p = head + (j0 + c) * KT_DK + kt_row(ti, 4 * m);
                if constexpr (Store) kt_st_f32<4>(p, col + 4 * m);
                else kt_ld_f32<4>(p, col + 4 * m);
            }
            if constexpr (!Store) {
#pragma unroll
                for (int r = 0; r < KT_KPT; r++) s[r * kVPT + c] = col[r];
            }
        }
    }
}

/* The thread's piece in the block's state buffer (PS): the head's DK x BV block in the state's
 * own layout, so that a wave's 16-byte pieces are contiguous in both. Store: issue the copies of
 * the piece from the state at head (asynchronous, no registers); load: read the piece back. */
KT_DEV int kt_buf_at(int i, int j) { return KT_VK ? j * KT_DK + i : i * KT_BV + j; }
template <bool Issue> KT_DEV void kt_buf_io(const float *head, float *buf, int ti, int tj, int j0, float (&s)[KT_KPT * kVPT])
{
    const int jb = tj * kVPT;
    if constexpr (!KT_VK) {
#pragma unroll
        for (int r = 0; r < KT_KPT; r++) {
            const int i = kt_row(ti, r);
            if constexpr (Issue) {
#pragma unroll
                for (int k = 0; k < kVPT / 4; k++)
                    kt_copy16_async(kt_lds_addr(buf + kt_buf_at(i, jb + 4 * k)), head + i * KT_DV + j0 + 4 * k);
            } else {
                kt_ld_f32<kVPT>(buf + kt_buf_at(i, jb), s + r * kVPT);
            }
        }
    } else {
#pragma unroll
        for (int c = 0; c < kVPT; c++) {
            if constexpr (Issue) {
#pragma unroll
                for (int k = 0; k < KT_KPT / 4; k++)
                    kt_copy16_async(kt_lds_addr(buf + kt_buf_at(kt_row(ti, 4 * k), jb + c)),
                                    head + (j0 + c) * KT_DK + kt_row(ti, 4 * k));
            } else {
                float col[KT_KPT];
#pragma unroll
                for (int k = 0; k < KT_KPT / 4; k++) kt_ld_f32<4>(buf + kt_buf_at(kt_row(ti, 4 * k), jb + c), col + 4 * k);
#pragma unroll
                for (int r = 0; r < KT_KPT; r++) s[r * kVPT + c] = col[r];
            }
        }
    }
}

/* Block channel c's place in the qkv row and the conv state (abi): its key head's q (c < dk),
 * then its k, then the block's own v columns */
KT_DEV int kt_conv_channel(int c, int hk, int H, int h, int vb)
{
    return c < KT_DK ? hk * KT_DK + c
           : c < 2 * KT_DK ? (H + hk) * KT_DK + (c - KT_DK)
                           : 2 * H * KT_DK + h * KT_DV + vb * KT_BV + (c - 2 * KT_DK);
}

/* A channel's inputs E (abi: history column na + u for u < kw - 1, then the tokens; zero past
 * them), every load issued before any is used: one predicated load an input from a selected
 * address (a branch an input kept the loads apart) */
KT_DEV void kt_conv_load(const unsigned short *col, const unsigned short *x, int na, int n, int kw,
                         long long col_stride, long long x_stride, unsigned short (&e)[kE])
{
#pragma unroll
    for (int u = 0; u < kE; u++) {
        const bool hist = u < kw - 1;
        const unsigned short *p = hist ? col + (na + u) * col_stride : x + (u - (kw - 1)) * x_stride;
        e[u] = u < kw - 1 + n ? *p : (unsigned short)0;
    }
}

/* SiLU of the conv over raw taps w (zero past kw) of the inputs from u0 on (the unrolled loops keep
 * every index static). A zero tap still multiplies the input past the window (kw < kMaxKW): a
 * non-finite activation there (a later token of the step, a replayed column) makes this output
 * NaN too. The guard that skips those taps pushed the batch-128 form (bv128 kpt16 OB 2) past its
 * 128 registers (48 bytes spilled): finite activations are the contract (abi/gdn.h, step 1) */
template <int N> KT_DEV float kt_conv_at(const unsigned short (&e)[N], const unsigned short (&w)[kMaxKW], int u0)
{
    float y = 0.0f;
#pragma unroll
    for (int j = 0; j < kMaxKW; j++)
        if (u0 + j < N) y += kt_to_float(kt_elem{w[j]}) * kt_to_float(kt_elem{e[u0 + j]});
    return kt_silu_fast(y);
}

/* Thread t's channel in conv round ro: round 0 from the first thread up, later rounds (a remainder
 * of channels short of a round) from the last thread down, away from warp 0, which holds the
 * gates and the counts */
KT_DEV int kt_round_channel(int t, int ro) { return ro == 0 ? t : ro * kNT + (kNT - 1 - t); }

/* A channel's new conv state (abi) from its inputs: plain, column u = E[n + u] for u < kw - 1;
 * speculative, column u = E[u] for u < kw - 1 + n. Only stores: every input is already held. */
template <typename Src> KT_DEV void kt_conv_store(unsigned short *col, const Src &e, int n, int kw, bool spec,
                                                  long long col_stride)
{
#pragma unroll
    for (int m = 0; m < kE; m++) {
        if (spec ? m < kw - 1 + n : m >= n && m < n + kw - 1)
            col[(spec ? m : m - n) * col_stride] = e[m];
    }
}

/* what the block's threads share */
struct kt_gdn_smem {
    float y[kMaxT][kCh];           /* conv outputs of the step's tokens: q | k | the block's v */
    float yr[kMaxNA][KT_DK];       /* k of the logged tokens replayed (speculative) */
    unsigned short eqk[2 * KT_DK][kE];   /* the q/k channels' inputs, for the last reader's rewrite */
    kt_v16 log[kMaxNA][kLogV4];     /* the replayed tokens' log entries {d, g} of the block's columns */
    float nq[kMaxT], nk[kMaxT], kq[kMaxT], nkr[kMaxNA];   /* q's norm * scale, k's norm, k.q (unless
                                                            folded); the replayed tokens' k norms */
    float g[kMaxT], beta[kMaxT], dec[kMaxT];   /* dec = e^g */
    float red[2][2][kParts > 1 ? kParts : 1][KT_BV];     /* row sums: parity, {S^T k, S^T q} */
    float red3[2][kParts > 1 && kFoldNorms ? kParts : 1][4];   /* and the token's k.k, q.q, k.q */
    float nrm[2][KT_NW];           /* the gated norm's sum of squares */
    float nsq[kMaxT][kSplitNorm ? KT_DV / KT_WAVE : 1];   /* the split norm's: a token's, by waves */
    int writer;                    /* this block rewrites the q/k conv state */
    int last;                      /* this block is its head's last: it normalizes (split norm) */
};

/* Work item w's place: columns vb of value head h of sequence seq (the grid's x, y, z order) */
struct kt_item { int vb, h, seq; };
KT_DEV kt_item kt_item_of(int w, int hv)
{
    constexpr int nvb = KT_DV / KT_BV;
    return kt_item{w % nvb, (w / nvb) % hv, w / nvb / hv};
}

/* head h's state in slot `slot` of the pool */
KT_DEV float *kt_state_head(const kt_gdn_decode_args &args, int slot, int h)
{
    return args.ssm_state + (long long)slot * args.ssm_slot_stride + (long long)h * KT_DK * KT_DV;
}

/* kL2Ahead: the lines of the state piece of columns vb of the head at `head` into L2, spread over
 * the block's threads */
KT_DEV void kt_prefetch_piece(const float *head, int vb)
{
    constexpr int rows = KT_VK ? KT_BV : KT_DK, len = KT_VK ? KT_DK : KT_BV;   /* contiguous runs */
    constexpr int lines = (len + 31) / 32;   /* 128-byte lines a run (a short run: its line) */
    for (int l = kt_thread_id(); l < rows * lines; l += kNT) {
        const int r = l / lines, x = 32 * (l % lines);
        kt_prefetch_l2(KT_VK ? head + (long long)(vb * KT_BV + r) * KT_DK + x : head + (long long)r * KT_DV + vb * KT_BV + x);
    }
}

/* PS with the copy: issue the copy of item w's state piece into buf, if the item steps (tokens, a
 * slot); whether it did */
KT_DEV bool kt_prefetch(const kt_gdn_decode_args &args, float *buf, kt_item w, int n, int slot)
{
    if (n <= 0 || n > kMaxT || slot < 0) return false;   /* uniform over the block */
    const int t = kt_thread_id(), ti = kt_ti(t), tj = kt_tj(t);
    const float *head = kt_state_head(args, slot, w.h);
    float none[KT_KPT * kVPT];
    kt_buf_io<true>(head, buf, ti, tj, w.vb * KT_BV + tj * kVPT, none);
    kt_copy_commit();
    return true;
}

/* One work item: the step of columns [vb*BV, vb*BV + BV) of value head h for sequence seq. PS:
 * pre says buf holds its state (copied during the item before), next is the block's next item
 * (-1: none), and the return says whether this item issued the copy of next's state. */
KT_DEV bool kt_gdn_item(const kt_gdn_decode_args &args, kt_gdn_smem &sm, float *buf, int vb, int h, int seq, bool pre,
                        int next)
{
    KT_TR(0);
    KT_TR(15);

    const int t = kt_thread_id();
    const int t0 = args.query_start_loc[seq];
    const int t1 = args.query_start_loc[seq + 1];
    const int slot = args.state_indices[seq];
    const int acc = args.num_accepted ? args.num_accepted[seq] : 0;
    /* PS with the copy: the next item's metadata, a whole item ahead of its use */
    const kt_item nx = kt_item_of(next < 0 ? 0 : next, args.num_v_heads);
    int nx_n = 0, nx_slot = -1;
    if (kPrefetch && next >= 0) {
        nx_n = args.query_start_loc[nx.seq + 1] - args.query_start_loc[nx.seq];
        nx_slot = args.state_indices[nx.seq];
    }
    /* PF: the item args.ahead blocks on (the grid's x, y, z order) and its slot. Where ptxas fits
     * it (MT 1 at 128 registers), the slot is read with this item's metadata; elsewhere after the
     * state's loads are in flight (an L2 hit they outlast), since holding it through the prologue
     * spilled the MT 8 forms, and reading it late spilled the MT 1 ones */
    constexpr bool kAheadEarly = KT_MT == 1;
    constexpr int nvb = KT_DV / KT_BV;
    /* recomputed where used: held through the prologue, the item spilled registers */
    auto ahead_item = [&]() { return ((long long)seq * args.num_v_heads + h) * nvb + vb + args.ahead; };
    auto ahead = [&]() { return kL2Ahead && args.ahead > 0 && ahead_item() < (long long)nvb * args.num_v_heads * args.batch; };
    int ax_slot = -1;
    if (kAheadEarly && ahead()) ax_slot = args.state_indices[ahead_item() / nvb / args.num_v_heads];

    /* ---- in the metadata's shadow, what needs the parameters alone: the key head (two integer
     * divisions, which the compiler keeps below the early return), the thread's place, the taps
     * (raw), the gates' per-head inputs, the norm's weights ---- */
    const int H = args.num_k_heads, HV = args.num_v_heads, kw = args.conv_kw;
    constexpr int dv = KT_DV;   /* compiled in: the state's row offsets are immediates */
    const int hk = h / (HV / H);
    const int ti = kt_ti(t), tj = kt_tj(t);
    const int j0 = vb * KT_BV + tj * kVPT;
    const bool rep_thread = ti == 0;   /* one thread a column set writes out and the log */
    const bool gated = args.norm_weight != nullptr;   /* grid-uniform */
    const unsigned short *cw = (const unsigned short *)args.conv_weight;
    const unsigned short *nw = (const unsigned short *)args.norm_weight;
    int gc[kRounds];   /* the thread's channels in the qkv row and the conv state */
    unsigned short w[kRounds][kMaxKW];
    auto load_taps = [&]() {
#pragma unroll
        for (int ro = 0; ro < kRounds; ro++) {
            const int c = kt_round_channel(t, ro);
            gc[ro] = kt_conv_channel(c < kCh ? c : 0, hk, H, h, vb);
#pragma unroll
            for (int j = 0; j < kMaxKW; j++) w[ro][j] = c < kCh && j < kw ? cw[(long long)gc[ro] * kw + j] : (unsigned short)0;
        }
    };
    if constexpr (kAuxAhead) load_taps();
    kt_gdn_gate_in gin{};
    if (kAuxAhead && t < kMaxT) {
        gin.A_log = args.A_log[h];
        gin.dt_bias = args.dt_bias[h];
    }
    unsigned short nwt[kVPT], zn[kVPT];
    if (kZAhead && gated && rep_thread) {
#pragma unroll
        for (int c = 0; c < kVPT; c++) nwt[c] = nw[j0 + c];
    }

    const int n = t1 - t0;
    if (n <= 0 || n > kMaxT || slot < 0) return false;   /* uniform over the sequence's blocks */
    KT_TR(1);
    const int na = acc < 0 ? 0 : acc > kMaxNA ? kMaxNA : acc;   /* logged tokens replayed */
    const bool spec = args.num_accepted != nullptr;

    /* ---- every load the step needs before its tokens, issued before any is used (one round trip
     * behind the metadata): the state first (the stream the step is made of), each channel's inputs,
     * the replayed log, the gates' token inputs and z, all kept raw until every one is in flight (a
     * conversion beside its load waits on it: the conv's taps converted as they were loaded held
     * each channel round's loads behind the round before) ---- */
    float *head = kt_state_head(args, slot, h);
    float s[KT_KPT * kVPT];
    if constexpr (!kPersist) kt_state_io<false>(head, ti, j0, s);
    if (kL2Ahead && kAheadEarly && ax_slot >= 0) {
        const kt_item ax = kt_item_of((int)ahead_item(), args.num_v_heads);
        kt_prefetch_piece(kt_state_head(args, ax_slot, ax.h), ax.vb);
    }
    if (kL2Ahead && !kAheadEarly && args.ahead > 0) {
        const long long wa = ahead_item();
        if (wa < (long long)nvb * args.num_v_heads * args.batch) {
            const kt_item ax = kt_item_of((int)wa, args.num_v_heads);
            const int slot_a = args.state_indices[ax.seq];
            if (slot_a >= 0)
                kt_prefetch_piece(kt_state_head(args, slot_a, ax.h), ax.vb);
        }
    }
    KT_TR(11);

    unsigned short *cs = (unsigned short *)args.conv_state + (long long)slot * args.conv_slot_stride;
    const unsigned short *xq = (const unsigned short *)args.qkv + (long long)t0 * args.qkv_stride;
    const long long ccs = args.conv_chan_stride, cls = args.conv_col_stride, xs = args.qkv_stride;
    if constexpr (!kAuxAhead) load_taps();
    unsigned short e[kRounds][kE];
#pragma unroll
    for (int ro = 0; ro < kRounds; ro++) {
        if (kt_round_channel(t, ro) >= kCh) continue;
        kt_conv_load(cs + gc[ro] * ccs, xq + gc[ro], na, n, kw, cls, xs, e[ro]);
    }
    unsigned short rin[kReplayAhead ? kR : 1];
    if constexpr (kReplayAhead) {
        const int c = kt_round_channel(t, kKRound);
        if (na > 0 && c >= KT_DK && c < 2 * KT_DK) {
            const unsigned short *col = cs + gc[kKRound] * ccs;
#pragma unroll
            for (int u = 0; u < kR; u++) rin[u] = u < na + kw - 1 ? col[u * cls] : (unsigned short)0;
        }
    }
    KT_TR(12);
    /* the log entries of the replayed tokens, the block's columns (speculative) */
    float *log = spec ? args.spec_log + (long long)slot * args.log_slot_stride + (long long)h * kMaxNA * dv * 2 : nullptr;
    kt_v16 lv[kLogRounds];
    auto load_aux = [&]() {
#pragma unroll
        for (int i = 0; i < kLogRounds; i++) {
            const int f = t + i * kNT, u = f / kLogV4;
            if (u < na) lv[i] = *(const kt_v16 *)(log + ((long long)u * dv + vb * KT_BV) * 2 + (f % kLogV4) * 4);
        }
        if (t < n) {
            const long long r = (long long)(t0 + t) * args.ab_stride + h;
            gin.a = ((const unsigned short *)args.a)[r];
            gin.b = ((const unsigned short *)args.b)[r];
            if constexpr (!kAuxAhead) {
                gin.A_log = args.A_log[h];
                gin.dt_bias = args.dt_bias[h];
            }
        }
    };
    if constexpr (kAuxAhead) load_aux();
    /* the gated norm's z of the thread's columns (the writer threads'), a token ahead of its use,
     * so that the norm waits on no round trip. Not where OB holds the registers to two blocks an SM
     * (there the other block hides the wait, and these registers would spill), nor past 8 columns
     * a thread (gfx1201's vk1 kpt4 mt8 forms spilled them). */
    const unsigned short *zp = (const unsigned short *)args.z + (long long)t0 * args.z_stride + (long long)h * dv + j0;
    if (kZAhead && gated && rep_thread) {
#pragma unroll
        for (int c = 0; c < kVPT; c++) zn[c] = zp[c];
    }
    /* ---- the conv, the log's copy and the gates, now that their inputs are in ---- */
#pragma unroll
    for (int ro = 0; ro < kRounds; ro++) {
        const int c = kt_round_channel(t, ro);
        if (c >= kCh) continue;
#pragma unroll
        for (int tt = 0; tt < kMaxT; tt++)
            if (tt < n) sm.y[tt][c] = kt_rnd(kt_conv_at(e[ro], w[ro], tt));
        if (c < 2 * KT_DK) {
#pragma unroll
            for (int u = 0; u < kE; u++) sm.eqk[c][u] = e[ro][u];
        } else {                /* the block's own v channels: their new conv state (the channel
                                 * recomputed, not gc[ro]: kept live, it spilled the OB 2 form) */
            kt_conv_store(cs + kt_conv_channel(c, hk, H, h, vb) * ccs, e[ro], n, kw, spec, cls);
        }
    }
    if constexpr (!kAuxAhead) load_aux();
#pragma unroll
    for (int i = 0; i < kLogRounds; i++) {
        const int f = t + i * kNT, u = f / kLogV4;
        if (u < na) sm.log[u][f % kLogV4] = lv[i];
    }
    if (t < n) {
        float g, beta;
        kt_gdn_gates_of(gin, g, beta);
        sm.g[t] = g;
        sm.beta[t] = beta;
        sm.dec[t] = kt_exp_fast(g);
    }
    KT_TR(13);
    /* the replayed tokens' k (speculative, after an acceptance): their inputs are history columns
     * 0 .. na + kw - 2, loaded above (kReplayAhead) or here, a round trip of their own so that a
     * step that replays nothing holds none */
    if (na > 0) {
#pragma unroll
        for (int ro = 0; ro < kRounds; ro++) {
            const int c = kt_round_channel(t, ro);
            if (c < KT_DK || c >= 2 * KT_DK) continue;
            const unsigned short *col = cs + kt_conv_channel(c, hk, H, h, vb) * ccs;
            unsigned short r[kR];
#pragma unroll
            for (int u = 0; u < kR; u++)
                r[u] = kReplayAhead && ro == kKRound ? rin[u] : u < na + kw - 1 ? col[u * cls] : (unsigned short)0;
#pragma unroll
            for (int tt = 0; tt < kMaxNA; tt++)
                if (tt < na) sm.yr[tt][c - KT_DK] = kt_rnd(kt_conv_at(r, w[ro], tt));
        }
    }
    KT_TR(2);
    kt_barrier();
    KT_TR(3);

    /* ---- the count of the q/k conv-state readers (its answer is read at the end); the replayed
     * tokens' k norms, and the step's own tokens' norms where they are not folded into their row
     * sums below ---- */
    const int readers = (HV / H) * (dv / KT_BV);
    unsigned *cnt = args.counters + (long long)seq * H + hk;
    unsigned arrived = 0u;
    /* no fence first: this block's reads of those columns were used (their values are in LDS)
     * before the barrier above, so they are done, and the count publishes no write */
    if (t == 0 && readers > 1) arrived = kt_count_relaxed(cnt);
    const int nn = kFoldNorms ? 0 : n;
    if (nn + na > 0) {   /* uniform over the block */
        for (int tt = kt_wave_id(); tt < nn + na; tt += KT_NW) {
            const bool rep = tt >= nn;
            const int u = rep ? tt - nn : tt;
            float sq = 0.0f, sk = 0.0f, qk = 0.0f;
            for (int i = kt_lane_id(); i < KT_DK; i += KT_WAVE) {
                const float kv = rep ? sm.yr[u][i] : sm.y[u][KT_DK + i];
                const float qv = rep ? 0.0f : sm.y[u][i];
                sq += qv * qv;
                sk += kv * kv;
                qk += qv * kv;
            }
#pragma unroll
            for (int m = KT_WAVE / 2; m > 0; m >>= 1) {
                sq += kt_shfl_xor(sq, m);
                sk += kt_shfl_xor(sk, m);
                qk += kt_shfl_xor(qk, m);
            }
            if (kt_lane_id() == 0) {
                const float rk = kt_rsqrt_fast(sk + 1e-6f);
                if (rep) {
                    sm.nkr[u] = rk;
                } else {
                    const float rq = args.scale * kt_rsqrt_fast(sq + 1e-6f);
                    sm.nq[u] = rq;
                    sm.nk[u] = rk;
                    sm.kq[u] = qk * rq * rk;
                }
            }
        }
        kt_barrier();
    }

    /* PS: the state where it is first needed, from LDS where it was copied; then the next item's
     * copy into the freed buffer, in flight through this item's tokens and the next's conv */
    bool issued = false;
    if constexpr (kPersist) {
        if (pre) {
            kt_copy_wait();
            kt_buf_io<false>(head, buf, ti, tj, j0, s);
        } else {
            kt_state_io<false>(head, ti, j0, s);
        }
        if (kPrefetch && next >= 0) issued = kt_prefetch(args, buf, nx, nx_n, nx_slot);
    }

    /* ---- speculative: replay the accepted logged tokens, then store the entering state ---- */
    if (spec) {
        const float *sl = (const float *)&sm.log[0][0];
        for (int u = 0; u < na; u++) {
            float d[kVPT], dec[kVPT];   /* each column's own log entry: {d, g} */
#pragma unroll
            for (int c = 0; c < kVPT; c++) {
                const float *pr = sl + ((long long)u * KT_BV + tj * kVPT + c) * 2;
                d[c] = pr[0];
                dec[c] = kt_exp_fast(pr[1]);
            }
#pragma unroll
            for (int r = 0; r < KT_KPT; r++) {
                const float k = sm.yr[u][kt_row(ti, r)] * sm.nkr[u];
#pragma unroll
                for (int c = 0; c < kVPT; c++) s[r * kVPT + c] = s[r * kVPT + c] * dec[c] + k * d[c];
            }
        }
        kt_state_io<true>(head, ti, j0, s);
    }

    KT_TR(4);
    /* ---- the step's tokens ---- */
    unsigned short *out = (unsigned short *)args.out;
    float alpha = 1.0f;   /* kLazyDecay: the state is alpha * s */
    for (int tt = 0; tt < n; tt++) {
        unsigned short zc[kVPT];
        if (gated && !kSplitNorm && rep_thread) {
#pragma unroll
            for (int c = 0; c < kVPT; c++) {
                if constexpr (kZAhead) {
                    zc[c] = zn[c];
                    if (tt + 1 < n) zn[c] = zp[(long long)(tt + 1) * args.z_stride + c];
                } else {
                    zc[c] = zp[(long long)tt * args.z_stride + c];
                }
            }
        }
        /* the row sums of the decayed state against k and q; folded (kFoldNorms), against the conv's
         * raw k and q with the rows' k.k, q.q and k.q beside them: the same reduction yields the
         * norms, and S^T k of the normalized k is rk S^T k_raw */
        const float dec = kLazyDecay ? 1.0f : sm.dec[tt];
        /* kLazyDecay: the decayed state is sc * s; the scale folded into the piece before 1 / sc
         * could overflow (a run of strong decays; dec <= 1 by the gate's sign), here where only the
         * piece is live: block-uniform, every thread has the same sc */
        float sc = kLazyDecay ? alpha * sm.dec[tt] : 1.0f;
        if (kLazyDecay && !(sc >= 0x1p-40f)) {
#pragma unroll
            for (int i = 0; i < KT_KPT * kVPT; i++) s[i] *= sc;
            sc = 1.0f;
        }
        float pk[kVPT], pq[kVPT], kk = 0.0f, qq = 0.0f, kq = 0.0f;
#pragma unroll
        for (int c = 0; c < kVPT; c++) { pk[c] = 0.0f; pq[c] = 0.0f; }
#pragma unroll
        for (int r = 0; r < KT_KPT; r++) {
            const int i = kt_row(ti, r);
            const float k = sm.y[tt][KT_DK + i] * (kFoldNorms ? 1.0f : sm.nk[tt]);
            const float q = sm.y[tt][i] * (kFoldNorms ? 1.0f : sm.nq[tt]);
            if constexpr (kFoldNorms) {
                kk += k * k;
                qq += q * q;
                kq += k * q;
            }
#pragma unroll
            for (int c = 0; c < kVPT; c++) {
                const float v = kLazyDecay ? s[r * kVPT + c] : s[r * kVPT + c] * dec;
                if constexpr (!kLazyDecay) s[r * kVPT + c] = v;
                pk[c] += v * k;
                pq[c] += v * q;
            }
        }
#pragma unroll
        for (int m = kShufLo; m < kShufHi; m <<= 1) {
#pragma unroll
            for (int c = 0; c < kVPT; c++) {
                pk[c] += kt_shfl_xor(pk[c], m);
                pq[c] += kt_shfl_xor(pq[c], m);
            }
            if constexpr (kFoldNorms) {
                kk += kt_shfl_xor(kk, m);
                qq += kt_shfl_xor(qq, m);
                kq += kt_shfl_xor(kq, m);
            }
        }
        if constexpr (kParts > 1) {
            const int par = tt & 1;
            if (kt_part_writer(t)) {
#pragma unroll
                for (int c = 0; c < kVPT; c++) {
                    sm.red[par][0][kt_part(t)][tj * kVPT + c] = pk[c];
                    sm.red[par][1][kt_part(t)][tj * kVPT + c] = pq[c];
                }
                if (kFoldNorms && tj == 0) {
                    sm.red3[par][kt_part(t)][0] = kk;
                    sm.red3[par][kt_part(t)][1] = qq;
                    sm.red3[par][kt_part(t)][2] = kq;
                }
            }
            kt_barrier();
            if (tt == 0) KT_TR(5);
#pragma unroll
            for (int c = 0; c < kVPT; c++) {
                float a0 = 0.0f, a1 = 0.0f;
#pragma unroll
                for (int q = 0; q < kParts; q++) {
                    a0 += sm.red[par][0][q][tj * kVPT + c];
                    a1 += sm.red[par][1][q][tj * kVPT + c];
                }
                pk[c] = a0;
                pq[c] = a1;
            }
            if constexpr (kFoldNorms) {
                kk = qq = kq = 0.0f;
#pragma unroll
                for (int q = 0; q < kParts; q++) {
                    kk += sm.red3[par][q][0];
                    qq += sm.red3[par][q][1];
                    kq += sm.red3[par][q][2];
                }
            }
        }
        const float rk = kFoldNorms ? kt_rsqrt_fast(kk + 1e-6f) : 1.0f;
        const float rq = kFoldNorms ? args.scale * kt_rsqrt_fast(qq + 1e-6f) : 1.0f;
        /* d = beta (v - S^T k); S += k d^T; o = S'^T q + d (k . q) */
        const float beta = sm.beta[tt], kqn = kFoldNorms ? kq * rq * rk : sm.kq[tt];
        float d[kVPT], o[kVPT];
#pragma unroll
        for (int c = 0; c < kVPT; c++) {
            d[c] = beta * (sm.y[tt][2 * KT_DK + tj * kVPT + c] - pk[c] * (rk * sc));
            o[c] = pq[c] * (rq * sc) + d[c] * kqn;
        }
        float du[kVPT];   /* the update's d, in the piece's scale */
#pragma unroll
        for (int c = 0; c < kVPT; c++) du[c] = d[c];
        if constexpr (kLazyDecay) {
            const float inv = kt_rcp_fast(sc);
#pragma unroll
            for (int c = 0; c < kVPT; c++) du[c] = d[c] * inv;
            alpha = sc;
        }
#pragma unroll
        for (int r = 0; r < KT_KPT; r++) {
            const float k = sm.y[tt][KT_DK + kt_row(ti, r)] * (kFoldNorms ? rk : sm.nk[tt]);
#pragma unroll
            for (int c = 0; c < kVPT; c++) s[r * kVPT + c] += k * du[c];
        }
        const long long orow = (long long)(t0 + tt) * args.out_stride + (long long)h * dv;
        if (gated && !kSplitNorm) {   /* the block holds the head's dv columns */
            float ss = 0.0f;
            const bool adds = kNormInWave ? kt_lane_id() < kTJ : rep_thread;   /* each column once */
#pragma unroll
            for (int c = 0; c < kVPT; c++) {
                o[c] = kt_rnd(o[c]);
                ss += adds ? o[c] * o[c] : 0.0f;
            }
#pragma unroll
            for (int m = KT_WAVE / 2; m > 0; m >>= 1) ss += kt_shfl_xor(ss, m);
            if constexpr (!kNormInWave) {
                if (kt_lane_id() == 0) sm.nrm[tt & 1][kt_wave_id()] = ss;
                kt_barrier();
                ss = 0.0f;
#pragma unroll
                for (int w = 0; w < KT_NW; w++) ss += sm.nrm[tt & 1][w];
            }
            const float rstd = kt_rsqrt_fast(ss / (float)dv + args.norm_eps);
            if (rep_thread) {
#pragma unroll
                for (int c = 0; c < kVPT; c++) {
                    const float wt = kZAhead ? kt_to_float(kt_elem{nwt[c]}) : kt_elem_f(args.norm_weight, j0 + c);
                    const float y = o[c] * rstd * wt * kt_silu_fast(kt_to_float(kt_elem{zc[c]}));
                    out[orow + j0 + c] = kt_bits(y);
                }
            }
        } else if (rep_thread) {
#pragma unroll
            for (int c = 0; c < kVPT; c++) out[orow + j0 + c] = kt_bits(o[c]);
        }
        if (spec && rep_thread) {
#pragma unroll
            for (int c = 0; c < kVPT; c++) {
                float pr[2] = {d[c], sm.g[tt]};
                kt_st_f32<2>(log + ((long long)tt * dv + j0 + c) * 2, pr);
            }
        }
    }

    if (kLazyDecay && !spec && alpha != 1.0f) {   /* the piece in the state's scale before its store */
#pragma unroll
        for (int i = 0; i < KT_KPT * kVPT; i++) s[i] *= alpha;
    }
    KT_TR(6);
    /* ---- the gated norm of a head split over blocks: each stored its columns' rnd(o) above; the
     * last of the head's blocks to finish reads the head's rows back and normalizes them in place
     * (vLLM's order: o rounded to the dtype, then the norm over its dv values). No block waits on
     * another: at batch 1 the split spreads a head's state stream and work over dv / BV compute
     * units, for one hand-off at the end. The barrier, then thread 0's fence and count release the
     * block's rows (the count goes before the state's stores, so the fence waits on the rows'
     * alone and the stores fly behind its round trip); the last block's thread 0 acquires for the
     * block (its fence, then the barrier) ---- */
    unsigned short *oh = (unsigned short *)args.out + (long long)t0 * args.out_stride + (long long)h * dv;
    unsigned hand = 0u;
    unsigned *const hand_cnt = args.counters + (long long)args.batch * H + (long long)seq * HV + h;   /* the head's word */
    if (kSplitNorm && gated) {
        kt_barrier();
        if (t == 0) {
            kt_fence_acq_rel();   /* the block's rows (ordered before it by the barrier) before its count */
            hand = kt_count_relaxed(hand_cnt);
        }
    }
    KT_TR(7);
    if (!spec) kt_state_io<true>(head, ti, j0, s);
    KT_TR(8);
    if constexpr (kSplitNorm) {
        if (gated) {
            if (t == 0) {
                const bool last = hand == (unsigned)(dv / KT_BV - 1);
                if (last) {
                    *hand_cnt = 0u;   /* every block counted */
                    kt_fence_acq_rel();
                }
                sm.last = last;
            }
            kt_barrier();
            if (sm.last) {
                /* the thread's elements of the head's rows (token-major, a token's dv by whole
                 * waves): the rows, z and the weights in one round trip */
                const unsigned short *zh = (const unsigned short *)args.z + (long long)t0 * args.z_stride + (long long)h * dv;
                unsigned short ro[kTail], zt[kTail], wt[kTail];
#pragma unroll
                for (int i = 0; i < kTail; i++) {
                    const int e = t + i * kNT, u = e / KT_DV, c = e % KT_DV;
                    ro[i] = zt[i] = wt[i] = 0;
                    if (u < n) {
                        ro[i] = kt_load_coherent_u16(oh + (long long)u * args.out_stride + c);
                        zt[i] = zh[(long long)u * args.z_stride + c];
                        wt[i] = nw[c];
                    }
                }
                float r[kTail];
#pragma unroll
                for (int i = 0; i < kTail; i++) {
                    const int e = t + i * kNT, u = e / KT_DV, c = e % KT_DV;
                    r[i] = kt_to_float(kt_elem{ro[i]});
                    float sq = r[i] * r[i];
#pragma unroll
                    for (int m = KT_WAVE / 2; m > 0; m >>= 1) sq += kt_shfl_xor(sq, m);
                    if (u < n && kt_lane_id() == 0) sm.nsq[u][c / KT_WAVE] = sq;
                }
                kt_barrier();
#pragma unroll
                for (int i = 0; i < kTail; i++) {
                    const int e = t + i * kNT, u = e / KT_DV, c = e % KT_DV;
                    if (u >= n) continue;
                    float ss = 0.0f;
#pragma unroll
                    for (int w = 0; w < KT_DV / KT_WAVE; w++) ss += sm.nsq[u][w];
                    const float rstd = kt_rsqrt_fast(ss / (float)dv + args.norm_eps);
                    const float y = r[i] * rstd * kt_to_float(kt_elem{wt[i]}) * kt_silu_fast(kt_to_float(kt_elem{zt[i]}));
                    oh[(long long)u * args.out_stride + c] = kt_bits(y);
                }
            }
        }
    }

    KT_TR(9);
    /* ---- the last reader of the q/k channels writes their new conv state ---- */
    if (readers > 1) {
        if (t == 0) {
            sm.writer = arrived == (unsigned)(readers - 1);
            if (sm.writer) *cnt = 0u;   /* every other reader has counted: the word is ours */
        }
        kt_barrier();
    }
    if (readers == 1 || sm.writer) {
        for (int c = t; c < 2 * KT_DK; c += kNT) {
            kt_conv_store(cs + kt_conv_channel(c, hk, H, h, vb) * ccs, sm.eqk[c], n, kw, spec, cls);
        }
    }
    KT_TR(10);
    KT_TR(14);
    return issued;
}

} /* namespace */

KT_KERNEL_MIN_BLOCKS(KT_KERNEL_NAME, kNT, KT_OB)(kt_gdn_decode_args args)
{
    KT_SHARED kt_gdn_smem sm;
    if constexpr (!kPersist) {
        kt_gdn_item(args, sm, nullptr, kt_block_id_x(), kt_block_id_y(), kt_block_id_z(), false, -1);
    } else {
        KT_DYNAMIC_SHARED(float, buf);
        if (!kt_dynamic_shared_fits(kBufBytes)) return;   /* less LDS than the buffer: nothing written */
        const int items = KT_DV / KT_BV * args.num_v_heads * args.batch, G = kt_grid_blocks_x();
        int w = kt_block_id_x();
        bool pre = false;
        if (kPrefetch && w < items) {
            const kt_item it = kt_item_of(w, args.num_v_heads);
            pre = kt_prefetch(args, buf, it, args.query_start_loc[it.seq + 1] - args.query_start_loc[it.seq],
                              args.state_indices[it.seq]);
        }
        for (; w < items; w += G) {
            const kt_item it = kt_item_of(w, args.num_v_heads);
            pre = kt_gdn_item(args, sm, buf, it.vb, it.h, it.seq, pre, w + G < items ? w + G : -1);
            kt_barrier();   /* the next item rewrites the block's LDS */
        }
    }
}
