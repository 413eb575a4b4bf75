/* spec.c: speculative decoding with a draft model, greedy verification.
 *
 * Leviathan et al., "Fast Inference from Transformers via Speculative Decoding" (arXiv
 * 2211.17192), Algorithm 1, and Chen et al. (arXiv 2302.01318), in the greedy (temperature 0)
 * case, where the rejection rule reduces to "accept a drafted token iff it is the target's
 * argmax":
 *   1. the draft proposes gamma tokens greedily, one draft pass per token, each committed
 *      into the draft's KV cache (the draft first catches up, in the same pass, on the
 *      accepted tokens it has not seen: at most two, the last draft and the bonus token);
 *   2. the target evaluates the chain [current token, d_1..d_gamma] in ONE pass of gamma+1
 *      rows; row i's argmax t_i is the greedy token after d_1..d_i;
 *   3. accept d_1..d_a while d_{i+1} == t_i, then emit t_a as well (the bonus / correction
 *      token): every step emits 1..gamma+1 tokens, all of them greedy's;
 *   4. the target commits rows 0..a; the draft's cache is cut back (fwd_truncate) to the
 *      longest prefix it shares with the accepted text.
 * Exactness rests on the forward pass's batch invariance (model/forward.h): a row's logits do
 * not depend on the chain around it, so t_i equals what plain decoding would compute.
 *
 * Bounds. Drafts are trimmed so that nothing is drafted that could not be emitted: at most
 * max_new - n_out - 1 drafted tokens (the bonus token is free), which also keeps every target
 * row below the TARGET's context length (dec_generate clips max_new to it). The draft feeds
 * its tokens at positions n_past .. n_past+g-1, so g is also trimmed to the DRAFT's context;
 * when the draft has no room left (its seq_len is shorter than the target's, e.g. llama2xs 256
 * vs stories260K 512) drafting stops for the rest of the prompt and every further step is a
 * plain target step (1 row, drafted 0). A prompt longer than the draft's context never
 * drafts. Drafting also stops after the draft proposes the end token: nothing after it can be
 * emitted, and acceptance stops at an accepted end token (dec_emit emits nothing after it).
 *
 * Statistics: drafted = tokens offered (g per step), accepted = the a above; the draft's
 * catch-up rows are counted in draft_rows (draft_steps counts every draft pass, prefill
 * included). Deviation from llama.cpp examples/speculative: no draft trees (p_split) and no
 * sampling; this decoder is the greedy chain of the papers. */
#include <stdlib.h>
#include <string.h>

#include "decoders/dec_impl.h"
#include "util/err.h"

typedef struct {
    int gamma;
    fwd_ctx *ft, *fd;
    float *tlog; /* (gamma + 1) x vocab: one target pass */
    float *dlog; /* vocab: the draft's last row */
    int *seq;    /* committed tokens (prompt + output), then this step's drafts; T_L + gamma + 1 */
    int *dseq;   /* tokens in the draft's KV cache; draft seq_len */
    int *rows;   /* tokens of the target chain */
    int *path;   /* rows committed by the target */
} spec;

static int spec_create(dec *d, char *err) {
    spec *s = calloc(1, sizeof *s);
    if (!s) return err_set(err, "spec: out of memory");
    d->impl = s;
    s->gamma = dec_param(d, "gamma");
    const model_config *tc = &d->env.target->cfg, *dc = &d->env.draft->cfg;
    size_t V = (size_t)tc->vocab_size, G = (size_t)s->gamma;
    s->tlog = malloc(sizeof(float) * (G + 1) * V);
    s->dlog = malloc(sizeof(float) * V);
    s->seq = malloc(sizeof(int) * ((size_t)tc->seq_len + G + 1));
    s->dseq = malloc(sizeof(int) * (size_t)dc->seq_len);
    s->rows = malloc(sizeof(int) * (G + 1));
    s->path = malloc(sizeof(int) * (G + 1));
    if (!s->tlog || !s->dlog || !s->seq || !s->dseq || !s->rows || !s->path)
        return err_set(err, "spec: out of memory");
    if (dec_fwd_new(d, d->env.target, s->gamma + 1, &s->ft, err) ||
        dec_fwd_new(d, d->env.draft, 2, &s->fd, err))
        return -1;
    return 0;
}

/* Feeds tokens[0..n) to the draft as a chain (in chunks of its batch size), commits them and
 * leaves the last row's logits in s->dlog. */
