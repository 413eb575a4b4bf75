/* llama2c.c: llama2.c checkpoints (legacy and version 1), mmapped and validated. */
#include "model/formats/llama2c.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/err.h"
#include "util/file.h"

#define V1_MAGIC 0x616b3432u
#define V1_HEADER 256

/* The float arrays of a checkpoint. Both layouts store the same arrays (legacy adds the RoPE
 * tables nobody reads), each in its own order; one table per layout drives both the size check
 * and the binding. */
enum { A_EMBD, A_RMS_ATT, A_WQ, A_WK, A_WV, A_WO, A_RMS_FFN, A_W1, A_W2, A_W3, A_RMS_FINAL,
       A_ROPE, A_CLS, A_COUNT };
static const int legacy_order[] = {A_EMBD, A_RMS_ATT, A_WQ,  A_WK, A_WV,        A_WO,   A_RMS_FFN,
                                   A_W1,   A_W2,      A_W3,  A_RMS_FINAL, A_ROPE, A_CLS};
static const int v1_order[] = {A_RMS_ATT, A_RMS_FFN, A_RMS_FINAL, A_EMBD, A_WQ, A_WK,
                               A_WV,      A_WO,      A_W1,        A_W2,   A_W3, A_CLS};
#define N_ORDER(o) ((int)(sizeof(o) / sizeof(o)[0]))

/* Floats in array a; the classifier is absent when it is shared with the embedding. The
 * configuration has passed model_config_check, so each product is at most the largest array's
 * n_layers x hidden_dim x dim and the sums below cannot overflow: */
// clang-format off
_Static_assert((uint64_t)MODEL_MAX_LAYERS * MODEL_MAX_HIDDEN * MODEL_MAX_DIM * 4 * 16 < UINT64_MAX / 2,
               "a checked configuration's file size (16 arrays at most) must fit in 64 bits");
// clang-format on

static uint64_t array_floats(const model_config *c, int a, int shared) {
    uint64_t L = (uint64_t)c->n_layers, d = (uint64_t)c->dim, kv = (uint64_t)c->kv_dim,
             h = (uint64_t)c->hidden_dim, v = (uint64_t)c->vocab_size;
    switch (a) {
    case A_EMBD: return v * d;
    case A_RMS_ATT: case A_RMS_FFN: return L * d;
    case A_WQ: case A_WO: return L * d * d;
    case A_WK: case A_WV: return L * d * kv;
    case A_W1: case A_W2: case A_W3: return L * h * d;
    case A_RMS_FINAL: return d;
    case A_ROPE:
        return (uint64_t)c->seq_len * c->head_size;
    default: return shared ? 0 : v * d; /* A_CLS */
    }
}

static uint64_t layout_floats(const model_config *c, const int *order, int n, int shared) {
    uint64_t total = 0;
    for (int i = 0; i < n; i++) total += array_floats(c, order[i], shared);
    return total;
}

uint64_t llama2c_legacy_size(const model_config *c, int shared) {
    return 28 + 4 * layout_floats(c, legacy_order, N_ORDER(legacy_order), shared);
}

static uint64_t v1_size(const model_config *c, int shared) {
    return V1_HEADER + 4 * layout_floats(c, v1_order, N_ORDER(v1_order), shared);
}

/* Points the model's tensors into the image: the arrays of `order` follow one another from p
 * (the caller has checked the file size). */
static int bind_arrays(model *m, const float *p, const int *order, int n, int shared,
                       const char *what, char *err) {
    const model_config *c = &m->cfg;
    const float *at[A_COUNT] = {0};
    for (int i = 0; i < n; i++) at[order[i]] = p, p += array_floats(c, order[i], shared);
    m->layers = calloc((size_t)c->n_layers, sizeof *m->layers);
    if (!m->layers) return err_set(err, "%s: out of memory", what);
    size_t d = (size_t)c->dim, kv = (size_t)c->kv_dim, h = (size_t)c->hidden_dim;
    for (int l = 0; l < c->n_layers; l++) {
        model_layer *L = &m->layers[l];
        L->rms_att = at[A_RMS_ATT] + l * d;
        L->rms_ffn = at[A_RMS_FFN] + l * d;
        L->wq = (wmat){WTYPE_F32, at[A_WQ] + l * d * d, c->dim, c->dim, NULL, NULL};
        L->wk = (wmat){WTYPE_F32, at[A_WK] + l * kv * d, c->kv_dim, c->dim, NULL, NULL};
        L->wv = (wmat){WTYPE_F32, at[A_WV] + l * kv * d, c->kv_dim, c->dim, NULL, NULL};
        L->wo = (wmat){WTYPE_F32, at[A_WO] + l * d * d, c->dim, c->dim, NULL, NULL};
        L->w1 = (wmat){WTYPE_F32, at[A_W1] + l * h * d, c->hidden_dim, c->dim, NULL, NULL};
        L->w2 = (wmat){WTYPE_F32, at[A_W2] + l * d * h, c->dim, c->hidden_dim, NULL, NULL};
        L->w3 = (wmat){WTYPE_F32, at[A_W3] + l * h * d, c->hidden_dim, c->dim, NULL, NULL};
    }
    m->rms_final = at[A_RMS_FINAL];
    m->tok_embd = (wmat){WTYPE_F32, at[A_EMBD], c->vocab_size, c->dim, NULL, NULL};
    m->wcls = shared ? m->tok_embd : (wmat){WTYPE_F32, at[A_CLS], c->vocab_size, c->dim, NULL, NULL};
    m->main_type = WTYPE_F32;
    return 0;
}

static int read_config(model_config *c, const int32_t h[7], int *shared, const char *what,
                       char *err) {
    memset(c, 0, sizeof *c);
    /* A negative vocab_size marks a separate classifier; -INT32_MIN is not an int32. */
    if (h[5] == INT32_MIN)
        return err_set(err,
                       "%s: header field vocab_size = %d, expected 1..%d (negative: a "
                       "separate classifier)",
                       what, h[5], MODEL_MAX_VOCAB);
    c->dim = h[0], c->hidden_dim = h[1], c->n_layers = h[2], c->n_heads = h[3];
    c->n_kv_heads = h[4], c->vocab_size = h[5] < 0 ? -h[5] : h[5], c->seq_len = h[6];
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
    uint64_t want = llama2c_legacy_size(&m->cfg, shared);
    if (size != want)
        return err_set(err,
                       "%s: file is %zu bytes but its header (dim %d, hidden %d, layers %d, "
                       "heads %d, kv heads %d, vocab %d, seq %d) implies %llu: truncated or not a "
                       "llama2.c checkpoint",
                       what, size, h[0], h[1], h[2], h[3], h[4], h[5], h[6],
                       (unsigned long long)want);
    m->format = "llama2c";
    return bind_arrays(m, (const float *)(image + 28), legacy_order, N_ORDER(legacy_order), shared,
                       what, err);
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
    uint64_t want = v1_size(&m->cfg, shared);
    if (size != want)
        return err_set(err,
                       "%s: file is %zu bytes but its version-1 header implies %llu: truncated?",
                       what, size, (unsigned long long)want);
    m->format = "llama2c-v1";
    return bind_arrays(m, (const float *)(image + V1_HEADER), v1_order, N_ORDER(v1_order), shared,
                       what, err);
}

int model_open_llama2c(model **out, const char *path, char *err) {
    *out = NULL;
    int fd = file_open_regular(path, "model", err);
    if (fd < 0) return -1;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return err_set(err, "%s: cannot open model: %s", path, strerror(e));
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
    m->file_map = map;
    m->file_map_size = size;
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
