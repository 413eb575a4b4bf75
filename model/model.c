/* model.c: model files (format detection, llama2.c checkpoints) and configuration checks. */
#include "model/model.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "model/gguf.h"
#include "model/llama2c.h"
#include "util/err.h"
#include "util/file.h"

void model_config_derive(model_config *c) {
    /* The fields may come straight from a file header (INT_MIN, INT_MAX): the product is
     * formed in 64 bits, and a value an int cannot hold becomes 0 (model_config_check then
     * names the field at fault). */
    c->head_size = c->n_heads > 0 ? c->dim / c->n_heads : 0;
    int64_t kv_dim = (int64_t)c->n_kv_heads * c->head_size;
    c->kv_dim = kv_dim >= 0 && kv_dim <= INT_MAX ? (int)kv_dim : 0;
    if (c->rope_dim <= 0) c->rope_dim = c->head_size;
    if (c->rope_theta <= 0) c->rope_theta = 10000.0f;
    if (c->norm_eps <= 0) c->norm_eps = 1e-5f;
    if (c->bos_id == 0 && c->eos_id == 0) {
        c->bos_id = 1;
        c->eos_id = 2;
        c->end_id = 1; /* llama2.c models end a story by emitting BOS */
    }
}

int model_config_check(const model_config *c, const char *what, char *err) {
    struct {
        const char *name;
        int value, max;
    } f[] = {{"dim", c->dim, MODEL_MAX_DIM},
             {"hidden_dim", c->hidden_dim, MODEL_MAX_HIDDEN},
             {"n_layers", c->n_layers, MODEL_MAX_LAYERS},
             {"n_heads", c->n_heads, MODEL_MAX_HEADS},
             {"n_kv_heads", c->n_kv_heads, MODEL_MAX_HEADS},
             {"vocab_size", c->vocab_size, MODEL_MAX_VOCAB},
             {"seq_len", c->seq_len, MODEL_MAX_SEQ}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (f[i].value <= 0 || f[i].value > f[i].max)
            return err_set(err, "%s: header field %s = %d, expected 1..%d", what, f[i].name,
                           f[i].value, f[i].max);
    if (c->dim % c->n_heads)
        return err_set(err, "%s: dim %d is not divisible by n_heads %d", what, c->dim, c->n_heads);
    if (c->n_heads % c->n_kv_heads)
        return err_set(err, "%s: n_heads %d is not divisible by n_kv_heads %d", what, c->n_heads,
                       c->n_kv_heads);
    if ((c->dim / c->n_heads) % 2)
        return err_set(err, "%s: head size %d is odd (RoPE rotates pairs)", what,
                       c->dim / c->n_heads);
    if (c->rope_dim > c->dim / c->n_heads || c->rope_dim % 2)
        return err_set(err, "%s: rope dimension %d, expected an even number <= head size %d", what,
                       c->rope_dim, c->dim / c->n_heads);
    return 0;
}

size_t model_weight_bytes(const model *m) {
    const model_config *c = &m->cfg;
    size_t b = wtype_row_bytes(m->tok_embd.type, c->dim) * (size_t)c->vocab_size;
    for (int l = 0; l < c->n_layers; l++) {
        const model_layer *L = &m->layers[l];
        const wmat *w[] = {&L->wq, &L->wk, &L->wv, &L->wo, &L->w1, &L->w2, &L->w3};
        for (int i = 0; i < 7; i++) b += wtype_row_bytes(w[i]->type, w[i]->cols) * (size_t)w[i]->rows;
        b += 2 * sizeof(float) * (size_t)c->dim;
    }
    b += sizeof(float) * (size_t)c->dim;
    if (m->wcls.data != m->tok_embd.data)
        b += wtype_row_bytes(m->wcls.type, c->dim) * (size_t)c->vocab_size;
    return b;
}

size_t model_param_count(const model *m) {
    const model_config *c = &m->cfg;
    size_t per_layer = 2 * (size_t)c->dim * c->dim + 2 * (size_t)c->dim * c->kv_dim +
                       3 * (size_t)c->dim * c->hidden_dim + 2 * (size_t)c->dim;
    size_t n = (size_t)c->vocab_size * c->dim + per_layer * c->n_layers + c->dim;
    if (m->wcls.data != m->tok_embd.data) n += (size_t)c->vocab_size * c->dim;
    return n;
}

int model_open(model **out, const char *path, char *err) {
    *out = NULL;
    int fd = file_open_regular(path, "model", err); /* a directory or FIFO is refused here */
    if (fd < 0) return -1;
    unsigned char magic[4] = {0};
    ssize_t got = read(fd, magic, 4);
    close(fd);
    if (got == 0) return err_set(err, "%s: empty file, expected a model", path);
    if (got == 4 && memcmp(magic, "GGUF", 4) == 0) return model_open_gguf(out, path, err);
    return model_open_llama2c(out, path, err);
}

void model_close(model *m) {
    if (!m) return;
    if (m->map) munmap(m->map, m->map_size);
    if (m->release) m->release(m->release_arg);
    free(m->heap);
    free(m->layers);
    free(m);
}
