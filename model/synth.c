/* synth.c: seeded random-weight llama2.c checkpoints. */
#include "model/synth.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "model/llama2c.h"
#include "util/err.h"
#include "util/file.h"
#include "util/num.h"
#include "util/rng.h"

typedef struct {
    const char *name;
    int dim, hidden, layers, heads, kv, vocab, seq, shared;
    const char *what;
} preset;

/* The tinyllamas shapes (karpathy/tinyllamas) and TinyLlama-1.1B's. */
static const preset presets[] = {
    {"260K", 64, 172, 5, 8, 4, 512, 512, 1, "stories260K"},
    {"15M", 288, 768, 6, 6, 6, 32000, 256, 1, "stories15M"},
    {"42M", 512, 1376, 8, 8, 8, 32000, 1024, 1, "stories42M"},
    {"110M", 768, 2048, 12, 12, 12, 32000, 1024, 1, "stories110M"},
    {"1.1B", 2048, 5632, 22, 32, 4, 32000, 2048, 0, "TinyLlama-1.1B"},
};

const char *synth_presets_help(void) {
    return "260K (64,172,5,8,4,512,512), 15M (288,768,6,6,6,32000,256), "
           "42M (512,1376,8,8,8,32000,1024), 110M (768,2048,12,12,12,32000,1024), "
           "1.1B (2048,5632,22,32,4,32000,2048), or dim,hidden,layers,heads,kv_heads,vocab,seq";
}

int synth_config(const char *spec, model_config *c, char *err) {
    memset(c, 0, sizeof *c);
    for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++) {
        const preset *p = &presets[i];
        if (strcmp(spec, p->name) == 0) {
            *c = (model_config){.dim = p->dim, .hidden_dim = p->hidden, .n_layers = p->layers,
                                .n_heads = p->heads, .n_kv_heads = p->kv,
                                .vocab_size = p->vocab, .seq_len = p->seq,
                                .shared_classifier = p->shared};
            model_config_derive(c);
            return model_config_check(c, spec, err);
        }
    }
    /* dim,hidden,layers,heads,kv_heads,vocab,seq: each field parsed strictly (util/num.h), so
     * 4294967360 is refused rather than wrapped to 64. */
    static const struct {
        const char *name;
        long long max;
    } field[7] = {{"dim", MODEL_MAX_DIM},        {"hidden", MODEL_MAX_HIDDEN},
                  {"layers", MODEL_MAX_LAYERS},  {"heads", MODEL_MAX_HEADS},
                  {"kv_heads", MODEL_MAX_HEADS}, {"vocab", MODEL_MAX_VOCAB},
                  {"seq", MODEL_MAX_SEQ}};
    long long v[7];
    const char *p = spec;
    for (int i = 0; i < 7; i++) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        if ((i < 6) != (comma != NULL) || n == 0 || n >= 32)
            return err_set(err, "--config %s: expected a preset (%s)", spec, synth_presets_help());
        char item[32], what[64];
        memcpy(item, p, n);
        item[n] = '\0';
        snprintf(what, sizeof what, "--config: %s", field[i].name);
        if (num_parse(item, 1, field[i].max, &v[i], what, err)) return -1;
        p += n + 1;
    }
    *c = (model_config){.dim = (int)v[0],
                        .hidden_dim = (int)v[1],
                        .n_layers = (int)v[2],
                        .n_heads = (int)v[3],
                        .n_kv_heads = (int)v[4],
                        .vocab_size = (int)v[5],
                        .seq_len = (int)v[6],
                        .shared_classifier = 1};
    model_config_derive(c);
    return model_config_check(c, spec, err);
}

/* Calls emit(buf, n) with the checkpoint body (after the header), chunk by chunk, in file
 * order, so the file writer and the in-memory builder produce the same bytes. */
/* Embedding entries are uniform in +-EMBED_SCALE: small next to what the layers add to the
 * residual stream, so with a tied classifier a token does not simply predict itself. */
#define EMBED_SCALE 0.1f

typedef int (*emit_fn)(void *ctx, const float *buf, size_t n);

static int emit_uniform(rng_state *r, size_t n, float scale, emit_fn emit, void *ctx) {
    float buf[4096];
    while (n > 0) {
        size_t k = n < 4096 ? n : 4096;
        for (size_t i = 0; i < k; i++) buf[i] = scale * (2.0f * rng_unit(r) - 1.0f);
        if (emit(ctx, buf, k)) return -1;
        n -= k;
    }
    return 0;
}

static int emit_const(size_t n, float v, emit_fn emit, void *ctx) {
    float buf[1024];
    for (int i = 0; i < 1024; i++) buf[i] = v;
    while (n > 0) {
        size_t k = n < 1024 ? n : 1024;
        if (emit(ctx, buf, k)) return -1;
        n -= k;
    }
    return 0;
}

