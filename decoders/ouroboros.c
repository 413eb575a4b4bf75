/* ouroboros.c: Ouroboros, speculative decoding with phrase drafts (Zhao et al., "Ouroboros:
 * Generating Longer Drafts Phrase by Phrase for Faster Speculative Decoding", arXiv
 * 2402.13720, EMNLP 2024), greedy.
 *
 * Algorithm 1, as implemented here, one iteration = one target step:
 *   draft (§3.1, drafting phrase by phrase): the draft model runs lookahead decoding against a
 *     phrase pool shared with the target. Each draft pass evaluates, in ONE tree: the tokens
 *     the draft has not seen yet, its current token c, the lookahead window below c
 *     (ouroboros_window.h) and every pool phrase keyed on c (at most W). The longest phrase
 *     matching the draft's own argmax chain is taken, plus the draft's next token: a pass adds
 *     1..beta+1 tokens. Passes repeat until the draft holds at least gamma tokens. The window's
 *     columns feed the pool with W phrases per pass.
 *   lengthen (§3.2, candidate suffixes): the K newest phrases keyed on the draft's last token
 *     hang below it as branches.
 *   verify: ONE target pass over [current token, draft, K suffixes] with a tree mask; accept the
 *     draft prefix matching the target's argmax chain; if the whole draft matches, the longest
 *     matching suffix prefix as well; then the target's own next token (bonus / correction).
 *   inspire (§3.3): after the first failure in the draft, for every later draft token x, the
 *     target's argmax chain after x (followed as long as the draft agreed with it) is a phrase
 *     keyed on x, kept if it reaches beta tokens.
 *   refine (§3.3): each suffix used is rewritten in the pool as [target's token after the
 *     draft, target's argmax after each suffix token but the last].
 *   warm start (§3.4): the pool outlives the prompt (warm=1), and can be saved/loaded
 *     (ouroboros.h).
 * Every emitted token is a target argmax on a committed root-to-node path, and the tree
 * forward pass is batch-invariant (model/forward.h), so the output is greedy's exactly.
 *
 * Deviations from thunlp/Ouroboros (ouroboros.py, kv_cache_model.py, cache_engine.py,
 * modeling_llama.py), each for exactness or clarity:
 *   - Bonus token: the reference, like LADE, drops the target's next token when a whole suffix
 *     (and, in the draft, a whole pool phrase) matches; we take it (one more token per such
 *     step, at no cost), as llama.cpp does.
 *   - End token: the reference cuts the output after the fact; here acceptance stops at an
 *     accepted end token and the draft stops drafting after proposing it (no suffixes then).
 *   - Pool: decoders/ngram_pool.h, W phrases of beta tokens per key, W also the window width
 *     (the reference asserts window_size == guess_set_size); phrase length beta is a parameter
 *     (the reference's level 7 means beta 6). Refinement removes the used suffix and adds the
 *     corrected phrase as the newest (the reference overwrites the K newest slots, where the
 *     suffixes came from: the same phrases stay the newest); a corrected phrase already present
 *     is refreshed, not duplicated. The draft verifies pool phrases from its first pass on (the
 *     reference only once its window is full), which lets a warm pool help from the start.
 *   - Context: drafting is bounded by the draft's context (its window is skipped when it does
 *     not fit, phrases are shortened to the room left) and stops for the rest of the prompt
 *     when the draft is full; the target then verifies suffixes keyed on its own current
 *     token (draft length 0). Drafts and suffixes are trimmed to what could still be emitted
 *     (max_new, and so the target's context).
 *   - Batch 1 (as the reference). Sampling (decoder.h; the reference samples only in its
 *     target's plain decoding): the draft's tokens and phrases are dec_propose's (its argmax,
 *     or the coupled pick with the target's noise), the target's per-row tokens too (used by
 *     inspiration and refinement). Greedy and coupled verification are the walk below (a match
 *     with the pick); standard sampling verifies the draft and the suffixes as one tree of
 *     fixed guesses with dec_tree_walk (accept x with probability p'(x), remove it from p' when
 *     rejected; SpecInfer's rule for deterministic candidates): phrase tokens have no draft
 *     probability, so Leviathan's min(1, p / q) cannot apply to them.
 * Switches for the ablations: lookahead=0 (no window: the draft still verifies pool phrases),
 * suffix=0 (= K=0), inspire=0, refine=0, warm=0.
 *
 * beta and the paper: our beta is the phrase length without its key token, the reference
 * code's lookahead_level - 1 (its phrases: cache_engine.py, add_extra_ngram; its default level
 * 7 is beta=6). The paper's Table 7 prints a beta one above the level its scripts run
 * (thunlp/Ouroboros@7dac65b benchmark/test_*.py: every row, e.g. HumanEval Yi 12/20/8 runs as
 * gamma 12, window 20, level 7), so Table 7's beta is our beta + 2 (harness/paper.h). The
 * mapping is written wherever beta is shown (the parameter's help, README's decoder table,
 * here) rather than given a second name, which would give one setting two specs.
 *
 * Options beyond the default behaviour (new parameters, defaults unchanged):
 *   trim=1     cut each draft to exactly gamma tokens, as the reference's lade_generate does
 *              (max_new_tokens = gamma, the output truncated to it); by default a draft keeps
 *              every token its phrase passes produced, gamma to gamma + beta.
 *   p_min      stop drafting after a token whose draft probability (llama.cpp's measure,
 *              dec_draft_prob) is below p_min, the token kept;
 *   adapt=1    Hugging Face's +2/-1 schedule on gamma (spec.c), at most gamma_max.
 * Why each step's draft ended is counted (stop_gamma, stop_p_min, stop_end, stop_room) with the
 * draft length aimed at (draft_goal). Measured (stories260K target, llama2xs draft, the first 20
 * TinyStories prompts x 256 new tokens, W=20,beta=8,K=3, temperature 0; target steps / draft
 * passes / tokens per step):
 *   gamma=2            1571 / 1982 / 2.76     gamma=2,trim=1     1673 / 2131 / 2.59
 *   gamma=4            1503 / 2767 / 2.88     gamma=4,trim=1     1534 / 2803 / 2.83
 *   gamma=4,p_min=0.75 1767 / 1909 / 2.45     gamma=4,adapt=1    1587 / 2063 / 2.73
 * The tokens past gamma are free (the phrase pass made them) and accepted often enough that
 * cutting them costs 2-6% more target steps, and slightly more draft passes (shorter drafts,
 * more steps): the default keeps them. p_min=0.75 stopped 1625 of the drafts short.
 *
 * Statistics: drafted = the draft length plus the suffix length when suffixes were attached
 * (the longest root-to-leaf path offered); accepted = draft tokens + suffix tokens accepted.
 * Its own counters (ouro_counters below: phrase, window, inspiration, refinement and suffix
 * counts, the pool's size) are stored with every sample; the pool is its state, saved and
 * loaded through the vtable's state hooks (the file format of ouroboros_pool.h). */
