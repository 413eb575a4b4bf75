/* requant.h: a model's weights requantized in memory, for quantized self-speculation
 * (`--draft self:TYPE`): the draft is the target itself with its matrices stored in a smaller
 * weight type (q8_0, q4_0, q4_k, ...), so no second file is needed. This is what Intel's
 * ML-SpecQD (arXiv 2503.13565) and IPEX-LLM's self-speculative decoding do on CPUs: a pass of
 * the quantized copy streams fewer bytes, and its tokens agree with the target's most of the
 * time (the target verifies every one of them, so the output stays exactly greedy's).
 *
 * Every matrix is narrowed as `decbench convert --type TYPE` would write it (convert.h): in the
 * type convert_matrix_type picks (TYPE, or a llama-quantize mix's type for that tensor: self:
 * Q4_K_M), each row widened to f32 and passed through the type's from_float
 * (convert_narrow_row), a matrix whose rows the type's block does not divide stored in the
 * fallback type (f16 by default, as convert and llama.cpp's converter do), a matrix already of
 * its type referenced in place, a tied classifier kept tied. So a self:TYPE draft computes bit
 * for bit what the GGUF file `decbench convert --type TYPE` writes computes
 * (tests/test_requant.c). Vectors (norms, biases) are referenced, never copied.
 *
 * Library code: nothing is printed; failures return -1 with one line in err (ERR_LEN). */
#ifndef MODEL_REQUANT_H
#define MODEL_REQUANT_H

#include "model/convert/convert.h"

/* A copy of src whose weight matrices are stored as o says (o->type, o->mix and o->fallback,
 * as convert_scheme_parse sets them: a type convert writes, or a llama-quantize mix). The copy
 * owns its matrices (one heap block) and its layer table, and points into src for everything
 * else: src must outlive it; close it with model_close. Its format is "requantized", its path
 * "self:NAME of SRC_PATH". rep (may be NULL) receives what was done: matrices, how many fell
 * back and the first. */
int model_requantize(model **out, const model *src, const convert_opts *o, convert_report *rep,
                     char *err);

#endif
