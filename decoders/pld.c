/* pld.c: prompt lookup decoding (Saxena 2023, apoorvumang/prompt-lookup-decoding; the draft
 * rule llama.cpp's examples/lookup builds on).
 *
 * The draft comes from the context itself (prompt + output so far, the current token last):
 * for n = ngram down to 1, take the last n tokens and look for an earlier occurrence of them;
 * at the first n that has one, the k tokens that followed that occurrence are the draft.
 * One target pass over the chain [current, d_1..d_k] verifies it: d_j is accepted iff it
 * equals the argmax after d_{j-1} (as in jacobi.c), so the accepted prefix plus the target's
 * bonus token are exactly greedy's tokens. No match: the step is a plain greedy step (1 row).
 *
 * Deviations from the reference code, with the reason:
 *  - Which occurrence: the reference takes the EARLIEST one whose continuation has all k
 *    tokens inside the context; we take the MOST RECENT one, and when its continuation runs
 *    into the end of the context the draft keeps copying with the same period (as LZ77 does:
 *    the draft's own tokens continue it), so a draft always has k tokens. Recent text is the
 *    better predictor of what comes next (a repeated line, a name just introduced). Measured
 *    on stories260K, the first 20 TinyStories prompts x 256 new tokens (4334 tokens: stories
 *    end early), ngram=3 k=10: most recent 2733 target steps (1.59 tokens/step), earliest
 *    with a full continuation (the reference rule) 2854 (1.52); at k=4: 2870 vs 2936.
 *    match=first is the reference's rule, Spec-Bench's find_candidate_pred_tokens
 *    (hemingkx/Spec-Bench@fd2c1cd model/pld/pld.py:15-47): for n = ngram down to 1, the
 *    windows of the context in increasing position, the first equal to its last n tokens whose
 *    k following tokens all lie inside the context (:43, end_idx <= input_length) and start
 *    before its last n (start_idx < input_length - n: not the tail itself). The k tokens are
 *    looked for whole even when fewer are still wanted (the reference finds with its 10 and
 *    cuts the accepted count to max_len, :123), then cut.
 *  - No match: a plain greedy step; miss=X drafts the single token X instead, as the
 *    reference drafts token 100 (pld.py:93-94; miss=100): one more row, accepted when 100
 *    happens to be the target's token.
 *  - llama.cpp's lookup adds count/probability thresholds and saved caches across runs; this
 *    decoder has none (the plain context lookup of Spec-Bench's "PLD", window 3, 10 tokens).
 *  - The draft is trimmed to the tokens still wanted (max_new, capped by the framework at the
 *    context length), and the accept walk stops at the end token.
 * The search scans the context backwards: O(context x ngram) integer compares per step, a few
 * microseconds at 4096 tokens, against a forward pass of milliseconds.
 *
 * Sampling (decoder.h): each draft token is a fixed guess verified by dec_accept: coupled mode
 * accepts it iff it is plain sampling's token; standard mode with probability p(x), a rejected
 * one replaced by a draw from p without x (the rejection rule with a point-mass draft; Hugging
 * Face's prompt lookup samples the target and compares, which has the same distribution). */
#include <stdlib.h>
#include <string.h>

#include "decoders/dec_impl.h"
#include "util/err.h"

enum { P_NGRAM, P_K, P_MATCH, P_MISS };
enum { MATCH_RECENT, MATCH_FIRST };

typedef struct {
    fwd_ctx *f;
    float *logits;        /* (k + 1) x vocab */
    int *tok, *am, *path; /* k + 1 each: batch tokens, the step's emitted tokens, 0..k */
    int *ctx;             /* prompt + output, seq_len */
} pld;

static int pld_create(dec *d, char *err) {
    pld *p = calloc(1, sizeof *p);
    if (!p) return err_set(err, "pld: out of memory");
    d->impl = p;
    const model_config *cfg = &d->env.target->cfg;
    size_t k = (size_t)d->param[P_K];
    p->logits = malloc(sizeof(float) * (k + 1) * (size_t)cfg->vocab_size);
    p->tok = malloc(sizeof(int) * (k + 1));
    p->am = malloc(sizeof(int) * (k + 1));
    p->path = malloc(sizeof(int) * (k + 1));
    p->ctx = malloc(sizeof(int) * (size_t)cfg->seq_len);
    if (!p->logits || !p->tok || !p->am || !p->path || !p->ctx)
        return err_set(err, "pld: out of memory");
    if (d->param[P_MISS] >= cfg->vocab_size)
        return err_set(err, "pld: miss=%d is not a token of the model's %d", d->param[P_MISS],
                       cfg->vocab_size);
    for (size_t i = 0; i <= k; i++) p->path[i] = (int)i;
    return dec_fwd_new(d, d->env.target, (int)k + 1, &p->f, err);
}

