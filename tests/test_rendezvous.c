/* test_rendezvous.c: sequences as threads, their passes gathered (model/rendezvous.h).
 *  1. bits: over rounds of 1..6 sequences, each thread runs a random script of its own seed on
 *     a context of each of two models (stories260K and llama2xs): passes of random chains and
 *     trees, fwd_eval_more levels (run alone), passes with skipped layers (alone), prompts
 *     (fwd_prefill), commits of random paths, truncations, and a row with a bad token now and
 *     then (a failed group pass: every part again alone, the bad one failing as fwd_eval
 *     does). Scripts have random lengths, so sequences leave at different times and the gathers
 *     change as they go. Every pass's status and logits (a hash of their bits) equal those of the
 *     same script run alone on twin contexts without the rendezvous; the pass counts are the
 *     script's passes but its prompts' and show passes were shared. 1 and 2 threads in the
 *     pool.
 *  2. a sequence that never passes (enters and leaves) and one slot of a rendezvous of one.
 * Under the sanitizers fewer rounds. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/loader/model_file.h"
#include "model/rendezvous.h"
#include "tests/testutil.h"
#include "util/err.h"
#include "util/hash.h"
#include "util/rng.h"

#define MAX_SEQS 6
#define MAX_ROWS 8
#define MAX_LOG 256

typedef struct {
    const model *m[2];
    tpool *pool;
    fwd_rdv *rdv; /* NULL: the twin run, alone */
    int slot, steps;
    uint64_t seed;
    fwd_ctx *c[2];
    uint64_t log[MAX_LOG]; /* per pass: status and logits' hash */
    int n_log;
    long passes[2], rows[2]; /* per model: passes that ran, prompts' left out, and their rows */
    float *logits;
} script;

static uint64_t bits_hash(const float *x, size_t n) { return hash_fnv1a(x, n * sizeof *x); }

/* The script: its choices depend only on its seed and its contexts' states, which are the same
 * in both runs as long as every pass gives the same result. */
