/* llama2c.c: llama2.c checkpoints (legacy and version 1), mmapped and validated. */
#include "model/llama2c.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/err.h"

#define V1_MAGIC 0x616b3432u
#define V1_HEADER 256

/* Float counts of the arrays shared by both layouts. */
typedef struct {
    size_t embd, rms, wq, wkv, wo, w13, w2, final, cls;
} sizes;

static sizes array_sizes(const model_config *c) {
    size_t L = (size_t)c->n_layers, d = (size_t)c->dim, kv = (size_t)c->kv_dim,
           h = (size_t)c->hidden_dim, v = (size_t)c->vocab_size;
    return (sizes){v * d, L * d, L * d * d, L * d * kv, L * d * d, L * h * d, L * d * h, d, v * d};
}

static size_t body_floats(const model_config *c, int shared) {
    sizes s = array_sizes(c);
    return s.embd + 2 * s.rms + s.wq + 2 * s.wkv + s.wo + 2 * s.w13 + s.w2 + s.final +
           (shared ? 0 : s.cls);
}

size_t llama2c_legacy_size(const model_config *c, int shared) {
    return 28 + 4 * (body_floats(c, shared) + (size_t)c->seq_len * c->head_size);
}

static size_t v1_size(const model_config *c, int shared) {
    return V1_HEADER + 4 * body_floats(c, shared);
}

static void bind_layers(model *m, const float *wq, const float *wk, const float *wv,
                        const float *wo, const float *w1, const float *w2, const float *w3,
                        const float *rms_att, const float *rms_ffn) {
    const model_config *c = &m->cfg;
    size_t d = (size_t)c->dim, kv = (size_t)c->kv_dim, h = (size_t)c->hidden_dim;
    for (int l = 0; l < c->n_layers; l++) {
        model_layer *L = &m->layers[l];
        L->rms_att = rms_att + l * d;
        L->rms_ffn = rms_ffn + l * d;
        L->wq = (wmat){WTYPE_F32, wq + l * d * d, c->dim, c->dim};
        L->wk = (wmat){WTYPE_F32, wk + l * kv * d, c->kv_dim, c->dim};
        L->wv = (wmat){WTYPE_F32, wv + l * kv * d, c->kv_dim, c->dim};
        L->wo = (wmat){WTYPE_F32, wo + l * d * d, c->dim, c->dim};
        L->w1 = (wmat){WTYPE_F32, w1 + l * h * d, c->hidden_dim, c->dim};
        L->w2 = (wmat){WTYPE_F32, w2 + l * d * h, c->dim, c->hidden_dim};
        L->w3 = (wmat){WTYPE_F32, w3 + l * h * d, c->hidden_dim, c->dim};
    }
}

static int read_config(model_config *c, const int32_t h[7], int *shared, const char *what,
                       char *err) {
    memset(c, 0, sizeof *c);
    c->dim = h[0], c->hidden_dim = h[1], c->n_layers = h[2], c->n_heads = h[3];
    c->n_kv_heads = h[4], c->vocab_size = h[5] < 0 ? -h[5] : h[5], c->seq_len = h[6];
    if (h[5] == INT32_MIN) c->vocab_size = -1;
    *shared = h[5] > 0;
    model_config_derive(c);
    return model_config_check(c, what, err);
}

int llama2c_bind_legacy(model *m, const unsigned char *image, size_t size, const char *what,
                        char *err) {
    if (size < 28) return err_set(err, "%s: %zu bytes, too short for a llama2.c header", what, size);
    int32_t h[7];
    memcpy(h, image, sizeof h);
    int shared;
    if (read_config(&m->cfg, h, &shared, what, err)) return -1;
    size_t want = llama2c_legacy_size(&m->cfg, shared);
    if (size != want)
        return err_set(err,
                       "%s: file is %zu bytes but its header (dim %d, hidden %d, layers %d, "
                       "heads %d, kv heads %d, vocab %d, seq %d) implies %zu: truncated or not a "
                       "llama2.c checkpoint",
                       what, size, h[0], h[1], h[2], h[3], h[4], h[5], h[6], want);
    const model_config *c = &m->cfg;
    m->layers = calloc((size_t)c->n_layers, sizeof *m->layers);
    if (!m->layers) return err_set(err, "%s: out of memory", what);
    sizes s = array_sizes(c);
    const float *p = (const float *)(image + 28);
    const float *embd = p;
    p += s.embd;
    const float *rms_att = p;
    p += s.rms;
    const float *wq = p;
    p += s.wq;
    const float *wk = p;
    p += s.wkv;
    const float *wv = p;
    p += s.wkv;
    const float *wo = p;
    p += s.wo;
    const float *rms_ffn = p;
    p += s.rms;
    const float *w1 = p;
    p += s.w13;
    const float *w2 = p;
    p += s.w2;
    const float *w3 = p;
    p += s.w13;
    m->rms_final = p;
    p += s.final;
    p += (size_t)c->seq_len * c->head_size; /* the unused RoPE tables */
    bind_layers(m, wq, wk, wv, wo, w1, w2, w3, rms_att, rms_ffn);
    m->tok_embd = (wmat){WTYPE_F32, embd, c->vocab_size, c->dim};
    m->wcls = shared ? m->tok_embd : (wmat){WTYPE_F32, p, c->vocab_size, c->dim};
    m->format = "llama2c";
    m->main_type = WTYPE_F32;
    return 0;
}