#include "decoders/ouroboros.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/dec_impl.h"
#include "decoders/ouroboros_pool.h"
#include "decoders/ouroboros_window.h"
#include "util/err.h"

/* The parameters, rows of the table in dec_ouroboros_vtable. */
enum {
    P_GAMMA,
    P_W,
    P_BETA,
    P_K,
    P_LOOKAHEAD,
    P_SUFFIX,
    P_INSPIRE,
    P_REFINE,
    P_WARM,
    P_SEED,
    P_TRIM,
    P_P_MIN,
    P_ADAPT,
    P_GAMMA_MAX
};

/* The decoder's own counters, in the order of ouroboros_counts (ouroboros.h). */
enum {
    OC_DRAFT_PASSES,
    OC_DRAFT_TOKENS,
    OC_DRAFT_PHRASE_TOKENS,
    OC_WINDOW_PHRASES,
    OC_INSPIRED,
    OC_REFINED,
    OC_SUFFIX_STEPS,
    OC_SUFFIX_TOKENS,
    OC_POOL_PHRASES,
    OC_STOP_GAMMA, /* why a target step's draft ended: ouroboros_counts.stop[0..3] */
    OC_STOP_P_MIN,
    OC_STOP_END,
    OC_STOP_ROOM,
    OC_DRAFT_GOAL,
    OC_N
};
typedef struct {
    int gamma, W, beta, K, lookahead, suffix, inspire, refine, warm, seed;
    int trim, adapt, gamma_max; /* reference-faithful and dynamic-length options */
    int cur_gamma;              /* the draft length aimed at (adapt=1 moves it) */
    double p_min;
    int V, T_L, D_L, draft_ok;
    fwd_ctx *ft, *fd;
    ngram_pool *pool; /* key -> W phrases of beta tokens, shared by draft and target */
    ouro_window win;
    rng_state rng;
    int max_trows, max_drows, max_catch;
    float *tlog, *dlog;             /* logits of a target / draft pass */
    int *ttok, *tpar, *ttop;        /* target pass: tokens, parents, argmax per row */
    int *dtok, *dpar, *dtop, *rows; /* draft pass; rows[i] = i */
    int *seq;                       /* the text, then this step's drafts */
    int *dseq;                      /* tokens in the draft's KV cache */
    int *path, *em, *phrase;
    int *ddep, *tdep; /* depth of each draft / target row below its pass's root */
    int *iota;        /* 0, 1, 2, ...: batch row lists */
    double *dprob;    /* p_min: the draft probability of each token of the last draft pass */
    ouroboros_counts cnt;
} ouro;

