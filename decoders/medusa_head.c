/* medusa_head.c: see medusa_head.h. */
#include "decoders/medusa_head.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/formats/safetensors.h"
#include "model/kernels/kernels.h"
#include "util/err.h"

#define MEDUSA_MAX_HEADS 32
#define MEDUSA_MAX_LAYERS 16

void medusa_head_free(medusa_head *h) {
    if (!h) return;
    for (int i = 0; i < h->n_blocks; i++) free(h->blocks[i]);
    free(h->blocks), free(h->res_w), free(h->cls), free(h->res_b);
    free(h);
}

/* An integer field of config.json: *out keeps its default when the key is absent. */
static int config_int(const json_t *cfg, const char *path, const char *key, int lo, int hi,
                      int *out, int *present, char *err) {
    const json_t *v = json_object_get(cfg, key);
    if (present) *present = v != NULL;
    if (!v) return 0;
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
        return err_set(err, "%s: \"%s\" must be an integer in %d..%d", path, key, lo, hi);
    *out = (int)json_integer_value(v);
    return 0;
}

static int keep_block(medusa_head *h, void *p) {
    h->blocks[h->n_blocks++] = p;
    return 0;
}

/* Matrix `name` of shape [rows, cols] in its own type, copied out of the mapping (aligned for
 * the kernels), refused if it holds a NaN or an infinity. */
static int load_matrix(medusa_head *h, const safetensors *s, const char *name, int rows, int cols,
                       wmat *out, char *err) {
    const st_tensor *t = st_find(s, name);
    if (!t) return err_set(err, "%s: tensor \"%s\" is missing", st_path(s), name);
    if (t->n_dims != 2 || t->shape[0] != (uint64_t)rows || t->shape[1] != (uint64_t)cols) {
        char got[96] = "[";
        for (int d = 0; d < t->n_dims; d++)
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%llu", d ? ", " : "",
                     (unsigned long long)t->shape[d]);
        return err_set(err, "%s: tensor \"%s\" has shape %s], expected [%d, %d]", st_path(s), name,
                       got, rows, cols);
    }
    wtype type;
    if (t->dtype == ST_F32)
        type = WTYPE_F32;
    else if (t->dtype == ST_F16)
        type = WTYPE_F16;
    else if (t->dtype == ST_BF16)
        type = WTYPE_BF16;
    else
        return err_set(err, "%s: tensor \"%s\" is %s; Medusa heads are read in F32, F16 or BF16",
                       st_path(s), name, st_dtype_name(t->dtype));
    size_t bytes = (size_t)(t->end - t->begin);
    void *data = aligned_alloc(64, (bytes + 63) / 64 * 64);
    if (!data) return err_set(err, "%s: out of memory for tensor \"%s\"", st_path(s), name);
    memcpy(data, t->data, bytes);
    keep_block(h, data);
    *out = (wmat){.type = type, .data = data, .rows = rows, .cols = cols};
    int which;
    float v;
    long long bad = wtype_find_nonfinite(type, data, (size_t)rows * (size_t)cols, &which, &v);
    if (bad >= 0) {
        char what[160];
        wtype_describe_nonfinite(type, cols, bad, which, v, what, sizeof what);
        return err_set(err, "%s: tensor \"%s\": %s (a corrupt or badly converted head)",
                       st_path(s), name, what);
    }
    return 0;
}

static int load_bias(medusa_head *h, const safetensors *s, const char *name, int n, float **out,
                     char *err) {
    float *b = malloc(sizeof(float) * (size_t)n);
    if (!b) return err_set(err, "%s: out of memory", st_path(s));
    keep_block(h, b);
    const uint64_t shape[1] = {(uint64_t)n};
    if (st_load_f32(s, name, 1, shape, b, err)) return -1;
    for (int i = 0; i < n; i++)
        if (!isfinite(b[i]))
            return err_set(err, "%s: tensor \"%s\": value %d is %g (a corrupt or badly converted "
                                "head)",
                           st_path(s), name, i, (double)b[i]);
    *out = b;
    return 0;
}

static int read_config(medusa_head *h, const char *path, int *dim, int *vocab, char *err) {
    json_error_t je;
    json_t *cfg = json_load_file(path, 0, &je);
    if (!cfg)
        return err_set(err, "%s: %s (line %d)", path, je.text, je.line);
    int rc = 0;
    *dim = *vocab = -1;
    h->n_heads = 5, h->n_layers = 1; /* MedusaConfig's defaults */
    if (!json_is_object(cfg))
        rc = err_set(err, "%s: not a JSON object", path);
    else if (config_int(cfg, path, "medusa_num_heads", 1, MEDUSA_MAX_HEADS, &h->n_heads, NULL,
                        err) ||
             config_int(cfg, path, "medusa_num_layers", 0, MEDUSA_MAX_LAYERS, &h->n_layers, NULL,
                        err) ||
             config_int(cfg, path, "hidden_size", 1, 1 << 20, dim, NULL, err) ||
             config_int(cfg, path, "vocab_size", 1, 1 << 24, vocab, NULL, err))
        rc = -1;
    json_decref(cfg);
    return rc;
}

