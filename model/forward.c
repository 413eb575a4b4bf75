/* forward.c: the batched tree forward pass of a Llama model (RMSNorm, RoPE, grouped-query
 * attention, SwiGLU), as in llama2.c's forward() but over T rows with a tree mask.
 * Per layer: RMSNorm; Q,K,V = W x (K,V written straight into the cache) and RoPE; attention
 * over the committed prefix and the row's ancestors; x += Wo att; RMSNorm; x += W2 (silu(W1 x) *
 * W3 x). Matrix products are split over output rows between threads; see forward.h for why the
 * result does not depend on T, the tree or the thread count. */
#include "model/forward.h"

#include <cblas.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/kernels.h"
#include "util/err.h"

/* Below this many multiply-adds a parallel section runs on the calling thread: waking the
 * workers costs more than the work (stories260K at T=1 stays single-threaded). */
#define PARALLEL_MIN_MACS 65536

struct fwd_ctx {
    const model *m;
    tpool *pool;
    kern_mode mode;
    int max_batch;
    int cap;    /* cache slots: seq_len committed + max_batch scratch */
    int n_past; /* committed positions */
    int last_n; /* rows of the last batch still in scratch (0 after a commit) */
    float *kc, *vc;                       /* [n_layers][cap][kv_dim] */
    float *x, *xb, *xb2, *q, *hb, *hb2;   /* activations, [max_batch][width] */
    float *att;                           /* per-thread scores, [n_threads][cap] */
    int *slots;                           /* per-thread key slots, [n_threads][cap] */
    float *rope_cos, *rope_sin;           /* [seq_len][rope_dim / 2] */
    int *parent, *depth, *pos, *anc;      /* last batch; anc: [max_batch][max_batch] */
    long passes, rows;
    int allow_nonfinite; /* fwd_allow_nonfinite: skip the logits check */
};

const char *kern_mode_name(kern_mode k) { return k == KERN_BLAS ? "blas" : "exact"; }

int kern_mode_parse(const char *s, kern_mode *out) {
    if (strcmp(s, "exact") == 0) *out = KERN_EXACT;
    else if (strcmp(s, "blas") == 0) *out = KERN_BLAS;
    else return -1;
    return 0;
}

int fwd_max_batch(const fwd_ctx *c) { return c->max_batch; }
void fwd_allow_nonfinite(fwd_ctx *c, int allow) { c->allow_nonfinite = allow != 0; }
int fwd_n_past(const fwd_ctx *c) { return c->n_past; }
const model *fwd_model(const fwd_ctx *c) { return c->m; }
long fwd_passes(const fwd_ctx *c) { return c->passes; }
long fwd_rows(const fwd_ctx *c) { return c->rows; }

int fwd_argmax(const float *logits, int n) {
    int best = 0;
    for (int i = 1; i < n; i++)
        if (logits[i] > logits[best]) best = i;
    return best;
}

void fwd_free(fwd_ctx *c) {
    if (!c) return;
    free(c->kc), free(c->vc), free(c->x), free(c->xb), free(c->xb2), free(c->q);
    free(c->hb), free(c->hb2), free(c->att), free(c->slots), free(c->rope_cos), free(c->rope_sin);
    free(c->parent), free(c->depth), free(c->pos), free(c->anc);
    free(c);
}

