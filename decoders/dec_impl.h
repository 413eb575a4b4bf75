/* dec_impl.h: what decoder implementations share (not for the harness: it uses decoder.h).
 *
 * A decoder file defines one dec_vtable (name, parameters, create/generate/destroy, and the
 * optional members: its own counters, state save/load, tune grid) and adds one line to
 * registry.c. Its parameter table is indexed by the decoder's own enum with designated
 * initializers (`[P_W] = {"W", PARAM_INT, ...}`), so an index cannot drift from its row; the
 * count is the table's rows up to the first empty one (dec_n_params), never written by hand.
 * Values: d->param[P_X] (PARAM_INT, PARAM_ENUM: the choice's index, PARAM_LIST: the count),
 * d->rparam[P_X] (PARAM_REAL), dec_param_list(d, P_X, &n) (PARAM_LIST's values). The
 * framework parses the spec against the parameter table, owns the output buffer and the statistics,
 * and gives every decoder the same three helpers: dec_eval()  one timed, counted forward pass of
 * the target or the draft; dec_emit()  append accepted tokens, stopping at max_new or right after
 * the end token; dec_step_done() close a target step: histograms, acceptance by position, trace
 * callback. */
#ifndef DECODERS_DEC_IMPL_H
#define DECODERS_DEC_IMPL_H

#include "decoders/decoder.h"
#include "util/rng.h"

#define DEC_MAX_PARAMS 16
#define DEC_MAX_LIST 16 /* values of a PARAM_LIST */

/* PARAM_LIST: up to DEC_MAX_LIST integers in min..max joined by '-' ("shape=4-2-2-1"; "1..4"
 * stands for 1-2-3-4; empty only when its default is: "layers="): not
 * ',' (which separates parameters) nor ';' (which separates a sweep grid's keys), so the
 * canonical spec parses back and a list is one word of a grid. On input, bare comma-separated
 * values after a list continue it ("tree:shape=4,2,2,1" is "tree:shape=4-2-2-1"). d->param[]
 * holds the list's length; dec_param_list() gives its values. */
typedef enum { PARAM_INT, PARAM_ENUM, PARAM_LIST, PARAM_REAL, PARAM_STR } param_kind;
/* PARAM_STR: a word of at most DEC_MAX_STR - 1 bytes (a file: rest:ds=PATH) without ',', ';'
 * or '=', which the spec and a sweep grid use as separators; its value is d->str[P_X], "" by
 * default, and the canonical spec leaves it out while it is "". */
#define DEC_MAX_STR 256

typedef struct {
    const char *key;
    param_kind kind;
    int def, min, max;      /* PARAM_INT: default and range; PARAM_ENUM: default index;
                               PARAM_LIST: the range of each value (def unused) */
    const char *choices[6]; /* PARAM_ENUM: the names, value = index */
    const char *help;
    const char *def_list; /* PARAM_LIST: the default, "4-2-2-1" */
    double rdef, rmin, rmax; /* PARAM_REAL: default and range (its value: d->rparam[]) */
    /* 1: the canonical spec lists this parameter only when it differs from its default. For
     * parameters added to a decoder after its specs were stored (runs, CI baselines): its old
     * specs keep their strings, so compare and --resume still match them. */
    int quiet;
    /* PARAM_ENUM only, optional: the parameters choice c stands for ("refill=lade,full_bonus=0"),
     * NULL for none. A named preset (lookahead:preset=lade) is a promise that every parameter
     * is set the way a reference implementation runs it: the parser sets them, and refuses a
     * spec that gives one of them another value (lookahead:preset=lade,refill=align). The
     * canonical spec lists the preset and the values it set, so it parses back the same. */
    const char *sets[6];
} param_def;

