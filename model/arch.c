/* arch.c: the tensor, key and architecture tables (see arch.h). */
#include "model/arch.h"

#include <stdio.h>
#include <string.h>

#define GLOBAL_MAT(nm, r, c, field)                                                                \
    { .name = nm, .rows = r, .cols = c, .offset = offsetof(model, field) }
#define GLOBAL_VEC(nm, field)                                                                      \
    {                                                                                              \
        .name = nm, .vector = 1, .rows = ARCH_D_ONE, .cols = ARCH_D_EMBD,                          \
        .offset = offsetof(model, field)                                                           \
    }
#define LAYER_MAT(nm, r, c, field)                                                                 \
    { .name = nm, .per_layer = 1, .rows = r, .cols = c, .offset = offsetof(model_layer, field) }
#define LAYER_VEC(nm, c, field)                                                                    \
    {                                                                                              \
        .name = nm, .per_layer = 1, .vector = 1, .rows = ARCH_D_ONE, .cols = c,                    \
        .offset = offsetof(model_layer, field)                                                     \
    }

/* llama.cpp's tensor names (llama-arch.cpp, LLM_TENSOR_NAMES) and shapes as [rows x cols] of
 * model.h (GGUF lists them columns first). */
static const arch_tensor_info tensors[ARCH_T_COUNT] = {
    [ARCH_T_ROPE_FREQS] = {.name = "rope_freqs.weight",
                           .vector = 1,
                           .rows = ARCH_D_ONE,
                           .cols = ARCH_D_ROPE_HALF,
                           .offset = offsetof(model, rope_freqs)},
    [ARCH_T_TOKEN_EMBD] = GLOBAL_MAT("token_embd.weight", ARCH_D_VOCAB, ARCH_D_EMBD, tok_embd),
    [ARCH_T_ATTN_NORM] = LAYER_VEC("blk.%d.attn_norm.weight", ARCH_D_EMBD, rms_att),
    [ARCH_T_FFN_NORM] = LAYER_VEC("blk.%d.ffn_norm.weight", ARCH_D_EMBD, rms_ffn),
    [ARCH_T_ATTN_Q] = LAYER_MAT("blk.%d.attn_q.weight", ARCH_D_Q, ARCH_D_EMBD, wq),
    [ARCH_T_ATTN_K] = LAYER_MAT("blk.%d.attn_k.weight", ARCH_D_KV, ARCH_D_EMBD, wk),
    [ARCH_T_ATTN_V] = LAYER_MAT("blk.%d.attn_v.weight", ARCH_D_KV, ARCH_D_EMBD, wv),
    [ARCH_T_ATTN_Q_BIAS] = LAYER_VEC("blk.%d.attn_q.bias", ARCH_D_Q, bq),
    [ARCH_T_ATTN_K_BIAS] = LAYER_VEC("blk.%d.attn_k.bias", ARCH_D_KV, bk),
    [ARCH_T_ATTN_V_BIAS] = LAYER_VEC("blk.%d.attn_v.bias", ARCH_D_KV, bv),
    [ARCH_T_ATTN_Q_NORM] = LAYER_VEC("blk.%d.attn_q_norm.weight", ARCH_D_HEAD, q_norm),
    [ARCH_T_ATTN_K_NORM] = LAYER_VEC("blk.%d.attn_k_norm.weight", ARCH_D_HEAD, k_norm),
    [ARCH_T_ATTN_OUT] = LAYER_MAT("blk.%d.attn_output.weight", ARCH_D_EMBD, ARCH_D_Q, wo),
    [ARCH_T_FFN_GATE] = LAYER_MAT("blk.%d.ffn_gate.weight", ARCH_D_HIDDEN, ARCH_D_EMBD, w1),
    [ARCH_T_FFN_DOWN] = LAYER_MAT("blk.%d.ffn_down.weight", ARCH_D_EMBD, ARCH_D_HIDDEN, w2),
    [ARCH_T_FFN_UP] = LAYER_MAT("blk.%d.ffn_up.weight", ARCH_D_HIDDEN, ARCH_D_EMBD, w3),
    [ARCH_T_OUTPUT_NORM] = GLOBAL_VEC("output_norm.weight", rms_final),
    [ARCH_T_OUTPUT] = GLOBAL_MAT("output.weight", ARCH_D_VOCAB, ARCH_D_EMBD, wcls),
};

/* llama.cpp's key formats (llama-arch.cpp, LLM_KV_NAMES). */
static const char *const keys[ARCH_KV_COUNT] = {
    [ARCH_KV_CONTEXT_LENGTH] = "%s.context_length",
    [ARCH_KV_EMBEDDING_LENGTH] = "%s.embedding_length",
    [ARCH_KV_BLOCK_COUNT] = "%s.block_count",
    [ARCH_KV_FEED_FORWARD_LENGTH] = "%s.feed_forward_length",
    [ARCH_KV_HEAD_COUNT] = "%s.attention.head_count",
    [ARCH_KV_HEAD_COUNT_KV] = "%s.attention.head_count_kv",
    [ARCH_KV_KEY_LENGTH] = "%s.attention.key_length",
    [ARCH_KV_VALUE_LENGTH] = "%s.attention.value_length",
    [ARCH_KV_RMS_EPS] = "%s.attention.layer_norm_rms_epsilon",
    [ARCH_KV_ROPE_DIMENSION_COUNT] = "%s.rope.dimension_count",
    [ARCH_KV_ROPE_FREQ_BASE] = "%s.rope.freq_base",
    [ARCH_KV_ROPE_SCALING_TYPE] = "%s.rope.scaling.type",
    [ARCH_KV_ROPE_SCALING_FACTOR] = "%s.rope.scaling.factor",
    [ARCH_KV_EXPERT_COUNT] = "%s.expert_count",
    [ARCH_KV_VOCAB_SIZE] = "%s.vocab_size",
    [ARCH_KV_ROPE_SCALE_LINEAR] = "%s.rope.scale_linear",
    [ARCH_KV_ROPE_SCALING_ATTN_FACTOR] = "%s.rope.scaling.attn_factor",
};