static int imin(int a, int b) {
    return a < b ? a : b;
}

static int ouro_create(dec *d, char *err) {
    ouro *o = calloc(1, sizeof *o);
    if (!o) return err_set(err, "ouroboros: out of memory");
    d->impl = o;
    o->gamma = d->param[P_GAMMA], o->W = d->param[P_W], o->beta = d->param[P_BETA];
    o->K = d->param[P_K], o->lookahead = d->param[P_LOOKAHEAD];
    o->suffix = d->param[P_SUFFIX], o->inspire = d->param[P_INSPIRE];
    o->refine = d->param[P_REFINE], o->warm = d->param[P_WARM];
    o->seed = d->param[P_SEED];
    o->trim = d->param[P_TRIM], o->adapt = d->param[P_ADAPT];
    o->gamma_max = d->param[P_GAMMA_MAX], o->p_min = d->rparam[P_P_MIN];
    if (o->adapt && o->gamma_max < o->gamma) o->gamma_max = o->gamma;
    const int gmax = o->adapt ? o->gamma_max : o->gamma;
    if (o->K > o->W) return err_set(err, "ouroboros: K=%d exceeds W=%d", o->K, o->W);
    o->V = d->env.target->cfg.vocab_size;
    o->T_L = d->env.target->cfg.seq_len, o->D_L = d->env.draft->cfg.seq_len;
    if (ngram_pool_new(&o->pool, o->V, o->W, o->beta, err) ||
        ouro_window_init(&o->win, o->W, o->beta, err))
        return -1;
    /* a draft pass: catch-up, the current token, the window, W phrases */
    o->max_catch = o->beta + 1;
    o->max_drows = o->max_catch + 1 + ouro_window_max_rows(&o->win) + o->W * o->beta;
    /* a target pass: the current token, a draft of up to gamma-1 + beta+1 tokens, K suffixes */
    o->max_trows = 1 + gmax + o->beta + o->K * o->beta;
    size_t V = (size_t)o->V, DR = (size_t)o->max_drows, TR = (size_t)o->max_trows;
    o->tlog = malloc(sizeof(float) * TR * V);
    o->dlog = malloc(sizeof(float) * DR * V);
    o->ttok = malloc(sizeof(int) * TR), o->tpar = malloc(sizeof(int) * TR);
    o->ttop = malloc(sizeof(int) * TR);
    o->dtok = malloc(sizeof(int) * DR), o->dpar = malloc(sizeof(int) * DR);
    o->dtop = malloc(sizeof(int) * DR), o->rows = malloc(sizeof(int) * DR);
    o->seq = malloc(sizeof(int) * ((size_t)o->T_L + gmax + o->beta + 2));
    o->dseq = malloc(sizeof(int) * (size_t)o->D_L);
    o->path = malloc(sizeof(int) * (DR + TR)), o->em = malloc(sizeof(int) * TR);
    o->phrase = malloc(sizeof(int) * (size_t)o->beta);
    o->ddep = malloc(sizeof(int) * DR), o->tdep = malloc(sizeof(int) * TR);
    o->iota = malloc(sizeof(int) * TR), o->dprob = malloc(sizeof(double) * (size_t)(o->beta + 1));
    if (!o->tlog || !o->dlog || !o->ttok || !o->tpar || !o->ttop || !o->dtok || !o->dpar ||
        !o->dtop || !o->rows || !o->seq || !o->dseq || !o->path || !o->em || !o->phrase ||
        !o->ddep || !o->tdep || !o->iota || !o->dprob)
        return err_set(err, "ouroboros: out of memory");
    for (int i = 0; i < o->max_drows; i++) o->rows[i] = i;
    for (int i = 0; i < o->max_trows; i++) o->iota[i] = i;
    if (dec_fwd_new(d, d->env.target, o->max_trows, &o->ft, err) ||
        dec_fwd_new(d, d->env.draft, o->max_drows, &o->fd, err))
        return -1;
    return 0;
}

