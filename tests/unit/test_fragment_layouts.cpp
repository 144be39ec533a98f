/* test_fragment_layouts.cpp: the matrix-fragment index math of every prelude, checked on the CPU.
 *
 * We cannot run the AMD kernels anywhere, so a wrong lane mapping would only show up as wrong
 * numbers on a card we do not have. This test takes the layout functions straight from the
 * preludes (templates/arch/ preludes compiled with KT_LAYOUT_ONLY), emulates a wave loading 16x16
 * fragments from a padded LDS tile the way each prelude's loader does, runs an emulated matrix
 * instruction written independently from the operand tables in shared/ref/wmma-mma.md, reads the
 * result back through the prelude's accumulator (row, col) map, and compares with a plain matmul.
 * It also checks the bf16 rounding the preludes use against an independent oracle.
 *
 * Run: mkdir -p out/tests && g++ -std=c++17 -O1 -Itemplates -Itests/unit tests/unit/test_fragment_layouts.cpp \
 *        -o out/tests/test_fragment_layouts && out/tests/test_fragment_layouts */
#define KT_LAYOUT_ONLY
#include "arch/common_amd.h"   /* once, globally: the AMD preludes below then skip it */
namespace gfx12 {
#include "arch/gfx12.h"
#include "arch/attn_ops.h"     /* its AMD branch: the e4m3 bit placement */
#include "arch/prefill_ops.h"
#include "attn/rows.h"
}
namespace gfx11 {
#include "arch/gfx11.h"
#include "arch/prefill_ops.h"
#include "attn/rows.h"
}
namespace cdna {
#include "arch/cdna.h"
#include "arch/prefill_ops.h"
#include "attn/rows.h"
}
namespace sm90 {
#include "arch/sm90.h"
#include "arch/attn_ops.h"     /* its NVIDIA branch: ldmatrix .trans addresses, e4m3 -> bf16 bits */
#include "arch/prefill_ops.h"
#include "attn/rows.h"
}

#include "kt_test.h"
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if __has_include("../../tuner/half_convert.h")
#include "../../tuner/half_convert.h"
#define HAVE_HOST_REFERENCE 1
#endif

/* The LDS tile the fragments are read from: 16 x 16 operands sit at (R0, K0) of a wider tile with
 * a padded pitch, as in dense.hip, so a mapping that confuses rows with the pitch shows up. */
enum { LD = 40, ROWS = 48, R0 = 16, K0 = 16 };

struct problem {
    float a[16][16];     /* A[i][k] */
    float w[16][16];     /* W[n][k]; B[k][n] = W[n][k] */
    float lds_a[ROWS][LD];
    float lds_w[ROWS][LD];
    float ref[16][16];   /* C[i][n] = sum_k A[i][k] W[n][k] */
};

static void make_problem(problem &p, unsigned seed)
{
    srand(seed);
    /* Small integers: every sum is exact in float, so equality is the right test. */
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < LD; c++) {
            p.lds_a[r][c] = 1000.0f + (float)(r * LD + c);   /* junk outside the operand */
            p.lds_w[r][c] = -1000.0f - (float)(r * LD + c);
        }
    for (int i = 0; i < 16; i++)
        for (int k = 0; k < 16; k++) {
            p.a[i][k] = (float)(rand() % 17 - 8);
            p.w[i][k] = (float)(rand() % 17 - 8);
            p.lds_a[R0 + i][K0 + k] = p.a[i][k];
            p.lds_w[R0 + i][K0 + k] = p.w[i][k];
        }
    for (int i = 0; i < 16; i++)
        for (int n = 0; n < 16; n++) {
            float s = 0;
            for (int k = 0; k < 16; k++) s += p.a[i][k] * p.w[n][k];
            p.ref[i][n] = s;
        }
}

/* Read the accumulator back through the prelude's (row, col) map; every output exactly once. */
template <int LANES, int ELEMS, class RowFn, class ColFn>
static void check_result(const char *target, const problem &p, float (&d)[LANES][ELEMS], RowFn row, ColFn col)
{
    int seen[16][16] = {};
    int bad = 0;
    for (int l = 0; l < LANES; l++)
        for (int e = 0; e < ELEMS; e++) {
            int r = row(l, e), c = col(l, e);
            if (r < 0 || r > 15 || c < 0 || c > 15) { bad++; continue; }
            seen[r][c]++;
            if (d[l][e] != p.ref[r][c]) bad++;
        }
    for (int r = 0; r < 16; r++)
        for (int c = 0; c < 16; c++)
            if (seen[r][c] != 1) bad++;
    if (bad) fprintf(stderr, "%s: %d wrong accumulator elements or coverage errors\n", target, bad);
    KT_CHECK(bad == 0);
}