int fwd_new(fwd_ctx **out, const model *m, tpool *pool, int max_batch, kern_mode mode,
            char *err) {
    *out = NULL;
    const model_config *cfg = &m->cfg;
    if (max_batch < 1 || max_batch > 4096)
        return err_set(err, "max batch %d is out of range 1..4096", max_batch);
    fwd_ctx *c = calloc(1, sizeof *c);
    if (!c) return err_set(err, "forward context: out of memory");
    c->m = m, c->pool = pool, c->mode = mode, c->max_batch = max_batch;
    c->cap = cfg->seq_len + max_batch;
    size_t B = (size_t)max_batch, kv = (size_t)cfg->n_layers * c->cap * cfg->kv_dim;
    int nt = tpool_size(pool), half = cfg->rope_dim / 2;
    c->kc = calloc(kv, sizeof(float));
    c->vc = calloc(kv, sizeof(float));
    c->x = calloc(B * cfg->dim, sizeof(float));
    c->xb = calloc(B * cfg->dim, sizeof(float));
    c->xb2 = calloc(B * cfg->dim, sizeof(float));
    c->q = calloc(B * cfg->dim, sizeof(float));
    c->hb = calloc(B * cfg->hidden_dim, sizeof(float));
    c->hb2 = calloc(B * cfg->hidden_dim, sizeof(float));
    c->att = calloc((size_t)nt * c->cap, sizeof(float));
    c->slots = calloc((size_t)nt * c->cap, sizeof(int));
    c->rope_cos = calloc((size_t)cfg->seq_len * half, sizeof(float));
    c->rope_sin = calloc((size_t)cfg->seq_len * half, sizeof(float));
    c->parent = calloc(B, sizeof(int));
    c->depth = calloc(B, sizeof(int));
    c->pos = calloc(B, sizeof(int));
    c->anc = calloc(B * B, sizeof(int));
    if (!c->kc || !c->vc || !c->x || !c->xb || !c->xb2 || !c->q || !c->hb || !c->hb2 ||
        !c->att || !c->slots || !c->rope_cos || !c->rope_sin || !c->parent || !c->depth || !c->pos || !c->anc) {
        fwd_free(c);
        return err_set(err, "forward context: out of memory (KV cache of %zu MiB)",
                       2 * kv * sizeof(float) >> 20);
    }
    /* RoPE angles as llama2.c computes them: theta^(-i/head_size) per pair, times position. */
    for (int p = 0; p < cfg->seq_len; p++)
        for (int i = 0; i < half; i++) {
            float freq = 1.0f / powf(cfg->rope_theta, (float)(2 * i) / (float)cfg->head_size);
            float val = (float)p * freq;
            c->rope_cos[(size_t)p * half + i] = cosf(val);
            c->rope_sin[(size_t)p * half + i] = sinf(val);
        }
    if (mode == KERN_BLAS) openblas_set_num_threads(nt);
    *out = c;
    return 0;
}

/* ---- matrix products, split over output rows -------------------------------------------- */

typedef enum { POST_NONE, POST_ROPE, POST_SILU_MUL, POST_RESIDUAL } post_op;

typedef struct {
    const wmat *w;
    float *y; /* y[t * ldy + r] */
    int ldy;
} mm_job;

typedef struct {
    fwd_ctx *c;
    const float *x; /* input rows, stride ldx */
    int ldx, T, n_jobs;
    mm_job jobs[3];
    post_op post;
    float *resid; /* POST_RESIDUAL: resid[t][r] += y[t][r] */
    int pieces;   /* row ranges per job (set by mm_run) */
} mm_task;

static void rope_rows(const fwd_ctx *c, float *y, int ldy, int lo, int hi, int T) {
    const model_config *cfg = &c->m->cfg;
    int hs = cfg->head_size, half = cfg->rope_dim / 2;
    for (int t = 0; t < T; t++) {
        const float *fc = c->rope_cos + (size_t)c->pos[t] * half;
        const float *fs = c->rope_sin + (size_t)c->pos[t] * half;
        float *v = y + (size_t)t * ldy;
        for (int i = lo; i < hi; i += 2) {
            int j = (i % hs) / 2;
            if (j >= half) continue;
            float v0 = v[i], v1 = v[i + 1];
            v[i] = v0 * fc[j] - v1 * fs[j];
            v[i + 1] = v0 * fs[j] + v1 * fc[j];
        }
    }
}

/* Chunk c of a task: piece c % pieces of job c / pieces (row ranges aligned to 16, the
 * kernels' tile height at T = 1); for SILU_MUL one piece of both w1 and w3, then the gate. */
