/* wtype_blocks.c: the block types' exact dequantization (the scalar reference of every kernel)
 * and the quantizers `decbench convert` writes with.
 *
 * Layouts are ggml's (ggml-common.h), little-endian, byte offsets in each comment. Every
 * dequantizer forms each weight with exactly the float32 operations of ggml's
 * dequantize_row_* for that type, in its order (this file is compiled with -ffp-contract=off, so
 * `a * b - c` is a rounded product then a rounded difference, as ggml's C is): a scale times a
 * small integer is always exact in float (at most 11 + 8 + 5 significant bits), so each weight
 * is rounded at most once, by the final addition or subtraction of a min. The SIMD tiles
 * (kernels_avx512.c) rely on that: they may form the same exact products in another order, or
 * fuse the product into the subtraction (fmsub of an exact product rounds once, like this code).
 * tests/test_wtype.c checks every tensor of llama.cpp's own quantized files against the SHA-256
 * of llama.cpp's dequantization. */
#include "model/weights/wtype_blocks.h"

#include <math.h>
#include <string.h>

#include "model/weights/wtype.h"

static float half(const unsigned char *p) {
    uint16_t h;
    memcpy(&h, p, 2);
    return wtype_f16_to_f32(h);
}

static uint16_t to_half(float f) {
    return wtype_f32_to_f16(f);
}

/* ---- 32-value blocks ------------------------------------------------------------------- */

/* q4_0 {d @0, qs[16] @2}: value j = ((qs[j] & 15) - 8) * d, value j+16 = ((qs[j] >> 4) - 8) * d */
void wtype_q4_0_to_float(const void *src, float *y, int n) {
    const unsigned char *b = src;
    for (int i = 0; i < n / 32; i++, b += 18, y += 32) {
        float d = half(b);
        for (int j = 0; j < 16; j++) {
            y[j] = (float)((b[2 + j] & 15) - 8) * d;
            y[j + 16] = (float)((b[2 + j] >> 4) - 8) * d;
        }
    }
}

/* q4_1 {d @0, m @2, qs[16] @4}: value = q * d + m */
void wtype_q4_1_to_float(const void *src, float *y, int n) {
    const unsigned char *b = src;
    for (int i = 0; i < n / 32; i++, b += 20, y += 32) {
        float d = half(b), m = half(b + 2);
        for (int j = 0; j < 16; j++) {
            y[j] = (float)(b[4 + j] & 15) * d + m;
            y[j + 16] = (float)(b[4 + j] >> 4) * d + m;
        }
    }
}

/* q5_0 {d @0, qh u32 @2, qs[16] @6}: the 5th bit of value v is bit v of qh;
 * value = (q5 - 16) * d */
void wtype_q5_0_to_float(const void *src, float *y, int n) {
    const unsigned char *b = src;
    for (int i = 0; i < n / 32; i++, b += 22, y += 32) {
        float d = half(b);
        uint32_t qh;
        memcpy(&qh, b + 2, 4);
        for (int j = 0; j < 16; j++) {
            int lo = (b[6 + j] & 15) | (int)((qh >> j) & 1) << 4;
            int hi = (b[6 + j] >> 4) | (int)((qh >> (j + 16)) & 1) << 4;
            y[j] = (float)(lo - 16) * d;
            y[j + 16] = (float)(hi - 16) * d;
        }
    }
}

/* q5_1 {d @0, m @2, qh u32 @4, qs[16] @8}: value = q5 * d + m */
void wtype_q5_1_to_float(const void *src, float *y, int n) {
    const unsigned char *b = src;
    for (int i = 0; i < n / 32; i++, b += 24, y += 32) {
        float d = half(b), m = half(b + 2);
        uint32_t qh;
        memcpy(&qh, b + 4, 4);
        for (int j = 0; j < 16; j++) {
            int lo = (b[8 + j] & 15) | (int)((qh >> j) & 1) << 4;
            int hi = (b[8 + j] >> 4) | (int)((qh >> (j + 16)) & 1) << 4;
            y[j] = (float)lo * d + m;
            y[j + 16] = (float)hi * d + m;
        }
    }
}

/* ---- 256-value super-blocks (k-quants) --------------------------------------------------- */

