/* test_kernels.c: every instruction set's kernels equal the scalar reference bit for bit.
 *  1. matrix products for every row of the weight-type table (wtype.h) on every instruction
 *     set this CPU runs (scalar, AVX2, AVX-512): odd K (tails), every tile edge, T = 1..9 and
 *     both sides of the widening thresholds (kern_widen_from),
 *     row offsets; a matrix too big for the cache (the streaming row groups) whole and
 *     in thread shares; rows of 2^19 values (kernel buffers past the stack's size); a new
 *     type is tested by adding its row;
 *  2. each row agrees with the GGUF reader's ggml type table (name, block geometry), its
 *     to_float is what kern_row_to_f32 and the reference use;
 *  3. the attention kernel, with keys and values stored as f32 or f16 (kern_attend_kv; also with
 *     the query counts and head sizes of grouped-query models), the canonical sum and dot; exp accuracy; f16 round trips; the
 *     SIMD copies of libm's expf against libm, and SwiGLU's gate with them (kern_silu_mul)
 *     against the scalar loop; the f16 conversions (kern_f16_from_f32, kern_f16_to_f32)
 *     against wtype's;
 *  4. fuzz_wtype_one (the differential libFuzzer entry of tests/fuzz_wtype.c) over 3000
 *     seeded random inputs: arbitrary bytes as blocks of every type, every ISA against the
 *     reference (a difference traps).
 * `test_kernels avx2` (CTest: test_kernels_avx2) and `test_kernels scalar` run the same checks
 * with only that instruction set, also selected for the public entry points (kern_matmul,
 * kern_attend, ...), as on a CPU without AVX-512 or without SIMD. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/formats/gguf.h"
#include "model/kernels/kernels.h"
#include "model/kernels/kernels_isa.h"
#include "tests/testutil.h"
#include "util/rng.h"

#include "tests/fuzz_wtype.c"

static int isa_on[KERN_ISA_COUNT]; /* the instruction sets under test */

/* Random weights of type t: rows x cols (cols a multiple of the block). Floats are drawn in
 * [-1, 1); block types get random bytes, each block re-drawn until it dequantizes to finite
 * values (a random f16 scale is now and then inf or NaN, whose payloads need not propagate
 * alike through different instruction sequences). The bytes are the test's; any of them is a
 * valid block, which is the point. */
static unsigned char *random_matrix(rng_state *r, wtype t, int rows, int cols) {
    const wtype_traits *tt = wtype_get(t);
    size_t row_bytes = wtype_row_bytes(t, cols), n = row_bytes * (size_t)rows;
    unsigned char *w = malloc(n + 64);
    if (t == WTYPE_F32 || t == WTYPE_F16 || t == WTYPE_BF16) {
        for (size_t i = 0; i < (size_t)rows * cols; i++) {
            float f = 2 * rng_unit(r) - 1;
            if (t == WTYPE_F32) memcpy(w + 4 * i, &f, 4);
            uint16_t h = t == WTYPE_F16 ? wtype_f32_to_f16(f) : wtype_f32_to_bf16(f);
            if (t != WTYPE_F32) memcpy(w + 2 * i, &h, 2);
        }
        return w;
    }
    float vals[1024];
    for (size_t b = 0; b < n / (size_t)tt->block_bytes; b++) {
        unsigned char *blk = w + b * (size_t)tt->block_bytes;
        int finite;
        do {
            for (int i = 0; i < tt->block_bytes; i++) blk[i] = (unsigned char)rng_u64(r);
            tt->to_float(blk, vals, tt->block);
            finite = 1;
            for (int i = 0; i < tt->block; i++) finite &= isfinite(vals[i]) != 0;
        } while (!finite);
    }
    return w;
}

static int same_rows(const float *a, const float *b, int T, int n, int ld) {
    for (int t = 0; t < T; t++)
        if (memcmp(a + (size_t)t * ld, b + (size_t)t * ld, sizeof(float) * n)) return 0;
    return 1;
}

/* Rows per pass tested: every small count, both sides of kern_widen_from's thresholds (8 for the
 * block types, 16 for q8_0), where the tiles start widening a panel of rows first, and of the
 * AVX2 wide tiles' blocks of 64 tokens (kernels_avx2.c, WIDE_TOKENS). */
static const int test_T[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 24, 64, 65, 70};
#define N_TEST_T (int)(sizeof test_T / sizeof test_T[0])

/* Every type, small matrices: K tails, the T of test_T, row offsets 0..2. */
static void test_matmul_small(rng_state *r) {
    int Ks[] = {1, 7, 16, 17, 31, 32, 64, 96, 172, 288, 1033}; /* 1033: chunks of K (AVX2) */
    for (int t = 0; t < WTYPE_COUNT; t++) {
        const wtype_traits *tt = wtype_get((wtype)t);
        for (size_t ki = 0; ki < sizeof Ks / sizeof Ks[0]; ki++) {
            int K = (Ks[ki] + tt->block - 1) / tt->block * tt->block, R = 11, T = 70;
            if (tt->block > 1 && ki > 0 &&
                K == (Ks[ki - 1] + tt->block - 1) / tt->block * tt->block)
                continue; /* the same K again */
            unsigned char *w = random_matrix(r, (wtype)t, R, K);
            float *x = malloc(sizeof(float) * T * K);
            float *y1 = malloc(sizeof(float) * T * R), *y2 = malloc(sizeof(float) * T * R);
            for (int i = 0; i < T * K; i++) x[i] = 2 * rng_unit(r) - 1;
            wmat m = {(wtype)t, w, R, K, NULL, NULL};
            for (int isa = 0; isa < KERN_ISA_COUNT; isa++) {
                if (!isa_on[isa]) continue;
                int bad = 0;
                for (int ti = 0; ti < N_TEST_T; ti++)
                    for (int r0 = 0, n = test_T[ti]; r0 < 3; r0++) {
                        kern_matmul_isa((kern_isa)isa, &m, r0, R, x, K, n, y1, R);
                        kern_matmul_ref(&m, r0, R, x, K, n, y2, R);
                        bad += !same_rows(y1, y2, n, R - r0, R);
                    }
                CHECK_MSG(bad == 0, "%s %s K=%d: %d of %d shapes differ from the reference",
                          kern_isa_name((kern_isa)isa), tt->name, K, bad, 3 * N_TEST_T);
            }
            /* the public entry point runs the active instruction set */
            kern_matmul(&m, 0, R, x, K, T, y1, R);
            kern_matmul_ref(&m, 0, R, x, K, T, y2, R);
            CHECK_MSG(same_rows(y1, y2, T, R, R), "kern_matmul %s K=%d", tt->name, K);
            free(w), free(x), free(y1), free(y2);
        }
    }
}

/* Every type, a matrix that streams (600 KB, over kern_streams' bound): the streaming tiles,
 * rows taken far apart (kern_rowgroup; an odd row count leaves the last part short) up to 8
 * tokens and adjacent in the wide passes from 16 (WIDE_ADJACENT_FROM); whole and
 * in shares of rows as the thread pool calls it (each share fits in the cache, the matrix does
 * not). */
static void test_matmul_streaming(rng_state *r) {
    for (int t = 0; t < WTYPE_COUNT; t++) {
        const wtype_traits *tt = wtype_get((wtype)t);
        int K = (1088 + tt->block - 1) / tt->block * tt->block;
        size_t row_bytes = wtype_row_bytes((wtype)t, K);
        int R = (int)((600 << 10) / row_bytes) | 1; /* streams; odd, so not whole 16-row tiles */
        if (R < 501) R = 501;
        unsigned char *w = random_matrix(r, (wtype)t, R, K);
        float *x = malloc(sizeof(float) * 17 * K);
        float *y1 = malloc(sizeof(float) * 17 * R), *y2 = malloc(sizeof(float) * 17 * R);
        for (int i = 0; i < 17 * K; i++) x[i] = 2 * rng_unit(r) - 1;
        wmat m = {(wtype)t, w, R, K, NULL, NULL};
        const int cuts[] = {0, 37, 160, R / 2 + 1, R};
        const int ns[] = {1, 2, 3, 4, 5, 6, 8, 16, 17};
        for (int ni = 0; ni < 9; ni++) {
            const int n = ns[ni];
            kern_matmul_ref(&m, 0, R, x, K, n, y2, R);
            for (int isa = 0; isa < KERN_ISA_COUNT; isa++) {
                if (!isa_on[isa]) continue;
                const char *in = kern_isa_name((kern_isa)isa);
                kern_matmul_isa((kern_isa)isa, &m, 0, R, x, K, n, y1, R);
                CHECK_MSG(same_rows(y1, y2, n, R, R), "%s large %s matrix (%dx%d), T=%d differs",
                          in, tt->name, R, K, n);
                memset(y1, 0, sizeof(float) * 17 * R);
                for (int c = 0; c + 1 < 5; c++)
                    kern_matmul_isa((kern_isa)isa, &m, cuts[c], cuts[c + 1], x, K, n, y1 + cuts[c],
                                    R);
                CHECK_MSG(same_rows(y1, y2, n, R, R), "%s large %s matrix in shares, T=%d differs",
                          in, tt->name, n);
            }
        }
        free(w), free(x), free(y1), free(y2);
    }
}

/* Rows far longer than any real model's (K = 2^19, a hidden size a file may declare: at most
 * MODEL_MAX_HIDDEN): a widened panel of 6 such rows is 12 MB, past a thread's 8 MB stack, where
 * it crashed until the kernels took long buffers from the heap (kernels_isa.h,
 * KERN_STACK_BYTES). 16 tokens: every ISA widens panels of q8_0 and the block types there. */
static void test_matmul_long_rows(rng_state *r) {
    const wtype types[] = {WTYPE_Q8_0, WTYPE_Q4_0, WTYPE_Q6_K};
    const int K = 1 << 19, R = 7, T = 16;
    float *x = malloc(sizeof(float) * T * K), *y1 = malloc(sizeof(float) * T * R),
          *y2 = malloc(sizeof(float) * T * R);
    for (size_t i = 0; i < (size_t)T * K; i++) x[i] = 2 * rng_unit(r) - 1;
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        unsigned char *w = random_matrix(r, types[ti], R, K);
        wmat m = {types[ti], w, R, K, NULL, NULL};
        kern_matmul_ref(&m, 0, R, x, K, T, y2, R);
        for (int isa = 0; isa < KERN_ISA_COUNT; isa++) {
            if (!isa_on[isa]) continue;
            kern_matmul_isa((kern_isa)isa, &m, 0, R, x, K, T, y1, R);
            CHECK_MSG(same_rows(y1, y2, T, R, R), "%s %s rows of K = 2^19, T=%d differ",
                      kern_isa_name((kern_isa)isa), wtype_get(types[ti])->name, T);
        }
        free(w);
    }
    free(x), free(y1), free(y2);
}