/* AMD loaders read kt_frag_ab_run contiguous k at (row(lane, b), k(lane, b)) for each run start b. */
template <class RowFn, class KFn>
static void amd_load(float (&lds)[ROWS][LD], int lanes, int elems, int run, float (*regs)[16], RowFn row, KFn kf)
{
    for (int l = 0; l < lanes; l++)
        for (int b = 0; b < elems; b += run)
            for (int j = 0; j < run; j++)
                regs[l][b + j] = lds[R0 + row(l, b)][K0 + kf(l, b) + j];
}

/* The layout functions also describe every element, not only run starts: keep them honest. */
template <class RowFn, class KFn>
static void check_runs(const char *what, int lanes, int elems, int run, RowFn row, KFn kf)
{
    int bad = 0;
    for (int l = 0; l < lanes; l++)
        for (int e = 0; e < elems; e++) {
            int b = e - e % run;
            if (row(l, e) != row(l, b) || kf(l, e) != kf(l, b) + e % run) bad++;
        }
    if (bad) fprintf(stderr, "%s: %d elements not contiguous within their run\n", what, bad);
    KT_CHECK(bad == 0);
}

/* ---- gfx12 WMMA (ref section 2) ---- */
static void test_gfx12(const problem &p0)
{
    problem p = p0;
    using namespace gfx12;
    float ra[32][16], rb[32][16], d[32][8] = {};
    amd_load(p.lds_a, 32, kt_frag_ab_elems, kt_frag_ab_run, ra, kt_frag_a_row, kt_frag_a_k);
    amd_load(p.lds_w, 32, kt_frag_ab_elems, kt_frag_ab_run, rb, kt_frag_b_n, kt_frag_b_k);
    check_runs("gfx12 A", 32, kt_frag_ab_elems, kt_frag_ab_run, kt_frag_a_row, kt_frag_a_k);
    check_runs("gfx12 B", 32, kt_frag_ab_elems, kt_frag_ab_run, kt_frag_b_n, kt_frag_b_k);
    /* 16-bit A[i][k]: lane i + 16*((k/4)%2), VGPR 2*(k/8) + (k/2)%2, half k%2; B likewise with j.
     * D[i][j]: VGPR i%8, lane 16*(i/8) + j. */
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++) {
            float s = 0;
            for (int k = 0; k < 16; k++) {
                int el = 2 * (2 * (k / 8) + (k / 2) % 2) + k % 2;
                s += ra[i + 16 * ((k / 4) % 2)][el] * rb[j + 16 * ((k / 4) % 2)][el];
            }
            d[16 * (i / 8) + j][i % 8] = s;
        }
    check_result("gfx12", p, d, kt_acc_row, kt_acc_col);
    KT_CHECK_INT(kt_frag_lanes, 32);
    KT_CHECK_INT(kt_acc_elems, 8);
}

/* ---- gfx11 WMMA (ref section 1): A/B replicated across the half-waves ---- */
static void test_gfx11(const problem &p0)
{
    problem p = p0;
    using namespace gfx11;
    float ra[32][16], rb[32][16], d[32][8] = {};
    amd_load(p.lds_a, 32, kt_frag_ab_elems, kt_frag_ab_run, ra, kt_frag_a_row, kt_frag_a_k);
    amd_load(p.lds_w, 32, kt_frag_ab_elems, kt_frag_ab_run, rb, kt_frag_b_n, kt_frag_b_k);
    check_runs("gfx11 A", 32, kt_frag_ab_elems, kt_frag_ab_run, kt_frag_a_row, kt_frag_a_k);
    check_runs("gfx11 B", 32, kt_frag_ab_elems, kt_frag_ab_run, kt_frag_b_n, kt_frag_b_k);
    int unreplicated = 0;
    for (int l = 0; l < 16; l++)
        for (int e = 0; e < 16; e++)
            if (ra[l][e] != ra[l + 16][e] || rb[l][e] != rb[l + 16][e]) unreplicated++;
    KT_CHECK_INT(unreplicated, 0);
    /* A[i][k]: lane i (and i+16), element k; B[k][j]: lane j, element k.
     * D[i][j]: VGPR i/2, lane 16*(i%2) + j. */
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++) {
            float s = 0;
            for (int k = 0; k < 16; k++) s += ra[i][k] * rb[j][k];
            d[16 * (i % 2) + j][i / 2] = s;
        }
    check_result("gfx11", p, d, kt_acc_row, kt_acc_col);
    KT_CHECK_INT(kt_frag_lanes, 32);
    KT_CHECK_INT(kt_acc_elems, 8);
}

