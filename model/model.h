/* model.h: a Llama-architecture model's configuration and weights.
 *
 * model_open() detects the format by content (never by file name): llama2.c legacy
 * checkpoints (7 x int32 header, fp32), llama2.c version-1 checkpoints (magic "ak42"), and
 * GGUF files (magic "GGUF"). File-backed weights are mmapped and pointed into, never copied.
 * Every header field and the exact byte size it implies are validated before any weight is
 * touched; a bad file yields one line naming the file and what is wrong. */
#ifndef MODEL_MODEL_H
#define MODEL_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "model/wtype.h"

/* A row-major matrix of `rows` rows of `cols` values each in storage type `type` (wtype.h);
 * rows are contiguous, cols is a multiple of the type's block and a row is cols / block blocks
 * laid out as in GGUF (q8_0: {fp16 scale, 32 x int8}, 34 bytes). */
typedef struct {
    wtype type;
    const void *data;
    int rows, cols;
} wmat;

typedef struct {
    int dim;        /* embedding width */
    int hidden_dim; /* feed-forward width */
    int n_layers;
    int n_heads;
    int n_kv_heads; /* grouped-query attention: n_heads is a multiple of this */
    int vocab_size;
    int seq_len;    /* context length */
    int head_size;  /* dim / n_heads */
    int kv_dim;     /* n_kv_heads * head_size */
    int rope_dim;   /* dimensions rotated per head (head_size for llama2.c models) */
    float rope_theta;
    float norm_eps;
    int bos_id;     /* 1 for llama2.c / Llama vocabularies */
    int eos_id;     /* 2 */
    int end_id;     /* the token that ends generation: llama2.c models emit BOS (1) */
    int shared_classifier; /* synthetic models: 1 = the classifier is the embedding (tied) */
} model_config;

typedef struct {
    const float *rms_att, *rms_ffn; /* [dim] */
    wmat wq, wk, wv, wo;             /* [dim x dim], [kv_dim x dim] x2, [dim x dim] */
    wmat w1, w2, w3;                 /* [hidden x dim], [dim x hidden], [hidden x dim] */
} model_layer;

typedef struct model {
    model_config cfg;
    wmat tok_embd;            /* [vocab x dim] */
    model_layer *layers;      /* [n_layers], owned */
    const float *rms_final;   /* [dim] */
    wmat wcls;                /* [vocab x dim]; aliases tok_embd when shared */
    const char *format;       /* "llama2c", "llama2c-v1", "gguf", "synthetic" */
    const struct model_arch *arch; /* its row of the architecture table (arch.h); NULL: llama */
    wtype main_type;          /* storage type of the big matrices */
    char path[1024];
    void *map;                /* the mmapped file, or NULL */
    size_t map_size;
    void *heap;               /* heap memory owned by the model (synthetic, converted), or NULL */
    void (*release)(void *);  /* frees format-specific state (e.g. the GGUF reader), or NULL */
    void *release_arg;
} model;

/* Opens a model file of any supported format. On success *out owns the mapping. */
int model_open(model **out, const char *path, char *err);
void model_close(model *m);

/* Total bytes of the weight matrices and vectors (what one T=1 forward pass streams). */
size_t model_weight_bytes(const model *m);
/* Parameter count. */
size_t model_param_count(const model *m);

/* Checks a configuration for consistency (positive fields, divisibility, bounds).
 * `what` names the source in the message (a file path). */
int model_config_check(const model_config *c, const char *what, char *err);

/* Fills derived fields (head_size, kv_dim, rope_dim, ids) for a llama2.c-style config. */
void model_config_derive(model_config *c);

/* llama2.c loader (both formats). Used by model_open; exposed for tests. */
int model_open_llama2c(model **out, const char *path, char *err);

#endif