/* The table agrees with the GGUF reader's list of ggml types, and to_float is what the
 * embedding lookup uses. */
static void test_table(rng_state *r) {
    for (int t = 0; t < WTYPE_COUNT; t++) {
        const wtype_traits *tt = wtype_get((wtype)t);
        uint64_t be = 0, bb = 0;
        const char *gn = gguf_type_name(tt->ggml_type);
        CHECK_MSG(gn && strcasecmp(gn, tt->name) == 0, "%s: ggml type %u is %s", tt->name,
                  tt->ggml_type, gn ? gn : "unknown");
        CHECK_MSG(gguf_type_block(tt->ggml_type, &be, &bb) == 0 && be == (uint64_t)tt->block &&
                      bb == (uint64_t)tt->block_bytes,
                  "%s: block %d x %d bytes, ggml says %llu x %llu", tt->name, tt->block,
                  tt->block_bytes, (unsigned long long)be, (unsigned long long)bb);
        wtype back;
        CHECK(wtype_from_ggml(tt->ggml_type, &back) == 0 && back == (wtype)t);
        CHECK(wtype_parse(tt->name, &back) == 0 && back == (wtype)t);
        CHECK(strcmp(wtype_name((wtype)t), tt->name) == 0);
        CHECK(tt->to_float && tt->align > 0 && tt->block_bytes > 0);
        int K = 2 * tt->block;
        unsigned char *w = random_matrix(r, (wtype)t, 3, K);
        float a[1024], b[1024];
        wmat m = {(wtype)t, w, 3, K, NULL, NULL};
        kern_row_to_f32(&m, 2, a);
        tt->to_float(w + 2 * wtype_row_bytes((wtype)t, K), b, K);
        CHECK(memcmp(a, b, sizeof(float) * K) == 0);
        free(w);
    }
    wtype x;
    CHECK(wtype_parse("q4", &x) == -1 && wtype_parse(NULL, &x) == -1);
    CHECK(wtype_from_ggml(1000, &x) == -1);
}

/* ---- the int8 mode ------------------------------------------------------------------------ */

static unsigned char *quantized_rows(rng_state *r, int T, int K, size_t *lda) {
    float *x = malloc(sizeof(float) * (size_t)T * K);
    for (int i = 0; i < T * K; i++) { /* blocks of very different magnitudes, some all zero */
        int b = i / 32;
        float scale = b % 7 == 3 ? 0.0f : (float)(1 << (b % 5)) / 4;
        x[i] = scale * (2 * rng_unit(r) - 1);
    }
    *lda = kern_act_bytes(K);
    unsigned char *xa = aligned_alloc(64, *lda * (size_t)T);
    kern_act_quantize(x, K, T, K, xa, *lda);
    free(x);
    return xa;
}

/* The int8 mode on rows of K = 2^20 (MODEL_MAX_HIDDEN): the scalar reference's row of int8
 * weights and scales is 2.1 MB there, past KERN_STACK_BYTES, so it comes from the heap; every
 * ISA's tiles agree with it, at 1 and 4 tokens. */
static void test_matmul_int8_long_rows(rng_state *r) {
    const wtype types[] = {WTYPE_Q8_0, WTYPE_Q4_K};
    const int K = 1 << 20, R = 3, T = 4;
    size_t lda;
    unsigned char *xa = quantized_rows(r, T, K, &lda);
    float y1[4 * 3], y2[4 * 3];
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        unsigned char *w = random_matrix(r, types[ti], R, K);
        wmat m = {types[ti], w, R, K, NULL, NULL};
        for (int n = 1; n <= T; n += T - 1) {
            kern_matmul_int8_ref(&m, 0, R, xa, lda, n, y2, R);
            for (int isa = 0; isa < KERN_ISA_COUNT; isa++) {
                if (!isa_on[isa]) continue;
                kern_matmul_int8_isa((kern_isa)isa, &m, 0, R, xa, lda, n, y1, R);
                CHECK_MSG(same_rows(y1, y2, n, R, R), "%s %s int8 rows of K = 2^20, T=%d differ",
                          kern_isa_name((kern_isa)isa), wtype_get(types[ti])->name, n);
            }
        }
        free(w);
    }
    free(xa);
}

/* Each int8 row's integers and scales rebuild to_float's weights exactly (A * w - M with the
 * float32 operations of the exact decoders), so the int8 decoders read the same layouts as the
 * dequantizers checked against llama.cpp (test_wtype.c). */
static void test_int8_decoders(rng_state *r) {
    for (int t = 0; t < WTYPE_COUNT; t++) {
        const wtype_traits *tt = wtype_get((wtype)t);
        if (!kern_int8_supported((wtype)t)) continue;
        int K = 4 * (tt->block > 32 ? tt->block : 64), bad = 0;
        unsigned char *w = random_matrix(r, (wtype)t, 5, K);
        int8_t wi[1024];
        float f[1024], s4[256], m32[32];
        for (int row = 0; row < 5; row++) {
            const unsigned char *src = w + (size_t)row * wtype_row_bytes((wtype)t, K);
            tt->to_float(src, f, K);
            kern_traits_get((wtype)t)->int8.to_int8(src, wi, s4, m32, K);
            for (int i = 0; i < K; i++) {
                float v = s4[i / 4] * (float)wi[i];
                if (kern_traits_get((wtype)t)->int8.has_min) v = v - m32[i / 32];
                bad += memcmp(&v, &f[i], 4) != 0;
            }
        }
        CHECK_MSG(bad == 0, "%s: %d weights rebuilt from to_int8 differ from to_float", tt->name,
                  bad);
        free(w);
    }
}

/* The quantizer on chosen values, on every ISA: the block's largest |x| becomes +-127, zeros
 * stay 0 with d = 0, ties round to even; the stored sums. A block holding a NaN gets d = NaN
 * (integers 0), and one holding an infinity d = inf, so that the products of the block carry
 * them (a NaN used to count as 0, ignored by the maximum, and vanished). */
static void test_int8_quantize_on(kern_isa isa) {
    const int K = 160; /* five blocks: the third group has one */
    float x[160] = {0};
    x[0] = -2.0f, x[1] = 1.0f, x[3] = 2.0f * 63.5f / 127.0f; /* 63.5: a tie */
    x[64] = 0.5f, x[65] = -0.25f;
    x[96] = 1.0f, x[101] = NAN, x[102] = 1e30f;       /* block 3 */
    x[128] = -1.0f, x[129] = INFINITY, x[130] = 2.0f; /* block 4 */
    unsigned char *xa = aligned_alloc(64, kern_act_bytes(K));
    kern_act_quantize_isa(isa, x, K, 1, K, xa, kern_act_bytes(K));
    const kern_a8_group *g = (const kern_a8_group *)xa;
    const float *ds = kern_a8_ds(xa, K);
    CHECK(g[0].q[0] == -127 && g[0].q[1] == 64 && g[0].q[2] == 0);
    CHECK_MSG(g[0].q[3] == 64 || g[0].q[3] == 63, "tie rounded to %d", g[0].q[3]);
    CHECK(g[0].d[0] == 2.0f / 127.0f && g[0].d[7] == 2.0f / 127.0f);
    CHECK(g[0].c[0] == -128 * (-127 + 64 + 0 + g[0].q[3]) && g[0].c[1] == 0);
    CHECK(g[0].d[8] == 0.0f && g[0].c[8] == 0 && g[0].q[32] == 0 && ds[1] == 0.0f); /* zeros */
    CHECK(g[1].q[0] == 127 && g[1].q[1] == -64 && g[1].d[0] == 0.5f / 127.0f);
    CHECK(ds[2] == (0.5f / 127.0f) * 63.0f);
    int zeros = 1;
    for (int i = 0; i < 32; i++) zeros &= g[1].q[32 + i] == 0 && g[2].q[i] == 0;
    CHECK_MSG(zeros && isnan(g[1].d[8]) && isnan(g[1].d[15]) && isnan(ds[3]),
              "%s: a NaN's block: d %g, sum %g", kern_isa_name(isa), g[1].d[8], ds[3]);
    CHECK_MSG(isinf(g[2].d[0]) && g[2].d[0] > 0 && g[2].d[7] == g[2].d[0] && !isfinite(ds[4]),
              "%s: an infinity's block: d %g, sum %g", kern_isa_name(isa), g[2].d[0], ds[4]);
    CHECK(g[2].q[32] == 0 && g[2].d[8] == 0.0f && g[2].c[15] == 0); /* past K */
    free(xa);
}

/* Every ISA's quantizer writes the reference's bytes: random rows with blocks of very
 * different magnitudes, exact ties, NaN, infinities, huge and denormal values, and all-zero
 * blocks. */
static void test_int8_quantize(rng_state *r) {
    for (int isa = 0; isa < KERN_ISA_COUNT; isa++)
        if (isa_on[isa]) test_int8_quantize_on((kern_isa)isa);
    const int K = 1024, T = 7;
    float *x = malloc(sizeof(float) * T * K);
    for (int i = 0; i < T * K; i++) {
        int b = i / 32, kind = (int)(rng_unit(r) * 64);
        float scale = b % 7 == 3 ? 0.0f : ldexpf(1.0f, (b % 11) - 5);
        x[i] = scale * (2 * rng_unit(r) - 1);
        if (b % 5 == 1 && i % 32 == 0) x[i] = scale; /* amax = scale: k * d / 2 are ties */
        if (b % 5 == 1 && i % 32 > 0)
            x[i] = scale * (float)((int)(rng_unit(r) * 255) - 127) / 254.0f;
        if (kind == 0) x[i] = NAN;
        if (kind == 1 && b % 13 == 2) x[i] = INFINITY;
        if (kind == 2) x[i] = 1e-42f; /* denormal */
        if (kind == 3 && b % 17 == 4) x[i] = -3e38f;
    }
    size_t lda = kern_act_bytes(K);
    unsigned char *ref = aligned_alloc(64, lda * T), *got = aligned_alloc(64, lda * T);
    kern_act_quantize_isa(KERN_ISA_SCALAR, x, K, T, K, ref, lda);
    for (int isa = 1; isa < KERN_ISA_COUNT; isa++) {
        if (!isa_on[isa]) continue;
        memset(got, 0xAB, lda * T);
        kern_act_quantize_isa((kern_isa)isa, x, K, T, K, got, lda);
        CHECK_MSG(memcmp(ref, got, lda * T) == 0, "quantizer %s differs from the reference",
                  kern_isa_name((kern_isa)isa));
    }
    free(x), free(ref), free(got);
}