/* q2_k {scales[16] @0, qs[64] @16, d @80, dmin @82}: 16 sub-blocks of 16 values. Value
 * 128h + 32j + 16p + l (half h, shift 2j, part p) is bits 2j..2j+1 of qs[32h + 16p + l], in
 * sub-block c = 8h + 2j + p, whose scale byte gives dl = d * (sc & 15), ml = dmin * (sc >> 4);
 * value = dl * q - ml. */
void wtype_q2_k_to_float(const void *src, float *y, int n) {
    const unsigned char *b = src;
    for (int i = 0; i < n / 256; i++, b += 84) {
        float d = half(b + 80), dmin = half(b + 82);
        for (int c = 0; c < 16; c++, y += 16) {
            int h = c / 8, shift = 2 * ((c % 8) / 2), p = c % 2;
            const unsigned char *q = b + 16 + 32 * h + 16 * p;
            float dl = d * (float)(b[c] & 15), ml = dmin * (float)(b[c] >> 4);
            for (int l = 0; l < 16; l++) y[l] = dl * (float)((q[l] >> shift) & 3) - ml;
        }
    }
}

/* The 16 six-bit scales of a q3_k block, minus 32: low 4 bits from byte i (i < 8) or the high
 * nibble of byte i - 8, high 2 bits from byte 8 + i % 4 at bit 2 * (i / 4). */
void wtype_q3_k_scales(const unsigned char *s, int out[16]) {
    for (int i = 0; i < 16; i++) {
        int lo = i < 8 ? s[i] & 15 : s[i - 8] >> 4;
        int hi = (s[8 + i % 4] >> (2 * (i / 4))) & 3;
        out[i] = (lo | hi << 4) - 32;
    }
}

/* q3_k {hmask[32] @0, qs[64] @32, scales[12] @96, d @108}: sub-blocks as q2_k; the 3rd bit of
 * value 128h + 32j + 16p + l is bit 4h + j of hmask[16p + l], and a missing bit subtracts 4;
 * value = dl * (q2 - 4 * !bit), dl = d * (scale - 32). */
void wtype_q3_k_to_float(const void *src, float *y, int n) {
    const unsigned char *b = src;
    for (int i = 0; i < n / 256; i++, b += 110) {
        float d = half(b + 108);
        int sc[16];
        wtype_q3_k_scales(b + 96, sc);
        for (int c = 0; c < 16; c++, y += 16) {
            int h = c / 8, j = (c % 8) / 2, p = c % 2;
            const unsigned char *q = b + 32 + 32 * h + 16 * p, *hm = b + 16 * p;
            float dl = d * (float)sc[c];
            for (int l = 0; l < 16; l++) {
                int v = ((q[l] >> (2 * j)) & 3) - ((hm[l] >> (4 * h + j)) & 1 ? 0 : 4);
                y[l] = dl * (float)v;
            }
        }
    }
}

/* Scale and min of sub-block j (0..7) of a q4_k / q5_k block's 12 scale bytes: 6 bits each
 * (ggml's get_scale_min_k4). */
void wtype_k4_scale_min(const unsigned char *s, int j, int *sc, int *m) {
    if (j < 4) {
        *sc = s[j] & 63;
        *m = s[j + 4] & 63;
    } else {
        *sc = (s[j + 4] & 15) | (s[j - 4] >> 6) << 4;
        *m = (s[j + 4] >> 4) | (s[j] >> 6) << 4;
    }
}

/* q4_k {d @0, dmin @2, scales[12] @4, qs[128] @16}: 8 sub-blocks of 32; values 64g..64g+31 are
 * the low nibbles of qs[32g..32g+31] (sub-block 2g), the next 32 their high nibbles (2g+1);
 * value = d1 * q - m1 with d1 = d * sc, m1 = dmin * m. */
void wtype_q4_k_to_float(const void *src, float *y, int n) {
    const unsigned char *b = src;
    for (int i = 0; i < n / 256; i++, b += 144) {
        float d = half(b), dmin = half(b + 2);
        for (int g = 0; g < 4; g++) {
            const unsigned char *q = b + 16 + 32 * g;
            for (int p = 0; p < 2; p++, y += 32) {
                int sc, m;
                wtype_k4_scale_min(b + 4, 2 * g + p, &sc, &m);
                float d1 = d * (float)sc, m1 = dmin * (float)m;
                for (int l = 0; l < 32; l++) y[l] = d1 * (float)(p ? q[l] >> 4 : q[l] & 15) - m1;
            }
        }
    }
}

