/* sam.c: SAM-Decoding (Hu, Zheng, Chen, Zhang, Wang, "SAM Decoding: Speculative Decoding via
 * Suffix Automaton", arXiv 2411.10666; reference hyx1999/SAM-Decoding, samd/), no draft
 * model.
 *
 * Two suffix automata (decoders/suffix_automaton.h): a dynamic one over the prompt and the
 * output so far, rebuilt for every prompt, and a static one over a datastore of token
 * sequences, built once when the datastore is loaded (`run --state-load FILE`, the suffix
 * tree's file of token sequences: decoders/suffix_tree.h; the sequences are joined with the
 * end token after each one that lacks it, as the reference's add_batch_tokens). A cursor in each
 * tracks the longest suffix of the text that occurs in its automaton, one step per token
 * (transfer_state in samd/sam/dyn_sam.py and static_sam.py). Each step:
 *  1. both cursors are stepped by the current token without being moved (lookup): match
 *     lengths l_dyn and l_static; the static one counts bias tokens less (len_bias);
 *  2. if the larger reaches threshold, the draft is the k tokens that followed the first
 *     occurrence of the match (the state's min_endpos) in that automaton's text, the dynamic one
 *     on ties (samd/draft.py lookup); for the dynamic automaton the match is first shortened
 *     along suffix links while fewer than k + 1 tokens follow its first occurrence and the link
 *     is not the root (dyn_sam.py to_anc), the static one drafts from its match as is;
 *  3. one target pass over the chain [current, draft] verifies it as pld.c does: d_j is accepted
 *     iff it is plain decoding's token after d_{j-1} (dec_accept, in every sampling mode), then
 *     the bonus token; the current token and the accepted ones join the dynamic automaton.
 * The dynamic automaton holds the text without its current token (the reference adds a step's
 * tokens after verifying them), so a match always ends before it and has a continuation.
 *
 * Deviations from the reference, with the reason:
 *  - Below the threshold the reference drafts with an auxiliary drafter (Token Recycling or an
 *    EAGLE head: samd/tree_model/); decbench has neither, so such a step drafts nothing (one row,
 *    plain decoding). threshold=1 drafts on any match.
 *  - The reference always verifies n_predicts = 40 rows, padding a short continuation with token
 *    0; here the draft is the continuation as far as it goes, at most k tokens (the reference's
 *    n_predicts - 1 is k=39; the default k=16 is suffix's budget, measured below), cut after an
 *    end token (nothing follows it) and to what could still be emitted (max_new).
 *  - The reference's datastore builder also adds every vocabulary token as a sequence of its own
 *    (tools/gen_sam_alpaca.py), which only gives each token a state: a match of one token, below
 *    any threshold with its bias; the datastore here is the file's sequences.
 *  - The datastore is bounded (store=N tokens, about 120 bytes each in memory): a larger file is
 *    refused naming the bound. It is static: decoding never changes it, so --state-save writes
 *    the loaded sequences back.
 *  - The matches are tracked exactly (a cursor whose state an append splits moves to the clone);
 *    the reference keeps the unsplit state, which has the same edges until the next append.
 * Measured (docs/measurements/2026-11-29-sam.md: the first 10 TinyStories prompts x 128 new
 * tokens, stories260K; tokens per target step): without a datastore the threshold of 5 is rarely
 * reached (1.07; tau 3.3 when it drafts), threshold=1 drafts as often as pld (1.32, pld 1.33); k
 * changes tau, not tokens per step (k=8, 16, 39: 1.07 each), so fewer rows are cheaper on a CPU;
 * with a datastore of 40 other prompts' outputs 1.68 (bias=0: 2.32), suffix with the same file
 * 3.30.
 * Sampling (decoder.h): each draft token is a fixed guess verified by dec_accept, as in pld.c:
 * coupled mode accepts it iff it is plain sampling's token; standard mode with probability p(x),
 * a rejected one replaced by a draw from p without x, which is the reference's own rule for a
 * sequence draft (samd/utils.py eval_posterior: q(x) = 1, p(x) zeroed and renormalised).
 * Memory: the dynamic automaton is allocated for the context length when the decoder is created
 * (about 120 bytes per token), the static one when a datastore is loaded; generate allocates
 * nothing. Bookkeeping per token is amortised O(1) (the automata's construction and cursors). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/dec_impl.h"
#include "decoders/state_file.h"
#include "decoders/suffix_automaton.h"
#include "decoders/suffix_tree.h"
#include "util/err.h"

enum { P_K, P_THRESHOLD, P_BIAS, P_STORE };
enum {
    SC_DYN_STEPS,
    SC_DYN_TOKENS,
    SC_DYN_ACCEPTED,
    SC_STATIC_STEPS,
    SC_STATIC_TOKENS,
    SC_STATIC_ACCEPTED,
    SC_MATCH_LEN,
    SC_STORE_TOKENS,
    SC_N
};

typedef struct {
    int V;
    suffix_automaton *dyn;   /* prompt + output, the current token not included */
    suffix_automaton *store; /* the datastore (NULL: none loaded) */
    long *store_lens;        /* the datastore's sequences' lengths, n_store_seqs of them */
    long n_store_seqs, store_tokens;
    fwd_ctx *f;
    float *logits;        /* (k + 1) x vocab */
    int *tok, *am, *path; /* k + 1 each: batch tokens, the step's emitted tokens, 0..k */
    int *seq;             /* prompt + output, seq_len */
} sam;