/* ---- CDNA MFMA 16x16x16 (ref section 3, E = 4) ---- */
static void test_cdna(const problem &p0)
{
    problem p = p0;
    using namespace cdna;
    float ra[64][16], rb[64][16], d[64][4] = {};
    amd_load(p.lds_a, 64, kt_frag_ab_elems, kt_frag_ab_run, ra, kt_frag_a_row, kt_frag_a_k);
    amd_load(p.lds_w, 64, kt_frag_ab_elems, kt_frag_ab_run, rb, kt_frag_b_n, kt_frag_b_k);
    check_runs("cdna A", 64, kt_frag_ab_elems, kt_frag_ab_run, kt_frag_a_row, kt_frag_a_k);
    check_runs("cdna B", 64, kt_frag_ab_elems, kt_frag_ab_run, kt_frag_b_n, kt_frag_b_k);
    /* A[i][k]: lane i + 16*(k/4), element k%4; B[k][j]: lane j + 16*(k/4), element k%4.
     * D[i][j]: acc i%4, lane 16*(i/4) + j. */
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++) {
            float s = 0;
            for (int k = 0; k < 16; k++) s += ra[i + 16 * (k / 4)][k % 4] * rb[j + 16 * (k / 4)][k % 4];
            d[16 * (i / 4) + j][i % 4] = s;
        }
    check_result("cdna", p, d, kt_acc_row, kt_acc_col);
    KT_CHECK_INT(kt_frag_lanes, 64);
    KT_CHECK_INT(kt_acc_elems, 4);
}

/* ---- sm_90 ldmatrix.x4 + 2 x mma.m16n8k16 (ref section 4) ---- */

/* ldmatrix.sync.m8n8.x4.b16: lane l gives the address of row l%8 of matrix l/8 (as a (row, k)
 * of the LDS tile); register j of lane l gets row l/4, columns 2*(l%4) and +1 of matrix j. */
template <class RowFn, class KFn>
static void ldmatrix_x4(float (&lds)[ROWS][LD], float (&regs)[32][8], RowFn row, KFn kf)
{
    for (int l = 0; l < 32; l++)
        for (int j = 0; j < 4; j++) {
            int src = 8 * j + l / 4;   /* the lane that addressed row l/4 of matrix j */
            for (int h = 0; h < 2; h++) regs[l][2 * j + h] = lds[R0 + row(src)][K0 + kf(src) + 2 * (l % 4) + h];
        }
}

static void test_sm90(const problem &p0)
{
    problem p = p0;
    using namespace sm90;
    float ra[32][8], rb[32][8], d[32][8] = {};
    ldmatrix_x4(p.lds_a, ra, kt_ldsm_a_row, kt_ldsm_a_k);
    ldmatrix_x4(p.lds_w, rb, kt_ldsm_b_n, kt_ldsm_b_k);
    /* m16n8k16 with g = lane/4, t = lane%4, halves a0..a7 = regs 0..3:
     *   A: row g + 8*((e/2)%2), col 2t + e%2 + 8*(e/4)
     *   B (b0..b3 = the half's regs): k 2t + e%2 + 8*(e/2), n g
     *   C (c0..c3): row g + 8*(e/2), col 2t + e%2
     * The prelude issues it twice: n-half h takes B regs {2h, 2h+1} = halves 4h..4h+3 and
     * accumulator elements 4h..4h+3. */
    for (int h = 0; h < 2; h++) {
        float A[16][16], B[16][8];
        for (int l = 0; l < 32; l++) {
            int g = l / 4, t = l % 4;
            for (int e = 0; e < 8; e++) A[g + 8 * ((e / 2) % 2)][2 * t + e % 2 + 8 * (e / 4)] = ra[l][e];
            for (int e = 0; e < 4; e++) B[2 * t + e % 2 + 8 * (e / 2)][g] = rb[l][4 * h + e];
        }
        for (int l = 0; l < 32; l++) {
            int g = l / 4, t = l % 4;
            for (int e = 0; e < 4; e++) {
                int r = g + 8 * (e / 2), c = 2 * t + e % 2;
                float s = 0;
                for (int k = 0; k < 16; k++) s += A[r][k] * B[k][c];
                d[l][4 * h + e] = s;
            }
        }
    }
    /* the prelude's operand-layout functions (used by the direct fragments) say the same */
    int layout_bad = 0;
    for (int l = 0; l < 32; l++)
        for (int e = 0; e < 8; e++) {
            int g = l / 4, t = l % 4;
            if (kt_frag_a_row(l, e) != g + 8 * ((e / 2) % 2) || kt_frag_a_k(l, e) != 2 * t + e % 2 + 8 * (e / 4)) layout_bad++;
            if (kt_frag_b_n(l, e) != g + 8 * (e / 4) || kt_frag_b_k(l, e) != 2 * t + e % 2 + 8 * ((e % 4) / 2)) layout_bad++;
        }
    KT_CHECK_INT(layout_bad, 0);
    check_result("sm90", p, d, kt_acc_row, kt_acc_col);
    KT_CHECK_INT(kt_frag_lanes, 32);
    KT_CHECK_INT(kt_acc_elems, 8);
}