int medusa_head_open(medusa_head **out, const char *dir, char *err) {
    *out = NULL;
    medusa_head *h = calloc(1, sizeof *h);
    if (!h) return err_set(err, "%s: out of memory", dir);
    snprintf(h->dir, sizeof h->dir, "%s", dir);
    char path[1100];
    snprintf(path, sizeof path, "%s/config.json", dir);
    int dim, vocab;
    safetensors *s = NULL;
    if (read_config(h, path, &dim, &vocab, err)) goto fail;
    snprintf(path, sizeof path, "%s/medusa_lm_head.safetensors", dir);
    if (st_open(&s, path, err)) {
        char pt[1100];
        snprintf(pt, sizeof pt, "%s/medusa_lm_head.pt", dir);
        FILE *f = fopen(pt, "rb");
        if (f) {
            fclose(f);
            err_set(err, "%s: no medusa_lm_head.safetensors, only the PyTorch pickle "
                         "medusa_lm_head.pt: convert it to safetensors first (README, Medusa)",
                    dir);
        }
        goto fail;
    }
    /* the sizes: config.json's when it has them, else the first classifier's shape */
    char name[64];
    snprintf(name, sizeof name, "0.%d.weight", h->n_layers);
    const st_tensor *c0 = st_find(s, name);
    if (!c0) {
        err_set(err, "%s: tensor \"%s\" is missing (medusa_num_layers %d in config.json)", path,
                name, h->n_layers);
        goto fail;
    }
    if (c0->n_dims == 2 && c0->shape[0] <= 1u << 24 && c0->shape[1] <= 1u << 20) {
        if (vocab < 0) vocab = (int)c0->shape[0];
        if (dim < 0) dim = (int)c0->shape[1];
    }
    if (dim < 1 || vocab < 1) {
        err_set(err, "%s: tensor \"%s\" is not a [vocab, hidden] matrix", path, name);
        goto fail;
    }
    h->dim = dim, h->vocab = vocab;
    int n_mat = h->n_heads * (h->n_layers + 1);
    h->blocks = calloc((size_t)n_mat * 2, sizeof *h->blocks);
    h->res_w = calloc((size_t)(h->n_heads * h->n_layers) + 1, sizeof *h->res_w);
    h->res_b = calloc((size_t)(h->n_heads * h->n_layers) + 1, sizeof *h->res_b);
    h->cls = calloc((size_t)h->n_heads, sizeof *h->cls);
    if (!h->blocks || !h->res_w || !h->res_b || !h->cls) {
        err_set(err, "%s: out of memory", dir);
        goto fail;
    }
    for (int k = 0; k < h->n_heads; k++) {
        for (int l = 0; l < h->n_layers; l++) {
            int i = k * h->n_layers + l;
            snprintf(name, sizeof name, "%d.%d.linear.weight", k, l);
            if (load_matrix(h, s, name, dim, dim, &h->res_w[i], err)) goto fail;
            snprintf(name, sizeof name, "%d.%d.linear.bias", k, l);
            if (load_bias(h, s, name, dim, &h->res_b[i], err)) goto fail;
        }
        snprintf(name, sizeof name, "%d.%d.weight", k, h->n_layers);
        if (load_matrix(h, s, name, vocab, dim, &h->cls[k], err)) goto fail;
    }
    st_close(s);
    *out = h;
    return 0;
fail:
    st_close(s);
    medusa_head_free(h);
    return -1;
}

int medusa_head_check(const medusa_head *h, const model *target, char *err) {
    const model_config *c = &target->cfg;
    if (h->dim != c->dim || h->vocab != c->vocab_size)
        return err_set(err, "medusa head %s: hidden size %d and vocabulary %d, the target %s has "
                            "hidden size %d and vocabulary %d: a head fits only the model it was "
                            "trained on",
                       h->dir, h->dim, h->vocab, target->path, c->dim, c->vocab_size);
    return 0;
}

typedef struct {
    const wmat *w;
    const float *x;
    float *y;
} mv_task;

static void mv_worker(void *arg, int chunk, int n_chunks, int thread) {
    (void)thread;
    const mv_task *t = arg;
    int lo, hi;
    tpool_split(t->w->rows, 16, chunk, n_chunks, &lo, &hi);
    if (hi > lo) kern_matmul(t->w, lo, hi, t->x, t->w->cols, 1, t->y + lo, t->w->rows);
}

/* y = w x, its rows split over the pool (each value computed whole by one thread). */
static void matvec(const wmat *w, const float *x, float *y, tpool *pool) {
    mv_task t = {w, x, y};
    int n = pool ? tpool_size(pool) * 4 : 1;
    if (n > 1)
        tpool_run(pool, mv_worker, &t, n);
    else
        mv_worker(&t, 0, 1, 0);
}

void medusa_head_logits(const medusa_head *h, int k, const float *hidden, float *logits,
                        float *scratch, tpool *pool) {
    const int D = h->dim;
    float *x = scratch, *y = scratch + D;
    memcpy(x, hidden, sizeof(float) * (size_t)D);
    for (int l = 0; l < h->n_layers; l++) { /* ResBlock: x + SiLU(W x + b) */
        const int i = k * h->n_layers + l;
        matvec(&h->res_w[i], x, y, pool);
        for (int j = 0; j < D; j++) {
            float v = y[j] + h->res_b[i][j];
            x[j] += v / (1.0f + expf(-v));
        }
    }
    matvec(&h->cls[k], x, logits, pool);
}
