/* gguf_model.c: models from GGUF files, driven by the architecture table (arch.h: llama.cpp's
 * tensor names and "%s.*" keys) and the weight-type table (wtype.h: which ggml types load).
 *
 * Weights stay in the mapping and in their stored type. GGUF lists dimensions fastest first,
 * so a [rows x cols] matrix of model.h is a tensor with ne = {cols, rows}. For Llama files
 * llama.cpp's converter permutes Q and K so that RoPE rotates adjacent pairs (its "normal" rope
 * mode), the same convention llama2.c checkpoints use; Qwen2/Qwen3 files keep Hugging Face's
 * order and rotate pairs half a head apart (NEOX): the architecture's row says which.
 *
 * Hyper-parameters are read as llama.cpp's llama_model::load_hparams reads them: the head size
 * is attention.key_length when present (Qwen3, Mistral-Nemo-style files), else embedding_length
 * / head_count, and value_length must equal it; rope.dimension_count defaults to the head size;
 * rope.scaling.type none or linear (rope.scaling.factor: DeepSeek-Coder's 4).
 *
 * Anything that would change the computation and that this loader does not implement (other
 * architectures, MoE experts, YaRN or LongRoPE scaling, separate key and value head sizes,
 * tensors the architecture's row does not list, such as output biases) is refused with a
 * message rather than silently ignored: the point of the project is exact decoding, and a
 * half-understood model is not exact. */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/arch.h"
#include "model/formats/gguf.h"
#include "model/loader/model_file.h"
#include "model/model.h"
#include "model/tokenizer/tokenizer.h"
#include "util/err.h"

typedef struct {
    const gguf *g;
    const char *path;
    const model_arch *arch;
    char *used; /* per tensor: bound to a weight */
    char *err;
    char key[ARCH_KEY_LEN]; /* the last key formatted by K() */
} loader;

/* The architecture's key k ("llama.context_length"), valid until the next call. */
static const char *K(loader *L, arch_kv k) {
    return arch_key(L->arch, k, L->key);
}

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

/* Refuses a block whose scale (d, m or dmin) is NaN or infinite, naming the tensor and the
 * block: every weight of the block would be NaN, and the logits NaN (llama.cpp loads such a
 * file and computes NaN; its --check-tensors refuses it, checking the same scales). This reads
 * every block's scales, so every cache line of a q8_0 matrix: what reading the file once costs,
 * about one one-row pass, once per process. The 1.1B preset, in the page cache, one thread,
 * CPU time of `generate -n 1`: q8_0 (1.1 GB) 95-132 -> 205-243 ms, q4_k (0.6 GB) 76-91 ->
 * 112-127 ms. Float weights are not read here (every value of the 1.1B preset: f16 0.8-0.9 s of
 * CPU, f32 1.3-1.5 s, against 0.21 s for that f16 `generate -n 1`): a NaN or infinity among
 * them reaches the logits of the first pass that uses it, which is refused naming the tensor,
 * row and column (forward.c, model_find_nonfinite). */
static int check_scales(loader *L, const char *name, const wmat *w) {
    const wtype_traits *tt = wtype_get(w->type);
    if (tt->block == 1) return 0;
    int which;
    float v;
    long long b =
        wtype_find_nonfinite(w->type, w->data, (size_t)w->rows * (w->cols / tt->block), &which, &v);
    if (b < 0) return 0;
    char what[160];
    wtype_describe_nonfinite(w->type, w->cols, b, which, v, what, sizeof what);
    return err_set(L->err,
                   "%s: tensor '%s' (%s): %s; the file is corrupt (llama.cpp would compute NaN "
                   "from it; its --check-tensors refuses it)",
                   L->path, name, tt->name, what);
}

static int bind_matrix(loader *L, const char *name, int rows, int cols, wmat *w) {
    const gguf_tensor *t = shaped(L, name, rows, cols);
    if (!t) return -1;
    if (wtype_from_ggml(t->type, &w->type)) {
        char list[160] = "";
        for (int i = 0; i < WTYPE_COUNT; i++) {
            const char *gn = gguf_type_name(wtype_get((wtype)i)->ggml_type);
            size_t len = strlen(list);
            snprintf(list + len, sizeof list - len, "%s%s", i ? ", " : "", gn);
        }
        const char *tn = gguf_type_name(t->type);
        return err_set(L->err, "%s: tensor '%s' has type %s, which is not supported (%s)", L->path,
                       name, tn ? tn : "?", list);
    }
    /* The element alignment the kernels' typed loads rely on (GGUF guarantees it only when
     * general.alignment is a multiple of it). */
    size_t align = (size_t)wtype_get(w->type)->align;
    if ((uintptr_t)t->data % align)
        return err_set(L->err, "%s: tensor '%s' data is not %zu-byte aligned", L->path, name,
                       align);
    w->data = t->data;
    w->rows = rows;
    w->cols = cols;
    return check_scales(L, name, w);
}