/* q5_k {d @0, dmin @2, scales[12] @4, qh[32] @16, qs[128] @48}: as q4_k, plus 16 if bit
 * 2g + p of qh[l] is set. */
void wtype_q5_k_to_float(const void *src, float *y, int n) {
    const unsigned char *b = src;
    for (int i = 0; i < n / 256; i++, b += 176) {
        float d = half(b), dmin = half(b + 2);
        for (int g = 0; g < 4; g++) {
            const unsigned char *q = b + 48 + 32 * g, *qh = b + 16;
            for (int p = 0; p < 2; p++, y += 32) {
                int sc, m;
                wtype_k4_scale_min(b + 4, 2 * g + p, &sc, &m);
                float d1 = d * (float)sc, m1 = dmin * (float)m;
                for (int l = 0; l < 32; l++) {
                    int v = (p ? q[l] >> 4 : q[l] & 15) + ((qh[l] >> (2 * g + p)) & 1 ? 16 : 0);
                    y[l] = d1 * (float)v - m1;
                }
            }
        }
    }
}

/* q6_k {ql[128] @0, qh[64] @128, scales[16] int8 @192, d @208}: 16 sub-blocks of 16. Value
 * 128h + 32k + 16p + l: low 4 bits from ql[64h + 32(k & 1) + 16p + l] (low nibble for k < 2,
 * high for k >= 2), high 2 bits from qh[32h + 16p + l] at bit 2k; sub-block c = 8h + 2k + p;
 * value = d * sc[c] * (q6 - 32), the product formed left to right. */
void wtype_q6_k_to_float(const void *src, float *y, int n) {
    const unsigned char *b = src;
    for (int i = 0; i < n / 256; i++, b += 210) {
        float d = half(b + 208);
        for (int c = 0; c < 16; c++, y += 16) {
            int h = c / 8, k = (c % 8) / 2, p = c % 2;
            const unsigned char *ql = b + 64 * h + 32 * (k & 1) + 16 * p;
            const unsigned char *qh = b + 128 + 32 * h + 16 * p;
            float ds = d * (float)(int8_t)b[192 + c];
            for (int l = 0; l < 16; l++) {
                int lo = k < 2 ? ql[l] & 15 : ql[l] >> 4;
                int v = (lo | ((qh[l] >> (2 * k)) & 3) << 4) - 32;
                y[l] = ds * (float)v;
            }
        }
    }
}

/* ---- the int8 mode's decoders (kernels.h): integers and scales, no float weights ----------- */

/* q4_0: w = q - 8, scale d. */
void wtype_q4_0_to_int8(const void *src, int8_t *w, float *scale4, float *min32, int n) {
    (void)min32;
    const unsigned char *b = src;
    for (int i = 0; i < n / 32; i++, b += 18, w += 32, scale4 += 8) {
        for (int j = 0; j < 16; j++) {
            w[j] = (int8_t)((b[2 + j] & 15) - 8);
            w[j + 16] = (int8_t)((b[2 + j] >> 4) - 8);
        }
        float d = half(b);
        for (int m = 0; m < 8; m++) scale4[m] = d;
    }
}

/* q4_0's packed rows (wtype.h's pack): per block b, the 8 rows' f16 d (16 bytes), then for
 * each 32-bit word k = 0..3 of the packed nibbles, that word of rows 0..7 (32 bytes: values
 * 4k..4k + 3 in the low nibbles, 16 + 4k.. in the high ones): 144 bytes, the 8 rows' 18 x 8. */
void wtype_q4_0_pack8(const unsigned char *w, size_t ldw, int n, unsigned char *dst) {
    for (int b = 0; b < n / 32; b++, dst += 144) {
        for (int i = 0; i < 8; i++) memcpy(dst + 2 * i, w + (size_t)i * ldw + 18 * (size_t)b, 2);
        for (int k = 0; k < 4; k++)
            for (int i = 0; i < 8; i++)
                memcpy(dst + 16 + 32 * k + 4 * i, w + (size_t)i * ldw + 18 * (size_t)b + 2 + 4 * k,
                       4);
    }
}

