/* wtype.c: the weight-type table (see wtype.h) and the exact to_float of the float types and
 * of q8_0. Kept apart from the kernels so that everything that needs a type's geometry or its
 * reference dequantization needs nothing else. */
#include "model/wtype.h"

#include <string.h>

#include "model/kernels.h"
#include "model/kernels_isa.h"

/* ---- to_float: each weight as ggml's dequantize_row_* / ggml_fp16_to_fp32 forms it -------- */

static void f32_to_float(const void *src, float *dst, int n) {
    memcpy(dst, src, sizeof(float) * (size_t)n);
}

static void f16_to_float(const void *src, float *dst, int n) {
    const unsigned char *p = src;
    for (int k = 0; k < n; k++) {
        uint16_t h;
        memcpy(&h, p + 2 * (size_t)k, 2);
        dst[k] = kern_f16_to_f32(h);
    }
}

static void bf16_to_float(const void *src, float *dst, int n) {
    const unsigned char *p = src;
    for (int k = 0; k < n; k++) {
        uint16_t h;
        memcpy(&h, p + 2 * (size_t)k, 2);
        dst[k] = kern_bf16_to_f32(h);
    }
}

/* {f16 d, int8 q[32]}: y = q * d (exact: an 11-bit by 8-bit product). */
static void q8_0_to_float(const void *src, float *dst, int n) {
    const unsigned char *blk = src;
    for (int b = 0; b < n / 32; b++, blk += 34) {
        uint16_t h;
        memcpy(&h, blk, 2);
        float d = kern_f16_to_f32(h);
        for (int j = 0; j < 32; j++) dst[b * 32 + j] = d * (float)(int8_t)blk[2 + j];
    }
}

/* ---- the table ------------------------------------------------------------------------- */

/* file_type is llama.cpp's enum llama_ftype (ALL_F32 0, MOSTLY_F16 1, MOSTLY_Q8_0 7,
 * MOSTLY_BF16 32). */
/* ggml type ids (ggml.h enum ggml_type). */
enum { GGML_F32 = 0, GGML_F16 = 1, GGML_Q8_0 = 8, GGML_BF16 = 30 };

static const wtype_traits table[WTYPE_COUNT] = {
    [WTYPE_F32] = {.name = "f32",
                   .ggml_type = GGML_F32,
                   .block = 1,
                   .block_bytes = 4,
                   .align = 4,
                   .file_type = 0,
                   .to_float = f32_to_float,
                   .exact.isa = {[KERN_ISA_AVX2] = KERN_X86_FN(kern_avx2_f32),
                                 [KERN_ISA_AVX512] = KERN_X86_FN(kern_avx512_f32)}},
    [WTYPE_F16] = {.name = "f16",
                   .ggml_type = GGML_F16,
                   .block = 1,
                   .block_bytes = 2,
                   .align = 2,
                   .file_type = 1,
                   .to_float = f16_to_float,
                   .exact.isa = {[KERN_ISA_AVX512] = KERN_X86_FN(kern_avx512_f16)}},
    [WTYPE_BF16] = {.name = "bf16",
                    .ggml_type = GGML_BF16,
                    .block = 1,
                    .block_bytes = 2,
                    .align = 2,
                    .file_type = 32,
                    .to_float = bf16_to_float,
                    .exact.isa = {[KERN_ISA_AVX512] = KERN_X86_FN(kern_avx512_bf16)}},
    [WTYPE_Q8_0] = {.name = "q8_0",
                    .ggml_type = GGML_Q8_0,
                    .block = 32,
                    .block_bytes = 34,
                    .align = 2,
                    .file_type = 7,
                    .to_float = q8_0_to_float,
                    .exact.isa = {[KERN_ISA_AVX512] = KERN_X86_FN(kern_avx512_q8_0)}},
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