/* Vectors (norm weights, biases, RoPE factors) are read as plain floats by the forward pass;
 * llama.cpp's converter keeps every 1-D tensor in F32. */
static int bind_vector(loader *L, const char *name, int dim, const float **out) {
    const gguf_tensor *t = shaped(L, name, 1, dim);
    if (!t) return -1;
    if (t->type != GGUF_TENSOR_F32) {
        const char *tn = gguf_type_name(t->type);
        return err_set(L->err,
                       "%s: tensor '%s' is %s; norm weights, biases and RoPE factors "
                       "must be F32",
                       L->path, name, tn ? tn : "?");
    }
    if ((uintptr_t)t->data % 4)
        return err_set(L->err, "%s: tensor '%s' data is not 4-byte aligned", L->path, name);
    *out = t->data;
    return 0;
}

/* A float key's value must be a finite number, positive (or 0 where allowed_zero): NaN or an
 * infinity passes "> 0" and would make every RoPE angle or every RMSNorm NaN (llama.cpp loads
 * such a file and computes NaN; its --check-tensors checks tensors only). */
static int check_float(loader *L, const char *key, float v, int zero_ok) {
    if (isfinite(v) && (v > 0.0f || (zero_ok && v == 0.0f))) return 0;
    return err_set(L->err, "%s: %s = %g, expected a %s finite number", L->path, key, (double)v,
                   zero_ok ? "non-negative" : "positive");
}

/* Refuses keys announcing features this loader would otherwise silently ignore, and reads
 * the RoPE scaling llama.cpp applies: none, or linear (positions times 1 / factor). As
 * llama.cpp's load_hparams: the type defaults to linear, the factor is rope.scaling.factor or
 * else its old name rope.scale_linear, 0 or absent meaning none; and rope.scaling.attn_factor,
 * which llama.cpp multiplies into every RoPE rotation whatever the type (llama.cpp's
 * cparams.yarn_attn_factor *= hparams.rope_attn_factor; ggml's rope then takes cos and sin times
 * it: the forward pass does the same). */
static int read_rope_scaling(loader *L, model_config *c) {
    uint32_t experts = 0;
    const char *s = "linear";
    if (gguf_find_key(L->g, K(L, ARCH_KV_EXPERT_COUNT)) >= 0 &&
        gguf_get_u32(L->g, L->key, &experts, L->err))
        return -1;
    if (experts > 0)
        return err_set(L->err,
                       "%s: %s = %u: mixture-of-experts models are not "
                       "supported",
                       L->path, L->key, experts);
    float attn = 1.0f;
    if (opt_f32(L, K(L, ARCH_KV_ROPE_SCALING_ATTN_FACTOR), &attn)) return -1;
    if (!(attn > 0.0f && attn <= 1e6f))
        return err_set(L->err, "%s: %s = %g, expected a positive finite number", L->path, L->key,
                       (double)attn);
    c->rope_attn_factor = attn;
    if (gguf_find_key(L->g, K(L, ARCH_KV_ROPE_SCALING_TYPE)) >= 0 &&
        gguf_get_str(L->g, L->key, &s, L->err))
        return -1;
    float factor = 0.0f; /* llama.cpp: 0 or absent means no scaling */
    arch_kv fk = gguf_find_key(L->g, K(L, ARCH_KV_ROPE_SCALING_FACTOR)) >= 0
                     ? ARCH_KV_ROPE_SCALING_FACTOR
                     : ARCH_KV_ROPE_SCALE_LINEAR;
    if (opt_f32(L, K(L, fk), &factor)) return -1;
    if (strcmp(s, "none") == 0) return 0; /* llama.cpp ignores the factor then */
    if (strcmp(s, "linear") != 0)
        return err_set(L->err,
                       "%s: %s = '%.32s' is not supported (only none and linear RoPE scaling)",
                       L->path, K(L, ARCH_KV_ROPE_SCALING_TYPE), s);
    K(L, fk);
    if (!(factor >= 0.0f) || factor > 1e6f || (factor > 0.0f && factor < 1e-6f))
        return err_set(L->err, "%s: %s = %g is out of range", L->path, L->key, (double)factor);
    c->rope_factor = factor == 0.0f ? 1.0f : factor;
    return 0;
}