static int sam_create(dec *d, char *err) {
    sam *s = calloc(1, sizeof *s);
    if (!s) return err_set(err, "sam: out of memory");
    d->impl = s;
    const model_config *cfg = &d->env.target->cfg;
    s->V = cfg->vocab_size;
    size_t k = (size_t)d->param[P_K];
    s->logits = malloc(sizeof(float) * (k + 1) * (size_t)s->V);
    s->tok = malloc(sizeof(int) * (k + 1));
    s->am = malloc(sizeof(int) * (k + 1));
    s->path = malloc(sizeof(int) * (k + 1));
    s->seq = malloc(sizeof(int) * (size_t)cfg->seq_len);
    if (!s->logits || !s->tok || !s->am || !s->path || !s->seq)
        return err_set(err, "sam: out of memory");
    for (size_t i = 0; i <= k; i++) s->path[i] = (int)i;
    if (sauto_new(&s->dyn, cfg->seq_len, err)) return -1;
    return dec_fwd_new(d, d->env.target, (int)k + 1, &s->f, err);
}

/* Up to max tokens that follow the first occurrence of state's strings in a's text, into out;
 * cut after end_id. Returns how many. */
static int continuation(const suffix_automaton *a, int state, int max, int end_id, int *out) {
    const int *text = sauto_text(a);
    long from = sauto_first_end(a, state) + 1, n = sauto_len(a);
    int got = 0;
    while (got < max && from + got < n) {
        out[got] = text[from + got];
        if (out[got++] == end_id) break;
    }
    return got;
}

/* dyn_sam.py to_anc: a shorter match while fewer than n_predicts = k + 1 tokens follow the
 * first occurrence, never the root. */
static int to_anc(const suffix_automaton *a, int state, int k) {
    const long n = sauto_len(a);
    while (state != 0 && sauto_link(a, state) != 0 && k + 1 > n - 1 - sauto_first_end(a, state))
        state = sauto_link(a, state);
    return state;
}

/* A text token enters the automata: the static cursor follows it, the dynamic cursor matches it
 * against the text before it, then the dynamic automaton takes it. */
static void feed(sam *s, sauto_match *md, sauto_match *ms, int token) {
    *md = sauto_step(s->dyn, *md, token);
    sauto_append(s->dyn, token);
    *md = sauto_fix(s->dyn, *md);
    if (s->store) *ms = sauto_step(s->store, *ms, token);
}

