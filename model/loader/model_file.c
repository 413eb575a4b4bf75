/* model_file.c: opens a model file of any format, told by its content (model_file.h). */
#include "model/loader/model_file.h"

#include <string.h>
#include <unistd.h>

#include "model/formats/llama2c.h"
#include "util/err.h"
#include "util/file.h"

int model_open(model **out, const char *path, char *err) {
    *out = NULL;
    int fd = file_open_regular(path, "model", err); /* a directory or FIFO is refused here */
    if (fd < 0) return -1;
    unsigned char magic[4] = {0};
    ssize_t got = read(fd, magic, 4);
    close(fd);
    if (got == 0) return err_set(err, "%s: empty file, expected a model", path);
    int rc = got == 4 && memcmp(magic, "GGUF", 4) == 0 ? model_open_gguf(out, path, err)
                                                       : model_open_llama2c(out, path, err);
    if (rc == 0 && (*out)->cfg.seq_len > MODEL_DEFAULT_CTX) (*out)->cfg.seq_len = MODEL_DEFAULT_CTX;
    return rc;
}
