/* convert.c: models to GGUF files, and the quantizers (see convert.h). */
#include "model/convert.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/kernels.h"
#include "util/err.h"

/* ---- quantizers ------------------------------------------------------------------------ */

void convert_row_f16(const float *x, uint16_t *y, int n) {
    for (int i = 0; i < n; i++) y[i] = kern_f32_to_f16(x[i]);
}

void convert_row_bf16(const float *x, uint16_t *y, int n) {
    for (int i = 0; i < n; i++) y[i] = kern_f32_to_bf16(x[i]);
}

void convert_row_q8_0(const float *x, void *y, int n) {
    unsigned char *out = y;
    for (int b = 0; b < n / 32; b++, x += 32, out += 34) {
        float amax = 0.0f;
        for (int j = 0; j < 32; j++) amax = fmaxf(amax, fabsf(x[j]));
        /* ggml's choice: the scale maps max|x| to 127, values are multiplied by its reciprocal
         * (the unrounded float, not the stored f16), and rounded: here ties to even (rintf in
         * the default rounding mode) where ggml's roundf breaks them away from zero. */
        float d = amax / 127.0f, id = d != 0.0f ? 1.0f / d : 0.0f;
        uint16_t h = kern_f32_to_f16(d);
        memcpy(out, &h, 2);
        for (int j = 0; j < 32; j++) {
            float q = rintf(x[j] * id); /* |q| <= 127 up to rounding; clamp to be safe */
            q = q > 127.0f ? 127.0f : q < -127.0f ? -127.0f : q;
            out[2 + j] = (unsigned char)(int8_t)q;
        }
    }
}

int convert_type_parse(const char *s, wtype *out) {
    const wtype all[] = {WTYPE_F32, WTYPE_F16, WTYPE_BF16, WTYPE_Q8_0};
    for (int i = 0; i < 4; i++)
        if (s && strcmp(s, wtype_name(all[i])) == 0) return *out = all[i], 0;
    return -1;
}

/* ---- conversion ------------------------------------------------------------------------ */

static uint32_t ggml_type(wtype t) {
    switch (t) {
    case WTYPE_F16:
        return GGUF_TENSOR_F16;
    case WTYPE_BF16:
        return GGUF_TENSOR_BF16;
    case WTYPE_Q8_0:
        return GGUF_TENSOR_Q8_0;
    default:
        return GGUF_TENSOR_F32;
    }
}

/* llama.cpp's general.file_type (enum llama_ftype): ALL_F32, MOSTLY_F16, MOSTLY_Q8_0,
 * MOSTLY_BF16. */
static uint32_t file_type(wtype t) {
    switch (t) {
    case WTYPE_F16:
        return 1;
    case WTYPE_Q8_0:
        return 7;
    case WTYPE_BF16:
        return 32;
    default:
        return 0;
    }
}

typedef struct {
    const model *m;
    const convert_opts *o;
    gguf_writer *w;
    void **bufs; /* converted tensors, owned, freed after the write */
    int n_bufs;
    float *row; /* one widened row */
    convert_report rep;
    char *err;
} job;

/* 1 if an f16 or bf16 value (bits h) is infinite. */
static int half_inf(wtype t, uint16_t h) {
    return isinf(t == WTYPE_BF16 ? kern_bf16_to_f32(h) : kern_f16_to_f32(h));
}

/* Narrows row r of tensor `name` (n values in x) to type t at out, refusing values the type
 * cannot hold: non-finite ones, and in f16 anything that rounds past 65504 (bf16 has f32's
 * range but can round to infinity at its very top; a q8_0 block's scale max|x| / 127 is an
 * f16). */
static int narrow(job *J, const char *name, int r, wtype t, const float *x, int n, void *out) {
    const char *src = J->m->path;
    if (t == WTYPE_F32) {
        memcpy(out, x, sizeof(float) * (size_t)n);
        return 0;
    }
    for (int k = 0; k < n; k++)
        if (!isfinite(x[k]))
            return err_set(J->err, "%s: tensor '%s' row %d column %d is %g, not a finite number",
                           src, name, r, k, (double)x[k]);
    if (t == WTYPE_Q8_0) {
        convert_row_q8_0(x, out, n);
        for (int b = 0; b < n / 32; b++) {
            uint16_t d;
            memcpy(&d, (unsigned char *)out + 34 * (size_t)b, 2);
            if (half_inf(WTYPE_F16, d))
                return err_set(J->err,
                               "%s: tensor '%s' row %d, block %d: max|x| / 127 is beyond "
                               "f16's range (65504), so q8_0 cannot scale it; bf16 or f32 can",
                               src, name, r, b);
        }
        return 0;
    }
    uint16_t *h = out;
    if (t == WTYPE_F16)
        convert_row_f16(x, h, n);
    else
        convert_row_bf16(x, h, n);
    for (int k = 0; k < n; k++)
        if (half_inf(t, h[k]))
            return err_set(J->err, "%s: tensor '%s' row %d column %d = %g is beyond %s's range%s",
                           src, name, r, k, (double)x[k], wtype_name(t),
                           t == WTYPE_F16 ? " (65504); bf16 or f32 can hold it" : "");
    return 0;
}

