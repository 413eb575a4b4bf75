/* runner_sample.c: one sample: the decoder's generate call measured and stored, checked
 * against greedy's reference (its margin on a mismatch), the later turns of a conversation
 * (--turns) and the unstored warm-up passes. */
#include "harness/runner_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/err.h"
#include "util/file.h"
#include "util/hash.h"
#include "util/rng.h"

/* ---- one sample --------------------------------------------------------------------------- */

static void on_tokens(void *user, const int *tokens, int n) {
    (void)tokens;
    progress_tokens(&((runner *)user)->prog, n);
}

/* Trace slot 0 is left for the prefill pass, filled after the sample. */
static void on_step(void *user, const dec_step *s) {
    runner *r = user;
    if (r->n_trace < r->cap_trace) r->trace[1 + r->n_trace++] = *s;
}

/* The pass trace grows by doubling; a failed allocation drops the sample's pass trace (counted,
 * reported when the sample is stored) rather than the measurement. */
static void on_pass(void *user, const dec_pass *p) {
    runner *r = user;
    if (r->n_passes == r->cap_passes && !r->passes_lost) {
        int cap = r->cap_passes ? 2 * r->cap_passes : 1024;
        dec_pass *grown = realloc(r->passes, sizeof *grown * (size_t)cap);
        if (grown) r->passes = grown, r->cap_passes = cap;
    }
    if (r->n_passes < r->cap_passes)
        r->passes[r->n_passes++] = *p;
    else
        r->passes_lost = 1;
}

/* The session's environment with Ctrl-C wired in: a signal stops a sample within one pass. */
static dec_env cancellable_env(runner *r) {
    dec_env env = session_env(&r->s);
    env.cancel = runner_cancel_flag();
    return env;
}

dec_env runner_measuring_env(runner *r) {
    dec_env env = cancellable_env(r);
    env.user = r;
    /* No callback at all unless needed: nothing but the decoder runs inside its timing. */
    if (r->prog.live) env.on_tokens = on_tokens;
    if (r->o.trace) env.on_step = on_step, env.on_pass = on_pass;
    return env;
}

/* Standard sampling: outputs are draws, not plain sampling's tokens; they are checked by the
 * rejection tests' statistics (sampling_check) instead of token by token. */
int runner_standard_sampling(const runner *r) {
    return dec_sampling_on(&r->o.sampling) && r->o.sampling.mode == DEC_SAMPLING_STANDARD;
}

/* "tinystories[3] (id 3) lookahead:W=4 repeat 0", for messages ("turn 2" for later turns). */
void runner_where(const runner_prompt *p, const char *spec, int rep, char *buf, size_t n) {
    char turn[24] = "";
    if (p->turn > 1) snprintf(turn, sizeof turn, " turn %d", p->turn);
    snprintf(buf, n, "%s[%d] (id %s)%s %s repeat %d", p->sample->dataset, p->sample->index,
             p->sample->id, turn, spec, rep);
}

/* Greedy's top-1 minus top-2 logit before output position pos: a fresh forward pass over the
 * prompt plus greedy's first pos tokens. With the exact kernels, chunked prefill gives the same
 * bits as greedy's own token-by-token pass (batch invariance, model/forward.h), so this is the
 * margin greedy saw (with --kernels blas it may differ in the last bits). */
static double greedy_margin(runner *r, const runner_prompt *p, int pos, char *err) {
    fwd_ctx *f = r->margin_ctx;
    if (!f && fwd_new(&f, r->s.target, r->s.pool, 64, r->s.kernels, err)) return NAN;
    fwd_allow_nonfinite(f, r->s.allow_nonfinite);
    r->margin_ctx = f;
    int n = p->n_ids + pos;
    int *toks = malloc(sizeof(int) * (size_t)n);
    if (!toks) return err_set(err, "out of memory"), NAN;
    memcpy(toks, p->ids, sizeof(int) * (size_t)p->n_ids);
    memcpy(toks + p->n_ids, p->ref, sizeof(int) * (size_t)pos);
    int rc = fwd_truncate(f, 0, err) || fwd_prefill(f, toks, n, r->logits, err);
    free(toks);
    if (rc) return NAN;
    return dec_sampling_margin(&r->o.sampling, r->logits, r->s.target->cfg.vocab_size,
                               p->n_ids + pos);
}

