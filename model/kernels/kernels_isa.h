/* kernels_isa.h: what each instruction-set file of the kernels provides (internal to model/).
 *
 * kernels.c holds the public entry points, the scalar reference and the dispatch;
 * kernels_avx2.c and kernels_avx512.c are compiled with their own instruction-set flags
 * (CMakeLists.txt) and only run when the CPU has them (kern_isa_supported). Each ISA provides
 * one kern_isa_ops; the per-type tiles are named in the weight-type table (wtype.c). */
#ifndef MODEL_KERNELS_ISA_H
#define MODEL_KERNELS_ISA_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/kernels/kern_traits.h"

#define KERN_LANES 16

/* The fixed exp of kern_exp_ref, shared by the SIMD copies (Cephes-style expf: x = n ln2 + r,
 * |r| <= ln2/2, e^r by a degree-6 polynomial, times 2^n). */
#define KERN_EXP_LO -87.0f
#define KERN_EXP_L2E 1.44269504088896341f
#define KERN_EXP_C1 0.693359375f
#define KERN_EXP_C2 -2.12194440e-4f
#define KERN_EXP_SHIFTER 12582912.0f /* 1.5 * 2^23: adding it rounds to an integer */
extern const float kern_exp_poly[6];

/* libm's expf as glibc (2.28 and later) computes it on CPUs with FMA, for the SIMD copies of
 * kern_expf_isa and kern_silu_mul (kernels.h). In double: k = round(x 32 / ln2) by adding
 * 1.5 * 2^52 in one fused multiply-add, r = x 32 / ln2 - k in another; 2^(k / 32) from the table's
 * entry k mod 32 with k / 32 added to its exponent field as an integer; 2^(r / 32) ~ (C0 r + C1)
 * r^2 + (C2 r + 1), each step one FMA; the product rounded to float once. The numbers were read
 * from glibc 2.36's libm (Debian 12), the order of operations from its __expf_fma; the SIMD lanes
 * equal libm's expf on every float with |x| < 88 (all 2^32 inputs compared, tests/test_kernels.c),
 * and the rest (|x| >= 88, infinities, NaN: glibc's special cases) go to libm lane by lane. */
#define KERN_EXPF_INV_LN2_N 0x40471547652b82feull /* 32 / ln 2 */
#define KERN_EXPF_SHIFT 0x4338000000000000ull     /* 1.5 * 2^52 */
#define KERN_EXPF_C0 0x3ebc6af84b912394ull
#define KERN_EXPF_C1 0x3f2ebfce50fac4f3ull
#define KERN_EXPF_C2 0x3f962e42ff0c52d6ull
#define KERN_EXPF_SPECIAL_TOP 0x42b /* bits 20-30 of |x| from here on: |x| >= 88 (or inf, NaN) */
extern const uint64_t kern_expf_table[32]; /* 2^(i / 32) minus i << 47, as bits */

typedef void (*kern_to_float_fn)(const void *src, float *dst, int n);

typedef struct {
    const char *name; /* "scalar", "avx2", "avx512" */
    float (*dot)(const float *a, const float *b, int n);
    float (*sum)(const float *a, int n);
    void (*attend)(const float *q, int hs, const float *k, const float *v, size_t stride,
                   const int *slots, int n, float *scratch, float *out);
    /* kern_attend_kv's parts, for keys and values stored as kt / vt (WTYPE_F32 or WTYPE_F16,
     * rows hs values apart), each value widened exactly where it is read:
     * scores: s[t * lds + j] = the canonical dot of query t (q + t * ldq) with key row j, divided
     *   by sqrt(hs), for t < nq, j < n (NULL: kernels.c runs the keys as a matrix of type kt
     *   through kern_matmul_isa, then divides; the same bits);
     * softmax: of n scores in place (kern_attend's max, exp and sum: returns the sum);
     * values: the weighted values of nq queries (weights e + t * lde, sums sum[t]) over shared
     *   rows 0..n_shared-1 of v, then their tails. */
    void (*scores)(wtype kt, const float *q, size_t ldq, int nq, int hs, const void *k, int n,
                   float *s, size_t lds);
    float (*softmax)(float *s, int n);
    void (*values)(wtype vt, const float *e, size_t lde, const float *sum, int nq, int hs,
                   const void *v, int n_shared, const int *const *tail, const int *n_tail,
                   float *out, size_t ldo);
    /* The generic path of a type without a tile on this ISA: rows widened with to_float into
     * a small buffer, then the ISA's f32 tiles (same bits as a typed tile, only slower). */
    void (*matmul_widen)(kern_to_float_fn to_float, const unsigned char *w, size_t ldw, int rows,
                         int K, const float *x, size_t ldx, int T, float *y, size_t ldy,
                         int streams);
    /* kern_expf_isa: y[i] = libm's expf(x[i]) (x and y do not overlap) */
    void (*expf)(const float *x, float *y, int n);
    /* kern_silu_mul: a[i] = silu(a[i]) * b[i], this ISA's expf for libm's */
    void (*silu_mul)(float *a, const float *b, int n);
    /* kern_f16_from_f32 and kern_f16_to_f32: n values between floats and IEEE halves (dst and
     * src do not overlap) */
    void (*f16_from_f32)(const float *src, void *dst, int n);
    void (*f16_to_f32)(const void *src, float *dst, int n);
} kern_isa_ops;