/* q6_k's packed rows (wtype.h's pack), per super-block of 8 rows (1680 bytes, their 8 x 210):
 * the 8 rows' f16 d (16 bytes); the 16 scales of each row, scale s of rows 0-7 at 16 + 8s (128);
 * per block j of 32 values and 32-bit word k = 0..3, that word of rows 0-7 (32 bytes at 144 +
 * 128j + 32k) whose byte b holds the low 4 bits of values 4k + b (low nibble) and 4k + 16 + b
 * (high nibble) of the block, u = w + 32 as the row's layout stores it; then per block j two
 * registers of the top 2 bits (32 bytes each at 1168 + 64j + 32r, rows' words as before), byte b
 * holding those of values 4(4r + m) + b at bits 2m, m = 0..3. */
void wtype_q6_k_pack8(const unsigned char *w, size_t ldw, int n, unsigned char *dst) {
    /* in 32-bit words of 4 values: block j's values come from ql[64h + 32(k & 1) ..] (low
     * nibbles for k < 2, high ones above) and qh[32h ..] bits 2k, 2k + 1, h = j / 4, k = j % 4
     * (as wtype_q6_k_to_int8 reads them; a loop over the 256 values made loading 1.1B Q6_K take
     * 7 s longer on one thread) */
    for (int sb = 0; sb < n / 256; sb++, dst += 1680) {
        for (int i = 0; i < 8; i++) {
            const unsigned char *b = w + (size_t)i * ldw + 210 * (size_t)sb;
            memcpy(dst + 2 * i, b + 208, 2);
            for (int c = 0; c < 16; c++) dst[16 + 8 * c + i] = b[192 + c];
            for (int j = 0; j < 8; j++) {
                const int h = j / 4, k = j % 4, sh = 4 * (k >> 1);
                const unsigned char *ql = b + 64 * h + 32 * (k & 1), *qh = b + 128 + 32 * h;
                for (int kk = 0; kk < 4; kk++) {
                    uint32_t x, y;
                    memcpy(&x, ql + 4 * kk, 4);
                    memcpy(&y, ql + 16 + 4 * kk, 4);
                    uint32_t v = ((x >> sh) & 0x0F0F0F0Fu) | ((y >> sh) & 0x0F0F0F0Fu) << 4;
                    memcpy(dst + 144 + 128 * j + 32 * kk + 4 * i, &v, 4);
                }
                for (int r = 0; r < 2; r++) {
                    uint32_t v = 0;
                    for (int m = 0; m < 4; m++) {
                        uint32_t z;
                        memcpy(&z, qh + 4 * (4 * r + m), 4);
                        v |= ((z >> (2 * k)) & 0x03030303u) << (2 * m);
                    }
                    memcpy(dst + 1168 + 64 * j + 32 * r + 4 * i, &v, 4);
                }
            }
        }
    }
}

/* q4_k's packed rows (wtype.h's pack), per super-block of 8 rows (1152 bytes, their 8 x 144):
 * the 8 rows' f16 d (16 bytes) and dmin (16); their 64 scales and 64 mins, each value v = 8j + i
 * (sub-block j, row i) cut into 4 low bits (32 bytes, byte b: value b in the low nibble, b + 32
 * in the high one) and 2 high bits (16 bytes, byte b: values b, b + 16, b + 32, b + 48 at bits
 * 0, 2, 4, 6): scales' low bits at 32, mins' at 64, scales' high bits at 96, mins' at 112; then
 * per pair p of sub-blocks and 32-bit word m = 0..7 of the pair's qs, that word of rows 0-7 (32
 * bytes at 128 + 256p + 32m: byte b's low nibble is value 4m + b of sub-block 2p, its high
 * nibble value 4m + b of 2p + 1). */