static void run_script(script *s) {
    rng_state r;
    rng_seed(&r, s->seed);
    char err[ERR_LEN];
    static const unsigned char skip[8] = {FWD_SKIP_MLP, 0, FWD_SKIP_ATTN, 0, 0, 0, 0, 0};
    int last_n[2] = {0, 0}, parents[2][MAX_ROWS * 2];
    if (s->rdv) fwd_rdv_enter(s->rdv, s->slot);
    for (int step = 0; step < s->steps && s->n_log < MAX_LOG; step++) {
        int which = (int)rng_below(&r, 2);
        fwd_ctx *c = s->c[which];
        const int V = model_logits_width(s->m[which]), vocab = s->m[which]->cfg.vocab_size;
        int op = (int)rng_below(&r, 10), rc = 0;
        int tokens[MAX_ROWS], parent[MAX_ROWS];
        if (fwd_n_past(c) > 150) op = 9; /* keep within the context */
        if (op <= 4 || (op == 5 && last_n[which] == 0)) {  /* a pass: chain or tree */
            int n = 1 + (int)rng_below(&r, MAX_ROWS), tree = rng_below(&r, 2) != 0;
            for (int i = 0; i < n; i++) {
                tokens[i] = (int)rng_below(&r, (uint32_t)vocab);
                parent[i] = i == 0 ? -1 : tree ? (int)rng_below(&r, (uint32_t)i) : i - 1;
            }
            int bad = rng_below(&r, 25) == 0, skipped = rng_below(&r, 8) == 0;
            if (bad) tokens[n - 1] = vocab;
            if (skipped) fwd_set_skip(c, skip);
            rc = fwd_eval(c, n, tokens, parent, NULL, NULL, n, s->logits, err);
            if (skipped) fwd_set_skip(c, NULL);
            s->passes[which]++, s->rows[which] += n;
            last_n[which] = rc || skipped ? 0 : n;
            memcpy(parents[which], parent, sizeof(int) * (size_t)n);
            s->log[s->n_log++] = rc ? 1 : bits_hash(s->logits, (size_t)n * V);
        } else if (op == 5) { /* a level more over the scratch, alone */
            int n = 1 + (int)rng_below(&r, 3), base = last_n[which];
            if (base + n > MAX_ROWS * 2) continue;
            for (int i = 0; i < n; i++) {
                tokens[i] = (int)rng_below(&r, (uint32_t)vocab);
                parent[i] = (int)rng_below(&r, (uint32_t)base);
                parents[which][base + i] = parent[i];
            }
            rc = fwd_eval_more(c, n, tokens, parent, NULL, n, s->logits, err);
            s->passes[which]++, s->rows[which] += n;
            last_n[which] = rc ? 0 : base + n;
            s->log[s->n_log++] = rc ? 1 : bits_hash(s->logits, (size_t)n * V);
        } else if (op <= 7 && last_n[which] > 0) { /* commit a random root-to-node path */
            int end = (int)rng_below(&r, (uint32_t)last_n[which]), path[MAX_ROWS * 2], k = 0,
                tmp[MAX_ROWS * 2];
            for (int v = end; v >= 0; v = parents[which][v]) tmp[k++] = v;
            for (int i = 0; i < k; i++) path[i] = tmp[k - 1 - i];
            rc = fwd_commit(c, path, k, err);
            last_n[which] = 0;
            s->log[s->n_log++] = (uint64_t)rc + 2;
        } else if (op == 8) { /* a prompt of a few tokens, in passes of its own */
            int n = 1 + (int)rng_below(&r, 6);
            for (int i = 0; i < n; i++) tokens[i] = (int)rng_below(&r, (uint32_t)vocab);
            rc = fwd_prefill(c, tokens, n, s->logits, err);
            last_n[which] = 0;
            s->log[s->n_log++] = rc ? 3 : bits_hash(s->logits, (size_t)V);
        } else { /* back to a shorter prefix */
            rc = fwd_truncate(c, (int)rng_below(&r, (uint32_t)fwd_n_past(c) + 1), err);
            last_n[which] = 0;
            s->log[s->n_log++] = (uint64_t)rc + 4;
        }
    }
    if (s->rdv) fwd_rdv_leave(s->rdv, s->slot);
}

static void *script_thread(void *arg) {
    run_script(arg);
    return NULL;
}

static void script_init(script *s, model *const *m, tpool *pool, fwd_rdv *rdv, int slot,
                        uint64_t seed, int steps) {
    char err[ERR_LEN];
    memset(s, 0, sizeof *s);
    s->m[0] = m[0], s->m[1] = m[1], s->pool = pool, s->rdv = rdv, s->slot = slot;
    s->seed = seed, s->steps = steps;
    for (int i = 0; i < 2; i++) {
        CHECK_MSG(fwd_new(&s->c[i], m[i], pool, MAX_ROWS * 2, KERN_EXACT, err) == 0, "%s", err);
        if (rdv) fwd_rdv_attach(rdv, s->c[i], slot);
    }
    s->logits = malloc(sizeof(float) * MAX_ROWS * 2 * 512);
    CHECK(s->logits != NULL);
}

static void script_free(script *s) {
    fwd_free(s->c[0]), fwd_free(s->c[1]);
    free(s->logits);
}

