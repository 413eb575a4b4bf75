/* test_forward_hidden.c: the hidden states a pass hands out (forward.h, fwd_set_hidden_out),
 * the feature learned drafters (EAGLE, Medusa) read.
 *  1. nothing else changes: a context asked for both states and one asked for none, fed the
 *     same prefill, random trees (random logits rows), a level-by-level continuation, commits
 *     and later passes, return memcmp-equal logits throughout (later passes read the K/V the
 *     earlier ones left, so the K/V are checked too).
 *  2. batch invariance: each returned row's normed and raw states are bit-identical to those
 *     of decoding its root-to-row path one token at a time (T = 1) on a single-thread context,
 *     and the states fwd_eval_more returns equal the one-pass ones.
 *  3. normed = RMSNorm(raw) computed here with the scalar reference dot product (kern_dot_ref,
 *     which every instruction set's kern_dot matches bit for bit: test_kernels.c), bit for bit,
 *     and the prefill's last row carries its states.
 *  4. a group pass (fwd_group_eval) hands each context its own rows' states, equal to a
 *     fwd_eval's.
 * On stories260K (f32) in the exact mode, and xs_Q4_K_M.gguf (quantized) in exact, exact-int8
 * and exact-int8b, with 1 and 2 threads; the blas mode (not batch-invariant) is checked for 1.
 * and 3. only. Under the sanitizers fewer trees. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/forward.h"
#include "model/kernels/kernels.h"
#include "model/loader/model_file.h"
#include "tests/testutil.h"
#include "util/err.h"
#include "util/rng.h"

#define B 24

/* normed must be the final RMSNorm of raw, recomputed with the scalar reference dot product
 * in the order forward.c's rmsnorm uses; returns the number of differing rows. */
static int norm_mismatches(const model *m, const float *normed, const float *raw, int rows) {
    int dim = m->cfg.dim, bad = 0;
    float *want = malloc(sizeof(float) * dim);
    for (int i = 0; i < rows; i++) {
        const float *x = raw + (size_t)i * dim;
        float ss = kern_dot_ref(x, x, dim) / (float)dim + m->cfg.norm_eps;
        ss = 1.0f / sqrtf(ss);
        for (int k = 0; k < dim; k++) want[k] = m->rms_final[k] * (ss * x[k]);
        bad += memcmp(want, normed + (size_t)i * dim, sizeof(float) * dim) != 0;
    }
    free(want);
    return bad;
}

/* A path decoded one token at a time after truncating to prefix: f's hidden-state buffers
 * (fwd_set_hidden_out) end with the last token's states. */
static void sequential_hidden(fwd_ctx *f, int prefix, const int *path, int n, float *logits) {
    char err[ERR_LEN];
    static const int zero = 0;
    CHECK(fwd_truncate(f, prefix, err) == 0);
    for (int i = 0; i < n; i++) {
        CHECK_MSG(fwd_eval(f, 1, &path[i], NULL, NULL, &zero, 1, logits, err) == 0, "%s", err);
        CHECK(fwd_commit(f, &zero, 1, err) == 0);
    }
}

