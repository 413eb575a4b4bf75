/* model_file.h: opening a model file of any supported format: llama2.c legacy checkpoints
 * (7 x int32 header, fp32), llama2.c version-1 checkpoints (magic "ak42") and GGUF files (magic
 * "GGUF"), told apart by content, never by file name. The readers fill a `model`
 * (model/model.h), which model_close releases. */
#ifndef MODEL_MODEL_FILE_H
#define MODEL_MODEL_FILE_H

#include "model/model.h"

/* Opens a model file of any supported format. On success *out owns the mapping. Its context
 * (cfg.seq_len) is the file's capped at MODEL_DEFAULT_CTX. */
int model_open(model **out, const char *path, char *err);

/* The llama2.c reader (both formats). Used by model_open; exposed for tests. */
int model_open_llama2c(model **out, const char *path, char *err);

#endif
