/* convert.c: models to GGUF files, and the quantizers (see convert.h). */
#include "model/convert/convert.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/arch.h"
#include "model/kernels/kernels.h"
#include "util/err.h"
#include "util/file.h"

/* ---- quantizers ------------------------------------------------------------------------ */

void convert_row_f16(const float *x, uint16_t *y, int n) {
    for (int i = 0; i < n; i++) y[i] = wtype_f32_to_f16(x[i]);
}

void convert_row_bf16(const float *x, uint16_t *y, int n) {
    for (int i = 0; i < n; i++) y[i] = wtype_f32_to_bf16(x[i]);
}

void convert_row_q8_0(const float *x, void *y, int n) {
    wtype_get(WTYPE_Q8_0)->from_float(x, y, n);
}

/* ---- conversion ------------------------------------------------------------------------ */

typedef struct {
    const model *m;
    const convert_opts *o;
    gguf_writer *w;
    void **bufs; /* converted tensors, owned, freed after the write */
    int n_bufs;
    float *row;  /* one widened row */
    float *back; /* the same row after narrowing and widening again */
    convert_report rep;
    char *err;
} job;

int convert_narrow_row(const char *src, const char *name, int r, wtype t, const float *x, int n,
                       void *out, float *back, char *err) {
    const wtype_traits *tt = wtype_get(t);
    if (t == WTYPE_F32) {
        memcpy(out, x, sizeof(float) * (size_t)n);
        return 0;
    }
    for (int k = 0; k < n; k++)
        if (!isfinite(x[k]))
            return err_set(err, "%s: tensor '%s' row %d column %d is %g, not a finite number", src,
                           name, r, k, (double)x[k]);
    tt->from_float(x, out, n);
    tt->to_float(out, back, n);
    for (int k = 0; k < n; k++) {
        if (isfinite(back[k])) continue;
        if (tt->block == 1)
            return err_set(err, "%s: tensor '%s' row %d column %d = %g is beyond %s's range%s", src,
                           name, r, k, (double)x[k], tt->name,
                           t == WTYPE_F16 ? " (65504); bf16 or f32 can hold it" : "");
        float amax = 0.0f;
        for (int j = k / tt->block * tt->block; j < (k / tt->block + 1) * tt->block; j++)
            amax = fmaxf(amax, fabsf(x[j]));
        return err_set(err,
                       "%s: tensor '%s' row %d, block %d: max|x| = %g needs a scale beyond f16's "
                       "range (65504), so %s cannot hold it; bf16 or f32 can",
                       src, name, r, k / tt->block, (double)amax, tt->name);
    }
    return 0;
}

/* Adds matrix t of layer l, `name`, from src in the type convert_matrix_type picks. */
static int put_matrix(job *J, arch_tensor at, int l, const char *name, const wmat *src) {
    const model *m = J->m;
    wtype t;
    int fallback, tied = m->wcls.data == m->tok_embd.data;
    if (convert_matrix_type(J->o, at, l, m->cfg.n_layers, tied, src->cols, &t, &fallback))
        return err_set(J->err,
                       "%s: tensor '%s' has rows of %d values, not a multiple of %d: %s "
                       "cannot store it (store such tensors as f16 or f32 instead)",
                       J->m->path, name, src->cols, wtype_get(J->o->type)->block,
                       wtype_name(J->o->type));
    if (fallback && J->rep.n_fallback++ == 0) {
        snprintf(J->rep.first_fallback, sizeof J->rep.first_fallback, "%s", name);
        J->rep.first_fallback_cols = src->cols;
        J->rep.fallback_type = t;
    }
    size_t row_bytes = wtype_row_bytes(t, src->cols), nbytes = row_bytes * (size_t)src->rows;
    const void *data = src->data; /* same type: referenced in place */
    if (src->type != t) {
        unsigned char *buf = malloc(nbytes ? nbytes : 1);
        if (!buf)
            return err_set(J->err, "%s: out of memory for tensor '%s' (%zu bytes)", J->m->path,
                           name, nbytes);
        J->bufs[J->n_bufs++] = buf;
        for (int r = 0; r < src->rows; r++) {
            kern_row_to_f32(src, r, J->row);
            if (convert_narrow_row(J->m->path, name, r, t, J->row, src->cols,
                                   buf + row_bytes * (size_t)r, J->back, J->err))
                return -1;
        }
        data = buf;
    }
    uint64_t ne[2] = {(uint64_t)src->cols, (uint64_t)src->rows};
    J->rep.n_matrices++;
    J->rep.weight_bytes += nbytes;
    gguf_writer_add_tensor(J->w, name, wtype_get(t)->ggml_type, 2, ne, data,
                           nbytes); /* errors: at write */
    return 0;
}

