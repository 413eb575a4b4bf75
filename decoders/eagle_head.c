/* eagle_head.c: see eagle_head.h. */
#include "decoders/eagle_head.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/formats/safetensors.h"
#include "model/kernels/kernels.h"
#include "util/err.h"

/* Products of at least this many multiply-adds share the pool's threads (smaller ones run on
 * the caller: waking the workers costs more than they save). */
#define PARALLEL_MIN_MACS (1 << 18)

struct eagle_head {
    eagle_head_config cfg;
    const model *target;
    tpool *pool;
    char path[1100]; /* DIR/model.safetensors, for messages */
    void *weights;   /* the tensors, widened or copied into one aligned block */
    wmat fc, wq, wk, wv, wo, w1, w2, w3, embd;
    const float *fc_b, *bq, *bk, *bv, *rms_ffn;
    int max_rows, max_scratch, cap; /* cap: committed + scratch rows the cache holds */
    int stride;                     /* ints per row of tail: the longest chain or tree path */
    int n_past, n_scratch;
    float *kc, *vc;        /* [kv head][cap][head_size] */
    int *sdepth, *sparent; /* per scratch row: depth (0 below the text), parent */
    float *rope_inv;       /* [head_size / 2] inverse frequencies */
    /* working rows (max_rows each) */
    float *in, *x, *q, *k, *v, *att, *xb, *hb, *hb2, *scores;
    int *tail; /* per row: its scratch ancestors' and its own cache slots */
    int *n_tail;
    const int **tails;
};

/* ---- products on the pool ------------------------------------------------------------------ */

typedef struct {
    const wmat *w;
    const float *x;
    int ldx, T;
    float *y;
    int ldy;
} mm_task;

static void mm_worker(void *arg, int chunk, int n_chunks, int thread) {
    (void)thread;
    const mm_task *t = arg;
    int lo, hi;
    tpool_split(t->w->rows, 16, chunk, n_chunks, &lo, &hi);
    if (lo < hi) kern_matmul(t->w, lo, hi, t->x, t->ldx, t->T, t->y + lo, t->ldy);
}

/* y[t][r] = w row r . x[t] for T rows of x. */
static void matmul(eagle_head *h, const wmat *w, const float *x, int ldx, int T, float *y,
                   int ldy) {
    mm_task t = {w, x, ldx, T, y, ldy};
    size_t macs = (size_t)w->rows * (size_t)w->cols * (size_t)T;
    int nt = macs < PARALLEL_MIN_MACS ? 1 : tpool_size(h->pool);
    int chunks = nt == 1 ? 1 : 4 * nt;
    if (chunks > (w->rows + 15) / 16) chunks = (w->rows + 15) / 16;
    if (chunks < 1) chunks = 1;
    tpool_run(nt == 1 ? NULL : h->pool, mm_worker, &t, chunks);
}

/* ---- loading ------------------------------------------------------------------------------- */

void eagle_head_free(eagle_head *h) {
    if (!h) return;
    free(h->weights), free(h->kc), free(h->vc), free(h->sdepth), free(h->sparent);
    free(h->rope_inv), free(h->in), free(h->x), free(h->q), free(h->k), free(h->v), free(h->att);
    free(h->xb), free(h->hb), free(h->hb2), free(h->scores), free(h->tail), free(h->n_tail);
    free(h->tails);
    free(h);
}

const eagle_head_config *eagle_head_cfg(const eagle_head *h) {
    return &h->cfg;
}

/* An integer field of config.json: *out = its value, def when absent (def < 0: required). */
static int json_int(json_t *root, const char *path, const char *key, int def, int lo, int hi,
                    int *out, char *err) {
    json_t *v = json_object_get(root, key);
    if (!v || json_is_null(v)) {
        if (def < 0) return err_set(err, "%s: field '%s' is missing", path, key);
        *out = def;
        return 0;
    }
    if (!json_is_integer(v)) return err_set(err, "%s: field '%s' is not an integer", path, key);
    json_int_t x = json_integer_value(v);
    if (x < lo || x > hi)
        return err_set(err, "%s: field '%s' is %lld, expected %d..%d", path, key, (long long)x, lo,
                       hi);
    *out = (int)x;
    return 0;
}