/* The packed copy of m (kernels.h, "packed rows") when its type has a layout, else NULL; made
 * whether or not the active ISA would read it, so every CPU with the packed tile's ISA tests
 * it (kern_matmul_int8_isa reads it when asked for that ISA). */
static unsigned char *packed_copy(const wmat *m) {
    size_t n = kern_int8_packed_size(m);
    unsigned char *p = n ? malloc(n) : NULL;
    if (p) kern_int8_pack(m, p, 0, 1);
    return p;
}

/* Every int8 type on every instruction set equals the int8 reference bit for bit: odd block
 * counts, T = 1..9, row offsets, and a matrix that streams (whole and in shares), each with and
 * without the type's packed rows; and the mode stays close to the exact product (it rounds the
 * activations to 8 bits, nothing else). */
static void test_int8_matmul(rng_state *r) {
    for (int t = 0; t < WTYPE_COUNT; t++) {
        const wtype_traits *tt = wtype_get((wtype)t);
        if (!kern_int8_supported((wtype)t)) continue;
        const int Ks32[] = {32, 96, 160, 288, 1024}, Ks256[] = {256, 768, 1024};
        const int *Ks = tt->block == 32 ? Ks32 : Ks256, nK = tt->block == 32 ? 5 : 3;
        for (int ki = 0; ki < nK; ki++) {
            int K = Ks[ki], R = 21, T = 9;
            size_t lda;
            unsigned char *w = random_matrix(r, (wtype)t, R, K),
                          *xa = quantized_rows(r, T, K, &lda);
            float *y1 = malloc(sizeof(float) * T * R), *y2 = malloc(sizeof(float) * T * R);
            wmat m = {(wtype)t, w, R, K, NULL, NULL};
            unsigned char *pk = packed_copy(&m);
            for (int isa = 0; isa < KERN_ISA_COUNT; isa++)
                for (int packed = 0; packed <= (pk != NULL); packed++) {
                    if (!isa_on[isa]) continue;
                    m.packed = packed ? pk : NULL;
                    int bad = 0;
                    for (int n = 1; n <= T; n++)
                        for (int r0 = 0; r0 < 3; r0++) {
                            kern_matmul_int8_isa((kern_isa)isa, &m, r0, R - r0 % 2, xa, lda, n,
                                                 y1, R);
                            kern_matmul_int8_ref(&m, r0, R - r0 % 2, xa, lda, n, y2, R);
                            bad += !same_rows(y1, y2, n, R - r0 - r0 % 2, R);
                        }
                    CHECK_MSG(bad == 0, "int8 %s %s%s K=%d: %d of 27 shapes differ from the reference",
                              kern_isa_name((kern_isa)isa), tt->name, packed ? " packed" : "", K,
                              bad);
                }
            m.packed = NULL;
            free(pk);
            kern_matmul_int8(&m, 0, R, xa, lda, T, y1, R);
            kern_matmul_int8_ref(&m, 0, R, xa, lda, T, y2, R);
            CHECK_MSG(same_rows(y1, y2, T, R, R), "kern_matmul_int8 %s K=%d", tt->name, K);
            free(w), free(xa), free(y1), free(y2);
        }
        /* no packed copy of rows longer than a packed tile keeps its starts for (kernels.h) */
        wmat longest = {(wtype)t, NULL, 8, KERN_PACKED_MAX_K, NULL, NULL}, longer = longest;
        longer.cols += tt->block;
        CHECK_MSG(kern_int8_packed_size(&longer) == 0 &&
                      (kern_int8_packed_size(&longest) > 0) == (kern_traits_get((wtype)t)->int8.pack != NULL),
                  "%s: the packed copy's row limit", tt->name);
        /* streaming, whole and in shares */
        int K = 1024;
        int R = (int)((600 << 10) / wtype_row_bytes((wtype)t, K)) | 1;
        size_t lda;
        unsigned char *w = random_matrix(r, (wtype)t, R, K), *xa = quantized_rows(r, 6, K, &lda);
        float *y1 = malloc(sizeof(float) * 6 * R), *y2 = malloc(sizeof(float) * 6 * R);
        wmat m = {(wtype)t, w, R, K, NULL, NULL};
        unsigned char *pk = packed_copy(&m);
        const int cuts[] = {0, 37, 160, R / 2 + 1, R};
        for (int n = 1; n <= 6; n += 5) {
            kern_matmul_int8_ref(&m, 0, R, xa, lda, n, y2, R);
            for (int isa = 0; isa < KERN_ISA_COUNT; isa++)
                for (int packed = 0; packed <= (pk != NULL); packed++) {
                    if (!isa_on[isa]) continue;
                    m.packed = packed ? pk : NULL;
                    memset(y1, 0, sizeof(float) * 6 * R);
                    for (int c = 0; c + 1 < 5; c++)
                        kern_matmul_int8_isa((kern_isa)isa, &m, cuts[c], cuts[c + 1], xa, lda, n,
                                             y1 + cuts[c], R);
                    CHECK_MSG(same_rows(y1, y2, n, R, R),
                              "int8 %s large %s%s matrix, T=%d differs",
                              kern_isa_name((kern_isa)isa), tt->name, packed ? " packed" : "", n);
                }
        }
        m.packed = NULL;
        free(w), free(xa), free(y1), free(y2), free(pk);
        /* close to the exact product: relative error of the dot products */
        K = 2048;
        float *x = malloc(sizeof(float) * K), ye[8], yi[8];
        for (int i = 0; i < K; i++) x[i] = 2 * rng_unit(r) - 1;
        w = random_matrix(r, (wtype)t, 8, K);
        m = (wmat){(wtype)t, w, 8, K, NULL, NULL};
        xa = aligned_alloc(64, kern_act_bytes(K));
        kern_act_quantize(x, K, 1, K, xa, kern_act_bytes(K));
        kern_matmul_ref(&m, 0, 8, x, K, 1, ye, 8);
        kern_matmul_int8_ref(&m, 0, 8, xa, kern_act_bytes(K), 1, yi, 8);
        double num = 0, den = 0;
        for (int i = 0; i < 8; i++) num += fabs((double)yi[i] - ye[i]), den += fabs((double)ye[i]);
        CHECK_MSG(num <= 0.02 * den, "int8 %s: relative error %g against the exact product",
                  tt->name, num / den);
        free(x), free(w), free(xa);
    }
}

/* ---- the int8b mode ------------------------------------------------------------------------ */

/* T rows of activations (as quantized_rows) in the int8b layout, and the same rows in the int8
 * mode's layout (to compare what the two quantizers make of them). */
static unsigned char *quantized8b_rows(rng_state *r, int T, int K, unsigned char **xa8) {
    float *x = malloc(sizeof(float) * (size_t)T * K);
    for (int i = 0; i < T * K; i++) {
        int b = i / 32;
        float scale = b % 7 == 3 ? 0.0f : (float)(1 << (b % 5)) / 4;
        x[i] = scale * (2 * rng_unit(r) - 1);
    }
    unsigned char *xa = aligned_alloc(64, kern_act8b_bytes(T, K));
    kern_act8b_quantize(x, K, T, K, xa);
    if (xa8) {
        *xa8 = aligned_alloc(64, kern_act_bytes(K) * (size_t)T);
        kern_act_quantize(x, K, T, K, *xa8, kern_act_bytes(K));
    }
    free(x);
    return xa;
}

/* The int8b quantizer: every ISA writes the reference's bytes (the values of
 * test_int8_quantize: ties, NaN, infinities, denormals, zero blocks), for T of one and several
 * chunks; token t's q and d_b are the int8 mode's, and its sums are those of its q. */
/* kern_peak_per_cycle: the AVX-512 units come from the measured issue rate at the clock it is
 * given (a clock 1000x too high: one unit; 1000x too low: two), the rest from the ISA. */
static void test_peak(void) {
    double i8, f32;
    const char *what;
    const kern_isa isa = kern_isa_active();
    if (isa == KERN_ISA_AVX512) {
        kern_peak_per_cycle(1000.0, &i8, &f32, &what);
        CHECK_MSG(f32 == 32 && strstr(what, "x1"), "peak at 1000 GHz: %g flops, %s", f32, what);
        kern_peak_per_cycle(0.001, &i8, &f32, &what);
        CHECK_MSG(f32 == 64 && strstr(what, "x2"), "peak at 1 MHz: %g flops, %s", f32, what);
        CHECK(i8 == 256 || i8 == 128); /* with VNNI 64 products of 2 ops, else AVX2's 32 */
    } else {
        kern_peak_per_cycle(1000.0, &i8, &f32, &what);
        CHECK(isa == KERN_ISA_AVX2 ? i8 == 128 && f32 == 32 : i8 == 2 && f32 == 4);
        if (isa == KERN_ISA_AVX2)
            CHECK_MSG(!strstr(what, "avx-vnni") == !kern_avxvnni_active(), "AVX2 peak: %s", what);
    }
}