/* Commits batch rows path[0..n) of the last draft pass and mirrors their tokens. */
static int draft_commit(ouro *o, const int *path, int n, char *err) {
    int dn = fwd_n_past(o->fd);
    for (int i = 0; i < n; i++) o->dseq[dn + i] = o->dtok[path[i]];
    return fwd_commit(o->fd, path, n, err);
}

/* One draft pass (§3.1). seq[0..end) is the text plus the draft so far; seq[end-1] is the
 * draft's current token. Appends the pass's tokens at seq[end..] and returns their count. */
static int draft_pass(dec *d, ouro *o, int end, char *err) {
    const int cur_i = end - 1, room = o->D_L - 1 - cur_i; /* depth allowed below c */
    int dn = fwd_n_past(o->fd);
    while (cur_i - dn > o->max_catch) { /* catch up on a long lag first (not in normal runs) */
        int k = imin(cur_i - dn, o->max_drows), last = k - 1;
        memcpy(o->dtok, o->seq + dn, sizeof(int) * (size_t)k);
        if (dec_eval(d, DEC_DRAFT, o->fd, k, o->dtok, NULL, &last, 1, o->dlog, 0, err) ||
            draft_commit(o, o->rows, k, err))
            return -1;
        dn += k;
        o->cnt.draft_passes++;
    }
    /* rows: catch-up chain ending at c, the window below c, the pool's phrases for c */
    int n = 0;
    for (int i = dn; i <= cur_i; i++, n++) o->dtok[n] = o->seq[i], o->dpar[n] = n - 1;
    const int root = n - 1, c = o->seq[cur_i];
    int use_win = o->lookahead && room >= ouro_window_depth(&o->win);
    if (use_win) n = ouro_window_build(&o->win, root, o->dtok, o->dpar, n);
    int nc = ngram_pool_count(o->pool, c), clen = imin(o->beta, room);
    if (clen <= 0) nc = 0;
    const int cand0 = n;
    for (int k = 0; k < nc; k++) { /* newest first */
        const int *ph = ngram_pool_get(o->pool, c, k);
        for (int m = 0; m < clen; m++, n++) o->dtok[n] = ph[m], o->dpar[n] = m == 0 ? root : n - 1;
    }
    if (dec_eval(d, DEC_DRAFT, o->fd, n, o->dtok, o->dpar, o->rows + root, n - root, o->dlog, 0,
                 err))
        return -1;
    o->cnt.draft_passes++;
    /* the draft's own next token after each row (row r sits at cur_i + its depth) */
    const size_t V = (size_t)o->V;
    o->ddep[root] = 0;
    for (int r = root + 1; r < n; r++) o->ddep[r] = o->ddep[o->dpar[r]] + 1;
    for (int r = root; r < n; r++)
        o->dtop[r] = dec_propose(d, o->dlog + (size_t)(r - root) * V, cur_i + o->ddep[r] + 1);
    /* the longest phrase on the draft's own argmax chain (first one on ties) */
    int best = -1, best_m = 0;
    for (int k = 0; k < nc; k++) {
        int m = 0, prev = root, r0 = cand0 + k * clen;
        while (m < clen && o->dtok[r0 + m] == o->dtop[prev]) prev = r0 + m++;
        if (m > best_m) best = k, best_m = m;
    }
    int np = 0, last = root;
    for (int i = 0; i <= root; i++) o->path[np++] = i;
    for (int m = 0; m < best_m; m++) {
        int row = cand0 + best * clen + m;
        if (o->p_min > 0) /* token m was predicted by the row before it on the path */
            o->dprob[m] = dec_draft_prob(o->dlog + (size_t)(last - root) * V, o->V, o->dtok[row]);
        last = row;
        o->path[np++] = last;
        o->seq[end + m] = o->dtok[last];
    }
    o->seq[end + best_m] = o->dtop[last]; /* the draft's own next token: the bonus */
    if (o->p_min > 0)
        o->dprob[best_m] = dec_draft_prob(o->dlog + (size_t)(last - root) * V, o->V, o->dtop[last]);
    if (draft_commit(o, o->path, np, err)) return -1;
    if (use_win) {
        long before = o->win.harvested;
        ouro_window_update(&o->win, c, o->dtop, o->pool);
        o->cnt.window_phrases += o->win.harvested - before;
    }
    o->cnt.draft_tokens += best_m + 1, o->cnt.draft_phrase_tokens += best_m;
    return best_m + 1;
}

/* Candidate inspiration (§3.3): rows 1..n of the target pass hold the draft x_1..x_n, and
 * x_{a+1} was the first rejected. From each rejected-or-later x_k, follow the target's argmax
 * chain while the draft agreed with it; a chain of beta tokens becomes a phrase keyed on x_k. */