/* ---- attn_ops.h: the B fragment of a [k][n] tile (O = P V over V as the cache stores it) ----
 * ldmatrix .trans: register j of lane l gets, of matrix j (its rows addressed by lanes 8j..8j+7),
 * the elements at row 2*(l%4) + h, column l/4: the transpose of what the plain form delivers. The
 * tile holds W^T ([k][n]); the fragment must equal kt_load_b's from W ([n][k]), register for
 * register. On AMD kt_load_b_kn reads each element at the prelude's (kt_frag_b_k, kt_frag_b_n), so
 * it is the layout the tests above already hold. */
static void test_sm90_kn(const problem &p0)
{
    problem p = p0;
    using namespace sm90;
    float lds_t[ROWS][LD];
    memcpy(lds_t, p.lds_w, sizeof lds_t);
    for (int k = 0; k < 16; k++)
        for (int n = 0; n < 16; n++) lds_t[R0 + k][K0 + n] = p.w[n][k];
    float want[32][8], got[32][8];
    ldmatrix_x4(p.lds_w, want, kt_ldsm_b_n, kt_ldsm_b_k);
    for (int l = 0; l < 32; l++)
        for (int j = 0; j < 4; j++)
            for (int h = 0; h < 2; h++) {
                int src = 8 * j + 2 * (l % 4) + h;   /* the lane that addressed that matrix row */
                got[l][2 * j + h] = lds_t[R0 + kt_ldsm_kn_k(src)][K0 + kt_ldsm_kn_n(src) + l / 4];
            }
    int bad = 0;
    for (int l = 0; l < 32; l++)
        for (int e = 0; e < 8; e++)
            if (got[l][e] != want[l][e]) bad++;
    if (bad) fprintf(stderr, "sm90 kt_load_b_kn: %d fragment elements differ from kt_load_b's\n", bad);
    KT_CHECK_INT(bad, 0);
}

/* ---- decode.hip's KR: raw fp8 K and V read as 16-bit elements, converted where they are used ----
 * Bytes are tracked as identities key * 64 + d. ldmatrix moves 16-bit elements (a short at column
 * c holds bytes d 2c, 2c + 1); kt_e4m3x4_to_f16x4 gives a word's bytes 0-1 as one f16 pair and
 * 2-3 as the other; the byte permute (kt_v8_pair_src) orders a word's bytes 0, 2, 1, 3. S (a
 * 16-key x 32-d chunk, one ldmatrix.x4 at kt_ldsm_b_n / kt_ldsm_b_k): step s's B fragment takes
 * pair s of each word, and must hold, at every k, the d that Q's A fragment holds there
 * (kt_kr_q_d), the two steps covering the chunk's 32 d once. P V (a 16-key x 16-d group,
 * ldmatrix.x2.trans, lane l%16 addressing key l%16): n tile 0 takes the permuted words' low pairs,
 * tile 1 their high ones, and accumulator element e must be d kt_o_col_v8 of the group with every
 * k the key it multiplies. */
static int kr_bytes_of(const int (&word)[4], int pair, int h) { return word[2 * pair + h]; }

static void test_sm90_kr(void)
{
    using namespace sm90;
    int bad = 0, seen[32] = {0};
    /* S: the words lane l's ldmatrix.x4 gets, byte identities */
    int kw[32][4][4];
    for (int l = 0; l < 32; l++)
        for (int j = 0; j < 4; j++) {
            const int src = 8 * j + l / 4, key = kt_ldsm_b_n(src), c0 = kt_ldsm_b_k(src) + 2 * (l % 4);
            for (int b = 0; b < 4; b++) kw[l][j][b] = key * 64 + 2 * (c0 + b / 2) + b % 2;
        }
    for (int st = 0; st < 2; st++)
        for (int h = 0; h < 2; h++)          /* n half: B registers 2h, 2h + 1 */
            for (int l = 0; l < 32; l++)
                for (int e = 0; e < 4; e++) {
                    const int g = l / 4, t = l % 4, k = 2 * t + e % 2 + 8 * (e / 2);
                    const int id = kr_bytes_of(kw[l][2 * h + e / 2], st, e % 2);
                    if (id / 64 != 8 * h + g) bad++;   /* the key is the B fragment's n */
                    /* Q's A element holding the same k (row g, any lane with that t) */
                    const int ea = e % 2 + 4 * (e / 2);
                    if (kt_frag_a_k(l, ea) != k || kt_kr_q_d(l, ea, st) != id % 64) bad++;
                    if (h == 0 && g == 0) seen[id % 64]++;
                }
    for (int d = 0; d < 32; d++)
        if (seen[d] != 1) bad++;
    /* P V: lane l's two transposed words, permuted and split */
    for (int l = 0; l < 32; l++) {
        const int g = l / 4, t = l % 4;
        int pv[4][2];                        /* f.r[0..3], each two byte identities */
        for (int j = 0; j < 2; j++) {
            int w[4];
            for (int h = 0; h < 2; h++)       /* row 2t + h of matrix j: key 8j + 2t + h, short g */
                for (int b = 0; b < 2; b++) w[2 * h + b] = (8 * j + 2 * t + h) * 64 + 2 * g + b;
            int p[4];                        /* the device's byte permute */
            for (int b = 0; b < 4; b++) p[b] = w[kt_v8_pair_src(b)];
            pv[j][0] = p[0]; pv[j][1] = p[1];
            pv[2 + j][0] = p[2]; pv[2 + j][1] = p[3];
        }
        for (int nt = 0; nt < 2; nt++)       /* B registers 2 nt, 2 nt + 1: n tile nt's k 0-15 */
            for (int e = 0; e < 4; e++) {
                const int k = 2 * t + e % 2 + 8 * (e / 2), id = pv[2 * nt + e / 2][e % 2];
                if (id / 64 != k || id % 64 != 2 * g + nt) bad++;   /* key k; column g is d 2g + nt */
            }
        /* accumulator element e: n tile e / 4, column kt_acc_col % 8, so d 2 * column + tile */
        for (int e = 0; e < 8; e++)
            if (kt_o_col_v8(l, e) != 2 * (kt_acc_col(l, e) % 8) + e / 4) bad++;
    }
    if (bad) fprintf(stderr, "sm90 KR: %d relabelling mismatches\n", bad);
    KT_CHECK_INT(bad, 0);
}

