/* arch.h: the model architectures decbench reads from GGUF files, one row each, and the tensors
 * and metadata keys they are made of (after llama.cpp's llama-arch.cpp).
 *
 *  - the tensor table: every tensor a model may hold, with llama.cpp's name
 *    ("blk.%d.attn_q.weight"), its shape in terms of the configuration, and the member of
 *    model / model_layer it binds to;
 *  - the key table: every metadata key the loader reads or the converter writes, as a format
 *    taking the architecture's name ("%s.context_length" -> "llama.context_length");
 *  - the architecture table: per general.architecture, which tensors are required, optional or
 *    absent (an optional output.weight absent means a tied classifier).
 * The GGUF loader (gguf_model.c) binds and checks tensors by walking these tables and refuses
 * any tensor the row does not list and any architecture without a row, naming it; `decbench
 * convert` (convert.c) and `decbench synth` (synth_gguf.c) write the same names and keys. What
 * an architecture adds to Llama's computation is a tensor the forward pass uses when it is
 * bound (Q/K/V biases, per-head Q/K norms, RoPE frequency factors) and the row's RoPE style;
 * ARCHITECTURE.md ("Adding an architecture") says how. */
#ifndef MODEL_ARCH_H
#define MODEL_ARCH_H

#include <stddef.h>

#include "model/model.h"

/* The tensors a model may hold. Order matters twice: the loader binds the model-wide tensors
 * first, then layer by layer, each in this order (so the first error reported is stable), and
 * the converter writes them in this order with the per-layer ones, layer by layer, at the place
 * of the first per-layer entry (llama.cpp's own order for Llama files). */
typedef enum {
    ARCH_T_ROPE_FREQS, /* llama.cpp's converter writes it first */
    ARCH_T_TOKEN_EMBD,
    ARCH_T_ATTN_NORM, /* per layer, from here */
    ARCH_T_FFN_NORM,
    ARCH_T_ATTN_Q,
    ARCH_T_ATTN_K,
    ARCH_T_ATTN_V,
    ARCH_T_ATTN_Q_BIAS,
    ARCH_T_ATTN_K_BIAS,
    ARCH_T_ATTN_V_BIAS,
    ARCH_T_ATTN_Q_NORM,
    ARCH_T_ATTN_K_NORM,
    ARCH_T_ATTN_OUT,
    ARCH_T_FFN_GATE,
    ARCH_T_FFN_DOWN,
    ARCH_T_FFN_UP, /* to here */
    ARCH_T_OUTPUT_NORM,
    ARCH_T_OUTPUT,
    ARCH_T_COUNT
} arch_tensor;

/* Sizes tensor shapes are given in (arch_dim_value). */
typedef enum {
    ARCH_D_ONE,
    ARCH_D_EMBD,      /* dim */
    ARCH_D_HIDDEN,    /* hidden_dim */
    ARCH_D_VOCAB,     /* vocab_size */
    ARCH_D_Q,         /* n_heads * head_size (the query width) */
    ARCH_D_KV,        /* kv_dim */
    ARCH_D_HEAD,      /* head_size */
    ARCH_D_ROPE_HALF, /* rope_dim / 2 */
} arch_dim;

typedef struct {
    const char *name; /* llama.cpp's; per-layer names hold one %d (the layer) */
    int per_layer;
    int vector; /* 1: F32 vector read as floats (norms, biases); 0: a matrix of any wtype */
    arch_dim rows, cols; /* a vector is 1 x cols */
    size_t offset;       /* of its wmat / const float * in model (or model_layer if per layer) */
} arch_tensor_info;

typedef enum { ARCH_ABSENT = 0, ARCH_REQUIRED = 1, ARCH_OPTIONAL = 2 } arch_presence;

typedef struct model_arch {
    const char *name;                    /* general.architecture, and the prefix of its keys */
    const char *title;                   /* for messages: "Llama" */
    unsigned char tensors[ARCH_T_COUNT]; /* arch_presence of each tensor */
    rope_style rope;                     /* llama.cpp's llama_model_rope_type for it */
} model_arch;

/* The row named name, or NULL. */
const model_arch *arch_find(const char *name);
/* The architecture of llama2.c checkpoints and synthetic models ("llama"). */
const model_arch *arch_default(void);
/* The names of all rows, ", "-separated, for messages. */
void arch_names(char *out, size_t n);

const arch_tensor_info *arch_tensor_get(arch_tensor t);
/* The tensor's name in layer `layer` (ignored for model-wide tensors). */
void arch_tensor_name(arch_tensor t, int layer, char *out, size_t n);
int arch_dim_value(const model_config *c, arch_dim d);
/* Where tensor t of layer `layer` binds in m: a wmat for a matrix, a const float * for a
 * vector (the other returns NULL). Like strchr, they take a const model and let the caller
 * (the loader, which fills a model it owns) write through the result. */
wmat *arch_matrix(const model *m, arch_tensor t, int layer);
const float **arch_vector(const model *m, arch_tensor t, int layer);

/* Metadata keys, formatted with the architecture's name. */
typedef enum {
    ARCH_KV_CONTEXT_LENGTH,
    ARCH_KV_EMBEDDING_LENGTH,
    ARCH_KV_BLOCK_COUNT,
    ARCH_KV_FEED_FORWARD_LENGTH,
    ARCH_KV_HEAD_COUNT,
    ARCH_KV_HEAD_COUNT_KV,
    ARCH_KV_KEY_LENGTH,
    ARCH_KV_VALUE_LENGTH,
    ARCH_KV_RMS_EPS,
    ARCH_KV_ROPE_DIMENSION_COUNT,
    ARCH_KV_ROPE_FREQ_BASE,
    ARCH_KV_ROPE_SCALING_TYPE,
    ARCH_KV_ROPE_SCALING_FACTOR,
    ARCH_KV_EXPERT_COUNT,
    ARCH_KV_VOCAB_SIZE,
    ARCH_KV_ROPE_SCALE_LINEAR,        /* rope.scaling.factor's old name (llama.cpp reads both) */
    ARCH_KV_ROPE_SCALING_ATTN_FACTOR, /* read to refuse values other than 1 */
    ARCH_KV_COUNT
} arch_kv;

#define ARCH_KEY_LEN 96
/* The key k of architecture a ("llama.context_length") in out (ARCH_KEY_LEN bytes); returns out. */
const char *arch_key(const model_arch *a, arch_kv k, char *out);

#endif