static int draft_feed(dec *d, spec *s, const int *tokens, int n, char *err) {
    int B = fwd_max_batch(s->fd);
    while (n > 0) {
        int k = n < B ? n : B, last = k - 1;
        int dn = fwd_n_past(s->fd);
        if (dec_eval(d, DEC_DRAFT, s->fd, k, tokens, NULL, &last, 1, s->dlog, 0, err)) return -1;
        for (int i = 0; i < k; i++) s->path[i] = i;
        if (fwd_commit(s->fd, s->path, k, err)) return -1;
        memcpy(s->dseq + dn, tokens, sizeof(int) * (size_t)k);
        tokens += k, n -= k;
    }
    return 0;
}

static int spec_generate(dec *d, const int *prompt, int n_prompt, char *err) {
    spec *s = d->impl;
    const int V = d->env.target->cfg.vocab_size, D_L = d->env.draft->cfg.seq_len;
    memcpy(s->seq, prompt, sizeof(int) * (size_t)n_prompt);
    int L = n_prompt; /* seq[0..L) is the text; seq[L-1] is not yet in the target's cache */
    if (dec_prefill(d, DEC_TARGET, s->ft, prompt, n_prompt, s->tlog, err)) return -1;
    s->seq[L] = fwd_argmax(s->tlog, V);
    L += dec_emit(d, &s->seq[L], 1);
    /* The draft needs the prompt in its cache and room to feed the current token. */
    int draft_ok = n_prompt < D_L;
    if (draft_ok) {
        if (dec_prefill(d, DEC_DRAFT, s->fd, prompt, n_prompt, s->dlog, err)) return -1;
        memcpy(s->dseq, prompt, sizeof(int) * (size_t)n_prompt);
    }
    while (!d->done) {
        const int n_past = L - 1;
        int g = d->max_new - d->n_out - 1; /* drafts that could still be emitted */
        if (g > s->gamma) g = s->gamma;
        if (draft_ok && D_L - n_past <= 0) draft_ok = 0; /* the draft is out of room for good */
        if (!draft_ok)
            g = 0;
        else if (g > D_L - n_past)
            g = D_L - n_past; /* d_i is fed at n_past + i - 1 */
        /* 1. draft: catch up on seq[dn..L) in one pass, then one pass per further token */
        int *x = s->seq + L; /* the drafts, written after the text */
        for (int i = 0; i < g; i++) {
            int dn = fwd_n_past(s->fd);
            if (draft_feed(d, s, s->seq + dn, L + i - dn, err)) return -1;
            x[i] = fwd_argmax(s->dlog, V);
            if (x[i] == d->end_id) g = i + 1; /* nothing after the end token can be emitted */
        }
        /* 2. verify: one target pass over [current token, d_1..d_g] */
        memcpy(s->rows, s->seq + n_past, sizeof(int) * (size_t)(g + 1));
        if (dec_eval(d, DEC_TARGET, s->ft, g + 1, s->rows, NULL, NULL, g + 1, s->tlog, 0, err))
            return -1;
        /* 3. accept the longest prefix matching the target's argmax chain, plus its next token */
        int a = 0, t = fwd_argmax(s->tlog, V);
        while (a < g && x[a] == t && x[a] != d->end_id)
            t = fwd_argmax(s->tlog + (size_t)++a * V, V);
        int ended = a < g && x[a] == t; /* an accepted end token: no bonus after it */
        if (ended)
            a++;
        else
            x[a] = t; /* the bonus overwrites the first rejected draft */
        int emitted = dec_emit(d, x, ended ? a : a + 1);
        dec_step_done(d, g + 1, g, a, emitted);
        if (d->done) break;
        /* 4. commit: the target keeps rows 0..a; the draft keeps what it shares with the text */
        for (int i = 0; i <= a; i++) s->path[i] = i;
        if (fwd_commit(s->ft, s->path, a + 1, err)) return -1;
        int old_L = L;
        L += emitted;
        if (draft_ok && dec_draft_resync(s->fd, s->dseq, s->seq, old_L, L, err)) return -1;
    }
    return 0;
}

static void spec_destroy(dec *d) {
    spec *s = d->impl;
    if (!s) return;
    fwd_free(s->ft), fwd_free(s->fd);
    free(s->tlog), free(s->dlog), free(s->seq), free(s->dseq), free(s->rows), free(s->path);
    free(s);
}

const dec_vtable dec_spec_vtable = {
    .name = "spec",
    .summary = "speculative decoding: a draft model proposes gamma tokens, one target pass "
               "verifies them (Leviathan et al. 2023)",
    .n_params = 1,
    .params = {{"gamma", PARAM_INT, 4, 1, 64, {0}, "tokens drafted per target step"}},
    .needs_draft = 1,
    .create = spec_create,
    .generate = spec_generate,
    .destroy = spec_destroy,
};
