/* forward.c: the batched tree forward pass of a Llama-family model (RMSNorm, RoPE, grouped-query
 * attention, SwiGLU), as in llama2.c's forward() but over T rows with a tree mask.
 * Per layer: RMSNorm; Q,K,V = W x (K,V written straight into the cache) and RoPE; attention
 * over the committed prefix and the row's ancestors; x += Wo att; RMSNorm; x += W2 (silu(W1 x) *
 * W3 x). Matrix products are split over output rows between threads; see forward.h for why the
 * result does not depend on T, the tree or the thread count.
 *
 * What the architectures of model/arch.h add is keyed on the model's fields, so a plain Llama
 * model runs exactly as before: Q/K/V biases (Qwen2) added after the products, an RMSNorm over
 * each Q and K head (Qwen3), then RoPE in the row's style (pairs i, i + 1 for Llama; i,
 * i + rope_dim / 2 for Qwen's NEOX) with the frequencies divided by rope_freqs (Llama 3.1+) and
 * the positions scaled (linear RoPE scaling). These need whole heads, so a model that has any of
 * them runs them on pieces of whole heads (qkv_finish_cols), by the thread whose product made
 * the piece, or after its Q/K/V products when whole heads are not whole tiles; each is a per-row
 * operation in a fixed order on one head, so the invariance argument holds. */
#include "model/forward.h"
#include "model/balance.h"

#include <cblas.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "model/kernels/kernels.h"
#include "util/err.h"
#include "util/huge.h"

/* Below this many multiply-adds a parallel section runs on the calling thread: waking the
 * workers costs more than the work (stories260K at T=1 stays single-threaded). */
#define PARALLEL_MIN_MACS 65536

/* Attention's multiply-adds come in head-sized vectors with a softmax between them: one costs
 * about what 4 of a product's do, so attention shares the threads from a quarter of
 * PARALLEL_MIN_MACS, once the layer's Q/K/V product has woken them (the 110M preset in Q4_0 at
 * context 64, 2 threads: 49152 per layer, which ran on the caller while the worker spun; the
 * median pass 5.4-5.9 -> 4.8-5.2 ms in 3 of 4 pairs). stories260K's products stay on one
 * thread, and so does its attention. */
#define ATTEND_MAC_COST 4

struct fwd_ctx {
    const model *m;
    tpool *pool;
    kern_mode mode;
    int max_batch;
    int cap;    /* cache slots: seq_len committed + max_batch scratch */
    int kv_huge; /* the cache asked for 2 MB pages and the kernel agreed (kv_huge_pages) */
    int kv_ready; /* slots below it are populated in every head stream (kv_populate); -1: the
                     kernel refused, slots fault in as they are first written */
    int n_past; /* committed positions */
    int last_n; /* rows of the last batch(es) still in scratch (0 after a commit) */
    int first;  /* the scratch row the batch being evaluated starts at (fwd_eval_more) */
    unsigned char *kc, *vc;               /* [n_layers][n_kv_heads][cap][head_size], as kvt */
    void *kc_mem, *vc_mem, *att_mem;      /* the blocks kc, vc and att lie in (lines_zeroed) */
    wtype kvt;                            /* the cache's storage type (the model's kv_type_row) */
    size_t kv_row;                        /* bytes of one head's key or value at one slot */
    float *kb, *vb;                       /* the batch's K and V rows, [max_batch][kv_dim] */
    float *x, *xb, *xb2, *q, *hb, *hb2;   /* activations, [max_batch][width] */
    int q_dim;                            /* n_heads * head_size: width of q and xb2 */
    int att_q;                            /* queries per kern_attend_shared call */
    float *att;                           /* per-thread scores, [n_threads][att_q][att_ld] */
    size_t att_ld;                        /* floats of a query's scores: cap, whole lines */
    float *att_io;                        /* per-thread queries and results, [n_threads][2][att_q][hs] */
    int *tails;                           /* per-thread tail slots, [n_threads][att_q][max_batch] */
    float *rope_cos, *rope_sin;           /* [seq_len][rope_dim / 2] */
    int *parent, *depth, *pos, *anc;      /* last batch; anc: [max_batch][max_batch] */
    unsigned char *xa;                    /* int8 mode: a product's quantized input rows */
    unsigned char *xa2;                   /* int8b mode: w2's, quantized as w1 and w3 finish */
    size_t lda;                           /* bytes per row of xa */
    long passes, rows;
    int allow_nonfinite; /* fwd_allow_nonfinite: skip the logits check */
    const unsigned char *skip; /* fwd_set_skip: per layer FWD_SKIP_* bits, or NULL */
    int skipped;               /* a scratch row was evaluated with skipped layers */
    float *hid_norm, *hid_raw; /* fwd_set_hidden_out: where passes copy logits rows' states */
    fwd_hook *hook;            /* fwd_set_hook: passes handed to it, or NULL */
    int in_prompt;             /* fwd_prefill's passes are running (FWD_HOOK_PROMPT) */
    balance bal;               /* one-row products' shares of rows between threads (mm_run) */
};

const char *kern_mode_name(kern_mode k) {
    return k == KERN_BLAS          ? "blas"
           : k == KERN_EXACT_INT8  ? "exact-int8"
           : k == KERN_EXACT_INT8B ? "exact-int8b"
           : k == KERN_AUTO       ? "auto"
                                  : "exact";
}

int kern_mode_parse(const char *s, kern_mode *out) {
    if (strcmp(s, "auto") == 0) *out = KERN_AUTO;
    else if (strcmp(s, "exact") == 0) *out = KERN_EXACT;
    else if (strcmp(s, "blas") == 0) *out = KERN_BLAS;
    else if (strcmp(s, "exact-int8") == 0) *out = KERN_EXACT_INT8;
    else if (strcmp(s, "exact-int8b") == 0) *out = KERN_EXACT_INT8B;
    else return -1;
    return 0;
}

static int has_int8_matrix(const model *m) {
    if (!m) return 0;
    if (kern_int8_supported(m->wcls.type)) return 1;
    for (int l = 0; l < m->cfg.n_layers; l++) {
        const wmat *w[MODEL_LAYER_MATS];
        model_layer_mats(&m->layers[l], w);
        for (int i = 0; i < MODEL_LAYER_MATS; i++)
            if (kern_int8_supported(w[i]->type)) return 1;
    }
    return 0;
}

kern_mode kern_mode_resolve(kern_mode k, const model *m, const model *draft) {
    if (k != KERN_AUTO) return k;
    return has_int8_matrix(m) || has_int8_matrix(draft) ? KERN_EXACT_INT8B : KERN_EXACT;
}

int fwd_max_batch(const fwd_ctx *c) { return c->max_batch; }
void fwd_allow_nonfinite(fwd_ctx *c, int allow) { c->allow_nonfinite = allow != 0; }
void fwd_set_skip(fwd_ctx *c, const unsigned char *skip) { c->skip = skip; }
int fwd_n_past(const fwd_ctx *c) { return c->n_past; }
const model *fwd_model(const fwd_ctx *c) { return c->m; }
tpool *fwd_pool(const fwd_ctx *c) { return c->pool; }
kern_mode fwd_kern_mode(const fwd_ctx *c) { return c->mode; }
long fwd_passes(const fwd_ctx *c) { return c->passes; }
long fwd_rows(const fwd_ctx *c) { return c->rows; }
int fwd_scratch_rows(const fwd_ctx *c) { return c->last_n; }
size_t fwd_kv_bytes(const fwd_ctx *c, int n) {
    return 2 * (size_t)c->m->cfg.n_layers * c->m->cfg.n_kv_heads * (size_t)n * c->kv_row;
}

int fwd_argmax(const float *logits, int n) {
    /* the best value kept in a register: reloaded through `best` each step, the loop waited
     * on its own loads (2% of a greedy decode of 110M at one thread) */
    int best = 0;
    float top = logits[0];
    for (int i = 1; i < n; i++)
        if (logits[i] > top) best = i, top = logits[i];
    return best;
}

void fwd_free(fwd_ctx *c) {
    if (!c) return;
    free(c->kc_mem), free(c->vc_mem), free(c->kb), free(c->vb), free(c->att_io), free(c->tails), free(c->x), free(c->xb), free(c->xb2), free(c->q);
    free(c->hb), free(c->hb2), free(c->att_mem), free(c->rope_cos), free(c->rope_sin);
    free(c->parent), free(c->depth), free(c->pos), free(c->anc), free(c->xa);
    free(c);
}

typedef struct {
    wmat *const *w;
    int n, r16; /* r16: the int8b mode's 16-row copies, else the int8 mode's packed rows */
} pack_task;

static void pack_worker(void *arg, int chunk, int n_chunks, int thread) {
    (void)thread;
    const pack_task *t = arg;
    for (int i = 0; i < t->n; i++)
        if (t->r16)
            kern_int8b_pack(t->w[i], (unsigned char *)t->w[i]->r16, chunk, n_chunks);
        else
            kern_int8_pack(t->w[i], (unsigned char *)t->w[i]->packed, chunk, n_chunks);
}

/* The bytes of w's copy of the kind pack_rows makes. */
static size_t copy_bytes(const wmat *w, int r16) {
    return r16 ? kern_int8b_packed_size(w) : kern_int8_packed_bytes(w);
}

/* The int8 mode's packed rows or the int8b mode's 16-row copies (kernels.h), made once per model
 * when its first context in that mode is (under a lock: contexts may be made from several
 * threads), by the pool's threads (start-up of 1.1B Q4_0 / Q4_K_M / Q6_K: 0.16 / 0.25 / 0.32 s
 * more on two threads, 0.8-1.2 s on one, most of it the kernel clearing the new pages). They are
 * a cache of the weights, so the model stays const to its users. The matrices then take their
 * bytes twice (the file's pages and the copy; passes of the int8b mode read only the copy, and
 * the int8 mode's tiles of several tokens the file: model/GGUF.md, "Packed rows"). When an
 * allocation fails, or the environment sets DECBENCH_PACKED=0 (memory before speed), the tiles
 * run without (same bits, slower). */

static void pack_rows(const model *cm, tpool *pool, int r16) {
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    model *m = (model *)cm;
    pthread_mutex_lock(&lock);
    const char *env = getenv("DECBENCH_PACKED");
    int *done = r16 ? &m->r16_done : &m->packed_done;
    if (!*done && !(env && strcmp(env, "0") == 0)) {
        int nw = 0;
        wmat **w = malloc(sizeof *w * ((size_t)m->cfg.n_layers * MODEL_LAYER_MATS + 1));
        for (int l = 0; w && l < m->cfg.n_layers; l++) {
            const wmat *lw[MODEL_LAYER_MATS];
            model_layer_mats(&m->layers[l], lw);
            for (int i = 0; i < MODEL_LAYER_MATS; i++) w[nw++] = (wmat *)lw[i];
        }
        if (w) w[nw++] = &m->wcls;
        size_t total = 0;
        for (int i = 0; i < nw; i++) total += (copy_bytes(w[i], r16) + 63) / 64 * 64;
        /* in 2 MB pages where the kernel gives them (util/huge.h): fewer page faults while it
         * is written (1.1B Q4_0, one thread: start-up 1.25 -> 0.70 s) and fewer TLB misses
         * while it streams (one-row passes faster in 10 of 12 pairs of 1.1B Q4_0 / Q4_K_M /
         * Q6_K, 1 and 2 threads, by 0-20%) */
        unsigned char *p = total ? huge_alloc(total) : NULL;
        if (r16)
            m->r16_heap = p;
        else
            m->packed_heap = p;
        int np = 0;
        for (int i = 0; p && i < nw; i++) {
            size_t n = copy_bytes(w[i], r16);
            if (!n) continue;
            if (r16)
                w[i]->r16 = p;
            else
                w[i]->packed = p;
            w[np++] = w[i];
            p += (n + 63) / 64 * 64;
        }
        pack_task t = {w, np, r16};
        if (np) tpool_run(pool, pack_worker, &t, 4 * tpool_size(pool));
        free(w);
    }
    *done = 1;
    pthread_mutex_unlock(&lock);
}