/* One value of kern_silu_mul, in the scalar code's order (the SIMD copies' tails). */
static inline float kern_silu_mul_one(float a, float b, float (*exp_fn)(float)) {
    return a * (1.0f / (1.0f + exp_fn(-a))) * b;
}

extern const kern_isa_ops kern_isa_scalar_ops;

/* A softmax whose scores hold a NaN or an infinity: every weight NaN and the sum NaN, so that
 * every output of the query is NaN and reaches the forward pass's check of the logits. Computed
 * through, a NaN score's weight was exp of the clamped argument (a finite 1e-38 in the SIMD
 * lanes, where max(NaN, lo) is lo) and a -inf score's too, and the query's output looked like a
 * number. Each ISA's softmax ORs kern_exponent_carry over the scores in its pass for the
 * maximum (integer operations beside the float ones: no measurable cost) and calls this when
 * bit 31 is set. */
static inline uint32_t kern_exponent_carry(uint32_t bits) {
    return (bits & 0x7f800000u) + 0x00800000u; /* bit 31: the exponent is all ones */
}
static inline float kern_softmax_nonfinite(float *s, int n) {
    for (int i = 0; i < n; i++) s[i] = __builtin_nanf("");
    return __builtin_nanf("");
}

/* The scalar softmax and value sums (kern_isa_ops). */
float kern_isa_scalar_softmax(float *s, int n);
void kern_isa_scalar_values(wtype vt, const float *e, size_t lde, const float *sum, int nq, int hs,
                            const void *v, int n_shared, const int *const *tail, const int *n_tail,
                            float *out, size_t ldo);

/* Value i of an attention cache's row storage of type t (WTYPE_F32 or WTYPE_F16), widened
 * exactly. */
static inline float kern_kv_value(wtype t, const void *p, size_t i) {
    if (t == WTYPE_F16) {
        uint16_t h;
        __builtin_memcpy(&h, (const unsigned char *)p + 2 * i, 2);
        return wtype_f16_to_f32(h);
    }
    return ((const float *)p)[i];
}

/* Bytes of one value of an attention cache stored as t. */
static inline size_t kern_kv_bytes(wtype t) {
    return t == WTYPE_F16 ? 2 : 4;
}

/* The slots of an attention cache's value rows kernels' value sums take per block (a multiple
 * of 4): rows of about KERN_VALUES_BLOCK_BYTES, at least 4. Each block of value rows is read
 * from memory once and then serves every query and column from the L1 cache; the chains' running
 * sums wait in a buffer between blocks (their order is the slot order all the same). */
#define KERN_VALUES_BLOCK_BYTES 16384
static inline int kern_values_block(int hs, wtype vt) {
    int n = (int)(KERN_VALUES_BLOCK_BYTES / ((size_t)hs * kern_kv_bytes(vt))) / 4 * 4;
    return n < 4 ? 4 : n;
}

/* The value sums by sweeps (the AVX-512 f16 cache's, kernels_avx512.c; AVX2's, both types,
 * kernels_avx2_attend.c): instead of widening a block into memory and summing a few queries a
 * loaded chunk, each row's COLS columns are loaded (and widened) once, in registers, for a group
 * of up to QMAX queries, one chain at a time (rows s = j mod 4, in slot order: the reference's
 * chains, so the same bits). The shared rows go a block at a time (kern_values_block of the
 * cache's type vt); in a block, the queries in groups as even as can be, whose weights are first
 * copied KERN_SWEEP_EB floats apart (so that one register addresses all of them: with a pointer
 * a query, gcc kept the offsets on the stack and reloaded them every row); then one sweep per
 * chain and COLS columns: sweep(vt, Q, the weights' copy, the block's first row, ldv, its first
 * row j and the block's rows (both counted from the block's first), its first column, the
 * running sums of that chain and column's chunk for the group's first query, the floats between
 * two queries' sums, pf, pf_lines) returns pf past the lines it prefetched, pf_lines a row (each
 * sweep a share of the next block). acc: [query][chunk of `lanes` columns][chain][lanes], 4 * hs
 * floats a query. For head sizes of whole sweeps (hs % COLS == 0) whose block fits the weights'
 * copy (kern_sweep_fits). */
#define KERN_SWEEP_EB 256  /* weights a query of a block's copy */
#define KERN_SWEEP_QMAX 8  /* queries a group at most, on any ISA */
typedef uintptr_t (*kern_sweep_fn)(wtype vt, int Q, const float *e, const unsigned char *v,
                                   size_t ldv, int s, int s1, int col0, float *acc, size_t ldacc,
                                   uintptr_t pf, int pf_lines);
