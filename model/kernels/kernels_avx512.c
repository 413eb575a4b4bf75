/* kernels_avx512.c: the AVX-512 kernels (compiled with -mavx512f/dq/bw/vl, run only on CPUs
 * that have them: kernels.c checks). The 16 lanes of the canonical order (kernels.h) are one
 * register; tiles of up to 16 accumulators are folded 16 at a time, and passes of many tokens
 * over float weights run wide tiles of 24 over chunks of K (below, "wide passes"). Each tile
 * forms exactly the weights of the type's to_float (wtype.h) and feeds them to the FMAs in the
 * canonical order, so results equal the scalar reference bit for bit (tests/test_kernels.c).
 * Attention's reductions are in kernels_avx512_attend.c. */
#include "model/kernels/kernels.h"
#include "model/kernels/kernels_isa.h"
#include "model/weights/wtype_blocks.h"

#if KERN_X86
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "model/kernels/kernels_avx512.h"

/* tile(RT, TT): RT weight rows against TT tokens, each of the RT*TT dot products in its own
 * 16-lane accumulator, exactly the canonical order. Written once as an always-inline function;
 * the constant RT/TT (and type) of each caller lets the compiler keep the accumulators in
 * registers. */

/* ---- block types ------------------------------------------------------------------------ */
/* A block of BS values is read as BS/16 chunks of 16 lanes, in value order. For each chunk the
 * tile forms the 16 weights exactly as the type's to_float does (wtype_blocks.c), then feeds
 * them to the FMAs like any other 16 weights. Scales are decoded once per block and row
 * (blk_prep) and, per sub-block of values sharing a scale and min, turned into a table
 * (sub_prep) holding the exact weight of every quantized value: lut[i] = round(d1 * i - m1)
 * (one rounding, the product being exact, as in ggml's `d1 * q - m1`). A chunk is then one
 * permute of that table by its 4-bit values (vpermps reads only an index's low 4 bits, so the
 * high nibble of a byte needs no masking), the 5th bit (q5, q3_k) selecting a second table. */

static inline int is_float(wtype WT) { /* f32, f16, bf16: load_w16 reads them */
    return WT == WTYPE_F32 || WT == WTYPE_F16 || WT == WTYPE_BF16;
}

static inline int is_block(wtype WT) {
    return !is_float(WT) && WT != WTYPE_Q8_0;
}

static inline int block_size(wtype WT) {
    return kern_is_kquant(WT) ? 256 : 32;
}

/* Chunks sharing one scale (and table): 2 (32 values) or 1 (16). */
static inline int sub_chunks(wtype WT) {
    return WT == WTYPE_Q2_K || WT == WTYPE_Q3_K || WT == WTYPE_Q6_K ? 1 : 2;
}

static inline __m512 iota16(void) {
    return _mm512_setr_ps(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
}

/* 32-value blocks: d (and m) of blocks 0..nb-1 of a row, from their f16 fields at offset 0
 * (and 2) of each block, widened exactly (vcvtph2ps). */
static inline __attribute__((always_inline)) void stage_group(wtype WT, const unsigned char *b,
                                                              int nb, stage *st) {
    const __m512i idx =
        _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                           _mm512_set1_epi32(kern_block_bytes(WT)));
    __mmask16 k = nb >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << nb) - 1);
    __m512i g = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), k, idx, b, 1);
    _mm512_storeu_ps(st->s, _mm512_cvtph_ps(_mm512_cvtepi32_epi16(g)));
    if (WT == WTYPE_Q4_1 || WT == WTYPE_Q5_1)
        _mm512_storeu_ps(st->m, _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(g, 16))));
}

/* Per sub-block and row: the table(s) of exact weights, or the scale (q6_k). */
typedef struct {
    __m512 a, b;
} sub_state;

/* The state of the sub-block starting at chunk c of block j of the staged group (32-value
 * blocks) or of the staged block (k-quants, j = 0). */
static inline __attribute__((always_inline)) sub_state sub_prep(wtype WT, int c, const stage *st,
                                                                int j) {
    sub_state r;
    const __m512 i16 = iota16(), hi16 = _mm512_add_ps(iota16(), _mm512_set1_ps(16.0f));
    const __m512 q2 = _mm512_setr_ps(0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3);
    switch (WT) {
    case WTYPE_Q4_0: /* (i - 8) * d */
        r.a = r.b =
            _mm512_mul_ps(_mm512_sub_ps(i16, _mm512_set1_ps(8.0f)), _mm512_set1_ps(st->s[j]));
        break;
    case WTYPE_Q4_1: /* i * d + m */
        r.a = r.b = _mm512_fmadd_ps(i16, _mm512_set1_ps(st->s[j]), _mm512_set1_ps(st->m[j]));
        break;
    case WTYPE_Q5_0: /* (i - 16) * d: values 0..15 in a, 16..31 in b */
        r.a = _mm512_mul_ps(_mm512_sub_ps(i16, _mm512_set1_ps(16.0f)), _mm512_set1_ps(st->s[j]));
        r.b = _mm512_mul_ps(i16, _mm512_set1_ps(st->s[j]));
        break;
    case WTYPE_Q5_1: /* i * d + m */
        r.a = _mm512_fmadd_ps(i16, _mm512_set1_ps(st->s[j]), _mm512_set1_ps(st->m[j]));
        r.b = _mm512_fmadd_ps(hi16, _mm512_set1_ps(st->s[j]), _mm512_set1_ps(st->m[j]));
        break;
    case WTYPE_Q2_K: /* dl * (i & 3) - ml: the index is 4 bits of which the low 2 count */
        r.a = r.b = _mm512_fmsub_ps(q2, _mm512_set1_ps(st->s[c]), _mm512_set1_ps(st->m[c]));
        break;
    case WTYPE_Q3_K: /* dl * ((i & 3) - 4) without the high bit, dl * (i & 3) with it */
        r.a = _mm512_mul_ps(_mm512_sub_ps(q2, _mm512_set1_ps(4.0f)), _mm512_set1_ps(st->s[c]));
        r.b = _mm512_mul_ps(q2, _mm512_set1_ps(st->s[c]));
        break;
    case WTYPE_Q4_K: /* d1 * i - m1, sub-block c / 2 */
        r.a = r.b =
            _mm512_fmsub_ps(i16, _mm512_set1_ps(st->s[c / 2]), _mm512_set1_ps(st->s[8 + c / 2]));
        break;
    case WTYPE_Q5_K:
        r.a = _mm512_fmsub_ps(i16, _mm512_set1_ps(st->s[c / 2]), _mm512_set1_ps(st->s[8 + c / 2]));
        r.b = _mm512_fmsub_ps(hi16, _mm512_set1_ps(st->s[c / 2]), _mm512_set1_ps(st->s[8 + c / 2]));
        break;
    default: /* q6_k: d * sc of sub-block c */
        r.a = r.b = _mm512_set1_ps(st->s[c]);
        break;
    }
    return r;
}

