/* synth.h: random-weight models of real configurations, for tests and speed benchmarks.
 *
 * The weights are seeded uniform noise (embedding in +-0.1, matrices in +-1/sqrt(fan_in),
 * norms 1): the text is meaningless but the cost of a forward pass is that of the real shape.
 * Two outputs: llama2.c checkpoints (f32, plain Llama shapes: the tinyllamas and TinyLlama
 * presets and custom dims) and GGUF files of any architecture of model/arch.h in any type or
 * llama-quantize mix convert writes (synth_gguf.c: Qwen2.5, Qwen3, Llama 3.x, DeepSeek-Coder
 * presets, with their biases, norms, RoPE, vocabulary sizes and tied or separate classifiers).
 * The same (config, seed) gives the same bytes whether written to a file or built in memory.
 * The classifier is tied to the embedding as in the real model of each preset (tinyllamas:
 * tied; TinyLlama-1.1B: separate; custom shapes: tied, llama2.c's default). Embeddings are
 * drawn small (+-0.1) next to what the layers add: with a tied classifier and large random
 * embeddings every token predicts itself and greedy decoding would emit BOS and stop at once. */
#ifndef MODEL_SYNTH_H
#define MODEL_SYNTH_H

#include <stdint.h>

#include "model/convert/convert.h"
#include "model/model.h"

/* Bumped whenever the bytes written for a given (config, seed) change, so caches of synthetic
 * models (bench/cache.sh names files by it; `decbench synth --version` prints it) never serve
 * an old shape: 1 first version, 2 separate random classifier, 3 classifier tied as in each
 * preset's real model and embeddings in +-0.1. */
#define SYNTH_VERSION 3 /* covers synth_write_gguf's files too (new at 3: no older bytes) */

/* A synthetic model's shape: everything that makes one architecture's forward pass cost and
 * compute what the real model's does. */
typedef struct {
    model_config cfg;    /* sizes, head size, RoPE (base, style, linear factor), eps, context;
                          * shared_classifier: tied as the real model */
    const char *arch;    /* general.architecture ("llama", "qwen2", "qwen3") */
    float llama3_factor; /* Llama 3.1/3.2 RoPE scaling, written as rope_freqs.weight; 0: none */
    const char *what;    /* the real model of a preset ("Qwen2.5-0.5B"), or "custom" */
} synth_shape;

/* Fills s from a preset name (synth_presets_help) or from
 * "[ARCH:]dim,hidden,layers,heads,kv_heads,vocab,seq[,head_size]" (ARCH llama, qwen2 or qwen3;
 * RoPE base 10000, or 1e6 for qwen2/qwen3 as their real models; eps 1e-5, 1e-6). */
int synth_shape_parse(const char *spec, synth_shape *s, char *err);

/* 1 if s can only be written as GGUF (not a plain llama2.c checkpoint). */
int synth_needs_gguf(const synth_shape *s);

/* Fills c from a preset or dims a llama2.c checkpoint can hold (synth_shape_parse, refusing
 * the others with a message naming the GGUF-only feature). */
int synth_config(const char *spec, model_config *c, char *err);

/* The preset names, for help text. */
const char *synth_presets_help(void);

/* Builds a model in memory (owned by *out, freed by model_close). */
int synth_model(model **out, const model_config *c, uint64_t seed, char *err);

/* The largest file synth_write makes: 512 GB holds Llama-2-70B's shape in fp32 (276 GB), more
 * than any machine this runs on can hold in memory to measure, and stops a mistyped shape
 * (65536,1048576,1024,... is 844 TB) before it writes a byte. */
#define SYNTH_MAX_BYTES 512000000000ull

/* Writes a llama2.c legacy checkpoint to path (negative vocab_size when not tied). The size is
 * computed first: over SYNTH_MAX_BYTES, or over the space free on path's file system, it is
 * refused with both numbers in the message. The file is written through path.tmp and renamed
 * (util/file.h): path never holds a partial model, even if the process is killed. */
int synth_write(const char *path, const model_config *c, uint64_t seed, char *err);

/* Writes s as a GGUF file with weight type or mix *o (convert.h; o->name is general.name) and
 * vocabulary v (NULL: none, tokenizer.ggml.model "none"; else padded to the vocabulary size with
 * unused tokens, whose BOS/EOS the model takes). Each tensor is generated from its own seed
 * (seed and its name), quantized and written in turn: memory holds one tensor, never the model.
 * Size refused over SYNTH_MAX_BYTES or the free space first; written through path.tmp. The
 * weights: embedding +-0.1, matrices +-1/sqrt(fan_in), norm weights and per-head norms 1 +- 0.25,
 * biases +-0.2, rope_freqs the llama3 factors as llama.cpp's converter computes them. */
int synth_write_gguf(const char *path, const synth_shape *s, const convert_opts *o,
                     const convert_vocab *v, uint64_t seed, char *err);

/* ---- learned drafters' heads (synth_head.c) ---------------------------------------------- */

typedef enum { SYNTH_HEAD_EAGLE, SYNTH_HEAD_MEDUSA } synth_head_kind;
typedef enum { SYNTH_HEAD_F16, SYNTH_HEAD_BF16, SYNTH_HEAD_F32 } synth_head_dtype;
#define SYNTH_MAX_HEADS 16

/* Writes into directory dir (made when missing) a random draft head for a target of shape s, in
 * the published layout (decoders/eagle_head.h, medusa_head.h): an EAGLE head (config.json, a
 * LlamaConfig with one layer and "bias": true; model.safetensors with fc, the layer's
 * attention, MLP and post-attention norm; no embed_tokens, so the target's embedding is used as
 * the reference loads it) or n_heads Medusa heads of one ResBlock each (config.json;
 * medusa_lm_head.safetensors). Tensors in dt (published heads are f16 or bf16, which the
 * loaders keep in memory as they are). Each file is written through FILE.tmp and renamed, the
 * weights before the config. An EAGLE head needs head size x heads = the width, as
 * LlamaConfig's attention has. */
int synth_write_head(const char *dir, synth_head_kind kind, const synth_shape *s, int n_heads,
                     synth_head_dtype dt, uint64_t seed, char *err);

#endif