static int json_num(json_t *root, const char *path, const char *key, double def, double lo,
                    double hi, float *out, char *err) {
    json_t *v = json_object_get(root, key);
    if (!v || json_is_null(v)) {
        *out = (float)def;
        return 0;
    }
    if (!json_is_number(v)) return err_set(err, "%s: field '%s' is not a number", path, key);
    double x = json_number_value(v);
    if (!(x >= lo && x <= hi))
        return err_set(err, "%s: field '%s' is %g, expected %g..%g", path, key, x, lo, hi);
    *out = (float)x;
    return 0;
}

static int json_bool(json_t *root, const char *path, const char *key, int def, int *out,
                     char *err) {
    json_t *v = json_object_get(root, key);
    if (!v || json_is_null(v)) {
        *out = def;
        return 0;
    }
    if (!json_is_boolean(v)) return err_set(err, "%s: field '%s' is not true or false", path, key);
    *out = json_is_true(v);
    return 0;
}

static int read_config(const char *path, eagle_head_config *c, char *err) {
    json_error_t je;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
    if (!root) {
        if (je.line <= 0) return err_set(err, "%s: cannot read: %s", path, je.text);
        return err_set(err, "%s:%d: not valid JSON: %s", path, je.line, je.text);
    }
    int rc = -1, layers = 0;
    if (!json_is_object(root)) {
        err_set(err, "%s: not a JSON object", path);
        goto done;
    }
    /* EAGLE-3 heads (a draft vocabulary, several layers' features) are another model */
    if (json_object_get(root, "draft_vocab_size")) {
        err_set(err,
                "%s: an EAGLE-3 head (field 'draft_vocab_size'): only EAGLE-1/2 heads "
                "(cnets1.Model) are supported",
                path);
        goto done;
    }
    if (json_int(root, path, "hidden_size", -1, 1, MODEL_MAX_DIM, &c->dim, err) ||
        json_int(root, path, "intermediate_size", -1, 1, MODEL_MAX_HIDDEN, &c->hidden_dim, err) ||
        json_int(root, path, "num_attention_heads", -1, 1, MODEL_MAX_HEADS, &c->n_heads, err) ||
        json_int(root, path, "num_key_value_heads", c->n_heads, 1, MODEL_MAX_HEADS, &c->n_kv_heads,
                 err) ||
        json_int(root, path, "num_hidden_layers", 1, 1, MODEL_MAX_LAYERS, &layers, err) ||
        json_int(root, path, "vocab_size", -1, 1, MODEL_MAX_VOCAB, &c->vocab_size, err) ||
        json_num(root, path, "rms_norm_eps", 1e-6, 0, 1, &c->norm_eps, err) ||
        json_num(root, path, "rope_theta", 10000, 1, 1e12, &c->rope_theta, err) ||
        json_bool(root, path, "bias", 1, &c->fc_bias, err) ||
        json_bool(root, path, "qkv_bias", 0, &c->qkv_bias, err))
        goto done;
    if (layers != 1) {
        err_set(err,
                "%s: field 'num_hidden_layers' is %d: heads of one layer are supported "
                "(every published EAGLE-1/2 head)",
                path, layers);
        goto done;
    }
    if (c->dim % c->n_heads || c->n_heads % c->n_kv_heads) {
        err_set(err,
                "%s: hidden_size %d, num_attention_heads %d, num_key_value_heads %d: the "
                "heads must divide the width and the kv heads the heads",
                path, c->dim, c->n_heads, c->n_kv_heads);
        goto done;
    }
    c->head_size = c->dim / c->n_heads;
    if (c->head_size % 2) {
        err_set(err, "%s: head size %d is odd (RoPE rotates pairs)", path, c->head_size);
        goto done;
    }
    json_t *act = json_object_get(root, "hidden_act");
    if (act && !(json_is_string(act) && strcmp(json_string_value(act), "silu") == 0)) {
        err_set(err, "%s: field 'hidden_act' is not \"silu\"", path);
        goto done;
    }
    c->rope_factor = 1;
    json_t *rs = json_object_get(root, "rope_scaling");
    if (rs && !json_is_null(rs)) {
        json_t *ty = json_object_get(rs, "type");
        if (!ty) ty = json_object_get(rs, "rope_type");
        json_t *f = json_object_get(rs, "factor");
        if (!json_is_object(rs) || !json_is_string(ty) ||
            strcmp(json_string_value(ty), "linear") != 0 || !json_is_number(f) ||
            !(json_number_value(f) >= 1)) {
            err_set(err,
                    "%s: field 'rope_scaling' is not none or {\"type\": \"linear\", "
                    "\"factor\": >= 1}",
                    path);
            goto done;
        }
        c->rope_factor = (float)json_number_value(f);
    }
    rc = 0;
done:
    json_decref(root);
    return rc;
}