/* The 16 exact weights of chunk c (values 16c..16c+15 of the block at b). */
static inline __attribute__((always_inline)) __m512 chunk(wtype WT, const unsigned char *b, int c,
                                                          sub_state st) {
    switch (WT) {
    case WTYPE_Q4_0:
    case WTYPE_Q4_1: {
        __m512i q = bytes16(b + (WT == WTYPE_Q4_0 ? 2 : 4));
        return _mm512_permutexvar_ps(c ? _mm512_srli_epi32(q, 4) : q, st.a);
    }
    case WTYPE_Q5_0:
    case WTYPE_Q5_1: {
        const unsigned char *qs = b + (WT == WTYPE_Q5_0 ? 6 : 8), *qhp = qs - 4;
        uint32_t qh;
        memcpy(&qh, qhp, 4);
        __m512i q = bytes16(qs);
        q = c ? _mm512_srli_epi32(q, 4) : q;
        __m512 r = _mm512_permutexvar_ps(q, st.a);
        return _mm512_mask_permutexvar_ps(r, (__mmask16)(qh >> (16 * c)), q, st.b);
    }
    case WTYPE_Q2_K: {
        int h = c / 8, j = (c % 8) / 2, p = c % 2;
        __m512i q = bytes16(b + 16 + 32 * h + 16 * p);
        return _mm512_permutexvar_ps(j ? _mm512_srli_epi32(q, 2 * j) : q, st.a);
    }
    case WTYPE_Q3_K: {
        int h = c / 8, j = (c % 8) / 2, p = c % 2;
        __m512i q = bytes16(b + 32 + 32 * h + 16 * p);
        q = j ? _mm512_srli_epi32(q, 2 * j) : q;
        __mmask16 hb = _mm_test_epi8_mask(_mm_loadu_si128((const __m128i *)(b + 16 * p)),
                                          _mm_set1_epi8((char)(1 << (4 * h + j))));
        __m512 r = _mm512_permutexvar_ps(q, st.a);
        return _mm512_mask_permutexvar_ps(r, hb, q, st.b);
    }
    case WTYPE_Q4_K:
    case WTYPE_Q5_K: {
        int g = c / 4, p = (c % 4) & 1, hi = c % 4 >= 2;
        __m512i q = bytes16(b + (WT == WTYPE_Q4_K ? 16 : 48) + 32 * g + 16 * p);
        q = hi ? _mm512_srli_epi32(q, 4) : q;
        __m512 r = _mm512_permutexvar_ps(q, st.a);
        if (WT == WTYPE_Q4_K) return r;
        __mmask16 hb = _mm_test_epi8_mask(_mm_loadu_si128((const __m128i *)(b + 16 + 16 * p)),
                                          _mm_set1_epi8((char)(1 << (2 * g + hi))));
        return _mm512_mask_permutexvar_ps(r, hb, q, st.b);
    }
    default: { /* q6_k: (d * sc) * (q6 - 32); the 6-bit value is assembled in 16 bytes */
        int h = c / 8, k = (c % 8) / 2, p = c % 2;
        __m128i lo = _mm_loadu_si128((const __m128i *)(b + 64 * h + 32 * (k & 1) + 16 * p));
        __m128i hb = _mm_loadu_si128((const __m128i *)(b + 128 + 32 * h + 16 * p));
        lo = k < 2 ? lo : _mm_srli_epi16(lo, 4);
        /* bits 2k, 2k+1 of qh to bits 4, 5 */
        hb = k < 2 ? _mm_slli_epi16(hb, 4 - 2 * k) : _mm_srli_epi16(hb, 2 * k - 4);
        __m128i q = _mm_ternarylogic_epi32(lo, hb, _mm_set1_epi8(0x0f), 0xe4); /* m ? lo : hb */
        q = _mm_sub_epi8(_mm_and_si128(q, _mm_set1_epi8(0x3f)), _mm_set1_epi8(32));
        return _mm512_mul_ps(st.a, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q)));
    }
    }
}

/* After staging: the compiler must read the scales back from memory (as broadcast loads)
 * instead of keeping the vectors and extracting lanes with permutes, which compete with the
 * chunks' permutes for the one shuffle port (measured: q4_k 1.3x faster at T = 1). */
#define STAGED() __asm__ volatile("" ::: "memory")

/* The block-type part of tile(): same accumulators, same order of FMAs. 32-value blocks are
 * read in groups of up to 16 whose scales are staged together; k-quant blocks one at a time. */