/* n zeroed floats for a matrix product's input rows, 64-byte aligned: calloc's blocks start 16
 * bytes past a line, so every 64-byte load of an input row straddled two cache lines. Measured
 * (Xeon, Emerald Rapids VM, one thread, the AVX-512 wide tiles, f32 768 x 2048 x 64 rows, ns
 * per 64 weights and row, best of 4 runs of 30): 16 bytes past a line 1.25-1.30, aligned
 * 1.10-1.12 (rows 8192 or 8256 bytes apart alike). */
static float *input_rows(size_t n) {
    size_t bytes = (n * sizeof(float) + 63) / 64 * 64;
    float *p = aligned_alloc(64, bytes);
    if (p) memset(p, 0, bytes);
    return p;
}

/* bytes zeroed, from a 64-byte boundary on, in a calloc'd block (*mem, for free) that keeps
 * calloc's untouched zero pages for a large cache. The attention kernels read the KV cache and
 * the scores in 64-byte loads; at calloc's 16 bytes past a line every one of them straddled two
 * lines. Measured (bench/attend_speed.c, one thread, Qwen2.5-0.5B's attention at context 2048,
 * ns per key and query, scores / values): aligned 1.43 / 1.51, 16 bytes past 2.30 / 2.53. */
static void *lines_zeroed(size_t bytes, void **mem) {
    *mem = calloc(bytes + 64, 1);
    return *mem ? (void *)(((uintptr_t)*mem + 63) & ~(uintptr_t)63) : NULL;
}

/* Asks the kernel for 2 MB pages (transparent huge pages, where it allows them on request) in
 * the KV cache of a context of KV_HUGE_MIN_CAP positions or more: a long context's pass streams
 * the whole cache, and with 4 KB pages its reads missed the TLB every 4 KB. Qwen2.5-0.5B's
 * one-row pass at context 16384, ten alternated pairs (bench/context.sh,
 * 2026-11-29-context-attention-2.md): over its bandwidth bound, f16 cache 1.25 -> 1.20, f32
 * 1.17 -> 1.11 (medians). The price: a 2 MB page is resident once any byte of it is written, so
 * a short prompt in such a cache holds more of it in memory (at most the whole cache); caches of
 * the default context (at most 4096) keep 4 KB pages, as does DECBENCH_KV_HUGE=0. The bits are
 * the same either way. */
#define KV_HUGE_MIN_CAP 8192
static int kv_huge_pages(void *mem, size_t bytes, int cap) {
    const char *env = getenv("DECBENCH_KV_HUGE");
    if (!mem || cap < KV_HUGE_MIN_CAP || (env && strcmp(env, "0") == 0)) return 0;
#ifdef MADV_HUGEPAGE
    const uintptr_t huge = (uintptr_t)2 << 20;
    const uintptr_t a = ((uintptr_t)mem + huge - 1) & ~(huge - 1),
                    e = ((uintptr_t)mem + bytes) & ~(huge - 1);
    return e > a && madvise((void *)a, e - a, MADV_HUGEPAGE) == 0; /* a refusal: 4 KB pages */
#else
    (void)bytes;
    return 0;
#endif
}

int fwd_kv_huge(const fwd_ctx *c) { return c->kv_huge; }
int fwd_kv_maps_ahead(const fwd_ctx *c) { return c->kv_ready >= 0; }

int fwd_new(fwd_ctx **out, const model *m, tpool *pool, int max_batch, kern_mode mode,
            char *err) {
    *out = NULL;
    const model_config *cfg = &m->cfg;
    if (max_batch < 1 || max_batch > 4096)
        return err_set(err, "max batch %d is out of range 1..4096", max_batch);
    fwd_ctx *c = calloc(1, sizeof *c);
    if (!c) return err_set(err, "forward context: out of memory");
    c->m = m, c->pool = pool, c->mode = kern_mode_resolve(mode, m, NULL), c->max_batch = max_batch;
    c->cap = cfg->seq_len + max_batch;
    if (balance_init(&c->bal, getenv("DECBENCH_BALANCE"), err) != 0) {
        free(c);
        return -1;
    }
    const kv_type_row *kvr = kv_type_get(m->kv);
    if (!kvr) {
        free(c);
        return err_set(err, "forward context: KV cache type %d is not one of %s", (int)m->kv,
                       KV_TYPE_NAMES);
    }
    c->kvt = kvr->storage, c->kv_row = wtype_row_bytes(c->kvt, cfg->head_size);
    size_t B = (size_t)max_batch, kv = (size_t)cfg->n_layers * c->cap * cfg->kv_dim;
    size_t kv_bytes = kv * kv_type_bytes(m->kv);
    int nt = tpool_size(pool), half = cfg->rope_dim / 2;
    c->kc = lines_zeroed(kv_bytes, &c->kc_mem);
    c->vc = lines_zeroed(kv_bytes, &c->vc_mem);
    c->kv_huge = kv_huge_pages(c->kc_mem, kv_bytes, c->cap) &&
                 kv_huge_pages(c->vc_mem, kv_bytes, c->cap);
    c->q_dim = cfg->n_heads * cfg->head_size;
    c->x = calloc(B * cfg->dim, sizeof(float));
    c->xb = input_rows(B * cfg->dim);
    c->xb2 = input_rows(B * c->q_dim);
    c->q = calloc(B * c->q_dim, sizeof(float));
    c->hb = input_rows(B * cfg->hidden_dim);
    c->hb2 = input_rows(B * cfg->hidden_dim);
    c->kb = calloc(B * cfg->kv_dim, sizeof(float));
    c->vb = calloc(B * cfg->kv_dim, sizeof(float));
    /* up to 64 queries share a pass over a head's keys, fewer if their scores would take more
     * than 4 MB */
    c->att_q = (int)(((size_t)4 << 20) / (sizeof(float) * (size_t)c->cap));
    c->att_q = c->att_q > 64 ? 64 : c->att_q < 1 ? 1 : c->att_q;
    c->att_ld = ((size_t)c->cap + 15) / 16 * 16;
    c->att = lines_zeroed((size_t)nt * c->att_q * c->att_ld * sizeof(float), &c->att_mem);
    c->att_io = input_rows((size_t)nt * 2 * c->att_q * cfg->head_size);
    c->tails = calloc((size_t)nt * c->att_q * B, sizeof(int));
    c->rope_cos = calloc((size_t)cfg->seq_len * half, sizeof(float));
    c->rope_sin = calloc((size_t)cfg->seq_len * half, sizeof(float));
    c->parent = calloc(B, sizeof(int));
    c->depth = calloc(B, sizeof(int));
    c->pos = calloc(B, sizeof(int));
    c->anc = calloc(B * B, sizeof(int));
    if (c->mode == KERN_EXACT_INT8 || c->mode == KERN_EXACT_INT8B) {
        /* rows as wide as the widest product input */
        pack_rows(m, pool, c->mode == KERN_EXACT_INT8B);
        int width = cfg->dim > cfg->hidden_dim ? cfg->dim : cfg->hidden_dim;
        width = c->q_dim > width ? c->q_dim : width;
        c->lda = kern_act_bytes(width);
        size_t bytes = c->mode == KERN_EXACT_INT8 ? B * c->lda : kern_act8b_bytes((int)B, width);
        bytes = (bytes + 63) / 64 * 64;
        c->xa = aligned_alloc(64, c->mode == KERN_EXACT_INT8B ? 2 * bytes : bytes);
        if (c->xa && c->mode == KERN_EXACT_INT8B) c->xa2 = c->xa + bytes;
    }
    if (!c->kc || !c->vc || !c->x || !c->xb || !c->xb2 || !c->q || !c->hb || !c->hb2 ||
        !c->kb || !c->vb || !c->att || !c->att_io || !c->tails || !c->rope_cos || !c->rope_sin || !c->parent || !c->depth || !c->pos || !c->anc ||
        ((c->mode == KERN_EXACT_INT8 || c->mode == KERN_EXACT_INT8B) && !c->xa)) {
        fwd_free(c);
        return err_set(err, "forward context: out of memory (KV cache of %zu MiB, %s)",
                       2 * kv_bytes >> 20, kvr->name);
    }
    /* RoPE angles as llama2.c computes them: theta^(-2i/rope_dim) per pair, times position;
     * then, in ggml_rope_ext's order, divided by the pair's frequency factor (Llama 3.1+'s
     * rope_freqs) and times the linear scaling; cos and sin times the attention factor, as
     * ggml's rope_yarn scales them by mscale (all three exact when 1). */
    const float *ff = m->rope_freqs, freq_scale = 1.0f / cfg->rope_factor; /* as llama.cpp */
    for (int p = 0; p < cfg->seq_len; p++)
        for (int i = 0; i < half; i++) {
            float freq = 1.0f / powf(cfg->rope_theta, (float)(2 * i) / (float)cfg->rope_dim);
            float val = (float)p * freq;
            if (ff) val = val / ff[i];
            val = freq_scale * val;
            c->rope_cos[(size_t)p * half + i] = cosf(val) * cfg->rope_attn_factor;
            c->rope_sin[(size_t)p * half + i] = sinf(val) * cfg->rope_attn_factor;
        }
    if (c->mode == KERN_BLAS) openblas_set_num_threads(nt);
    *out = c;
    return 0;
}

/* ---- matrix products, split over output rows -------------------------------------------- */

