/* wtype.h: the weight storage types, one row each in a traits table (after ggml's
 * ggml_type_traits): name, ggml type id, block geometry, exact row-to-float and the matrix
 * kernels of each instruction set.
 *
 * Everything that depends on a weight type reads its row: the GGUF loader (which ggml ids load),
 * the kernels (which tile runs), `decbench convert` (which types it writes), the tests (every
 * row is held to its reference). Adding a type is adding an enum value, its row and its
 * to_float; the kernel tests and the GGUF loader pick it up from the table (ARCHITECTURE.md,
 * "Adding a weight type"). The types are ggml's: f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1
 * and the k-quants q2_k..q6_k (block layouts in wtype_blocks.c).
 *
 * Exactness contract of a row: to_float computes every weight with exactly the float32
 * operations ggml's dequantize_row_* performs for that type, and every kernel of the row forms
 * the same floats before they enter the canonical reduction (kernels.h). So a model stored in
 * any type computes bit for bit what the f32 model of its dequantized weights computes. */
#ifndef MODEL_WTYPE_H
#define MODEL_WTYPE_H

#include <stddef.h>
#include <stdint.h>

/* Storage type of a weight matrix (decbench's numbering, dense; the ggml id is in the row).
 * Kernels read each type in place (no up-conversion of the model). */
typedef enum {
    WTYPE_F32 = 0,
    WTYPE_F16 = 1,
    WTYPE_BF16 = 2,
    WTYPE_Q8_0 = 3,
    WTYPE_Q4_0,
    WTYPE_Q4_1,
    WTYPE_Q5_0,
    WTYPE_Q5_1,
    WTYPE_Q2_K,
    WTYPE_Q3_K,
    WTYPE_Q4_K,
    WTYPE_Q5_K,
    WTYPE_Q6_K,
    WTYPE_COUNT
} wtype;

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

typedef struct {
    const char *name;   /* decbench's name: "q8_0" (convert --type, messages) */
    uint32_t ggml_type; /* GGUF tensor type id */
    int block;          /* values per block (1 for plain floats) */
    int block_bytes;    /* bytes per block */
    int align;          /* alignment of the data the kernels rely on, in bytes */
    int file_type;      /* llama.cpp's general.file_type of a file mostly of this type */
    /* n values (a multiple of block) from blocks at src, exactly as ggml dequantizes them */
    void (*to_float)(const void *src, float *dst, int n);
    /* n values into blocks at dst (`decbench convert`); NULL: decbench does not write it */
    void (*from_float)(const float *src, void *dst, int n);
    /* the exact kernels (kernels.h's canonical order) */
    wtype_kernels exact;
    /* the int8 mode (kernels.h); to_int8 NULL: the type has none and runs its exact kernels */
    wtype_int8 int8;
    /* The f16 scales of a block, which llama.cpp's --check-tensors (ggml_validate_row_data)
     * checks: byte offset and name ("d"; "m" or "dmin"), name NULL past the last. None for the
     * float types, whose values are the weights. */
    struct {
        int at;
        const char *name;
    } scale[2];
} wtype_traits;

/* The row of t (t must be a valid wtype). */
const wtype_traits *wtype_get(wtype t);

/* The type stored as ggml type id g; -1 if decbench does not read it. */
int wtype_from_ggml(uint32_t g, wtype *out);

/* The type named s ("f32", "q8_0", ...); -1 if none. */
int wtype_parse(const char *s, wtype *out);

/* The first of n blocks at data whose scales (wtype_traits.scale) are NaN or infinite: its
 * index, with *which = the scale (0 or 1) and *value = its value; -1 when all are finite. For
 * the float types, the first of n values that is NaN or infinite (*which = 0). Reads every
 * scale (every value) of a chunk of blocks with integer operations only, and looks for the
 * culprit only in a chunk that holds one. */
long long wtype_find_nonfinite(wtype t, const void *data, size_t n, int *which, float *value);

/* What wtype_find_nonfinite found at index i of a matrix of rows of `cols` values, in words
 * (out: n bytes): "block 17 (row 0, columns 544..575) has scale d = NaN", or for a float
 * type "row 3, column 5 is +inf". */
void wtype_describe_nonfinite(wtype t, int cols, long long i, int which, float value, char *out,
                              size_t n);

/* Bytes one row of cols values occupies (cols a multiple of the block). */
size_t wtype_row_bytes(wtype t, int cols);
const char *wtype_name(wtype t);

#endif