static inline __attribute__((always_inline)) void tile_blocks(wtype WT, const unsigned char **wr,
                                                              int RT, const float *x, size_t ldx,
                                                              int TT, int K, __m512 acc[16]) {
    const int BS = block_size(WT), BB = kern_block_bytes(WT), SUB = sub_chunks(WT);
    const int GROUP = BS == 32 ? 16 : 1; /* blocks per staging */
    stage st[16];
    for (int k0 = 0; k0 < K; k0 += GROUP * BS) {
        int nb = (K - k0) / BS < GROUP ? (K - k0) / BS : GROUP;
        if (GROUP > 1) {
#pragma GCC unroll 16
            for (int i = 0; i < RT; i++) stage_group(WT, wr[i], nb, &st[i]);
            STAGED();
        }
        for (int j = 0; j < nb; j++) {
            const int k = k0 + j * BS;
            if (GROUP == 1) {
#pragma GCC unroll 16
                for (int i = 0; i < RT; i++) stage_block(WT, wr[i], &st[i]);
                STAGED();
            }
            sub_state ss[16];
#pragma GCC unroll 16
            for (int c = 0; c < BS / 16; c++) {
                __m512 wv[16];
                if (c % SUB == 0) {
#pragma GCC unroll 16
                    for (int i = 0; i < RT; i++) ss[i] = sub_prep(WT, c, &st[i], GROUP > 1 ? j : 0);
                }
#pragma GCC unroll 16
                for (int i = 0; i < RT; i++) wv[i] = chunk(WT, wr[i], c, ss[i]);
#pragma GCC unroll 16
                for (int t = 0; t < TT; t++) {
                    __m512 xv = _mm512_loadu_ps(x + t * ldx + k + 16 * c);
#pragma GCC unroll 16
                    for (int i = 0; i < RT; i++) {
                        int n = ACC_FOR_LANE(t * RT + i);
                        acc[n] = _mm512_fmadd_ps(wv[i], xv, acc[n]);
                    }
                }
            }
#pragma GCC unroll 16
            for (int i = 0; i < RT; i++) wr[i] += BB;
        }
    }
}

/* RT weight rows (ldw bytes apart, storage type WT) x TT tokens, RT * TT <= 16, each product
 * in its own 16-lane accumulator. Result (row i, token t) is lane t * RT + i, so each token's
 * RT results are contiguous. Rows past `rows` (a short last block) reuse the last row and are
 * not stored; results of consecutive rows are ys apart in y (kern_rowgroup). PF: the rows
 * stream from memory, prefetched ahead (prefetch_rows; f32, f16, bf16 and q8_0). */
static inline __attribute__((always_inline)) void tile(wtype WT, const unsigned char *w, size_t ldw,
                                                       int RT, int rows, const float *x, size_t ldx,
                                                       int TT, int K, float *y, size_t ldy,
                                                       size_t ys, int PF) {
    __m512 acc[16];
    const unsigned char *wr[16];
#pragma GCC unroll 16
    for (int n = 0; n < 16; n++) acc[n] = _mm512_setzero_ps();
#pragma GCC unroll 16
    for (int i = 0; i < RT; i++) wr[i] = w + (i < rows ? i : rows - 1) * ldw;
    if (is_block(WT)) {
        tile_blocks(WT, wr, RT, x, ldx, TT, K, acc);
    } else if (WT == WTYPE_Q8_0) {
        /* K is whole blocks: the scale is widened once per block and row, the two 16-lane
         * halves need no masks, and the row pointers step by block (1.3x faster at T = 1 than
         * the general loop through load_w16). The order of the FMAs is the general loop's. */
        for (int k = 0; k < K; k += 32) {
            if (PF) prefetch_rows(wr, RT, 0, 34);
            __m512 d[16];
#pragma GCC unroll 16
            for (int i = 0; i < RT; i++) {
                uint16_t h;
                memcpy(&h, wr[i], 2);
                d[i] = _mm512_cvtph_ps(_mm256_set1_epi16((short)h));
            }
#pragma GCC unroll 2
            for (int half = 0; half < 2; half++) { /* the block's two 16-lane steps, in order */
                __m512 wv[16];
#pragma GCC unroll 16
                for (int i = 0; i < RT; i++) {
                    __m128i q8 = _mm_loadu_si128((const __m128i *)(wr[i] + 2 + 16 * half));
                    wv[i] = _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q8)), d[i]);
                }
#pragma GCC unroll 16
                for (int t = 0; t < TT; t++) {
                    __m512 xv = _mm512_loadu_ps(x + t * ldx + k + 16 * half);
#pragma GCC unroll 16
                    for (int i = 0; i < RT; i++) {
                        int n = ACC_FOR_LANE(t * RT + i);
                        acc[n] = _mm512_fmadd_ps(wv[i], xv, acc[n]);
                    }
                }
            }
#pragma GCC unroll 16
            for (int i = 0; i < RT; i++) wr[i] += 34;
        }
    } else {
        const size_t es = WT == WTYPE_F32 ? 4 : 2; /* bytes per weight */
        for (int k = 0; k < K; k += KERN_LANES) {
            if (PF) prefetch_rows(wr, RT, es * k, es * (k + KERN_LANES));
            __mmask16 m =
                K - k >= KERN_LANES ? (__mmask16)0xffff : (__mmask16)((1u << (K - k)) - 1);
            __m512 wv[16]; /* a zero-filled tail gives 0*0 terms, as the reference */
#pragma GCC unroll 16
            for (int i = 0; i < RT; i++) wv[i] = load_w16(WT, wr[i], k, m);
#pragma GCC unroll 16
            for (int t = 0; t < TT; t++) {
                __m512 xv = _mm512_maskz_loadu_ps(m, x + t * ldx + k);
#pragma GCC unroll 16
                for (int i = 0; i < RT; i++) {
                    int n = ACC_FOR_LANE(t * RT + i);
                    acc[n] = _mm512_fmadd_ps(wv[i], xv, acc[n]);
                }
            }
        }
    }
    if (RT * TT <= 4) { /* few accumulators: fold each (the same additions, fewer wasted) */
#pragma GCC unroll 16
        for (int t = 0; t < TT; t++)
            for (int i = 0; i < rows && i < RT; i++)
                y[t * ldy + i * ys] = fold512(acc[ACC_FOR_LANE(t * RT + i)]);
        return;
    }
    float out[16];
    _mm512_storeu_ps(out, fold16x16(acc));
#pragma GCC unroll 16
    for (int t = 0; t < TT; t++)
        for (int i = 0; i < rows && i < RT; i++) y[t * ldy + i * ys] = out[t * RT + i];
}