/* Pieces a stealing task may have (mm_worker): 2 a thread for 3 jobs at up to 8 threads */
#define MM_MAX_SPANS 48

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
    float *resid;             /* POST_RESIDUAL: resid[t][r] += y[t][r] */
    const int *pos;           /* POST_ROPE: the rows' positions */
    unsigned char *xa_buf;    /* int8 modes: room for x quantized (T rows) */
    /* if norm_w: x is first made the rows of norm_in (stride ldx) RMS-normed by norm_w */
    const float *norm_in, *norm_w;
    unsigned char *gated_xa;  /* POST_SILU_MUL, int8b: the gated rows quantized into it */
    int xa_ready;             /* xa_buf already holds x quantized (a gated_xa) */
    int pieces;               /* row ranges per job (set by mm_run) */
    /* stealing (set by mm_run; mm_worker): n_pieces pieces claimed in order (next_piece),
     * each a span of units of `align` rows */
    int steal, n_pieces;
    atomic_int next_piece;
    tpool_span span[MM_MAX_SPANS];
    int align;                /* their rows' alignment (set by mm_run) */
    /* one-row products, one piece a thread (set by mm_run): chunk i is piece i of every job,
     * the first piece `lead` more than an even share of the rows (model/balance.h), each
     * piece's end recorded in *run */
    int across;
    float lead;
    balance_run *run;
    /* Q/K/V products of a layer that needs whole heads: each piece, whole heads, also gets
     * that layer's qkv_finish_cols (positions pos) */
    const model_layer *finish;
    const unsigned char *xa;  /* int8 mode: x quantized (set by mm_run), or NULL */
    /* POST_ROPE: if kv_segs, jobs 1 and 2 (keys after RoPE, values) also store their rows of
     * layer kv_layer into the caches of the pass's segments (kv_store_cols) */
    const struct pass_seg *kv_segs;
    int kv_nseg, kv_layer;
} mm_task;

static void kv_store_cols(const struct pass_seg *segs, int nseg, int layer, int values,
                          const float *y, int lo, int hi);

/* Pairs (2j, 2j + 1) of [lo, hi) for j < half within each head (hs values), rotated by the
 * angles of each row's position. Per row, cc and ss hold the angles per value (cos_j twice;
 * -sin_j, sin_j), so that each value is v[i] cc[r] + v[i ^ 1] ss[r], which -O2 vectorizes in
 * blocks of 16: v0 c + v1 (-s) and v1 c + v0 s are v0 c - v1 s and v0 s + v1 c bit for bit (a
 * negation is exact, an addition commutes). Pair by pair, with the head found by steps, it was
 * scalar: 2.7% of a 64-row pass of 110M q8_0, 1% of 1.1B Q4_K_M (perf, Zen 5). */
static void rope_rows(const fwd_ctx *c, const int *pos, float *y, int ldy, int lo, int hi,
                      int T) {
    const model_config *cfg = &c->m->cfg;
    const int hs = cfg->head_size, half = cfg->rope_dim / 2, n = 2 * half < hs ? 2 * half : hs;
    float cc[n + 16], ss[n + 16], tmp[16];
    for (int t = 0; t < T; t++) {
        const float *fc = c->rope_cos + (size_t)pos[t] * half;
        const float *fs = c->rope_sin + (size_t)pos[t] * half;
        for (int r = 0; r < n; r += 2) {
            cc[r] = cc[r + 1] = fc[r / 2];
            ss[r] = -fs[r / 2], ss[r + 1] = fs[r / 2];
        }
        float *v = y + (size_t)t * ldy;
        for (int i = lo; i < hi;) { /* the part of one head in [lo, hi) below n */
            const int h0 = i - i % hs, end = h0 + n < hi ? h0 + n : hi;
            int r = i - h0;
            for (; h0 + r + 16 <= end; r += 16) {
                const float *restrict a = v + h0 + r, *restrict ca = cc + r, *restrict sa = ss + r;
                for (int k = 0; k < 16; k++) tmp[k] = a[k] * ca[k] + a[k ^ 1] * sa[k];
                for (int k = 0; k < 16; k++) v[h0 + r + k] = tmp[k];
            }
            for (; h0 + r < end; r += 2) {
                float v0 = v[h0 + r], v1 = v[h0 + r + 1];
                v[h0 + r] = v0 * cc[r] + v1 * ss[r];
                v[h0 + r + 1] = v1 * cc[r + 1] + v0 * ss[r + 1];
            }
            i = h0 + hs < hi ? h0 + hs : hi;
        }
    }
}

/* ---- per-architecture steps on whole heads (see the header comment) ------------------------ */

/* Rotates one head of hs values at position angles fc/fs: NORM pairs (2j, 2j + 1), NEOX pairs
 * (j, j + half); values past rope_dim stay as they are. The NORM arithmetic is rope_rows'. NEOX
 * pairs go 16 at a time, which -O2 vectorizes (the same operations on each pair, so the same
 * bits): pair by pair, Q/K/V's steps after the products took 1.9% of a 64-row pass of
 * Qwen2.5-0.5B q8_0 at 2 threads (perf, Zen 5). */
static void rope_head(float *v, const float *fc, const float *fs, int half, rope_style style) {
    int stride = style == ROPE_NEOX ? 1 : 2, offset = style == ROPE_NEOX ? half : 1, j = 0;
    if (style == ROPE_NEOX)
        for (float ta[16], tb[16]; j + 16 <= half; j += 16) {
            const float *a = v + j, *b = v + half + j;
            for (int k = 0; k < 16; k++) {
                ta[k] = a[k] * fc[j + k] - b[k] * fs[j + k];
                tb[k] = a[k] * fs[j + k] + b[k] * fc[j + k];
            }
            for (int k = 0; k < 16; k++) v[j + k] = ta[k], v[half + j + k] = tb[k];
        }
    for (; j < half; j++) {
        float *a = v + j * stride, *b = a + offset;
        float v0 = *a, v1 = *b;
        *a = v0 * fc[j] - v1 * fs[j];
        *b = v0 * fs[j] + v1 * fc[j];
    }
}

/* The steps after a product, element by element in blocks of 16, which GCC -O2 vectorizes (its
 * cheap cost model leaves a loop of unknown length scalar): the same operations on each
 * element, so the same bits (-ffp-contract=off: nothing is fused). perf on the 110M f32 preset,
 * 64 rows, two threads: these steps with RoPE and libm's expf took 8.0% of the samples scalar,
 * 7.2% so; the pass, 68.4 -> 66.6 ms (medians of 5), is within the noise. */

/* r[i] += y[i] (a residual, or a bias). */
static void add_into(float *restrict r, const float *restrict y, int n) {
    int i = 0;
    for (; i + 16 <= n; i += 16)
        for (int k = 0; k < 16; k++) r[i + k] += y[i + k];
    for (; i < n; i++) r[i] += y[i];
}

/* A row's RMS scale. A sum of squares that overflows (activations of 1e19 and more) would scale
 * the row by 1 / sqrt(inf) = 0, and the next layers would see zeros: it scales by NaN instead,
 * which the logits check reports. */
static float rms_scale(const float *x, int n, float eps) {
    const float ss = kern_dot(x, x, n) / (float)n + eps;
    return isinf(ss) ? NAN : 1.0f / sqrtf(ss);
}

/* In place is fine: the scale is formed before the first value is written. */
static void rmsnorm(float *o, const float *x, const float *w, int n, float eps) {
    const float ss = rms_scale(x, n, eps);
    for (int i = 0; i < n; i++) o[i] = w[i] * (ss * x[i]);
}

/* 1 if layer L needs qkv_finish: anything beyond Llama's pairwise RoPE inside the products. */
static int needs_whole_heads(const model *m, const model_layer *L) {
    return m->cfg.rope != ROPE_NORM || L->bq || L->bk || L->bv || L->q_norm || L->k_norm;
}

/* After product j of the Q/K/V products (0: Q, 1: K, 2: V) of T rows at positions pos, on its
 * columns [lo, hi) of y (rows ld apart), whole heads: the bias, then for Q and K each head's
 * RMSNorm and RoPE, in llama.cpp's order. Every step reads only its own head, so a piece of
 * whole heads gets the bits the whole row does. */
static void qkv_finish_cols(const fwd_ctx *c, const model_layer *L, int j, float *y, int ld, int lo,
                            int hi, const int *pos, int T) {
    const model_config *cfg = &c->m->cfg;
    const int hs = cfg->head_size, half = cfg->rope_dim / 2;
    const float *bias = j == 0 ? L->bq : j == 1 ? L->bk : L->bv;
    const float *norm = j == 0 ? L->q_norm : j == 1 ? L->k_norm : NULL;
    for (int t = 0; t < T; t++) {
        float *r = y + (size_t)t * ld;
        if (bias) add_into(r + lo, bias + lo, hi - lo);
        if (j == 2) continue;
        const float *fc = c->rope_cos + (size_t)pos[t] * half;
        const float *fs = c->rope_sin + (size_t)pos[t] * half;
        for (int h = lo / hs; h < hi / hs; h++) {
            if (norm) rmsnorm(r + h * hs, r + h * hs, norm, hs, cfg->norm_eps);
            rope_head(r + h * hs, fc, fs, half, cfg->rope);
        }
    }
}

/* All of Q, K and V (in q, k, v) at once: a pass whose pieces are not whole heads. */
static void qkv_finish(const fwd_ctx *c, const model_layer *L, float *q, float *k, float *v,
                       const int *pos, int T) {
    const int kvd = c->m->cfg.kv_dim;
    qkv_finish_cols(c, L, 0, q, c->q_dim, 0, c->q_dim, pos, T);
    qkv_finish_cols(c, L, 1, k, kvd, 0, kvd, pos, T);
    qkv_finish_cols(c, L, 2, v, kvd, 0, kvd, pos, T);
}

/* Rows [lo, hi) of jobs first..last (a piece's rows, or some of them): the products, then
 * their steps after the product on those rows. */
static void mm_rows(const mm_task *task, int first, int last, int lo, int hi) {
    const int T = task->T, int8b = task->c->mode == KERN_EXACT_INT8B;
    for (int j = first; j <= last; j++) {
        const mm_job *job = &task->jobs[j];
        const int h = hi < job->w->rows ? hi : job->w->rows;
        if (lo >= h) continue;
        if (task->xa && int8b && kern_int8b_supported(job->w->type))
            kern_matmul_int8b(job->w, lo, h, task->xa, T, job->y + lo, job->ldy);
        else if (task->xa && kern_int8_supported(job->w->type))
            kern_matmul_int8(job->w, lo, h, task->xa, task->c->lda, T, job->y + lo, job->ldy);
        else if (task->c->mode != KERN_BLAS || job->w->type != WTYPE_F32)
            kern_matmul(job->w, lo, h, task->x, task->ldx, T, job->y + lo, job->ldy);
        if (task->post == POST_ROPE && j < 2)
            rope_rows(task->c, task->pos, job->y, job->ldy, lo, h, T);
        if (task->finish)
            qkv_finish_cols(task->c, task->finish, j, job->y, job->ldy, lo, h, task->pos, T);
        if (task->kv_segs && j >= 1)
            kv_store_cols(task->kv_segs, task->kv_nseg, task->kv_layer, j == 2, job->y, lo, h);
        if (task->post == POST_RESIDUAL)
            for (int t = 0; t < T; t++)
                add_into(task->resid + (size_t)t * job->ldy + lo,
                         job->y + (size_t)t * job->ldy + lo, h - lo);
    }
    if (task->post == POST_SILU_MUL && lo < hi) { /* jobs: w1 -> hb, w3 -> hb2, same rows */
        int ld = task->jobs[0].ldy;
        for (int t = 0; t < T; t++)
            kern_silu_mul(task->jobs[0].y + (size_t)t * ld + lo,
                          task->jobs[1].y + (size_t)t * ld + lo, hi - lo);
        /* w2's input, these columns of it, while they are in this core's cache (lo and hi
         * multiples of 32: int8b pieces) */
        if (task->gated_xa)
            kern_act8b_quantize_range(task->jobs[0].y, ld, T, task->jobs[0].w->rows, task->gated_xa,
                                      0, T, lo, hi);
    }
}