static int put_vector(job *J, const char *name, const float *x, int n) {
    uint64_t ne[1] = {(uint64_t)n};
    J->rep.weight_bytes += sizeof(float) * (size_t)n;
    gguf_writer_add_tensor(J->w, name, GGUF_TENSOR_F32, 1, ne, x, sizeof(float) * (uint64_t)n);
    return 0;
}

void convert_write_config(gguf_writer *w, const model_config *c, const model_arch *a,
                          const convert_opts *o) {
    char k[ARCH_KEY_LEN];
    gguf_writer_add_str(w, "general.architecture", a->name);
    gguf_writer_add_str(w, "general.name", o->name ? o->name : a->name);
    gguf_writer_add_u32(w, "general.file_type", (uint32_t)convert_file_type(o));
    if (wtype_get(o->type)->block > 1) gguf_writer_add_u32(w, "general.quantization_version", 2);
    gguf_writer_add_u32(w, arch_key(a, ARCH_KV_CONTEXT_LENGTH, k), (uint32_t)c->ctx_train);
    gguf_writer_add_u32(w, arch_key(a, ARCH_KV_EMBEDDING_LENGTH, k), (uint32_t)c->dim);
    gguf_writer_add_u32(w, arch_key(a, ARCH_KV_BLOCK_COUNT, k), (uint32_t)c->n_layers);
    gguf_writer_add_u32(w, arch_key(a, ARCH_KV_FEED_FORWARD_LENGTH, k), (uint32_t)c->hidden_dim);
    gguf_writer_add_u32(w, arch_key(a, ARCH_KV_HEAD_COUNT, k), (uint32_t)c->n_heads);
    gguf_writer_add_u32(w, arch_key(a, ARCH_KV_HEAD_COUNT_KV, k), (uint32_t)c->n_kv_heads);
    gguf_writer_add_f32(w, arch_key(a, ARCH_KV_RMS_EPS, k), c->norm_eps);
    if (c->head_size * c->n_heads != c->dim) { /* as llama.cpp's converter: head_dim given */
        gguf_writer_add_u32(w, arch_key(a, ARCH_KV_KEY_LENGTH, k), (uint32_t)c->head_size);
        gguf_writer_add_u32(w, arch_key(a, ARCH_KV_VALUE_LENGTH, k), (uint32_t)c->head_size);
    }
    gguf_writer_add_u32(w, arch_key(a, ARCH_KV_ROPE_DIMENSION_COUNT, k), (uint32_t)c->rope_dim);
    gguf_writer_add_f32(w, arch_key(a, ARCH_KV_ROPE_FREQ_BASE, k), c->rope_theta);
    if (c->rope_factor != 1.0f) {
        gguf_writer_add_str(w, arch_key(a, ARCH_KV_ROPE_SCALING_TYPE, k), "linear");
        gguf_writer_add_f32(w, arch_key(a, ARCH_KV_ROPE_SCALING_FACTOR, k), c->rope_factor);
    }
    gguf_writer_add_u32(w, arch_key(a, ARCH_KV_VOCAB_SIZE, k), (uint32_t)c->vocab_size);
}

