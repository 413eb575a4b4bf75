/* kernels_avx2_int8b.c: the int8b mode's AVX2 tiles (kernels.h, "the int8b mode"), for CPUs
 * without AVX-512 VNNI. Same bits as the scalar reference and the AVX-512 tiles.
 *
 * A register holds 8 rows (half of a group of the 16-row copy: the first or second 32 bytes of
 * each 64-byte word of it), one 32-bit lane each. Without vpdpbusd, 4 products of a lane are
 * vpmaddubsw (unsigned weights by signed activations, pairs added in 16 bits) then vpmaddwd by
 * ones (the pairs added in 32 bits). The 16-bit sums stay exact: the unpacked weights of every
 * type but q8_0 are at most 63 (q6_k's w + 32), so a pair is at most 2 x 63 x 127 = 16002 and
 * two chunks' pairs are added in 16 bits before vpmaddwd (32004 < 32767); q8_0's are signed, so
 * they go in as |w| with the activation's sign flipped where w < 0 (vpsignb; |w| <= 128, a pair
 * at most 32512), one chunk at a time, and start from 0 instead of the -128 offset's start. The
 * other starts and the float steps are the AVX-512 tiles' (kernels_avx512_int8b.c).
 *
 * Shape: a block of 8 rows is unpacked into registers once and multiplied by every token of the
 * pass in turn, so each weight is unpacked once per pass; a token's accumulator waits between
 * blocks (the same float stored and loaded) in its row of y for passes of up to 8 tokens, in a
 * buffer of the tile's own for longer ones (matmul_int8b says why), and at one token in a
 * register.
 *
 * kernels_avxvnni_int8b.c compiles this file a second time with AVX2_INT8B_VNNI set, for CPUs
 * with AVX-VNNI (the 256-bit vpdpbusd) but no AVX-512 VNNI, such as Intel's Alder Lake and later
 * client cores and its E-core Xeons: 4 products of a lane are then one vpdpbusd, and q8_0's
 * weights go in offset by 128 (unsigned) from the -128 offset's start, as on AVX-512. The 32-bit
 * sums are the same integers either way (the 16-bit steps above never saturate), so the bits
 * are too. Zen 5 (DECBENCH_ISA=avx2, 2 threads, 5 alternated pairs, against DECBENCH_AVXVNNI=0):
 * 1.1B q8_0 0.65x the time at 8 rows, 0.71x at 64; 1.1B Q4_K_M 0.85x at 8, 0.98x at 64; one-row
 * passes 0.98-1.00x (their unpacking, not the products, bounds them). */
#include "model/kernels/kernels.h"
#include "model/kernels/kernels_isa.h"

#if KERN_X86
#include <immintrin.h>
#include <stdint.h>
#include <string.h>

#ifdef AVX2_INT8B_VNNI
#define INT8B_NAME(type) kern_avxvnni_int8b_##type
#else
#define INT8B_NAME(type) kern_avx2_int8b_##type
#endif

/* A group's stream is prefetched PF_DIST bytes ahead into L1 and PF_FAR ahead into L2, as
 * kernels_avx512_int8b.c's one-token passes. The far prefetch matters most here: the 1.1B preset's
 * one-row passes on AVX2 (forced on the Xeon, 2 threads, interleaved share of the read probe, 10
 * rounds each), 2 KB ahead alone -> with 8 KB ahead into L2: Q4_K_M 66% -> 88%, Q6_K 56% -> 90%. */
#define PF_DIST 2048
#define PF_FAR 8192

enum { K_S0, K_S8, K_S16, K_H32, K_H4, K_MIN };

static inline int kind_of(wtype WT) {
    switch (WT) {
    case WTYPE_Q8_0:
        return K_S0;
    case WTYPE_Q4_0:
        return K_S8;
    case WTYPE_Q5_0:
        return K_S16;
    case WTYPE_Q6_K:
        return K_H32;
    case WTYPE_Q3_K:
        return K_H4;
    default:
        return K_MIN;
    }
}

