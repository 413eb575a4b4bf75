/* model_file.h: reading a model file of any supported format into memory: llama2.c legacy checkpoints
 * (7 x int32 header, fp32), llama2.c version-1 checkpoints (magic "ak42") and GGUF files (magic
 * "GGUF"), told apart by content, never by file name. The readers fill a `model`
 * (model/model.h), which model_close releases. */
#ifndef MODEL_MODEL_FILE_H
#define MODEL_MODEL_FILE_H

#include "model/model.h"

/* Opens a model file of any supported format. On success *out owns the mapping. Its context
 * (cfg.seq_len) is the file's capped at MODEL_DEFAULT_CTX. */
int model_open(model **out, const char *path, char *err);

/* A GGUF model (gguf_model.c): the architecture's keys and llama.cpp's tensor names (its row
 * of model/arch.h), weights left in the mapping in their stored type; the GGUF reader is owned
 * by the model (released by model_close). model_open calls this for files starting with
 * "GGUF". */
int model_open_gguf(model **out, const char *path, char *err);

#endif
