/* test_forward_group.c: several contexts in one pass (forward.h, fwd_group).
 *  1. bits: over random rounds, a random set of 1..6 of six contexts (random order) each feeds
 *     a random batch (1..8 rows: chains and random trees, positions given or not, random
 *     logits rows) in one group pass; every part's logits are bit-identical (memcmp) to a
 *     fwd_eval of the same batch on a twin context that lives the same history alone. Between
 *     rounds both twins commit the same random root-to-node path, truncate, prefill or decode a
 *     token alone, so the contexts' lengths differ and the K/V a group pass left in scratch are
 *     checked by what later passes read of them. One round continues a group pass with
 *     fwd_eval_more. On stories260K and llama2xs (exact kernels; llama2xs with the f16 KV cache
 *     too), xs_Q4_K_M.gguf (exact, exact-int8b and exact-int8), 1 and 2 threads.
 *  2. errors: another model, kernel mode or pool, a context twice, too many rows or parts,
 *     skipped layers: refused with a message naming it, no context changed (its scratch kept);
 *     a bad row in one part: refused naming the part, every context's scratch emptied, the
 *     committed prefixes kept.
 * Under the sanitizers (testutil.h test_keep) each model keeps one of its thread counts and
 * fewer rounds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/forward.h"
#include "model/loader/model_file.h"
#include "tests/testutil.h"
#include "util/err.h"
#include "util/rng.h"

#define N_CTX 6
#define MAX_ROWS 8

/* A random batch of n rows for context c: a chain or a random tree (parents NULL or drawn),
 * positions NULL or spelled out as n_past + depth, logits of every row or a random subset. */
typedef struct {
    int n, tokens[MAX_ROWS], parent[MAX_ROWS], pos[MAX_ROWS], out[MAX_ROWS], n_out;
    int has_parent, has_pos, has_out;
} batch;

static void random_batch(rng_state *r, int V, int n_past, batch *b) {
    b->n = 1 + (int)rng_below(r, MAX_ROWS);
    b->has_parent = rng_below(r, 3) != 0;
    b->has_pos = rng_below(r, 3) == 0;
    b->has_out = rng_below(r, 2) == 0;
    int depth[MAX_ROWS];
    for (int i = 0; i < b->n; i++) {
        b->tokens[i] = (int)rng_below(r, (uint32_t)V);
        b->parent[i] = b->has_parent ? (int)rng_below(r, (uint32_t)i + 1) - 1 : i - 1;
        if (b->has_parent && i > 0 && rng_below(r, 2)) b->parent[i] = i - 1;
        if (i == 0) b->parent[i] = -1;
        depth[i] = b->parent[i] < 0 ? 0 : depth[b->parent[i]] + 1;
        b->pos[i] = n_past + depth[i];
    }
    b->n_out = 0;
    for (int i = 0; i < b->n; i++)
        if (!b->has_out || rng_below(r, 2)) b->out[b->n_out++] = i;
    if (b->has_out && b->n_out == 0) b->out[b->n_out++] = b->n - 1;
    if (!b->has_out) b->n_out = b->n;
}

static fwd_part part_of(fwd_ctx *c, const batch *b, float *logits) {
    return (fwd_part){c,
                      b->n,
                      b->tokens,
                      b->has_parent ? b->parent : NULL,
                      b->has_pos ? b->pos : NULL,
                      b->has_out ? b->out : NULL,
                      b->n_out,
                      logits};
}

static int ref_eval(fwd_ctx *c, const batch *b, float *logits, char *err) {
    return fwd_eval(c, b->n, b->tokens, b->has_parent ? b->parent : NULL,
                    b->has_pos ? b->pos : NULL, b->has_out ? b->out : NULL, b->n_out, logits, err);
}

/* A root-to-node path of b ending at a random row. */
static int random_path(rng_state *r, const batch *b, int *path) {
    int end = (int)rng_below(r, (uint32_t)b->n), n = 0, tmp[MAX_ROWS];
    for (int v = end; v >= 0; v = b->parent[v]) tmp[n++] = v;
    for (int i = 0; i < n; i++) path[i] = tmp[n - 1 - i];
    return n;
}

