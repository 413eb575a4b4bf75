/* synth.c: seeded random-weight llama2.c checkpoints. */
#include "model/convert/synth.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "model/arch.h"
#include "model/formats/llama2c.h"
#include "util/err.h"
#include "util/file.h"
#include "util/num.h"
#include "util/rng.h"

typedef struct {
    const char *name, *arch;
    int dim, hidden, layers, heads, kv, head, vocab, seq, tied;
    float theta, eps, linear, llama3; /* RoPE base, RMSNorm eps, linear factor, llama3 factor */
    const char *what;
} preset;

/* The real models' shapes (their Hugging Face config.json: hidden_size, intermediate_size,
 * num_hidden_layers, num_attention_heads, num_key_value_heads, head_dim, vocab_size,
 * max_position_embeddings, tie_word_embeddings, rope_theta, rms_norm_eps, rope_scaling), and
 * small shapes of each architecture for tests (vocabulary 512: tok512.bin's). */
static const preset presets[] = {
    /* llama2.c checkpoints: the tinyllamas (karpathy/tinyllamas) and TinyLlama-1.1B */
    {"260K", "llama", 64, 172, 5, 8, 4, 0, 512, 512, 1, 1e4f, 1e-5f, 1, 0, "stories260K"},
    {"15M", "llama", 288, 768, 6, 6, 6, 0, 32000, 256, 1, 1e4f, 1e-5f, 1, 0, "stories15M"},
    {"42M", "llama", 512, 1376, 8, 8, 8, 0, 32000, 1024, 1, 1e4f, 1e-5f, 1, 0, "stories42M"},
    {"110M", "llama", 768, 2048, 12, 12, 12, 0, 32000, 1024, 1, 1e4f, 1e-5f, 1, 0, "stories110M"},
    {"1.1B", "llama", 2048, 5632, 22, 32, 4, 0, 32000, 2048, 0, 1e4f, 1e-5f, 1, 0,
     "TinyLlama-1.1B"},
    /* GGUF only */
    {"qwen2.5-0.5b", "qwen2", 896, 4864, 24, 14, 2, 64, 151936, 32768, 1, 1e6f, 1e-6f, 1, 0,
     "Qwen2.5-0.5B"},
    {"qwen2.5-1.5b", "qwen2", 1536, 8960, 28, 12, 2, 128, 151936, 32768, 1, 1e6f, 1e-6f, 1, 0,
     "Qwen2.5-1.5B"},
    {"qwen2.5-7b", "qwen2", 3584, 18944, 28, 28, 4, 128, 152064, 32768, 0, 1e6f, 1e-6f, 1, 0,
     "Qwen2.5-7B"},
    {"qwen3-0.6b", "qwen3", 1024, 3072, 28, 16, 8, 128, 151936, 40960, 1, 1e6f, 1e-6f, 1, 0,
     "Qwen3-0.6B"},
    {"qwen3-4b", "qwen3", 2560, 9728, 36, 32, 8, 128, 151936, 40960, 1, 1e6f, 1e-6f, 1, 0,
     "Qwen3-4B"},
    {"qwen3-8b", "qwen3", 4096, 12288, 36, 32, 8, 128, 151936, 40960, 0, 1e6f, 1e-6f, 1, 0,
     "Qwen3-8B"},
    {"llama-3.2-1b", "llama", 2048, 8192, 16, 32, 8, 64, 128256, 131072, 1, 5e5f, 1e-5f, 1, 32,
     "Llama-3.2-1B"},
    {"llama-3.1-8b", "llama", 4096, 14336, 32, 32, 8, 128, 128256, 131072, 0, 5e5f, 1e-5f, 1, 8,
     "Llama-3.1-8B"},
    {"deepseek-coder-1.3b", "llama", 2048, 5504, 24, 16, 16, 128, 32256, 16384, 0, 1e5f, 1e-6f, 4,
     0, "DeepSeek-Coder-1.3B"},
    {"deepseek-coder-6.7b", "llama", 4096, 11008, 32, 32, 32, 128, 32256, 16384, 0, 1e5f, 1e-6f, 4,
     0, "DeepSeek-Coder-6.7B"},
    /* small shapes of each architecture and feature, for tests (tests/data/greedy_llama_cpp.tsv) */
    {"tiny-llama3", "llama", 256, 512, 2, 8, 2, 32, 512, 2048, 0, 5e5f, 1e-5f, 1, 8,
     "Llama-3.1 features"},
    {"tiny-mistral", "llama", 256, 512, 2, 8, 2, 48, 512, 2048, 1, 1e6f, 1e-5f, 1, 0,
     "Mistral-Nemo-style head size"},
    {"tiny-dscoder", "llama", 256, 512, 2, 4, 4, 64, 512, 2048, 0, 1e5f, 1e-6f, 4, 0,
     "DeepSeek-Coder features"},
    {"tiny-qwen2", "qwen2", 256, 512, 2, 4, 2, 64, 512, 2048, 1, 1e6f, 1e-6f, 1, 0,
     "Qwen2 features"},
    {"tiny-qwen3", "qwen3", 256, 512, 2, 8, 4, 64, 512, 2048, 0, 1e6f, 1e-6f, 1, 0,
     "Qwen3 features"},
};
#define N_PRESETS (sizeof presets / sizeof presets[0])

