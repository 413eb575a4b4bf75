/* model.c: the model in memory: configuration checks, sizes and release (model_close). The
 * readers that fill it live in model/formats/. */
#include "model/model.h"

#include <float.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "model/arch.h"
#include "util/err.h"
#include "util/file.h"

void model_config_derive(model_config *c) {
    /* The fields may come straight from a file header (INT_MIN, INT_MAX): the product is
     * formed in 64 bits, and a value an int cannot hold becomes 0 (model_config_check then
     * names the field at fault). */
    if (c->head_size <= 0) c->head_size = c->n_heads > 0 ? c->dim / c->n_heads : 0;
    int64_t kv_dim = (int64_t)c->n_kv_heads * c->head_size;
    c->kv_dim = kv_dim >= 0 && kv_dim <= INT_MAX ? (int)kv_dim : 0;
    if (c->rope_dim <= 0) c->rope_dim = c->head_size;
    if (c->rope_theta <= 0) c->rope_theta = 10000.0f;
    if (c->rope_factor <= 0) c->rope_factor = 1.0f;
    if (c->rope_attn_factor <= 0) c->rope_attn_factor = 1.0f;
    if (c->ctx_train <= 0) c->ctx_train = c->seq_len;
    if (c->norm_eps <= 0) c->norm_eps = 1e-5f;
    if (c->bos_id == 0 && c->eos_id == 0) {
        c->bos_id = 1;
        c->eos_id = 2;
        c->end_id = 1; /* llama2.c models end a story by emitting BOS */
    }
}