/* Compares r->out[0..n) with greedy's reference and fills the match fields of s. */
static void check_exact(runner *r, const runner_prompt *p, int n, db_sample *s, const char *shown,
                        int rep, runner_result *res) {
    int pos = 0, m = n < p->n_ref ? n : p->n_ref;
    while (pos < m && r->out[pos] == p->ref[pos]) pos++;
    s->match = pos == n && pos == p->n_ref;
    if (s->match) return;
    char err[ERR_LEN] = "";
    s->diverge_pos = pos;
    s->greedy_token = pos < p->n_ref ? p->ref[pos] : -1;
    s->decoder_token = pos < n ? r->out[pos] : -1;
    s->greedy_margin = pos < p->n_ref ? greedy_margin(r, p, pos, err) : NAN;
    res->mismatches++;
    char w[512], margin[ERR_LEN + 32];
    runner_where(p, shown, rep, w, sizeof w);
    if (!isnan(s->greedy_margin))
        snprintf(margin, sizeof margin, "%.6g", s->greedy_margin);
    else if (pos >= p->n_ref)
        snprintf(margin, sizeof margin, "none (greedy had ended)");
    else
        snprintf(margin, sizeof margin, "unknown (%s)", err);
    progress_note(&r->prog,
                  "decbench: ************************************************************\n"
                  "decbench: *** MISMATCH: %s: the output differs from greedy's\n"
                  "decbench: *** first difference at output position %d (%d greedy tokens, %d from "
                  "the decoder): greedy token %d, decoder token %d (-1: ended)\n"
                  "decbench: *** greedy's top-1 minus top-2 %s there: %s (near 0: a tie broken "
                  "by rounding; large: a decoder bug)\n"
                  "decbench: ************************************************************",
                  w, pos, p->n_ref, n, s->greedy_token, s->decoder_token,
                  dec_sampling_on(&r->o.sampling) ? "score (logit / T + noise)" : "logit", margin);
}

/* Generates one sample with d and stores it. */
int runner_measure_one(runner *r, db *d, int64_t run_id, dec *dc, const char *canon,
                       const char *shown, runner_prompt *p, int rep, runner_result *res,
                       char *err) {
    dec_stats st;
    int n = 0;
    char w[512];
    runner_where(p, shown, rep, w, sizeof w);
    r->n_trace = 0;
    r->n_passes = 0;
    r->passes_lost = 0;
    progress_sample_start(&r->prog, shown);
    int g = dec_generate(dc, p->ids, p->n_ids, p->max_new, r->out, &n, &st, err);
    /* a model file that shrank during the last pass: that pass read zeros, drop the sample */
    if (g == DEC_CANCELLED || runner_changed_file()) return RUNNER_CANCELLED;
    if (g) {
        char e[ERR_LEN];
        snprintf(e, sizeof e, "%s", err);
        return err_set(err, "%s: %s", w, e);
    }
    return runner_store_one(r, d, run_id, dc, canon, shown, p, rep, n, &st, NULL, res, err);
}

