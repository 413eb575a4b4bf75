/* kernels_int8.c: the int8 mode (kernels.h, "the int8 mode"): the quantizer of activation
 * rows, the scalar reference of the integer dot products, and the dispatch to the tiles of each
 * instruction set (kernels_avx512_vnni.c, kernels_avx2_int8.c) through the weight-type table. */
#include <math.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "model/kernels/kernels.h"
#include "model/kernels/kernels_isa.h"

int kern_int8_supported(wtype t) {
    return (unsigned)t < WTYPE_COUNT && kern_traits_get(t)->int8.to_int8 != NULL;
}

size_t kern_act_bytes(int K) {
    size_t n = sizeof(kern_a8_group) * (size_t)kern_a8_groups(K) +
               sizeof(float) * 4 * (size_t)kern_a8_groups(K); /* ds and dd */
    return (n + 63) / 64 * 64;
}

/* ---- quantizing activations -------------------------------------------------------------- */

/* v rounded to the nearest integer, ties to even, limited to +-127; NaN gives 0 (its block's d
 * is NaN then: quantize_row). Adding and
 * subtracting 1.5 * 2^23 rounds a float of magnitude < 2^22 to an integer in the current
 * rounding mode (to nearest even), the same bits vcvtps2dq would give. */
static int round_q8(float v) {
    if (!(v == v)) return 0;
    if (v > 127.0f) return 127;
    if (v < -127.0f) return -127;
    float r = (v + 12582912.0f) - 12582912.0f;
    return (int)r;
}

void kern_a8_block_ref(const float *xb, int8_t q[32], float *d, int s4[8]) {
    uint32_t abits = 0;
    for (int i = 0; i < 32; i++) {
        uint32_t a;
        memcpy(&a, xb + i, 4);
        a &= 0x7fffffffu;
        abits = a > abits ? a : abits; /* a NaN always wins (quantize_row says why) */
    }
    float amax;
    memcpy(&amax, &abits, 4);
    float dd = amax / 127.0f, id = dd != 0.0f ? 1.0f / dd : 0.0f;
    for (int m = 0; m < 8; m++) {
        s4[m] = 0;
        for (int i = 0; i < 4; i++) {
            int v = round_q8(xb[4 * m + i] * id);
            q[4 * m + i] = (int8_t)v;
            s4[m] += v;
        }
    }
    *d = dd;
}

/* One row (zeroed by the caller): blocks of 32 as llama.cpp's quantize_row_q8_0 forms them
 * (d = amax / 127, q = x / d rounded; ggml rounds ties away from zero, this to even), laid out
 * as kern_a8_group.
 *
 * amax is the largest |x| taken as the bits of |x| (sign cleared) compared as integers: for
 * numbers that order is the floats' own, so a finite block gets the same d as a float maximum
 * gives it, but a NaN's bits are above every number's, so a block holding one gets d = NaN
 * (and an infinity d = inf), which every product of the block then carries into its result.
 * With a float maximum, where a NaN compares false, a NaN activation became q = 0 and its
 * block a finite d: the NaN of a broken weight vanished at the next product and the logits
 * looked like numbers (all 0 after the classifier's product: token 0 forever). */
static void quantize_row(const float *x, int K, void *out) {
    kern_a8_group *g = out;
    int ng = kern_a8_groups(K);
    float *ds = (float *)(g + ng), *dd = ds + 2 * ng;
    for (int b = 0; b < K / 32; b++) {
        kern_a8_group *gr = &g[b / 2];
        int half = b % 2, sum = 0, s4[8];
        float d;
        kern_a8_block_ref(x + 32 * b, gr->q + 32 * half, &d, s4);
        for (int m = 0; m < 8; m++) {
            gr->c[8 * half + m] = -128 * s4[m];
            gr->d[8 * half + m] = d;
            sum += s4[m];
        }
        ds[b] = d * (float)sum;
        dd[b] = d;
    }
}