static int sam_generate(dec *d, const int *prompt, int n_prompt, char *err) {
    sam *s = d->impl;
    const size_t V = (size_t)s->V;
    const int K = d->param[P_K], threshold = d->param[P_THRESHOLD], bias = d->param[P_BIAS];
    sauto_clear(s->dyn);
    sauto_match md = {0, 0}, ms = {0, 0};
    dec_count_set(d, SC_STORE_TOKENS, (double)s->store_tokens);
    memcpy(s->seq, prompt, sizeof(int) * (size_t)n_prompt);
    if (dec_prefill(d, DEC_TARGET, s->f, prompt, n_prompt, s->logits, err)) return -1;
    int len = n_prompt, fed = 0; /* seq[0..fed) are in the dynamic automaton */
    s->seq[len] = s->tok[0] = dec_pick(d, s->logits, len);
    len++;
    dec_emit(d, s->tok, 1);
    while (!d->done) {
        while (fed < len - 1) feed(s, &md, &ms, s->seq[fed++]);
        int left = d->max_new - d->n_out, k = K < left - 1 ? K : left - 1;
        const int cur = s->seq[len - 1];
        sauto_match ld = sauto_step(s->dyn, md, cur);
        sauto_match ls = s->store ? sauto_step(s->store, ms, cur) : (sauto_match){0, 0};
        const int l_static = ls.len - bias, best = ld.len > l_static ? ld.len : l_static;
        int nd = 0, from_static = l_static > ld.len;
        if (k > 0 && best >= threshold)
            nd = from_static
                     ? continuation(s->store, ls.state, k, d->end_id, s->tok + 1)
                     : continuation(s->dyn, to_anc(s->dyn, ld.state, K), k, d->end_id, s->tok + 1);
        if (dec_eval(d, DEC_TARGET, s->f, nd + 1, s->tok, NULL, NULL, nd + 1, s->logits, 0, err))
            return -1;
        /* row i predicts position len + i; draft token tok[1 + i] sits there */
        int acc = 0, next = -1, ended = 0;
        while (acc < nd && !ended) {
            if (!dec_accept(d, s->logits + (size_t)acc * V, NULL, s->tok[1 + acc], len + acc,
                            &next))
                break;
            s->am[acc] = s->tok[1 + acc];
            ended = s->am[acc++] == d->end_id; /* nothing after the end token */
        }
        if (acc == nd && !ended) next = dec_pick(d, s->logits + (size_t)nd * V, len + nd);
        s->am[acc] = next;
        int emitted = dec_emit(d, s->am, ended ? acc : acc + 1);
        memcpy(s->seq + len, s->am, sizeof(int) * (size_t)emitted);
        len += emitted;
        dec_step_done(d, nd + 1, nd, acc, emitted);
        if (nd) { /* a match whose first occurrence ends the text drafts nothing: not counted */
            dec_count(d, SC_MATCH_LEN, from_static ? ls.len : ld.len);
            dec_count(d, from_static ? SC_STATIC_STEPS : SC_DYN_STEPS, 1);
            dec_count(d, from_static ? SC_STATIC_TOKENS : SC_DYN_TOKENS, nd);
            dec_count(d, from_static ? SC_STATIC_ACCEPTED : SC_DYN_ACCEPTED, acc);
        }
        if (d->done) break;
        if (fwd_commit(s->f, s->path, acc + 1, err)) return -1; /* current + accepted drafts */
        s->tok[0] = next;
    }
    return 0;
}

static void sam_destroy(dec *d) {
    sam *s = d->impl;
    if (!s) return;
    fwd_free(s->f);
    sauto_free(s->dyn), sauto_free(s->store);
    free(s->store_lens);
    free(s->logits), free(s->tok), free(s->am), free(s->path), free(s->seq);
    free(s);
}

/* ---- counters and the datastore -------------------------------------------------------------- */

static const stat_def sam_counters[SC_N] = {
    [SC_DYN_STEPS] = {"dyn_steps", STAT_INT, STAT_SUM, STAT_DET,
                      "target steps that verified a draft from the dynamic automaton (prompt "
                      "and output so far)"},
    [SC_DYN_TOKENS] = {"dyn_tokens", STAT_INT, STAT_SUM, STAT_DET,
                       "tokens drafted from the dynamic automaton"},
    [SC_DYN_ACCEPTED] = {"dyn_accepted", STAT_INT, STAT_SUM, STAT_DET,
                         "of dyn_tokens, those accepted"},
    [SC_STATIC_STEPS] = {"static_steps", STAT_INT, STAT_SUM, STAT_DET,
                         "target steps that verified a draft from the static automaton (the "
                         "datastore)"},
    [SC_STATIC_TOKENS] = {"static_tokens", STAT_INT, STAT_SUM, STAT_DET,
                          "tokens drafted from the static automaton"},
    [SC_STATIC_ACCEPTED] = {"static_accepted", STAT_INT, STAT_SUM, STAT_DET,
                            "of static_tokens, those accepted"},
    [SC_MATCH_LEN] = {"match_len", STAT_INT, STAT_SUM, STAT_DET,
                      "match lengths the drafts followed, before the static bias (mean: / "
                      "(dyn_steps + static_steps))"},
    [SC_STORE_TOKENS] = {"store_tokens", STAT_INT, STAT_MAX, STAT_DET,
                         "tokens of the datastore's automaton (sequences and their end tokens; "
                         "0: none loaded)"},
};

/* Loading: counts the file's sequences and tokens, then fills the new automaton. */
typedef struct {
    sam *s;
    suffix_automaton *a;
    long seqs, tokens, *lens;
    int last, end_id;
} loader;