/* A block of 8 rows, unpacked: as kernels_avx512_int8b.c's brec, in 8-lane registers. */
typedef struct {
    __m256i w[8];
#ifndef AVX2_INT8B_VNNI
    __m256i aw[8]; /* q8_0 without AVX-VNNI: |w|, once per block for all its tokens (against
                    * once per token: 1.1B q8_0 0.93x the time at 64 rows, 0.99x at 8, 0.92x at
                    * 1; 110M q8_0 0.93x at 64; Zen 5, DECBENCH_ISA=avx2, 2 threads) */
#endif
    __m256 a[2];
    __m256 m;
} hrec;

static inline __m256i ld(const unsigned char *p) {
    return _mm256_loadu_si256((const __m256i *)p);
}

static inline __m256 halves(const unsigned char *p) {
    return _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)p));
}

static inline __m256 byte_u(__m256i v, int j) {
    return _mm256_cvtepi32_ps(
        _mm256_and_si256(_mm256_srli_epi32(v, 8 * j), _mm256_set1_epi32(255)));
}

static inline __m256 byte_s(__m256i v, int j) {
    return _mm256_cvtepi32_ps(_mm256_srai_epi32(_mm256_slli_epi32(v, 24 - 8 * j), 24));
}

/* (a & ma) | (b & mb), bytewise */
static inline __m256i merge(__m256i a, __m256i ma, __m256i b, __m256i mb) {
    return _mm256_or_si256(_mm256_and_si256(a, ma), _mm256_and_si256(b, mb));
}

/* q5_0, q5_1: 16 where bit 4c + i of the lane's qh word is set, in byte i of chunk c. */
static inline __m256i fifth_bits(__m256i qh, int c) {
    const __m256i idx = _mm256_add_epi8(_mm256_set1_epi8((char)(c / 2)),
                                        _mm256_setr_epi32(0, 0x04040404, 0x08080808, 0x0c0c0c0c, 0,
                                                          0x04040404, 0x08080808, 0x0c0c0c0c));
    const __m256i bit = _mm256_set1_epi32((int)(0x08040201u << (4 * (c % 2))));
    const __m256i rep = _mm256_and_si256(_mm256_shuffle_epi8(qh, idx), bit);
    return _mm256_and_si256(_mm256_cmpeq_epi8(rep, bit), _mm256_set1_epi8(16));
}

/* The k-quants' scales of super-block sb for rows 8h..8h+7 of the group at g (as
 * kernels_avx512_int8b.c's kquant_scales). */
static inline __attribute__((always_inline)) void kquant_scales(wtype WT, const unsigned char *g,
                                                                int h, int sb, __m256 *ks) {
    if (WT == WTYPE_Q4_K || WT == WTYPE_Q5_K) {
        const unsigned char *p = g + (size_t)sb * 16 * (WT == WTYPE_Q4_K ? 144 : 176);
        const __m256 d = halves(p + 16 * h),
                     ndmin = _mm256_sub_ps(_mm256_setzero_ps(), halves(p + 32 + 16 * h));
        const __m256i s0 = ld(p + 64 + 32 * h), s1 = ld(p + 128 + 32 * h),
                      s2 = ld(p + 192 + 32 * h);
        const __m256i k6 = _mm256_set1_epi8(0x3F), k4 = _mm256_set1_epi8(15),
                      k30 = _mm256_set1_epi8(0x30);
        const __m256i sc_lo = _mm256_and_si256(s0, k6), mn_lo = _mm256_and_si256(s1, k6);
        const __m256i sc_hi = merge(s2, k4, _mm256_srli_epi32(s0, 2), k30);
        const __m256i mn_hi = merge(_mm256_srli_epi32(s2, 4), k4, _mm256_srli_epi32(s1, 2), k30);
#pragma GCC unroll 8
        for (int s = 0; s < 8; s++) {
            ks[s] = _mm256_mul_ps(d, byte_u(s < 4 ? sc_lo : sc_hi, s % 4));
            ks[8 + s] = _mm256_mul_ps(ndmin, byte_u(s < 4 ? mn_lo : mn_hi, s % 4));
        }
    } else if (WT == WTYPE_Q3_K) {
        const unsigned char *p = g + (size_t)sb * 1760;
        const __m256 d = halves(p + 1728 + 16 * h);
        const __m256i s0 = ld(p + 1536 + 32 * h), s1 = ld(p + 1600 + 32 * h),
                      s2 = ld(p + 1664 + 32 * h);
        const __m256i k4 = _mm256_set1_epi8(15), k3 = _mm256_set1_epi8(3);
        __m256i x[4];
#pragma GCC unroll 4
        for (int i = 0; i < 4; i++) {
            const __m256i lo = _mm256_and_si256(
                i < 2 ? (i ? s1 : s0) : _mm256_srli_epi32(i == 2 ? s0 : s1, 4), k4);
            const __m256i top = _mm256_and_si256(_mm256_srli_epi32(s2, 2 * i), k3);
            x[i] = _mm256_or_si256(lo, _mm256_slli_epi32(top, 4));
        }
        const __m256 c32 = _mm256_set1_ps(32.0f);
#pragma GCC unroll 16
        for (int c = 0; c < 16; c++)
            ks[c] = _mm256_mul_ps(d, _mm256_sub_ps(byte_u(x[c / 4], c % 4), c32));
    } else { /* q6_k */
        const unsigned char *p = g + (size_t)sb * 3360;
        const __m256 d = halves(p + 3328 + 16 * h);
#pragma GCC unroll 16
        for (int c = 0; c < 16; c++)
            ks[c] = _mm256_mul_ps(d, byte_s(ld(p + 3072 + 64 * (c / 4) + 32 * h), c % 4));
    }
}

