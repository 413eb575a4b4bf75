/* model.h: a decoder-only transformer's configuration and weights (Llama and the
 * architectures of model/arch.h: Llama 1/2/3, Mistral, Qwen2, Qwen3).
 *
 * model/loader/model_file.h's model_open() detects the format by content (never by file name): llama2.c legacy
 * checkpoints (7 x int32 header, fp32), llama2.c version-1 checkpoints (magic "ak42"), and
 * GGUF files (magic "GGUF"). File-backed weights are mmapped and pointed into, never copied
 * (but for the int8 mode's packed rows of some types on some CPUs: wmat.packed, forward.c).
 * A path that is not a regular file (directory, FIFO, device) is refused before it is opened
 * (util/file.h). Every header field and the exact byte size it implies are validated before
 * any weight is touched; a bad file yields one line naming the file and what is wrong. */
#ifndef MODEL_MODEL_H
#define MODEL_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "model/weights/wtype.h"

/* Which values RoPE rotates together (llama.cpp's rope types): NORM pairs i and i + 1 (Llama,
 * and llama2.c checkpoints); NEOX pairs i and i + rope_dim / 2 within each head (Qwen2, Qwen3). */
typedef enum { ROPE_NORM = 0, ROPE_NEOX = 1 } rope_style;

typedef struct {
    int dim;        /* embedding width */
    int hidden_dim; /* feed-forward width */
    int n_layers;
    int n_heads;
    int n_kv_heads; /* grouped-query attention: n_heads is a multiple of this */
    int vocab_size;
    int seq_len;    /* the context decbench runs: ctx_train capped (model_set_context) */
    int head_size;  /* per head of Q, K and V: dim / n_heads, or GGUF's attention.key_length */
    int kv_dim;     /* n_kv_heads * head_size (Q is n_heads * head_size wide) */
    int rope_dim;   /* dimensions rotated per head (head_size for llama2.c models) */
    float rope_theta;
    float
        rope_factor; /* linear RoPE scaling: positions divided by it (DeepSeek-Coder: 4); 1: none */
    float rope_attn_factor; /* RoPE's cos and sin times it (GGUF rope.scaling.attn_factor); 1 */
    rope_style rope;
    float norm_eps;
    int bos_id;     /* 1 for llama2.c / Llama vocabularies */
    int eos_id;     /* 2 */
    int end_id;     /* the token that ends generation: llama2.c models emit BOS (1) */
    int shared_classifier; /* synthetic models: 1 = the classifier is the embedding (tied) */
    int ctx_train;         /* the context length the file declares */
} model_config;

/* How the KV cache stores a key or a value (--kv-type), one row each in kv_types[] (model.c):
 * f32, the default, keeps every bit the pass computed; f16 rounds each value to IEEE half (to
 * nearest, ties to even, as ggml's F16 cache, llama.cpp's default) when it is stored, and
 * attention widens it back exactly where it reads it (kernels.h, kern_attend_kv): half the
 * memory and half the traffic of a long context, and, like f32, bits that do not depend on the
 * batch, the tree or the threads. */
typedef enum { KV_F32 = 0, KV_F16 = 1, KV_TYPE_COUNT } kv_type;

typedef struct {
    const char *name; /* "f32", "f16": what --kv-type takes and the run record stores */
    wtype storage;    /* the values' storage type (wtype.h): its from_float stores them */
    const char *help; /* for --help */
} kv_type_row;

/* The row of t (NULL outside the table). */
const kv_type_row *kv_type_get(kv_type t);
const char *kv_type_name(kv_type t);
/* A row's name as its kv_type; -1 if no row has it. */
int kv_type_parse(const char *s, kv_type *out);
/* The table's names, for messages and help (tests/test_model.c checks them against it). */
#define KV_TYPE_NAMES "f32 or f16"
#define KV_TYPE_METAVAR "f32|f16"
/* Bytes of one key or value stored as t. */
size_t kv_type_bytes(kv_type t);

typedef struct {
    const float *rms_att, *rms_ffn; /* [dim] */
    wmat wq, wk, wv, wo; /* [q x dim], [kv_dim x dim] x2, [dim x q]; q = n_heads x head */
    wmat w1, w2, w3;                 /* [hidden x dim], [dim x hidden], [hidden x dim] */
    const float *bq, *bk, *bv;       /* Q/K/V biases [q], [kv_dim] x2 (Qwen2), or NULL */
    const float *q_norm,
        *k_norm; /* RMSNorm weights of each Q/K head [head_size] (Qwen3), or NULL */
} model_layer;

