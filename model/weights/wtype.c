/* wtype.c: the weight-type table (see wtype.h) and the exact to_float of the float types and
 * of q8_0. Kept apart from the kernels so that everything that needs a type's geometry or its
 * reference dequantization needs nothing else. */
#include "model/weights/wtype.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "model/weights/wtype_blocks.h"

/* ---- to_float: each weight as ggml's dequantize_row_* / ggml_fp16_to_fp32 forms it -------- */

static void f32_to_float(const void *src, float *dst, int n) {
    memcpy(dst, src, sizeof(float) * (size_t)n);
}

static void f16_to_float(const void *src, float *dst, int n) {
    const unsigned char *p = src;
    for (int k = 0; k < n; k++) {
        uint16_t h;
        memcpy(&h, p + 2 * (size_t)k, 2);
        dst[k] = wtype_f16_to_f32(h);
    }
}

static void bf16_to_float(const void *src, float *dst, int n) {
    const unsigned char *p = src;
    for (int k = 0; k < n; k++) {
        uint16_t h;
        memcpy(&h, p + 2 * (size_t)k, 2);
        dst[k] = wtype_bf16_to_f32(h);
    }
}

/* {f16 d, int8 q[32]}: y = q * d (exact: an 11-bit by 8-bit product). */
static void q8_0_to_float(const void *src, float *dst, int n) {
    const unsigned char *blk = src;
    for (int b = 0; b < n / 32; b++, blk += 34) {
        uint16_t h;
        memcpy(&h, blk, 2);
        float d = wtype_f16_to_f32(h);
        for (int j = 0; j < 32; j++) dst[b * 32 + j] = d * (float)(int8_t)blk[2 + j];
    }
}

static void f32_from_float(const float *src, void *dst, int n) {
    memcpy(dst, src, sizeof(float) * (size_t)n);
}

static void f16_from_float(const float *src, void *dst, int n) {
    unsigned char *p = dst;
    for (int k = 0; k < n; k++) {
        uint16_t h = wtype_f32_to_f16(src[k]);
        memcpy(p + 2 * (size_t)k, &h, 2);
    }
}

static void bf16_from_float(const float *src, void *dst, int n) {
    unsigned char *p = dst;
    for (int k = 0; k < n; k++) {
        uint16_t h = wtype_f32_to_bf16(src[k]);
        memcpy(p + 2 * (size_t)k, &h, 2);
    }
}

/* ---- the table ------------------------------------------------------------------------- */

/* ggml type ids (ggml.h enum ggml_type). */
enum {
    GGML_F32 = 0,
    GGML_F16 = 1,
    GGML_Q4_0 = 2,
    GGML_Q4_1 = 3,
    GGML_Q5_0 = 6,
    GGML_Q5_1 = 7,
    GGML_Q8_0 = 8,
    GGML_Q2_K = 10,
    GGML_Q3_K = 11,
    GGML_Q4_K = 12,
    GGML_Q5_K = 13,
    GGML_Q6_K = 14,
    GGML_BF16 = 30
};

/* file_type is llama.cpp's enum llama_ftype for a file mostly of the type (ALL_F32 0, MOSTLY_F16
 * 1, Q4_0 2, Q4_1 3, Q8_0 7, Q5_0 8, Q5_1 9, Q2_K 10, Q3_K_M 12, Q4_K_M 15, Q5_K_M 17, Q6_K 18,
 * BF16 32). */