static void test_int8b_quantize(rng_state *r) {
    const int K = 256;
    for (int T = 1; T <= 20; T += T < 10 ? 1 : 10) {
        float *x = malloc(sizeof(float) * T * K);
        for (int i = 0; i < T * K; i++) {
            int b = i / 32, kind = (int)(rng_unit(r) * 64);
            float scale = b % 7 == 3 ? 0.0f : ldexpf(1.0f, (b % 11) - 5);
            x[i] = scale * (2 * rng_unit(r) - 1);
            if (b % 5 == 1 && i % 32 == 0) x[i] = scale;
            if (kind == 0) x[i] = NAN;
            if (kind == 1 && b % 13 == 2) x[i] = INFINITY;
            if (kind == 2) x[i] = 1e-42f;
        }
        /* the layout's bytes (kern_act8b_bytes rounds them up to 64) */
        size_t n = (size_t)T * (K / 32) * KERN_A8B_REC, lda = kern_act_bytes(K);
        unsigned char *ref = aligned_alloc(64, kern_act8b_bytes(T, K)),
                      *got = aligned_alloc(64, kern_act8b_bytes(T, K));
        unsigned char *a8 = aligned_alloc(64, lda * T);
        kern_act8b_quantize_isa(KERN_ISA_SCALAR, x, K, T, K, ref);
        kern_act_quantize_isa(KERN_ISA_SCALAR, x, K, T, K, a8, lda);
        for (int isa = 1; isa < KERN_ISA_COUNT; isa++) {
            if (!isa_on[isa]) continue;
            memset(got, 0xAB, n);
            kern_act8b_quantize_isa((kern_isa)isa, x, K, T, K, got);
            CHECK_MSG(memcmp(ref, got, n) == 0, "int8b quantizer %s differs from the reference (T=%d)",
                      kern_isa_name((kern_isa)isa), T);
        }
        /* by columns, as the threads that gate w1 and w3 quantize w2's input: pieces of 32, 64
         * and the rest, in reverse order, give the whole quantization's bytes */
        memset(got, 0xAB, n);
        kern_act8b_quantize_range(x, K, T, K, got, 0, T, 96, K);
        kern_act8b_quantize_range(x, K, T, K, got, 0, T, 32, 96);
        kern_act8b_quantize_range(x, K, T, K, got, 0, T, 0, 32);
        CHECK_MSG(memcmp(ref, got, n) == 0, "int8b quantizer by columns differs (T=%d)", T);
        memset(got, 0xAB, n);
        kern_act8b_quantize_range(x, K, T, K, got, 0, T, 32, K);
        CHECK_MSG(memcmp(ref, got, n) != 0, "int8b quantizer: columns 0-31 left unwritten (T=%d)", T);
        /* by tokens and columns, as the norm's threads quantize a pass's input: each group of
         * the layout in two shares of columns, the later ones first */
        memset(got, 0xAB, n);
        for (int gi = kern_act8b_groups(T) - 1; gi >= 0; gi--) {
            int t0, t1;
            kern_act8b_group(T, gi, &t0, &t1);
            kern_act8b_quantize_range(x, K, T, K, got, t0, t1, 32, K);
            kern_act8b_quantize_range(x, K, T, K, got, t0, t1, 0, 32);
        }
        CHECK_MSG(memcmp(ref, got, n) == 0, "int8b quantizer by groups and columns differs (T=%d)",
                  T);
        int bad = 0;
        for (int c = 0; c < kern_a8b_chunks(T); c++) {
            const int t0 = kern_a8b_first(T, c), nt = kern_a8b_first(T, c + 1) - t0;
            for (int i = 0; i < nt; i++)
                for (int b = 0; b < K / 32; b++) {
                    const unsigned char *rec = ref + kern_a8b_at(K, t0, nt, b);
                    const kern_a8_group *g = (const kern_a8_group *)(a8 + lda * (t0 + i)) + b / 2;
                    const int8_t *q = (const int8_t *)(rec + 32 * i);
                    float d, ds;
                    int32_t s128, s8, h0, h1, sum = 0, sh = 0;
                    memcpy(&d, rec + 32 * nt + 4 * i, 4), memcpy(&ds, rec + 36 * nt + 4 * i, 4);
                    memcpy(&s128, rec + 40 * nt + 4 * i, 4), memcpy(&s8, rec + 44 * nt + 4 * i, 4);
                    memcpy(&h0, rec + 48 * nt + 4 * i, 4), memcpy(&h1, rec + 52 * nt + 4 * i, 4);
                    for (int k = 0; k < 32; k++) sum += q[k], sh += k < 16 ? q[k] : 0;
                    /* the floats by their bits: an infinite input makes d_b and ds NaN */
                    bad += memcmp(q, g->q + 32 * (b % 2), 32) != 0 ||
                           memcmp(&d, &g->d[8 * (b % 2)], 4) != 0 ||
                           memcmp(&ds, kern_a8_ds(a8 + lda * (t0 + i), K) + b, 4) != 0 ||
                           s128 != -128 * sum ||
                           s8 != -8 * sum || h0 != -32 * sh || h1 != -32 * (sum - sh);
                }
        }
        CHECK_MSG(bad == 0, "int8b quantizer (T=%d): %d blocks differ from the int8 mode's", T, bad);
        free(x), free(ref), free(got), free(a8);
    }
}

/* The 16-row copy of m, or NULL. */
static unsigned char *r16_copy(const wmat *m) {
    size_t n = kern_int8b_packed_size(m);
    unsigned char *p = n ? malloc(n) : NULL;
    if (p) kern_int8b_pack(m, p, 0, 1);
    return p;
}

/* Every int8b type on every instruction set equals the int8b reference bit for bit: odd block
 * counts, T over one and several chunks, row ranges cutting groups of 16, with and without the
 * 16-row copy, the copy made in shares, AVX2 with and without AVX-VNNI, AVX-512 with and without
 * the far prefetches; a token's result does not depend on T (the reference
 * at T against the reference of that token alone); and the mode stays close to the exact
 * product. */
static void test_int8b_matmul(rng_state *r) {
    const int vnni0 = kern_avxvnni_active(), far0 = kern_far_prefetch_active();
    CHECK(kern_avxvnni_use(1) == (kern_avxvnni_supported() ? 0 : -1));
    kern_avxvnni_use(vnni0);
    for (int t = 0; t < WTYPE_COUNT; t++) {
        const wtype_traits *tt = wtype_get((wtype)t);
        if (!kern_int8b_supported((wtype)t)) continue;
        /* the largest K of each: groups of 16 rows above 16 KB (every type), which the AVX-512
         * tiles pair differently from smaller ones (kernels_avx512_int8b.c, FAR_PAIRS_BYTES) */
        const int Ks32[] = {32, 96, 288, 544, 1888}, Ks256[] = {256, 768, 2560};
        const int *Ks = tt->block == 32 ? Ks32 : Ks256, nK = tt->block == 32 ? 5 : 3;
        /* 71: more chunks than the AVX2 tiles' window holds (kernels_avx2_int8b.c) */
        const int Ts[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 17, 24, 33, 71};
        for (int ki = 0; ki < nK; ki++) {
            int K = Ks[ki], R = 53, T = 71;
            unsigned char *w = random_matrix(r, (wtype)t, R, K);
            float *y1 = malloc(sizeof(float) * T * R), *y2 = malloc(sizeof(float) * T * R);
            wmat m = {(wtype)t, w, R, K, NULL, NULL};
            unsigned char *cp = r16_copy(&m), *halves = malloc(kern_int8b_packed_size(&m));
            kern_int8b_pack(&m, halves, 0, 3), kern_int8b_pack(&m, halves, 1, 3);
            kern_int8b_pack(&m, halves, 2, 3);
            CHECK_MSG(memcmp(cp, halves, kern_int8b_packed_size(&m)) == 0,
                      "%s: the 16-row copy made in 3 parts differs", tt->name);
            for (size_t ti = 0; ti < sizeof Ts / sizeof Ts[0]; ti++) {
                const int n = Ts[ti];
                unsigned char *xa = quantized8b_rows(r, n, K, NULL);
                const int cuts[][2] = {{0, R}, {1, R}, {16, 32}, {5, 37}, {33, 53}, {17, 18}};
                /* v: AVX2's AVX-VNNI build, AVX-512's far prefetches */
                for (int isa = 0; isa < KERN_ISA_COUNT; isa++)
                    for (int v = 0; v <= (isa == KERN_ISA_AVX2 ? kern_avxvnni_supported()
                                                               : isa == KERN_ISA_AVX512);
                         v++)
                        for (int copy = 0; copy <= 1; copy++) {
                            if (!isa_on[isa]) continue;
                            if (isa == KERN_ISA_AVX2) CHECK(kern_avxvnni_use(v) == 0);
                            if (isa == KERN_ISA_AVX512) kern_far_prefetch_use(v);
                            m.r16 = copy ? cp : NULL;
                            int bad = 0;
                            for (int c = 0; c < 6; c++) {
                                const int r0 = cuts[c][0], r1 = cuts[c][1];
                                kern_matmul_int8b_isa((kern_isa)isa, &m, r0, r1, xa, n, y1, R);
                                kern_matmul_int8b_ref(&m, r0, r1, xa, n, y2, R);
                                bad += !same_rows(y1, y2, n, r1 - r0, R);
                            }
                            CHECK_MSG(bad == 0,
                                      "int8b %s%s %s%s K=%d T=%d: %d of 6 row ranges differ",
                                      kern_isa_name((kern_isa)isa),
                                      !v                     ? ""
                                      : isa == KERN_ISA_AVX2 ? " avx-vnni"
                                                             : " far prefetch",
                                      tt->name, copy ? " r16" : "", K, n, bad);
                        }
                kern_avxvnni_use(vnni0), kern_far_prefetch_use(far0);
                m.r16 = NULL;
                free(xa);
            }
            free(cp), free(halves);
            /* batch invariance of the order itself: token t of a pass of T equals token t alone */
            float *x = malloc(sizeof(float) * 9 * K);
            for (int i = 0; i < 9 * K; i++) x[i] = 2 * rng_unit(r) - 1;
            unsigned char *xa9 = aligned_alloc(64, kern_act8b_bytes(9, K)),
                          *xa1 = aligned_alloc(64, kern_act8b_bytes(1, K));
            kern_act8b_quantize(x, K, 9, K, xa9);
            kern_matmul_int8b(&m, 0, R, xa9, 9, y1, R);
            int bad = 0;
            for (int tk = 0; tk < 9; tk++) {
                kern_act8b_quantize(x + (size_t)tk * K, K, 1, K, xa1);
                kern_matmul_int8b(&m, 0, R, xa1, 1, y2, R);
                bad += memcmp(y1 + (size_t)tk * R, y2, sizeof(float) * R) != 0;
            }
            CHECK_MSG(bad == 0, "int8b %s K=%d: %d of 9 tokens depend on the pass", tt->name, K,
                      bad);
            free(x), free(xa9), free(xa1), free(w), free(y1), free(y2);
        }
        /* close to the exact product */
        const int K = 2048;
        float *x = malloc(sizeof(float) * K), ye[8], yi[8];
        for (int i = 0; i < K; i++) x[i] = 2 * rng_unit(r) - 1;
        unsigned char *w = random_matrix(r, (wtype)t, 8, K);
        wmat m = {(wtype)t, w, 8, K, NULL, NULL};
        unsigned char *xa = aligned_alloc(64, kern_act8b_bytes(1, K));
        kern_act8b_quantize(x, K, 1, K, xa);
        kern_matmul_ref(&m, 0, 8, x, K, 1, ye, 8);
        kern_matmul_int8b_ref(&m, 0, 8, xa, 1, yi, 8);
        double num = 0, den = 0;
        for (int i = 0; i < 8; i++) num += fabs((double)yi[i] - ye[i]), den += fabs((double)ye[i]);
        CHECK_MSG(num <= 0.02 * den, "int8b %s: relative error %g against the exact product",
                  tt->name, num / den);
        free(x), free(w), free(xa);
    }
}