static void test_model(const model *m, const char *what, kern_mode mode, int n_threads,
                       int n_trees, uint64_t seed) {
    char err[ERR_LEN];
    tpool *pool = NULL;
    CHECK(tpool_new(&pool, n_threads, err) == 0);
    const int V = model_logits_width(m), dim = m->cfg.dim;
    const int invariant = mode != KERN_BLAS;
    fwd_ctx *h, *plain, *ref;
    CHECK(fwd_new(&h, m, pool, B, mode, err) == 0);
    CHECK(fwd_new(&plain, m, pool, B, mode, err) == 0);
    CHECK(fwd_new(&ref, m, NULL, 4, mode, err) == 0);
    float *lh = malloc(sizeof(float) * B * V), *lp = malloc(sizeof(float) * B * V);
    float *norm = malloc(sizeof(float) * B * dim), *raw = malloc(sizeof(float) * B * dim);
    float *norm2 = malloc(sizeof(float) * B * dim), *raw2 = malloc(sizeof(float) * B * dim);
    float *rn = malloc(sizeof(float) * dim), *rr = malloc(sizeof(float) * dim);
    float *rl = malloc(sizeof(float) * V);
    fwd_set_hidden_out(h, norm, raw);
    fwd_set_hidden_out(ref, rn, rr);
    rng_state r;
    rng_seed(&r, seed);
    int prompt[64], tokens[B], parent[B], out[B], path[B], seq[B + 1];
    int logit_diff = 0, state_diff = 0, more_diff = 0, norm_bad = 0, checked = 0;
    for (int tree = 0; tree < n_trees; tree++) {
        int P = 1 + (int)rng_below(&r, 40);
        for (int i = 0; i < P; i++) prompt[i] = (int)rng_below(&r, (uint32_t)m->cfg.vocab_size);
        CHECK(fwd_truncate(h, 0, err) == 0 && fwd_truncate(plain, 0, err) == 0);
        CHECK(fwd_prefill(h, prompt, P, lh, err) == 0);
        CHECK(fwd_prefill(plain, prompt, P, lp, err) == 0);
        logit_diff += memcmp(lh, lp, sizeof(float) * V) != 0;
        norm_bad += norm_mismatches(m, norm, raw, 1);
        if (invariant) { /* the prefill's last row, against the prompt decoded token by token */
            CHECK(fwd_truncate(ref, 0, err) == 0);
            CHECK(fwd_prefill(ref, prompt, P - 1 > 0 ? P - 1 : P, rl, err) == 0);
            if (P > 1) sequential_hidden(ref, P - 1, &prompt[P - 1], 1, rl);
            state_diff += memcmp(rn, norm, sizeof(float) * dim) != 0 ||
                          memcmp(rr, raw, sizeof(float) * dim) != 0;
        }
        int T = 1 + (int)rng_below(&r, B), n_out = 0;
        for (int i = 0; i < T; i++) {
            tokens[i] = (int)rng_below(&r, (uint32_t)m->cfg.vocab_size);
            parent[i] = i == 0 ? -1 : (int)rng_below(&r, (uint32_t)(i + 1)) - 1;
            if (rng_below(&r, 3)) out[n_out++] = i;
        }
        if (n_out == 0) out[n_out++] = T - 1;
        CHECK_MSG(fwd_eval(h, T, tokens, parent, NULL, out, n_out, lh, err) == 0, "%s", err);
        CHECK_MSG(fwd_eval(plain, T, tokens, parent, NULL, out, n_out, lp, err) == 0, "%s", err);
        logit_diff += memcmp(lh, lp, sizeof(float) * n_out * V) != 0;
        norm_bad += norm_mismatches(m, norm, raw, n_out);
        if (invariant)
            for (int i = 0; i < n_out; i++) {
                int n = 0;
                for (int j = out[i]; j >= 0; j = parent[j]) path[n++] = j;
                for (int k = 0; k < n; k++) seq[k] = tokens[path[n - 1 - k]];
                CHECK(fwd_truncate(ref, 0, err) == 0);
                CHECK(fwd_prefill(ref, prompt, P, rl, err) == 0);
                sequential_hidden(ref, P, seq, n, rl);
                checked++;
                state_diff += memcmp(rn, norm + (size_t)i * dim, sizeof(float) * dim) != 0 ||
                              memcmp(rr, raw + (size_t)i * dim, sizeof(float) * dim) != 0;
            }
        /* the same tree in two passes: every row's states as in the one pass (all rows out) */
        if (invariant && T > 1) {
            CHECK(fwd_eval(h, T, tokens, parent, NULL, NULL, T, lh, err) == 0);
            memcpy(norm2, norm, sizeof(float) * T * dim), memcpy(raw2, raw, sizeof(float) * T * dim);
            int cut = 1 + (int)rng_below(&r, (uint32_t)(T - 1));
            CHECK(fwd_eval(h, cut, tokens, parent, NULL, NULL, cut, lh, err) == 0);
            int sub[B];
            for (int i = cut; i < T; i++) sub[i - cut] = parent[i];
            CHECK_MSG(fwd_eval_more(h, T - cut, tokens + cut, sub, NULL, T - cut, lh, err) == 0,
                      "%s", err);
            more_diff += memcmp(norm, norm2 + (size_t)cut * dim,
                                sizeof(float) * (T - cut) * dim) != 0 ||
                         memcmp(raw, raw2 + (size_t)cut * dim, sizeof(float) * (T - cut) * dim) != 0;
            CHECK(fwd_eval(plain, T, tokens, parent, NULL, NULL, T, lp, err) == 0);
        } else if (invariant) {
            CHECK(fwd_eval(h, T, tokens, parent, NULL, NULL, T, lh, err) == 0);
            CHECK(fwd_eval(plain, T, tokens, parent, NULL, NULL, T, lp, err) == 0);
        }
        /* commit the deepest row's path on both, then one more token: the K/V agree */
        int n = 0, cpath[B];
        for (int j = T - 1; j >= 0; j = parent[j]) path[n++] = j;
        for (int k = 0; k < n; k++) cpath[k] = path[n - 1 - k];
        CHECK(fwd_commit(h, cpath, n, err) == 0 && fwd_commit(plain, cpath, n, err) == 0);
        int next = (int)rng_below(&r, (uint32_t)m->cfg.vocab_size);
        CHECK(fwd_eval(h, 1, &next, NULL, NULL, NULL, 1, lh, err) == 0);
        CHECK(fwd_eval(plain, 1, &next, NULL, NULL, NULL, 1, lp, err) == 0);
        logit_diff += memcmp(lh, lp, sizeof(float) * V) != 0;
        norm_bad += norm_mismatches(m, norm, raw, 1);
    }
    CHECK_MSG(logit_diff == 0, "%s, %s, %d threads: %d passes' logits changed by hidden output",
              what, kern_mode_name(mode), n_threads, logit_diff);
    CHECK_MSG(norm_bad == 0, "%s, %s, %d threads: %d normed rows differ from RMSNorm(raw)", what,
              kern_mode_name(mode), n_threads, norm_bad);
    CHECK_MSG(state_diff == 0, "%s, %s, %d threads: %d rows' states differ from T=1 decoding",
              what, kern_mode_name(mode), n_threads, state_diff);
    CHECK_MSG(more_diff == 0, "%s, %s, %d threads: %d trees' states differ level by level", what,
              kern_mode_name(mode), n_threads, more_diff);
    fprintf(stderr, "%s, %s, %d thread(s): %d tree rows' states checked against T=1\n", what,
            kern_mode_name(mode), n_threads, checked);
    free(lh), free(lp), free(norm), free(raw), free(norm2), free(raw2), free(rn), free(rr),
        free(rl);
    fwd_free(h), fwd_free(plain), fwd_free(ref);
    tpool_free(pool);
}