static float avx512_dot(const float *a, const float *b, int n) {
    __m512 acc = _mm512_setzero_ps();
    int k = 0;
    for (; k + KERN_LANES <= n; k += KERN_LANES)
        acc = _mm512_fmadd_ps(_mm512_loadu_ps(a + k), _mm512_loadu_ps(b + k), acc);
    if (k < n) {
        __mmask16 m = (__mmask16)((1u << (n - k)) - 1);
        acc =
            _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, a + k), _mm512_maskz_loadu_ps(m, b + k), acc);
    }
    return fold512(acc);
}

static float avx512_sum(const float *a, int n) {
    __m512 acc = _mm512_setzero_ps();
    int k = 0;
    for (; k + KERN_LANES <= n; k += KERN_LANES) acc = _mm512_add_ps(acc, _mm512_loadu_ps(a + k));
    if (k < n)
        acc = _mm512_add_ps(acc, _mm512_maskz_loadu_ps((__mmask16)((1u << (n - k)) - 1), a + k));
    return fold512(acc);
}

/* Rows [0, rows) of a quantized type WT widened exactly into buf, K floats per row: the
 * weights tile() forms in registers (chunk, q8_0's loop), stored instead of multiplied. Float
 * types are never widened (kern_widen_from). */
static inline __attribute__((always_inline)) void
widen_typed(wtype WT, const unsigned char *w, size_t ldw, int rows, int K, float *buf) {
    for (int i = 0; i < rows; i++) {
        const unsigned char *b = w + (size_t)i * ldw;
        float *o = buf + (size_t)i * K;
        if (WT == WTYPE_Q8_0) {
            for (int k = 0; k < K; k += 32, b += 34) {
                __m512 d = bcast_half(b);
#pragma GCC unroll 2
                for (int half = 0; half < 2; half++) {
                    __m128i q8 = _mm_loadu_si128((const __m128i *)(b + 2 + 16 * half));
                    _mm512_storeu_ps(
                        o + k + 16 * half,
                        _mm512_mul_ps(_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q8)), d));
                }
            }
        } else if (is_block(WT)) {
            const int BS = block_size(WT), BB = kern_block_bytes(WT), SUB = sub_chunks(WT);
            const int GROUP = BS == 32 ? 16 : 1;
            stage st;
            for (int k0 = 0; k0 < K; k0 += GROUP * BS) {
                int nb = (K - k0) / BS < GROUP ? (K - k0) / BS : GROUP;
                if (GROUP > 1) {
                    stage_group(WT, b, nb, &st);
                    STAGED();
                }
                for (int j = 0; j < nb; j++, b += BB) {
                    if (GROUP == 1) {
                        stage_block(WT, b, &st);
                        STAGED();
                    }
                    sub_state ss = {_mm512_setzero_ps(), _mm512_setzero_ps()};
#pragma GCC unroll 16
                    for (int c = 0; c < BS / 16; c++) {
                        if (c % SUB == 0) ss = sub_prep(WT, c, &st, GROUP > 1 ? j : 0);
                        _mm512_storeu_ps(o + k0 + j * BS + 16 * c, chunk(WT, b, c, ss));
                    }
                }
            }
        }
    }
}

/* ---- wide passes: float weights from wide_from tokens ------------------------------------
 * The 4 x 4 tile above loads 4 weight and 4 input vectors per 16 FMAs and reads a row's whole K
 * before the next token block, so at 64 tokens the inputs of the whole block stream from L2 for
 * every 4 rows. Wide passes use 6 rows x 4 tokens (24 accumulators, 4 inputs and a weight in
 * the 32 registers: 10 loads per 24 FMAs) over chunks of WIDE_CHUNK values of K: a row group's
 * chunk stays in L1 while every token of the block passes over it, and the partial sums of up
 * to WIDE_TOKENS tokens wait in memory between chunks. f16 and bf16 rows are widened once per
 * chunk into a float buffer (vcvtph2ps takes the FMA ports on Intel, so widening it for every
 * 4 tokens halves the FMA rate). A K of at most WIDE_ONE_CHUNK is one chunk: the 110M
 * preset's K = 768 as 512 + 256 paid the partial sums' round trip and a short second sweep
 * (Xeon, min / median ms of 10 alternations, 110M T = 64, 512 + 256 -> one chunk: f32 1 thread
 * 175.9 / 181.3 -> 170.8 / 178.3, 2 threads 114.3 / 124.2 -> 107.9 / 121.2; f16 149.1 / 167.7
 * -> 143.8 / 159.6 and 86.9 / 100.2 -> 84.1 / 98.2), while chunks of 1024 on the 1.1B preset
 * (K = 2048 and 5632) lost (f32 T = 64, 2 threads, min 970 -> 1022 ms). Each lane still takes its
 * terms in increasing k by the same FMAs, a zero-filled tail gives 0 * 0 terms, and the fold is
 * fold16x16's, so the bits are the canonical order's (tests/test_kernels.c runs T on both sides of
 * wide_from and K over several chunks). */
#define WIDE_RT 6
#define WIDE_TT 4
#define WIDE_CHUNK 512
#define WIDE_ONE_CHUNK 1024
#define WIDE_TOKENS 64