/* ---- NaN and infinity reach the result ------------------------------------------------------ */

/* Whether y[t * ld + i] (t < T, i < R) is NaN or infinite exactly where bad_t / bad_r says: the
 * whole token row t == bad_t (bad_r < 0) or the whole weight row i == bad_r (bad_t < 0). */
static int nonfinite_where(const float *y, int T, int R, int bad_t, int bad_r) {
    for (int t = 0; t < T; t++)
        for (int i = 0; i < R; i++)
            if ((isfinite(y[(size_t)t * R + i]) == 0) != (t == bad_t || i == bad_r)) return 0;
    return 1;
}

/* A product of T input rows by m in the exact (int8 = 0) or the int8 mode on one ISA. */
/* mode: 0 exact, 1 int8, 2 int8b (xa holds kern_act8b_bytes(T, K) then) */
static void product(kern_isa isa, int mode, const wmat *m, const float *x, int T, unsigned char *xa,
                    float *y) {
    const int K = m->cols;
    if (mode == 0) {
        kern_matmul_isa(isa, m, 0, m->rows, x, K, T, y, m->rows);
        return;
    }
    if (mode == 2) {
        kern_act8b_quantize_isa(isa, x, K, T, K, xa);
        kern_matmul_int8b_isa(isa, m, 0, m->rows, xa, T, y, m->rows);
        return;
    }
    kern_act_quantize_isa(isa, x, K, T, K, xa, kern_act_bytes(K));
    kern_matmul_int8_isa(isa, m, 0, m->rows, xa, kern_act_bytes(K), T, y, m->rows);
}

/* Writes NaN (inf = 0) or +inf over the f32 or 16-bit float at `at` (f16 unless bf16). */
static void poison(unsigned char *at, wtype t, int inf) {
    float f = inf ? INFINITY : NAN;
    uint16_t h = t == WTYPE_BF16 ? (inf ? 0x7f80 : 0x7fc0) : (inf ? 0x7c00 : 0x7e00);
    if (t == WTYPE_F32)
        memcpy(at, &f, 4);
    else
        memcpy(at, &h, 2);
}

/* Every type in every kernel mode on every ISA, with a NaN or an infinity in one input row
 * (every result of that row must be NaN or infinite, the others finite) or in weight row 5 (a
 * float weight, or each scale of its second block: d, m, dmin; every result of that row). The
 * forward pass refuses non-finite logits; this is what gets them there. The int8 mode's
 * quantizer once made a NaN activation 0 in a block of finite scale, so a NaN weight vanished at
 * the next product and a model of NaN scales decoded token 0 forever. Token counts on both
 * sides of the tiles' widening thresholds; packed rows at T = 1. */
static void test_nonfinite_propagates(rng_state *r) {
    const int Ts[] = {1, 2, 5, 9, 17, 70}, R = 19, Tmax = 70;
    for (int t = 0; t < WTYPE_COUNT; t++) {
        const wtype_traits *tt = wtype_get((wtype)t);
        const int K = tt->block == 256 ? 512 : 256;
        const size_t ldw = wtype_row_bytes((wtype)t, K);
        float *x = malloc(sizeof(float) * Tmax * K), *y = malloc(sizeof(float) * Tmax * R);
        size_t xab = kern_act_bytes(K) * Tmax;
        if (kern_act8b_bytes(Tmax, K) > xab) xab = kern_act8b_bytes(Tmax, K);
        unsigned char *xa = aligned_alloc(64, xab);
        unsigned char *w = random_matrix(r, (wtype)t, R, K);
        for (int i = 0; i < Tmax * K; i++) x[i] = 2 * rng_unit(r) - 1;
        wmat m = {(wtype)t, w, R, K, NULL, NULL};
        unsigned char *pk = NULL;
        for (int int8 = 0; int8 < 3; int8++)
            for (int isa = 0; isa < KERN_ISA_COUNT; isa++) {
                if (!isa_on[isa] || (int8 == 1 && !kern_int8_supported((wtype)t)) ||
                    (int8 == 2 && !kern_int8b_supported((wtype)t)))
                    continue;
                int lost = 0, tried = 0;
                for (int ti = 0; ti < 6; ti++)
                    for (int inf = 0; inf < 2; inf++) {
                        const int T = Ts[ti], tb = T / 2;
                        float keep = x[(size_t)tb * K + 37];
                        x[(size_t)tb * K + 37] = inf ? INFINITY : NAN;
                        product((kern_isa)isa, int8, &m, x, T, xa, y);
                        x[(size_t)tb * K + 37] = keep;
                        lost += !nonfinite_where(y, T, R, tb, -1), tried++;
                        for (int sc = 0; sc < 2; sc++) {
                            if (sc > 0 && !tt->scale[sc].name) break;
                            unsigned char *at =
                                w + 5 * ldw +
                                (tt->block == 1 ? 7 * (size_t)tt->block_bytes
                                                : (size_t)tt->block_bytes + tt->scale[sc].at);
                            unsigned char saved[4];
                            memcpy(saved, at, 4);
                            poison(at, (wtype)t, inf);
                            /* also from the packed rows (int8 at T = 1) or the 16-row copy
                             * (int8b), when the type has them */
                            const int copies = int8 == 2 || (int8 == 1 && T == 1);
                            for (int packed = 0; packed < 1 + copies; packed++) {
                                if (packed && !(pk = int8 == 2 ? r16_copy(&m) : packed_copy(&m)))
                                    continue;
                                if (int8 == 2) m.r16 = pk; else m.packed = pk;
                                product((kern_isa)isa, int8, &m, x, T, xa, y);
                                lost += !nonfinite_where(y, T, R, -1, 5), tried++;
                                m.packed = NULL, m.r16 = NULL;
                                free(pk), pk = NULL;
                            }
                            memcpy(at, saved, 4);
                        }
                    }
                CHECK_MSG(lost == 0, "%s %s %s: %d of %d products lost a NaN or an infinity",
                          int8 == 2 ? "int8b" : int8 ? "int8" : "exact", kern_isa_name((kern_isa)isa), tt->name, lost,
                          tried);
            }
        free(x), free(y), free(xa), free(w);
    }
}

static void test_attend(rng_state *r) {
    for (int hs = 2; hs <= 80; hs += hs < 16 ? 2 : 16) {
        int n = 3 + (int)rng_below(r, 300), stride = hs * 3;
        float *k = malloc(sizeof(float) * (size_t)n * stride),
              *v = malloc(sizeof(float) * (size_t)n * stride);
        float qv[80], o1[80], o2[80], *sc = malloc(sizeof(float) * n);
        int *slots = malloc(sizeof(int) * n);
        for (int i = 0; i < n * stride; i++) k[i] = 4 * rng_unit(r) - 2, v[i] = 2 * rng_unit(r) - 1;
        for (int i = 0; i < hs; i++) qv[i] = 4 * rng_unit(r) - 2;
        for (int i = 0; i < n; i++) slots[i] = (int)rng_below(r, (uint32_t)n);
        for (int isa = 0; isa < KERN_ISA_COUNT; isa++) {
            if (!isa_on[isa]) continue;
            const char *in = kern_isa_name((kern_isa)isa);
            for (int use_slots = 0; use_slots < 2; use_slots++) {
                kern_attend_isa((kern_isa)isa, qv, hs, k, v, stride, use_slots ? slots : NULL, n,
                                sc, o1);
                kern_attend_ref(qv, hs, k, v, stride, use_slots ? slots : NULL, n, sc, o2);
                CHECK_MSG(memcmp(o1, o2, sizeof(float) * hs) == 0,
                          "%s kern_attend hs=%d n=%d differs", in, hs, n);
            }
            float s1 = kern_sum_isa((kern_isa)isa, k, n), s2 = kern_sum_ref(k, n);
            CHECK_MSG(memcmp(&s1, &s2, 4) == 0, "%s kern_sum n=%d", in, n);
            float d1 = kern_dot_isa((kern_isa)isa, k, v, n), d2 = kern_dot_ref(k, v, n);
            CHECK_MSG(memcmp(&d1, &d2, 4) == 0, "%s kern_dot n=%d", in, n);
        }
        kern_attend(qv, hs, k, v, stride, slots, n, sc, o1);
        kern_attend_ref(qv, hs, k, v, stride, slots, n, sc, o2);
        CHECK(memcmp(o1, o2, sizeof(float) * hs) == 0);
        float s1 = kern_sum(k, n), s2 = kern_sum_ref(k, n), d1 = kern_dot(k, v, n),
              d2 = kern_dot_ref(k, v, n);
        CHECK(memcmp(&s1, &s2, 4) == 0 && memcmp(&d1, &d2, 4) == 0);
        free(k), free(v), free(sc), free(slots);
    }
}

/* How many of nq queries' results (o, hs apart) differ in any bit from kern_attend_ref over the
 * same slots: the ns shared ones, then query t's tail tp[t] (n_tail[t] slots); k and v f32 rows
 * hs apart; slots, sc: room for ns + the longest tail; o_ref: hs floats. */
static int queries_off_ref(const float *q, int hs, int nq, const float *k, const float *v, int ns,
                           const int *const *tp, const int *n_tail, const float *o, int *slots,
                           float *sc, float *o_ref) {
    int bad = 0;
    for (int t = 0; t < nq; t++) {
        int n = 0;
        for (int s = 0; s < ns; s++) slots[n++] = s;
        for (int j = 0; j < n_tail[t]; j++) slots[n++] = tp[t][j];
        kern_attend_ref(q + t * hs, hs, k, v, hs, slots, n, sc, o_ref);
        bad += memcmp(o + t * hs, o_ref, sizeof(float) * hs) != 0;
    }
    return bad;
}

/* kern_attend_shared: queries sharing a head's keys (rows hs apart) equal kern_attend over their
 * own slot lists, on every ISA: no shared keys, few, many; tails of 0..5 keys; 1..9 queries. */