static void inspire(ouro *o, int a, int n) {
    for (int k = a + 1; k <= n; k++) {
        int len = 0;
        for (int r = k; len < o->beta; r++) {
            o->phrase[len++] = o->ttop[r];
            if (r + 1 > n || o->ttok[r + 1] != o->ttop[r]) break;
        }
        if (len == o->beta) o->cnt.inspired += ngram_pool_add(o->pool, o->ttok[k], o->phrase) == 1;
    }
}

static void publish_counts(dec *d, const ouro *o);

/* 1. Drafts phrase by phrase after seq[0..L) until `goal` tokens (or the end token, a token
 * below p_min, or no room): returns the draft length n (seq[L..L+n)) and *stop, the reason
 * (a counter index). */
static int ouro_draft(dec *d, ouro *o, int L, int goal, int need, int *stop, char *err) {
    int n = 0, end = 0, low = 0;
    while (o->draft_ok && n < goal && !end && !low) {
        if (L - 1 + n > o->D_L - 1) { /* the draft's context is full: no more drafting */
            o->draft_ok = 0;
            break;
        }
        int k = draft_pass(d, o, L + n, err);
        if (k < 0) return -1;
        for (int i = 0; i < k; i++) {
            if (o->seq[L + n + i] == d->end_id)
                end = 1;
            else if (o->p_min > 0 && o->dprob[i] < o->p_min)
                low = 1;
            if (end || low) { /* the token stays, nothing after it (llama.cpp's p_min) */
                k = i + 1;
                break;
            }
        }
        n += k;
    }
    if (o->trim && n > goal) n = goal; /* the reference's cut to max_new_tokens = gamma */
    n = imin(n, need);
    *stop = end                                 ? OC_STOP_END
            : n >= goal && goal == o->cur_gamma ? OC_STOP_GAMMA
            : low                               ? OC_STOP_P_MIN
                                                : OC_STOP_ROOM;
    return n;
}

/* Standard sampling's verification of the target tree (rows 1.. are proposals: the draft
 * chain, then the suffixes below its last token), by dec_tree_walk. Fills path[0..k], the
 * emitted tokens em[0..*ne) and returns k; *a: how many of them are draft tokens. */
static int ouro_walk_sampled(dec *d, ouro *o, int rows, int n, int L, int *a, int *ne) {
    const dec_tree t = {.tok = o->ttok, .par = o->tpar, .trow = o->iota, .tl = o->tlog};
    int next, k = dec_tree_walk(d, &t, 0, L - 1, o->iota + 1, rows - 1, o->path, &next);
    *a = 0, *ne = 0;
    while (*a < k && o->path[*a + 1] <= n) ++*a;
    for (int j = 1; j <= k; j++) o->em[(*ne)++] = o->ttok[o->path[j]];
    if (next >= 0) o->em[(*ne)++] = next;
    return k;
}