/* The tensors the head reads, and where each goes. */
typedef struct {
    const char *name;
    int rows, cols; /* cols 0: a vector of rows values */
    int required;   /* 1: required, 0: optional, -1: not read */
    wmat *mat;
    const float **vec;
} tensor_want;

/* Bytes one tensor takes in the head's block (64-byte aligned): vectors widened to f32,
 * matrices in their stored type. */
static size_t aligned(size_t n) {
    return (n + 63) & ~(size_t)63;
}

static int load_tensors(eagle_head *h, const safetensors *sf, const tensor_want *want, int n_want,
                        char *err) {
    const char *path = h->path;
    size_t total = 0;
    const st_tensor *ts[16];
    for (int i = 0; i < n_want; i++) {
        const tensor_want *w = &want[i];
        const st_tensor *t = w->required < 0 ? NULL : st_find(sf, w->name);
        ts[i] = t;
        if (!t) {
            if (w->required > 0) return err_set(err, "%s: tensor '%s' is missing", path, w->name);
            continue;
        }
        if (t->dtype != ST_F32 && t->dtype != ST_F16 && t->dtype != ST_BF16)
            return err_set(err, "%s: tensor '%s' is %s; expected F32, F16 or BF16", path, w->name,
                           st_dtype_name(t->dtype));
        int want_dims = w->cols ? 2 : 1;
        if (t->n_dims != want_dims || t->shape[0] != (uint64_t)w->rows ||
            (want_dims == 2 && t->shape[1] != (uint64_t)w->cols)) {
            char got[96] = "";
            for (int d = 0; d < t->n_dims; d++)
                snprintf(got + strlen(got), sizeof got - strlen(got), "%s%llu", d ? ", " : "",
                         (unsigned long long)t->shape[d]);
            if (w->cols)
                return err_set(err, "%s: tensor '%s' has shape [%s]; expected [%d, %d]", path,
                               w->name, got, w->rows, w->cols);
            return err_set(err, "%s: tensor '%s' has shape [%s]; expected [%d]", path, w->name, got,
                           w->rows);
        }
        size_t n = (size_t)w->rows * (size_t)(w->cols ? w->cols : 1);
        total += aligned(w->cols ? n * (size_t)st_dtype_size(t->dtype) : n * sizeof(float));
    }
    unsigned char *block = aligned_alloc(64, total ? total : 64);
    if (!block) return err_set(err, "%s: out of memory for the head's weights", path);
    h->weights = block;
    size_t at = 0;
    for (int i = 0; i < n_want; i++) {
        const tensor_want *w = &want[i];
        const st_tensor *t = ts[i];
        if (!t) continue;
        size_t n = (size_t)w->rows * (size_t)(w->cols ? w->cols : 1);
        unsigned char *dst = block + at;
        wtype type = WTYPE_F32;
        if (w->cols) { /* matrices stay in their type (the kernels read f16 and bf16 rows) */
            type = t->dtype == ST_F32 ? WTYPE_F32 : t->dtype == ST_F16 ? WTYPE_F16 : WTYPE_BF16;
            size_t bytes = n * (size_t)st_dtype_size(t->dtype);
            memcpy(dst, t->data, bytes); /* the mapping's data is not aligned: copied first */
            *w->mat = (wmat){.type = type, .data = dst, .rows = w->rows, .cols = w->cols};
            at += aligned(bytes);
        } else {
            if (st_read_f32(sf, t, (float *)dst, err)) return -1;
            *w->vec = (const float *)dst;
            at += aligned(n * sizeof(float));
        }
        int which;
        float value;
        long long bad = wtype_find_nonfinite(type, dst, n, &which, &value);
        if (bad >= 0) {
            char where[160];
            wtype_describe_nonfinite(type, w->cols ? w->cols : w->rows, bad, which, value, where,
                                     sizeof where);
            return err_set(err, "%s: tensor '%s': %s", path, w->name, where);
        }
    }
    return 0;
}