typedef struct dec_vtable {
    const char *name;
    const char *summary;
    param_def params[DEC_MAX_PARAMS]; /* rows up to the first empty one (dec_n_params) */
    int needs_draft; /* 1: a draft model is required */
    /* Allocate everything the decoder needs for any prompt (forward contexts, pools, buffers):
     * generate() must not allocate. d->param[] holds the parsed values. */
    int (*create)(dec *d, char *err);
    /* Produce tokens with dec_emit() until d->done. The prompt is already validated. */
    int (*generate)(dec *d, const int *prompt, int n_prompt, char *err);
    void (*destroy)(dec *d);

    /* ---- Optional members: leave them out (NULL / 0) when the decoder has no use for them.
     * New optional members are appended here, so existing decoders need no change. ---- */

    /* The decoder's own counters (tree size, accepted depth, suffix hits, ...): a static
     * table of n_counters (at most STAT_MAX_COUNTERS) definitions, whose values the decoder
     * fills during generate() with dec_count() / dec_count_set() (index = row of the table).
     * The framework zeroes them before each generate(); the harness stores every one per
     * sample (results: counters table, zeros included) and `report --layout counters` and
     * `compare` (the STAT_DET ones) use them. Names: [a-z0-9_]+, unique in the table. */
    const stat_def *counters; /* can be NULL */
    int n_counters;

    /* State the decoder keeps across generate() calls (Ouroboros' phrase pool, a suffix
     * tree), to a file and back: `decbench run --state-save/--state-load FILE` use these for
     * warm starts across runs. state_name names it in messages ("pool"). */
    const char *state_name; /* can be NULL: no state */
    /* Can be NULL (always usable): fails with a one-line reason when this instance's
     * parameters make saved state meaningless (Ouroboros with warm=0 empties its pool before
     * every prompt). Reads d->param only (not d->impl): dec_describe calls it on a spec's
     * parsed parameters, with nothing created. */
    int (*state_check)(const dec *d, char *err);
    /* Writes the state to path (d unchanged), through path.tmp and a rename so a failed save
     * leaves an older file intact; may describe what it wrote in what[0..n_what) ("312
     * phrases"). Can be NULL only when state_name is. */
    int (*state_save)(const dec *d, const char *path, char *what, size_t n_what, char *err);
    /* Replaces the state by the file's content, checking the whole file first: on error the
     * state is unchanged and err names the file and what is wrong. Can be NULL only when
     * state_name is. */
    int (*state_load)(dec *d, const char *path, char *err);

    /* The values `decbench tune` probes on a CPU, cheapest first, in `sweep --grid` syntax
     * ("gamma=1,2,4"; the first key varies slowest). NULL: tune probes the defaults only. */
    const char *tune_grid;
} dec_vtable;

/* Whether vt's optional members are consistent (counter table within STAT_MAX_COUNTERS, unique
 * [a-z0-9_] names with definitions; state hooks complete). A programming error in a decoder:
 * dec_create() refuses such a decoder with this message rather than storing wrong numbers. */
int dec_vtable_check(const dec_vtable *vt, char *err);

typedef enum { DEC_TARGET = 0, DEC_DRAFT = 1 } dec_which;

struct dec {
    const dec_vtable *vt;
    dec_env env;
    int param[DEC_MAX_PARAMS];
    int list[DEC_MAX_PARAMS][DEC_MAX_LIST]; /* PARAM_LIST values; param[i] is their count */
    double rparam[DEC_MAX_PARAMS]; /* PARAM_REAL values (as printed in the spec) */
    char str[DEC_MAX_PARAMS][DEC_MAX_STR]; /* PARAM_STR values */
    char name[32];
    char spec[512];
    void *impl; /* the decoder's own state */
    /* per-generate state, owned by the framework */
    int *out;
    int n_out, max_new, done;
    int cancelled; /* a forward pass was refused because env.cancel was raised */
    int end_id;
    dec_stats *st;
    double t_start, t_step;
    int n_steps;
    /* sampling (dec_env.sampling at temperature > 0), owned by the framework: working memory
     * of decoders/sampling.h and three distributions of vocab doubles (target, draft,
     * residual), allocated by dec_create, NULL at temperature 0 */
    struct samp_work *sw;
    double *sp, *sq, *sr;
};

/* The rows of vt's parameter table (up to the first without a key). */
int dec_n_params(const dec_vtable *vt);
/* The values of PARAM_LIST parameter i; *n receives their count. */
const int *dec_param_list(const dec *d, int i, int *n);

/* A target or draft forward pass (see fwd_eval), timed into t_target/t_draft and counted as a
 * step with its rows. is_prefill: the prompt pass (its rows are not counted as rows fed). */
int dec_eval(dec *d, dec_which which, fwd_ctx *f, int n, const int *tokens, const int *parent,
             const int *out_rows, int n_out, float *logits, int is_prefill, char *err);

/* dec_eval for fwd_eval_more(): n more rows after those of the last pass(es) still in f's
 * scratch (a tree evaluated level by level); parent holds scratch rows, out_rows this call's. */
int dec_eval_more(dec *d, dec_which which, fwd_ctx *f, int n, const int *tokens, const int *parent,
                  const int *out_rows, int n_out, float *logits, char *err);

/* Records one pass of the pass trace (env.on_pass) that dec_eval did not run: a draft head's
 * forward (eagle, medusa: their drafter is a head, not a draft model, so it is traced as the
 * draft) with `rows` rows, `logit_rows` rows through a classifier, after `context` rows of the
 * head's own cache, taking `seconds`. Counts nothing: the caller keeps its statistics. */