static void mm_worker(void *arg, int chunk, int n_chunks, int thread) {
    (void)n_chunks, (void)thread;
    mm_task *task = arg;
    int T = task->T, pieces = task->pieces;
    int first = task->post == POST_SILU_MUL ? 0 : chunk / pieces;
    int last = task->post == POST_SILU_MUL ? task->n_jobs - 1 : first;
    int lo = 0, hi = 0;
    for (int j = first; j <= last; j++) {
        const mm_job *job = &task->jobs[j];
        tpool_split(job->w->rows, 16, chunk % pieces, pieces, &lo, &hi);
        if (lo >= hi) continue;
        if (task->c->mode == KERN_EXACT || job->w->type != WTYPE_F32)
            kern_matmul(job->w, lo, hi, task->x, task->ldx, T, job->y + lo, job->ldy);
        if (task->post == POST_ROPE && j < 2) rope_rows(task->c, job->y, job->ldy, lo, hi, T);
        if (task->post == POST_RESIDUAL)
            for (int t = 0; t < T; t++) {
                float *r = task->resid + (size_t)t * job->ldy;
                const float *y = job->y + (size_t)t * job->ldy;
                for (int i = lo; i < hi; i++) r[i] += y[i];
            }
    }
    if (task->post == POST_SILU_MUL && lo < hi) { /* jobs: w1 -> hb, w3 -> hb2, same rows */
        int ld = task->jobs[0].ldy;
        for (int t = 0; t < T; t++) {
            float *a = task->jobs[0].y + (size_t)t * ld, *b = task->jobs[1].y + (size_t)t * ld;
            for (int i = lo; i < hi; i++) {
                float v = a[i];
                v *= 1.0f / (1.0f + expf(-v));
                a[i] = v * b[i];
            }
        }
    }
}

static void mm_run(fwd_ctx *c, mm_task *task) {
    size_t macs = 0;
    int min_rows = task->jobs[0].w->rows;
    for (int j = 0; j < task->n_jobs; j++) {
        macs += (size_t)task->jobs[j].w->rows * task->jobs[j].w->cols * task->T;
        if (task->jobs[j].w->rows < min_rows) min_rows = task->jobs[j].w->rows;
    }
    if (c->mode == KERN_BLAS) { /* OpenBLAS threads itself; the post ops run below */
        for (int j = 0; j < task->n_jobs; j++) {
            const mm_job *job = &task->jobs[j];
            if (job->w->type != WTYPE_F32) continue;
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, task->T, job->w->rows,
                        job->w->cols, 1.0f, task->x, task->ldx, (const float *)job->w->data,
                        job->w->cols, 0.0f, job->y, job->ldy);
        }
    }
    int nt = macs < PARALLEL_MIN_MACS ? 1 : tpool_size(c->pool);
    /* a few pieces per thread, so a late or slow thread's share is picked up by the others */
    int pieces = nt == 1 ? 1 : 4 * nt;
    if (pieces > (min_rows + 15) / 16) pieces = (min_rows + 15) / 16;
    task->pieces = pieces < 1 ? 1 : pieces;
    int n_chunks = task->post == POST_SILU_MUL ? task->pieces : task->n_jobs * task->pieces;
    tpool_run(nt == 1 ? NULL : c->pool, mm_worker, task, n_chunks);
}

/* ---- attention ------------------------------------------------------------------------ */

typedef struct {
    fwd_ctx *c;
    int layer, T;
} att_task;