int runner_store_one(runner *r, db *d, int64_t run_id, dec *dc, const char *canon,
                     const char *shown, runner_prompt *p, int rep, int n, const dec_stats *stp,
                     const db_batch *batch, runner_result *res, char *err) {
    const ds_sample *x = p->sample;
    dec_stats st = *stp;
    char w[512];
    runner_where(p, shown, rep, w, sizeof w);
    db_sample s = {.dataset = x->dataset,
                   .sample_index = p->key_index,
                   .turn = p->turn,
                   .sample_key = x->id,
                   .category = x->category,
                   .decoder = dec_name(dc),
                   .spec = canon,
                   .repeat = rep,
                   .output_hash = db_output_hash(r->out, n),
                   .batch = batch};
    if (runner_standard_sampling(r)) {
        s.match = runner_is_greedy(canon) ? 1 : -1; /* plain sampling is its own reference */
    } else if (!p->ref) { /* greedy's first output for this prompt: it IS the reference */
        p->ref = malloc(sizeof(int) * (size_t)(n ? n : 1));
        if (!p->ref) return err_set(err, "out of memory");
        memcpy(p->ref, r->out, sizeof(int) * (size_t)n);
        p->n_ref = n;
        s.match = 1;
    } else {
        if (r->test_flip >= 0 && r->test_flip < n && !runner_is_greedy(canon)) {
            r->out[r->test_flip] = (r->out[r->test_flip] + 1) % r->s.target->cfg.vocab_size;
            s.output_hash = db_output_hash(r->out, n);
        }
        check_exact(r, p, n, &s, shown, rep, res);
    }
    int n_trace = 0;
    if (r->o.trace) {
        /* Step 0 is the prefill pass (the framework times step 1 from the prefill's end). */
        int emitted = 0;
        for (int i = 1; i <= r->n_trace; i++) emitted += r->trace[i].emitted;
        r->trace[0] = (dec_step){0, st.prompt_tokens, 0, 0, st.new_tokens - emitted, st.t_prefill};
        n_trace = 1 + r->n_trace;
        if (r->passes_lost)
            progress_note(&r->prog,
                          "decbench: %s: out of memory for the pass trace: stored "
                          "without it",
                          w);
        else
            s.passes = r->passes, s.n_passes = r->n_passes;
    }
    if (db_insert_sample(d, run_id, &s, &st, r->o.trace ? r->trace : NULL, n_trace, NULL, err))
        return -1;
    r->last = st;
    res->measured++;
    progress_sample_done(&r->prog, n, st.t_total);
    return 0;
}

/* Greedy's output for p without storing it (greedy not measured in this run, or resumed). */
int runner_reference(runner *r, runner_prompt *p, char *err) {
    dec_env env = cancellable_env(r);
    if (!r->ref_dec && dec_create(&r->ref_dec, "greedy", &env, err)) return -1;
    dec_stats st;
    int n;
    progress_sample_start(&r->prog, "greedy (reference, not stored)");
    int g = dec_generate(r->ref_dec, p->ids, p->n_ids, p->max_new, r->out, &n, &st, err);
    if (g == DEC_CANCELLED) return RUNNER_CANCELLED;
    if (g) {
        char e[ERR_LEN], w[512];
        snprintf(e, sizeof e, "%s", err);
        runner_where(p, "greedy (reference)", 0, w, sizeof w);
        return err_set(err, "%s: %s", w, e);
    }
    p->ref = malloc(sizeof(int) * (size_t)(n ? n : 1));
    if (!p->ref) return err_set(err, "out of memory");
    memcpy(p->ref, r->out, sizeof(int) * (size_t)n);
    p->n_ref = n;
    return 0;
}

/* ---- later turns (--turns) ---------------------------------------------------------------- */

/* Greedy's answer to prompt p as text, the way FastChat puts it back into the conversation:
 * the output up to (not including) the end token, decoded, stripped of surrounding space. */
static char *answer_text(const runner *r, const runner_prompt *p) {
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m) return NULL;
    int prev = p->ids[p->n_ids - 1];
    for (int i = 0; i < p->n_ref && p->ref[i] != r->s.target->cfg.end_id; i++) {
        size_t k;
        const char *piece = tok_text(r->s.tokenizer, prev, p->ref[i], &k);
        if (piece && k > 0) fwrite(piece, 1, k, m);
        prev = p->ref[i];
    }
    fclose(m);
    char *a = buf, *z = buf + len;
    while (a < z && (*a == ' ' || *a == '\n' || *a == '\t' || *a == '\r')) a++;
    while (z > a && (z[-1] == ' ' || z[-1] == '\n' || z[-1] == '\t' || z[-1] == '\r')) z--;
    memmove(buf, a, (size_t)(z - a));
    buf[z - a] = '\0';
    return buf;
}