void wtype_q4_k_pack8(const unsigned char *w, size_t ldw, int n, unsigned char *dst) {
    for (int sb = 0; sb < n / 256; sb++, dst += 1152) {
        unsigned char sc[64], mn[64];
        for (int i = 0; i < 8; i++) {
            const unsigned char *b = w + (size_t)i * ldw + 144 * (size_t)sb;
            memcpy(dst + 2 * i, b, 2);
            memcpy(dst + 16 + 2 * i, b + 2, 2);
            for (int j = 0; j < 8; j++) {
                int s, m;
                wtype_k4_scale_min(b + 4, j, &s, &m);
                sc[8 * j + i] = (unsigned char)s, mn[8 * j + i] = (unsigned char)m;
            }
            for (int p = 0; p < 4; p++)
                for (int m = 0; m < 8; m++)
                    memcpy(dst + 128 + 256 * p + 32 * m + 4 * i, b + 16 + 32 * p + 4 * m, 4);
        }
        for (int v = 0; v < 32; v++) {
            dst[32 + v] = (unsigned char)((sc[v] & 15) | (sc[v + 32] & 15) << 4);
            dst[64 + v] = (unsigned char)((mn[v] & 15) | (mn[v + 32] & 15) << 4);
        }
        for (int v = 0; v < 16; v++) {
            dst[96 + v] = (unsigned char)(sc[v] >> 4 | (sc[v + 16] >> 4) << 2 |
                                          (sc[v + 32] >> 4) << 4 | (sc[v + 48] >> 4) << 6);
            dst[112 + v] = (unsigned char)(mn[v] >> 4 | (mn[v + 16] >> 4) << 2 |
                                           (mn[v + 32] >> 4) << 4 | (mn[v + 48] >> 4) << 6);
        }
    }
}

/* q5_0: w = q5 - 16, scale d. */
void wtype_q5_0_to_int8(const void *src, int8_t *w, float *scale4, float *min32, int n) {
    (void)min32;
    const unsigned char *b = src;
    for (int i = 0; i < n / 32; i++, b += 22, w += 32, scale4 += 8) {
        uint32_t qh;
        memcpy(&qh, b + 2, 4);
        for (int j = 0; j < 16; j++) {
            w[j] = (int8_t)(((b[6 + j] & 15) | (int)((qh >> j) & 1) << 4) - 16);
            w[j + 16] = (int8_t)(((b[6 + j] >> 4) | (int)((qh >> (j + 16)) & 1) << 4) - 16);
        }
        float d = half(b);
        for (int m = 0; m < 8; m++) scale4[m] = d;
    }
}

/* q4_1 and q5_1: w = q (0..15 or 0..31), scale d, min -m (the value is d * q + m). */
void wtype_q4_1_to_int8(const void *src, int8_t *w, float *scale4, float *min32, int n) {
    const unsigned char *b = src;
    for (int i = 0; i < n / 32; i++, b += 20, w += 32, scale4 += 8, min32++) {
        for (int j = 0; j < 16; j++) {
            w[j] = (int8_t)(b[4 + j] & 15);
            w[j + 16] = (int8_t)(b[4 + j] >> 4);
        }
        float d = half(b);
        for (int m = 0; m < 8; m++) scale4[m] = d;
        *min32 = -half(b + 2);
    }
}

void wtype_q5_1_to_int8(const void *src, int8_t *w, float *scale4, float *min32, int n) {
    const unsigned char *b = src;
    for (int i = 0; i < n / 32; i++, b += 24, w += 32, scale4 += 8, min32++) {
        uint32_t qh;
        memcpy(&qh, b + 4, 4);
        for (int j = 0; j < 16; j++) {
            w[j] = (int8_t)((b[8 + j] & 15) | (int)((qh >> j) & 1) << 4);
            w[j + 16] = (int8_t)((b[8 + j] >> 4) | (int)((qh >> (j + 16)) & 1) << 4);
        }
        float d = half(b);
        for (int m = 0; m < 8; m++) scale4[m] = d;
        *min32 = -half(b + 2);
    }
}

/* q4_k: w = q (0..15), scale d * sc and min dmin * m of the value's sub-block (both exact). */
void wtype_q4_k_to_int8(const void *src, int8_t *w, float *scale4, float *min32, int n) {
    const unsigned char *b = src;
    for (int i = 0; i < n / 256; i++, b += 144) {
        float d = half(b), dmin = half(b + 2);
        for (int g = 0; g < 4; g++) {
            const unsigned char *q = b + 16 + 32 * g;
            for (int p = 0; p < 2; p++, w += 32, scale4 += 8, min32++) {
                int sc, m;
                wtype_k4_scale_min(b + 4, 2 * g + p, &sc, &m);
                for (int l = 0; l < 32; l++) w[l] = (int8_t)(p ? q[l] >> 4 : q[l] & 15);
                for (int k = 0; k < 8; k++) scale4[k] = d * (float)sc;
                *min32 = dmin * (float)m;
            }
        }
    }
}