static void test_bits(model *const *m, int n_threads, int rounds, uint64_t seed) {
    char err[ERR_LEN];
    tpool *pool;
    CHECK(tpool_new(&pool, n_threads, err) == 0);
    rng_state r;
    rng_seed(&r, seed);
    long shared = 0, own = 0;
    for (int round = 0; round < rounds; round++) {
        int B = 1 + (int)rng_below(&r, MAX_SEQS);
        fwd_rdv *rdv;
        CHECK_MSG(fwd_rdv_new(&rdv, B, err) == 0, "%s", err);
        script s[MAX_SEQS], twin[MAX_SEQS];
        pthread_t th[MAX_SEQS];
        for (int i = 0; i < B; i++) {
            uint64_t sd = rng_u64(&r);
            int steps = 5 + (int)rng_below(&r, 60);
            script_init(&s[i], m, pool, rdv, i, sd, steps);
            script_init(&twin[i], m, pool, NULL, i, sd, steps);
        }
        for (int i = 0; i < B; i++) fwd_rdv_join(rdv, i);
        for (int i = 0; i < B; i++) CHECK(pthread_create(&th[i], NULL, script_thread, &s[i]) == 0);
        for (int i = 0; i < B; i++) pthread_join(th[i], NULL);
        for (int i = 0; i < B; i++) {
            run_script(&twin[i]);
            CHECK_MSG(s[i].n_log == twin[i].n_log, "round %d sequence %d: %d steps, alone %d",
                      round, i, s[i].n_log, twin[i].n_log);
            int first = -1;
            for (int k = 0; k < s[i].n_log && first < 0; k++)
                if (s[i].log[k] != twin[i].log[k]) first = k;
            CHECK_MSG(first < 0, "round %d sequence %d of %d: step %d differs from its run alone",
                      round, i, B, first);
            for (int k = 0; k < 2; k++) { /* every pass but the prompts', failed ones too */
                long passes, rows;
                fwd_rdv_counts(rdv, i, m[k], &passes, &rows);
                CHECK_MSG(passes == s[i].passes[k] && rows >= s[i].rows[k],
                          "%ld passes of %ld rows counted, %ld of %ld made", passes, rows,
                          s[i].passes[k], s[i].rows[k]);
                shared += rows;
                own += s[i].rows[k];
            }
            fwd_set_hook(s[i].c[0], NULL), fwd_set_hook(s[i].c[1], NULL);
            script_free(&s[i]), script_free(&twin[i]);
        }
        fwd_rdv_free(rdv);
    }
    /* rows of other sequences were in this sequence's passes: passes were shared */
    CHECK_MSG(shared > own, "rows in the passes %ld, own rows %ld: nothing was gathered", shared,
              own);
    tpool_free(pool);
}

/* A sequence that never passes, and a rendezvous of one. */
static void test_edges(model *const *m) {
    char err[ERR_LEN];
    fwd_rdv *rdv;
    CHECK(fwd_rdv_new(&rdv, 0, err) == -1 && strstr(err, "expected 1..256"));
    CHECK(fwd_rdv_new(&rdv, FWD_RDV_MAX_SEQS + 1, err) == -1);
    CHECK_MSG(fwd_rdv_new(&rdv, 2, err) == 0, "%s", err);
    script a, b;
    script_init(&a, m, NULL, rdv, 0, 7, 30);
    script_init(&b, m, NULL, rdv, 1, 7, 0); /* enters and leaves */
    script alone;
    script_init(&alone, m, NULL, NULL, 0, 7, 30);
    pthread_t th[2];
    fwd_rdv_join(rdv, 0), fwd_rdv_join(rdv, 1);
    CHECK(pthread_create(&th[0], NULL, script_thread, &a) == 0);
    CHECK(pthread_create(&th[1], NULL, script_thread, &b) == 0);
    pthread_join(th[0], NULL), pthread_join(th[1], NULL);
    run_script(&alone);
    CHECK(a.n_log == alone.n_log && memcmp(a.log, alone.log, sizeof(uint64_t) * a.n_log) == 0);
    /* a context's pass outside the rendezvous's turns runs as it is */
    int tok = 1;
    CHECK_MSG(fwd_eval(a.c[0], 1, &tok, NULL, NULL, NULL, 1, a.logits, err) == 0, "%s", err);
    script_free(&a), script_free(&b), script_free(&alone);
    fwd_rdv_free(rdv);
}

int main(void) {
    char err[ERR_LEN];
    model *m[2];
    const char *names[2] = {"models/stories260K.bin", "models/llama2xs.bin"};
    for (int i = 0; i < 2; i++)
        CHECK_MSG(model_open(&m[i], test_shared(names[i]), err) == 0, "%s", err);
    const int rounds = test_sanitized() ? 6 : 16;
    for (int t = 1; t <= 2; t++) test_bits(m, t, rounds, 500 + (uint64_t)t);
    test_edges(m);
    for (int i = 0; i < 2; i++) model_close(m[i]);
    return test_finish("test_rendezvous");
}