static int read_config(loader *L, model_config *c) {
    const char *arch;
    if (gguf_get_str(L->g, "general.architecture", &arch, L->err)) return -1;
    if (!(L->arch = arch_find(arch))) {
        char names[200];
        arch_names(names, sizeof names);
        return err_set(L->err, "%s: architecture '%.40s' is not supported (only %s)", L->path, arch,
                       names);
    }
    memset(c, 0, sizeof *c);
    /* A trained context past decbench's largest (MODEL_MAX_SEQ, 2^20: Llama-3-8B-Gradient-4194k
     * declares 4194304) is read as that largest, which no run reaches (the default context is
     * MODEL_DEFAULT_CTX); llama.cpp loads such files too. */
    uint32_t ctx;
    if (gguf_get_u32(L->g, K(L, ARCH_KV_CONTEXT_LENGTH), &ctx, L->err)) return -1;
    if (ctx == 0) return err_set(L->err, "%s: %s = 0, expected 1..%u", L->path, L->key, UINT32_MAX);
    c->seq_len = ctx > MODEL_MAX_SEQ ? MODEL_MAX_SEQ : (int)ctx;
    if (key_int(L, K(L, ARCH_KV_EMBEDDING_LENGTH), &c->dim) ||
        key_int(L, K(L, ARCH_KV_BLOCK_COUNT), &c->n_layers) ||
        key_int(L, K(L, ARCH_KV_FEED_FORWARD_LENGTH), &c->hidden_dim) ||
        key_int(L, K(L, ARCH_KV_HEAD_COUNT), &c->n_heads))
        return -1;
    c->n_kv_heads = c->n_heads;
    c->rope_theta = 10000.0f; /* llama.cpp's default when rope.freq_base is absent */
    if (opt_int(L, K(L, ARCH_KV_HEAD_COUNT_KV), &c->n_kv_heads) ||
        opt_f32(L, K(L, ARCH_KV_ROPE_FREQ_BASE), &c->rope_theta) ||
        gguf_get_f32(L->g, K(L, ARCH_KV_RMS_EPS), &c->norm_eps, L->err))
        return -1;
    c->head_size = c->dim / c->n_heads;
    int value_length = 0;
    if (opt_int(L, K(L, ARCH_KV_KEY_LENGTH), &c->head_size)) return -1;
    if (opt_int(L, K(L, ARCH_KV_VALUE_LENGTH), &value_length)) return -1;
    if (value_length && value_length != c->head_size)
        return err_set(L->err, "%s: %s = %d differs from the key head size %d", L->path, L->key,
                       value_length, c->head_size);
    c->rope_dim = c->head_size;
    if (opt_int(L, K(L, ARCH_KV_ROPE_DIMENSION_COUNT), &c->rope_dim)) return -1;
    c->rope = L->arch->rope;
    c->rope_factor = 1.0f;
    c->rope_attn_factor = 1.0f; /* read_rope_scaling reads the file's */
    c->ctx_train = c->seq_len;
    if (check_float(L, K(L, ARCH_KV_RMS_EPS), c->norm_eps, 0) ||
        check_float(L, K(L, ARCH_KV_ROPE_FREQ_BASE), c->rope_theta, 0))
        return -1;
    /* The vocabulary size is the embedding's row count; llama.vocab_size must agree. */
    const gguf_tensor *emb = gguf_find_tensor(L->g, "token_embd.weight");
    if (!emb) return err_set(L->err, "%s: tensor 'token_embd.weight' is missing", L->path);
    if (emb->ne[1] == 0 || emb->ne[1] > INT_MAX)
        return err_set(L->err, "%s: token_embd.weight has %llu rows", L->path,
                       (unsigned long long)emb->ne[1]);
    c->vocab_size = (int)emb->ne[1];
    /* The vocabulary in the same file must match it, or ids it produces would index past
     * the embedding (llama.cpp requires the same equality). With a vocabulary, llama.cpp takes
     * its size from the tokens and ignores vocab_size (tok_load warns when they differ);
     * without one, vocab_size is the embedding's row count there, so it must agree. */
    uint64_t n_tokens;
    int has_tokens = gguf_find_key(L->g, "tokenizer.ggml.tokens") >= 0, vocab = c->vocab_size;
    if (!has_tokens && opt_int(L, K(L, ARCH_KV_VOCAB_SIZE), &vocab)) return -1;
    if (vocab != c->vocab_size)
        return err_set(L->err, "%s: %s %d differs from token_embd.weight's %d rows", L->path,
                       L->key, vocab, c->vocab_size);
    if (has_tokens) {
        if (gguf_get_arr_len(L->g, "tokenizer.ggml.tokens", GGUF_STRING, &n_tokens, L->err))
            return -1;
        if (n_tokens != (uint64_t)c->vocab_size)
            return err_set(L->err,
                           "%s: tokenizer.ggml.tokens has %llu tokens but token_embd.weight has "
                           "%d rows",
                           L->path, (unsigned long long)n_tokens, c->vocab_size);
    }
    /* BOS and EOS as the tokenizer reads them (llama.cpp's rule: a key naming no token counts
     * as absent, the vocabulary type's default then; the tokenizer of the same file warns
     * about it, so this stays silent). A file without a vocabulary keeps Llama's 1 and 2. */
    c->bos_id = 1, c->eos_id = 2;
    if (tok_gguf_bos_eos(L->g, c->vocab_size, &c->bos_id, &c->eos_id, L->err)) return -1;
    c->end_id = c->eos_id; /* GGUF (chat/instruct) models end a reply with EOS (-1: none) */
    if (c->bos_id >= c->vocab_size || c->eos_id >= c->vocab_size)
        return err_set(L->err, "%s: BOS %d / EOS %d outside the vocabulary of %d", L->path,
                       c->bos_id, c->eos_id, c->vocab_size);
    if (model_config_check(c, L->path, L->err)) return -1;
    /* Only now: the check bounds n_kv_heads by n_heads, so this cannot overflow (the fuzzer
     * found the overflow with a huge head_count_kv when it was computed before the check). */
    c->kv_dim = c->n_kv_heads * c->head_size;
    return read_rope_scaling(L, c);
}