/* Block b = 8 sb + j of rows 8h..8h+7 of the group at g into r (ks: the super-block's scales;
 * j a constant where the caller unrolls, so that a k-quant's shifts are immediates). */
static inline __attribute__((always_inline)) void
unpack_block(wtype WT, const unsigned char *g, int h, int sb, int j0, hrec *r, const __m256 *ks) {
    const int b = 8 * sb + j0;
    const __m256i m4 = _mm256_set1_epi8(15);
    const int o = 32 * h; /* this half's bytes of each 64-byte word */
    if (WT == WTYPE_Q8_0) {
        const unsigned char *p = g + (size_t)b * 544;
        r->a[0] = halves(p + 16 * h);
#pragma GCC unroll 8
        for (int m = 0; m < 8; m++)
#ifdef AVX2_INT8B_VNNI
            r->w[m] = _mm256_xor_si256(ld(p + 32 + 64 * m + o), _mm256_set1_epi8((char)0x80));
#else
            r->w[m] = ld(p + 32 + 64 * m + o), r->aw[m] = _mm256_abs_epi8(r->w[m]);
#endif
    } else if (WT == WTYPE_Q4_0 || WT == WTYPE_Q4_1 || WT == WTYPE_Q5_0 || WT == WTYPE_Q5_1) {
        const int BB = WT == WTYPE_Q4_0 ? 18 : WT == WTYPE_Q4_1 ? 20 : WT == WTYPE_Q5_0 ? 22 : 24;
        const int qs = 16 * (BB - 16);
        const unsigned char *p = g + (size_t)b * 16 * BB;
        r->a[0] = halves(p + 16 * h);
        if (WT == WTYPE_Q4_1 || WT == WTYPE_Q5_1) r->m = halves(p + 32 + 16 * h);
#pragma GCC unroll 4
        for (int k = 0; k < 4; k++) {
            const __m256i v = ld(p + qs + 64 * k + o);
            r->w[k] = _mm256_and_si256(v, m4);
            r->w[k + 4] = _mm256_and_si256(_mm256_srli_epi16(v, 4), m4);
        }
        if (WT == WTYPE_Q5_0 || WT == WTYPE_Q5_1) {
            const __m256i qh = ld(p + (WT == WTYPE_Q5_0 ? 32 : 64) + o);
#pragma GCC unroll 8
            for (int c = 0; c < 8; c++) r->w[c] = _mm256_or_si256(r->w[c], fifth_bits(qh, c));
        }
    } else if (WT == WTYPE_Q4_K || WT == WTYPE_Q5_K) {
        const int s = j0, pr = s / 2, hi = s % 2;
        const unsigned char *p = g + (size_t)sb * 16 * (WT == WTYPE_Q4_K ? 144 : 176);
        const unsigned char *qs = p + (WT == WTYPE_Q4_K ? 256 : 768) + 512 * pr;
        r->a[0] = ks[s], r->m = ks[8 + s];
#pragma GCC unroll 8
        for (int k = 0; k < 8; k++) {
            const __m256i v = ld(qs + 64 * k + o);
            r->w[k] = _mm256_and_si256(hi ? _mm256_srli_epi16(v, 4) : v, m4);
            if (WT == WTYPE_Q5_K) {
                const __m256i q = ld(p + 256 + 64 * k + o);
                const __m256i at4 =
                    s <= 4 ? _mm256_slli_epi16(q, 4 - s) : _mm256_srli_epi16(q, s - 4);
                r->w[k] = _mm256_or_si256(r->w[k], _mm256_and_si256(at4, _mm256_set1_epi8(16)));
            }
        }
    } else if (WT == WTYPE_Q3_K) {
        const int bb = j0, hh = bb / 4, j = bb % 4, sh = 4 * hh + j;
        const unsigned char *p = g + (size_t)sb * 1760;
        r->a[0] = ks[2 * bb], r->a[1] = ks[2 * bb + 1];
#pragma GCC unroll 8
        for (int k = 0; k < 8; k++) {
            const __m256i q = _mm256_and_si256(
                _mm256_srli_epi16(ld(p + 512 + 64 * (8 * hh + k) + o), 2 * j), _mm256_set1_epi8(3));
            const __m256i hm = ld(p + 64 * k + o);
            const __m256i at2 =
                sh <= 2 ? _mm256_slli_epi16(hm, 2 - sh) : _mm256_srli_epi16(hm, sh - 2);
            r->w[k] = _mm256_or_si256(q, _mm256_and_si256(at2, _mm256_set1_epi8(4)));
        }
    } else { /* q6_k */
        const int bb = j0, hh = bb / 4, q = bb % 4;
        const unsigned char *p = g + (size_t)sb * 3360;
        r->a[0] = ks[2 * bb], r->a[1] = ks[2 * bb + 1];
#pragma GCC unroll 8
        for (int k = 0; k < 8; k++) {
            __m256i lo = ld(p + 64 * (16 * hh + 8 * (q & 1) + k) + o);
            lo = q >= 2 ? _mm256_srli_epi16(lo, 4) : lo;
            const __m256i qh = ld(p + 2048 + 64 * (8 * hh + k) + o);
            const __m256i at4 =
                q <= 2 ? _mm256_slli_epi16(qh, 4 - 2 * q) : _mm256_srli_epi16(qh, 2);
            r->w[k] = merge(lo, m4, at4, _mm256_set1_epi8(0x30));
        }
    }
}

