/* gguf_model.c: Llama-architecture models from GGUF files (llama.cpp's key and tensor names).
 *
 * Weights stay in the mapping and in their stored type. GGUF lists dimensions fastest first,
 * so a [rows x cols] matrix of model.h is a tensor with ne = {cols, rows}. llama.cpp's
 * converter permutes Q and K so that RoPE rotates adjacent pairs (its "normal" rope mode), the
 * same convention llama2.c checkpoints use, so the forward pass needs no GGUF-specific path.
 *
 * Anything that would change the computation and that this loader does not implement (other
 * architectures, MoE experts, RoPE scaling, separate head sizes, extra tensors such as biases
 * or rope_freqs) is refused with a message rather than silently ignored: the point of the
 * project is exact decoding, and a half-understood model is not exact. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/gguf.h"
#include "model/model.h"
#include "util/err.h"

typedef struct {
    const gguf *g;
    const char *path;
    char *used; /* per tensor: bound to a weight */
    char *err;
} loader;

/* A required u32 config key that must fit in 1..INT_MAX. */
static int key_int(loader *L, const char *key, int *out) {
    uint32_t v;
    if (gguf_get_u32(L->g, key, &v, L->err)) return -1;
    if (v == 0 || v > INT_MAX)
        return err_set(L->err, "%s: %s = %u, expected 1..%d", L->path, key, v, INT_MAX);
    *out = (int)v;
    return 0;
}

static int opt_int(loader *L, const char *key, int *out) {
    return gguf_find_key(L->g, key) < 0 ? 0 : key_int(L, key, out);
}

/* An optional token id (0 allowed). */
static int opt_id(loader *L, const char *key, int *out) {
    uint32_t v;
    if (gguf_find_key(L->g, key) < 0) return 0;
    if (gguf_get_u32(L->g, key, &v, L->err)) return -1;
    if (v > INT_MAX) return err_set(L->err, "%s: %s = %u is out of range", L->path, key, v);
    *out = (int)v;
    return 0;
}

static int opt_f32(loader *L, const char *key, float *out) {
    return gguf_find_key(L->g, key) < 0 ? 0 : gguf_get_f32(L->g, key, out, L->err);
}

/* The tensor `name`, which must be a [rows x cols] matrix (rows 1 for a vector). */
static const gguf_tensor *shaped(loader *L, const char *name, int rows, int cols) {
    const gguf_tensor *t = gguf_find_tensor(L->g, name);
    if (!t) {
        err_set(L->err, "%s: tensor '%s' is missing", L->path, name);
        return NULL;
    }
    if (t->ne[0] != (uint64_t)cols || t->ne[1] != (uint64_t)rows || t->ne[2] != 1 ||
        t->ne[3] != 1) {
        err_set(L->err,
                "%s: tensor '%s' has ne = [%llu, %llu, %llu, %llu], expected [%d, %d] "
                "(columns first)",
                L->path, name, (unsigned long long)t->ne[0], (unsigned long long)t->ne[1],
                (unsigned long long)t->ne[2], (unsigned long long)t->ne[3], cols, rows);
        return NULL;
    }
    L->used[t - gguf_tensor_at(L->g, 0)] = 1;
    return t;
}

static int bind_matrix(loader *L, const char *name, int rows, int cols, wmat *w) {
    const gguf_tensor *t = shaped(L, name, rows, cols);
    if (!t) return -1;
    /* The element alignment the kernels' typed loads rely on (GGUF guarantees it only when
     * general.alignment is a multiple of it). */
    size_t align;
    switch (t->type) {
    case GGUF_TENSOR_F32:
        w->type = WTYPE_F32, align = 4;
        break;
    case GGUF_TENSOR_F16:
        w->type = WTYPE_F16, align = 2;
        break;
    case GGUF_TENSOR_BF16:
        w->type = WTYPE_BF16, align = 2;
        break;
    case GGUF_TENSOR_Q8_0:
        w->type = WTYPE_Q8_0, align = 2;
        break;
    default: {
        const char *tn = gguf_type_name(t->type);
        return err_set(L->err,
                       "%s: tensor '%s' has type %s, which is not supported (F32, F16, "
                       "BF16, Q8_0)",
                       L->path, name, tn ? tn : "?");
    }
    }
    if ((uintptr_t)t->data % align)
        return err_set(L->err, "%s: tensor '%s' data is not %zu-byte aligned", L->path, name,
                       align);
    w->data = t->data;
    w->rows = rows;
    w->cols = cols;
    return 0;
}

