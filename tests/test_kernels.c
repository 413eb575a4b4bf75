/* test_kernels.c: the SIMD kernels equal their scalar references bit for bit: matrix
 * products for every weight type, odd K (tails) and every tile edge; the attention kernel;
 * the canonical sum; exp accuracy; half-precision round trips. CMake builds this file three
 * times: for this CPU (AVX-512 here), with AVX-512 disabled (AVX2 path) and with no SIMD at
 * all (scalar path), so every code path is held to the same reference, hence to each other. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/kernels.h"
#include "tests/testutil.h"
#include "util/rng.h"

static void test_kernels(void) {
    rng_state r;
    rng_seed(&r, 7);
    int Ks[] = {1, 7, 16, 17, 31, 32, 64, 96, 172, 288};
    for (size_t ki = 0; ki < sizeof Ks / sizeof Ks[0]; ki++) {
        int K = Ks[ki], R = 11, T = 9;
        float *w = malloc(sizeof(float) * R * K), *x = malloc(sizeof(float) * T * K);
        float *y1 = malloc(sizeof(float) * T * R), *y2 = malloc(sizeof(float) * T * R);
        for (int i = 0; i < R * K; i++) w[i] = 2 * rng_unit(&r) - 1;
        for (int i = 0; i < T * K; i++) x[i] = 2 * rng_unit(&r) - 1;
        uint16_t *h = malloc(2 * R * K), *b = malloc(2 * R * K);
        for (int i = 0; i < R * K; i++) h[i] = kern_f32_to_f16(w[i]), b[i] = kern_f32_to_bf16(w[i]);
        int Kq = (K + 31) / 32 * 32;
        unsigned char *q = calloc((size_t)R * Kq / 32, 34);
        for (int i = 0; i < R * Kq / 32; i++) {
            uint16_t d = kern_f32_to_f16(0.01f + rng_unit(&r) / 64);
            memcpy(q + 34 * i, &d, 2);
            for (int j = 0; j < 32; j++) q[34 * i + 2 + j] = (unsigned char)(rng_u64(&r) & 0xff);
        }
        float *xq = calloc((size_t)T * Kq, sizeof(float));
        for (int t = 0; t < T; t++) memcpy(xq + t * Kq, x + t * K, sizeof(float) * K);
        wmat mats[] = {{WTYPE_F32, w, R, K}, {WTYPE_F16, h, R, K}, {WTYPE_BF16, b, R, K},
                       {WTYPE_Q8_0, q, R, Kq}};
        for (int m = 0; m < 4; m++) {
            const float *xx = m == 3 ? xq : x;
            int ld = mats[m].cols;
            for (int t = 1; t <= T; t++)
                for (int r0 = 0; r0 < 3; r0++) {
                    kern_matmul(&mats[m], r0, R, xx, ld, t, y1, R);
                    kern_matmul_ref(&mats[m], r0, R, xx, ld, t, y2, R);
                    int same = 1;
                    for (int tt = 0; tt < t; tt++)
                        same &= memcmp(y1 + tt * R, y2 + tt * R, sizeof(float) * (R - r0)) == 0;
                    CHECK_MSG(same, "kernel %s K=%d T=%d r0=%d differs from the reference",
                              wtype_name(mats[m].type), mats[m].cols, t, r0);
                }
        }
        /* the canonical dot equals the reference too, and matmul row 0 x token 0 equals dot */
        float d1 = kern_dot(w, x, K), d2 = kern_dot_ref(w, x, K);
        CHECK(memcmp(&d1, &d2, 4) == 0);
        free(w), free(x), free(y1), free(y2), free(h), free(b), free(q), free(xq);
    }
    /* a matrix too big for the cache (> 512 KB in every type) takes the streaming 2-row tile
     * at T = 1 and is prefetched on its first read at every T: same results */
    {
        int R = 501, K = 1088; /* whole q8_0 blocks (579 KB in q8_0); not a multiple of 16 rows */
        float *w = malloc(sizeof(float) * R * K), *x = malloc(sizeof(float) * 6 * K);
        float *y1 = malloc(sizeof(float) * 6 * R), *y2 = malloc(sizeof(float) * 6 * R);
        for (int i = 0; i < R * K; i++) w[i] = 2 * rng_unit(&r) - 1;
        for (int i = 0; i < 6 * K; i++) x[i] = 2 * rng_unit(&r) - 1;
        uint16_t *h = malloc(2 * (size_t)R * K), *b = malloc(2 * (size_t)R * K);
        for (int i = 0; i < R * K; i++) h[i] = kern_f32_to_f16(w[i]), b[i] = kern_f32_to_bf16(w[i]);
        unsigned char *q = malloc((size_t)R * K / 32 * 34);
        for (int i = 0; i < R * K / 32; i++) {
            uint16_t d = kern_f32_to_f16(0.01f + rng_unit(&r) / 64);
            memcpy(q + 34 * i, &d, 2);
            for (int j = 0; j < 32; j++) q[34 * i + 2 + j] = (unsigned char)(rng_u64(&r) & 0xff);
        }
        wmat mats[] = {{WTYPE_F32, w, R, K}, {WTYPE_F16, h, R, K}, {WTYPE_BF16, b, R, K},
                       {WTYPE_Q8_0, q, R, K}};
        for (int m = 0; m < 4; m++)
            for (int t = 1; t <= 6; t++) {
                kern_matmul(&mats[m], 0, R, x, K, t, y1, R);
                kern_matmul_ref(&mats[m], 0, R, x, K, t, y2, R);
                CHECK_MSG(memcmp(y1, y2, sizeof(float) * t * R) == 0, "large %s matrix, T=%d differs",
                          wtype_name(mats[m].type), t);
                /* in two shares of rows, as the thread pool calls it (each share fits in the
                 * cache, the matrix does not) */
                kern_matmul(&mats[m], 0, 37, x, K, t, y1, R);
                kern_matmul(&mats[m], 37, R, x, K, t, y1 + 37, R);
                CHECK_MSG(memcmp(y1, y2, sizeof(float) * t * R) == 0, "large %s matrix in shares, T=%d differs",
                          wtype_name(mats[m].type), t);
            }
        free(w), free(x), free(y1), free(y2), free(h), free(b), free(q);
    }

    /* attention kernel equals its scalar reference; exp is accurate */
    for (int hs = 2; hs <= 80; hs += hs < 16 ? 2 : 16) {
        int n = 3 + (int)rng_below(&r, 300), stride = hs * 3;
        float *k = malloc(sizeof(float) * (size_t)n * stride), *v = malloc(sizeof(float) * (size_t)n * stride);
        float qv[80], o1[80], o2[80], *sc = malloc(sizeof(float) * n);
        int *slots = malloc(sizeof(int) * n);
        for (int i = 0; i < n * stride; i++) k[i] = 4 * rng_unit(&r) - 2, v[i] = 2 * rng_unit(&r) - 1;
        for (int i = 0; i < hs; i++) qv[i] = 4 * rng_unit(&r) - 2;
        for (int i = 0; i < n; i++) slots[i] = (int)rng_below(&r, (uint32_t)n);
        for (int use_slots = 0; use_slots < 2; use_slots++) {
            kern_attend(qv, hs, k, v, stride, use_slots ? slots : NULL, n, sc, o1);
            kern_attend_ref(qv, hs, k, v, stride, use_slots ? slots : NULL, n, sc, o2);
            CHECK_MSG(memcmp(o1, o2, sizeof(float) * hs) == 0, "kern_attend hs=%d n=%d differs", hs, n);
        }
        float s1 = kern_sum(k, n), s2 = kern_sum_ref(k, n);
        CHECK(memcmp(&s1, &s2, 4) == 0);
        free(k), free(v), free(sc), free(slots);
    }
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
        if (kern_f32_to_f16(kern_f16_to_f32((uint16_t)v)) != v) bad++;
    }
    CHECK_MSG(bad == 0, "%d half values do not round trip", bad);
}

int main(void) {
    fprintf(stderr, "SIMD path: %s\n", kern_simd_name());
    test_kernels();
    return test_finish("test_kernels");
}