static inline __m256i bcast(const unsigned char *p) {
    int32_t v;
    memcpy(&v, p, 4);
    return _mm256_set1_epi32(v);
}

static inline __m256 bcastf(const unsigned char *p) {
    float v;
    memcpy(&v, p, 4);
    return _mm256_set1_ps(v);
}

/* Token i's start of unit u (the record of a chunk of n tokens at xr). */
static inline __attribute__((always_inline)) __m256i start_of(int KIND, const unsigned char *xr,
                                                              int n, int i, int u) {
    switch (KIND) {
#ifdef AVX2_INT8B_VNNI
    case K_S0: /* -128 times the token's sum: the weights are w + 128 */
        return bcast(xr + 40 * n + 4 * i);
#endif
    case K_S8:
        return bcast(xr + 44 * n + 4 * i);
    case K_S16:
        return _mm256_slli_epi32(bcast(xr + 44 * n + 4 * i), 1);
    case K_H32:
        return bcast(xr + 48 * n + 4 * (u * n + i));
    case K_H4:
        return _mm256_srai_epi32(bcast(xr + 48 * n + 4 * (u * n + i)), 3);
    default:
        return _mm256_setzero_si256();
    }
}

/* Token i (of a chunk of n at record xr) times block r: the block's float steps on acc. */
static inline __attribute__((always_inline)) __m256
token_block(int KIND, const hrec *r, const unsigned char *xr, int n, int i, __m256 acc) {
    const int units = KIND == K_H32 || KIND == K_H4 ? 2 : 1;
    const unsigned char *q = xr + 32 * i;
    const __m256 d = bcastf(xr + 32 * n + 4 * i);
#pragma GCC unroll 2
    for (int u = 0; u < units; u++) {
        __m256i s = start_of(KIND, xr, n, i, u);
        const int m0 = 8 / units * u, m1 = 8 / units * (u + 1);
#ifdef AVX2_INT8B_VNNI
        if (units == 1) { /* two chains of 4 (vpdpbusd's latency), added: the same integers */
            __m256i s1 = _mm256_setzero_si256();
#pragma GCC unroll 4
            for (int m = 0; m < 8; m += 2) {
                s = _mm256_dpbusd_avx_epi32(s, r->w[m], bcast(q + 4 * m));
                s1 = _mm256_dpbusd_avx_epi32(s1, r->w[m + 1], bcast(q + 4 * m + 4));
            }
            s = _mm256_add_epi32(s, s1);
        } else /* units of 4 words: one chain (two made q6_k's one-token tile 1.19x the time) */
#pragma GCC unroll 4
            for (int m = m0; m < m1; m++) s = _mm256_dpbusd_avx_epi32(s, r->w[m], bcast(q + 4 * m));
#else
        const __m256i ones = _mm256_set1_epi16(1);
        if (KIND == K_S0) {
#pragma GCC unroll 8
            for (int m = m0; m < m1; m++) {
                const __m256i p =
                    _mm256_maddubs_epi16(r->aw[m], _mm256_sign_epi8(bcast(q + 4 * m), r->w[m]));
                s = _mm256_add_epi32(s, _mm256_madd_epi16(p, ones));
            }
        } else {
#pragma GCC unroll 4
            for (int m = m0; m < m1; m += 2) {
                const __m256i p =
                    _mm256_add_epi16(_mm256_maddubs_epi16(r->w[m], bcast(q + 4 * m)),
                                     _mm256_maddubs_epi16(r->w[m + 1], bcast(q + 4 * m + 4)));
                s = _mm256_add_epi32(s, _mm256_madd_epi16(p, ones));
            }
        }
#endif
        acc = _mm256_fmadd_ps(_mm256_mul_ps(r->a[u], d), _mm256_cvtepi32_ps(s), acc);
    }
    if (KIND == K_MIN) acc = _mm256_fmadd_ps(r->m, bcastf(xr + 36 * n + 4 * i), acc);
    return acc;
}

