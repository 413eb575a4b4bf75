/* wtype_blocks.h: the block types' exact dequantizers and the quantizers (internal to model/;
 * the weight-type table in wtype.c names them). n is a multiple of the type's block. */
#ifndef MODEL_WTYPE_BLOCKS_H
#define MODEL_WTYPE_BLOCKS_H

#include <stddef.h>
#include <stdint.h>

#include "model/weights/wtype.h"

void wtype_q4_0_to_float(const void *src, float *y, int n);
void wtype_q4_1_to_float(const void *src, float *y, int n);
void wtype_q5_0_to_float(const void *src, float *y, int n);
void wtype_q5_1_to_float(const void *src, float *y, int n);
void wtype_q2_k_to_float(const void *src, float *y, int n);
void wtype_q3_k_to_float(const void *src, float *y, int n);
void wtype_q4_k_to_float(const void *src, float *y, int n);
void wtype_q5_k_to_float(const void *src, float *y, int n);
void wtype_q6_k_to_float(const void *src, float *y, int n);

/* Shared with the SIMD tiles: q3_k's 16 scales minus 32; q4_k / q5_k sub-block j's scale and
 * min. */
void wtype_q3_k_scales(const unsigned char *s, int out[16]);
void wtype_k4_scale_min(const unsigned char *s, int j, int *sc, int *m);

/* The int8 mode's decoders (kernels.h, "the int8 mode"; kern_traits.h's to_int8). */
void wtype_q8_0_to_int8(const void *src, int8_t *w, float *scale4, float *min32, int n);
void wtype_q4_0_to_int8(const void *src, int8_t *w, float *scale4, float *min32, int n);
void wtype_q4_0_pack8(const unsigned char *w, size_t ldw, int n, unsigned char *dst);
void wtype_q4_k_pack8(const unsigned char *w, size_t ldw, int n, unsigned char *dst);
void wtype_q6_k_pack8(const unsigned char *w, size_t ldw, int n, unsigned char *dst);
void wtype_q5_0_to_int8(const void *src, int8_t *w, float *scale4, float *min32, int n);
void wtype_q4_1_to_int8(const void *src, int8_t *w, float *scale4, float *min32, int n);
void wtype_q5_1_to_int8(const void *src, int8_t *w, float *scale4, float *min32, int n);
void wtype_q3_k_to_int8(const void *src, int8_t *w, float *scale4, float *min32, int n);
void wtype_q4_k_to_int8(const void *src, int8_t *w, float *scale4, float *min32, int n);
void wtype_q5_k_to_int8(const void *src, int8_t *w, float *scale4, float *min32, int n);
void wtype_q6_k_to_int8(const void *src, int8_t *w, float *scale4, float *min32, int n);

/* The int8b mode's 16-row copy (kernels.h): whether type t has a layout for it, and one group:
 * `rows` rows (at most 16; the rest of the group is zeros) of n values, ldw bytes apart from w,
 * into 16 x their row bytes at dst. */
int wtype_pack16_supported(wtype t);
void wtype_pack16(wtype t, const unsigned char *w, size_t ldw, int rows, int n,
                  unsigned char *dst);

void wtype_q8_0_from_float(const float *x, void *dst, int n);
void wtype_q4_0_from_float(const float *x, void *dst, int n);
void wtype_q5_0_from_float(const float *x, void *dst, int n);
void wtype_q4_k_from_float(const float *x, void *dst, int n);
void wtype_q6_k_from_float(const float *x, void *dst, int n);

#endif