static void test_bits(const model *m, const char *what, int n_threads, kern_mode mode, int rounds,
                      uint64_t seed) {
    char err[ERR_LEN];
    tpool *pool;
    CHECK(tpool_new(&pool, n_threads, err) == 0);
    const int V = model_logits_width(m), vocab = m->cfg.vocab_size;
    fwd_ctx *c[N_CTX], *twin[N_CTX];
    for (int i = 0; i < N_CTX; i++)
        CHECK(fwd_new(&c[i], m, pool, MAX_ROWS, mode, err) == 0 &&
              fwd_new(&twin[i], m, pool, MAX_ROWS, mode, err) == 0);
    fwd_group *g;
    CHECK_MSG(fwd_group_new(&g, m, pool, N_CTX * MAX_ROWS, N_CTX, mode, err) == 0, "%s", err);
    float *got = malloc(sizeof(float) * N_CTX * MAX_ROWS * V);
    float *want = malloc(sizeof(float) * MAX_ROWS * V);
    int *prompt = malloc(sizeof(int) * 40);
    rng_state r;
    rng_seed(&r, seed);
    batch b[N_CTX];
    int mism = 0;
    for (int round = 0; round < rounds; round++) {
        /* the parts: B of the contexts, in a random order */
        int order[N_CTX], B = 1 + (int)rng_below(&r, N_CTX);
        for (int i = 0; i < N_CTX; i++) order[i] = i;
        for (int i = N_CTX - 1; i > 0; i--) {
            int j = (int)rng_below(&r, (uint32_t)i + 1), t = order[i];
            order[i] = order[j], order[j] = t;
        }
        fwd_part parts[N_CTX];
        for (int i = 0; i < B; i++) {
            int k = order[i];
            random_batch(&r, vocab, fwd_n_past(c[k]), &b[k]);
            parts[i] = part_of(c[k], &b[k], got + (size_t)i * MAX_ROWS * V);
        }
        CHECK_MSG(fwd_group_eval(g, parts, B, err) == 0, "%s: %s", what, err);
        for (int i = 0; i < B; i++) {
            int k = order[i];
            CHECK_MSG(ref_eval(twin[k], &b[k], want, err) == 0, "%s", err);
            CHECK(fwd_scratch_rows(c[k]) == b[k].n);
            if (memcmp(parts[i].logits, want, sizeof(float) * (size_t)b[k].n_out * V) != 0)
                mism++;
        }
        /* the histories move on, each pair of twins alike */
        for (int i = 0; i < B; i++) {
            int k = order[i], path[MAX_ROWS], np, action = (int)rng_below(&r, 8);
            if (round == 1 && i == 0) { /* a group pass continued by fwd_eval_more */
                int tok = (int)rng_below(&r, (uint32_t)vocab), par = b[k].n - 1;
                float *l1 = got, *l2 = want;
                CHECK(fwd_eval_more(c[k], 1, &tok, &par, NULL, 1, l1, err) == 0);
                CHECK(fwd_eval_more(twin[k], 1, &tok, &par, NULL, 1, l2, err) == 0);
                mism += memcmp(l1, l2, sizeof(float) * V) != 0;
                continue;
            }
            if (action < 5 && fwd_n_past(c[k]) + MAX_ROWS + 1 < m->cfg.seq_len - 2 * MAX_ROWS) {
                np = random_path(&r, &b[k], path);
                CHECK_MSG(fwd_commit(c[k], path, np, err) == 0, "%s", err);
                CHECK(fwd_commit(twin[k], path, np, err) == 0);
            } else if (action == 5) {
                int len = (int)rng_below(&r, (uint32_t)fwd_n_past(c[k]) + 1);
                CHECK(fwd_truncate(c[k], len, err) == 0 && fwd_truncate(twin[k], len, err) == 0);
            } else if (action == 6 && fwd_n_past(c[k]) + 40 < m->cfg.seq_len - 2 * MAX_ROWS) {
                int n = 1 + (int)rng_below(&r, 40);
                for (int j = 0; j < n; j++) prompt[j] = (int)rng_below(&r, (uint32_t)vocab);
                CHECK(fwd_prefill(c[k], prompt, n, got, err) == 0 &&
                      fwd_prefill(twin[k], prompt, n, want, err) == 0);
                mism += memcmp(got, want, sizeof(float) * V) != 0;
            } else if (fwd_n_past(c[k]) + 1 < m->cfg.seq_len - 2 * MAX_ROWS) {
                /* a row alone after the group's rows are dropped: it reads the committed K/V */
                static const int zero = 0;
                int tok = (int)rng_below(&r, (uint32_t)vocab);
                CHECK(fwd_eval(c[k], 1, &tok, NULL, NULL, NULL, 1, got, err) == 0 &&
                      fwd_eval(twin[k], 1, &tok, NULL, NULL, NULL, 1, want, err) == 0);
                mism += memcmp(got, want, sizeof(float) * V) != 0;
                CHECK(fwd_commit(c[k], &zero, 1, err) == 0 && fwd_commit(twin[k], &zero, 1, err) == 0);
            }
            CHECK(fwd_n_past(c[k]) == fwd_n_past(twin[k]));
        }
    }
    CHECK_MSG(mism == 0, "%s, %s kernels, %d threads: %d group passes' logits differ from the "
                         "contexts' own passes",
              what, kern_mode_name(mode), n_threads, mism);
    long passes = 0;
    for (int i = 0; i < N_CTX; i++) passes += fwd_passes(c[i]) - fwd_passes(twin[i]);
    CHECK(passes == 0); /* a group pass counts one pass for each of its contexts */
    free(got), free(want), free(prompt);
    fwd_group_free(g);
    for (int i = 0; i < N_CTX; i++) fwd_free(c[i]), fwd_free(twin[i]);
    tpool_free(pool);
}