/* Piece k of a task: rows [lo, hi) of jobs first..last (piece k % pieces of job k / pieces;
 * for SILU_MUL piece k of both w1 and w3). */
static void mm_piece(const mm_task *task, int k, int *first, int *last, int *lo, int *hi) {
    const int silu = task->post == POST_SILU_MUL;
    *first = silu ? 0 : k / task->pieces, *last = silu ? task->n_jobs - 1 : *first;
    tpool_split(task->jobs[*first].w->rows, task->align, k % task->pieces, task->pieces, lo, hi);
}

/* Rows [lo, hi) of piece k of `pieces` over `rows` rows in units of al rows, the first piece
 * `lead` more than an even share (balance_split). */
static void balanced_rows(int rows, int al, int pieces, float lead, int k, int *lo, int *hi) {
    int u0, u1;
    balance_split((rows + al - 1) / al, pieces, lead, k, &u0, &u1);
    *lo = u0 * al < rows ? u0 * al : rows, *hi = u1 * al < rows ? u1 * al : rows;
}

/* Piece k of job j's rows in a task whose pieces cross its jobs (task->across): [lo, hi). */
static void mm_piece_across(const mm_task *task, int j, int k, int *lo, int *hi) {
    balanced_rows(task->jobs[j].w->rows, task->align, task->pieces, task->lead, k, lo, hi);
}

/* Stealing: a piece's rows in units of task->align rows (tpool_span), its owner taking
 * MM_OWN_UNITS at a time. Passes of several rows run one or a few long pieces a thread (mm_run),
 * and a thread that had claimed the last one left the others waiting: in 64-row passes of 110M q8_0
 * at 2 threads, the caller finished its last piece 22-36 us after the worker on average, 1.0-1.6
 * ms of a 17-20 ms pass; with stealing, 14 us. The passes, medians of 8 alternated pairs (Zen 5,
 * busy host): 110M q8_0 64 rows 0.989x the time (owner units of 2: 0.989x, of 1: 1.005x, of 8:
 * 0.994x), 1.1B Q4_K_M 0.974x, Qwen2.5-0.5B 0.959x; 8 and 16 rows 1.000x and 0.997x. (One
 * piece a thread with stealing measured 1.004x there; the int8b mode now runs it, and mm_run
 * has the later figures.) Stealing in one-row passes gained nothing (0.98-1.10x: their pieces
 * stream best whole). */
#define MM_OWN_UNITS 4

/* Chunk c of a task: piece c, whole; or, stealing (task->steal), one thread's share: the next
 * piece no thread has claimed, MM_OWN_UNITS at a time from its front, until none is left; then
 * the units still at the backs of the others' pieces, one at a time. */
static void mm_worker(void *arg, int chunk, int n_chunks, int thread) {
    (void)n_chunks;
    mm_task *task = arg;
    int first, last, lo, hi, a, e;
    if (task->across) {
        if (task->post == POST_SILU_MUL) { /* w1 and w3: one shape, their rows together */
            mm_piece_across(task, 0, chunk, &lo, &hi);
            mm_rows(task, 0, task->n_jobs - 1, lo, hi);
        } else
            for (int j = 0; j < task->n_jobs; j++) {
                mm_piece_across(task, j, chunk, &lo, &hi);
                mm_rows(task, j, j, lo, hi);
            }
        task->run->end[chunk] = balance_now(), task->run->thread[chunk] = thread;
        return;
    }
    if (!task->steal) {
        mm_piece(task, chunk, &first, &last, &lo, &hi);
        mm_rows(task, first, last, lo, hi);
        return;
    }
    const int al = task->align;
    for (int k; (k = atomic_fetch_add_explicit(&task->next_piece, 1, memory_order_relaxed)) <
                task->n_pieces;) {
        mm_piece(task, k, &first, &last, &lo, &hi);
        while (tpool_span_take(&task->span[k], MM_OWN_UNITS, 0, &a, &e))
            mm_rows(task, first, last, lo + a * al, lo + e * al < hi ? lo + e * al : hi);
    }
    for (int k = 0; k < task->n_pieces; k++) {
        mm_piece(task, k, &first, &last, &lo, &hi);
        while (tpool_span_take(&task->span[k], 1, 1, &a, &e))
            mm_rows(task, first, last, lo + a * al, lo + e * al < hi ? lo + e * al : hi);
    }
}

/* o = w (ss x), value by value, as rmsnorm's loop computes it; o, x and w apart. */
static void scale_into(float *restrict o, const float *restrict x, const float *restrict w,
                       float ss, int n) {
    int i = 0;
    for (; i + 16 <= n; i += 16) /* 16 at a time: -O2 vectorizes a loop of known count */
        for (int k = 0; k < 16; k++) o[i + k] = w[i + k] * (ss * x[i + k]);
    for (; i < n; i++) o[i] = w[i] * (ss * x[i]);
}

/* Columns [k0, k1) of rows [t0, t1) of a task's x, RMS-normed from norm_in: each value is
 * rmsnorm's (the row's scale from all of it, so norm_in must not be x: other threads read the
 * whole row while this one writes). */
static void norm_cols(const mm_task *task, int t0, int t1, int k0, int k1) {
    const model_config *cfg = &task->c->m->cfg;
    for (int t = t0; t < t1; t++) {
        const float *x = task->norm_in + (size_t)t * task->ldx;
        const float ss = rms_scale(x, task->ldx, cfg->norm_eps);
        scale_into((float *)task->x + (size_t)t * task->ldx + k0, x + k0, task->norm_w + k0, ss,
                   k1 - k0);
    }
}

/* Rows [t0, t1) of a task's x, RMS-normed from norm_in, whole. */
static void norm_rows(const mm_task *task, int t0, int t1) {
    norm_cols(task, t0, t1, 0, task->ldx);
}

/* The int8b mode's input rows quantized by the pool's threads: on one thread it took 2.3% of a
 * 64-row pass of 1.1B Q4_K_M, with the other thread waiting. A chunk is a share of the columns
 * of one of the layout's groups of tokens (kern_act8b_group), each of its rows normed whole for
 * its scale: the layout interleaves a group's bytes and sums, and chunks of a few tokens had
 * both threads writing the same lines (an 8-row pass of 1.1B Q4_K_M at 2 threads spent 5.9% of
 * its samples in the quantizer, most on its stores of the sums). Against those chunks, 2
 * threads, Zen 5, medians of 5-7 alternated pairs: 1.1B Q4_K_M 0.955x the time at 8 rows, 0.986x
 * at 12, 0.938x at 16, 0.980x at 32, 0.965x at 48, 1.004x at 64 (whose chunks were whole groups
 * already); 1.1B q8_0 and Q6_K 0.955x and 0.964x at 8; 110M Q4_K_M 0.961x at 8, 0.912x at 24;
 * 110M q8_0 0.921x at 8. */
typedef struct {
    const mm_task *task;
    int K, parts; /* column shares of each group */
} quant_task;

static void quant_worker(void *arg, int chunk, int n_chunks, int thread) {
    (void)thread, (void)n_chunks;
    const quant_task *q = arg;
    const mm_task *task = q->task;
    const int T = task->T;
    int t0, t1, b0, b1;
    kern_act8b_group(T, chunk / q->parts, &t0, &t1);
    tpool_split(q->K / 32, 1, chunk % q->parts, q->parts, &b0, &b1);
    if (task->norm_w) norm_cols(task, t0, t1, 32 * b0, 32 * b1);
    kern_act8b_quantize_range(task->x, task->ldx, T, q->K, task->xa_buf, t0, t1, 32 * b0, 32 * b1);
}

/* The rows a product's pieces are aligned to: the kernels' tile height at T = 1 (16), int8b's
 * whole 32-row tiles (kernels_avx512_int8b.c). */
static int mm_tile_rows(const fwd_ctx *c) { return c->mode == KERN_EXACT_INT8B ? 32 : 16; }

