/* synth.h: random-weight models of real configurations, for tests and speed benchmarks.
 *
 * The weights are seeded uniform noise (embedding in [-1, 1), matrices in +-1/sqrt(fan_in),
 * norms 1): the text is meaningless but the cost of a forward pass is that of the real shape.
 * The same (config, seed) gives the same bytes whether written to a file or built in memory.
 * The classifier is stored separately (not shared with the embedding, negative vocab_size in
 * the header): with random weights a shared classifier makes every token predict itself, so
 * greedy decoding would repeat BOS and stop at once; a separate one gives varied text at the
 * same cost per pass (the classifier is read once per pass either way). */
#ifndef MODEL_SYNTH_H
#define MODEL_SYNTH_H

#include <stdint.h>

#include "model/model.h"

/* Fills c from a preset name ("260K", "15M", "42M", "110M", "1.1B") or from
 * "dim,hidden,layers,heads,kv_heads,vocab,seq". */
int synth_config(const char *spec, model_config *c, char *err);

/* The preset names, for help text. */
const char *synth_presets_help(void);

/* Builds a model in memory (owned by *out, freed by model_close). */
int synth_model(model **out, const model_config *c, uint64_t seed, char *err);

/* Writes a llama2.c legacy checkpoint (separate classifier) to path. */
int synth_write(const char *path, const model_config *c, uint64_t seed, char *err);

#endif