#ifdef HAVE_HOST_REFERENCE
/* Codes (both halves of a word) for which place(x) read back by value() differs from the OCP
 * e4m3fn value, checked independently: (-1)^s 2^(e-7) (1 + m/8), subnormal 2^-6 m/8. */
static int e4m3_codes_wrong(unsigned (*place)(unsigned), double (*value)(uint16_t))
{
    int bad = 0;
    for (unsigned b = 0; b < 256; b++) {
        if ((b & 0x7f) == 0x7f) continue;   /* NaN codes (not in a cache) */
        const unsigned e = (b >> 3) & 15, m = b & 7;
        const double mag = e ? ldexp(1.0 + m / 8.0, (int)e - 7) : ldexp(m / 8.0, -6);
        const double want = (b & 0x80) ? -mag : mag;
        for (int half = 0; half < 2; half++) {
            const unsigned bits = place(half ? (b << 8) | 0x3a : 0x4100 | b);
            if (value((uint16_t)(half ? bits >> 16 : bits & 0xffff)) != want) bad++;
        }
    }
    return bad;
}

static unsigned place_f16(unsigned x) { return gfx12::kt_e4m3x2_f16_bits(x); }
static unsigned place_bf16(unsigned x) { return sm90::kt_e4m3x2_bf16_bits(x); }
static double f16_times_256(uint16_t h) { return 256.0 * kt_f16_to_f32(h); }
static double bf16_times_2_120(uint16_t h) { return ldexp((double)kt_bf16_to_f32(h), 120); }
#endif

/* The AMD e4m3 -> f16 path (the bit placement times 256) and the sm_90 e4m3 -> bf16 one (times
 * 2^120, one bf16x2 multiply): exact for every code in both halves. */
static void test_e4m3_conversions(void)
{
#ifdef HAVE_HOST_REFERENCE
    const int f16 = e4m3_codes_wrong(place_f16, f16_times_256), bf16 = e4m3_codes_wrong(place_bf16, bf16_times_2_120);
    if (f16) fprintf(stderr, "e4m3 -> f16 bits: %d codes wrong\n", f16);
    if (bf16) fprintf(stderr, "e4m3 -> bf16 bits: %d codes wrong\n", bf16);
    KT_CHECK_INT(f16, 0);
    KT_CHECK_INT(bf16, 0);
#endif
}

/* ---- direct fragments: a 16-row operand read from memory straight into registers ----
 * Each prelude relabels k so that a lane's share of a span is whole 16-byte chunks (the MMA sums
 * over k, so one relabelling applied to both operands leaves the product unchanged). The law:
 * building the A fragments of every step from chunks of W (rows = weight rows) and the B fragments
 * from chunks of X (columns = tokens), then running the emulated MMAs through the prelude's
 * operand layouts, gives sum over the span of W[i][k] * X[j][k]. Replicated elements (gfx11) must
 * come out equal, and every operand element must be covered. */
struct direct_layout {
    const char *target;
    int lanes, elems, span, steps, chunks;
    bool word_pairs;   /* sm_90 builds fragments from whole 32-bit words of the chunks */
    int (*row)(int, int), (*k)(int, int), (*a_src)(int, int), (*b_src)(int, int);
    int (*a_row)(int, int), (*a_k)(int, int), (*b_n)(int, int), (*b_k)(int, int);
};