/* Runs a task; returns whether it shared the threads. */
static int mm_run(fwd_ctx *c, mm_task *task) {
    size_t macs = 0;
    int min_rows = task->jobs[0].w->rows;
    for (int j = 0; j < task->n_jobs; j++) {
        macs += (size_t)task->jobs[j].w->rows * task->jobs[j].w->cols * task->T;
        if (task->jobs[j].w->rows < min_rows) min_rows = task->jobs[j].w->rows;
    }
    const int nt = macs < PARALLEL_MIN_MACS ? 1 : tpool_size(c->pool);
    task->xa = NULL;
    int any = 0; /* int8 modes: some job takes quantized rows */
    if (c->mode == KERN_EXACT_INT8 || c->mode == KERN_EXACT_INT8B)
        for (int j = 0; j < task->n_jobs; j++) any |= kern_int8_supported(task->jobs[j].w->type);
    const int quant_shared = any && c->mode == KERN_EXACT_INT8B && task->T >= 8 && nt > 1;
    if (task->norm_w && !quant_shared) {
        norm_rows(task, 0, task->T);
        task->norm_w = NULL;
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
    if (any && task->xa_ready)
        task->xa = task->xa_buf;
    else if (any) {
        /* the input rows quantized once for every job */
        const int K = task->jobs[0].w->cols;
        if (quant_shared) {
            /* the RMS norm in the same region, each thread normalizing what it quantizes:
             * serial on the caller, it left the other threads waiting, and half the rows then
             * crossed from one core to the other twice (1.1B q8_0, 64 rows: 3.5% less time,
             * 110M 1.6%, medians of 10 alternated pairs, Zen 5) */
            const int groups = kern_act8b_groups(task->T);
            int parts = (2 * nt + groups - 1) / groups; /* 2 chunks a thread at least */
            if (parts > K / 32) parts = K / 32;
            quant_task q = {task, K, parts};
            tpool_run(c->pool, quant_worker, &q, groups * parts);
            task->norm_w = NULL;
        } else if (c->mode == KERN_EXACT_INT8B)
            kern_act8b_quantize(task->x, task->ldx, task->T, K, task->xa_buf);
        else
            kern_act_quantize(task->x, task->ldx, task->T, K, task->xa_buf, c->lda);
        task->xa = task->xa_buf;
    }
    /* The float kernels: a few pieces per thread, so that a late or slow thread's share is
     * picked up by the others (110M f32 at 2 threads, one piece a thread with stealing instead:
     * 4 rows 1.005x the time, 8 rows 0.979x). The int8b mode: one piece a thread, each thread then
     * streaming one range of rows with fewer claims and fewer cold starts of its prefetch, and
     * from 2 rows on stealing (mm_worker) for the late thread's share. One-row passes against 4
     * pieces, at 2 threads: 0.95x the time on 110M q8_0, 0.83x on 110M Q4_K_M, 0.95x on 1.1B
     * Q4_K_M (medians of 5-9 alternated pairs, Zen 5). Several rows, against 4 pieces a thread
     * without stealing (2-7 rows) or 2 with it (8 and more), at 2 threads, medians of 9-13
     * alternated pairs (Xeon Emerald Rapids): 110M Q4_K_M 0.957x at 2 rows, 0.929x at 4, 0.967x
     * at 8, 0.983x at 16, 0.984x at 64; 110M q8_0 0.973x, 0.949x, 0.962x, 0.999x, 0.976-0.978x;
     * 1.1B q8_0 0.985x, 0.992x, 0.996x at 8, 0.990x at 64; 1.1B Q4_K_M 0.993x at 8, 0.989x at
     * 64; 110M Q6_K 0.976x at 64. (On Zen 5, 64-row passes with one piece took 1.004x the time
     * of 2, within that host's noise.) */
    const int int8b = c->mode == KERN_EXACT_INT8B;
    const int per_thread = int8b ? 1 : 4;
    int pieces = nt == 1 ? 1 : per_thread * nt;
    task->align = task->finish ? c->m->cfg.head_size : mm_tile_rows(c);
    if (pieces > (min_rows + task->align - 1) / task->align)
        pieces = (min_rows + task->align - 1) / task->align;
    task->pieces = pieces < 1 ? 1 : pieces;
    int n_chunks = task->post == POST_SILU_MUL ? task->pieces : task->n_jobs * task->pieces;
    /* passes of 8 rows and more steal (mm_worker), the int8b mode's from 2 rows, when no piece
     * has more units than a span */
    task->steal = nt > 1 && (task->T >= 8 || (int8b && task->T >= 2)) && n_chunks <= MM_MAX_SPANS;
    for (int k = 0; task->steal && k < n_chunks; k++) {
        int first, last, lo, hi;
        mm_piece(task, k, &first, &last, &lo, &hi);
        const int units = (hi - lo + task->align - 1) / task->align;
        task->steal = units <= TPOOL_SPAN_MAX;
        tpool_span_init(&task->span[k], units);
    }
    if (task->steal) { /* one chunk a thread: each claims pieces, then steals (mm_worker) */
        task->n_pieces = n_chunks;
        atomic_store_explicit(&task->next_piece, 0, memory_order_relaxed);
        n_chunks = nt;
    }
    /* one-row products, one piece a thread: the pieces balanced (model/balance.h). One-row
     * passes at 2 threads against even pieces, medians of 20-30 alternated pairs (Zen 5 VM):
     * 110M q8_0 0.985x the time, Q4_0 0.976x, Q4_K_M 0.959x, Q6_K 0.975x; 1.1B 0.983x, 0.981x,
     * 0.988x, 0.936x. With the waiting threads' prefetch shares still even, 110M Q4_K_M and
     * Q6_K measured 0.94-1.01x in six runs, against 0.95-0.98x in nine with them following the
     * pieces (else a worker prefetches rows the caller then reads from the other core). */
    balance_run run;
    float *lead = NULL;
    task->across =
        !task->steal && task->T == 1 && nt > 1 && task->pieces == nt && nt <= BALANCE_MAX_PIECES;
    if (task->across) {
        const wmat *w = task->jobs[0].w;
        lead = balance_lead(&c->bal, w->rows, w->cols, task->n_jobs);
        task->lead = *lead, task->run = &run, n_chunks = task->pieces;
        for (int i = 0; i < BALANCE_MAX_PIECES; i++) run.thread[i] = -1;
        run.start = balance_now();
    }
    tpool_run(nt == 1 ? NULL : c->pool, mm_worker, task, n_chunks);
    if (lead && c->bal.learn) balance_update(lead, task->pieces, &run);
    return nt > 1;
}

/* ---- attention ------------------------------------------------------------------------ */

/* The KV cache holds each layer's kv heads apart, [layer][kv head][slot][head_size], so that a
 * head's keys are one contiguous stream and one matrix (kern_attend_shared). Interleaved heads
 * ([slot][kv_dim], an earlier layout) made every head's scan a strided read of 256-byte pieces:
 * on the 110M shape at 896 positions, one query per head and layer took 34 ms against 19 ms
 * apart (one core, all 12 layers). */
static unsigned char *kv_head(const fwd_ctx *c, unsigned char *cache, int layer, int g) {
    const model_config *cfg = &c->m->cfg;
    return cache + ((size_t)layer * cfg->n_kv_heads + g) * c->cap * c->kv_row;
}

/* Columns [lo, hi) of T new key rows (values: value rows) at y, kv_dim floats apart, into their
 * scratch slots of layer `layer` after the committed prefix (rows first.. of the scratch),
 * stored as the cache's type: copied for f32, each value rounded by the type's from_float
 * otherwise (f16: to nearest, ties to even), a function of the value alone, so a row's stored
 * bits do not depend on the pass it was computed in, nor on which columns are stored together. */
static void kv_store_rows(fwd_ctx *c, int layer, int values, const float *y, int T, int lo,
                          int hi) {
    const model_config *cfg = &c->m->cfg;
    const int hs = cfg->head_size;
    const size_t esz = c->kv_row / (size_t)hs; /* bytes a value: 4 (f32) or 2 (f16) */
    void (*store)(const float *, void *, int) =
        c->kvt == WTYPE_F16 ? kern_f16_from_f32 : wtype_get(c->kvt)->from_float;
    for (int g = lo / hs; g * hs < hi; g++) {
        const int a = lo > g * hs ? lo : g * hs, e = hi < (g + 1) * hs ? hi : (g + 1) * hs;
        unsigned char *dst = kv_head(c, values ? c->vc : c->kc, layer, g) +
                             (size_t)(a - g * hs) * esz +
                             (size_t)(c->n_past + c->first) * c->kv_row;
        const float *src = y + a;
        for (int r = 0; r < T; r++, dst += c->kv_row, src += cfg->kv_dim) {
            if (c->kvt == WTYPE_F32)
                memcpy(dst, src, sizeof(float) * (size_t)(e - a));
            else
                store(src, dst, e - a);
        }
    }
}

/* The batch's K and V rows (kb, vb: [T][kv_dim]) of kv heads [g0, g1) into the cache
 * (kv_store_rows). */
static void kv_store(fwd_ctx *c, int layer, int T, const float *kb, const float *vb, int g0,
                     int g1) {
    const int hs = c->m->cfg.head_size;
    kv_store_rows(c, layer, 0, kb, T, g0 * hs, g1 * hs);
    kv_store_rows(c, layer, 1, vb, T, g0 * hs, g1 * hs);
}

typedef struct {
    fwd_ctx *c;
    int layer, T;
    int rows_per_job, blocks; /* a job: one kv head, rows_per_job rows; blocks per head */
    const float *q;           /* the rows' queries, [T][q_dim] */
    float *out;               /* their results, [T][q_dim] */
    const float *kb, *vb;     /* set when each head is one job: the job stores its head's rows
                               * (kv_store) before it reads them (run_layers says why) */
} att_task;

/* One job: the query heads of kv head g for a block of rows. Every row sees the committed
 * prefix, shared by all of them, then its ancestors in the batch root first and itself: the
 * order plain decoding sees them in. The job's queries run as kern_attend_shared calls of up to
 * att_q queries, each reading the head's keys and values once for all of them (the 1.1B shape's
 * 8 query heads per kv head, and a tree's rows, share one read). */
static void att_worker(void *arg, int chunk, int n_chunks, int thread) {
    (void)n_chunks;
    att_task *task = arg;
    fwd_ctx *c = task->c;
    const model_config *cfg = &c->m->cfg;
    const int hs = cfg->head_size, group = cfg->n_heads / cfg->n_kv_heads;
    const int g = chunk / task->blocks, r0 = chunk % task->blocks * task->rows_per_job;
    const int r1 = r0 + task->rows_per_job < task->T ? r0 + task->rows_per_job : task->T;
    if (task->kb) kv_store(c, task->layer, task->T, task->kb, task->vb, g, g + 1);
    const unsigned char *k = kv_head(c, c->kc, task->layer, g),
                        *v = kv_head(c, c->vc, task->layer, g);
    float *scratch = c->att + (size_t)thread * c->att_q * c->att_ld;
    float *qin = c->att_io + (size_t)thread * 2 * c->att_q * hs, *qout = qin + c->att_q * hs;
    int *tails = c->tails + (size_t)thread * c->att_q * c->max_batch;
    const int *tail[64];
    int n_tail[64], n = (r1 - r0) * group;
    for (int q0 = 0; q0 < n; q0 += c->att_q) {
        int nq = n - q0 < c->att_q ? n - q0 : c->att_q;
        for (int t = 0; t < nq; t++) { /* query t: row r (scratch row first + r), head h */
            int r = r0 + (q0 + t) / group, h = g * group + (q0 + t) % group, sr = c->first + r;
            memcpy(qin + t * hs, task->q + (size_t)r * c->q_dim + h * hs, sizeof(float) * hs);
            int *tl = tails + (size_t)t * c->max_batch;
            const int *anc = c->anc + (size_t)sr * c->max_batch;
            for (int j = 0; j <= c->depth[sr]; j++) tl[j] = c->n_past + anc[j];
            tail[t] = tl, n_tail[t] = c->depth[sr] + 1;
        }
        kern_attend_kv(c->kvt, qin, hs, nq, hs, k, v, c->n_past, tail, n_tail, scratch, c->att_ld,
                       qout, hs);
        for (int t = 0; t < nq; t++) {
            int r = r0 + (q0 + t) / group, h = g * group + (q0 + t) % group;
            memcpy(task->out + (size_t)r * c->q_dim + h * hs, qout + t * hs, sizeof(float) * hs);
        }
    }
}

/* Maps the cache's pages before a pass writes into them, KV_POPULATE_SLOTS slots at a time, in
 * one madvise(MADV_POPULATE_WRITE) call per head stream. The cache is calloc'd and stays
 * untouched zero pages until written, and each head stream is a stream of its own, so plain
 * decoding faulted a fresh page into every one of them every 4096 / kv_row tokens: 110M's 288
 * streams of f32, 18 faults a token. On a VM that shadows its page tables a fault costs about
 * 10 us against 1 us a page populated (one thread, 110M q8_0, tg128: 19 faults a token, 5% of
 * its time). Only the pages' mapping changes: they are zero either way, and the bits computed
 * are the same. A kernel without MADV_POPULATE_WRITE (before Linux 5.14) refuses it once, and
 * the cache faults in as before. */
#define KV_POPULATE_SLOTS 128
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
static void kv_populate(fwd_ctx *c, int end) {
    if (c->kv_ready < 0 || end <= c->kv_ready) return;
    const model_config *cfg = &c->m->cfg;
    int to = end + KV_POPULATE_SLOTS < c->cap ? end + KV_POPULATE_SLOTS : c->cap;
    const uintptr_t page = 4096;
    for (int l = 0; l < cfg->n_layers; l++)
        for (int g = 0; g < cfg->n_kv_heads; g++)
            for (int kv = 0; kv < 2; kv++) {
                unsigned char *s = kv_head(c, kv ? c->vc : c->kc, l, g);
                uintptr_t a = (uintptr_t)(s + (size_t)c->kv_ready * c->kv_row) & ~(page - 1),
                          e = (uintptr_t)(s + (size_t)to * c->kv_row);
                if (madvise((void *)a, e - a, MADV_POPULATE_WRITE) != 0) {
                    c->kv_ready = -1;
                    return;
                }
            }
    c->kv_ready = to;
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
 * so exactness checks pass on garbage. Every kernel mode carries a NaN or an infinity from any
 * weight or activation to the logits (the int8 quantizer, the softmax and RMSNorm see to it:
 * kernels.h, kernels_isa.h, rmsnorm), so this one check of the logits rows covers the whole
 * pass. The message names the first non-finite weight, found then by reading all of them. */
static int check_logits(const fwd_ctx *c, const int *tokens, const int *out_rows, int n_logits,
                        const float *logits, char *err) {
    int V = model_logits_width(c->m);
    for (int i = 0; i < n_logits; i++) {
        const float *l = logits + (size_t)i * V;
        int j = first_nonfinite(l, V);
        if (j < 0) continue;
        int r = out_rows ? out_rows[i] : i;
        char where[256];
        if (!model_find_nonfinite(c->m, where, sizeof where))
            snprintf(where, sizeof where, "every weight is finite: an activation overflowed");
        return err_set(err,
                       "%s: non-finite logits at position %d (the pass fed token %d): logit "
                       "%d is %s; the weights or the activations of this model are not finite "
                       "(%s)",
                       c->m->path, c->pos[c->first + r], tokens[r], j,
                       isnan(l[j]) ? "NaN" : l[j] > 0 ? "+Inf" : "-Inf", where);
    }
    return 0;
}

/* Checks rows first..first+n-1 of the scratch (tokens, parent and pos indexed from 0 for this
 * call; parent values are scratch rows) and records their parents, depths, positions and
 * ancestor lists. */
static int check_batch(fwd_ctx *c, int first, int n, const int *tokens, const int *parent,
                       const int *pos, const int *out_rows, int n_out, char *err) {
    const model_config *cfg = &c->m->cfg;
    if (n < 1 || first + n > c->max_batch)
        return first ? err_set(err, "forward: %d more rows after the %d in scratch exceed the %d "
                                    "a batch holds", n, first, c->max_batch)
                     : err_set(err, "forward: batch of %d rows, expected 1..%d", n, c->max_batch);
    if (n_out < 0 || (out_rows == NULL && n_out != 0 && n_out != n))
        return err_set(err, "forward: %d logits rows requested for a batch of %d", n_out, n);
    for (int r = 0; r < n; r++) {
        const int g = first + r;
        if (tokens[r] < 0 || tokens[r] >= cfg->vocab_size)
            return err_set(err, "forward: row %d: token %d outside the vocabulary 0..%d", g,
                           tokens[r], cfg->vocab_size - 1);
        int p = parent ? parent[r] : g - 1;
        if (p < -1 || p >= g)
            return err_set(err, "forward: row %d: parent %d, expected -1..%d", g, p, g - 1);
        int depth = p < 0 ? 0 : c->depth[p] + 1;
        int position = pos ? pos[r] : c->n_past + depth;
        if (position < 0 || position >= cfg->seq_len)
            return err_set(err, "forward: row %d: position %d outside the context 0..%d", g,
                           position, cfg->seq_len - 1);
        c->parent[g] = p, c->depth[g] = depth, c->pos[g] = position;
        int *anc = c->anc + (size_t)g * c->max_batch;
        if (p >= 0) memcpy(anc, c->anc + (size_t)p * c->max_batch, sizeof(int) * depth);
        anc[depth] = g;
    }
    for (int i = 0; out_rows && i < n_out; i++)
        if (out_rows[i] < 0 || out_rows[i] >= n)
            return err_set(err, "forward: logits row %d outside the batch 0..%d", out_rows[i], n - 1);
    return 0;
}

/* The activation rows of a pass: one context's own buffers (fwd_eval), or a group's holding the
 * rows of several contexts stacked (fwd_group_eval). */
typedef struct {
    float *x, *xb, *xb2, *q, *hb, *hb2, *kb, *vb;
    unsigned char *xa, *xa2;
} row_bufs;

/* One context's rows in a pass: rows row0..row0+n-1 of the stacked buffers are its scratch rows
 * c->first.. */
typedef struct pass_seg {
    fwd_ctx *c;
    int row0, n;
} pass_seg;

/* Columns [lo, hi) of the pass's new keys (values: values) of layer `layer`, y: [N][kv_dim],
 * into each segment's cache (kv_store_rows), by the thread whose product made them, while they
 * are in its cache. Stored on the caller before the attention (kv_store), a 64-row pass of 110M
 * q8_0 wrote 4.7 MB of scattered 256-byte rows while the other thread waited. */
static void kv_store_cols(const pass_seg *segs, int nseg, int layer, int values, const float *y,
                          int lo, int hi) {
    for (int s = 0; s < nseg; s++)
        kv_store_rows(segs[s].c, layer, values,
                      y + (size_t)segs[s].row0 * segs[s].c->m->cfg.kv_dim, segs[s].n, lo, hi);
}

/* Attention of several contexts as one pool run: chunk k belongs to the first task whose chunks
 * (n_kv_heads * blocks each) reach past it. */
typedef struct {
    att_task *at;
    int n;
} att_group;

static void att_group_worker(void *arg, int chunk, int n_chunks, int thread) {
    const att_group *g = arg;
    int s = 0;
    while (chunk >= g->at[s].c->m->cfg.n_kv_heads * g->at[s].blocks)
        chunk -= g->at[s].c->m->cfg.n_kv_heads * g->at[s].blocks, s++;
    att_worker(&g->at[s], chunk, n_chunks, thread);
}

/* A one-row pass's threads, once out of chunks, prefetch the next products' weights while they
 * wait (tpool_prefetch_idle): thread i the i-th share of each matrix, the rows it will likely
 * claim (one piece a thread at T = 1, mm_run; the caller claims first). Short products leave
 * the threads waiting often: at 2 threads a one-row pass of 110M spent a quarter of its samples
 * in the pool's waits. One-row passes at 2 threads, Zen 5, medians of 6-10 alternated pairs:
 * 110M Q4_0 0.96x the time, Q4_K_M 0.95x, q8_0 1.00x (it reads at the probe's rate already;
 * 0.93x on a busy host), 1.1B Q4_0 0.96x, Q4_K_M 1.00x. */
static void prefetch_next(fwd_ctx *c, int T, const wmat *w, const wmat *job0, int jobs) {
    if (T != 1) return;
    const int packed = c->mode == KERN_EXACT_INT8B && w->r16;
    const size_t bytes =
        packed ? kern_int8b_packed_size(w) : (size_t)w->rows * wtype_row_bytes(w->type, w->cols);
    /* the caller's share as the product will balance it (mm_run): the first piece's rows, by
     * the lead of the product's shape (its first job's, job0, and its count of jobs) */
    const int nt = tpool_size(c->pool), al = mm_tile_rows(c);
    size_t first = 0;
    if (nt > 1 && nt <= BALANCE_MAX_PIECES && w->rows > (nt - 1) * al) { /* nt units or more */
        int lo, hi;
        const float lead = *balance_lead(&c->bal, job0->rows, job0->cols, jobs);
        balanced_rows(w->rows, al, nt, lead, 0, &lo, &hi);
        first = (size_t)((double)bytes * hi / w->rows);
    }
    tpool_prefetch_idle(c->pool, packed ? w->r16 : w->data, bytes, first);
}

/* Every layer over the N rows of b (the embeddings in b->x, positions pos[0..N)): the products
 * once over all rows, each segment's attention against its own context's cache and tree. lead
 * (one of the segments' contexts, all of one model, kernel mode and pool) runs the products; its
 * RoPE tables must cover every position. at: room for nseg attention tasks. */
static void run_layers(fwd_ctx *lead, const row_bufs *b, const int *pos, int N,
                       const pass_seg *segs, int nseg, att_task *at) {
    const model *m = lead->m;
    const model_config *cfg = &m->cfg;
    int dim = cfg->dim, kvd = cfg->kv_dim, hid = cfg->hidden_dim, qd = lead->q_dim;
    for (int l = 0; l < cfg->n_layers; l++) {
        const model_layer *L = &m->layers[l];
        /* a skipped sublayer adds nothing to the residual stream x (fwd_set_skip) */
        const unsigned skip = lead->skip ? lead->skip[l] : 0;
        if (!(skip & FWD_SKIP_ATTN)) {
            const int whole = needs_whole_heads(m, L);
            /* whole heads: finished by the products' threads, piece by piece, when whole
             * heads are whole tiles; else after the products, on the caller, the other threads
             * waiting (a 64-row pass of Qwen2.5-0.5B: 1.5% of the samples, with the cache
             * writes after it) */
            const int finish = whole && cfg->head_size % mm_tile_rows(lead) == 0;
            /* with RoPE (or the whole-head steps) in the products' step, the new keys and
             * values go into the caches there too (kv_store_cols); else here, once qkv_finish
             * has made them */
            mm_task qkv = {.c = lead, .x = b->xb, .ldx = dim, .T = N, .n_jobs = 3,
                           .jobs = {{&L->wq, b->q, qd}, {&L->wk, b->kb, kvd},
                                    {&L->wv, b->vb, kvd}},
                           .post = whole ? POST_NONE : POST_ROPE, .pos = pos, .xa_buf = b->xa,
                           .norm_in = b->x, .norm_w = L->rms_att, .finish = finish ? L : NULL,
                           .kv_segs = whole && !finish ? NULL : segs, .kv_nseg = nseg,
                           .kv_layer = l};
            if (l == 0)
                for (int s = 0; s < nseg; s++)
                    kv_populate(segs[s].c, segs[s].c->n_past + segs[s].c->first + segs[s].n);
            prefetch_next(lead, N, &L->wo, &L->wo, 1);
            const int products_shared = mm_run(lead, &qkv);
            const int late = whole && !finish; /* K and V made after the products */
            if (late) qkv_finish(lead, L, b->q, b->kb, b->vb, pos, N);
            /* jobs of whole kv heads and blocks of rows (at most 64 queries), the blocks halved
             * only while there are fewer than 2 jobs a thread: each job reads its head's cache
             * once, so every further block reads it again. Against blocks of half the rows at
             * most, passes of 110M q8_0 (12 kv heads) at context 512, 2 threads, took 0.91x the
             * time at 2 rows, 0.94x at 4, 0.92x at 8, 0.97x at 16, 0.99x at 32 and 64; 1.1B
             * q8_0, Qwen2.5-0.5B and Llama-3.2-1B (GQA: 4, 2 and 8 kv heads) 0.98-1.01x. Halved
             * while fewer than 2 jobs a thread rather than 4: 1.1B q8_0 at context 2000 0.974x
             * at 4 rows, 0.986x at 8; Qwen2.5-0.5B 0.947x and 0.964x (at context 512 0.98-1.00x).
             * Medians of 7 alternated pairs, Xeon Emerald Rapids. */
            int group = cfg->n_heads / cfg->n_kv_heads, nt = tpool_size(lead->pool), chunks = 0;
            size_t att_macs = 0;
            for (int s = 0; s < nseg; s++) {
                fwd_ctx *c = segs[s].c;
                int n = segs[s].n;
                const size_t off = (size_t)segs[s].row0;
                int per = n > 64 / group ? 64 / group : n;
                while (per > 1 && cfg->n_kv_heads * ((n + per - 1) / per) < 2 * nt) per /= 2;
                per = per < 1 ? 1 : per;
                at[s] = (att_task){.c = c, .layer = l, .T = n, .rows_per_job = per,
                                   .blocks = (n + per - 1) / per, .q = b->q + off * qd,
                                   .out = b->xb2 + off * qd};
                /* The new K and V rows into the cache, where the products did not store them
                 * (whole heads: qkv_finish made them after the products):
                 * by each head's job when a head is one job (no other job reads that head),
                 * else here, before any job starts. Stored here, one-row passes wrote 2 x
                 * layers x kv heads scattered rows on the caller while the other threads
                 * waited (110M q8_0, 2 threads: 2.3% of the samples) */
                if (late && at[s].blocks == 1)
                    at[s].kb = b->kb + off * kvd, at[s].vb = b->vb + off * kvd;
                else if (late)
                    kv_store(c, l, n, b->kb + off * kvd, b->vb + off * kvd, 0, cfg->n_kv_heads);
                chunks += cfg->n_kv_heads * at[s].blocks;
                att_macs += (size_t)n * cfg->n_heads * (c->n_past + c->first + n) * cfg->head_size;
            }
            int att_shared = products_shared && att_macs * ATTEND_MAC_COST >= PARALLEL_MIN_MACS;
            att_group ag = {at, nseg};
            /* again: the attention's waits, as the products' */
            prefetch_next(lead, N, &L->wo, &L->wo, 1);
            tpool_run(att_shared ? lead->pool : NULL, att_group_worker, &ag, chunks);
            mm_task wo = {.c = lead, .x = b->xb2, .ldx = qd, .T = N, .n_jobs = 1,
                          .jobs = {{&L->wo, b->xb, dim}}, .post = POST_RESIDUAL, .resid = b->x,
                          .xa_buf = b->xa};
            prefetch_next(lead, N, &L->w1, &L->w1, 2);
            prefetch_next(lead, N, &L->w3, &L->w1, 2);
            mm_run(lead, &wo);
        }
        if (!(skip & FWD_SKIP_MLP)) {
            /* int8b: w2's input quantized by the threads that gate it, piece by piece */
            const int gated = b->xa2 && kern_int8b_supported(L->w2.type) &&
                              kern_int8b_supported(L->w1.type) && kern_int8b_supported(L->w3.type);
            mm_task w13 = {.c = lead, .x = b->xb, .ldx = dim, .T = N, .n_jobs = 2,
                           .jobs = {{&L->w1, b->hb, hid}, {&L->w3, b->hb2, hid}},
                           .post = POST_SILU_MUL, .xa_buf = b->xa, .norm_in = b->x,
                           .norm_w = L->rms_ffn, .gated_xa = gated ? b->xa2 : NULL};
            prefetch_next(lead, N, &L->w2, &L->w2, 1);
            mm_run(lead, &w13);
            mm_task w2 = {.c = lead, .x = b->hb, .ldx = hid, .T = N, .n_jobs = 1,
                          .jobs = {{&L->w2, b->xb, dim}}, .post = POST_RESIDUAL, .resid = b->x,
                          .xa_buf = gated ? b->xa2 : b->xa, .xa_ready = gated};
            if (l + 1 < cfg->n_layers) {
                const model_layer *next = &m->layers[l + 1];
                prefetch_next(lead, N, &next->wq, &next->wq, 3);
                prefetch_next(lead, N, &next->wk, &next->wq, 3);
                prefetch_next(lead, N, &next->wv, &next->wq, 3);
            } else {
                prefetch_next(lead, N, &m->wcls, &m->wcls, 1);
            }
            mm_run(lead, &w2);
        }
    }
}

/* The classifier over n_logits rows of b->xb (already normalized) into logits, rows of the
 * model's logits width. A draft padded to its target's vocabulary (model_pad_logits) writes
 * rows of the target's width: the classifier's first min(width, vocab) rows, then the lowest
 * finite float (never an argmax, probability 0 after a softmax, and finite for the checks that
 * refuse non-finite logits). */
static void classify(fwd_ctx *lead, const row_bufs *b, int n_logits, float *logits) {
    const model *m = lead->m;
    int width = model_logits_width(m), dim = m->cfg.dim;
    wmat cls_w = m->wcls;
    if (cls_w.rows > width) cls_w.rows = width;
    mm_task cls = {.c = lead, .x = b->xb, .ldx = dim, .T = n_logits, .n_jobs = 1,
                   .jobs = {{&cls_w, logits, width}}, .post = POST_NONE, .xa_buf = b->xa};
    mm_run(lead, &cls);
    for (int i = 0; i < n_logits; i++)
        for (int v = cls_w.rows; v < width; v++) logits[(size_t)i * width + v] = -FLT_MAX;
}

void fwd_set_hidden_out(fwd_ctx *c, float *normed, float *raw) {
    c->hid_norm = normed;
    c->hid_raw = raw;
}

/* Copies logits row i's hidden states where fwd_set_hidden_out asked: normed is the very row
 * the classifier reads (so a drafter sees the bits the target's logits came from), raw the
 * residual stream it was normalized from. A copy, after the values are final: the pass's
 * arithmetic is the same with and without it. */
static void hidden_copy(const fwd_ctx *c, int i, const float *normed, const float *raw) {
    size_t dim = (size_t)c->m->cfg.dim;
    if (c->hid_norm) memcpy(c->hid_norm + (size_t)i * dim, normed, sizeof(float) * dim);
    if (c->hid_raw) memcpy(c->hid_raw + (size_t)i * dim, raw, sizeof(float) * dim);
}

/* Evaluates rows first..first+n-1 of the scratch (fwd_eval: first = 0). */
static int eval_rows(fwd_ctx *c, int first, int n, const int *tokens, const int *parent,
                     const int *pos, const int *out_rows, int n_out, float *logits, char *err) {
    c->last_n = 0; /* on error the scratch holds nothing usable */
    if (check_batch(c, first, n, tokens, parent, pos, out_rows, n_out, err)) return -1;
    c->first = first;
    const model *m = c->m;
    const model_config *cfg = &m->cfg;
    int dim = cfg->dim;
    for (int r = 0; r < n; r++) kern_row_to_f32(&m->tok_embd, tokens[r], c->x + (size_t)r * dim);
    const row_bufs b = {c->x, c->xb, c->xb2, c->q, c->hb, c->hb2, c->kb, c->vb, c->xa, c->xa2};
    const pass_seg seg = {c, 0, n};
    att_task at;
    run_layers(c, &b, c->pos + first, n, &seg, 1, &at);

    int n_logits = out_rows ? n_out : n_out == 0 ? 0 : n;
    for (int i = 0; i < n_logits; i++) {
        int r = out_rows ? out_rows[i] : i;
        rmsnorm(c->xb + (size_t)i * dim, c->x + (size_t)r * dim, m->rms_final, dim, cfg->norm_eps);
        hidden_copy(c, i, c->xb + (size_t)i * dim, c->x + (size_t)r * dim);
    }
    if (n_logits > 0) {
        classify(c, &b, n_logits, logits);
        if (!c->allow_nonfinite && check_logits(c, tokens, out_rows, n_logits, logits, err))
            return -1;
    }
    c->last_n = first + n;
    c->skipped = (first ? c->skipped : 0) | (c->skip != NULL);
    c->passes++;
    c->rows += n;
    return 0;
}

int fwd_eval(fwd_ctx *c, int n, const int *tokens, const int *parent, const int *pos,
             const int *out_rows, int n_out, float *logits, char *err) {
    if (c->hook) {
        const fwd_part p = {c, n, tokens, parent, pos, out_rows, n_out, logits};
        return c->hook->eval(c->hook, c, c->in_prompt ? FWD_HOOK_PROMPT : 0, &p, err);
    }
    return eval_rows(c, 0, n, tokens, parent, pos, out_rows, n_out, logits, err);
}

int fwd_eval_more(fwd_ctx *c, int n, const int *tokens, const int *parent, const int *out_rows,
                  int n_out, float *logits, char *err) {
    if (c->hook) {
        const fwd_part p = {c, n, tokens, parent, NULL, out_rows, n_out, logits};
        return c->hook->eval(c->hook, c, FWD_HOOK_MORE, &p, err);
    }
    return eval_rows(c, c->last_n, n, tokens, parent, NULL, out_rows, n_out, logits, err);
}

/* ---- the pass hook (forward.h, fwd_hook) ----------------------------------------------- */

void fwd_set_hook(fwd_ctx *c, fwd_hook *h) { c->hook = h; }

int fwd_eval_direct(fwd_ctx *c, int more, const fwd_part *p, char *err) {
    return eval_rows(c, more ? c->last_n : 0, p->n, p->tokens, p->parent, more ? NULL : p->pos,
                     p->out_rows, p->n_out, p->logits, err);
}

int fwd_groupable(const fwd_ctx *c) { return !c->skip && c->mode != KERN_BLAS; }

/* ---- several contexts in one pass (forward.h, fwd_group) ------------------------------- */

struct fwd_group {
    const model *m;
    tpool *pool;
    kern_mode mode;
    int max_rows, max_seqs, width; /* width: the logits rows' floats when it was made */
    row_bufs b;                     /* the stacked rows, [max_rows][width of each] */
    float *logits;                  /* the stacked logits rows, [max_rows][width] */
    int *pos;                       /* the stacked rows' positions */
    pass_seg *segs;
    att_task *at;
};

void fwd_group_free(fwd_group *g) {
    if (!g) return;
    free(g->b.x), free(g->b.xb), free(g->b.xb2), free(g->b.q), free(g->b.hb), free(g->b.hb2);
    free(g->b.kb), free(g->b.vb), free(g->b.xa), free(g->logits), free(g->pos), free(g->segs);
    free(g->at), free(g);
}

int fwd_group_new(fwd_group **out, const model *m, tpool *pool, int max_rows, int max_seqs,
                  kern_mode mode, char *err) {
    *out = NULL;
    const model_config *cfg = &m->cfg;
    if (max_rows < 1 || max_rows > 65536)
        return err_set(err, "forward group: %d rows a pass is out of range 1..65536", max_rows);
    if (max_seqs < 1 || max_seqs > max_rows)
        return err_set(err, "forward group: %d contexts a pass is out of range 1..%d (the rows)",
                       max_seqs, max_rows);
    fwd_group *g = calloc(1, sizeof *g);
    if (!g) return err_set(err, "forward group: out of memory");
    g->m = m, g->pool = pool, g->mode = kern_mode_resolve(mode, m, NULL);
    g->max_rows = max_rows, g->max_seqs = max_seqs, g->width = model_logits_width(m);
    size_t R = (size_t)max_rows;
    int q_dim = cfg->n_heads * cfg->head_size;
    g->b.x = calloc(R * cfg->dim, sizeof(float));
    g->b.xb = input_rows(R * cfg->dim);
    g->b.xb2 = input_rows(R * q_dim);
    g->b.q = calloc(R * q_dim, sizeof(float));
    g->b.hb = input_rows(R * cfg->hidden_dim);
    g->b.hb2 = input_rows(R * cfg->hidden_dim);
    g->b.kb = calloc(R * cfg->kv_dim, sizeof(float));
    g->b.vb = calloc(R * cfg->kv_dim, sizeof(float));
    g->logits = calloc(R * g->width, sizeof(float));
    g->pos = calloc(R, sizeof(int));
    g->segs = calloc((size_t)max_seqs, sizeof *g->segs);
    g->at = calloc((size_t)max_seqs, sizeof *g->at);
    int int8 = g->mode == KERN_EXACT_INT8 || g->mode == KERN_EXACT_INT8B;
    if (int8) { /* as fwd_new: rows as wide as the widest product input */
        pack_rows(m, pool, g->mode == KERN_EXACT_INT8B);
        int width = cfg->dim > cfg->hidden_dim ? cfg->dim : cfg->hidden_dim;
        width = q_dim > width ? q_dim : width;
        size_t bytes = g->mode == KERN_EXACT_INT8 ? R * kern_act_bytes(width)
                                                  : kern_act8b_bytes(max_rows, width);
        bytes = (bytes + 63) / 64 * 64;
        g->b.xa = aligned_alloc(64, g->mode == KERN_EXACT_INT8B ? 2 * bytes : bytes);
        if (g->b.xa && g->mode == KERN_EXACT_INT8B) g->b.xa2 = g->b.xa + bytes;
    }
    if (!g->b.x || !g->b.xb || !g->b.xb2 || !g->b.q || !g->b.hb || !g->b.hb2 || !g->b.kb ||
        !g->b.vb || !g->logits || !g->pos || !g->segs || !g->at || (int8 && !g->b.xa)) {
        fwd_group_free(g);
        return err_set(err, "forward group: out of memory (%d rows a pass)", max_rows);
    }
    *out = g;
    return 0;
}

/* The group's terms (forward.h), checked before anything is touched. */
static int group_check(const fwd_group *g, const fwd_part *parts, int n_parts, char *err) {
    if (n_parts < 1 || n_parts > g->max_seqs)
        return err_set(err, "forward group: %d contexts in a pass, expected 1..%d", n_parts,
                       g->max_seqs);
    if (model_logits_width(g->m) != g->width)
        return err_set(err, "forward group: the model's logits rows are %d floats, %d when the "
                            "group was made (make it after model_pad_logits)",
                       model_logits_width(g->m), g->width);
    long total = 0;
    for (int i = 0; i < n_parts; i++) {
        const fwd_ctx *c = parts[i].ctx;
        if (!c) return err_set(err, "forward group: part %d has no context", i);
        if (c->m != g->m)
            return err_set(err, "forward group: part %d is a context of %s, the group's model is "
                                "%s (one model a pass)",
                           i, c->m->path, g->m->path);
        if (c->mode != g->mode)
            return err_set(err, "forward group: part %d runs the %s kernels, the group %s", i,
                           kern_mode_name(c->mode), kern_mode_name(g->mode));
        if (c->pool != g->pool)
            return err_set(err, "forward group: part %d's context has another thread pool than "
                                "the group's",
                           i);
        if (c->skip)
            return err_set(err, "forward group: part %d's context skips layers (fwd_set_skip), "
                                "which a shared pass cannot",
                           i);
        for (int j = 0; j < i; j++)
            if (parts[j].ctx == c)
                return err_set(err, "forward group: parts %d and %d are the same context", j, i);
        if (parts[i].n < 1 || parts[i].n > c->max_batch)
            return err_set(err, "forward group: part %d: batch of %d rows, expected 1..%d", i,
                           parts[i].n, c->max_batch);
        total += parts[i].n;
    }
    if (total > g->max_rows)
        return err_set(err, "forward group: %ld rows in a pass exceed the group's %d", total,
                       g->max_rows);
    return 0;
}

/* Empties the scratch of every context of a failed pass (as a failed fwd_eval does). */
static int group_fail(const fwd_part *parts, int n_parts) {
    for (int i = 0; i < n_parts; i++) parts[i].ctx->last_n = 0;
    return -1;
}

int fwd_group_eval(fwd_group *g, const fwd_part *parts, int n_parts, char *err) {
    if (group_check(g, parts, n_parts, err)) return -1;
    for (int i = 0; i < n_parts; i++) parts[i].ctx->last_n = 0;
    const model *m = g->m;
    const model_config *cfg = &m->cfg;
    const int dim = cfg->dim, width = g->width;
    /* rows, positions and embeddings stacked part by part; the RoPE tables of the context made
     * for the longest context (they hold the same values where they overlap) */
    fwd_ctx *lead = parts[0].ctx;
    int N = 0, n_logits = 0;
    for (int i = 0; i < n_parts; i++) {
        const fwd_part *p = &parts[i];
        fwd_ctx *c = p->ctx;
        char why[ERR_LEN];
        if (check_batch(c, 0, p->n, p->tokens, p->parent, p->pos, p->out_rows, p->n_out, why)) {
            err_set(err, "forward group: part %d: %s", i, why);
            return group_fail(parts, n_parts);
        }
        c->first = 0;
        if (c->cap - c->max_batch > lead->cap - lead->max_batch) lead = c;
        g->segs[i] = (pass_seg){c, N, p->n};
        for (int r = 0; r < p->n; r++) {
            g->pos[N + r] = c->pos[r];
            kern_row_to_f32(&m->tok_embd, p->tokens[r], g->b.x + (size_t)(N + r) * dim);
        }
        N += p->n;
        n_logits += p->out_rows ? p->n_out : p->n_out == 0 ? 0 : p->n;
    }
    run_layers(lead, &g->b, g->pos, N, g->segs, n_parts, g->at);
    /* the logits rows of every part stacked, through one classifier product */
    for (int i = 0, o = 0; i < n_parts; i++) {
        const fwd_part *p = &parts[i];
        int k = p->out_rows ? p->n_out : p->n_out == 0 ? 0 : p->n;
        for (int j = 0; j < k; j++, o++) {
            int r = g->segs[i].row0 + (p->out_rows ? p->out_rows[j] : j);
            rmsnorm(g->b.xb + (size_t)o * dim, g->b.x + (size_t)r * dim, m->rms_final, dim,
                    cfg->norm_eps);
            hidden_copy(p->ctx, j, g->b.xb + (size_t)o * dim, g->b.x + (size_t)r * dim);
        }
    }
    if (n_logits > 0) classify(lead, &g->b, n_logits, g->logits);
    for (int i = 0, o = 0; i < n_parts; i++) {
        const fwd_part *p = &parts[i];
        int k = p->out_rows ? p->n_out : p->n_out == 0 ? 0 : p->n;
        if (k == 0) continue;
        memcpy(p->logits, g->logits + (size_t)o * width, sizeof(float) * (size_t)k * width);
        o += k;
        char why[ERR_LEN];
        if (!p->ctx->allow_nonfinite &&
            check_logits(p->ctx, p->tokens, p->out_rows, k, p->logits, why)) {
            err_set(err, "forward group: part %d: %s", i, why);
            return group_fail(parts, n_parts);
        }
    }
    for (int i = 0; i < n_parts; i++) {
        fwd_ctx *c = parts[i].ctx;
        c->last_n = parts[i].n;
        c->skipped = 0;
        c->passes++;
        c->rows += parts[i].n;
    }
    return 0;
}

int fwd_commit(fwd_ctx *c, const int *path, int n, char *err) {
    const model_config *cfg = &c->m->cfg;
    if (n < 0 || n > c->last_n)
        return err_set(err, "commit: %d rows, but the last batch left %d in scratch", n, c->last_n);
    if (c->n_past + n > cfg->seq_len)
        return err_set(err, "commit: %d + %d positions exceed the context of %d", c->n_past, n,
                       cfg->seq_len);
    if (c->skipped && n > 0)
        return err_set(err, "commit: the scratch holds rows evaluated with skipped layers, whose "
                            "K/V are incomplete (evaluate them again without fwd_set_skip)");
    for (int i = 0; i < n; i++) {
        int r = path[i];
        if (r < 0 || r >= c->last_n || c->parent[r] != (i ? path[i - 1] : -1))
            return err_set(err, "commit: row %d at path index %d does not continue the path "
                                "from the root", r, i);
    }
    size_t row = c->kv_row;
    for (int l = 0; l < cfg->n_layers; l++)
        for (int g = 0; g < cfg->n_kv_heads; g++) {
            unsigned char *kl = kv_head(c, c->kc, l, g), *vl = kv_head(c, c->vc, l, g);
            for (int i = 0; i < n; i++) {
                if (path[i] == i) continue;
                memmove(kl + (c->n_past + i) * row, kl + (c->n_past + path[i]) * row, row);
                memmove(vl + (c->n_past + i) * row, vl + (c->n_past + path[i]) * row, row);
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

int fwd_repeat_prefix(fwd_ctx *c, int n, char *err) {
    const model_config *cfg = &c->m->cfg;
    if (n > cfg->seq_len)
        return err_set(err, "repeat prefix: %d positions exceed the context of %d", n,
                       cfg->seq_len);
    if (n <= c->n_past) return 0;
    if (c->n_past < 1) return err_set(err, "repeat prefix: no committed position to repeat");
    size_t row = c->kv_row, p0 = (size_t)c->n_past;
    for (int l = 0; l < cfg->n_layers; l++)
        for (int g = 0; g < cfg->n_kv_heads; g++) {
            unsigned char *kl = kv_head(c, c->kc, l, g), *vl = kv_head(c, c->vc, l, g);
            /* doubling copies: each one repeats the rows already in place */
            for (size_t have = p0; have < (size_t)n;) {
                size_t more = (size_t)n - have < have ? (size_t)n - have : have;
                memcpy(kl + have * row, kl, more * row);
                memcpy(vl + have * row, vl, more * row);
                have += more;
            }
        }
    c->n_past = n;
    c->last_n = 0;
    return 0;
}

int fwd_prefill(fwd_ctx *c, const int *tokens, int n, float *logits, char *err) {
    if (n < 1) return err_set(err, "prefill: empty prompt");
    if (c->skip) return err_set(err, "prefill: layers are skipped (fwd_set_skip): the cache would "
                                     "hold incomplete K/V");
    if (c->n_past + n > c->m->cfg.seq_len)
        return err_set(err, "prompt of %d tokens does not fit the context of %d (%d in use)", n,
                       c->m->cfg.seq_len, c->n_past);
    for (int done = 0; done < n;) {
        int chunk = n - done < c->max_batch ? n - done : c->max_batch;
        int last = chunk - 1, is_last = done + chunk == n;
        c->in_prompt = 1;
        int rc = fwd_eval(c, chunk, tokens + done, NULL, NULL, is_last ? &last : NULL,
                          is_last ? 1 : 0, logits, err);
        c->in_prompt = 0;
        if (rc) return -1;
        /* a chain's path is 0..chunk-1: commit the whole chunk */
        c->n_past += chunk;
        c->last_n = 0;
        done += chunk;
    }
    return 0;
}
