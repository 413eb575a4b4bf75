/* requant.c: model_requantize (see requant.h). */
#include "model/convert/requant.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/arch.h"
#include "model/kernels/kernels.h"
#include "util/err.h"

#define ALIGN 64 /* every matrix starts on a cache line (more than any row's `align`) */

/* Calls fn(m, tensor, layer, w) for every weight matrix m holds, in the tensor table's order;
 * stops at the first non-zero return. The tied classifier is visited (fn decides). */
static int each_matrix(const model *m, int (*fn)(void *, arch_tensor, int, wmat *), void *arg) {
    for (int t = 0; t < ARCH_T_COUNT; t++) {
        if (arch_tensor_get((arch_tensor)t)->vector) continue;
        int layers = arch_tensor_get((arch_tensor)t)->per_layer ? m->cfg.n_layers : 1;
        for (int l = 0; l < layers; l++) {
            wmat *w = arch_matrix(m, (arch_tensor)t, l);
            if (w->data && fn(arg, (arch_tensor)t, l, w)) return -1;
        }
    }
    return 0;
}

typedef struct {
    const model *src;
    model *dst;
    const convert_opts *o;
    int tied; /* src has no classifier of its own */
    convert_report rep;
    size_t size;         /* pass 1: bytes of the heap block */
    unsigned char *heap; /* pass 2: the block, filled from offset 0 on */
    float *row, *back;
    char *err;
} job;

/* Whether w (in dst) is the tied classifier: the classifier aliasing the embedding. */
static int tied(const job *J, arch_tensor t, const wmat *w) {
    return t == ARCH_T_OUTPUT && w->data == J->src->tok_embd.data &&
           w->type == J->src->tok_embd.type;
}

/* The type matrix t of layer l (rows of cols values) is stored in; -1 (err set) when it cannot
 * be (no fallback). */
static int type_of(job *J, arch_tensor t, int l, int cols, wtype *to, int *fallback) {
    if (convert_matrix_type(J->o, t, l, J->src->cfg.n_layers, J->tied, cols, to, fallback) == 0)
        return 0;
    char name[64];
    arch_tensor_name(t, l, name, sizeof name);
    return err_set(J->err,
                   "%s: tensor '%s' has rows of %d values, not a multiple of %d: %s cannot "
                   "store it",
                   J->src->path, name, cols, wtype_get(J->o->type)->block, wtype_name(J->o->type));
}

/* Pass 1: the size of the block. */
static int measure(void *arg, arch_tensor t, int l, wmat *w) {
    job *J = arg;
    wtype to;
    int fallback;
    if (tied(J, t, w)) return 0; /* aliases the embedding */
    if (type_of(J, t, l, w->cols, &to, &fallback)) return -1;
    if (to == w->type) return 0; /* referenced in place */
    J->size += (wtype_row_bytes(to, w->cols) * (size_t)w->rows + ALIGN - 1) / ALIGN * ALIGN;
    return 0;
}

/* Pass 2: narrows the matrix into the block, rebinding dst's wmat to it. */
static int narrow(void *arg, arch_tensor t, int l, wmat *w) {
    job *J = arg;
    if (tied(J, t, w)) {
        *w = J->dst->tok_embd; /* narrowed already: the embedding comes first */
        return 0;
    }
    wtype to;
    int fallback;
    char name[64];
    arch_tensor_name(t, l, name, sizeof name);
    if (type_of(J, t, l, w->cols, &to, &fallback)) return -1;
    if (fallback && J->rep.n_fallback++ == 0) {
        snprintf(J->rep.first_fallback, sizeof J->rep.first_fallback, "%s", name);
        J->rep.first_fallback_cols = w->cols;
        J->rep.fallback_type = to;
    }
    J->rep.n_matrices++;
    if (to == w->type) return 0;
    size_t row_bytes = wtype_row_bytes(to, w->cols);
    unsigned char *out = J->heap + J->size;
    for (int r = 0; r < w->rows; r++) {
        kern_row_to_f32(w, r, J->row);
        if (convert_narrow_row(J->src->path, name, r, to, J->row, w->cols,
                               out + row_bytes * (size_t)r, J->back, J->err))
            return -1;
    }
    J->size += (row_bytes * (size_t)w->rows + ALIGN - 1) / ALIGN * ALIGN;
    w->type = to, w->data = out;
    return 0;
}

int model_requantize(model **out, const model *src, const convert_opts *o, convert_report *rep,
                     char *err) {
    *out = NULL;
    const char *scheme = convert_scheme_name(o);
    const model_config *c = &src->cfg;
    model *m = calloc(1, sizeof *m);
    int widest = c->dim > c->hidden_dim ? c->dim : c->hidden_dim;
    job J = {.src = src, .dst = m, .o = o, .err = err};
    J.tied = src->wcls.data == src->tok_embd.data;
    if (m) m->layers = malloc(sizeof *m->layers * (size_t)c->n_layers);
    J.row = malloc(sizeof(float) * (size_t)widest);
    J.back = malloc(sizeof(float) * (size_t)widest);
    if (!m || !m->layers || !J.row || !J.back) {
        err_set(err, "%s: out of memory requantizing to %s", src->path, scheme);
        goto fail;
    }
    /* the copy: src's configuration, layer table and pointers, then its own matrices */
    model_layer *layers = m->layers;
    *m = *src;
    m->layers = layers;
    memcpy(m->layers, src->layers, sizeof *m->layers * (size_t)c->n_layers);
    m->map = NULL, m->map_size = 0, m->heap = NULL, m->release = NULL, m->release_arg = NULL;
    m->format = "requantized";
    m->main_type = o->type;
    /* "self:NAME of PATH", the path cut to fit (it only names the model in messages) */
    int head = snprintf(m->path, sizeof m->path, "self:%s of ", scheme);
    snprintf(m->path + head, sizeof m->path - (size_t)head, "%.*s", (int)sizeof m->path - head - 1,
             src->path);
    if (each_matrix(m, measure, &J)) goto fail;
    m->heap = aligned_alloc(ALIGN, J.size ? J.size : ALIGN);
    if (!m->heap) {
        err_set(err, "%s: out of memory requantizing to %s (%zu bytes)", src->path, scheme, J.size);
        goto fail;
    }
    J.heap = m->heap, J.size = 0;
    if (each_matrix(m, narrow, &J)) goto fail;
    J.rep.weight_bytes = model_weight_bytes(m);
    if (rep) *rep = J.rep;
    free(J.row), free(J.back);
    *out = m;
    return 0;
fail:
    free(J.row), free(J.back);
    model_close(m);
    return -1;
}