static void check_direct(const direct_layout &L, unsigned seed)
{
    float w[16][32], x[16][32], ref[16][16] = {}, got[16][16] = {};
    srand(seed);
    for (int r = 0; r < 16; r++)
        for (int k = 0; k < 32; k++) {
            w[r][k] = (float)(rand() % 17 - 8);
            x[r][k] = (float)(rand() % 17 - 8);
        }
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++)
            for (int k = 0; k < L.span; k++) ref[i][j] += w[i][k] * x[j][k];
    int bad = 0;
    for (int l = 0; l < L.lanes; l++)
        for (int c = 0; c < L.chunks; c++)
            if (L.k(l, c) % 8 || L.k(l, c) + 8 > L.span || L.row(l, c) < 0 || L.row(l, c) > 15) bad++;
    for (int s = 0; s < L.steps; s++) {
        float A[16][16], B[16][16];
        int setA[16][16] = {}, setB[16][16] = {};
        for (int l = 0; l < L.lanes; l++)
            for (int e = 0; e < L.elems; e++) {
                int ia = L.a_src(s, e), ib = L.b_src(s, e);
                if (ia < 0 || ia >= 8 * L.chunks || ib < 0 || ib >= 8 * L.chunks) { bad++; continue; }
                float va = w[L.row(l, ia / 8)][L.k(l, ia / 8) + ia % 8];
                float vb = x[L.row(l, ib / 8)][L.k(l, ib / 8) + ib % 8];
                int r = L.a_row(l, e), ka = L.a_k(l, e), n = L.b_n(l, e), kb = L.b_k(l, e);
                if (setA[r][ka] && A[r][ka] != va) bad++;
                if (setB[kb][n] && B[kb][n] != vb) bad++;
                A[r][ka] = va; setA[r][ka] = 1;
                B[kb][n] = vb; setB[kb][n] = 1;
                if (L.word_pairs && e % 2 == 1 && (L.a_src(s, e) != L.a_src(s, e - 1) + 1 || L.a_src(s, e - 1) % 2 ||
                                                   L.b_src(s, e) != L.b_src(s, e - 1) + 1 || L.b_src(s, e - 1) % 2))
                    bad++;
            }
        for (int i = 0; i < 16; i++)
            for (int j = 0; j < 16; j++) {
                if (!setA[i][j] || !setB[i][j]) { bad++; continue; }
            }
        for (int i = 0; i < 16; i++)
            for (int j = 0; j < 16; j++)
                for (int k = 0; k < 16; k++) got[i][j] += A[i][k] * B[k][j];
    }
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++)
            if (got[i][j] != ref[i][j]) bad++;
    if (L.steps * 16 != L.span) bad++;
    if (bad) fprintf(stderr, "%s direct fragments: %d errors\n", L.target, bad);
    KT_CHECK(bad == 0);
}

#define KT_DIRECT_LAYOUT(ns, name, pairs)                                                            \
    direct_layout{name, ns::kt_frag_lanes, ns::kt_frag_ab_elems, ns::kt_direct_span, ns::kt_direct_steps, \
                  ns::kt_direct_chunks, pairs, ns::kt_direct_row, ns::kt_direct_k, ns::kt_direct_a_src,   \
                  ns::kt_direct_b_src, ns::kt_frag_a_row, ns::kt_frag_a_k, ns::kt_frag_b_n, ns::kt_frag_b_k}

static void test_direct(unsigned seed)
{
    check_direct(KT_DIRECT_LAYOUT(gfx12, "gfx12", false), seed);
    check_direct(KT_DIRECT_LAYOUT(gfx11, "gfx11", false), seed);
    check_direct(KT_DIRECT_LAYOUT(cdna, "cdna", false), seed);
    check_direct(KT_DIRECT_LAYOUT(sm90, "sm90", true), seed);
}