int eagle_head_open(eagle_head **out, const char *dir, const model *target, tpool *pool,
                    int max_rows, int max_scratch, char *err) {
    *out = NULL;
    eagle_head *h = calloc(1, sizeof *h);
    if (!h) return err_set(err, "eagle head: out of memory");
    h->target = target, h->pool = pool;
    char cpath[1100];
    snprintf(cpath, sizeof cpath, "%s/config.json", dir);
    snprintf(h->path, sizeof h->path, "%s/model.safetensors", dir);
    eagle_head_config *c = &h->cfg;
    safetensors *sf = NULL;
    int rc = -1;
    if (read_config(cpath, c, err)) goto fail;
    const model_config *tc = &target->cfg;
    const char *tp = target->path[0] ? target->path : "the target";
    if (c->dim != tc->dim) {
        err_set(err, "%s: hidden_size %d does not match the target's embedding width %d (%s)",
                cpath, c->dim, tc->dim, tp);
        goto fail;
    }
    if (c->vocab_size != tc->vocab_size) {
        err_set(err, "%s: vocab_size %d does not match the target's vocabulary of %d tokens (%s)",
                cpath, c->vocab_size, tc->vocab_size, tp);
        goto fail;
    }
    if (c->n_heads != tc->n_heads || c->n_kv_heads != tc->n_kv_heads) {
        err_set(err,
                "%s: num_attention_heads %d, num_key_value_heads %d do not match the target's "
                "%d heads, %d kv heads (%s)",
                cpath, c->n_heads, c->n_kv_heads, tc->n_heads, tc->n_kv_heads, tp);
        goto fail;
    }
    if (st_open(&sf, h->path, err)) goto fail;
    const int D = c->dim, Q = c->n_heads * c->head_size, KV = c->n_kv_heads * c->head_size;
    const int H = c->hidden_dim;
    tensor_want want[] = {
        {"fc.weight", D, 2 * D, 1, &h->fc, NULL},
        {"fc.bias", D, 0, c->fc_bias ? 1 : -1, NULL, &h->fc_b},
        {"layers.0.self_attn.q_proj.weight", Q, D, 1, &h->wq, NULL},
        {"layers.0.self_attn.k_proj.weight", KV, D, 1, &h->wk, NULL},
        {"layers.0.self_attn.v_proj.weight", KV, D, 1, &h->wv, NULL},
        {"layers.0.self_attn.o_proj.weight", D, Q, 1, &h->wo, NULL},
        {"layers.0.mlp.gate_proj.weight", H, D, 1, &h->w1, NULL},
        {"layers.0.mlp.down_proj.weight", D, H, 1, &h->w2, NULL},
        {"layers.0.mlp.up_proj.weight", H, D, 1, &h->w3, NULL},
        {"layers.0.post_attention_layernorm.weight", D, 0, 1, NULL, &h->rms_ffn},
        {"embed_tokens.weight", c->vocab_size, D, 0, &h->embd, NULL},
        {"layers.0.self_attn.q_proj.bias", Q, 0, c->qkv_bias, NULL, &h->bq},
        {"layers.0.self_attn.k_proj.bias", KV, 0, c->qkv_bias, NULL, &h->bk},
        {"layers.0.self_attn.v_proj.bias", KV, 0, c->qkv_bias, NULL, &h->bv},
    };
    /* biases the config does not announce are not read (the reference builds the layers
     * without them, so load_state_dict(strict=False) would not use them either) */
    int n_want = (int)(sizeof want / sizeof want[0]);
    if (!c->qkv_bias) n_want -= 3;
    if (load_tensors(h, sf, want, n_want, err)) goto fail;
    c->own_embedding = h->embd.data != NULL;
    if (!h->embd.data) h->embd = target->tok_embd;
    st_close(sf);
    sf = NULL;

    /* the cache and the working rows */
    h->max_rows = max_rows < 1 ? 1 : max_rows;
    h->max_scratch = max_scratch < 1 ? 1 : max_scratch;
    h->cap = tc->seq_len + h->max_scratch;
    const size_t R = (size_t)h->max_rows, hs = (size_t)c->head_size, cap = (size_t)h->cap;
    h->kc = malloc(sizeof(float) * (size_t)c->n_kv_heads * cap * hs);
    h->vc = malloc(sizeof(float) * (size_t)c->n_kv_heads * cap * hs);
    h->sdepth = malloc(sizeof(int) * (size_t)h->max_scratch);
    h->sparent = malloc(sizeof(int) * (size_t)h->max_scratch);
    h->rope_inv = malloc(sizeof(float) * hs / 2);
    h->in = malloc(sizeof(float) * R * 2 * (size_t)D);
    h->x = malloc(sizeof(float) * R * (size_t)D);
    h->q = malloc(sizeof(float) * R * (size_t)Q);
    h->k = malloc(sizeof(float) * R * (size_t)KV);
    h->v = malloc(sizeof(float) * R * (size_t)KV);
    h->att = malloc(sizeof(float) * R * (size_t)Q);
    h->xb = malloc(sizeof(float) * R * (size_t)D);
    h->hb = malloc(sizeof(float) * R * (size_t)H);
    h->hb2 = malloc(sizeof(float) * R * (size_t)H);
    h->scores = malloc(sizeof(float) * (size_t)(c->n_heads / c->n_kv_heads) * cap);
    h->stride = (h->max_rows > h->max_scratch ? h->max_rows : h->max_scratch) + 1;
    h->tail = malloc(sizeof(int) * R * (size_t)h->stride);
    h->n_tail = malloc(sizeof(int) * R);
    h->tails = malloc(sizeof(int *) * (size_t)c->n_heads);
    if (!h->kc || !h->vc || !h->sdepth || !h->sparent || !h->rope_inv || !h->in || !h->x || !h->q ||
        !h->k || !h->v || !h->att || !h->xb || !h->hb || !h->hb2 || !h->scores || !h->tail ||
        !h->n_tail || !h->tails) {
        err_set(err, "%s: out of memory for the head's cache (%d rows)", h->path, h->cap);
        goto fail;
    }
    /* Hugging Face's inv_freq = 1 / base^(2i / head_size), in float */
    for (int i = 0; i < c->head_size / 2; i++)
        h->rope_inv[i] = 1.0f / powf(c->rope_theta, (float)(2 * i) / (float)c->head_size);
    *out = h;
    return 0;
fail:
    st_close(sf);
    eagle_head_free(h);
    return rc;
}