static void att_worker(void *arg, int chunk, int n_chunks, int thread) {
    att_task *task = arg;
    fwd_ctx *c = task->c;
    const model_config *cfg = &c->m->cfg;
    int hs = cfg->head_size, kvd = cfg->kv_dim, group = cfg->n_heads / cfg->n_kv_heads;
    const float *kl = c->kc + (size_t)task->layer * c->cap * kvd;
    const float *vl = c->vc + (size_t)task->layer * c->cap * kvd;
    float *scratch = c->att + (size_t)thread * c->cap;
    int *slots = c->slots + (size_t)thread * c->cap;
    int lo, hi, slots_row = -1, n_vis = 0;
    tpool_split(task->T * cfg->n_heads, 1, chunk, n_chunks, &lo, &hi);
    for (int job = lo; job < hi; job++) {
        int r = job / cfg->n_heads, h = job % cfg->n_heads;
        if (r != slots_row) {
            /* Keys in position order: the committed prefix, then the ancestors root-first,
             * then the row itself: the order plain decoding sees them in. */
            const int *anc = c->anc + (size_t)r * c->max_batch;
            n_vis = c->n_past + c->depth[r] + 1;
            for (int s = 0; s < c->n_past; s++) slots[s] = s;
            for (int j = 0; j <= c->depth[r]; j++) slots[c->n_past + j] = c->n_past + anc[j];
            slots_row = r;
        }
        size_t koff = (size_t)(h / group) * hs;
        kern_attend(c->q + (size_t)r * cfg->dim + h * hs, hs, kl + koff, vl + koff, (size_t)kvd,
                    slots, n_vis, scratch, c->xb2 + (size_t)r * cfg->dim + h * hs);
    }
}

/* ---- the pass --------------------------------------------------------------------------- */

/* A float's bits read in place (may_alias: reading a float through it is defined). */
typedef uint32_t __attribute__((may_alias)) float_bits;

/* The exponent field plus one: bit 31 is set exactly when the exponent is all ones, which is
 * what NaN and infinity are. */
static uint32_t exponent_carry(const float *x) {
    return (*(const float_bits *)x & 0x7f800000u) + 0x00800000u;
}

/* The index of the first NaN or infinity in x[0..n), or -1. The OR over the whole row (no
 * early exit, integer operations only) in blocks of 16, which GCC -O2 vectorizes (its cheap
 * cost model leaves a loop of unknown length scalar). Measured on a busy 2-core machine: 7 us
 * per row of 32000 logits (9 to 11 us scalar), against 41 to 58 ms for a T=1 pass of a
 * 15M-shaped model (dim 288, 6 layers, vocabulary 32000, 1 thread): under 0.02%; per row it is
 * one operation per logit after the 288 multiply-adds that made it. */
static int first_nonfinite(const float *x, int n) {
    uint32_t any = 0;
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        uint32_t block = 0;
        for (int k = 0; k < 16; k++) block |= exponent_carry(x + i + k);
        any |= block;
    }
    for (; i < n; i++) any |= exponent_carry(x + i);
    if (!(any & 0x80000000u)) return -1;
    for (i = 0; i < n; i++)
        if (exponent_carry(x + i) & 0x80000000u) return i;
    return -1;
}

/* Refuses logits rows holding a NaN or an infinity: NaN weights (a corrupt or badly converted
 * file) or an overflow would otherwise make argmax pick token 0 silently, every decoder alike,
 * so exactness checks pass on garbage. */
static int check_logits(const fwd_ctx *c, const int *tokens, const int *out_rows, int n_logits,
                        const float *logits, char *err) {
    int V = c->m->cfg.vocab_size;
    for (int i = 0; i < n_logits; i++) {
        const float *l = logits + (size_t)i * V;
        int j = first_nonfinite(l, V);
        if (j < 0) continue;
        int r = out_rows ? out_rows[i] : i;
        return err_set(err,
                       "%s: non-finite logits at position %d (the pass fed token %d): logit "
                       "%d is %s; the weights or the activations of this model are not finite",
                       c->m->path, c->pos[r], tokens[r], j,
                       isnan(l[j]) ? "NaN" : l[j] > 0 ? "+Inf" : "-Inf");
    }
    return 0;
}

static void rmsnorm(float *o, const float *x, const float *w, int n, float eps) {
    float ss = kern_dot(x, x, n) / (float)n + eps;
    ss = 1.0f / sqrtf(ss);
    for (int i = 0; i < n; i++) o[i] = w[i] * (ss * x[i]);
}