static void expect_refused(fwd_group *g, const fwd_part *parts, int n, const char *needle) {
    char err[ERR_LEN] = "";
    CHECK_MSG(fwd_group_eval(g, parts, n, err) != 0 && strstr(err, needle),
              "expected an error containing '%s', got '%s'", needle, err);
}

static void test_errors(const model *a, const model *other) {
    char err[ERR_LEN];
    tpool *pool = NULL, *pool2 = NULL;
    CHECK(tpool_new(&pool, 1, err) == 0 && tpool_new(&pool2, 1, err) == 0);
    fwd_ctx *c0, *c1, *cb, *cpool, *cint8;
    CHECK(fwd_new(&c0, a, pool, 4, KERN_EXACT, err) == 0);
    CHECK(fwd_new(&c1, a, pool, 4, KERN_EXACT, err) == 0);
    CHECK(fwd_new(&cb, other, pool, 4, KERN_EXACT, err) == 0);
    CHECK(fwd_new(&cpool, a, pool2, 4, KERN_EXACT, err) == 0);
    CHECK(fwd_new(&cint8, a, pool, 4, KERN_EXACT_INT8, err) == 0);
    fwd_group *g;
    CHECK(fwd_group_new(&g, a, pool, 5, 2, KERN_EXACT, err) == 0);
    float logits[4 * 512];
    CHECK(a->cfg.vocab_size <= 512);
    int toks[4] = {1, 2, 3, 4}, prompt[3] = {5, 6, 7};
    CHECK(fwd_prefill(c0, prompt, 3, logits, err) == 0 && fwd_prefill(c1, prompt, 2, logits, err) == 0);
    /* scratch rows before each refused call: a refusal of the terms leaves them */
    CHECK(fwd_eval(c0, 2, toks, NULL, NULL, NULL, 0, logits, err) == 0);
    fwd_part p[3] = {{c0, 2, toks, NULL, NULL, NULL, 2, logits},
                     {c1, 2, toks, NULL, NULL, NULL, 2, logits + 2 * 512}};
    p[1].ctx = cb;
    expect_refused(g, p, 2, "is a context of");
    p[1].ctx = cpool;
    expect_refused(g, p, 2, "another thread pool");
    p[1].ctx = cint8;
    expect_refused(g, p, 2, "exact-int8 kernels");
    p[1].ctx = c0;
    expect_refused(g, p, 2, "are the same context");
    p[1].ctx = c1;
    p[1].n = 4;
    expect_refused(g, p, 2, "6 rows in a pass exceed the group's 5");
    p[1].n = 5;
    expect_refused(g, p, 2, "part 1: batch of 5 rows, expected 1..4");
    p[1].n = 2;
    p[2] = p[1];
    expect_refused(g, p, 3, "3 contexts in a pass, expected 1..2");
    unsigned char skip[64] = {FWD_SKIP_MLP};
    fwd_set_skip(c1, skip);
    expect_refused(g, p, 2, "skips layers");
    fwd_set_skip(c1, NULL);
    CHECK(fwd_scratch_rows(c0) == 2 && fwd_n_past(c0) == 3 && fwd_n_past(c1) == 2);
    /* a row fwd_eval would refuse: the pass fails naming the part, every scratch emptied */
    int bad[2] = {1, a->cfg.vocab_size};
    p[1].tokens = bad;
    expect_refused(g, p, 2, "part 1: forward: row 1: token");
    CHECK(fwd_scratch_rows(c0) == 0 && fwd_scratch_rows(c1) == 0);
    CHECK(fwd_n_past(c0) == 3 && fwd_n_past(c1) == 2);
    p[1].tokens = toks;
    CHECK_MSG(fwd_group_eval(g, p, 2, err) == 0, "%s", err);
    CHECK(fwd_scratch_rows(c0) == 2 && fwd_scratch_rows(c1) == 2);
    /* a group of another mode than asked: fwd_group_new resolves auto as fwd_new does */
    fwd_group *ga;
    CHECK(fwd_group_new(&ga, a, pool, 5, 2, KERN_AUTO, err) == 0);
    CHECK_MSG(fwd_group_eval(ga, p, 2, err) == 0, "%s", err);
    fwd_group_free(ga);
    CHECK(fwd_group_new(&ga, a, pool, 4, 5, KERN_EXACT, err) != 0 && strstr(err, "1..4"));
    fwd_group_free(g);
    fwd_free(c0), fwd_free(c1), fwd_free(cb), fwd_free(cpool), fwd_free(cint8);
    tpool_free(pool), tpool_free(pool2);
}