/* From how many tokens in a block a wide pass takes groups of adjacent rows, even from a
 * matrix that streams (kern_rowgroup takes rows far apart then), and prefetches the next
 * block's weights (this group's next chunk or the next group's first chunk, to L2) a share
 * before each sweep. Far-apart rows put each of a group's 6 x 64 results in its own cache line
 * of y, which 196 KB of inputs have pushed out of L1 since the last group wrote beside it;
 * adjacent rows write 6 neighbouring floats per token. And during the 15 sweeps that hit L1
 * the hardware prefetchers see no misses, so the next group's first sweep waited for memory.
 * Measured (Xeon, Emerald Rapids VM): kern_matmul on one thread, 64 tokens, ns per 64 weights
 * and row, far apart -> adjacent -> adjacent and prefetched: f32 2048 x 768 1.19 -> 1.07 ->
 * 1.01, 5632 x 2048 1.16 -> 1.16 -> 1.08, 2048 x 5632 1.25 -> 1.22 -> 1.12; f16 2048 x 768
 * 1.18-1.35 -> 1.04 -> 1.03 (a prefetch with far-apart rows was a tie; to L1 instead of L2
 * alike). `decbench cost`, ms per pass of 64 rows, min / median of 5 alternations, before ->
 * after: 110M f32 1 thread 140.6 / 143.2 -> 118.0 / 120.6, 2 threads 86.2 / 103.5 -> 72.8 /
 * 81.7; f16 129.5 / 186.3 -> 112.0 / 114.2 and 76.0 / 83.3 -> 63.5 / 72.1; 1.1B on 2 threads
 * (3 alternations) f16 874 / 891 -> 668 / 761, f32 746 / 795 -> 692 / 748. At 16 tokens 1.1B f32
 * on one thread went 524 / 533 -> 465 / 466 (110M a tie); at 8 tokens, 2 sweeps per group, it
 * lost: the weights stream from memory for every 8 tokens and far-apart rows read them better
 * (110M f32 1 thread 47.2 / 54.8 -> 58.1 / 62.4, 1.1B 433 / 440 -> 476 / 508). */
#define WIDE_ADJACENT_FROM 16

/* From how many tokens a float type (is_float) takes the wide path. Measured (Xeon, Emerald
 * Rapids VM, 1 thread, `decbench cost` ms per pass, old 4 x 4 tiles -> wide, 3 alternations):
 * 1.1B f32 T = 8 537-574 -> 443-465, T = 16 770-855 -> 553-654, T = 64 2274-2643 -> 1790-2137;
 * 110M f32 T = 64 180-222 -> 169-203 (ties at T = 8). f16 pays for its widening once per chunk
 * and row group, so it gains only with many token tiles per chunk: 110M f16 T = 8 30-33 -> 36-49
 * ms and T = 16 52-57 -> 64-75 (slower), T = 32 a tie, T = 64 183-200 -> 161-204; 1.1B f16
 * T = 64 1890-2154 -> 1486-1818. Not measured on AMD's Zen 4, where vcvtph2ps costs less and a
 * widened panel lost to the direct tiles (kernels_isa.h, kern_widen_from).
 * Lowered after the aligned inputs and adjacent rows (2 alternations each, old -> new ms): f32
 * from 8 to 5 tokens, because the tiles read the weights twice from memory at T = 5..7 (the
 * 4 x 4 tiles, then the leftover tokens' tiles): 110M 1 thread T = 5 56-62 -> 40-46, T = 7 59-65
 * -> 43-50, 2 threads T = 5 28 -> 25; 1.1B 1 thread T = 5 741-768 -> 397-508, T = 7 771-823 ->
 * 440-527. f16 from 32 to 16: 1.1B T = 16 564-578 -> 424-462, T = 24 786-794 -> 530-566; 110M
 * T = 24 67-76 -> 54-61, T = 16 a tie; f16 at 8 and 12 tokens still lost (1.1B T = 8 343-372 ->
 * 405-439, 110M 29-32 -> 39-40). */
static inline int wide_from(wtype WT) {
    return WT == WTYPE_F32 ? 5 : 16;
}

/* Columns [k0, k1) (k0 a multiple of 16; k1 too unless it is K) of WIDE_RT rows (wr[i] holds
 * column k0 at index 0) x TT tokens, added to the partial sums p[t * WIDE_RT + i] (which the
 * first chunk, k0 = 0, sets: no zeroing pass, which cost 2% of a 110M f32 pass of 64 rows). */
static inline __attribute__((always_inline)) void wide_sweep(const float *const *wr, const float *x,
                                                             size_t ldx, int TT, int k0, int k1,
                                                             int K, __m512 *p) {
    __m512 a[WIDE_RT][WIDE_TT];
#pragma GCC unroll 8
    for (int i = 0; i < WIDE_RT; i++)
#pragma GCC unroll 4
        for (int t = 0; t < TT; t++) a[i][t] = k0 ? p[t * WIDE_RT + i] : _mm512_setzero_ps();
    const int full = k1 < K ? k1 : K / KERN_LANES * KERN_LANES;
    int k = k0;
    for (; k < full; k += KERN_LANES) {
        __m512 xv[WIDE_TT];
#pragma GCC unroll 4
        for (int t = 0; t < TT; t++) xv[t] = _mm512_loadu_ps(x + t * ldx + k);
#pragma GCC unroll 8
        for (int i = 0; i < WIDE_RT; i++) {
            __m512 wv = _mm512_loadu_ps(wr[i] + (k - k0));
            __asm__("" : "+v"(wv)); /* one load per weight vector, not one per FMA */
#pragma GCC unroll 4
            for (int t = 0; t < TT; t++) a[i][t] = _mm512_fmadd_ps(wv, xv[t], a[i][t]);
        }
    }
    if (k < k1) { /* the row's last partial 16 values */
        const __mmask16 m = (__mmask16)((1u << (K - k)) - 1);
        __m512 xv[WIDE_TT];
        for (int t = 0; t < TT; t++) xv[t] = _mm512_maskz_loadu_ps(m, x + t * ldx + k);
        for (int i = 0; i < WIDE_RT; i++) {
            __m512 wv = _mm512_maskz_loadu_ps(m, wr[i] + (k - k0));
            for (int t = 0; t < TT; t++) a[i][t] = _mm512_fmadd_ps(wv, xv[t], a[i][t]);
        }
    }
#pragma GCC unroll 8
    for (int i = 0; i < WIDE_RT; i++)
#pragma GCC unroll 4
        for (int t = 0; t < TT; t++) p[t * WIDE_RT + i] = a[i][t];
}

/* WIDE_RT rows at w (ws bytes apart; rows past `valid` repeat the last and are not stored) x
 * nt <= WIDE_TOKENS tokens, results step apart; `adjacent`: the rows are adjacent
 * (WIDE_ADJACENT_FROM), and the next group's follow them. The folded results are stored
 * after the last fold, from a buffer (stores interleaved with the folds, one index product each,
 * cost 5% of kern_matmul f32 768 x 48 at 64 tokens: 1.01 -> 0.96 ns per 64 weights and row). */