/* ---- bf16 rounding: an oracle that picks the nearer neighbour by arithmetic, not bit tricks ---- */
static float f32_of(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

static uint16_t bf16_oracle(uint32_t u)
{
    float x = f32_of(u);
    if (isnan(x)) return 0xFFFF;   /* only NaN-ness is compared for NaN inputs */
    uint32_t lo = u & 0xFFFF0000u;  /* truncation toward zero, and the next value away from zero */
    uint32_t hi = lo + 0x10000u;
    double dlo = fabs((double)x - (double)f32_of(lo));
    double dhi = (lo & 0x7FFFFFFFu) == 0x7F7F0000u ? ldexp(1.0, 128) - fabs((double)x)   /* next is inf */
                                                  : fabs((double)f32_of(hi) - (double)x);
    if ((lo & 0x7FFFFFFFu) == 0x7F800000u) return (uint16_t)(lo >> 16);   /* inf stays inf */
    if (dlo < dhi) return (uint16_t)(lo >> 16);
    if (dhi < dlo) return (uint16_t)(hi >> 16);
    return (uint16_t)(((lo >> 16) & 1u) ? hi >> 16 : lo >> 16);
}

static void test_bf16_rounding(void)
{
    static const uint32_t lows[] = {0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF, 0x4000, 0xC000};
    int bad = 0, checked = 0;
    for (uint32_t top = 0; top < 0x10000u; top++)
        for (uint32_t low : lows) {
            uint32_t u = (top << 16) | low;
            uint16_t amd = kt_bf16_bits_rne(u), nv = sm90::kt_bf16_bits_rne(u);
            checked++;
            if (amd != nv) { bad++; continue; }
            if (isnan(f32_of(u))) {
                /* NaN stays NaN, quieted, sign and top payload bits kept */
                if ((amd & 0x7F80u) != 0x7F80u || !(amd & 0x0040u) || (amd >> 15) != (u >> 31)) bad++;
                continue;
            }
            if (amd != bf16_oracle(u)) bad++;
#ifdef HAVE_HOST_REFERENCE
            if (amd != kt_f32_to_bf16(f32_of(u))) bad++;
#endif
        }
    if (bad) fprintf(stderr, "bf16 rounding: %d of %d patterns wrong\n", bad, checked);
    KT_CHECK(bad == 0);
}

/* ---- arch/prefill_ops.h: one flash step, S (S^T on AMD) -> P in registers -> O (O^T) ----
 * The products are emulated from the prelude's operand and accumulator maps (checked against the
 * instruction tables above); where a map places two elements at one operand position (gfx11's
 * replicated halves) they must agree. */
typedef int (*lane_map)(int, int);
struct flash_maps {
    const char *target;
    int lanes, ab, acc;
    bool st;              /* AMD: S^T = K Q^T, O^T = V^T P^T */
    lane_map a_row, a_k, b_n, b_k, acc_row, acc_col, s_q, s_n, src_lane, src_elem, pv_key;
};

static int emulate_mma(const flash_maps &m, const float (*ra)[16], const float (*rb)[16], float (*d)[8])
{
    float a[16][16], b[16][16];
    int seen_a[16][16] = {}, seen_b[16][16] = {}, bad = 0;
    for (int l = 0; l < m.lanes; l++)
        for (int e = 0; e < m.ab; e++) {
            int i = m.a_row(l, e), k = m.a_k(l, e), n = m.b_n(l, e), kb = m.b_k(l, e);
            if (seen_a[i][k]++ && a[i][k] != ra[l][e]) bad++;
            a[i][k] = ra[l][e];
            if (seen_b[kb][n]++ && b[kb][n] != rb[l][e]) bad++;
            b[kb][n] = rb[l][e];
        }
    for (int i = 0; i < 16; i++)
        for (int k = 0; k < 16; k++) bad += !seen_a[i][k] + !seen_b[i][k];
    for (int l = 0; l < m.lanes; l++)
        for (int e = 0; e < m.acc; e++) {
            float s = 0;
            for (int k = 0; k < 16; k++) s += a[m.acc_row(l, e)][k] * b[k][m.acc_col(l, e)];
            d[l][e] = s;
        }
    return bad;
}

static void check_flash_step(const flash_maps &m, unsigned seed)
{
    float q[16][16], k[16][16], v[16][16], sref[16][16];
    srand(seed);
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++) {
            q[i][j] = (float)(rand() % 9 - 4);
            k[i][j] = (float)(rand() % 9 - 4);
            v[i][j] = (float)(rand() % 9 - 4);
        }
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 16; j++) {
            float s = 0;
            for (int d = 0; d < 16; d++) s += q[i][d] * k[j][d];
            sref[i][j] = s;
        }
    float qf[64][16], kf[64][16], vf[64][16], pf[64][16], s[64][8], o[64][8];
    for (int l = 0; l < m.lanes; l++)
        for (int e = 0; e < m.ab; e++) {
            qf[l][e] = q[m.a_row(l, e)][m.a_k(l, e)];     /* kt_load_a of [q][d] */
            kf[l][e] = k[m.b_n(l, e)][m.b_k(l, e)];       /* kt_load_b of [key][d] */
            /* kt_load_v: B of [key][d] on NVIDIA (kt_load_b_kn), V^T's A by kt_pv_key on AMD */
            vf[l][e] = m.st ? v[m.pv_key(l, e)][m.a_row(l, e)] : v[m.b_k(l, e)][m.b_n(l, e)];
        }
    int bad = m.st ? emulate_mma(m, kf, qf, s) : emulate_mma(m, qf, kf, s);
    for (int l = 0; l < m.lanes; l++)
        for (int i = 0; i < m.acc; i++) bad += s[l][i] != sref[m.s_q(l, i)][m.s_n(l, i)];
    for (int l = 0; l < m.lanes; l++)
        for (int e = 0; e < m.ab; e++) {
            pf[l][e] = s[m.src_lane(l, e)][m.src_elem(l, e)];
            const int qrow = m.st ? m.b_n(l, e) : m.a_row(l, e);
            bad += pf[l][e] != sref[qrow][m.pv_key(l, e)];
        }
    bad += m.st ? emulate_mma(m, vf, pf, o) : emulate_mma(m, pf, vf, o);
    for (int l = 0; l < m.lanes; l++)
        for (int i = 0; i < m.acc; i++) {
            float want = 0;
            for (int j = 0; j < 16; j++) want += sref[m.s_q(l, i)][j] * v[j][m.s_n(l, i)];
            bad += o[l][i] != want;
        }
    if (bad) fprintf(stderr, "%s: %d errors in the flash step (arch/prefill_ops.h)\n", m.target, bad);
    KT_CHECK(bad == 0);
}

