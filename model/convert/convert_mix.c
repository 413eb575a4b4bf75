/* convert_mix.c: the storage type of each matrix convert and synth write: one type for every
 * matrix, or llama-quantize's per-tensor mix of a file type (Q4_0, Q4_K_M, Q6_K, Q8_0).
 *
 * The mixes follow llama.cpp's llama_tensor_get_type (src/llama-quant.cpp, Feb 2025) for dense
 * models without an importance matrix, for the file types whose types decbench can write:
 *   - output.weight (or token_embd.weight when the classifier is tied to it): q6_k, or q8_0 when
 *     its rows are not whole blocks of the file's type, or when the file type is Q8_0;
 *   - Q4_K_M: attn_v and ffn_down of the layers where use_more_bits holds (the first and last
 *     eighth of the layers and every third one between) q6_k, the rest q4_k;
 *   - every other matrix the file type's own type;
 *   - a matrix whose rows are not whole blocks of its type falls back as llama-quantize's
 *     convert_incompatible_tensor does: q4_k to q5_0, q6_k to q8_0, then f16 if the rows are not
 *     whole 32-value blocks either (where llama-quantize gives up on q4_0 and q8_0, f16 too).
 * tests/test_convert.c checks the types against llama-quantize's own kq_*.gguf and xs_*.gguf
 * files tensor by tensor. */
#include <stdio.h>
#include <string.h>

#include "model/convert/convert_mix.h"
#include "util/err.h"

int convert_type_parse(const char *s, wtype *out) {
    wtype t;
    if (wtype_parse(s, &t) || !wtype_get(t)->from_float) return -1;
    *out = t;
    return 0;
}

void convert_type_list(char *out, size_t n, const char *last_sep) {
    int count = 0, done = 0;
    for (int t = 0; t < WTYPE_COUNT; t++) count += wtype_get((wtype)t)->from_float != NULL;
    size_t len = 0;
    out[0] = 0;
    for (int t = 0; t < WTYPE_COUNT && len < n; t++) {
        if (!wtype_get((wtype)t)->from_float) continue;
        const char *sep = done == 0 ? "" : done == count - 1 ? last_sep : ", ";
        len += (size_t)snprintf(out + len, n - len, "%s%s", sep, wtype_name((wtype)t));
        done++;
    }
}

struct convert_mix {
    const char *name; /* llama-quantize's name of the file type */
    wtype base;       /* its type for the other matrices */
    int more_bits;    /* 1: attn_v and ffn_down use q6_k where use_more_bits holds (_M) */
    int file_type;    /* llama.cpp's llama_ftype */
};

static const convert_mix mixes[] = {
    {"Q4_0", WTYPE_Q4_0, 0, 2},
    {"Q8_0", WTYPE_Q8_0, 0, 7},
    {"Q4_K_M", WTYPE_Q4_K, 1, 15},
    {"Q6_K", WTYPE_Q6_K, 0, 18},
};
#define N_MIXES (sizeof mixes / sizeof mixes[0])

int convert_scheme_parse(const char *s, convert_opts *o) {
    for (size_t i = 0; i < N_MIXES; i++)
        if (strcmp(s, mixes[i].name) == 0) {
            o->type = mixes[i].base;
            o->mix = &mixes[i];
            return 0;
        }
    o->mix = NULL;
    return convert_type_parse(s, &o->type);
}

void convert_scheme_list(char *out, size_t n) {
    char types[128];
    convert_type_list(types, sizeof types, ", ");
    size_t len = (size_t)snprintf(out, n, "a type (%s) or a llama-quantize mix (", types);
    for (size_t i = 0; i < N_MIXES && len < n; i++)
        len += (size_t)snprintf(out + len, n - len, "%s%s", i ? ", " : "", mixes[i].name);
    if (len < n) snprintf(out + len, n - len, ")");
}

const char *convert_scheme_name(const convert_opts *o) {
    return o->mix ? o->mix->name : wtype_name(o->type);
}

int convert_file_type(const convert_opts *o) {
    return o->mix ? o->mix->file_type : wtype_get(o->type)->file_type;
}

/* llama.cpp's use_more_bits(i_layer, n_layers). */
static int more_bits(int i, int n) {
    return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

static int whole(wtype t, int cols) {
    return cols % wtype_get(t)->block == 0;
}

static wtype mix_type(const convert_mix *x, arch_tensor t, int layer, int n_layers, int tied,
                      int cols, int *fallback) {
    wtype want = x->base;
    if (t == ARCH_T_OUTPUT || (tied && t == ARCH_T_TOKEN_EMBD))
        want = !whole(x->base, cols) || x->base == WTYPE_Q8_0 ? WTYPE_Q8_0 : WTYPE_Q6_K;
    else if (x->more_bits && (t == ARCH_T_ATTN_V || t == ARCH_T_FFN_DOWN) &&
             more_bits(layer, n_layers))
        want = WTYPE_Q6_K;
    if (whole(want, cols)) return want;
    *fallback = 1;
    wtype next = want == WTYPE_Q4_K ? WTYPE_Q5_0 : want == WTYPE_Q6_K ? WTYPE_Q8_0 : WTYPE_F16;
    return whole(next, cols) ? next : WTYPE_F16;
}

int convert_matrix_type(const convert_opts *o, arch_tensor t, int layer, int n_layers, int tied,
                        int cols, wtype *out, int *fallback) {
    *fallback = 0;
    if (o->mix) {
        *out = mix_type(o->mix, t, layer, n_layers, tied, cols, fallback);
        return 0;
    }
    *out = o->type;
    if (whole(o->type, cols)) return 0;
    if (o->fallback == CONVERT_FALLBACK_NONE) return -1;
    *fallback = 1;
    *out = o->fallback == CONVERT_FALLBACK_F32 ? WTYPE_F32 : WTYPE_F16;
    return 0;
}
