/* wtype.h: the weight storage types, one row each in a traits table (after ggml's
 * ggml_type_traits): name, ggml type id, block geometry, the exact row-to-float and the
 * quantizer. What computes with a type (its tiles per instruction set and kernel mode) is a
 * second table, model/kernels/kern_traits.h, as ggml keeps type_traits_cpu apart from
 * type_traits: storage needs nothing of the kernels.
 *
 * Everything that depends on a weight type's storage reads its row: the GGUF loader (which ggml
 * ids load), `decbench convert` (which types it writes), the tests (every row is held to its
 * reference). Adding a type is adding an enum value, its row and its
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

/* A row-major matrix of `rows` rows of `cols` values each in storage type `type`; rows are
 * contiguous, cols is a multiple of the type's block and a row is cols / block blocks laid out
 * as in GGUF (q8_0: {fp16 scale, 32 x int8}, 34 bytes). */
typedef struct {
    wtype type;
    const void *data;
    int rows, cols;
    /* The int8 mode's packed copy of the first rows / G x G rows, G the type's pack_rows
     * (kernels.h, "packed rows"; forward.c makes it), or NULL. */
    const unsigned char *packed;
    /* The int8b mode's copy with 16 rows interleaved (kernels.h, "the 16-row copy";
     * forward.c makes it), or NULL. */
    const unsigned char *r16;
} wmat;

/* IEEE half / bfloat16 conversions as ggml makes them (half.c): exact widening; narrowing
 * rounds to nearest even. */
float wtype_f16_to_f32(uint16_t h);
uint16_t wtype_f32_to_f16(float f);
float wtype_bf16_to_f32(uint16_t h);
uint16_t wtype_f32_to_bf16(float f);

#endif
