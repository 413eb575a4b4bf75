/* jacobi.c: Jacobi decoding (Santilli et al., ACL 2023, "Accelerating Transformer Inference
 * for Translation via Parallel Decoding", Section 3: greedy decoding as the fixed point of a
 * parallel iteration).
 *
 * Greedy decoding is the fixed point of y_j = argmax p(. | prefix, y_<j). Keep a window of m
 * guesses g_1..g_m for the positions after the current token t; each step is ONE target pass
 * over the chain [t, g_1, ..., g_m] (row j sees the committed prefix, t and g_1..g_j: an
 * ordinary causal chain, parent = previous row), giving a_0..a_m, where a_j = argmax after
 * g_j. a_0 is the greedy token. Guess g_j is accepted only if it equals a_{j-1} (then every
 * row before it saw exactly the greedy prefix), so the converged prefix g_1..g_k plus the
 * bonus a_k are emitted: exactly greedy's tokens, k+1 of them in one pass.
 * The window then advances (the Jacobi update): the new guesses are a_{k+1..m}, the model's
 * refinement of the unconverged tail, and the k+1 slots freed at the end get fresh initial
 * guesses. Rows 0..k are committed to the KV cache; a_k is the next current token.
 *
 * Initial guesses (parameter init): "prompt" copies recent context tokens with period m (the
 * guess for position p is the token at p - m, or p - 2m... the latest one already known;
 * contexts shorter than that wrap around), "random" draws uniform tokens from the vocabulary
 * with util/rng.h seeded by `seed` at every generate (so a run is reproducible from its spec).
 * The same rule (dec_guess, decoders/dec_impl.h) fills the freed slots. lookahead.c fills its
 * window with it too, so lookahead:W=m+1,N=2,G=0,refill=align equals this decoder step for
 * step (tested).
 *
 * Choices, with the reason: the window slides over the output (a fixed number of guesses
 * ahead of the current token, refilled as it advances), the form later work uses (lookahead
 * decoding, CLLMs), rather than iterating over a fixed block of the output until it has
 * converged: open-ended generation has no block length. It is cut to the tokens still wanted
 * (max_new, which the framework caps at the context length), so no row ever sits at a
 * position >= seq_len and none is wasted on the last steps. The accept walk stops at the end
 * token: nothing after it is accepted or emitted.
 * Measured (stories260K, the first 20 TinyStories prompts x 256 new tokens, 4334 tokens since
 * stories end early): 4141 target steps at window 16 (1.047 tokens/step, 16.8 rows/step),
 * 4146 with init=random, 4147 at window 4, 4143 at window 32: a guess after a wrong one is
 * rarely right, so little more than the next token converges per pass, the weakness of
 * Jacobi decoding that lookahead decoding sets out to fix.
 *
 * Sampling (decoder.h): the guesses are dec_propose's (the argmax, or the coupled pick) and
 * each is verified by dec_accept as a fixed guess: coupled mode accepts it iff it is plain
 * sampling's token, standard mode with probability p(g) and otherwise emits a draw from p
 * without g (the rejection rule with a point-mass draft: LADE's rule for one candidate). */
#include <stdlib.h>

#include "decoders/dec_impl.h"
#include "util/err.h"

enum { P_WINDOW, P_INIT, P_SEED };
enum { INIT_PROMPT, INIT_RANDOM };

typedef struct {
    fwd_ctx *f;
    float *logits; /* (m + 1) x vocab */
    int *tok, *am; /* batch tokens; the step's emitted tokens: m + 1 */
    int *path;     /* 0, 1, ..., m: rows to commit */
    int *win;      /* the m guesses */
    int *ctx;      /* prompt + output so far, seq_len */
    rng_state rng;
} jacobi;

static int jacobi_create(dec *d, char *err) {
    jacobi *j = calloc(1, sizeof *j);
    if (!j) return err_set(err, "jacobi: out of memory");
    d->impl = j;
    const model_config *cfg = &d->env.target->cfg;
    size_t m = (size_t)d->param[P_WINDOW];
    j->logits = malloc(sizeof(float) * (m + 1) * (size_t)cfg->vocab_size);
    j->tok = malloc(sizeof(int) * (m + 1));
    j->am = malloc(sizeof(int) * (m + 1));
    j->path = malloc(sizeof(int) * (m + 1));
    j->win = malloc(sizeof(int) * m);
    j->ctx = malloc(sizeof(int) * (size_t)cfg->seq_len);
    if (!j->logits || !j->tok || !j->am || !j->path || !j->win || !j->ctx)
        return err_set(err, "jacobi: out of memory");
    for (size_t i = 0; i <= m; i++) j->path[i] = (int)i;
    return dec_fwd_new(d, d->env.target, (int)m + 1, &j->f, err);
}