/* Adds matrix `name` from src in the chosen type (or the fallback). */
static int put_matrix(job *J, const char *name, const wmat *src) {
    wtype t = J->o->type;
    if (t == WTYPE_Q8_0 && src->cols % 32) {
        if (J->o->fallback == CONVERT_FALLBACK_NONE)
            return err_set(J->err,
                           "%s: tensor '%s' has rows of %d values, not a multiple of 32: q8_0 "
                           "cannot store it (store such tensors as f16 or f32 instead)",
                           J->m->path, name, src->cols);
        t = J->o->fallback == CONVERT_FALLBACK_F32 ? WTYPE_F32 : WTYPE_F16;
        if (J->rep.n_fallback++ == 0) {
            snprintf(J->rep.first_fallback, sizeof J->rep.first_fallback, "%s", name);
            J->rep.first_fallback_cols = src->cols;
        }
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
            if (narrow(J, name, r, t, J->row, src->cols, buf + row_bytes * (size_t)r)) return -1;
        }
        data = buf;
    }
    uint64_t ne[2] = {(uint64_t)src->cols, (uint64_t)src->rows};
    J->rep.n_matrices++;
    J->rep.weight_bytes += nbytes;
    gguf_writer_add_tensor(J->w, name, ggml_type(t), 2, ne, data, nbytes); /* errors: at write */
    return 0;
}

static int put_norm(job *J, const char *name, const float *x, int n) {
    uint64_t ne[1] = {(uint64_t)n};
    J->rep.weight_bytes += sizeof(float) * (size_t)n;
    gguf_writer_add_tensor(J->w, name, GGUF_TENSOR_F32, 1, ne, x, sizeof(float) * (uint64_t)n);
    return 0;
}

static void put_config(job *J, const convert_vocab *v) {
    const model_config *c = &J->m->cfg;
    gguf_writer *w = J->w;
    gguf_writer_add_str(w, "general.architecture", "llama");
    gguf_writer_add_str(w, "general.name", J->o->name ? J->o->name : "llama");
    gguf_writer_add_u32(w, "general.file_type", file_type(J->o->type));
    if (J->o->type == WTYPE_Q8_0) gguf_writer_add_u32(w, "general.quantization_version", 2);
    gguf_writer_add_u32(w, "llama.context_length", (uint32_t)c->seq_len);
    gguf_writer_add_u32(w, "llama.embedding_length", (uint32_t)c->dim);
    gguf_writer_add_u32(w, "llama.block_count", (uint32_t)c->n_layers);
    gguf_writer_add_u32(w, "llama.feed_forward_length", (uint32_t)c->hidden_dim);
    gguf_writer_add_u32(w, "llama.attention.head_count", (uint32_t)c->n_heads);
    gguf_writer_add_u32(w, "llama.attention.head_count_kv", (uint32_t)c->n_kv_heads);
    gguf_writer_add_f32(w, "llama.attention.layer_norm_rms_epsilon", c->norm_eps);
    gguf_writer_add_u32(w, "llama.rope.dimension_count", (uint32_t)c->rope_dim);
    gguf_writer_add_f32(w, "llama.rope.freq_base", c->rope_theta);
    gguf_writer_add_u32(w, "llama.vocab_size", (uint32_t)c->vocab_size);
    convert_vocab_write(v, w, c->end_id);
}

static int put_weights(job *J) {
    const model *m = J->m;
    char name[64];
    if (put_matrix(J, "token_embd.weight", &m->tok_embd)) return -1;
    for (int l = 0; l < m->cfg.n_layers; l++) {
        const model_layer *y = &m->layers[l];
        struct {
            const char *suffix;
            const wmat *w;
        } mats[] = {{"attn_q", &y->wq},      {"attn_k", &y->wk},   {"attn_v", &y->wv},
                    {"attn_output", &y->wo}, {"ffn_gate", &y->w1}, {"ffn_down", &y->w2},
                    {"ffn_up", &y->w3}};
        snprintf(name, sizeof name, "blk.%d.attn_norm.weight", l);
        if (put_norm(J, name, y->rms_att, m->cfg.dim)) return -1;
        snprintf(name, sizeof name, "blk.%d.ffn_norm.weight", l);
        if (put_norm(J, name, y->rms_ffn, m->cfg.dim)) return -1;
        for (size_t i = 0; i < sizeof mats / sizeof mats[0]; i++) {
            snprintf(name, sizeof name, "blk.%d.%s.weight", l, mats[i].suffix);
            if (put_matrix(J, name, mats[i].w)) return -1;
        }
    }
    if (put_norm(J, "output_norm.weight", m->rms_final, m->cfg.dim)) return -1;
    /* A tied classifier is written once, as llama.cpp expects (no output.weight). */
    if (m->wcls.data == m->tok_embd.data && m->wcls.type == m->tok_embd.type) return 0;
    return put_matrix(J, "output.weight", &m->wcls);
}

/* Fails early, before minutes of quantizing, when the output cannot be created. */
static int check_writable(const char *path, char *err) {
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f) return err_set(err, "%s: cannot create: %s", tmp, strerror(errno));
    fclose(f);
    remove(tmp);
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
    J.bufs = calloc(8 + 7 * (size_t)c->n_layers, sizeof *J.bufs);
    J.row = malloc(sizeof(float) * (size_t)widest);
    int rc = -1;
    if (!J.w || !J.bufs || !J.row) {
        err_set(err, "out of memory");
        goto done;
    }
    put_config(&J, v);
    if (put_weights(&J) || gguf_writer_write(J.w, path, err)) goto done;
    if (report) *report = J.rep;
    rc = 0;
done:
    for (int i = 0; i < J.n_bufs; i++) free(J.bufs[i]);
    free(J.bufs);
    free(J.row);
    gguf_writer_free(J.w);
    return rc;
}