static inline int kern_sweep_fits(int hs, wtype vt, int COLS) {
    return hs % COLS == 0 && kern_values_block(hs, vt) <= KERN_SWEEP_EB;
}
static inline __attribute__((always_inline)) void
kern_values_swept(kern_sweep_fn sweep, int QMAX, int COLS, int lanes, wtype vt, const float *e,
                  size_t lde, int nq, int hs, const void *v, int n_shared, float *acc) {
    const size_t ldv = (size_t)hs * kern_kv_bytes(vt), ldacc = 4 * (size_t)hs;
    const int SB = kern_values_block(hs, vt), sweeps = hs / COLS, groups = (nq + QMAX - 1) / QMAX;
    const int steps = 4 * sweeps * groups * (SB / 4); /* prefetching steps a block */
    const int pf_lines = (int)(((size_t)SB * ldv / 64 + steps - 1) / steps);
    float eb[KERN_SWEEP_QMAX * KERN_SWEEP_EB] __attribute__((aligned(64)));
    const unsigned char *vv = (const unsigned char *)v;
    for (int s0 = 0; s0 < n_shared; s0 += SB) {
        const int s1 = n_shared - s0 < SB ? n_shared : s0 + SB;
        uintptr_t pf = (uintptr_t)v + (size_t)(s0 + SB) * ldv; /* the next block */
        for (int g = 0, g0 = 0; g < groups; g0 += (nq - g0) / (groups - g), g++) {
            const int Q = (nq - g0) / (groups - g);
            for (int t = 0; t < Q; t++)
                __builtin_memcpy(eb + t * KERN_SWEEP_EB, e + (size_t)(g0 + t) * lde + s0,
                                 sizeof(float) * (size_t)(s1 - s0));
            for (int j = 0; j < 4; j++)
                for (int p = 0; p < sweeps; p++)
                    pf = sweep(vt, Q, eb, vv + (size_t)s0 * ldv, ldv, j, s1 - s0, COLS * p,
                               acc + (size_t)g0 * ldacc + (size_t)(COLS / lanes * 4 * p + j) * lanes,
                               ldacc, pf, pf_lines);
        }
    }
}

/* Bytes of one block of a block type (wtype.c's block_bytes), as a constant the tiles' type
 * switches fold: WT is a compile-time constant at every call. */
static inline int kern_block_bytes(wtype WT) {
    switch (WT) {
    case WTYPE_Q4_0:
        return 18;
    case WTYPE_Q4_1:
        return 20;
    case WTYPE_Q5_0:
        return 22;
    case WTYPE_Q5_1:
        return 24;
    case WTYPE_Q2_K:
        return 84;
    case WTYPE_Q3_K:
        return 110;
    case WTYPE_Q4_K:
        return 144;
    case WTYPE_Q5_K:
        return 176;
    case WTYPE_Q6_K:
        return 210;
    default:
        return 34;
    }
}

/* The tiles' compile-time view of a type (WT is a constant at every call): a k-quant (256-value super-blocks); a min per 32-value block (q4_1,
 * q5_1: the value is d * q + m); kernels.h's M at all (those, and q4_k / q5_k per sub-block). */
static inline int kern_is_kquant(wtype WT) {
    return WT == WTYPE_Q2_K || WT == WTYPE_Q3_K || WT == WTYPE_Q4_K || WT == WTYPE_Q5_K ||
           WT == WTYPE_Q6_K;
}

static inline int kern_block_min(wtype WT) {
    return WT == WTYPE_Q4_1 || WT == WTYPE_Q5_1;
}

static inline int kern_int8_min(wtype WT) {
    return kern_block_min(WT) || WT == WTYPE_Q4_K || WT == WTYPE_Q5_K;
}

/* Where a 32-value block's packed nibbles (qs) and 5th bits (qh: q5_0, q5_1) start. */
static inline int kern_qs_at(wtype WT) {
    return WT == WTYPE_Q4_0 ? 2 : WT == WTYPE_Q4_1 ? 4 : WT == WTYPE_Q5_0 ? 6 : 8;
}

static inline int kern_qh_at(wtype WT) {
    return WT == WTYPE_Q5_0 ? 2 : 4;
}

/* The int8 mode's quantized activation row (kern_act_quantize, kernels.h): groups of 64 values
 * (two blocks of 32, the 16 lanes of one AVX-512 register), then a float per block for the
 * mins. In a group, q: the 64 int8 values; c: per 4 values (one 32-bit lane), -128 times their
 * sum (the start of a vpdpbusd sum that cancels a +128 offset of the weights: arithmetic shifts
 * by 4 and 2 make it -8 and -32 times, for q4_0's and q6_k's offsets); d: the lane's d_b (8
 * lanes per block). Past K everything is 0. After the groups: ds[2 * groups], d_b times the sum
 * of block b's q (rounded), for the mins; then dd[2 * groups], d_b itself, one per block (the
 * AVX2 tiles form a unit of 8 blocks' scale products A * d_b with one multiplication). */
