/* synth.h: random-weight models of real configurations, for tests and speed benchmarks.
 *
 * The weights are seeded uniform noise (embedding in +-0.1, matrices in +-1/sqrt(fan_in),
 * norms 1): the text is meaningless but the cost of a forward pass is that of the real shape.
 * The same (config, seed) gives the same bytes whether written to a file or built in memory.
 * The classifier is tied to the embedding as in the real model of each preset (tinyllamas:
 * tied; TinyLlama-1.1B: separate; custom shapes: tied, llama2.c's default). Embeddings are
 * drawn small (+-0.1) next to what the layers add: with a tied classifier and large random
 * embeddings every token predicts itself and greedy decoding would emit BOS and stop at once. */
#ifndef MODEL_SYNTH_H
#define MODEL_SYNTH_H

#include <stdint.h>

#include "model/model.h"

/* Bumped whenever the bytes written for a given (config, seed) change, so caches of synthetic
 * models (bench/cache.sh names files by it; `decbench synth --version` prints it) never serve
 * an old shape: 1 first version, 2 separate random classifier, 3 classifier tied as in each
 * preset's real model and embeddings in +-0.1. */
#define SYNTH_VERSION 3

/* Fills c from a preset name ("260K", "15M", "42M", "110M", "1.1B") or from
 * "dim,hidden,layers,heads,kv_heads,vocab,seq". */
int synth_config(const char *spec, model_config *c, char *err);

/* The preset names, for help text. */
const char *synth_presets_help(void);

/* Builds a model in memory (owned by *out, freed by model_close). */
int synth_model(model **out, const model_config *c, uint64_t seed, char *err);

/* Writes a llama2.c legacy checkpoint to path (negative vocab_size when not tied). */
int synth_write(const char *path, const model_config *c, uint64_t seed, char *err);

#endif