/* ---- the forward pass ---------------------------------------------------------------------- */

void eagle_head_reset(eagle_head *h) {
    h->n_past = 0, h->n_scratch = 0;
}
void eagle_head_truncate(eagle_head *h, int n) {
    if (n >= 0 && n < h->n_past) h->n_past = n;
    h->n_scratch = 0;
}
size_t eagle_head_weight_bytes(const eagle_head *h) {
    const wmat *m[] = {&h->fc, &h->wq, &h->wk, &h->wv, &h->wo, &h->w1, &h->w2, &h->w3};
    size_t b = 0;
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++)
        b += (size_t)m[i]->rows * wtype_row_bytes(m[i]->type, m[i]->cols);
    return b;
}
int eagle_head_n_past(const eagle_head *h) {
    return h->n_past;
}
int eagle_head_scratch_rows(const eagle_head *h) {
    return h->n_scratch;
}

/* Hugging Face's rotate_half RoPE on one head: pairs (i, i + hs / 2). */
static void rope(const eagle_head *h, float *v, int pos) {
    const int half = h->cfg.head_size / 2;
    const float p = (float)pos / h->cfg.rope_factor;
    for (int i = 0; i < half; i++) {
        float a = p * h->rope_inv[i], cs = cosf(a), sn = sinf(a);
        float x0 = v[i], x1 = v[i + half];
        v[i] = x0 * cs - x1 * sn;
        v[i + half] = x1 * cs + x0 * sn;
    }
}