typedef struct {
    int8_t q[64];
    int32_t c[16];
    float d[16];
} kern_a8_group;

static inline int kern_a8_groups(int K) {
    return (K + 63) / 64;
}

static inline const float *kern_a8_ds(const void *row, int K) {
    return (const float *)((const kern_a8_group *)row + kern_a8_groups(K));
}

static inline const float *kern_a8_dd(const void *row, int K) {
    return kern_a8_ds(row, K) + 2 * kern_a8_groups(K);
}

/* CPU features the tiles check beyond their instruction set (cpuid leaf 7): AVX-512 VNNI (with
 * the AVX-512 the tiles need), AVX-VNNI (with AVX2), AMX-INT8 (which no tile uses: `cost` says
 * so). Asked once per process and feature (a cpuid traps to the hypervisor in a VM), so the
 * tiles' dispatch may ask on every call. */
typedef enum {
    KERN_CPU_AVX512_VNNI,
    KERN_CPU_AVX_VNNI,
    KERN_CPU_AMX_INT8,
    KERN_CPU_FEATURES
} kern_cpu_feature;
int kern_cpu_has(kern_cpu_feature f);

/* int8b activations (kern_act8b_quantize, kernels.h "the int8b mode"): T rows in chunks of at most
 * KERN_A8B_CHUNK tokens, the width of the int8b tiles: nc = ceil(T / 8) chunks, chunk c holding
 * tokens [T c / nc, T (c + 1) / nc) (sizes differ by at most one). A chunk of n tokens from
 * token t0 is K / 32 block records, block b's at byte (t0 K / 32 + b n) KERN_A8B_REC: q[n][32]
 * (token i's values of block b), then, per token, d[n] (d_b, float), ds[n] (d_b times the sum
 * of the block's q, rounded: the mins' term), s128[n] (-128 times that sum, int32: the start of
 * a vpdpbusd sum whose weights are w + 128), s8[n] (-8 times it: weights w + 8), h32[2][n] (-32
 * times the sums of the block's two halves of 16: q6_k's w + 32). Every operand of a chunk's
 * tokens sits at a fixed offset from the record, which is what lets a tile address them all
 * from one register. q5_0 (w + 16) and q3_k (w + 4) shift s8 and h32. The layout depends on T,
 * never a token's values: token t's q and d_b are kern_act_quantize's. */
enum { KERN_A8B_CHUNK = 8, KERN_A8B_REC = 56 };

static inline int kern_a8b_chunks(int T) {
    return (T + KERN_A8B_CHUNK - 1) / KERN_A8B_CHUNK;
}

/* The first token of chunk c (c = kern_a8b_chunks(T): T). */
static inline int kern_a8b_first(int T, int c) {
    return (int)((long long)T * c / kern_a8b_chunks(T));
}

/* Token i's per-block fields of a record of n tokens (d_b, ds, s128, s8, h32[2]) from d_b and the
 * sums h0, h1 of the block's two halves of q: every int8b quantizer's last step. Four scalar
 * stores: from an array of the four, gcc made them in one vector, stored it to the stack and
 * copied it out word by word, and each word's load waited for that store (AVX-512 quantizer on
 * Zen 5, 64 rows of 768 and 2048 values, one core: 0.30-0.44 -> 0.26-0.36 ns a value; AVX2's
 * 0.44 -> 0.38). */
static inline void kern_a8b_put_sums(unsigned char *rec, int n, int i, float d, int32_t h0,
                                     int32_t h1) {
    const int32_t s = h0 + h1, s128 = -128 * s, s8 = -8 * s, h32a = -32 * h0, h32b = -32 * h1;
    const float ds = d * (float)s;
    memcpy(rec + 32 * n + 4 * i, &d, 4);
    memcpy(rec + 36 * n + 4 * i, &ds, 4);
    memcpy(rec + 40 * n + 4 * i, &s128, 4);
    memcpy(rec + 44 * n + 4 * i, &s8, 4);
    memcpy(rec + 48 * n + 4 * i, &h32a, 4);
    memcpy(rec + 52 * n + 4 * i, &h32b, 4);
}

/* Block b's record in the chunk of n tokens that starts at token t0. */
static inline size_t kern_a8b_at(int K, int t0, int n, int b) {
    return ((size_t)t0 * (size_t)(K / 32) + (size_t)b * (size_t)n) * KERN_A8B_REC;
}

/* One block of 32 activations as both modes quantize it (kernels.h, "the int8 mode"): q, d_b
 * and the sums of q per 4 values; the scalar reference of the quantizers (kernels_int8.c). */
void kern_a8_block_ref(const float *xb, int8_t q[32], float *d, int s4[8]);