/* Writes up to k draft tokens after ctx[0..len) into draft; returns how many (0: no match). */
static int pld_draft(const int *ctx, int len, int max_ngram, int k, int *draft) {
    for (int n = max_ngram < len - 1 ? max_ngram : len - 1; n >= 1; n--) {
        const int *suffix = ctx + len - n;
        for (int s = len - n - 1; s >= 0; s--) {
            if (memcmp(ctx + s, suffix, sizeof(int) * (size_t)n) != 0) continue;
            for (int j = 0; j < k; j++) {
                int q = s + n + j; /* < len + j: either context or an earlier draft token */
                draft[j] = q < len ? ctx[q] : draft[q - len];
            }
            return k;
        }
    }
    return 0;
}

/* match=first, the reference's rule (header): the k tokens after the earliest occurrence of
 * the longest tail n-gram (n = max_ngram down to 1) that has all k of them inside the context
 * and starts before the tail. Copies the first `keep` of them into draft; returns how many
 * (0: no match). */
static int pld_draft_first(const int *ctx, int len, int max_ngram, int k, int keep, int *draft) {
    for (int n = max_ngram < len ? max_ngram : len; n >= 1; n--) {
        const int *suffix = ctx + len - n;
        for (int s = 0; s + n <= len; s++) {
            int start = s + n;
            if (start + k > len || start >= len - n) break; /* later windows fail too */
            if (memcmp(ctx + s, suffix, sizeof(int) * (size_t)n) != 0) continue;
            memcpy(draft, ctx + start, sizeof(int) * (size_t)keep);
            return keep;
        }
    }
    return 0;
}

static int pld_generate(dec *d, const int *prompt, int n_prompt, char *err) {
    pld *p = d->impl;
    const size_t V = (size_t)d->env.target->cfg.vocab_size;
    memcpy(p->ctx, prompt, sizeof(int) * (size_t)n_prompt);
    if (dec_prefill(d, DEC_TARGET, p->f, prompt, n_prompt, p->logits, err)) return -1;
    int len = n_prompt;
    p->ctx[len] = p->tok[0] = dec_pick(d, p->logits, len);
    len++;
    dec_emit(d, p->tok, 1);
    while (!d->done) {
        int left = d->max_new - d->n_out, k = d->param[P_K] < left - 1 ? d->param[P_K] : left - 1;
        int nd = d->param[P_MATCH] == MATCH_FIRST
                     ? pld_draft_first(p->ctx, len, d->param[P_NGRAM], d->param[P_K], k, p->tok + 1)
                     : pld_draft(p->ctx, len, d->param[P_NGRAM], k, p->tok + 1);
        if (nd == 0 && k > 0 && d->param[P_MISS] >= 0) p->tok[1] = d->param[P_MISS], nd = 1;
        if (dec_eval(d, DEC_TARGET, p->f, nd + 1, p->tok, NULL, NULL, nd + 1, p->logits, 0, err))
            return -1;
        /* row i predicts position len + i; draft token tok[1 + i] sits there */
        int acc = 0, next = -1, ended = 0;
        while (acc < nd && !ended) {
            if (!dec_accept(d, p->logits + (size_t)acc * V, NULL, p->tok[1 + acc], len + acc,
                            &next))
                break;
            p->am[acc] = p->tok[1 + acc];
            ended = p->am[acc++] == d->end_id; /* nothing after the end token */
        }
        if (acc == nd && !ended) next = dec_pick(d, p->logits + (size_t)nd * V, len + nd);
        p->am[acc] = next;
        int emitted = dec_emit(d, p->am, ended ? acc : acc + 1);
        memcpy(p->ctx + len, p->am, sizeof(int) * (size_t)emitted);
        len += emitted;
        dec_step_done(d, nd + 1, nd, acc, emitted);
        if (d->done) break;
        if (fwd_commit(p->f, p->path, acc + 1, err)) return -1; /* current + accepted drafts */
        p->tok[0] = next;
    }
    return 0;
}

static void pld_destroy(dec *d) {
    pld *p = d->impl;
    if (!p) return;
    fwd_free(p->f);
    free(p->logits), free(p->tok), free(p->am), free(p->path), free(p->ctx);
    free(p);
}

/* clang-format off */
const dec_vtable dec_pld_vtable = {
    .name = "pld",
    .summary = "prompt lookup: draft the tokens that followed the latest match of the context's tail",
    .params = {
        [P_NGRAM] = {"ngram", PARAM_INT, 3, 1, 16, {0}, "longest tail n-gram matched (tried down to 1)"},
        [P_K] = {"k", PARAM_INT, 10, 1, 64, {0}, "draft tokens proposed after a match"},
        [P_MATCH] = {"match", PARAM_ENUM, MATCH_RECENT, 0, 0, {"recent", "first"},
         "recent: the latest occurrence, extended; first: the earliest with k tokens after it "
         "(Spec-Bench's find_candidate_pred_tokens)", .quiet = 1},
        [P_MISS] = {"miss", PARAM_INT, -1, -1, 1 << 30, {0},
         "token drafted when nothing matches (-1: none; Spec-Bench drafts 100)", .quiet = 1},
    },
    .create = pld_create,
    .generate = pld_generate,
    .destroy = pld_destroy,
    .tune_grid = "ngram=2,3,4;k=4,10",
};
/* clang-format on */