static void test_attend_shared(rng_state *r) {
    const int hss[] = {16, 20, 48, 64, 80}, shared[] = {0, 1, 3, 50, 301}; /* 20: part of 8 */
    for (int hi = 0; hi < 5; hi++)
        for (int si = 0; si < 5; si++) {
            int hs = hss[hi], ns = shared[si], nq = 1 + (int)rng_below(r, 9), cap = ns + 40;
            float *k = malloc(sizeof(float) * cap * hs), *v = malloc(sizeof(float) * cap * hs);
            float *q = malloc(sizeof(float) * nq * hs), *o1 = malloc(sizeof(float) * nq * hs);
            float *o2 = malloc(sizeof(float) * hs), *sc = malloc(sizeof(float) * nq * cap);
            float *sc2 = malloc(sizeof(float) * cap);
            int tails[9][6], n_tail[9], slots[400];
            const int *tp[9];
            for (int i = 0; i < cap * hs; i++)
                k[i] = 4 * rng_unit(r) - 2, v[i] = 2 * rng_unit(r) - 1;
            for (int i = 0; i < nq * hs; i++) q[i] = 4 * rng_unit(r) - 2;
            for (int t = 0; t < nq; t++) {
                n_tail[t] = (int)rng_below(r, 6) + (ns == 0);
                for (int j = 0; j < n_tail[t]; j++) tails[t][j] = ns + (int)rng_below(r, 40);
                tp[t] = tails[t];
            }
            for (int isa = 0; isa < KERN_ISA_COUNT; isa++) {
                if (!isa_on[isa]) continue;
                kern_attend_shared_isa((kern_isa)isa, q, hs, nq, hs, k, v, ns, tp, n_tail, sc, cap,
                                       o1, hs);
                const int bad =
                    queries_off_ref(q, hs, nq, k, v, ns, tp, n_tail, o1, slots, sc2, o2);
                CHECK_MSG(bad == 0,
                          "%s kern_attend_shared hs=%d shared=%d: %d of %d queries differ",
                          kern_isa_name((kern_isa)isa), hs, ns, bad, nq);
            }
            free(k), free(v), free(q), free(o1), free(o2), free(sc), free(sc2);
        }
}

/* KERN_SCRATCH's buffers start on a 64-byte line, on the stack (sizes that leave the stack
 * pointer at each 16-byte offset) and on the heap (past KERN_STACK_BYTES): an f16 cache's rows
 * widened into one are read back in 64-byte loads, which straddled two lines each at 16 bytes
 * past one. */
static int scratch_on_line(size_t n) {
    KERN_SCRATCH(buf, n);
    buf[n - 1] = 1.0f;
    int ok = ((uintptr_t)buf & 63) == 0 && buf[n - 1] == 1.0f;
    KERN_SCRATCH_END(buf);
    return ok;
}

static void test_scratch_lines(void) {
    const size_t sizes[] = {1, 5, 9, 13, 16 * 64, KERN_STACK_BYTES / sizeof(float) + 5};
    for (int i = 0; i < 6; i++)
        CHECK_MSG(scratch_on_line(sizes[i]), "KERN_SCRATCH of %zu floats is not on a 64-byte line",
                  sizes[i]);
}

/* A cache of n x hs random keys and values stored as type t (WTYPE_F32 or WTYPE_F16) in kst and
 * vst; kf and vf get what they hold widened to float (for f16: the halves the values round to). */
static void kv_cache(rng_state *r, wtype t, int n, int hs, void *kst, void *vst, float *kf,
                     float *vf) {
    for (int i = 0; i < n * hs; i++) {
        float k = 4 * rng_unit(r) - 2, v = 2 * rng_unit(r) - 1;
        if (t == WTYPE_F16) {
            uint16_t hk = wtype_f32_to_f16(k), hv = wtype_f32_to_f16(v);
            memcpy((char *)kst + 2 * i, &hk, 2), memcpy((char *)vst + 2 * i, &hv, 2);
            kf[i] = wtype_f16_to_f32(hk), vf[i] = wtype_f16_to_f32(hv);
        } else {
            memcpy((char *)kst + 4 * i, &k, 4), memcpy((char *)vst + 4 * i, &v, 4);
            kf[i] = k, vf[i] = v;
        }
    }
}

/* One kern_attend_kv case: a cache of cap slots of head size hs stored as kt (kst, vst; kf, vf
 * what it holds widened), nq random queries, and the buffers a call and the reference need. */
typedef struct {
    wtype kt;
    int hs, nq, cap;
    void *kst, *vst;
    float *kf, *vf, *q, *out, *out_ref, *sc, *sc_ref;
    int *slots;
} attend_case;

static attend_case attend_case_new(rng_state *r, wtype kt, int hs, int nq, int cap) {
    const size_t cells = (size_t)cap * hs;
    attend_case c = {kt, hs, nq, cap, malloc(4 * cells), malloc(4 * cells),
                     malloc(sizeof(float) * cells), malloc(sizeof(float) * cells),
                     malloc(sizeof(float) * nq * hs), malloc(sizeof(float) * nq * hs),
                     malloc(sizeof(float) * hs), malloc(sizeof(float) * nq * cap),
                     malloc(sizeof(float) * cap), malloc(sizeof(int) * cap)};
    kv_cache(r, kt, cap, hs, c.kst, c.vst, c.kf, c.vf);
    for (int i = 0; i < nq * hs; i++) c.q[i] = 4 * rng_unit(r) - 2;
    return c;
}

static void attend_case_free(attend_case *c) {
    free(c->kst), free(c->vst), free(c->kf), free(c->vf), free(c->q), free(c->out);
    free(c->out_ref), free(c->sc), free(c->sc_ref), free(c->slots);
}

/* Runs the case on isa (KERN_ISA_COUNT: the public kern_attend_kv) with ns shared slots and the
 * queries' tails; returns how many queries differ from kern_attend_ref over their slots. */
static int attend_case_off(attend_case *c, int isa, int ns, const int *const *tp,
                           const int *n_tail) {
    if (isa < KERN_ISA_COUNT)
        kern_attend_kv_isa((kern_isa)isa, c->kt, c->q, c->hs, c->nq, c->hs, c->kst, c->vst, ns, tp,
                           n_tail, c->sc, c->cap, c->out, c->hs);
    else
        kern_attend_kv(c->kt, c->q, c->hs, c->nq, c->hs, c->kst, c->vst, ns, tp, n_tail, c->sc,
                       c->cap, c->out, c->hs);
    return queries_off_ref(c->q, c->hs, c->nq, c->kf, c->vf, ns, tp, n_tail, c->out, c->slots,
                           c->sc_ref, c->out_ref);
}

/* kern_attend_kv: keys and values stored as f16 or f32 give, on every ISA and through the public
 * entry point, each query exactly kern_attend_ref over its own slots of the cache widened to
 * float (f16's order is f32's on the widened values); shared keys that end inside and at the
 * edge of the scores' blocks of 16 keys, caches long enough to cross several of the value sums'
 * blocks (kern_values_block: 256 rows of 16 f32 values, 32 of 128), tails of 0..5 keys, 1..9
 * queries. */
static void test_attend_kv(rng_state *r) {
    const int far0 = kern_far_prefetch_active();
    const wtype types[2] = {WTYPE_F32, WTYPE_F16};
    const int hss[] = {16, 20, 64, 80, 128}, shared[] = {0, 1, 15, 16, 17, 301, 1100};
    for (int ti = 0; ti < 2; ti++)
        for (int hi = 0; hi < 5; hi++)
            for (int si = 0; si < 7; si++) {
                const wtype kt = types[ti];
                int hs = hss[hi], ns = shared[si], nq = 1 + (int)rng_below(r, 9);
                attend_case c = attend_case_new(r, kt, hs, nq, ns + 40);
                int tails[9][6], n_tail[9];
                const int *tp[9];
                for (int t = 0; t < nq; t++) {
                    n_tail[t] = (int)rng_below(r, 6) + (ns == 0);
                    for (int j = 0; j < n_tail[t]; j++) tails[t][j] = ns + (int)rng_below(r, 40);
                    tp[t] = tails[t];
                }
                for (int isa = 0; isa <= KERN_ISA_COUNT; isa++) { /* the last: kern_attend_kv */
                    if (isa < KERN_ISA_COUNT && !isa_on[isa]) continue;
                    /* AVX-512's with its far prefetches into L2 and without */
                    for (int far = 0; far <= (isa == KERN_ISA_AVX512); far++) {
                        if (isa == KERN_ISA_AVX512) kern_far_prefetch_use(far);
                        const int bad = attend_case_off(&c, isa, ns, tp, n_tail);
                        CHECK_MSG(bad == 0,
                                  "%s%s kern_attend_kv %s hs=%d shared=%d: %d of %d queries differ",
                                  isa < KERN_ISA_COUNT ? kern_isa_name((kern_isa)isa) : "active",
                                  isa == KERN_ISA_AVX512 && far ? " far prefetch" : "",
                                  wtype_name(kt), hs, ns, bad, nq);
                    }
                    kern_far_prefetch_use(far0);
                }
                attend_case_free(&c);
            }
    CHECK(kern_attend_kv_supported(WTYPE_F32) && kern_attend_kv_supported(WTYPE_F16) &&
          !kern_attend_kv_supported(WTYPE_BF16) && !kern_attend_kv_supported(WTYPE_Q8_0));
}

/* kern_attend_kv with the tails of a pass of rows that extend one another (row t, of `group`
 * queries each, sees the pass's rows 0..t after the shared prefix; kern_attend_kv shares such
 * contiguous runs, cut into groups while the cache fits its bound), some then jumping to later
 * slots as a tree's rows do, and one query's tail not starting at the prefix at all: each query
 * exactly kern_attend_ref over its own slots, on every ISA, f32 and f16, a short prefix (groups
 * cut) and a long one (one group), 1 to 64 queries. */