static int ouro_generate(dec *d, const int *prompt, int n_prompt, char *err) {
    ouro *o = d->impl;
    const int V = o->V, B = o->beta;
    const int standard =
        d->env.sampling.temperature > 0 && d->env.sampling.mode == DEC_SAMPLING_STANDARD;
    memset(&o->cnt, 0, sizeof o->cnt);
    if (!o->warm) ngram_pool_clear(o->pool);
    rng_seed(&o->rng, (uint64_t)o->seed);
    ouro_window_reset(&o->win, prompt, n_prompt, &o->rng);
    memcpy(o->seq, prompt, sizeof(int) * (size_t)n_prompt);
    int L = n_prompt; /* seq[0..L) is the text; seq[L-1] is not yet in the target's cache */
    if (dec_prefill(d, DEC_TARGET, o->ft, prompt, n_prompt, o->tlog, err)) return -1;
    o->seq[L] = dec_pick(d, o->tlog, L);
    L += dec_emit(d, &o->seq[L], 1);
    o->draft_ok = n_prompt < o->D_L;
    o->cur_gamma = o->gamma;
    if (o->draft_ok) {
        if (dec_prefill(d, DEC_DRAFT, o->fd, prompt, n_prompt, o->dlog, err)) return -1;
        memcpy(o->dseq, prompt, sizeof(int) * (size_t)n_prompt);
    }
    while (!d->done) {
        const int need = d->max_new - d->n_out - 1; /* tokens that could follow the bonus */
        /* 1. draft phrase by phrase until gamma tokens (or the end token, or no room) */
        int stop, goal = imin(o->cur_gamma, need);
        int n = ouro_draft(d, o, L, goal, need, &stop, err);
        if (n < 0) return -1;
        o->cnt.stop[stop - OC_STOP_GAMMA]++;
        o->cnt.draft_goal += o->draft_ok ? o->cur_gamma : 0;
        const int *x = o->seq + L;
        /* 2. the tree: [current token, x_1..x_n] and K suffixes below x_n (§3.2) */
        int rows = 0;
        for (int i = 0; i <= n; i++, rows++)
            o->ttok[rows] = o->seq[L - 1 + i], o->tpar[rows] = rows - 1, o->tdep[rows] = i;
        const int key_row = n, key = o->ttok[key_row];
        int slen = imin(B, need - n), ns = 0;
        if (o->suffix && o->K > 0 && slen > 0 && key != d->end_id) {
            ns = imin(o->K, ngram_pool_count(o->pool, key));
            for (int s = 0; s < ns; s++) { /* the K newest */
                const int *ph = ngram_pool_get(o->pool, key, s);
                for (int m = 0; m < slen; m++, rows++)
                    o->ttok[rows] = ph[m], o->tpar[rows] = m == 0 ? key_row : rows - 1,
                    o->tdep[rows] = n + 1 + m;
            }
        }
        if (dec_eval(d, DEC_TARGET, o->ft, rows, o->ttok, o->tpar, NULL, rows, o->tlog, 0, err))
            return -1;
        for (int r = 0; r < rows; r++) /* row r sits at L - 1 + its depth */
            o->ttop[r] = dec_propose(d, o->tlog + (size_t)r * V, L + o->tdep[r]);
        /* 3. verify: the draft prefix, then the best suffix, then the bonus token */
        int a = 0, np = 0, ne = 0, best_m = 0;
        if (standard) {
            np = 1 + ouro_walk_sampled(d, o, rows, n, L, &a, &ne);
            best_m = np - 1 - a;
        } else {
            while (a < n && x[a] == o->ttop[a] && x[a] != d->end_id) a++;
            int ended = a < n && x[a] == o->ttop[a], last;
            if (ended) a++;
            last = a;
            for (int i = 0; i <= a; i++) o->path[np++] = i;
            for (int i = 0; i < a; i++) o->em[ne++] = x[i];
            if (a == n && !ended) {
                int best = -1;
                for (int s = 0; s < ns; s++) {
                    int m = 0, prev = key_row, r0 = n + 1 + s * slen, end_hit = 0;
                    while (m < slen && !end_hit && o->ttok[r0 + m] == o->ttop[prev])
                        end_hit = o->ttok[r0 + m] == d->end_id, prev = r0 + m++;
                    if (m > best_m) best = s, best_m = m, ended = end_hit;
                }
                for (int m = 0; m < best_m; m++) {
                    last = n + 1 + best * slen + m;
                    o->path[np++] = last;
                    o->em[ne++] = o->ttok[last];
                }
            }
            if (!ended) o->em[ne++] = o->ttop[last];
        }
        int emitted = dec_emit(d, o->em, ne);
        dec_step_done(d, rows, n + (ns ? slen : 0), a + best_m, emitted);
        if (best_m) o->cnt.suffix_steps++, o->cnt.suffix_tokens += best_m;
        if (o->adapt && n > 0) /* Hugging Face's heuristic schedule (spec.c) */
            o->cur_gamma = a == n ? imin(o->cur_gamma + 2, o->gamma_max)
                                  : (o->cur_gamma > 1 ? o->cur_gamma - 1 : 1);
        /* 4. the pool learns from the verification (§3.3) */
        if (o->inspire && a < n) inspire(o, a, n);
        if (o->refine && slen == B)
            for (int s = 0; s < ns; s++) {
                const int *old = o->ttok + n + 1 + s * slen;
                o->phrase[0] = o->ttop[key_row];
                for (int m = 1; m < B; m++) o->phrase[m] = o->ttop[n + 1 + s * slen + m - 1];
                if (memcmp(old, o->phrase, sizeof(int) * (size_t)B) != 0) o->cnt.refined++;
                ouro_pool_replace(o->pool, key, old, o->phrase);
            }
        if (d->done) break;
        /* 5. commit the accepted path; cut the draft back to what it shares with the text */
        if (fwd_commit(o->ft, o->path, np, err)) return -1;
        int old_L = L;
        memcpy(o->seq + L, o->em, sizeof(int) * (size_t)emitted);
        L += emitted;
        if (o->draft_ok && dec_draft_resync(o->fd, o->dseq, o->seq, old_L, L, err)) return -1;
    }
    o->cnt.pool_phrases = ngram_pool_size(o->pool);
    publish_counts(d, o);
    return 0;
}