void kern_act_quantize_isa(kern_isa isa, const float *x, int ldx, int T, int K, void *xa,
                           size_t lda) {
    void (*row)(const float *, int, void *) = quantize_row;
#if KERN_X86
    if (isa >= KERN_ISA_AVX2) row = kern_avx2_act_quantize_row; /* AVX-512 CPUs have AVX2 */
#else
    (void)isa;
#endif
    for (int t = 0; t < T; t++) { /* what a row does not write (past K) is 0 */
        unsigned char *out = (unsigned char *)xa + (size_t)t * lda;
        memset(out, 0, kern_act_bytes(K));
        row(x + (size_t)t * ldx, K, out);
    }
}

void kern_act_quantize(const float *x, int ldx, int T, int K, void *xa, size_t lda) {
    kern_act_quantize_isa(kern_isa_active(), x, ldx, T, K, xa, lda);
}

/* ---- the scalar reference ------------------------------------------------------------------ */

static float fold8(const float a[8]) {
    float s4[4], s2[2];
    for (int j = 0; j < 4; j++) s4[j] = a[j] + a[j + 4];
    for (int j = 0; j < 2; j++) s2[j] = s4[j] + s4[j + 2];
    return s2[0] + s2[1];
}

static float fold16(const float a[16]) {
    float s8[8];
    for (int j = 0; j < 8; j++) s8[j] = a[j] + a[j + 8];
    return fold8(s8);
}

/* One row (decoded) against one activation row, in the order kernels.h defines. */
static float dot_int8_ref(const int8_t *w, const float *scale4, const float *min32, int K,
                          const void *xa) {
    const kern_a8_group *g = xa;
    const float *ds = kern_a8_ds(xa, K);
    int nb = K / 32;
    float acc[16] = {0};
    for (int b = 0; b < nb; b++) {
        const kern_a8_group *gr = &g[b / 2];
        int half = b % 2;
        for (int m = 0; m < 8; m++) {
            int32_t p = 0;
            for (int i = 0; i < 4; i++)
                p += (int32_t)w[32 * b + 4 * m + i] * gr->q[32 * half + 4 * m + i];
            float s = scale4[8 * b + m] * gr->d[8 * half + m];
            acc[8 * half + m] = fmaf(s, (float)p, acc[8 * half + m]);
        }
    }
    if (nb % 2)
        for (int m = 0; m < 8; m++) acc[8 + m] = fmaf(0.0f, 0.0f, acc[8 + m]);
    float y = fold16(acc);
    if (min32) {
        float accm[8] = {0};
        for (int b = 0; b < nb; b++) accm[b % 8] = fmaf(min32[b], ds[b], accm[b % 8]);
        y -= fold8(accm);
    }
    return y;
}

void kern_matmul_int8_ref(const wmat *w, int r0, int r1, const void *xa, size_t lda, int T,
                          float *y, int ldy) {
    const wtype_int8 *q = &kern_traits_get(w->type)->int8;
    const int K = w->cols;
    size_t ldw = wtype_row_bytes(w->type, K);
    /* one buffer: K / 4 scales, K / 32 + 1 mins, then K int8 weights (in floats, rounded up) */
    KERN_SCRATCH(scale4, (size_t)K / 4 + K / 32 + 1 + ((size_t)K + 3) / 4);
    float *min32 = scale4 + K / 4;
    int8_t *wi = (int8_t *)(min32 + K / 32 + 1);
    for (int r = r0; r < r1; r++) {
        q->to_int8((const unsigned char *)w->data + (size_t)r * ldw, wi, scale4, min32, K);
        for (int t = 0; t < T; t++)
            y[(size_t)t * ldy + (r - r0)] =
                dot_int8_ref(wi, scale4, q->has_min ? min32 : NULL, K,
                             (const unsigned char *)xa + (size_t)t * lda);
    }
    KERN_SCRATCH_END(scale4);
}