/* Whether a matrix of that many bytes streams from memory (a tile's `streams`). The whole
 * matrix, not one thread's share of its rows, decides: the 110M shape's rows split 8 ways fit
 * in the cache, the matrix does not (deciding by the share made q8_0 110M 1.5-2x slower at
 * T = 1). The bound is low because a one-row pass reads each matrix once per token with the
 * rest of the model in between: a matrix that would fit in the cache is not in it unless the
 * whole model is. At 512 KB, the 110M shape's 768 x 768 k-quant matrices (484 KB in q6_k) were
 * read by tiles of adjacent rows from memory; at 64 KB their int8 one-row passes are 1.9x
 * (Q6_K) and 1.3x (Q4_K_M) faster on one thread, 1.2x on two, and nothing else moved (f32,
 * f16, q8_0 110M, 1.1B, 15M, stories260K within 5%; best of 4-5 alternations). */
static inline int kern_streams(size_t matrix_bytes) {
    return matrix_bytes > ((size_t)64 << 10);
}

/* Row groups of a tile of RT rows. A matrix in the cache is read in groups of adjacent rows.
 * One that streams from memory is cut into RT equal parts and group j takes row j of each part,
 * so a tile reads RT long sequential streams (except the wide passes of AVX2 and AVX-512 from 16
 * tokens, which read each row many times from L1 and take adjacent rows: kernels_avx512.c,
 * WIDE_ADJACENT_FROM). Tiles of adjacent rows make RT short streams (one
 * row each, 1-8 KB) that the hardware prefetchers must pick up again at every row: measured on
 * one core of this machine (Zen 4 VM; 128-192 MB matrices, K = 2048, T = 1, best of 10 runs
 * alternating with a plain read of the same bytes), 2-row tiles of adjacent rows read 11-75%
 * of the plain read's bandwidth (q6_k 11%, q8_0 33%, f32 72%), 1-row tiles 98-130% where the
 * arithmetic keeps up, 4-row far-apart tiles 105-168%. An earlier remedy, a software prefetch
 * 16 KB ahead of each adjacent row, was slower than none with far-apart rows (1.1B q8_0 at
 * T = 1, one thread: 5.0 against 5.6 GB/s) and is gone; greedy decoding of the 110M q8_0 and
 * f32 presets on one thread ran 1.7-2.4x faster than with it. On top of the far-apart rows,
 * the AVX-512 one-row tiles prefetch 2 KB ahead (kernels_avx512.h, prefetch_rows: measured on
 * a Xeon, not yet on Zen 4). Group j: first row `row`,
 * `valid` rows (the rest reuse the last and are not stored), rows and results `step` apart. */
typedef struct {
    int groups, part;
} kern_rowgroups;

static inline kern_rowgroups kern_rowgroups_of(int rows, int RT, int streams) {
    kern_rowgroups g;
    g.part = streams ? (rows + RT - 1) / RT : 1;
    g.groups = streams ? g.part : (rows + RT - 1) / RT;
    return g;
}

static inline void kern_rowgroup(const kern_rowgroups *g, int j, int rows, int RT, int *row,
                                 int *valid, int *step) {
    if (g->part > 1 || RT == 1) { /* streaming: rows j, j + part, ... */
        int v = 0;
        for (int i = 0; i < RT; i++) v += j + i * g->part < rows;
        *row = j, *valid = v, *step = g->part;
    } else {
        *row = j * RT, *valid = rows - j * RT < RT ? rows - j * RT : RT, *step = 1;
    }
}

/* Runs `body` for every row group of RT rows of a matrix of `rows` rows at w (rows ldw bytes
 * apart), with row, valid, step (kern_rowgroup), wr (the group's first row) and ws (bytes
 * between its rows) defined. */
#define KERN_ROWS_LOOP(RT_, rows, streams, w, ldw, body)                                           \
    do {                                                                                           \
        kern_rowgroups g_ = kern_rowgroups_of(rows, RT_, streams);                                 \
        for (int j_ = 0; j_ < g_.groups; j_++) {                                                   \
            int row, valid, step;                                                                  \
            kern_rowgroup(&g_, j_, rows, RT_, &row, &valid, &step);                                \
            const unsigned char *wr = (w) + (size_t)row * (ldw);                                   \
            size_t ws = (size_t)step * (ldw);                                                      \
            (void)valid, (void)ws;                                                                 \
            body;                                                                                  \
        }                                                                                          \
    } while (0)

/* The AVX-512 tile schedule both direct product families run (kernels_avx512.c's float and
 * block types, kernels_avx512_vnni.c's int8 mode): tokens in fours with 4-row tiles, the 1-3 left
 * over past a block of 4 in 4-row tiles of the same row group while its rows are in L1 (a
 * second pass would read every weight from memory again: the measurements are beside each
 * family); up to 3 tokens alone: one token 4 rows streaming (last argument STREAM1) when the
 * matrix streams, else 16 rows when ONE16 holds, else 8; two tokens 8x2; three 5x3.
 * TILE(RT, TT, t, last) runs the family's tile of RT rows against TT tokens from token t, inside
 * KERN_ROWS_LOOP (row, valid, step, wr, ws defined). RT and TT are constants at every call. */