/* Group g's rows (at gp) against the tokens of chunks [c0, c1), from token tw: their
 * accumulators wait between blocks at yw + ys (t - tw), 8 h (T > 1; T = 1 keeps its two in
 * registers and stores them at yw). */
static inline __attribute__((always_inline)) void group_pass(wtype WT, const unsigned char *gp,
                                                             int K, const unsigned char *xa, int T,
                                                             int c0, int c1, int tw, float *yw,
                                                             size_t ys) {
    const int nb = K / 32, kq = kern_is_kquant(WT), KIND = kind_of(WT);
    const size_t bb = 16 * (size_t)kern_block_bytes(WT) / (kq ? 8 : 1); /* a block of 16 rows */
    __m256 ks[2][16];
    /* both halves of each block in turn: the group's bytes are one stream, read once */
    __m256 acc1[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()}; /* T = 1: in registers */
    for (int sb = 0; 8 * sb < nb; sb++) {
#pragma GCC unroll 8
        for (int j = 0; j < 8; j++) { /* j a constant (unrolled): the k-quants' shifts */
            const int b = 8 * sb + j;
            if (b >= nb) break;
            for (uintptr_t a = (uintptr_t)gp + b * bb; a < (uintptr_t)gp + (b + 1) * bb; a += 64)
                _mm_prefetch((const char *)(a + PF_DIST), _MM_HINT_T0),
                    _mm_prefetch((const char *)(a + PF_FAR), _MM_HINT_T1);
            for (int h = 0; h < 2; h++) {
                if (kq && j == 0) kquant_scales(WT, gp, h, sb, ks[h]);
                hrec r;
                unpack_block(WT, gp, h, sb, j, &r, ks[h]);
                if (T == 1) {
                    acc1[h] = token_block(KIND, &r, xa + kern_a8b_at(K, 0, 1, b), 1, 0, acc1[h]);
                    continue;
                }
                for (int c = c0; c < c1; c++) {
                    const int t0 = kern_a8b_first(T, c), n = kern_a8b_first(T, c + 1) - t0;
                    const unsigned char *xr = xa + kern_a8b_at(K, t0, n, b);
                    for (int i = 0; i < n; i++) {
                        float *at = yw + ys * (size_t)(t0 + i - tw) + 8 * h;
                        __m256 acc = b ? _mm256_loadu_ps(at) : _mm256_setzero_ps();
                        _mm256_storeu_ps(at, token_block(KIND, &r, xr, n, i, acc));
                    }
                }
            }
        }
    }
    if (T == 1) _mm256_storeu_ps(yw, acc1[0]), _mm256_storeu_ps(yw + 8, acc1[1]);
}