/* ---- dispatch ----------------------------------------------------------------------------- */

/* The tile that runs for isa: its own, else the next lower ISA's (the AVX-512 one only with
 * VNNI); NULL: the scalar reference. */
static wtype_matmul_int8_fn int8_tile(const wtype_int8 *q, kern_isa isa) {
    for (int i = isa; i > KERN_ISA_SCALAR; i--) {
        if (i == KERN_ISA_AVX512 && !kern_cpu_has(KERN_CPU_AVX512_VNNI)) continue;
        if (q->isa[i]) return q->isa[i];
    }
    return NULL;
}

size_t kern_int8_packed_size(const wmat *w) {
    if (!kern_int8_supported(w->type)) return 0;
    const wtype_int8 *q = &kern_traits_get(w->type)->int8;
    if (!q->pack || !q->packed || w->rows < q->pack_rows || w->cols > KERN_PACKED_MAX_K) return 0;
    return (size_t)(w->rows / q->pack_rows) * q->pack_rows * wtype_row_bytes(w->type, w->cols);
}

size_t kern_int8_packed_bytes(const wmat *w) {
    size_t n = kern_int8_packed_size(w);
    const wtype_int8 *q = &kern_traits_get(w->type)->int8;
    return n && int8_tile(q, kern_isa_active()) == q->isa[q->packed_isa] ? n : 0;
}

void kern_int8_pack(const wmat *w, unsigned char *dst, int part, int parts) {
    const wtype_int8 *q = &kern_traits_get(w->type)->int8;
    size_t ldw = wtype_row_bytes(w->type, w->cols);
    const int groups = w->rows / q->pack_rows;
    for (int g = (int)((long long)groups * part / parts);
         g < (int)((long long)groups * (part + 1) / parts); g++) {
        size_t at = (size_t)g * q->pack_rows * ldw;
        q->pack((const unsigned char *)w->data + at, ldw, w->cols, dst + at);
    }
}

void kern_matmul_int8_isa(kern_isa isa, const wmat *w, int r0, int r1, const void *xa, size_t lda,
                          int T, float *y, int ldy) {
    const wtype_int8 *q = &kern_traits_get(w->type)->int8;
    wtype_matmul_int8_fn f = int8_tile(q, isa);
    if (!f) {
        kern_matmul_int8_ref(w, r0, r1, xa, lda, T, y, ldy);
        return;
    }
    const int K = w->cols;
    size_t ldw = wtype_row_bytes(w->type, K);
    const unsigned char *data = w->data;
    int streams = kern_streams((size_t)w->rows * ldw);
    /* One token and a packed copy this tile's ISA reads: the whole groups of G rows in
     * [r0, r1) from it, the rows around them from the matrix. */
    const int G = q->pack_rows > 0 ? q->pack_rows : 1, g0 = (r0 + G - 1) / G, g1 = r1 / G;
    if (T == 1 && w->packed && q->packed && f == q->isa[q->packed_isa] && g0 < g1) {
        if (r0 < G * g0)
            f(data + (size_t)r0 * ldw, ldw, G * g0 - r0, K, xa, lda, 1, y, (size_t)ldy, streams);
        q->packed(w->packed + (size_t)g0 * G * ldw, ldw, g1 - g0, K, xa, y + (G * g0 - r0),
                  streams);
        if (G * g1 < r1)
            f(data + (size_t)g1 * G * ldw, ldw, r1 - G * g1, K, xa, lda, 1, y + (G * g1 - r0),
              (size_t)ldy, streams);
        return;
    }
    f(data + (size_t)r0 * ldw, ldw, r1 - r0, K, xa, lda, T, y, (size_t)ldy, streams);
}

void kern_matmul_int8(const wmat *w, int r0, int r1, const void *xa, size_t lda, int T, float *y,
                      int ldy) {
    kern_matmul_int8_isa(kern_isa_active(), w, r0, r1, xa, lda, T, y, ldy);
}
