/* requant.h: a model's weights requantized in memory, for quantized self-speculation
 * (`--draft self:TYPE`): the draft is the target itself with its matrices stored in a smaller
 * weight type (q8_0, q4_0, q4_k, ...), so no second file is needed. This is what Intel's
 * ML-SpecQD (arXiv 2503.13565) and IPEX-LLM's self-speculative decoding do on CPUs: a pass of
 * the quantized copy streams fewer bytes, and its tokens agree with the target's most of the
 * time (the target verifies every one of them, so the output stays exactly greedy's).
 *
 * Every matrix is narrowed as `decbench convert --type TYPE` would write it (convert.h): each
 * row widened to f32 and passed through the type's from_float (convert_narrow_row), a matrix
 * whose rows the type's block does not divide stored in the fallback type (f16 by default, as
 * convert and llama.cpp's converter do), a matrix already of the type referenced in place, a
 * tied classifier kept tied. So a self:TYPE draft computes bit for bit what the GGUF file
 * `decbench convert --type TYPE` writes computes (tests/test_requant.c). Vectors (norms,
 * biases) are referenced, never copied.
 *
 * Library code: nothing is printed; failures return -1 with one line in err (ERR_LEN). */
#ifndef MODEL_REQUANT_H
#define MODEL_REQUANT_H

#include "model/convert.h"

/* A copy of src whose weight matrices are stored in type t (one that convert writes: its row
 * has from_float), rows t cannot hold in fallback fb. The copy owns its matrices (one heap
 * block) and its layer table, and points into src for everything else: src must outlive it;
 * close it with model_close. Its format is "requantized", its path "self:TYPE of SRC_PATH".
 * rep (may be NULL) receives what was done: matrices, how many fell back and the first. */
int model_requantize(model **out, const model *src, wtype t, convert_fallback fb,
                     convert_report *rep, char *err);

#endif