int model_config_check(const model_config *c, const char *what, char *err) {
    struct {
        const char *name;
        int value, max;
    } f[] = {{"dim", c->dim, MODEL_MAX_DIM},
             {"hidden_dim", c->hidden_dim, MODEL_MAX_HIDDEN},
             {"n_layers", c->n_layers, MODEL_MAX_LAYERS},
             {"n_heads", c->n_heads, MODEL_MAX_HEADS},
             {"n_kv_heads", c->n_kv_heads, MODEL_MAX_HEADS},
             {"vocab_size", c->vocab_size, MODEL_MAX_VOCAB},
             {"seq_len", c->seq_len, MODEL_MAX_SEQ}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (f[i].value <= 0 || f[i].value > f[i].max)
            return err_set(err, "%s: header field %s = %d, expected 1..%d", what, f[i].name,
                           f[i].value, f[i].max);
    /* head_size is dim / n_heads unless a GGUF file gives attention.key_length (Qwen3,
     * Mistral-Nemo-style files): only a derived head size needs the division to be exact. */
    if (c->dim % c->n_heads && c->head_size == c->dim / c->n_heads)
        return err_set(err, "%s: dim %d is not divisible by n_heads %d", what, c->dim, c->n_heads);
    if (c->n_heads % c->n_kv_heads)
        return err_set(err, "%s: n_heads %d is not divisible by n_kv_heads %d", what, c->n_heads,
                       c->n_kv_heads);
    if (c->head_size <= 0 || c->head_size > MODEL_MAX_HEAD ||
        (int64_t)c->n_heads * c->head_size > MODEL_MAX_DIM)
        return err_set(err, "%s: head size %d x %d heads, expected 1..%d and at most %d in all",
                       what, c->head_size, c->n_heads, MODEL_MAX_HEAD, MODEL_MAX_DIM);
    if (c->head_size % 2)
        return err_set(err, "%s: head size %d is odd (RoPE rotates pairs)", what, c->head_size);
    if (c->rope_dim <= 0 || c->rope_dim > c->head_size || c->rope_dim % 2)
        return err_set(err, "%s: rope dimension %d, expected an even number <= head size %d", what,
                       c->rope_dim, c->head_size);
    if (c->ctx_train < c->seq_len || c->ctx_train > MODEL_MAX_SEQ)
        return err_set(err, "%s: context %d of a trained context %d", what, c->seq_len,
                       c->ctx_train);
    /* NaN and infinity pass "> 0" (and model_config_derive's "<= 0" defaults): every RoPE
     * angle or every RMSNorm would be NaN */
    const struct {
        const char *name;
        float value;
    } g[] = {
        {"rope_theta", c->rope_theta},
        {"rope_factor", c->rope_factor},
        {"rope_attn_factor", c->rope_attn_factor},
        {"norm_eps", c->norm_eps}};
    for (size_t i = 0; i < sizeof g / sizeof g[0]; i++)
        if (!(g[i].value > 0.0f && g[i].value <= FLT_MAX))
            return err_set(err, "%s: %s = %g, expected a positive finite number", what, g[i].name,
                           (double)g[i].value);
    return 0;
}

int model_find_nonfinite(const model *m, char *out, size_t n) {
    const model_config *c = &m->cfg;
    for (int t = 0; t < ARCH_T_COUNT; t++) {
        const arch_tensor_info *ti = arch_tensor_get((arch_tensor)t);
        for (int l = 0; l < (ti->per_layer ? c->n_layers : 1); l++) {
            const wmat *w = arch_matrix(m, (arch_tensor)t, l), *vec = NULL;
            const float *const *v = arch_vector(m, (arch_tensor)t, l);
            wmat as_matrix = {WTYPE_F32, v ? *v : NULL, 1, arch_dim_value(c, ti->cols), NULL, NULL};
            if (v) vec = w = &as_matrix;
            if (!w->data || (t == ARCH_T_OUTPUT && w->data == m->tok_embd.data)) continue;
            int which;
            float value;
            long long i = wtype_find_nonfinite(
                w->type, w->data, (size_t)w->rows * (w->cols / wtype_get(w->type)->block), &which,
                &value);
            if (i < 0) continue;
            char name[64], what[160];
            arch_tensor_name((arch_tensor)t, l, name, sizeof name);
            if (vec)
                snprintf(what, sizeof what, "value %lld is %s", i,
                         value != value ? "NaN"
                         : value > 0    ? "+inf"
                                        : "-inf");
            else
                wtype_describe_nonfinite(w->type, w->cols, i, which, value, what, sizeof what);
            snprintf(out, n, "tensor '%s' (%s): %s", name, wtype_name(w->type), what);
            return 1;
        }
    }
    return 0;
}

/* Every matrix and vector of m once (a tied classifier is the embedding). */
static size_t vec_bytes(const float *v, int n) {
    return v ? sizeof(float) * (size_t)n : 0;
}

static size_t mat_bytes(const wmat *w) {
    return wtype_row_bytes(w->type, w->cols) * (size_t)w->rows;
}

size_t model_weight_bytes(const model *m) {
    const model_config *c = &m->cfg;
    int q = c->n_heads * c->head_size;
    size_t b = mat_bytes(&m->tok_embd) + vec_bytes(m->rms_final, c->dim) +
               vec_bytes(m->rope_freqs, c->rope_dim / 2);
    for (int l = 0; l < c->n_layers; l++) {
        const model_layer *L = &m->layers[l];
        const wmat *w[MODEL_LAYER_MATS];
        model_layer_mats(L, w);
        for (int i = 0; i < MODEL_LAYER_MATS; i++) b += mat_bytes(w[i]);
        b += vec_bytes(L->rms_att, c->dim) + vec_bytes(L->rms_ffn, c->dim);
        b += vec_bytes(L->bq, q) + vec_bytes(L->bk, c->kv_dim) + vec_bytes(L->bv, c->kv_dim);
        b += vec_bytes(L->q_norm, c->head_size) + vec_bytes(L->k_norm, c->head_size);
    }
    if (m->wcls.data != m->tok_embd.data) b += mat_bytes(&m->wcls);
    return b;
}

size_t model_param_count(const model *m) {
    const model_config *c = &m->cfg;
    size_t q = (size_t)c->n_heads * c->head_size, d = (size_t)c->dim, kv = (size_t)c->kv_dim;
    size_t per_layer = 2 * d * q + 2 * d * kv + 3 * d * c->hidden_dim + 2 * d;
    const model_layer *L = c->n_layers > 0 ? &m->layers[0] : NULL;
    if (L && L->bq) per_layer += q + 2 * kv;
    if (L && L->q_norm) per_layer += 2 * (size_t)c->head_size;
    size_t n = (size_t)c->vocab_size * d + per_layer * c->n_layers + d;
    if (m->rope_freqs) n += (size_t)c->rope_dim / 2;
    if (m->wcls.data != m->tok_embd.data) n += (size_t)c->vocab_size * d;
    return n;
}

int model_set_context(model *m, int n, char *err) {
    if (n < 1 || n > m->cfg.ctx_train)
        return err_set(err, "--ctx %d: %s was trained for a context of 1..%d tokens", n, m->path,
                       m->cfg.ctx_train);
    m->cfg.seq_len = n;
    return 0;
}

/* The KV cache's types: a row's storage type has its exact widening (to_float) in the kernels
 * and its rounding (from_float) where forward.c stores a pass's keys and values. */
static const kv_type_row kv_types[KV_TYPE_COUNT] = {
    [KV_F32] = {"f32", WTYPE_F32, "f32 (default: every bit the pass computed, 4 bytes a value)"},
    [KV_F16] = {"f16", WTYPE_F16,
                "f16 (IEEE half, rounded to nearest even, as llama.cpp's default cache: half the "
                "memory and traffic, other logits)"},
};

const kv_type_row *kv_type_get(kv_type t) {
    return (int)t >= 0 && t < KV_TYPE_COUNT ? &kv_types[t] : NULL;
}

const char *kv_type_name(kv_type t) {
    return kv_type_get(t) ? kv_types[t].name : "?";
}

int kv_type_parse(const char *s, kv_type *out) {
    for (int i = 0; s && i < KV_TYPE_COUNT; i++)
        if (strcmp(s, kv_types[i].name) == 0) {
            *out = (kv_type)i;
            return 0;
        }
    return -1;
}

size_t kv_type_bytes(kv_type t) {
    return wtype_row_bytes(kv_types[t].storage, 1);
}

void model_set_kv(model *m, kv_type t) {
    m->kv = t;
}

void model_pad_logits(model *m, int width) {
    m->logits_width = width;
}

int model_logits_width(const model *m) {
    return m->logits_width > 0 ? m->logits_width : m->cfg.vocab_size;
}

void model_close(model *m) {
    if (!m) return;
    if (m->map) munmap(m->map, m->map_size);
    if (m->release) m->release(m->release_arg);
    free(m->heap);
    free(m->packed_heap);
    free(m->r16_heap);
    free(m->layers);
    free(m);
}