static void test_attend_kv_chains(rng_state *r) {
    const wtype types[2] = {WTYPE_F32, WTYPE_F16};
    const int hss[3] = {20, 64, 128}, shared[3] = {0, 45, 5000}, groups[3] = {1, 3, 8};
    long point = 0;
    for (int ti = 0; ti < 2; ti++)
        for (int hi = 0; hi < 3; hi++)
            for (int si = 0; si < 3; si++)
                for (int gi = 0; gi < 3; gi++, point++) {
                    if (!test_keep(point, 3)) continue;
                    const wtype kt = types[ti];
                    const int hs = hss[hi], ns = shared[si], group = groups[gi];
                    const int rows = 1 + (int)rng_below(r, 64 / group), nq = rows * group;
                    attend_case c = attend_case_new(r, kt, hs, nq, ns + rows + 8);
                    int(*tails)[72] = malloc(sizeof(int[72]) * nq); /* at most 65 a row */
                    int n_tail[64];
                    const int *tp[64];
                    for (int t = 0; t < nq; t++) {
                        const int row = t / group, jump = rng_below(r, 4) == 0;
                        n_tail[t] = 0;
                        for (int j = 0; j <= row; j++) tails[t][n_tail[t]++] = ns + j;
                        if (jump) { /* a tree's row: part of the run, then later slots */
                            n_tail[t] = row / 2 + 1;
                            for (int j = 0; j <= row - row / 2; j++)
                                tails[t][n_tail[t]++] = ns + row + 1 + (int)rng_below(r, 7);
                        }
                        tp[t] = tails[t];
                    }
                    if (nq > 2) tails[nq / 2][0] = ns + rows + 7; /* a tail off the prefix */
                    for (int isa = 0; isa < KERN_ISA_COUNT; isa++) {
                        if (!isa_on[isa]) continue;
                        const int bad = attend_case_off(&c, isa, ns, tp, n_tail);
                        CHECK_MSG(bad == 0,
                                  "%s kern_attend_kv %s chains hs=%d shared=%d rows=%d group=%d: "
                                  "%d of %d differ",
                                  kern_isa_name((kern_isa)isa), wtype_name(kt), hs, ns, rows, group,
                                  bad, nq);
                    }
                    attend_case_free(&c);
                    free(tails);
                }
}

/* kern_attend_kv with the query counts of real models' kv heads (grouped-query attention: 2 to
 * 8 queries a kv head, even and odd) and of a few rows of them (9, 17), the head sizes 64 and
 * 128, f32 and f16, on every ISA: each query exactly kern_attend_ref over its own slots.
 * AVX-512 runs these shapes through their own paths: f16 keys scored key-stationary for 3 to 8
 * queries and laid out through memory for more at head size 64 (every block whole, and one of
 * 1-15 keys at the end), and the value sums two queries at a time. */
static void test_attend_kv_groups(rng_state *r) {
    const wtype types[2] = {WTYPE_F32, WTYPE_F16};
    const int hss[2] = {64, 128}, nqs[7] = {2, 3, 5, 7, 8, 9, 17}, shared[4] = {16, 17, 47, 300};
    long point = 0;
    for (int ti = 0; ti < 2; ti++)
        for (int hi = 0; hi < 2; hi++)
            for (int qi = 0; qi < 7; qi++)
                for (int si = 0; si < 4; si++, point++) {
                    if (!test_keep(point, 4)) continue;
                    const wtype kt = types[ti];
                    const int hs = hss[hi], nq = nqs[qi], ns = shared[si];
                    attend_case c = attend_case_new(r, kt, hs, nq, ns + 8);
                    int tails[17][3], n_tail[17];
                    const int *tp[17];
                    for (int t = 0; t < nq; t++) { /* as a pass of nq rows: row t sees t + 1 */
                        n_tail[t] = t % 3 + 1;
                        for (int j = 0; j < n_tail[t]; j++) tails[t][j] = ns + (t + j) % 8;
                        tp[t] = tails[t];
                    }
                    for (int isa = 0; isa < KERN_ISA_COUNT; isa++) {
                        if (!isa_on[isa]) continue;
                        const int bad = attend_case_off(&c, isa, ns, tp, n_tail);
                        CHECK_MSG(bad == 0,
                                  "%s kern_attend_kv %s hs=%d queries=%d shared=%d: %d differ",
                                  kern_isa_name((kern_isa)isa), wtype_name(kt), hs, nq, ns, bad);
                    }
                    attend_case_free(&c);
                }
}

/* A NaN or an infinity stored as a half in one key or one value (shared or in the tail) reaches
 * kern_attend_kv's result on every ISA as it does for f32: a key's, every output of the query; a
 * value's, its column. */
static void test_attend_kv_nonfinite(rng_state *r) {
    enum { HS = 48, N = 37 };
    const uint16_t bad[3] = {0x7e00, 0x7c00, 0xfc00}; /* NaN, +inf, -inf */
    uint16_t k[N * HS], v[N * HS];
    float kf[N * HS], vf[N * HS], q[HS], out[HS], sc[N];
    for (int isa = 0; isa < KERN_ISA_COUNT; isa++) {
        if (!isa_on[isa]) continue;
        int lost = 0, tried = 0;
        for (int where = 0; where < 2; where++) /* key, value */
            for (int b = 0; b < 3; b++)
                for (int slot = 0; slot < 2; slot++) { /* 20: shared; 33: in the tail */
                    kv_cache(r, WTYPE_F16, N, HS, k, v, kf, vf);
                    for (int i = 0; i < HS; i++) q[i] = 4 * rng_unit(r) - 2;
                    int at = (slot ? 33 : 20) * HS + 5;
                    (where ? v : k)[at] = bad[b];
                    int tail[7] = {30, 31, 32, 33, 34, 35, 36}, nt = 7;
                    const int *tp = tail;
                    kern_attend_kv_isa((kern_isa)isa, WTYPE_F16, q, HS, 1, HS, k, v, 30, &tp, &nt,
                                       sc, N, out, HS);
                    int ok = 1;
                    for (int i = 0; i < HS; i++)
                        ok &= (isfinite(out[i]) == 0) >= (where == 0 || i == 5);
                    lost += !ok, tried++;
                }
        CHECK_MSG(lost == 0, "%s f16 attention: %d of %d NaN or infinite halves lost",
                  kern_isa_name((kern_isa)isa), lost, tried);
    }
}

/* A NaN or an infinity in a query, in one key or in one value reaches attention's result on
 * every ISA, in kern_attend and kern_attend_shared (shared keys and tails): a score that is not
 * finite makes every output of its query NaN (a NaN score's weight was exp of the clamped
 * argument, a finite 1e-38, and a -inf score's too: the query's output looked like a number),
 * a value that is not finite its column. */
static void test_attend_nonfinite(rng_state *r) {
    const int hs = 48, n = 37;
    const float bad[3] = {NAN, INFINITY, -INFINITY};
    float k[37 * 48], v[37 * 48], q[48], out[2 * 48], sc[2 * 37];
    for (int isa = 0; isa < KERN_ISA_COUNT; isa++) {
        if (!isa_on[isa]) continue;
        int lost = 0, tried = 0;
        for (int where = 0; where < 3; where++) /* query, key 20, value 20 */
            for (int b = 0; b < 3; b++)
                for (int shared = 0; shared < 2; shared++) {
                    for (int i = 0; i < n * hs; i++)
                        k[i] = 4 * rng_unit(r) - 2, v[i] = 2 * rng_unit(r) - 1;
                    for (int i = 0; i < hs; i++) q[i] = 4 * rng_unit(r) - 2;
                    float *at = where == 0 ? q + 5 : where == 1 ? k + 20 * hs + 5 : v + 20 * hs + 5;
                    *at = bad[b];
                    if (shared) { /* keys 0..29 shared, 30..36 the query's tail */
                        int tail[7] = {30, 31, 32, 33, 34, 35, 36}, nt = 7;
                        const int *tp = tail;
                        /* the bad key among the shared ones, and (moved) in the tail */
                        kern_attend_shared_isa((kern_isa)isa, q, hs, 1, hs, k, v, 30, &tp, &nt, sc,
                                               n, out, hs);
                    } else {
                        kern_attend_isa((kern_isa)isa, q, hs, k, v, hs, NULL, n, sc, out);
                    }
                    int ok = 1;
                    for (int i = 0; i < hs; i++) {
                        /* a non-finite value reaches its column; a score, every column */
                        int want = where < 2 || i == 5;
                        ok &= (isfinite(out[i]) == 0) >= want;
                    }
                    lost += !ok, tried++;
                }
        /* a bad key in the tail */
        for (int b = 0; b < 3; b++) {
            for (int i = 0; i < n * hs; i++) k[i] = 4 * rng_unit(r) - 2, v[i] = 2 * rng_unit(r) - 1;
            for (int i = 0; i < hs; i++) q[i] = 4 * rng_unit(r) - 2;
            k[33 * hs + 9] = bad[b];
            int tail[3] = {36, 33, 31}, nt = 3;
            const int *tp = tail;
            kern_attend_shared_isa((kern_isa)isa, q, hs, 1, hs, k, v, 30, &tp, &nt, sc, n, out, hs);
            int ok = 1;
            for (int i = 0; i < hs; i++) ok &= isfinite(out[i]) == 0;
            lost += !ok, tried++;
        }
        CHECK_MSG(lost == 0, "%s attention: %d of %d NaN or infinite inputs lost",
                  kern_isa_name((kern_isa)isa), lost, tried);
    }
}

static void test_exp_and_halves(void) {
    double worst = 0;
    for (float x = -80.0f; x <= 0.0f; x += 0.001f) {
        double rel = fabs((double)kern_exp_ref(x) - exp((double)x)) / exp((double)x);
        worst = rel > worst ? rel : worst;
    }
    CHECK_MSG(worst < 4e-7, "kern_exp relative error %g", worst);

    /* f16 conversion round trips every half value */
    int bad = 0;
    for (uint32_t v = 0; v < 65536; v++) {
        if (((v >> 10) & 31) == 31 && (v & 1023)) continue; /* NaN payloads */
        if (wtype_f32_to_f16(wtype_f16_to_f32((uint16_t)v)) != v) bad++;
    }
    CHECK_MSG(bad == 0, "%d half values do not round trip", bad);
}

/* kern_expf_isa equals libm's expf bit for bit on every ISA under test: every 251st float bit
 * pattern (17 million values, every sign and exponent; DECBENCH_EXPF_ALL=1 compares all 2^32,
 * ~20 s an ISA), the edges of glibc's special cases, lengths with a tail. */