#define KERN_AVX512_SCHEDULE(T, rows, streams, w, ldw, TILE, ONE16, STREAM1)                      \
    do {                                                                                           \
        const int t0_ = (T) / 4 * 4, rem_ = (T) - t0_;                                             \
        if (t0_) {                                                                                 \
            KERN_ROWS_LOOP(4, rows, streams, w, ldw, {                                             \
                for (int t_ = 0; t_ < t0_; t_ += 4) TILE(4, 4, t_, 0);                             \
                if (rem_ == 1) TILE(4, 1, t0_, 0);                                                 \
                if (rem_ == 2) TILE(4, 2, t0_, 0);                                                 \
                if (rem_ == 3) TILE(4, 3, t0_, 0);                                                 \
            });                                                                                    \
        } else if (rem_ == 1 && (streams)) {                                                       \
            KERN_ROWS_LOOP(4, rows, streams, w, ldw, TILE(4, 1, 0, STREAM1));                      \
        } else if (rem_ == 1 && (ONE16)) {                                                         \
            KERN_ROWS_LOOP(16, rows, streams, w, ldw, TILE(16, 1, 0, 0));                          \
        } else if (rem_ == 1) {                                                                    \
            KERN_ROWS_LOOP(8, rows, streams, w, ldw, TILE(8, 1, 0, 0));                            \
        } else if (rem_ == 2) {                                                                    \
            KERN_ROWS_LOOP(8, rows, streams, w, ldw, TILE(8, 2, 0, 0));                            \
        } else if (rem_ == 3) {                                                                    \
            KERN_ROWS_LOOP(5, rows, streams, w, ldw, TILE(5, 3, 0, 0));                            \
        }                                                                                          \
    } while (0)

/* The rows per pass from which an AVX-512 tile of a quantized type widens a panel of
 * kern_widen_rows rows into a float buffer once and runs the f32 tiles over it, instead of widening every
 * weight again for each block of 4 tokens. The same floats meet the same FMAs in the same
 * order, so the bits do not change (tests/test_kernels.c runs T on both sides). Measured on
 * the synthetic presets (Zen 4, 2 threads, rows/s of `decbench cost`, direct -> widened):
 * T = 64: 110M q8_0 489 -> 740, Q4_K_M 487 -> 750, Q6_K 462 -> 819; T = 8: Q4_K_M 538 -> 522
 * (110M), 51 -> 56 (1.1B), Q6_K 320 -> 442; q8_0, whose widening is cheapest, gains from
 * T = 16 (110M 526 -> 511 is a tie, 1.1B 52 -> 65) and loses at T = 8 (466 -> 399). f16 and
 * bf16 never: their widening is one instruction per 16 weights and the buffer's stores and
 * loads cost more (T = 64: 820 -> 635; AVX2 alike: kernels_avx2.c). AVX-512's wide passes
 * widen f16 and bf16 per chunk of K instead, into an L1-sized buffer, from 16 rows
 * (kernels_avx512.c). AVX2's direct tiles hold only 2 rows x 3 tokens: it widens from 3 tokens
 * (kernels_avx2.c, matmul_blocks). */
static inline int kern_widen_from(wtype t) {
    return t == WTYPE_F32 || t == WTYPE_F16 || t == WTYPE_BF16 ? 1 << 30 : t == WTYPE_Q8_0 ? 16 : 8;
}

/* Rows widened at a time into a float panel (KERN_WIDENED_PANELS): a multiple of `unit` (the
 * rows of the f32 tile that runs over the panel: the wide tiles of AVX2 and AVX-512 take 6), up
 * to 16 rounded up to whole units (18),
 * fewer for long rows so the buffer stays within 256 KB, at least one unit (KERN_SCRATCH). */
static inline int kern_widen_rows(int K, int unit) {
    int cap = (16 + unit - 1) / unit * unit, n = (int)(65536 / (K > 0 ? K : 1));
    n = n > cap ? cap : n / unit * unit;
    return n < unit ? unit : n;
}

/* The kernels' K-long buffers (a panel of widened rows, one widened row) live on the stack up
 * to KERN_STACK_BYTES and on the heap beyond. A panel of 6 rows of the largest hidden size of a
 * released model (73728, Nemotron-4 340B) is 1.7 MB. A file at MODEL_MAX_HIDDEN (2^20) would
 * need 24 MB, past a thread's 8 MB stack: such a file crashed passes of 8 rows or more.
 * kern_scratch_floats exits with a message when the heap is out of memory, since the kernels
 * cannot return an error. KERN_SCRATCH declares `name`, n floats, and KERN_SCRATCH_END frees
 * it. kern_matmul_int8_ref's row of int8 weights and scales (2.1 MB at MODEL_MAX_HIDDEN) takes
 * one too. Both start on a 64-byte line: an f16 cache's keys and values are widened into such a
 * buffer and read back in 64-byte loads, which straddled two lines each at a VLA's 16-byte
 * alignment (bench/attend_speed.c, one thread's CPU time, Qwen2.5-0.5B's attention at context
 * 16384 with an f16 cache: the value sums 3.8-4.2 ns per key and query, aligned 2.1-2.3). */