static inline __attribute__((always_inline)) void wide_rows(wtype WT, const unsigned char *w,
                                                            size_t ws, int valid, const float *x,
                                                            size_t ldx, int nt, int K, float *y,
                                                            size_t ldy, size_t step, int adjacent) {
    const unsigned char *row[WIDE_RT];
    for (int i = 0; i < WIDE_RT; i++) row[i] = w + (size_t)(i < valid ? i : valid - 1) * ws;
    __m512 part[WIDE_TOKENS * WIDE_RT];
    float stage[WIDE_RT][WIDE_ONE_CHUNK] __attribute__((aligned(64))); /* f16, bf16 */
    const int chunk = K <= WIDE_ONE_CHUNK ? K : WIDE_CHUNK;
    for (int k0 = 0; k0 < K; k0 += chunk) {
        const int k1 = K - k0 < chunk ? K : k0 + chunk;
        const float *wr[WIDE_RT];
        for (int i = 0; i < WIDE_RT; i++) {
            if (WT == WTYPE_F32) {
                wr[i] = (const float *)row[i] + k0;
                continue;
            }
            for (int k = k0; k < k1; k += KERN_LANES) { /* widened exactly, zeros past K */
                __mmask16 m =
                    k1 - k >= KERN_LANES ? (__mmask16)0xffff : (__mmask16)((1u << (k1 - k)) - 1);
                _mm512_store_ps(stage[i] + (k - k0), load_w16(WT, row[i], k, m));
            }
            wr[i] = stage[i];
        }
        /* Adjacent groups: the next block's bytes (this group's next chunk, or the next
         * group's first), a share before each sweep (integer addresses: past the matrix's
         * end they are never read, and a prefetch does not fault). */
        const size_t es = WT == WTYPE_F32 ? 4 : 2, ahead = k1 < K ? 0 : WIDE_RT * ws;
        const int p0 = k1 < K ? k1 : 0, p1 = k1 < K ? (K - k1 < chunk ? K : k1 + chunk) : chunk;
        const size_t lines = adjacent ? ((size_t)(p1 - p0) * es + 63) / 64 : 0;
        const int sweeps = nt / WIDE_TT;
        int t = 0;
        for (int s = 0; t + WIDE_TT <= nt; t += WIDE_TT, s++) {
            const size_t l0 = s * lines / sweeps, l1 = (s + 1) * lines / sweeps;
#pragma GCC unroll 6
            for (int i = 0; i < WIDE_RT; i++)
                for (size_t l = l0; l < l1; l++)
                    _mm_prefetch((const char *)((uintptr_t)row[i] + ahead + p0 * es + 64 * l),
                                 _MM_HINT_T1);
            wide_sweep(wr, x + t * ldx, ldx, WIDE_TT, k0, k1, K, part + t * WIDE_RT);
        }
        if (nt - t == 3) wide_sweep(wr, x + t * ldx, ldx, 3, k0, k1, K, part + t * WIDE_RT);
        if (nt - t == 2) wide_sweep(wr, x + t * ldx, ldx, 2, k0, k1, K, part + t * WIDE_RT);
        if (nt - t == 1) wide_sweep(wr, x + t * ldx, ldx, 1, k0, k1, K, part + t * WIDE_RT);
    }
    float out[WIDE_TOKENS * WIDE_RT + 16] __attribute__((aligned(64)));
    for (int n0 = 0; n0 < nt * WIDE_RT; n0 += 16) { /* 16 results per fold, result n = t * RT + i */
        __m512 a[16];
#pragma GCC unroll 16
        for (int L = 0; L < 16; L++)
            a[ACC_FOR_LANE(L)] = n0 + L < nt * WIDE_RT ? part[n0 + L] : _mm512_setzero_ps();
        _mm512_store_ps(out + n0, fold16x16(a));
    }
    if (valid == WIDE_RT)
        for (int t = 0; t < nt; t++) {
            float *yt = y + t * ldy;
#pragma GCC unroll 6
            for (int i = 0; i < WIDE_RT; i++) yt[i * step] = out[t * WIDE_RT + i];
        }
    else
        for (int t = 0; t < nt; t++)
            for (int i = 0; i < valid; i++) y[t * ldy + i * step] = out[t * WIDE_RT + i];
}

/* The tiles run in the schedule kernels_isa.h keeps (KERN_AVX512_SCHEDULE): token blocks of 4
 * with 4-row tiles; up to 3 tokens 4x1 (streaming), 16x1 or 8x1 (in the cache), 8x2 or 5x3
 * tiles, so that each fold serves many results (T = 1, plain decoding, is the 1-token case). The
 * 1-3 tokens left over past a block of 4 take 4-row tiles in the same row group, while its rows
 * are in L1: in a pass of their own they read every weight from memory a second time. Measured (Xeon, Emerald Rapids VM, `decbench cost`, ms per pass, 2 alternations,
 * own pass -> same group): 1.1B f16 1 thread T = 5 387-392 -> 283-287, T = 7 424 -> 313-314,
 * T = 9 498-512 -> 396-408, 2 threads T = 5 179-183 -> 147-148; 110M f16 2 threads T = 5
 * 16.8-17.0 -> 14.3-14.5, 1 thread a tie. The int8 tiles do the same (kernels_avx512_vnni.c).
 * Rows are grouped by kern_rowgroup: far apart when the matrix streams from memory (`streams`,
 * decided by kern_matmul). */