static void test_expf(void) {
    enum { N = 4096 };
    static float x[N], y[N];
    const char *all = getenv("DECBENCH_EXPF_ALL");
    const uint64_t step = all && strcmp(all, "1") == 0 ? 1 : 251;
    for (int isa = 0; isa < KERN_ISA_COUNT; isa++) {
        if (!isa_on[isa]) continue;
        uint64_t bad = 0, n = 0;
        for (uint64_t b0 = 0; b0 < (1ull << 32); b0 += step * N) {
            int m = 0;
            for (; m < N && b0 + step * (uint64_t)m < (1ull << 32); m++) {
                uint32_t b = (uint32_t)(b0 + step * (uint64_t)m);
                memcpy(&x[m], &b, 4);
            }
            kern_expf_isa((kern_isa)isa, x, y, m);
            for (int i = 0; i < m; i++) {
                float ref = expf(x[i]);
                bad += memcmp(&ref, &y[i], 4) != 0;
            }
            n += (uint64_t)m;
        }
        /* glibc's special-case edges, NaN, infinities, zeros, subnormals, at every lane */
        const float edge[] = {88.0f, -88.0f, nextafterf(88.0f, 0), nextafterf(-88.0f, 0), 88.72283f,
                              88.72284f, -103.97208f, -103.97209f, -87.33655f, -87.33656f,
                              INFINITY, -INFINITY, NAN, 0.0f, -0.0f, 1e-45f, -1e-45f, 1e-38f,
                              -20.5f, 20.5f, 1.0f, -1.0f, 0.5f, 3.4e38f, -3.4e38f};
        const int ne = (int)(sizeof edge / sizeof edge[0]);
        for (int len = 1; len <= 40; len++)
            for (int sh = 0; sh < ne; sh++) {
                for (int i = 0; i < len; i++) x[i] = edge[(i + sh) % ne];
                kern_expf_isa((kern_isa)isa, x, y, len);
                for (int i = 0; i < len; i++) {
                    float ref = expf(x[i]);
                    bad += memcmp(&ref, &y[i], 4) != 0 && !(isnan(ref) && isnan(y[i]));
                    n++;
                }
            }
        CHECK_MSG(bad == 0, "%s: kern_expf_isa differs from libm's expf on %llu of %llu values",
                  kern_isa_name((kern_isa)isa), (unsigned long long)bad, (unsigned long long)n);
    }
}

/* The scalar loop of kern_silu_mul, with libm's expf. */
static float silu_mul_ref(float a, float b) { return a * (1.0f / (1.0f + expf(-a))) * b; }

/* kern_silu_mul equals the scalar loop bit for bit on every ISA under test (NaNs: both NaN):
 * every 65537th float bit pattern as the gate (every sign and exponent, with glibc's special
 * cases of expf among them), random multipliers, every length to 40 (the tails) over the edge
 * values in every lane, and the public entry point (the expf comparison, then the active ISA). */
static void test_silu_mul(rng_state *r) {
    enum { N = 4096 };
    static float a[N], b[N], want[N];
    const float edge[] = {88.0f, -88.0f, nextafterf(88.0f, 0), nextafterf(-88.0f, 0), 88.72284f,
                          -88.72284f, 103.97209f, -103.97209f, 87.33656f, INFINITY, -INFINITY,
                          NAN, -NAN, 0.0f, -0.0f, 1e-45f, -1e-45f, 1e-38f, -20.5f, 20.5f, 1.0f,
                          -1.0f, 3.4e38f, -3.4e38f};
    const int ne = (int)(sizeof edge / sizeof edge[0]);
    for (int isa = 0; isa < KERN_ISA_COUNT; isa++) {
        if (!isa_on[isa]) continue;
        long bad = 0, n = 0;
        for (uint64_t b0 = 0; b0 < (1ull << 32); b0 += 65537ull * N) {
            int m = 0;
            for (; m < N && b0 + 65537ull * (uint64_t)m < (1ull << 32); m++) {
                uint32_t bits = (uint32_t)(b0 + 65537ull * (uint64_t)m);
                memcpy(&a[m], &bits, 4);
                b[m] = (float)rng_unit(r) * 8.0f - 4.0f;
                want[m] = silu_mul_ref(a[m], b[m]);
            }
            kern_silu_mul_isa((kern_isa)isa, a, b, m);
            for (int i = 0; i < m; i++, n++)
                bad += memcmp(&want[i], &a[i], 4) != 0 && !(isnan(want[i]) && isnan(a[i]));
        }
        for (int len = 1; len <= 40; len++)
            for (int sh = 0; sh < ne; sh++) {
                for (int i = 0; i < len; i++) {
                    a[i] = edge[(i + sh) % ne], b[i] = i % 3 ? 1.5f : -0.75f;
                    want[i] = silu_mul_ref(a[i], b[i]);
                }
                kern_silu_mul_isa((kern_isa)isa, a, b, len);
                for (int i = 0; i < len; i++, n++)
                    bad += memcmp(&want[i], &a[i], 4) != 0 && !(isnan(want[i]) && isnan(a[i]));
            }
        CHECK_MSG(bad == 0, "%s: kern_silu_mul differs from the scalar loop on %ld of %ld values",
                  kern_isa_name((kern_isa)isa), bad, n);
    }
    for (int i = 0; i < N; i++) {
        a[i] = -30.0f + 60.0f * (float)i / N, b[i] = 0.25f + (float)(i % 7);
        want[i] = silu_mul_ref(a[i], b[i]);
    }
    kern_silu_mul(a, b, N);
    CHECK_MSG(memcmp(a, want, sizeof a) == 0, "kern_silu_mul (%s) differs from the scalar loop",
              kern_simd_name());
}

/* kern_f16_from_f32 equals wtype_f32_to_f16 on every ISA under test: every 251st float bit
 * pattern (every sign and exponent: overflow, f16 subnormals, NaNs with payloads) and the
 * rounding ties of each f16 exponent, at every lane and with tails; kern_f16_to_f32 equals
 * wtype_f16_to_f32 on all 65536 halves (a NaN: any NaN), in the same lanes. */
static void test_f16_conversions(void) {
    enum { N = 4096 };
    static float x[N], back[N];
    static uint16_t h[N], want[N];
    for (int isa = 0; isa < KERN_ISA_COUNT; isa++) {
        if (!isa_on[isa]) continue;
        uint64_t bad = 0, n = 0;
        for (uint64_t b0 = 0; b0 < (1ull << 32) + 40ull * 4096 * N; b0 += 251ull * N) {
            int m = 0;
            for (; m < N; m++) {
                uint64_t k = b0 / (251ull * N) * N + (uint64_t)m;
                uint32_t bits;
                if (b0 < (1ull << 32)) { /* the stride's patterns */
                    if (b0 + 251ull * (uint64_t)m >= (1ull << 32)) break;
                    bits = (uint32_t)(b0 + 251ull * (uint64_t)m);
                } else { /* ties: a float halfway between two halves, either sign */
                    uint32_t e = 102 + (uint32_t)(k % 40), man = (uint32_t)(k * 2654435761u);
                    bits = (uint32_t)(k & 1) << 31 | e << 23 | (man & 0x7fe000u) | 0x1000u;
                }
                memcpy(&x[m], &bits, 4);
                want[m] = wtype_f32_to_f16(x[m]);
            }
            const int len = m - (int)(b0 / (251ull * N) % 17); /* a tail of 0..16 */
            kern_f16_from_f32_isa((kern_isa)isa, x, h, len > 0 ? len : m);
            for (int i = 0; i < (len > 0 ? len : m); i++, n++) bad += h[i] != want[i];
        }
        int bad_back = 0;
        for (uint32_t v0 = 0; v0 < 65536; v0 += N) {
            for (int i = 0; i < N; i++) h[i] = (uint16_t)(v0 + (uint32_t)i);
            kern_f16_to_f32_isa((kern_isa)isa, h, back, N - 3);
            for (int i = 0; i < N - 3; i++) {
                const float ref = wtype_f16_to_f32(h[i]);
                bad_back += memcmp(&ref, &back[i], 4) != 0 && !(isnan(ref) && isnan(back[i]));
            }
        }
        CHECK_MSG(bad == 0 && bad_back == 0,
                  "%s: f16 conversions differ from wtype's: %llu of %llu floats, %d halves",
                  kern_isa_name((kern_isa)isa), (unsigned long long)bad, (unsigned long long)n,
                  bad_back);
    }
}

static void test_fuzz_corpus(rng_state *r) {
    static uint8_t buf[512];
    int compared = 0;
    for (int i = 0; i < 3000; i++) {
        size_t n = 5 + rng_below(r, sizeof buf - 5);
        for (size_t k = 0; k < n; k++) buf[k] = (uint8_t)rng_u64(r);
        buf[3] = i % 300 == 7 ? 0x3f : 0; /* now and then a streaming matrix */
        compared += fuzz_wtype_one(buf, n);
    }
    fprintf(stderr, "%d random block matrices x instruction sets equal the reference\n", compared);
}

int main(int argc, char **argv) {
    if (argc > 1) { /* one instruction set only, for the public entry points too */
        int found = 0;
        for (int i = 0; i < KERN_ISA_COUNT; i++)
            if (strcmp(argv[1], kern_isa_name((kern_isa)i)) == 0) {
                found = 1;
                if (!kern_isa_supported((kern_isa)i)) {
                    fprintf(stderr, "test_kernels: this CPU cannot run %s; nothing to test\n",
                            argv[1]);
                    return 0;
                }
                isa_on[i] = 1;
                CHECK(kern_isa_use((kern_isa)i) == 0);
            }
        if (!found) {
            fprintf(stderr, "usage: test_kernels [scalar|avx2|avx512]\n");
            return 2;
        }
    } else {
        for (int i = 0; i < KERN_ISA_COUNT; i++) isa_on[i] = kern_isa_supported((kern_isa)i);
    }
    fprintf(stderr, "instruction sets under test:");
    for (int i = 0; i < KERN_ISA_COUNT; i++)
        if (isa_on[i]) fprintf(stderr, " %s", kern_isa_name((kern_isa)i));
    fprintf(stderr, "; kern_matmul uses %s; AVX-VNNI %s\n", kern_simd_name(),
            kern_avxvnni_supported() ? "checked with and without" : "not on this CPU");
    rng_state r;
    rng_seed(&r, 7);
    test_table(&r);
    test_matmul_small(&r);
    test_matmul_streaming(&r);
    test_matmul_long_rows(&r);
    test_matmul_int8_long_rows(&r);
    test_int8_decoders(&r);
    test_int8_quantize(&r);
    test_int8_matmul(&r);
    test_int8b_quantize(&r);
    test_int8b_matmul(&r);
    test_peak();

    test_nonfinite_propagates(&r);
    test_attend(&r);
    test_attend_shared(&r);
    test_attend_nonfinite(&r);
    test_attend_kv(&r);
    test_attend_kv_groups(&r);
    test_attend_kv_chains(&r);
    test_attend_kv_nonfinite(&r);
    test_scratch_lines();
    test_exp_and_halves();
    test_expf();
    test_silu_mul(&r);
    test_f16_conversions();
    test_fuzz_corpus(&r);
    char name[64];
    snprintf(name, sizeof name, "test_kernels%s%s", argc > 1 ? "_" : "", argc > 1 ? argv[1] : "");
    return test_finish(name);
}
