/* synth_gguf.c: synthetic models written as GGUF, tensor by tensor (see synth.h).
 *
 * The tensors are those of the architecture's row (arch.h) that the shape has: output.weight
 * only when the classifier is separate, rope_freqs.weight only with llama3 RoPE scaling. Each
 * is drawn from its own generator, seeded by the seed and the tensor's name, so the bytes of a
 * tensor do not depend on which other tensors the file holds or on the weight type's order of
 * work; a matrix is generated row by row in f32 and narrowed with its type's from_float (the
 * type convert_matrix_type picks: one type, or llama-quantize's mix). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/arch.h"
#include "model/convert/synth.h"
#include "util/err.h"
#include "util/file.h"
#include "util/rng.h"

enum { DIST_UNIFORM, DIST_AROUND_ONE, DIST_LLAMA3 };

/* One tensor's recipe: filled at write time by fill_tensor. */
typedef struct {
    const synth_shape *s;
    wtype type;
    int rows, cols, dist;
    float scale;
    uint64_t seed;
} recipe;

/* FNV-1a of the name, mixed into the seed. */
static uint64_t name_seed(uint64_t seed, const char *name) {
    uint64_t h = 1469598103934665603ull;
    for (const char *p = name; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
    return h ^ (seed * 0x9E3779B97F4A7C15ull);
}

/* llama.cpp's converter (LlamaModel.generate_extra_tensors): per rotated pair i, the
 * wavelength 2 pi / base^(-2i/dim) against the original context's 8192 tokens: short waves
 * keep factor 1, long ones get `factor`, the ones between are smoothed (low_freq_factor 1,
 * high_freq_factor 4, the values of Llama 3.1 and 3.2). */
static void llama3_factors(const model_config *c, float factor, float *out) {
    const double low = 1.0, high = 4.0, old_ctx = 8192.0;
    const double low_wave = old_ctx / low, high_wave = old_ctx / high;
    for (int i = 0; i < c->rope_dim / 2; i++) {
        float freq = 1.0f / powf(c->rope_theta, (float)(2 * i) / (float)c->rope_dim);
        double wave = 2.0 * M_PI / freq;
        if (wave < high_wave)
            out[i] = 1.0f;
        else if (wave > low_wave)
            out[i] = factor;
        else {
            double smooth = (old_ctx / wave - low) / (high - low);
            out[i] = (float)(1.0 / ((1.0 - smooth) / factor + smooth));
        }
    }
}

static void draw(rng_state *r, const recipe *q, float *x, int n) {
    for (int i = 0; i < n; i++) {
        float u = 2.0f * rng_unit(r) - 1.0f;
        x[i] = q->dist == DIST_AROUND_ONE ? 1.0f + q->scale * u : q->scale * u;
    }
}

static int fill_tensor(void *ctx, void *buf, char *err) {
    const recipe *q = ctx;
    if (q->dist == DIST_LLAMA3) {
        llama3_factors(&q->s->cfg, q->s->llama3_factor, buf);
        return 0;
    }
    rng_state r;
    rng_seed(&r, q->seed);
    const wtype_traits *tt = wtype_get(q->type);
    float *row = q->type == WTYPE_F32 ? NULL : malloc(sizeof(float) * (size_t)q->cols);
    if (q->type != WTYPE_F32 && !row) return err_set(err, "out of memory");
    size_t row_bytes = wtype_row_bytes(q->type, q->cols);
    for (int i = 0; i < q->rows; i++) {
        unsigned char *out = (unsigned char *)buf + row_bytes * (size_t)i;
        if (!row) {
            draw(&r, q, (float *)(void *)out, q->cols);
            continue;
        }
        draw(&r, q, row, q->cols);
        tt->from_float(row, out, q->cols);
    }
    free(row);
    return 0;
}

/* The recipe of tensor t (layer l) of s, or 0 if s does not have it. */
static int plan_tensor(const synth_shape *s, const model_arch *a, arch_tensor t, int l,
                       const convert_opts *o, uint64_t seed, recipe *q, char *name, size_t n) {
    const model_config *c = &s->cfg;
    if (a->tensors[t] == ARCH_ABSENT) return 0;
    if (t == ARCH_T_OUTPUT && c->shared_classifier) return 0;
    if (t == ARCH_T_ROPE_FREQS && s->llama3_factor == 0.0f) return 0;
    if (a->tensors[t] == ARCH_OPTIONAL && t != ARCH_T_OUTPUT && t != ARCH_T_ROPE_FREQS) return 0;
    const arch_tensor_info *ti = arch_tensor_get(t);
    arch_tensor_name(t, l, name, n);
    *q = (recipe){.s = s,
                  .type = WTYPE_F32,
                  .rows = arch_dim_value(c, ti->rows),
                  .cols = arch_dim_value(c, ti->cols),
                  .seed = name_seed(seed, name)};
    if (ti->vector) {
        int norm = t == ARCH_T_ATTN_NORM || t == ARCH_T_FFN_NORM || t == ARCH_T_OUTPUT_NORM ||
                   t == ARCH_T_ATTN_Q_NORM || t == ARCH_T_ATTN_K_NORM;
        q->dist = t == ARCH_T_ROPE_FREQS ? DIST_LLAMA3 : norm ? DIST_AROUND_ONE : DIST_UNIFORM;
        q->scale = norm ? 0.25f : 0.2f;
        return 1;
    }
    int fallback;
    if (convert_matrix_type(o, t, l, c->n_layers, c->shared_classifier, q->cols, &q->type,
                            &fallback))
        q->type = WTYPE_F16; /* o->fallback NONE: synth has no reason to refuse */
    q->dist = DIST_UNIFORM;
    q->scale = t == ARCH_T_TOKEN_EMBD ? 0.1f : 1.0f / sqrtf((float)q->cols);
    return 1;
}

int synth_write_gguf(const char *path, const synth_shape *s, const convert_opts *o,
                     const convert_vocab *v, uint64_t seed, char *err) {
    const model_config *c = &s->cfg;
    const model_arch *a = arch_find(s->arch);
    if (!a) return err_set(err, "%s: architecture '%s' has no row", path, s->arch);
    if (v && convert_vocab_size(v) > c->vocab_size)
        return err_set(err, "%s has %d tokens, more than the %d rows of %s's embedding",
                       convert_vocab_path(v), convert_vocab_size(v), c->vocab_size, s->what);
    size_t n_max = ARCH_T_COUNT * (1 + (size_t)c->n_layers);
    recipe *qs = calloc(n_max, sizeof *qs);
    gguf_writer *w = gguf_writer_new(0);
    if (!qs || !w) {
        free(qs);
        gguf_writer_free(w);
        return err_set(err, "out of memory");
    }
    model_config written = *c;
    written.ctx_train = c->seq_len;
    convert_write_config(w, &written, a, o);
    if (v)
        convert_vocab_write(v, w, convert_vocab_eos(v), c->vocab_size);
    else
        gguf_writer_add_str(w, "tokenizer.ggml.model", "none");
    /* the tensor table's order, per-layer tensors layer by layer at their place (convert's) */
    size_t nq = 0;
    for (int t = 0; t < ARCH_T_COUNT; t++) {
        int per_layer = arch_tensor_get((arch_tensor)t)->per_layer;
        if (per_layer && t > 0 && arch_tensor_get((arch_tensor)(t - 1))->per_layer) continue;
        int last = t;
        while (per_layer && last + 1 < ARCH_T_COUNT &&
               arch_tensor_get((arch_tensor)(last + 1))->per_layer)
            last++;
        for (int l = 0; l < (per_layer ? c->n_layers : 1); l++)
            for (int u = t; u <= last; u++) {
                char name[64];
                recipe *q = &qs[nq];
                if (!plan_tensor(s, a, (arch_tensor)u, l, o, seed, q, name, sizeof name)) continue;
                uint64_t ne[2] = {(uint64_t)q->cols, (uint64_t)q->rows};
                gguf_writer_add_tensor_fill(
                    w, name, wtype_get(q->type)->ggml_type, q->rows == 1 ? 1 : 2, ne,
                    wtype_row_bytes(q->type, q->cols) * (uint64_t)q->rows, fill_tensor, q);
                nq++;
            }
    }
    uint64_t size = gguf_writer_size(w);
    char human[32], limit[32];
    int rc = -1;
    file_out f = {0};
    if (size > SYNTH_MAX_BYTES) {
        err_set(err,
                "%s: this configuration makes a %s file (%llu bytes), over the %s limit for "
                "synthetic models",
                path, file_human_size(size, human, sizeof human), (unsigned long long)size,
                file_human_size(SYNTH_MAX_BYTES, limit, sizeof limit));
    } else if (file_out_open(&f, path, "model", err) == 0 &&
               file_out_check_space(&f, size, err) == 0) {
        char why[ERR_LEN];
        if (gguf_writer_write_stream(w, f.f, why)) {
            file_out_abort(&f);
            err_set(err, "%s: %s", path, why);
        } else {
            rc = file_out_commit(&f, err);
        }
    }
    gguf_writer_free(w);
    free(qs);
    return rc;
}