static inline __attribute__((always_inline)) void matmul_typed(wtype WT, const unsigned char *w,
                                                               size_t ldw, int rows, int K,
                                                               const float *x, size_t ldx, int T,
                                                               float *y, size_t ldy, int streams) {
    if (is_float(WT) && T >= wide_from(WT)) {
        for (int t0 = 0; t0 < T; t0 += WIDE_TOKENS) {
            int nt = T - t0 < WIDE_TOKENS ? T - t0 : WIDE_TOKENS;
            const int adjacent = nt >= WIDE_ADJACENT_FROM;
            KERN_ROWS_LOOP(WIDE_RT, rows, streams && !adjacent, w, ldw,
                           wide_rows(WT, wr, ws, valid, x + t0 * ldx, ldx, nt, K,
                                     y + t0 * ldy + row, ldy, step, adjacent));
        }
        return;
    }
    if (T >= kern_widen_from(WT)) { /* widen once, then the f32 tiles (kernels_isa.h) */
        KERN_WIDENED_PANELS(kern_avx512_f32, WIDE_RT, rows, K, x, ldx, T, y, ldy,
                            widen_typed(WT, w + (size_t)r * ldw, ldw, rt, K, buf));
        return;
    }
#define F32_TILE(RT, TT, t, last)                                                                  \
    tile(WT, wr, ws, RT, valid, x + (t) * ldx, ldx, TT, K, y + (t) * ldy + row, ldy, step, last)
    KERN_AVX512_SCHEDULE(T, rows, streams, w, ldw, F32_TILE, !(WT == WTYPE_Q8_0 || is_block(WT)),
                         !is_block(WT));
#undef F32_TILE
}

/* The tiles of the weight-type table (wtype.c). */
#define TYPED(fn, WT)                                                                              \
    void fn(const unsigned char *w, size_t ldw, int rows, int K, const float *x, size_t ldx,       \
            int T, float *y, size_t ldy, int streams) {                                            \
        matmul_typed(WT, w, ldw, rows, K, x, ldx, T, y, ldy, streams);                             \
    }
TYPED(kern_avx512_f32, WTYPE_F32)
TYPED(kern_avx512_f16, WTYPE_F16)
TYPED(kern_avx512_bf16, WTYPE_BF16)
TYPED(kern_avx512_q8_0, WTYPE_Q8_0)
TYPED(kern_avx512_q4_0, WTYPE_Q4_0)
TYPED(kern_avx512_q4_1, WTYPE_Q4_1)
TYPED(kern_avx512_q5_0, WTYPE_Q5_0)
TYPED(kern_avx512_q5_1, WTYPE_Q5_1)
TYPED(kern_avx512_q2_k, WTYPE_Q2_K)
TYPED(kern_avx512_q3_k, WTYPE_Q3_K)
TYPED(kern_avx512_q4_k, WTYPE_Q4_K)
TYPED(kern_avx512_q5_k, WTYPE_Q5_K)
TYPED(kern_avx512_q6_k, WTYPE_Q6_K)

/* ---- libm's expf (kernels_isa.h) ------------------------------------------------------- */

static inline __m512d pd_bits(uint64_t b) {
    return _mm512_castsi512_pd(_mm512_set1_epi64((long long)b));
}

/* 8 floats' expf in double lanes, glibc's operations in glibc's order. */
static inline __m256 expf8(__m256 x) {
    const __m512d inv = pd_bits(KERN_EXPF_INV_LN2_N), shift = pd_bits(KERN_EXPF_SHIFT);
    const __m512d xd = _mm512_cvtps_pd(x);
    const __m512d kds = _mm512_fmadd_pd(inv, xd, shift); /* k in the low mantissa bits */
    const __m512d r = _mm512_fmsub_pd(inv, xd, _mm512_sub_pd(kds, shift));
    const __m512i ki = _mm512_castpd_si512(kds), i = _mm512_and_si512(ki, _mm512_set1_epi64(31));
    const __m512i *tab = (const __m512i *)kern_expf_table;
    __m512i t = _mm512_mask_blend_epi64(
        _mm512_test_epi64_mask(i, _mm512_set1_epi64(16)),
        _mm512_permutex2var_epi64(_mm512_loadu_si512(tab), i, _mm512_loadu_si512(tab + 1)),
        _mm512_permutex2var_epi64(_mm512_loadu_si512(tab + 2), i, _mm512_loadu_si512(tab + 3)));
    t = _mm512_add_epi64(t, _mm512_slli_epi64(ki, 47));
    const __m512d z = _mm512_fmadd_pd(r, pd_bits(KERN_EXPF_C0), pd_bits(KERN_EXPF_C1));
    __m512d y = _mm512_fmadd_pd(r, pd_bits(KERN_EXPF_C2), _mm512_set1_pd(1.0));
    y = _mm512_fmadd_pd(z, _mm512_mul_pd(r, r), y);
    return _mm512_cvtpd_ps(_mm512_mul_pd(y, _mm512_castsi512_pd(t)));
}

/* 16 floats' expf: expf8's lanes, then libm for the lanes glibc treats apart (|x| >= 88, inf,
 * NaN). */
static inline __m512 expf16(__m512 x) {
    __m512 e = _mm512_insertf32x8(_mm512_castps256_ps512(expf8(_mm512_castps512_ps256(x))),
                                  expf8(_mm512_extractf32x8_ps(x, 1)), 1);
    const __m512i top =
        _mm512_and_si512(_mm512_srli_epi32(_mm512_castps_si512(x), 20), _mm512_set1_epi32(0x7ff));
    __mmask16 sp = _mm512_cmpge_epu32_mask(top, _mm512_set1_epi32(KERN_EXPF_SPECIAL_TOP));
    if (sp) {
        float ev[16], xv[16];
        _mm512_storeu_ps(ev, e), _mm512_storeu_ps(xv, x);
        for (; sp; sp &= (__mmask16)(sp - 1)) {
            const int k = __builtin_ctz(sp);
            ev[k] = expf(xv[k]);
        }
        e = _mm512_loadu_ps(ev);
    }
    return e;
}

/* 16 at a time (expf16), the last n % 16 by libm. 2048 values in the cache, one core, best of
 * 50 runs: libm 3.2 ns per value, AVX2 0.8 ns, this 0.5 ns (Xeon, Emerald Rapids VM). */
static void avx512_expf(const float *x, float *y, int n) {
    int i = 0;
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, expf16(_mm512_loadu_ps(x + i)));
    for (; i < n; i++) y[i] = expf(x[i]);
}