static void ouro_destroy(dec *d) {
    ouro *o = d->impl;
    if (!o) return;
    fwd_free(o->ft), fwd_free(o->fd);
    ngram_pool_free(o->pool);
    ouro_window_free(&o->win);
    free(o->tlog), free(o->dlog), free(o->ttok), free(o->tpar), free(o->ttop);
    free(o->dtok), free(o->dpar), free(o->dtop), free(o->rows), free(o->seq), free(o->dseq);
    free(o->path), free(o->em), free(o->phrase);
    free(o->ddep), free(o->tdep), free(o->iota), free(o->dprob);
    free(o);
}

/* ---- the optional members: counters and the pool as state -------------------------------- */

static const stat_def ouro_counters[OC_N] = {
    [OC_DRAFT_PASSES] = {"draft_passes", STAT_INT, STAT_SUM, STAT_DET,
                         "draft passes while drafting (catch-up included, prompt pass not)"},
    [OC_DRAFT_TOKENS] = {"draft_tokens", STAT_INT, STAT_SUM, STAT_DET,
                         "tokens those draft passes produced (section 3.1)"},
    [OC_DRAFT_PHRASE_TOKENS] = {"draft_phrase_tokens", STAT_INT, STAT_SUM, STAT_DET,
                                "of draft_tokens, those taken from pool phrases the draft "
                                "verified"},
    [OC_WINDOW_PHRASES] = {"window_phrases", STAT_INT, STAT_SUM, STAT_DET,
                           "phrases the draft's lookahead window put into the pool"},
    [OC_INSPIRED] = {"inspired", STAT_INT, STAT_SUM, STAT_DET,
                     "new phrases from candidate inspiration (section 3.3)"},
    [OC_REFINED] = {"refined", STAT_INT, STAT_SUM, STAT_DET,
                    "suffixes rewritten by candidate refinement (section 3.3)"},
    [OC_SUFFIX_STEPS] = {"suffix_steps", STAT_INT, STAT_SUM, STAT_DET,
                         "target steps that accepted at least one suffix token (section 3.2)"},
    [OC_SUFFIX_TOKENS] = {"suffix_tokens", STAT_INT, STAT_SUM, STAT_DET,
                          "suffix tokens the target accepted"},
    [OC_POOL_PHRASES] = {"pool_phrases", STAT_INT, STAT_MAX, STAT_DET,
                         "phrases in the pool after the sample (warm=1: it grows over a run)"},
    [OC_STOP_GAMMA] = {"stop_gamma", STAT_INT, STAT_SUM, STAT_DET,
                       "target steps whose draft reached gamma (or the adapted length)"},
    [OC_STOP_P_MIN] = {"stop_p_min", STAT_INT, STAT_SUM, STAT_DET,
                       "target steps whose draft stopped short after a token below p_min"},
    [OC_STOP_END] = {"stop_end", STAT_INT, STAT_SUM, STAT_DET,
                     "target steps whose draft stopped at the end token"},
    [OC_STOP_ROOM] = {"stop_room", STAT_INT, STAT_SUM, STAT_DET,
                      "target steps whose draft was cut by max_new or the draft's context"},
    [OC_DRAFT_GOAL] = {"draft_goal", STAT_INT, STAT_SUM, STAT_DET,
                       "the draft lengths aimed at, summed over target steps (adapt=1 moves it)"},
};

/* The counts of this generate call into the statistics (dec_count_set: they were counted in
 * o->cnt, which ouroboros_counts_get() also reads). */
static void publish_counts(dec *d, const ouro *o) {
    const long v[OC_N] = {o->cnt.draft_passes,   o->cnt.draft_tokens,  o->cnt.draft_phrase_tokens,
                          o->cnt.window_phrases, o->cnt.inspired,      o->cnt.refined,
                          o->cnt.suffix_steps,   o->cnt.suffix_tokens, o->cnt.pool_phrases,
                          o->cnt.stop[0],        o->cnt.stop[1],       o->cnt.stop[2],
                          o->cnt.stop[3],        o->cnt.draft_goal};
    for (int i = 0; i < OC_N; i++) dec_count_set(d, i, (double)v[i]);
}

static int ouro_state_check(const dec *d, char *err) {
    if (!d->param[P_WARM])
        return err_set(err, "%s empties its pool before every prompt (warm=0); use warm=1",
                       d->spec);
    return 0;
}