static int check_batch(fwd_ctx *c, int n, const int *tokens, const int *parent, const int *pos,
                       const int *out_rows, int n_out, char *err) {
    const model_config *cfg = &c->m->cfg;
    if (n < 1 || n > c->max_batch)
        return err_set(err, "forward: batch of %d rows, expected 1..%d", n, c->max_batch);
    if (n_out < 0 || (out_rows == NULL && n_out != 0 && n_out != n))
        return err_set(err, "forward: %d logits rows requested for a batch of %d", n_out, n);
    for (int r = 0; r < n; r++) {
        if (tokens[r] < 0 || tokens[r] >= cfg->vocab_size)
            return err_set(err, "forward: row %d: token %d outside the vocabulary 0..%d", r,
                           tokens[r], cfg->vocab_size - 1);
        int p = parent ? parent[r] : r - 1;
        if (p < -1 || p >= r)
            return err_set(err, "forward: row %d: parent %d, expected -1..%d", r, p, r - 1);
        int depth = p < 0 ? 0 : c->depth[p] + 1;
        int position = pos ? pos[r] : c->n_past + depth;
        if (position < 0 || position >= cfg->seq_len)
            return err_set(err, "forward: row %d: position %d outside the context 0..%d", r,
                           position, cfg->seq_len - 1);
        c->parent[r] = p, c->depth[r] = depth, c->pos[r] = position;
        int *anc = c->anc + (size_t)r * c->max_batch;
        if (p >= 0) memcpy(anc, c->anc + (size_t)p * c->max_batch, sizeof(int) * depth);
        anc[depth] = r;
    }
    for (int i = 0; out_rows && i < n_out; i++)
        if (out_rows[i] < 0 || out_rows[i] >= n)
            return err_set(err, "forward: logits row %d outside the batch 0..%d", out_rows[i], n - 1);
    return 0;
}

int fwd_eval(fwd_ctx *c, int n, const int *tokens, const int *parent, const int *pos,
             const int *out_rows, int n_out, float *logits, char *err) {
    c->last_n = 0;
    if (check_batch(c, n, tokens, parent, pos, out_rows, n_out, err)) return -1;
    const model *m = c->m;
    const model_config *cfg = &m->cfg;
    int dim = cfg->dim, kvd = cfg->kv_dim, hid = cfg->hidden_dim;
    for (int r = 0; r < n; r++) kern_row_to_f32(&m->tok_embd, tokens[r], c->x + (size_t)r * dim);

    for (int l = 0; l < cfg->n_layers; l++) {
        const model_layer *L = &m->layers[l];
        for (int r = 0; r < n; r++)
            rmsnorm(c->xb + (size_t)r * dim, c->x + (size_t)r * dim, L->rms_att, dim, cfg->norm_eps);
        float *kslot = c->kc + ((size_t)l * c->cap + c->n_past) * kvd;
        float *vslot = c->vc + ((size_t)l * c->cap + c->n_past) * kvd;
        mm_task qkv = {c, c->xb, dim, n, 3, {{&L->wq, c->q, dim}, {&L->wk, kslot, kvd}, {&L->wv, vslot, kvd}},
                       POST_ROPE, NULL, 0};
        mm_run(c, &qkv);
        att_task at = {c, l, n};
        size_t att_macs = (size_t)n * cfg->n_heads * (c->n_past + n) * cfg->head_size;
        int att_chunks = att_macs < PARALLEL_MIN_MACS ? 1 : 4 * tpool_size(c->pool);
        if (att_chunks > n * cfg->n_heads) att_chunks = n * cfg->n_heads;
        tpool_run(c->pool, att_worker, &at, att_chunks);
        mm_task wo = {c, c->xb2, dim, n, 1, {{&L->wo, c->xb, dim}}, POST_RESIDUAL, c->x, 0};
        mm_run(c, &wo);
        for (int r = 0; r < n; r++)
            rmsnorm(c->xb + (size_t)r * dim, c->x + (size_t)r * dim, L->rms_ffn, dim, cfg->norm_eps);
        mm_task w13 = {c, c->xb, dim, n, 2, {{&L->w1, c->hb, hid}, {&L->w3, c->hb2, hid}},
                       POST_SILU_MUL, NULL, 0};
        mm_run(c, &w13);
        mm_task w2 = {c, c->hb, hid, n, 1, {{&L->w2, c->xb, dim}}, POST_RESIDUAL, c->x, 0};
        mm_run(c, &w2);
    }

    int n_logits = out_rows ? n_out : n_out == 0 ? 0 : n;
    for (int i = 0; i < n_logits; i++) {
        int r = out_rows ? out_rows[i] : i;
        rmsnorm(c->xb + (size_t)i * dim, c->x + (size_t)r * dim, m->rms_final, dim, cfg->norm_eps);
    }
    if (n_logits > 0) {
        mm_task cls = {c, c->xb, dim, n_logits, 1, {{&m->wcls, logits, cfg->vocab_size}}, POST_NONE, NULL, 0};
        mm_run(c, &cls);
        if (!c->allow_nonfinite && check_logits(c, tokens, out_rows, n_logits, logits, err))
            return -1;
    }
    c->last_n = n;
    c->passes++;
    c->rows += n;
    return 0;
}

