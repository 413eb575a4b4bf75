/* llama2c.h: llama2.c checkpoints, read and written.
 *
 * Legacy format: 7 x int32 header (dim, hidden_dim, n_layers, n_heads, n_kv_heads,
 * vocab_size, seq_len; vocab_size < 0 means a separate classifier), then fp32 arrays:
 * token embedding, rms_att, wq, wk, wv, wo, rms_ffn, w1, w2, w3 (each for all layers in
 * turn), rms_final, two unused RoPE tables of seq_len * head_size / 2 floats, and the
 * classifier when not shared.
 * Version 1 ("ak42"): a 256-byte header (uint32 magic 0x616b3432, int32 version 1, the 7
 * int32 fields with vocab_size positive, uint8 shared_classifier), then rms_att, rms_ffn,
 * rms_final, token embedding, wq, wk, wv, wo, w1, w2, w3, and the classifier if not shared. */
#ifndef MODEL_LLAMA2C_H
#define MODEL_LLAMA2C_H

#include <stdint.h>
#include <stdio.h>

#include "model/model.h"

/* Opens a llama2.c checkpoint (both formats): model_open (model/loader/model_file.h) calls
 * this for files that are not GGUF; exposed for tests. */
int model_open_llama2c(model **out, const char *path, char *err);

/* Bytes a legacy checkpoint with this configuration occupies (header included). c must have
 * passed model_config_check (then the size cannot overflow: see MODEL_MAX_*). */
uint64_t llama2c_legacy_size(const model_config *c, int shared_classifier);

/* Points a model's weights into a legacy-format image (header included) of `size` bytes,
 * which must be exactly llama2c_legacy_size(). `what` names the source in messages. The
 * caller sets m->map/m->heap ownership. */
int llama2c_bind_legacy(model *m, const unsigned char *image, size_t size, const char *what,
                        char *err);

/* Writes the 7-field legacy header. */
int llama2c_write_header(FILE *f, const model_config *c, int shared_classifier);

#endif
