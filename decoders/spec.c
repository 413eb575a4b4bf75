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
 * included). Deviation from llama.cpp examples/speculative: no draft trees (p_split); this
 * decoder is the chain of the papers (token trees: the tree decoder).
 *
 * Sampling (dec_env.sampling, decoder.h): the draft's tokens come from dec_draft_pick and are
 * verified by dec_accept with the draft's row, the bonus by dec_pick. Standard mode is then the
 * papers' algorithm exactly: x_i drawn from the draft's q_i, accepted with probability
 * min(1, p_i(x_i) / q_i(x_i)), the first rejected one replaced by a draw from
 * norm(max(0, p_i - q_i)), the bonus drawn from p_{g+1}; coupled mode drafts and verifies with
 * the same Gumbel noise (drafter-invariant: Daliri et al., arXiv 2408.07978) and emits plain
 * sampling's tokens. Both models' rows use the same temperature, top-k and top-p.
 *
 * Dynamic draft length (llama.cpp's p_min, Hugging Face's schedule), off by default; exactness
 * does not depend on it, only how many tokens are offered:
 *   p_min      stop drafting after a token whose draft probability is below p_min, the token
 *              kept (llama.cpp's --draft-p-min, common/speculative.cpp: its draft sampler is
 *              top-k 10, so the probability is the softmax at temperature 1 over the 10 most
 *              likely tokens, and the low token is the last one drafted; its default is 0.75);
 *   adapt=1    Hugging Face assisted generation's "heuristic" schedule: the draft length starts
 *              at gamma for every prompt and, after each step, grows by 2 when every drafted
 *              token was accepted, else shrinks by 1 (at least 1, at most gamma_max). HF
 *              compares with the tokens actually drafted, as here ("heuristic_transient":
 *              reset per prompt, so samples do not depend on the prompts' order).
 * Why a step's draft ended is counted (spec_counters: stop_gamma, stop_p_min, stop_end,
 * stop_room) with the draft length aimed at (draft_goal).
 * Measured (stories260K target, llama2xs draft, the first 20 TinyStories prompts x 256 new
 * tokens, temperature 0, one run on a loaded 2-core machine; target steps, draft passes,
 * tokens per step, decode-time speed-up over greedy in that run):
 *   gamma=4                         1731  6409  2.50  0.40x
 *   gamma=4,p_min=0.75              2270  3029  1.91  0.60x   (stop_p_min on 2074 steps)
 *   gamma=4,p_min=0.5               2077  3460  2.09  0.56x
 *   gamma=8,p_min=0.75              2263  3038  1.92  0.55x
 *   gamma=4,adapt=1                 1873  5843  2.31  0.44x
 *   gamma=4,p_min=0.75,adapt=1      2267  3032  1.91  0.74x
 * Here the draft costs as much as the target per row, so cutting draft passes pays even at the
 * price of more target steps; with a cheap draft the balance moves towards longer drafts. With
 * p_min a short draft is usually accepted whole, so adapt=1 then grows the aimed length to
 * gamma_max (draft_goal) without drafting more: p_min decides (its 0.74x against 0.60x is the
 * same work: the timing spread of this loaded machine). */
#include <stdlib.h>
#include <string.h>

#include "decoders/dec_impl.h"
#include "util/err.h"

enum { P_GAMMA, P_P_MIN, P_ADAPT, P_GAMMA_MAX };
/* The decoder's own counters: why each target step's draft ended, and its aimed length. */
enum { SC_STOP_GAMMA, SC_STOP_P_MIN, SC_STOP_END, SC_STOP_ROOM, SC_DRAFT_GOAL, SC_N };

typedef struct {
    int gamma, max_g; /* the draft length (adapt: the starting one) and the longest possible */
    double p_min;
    int adapt;
    fwd_ctx *ft, *fd;
    float *tlog; /* (max_g + 1) x vocab: one target pass */
    float *dlog; /* max_g x vocab: the draft's row for each drafted token */
    int *seq;    /* committed tokens (prompt + output), then this step's drafts; T_L + max_g + 1 */
    int *dseq;   /* tokens in the draft's KV cache; draft seq_len */
    int *rows;   /* tokens of the target chain */
    int *path;   /* rows committed by the target */
} spec;