static void test_flash_steps(unsigned seed)
{
#define MAPS(ns, st) {#ns, ns::kt_frag_lanes, ns::kt_frag_ab_elems, ns::kt_acc_elems, st, ns::kt_frag_a_row, ns::kt_frag_a_k, \
                      ns::kt_frag_b_n, ns::kt_frag_b_k, ns::kt_acc_row, ns::kt_acc_col, ns::kt_s_q, ns::kt_s_n,           \
                      ns::kt_p_src_lane, ns::kt_p_src_elem, ns::kt_pv_key}
    const flash_maps all[] = {MAPS(gfx12, true), MAPS(gfx11, true), MAPS(cdna, true), MAPS(sm90, false)};
#undef MAPS
    for (const flash_maps &m : all) check_flash_step(m, seed);
}

/* attn/rows.h (prefill.hip's in-register row reductions): an element's row class in its lane
 * (kt_rows_rep) and the butterfly over kt_rows_lane_bit's lanes reach exactly the 16 columns of
 * its row, each once, and nothing of another row. */
template <class RowFn, class ColFn, class RepFn, class BitFn>
static void check_rows(const char *target, int lanes, int elems, RowFn row, ColFn col, RepFn rep, BitFn bit)
{
    int mask = 0, bad = 0;
    for (int b = 1; b < lanes; b *= 2)
        if (bit(b)) mask |= b;
    for (int l = 0; l < lanes; l++)
        for (int i = 0; i < elems; i++) {
            if (rep(i) > i || row(l, rep(i)) != row(l, i)) bad++;
            int seen[16] = {}, n = 0;
            for (int x = 0; x < lanes; x++) {
                if ((x & ~mask) != 0) continue;          /* lanes l ^ x, x in the span of the bits */
                for (int e = 0; e < elems; e++) {
                    if (rep(e) != rep(i)) continue;
                    if (row(l ^ x, e) != row(l, i)) { bad++; continue; }
                    seen[col(l ^ x, e)]++;
                    n++;
                }
            }
            for (int c = 0; c < 16; c++) bad += seen[c] != 1;
            if (n != 16) bad++;
        }
    if (bad) fprintf(stderr, "%s: %d row-class errors (attn/rows.h)\n", target, bad);
    KT_CHECK(bad == 0);
}

/* rows.h's class walk: member j of class c is the j-th element index whose class is c */
template <class RepFn, class SizeFn, class MemberFn>
static void check_classes(const char *target, int elems, RepFn rep, SizeFn size, MemberFn member)
{
    int bad = 0;
    for (int c = 0; c < elems; c++) {
        if (rep(c) != c) continue;
        int j = 0;
        for (int e = 0; e < elems; e++)
            if (rep(e) == c) bad += member(c, j++) != e;
        bad += size(c) != j;
    }
    if (bad) fprintf(stderr, "%s: %d class-walk errors (attn/rows.h)\n", target, bad);
    KT_CHECK(bad == 0);
}

static void test_rows(void)
{
#define CLASSES_OF(ns) check_classes(#ns, ns::kt_acc_elems, ns::kt_rows_rep, ns::kt_class_size, ns::kt_class_member)
    CLASSES_OF(gfx12);
    CLASSES_OF(gfx11);
    CLASSES_OF(cdna);
    CLASSES_OF(sm90);
#undef CLASSES_OF
#define ROWS_OF(ns) check_rows(#ns, ns::kt_frag_lanes, ns::kt_acc_elems, ns::kt_s_q, ns::kt_s_n, ns::kt_rows_rep, ns::kt_rows_lane_bit)
    ROWS_OF(gfx12);
    ROWS_OF(gfx11);
    ROWS_OF(cdna);
    ROWS_OF(sm90);
#undef ROWS_OF
}

int main(void)
{
    for (unsigned seed = 1; seed <= 8; seed++) {
        problem p;
        make_problem(p, seed);
        test_gfx12(p);
        test_gfx11(p);
        test_cdna(p);
        test_sm90(p);
        test_sm90_kn(p);
        test_direct(seed);
        test_flash_steps(seed);
    }
    test_bf16_rounding();
    test_e4m3_conversions();
    test_sm90_kr();
    test_rows();
#ifndef HAVE_HOST_REFERENCE
    printf("note: tuner/half_convert.h not found; bf16 checked against the oracle only\n");
#endif
    KT_TEST_END();
}