const char *synth_presets_help(void) {
    return "260K, 15M, 42M, 110M, 1.1B (llama2.c or GGUF); qwen2.5-0.5b, qwen2.5-1.5b, "
           "qwen2.5-7b, qwen3-0.6b, qwen3-4b, qwen3-8b, llama-3.2-1b, llama-3.1-8b, "
           "deepseek-coder-1.3b, deepseek-coder-6.7b, tiny-llama3, tiny-mistral, tiny-dscoder, "
           "tiny-qwen2, tiny-qwen3 (GGUF); or [llama:|qwen2:|qwen3:]dim,hidden,layers,heads,"
           "kv_heads,vocab,seq[,head_size]";
}

static void from_preset(const preset *p, synth_shape *s) {
    memset(s, 0, sizeof *s);
    model_config *c = &s->cfg;
    *c = (model_config){.dim = p->dim,
                        .hidden_dim = p->hidden,
                        .n_layers = p->layers,
                        .n_heads = p->heads,
                        .n_kv_heads = p->kv,
                        .vocab_size = p->vocab,
                        .seq_len = p->seq,
                        .shared_classifier = p->tied,
                        .rope_theta = p->theta,
                        .norm_eps = p->eps,
                        .rope_factor = p->linear};
    c->head_size = p->head ? p->head : p->dim / p->heads;
    c->rope_dim = c->head_size;
    s->arch = p->arch;
    s->llama3_factor = p->llama3;
    s->what = p->what;
}

int synth_shape_parse(const char *spec, synth_shape *s, char *err) {
    memset(s, 0, sizeof *s);
    for (size_t i = 0; i < N_PRESETS; i++)
        if (strcmp(spec, presets[i].name) == 0) {
            from_preset(&presets[i], s);
            model_config_derive(&s->cfg);
            s->cfg.rope = arch_find(s->arch)->rope;
            return model_config_check(&s->cfg, spec, err);
        }
    /* [ARCH:]dim,hidden,layers,heads,kv_heads,vocab,seq[,head]: each field parsed strictly
     * (util/num.h), so 4294967360 is refused rather than wrapped to 64. */
    static const struct {
        const char *name;
        long long max;
    } field[8] = {{"dim", MODEL_MAX_DIM},        {"hidden", MODEL_MAX_HIDDEN},
                  {"layers", MODEL_MAX_LAYERS},  {"heads", MODEL_MAX_HEADS},
                  {"kv_heads", MODEL_MAX_HEADS}, {"vocab", MODEL_MAX_VOCAB},
                  {"seq", MODEL_MAX_SEQ},        {"head_size", MODEL_MAX_HEAD}};
    long long v[8] = {0};
    const char *p = spec, *colon = strchr(spec, ':');
    char arch[16] = "llama";
    if (colon) {
        size_t n = (size_t)(colon - spec);
        if (n >= sizeof arch) n = sizeof arch - 1;
        memcpy(arch, spec, n);
        arch[n] = 0;
        if (!arch_find(arch))
            return err_set(err, "--config %s: unknown architecture '%s' (llama, qwen2, qwen3)",
                           spec, arch);
        p = colon + 1;
    }
    int n_fields = 0;
    for (int i = 0; i < 8; i++) {
        const char *comma = strchr(p, ',');
        size_t n = comma ? (size_t)(comma - p) : strlen(p);
        if (n == 0 || n >= 32 || (i < 6 && !comma) || (i == 7 && comma))
            return err_set(err, "--config %s: expected a preset (%s)", spec, synth_presets_help());
        char item[32], what[64];
        memcpy(item, p, n);
        item[n] = '\0';
        snprintf(what, sizeof what, "--config: %s", field[i].name);
        if (num_parse(item, 1, field[i].max, &v[i], what, err)) return -1;
        n_fields = i + 1;
        if (!comma) break;
        p = comma + 1;
    }
    int qwen = strcmp(arch, "llama") != 0;
    preset c = {spec,
                arch_find(arch)->name,
                (int)v[0],
                (int)v[1],
                (int)v[2],
                (int)v[3],
                (int)v[4],
                n_fields == 8 ? (int)v[7] : 0,
                (int)v[5],
                (int)v[6],
                1,
                qwen ? 1e6f : 1e4f,
                qwen ? 1e-6f : 1e-5f,
                1,
                0,
                "custom"};
    from_preset(&c, s);
    model_config_derive(&s->cfg);
    s->cfg.rope = arch_find(s->arch)->rope;
    return model_config_check(&s->cfg, spec, err);
}

int synth_needs_gguf(const synth_shape *s) {
    const model_config *c = &s->cfg;
    return strcmp(s->arch, "llama") != 0 || c->head_size * c->n_heads != c->dim ||
           c->rope_theta != 1e4f || c->norm_eps != 1e-5f || c->rope_factor != 1.0f ||
           s->llama3_factor != 0.0f;
}

int synth_config(const char *spec, model_config *c, char *err) {
    synth_shape s;
    memset(c, 0, sizeof *c);
    if (synth_shape_parse(spec, &s, err)) return -1;
    if (synth_needs_gguf(&s))
        return err_set(
            err,
            "--config %s: the %s shape (%s) is not a plain llama2.c checkpoint; write it "
            "as GGUF (--type)",
            spec, s.what, s.arch);
    *c = s.cfg;
    return 0;
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