typedef struct model {
    model_config cfg;
    wmat tok_embd;            /* [vocab x dim] */
    model_layer *layers;      /* [n_layers], owned */
    const float *rms_final;   /* [dim] */
    wmat wcls;                /* [vocab x dim]; aliases tok_embd when shared */
    const float
        *rope_freqs;  /* [rope_dim / 2] divisors of the RoPE frequencies (Llama 3.1+), or NULL */
    int logits_width; /* floats per logits row fwd_eval writes; 0: vocab_size (model_pad_logits) */
    kv_type kv;       /* how a forward context made for it stores keys and values (model_set_kv) */
    const char *format;       /* "llama2c", "llama2c-v1", "gguf", "synthetic" */
    const struct model_arch *arch; /* its row of the architecture table (arch.h); NULL: llama */
    wtype main_type;          /* storage type of the big matrices */
    char path[1024];
    void *map;                /* the mmapped file, or NULL */
    size_t map_size;
    /* The file mapping the weights point into, whichever format owns it (map above, or the
     * GGUF reader's), NULL when the weights are on the heap: a SIGBUS in it means the file
     * shrank while in use (harness/runner.c). */
    const void *file_map;
    size_t file_map_size;
    void *heap;               /* heap memory owned by the model (synthetic, converted), or NULL */
    void *packed_heap;        /* the wmats' packed copies (forward.c), owned, or NULL */
    int packed_done;          /* 1 once forward.c has made them (or found none to make) */
    void *r16_heap;           /* the wmats' 16-row copies (int8b mode, forward.c), owned, or NULL */
    int r16_done;             /* 1 once forward.c has made them (or found none to make) */
    void (*release)(void *);  /* frees format-specific state (e.g. the GGUF reader), or NULL */
    void *release_arg;
} model;

/* The context a model runs with unless told otherwise. The KV cache is allocated for the whole
 * context (forward.c): in float32, the default, Llama-3.1-8B's declared 131072 tokens would need
 * 34 GB of it, Qwen2.5-7B's 32768 3.8 GB, while the datasets' prompts plus outputs stay under
 * 4096 tokens (llama.cpp's tools default to 4096 too). At 4096 the cache is 1 GiB for
 * Llama-3.1-8B, 0.45 GiB for Qwen2.5-7B, 4.3 GB of address space for Llama-2-7B (mostly
 * untouched); --kv-type f16 halves each. */
#define MODEL_DEFAULT_CTX 4096

/* Sets the context to n tokens (1..cfg.ctx_train): --ctx. */
int model_set_context(model *m, int n, char *err);

/* Sets how the forward contexts made for m from now on store keys and values: --kv-type
 * (KV_F32 unless set). */
void model_set_kv(model *m, kv_type t);

/* Makes fwd_eval write logits rows of `width` floats for this model (a draft whose vocabulary
 * is a few padding rows longer or shorter than its target's, as Qwen2.5-0.5B's 151936 against
 * Qwen2.5-7B's 152064): ids past the model's vocabulary get -FLT_MAX, ids past width are dropped,
 * so a decoder can treat the draft's rows as the target's. */
void model_pad_logits(model *m, int width);
int model_logits_width(const model *m);
void model_close(model *m);

/* The weight matrices of a layer, in file order: wq, wk, wv, wo, w1, w2, w3. */
#define MODEL_LAYER_MATS 7
static inline void model_layer_mats(const model_layer *L, const wmat *out[MODEL_LAYER_MATS]) {
    out[0] = &L->wq, out[1] = &L->wk, out[2] = &L->wv, out[3] = &L->wo;
    out[4] = &L->w1, out[5] = &L->w2, out[6] = &L->w3;
}

/* The first NaN or infinity among m's weights (matrices: float values, block scales; vectors),
 * in llama.cpp's tensor order, described in out (n bytes: "tensor 'blk.0.attn_q.weight' (f16):
 * row 3, column 5 is NaN"); returns 1, or 0 when every weight is finite. Reads every weight:
 * for diagnosing a failure (forward.c's refusal of non-finite logits), not for every load. */
int model_find_nonfinite(const model *m, char *out, size_t n);

/* Total bytes of the weight matrices and vectors (what one T=1 forward pass streams). */
size_t model_weight_bytes(const model *m);
/* Parameter count. */
size_t model_param_count(const model *m);

/* The largest value model_config_check accepts for each field. With these bounds every size
 * computed from a checked configuration fits in 64 bits with room to spare: the largest array,
 * n_layers x hidden_dim x dim floats, is 2^46 floats (2^48 bytes), and a file has 13 arrays. */
#define MODEL_MAX_DIM (1 << 16)
#define MODEL_MAX_HIDDEN (1 << 20)
#define MODEL_MAX_LAYERS 1024
#define MODEL_MAX_HEADS 1024
#define MODEL_MAX_VOCAB (1 << 22)
#define MODEL_MAX_SEQ (1 << 20)
#define MODEL_MAX_HEAD 1024 /* head_size; n_heads x head_size is at most MODEL_MAX_DIM */

/* Checks a configuration for consistency (every field in 1..its MODEL_MAX_*, divisibility).
 * `what` names the source in the message (a file path). Safe on any field values, including
 * hostile ones read from a file (INT_MIN, INT_MAX): the message names the first bad field. */
int model_config_check(const model_config *c, const char *what, char *err);

/* Fills derived fields (head_size, kv_dim, rope_dim, RoPE, ids) for a llama2.c-style config. Safe
 * on unchecked fields (a derived field that would not fit an int is set to 0, which
 * model_config_check then refuses); call model_config_check before using the result. */
void model_config_derive(model_config *c);

#endif