/* Two contexts in a group pass, one asking for states: its rows' states equal a fwd_eval's. */
static void test_group(const model *m) {
    char err[ERR_LEN];
    const int V = model_logits_width(m), dim = m->cfg.dim;
    fwd_group *g;
    fwd_ctx *a, *b, *solo;
    CHECK(fwd_group_new(&g, m, NULL, 16, 2, KERN_EXACT, err) == 0);
    CHECK(fwd_new(&a, m, NULL, 8, KERN_EXACT, err) == 0);
    CHECK(fwd_new(&b, m, NULL, 8, KERN_EXACT, err) == 0);
    CHECK(fwd_new(&solo, m, NULL, 8, KERN_EXACT, err) == 0);
    float *la = malloc(sizeof(float) * 8 * V), *lb = malloc(sizeof(float) * 8 * V);
    float *ls = malloc(sizeof(float) * 8 * V);
    float *na = malloc(sizeof(float) * 8 * dim), *ra = malloc(sizeof(float) * 8 * dim);
    float *ns = malloc(sizeof(float) * 8 * dim), *rs = malloc(sizeof(float) * 8 * dim);
    fwd_set_hidden_out(b, na, ra);
    fwd_set_hidden_out(solo, ns, rs);
    int pa[3] = {5, 9, 11}, pb[5] = {1, 7, 3, 8, 2}, tb[6] = {30, 31, 32, 33, 34, 35};
    int parent[6] = {-1, 0, 0, 1, 3, 2}, out[3] = {5, 0, 4};
    CHECK(fwd_prefill(a, pa, 3, la, err) == 0 && fwd_prefill(b, pb, 5, lb, err) == 0);
    CHECK(fwd_prefill(solo, pb, 5, ls, err) == 0);
    int ta[2] = {40, 41};
    fwd_part parts[2] = {{a, 2, ta, NULL, NULL, NULL, 2, la}, {b, 6, tb, parent, NULL, out, 3, lb}};
    CHECK_MSG(fwd_group_eval(g, parts, 2, err) == 0, "%s", err);
    CHECK(fwd_eval(solo, 6, tb, parent, NULL, out, 3, ls, err) == 0);
    CHECK_MSG(memcmp(na, ns, sizeof(float) * 3 * dim) == 0 &&
                  memcmp(ra, rs, sizeof(float) * 3 * dim) == 0,
              "a group pass's hidden states differ from fwd_eval's");
    CHECK(memcmp(lb, ls, sizeof(float) * 3 * V) == 0);
    free(la), free(lb), free(ls), free(na), free(ra), free(ns), free(rs);
    fwd_free(a), fwd_free(b), fwd_free(solo);
    fwd_group_free(g);
}

int main(void) {
    char err[ERR_LEN];
    int trees = test_sanitized() ? 2 : 6;
    model *m;
    CHECK_MSG(model_open(&m, test_shared("models/stories260K.bin"), err) == 0, "%s", err);
    if (m) {
        for (int t = 1; t <= 2; t++) test_model(m, "stories260K", KERN_EXACT, t, trees, 10 + t);
        test_model(m, "stories260K", KERN_BLAS, 2, trees, 20);
        test_group(m);
        model_close(m);
    }
    CHECK_MSG(model_open(&m, test_shared("models/quantized/xs_Q4_K_M.gguf"), err) == 0, "%s", err);
    if (m) {
        const kern_mode modes[3] = {KERN_EXACT, KERN_EXACT_INT8, KERN_EXACT_INT8B};
        for (int k = 0; k < 3; k++)
            for (int t = 1; t <= 2; t++)
                if (test_keep(k * 2 + t - 1, 2))
                    test_model(m, "xs_Q4_K_M", modes[k], t, trees, 30 + 2 * k + t);
        model_close(m);
    }
    return test_finish("test_forward_hidden");
}
