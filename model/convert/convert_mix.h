/* convert_mix.h: the storage type of each matrix `decbench convert` and `decbench synth` write:
 * the types convert can write, and llama-quantize's per-tensor mixes (convert_mix.c says which
 * rules it follows). */
#ifndef MODEL_CONVERT_MIX_H
#define MODEL_CONVERT_MIX_H

#include <stddef.h>

#include "model/arch.h"
#include "model/weights/wtype.h"

/* A type convert can write (its wtype row has from_float): "f32", "f16", "bf16", "q8_0",
 * "q4_0", "q4_k", "q6_k" -> type; -1 otherwise. */
int convert_type_parse(const char *s, wtype *out);
/* Those names for messages, ", "-separated with last_sep before the last ("f32, ... or q6_k"). */
void convert_type_list(char *out, size_t n, const char *last_sep);

/* What to do with a matrix a block type cannot hold (rows not a multiple of its block). */
typedef enum {
    CONVERT_FALLBACK_F16 = 0, /* llama.cpp's convert_hf_to_gguf.py does the same */
    CONVERT_FALLBACK_F32,
    CONVERT_FALLBACK_NONE, /* refuse: the error names the first such tensor */
} convert_fallback;

typedef struct convert_mix convert_mix; /* a llama-quantize file type's mix (convert_mix.c) */

typedef struct {
    wtype type;                /* storage type of the weight matrices */
    convert_fallback fallback; /* for the block types */
    const char *name;          /* general.name; NULL: "llama" */
    const convert_mix *mix;    /* NULL: every matrix in type; else llama-quantize's mix */
} convert_opts;

/* Sets o->type (and o->mix) from a type name ("q4_k": every matrix) or a llama-quantize file
 * type ("Q4_0", "Q4_K_M", "Q6_K", "Q8_0": its per-tensor mix); -1 for anything else. */
int convert_scheme_parse(const char *s, convert_opts *o);
/* Every name convert_scheme_parse accepts, for messages. */
void convert_scheme_list(char *out, size_t n);
/* The name o was parsed from, and llama.cpp's general.file_type for it. */
const char *convert_scheme_name(const convert_opts *o);
int convert_file_type(const convert_opts *o);
/* The type matrix t of layer `layer` (rows of cols values) is stored in; *fallback is 1 when its
 * rows are not whole blocks of the type it would have had. -1: o's fallback is NONE and the rows
 * are not whole blocks. tied: the model has no output.weight. */
int convert_matrix_type(const convert_opts *o, arch_tensor t, int layer, int n_layers, int tied,
                        int cols, wtype *out, int *fallback);

#endif