static int bind_v1(model *m, const unsigned char *image, size_t size, const char *what,
                   char *err) {
    if (size < V1_HEADER)
        return err_set(err, "%s: %zu bytes, too short for a version-1 header", what, size);
    int32_t version, h[7];
    memcpy(&version, image + 4, 4);
    if (version != 1)
        return err_set(err, "%s: llama2.c format version %d, only version 1 is fp32", what, version);
    memcpy(h, image + 8, sizeof h);
    int shared_legacy;
    if (h[5] <= 0) return err_set(err, "%s: header field vocab_size = %d, expected > 0", what, h[5]);
    if (read_config(&m->cfg, h, &shared_legacy, what, err)) return -1;
    int shared = image[36];
    if (shared > 1)
        return err_set(err, "%s: header field shared_classifier = %d, expected 0 or 1", what, shared);
    size_t want = v1_size(&m->cfg, shared);
    if (size != want)
        return err_set(err, "%s: file is %zu bytes but its version-1 header implies %zu: truncated?",
                       what, size, want);
    const model_config *c = &m->cfg;
    m->layers = calloc((size_t)c->n_layers, sizeof *m->layers);
    if (!m->layers) return err_set(err, "%s: out of memory", what);
    sizes s = array_sizes(c);
    const float *p = (const float *)(image + V1_HEADER);
    const float *rms_att = p;
    p += s.rms;
    const float *rms_ffn = p;
    p += s.rms;
    m->rms_final = p;
    p += s.final;
    const float *embd = p;
    p += s.embd;
    const float *wq = p;
    p += s.wq;
    const float *wk = p;
    p += s.wkv;
    const float *wv = p;
    p += s.wkv;
    const float *wo = p;
    p += s.wo;
    const float *w1 = p;
    p += s.w13;
    const float *w2 = p;
    p += s.w2;
    const float *w3 = p;
    p += s.w13;
    bind_layers(m, wq, wk, wv, wo, w1, w2, w3, rms_att, rms_ffn);
    m->tok_embd = (wmat){WTYPE_F32, embd, c->vocab_size, c->dim};
    m->wcls = shared ? m->tok_embd : (wmat){WTYPE_F32, p, c->vocab_size, c->dim};
    m->format = "llama2c-v1";
    m->main_type = WTYPE_F32;
    return 0;
}

int model_open_llama2c(model **out, const char *path, char *err) {
    *out = NULL;
    int fd = open(path, O_RDONLY);
    if (fd < 0) return err_set(err, "%s: cannot open model: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return err_set(err, "%s: not a regular file", path);
    }
    size_t size = (size_t)st.st_size;
    if (size == 0) {
        close(fd);
        return err_set(err, "%s: empty file, expected a model", path);
    }
    void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) return err_set(err, "%s: cannot map: %s", path, strerror(errno));
    model *m = calloc(1, sizeof *m);
    if (!m) {
        munmap(map, size);
        return err_set(err, "%s: out of memory", path);
    }
    m->map = map;
    m->map_size = size;
    snprintf(m->path, sizeof m->path, "%s", path);
    uint32_t magic = 0;
    if (size >= 4) memcpy(&magic, map, 4);
    int rc = magic == V1_MAGIC ? bind_v1(m, map, size, path, err)
                               : llama2c_bind_legacy(m, map, size, path, err);
    if (rc) {
        model_close(m);
        return -1;
    }
    *out = m;
    return 0;
}

int llama2c_write_header(FILE *f, const model_config *c, int shared) {
    int32_t h[7] = {c->dim,        c->hidden_dim, c->n_layers, c->n_heads, c->n_kv_heads,
                    shared ? c->vocab_size : -c->vocab_size, c->seq_len};
    return fwrite(h, sizeof h, 1, f) == 1 ? 0 : -1;
}