/* RMSNorm weights are read as plain floats by the forward pass. */
static int bind_norm(loader *L, const char *name, int dim, const float **out) {
    const gguf_tensor *t = shaped(L, name, 1, dim);
    if (!t) return -1;
    if (t->type != GGUF_TENSOR_F32) {
        const char *tn = gguf_type_name(t->type);
        return err_set(L->err, "%s: tensor '%s' is %s; norm weights must be F32", L->path, name,
                       tn ? tn : "?");
    }
    if ((uintptr_t)t->data % 4)
        return err_set(L->err, "%s: tensor '%s' data is not 4-byte aligned", L->path, name);
    *out = t->data;
    return 0;
}

/* Refuses keys announcing features this loader would otherwise silently ignore. */
static int check_unsupported(loader *L, const model_config *c) {
    uint32_t experts = 0;
    const char *s;
    if (gguf_find_key(L->g, "llama.expert_count") >= 0 &&
        gguf_get_u32(L->g, "llama.expert_count", &experts, L->err))
        return -1;
    if (experts > 0)
        return err_set(L->err,
                       "%s: llama.expert_count = %u: mixture-of-experts models are not "
                       "supported",
                       L->path, experts);
    if (gguf_find_key(L->g, "llama.rope.scaling.type") >= 0) {
        if (gguf_get_str(L->g, "llama.rope.scaling.type", &s, L->err)) return -1;
        if (strcmp(s, "none") != 0)
            return err_set(L->err, "%s: llama.rope.scaling.type = '%.32s' is not supported",
                           L->path, s);
    }
    const char *lens[] = {"llama.attention.key_length", "llama.attention.value_length"};
    for (int i = 0; i < 2; i++) {
        int v = c->head_size;
        if (opt_int(L, lens[i], &v)) return -1;
        if (v != c->head_size)
            return err_set(L->err, "%s: %s = %d differs from embedding_length / head_count = %d",
                           L->path, lens[i], v, c->head_size);
    }
    return 0;
}

static int read_config(loader *L, model_config *c) {
    const char *arch;
    if (gguf_get_str(L->g, "general.architecture", &arch, L->err)) return -1;
    if (strcmp(arch, "llama") != 0)
        return err_set(L->err, "%s: architecture '%.40s' is not supported (only 'llama')", L->path,
                       arch);
    memset(c, 0, sizeof *c);
    if (key_int(L, "llama.context_length", &c->seq_len) ||
        key_int(L, "llama.embedding_length", &c->dim) ||
        key_int(L, "llama.block_count", &c->n_layers) ||
        key_int(L, "llama.feed_forward_length", &c->hidden_dim) ||
        key_int(L, "llama.attention.head_count", &c->n_heads))
        return -1;
    c->n_kv_heads = c->n_heads;
    c->rope_theta = 10000.0f; /* llama.cpp's default when rope.freq_base is absent */
    if (opt_int(L, "llama.attention.head_count_kv", &c->n_kv_heads) ||
        opt_f32(L, "llama.rope.freq_base", &c->rope_theta) ||
        gguf_get_f32(L->g, "llama.attention.layer_norm_rms_epsilon", &c->norm_eps, L->err))
        return -1;
    c->head_size = c->dim / c->n_heads;
    c->rope_dim = c->head_size;
    if (opt_int(L, "llama.rope.dimension_count", &c->rope_dim)) return -1;
    if (!(c->norm_eps > 0.0f) || !(c->rope_theta > 0.0f))
        return err_set(L->err,
                       "%s: layer_norm_rms_epsilon %g and rope.freq_base %g must be "
                       "positive",
                       L->path, (double)c->norm_eps, (double)c->rope_theta);
    /* The vocabulary size is the embedding's row count; llama.vocab_size must agree. */
    const gguf_tensor *emb = gguf_find_tensor(L->g, "token_embd.weight");
    if (!emb) return err_set(L->err, "%s: tensor 'token_embd.weight' is missing", L->path);
    if (emb->ne[1] == 0 || emb->ne[1] > INT_MAX)
        return err_set(L->err, "%s: token_embd.weight has %llu rows", L->path,
                       (unsigned long long)emb->ne[1]);
    c->vocab_size = (int)emb->ne[1];
    int vocab = c->vocab_size;
    if (opt_int(L, "llama.vocab_size", &vocab)) return -1;
    if (vocab != c->vocab_size)
        return err_set(L->err, "%s: llama.vocab_size %d differs from token_embd.weight's %d rows",
                       L->path, vocab, c->vocab_size);
    /* The vocabulary in the same file must match it, or ids it produces would index past
     * the embedding (llama.cpp requires the same equality). */
    uint64_t n_tokens;
    if (gguf_find_key(L->g, "tokenizer.ggml.tokens") >= 0) {
        if (gguf_get_arr_len(L->g, "tokenizer.ggml.tokens", GGUF_STRING, &n_tokens, L->err))
            return -1;
        if (n_tokens != (uint64_t)c->vocab_size)
            return err_set(L->err,
                           "%s: tokenizer.ggml.tokens has %llu tokens but token_embd.weight has "
                           "%d rows",
                           L->path, (unsigned long long)n_tokens, c->vocab_size);
    }
    c->bos_id = 1, c->eos_id = 2;
    if (opt_id(L, "tokenizer.ggml.bos_token_id", &c->bos_id) ||
        opt_id(L, "tokenizer.ggml.eos_token_id", &c->eos_id))
        return -1;
    c->end_id = c->eos_id; /* GGUF (chat/instruct) models end a reply with EOS */
    if (c->bos_id >= c->vocab_size || c->eos_id >= c->vocab_size)
        return err_set(L->err, "%s: BOS %d / EOS %d outside the vocabulary of %d", L->path,
                       c->bos_id, c->eos_id, c->vocab_size);
    if (model_config_check(c, L->path, L->err)) return -1;
    /* Only now: the check bounds n_kv_heads by n_heads, so this cannot overflow (the fuzzer
     * found the overflow with a huge head_count_kv when it was computed before the check). */
    c->kv_dim = c->n_kv_heads * c->head_size;
    return check_unsupported(L, c);
}