#define R ARCH_REQUIRED
#define O ARCH_OPTIONAL

/* The tensors every Llama-like architecture has: embedding, per-layer RMSNorms, attention and
 * SwiGLU matrices, final norm; the classifier is optional (tied to the embedding if absent). */
#define LLAMA_TENSORS                                                                              \
    [ARCH_T_TOKEN_EMBD] = R, [ARCH_T_ATTN_NORM] = R, [ARCH_T_FFN_NORM] = R, [ARCH_T_ATTN_Q] = R,   \
    [ARCH_T_ATTN_K] = R, [ARCH_T_ATTN_V] = R, [ARCH_T_ATTN_OUT] = R, [ARCH_T_FFN_GATE] = R,        \
    [ARCH_T_FFN_DOWN] = R, [ARCH_T_FFN_UP] = R, [ARCH_T_OUTPUT_NORM] = R, [ARCH_T_OUTPUT] = O

/* One row per general.architecture (llama.cpp's llm_arch names), with what llama.cpp's
 * llama-model.cpp loads for it (Feb 2025; qwen3 from its later src/models/qwen3.cpp): */
static const model_arch archs[] = {
    /* Llama 1/2/3, CodeLlama, TinyLlama, Vicuna, DeepSeek-Coder, Mistral-style files labelled
     * llama. Optional: Q/K/V biases (llama.cpp loads them when present) and rope_freqs (Llama
     * 3.1+'s llama3 RoPE scaling, as llama.cpp's converter writes it). */
    {.name = "llama",
     .title = "Llama",
     .tensors = {LLAMA_TENSORS, [ARCH_T_ROPE_FREQS] = O, [ARCH_T_ATTN_Q_BIAS] = O,
                 [ARCH_T_ATTN_K_BIAS] = O, [ARCH_T_ATTN_V_BIAS] = O},
     .rope = ROPE_NORM},
    /* Qwen2, Qwen2.5, Qwen2.5-Coder: Q/K/V biases required, NEOX RoPE */
    {.name = "qwen2",
     .title = "Qwen2",
     .tensors = {LLAMA_TENSORS, [ARCH_T_ATTN_Q_BIAS] = R, [ARCH_T_ATTN_K_BIAS] = R,
                 [ARCH_T_ATTN_V_BIAS] = R},
     .rope = ROPE_NEOX},
    /* Qwen3 (dense): an RMSNorm over each Q and K head before RoPE, NEOX RoPE, head size from
     * attention.key_length */
    {.name = "qwen3",
     .title = "Qwen3",
     .tensors = {LLAMA_TENSORS, [ARCH_T_ATTN_Q_NORM] = R, [ARCH_T_ATTN_K_NORM] = R},
     .rope = ROPE_NEOX},
};
#define N_ARCHS (sizeof archs / sizeof archs[0])

#undef R
#undef O

const model_arch *arch_find(const char *name) {
    for (size_t i = 0; name && i < N_ARCHS; i++)
        if (strcmp(archs[i].name, name) == 0) return &archs[i];
    return NULL;
}

const model_arch *arch_default(void) {
    return &archs[0];
}

void arch_names(char *out, size_t n) {
    size_t len = 0;
    out[0] = 0;
    for (size_t i = 0; i < N_ARCHS && len < n; i++)
        len += (size_t)snprintf(out + len, n - len, "%s'%s'", i ? ", " : "", archs[i].name);
}

const arch_tensor_info *arch_tensor_get(arch_tensor t) {
    return &tensors[t];
}

void arch_tensor_name(arch_tensor t, int layer, char *out, size_t n) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    if (tensors[t].per_layer)
        snprintf(out, n, tensors[t].name, layer);
    else
        snprintf(out, n, "%s", tensors[t].name);
#pragma GCC diagnostic pop
}

int arch_dim_value(const model_config *c, arch_dim d) {
    switch (d) {
    case ARCH_D_ONE:
        return 1;
    case ARCH_D_EMBD:
        return c->dim;
    case ARCH_D_HIDDEN:
        return c->hidden_dim;
    case ARCH_D_VOCAB:
        return c->vocab_size;
    case ARCH_D_Q:
        return c->n_heads * c->head_size;
    case ARCH_D_KV:
        return c->kv_dim;
    case ARCH_D_HEAD:
        return c->head_size;
    case ARCH_D_ROPE_HALF:
        return c->rope_dim / 2;
    }
    return 0;
}

static void *member(const model *m, arch_tensor t, int layer) {
    const char *base = tensors[t].per_layer ? (const char *)&m->layers[layer] : (const char *)m;
    return (void *)(base + tensors[t].offset);
}

wmat *arch_matrix(const model *m, arch_tensor t, int layer) {
    return tensors[t].vector ? NULL : (wmat *)member(m, t, layer);
}

const float **arch_vector(const model *m, arch_tensor t, int layer) {
    return tensors[t].vector ? (const float **)member(m, t, layer) : NULL;
}

const char *arch_key(const model_arch *a, arch_kv k, char *out) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    snprintf(out, ARCH_KEY_LEN, keys[k], a->name);
#pragma GCC diagnostic pop
    return out;
}
