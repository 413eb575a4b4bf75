/* convert.h: writing a model and its vocabulary as a GGUF file (what `decbench convert` does).
 *
 * The source is any model model_open() reads (llama2.c checkpoints, legacy or version 1, real
 * or synthetic; or a GGUF file, to change its weight type) plus a SentencePiece vocabulary (a
 * llama2.c tokenizer file, or a GGUF file's tokenizer.ggml.* keys). The result is a GGUF v3
 * file laid out as llama.cpp writes Llama models: general.architecture = "llama", the llama.*
 * hyper-parameters, the tokenizer.ggml.* vocabulary (model "llama", '▁' for spaces, scores,
 * token types, BOS/EOS/UNK ids, add_bos_token) and llama.cpp's tensor names (token_embd,
 * blk.N.attn_q, ..., output_norm, output). No weight is permuted: llama2.c checkpoints already
 * rotate adjacent pairs in RoPE, which is llama.cpp's convention for this architecture.
 *
 * Weight matrices are stored in the chosen type; the RMSNorm vectors stay F32 (as llama.cpp
 * keeps every 1-D tensor). Narrowing is each type's from_float (wtype.h), rounding to nearest:
 *   f16, bf16  each value on its own, ties to even (wtype_f32_to_f16 / wtype_f32_to_bf16);
 *   q8_0       per block of 32 values: d = max|x| / 127, q = x * (1/d) rounded (ggml's
 *              quantize_row_q8_0_ref, except that ggml's roundf breaks ties away from zero and
 *              this rounds them to even), stored as {f16(d), 32 x int8};
 *   q4_0       ggml's quantize_row_q4_0_ref exactly (byte-identical to llama-quantize);
 *   q4_k, q6_k simpler than llama.cpp's (wtype_blocks.c says how): same format, same exact
 *              dequantization, somewhat larger error.
 * The block structure needs rows whose length is a multiple of the block (32; 256 for the
 * k-quants): other matrices are stored in the fallback type instead (or refused), and the
 * report says which.
 * A matrix whose stored type equals the source's is referenced in place, never copied, so
 * f32 -> f32 is a bit-for-bit copy. Non-finite weights and values beyond f16's range are
 * refused when narrowing, naming the tensor and row.
 *
 * Library code: nothing is printed; failures return -1 with one line in err (ERR_LEN). */
#ifndef MODEL_CONVERT_H
#define MODEL_CONVERT_H

#include <stdint.h>

#include "model/arch.h"
#include "model/convert/convert_mix.h"
#include "model/formats/gguf.h"
#include "model/model.h"

/* ---- vocabulary ------------------------------------------------------------------------ */

/* A SentencePiece vocabulary in GGUF's form: pieces with '▁' for spaces, scores, token types
 * (GGUF ids: 1 normal, 2 unknown, 3 control, 6 byte), special ids. */
typedef struct convert_vocab convert_vocab;

/* Loads a llama2.c tokenizer file (its BOS/EOS pieces "\n<s>\n" / "\n</s>\n" become "<s>" /
 * "</s>" as in Llama's own vocabulary, id 0 is unknown, <0xXX> pieces are bytes, empty pieces
 * control, the rest normal) or a GGUF file's vocabulary of any type (SentencePiece, byte-level
 * BPE, ...: its tokenizer.* pairs are copied as they are). Detected by content. */
int convert_vocab_load(convert_vocab **out, const char *path, char *err);
void convert_vocab_free(convert_vocab *v);
int convert_vocab_size(const convert_vocab *v);
int convert_vocab_eos(const convert_vocab *v); /* -1: a GGUF vocabulary without one */
const char *convert_vocab_path(const convert_vocab *v); /* the file it was read from */

/* Adds v's tokenizer.* keys to w, with `eos` as the EOS id (none if < 0) and n >= its size
 * tokens: the rows past its size are "[PADi]" tokens of type unused, as llama.cpp's converter pads
 * vocabularies to the embedding's rows. -1 (nothing added) if n is smaller than its size. */
int convert_vocab_write(const convert_vocab *v, gguf_writer *w, int eos, int n);

/* ---- quantizers (one row of n values; n a multiple of the type's block) ------------------ */

void convert_row_f16(const float *x, uint16_t *y, int n);
void convert_row_bf16(const float *x, uint16_t *y, int n);
/* y receives n / 32 blocks of 34 bytes (the q8_0 row of the weight-type table). */
void convert_row_q8_0(const float *x, void *y, int n);

/* ---- conversion ------------------------------------------------------------------------ */

/* Narrows row r of tensor `name` (n values at x) to type t at out with the type's from_float,
 * refusing what the type cannot hold: non-finite values, and anything that comes back
 * non-finite from the type's own to_float (f16 values past 65504, block scales beyond f16's
 * range: q8_0's max|x| / 127, q4_0's max|x| / 8, ...). back: n floats of scratch; src names
 * the model in messages. Used by convert_gguf and model_requantize (model/convert/requant.h). */
int convert_narrow_row(const char *src, const char *name, int r, wtype t, const float *x, int n,
                       void *out, float *back, char *err);

/* What was written. */
typedef struct {
    int n_matrices;          /* 2-D tensors written */
    int n_fallback;          /* of those, stored in the fallback type */
    wtype fallback_type;     /* which */
    char first_fallback[64]; /* the first such tensor's name, and its row length */
    int first_fallback_cols;
    uint64_t weight_bytes; /* tensor data, padding excluded */
} convert_report;

/* Adds general.* and the architecture's hyper-parameter keys of c to w, as llama.cpp's converter
 * writes them (key_length only when the head size is not dim / n_heads, linear RoPE scaling only
 * when there is any). */
void convert_write_config(gguf_writer *w, const model_config *c, const model_arch *a,
                          const convert_opts *o);

/* Writes m with vocabulary v to path (through path.tmp, renamed when complete; nothing is
 * left behind on failure). v must have m's vocabulary size. The EOS id written is the token
 * that ends generation for m (m->cfg.end_id): llama2.c models end a text with BOS (1), so
 * their GGUF says eos_token_id = 1 and llama.cpp, like llama2.c's run.c and decbench, stops
 * there. report may be NULL. m and v are only read. */
int convert_gguf(const model *m, const convert_vocab *v, const convert_opts *o, const char *path,
                 convert_report *report, char *err);

#endif