static void rmsnorm(float *o, const float *x, const float *w, int n, float eps) {
    float ss = kern_dot(x, x, n) / (float)n + eps;
    ss = 1.0f / sqrtf(ss);
    for (int i = 0; i < n; i++) o[i] = w[i] * (ss * x[i]);
}

/* Rows 0..n-1 at cache slots slot[i] with positions pos[i]; row i attends to the committed rows
 * and to the n_tail[i] slots of tail row i. The last n_out rows' outputs go to hid and their
 * logits to logits (either may be NULL). */
static int forward(eagle_head *h, int n, const int *tokens, const float *feats, const int *pos,
                   const int *slot, int n_out, float *hid, float *logits, char *err) {
    const eagle_head_config *c = &h->cfg;
    const int D = c->dim, hs = c->head_size, Q = c->n_heads * hs, KV = c->n_kv_heads * hs;
    const int H = c->hidden_dim, V = c->vocab_size, grp = c->n_heads / c->n_kv_heads;
    for (int i = 0; i < n; i++) {
        if (tokens[i] < 0 || tokens[i] >= V)
            return err_set(err, "eagle head: token %d outside the vocabulary (%d)", tokens[i], V);
        float *in = h->in + (size_t)i * 2 * D;
        kern_row_to_f32(&h->embd, tokens[i], in); /* cat(embed(token), feature) */
        memcpy(in + D, feats + (size_t)i * D, sizeof(float) * (size_t)D);
    }
    /* fc */
    matmul(h, &h->fc, h->in, 2 * D, n, h->x, D);
    if (h->fc_b)
        for (int i = 0; i < n; i++)
            for (int j = 0; j < D; j++) h->x[(size_t)i * D + j] += h->fc_b[j];
    /* attention: no input norm (cnets1's layer 0) */
    matmul(h, &h->wq, h->x, D, n, h->q, Q);
    matmul(h, &h->wk, h->x, D, n, h->k, KV);
    matmul(h, &h->wv, h->x, D, n, h->v, KV);
    for (int i = 0; i < n; i++) {
        float *q = h->q + (size_t)i * Q, *k = h->k + (size_t)i * KV, *v = h->v + (size_t)i * KV;
        if (h->bq)
            for (int j = 0; j < Q; j++) q[j] += h->bq[j];
        if (h->bk)
            for (int j = 0; j < KV; j++) k[j] += h->bk[j];
        if (h->bv)
            for (int j = 0; j < KV; j++) v[j] += h->bv[j];
        for (int g = 0; g < c->n_heads; g++) rope(h, q + (size_t)g * hs, pos[i]);
        for (int g = 0; g < c->n_kv_heads; g++) {
            rope(h, k + (size_t)g * hs, pos[i]);
            size_t at = ((size_t)g * h->cap + (size_t)slot[i]) * hs;
            memcpy(h->kc + at, k + (size_t)g * hs, sizeof(float) * (size_t)hs);
            memcpy(h->vc + at, v + (size_t)g * hs, sizeof(float) * (size_t)hs);
        }
    }
    for (int i = 0; i < n; i++) {
        const int *tl = h->tail + (size_t)i * h->stride;
        for (int t = 0; t < grp; t++) h->tails[t] = tl;
        int nt[MODEL_MAX_HEADS];
        for (int t = 0; t < grp; t++) nt[t] = h->n_tail[i];
        for (int g = 0; g < c->n_kv_heads; g++) {
            const float *kk = h->kc + (size_t)g * h->cap * hs,
                        *vv = h->vc + (size_t)g * h->cap * hs;
            kern_attend_shared(h->q + (size_t)i * Q + (size_t)g * grp * hs, (size_t)hs, grp, hs, kk,
                               vv, h->n_past, h->tails, nt, h->scores, (size_t)h->cap,
                               h->att + (size_t)i * Q + (size_t)g * grp * hs, (size_t)hs);
        }
    }
    matmul(h, &h->wo, h->att, Q, n, h->xb, D);
    for (size_t j = 0; j < (size_t)n * D; j++) h->x[j] += h->xb[j];
    /* MLP after post_attention_layernorm */
    for (int i = 0; i < n; i++)
        rmsnorm(h->xb + (size_t)i * D, h->x + (size_t)i * D, h->rms_ffn, D, c->norm_eps);
    matmul(h, &h->w1, h->xb, D, n, h->hb, H);
    matmul(h, &h->w3, h->xb, D, n, h->hb2, H);
    for (size_t j = 0; j < (size_t)n * H; j++) {
        float a = h->hb[j];
        h->hb[j] = a / (1.0f + expf(-a)) * h->hb2[j];
    }
    matmul(h, &h->w2, h->hb, H, n, h->xb, D);
    for (size_t j = 0; j < (size_t)n * D; j++) h->x[j] += h->xb[j];
    const float *last = h->x + (size_t)(n - n_out) * D;
    if (hid && n_out > 0) memcpy(hid, last, sizeof(float) * (size_t)n_out * D);
    /* the target's classifier, no norm (topK_genrate: head(out_hidden)) */
    if (logits && n_out > 0) matmul(h, &h->target->wcls, last, D, n_out, logits, V);
    return 0;
}