int main(void) {
    char err[ERR_LEN];
    const int sanitized = test_sanitized();
    model *m[3];
    const char *names[3] = {"models/stories260K.bin", "models/llama2xs.bin",
                            "models/quantized/xs_Q4_K_M.gguf"};
    for (int i = 0; i < 3; i++)
        CHECK_MSG(model_open(&m[i], test_shared(names[i]), err) == 0, "%s", err);
    long point = 0;
    const kern_mode modes[3] = {KERN_EXACT, KERN_EXACT_INT8B, KERN_EXACT_INT8};
    for (int i = 0; i < 3; i++)
        for (int mode = 0; mode < (i == 2 ? 3 : 1); mode++)
            for (int t = 1; t <= 2; t++)
                if (test_keep(point++, 2))
                    test_bits(m[i], names[i], t, modes[mode], sanitized ? 12 : 80,
                              1000 + 10 * (uint64_t)i + t + 5 * mode);
    /* the f16 KV cache: its stored rows are a function of the computed ones, as invariant */
    model_set_kv(m[1], KV_F16);
    for (int t = 1; t <= 2; t++)
        if (test_keep(point++, 2))
            test_bits(m[1], "models/llama2xs.bin, f16 KV", t, KERN_EXACT, sanitized ? 12 : 40,
                      2000 + (uint64_t)t);
    model_set_kv(m[1], KV_F32);
    test_errors(m[0], m[1]);
    for (int i = 0; i < 3; i++) model_close(m[i]);
    return test_finish("test_forward_group");
}