static const wtype_traits table[WTYPE_COUNT] = {
    [WTYPE_F32] = {.name = "f32",
                   .ggml_type = GGML_F32,
                   .block = 1,
                   .block_bytes = 4,
                   .align = 4,
                   .file_type = 0,
                   .to_float = f32_to_float,
                   .from_float = f32_from_float},
    [WTYPE_F16] = {.name = "f16",
                   .ggml_type = GGML_F16,
                   .block = 1,
                   .block_bytes = 2,
                   .align = 2,
                   .file_type = 1,
                   .to_float = f16_to_float,
                   .from_float = f16_from_float},
    [WTYPE_BF16] = {.name = "bf16",
                    .ggml_type = GGML_BF16,
                    .block = 1,
                    .block_bytes = 2,
                    .align = 2,
                    .file_type = 32,
                    .to_float = bf16_to_float,
                    .from_float = bf16_from_float},
    [WTYPE_Q8_0] = {.name = "q8_0",
                    .ggml_type = GGML_Q8_0,
                    .block = 32,
                    .block_bytes = 34,
                    .align = 2,
                    .file_type = 7,
                    .scale = {{0, "d"}},
                    .to_float = q8_0_to_float,
                    .from_float = wtype_q8_0_from_float},
    [WTYPE_Q4_0] = {.name = "q4_0",
                    .ggml_type = GGML_Q4_0,
                    .block = 32,
                    .block_bytes = 18,
                    .align = 2,
                    .file_type = 2,
                    .scale = {{0, "d"}},
                    .to_float = wtype_q4_0_to_float,
                    .from_float = wtype_q4_0_from_float},
    [WTYPE_Q4_1] = {.name = "q4_1",
                    .ggml_type = GGML_Q4_1,
                    .block = 32,
                    .block_bytes = 20,
                    .align = 2,
                    .file_type = 3,
                    .scale = {{0, "d"}, {2, "m"}},
                    .to_float = wtype_q4_1_to_float},
    [WTYPE_Q5_0] = {.name = "q5_0",
                    .ggml_type = GGML_Q5_0,
                    .block = 32,
                    .block_bytes = 22,
                    .align = 2,
                    .file_type = 8,
                    .scale = {{0, "d"}},
                    .to_float = wtype_q5_0_to_float,
                    .from_float = wtype_q5_0_from_float},
    [WTYPE_Q5_1] = {.name = "q5_1",
                    .ggml_type = GGML_Q5_1,
                    .block = 32,
                    .block_bytes = 24,
                    .align = 2,
                    .file_type = 9,
                    .scale = {{0, "d"}, {2, "m"}},
                    .to_float = wtype_q5_1_to_float},
    [WTYPE_Q2_K] = {.name = "q2_k",
                    .ggml_type = GGML_Q2_K,
                    .block = 256,
                    .block_bytes = 84,
                    .align = 2,
                    .file_type = 10,
                    .scale = {{80, "d"}, {82, "dmin"}},
                    .to_float = wtype_q2_k_to_float},
    [WTYPE_Q3_K] = {.name = "q3_k",
                    .ggml_type = GGML_Q3_K,
                    .block = 256,
                    .block_bytes = 110,
                    .align = 2,
                    .file_type = 12,
                    .scale = {{108, "d"}},
                    .to_float = wtype_q3_k_to_float},
    [WTYPE_Q4_K] = {.name = "q4_k",
                    .ggml_type = GGML_Q4_K,
                    .block = 256,
                    .block_bytes = 144,
                    .align = 2,
                    .file_type = 15,
                    .scale = {{0, "d"}, {2, "dmin"}},
                    .to_float = wtype_q4_k_to_float,
                    .from_float = wtype_q4_k_from_float},
    [WTYPE_Q5_K] = {.name = "q5_k",
                    .ggml_type = GGML_Q5_K,
                    .block = 256,
                    .block_bytes = 176,
                    .align = 2,
                    .file_type = 17,
                    .scale = {{0, "d"}, {2, "dmin"}},
                    .to_float = wtype_q5_k_to_float},
    [WTYPE_Q6_K] = {.name = "q6_k",
                    .ggml_type = GGML_Q6_K,
                    .block = 256,
                    .block_bytes = 210,
                    .align = 2,
                    .file_type = 18,
                    .scale = {{208, "d"}},
                    .to_float = wtype_q6_k_to_float,
                    .from_float = wtype_q6_k_from_float},
};

const wtype_traits *wtype_get(wtype t) {
    return &table[t];
}

int wtype_from_ggml(uint32_t g, wtype *out) {
    for (int t = 0; t < WTYPE_COUNT; t++)
        if (table[t].ggml_type == g) return *out = (wtype)t, 0;
    return -1;
}

int wtype_parse(const char *s, wtype *out) {
    for (int t = 0; s && t < WTYPE_COUNT; t++)
        if (strcmp(table[t].name, s) == 0) return *out = (wtype)t, 0;
    return -1;
}

size_t wtype_row_bytes(wtype t, int cols) {
    return (size_t)table[t].block_bytes * (size_t)(cols / table[t].block);
}

const char *wtype_name(wtype t) {
    return (unsigned)t < WTYPE_COUNT ? table[t].name : "?";
}

/* ---- finding NaN and infinity ---------------------------------------------------------------
 * A value's exponent field plus its lowest unit carries into the bit above the field exactly
 * when the field is all ones (NaN or infinity): OR-ing that over a chunk finds whether the chunk
 * holds one with integer operations only, which GCC vectorizes for the float types; the chunk is
 * looked at again only then. */

enum { SCAN_CHUNK = 4096, SCAN_AHEAD = 128 };

static uint32_t f16_bad(uint16_t h) { /* bit 15: exponent 0x1f */
    return (uint32_t)(h & 0x7c00u) + 0x0400u;
}