static int bind_weights(loader *L, model *m) {
    const model_config *c = &m->cfg;
    char name[64];
    if (bind_matrix(L, "token_embd.weight", c->vocab_size, c->dim, &m->tok_embd) ||
        bind_norm(L, "output_norm.weight", c->dim, &m->rms_final))
        return -1;
    if (gguf_find_tensor(L->g, "output.weight")) {
        if (bind_matrix(L, "output.weight", c->vocab_size, c->dim, &m->wcls)) return -1;
    } else {
        m->wcls = m->tok_embd; /* tied embeddings */
    }
    for (int l = 0; l < c->n_layers; l++) {
        model_layer *y = &m->layers[l];
        struct {
            const char *suffix;
            wmat *w;
            int rows, cols;
        } mats[] = {
            {"attn_q", &y->wq, c->dim, c->dim},
            {"attn_k", &y->wk, c->kv_dim, c->dim},
            {"attn_v", &y->wv, c->kv_dim, c->dim},
            {"attn_output", &y->wo, c->dim, c->dim},
            {"ffn_gate", &y->w1, c->hidden_dim, c->dim},
            {"ffn_down", &y->w2, c->dim, c->hidden_dim},
            {"ffn_up", &y->w3, c->hidden_dim, c->dim},
        };
        for (size_t i = 0; i < sizeof mats / sizeof mats[0]; i++) {
            snprintf(name, sizeof name, "blk.%d.%s.weight", l, mats[i].suffix);
            if (bind_matrix(L, name, mats[i].rows, mats[i].cols, mats[i].w)) return -1;
        }
        snprintf(name, sizeof name, "blk.%d.attn_norm.weight", l);
        if (bind_norm(L, name, c->dim, &y->rms_att)) return -1;
        snprintf(name, sizeof name, "blk.%d.ffn_norm.weight", l);
        if (bind_norm(L, name, c->dim, &y->rms_ffn)) return -1;
    }
    for (int i = 0; i < gguf_tensor_count(L->g); i++)
        if (!L->used[i])
            return err_set(L->err,
                           "%s: tensor '%.60s' is not part of a plain Llama model; refusing to "
                           "ignore it",
                           L->path, gguf_tensor_at(L->g, i)->name);
    m->main_type = c->n_layers > 0 ? m->layers[0].wq.type : m->tok_embd.type;
    return 0;
}

static void release_gguf(void *g) {
    gguf_close(g);
}

int model_open_gguf(model **out, const char *path, char *err) {
    *out = NULL;
    gguf *g;
    if (gguf_open(&g, path, err)) return -1;
    model *m = calloc(1, sizeof *m);
    loader L = {g, path, calloc((size_t)gguf_tensor_count(g) + 1, 1), err};
    if (!m || !L.used) {
        err_set(err, "%s: out of memory", path);
        goto fail;
    }
    m->release = release_gguf;
    m->release_arg = g;
    m->format = "gguf";
    snprintf(m->path, sizeof m->path, "%s", path);
    if (read_config(&L, &m->cfg)) goto fail;
    if (!(m->layers = calloc((size_t)m->cfg.n_layers, sizeof *m->layers))) {
        err_set(err, "%s: out of memory for %d layers", path, m->cfg.n_layers);
        goto fail;
    }
    if (bind_weights(&L, m)) goto fail;
    free(L.used);
    *out = m;
    return 0;
fail:
    free(L.used);
    if (m) {
        m->release = NULL;
        model_close(m);
    }
    gguf_close(g);
    return -1;
}