/* q5_k: w = q (0..31, the 5th bit from qh), scale and min as q4_k. */
void wtype_q5_k_to_int8(const void *src, int8_t *w, float *scale4, float *min32, int n) {
    const unsigned char *b = src;
    for (int i = 0; i < n / 256; i++, b += 176) {
        float d = half(b), dmin = half(b + 2);
        for (int g = 0; g < 4; g++) {
            const unsigned char *q = b + 48 + 32 * g, *qh = b + 16;
            for (int p = 0; p < 2; p++, w += 32, scale4 += 8, min32++) {
                int sc, m;
                wtype_k4_scale_min(b + 4, 2 * g + p, &sc, &m);
                for (int l = 0; l < 32; l++)
                    w[l] = (int8_t)((p ? q[l] >> 4 : q[l] & 15) |
                                    ((qh[l] >> (2 * g + p)) & 1) << 4);
                for (int k = 0; k < 8; k++) scale4[k] = d * (float)sc;
                *min32 = dmin * (float)m;
            }
        }
    }
}

/* q3_k: w = q2 - 4 * !bit (-4..3), scale d * (scale - 32) of the value's sub-block of 16. */
void wtype_q3_k_to_int8(const void *src, int8_t *w, float *scale4, float *min32, int n) {
    (void)min32;
    const unsigned char *b = src;
    for (int i = 0; i < n / 256; i++, b += 110) {
        float d = half(b + 108);
        int sc[16];
        wtype_q3_k_scales(b + 96, sc);
        for (int c = 0; c < 16; c++, w += 16, scale4 += 4) {
            int h = c / 8, j = (c % 8) / 2, p = c % 2;
            const unsigned char *q = b + 32 + 32 * h + 16 * p, *hm = b + 16 * p;
            for (int l = 0; l < 16; l++)
                w[l] = (int8_t)(((q[l] >> (2 * j)) & 3) - ((hm[l] >> (4 * h + j)) & 1 ? 0 : 4));
            for (int m = 0; m < 4; m++) scale4[m] = d * (float)sc[c];
        }
    }
}

/* q6_k: w = q6 - 32, scale d * sc of the value's sub-block of 16 (exact). */
void wtype_q6_k_to_int8(const void *src, int8_t *w, float *scale4, float *min32, int n) {
    (void)min32;
    const unsigned char *b = src;
    for (int i = 0; i < n / 256; i++, b += 210) {
        float d = half(b + 208);
        for (int c = 0; c < 16; c++, w += 16, scale4 += 4) {
            int h = c / 8, k = (c % 8) / 2, p = c % 2;
            const unsigned char *ql = b + 64 * h + 32 * (k & 1) + 16 * p;
            const unsigned char *qh = b + 128 + 32 * h + 16 * p;
            for (int l = 0; l < 16; l++) {
                int lo = k < 2 ? ql[l] & 15 : ql[l] >> 4;
                w[l] = (int8_t)((lo | ((qh[l] >> (2 * k)) & 3) << 4) - 32);
            }
            for (int m = 0; m < 4; m++) scale4[m] = d * (float)(int8_t)b[192 + c];
        }
    }
}

/* ---- quantizers -------------------------------------------------------------------------- */

/* q8_0: d = max|x| / 127, q = x * (1/d) rounded (ggml's quantize_row_q8_0_ref, except that
 * ggml's roundf breaks ties away from zero and this rounds them to even). */
void wtype_q8_0_from_float(const float *x, void *dst, int n) {
    unsigned char *out = dst;
    for (int b = 0; b < n / 32; b++, x += 32, out += 34) {
        float amax = 0.0f;
        for (int j = 0; j < 32; j++) amax = fmaxf(amax, fabsf(x[j]));
        float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        uint16_t h = to_half(d);
        memcpy(out, &h, 2);
        for (int j = 0; j < 32; j++) {
            float q = rintf(x[j] * id); /* |q| <= 127 up to rounding; clamp to be safe */
            q = q > 127.0f ? 127.0f : q < -127.0f ? -127.0f : q;
            out[2 + j] = (unsigned char)(int8_t)q;
        }
    }
}

/* q4_0 as ggml's quantize_row_q4_0_ref: d = -m / 8 where m is the value of largest magnitude
 * (so m itself maps to q = 0, i.e. -8 d), q = min(15, trunc(x / d + 8.5)). Byte-identical to
 * llama-quantize without an importance matrix (tests/test_wtype.c compares). */