/* kern_silu_mul 16 at a time: expf16 of -a, then a * (1 / (1 + e)) * b, in the scalar loop's
 * order, in one pass. As three passes of the forward pass's own loops over blocks of 256
 * (negate into a buffer, exp into another, then the rest) it took 3.7% of a 64-row pass of
 * Qwen2.5-0.5B q8_0 at 2 threads and its exp 2.0% more; so, 2.9% (perf, Zen 5). A build without
 * -march=native (packaging/) compiles the forward pass's loops for the baseline ISA, and gets
 * these lanes all the same (run-time dispatch). */
static void avx512_silu_mul(float *a, const float *b, int n) {
    const __m512 one = _mm512_set1_ps(1.0f), sign = _mm512_set1_ps(-0.0f);
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 v = _mm512_loadu_ps(a + i), e = expf16(_mm512_xor_ps(v, sign));
        const __m512 r = _mm512_div_ps(one, _mm512_add_ps(one, e));
        _mm512_storeu_ps(a + i, _mm512_mul_ps(_mm512_mul_ps(v, r), _mm512_loadu_ps(b + i)));
    }
    for (; i < n; i++) a[i] = kern_silu_mul_one(a[i], b[i], expf);
}

/* kern_f16_from_f32 16 at a time by vcvtps2ph (round to nearest even); NaN lanes made
 * wtype_f32_to_f16's NaN (the sign, a quiet NaN without payload); the last n % 16 by wtype's
 * conversion. */
static void avx512_f16_from_f32(const float *src, void *dst, int n) {
    unsigned char *p = dst;
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m512 x = _mm512_loadu_ps(src + i);
        __m256i h = _mm512_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        const __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
        if (nan)
            h = _mm256_mask_blend_epi16(
                nan, h,
                _mm256_or_si256(_mm256_and_si256(h, _mm256_set1_epi16((short)0x8000)),
                                _mm256_set1_epi16(0x7e00)));
        _mm256_storeu_si256((__m256i *)(p + 2 * i), h);
    }
    wtype_get(WTYPE_F16)->from_float(src + i, p + 2 * (size_t)i, n - i);
}

/* kern_f16_to_f32 16 at a time by vcvtph2ps, the last n % 16 by wtype's conversion. */
static void avx512_f16_to_f32(const void *src, float *dst, int n) {
    const unsigned char *p = src;
    int i = 0;
    for (; i + 16 <= n; i += 16)
        _mm512_storeu_ps(dst + i,
                         _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)(p + 2 * i))));
    wtype_get(WTYPE_F16)->to_float(p + 2 * (size_t)i, dst + i, n - i);
}

/* Types without a tile of their own: rows widened exactly into a buffer, then the f32 tiles. */
static void avx512_matmul_widen(kern_to_float_fn to_float, const unsigned char *w, size_t ldw,
                                int rows, int K, const float *x, size_t ldx, int T, float *y,
                                size_t ldy, int streams) {
    (void)streams; /* the buffer is in the cache */
    KERN_WIDENED_PANELS(kern_avx512_f32, 1, rows, K, x, ldx, T, y, ldy,
                        for (int i = 0; i < rt; i++)
                            to_float(w + (size_t)(r + i) * ldw, buf + (size_t)i * K, K));
}

const kern_isa_ops kern_isa_avx512_ops = {
    .name = "avx512",
    .dot = avx512_dot,
    .sum = avx512_sum,
    .attend = kern_avx512_attend,
    .scores = kern_avx512_scores,
    .softmax = kern_avx512_softmax,
    .values = kern_avx512_values,
    .matmul_widen = avx512_matmul_widen,
    .expf = avx512_expf,
    .silu_mul = avx512_silu_mul,
    .f16_from_f32 = avx512_f16_from_f32,
    .f16_to_f32 = avx512_f16_to_f32,
};
/* ---- the int8b activations ------------------------------------------------------------------ */

/* Blocks [b0, b1) of one int8b row (kernels_isa.h, kern_avx2_act8b_quantize_row), the AVX2
 * quantizer's operations on a block of 32 in two registers: the largest |x| by vpmaxsd on its
 * bits (a NaN wins), d and 1 / d as scalars, x * (1 / d) with NaN made 0, limited to +-127 and
 * rounded to nearest even by vcvtps2dq; bytes by vpmovsdb (the values already in range) and the
 * halves' sums by reductions. */
void kern_avx512_act8b_quantize_row(const float *x, int b0, int b1, unsigned char *chunk, int n,
                                    int i) {
    const __m512 lim = _mm512_set1_ps(127.0f), nlim = _mm512_set1_ps(-127.0f);
    const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff);
    for (int b = b0; b < b1; b++) {
        unsigned char *rec = chunk + (size_t)b * n * KERN_A8B_REC;
        const __m512 v0 = _mm512_loadu_ps(x + 32 * b), v1 = _mm512_loadu_ps(x + 32 * b + 16);
        const __m512i m = _mm512_max_epi32(_mm512_and_si512(_mm512_castps_si512(v0), abs_mask),
                                           _mm512_and_si512(_mm512_castps_si512(v1), abs_mask));
        const int32_t abits = _mm512_reduce_max_epi32(m);
        float amax;
        memcpy(&amax, &abits, 4);
        const float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        __m512i q[2];
        const __m512 v[2] = {v0, v1};
        for (int h = 0; h < 2; h++) {
            __m512 p = _mm512_mul_ps(v[h], _mm512_set1_ps(id));
            p = _mm512_maskz_mov_ps(_mm512_cmp_ps_mask(p, p, _CMP_ORD_Q), p);
            q[h] = _mm512_cvtps_epi32(_mm512_min_ps(_mm512_max_ps(p, nlim), lim));
            _mm_storeu_si128((__m128i *)(rec + 32 * i + 16 * h), _mm512_cvtsepi32_epi8(q[h]));
        }
        kern_a8b_put_sums(rec, n, i, d, _mm512_reduce_add_epi32(q[0]),
                          _mm512_reduce_add_epi32(q[1]));
    }
}

#endif