void dec_trace(dec *d, dec_which which, int rows, int logit_rows, int context, int is_prefill,
               double seconds);

/* Appends up to n tokens; stops after max_new or right after the end token (which is
 * emitted). Returns how many were appended; sets d->done when generation is over. */
int dec_emit(dec *d, const int *tokens, int n);

/* Adds v to / sets the decoder's own counter i (a row of its vtable's counters table). */
static inline void dec_count(dec *d, int i, double v) {
    d->st->counters[i] += v;
}
static inline void dec_count_set(dec *d, int i, double v) {
    d->st->counters[i] = v;
}

/* Closes one target verification step: `drafted` tokens were offered on the best path, the
 * first `accepted` matched, `emitted` tokens were appended. Updates the histogram and the
 * per-position counts, and calls the trace callback. Not called for the prefill pass. */
void dec_step_done(dec *d, int rows, int drafted, int accepted, int emitted);

/* Prefills the target (or draft) context with the prompt: resets it, evaluates (in chunks of
 * 64 rows, checking env.cancel before each), leaves the last logits. Counts one step of
 * `which`; its time goes to t_prefill (either model) and t_target or t_draft. */
int dec_prefill(dec *d, dec_which which, fwd_ctx *f, const int *prompt, int n_prompt, float *logits,
                char *err);

/* dec_prefill whose last pass carries more rows, as LADE's first step evaluates the prompt and
 * its lookahead window together: prefills prompt[0..n_before) in chunks, then evaluates the
 * batch tokens/parent[0..n) (fwd_eval), whose first n_commit rows (1..64) are the rest of the
 * prompt as a chain and the others a tree below them, and commits those n_commit rows. logits
 * receives out_rows' logits. One step of `which`, prefill time; the extra rows are not counted
 * as rows fed (they are part of the prompt pass). */
int dec_prefill_batch(dec *d, dec_which which, fwd_ctx *f, const int *prompt, int n_before, int n,
                      const int *tokens, const int *parent, int n_commit, const int *out_rows,
                      int n_out, float *logits, char *err);

/* After a target step of a draft-model decoder (spec, ouroboros): the draft's KV cache holds
 * dseq[0..fwd_n_past(fd)); the text is now seq[0..L), of which seq[0..old_L) predates the
 * step and is in the cache as far as the cache reaches. Keeps the longest cached prefix that
 * agrees with the text, short of its last token (the next step feeds that one), and truncates
 * the rest of the draft's cache. */
int dec_draft_resync(fwd_ctx *fd, const int *dseq, const int *seq, int old_L, int L, char *err);

/* The fresh guess for position p of a Jacobi-style window, given the known tokens ctx[0..len)
 * (the prompt, then the output): with `random` a uniform token of the vocabulary drawn from r,
 * else the latest known token at p - period, p - 2 period, ... (when the context is shorter
 * than that, ctx[p % len]). jacobi.c fills its window with it (period = window), lookahead.c
 * its level 0 and fresh columns (period W-1), which is why lookahead:W=m+1,N=2,G=0 reproduces
 * jacobi:window=m step for step (tests/test_lookahead.c). */
int dec_guess(const int *ctx, int len, int p, int period, int random, rng_state *r, int vocab);

/* ---- choosing and verifying tokens ------------------------------------------------------
 * Every decoder chooses tokens through these (never fwd_argmax directly), so that temperature
 * 0 is greedy decoding with exactly the bits and figures of before, and T > 0 samples in the
 * mode of d->env.sampling (decoder.h; the arithmetic and the noise are in sampling.h). `pos`
 * is always the position of the token being chosen: the prompt holds positions
 * 0..n_prompt-1, the first new token is at n_prompt, and a row at position q predicts q + 1.
 * In standard mode dec_accept, dec_accept_node and dec_tree_walk count their rejection tests
 * in the statistics (samp_tests, samp_accepts, and the expected acceptances samp_expected with
 * their variance samp_variance: the check `run` prints). */

/* Plain decoding's token for pos from a target row: the argmax; coupled: the Gumbel pick;
 * standard: a draw from the row's distribution (stream SAMP_PICK). */
int dec_pick(dec *d, const float *logits, int pos);

/* A guess for pos that verification will check (Jacobi and lookahead windows, n-gram
 * harvests, Ouroboros' phrase drafts): dec_pick in greedy and coupled mode, where the check is
 * a match, and the argmax in standard mode, where the rejection rule accepts a fixed guess x
 * with probability p(x), largest at the mode (LADE's guesses are argmax too). */
int dec_propose(dec *d, const float *logits, int pos);