/* Writes tensor t of layer l if the model has it. A tied classifier is written once, as
 * llama.cpp expects (no output.weight). */
static int put_tensor(job *J, arch_tensor t, int l) {
    const model *m = J->m;
    const model_arch *a = m->arch ? m->arch : arch_default();
    if (a->tensors[t] == ARCH_ABSENT) return 0;
    char name[64];
    arch_tensor_name(t, l, name, sizeof name);
    if (arch_tensor_get(t)->vector) {
        const float *v = *arch_vector(m, t, l);
        return v ? put_vector(J, name, v, arch_dim_value(&m->cfg, arch_tensor_get(t)->cols)) : 0;
    }
    const wmat *w = arch_matrix(m, t, l);
    if (!w->data) return 0;
    if (t == ARCH_T_OUTPUT && w->data == m->tok_embd.data && w->type == m->tok_embd.type) return 0;
    return put_matrix(J, t, l, name, w);
}

/* In the tensor table's order: model-wide tensors, with the per-layer ones, layer by layer, at
 * the place of the first of them (llama.cpp's order for Llama files). */
static int put_weights(job *J) {
    for (int t = 0; t < ARCH_T_COUNT; t++) {
        if (!arch_tensor_get((arch_tensor)t)->per_layer) {
            if (put_tensor(J, (arch_tensor)t, 0)) return -1;
            continue;
        }
        if (t > 0 && arch_tensor_get((arch_tensor)(t - 1))->per_layer) continue;
        for (int l = 0; l < J->m->cfg.n_layers; l++)
            for (int u = t; u < ARCH_T_COUNT && arch_tensor_get((arch_tensor)u)->per_layer; u++)
                if (put_tensor(J, (arch_tensor)u, l)) return -1;
    }
    return 0;
}

/* Fails early, before minutes of quantizing, when the output cannot be created. */
static int check_writable(const char *path, char *err) {
    file_out o;
    if (file_out_open(&o, path, "GGUF", err)) return -1; /* a directory, FIFO, no folder */
    file_out_abort(&o);
    return 0;
}

int convert_gguf(const model *m, const convert_vocab *v, const convert_opts *o, const char *path,
                 convert_report *report, char *err) {
    const model_config *c = &m->cfg;
    if (convert_vocab_size(v) != c->vocab_size)
        return err_set(err,
                       "%s has %d tokens but %s has a vocabulary of %d: they do not belong "
                       "together",
                       convert_vocab_path(v), convert_vocab_size(v), m->path, c->vocab_size);
    if (c->end_id < 0 || c->end_id >= c->vocab_size)
        return err_set(err, "%s: end token %d outside the vocabulary", m->path, c->end_id);
    if (check_writable(path, err)) return -1;
    int widest = c->dim > c->hidden_dim ? c->dim : c->hidden_dim;
    job J = {.m = m, .o = o, .err = err};
    J.w = gguf_writer_new(0);
    J.bufs = calloc(ARCH_T_COUNT * (1 + (size_t)c->n_layers), sizeof *J.bufs);
    J.row = malloc(sizeof(float) * (size_t)widest);
    J.back = malloc(sizeof(float) * (size_t)widest);
    int rc = -1;
    if (!J.w || !J.bufs || !J.row || !J.back) {
        err_set(err, "out of memory");
        goto done;
    }
    convert_write_config(J.w, c, m->arch ? m->arch : arch_default(), o);
    convert_vocab_write(v, J.w, c->end_id, c->vocab_size);
    if (put_weights(&J) || gguf_writer_write(J.w, path, err)) goto done;
    if (report) *report = J.rep;
    rc = 0;
done:
    for (int i = 0; i < J.n_bufs; i++) free(J.bufs[i]);
    free(J.bufs);
    free(J.row);
    free(J.back);
    gguf_writer_free(J.w);
    return rc;
}