int eagle_head_append(eagle_head *h, int n, const int *tokens, const float *feats, int n_out,
                      float *hid, float *logits, char *err) {
    if (n < 1 || n > h->max_rows || n_out > n || h->n_past + n > h->cap - h->max_scratch)
        return err_set(err, "eagle head: %d rows after %d (at most %d a call, %d in all)", n,
                       h->n_past, h->max_rows, h->cap - h->max_scratch);
    h->n_scratch = 0;
    int pos[n], slot[n];
    for (int i = 0; i < n; i++) {
        pos[i] = slot[i] = h->n_past + i;
        int *tl = h->tail + (size_t)i * h->stride; /* a chain: rows 0..i of this call */
        for (int j = 0; j <= i; j++) tl[j] = h->n_past + j;
        h->n_tail[i] = i + 1;
    }
    if (forward(h, n, tokens, feats, pos, slot, n_out, hid, logits, err)) return -1;
    h->n_past += n;
    return 0;
}

int eagle_head_tree(eagle_head *h, int n, const int *tokens, const float *feats, const int *parent,
                    float *hid, float *logits, char *err) {
    if (n < 1 || n > h->max_rows || h->n_scratch + n > h->max_scratch)
        return err_set(err, "eagle head: %d tree rows after %d (at most %d a call, %d in all)", n,
                       h->n_scratch, h->max_rows, h->max_scratch);
    int pos[n], slot[n];
    const int stride = h->stride;
    for (int i = 0; i < n; i++) {
        int s = h->n_scratch + i, p = parent[i];
        if (p < -1 || p >= s)
            return err_set(err, "eagle head: tree row %d's parent %d is not an earlier row", s, p);
        h->sparent[s] = p;
        h->sdepth[s] = p < 0 ? 0 : h->sdepth[p] + 1;
        pos[i] = h->n_past + h->sdepth[s];
        slot[i] = h->n_past + s;
        /* the tail: the ancestors from the top down, then the row itself */
        int *tl = h->tail + (size_t)i * stride, d = h->sdepth[s];
        for (int a = s; a >= 0; a = h->sparent[a]) tl[d--] = h->n_past + a;
        h->n_tail[i] = h->sdepth[s] + 1;
    }
    h->n_scratch += n;
    return forward(h, n, tokens, feats, pos, slot, n, hid, logits, err);
}
