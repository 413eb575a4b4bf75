/* kern_traits.h: what computes with each weight type, one row per type of
 * model/weights/wtype.h (its storage row): the exact mode's tile per instruction set and the
 * int8 mode's decoder, tiles and packed layout (kernels.h defines both modes). Kept apart from
 * the storage table as ggml keeps type_traits_cpu apart from type_traits, so that readers,
 * converters and dequantizers need nothing of the kernels. */
#ifndef MODEL_KERN_TRAITS_H
#define MODEL_KERN_TRAITS_H

#include "model/weights/wtype.h"

/* The instruction sets a kernel may be written for. Every type runs on every ISA: a row
 * without a tile for an ISA goes through that ISA's generic path (rows widened with to_float,
 * then its f32 tile), which gives the same bits, only slower. */
typedef enum {
    KERN_ISA_SCALAR = 0,
    KERN_ISA_AVX2 = 1,
    KERN_ISA_AVX512 = 2,
    KERN_ISA_COUNT
} kern_isa;

/* A matrix kernel for one type: y[t * ldy + r] = dot(row r of w, x + t * ldx) for r in
 * [0, rows), t in [0, T); rows are ldw bytes apart and K values long. `streams` says whether
 * the whole matrix (not just these rows) is too big for the cache, which decides the tiling
 * (kern_rowgroup, kernels_isa.h). */
typedef void (*wtype_matmul_fn)(const unsigned char *w, size_t ldw, int rows, int K, const float *x,
                                size_t ldx, int T, float *y, size_t ldy, int streams);

/* The kernels of one kernel mode, per ISA (NULL: the ISA's generic path). */
typedef struct {
    wtype_matmul_fn isa[KERN_ISA_COUNT];
} wtype_kernels;

/* An int8-mode kernel (kernels.h, "the int8 mode"): as wtype_matmul_fn, with the input rows
 * quantized (kern_act_quantize) lda bytes apart at xa. */
typedef void (*wtype_matmul_int8_fn)(const unsigned char *w, size_t ldw, int rows, int K,
                                     const void *xa, size_t lda, int T, float *y, size_t ldy,
                                     int streams);

/* A one-row int8 tile over packed rows (kernels.h, "packed rows"): `groups` groups of
 * pack_rows rows from p (pack_rows x ldw bytes each) against one activation row xa, results
 * y[0 .. pack_rows x groups). */
typedef void (*wtype_packed_int8_fn)(const unsigned char *p, size_t ldw, int groups, int K,
                                     const void *xa, float *y, int streams);

/* The int8 mode of a type. to_int8 (the scalar reference) decodes n values (whole blocks) at src
 * into the integers w, a float scale per 4 values (scale4[n / 4]) and, when has_min, a float
 * min per 32 values (min32[n / 32]), as kernels.h defines them for the type. isa[]: the tiles
 * (NULL: the ISA runs the next lower one's; the AVX-512 tile needs VNNI, else AVX2's runs). */
typedef struct {
    void (*to_int8)(const void *src, int8_t *w, float *scale4, float *min32, int n);
    int has_min;
    wtype_matmul_int8_fn isa[KERN_ISA_COUNT];
    /* Packed rows: pack lays out pack_rows rows of n values (ldw bytes apart from w) at dst,
     * in pack_rows x ldw bytes; packed, the one-row tile that reads them, replaces
     * isa[packed_isa] at T = 1. pack NULL: the type has no packed layout. */
    void (*pack)(const unsigned char *w, size_t ldw, int n, unsigned char *dst);
    int pack_rows;
    kern_isa packed_isa;
    wtype_packed_int8_fn packed;
} wtype_int8;

/* An int8b-mode tile (kernels.h, "the int8b mode"): `groups` groups of 16 rows of a 16-row copy
 * (kernels.h) from p, gbytes apart, rows of K values, against the T activation rows at xa
 * (kern_act8b_quantize): y[t * ldy + 16 g + i] for row i of group g. */
typedef void (*wtype_matmul_int8b_fn)(const unsigned char *p, size_t gbytes, int groups, int K,
                                      const void *xa, int T, float *y, size_t ldy);

typedef struct {
    /* the exact kernels (kernels.h's canonical order) */
    wtype_kernels exact;
    /* the int8 mode (kernels.h); to_int8 NULL: the type has none and runs its exact kernels */
    wtype_int8 int8;
    /* the int8b mode's tiles (NULL: the ISA runs the next lower one's; the AVX-512 tiles need
     * VNNI; none at all: the scalar reference), for the types with an int8 row */
    wtype_matmul_int8b_fn int8b[KERN_ISA_COUNT];
    /* the AVX2 tile with AVX-VNNI's vpdpbusd, which the AVX2 ISA runs on a CPU that has it (same
     * bits as int8b[KERN_ISA_AVX2]; kern_avxvnni_use) */
    wtype_matmul_int8b_fn int8b_avxvnni;
} kern_traits;

/* The compute row of t (t must be a valid wtype). */
const kern_traits *kern_traits_get(wtype t);

#endif