int runner_prepare(runner *r, int i, char *err) {
    runner_prompt *p = &r->prompts[i];
    if (p->ids || p->skip) return 0;
    /* greedy's answers to the turns before this one: measured earlier in this process, or an
     * unstored greedy pass (a shard or a resumed run that did not measure them) */
    const char *answers[16];
    char *owned[16] = {0};
    int rc = 0;
    for (int t = 1; t < p->turn && rc == 0; t++) {
        int k = p->first + t - 1;
        rc = runner_prepare(r, k, err);
        if (rc == 0 && r->prompts[k].skip) {
            p->skip = 1; /* an earlier turn did not fit: neither does this one */
            break;
        }
        if (rc == 0 && !r->prompts[k].ref) rc = runner_reference(r, &r->prompts[k], err);
        if (rc == 0 && !(owned[t - 1] = answer_text(r, &r->prompts[k])))
            rc = err_set(err, "out of memory");
        answers[t - 1] = owned[t - 1];
    }
    char *text = NULL;
    int seq = r->s.target->cfg.seq_len;
    if (rc == 0 && !p->skip && ds_turn_prompt(p->set, p->sample, p->turn, answers, &text, err))
        rc = -1;
    size_t bytes;
    if (rc == 0 && !p->skip && !r->o.cut_long && !session_text_fits(&r->s, text, seq, &bytes)) {
        char w[512];
        runner_where(p, "", 0, w, sizeof w);
        if (!r->o.skip_long)
            rc = err_set(err,
                         "%s: the prompt (greedy's earlier answers included) is %zu bytes, more "
                         "than %d tokens (of at most %zu bytes each), but the context length of "
                         "%s is %d: leave such prompts out with --skip-long"
                         ", or keep their last tokens with --cut-long",
                         w, bytes, seq, r->s.token_bytes, r->s.target->path, seq);
        else {
            p->skip = 1;
            progress_note(&r->prog, "note: %s left out: %zu bytes, longer than the context (%d)", w,
                          bytes, seq);
        }
    }
    if (rc == 0 && !p->skip &&
        session_encode_flags(&r->s, text,
                             ds_turn_parse_special(p->set, p->turn) ? TOK_PARSE_SPECIAL : 0,
                             &p->ids, &p->n_ids, err))
        rc = -1;
    free(text);
    for (int t = 0; t < 16; t++) free(owned[t]);
    if (rc || p->skip) return rc;
    if (runner_cut_prompt(r, p)) {
        char w[512];
        runner_where(p, "", 0, w, sizeof w);
        progress_note(&r->prog, "note: %s cut to %d tokens (--cut-long)", w, p->n_ids);
    }
    if (p->n_ids >= seq) {
        char w[512];
        runner_where(p, "", 0, w, sizeof w);
        free(p->ids);
        p->ids = NULL;
        if (!r->o.skip_long)
            return err_set(err,
                           "%s: the prompt (greedy's earlier answers included) is %d tokens but "
                           "the context length of %s is %d: leave such prompts out with "
                           "--skip-long, or keep their last tokens with --cut-long",
                           w, p->n_ids, r->s.target->path, seq);
        p->skip = 1;
        progress_note(&r->prog, "note: %s left out: %d tokens, longer than the context (%d)", w,
                      p->n_ids, seq);
    }
    return 0;
}

/* Unstored passes on the first prompt with a throw-away instance (see runner.h). */
int runner_warm_up(runner *r, const char *canon, const char *shown, char *err) {
    if (r->o.warmup == 0) return 0;
    dec_env env = cancellable_env(r);
    dec *d;
    if (dec_create(&d, canon, &env, err)) return -1;
    char label[64];
    snprintf(label, sizeof label, "%.40s (warm-up)", shown);
    progress_sample_start(&r->prog, label);
    const runner_prompt *p = &r->prompts[0];
    int rc = 0, n;
    dec_stats st;
    for (int i = 0; i < r->o.warmup && rc == 0 && !runner_stopped(); i++)
        rc = dec_generate(d, p->ids, p->n_ids, p->max_new, r->out, &n, &st, err);
    dec_free(d);
    return rc == DEC_CANCELLED ? RUNNER_CANCELLED : rc;
}