/* Binds tensor t of layer l (or the model-wide one) where the tensor table says, if the
 * architecture has it; an optional tensor may be missing. */
static int bind_tensor(loader *L, model *m, arch_tensor t, int l) {
    const arch_tensor_info *ti = arch_tensor_get(t);
    char name[64];
    arch_tensor_name(t, l, name, sizeof name);
    if (L->arch->tensors[t] == ARCH_OPTIONAL && !gguf_find_tensor(L->g, name)) return 0;
    int rows = arch_dim_value(&m->cfg, ti->rows), cols = arch_dim_value(&m->cfg, ti->cols);
    if (ti->vector) return bind_vector(L, name, cols, arch_vector(m, t, l));
    return bind_matrix(L, name, rows, cols, arch_matrix(m, t, l));
}

static int bind_weights(loader *L, model *m) {
    const model_config *c = &m->cfg;
    const unsigned char *has = L->arch->tensors;
    for (int t = 0; t < ARCH_T_COUNT; t++) /* model-wide tensors first, then layer by layer */
        if (has[t] && !arch_tensor_get((arch_tensor)t)->per_layer &&
            bind_tensor(L, m, (arch_tensor)t, 0))
            return -1;
    for (int l = 0; l < c->n_layers; l++)
        for (int t = 0; t < ARCH_T_COUNT; t++)
            if (has[t] && arch_tensor_get((arch_tensor)t)->per_layer &&
                bind_tensor(L, m, (arch_tensor)t, l))
                return -1;
    if (!m->wcls.data) m->wcls = m->tok_embd; /* no output.weight: tied embeddings */
    /* Llama 3.1's RoPE factors divide the angles: an infinite one makes its pair's angles 0 at
     * every position, finite and wrong, where any other NaN or infinity in the weights reaches
     * the logits (and their check). */
    for (int i = 0; m->rope_freqs && i < c->rope_dim / 2; i++)
        if (!isfinite(m->rope_freqs[i]))
            return err_set(L->err,
                           "%s: tensor 'rope_freqs.weight' (f32): value %d is %s; the file is "
                           "corrupt",
                           L->path, i,
                           isnan(m->rope_freqs[i]) ? "NaN"
                           : m->rope_freqs[i] > 0  ? "+inf"
                                                   : "-inf");
    for (int i = 0; i < gguf_tensor_count(L->g); i++)
        if (!L->used[i])
            return err_set(L->err,
                           "%s: tensor '%.60s' is not part of a plain %s model; refusing to "
                           "ignore it",
                           L->path, gguf_tensor_at(L->g, i)->name, L->arch->title);
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
    loader L = {
        .g = g, .path = path, .used = calloc((size_t)gguf_tensor_count(g) + 1, 1), .err = err};
    if (!m || !L.used) {
        err_set(err, "%s: out of memory", path);
        goto fail;
    }
    m->release = release_gguf;
    m->release_arg = g;
    m->file_map = gguf_mapping(g, &m->file_map_size);
    m->format = "gguf";
    snprintf(m->path, sizeof m->path, "%s", path);
    if (read_config(&L, &m->cfg)) goto fail;
    if (!(m->layers = calloc((size_t)m->cfg.n_layers, sizeof *m->layers))) {
        err_set(err, "%s: out of memory for %d layers", path, m->cfg.n_layers);
        goto fail;
    }
    m->arch = L.arch;
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