static int spec_create(dec *d, char *err) {
    spec *s = calloc(1, sizeof *s);
    if (!s) return err_set(err, "spec: out of memory");
    d->impl = s;
    s->gamma = d->param[P_GAMMA], s->p_min = d->rparam[P_P_MIN], s->adapt = d->param[P_ADAPT];
    s->max_g = s->adapt && d->param[P_GAMMA_MAX] > s->gamma ? d->param[P_GAMMA_MAX] : s->gamma;
    const model_config *tc = &d->env.target->cfg, *dc = &d->env.draft->cfg;
    size_t V = (size_t)tc->vocab_size, G = (size_t)s->max_g;
    s->tlog = malloc(sizeof(float) * (G + 1) * V);
    s->dlog = malloc(sizeof(float) * G * V);
    s->seq = malloc(sizeof(int) * ((size_t)tc->seq_len + G + 1));
    s->dseq = malloc(sizeof(int) * (size_t)dc->seq_len);
    s->rows = malloc(sizeof(int) * (G + 1));
    s->path = malloc(sizeof(int) * (G + 1));
    if (!s->tlog || !s->dlog || !s->seq || !s->dseq || !s->rows || !s->path)
        return err_set(err, "spec: out of memory");
    if (dec_fwd_new(d, d->env.target, s->max_g + 1, &s->ft, err) ||
        dec_fwd_new(d, d->env.draft, 2, &s->fd, err))
        return -1;
    return 0;
}

/* Feeds tokens[0..n) to the draft as a chain (in chunks of its batch size), commits them and
 * leaves the last row's logits in dl. */