/* A draft model's token for pos from its row dl: the argmax; coupled: the pick with the
 * target's noise (the same g(seed, pos, .): drafter-invariant speculative decoding, Daliri et
 * al., arXiv 2408.07978); standard: a draw from the draft's distribution q (stream SAMP_DRAFT,
 * id = index among siblings drawn for one position, 0 for a chain). Verify it with
 * dec_accept / dec_accept_node passing the same row. */
int dec_draft_pick(dec *d, const float *dl, int pos, int index);

/* The draft model's probability of token x in row dl, llama.cpp's --draft-p-min measure: the
 * softmax at temperature 1 over the 10 largest logits (its draft sampler is top-k 10), 0 when
 * x is not among them. For dynamic draft lengths (spec, ouroboros: p_min). */
double dec_draft_prob(const float *dl, int vocab, int x);

/* Verifies the proposal x for pos against the target row tl. dl: the draft row x was drawn
 * from by dec_draft_pick, or NULL for a fixed guess. Returns 1 if x is accepted, else 0 with
 * *tok = the token to emit at pos instead:
 *   greedy / coupled: accepted iff x == dec_pick(tl, pos); *tok = that pick;
 *   standard: accepted with probability min(1, p(x) / q(x)) (for a fixed guess q is the point
 *   mass at x: p(x)); else *tok is drawn from the residual norm(max(0, p - q)) (Leviathan et
 *   al., arXiv 2211.17192, Algorithm 1; Chen et al., arXiv 2302.01318). */
int dec_accept(dec *d, const float *tl, const float *dl, int x, int pos, int *tok);

/* A chain of proposals x[0..g) for positions pos0.. verified as spec.c does: tlog holds g + 1
 * target rows (row i chooses the token at pos0 + i), dlog the g draft rows x[i] was drawn from
 * (dec_draft_pick; NULL: fixed guesses). Accepts x[0..a) by dec_accept in order and writes the
 * token after them to x[a]: the replacement of the first rejected proposal, or after all g
 * the bonus, dec_pick of row g. An accepted end token ends it there (*ended = 1, nothing at
 * x[a]). Returns a; the tokens to emit are x[0..a+1), or x[0..a) when *ended. */
int dec_accept_chain(dec *d, const float *tlog, const float *dlog, int *x, int g, int pos0,
                     int *ended);

/* Several proposals x[0..n) for one position (siblings in a tree): returns the index of the
 * accepted one, or -1 with *tok drawn from the final residual. dl == NULL: fixed guesses (a
 * rejected guess's probability is set to 0 and p renormalised: SpecInfer's rule for
 * deterministic candidates, LADE's verification); else dl[i] is the draft row x[i] was drawn
 * from, the x[i] being independent draws (SpecInfer's multi-step speculative sampling: each
 * rejection replaces p by norm(max(0, p - q))). Greedy / coupled: the first x[i] equal to the
 * pick. */
int dec_accept_node(dec *d, const float *tl, const float *const *dl, const int *x, int n, int pos,
                    int *tok);

/* A tree of proposals hanging below a root row, verified from the root down: what a tree
 * decoder needs (lookahead and Ouroboros use it in standard mode). Indexed by the rows of one
 * target pass: tok[r]; par[r] (< r); trow[r], r's row in tl (-1: not computed); drow[r], r's
 * row in dl when r was drawn from a draft model (drow == NULL: every proposal is a fixed
 * guess). */
typedef struct {
    const int *tok, *par, *trow, *drow;
    const float *tl, *dl;
} dec_tree;

/* Walks the tree from `root` (its token at root_pos) over the candidate rows cand[0..nc) (each
 * a child of the root or of an earlier candidate): S = {root}; the candidates whose parent is
 * in S are proposals for the next position, their distinct tokens in order of first
 * appearance (every one of them when drawn from a draft) verified by dec_accept_node against
 * the row of S's first member; the accepted token's rows become S (duplicate prefixes merge:
 * same tokens, same logits by batch invariance). Stops at a rejection (*next = the residual's
 * token), at an accepted end token (*next = -1), when S has no candidate children (*next =
 * dec_pick of its row: the bonus token) or no logits (*next = -1). Greedy and coupled mode
 * thus accept the deepest path that plain decoding confirms. Returns the accepted depth k;
 * path[0] = root and path[1..k] a root-to-node path of accepted rows (for fwd_commit). */
int dec_tree_walk(dec *d, const dec_tree *t, int root, int root_pos, const int *cand, int nc,
                  int *path, int *next);

/* Creates a forward context for model m with room for max_batch rows (at least 64, so the
 * prompt prefills in chunks of that size). */
int dec_fwd_new(dec *d, const model *m, int max_batch, fwd_ctx **out, char *err);

#endif
