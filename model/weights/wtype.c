/* wtype.c: the weight-type table (see wtype.h) and the exact to_float of the float types and
 * of q8_0. Kept apart from the kernels so that everything that needs a type's geometry or its
 * reference dequantization needs nothing else. */
#include "model/weights/wtype.h"

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
                    .to_float = q8_0_to_float,
                    .from_float = wtype_q8_0_from_float},
    [WTYPE_Q4_0] = {.name = "q4_0",
                    .ggml_type = GGML_Q4_0,
                    .block = 32,
                    .block_bytes = 18,
                    .align = 2,
                    .file_type = 2,
                    .to_float = wtype_q4_0_to_float,
                    .from_float = wtype_q4_0_from_float},
    [WTYPE_Q4_1] = {.name = "q4_1",
                    .ggml_type = GGML_Q4_1,
                    .block = 32,
                    .block_bytes = 20,
                    .align = 2,
                    .file_type = 3,
                    .to_float = wtype_q4_1_to_float},
    [WTYPE_Q5_0] = {.name = "q5_0",
                    .ggml_type = GGML_Q5_0,
                    .block = 32,
                    .block_bytes = 22,
                    .align = 2,
                    .file_type = 8,
                    .to_float = wtype_q5_0_to_float,
                    .from_float = wtype_q5_0_from_float},
    [WTYPE_Q5_1] = {.name = "q5_1",
                    .ggml_type = GGML_Q5_1,
                    .block = 32,
                    .block_bytes = 24,
                    .align = 2,
                    .file_type = 9,
                    .to_float = wtype_q5_1_to_float},
    [WTYPE_Q2_K] = {.name = "q2_k",
                    .ggml_type = GGML_Q2_K,
                    .block = 256,
                    .block_bytes = 84,
                    .align = 2,
                    .file_type = 10,
                    .to_float = wtype_q2_k_to_float},
    [WTYPE_Q3_K] = {.name = "q3_k",
                    .ggml_type = GGML_Q3_K,
                    .block = 256,
                    .block_bytes = 110,
                    .align = 2,
                    .file_type = 12,
                    .to_float = wtype_q3_k_to_float},
    [WTYPE_Q4_K] = {.name = "q4_k",
                    .ggml_type = GGML_Q4_K,
                    .block = 256,
                    .block_bytes = 144,
                    .align = 2,
                    .file_type = 15,
                    .to_float = wtype_q4_k_to_float,
                    .from_float = wtype_q4_k_from_float},
    [WTYPE_Q5_K] = {.name = "q5_k",
                    .ggml_type = GGML_Q5_K,
                    .block = 256,
                    .block_bytes = 176,
                    .align = 2,
                    .file_type = 17,
                    .to_float = wtype_q5_k_to_float},
    [WTYPE_Q6_K] = {.name = "q6_k",
                    .ggml_type = GGML_Q6_K,
                    .block = 256,
                    .block_bytes = 210,
                    .align = 2,
                    .file_type = 18,
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