static int draft_feed(dec *d, spec *s, const int *tokens, int n, float *dl, char *err) {
    int B = fwd_max_batch(s->fd);
    while (n > 0) {
        int k = n < B ? n : B, last = k - 1;
        int dn = fwd_n_past(s->fd);
        if (dec_eval(d, DEC_DRAFT, s->fd, k, tokens, NULL, &last, 1, dl, 0, err)) return -1;
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
    const size_t VS = (size_t)V;
    memcpy(s->seq, prompt, sizeof(int) * (size_t)n_prompt);
    int L = n_prompt; /* seq[0..L) is the text; seq[L-1] is not yet in the target's cache */
    if (dec_prefill(d, DEC_TARGET, s->ft, prompt, n_prompt, s->tlog, err)) return -1;
    s->seq[L] = dec_pick(d, s->tlog, L);
    L += dec_emit(d, &s->seq[L], 1);
    /* The draft needs the prompt in its cache and room to feed the current token. */
    int draft_ok = n_prompt < D_L, gamma = s->gamma;
    if (draft_ok) {
        if (dec_prefill(d, DEC_DRAFT, s->fd, prompt, n_prompt, s->dlog, err)) return -1;
        memcpy(s->dseq, prompt, sizeof(int) * (size_t)n_prompt);
    }
    while (!d->done) {
        const int n_past = L - 1;
        int g = d->max_new - d->n_out - 1; /* drafts that could still be emitted */
        if (g > gamma) g = gamma;
        if (draft_ok && D_L - n_past <= 0) draft_ok = 0; /* the draft is out of room for good */
        if (!draft_ok)
            g = 0;
        else if (g > D_L - n_past)
            g = D_L - n_past; /* d_i is fed at n_past + i - 1 */
        int stop = g == gamma ? SC_STOP_GAMMA : SC_STOP_ROOM;
        /* 1. draft: catch up on seq[dn..L) in one pass, then one pass per further token; d_i
         * (x[i], at position L + i) comes from the draft's row i */
        int *x = s->seq + L; /* the drafts, written after the text */
        for (int i = 0; i < g; i++) {
            int dn = fwd_n_past(s->fd);
            float *dl = s->dlog + (size_t)i * VS;
            if (draft_feed(d, s, s->seq + dn, L + i - dn, dl, err)) return -1;
            x[i] = dec_draft_pick(d, dl, L + i, 0);
            if (x[i] == d->end_id) /* nothing after the end token can be emitted */
                g = i + 1, stop = SC_STOP_END;
            else if (s->p_min > 0 && i + 1 < g && dec_draft_prob(dl, V, x[i]) < s->p_min)
                g = i + 1, stop = SC_STOP_P_MIN;
        }
        dec_count(d, stop, 1);
        dec_count(d, SC_DRAFT_GOAL, draft_ok ? gamma : 0);
        /* 2. verify: one target pass over [current token, d_1..d_g] */
        memcpy(s->rows, s->seq + n_past, sizeof(int) * (size_t)(g + 1));
        if (dec_eval(d, DEC_TARGET, s->ft, g + 1, s->rows, NULL, NULL, g + 1, s->tlog, 0, err))
            return -1;
        /* 3. accept the longest prefix the target confirms, then its next token: the
         * replacement of the first rejected draft, or the bonus after the last one */
        int ended, a = dec_accept_chain(d, s->tlog, s->dlog, x, g, L, &ended);
        int emitted = dec_emit(d, x, ended ? a : a + 1);
        dec_step_done(d, g + 1, g, a, emitted);
        if (s->adapt && g > 0) gamma = a == g ? gamma + 2 : gamma - 1;
        if (gamma > s->max_g) gamma = s->max_g;
        if (gamma < 1) gamma = 1;
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

static const stat_def spec_counters[SC_N] = {
    [SC_STOP_GAMMA] = {"stop_gamma", STAT_INT, STAT_SUM, STAT_DET,
                       "target steps whose draft reached its length (gamma, or the adapted one)"},
    [SC_STOP_P_MIN] = {"stop_p_min", STAT_INT, STAT_SUM, STAT_DET,
                       "target steps whose draft stopped after a token below p_min"},
    [SC_STOP_END] = {"stop_end", STAT_INT, STAT_SUM, STAT_DET,
                     "target steps whose draft stopped at the end token"},
    [SC_STOP_ROOM] = {"stop_room", STAT_INT, STAT_SUM, STAT_DET,
                      "target steps whose draft was cut by max_new or the draft's context"},
    [SC_DRAFT_GOAL] = {"draft_goal", STAT_INT, STAT_SUM, STAT_DET,
                       "the draft lengths aimed at, summed over target steps (adapt=1 moves it)"},
};

/* clang-format off */
const dec_vtable dec_spec_vtable = {
    .name = "spec",
    .summary = "speculative decoding: a draft model proposes gamma tokens, one target pass "
               "verifies them (Leviathan et al. 2023)",
    .params = {
        [P_GAMMA] = {"gamma", PARAM_INT, 4, 1, 64, {0}, "tokens drafted per target step (adapt=1: at first)"},
        [P_P_MIN] = {"p_min", PARAM_REAL, 0, 0, 0, {0},
         "stop drafting after a token of draft probability below this (llama.cpp's "
         "--draft-p-min; 0: never)", .rdef = 0, .rmin = 0, .rmax = 1, .quiet = 1},
        [P_ADAPT] = {"adapt", PARAM_INT, 0, 0, 1, {0},
         "1: draft length +2 after a fully accepted draft, else -1 (Hugging Face's heuristic)",
         .quiet = 1},
        [P_GAMMA_MAX] = {"gamma_max", PARAM_INT, 16, 1, 64, {0}, "longest draft adapt=1 may reach", .quiet = 1},
    },
    .needs_draft = 1,
    .create = spec_create,
    .generate = spec_generate,
    .destroy = spec_destroy,
    .counters = spec_counters,
    .n_counters = SC_N,
    .tune_grid = "gamma=1,2,3,4,6,8",
};
/* clang-format on */