int fwd_commit(fwd_ctx *c, const int *path, int n, char *err) {
    const model_config *cfg = &c->m->cfg;
    if (n < 0 || n > c->last_n)
        return err_set(err, "commit: %d rows, but the last batch left %d in scratch", n, c->last_n);
    if (c->n_past + n > cfg->seq_len)
        return err_set(err, "commit: %d + %d positions exceed the context of %d", c->n_past, n,
                       cfg->seq_len);
    for (int i = 0; i < n; i++) {
        int r = path[i];
        if (r < 0 || r >= c->last_n || c->parent[r] != (i ? path[i - 1] : -1))
            return err_set(err, "commit: row %d at path index %d does not continue the path "
                                "from the root", r, i);
    }
    size_t kvd = (size_t)cfg->kv_dim;
    for (int l = 0; l < cfg->n_layers; l++) {
        float *kl = c->kc + (size_t)l * c->cap * kvd, *vl = c->vc + (size_t)l * c->cap * kvd;
        for (int i = 0; i < n; i++) {
            if (path[i] == i) continue;
            memmove(kl + (c->n_past + i) * kvd, kl + (c->n_past + path[i]) * kvd, kvd * sizeof(float));
            memmove(vl + (c->n_past + i) * kvd, vl + (c->n_past + path[i]) * kvd, kvd * sizeof(float));
        }
    }
    c->n_past += n;
    c->last_n = 0;
    return 0;
}

int fwd_truncate(fwd_ctx *c, int len, char *err) {
    if (len < 0 || len > c->n_past)
        return err_set(err, "truncate: length %d, expected 0..%d", len, c->n_past);
    c->n_past = len;
    c->last_n = 0;
    return 0;
}

int fwd_prefill(fwd_ctx *c, const int *tokens, int n, float *logits, char *err) {
    if (n < 1) return err_set(err, "prefill: empty prompt");
    if (c->n_past + n > c->m->cfg.seq_len)
        return err_set(err, "prompt of %d tokens does not fit the context of %d (%d in use)", n,
                       c->m->cfg.seq_len, c->n_past);
    for (int done = 0; done < n;) {
        int chunk = n - done < c->max_batch ? n - done : c->max_batch;
        int last = chunk - 1, is_last = done + chunk == n;
        if (fwd_eval(c, chunk, tokens + done, NULL, NULL, is_last ? &last : NULL, is_last ? 1 : 0,
                     logits, err))
            return -1;
        /* a chain's path is 0..chunk-1: commit the whole chunk */
        c->n_past += chunk;
        c->last_n = 0;
        done += chunk;
    }
    return 0;
}