void wtype_q4_0_from_float(const float *x, void *dst, int n) {
    unsigned char *out = dst;
    for (int b = 0; b < n / 32; b++, x += 32, out += 18) {
        float amax = 0.0f, m = 0.0f;
        for (int j = 0; j < 32; j++)
            if (fabsf(x[j]) > amax) amax = fabsf(x[j]), m = x[j];
        float d = m / -8.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        uint16_t h = to_half(d);
        memcpy(out, &h, 2);
        for (int j = 0; j < 16; j++) {
            int lo = (int)(int8_t)(x[j] * id + 8.5f), hi = (int)(int8_t)(x[j + 16] * id + 8.5f);
            lo = lo > 15 ? 15 : lo;
            hi = hi > 15 ? 15 : hi;
            out[2 + j] = (unsigned char)(lo | hi << 4);
        }
    }
}

/* q5_0 as ggml's quantize_row_q5_0_ref: the same scheme as q4_0 with 5 bits (d = -m / 16,
 * q = min(31, trunc(x / d + 16.5))), the fifth bit of value v in bit v of qh. llama-quantize
 * stores Q4_K_M's matrices whose rows are not whole 256-value super-blocks in it (Qwen2.5-0.5B's
 * 896-wide ones). */
void wtype_q5_0_from_float(const float *x, void *dst, int n) {
    unsigned char *out = dst;
    for (int b = 0; b < n / 32; b++, x += 32, out += 22) {
        float amax = 0.0f, m = 0.0f;
        for (int j = 0; j < 32; j++)
            if (fabsf(x[j]) > amax) amax = fabsf(x[j]), m = x[j];
        float d = m / -16.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        uint16_t h = to_half(d);
        memcpy(out, &h, 2);
        uint32_t qh = 0;
        for (int j = 0; j < 16; j++) {
            int lo = (int)(int8_t)(x[j] * id + 16.5f), hi = (int)(int8_t)(x[j + 16] * id + 16.5f);
            lo = lo > 31 ? 31 : lo;
            hi = hi > 31 ? 31 : hi;
            out[6 + j] = (unsigned char)((lo & 15) | (hi & 15) << 4);
            qh |= (uint32_t)(lo >> 4 & 1) << j | (uint32_t)(hi >> 4 & 1) << (j + 16);
        }
        memcpy(out + 2, &qh, 4);
    }
}

static int clampi(int v, int lo, int hi) {
    return v < lo ? lo : v > hi ? hi : v;
}

/* The smallest f16 h with h * n >= v (v >= 0, finite in f16 after division): a super-block
 * scale that lets the largest sub-block scale be stored without clipping. */
static uint16_t half_at_least(float v, float n) {
    uint16_t h = to_half(v / n);
    while (wtype_f16_to_f32(h) * n < v && h < 0x7bff) h++;
    return h;
}

/* q4_k by min and max: each sub-block of 32 gets a min m1 >= -min(0, min x) and a scale d1 with
 * 15 d1 >= max x + m1, both rounded up to the 6-bit multiples of the super-block's dmin and d
 * (themselves rounded up in f16), so no value is clipped; each value is then rounded to the
 * nearest of its 16 levels. Simpler than llama.cpp's search over scales and mins
 * (make_qkx2_quants, weighted by x^2 or an importance matrix), so the error is larger; only the
 * dequantization has to be ggml's, and it is (same format). */
