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

/* The largest file synth_write makes: 512 GB holds Llama-2-70B's shape in fp32 (276 GB), more
 * than any machine this runs on can hold in memory to measure, and stops a mistyped shape
 * (65536,1048576,1024,... is 844 TB) before it writes a byte. */
#define SYNTH_MAX_BYTES 512000000000ull

/* Writes a llama2.c legacy checkpoint to path (negative vocab_size when not tied). The size is
 * computed first: over SYNTH_MAX_BYTES, or over the space free on path's file system, it is
 * refused with both numbers in the message. The file is written through path.tmp and renamed
 * (util/file.h): path never holds a partial model, even if the process is killed. */
int synth_write(const char *path, const model_config *c, uint64_t seed, char *err);

#endif