#define KERN_STACK_BYTES ((size_t)2 << 20)
float *kern_scratch_floats(size_t n);
#define KERN_SCRATCH(name, n)                                                                      \
    const size_t name##_n_ = (n);                                                                  \
    const int name##_heap_ = name##_n_ * sizeof(float) > KERN_STACK_BYTES;                         \
    float name##_stack_[name##_heap_ ? 1 : name##_n_] __attribute__((aligned(64)));                \
    float *name = name##_heap_ ? kern_scratch_floats(name##_n_) : name##_stack_
#define KERN_SCRATCH_END(name)                                                                     \
    do {                                                                                           \
        if (name##_heap_) free(name);                                                              \
    } while (0)

/* Widens a matrix of `rows` rows of K values exactly, kern_widen_rows(K, UNIT) rows at a time,
 * into a float panel and multiplies each panel by an ISA's f32 tile, F32_TILE (a KERN_TILE_DECL
 * function). `widen` fills rows r .. r + rt - 1 of the matrix into buf (K floats per row):
 * to_float row by row for types without a tile (the generic paths), a tile's own SIMD widening
 * for wide passes (kern_widen_from). */
#define KERN_WIDENED_PANELS(F32_TILE, UNIT, rows, K, x, ldx, T, y, ldy, widen)                    \
    do {                                                                                           \
        int n_ = kern_widen_rows(K, UNIT);                                                         \
        KERN_SCRATCH(buf, (size_t)n_ * (K));                                                       \
        for (int r = 0; r < (rows); r += n_) {                                                     \
            int rt = (rows) - r < n_ ? (rows) - r : n_;                                            \
            widen;                                                                                 \
            F32_TILE((const unsigned char *)buf, 4 * (size_t)(K), rt, K, x, ldx, T, (y) + r, ldy, \
                     0);                                                                           \
        }                                                                                          \
        KERN_SCRATCH_END(buf);                                                                     \
    } while (0)

#if defined(__x86_64__) || defined(_M_X64)
#define KERN_X86 1
extern const kern_isa_ops kern_isa_avx2_ops, kern_isa_avx512_ops;
/* Tiles named in the weight-type table. */
void kern_avx2_f32(const unsigned char *w, size_t ldw, int rows, int K, const float *x, size_t ldx,
                   int T, float *y, size_t ldy, int streams);
void kern_avx2_f16(const unsigned char *w, size_t ldw, int rows, int K, const float *x, size_t ldx,
                   int T, float *y, size_t ldy, int streams);
void kern_avx2_bf16(const unsigned char *w, size_t ldw, int rows, int K, const float *x,
                    size_t ldx, int T, float *y, size_t ldy, int streams);
void kern_avx512_f32(const unsigned char *w, size_t ldw, int rows, int K, const float *x,
                     size_t ldx, int T, float *y, size_t ldy, int streams);
void kern_avx512_f16(const unsigned char *w, size_t ldw, int rows, int K, const float *x,
                     size_t ldx, int T, float *y, size_t ldy, int streams);
void kern_avx512_bf16(const unsigned char *w, size_t ldw, int rows, int K, const float *x,
                      size_t ldx, int T, float *y, size_t ldy, int streams);
#define KERN_TILE_DECL(fn)                                                                         \
    void fn(const unsigned char *w, size_t ldw, int rows, int K, const float *x, size_t ldx,       \
            int T, float *y, size_t ldy, int streams)
KERN_TILE_DECL(kern_avx2_q8_0);
KERN_TILE_DECL(kern_avx2_q4_0);
KERN_TILE_DECL(kern_avx2_q4_1);
KERN_TILE_DECL(kern_avx2_q5_0);
KERN_TILE_DECL(kern_avx2_q5_1);
KERN_TILE_DECL(kern_avx2_q2_k);
KERN_TILE_DECL(kern_avx2_q3_k);
KERN_TILE_DECL(kern_avx2_q4_k);
KERN_TILE_DECL(kern_avx2_q5_k);
KERN_TILE_DECL(kern_avx2_q6_k);
KERN_TILE_DECL(kern_avx512_q8_0);
KERN_TILE_DECL(kern_avx512_q4_0);
KERN_TILE_DECL(kern_avx512_q4_1);
KERN_TILE_DECL(kern_avx512_q5_0);
KERN_TILE_DECL(kern_avx512_q5_1);
KERN_TILE_DECL(kern_avx512_q2_k);
KERN_TILE_DECL(kern_avx512_q3_k);
KERN_TILE_DECL(kern_avx512_q4_k);
KERN_TILE_DECL(kern_avx512_q5_k);
KERN_TILE_DECL(kern_avx512_q6_k);
/* The int8 mode's tiles (kernels_avx2_int8.c; kernels_avx512_vnni.c, which needs VNNI). */
#define KERN_INT8_DECL(fn)                                                                         \
    void fn(const unsigned char *w, size_t ldw, int rows, int K, const void *xa, size_t lda,       \
            int T, float *y, size_t ldy, int streams)
void kern_avx2_act_quantize_row(const float *x, int K, void *out);
KERN_INT8_DECL(kern_avx2_int8_q8_0);
KERN_INT8_DECL(kern_avx2_int8_q4_0);
KERN_INT8_DECL(kern_avx2_int8_q5_0);
KERN_INT8_DECL(kern_avx2_int8_q4_1);
KERN_INT8_DECL(kern_avx2_int8_q5_1);
KERN_INT8_DECL(kern_avx2_int8_q3_k);
KERN_INT8_DECL(kern_avx2_int8_q4_k);
KERN_INT8_DECL(kern_avx2_int8_q5_k);
KERN_INT8_DECL(kern_avx2_int8_q6_k);
#define KERN_PACKED_DECL(fn)                                                                       \
    void fn(const unsigned char *p, size_t ldw, int groups, int K, const void *xa, float *y,      \
            int streams)
KERN_PACKED_DECL(kern_avx2_packed_q4_0);
KERN_PACKED_DECL(kern_avx2_packed_q4_k);
KERN_PACKED_DECL(kern_avx2_packed_q6_k);
/* The int8b mode's tiles (kernel_traits.h's wtype_matmul_int8b_fn; kernels_avx512_int8b.c, which
 * needs VNNI, kernels_avx2_int8b.c, and kernels_avxvnni_int8b.c, which needs AVX-VNNI), and the
 * AVX2 and AVX-512 (kernels_avx512.c) quantizers of blocks [b0, b1) of one int8b row (x: the row's
 * start): token i of a chunk of n whose block records start at `chunk` (kern_a8b_at). */
#define KERN_INT8B_DECL(fn)                                                                        \
    void fn(const unsigned char *p, size_t gbytes, int groups, int K, const void *xa, int T,       \
            float *y, size_t ldy)
void kern_avx2_act8b_quantize_row(const float *x, int b0, int b1, unsigned char *chunk, int n,
                                  int i);
void kern_avx512_act8b_quantize_row(const float *x, int b0, int b1, unsigned char *chunk, int n,
                                    int i);
KERN_INT8B_DECL(kern_avx2_int8b_q8_0);
KERN_INT8B_DECL(kern_avx2_int8b_q4_0);
KERN_INT8B_DECL(kern_avx2_int8b_q4_1);
KERN_INT8B_DECL(kern_avx2_int8b_q5_0);
KERN_INT8B_DECL(kern_avx2_int8b_q5_1);
KERN_INT8B_DECL(kern_avx2_int8b_q3_k);
KERN_INT8B_DECL(kern_avx2_int8b_q4_k);
KERN_INT8B_DECL(kern_avx2_int8b_q5_k);
KERN_INT8B_DECL(kern_avx2_int8b_q6_k);
KERN_INT8B_DECL(kern_avxvnni_int8b_q8_0);
KERN_INT8B_DECL(kern_avxvnni_int8b_q4_0);
KERN_INT8B_DECL(kern_avxvnni_int8b_q4_1);
KERN_INT8B_DECL(kern_avxvnni_int8b_q5_0);
KERN_INT8B_DECL(kern_avxvnni_int8b_q5_1);
KERN_INT8B_DECL(kern_avxvnni_int8b_q3_k);
KERN_INT8B_DECL(kern_avxvnni_int8b_q4_k);
KERN_INT8B_DECL(kern_avxvnni_int8b_q5_k);
KERN_INT8B_DECL(kern_avxvnni_int8b_q6_k);
KERN_INT8B_DECL(kern_vnni8b_q8_0);
KERN_INT8B_DECL(kern_vnni8b_q4_0);
KERN_INT8B_DECL(kern_vnni8b_q4_1);
KERN_INT8B_DECL(kern_vnni8b_q5_0);
KERN_INT8B_DECL(kern_vnni8b_q5_1);
KERN_INT8B_DECL(kern_vnni8b_q3_k);
KERN_INT8B_DECL(kern_vnni8b_q4_k);
KERN_INT8B_DECL(kern_vnni8b_q5_k);
KERN_INT8B_DECL(kern_vnni8b_q6_k);
KERN_INT8_DECL(kern_vnni_q8_0);
KERN_INT8_DECL(kern_vnni_q4_0);
KERN_INT8_DECL(kern_vnni_q5_0);
KERN_INT8_DECL(kern_vnni_q4_1);
KERN_INT8_DECL(kern_vnni_q5_1);
KERN_INT8_DECL(kern_vnni_q3_k);
KERN_INT8_DECL(kern_vnni_q4_k);
KERN_INT8_DECL(kern_vnni_q5_k);
KERN_INT8_DECL(kern_vnni_q6_k);
#define KERN_X86_FN(f) f
#else
#define KERN_X86_FN(f) NULL
#endif

#endif