/* Chunks of tokens (at most KERN_A8B_CHUNK each) whose accumulators a pass of several chunks
 * keeps in a buffer of its own (matmul_int8b), 4 KB. */
enum { WIN_CHUNKS = 8 };

static inline __attribute__((always_inline)) void matmul_int8b(wtype WT, const unsigned char *p,
                                                               size_t gbytes, int groups, int K,
                                                               const unsigned char *xa, int T,
                                                               float *y, size_t ldy) {
    const int nc = kern_a8b_chunks(T);
    if (nc == 1) { /* up to 8 tokens: in the rows of y (their 8 lines fit an L1 set; through the
                    * buffer below, 2-8 rows took 1.03-1.04x the time). The per-group helper
                    * with constant chunks here made 2-8 rows 0.81-0.89x the time of the loop
                    * it replaced (one loop over all chunks), one row 0.94-1.01x. */
        for (int g = 0; g < groups; g++)
            group_pass(WT, p + (size_t)g * gbytes, K, xa, T, 0, 1, 0, y + 16 * g, ldy);
        return;
    }
    /* In the rows of y (ldy apart) the tokens' lines of one group fell in few L1 sets where ldy
     * is a multiple of 512 floats (2 KB), and passes of 32 and more rows ran from L2 (Zen 5,
     * DECBENCH_ISA=avx2, 2 threads, medians of 3 alternated pairs: 64-row passes took 0.48x the
     * time on 1.1B Q4_K_M, 0.69x on 1.1B q8_0 (also at 32 rows), 0.54x on 110M Q4_K_M, 24 rows
     * 0.66x on 1.1B Q6_K, 16 rows 0.93-0.95x on 1.1B Q4_K_M). */
    float accb[WIN_CHUNKS * KERN_A8B_CHUNK * 16] __attribute__((aligned(32)));
    for (int g = 0; g < groups; g++)
        for (int c0 = 0; c0 < nc; c0 += WIN_CHUNKS) {
            const int c1 = c0 + WIN_CHUNKS < nc ? c0 + WIN_CHUNKS : nc, tw = kern_a8b_first(T, c0);
            group_pass(WT, p + (size_t)g * gbytes, K, xa, T, c0, c1, tw, accb, 16);
            for (int t = tw; t < kern_a8b_first(T, c1); t++)
                memcpy(y + (size_t)t * ldy + 16 * g, accb + 16 * (t - tw), 16 * sizeof(float));
        }
}

#define INT8B(fn, WT)                                                                              \
    void fn(const unsigned char *p, size_t gbytes, int groups, int K, const void *xa, int T,       \
            float *y, size_t ldy) {                                                                \
        matmul_int8b(WT, p, gbytes, groups, K, xa, T, y, ldy);                                     \
    }
INT8B(INT8B_NAME(q8_0), WTYPE_Q8_0)
INT8B(INT8B_NAME(q4_0), WTYPE_Q4_0)
INT8B(INT8B_NAME(q4_1), WTYPE_Q4_1)
INT8B(INT8B_NAME(q5_0), WTYPE_Q5_0)
INT8B(INT8B_NAME(q5_1), WTYPE_Q5_1)
INT8B(INT8B_NAME(q3_k), WTYPE_Q3_K)
INT8B(INT8B_NAME(q4_k), WTYPE_Q4_K)
INT8B(INT8B_NAME(q5_k), WTYPE_Q5_K)
INT8B(INT8B_NAME(q6_k), WTYPE_Q6_K)
#endif