static int emit_body(const model_config *c, uint64_t seed, emit_fn emit, void *ctx) {
    rng_state r;
    rng_seed(&r, seed);
    size_t L = (size_t)c->n_layers, d = (size_t)c->dim, kv = (size_t)c->kv_dim,
           h = (size_t)c->hidden_dim;
    float sd = 1.0f / sqrtf((float)d), sh = 1.0f / sqrtf((float)h);
    if (emit_uniform(&r, (size_t)c->vocab_size * d, EMBED_SCALE, emit, ctx)) return -1; /* embedding */
    if (emit_const(L * d, 1.0f, emit, ctx)) return -1;                           /* rms_att */
    if (emit_uniform(&r, L * d * d, sd, emit, ctx)) return -1;                   /* wq */
    if (emit_uniform(&r, L * kv * d, sd, emit, ctx)) return -1;                  /* wk */
    if (emit_uniform(&r, L * kv * d, sd, emit, ctx)) return -1;                  /* wv */
    if (emit_uniform(&r, L * d * d, sd, emit, ctx)) return -1;                   /* wo */
    if (emit_const(L * d, 1.0f, emit, ctx)) return -1;                           /* rms_ffn */
    if (emit_uniform(&r, L * h * d, sd, emit, ctx)) return -1;                   /* w1 */
    if (emit_uniform(&r, L * d * h, sh, emit, ctx)) return -1;                   /* w2 */
    if (emit_uniform(&r, L * h * d, sd, emit, ctx)) return -1;                   /* w3 */
    if (emit_const(d, 1.0f, emit, ctx)) return -1;                               /* rms_final */
    if (emit_const((size_t)c->seq_len * c->head_size, 0.0f, emit, ctx)) return -1; /* RoPE tables */
    if (c->shared_classifier) return 0;
    return emit_uniform(&r, (size_t)c->vocab_size * d, sd, emit, ctx); /* classifier */
}

typedef struct {
    unsigned char *p;
} mem_sink;

static int emit_mem(void *ctx, const float *buf, size_t n) {
    mem_sink *s = ctx;
    memcpy(s->p, buf, n * sizeof(float));
    s->p += n * sizeof(float);
    return 0;
}

static int emit_file(void *ctx, const float *buf, size_t n) {
    return fwrite(buf, sizeof(float), n, (FILE *)ctx) == n ? 0 : -1;
}

int synth_model(model **out, const model_config *c, uint64_t seed, char *err) {
    *out = NULL;
    size_t size = llama2c_legacy_size(c, c->shared_classifier);
    model *m = calloc(1, sizeof *m);
    unsigned char *image = malloc(size);
    if (!m || !image) {
        free(m);
        free(image);
        return err_set(err, "synthetic model: cannot allocate %zu bytes", size);
    }
    m->heap = image;
    int32_t h[7] = {c->dim, c->hidden_dim, c->n_layers, c->n_heads, c->n_kv_heads,
                    c->shared_classifier ? c->vocab_size : -c->vocab_size, c->seq_len};
    memcpy(image, h, sizeof h);
    mem_sink s = {image + sizeof h};
    emit_body(c, seed, emit_mem, &s);
    snprintf(m->path, sizeof m->path, "synthetic:%d,%d,%d,%d,%d,%d,%d@%llu", c->dim,
             c->hidden_dim, c->n_layers, c->n_heads, c->n_kv_heads, c->vocab_size, c->seq_len,
             (unsigned long long)seed);
    if (llama2c_bind_legacy(m, image, size, m->path, err)) {
        model_close(m);
        return -1;
    }
    m->format = "synthetic";
    *out = m;
    return 0;
}

int synth_write(const char *path, const model_config *c, uint64_t seed, char *err) {
    uint64_t size = llama2c_legacy_size(c, c->shared_classifier);
    char human[32], limit[32];
    if (size > SYNTH_MAX_BYTES)
        return err_set(err,
                       "%s: this configuration makes a %s file (%llu bytes), over the %s limit "
                       "for synthetic models",
                       path, file_human_size(size, human, sizeof human), (unsigned long long)size,
                       file_human_size(SYNTH_MAX_BYTES, limit, sizeof limit));
    file_out o;
    if (file_out_open(&o, path, "model", err) || file_out_check_space(&o, size, err)) return -1;
    if (llama2c_write_header(o.f, c, c->shared_classifier) || emit_body(c, seed, emit_file, o.f)) {
        int e = errno;
        file_out_abort(&o);
        return err_set(err, "%s: write failed: %s", path, strerror(e));
    }
    return file_out_commit(&o, err);
}