static uint32_t bf16_bad(uint16_t h) { /* bit 15: exponent 0xff */
    return (uint32_t)(h & 0x7f80u) + 0x0080u;
}

static uint32_t f32_bad(uint32_t f) { /* bit 31: exponent 0xff */
    return (f & 0x7f800000u) + 0x00800000u;
}

/* Whether values [i0, i1) of a float type hold a NaN or an infinity: one loop per type, which
 * GCC vectorizes (a type test inside the loop kept it scalar). */
static int floats_bad(wtype t, const unsigned char *p, size_t i0, size_t i1) {
    uint32_t any = 0;
    if (t == WTYPE_F32) {
        for (size_t i = i0; i < i1; i++) {
            uint32_t f;
            memcpy(&f, p + 4 * i, 4);
            any |= f32_bad(f);
        }
        return (any & 0x80000000u) != 0;
    }
    if (t == WTYPE_F16)
        for (size_t i = i0; i < i1; i++) {
            uint16_t h;
            memcpy(&h, p + 2 * i, 2);
            any |= f16_bad(h);
        }
    else
        for (size_t i = i0; i < i1; i++) {
            uint16_t h;
            memcpy(&h, p + 2 * i, 2);
            any |= bf16_bad(h);
        }
    return (any & 0x8000u) != 0;
}

long long wtype_find_nonfinite(wtype t, const void *data, size_t n, int *which, float *value) {
    const wtype_traits *tt = &table[t];
    const unsigned char *p = data;
    *which = 0;
    if (tt->block == 1) {
        for (size_t c = 0; c < n; c += SCAN_CHUNK) {
            size_t end = n - c < SCAN_CHUNK ? n : c + SCAN_CHUNK;
            if (!floats_bad(t, p, c, end)) continue;
            for (size_t i = c; i < end; i++)
                if (floats_bad(t, p, i, i + 1)) {
                    tt->to_float(p + i * (size_t)tt->block_bytes, value, 1);
                    return (long long)i;
                }
        }
        return -1;
    }
    const size_t bb = (size_t)tt->block_bytes;
    const unsigned char *s0 = p + tt->scale[0].at, *s1 = p + tt->scale[1].at;
    for (size_t c = 0; c < n; c += SCAN_CHUNK) {
        size_t end = n - c < SCAN_CHUNK ? n : c + SCAN_CHUNK;
        uint32_t any = 0;
        /* One loop per count of scales; the loads, 2 bytes per block, keep too few cache lines
         * in flight for the hardware's prefetchers, so 128 blocks ahead are asked for (1.1B
         * q8_0, 1.1 GB in the page cache: 0.12 -> 0.09 s of CPU; at 32 blocks 0.10). */
        if (tt->scale[1].name)
            for (size_t b = c; b < end; b++) {
                uint16_t h0, h1;
                if (b + SCAN_AHEAD < n) __builtin_prefetch(s0 + (b + SCAN_AHEAD) * bb);
                memcpy(&h0, s0 + b * bb, 2);
                memcpy(&h1, s1 + b * bb, 2);
                any |= f16_bad(h0) | f16_bad(h1);
            }
        else
            for (size_t b = c; b < end; b++) {
                uint16_t h;
                if (b + SCAN_AHEAD < n) __builtin_prefetch(s0 + (b + SCAN_AHEAD) * bb);
                memcpy(&h, s0 + b * bb, 2);
                any |= f16_bad(h);
            }
        if (!(any & 0x8000u)) continue;
        for (size_t b = c; b < end; b++)
            for (int s = 0; s < 2 && tt->scale[s].name; s++) {
                uint16_t h;
                memcpy(&h, p + b * bb + (size_t)tt->scale[s].at, 2);
                if (f16_bad(h) & 0x8000u) {
                    *which = s, *value = wtype_f16_to_f32(h);
                    return (long long)b;
                }
            }
    }
    return -1;
}

void wtype_describe_nonfinite(wtype t, int cols, long long i, int which, float value, char *out,
                              size_t n) {
    const wtype_traits *tt = &table[t];
    const char *v = isnan(value) ? "NaN" : value > 0 ? "+inf" : "-inf";
    long long per_row = cols / tt->block, row = i / per_row, col = i % per_row * tt->block;
    if (tt->block == 1)
        snprintf(out, n, "row %lld, column %lld is %s", row, col, v);
    else
        snprintf(out, n, "block %lld (row %lld, columns %lld..%lld) has scale %s = %s", i, row, col,
                 col + tt->block - 1, tt->scale[which].name, v);
}