static int ouro_state_save(const dec *d, const char *path, char *what, size_t n_what, char *err) {
    const ouro *o = d->impl;
    if (ouro_pool_save(o->pool, o->V, path, err)) return -1;
    snprintf(what, n_what, "%ld phrases", (long)ngram_pool_size(o->pool));
    return 0;
}

static int ouro_state_load(dec *d, const char *path, char *err) {
    ouro *o = d->impl;
    return ouro_pool_load(o->pool, o->V, path, err);
}

/* clang-format off */
const dec_vtable dec_ouroboros_vtable = {
    .name = "ouroboros",
    .summary = "Ouroboros: the draft model drafts phrase by phrase from a pool shared with the "
               "target, drafts lengthened by pool suffixes (Zhao et al. 2024)",
    .params = {
        [P_GAMMA] = {"gamma", PARAM_INT, 4, 1, 64, {0}, "minimum draft length (tokens) per target step"},
        [P_W] = {"W", PARAM_INT, 20, 1, 64, {0}, "lookahead window width = phrases kept per key"},
        [P_BETA] = {"beta", PARAM_INT, 8, 1, 16, {0},
         "phrase length without its key token (= the reference code's lookahead_level - 1; "
         "Table 7's beta - 2)"},
        [P_K] = {"K", PARAM_INT, 3, 0, 64, {0}, "candidate suffixes verified by the target"},
        [P_LOOKAHEAD] = {"lookahead", PARAM_INT, 1, 0, 1, {0}, "the draft runs the lookahead window"},
        [P_SUFFIX] = {"suffix", PARAM_INT, 1, 0, 1, {0}, "lengthen drafts with pool suffixes"},
        [P_INSPIRE] = {"inspire", PARAM_INT, 1, 0, 1, {0}, "candidate inspiration from verification"},
        [P_REFINE] = {"refine", PARAM_INT, 1, 0, 1, {0}, "candidate refinement of used suffixes"},
        [P_WARM] = {"warm", PARAM_INT, 1, 0, 1, {0}, "keep the pool across prompts (warm start)"},
        [P_SEED] = {"seed", PARAM_INT, 10, 0, 1000000000, {0}, "seed of the window's initial guesses"},
        [P_TRIM] = {"trim", PARAM_INT, 0, 0, 1, {0},
         "1: cut each draft to exactly gamma tokens (the reference code's cut)", .quiet = 1},
        [P_P_MIN] = {"p_min", PARAM_REAL, 0, 0, 0, {0},
         "stop drafting after a token of draft probability below this (0: never)", .rdef = 0,
         .rmin = 0, .rmax = 1, .quiet = 1},
        [P_ADAPT] = {"adapt", PARAM_INT, 0, 0, 1, {0},
         "1: gamma +2 after a fully accepted draft, else -1 (Hugging Face's heuristic)",
         .quiet = 1},
        [P_GAMMA_MAX] = {"gamma_max", PARAM_INT, 16, 1, 64, {0}, "largest gamma adapt=1 may reach", .quiet = 1},
    },
    .needs_draft = 1,
    .create = ouro_create,
    .generate = ouro_generate,
    .destroy = ouro_destroy,
    .counters = ouro_counters,
    .n_counters = OC_N,
    .state_name = "pool",
    .state_check = ouro_state_check,
    .state_save = ouro_state_save,
    .state_load = ouro_state_load,
    .tune_grid = "gamma=2,4;W=4,8;K=1,3",
};
/* clang-format on */

/* ---- ouroboros.h (for tests and tools; the harness uses the vtable's state hooks) -------- */

static ouro *impl_of(const dec *d, char *err) {
    if (!d || d->vt != &dec_ouroboros_vtable) {
        err_set(err, "decoder '%s' is not ouroboros: it has no phrase pool", d ? d->name : "NULL");
        return NULL;
    }
    return d->impl;
}

int ouroboros_pool_save(const dec *d, const char *path, char *err) {
    ouro *o = impl_of(d, err);
    return o ? ouro_pool_save(o->pool, o->V, path, err) : -1;
}

int ouroboros_pool_load(dec *d, const char *path, char *err) {
    ouro *o = impl_of(d, err);
    return o ? ouro_pool_load(o->pool, o->V, path, err) : -1;
}

int ouroboros_pool_clear(dec *d, char *err) {
    ouro *o = impl_of(d, err);
    if (!o) return -1;
    ngram_pool_clear(o->pool);
    return 0;
}

int ouroboros_counts_get(const dec *d, ouroboros_counts *out, char *err) {
    ouro *o = impl_of(d, err);
    if (!o) return -1;
    *out = o->cnt;
    out->pool_phrases = ngram_pool_size(o->pool);
    return 0;
}
