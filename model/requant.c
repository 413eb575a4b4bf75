/* requant.c: model_requantize (see requant.h). */
#include "model/requant.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/arch.h"
#include "model/kernels.h"
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
    wtype type;
    convert_fallback fb;
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

/* Pass 1: the size of the block. */
static int measure(void *arg, arch_tensor t, int l, wmat *w) {
    job *J = arg;
    (void)l;
    wtype to = convert_matrix_type(J->type, w->cols, J->fb);
    if (tied(J, t, w) || to == w->type) return 0; /* aliased / referenced in place */
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
    wtype to = convert_matrix_type(J->type, w->cols, J->fb);
    char name[64];
    arch_tensor_name(t, l, name, sizeof name);
    if (w->cols % wtype_get(J->type)->block) {
        if (J->fb == CONVERT_FALLBACK_NONE)
            return err_set(J->err,
                           "%s: tensor '%s' has rows of %d values, not a multiple of %d: %s "
                           "cannot store it",
                           J->src->path, name, w->cols, wtype_get(J->type)->block,
                           wtype_name(J->type));
        if (J->rep.n_fallback++ == 0) {
            snprintf(J->rep.first_fallback, sizeof J->rep.first_fallback, "%s", name);
            J->rep.first_fallback_cols = w->cols;
        }
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

int model_requantize(model **out, const model *src, wtype t, convert_fallback fb,
                     convert_report *rep, char *err) {
    *out = NULL;
    if (!wtype_get(t)->from_float && t != WTYPE_F32)
        return err_set(err, "%s: weights cannot be requantized to %s (no quantizer for it)",
                       src->path, wtype_name(t));
    const model_config *c = &src->cfg;
    model *m = calloc(1, sizeof *m);
    int widest = c->dim > c->hidden_dim ? c->dim : c->hidden_dim;
    job J = {.src = src, .dst = m, .type = t, .fb = fb, .err = err};
    if (m) m->layers = malloc(sizeof *m->layers * (size_t)c->n_layers);
    J.row = malloc(sizeof(float) * (size_t)widest);
    J.back = malloc(sizeof(float) * (size_t)widest);
    if (!m || !m->layers || !J.row || !J.back) {
        err_set(err, "%s: out of memory requantizing to %s", src->path, wtype_name(t));
        goto fail;
    }
    /* the copy: src's configuration, layer table and pointers, then its own matrices */
    model_layer *layers = m->layers;
    *m = *src;
    m->layers = layers;
    memcpy(m->layers, src->layers, sizeof *m->layers * (size_t)c->n_layers);
    m->map = NULL, m->map_size = 0, m->heap = NULL, m->release = NULL, m->release_arg = NULL;
    m->format = "requantized";
    m->main_type = convert_matrix_type(t, c->dim, fb);
    /* "self:TYPE of PATH", the path cut to fit (it only names the model in messages) */
    int head = snprintf(m->path, sizeof m->path, "self:%s of ", wtype_name(t));
    snprintf(m->path + head, sizeof m->path - (size_t)head, "%.*s", (int)sizeof m->path - head - 1,
             src->path);
    each_matrix(m, measure, &J);
    m->heap = aligned_alloc(ALIGN, J.size ? J.size : ALIGN);
    if (!m->heap) {
        err_set(err, "%s: out of memory requantizing to %s (%zu bytes)", src->path, wtype_name(t),
                J.size);
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