/* Verifies the window after a pass over [cur, g_1..g_me] (row i predicts position len + i):
 * the accepted guesses stay in win[0..k), *next gets the token after them (the target's
 * replacement of the first rejected guess, or the bonus), -1 after an accepted end token. */
static int jacobi_verify(dec *d, jacobi *j, int me, int len, int *next) {
    const size_t V = (size_t)d->env.target->cfg.vocab_size;
    int k = 0;
    while (k < me) {
        if (!dec_accept(d, j->logits + (size_t)k * V, NULL, j->win[k], len + k, next)) return k;
        if (j->win[k++] == d->end_id) { /* nothing after the end token */
            *next = -1;
            return k;
        }
    }
    *next = dec_pick(d, j->logits + (size_t)me * V, len + me);
    return k;
}

static int jacobi_generate(dec *d, const int *prompt, int n_prompt, char *err) {
    jacobi *j = d->impl;
    const int vocab = d->env.target->cfg.vocab_size, m = d->param[P_WINDOW];
    const int random = d->param[P_INIT] == INIT_RANDOM;
    rng_seed(&j->rng, (uint64_t)d->param[P_SEED]);
    for (int i = 0; i < n_prompt; i++) j->ctx[i] = prompt[i];
    if (dec_prefill(d, DEC_TARGET, j->f, prompt, n_prompt, j->logits, err)) return -1;
    int cur = dec_pick(d, j->logits, n_prompt);
    dec_emit(d, &cur, 1);
    int len = n_prompt + 1; /* known tokens: the prompt, then the output (cur last) */
    j->ctx[n_prompt] = cur;
    for (int i = 0; i < m; i++)
        j->win[i] = dec_guess(j->ctx, len, len + i, m, random, &j->rng, vocab);

    while (!d->done) {
        /* cur sits at position len - 1; guesses beyond the tokens still wanted are useless */
        int left = d->max_new - d->n_out, me = m < left - 1 ? m : left - 1;
        j->tok[0] = cur;
        for (int i = 0; i < me; i++) j->tok[1 + i] = j->win[i];
        if (dec_eval(d, DEC_TARGET, j->f, me + 1, j->tok, NULL, NULL, me + 1, j->logits, 0, err))
            return -1;
        /* converged prefix: g_1..g_k confirmed, then the target's own next token */
        int next, k = jacobi_verify(d, j, me, len, &next);
        for (int i = 0; i < k; i++) j->am[i] = j->win[i];
        j->am[k] = next;
        int emitted = dec_emit(d, j->am, next < 0 ? k : k + 1);
        for (int i = 0; i < emitted; i++) j->ctx[len + i] = j->am[i];
        len += emitted;
        dec_step_done(d, me + 1, me, k, emitted);
        if (d->done) break;
        if (fwd_commit(j->f, j->path, k + 1, err)) return -1; /* t, g_1..g_k */
        cur = next;
        /* Jacobi update: the unconverged tail's refinements (row k+1+i predicts position
         * len + i), then fresh guesses */
        int keep = me - k;
        for (int i = 0; i < keep; i++)
            j->win[i] = dec_propose(d, j->logits + (size_t)(k + 1 + i) * vocab, len + i);
        for (int i = keep; i < m; i++)
            j->win[i] = dec_guess(j->ctx, len, len + i, m, random, &j->rng, vocab);
    }
    return 0;
}

static void jacobi_destroy(dec *d) {
    jacobi *j = d->impl;
    if (!j) return;
    fwd_free(j->f);
    free(j->logits), free(j->tok), free(j->am), free(j->path), free(j->win), free(j->ctx);
    free(j);
}

/* clang-format off */
const dec_vtable dec_jacobi_vtable = {
    .name = "jacobi",
    .summary = "Jacobi decoding: refine a window of guesses in parallel, accept the converged prefix",
    .params = {
        [P_WINDOW] = {"window", PARAM_INT, 16, 1, 64, {0}, "guessed tokens after the current one"},
        [P_INIT] = {"init", PARAM_ENUM, INIT_PROMPT, 0, 0, {"prompt", "random"},
         "initial guesses: recent context tokens, or uniform random tokens"},
        [P_SEED] = {"seed", PARAM_INT, 0, 0, 2147483647, {0}, "seed of init=random"},
    },
    .create = jacobi_create,
    .generate = jacobi_generate,
    .destroy = jacobi_destroy,
    .tune_grid = "window=2,4,8",
};
/* clang-format on */