void wtype_q4_k_from_float(const float *x, void *dst, int n) {
    unsigned char *out = dst;
    for (int i = 0; i < n / 256; i++, x += 256, out += 144) {
        float hi[8], mins[8], max_min = 0.0f;
        for (int s = 0; s < 8; s++) {
            float lo = 0.0f;
            hi[s] = 0.0f;
            for (int l = 0; l < 32; l++)
                lo = fminf(lo, x[32 * s + l]), hi[s] = fmaxf(hi[s], x[32 * s + l]);
            mins[s] = -lo;
            max_min = fmaxf(max_min, mins[s]);
        }
        uint16_t hm = half_at_least(max_min, 63.0f);
        float dmin = wtype_f16_to_f32(hm), scale[8], max_scale = 0.0f;
        int sc[8], m[8];
        for (int s = 0; s < 8; s++) {
            m[s] = dmin > 0.0f ? clampi((int)ceilf(mins[s] / dmin), 0, 63) : 0;
            scale[s] = (hi[s] + dmin * (float)m[s]) / 15.0f;
            max_scale = fmaxf(max_scale, scale[s]);
        }
        uint16_t hd = half_at_least(max_scale, 63.0f);
        float d = wtype_f16_to_f32(hd);
        for (int s = 0; s < 8; s++) sc[s] = d > 0.0f ? clampi((int)ceilf(scale[s] / d), 0, 63) : 0;
        memcpy(out, &hd, 2);
        memcpy(out + 2, &hm, 2);
        unsigned char *s12 = out + 4;
        for (int j = 0; j < 4; j++) {
            s12[j] = (unsigned char)(sc[j] | (sc[j + 4] >> 4) << 6);
            s12[j + 4] = (unsigned char)(m[j] | (m[j + 4] >> 4) << 6);
            s12[j + 8] = (unsigned char)((sc[j + 4] & 15) | (m[j + 4] & 15) << 4);
        }
        for (int g = 0; g < 4; g++) {
            unsigned char *q = out + 16 + 32 * g;
            for (int p = 0; p < 2; p++) {
                int s = 2 * g + p;
                float d1 = d * (float)sc[s], m1 = dmin * (float)m[s];
                for (int l = 0; l < 32; l++) {
                    int v = d1 > 0.0f ? clampi((int)rintf((x[32 * s + l] + m1) / d1), 0, 15) : 0;
                    q[l] = p ? (unsigned char)(q[l] | v << 4) : (unsigned char)v;
                }
            }
        }
    }
}

/* q6_k by maximum magnitude: each sub-block of 16 gets scale -m / 32 (m its value of largest
 * magnitude, which maps to -32 as in q4_0), stored as an int8 multiple of the super-block's d
 * rounded away from zero (so nothing clips beyond the one level q4_0 also loses); each value is
 * rounded to the nearest level. llama.cpp searches the scale (make_qx_quants); this does not. */
void wtype_q6_k_from_float(const float *x, void *dst, int n) {
    unsigned char *out = dst;
    for (int i = 0; i < n / 256; i++, x += 256, out += 210) {
        float scale[16], amax_scale = 0.0f;
        for (int c = 0; c < 16; c++) {
            float amax = 0.0f, m = 0.0f;
            for (int l = 0; l < 16; l++)
                if (fabsf(x[16 * c + l]) > amax) amax = fabsf(x[16 * c + l]), m = x[16 * c + l];
            scale[c] = m / -32.0f;
            amax_scale = fmaxf(amax_scale, fabsf(scale[c]));
        }
        uint16_t hd = half_at_least(amax_scale, 127.0f);
        float d = wtype_f16_to_f32(hd);
        memcpy(out + 208, &hd, 2);
        memset(out, 0, 192);
        for (int c = 0; c < 16; c++) {
            int sc = d > 0.0f ? clampi((int)ceilf(fabsf(scale[c]) / d), 0, 127) : 0;
            sc = scale[c] < 0.0f ? -sc : sc;
            out[192 + c] = (unsigned char)(int8_t)sc;
            float ds = d * (float)sc;
            int h = c / 8, k = (c % 8) / 2, p = c % 2;
            unsigned char *ql = out + 64 * h + 32 * (k & 1) + 16 * p;
            unsigned char *qh = out + 128 + 32 * h + 16 * p;
            for (int l = 0; l < 16; l++) {
                int v = ds != 0.0f ? clampi((int)rintf(x[16 * c + l] / ds), -32, 31) + 32 : 32;
                ql[l] = (unsigned char)(ql[l] | (k < 2 ? v & 15 : (v & 15) << 4));
                qh[l] = (unsigned char)(qh[l] | (v >> 4) << (2 * k));
            }
        }
    }
}

/* The int8 mode's q8_0 (kernels.h): w = q, a scale d per block. */
void wtype_q8_0_to_int8(const void *src, int8_t *w, float *scale4, float *min32, int n) {
    (void)min32;
    const unsigned char *blk = src;
    for (int b = 0; b < n / 32; b++, blk += 34) {
        uint16_t h;
        memcpy(&h, blk, 2);
        float d = wtype_f16_to_f32(h);
        memcpy(w + 32 * b, blk + 2, 32);
        for (int m = 0; m < 8; m++) scale4[8 * b + m] = d;
    }
}