static void close_seq(loader *l) {
    if (l->seqs == 0 || l->last == l->end_id) return;
    l->tokens++;
    if (l->a) sauto_append(l->a, l->end_id);
}

static void load_begin(void *u) {
    loader *l = u;
    close_seq(l);
    l->seqs++;
}

static void load_token(void *u, int tok) {
    loader *l = u;
    l->tokens++, l->last = tok;
    if (l->lens) l->lens[l->seqs - 1]++;
    if (l->a) sauto_append(l->a, tok);
}

static int sam_state_load(dec *d, const char *path, char *err) {
    sam *s = d->impl;
    unsigned char *buf;
    size_t size = 0;
    if (sf_read(path, "datastore", &buf, &size, err)) return -1;
    loader l = {.s = s, .end_id = d->end_id, .last = -1};
    stree_sink sink = {load_begin, load_token, &l};
    int rc = stree_file_parse(buf, size, s->V, path, &sink, err);
    if (rc == 0) close_seq(&l);
    if (rc == 0 && l.tokens > d->param[P_STORE])
        rc = err_set(err,
                     "%s: a datastore of %ld tokens (end tokens included), more than "
                     "store=%d",
                     path, l.tokens, d->param[P_STORE]);
    suffix_automaton *a = NULL;
    long *lens = NULL, seqs = l.seqs, tokens = l.tokens;
    if (rc == 0 && tokens > 0 && sauto_new(&a, tokens, err)) rc = -1;
    if (rc == 0 && seqs > 0 && !(lens = calloc((size_t)seqs, sizeof *lens)))
        rc = err_set(err, "%s: out of memory for %ld sequences", path, seqs);
    if (rc == 0) {
        l = (loader){.s = s, .a = a, .lens = lens, .end_id = d->end_id, .last = -1};
        stree_file_parse(buf, size, s->V, path, &sink, err);
        close_seq(&l);
        sauto_free(s->store), free(s->store_lens);
        s->store = a, s->store_lens = lens, s->n_store_seqs = seqs, s->store_tokens = tokens;
        a = NULL, lens = NULL;
    }
    sauto_free(a), free(lens), free(buf);
    return rc;
}

/* The loaded sequences, without the end tokens that joined them. */
static int sam_state_save(const dec *d, const char *path, char *what, size_t n_what, char *err) {
    const sam *s = d->impl;
    long n = 0;
    int *tok = s->store_tokens ? malloc(sizeof(int) * (size_t)s->store_tokens) : NULL;
    if (s->store_tokens && !tok) return err_set(err, "%s: out of memory", path);
    const int *text = s->store ? sauto_text(s->store) : NULL;
    for (long i = 0, at = 0; i < s->n_store_seqs; i++) {
        for (long j = 0; j < s->store_lens[i]; j++) tok[n++] = text[at++];
        if (text[at - 1] != d->end_id) at++; /* the joining end token */
    }
    long written = 0;
    int rc = stree_file_write(path, s->V, tok, s->store_lens, s->n_store_seqs, &written, err);
    free(tok);
    if (rc == 0) snprintf(what, n_what, "%ld sequences, %ld tokens", s->n_store_seqs, written);
    return rc;
}

/* clang-format off */
const dec_vtable dec_sam_vtable = {
    .name = "sam",
    .summary = "SAM-Decoding: drafts from suffix automata of the text so far and of a datastore, "
               "no draft model (Hu et al. 2024)",
    .params = {
        [P_K] = {"k", PARAM_INT, 16, 1, 128, {0},
         "draft tokens after a match at most (the reference's n_predicts - 1: 39)"},
        [P_THRESHOLD] = {"threshold", PARAM_INT, 5, 1, 1 << 20, {0},
         "shortest match (tokens, the static one after its bias) that drafts"},
        [P_BIAS] = {"bias", PARAM_INT, 5, 0, 1 << 20, {0},
         "tokens a datastore match counts less than a match in the text"},
        [P_STORE] = {"store", PARAM_INT, 1 << 22, 1, 1 << 28, {0},
         "the datastore's bound in tokens (about 120 bytes of memory each)"},
    },
    .create = sam_create,
    .generate = sam_generate,
    .destroy = sam_destroy,
    .counters = sam_counters,
    .n_counters = SC_N,
    .state_name = "datastore",
    .state_save = sam_state_save,
    .state_load = sam_state_load,
    .tune_grid = "k=4,8,16;threshold=2,5",
};
/* clang-format on */
