/* test_spec.c: speculative decoding (decoders/spec.c) emits exactly greedy's tokens.
 *  1. real models: stories260K target with llama2xs draft and the reverse, the first 20
 *     TinyStories prompts x 256 new tokens (the 256-token draft runs out of context on the
 *     way: the fallback to plain target steps is exercised on every prompt);
 *  2. synthetic grid: gamma 1/3/8 x a draft that agrees on everything (the target itself), a
 *     draft that disagrees on everything (another seed: acceptance ~0) x max_new 0/1/2/37 x
 *     one-token and longer prompts;
 *  3. context edges: a prompt near the target's seq_len (drafts trimmed), a draft whose context
 *     is shorter than the prompt (never drafts) or runs out mid-way;
 *  4. the end token arriving inside an accepted run: stop right there, nothing after it;
 *  5. statistics add up (steps, rows, drafted, accepted, histograms, by position). */
#include <stdlib.h>
#include <string.h>

#include "datasets/dataset.h"
#include "decoders/decoder.h"
#include "model/synth.h"
#include "model/tokenizer.h"
#include "tests/testutil.h"
#include "util/err.h"

#define MAX_OUT 600

typedef struct {
    int end_inside; /* steps where an accepted drafted end token closed the output */
} trace;

static void on_step(void *user, const dec_step *s) {
    trace *t = user;
    if (s->accepted > 0 && s->emitted == s->accepted) t->end_inside++;
}

/* Generates with `spec` and with greedy; CHECKs equality and the statistics' invariants.
 * Returns 1 if the outputs are equal. */
static int got[MAX_OUT], n_got; /* the last output of check_exact */

static int check_exact(const model *tm, const model *dm, const char *spec, const int *prompt,
                       int n_prompt, int max_new, dec_stats *st, trace *tr, const char *what) {
    char err[ERR_LEN];
    static int want[MAX_OUT];
    n_got = -1;
    int n_want = 0;
    dec_env genv = {.target = tm, .kernels = KERN_EXACT};
    dec_env env = {
        .target = tm, .draft = dm, .kernels = KERN_EXACT, .on_step = on_step, .user = tr};
    dec *g, *d;
    dec_stats gst;
    CHECK(dec_create(&g, "greedy", &genv, err) == 0);
    CHECK(dec_generate(g, prompt, n_prompt, max_new, want, &n_want, &gst, err) == 0);
    dec_free(g);
    if (dec_create(&d, spec, &env, err)) {
        CHECK_MSG(0, "%s: %s", spec, err);
        return 0;
    }
    int rc = dec_generate(d, prompt, n_prompt, max_new, got, &n_got, st, err);
    CHECK_MSG(rc == 0, "%s %s: %s", what, spec, err);
    dec_free(d);
    int same = n_got == n_want && memcmp(got, want, sizeof(int) * (size_t)n_want) == 0;
    int first = 0;
    while (first < n_got && first < n_want && got[first] == want[first]) first++;
    CHECK_MSG(same, "%s %s: %d tokens vs greedy's %d, first difference at %d", what, spec, n_got,
              n_want, first);
    /* invariants of the statistics */
    long hist = 0, hist_acc = 0;
    for (int k = 0; k <= DEC_HIST_MAX; k++)
        hist += st->accept_hist[k], hist_acc += k * st->accept_hist[k];
    CHECK_MSG(st->new_tokens == n_got && (n_got == 0 || hist == st->target_steps - 1),
              "%s %s: %ld histogram entries for %ld target steps", what, spec, hist,
              st->target_steps);
    CHECK(hist_acc == st->accepted && st->accepted <= st->drafted);
    CHECK(n_got == 0 || st->target_steps <= n_got);
    CHECK_MSG(st->accepted + st->target_steps >= n_got, "%s %s: %ld accepted + %ld steps < %d",
              what, spec, st->accepted, st->target_steps, n_got);
    CHECK(st->pos_tried[0] >= st->pos_accepted[0]);
    return same;
}

static void test_real(const model *tm, const model *dm, const char *what, int n_prompts) {
    char err[ERR_LEN];
    tok *t;
    ds_set *ds;
    CHECK_MSG(tok_load(&t, test_shared("models/tok512.bin"), err) == 0, "%s", err);
    CHECK_MSG(ds_open(&ds, "tinystories", "raw", test_shared("datasets"), err) == 0, "%s", err);
    const char *specs[] = {"spec:gamma=4", "spec:gamma=1", "spec:gamma=8"};
    for (int si = 0; si < 3; si++) {
        long new_tokens = 0, steps = 0, drafted = 0, accepted = 0, equal = 0;
        int n = si == 0 ? n_prompts : 4; /* every prompt at the default, a few at 1 and 8 */
        for (int i = 0; i < n; i++) {
            int ids[1024], n_ids;
            CHECK(tok_encode(t, ds_get(ds, i)->prompt, 1, ids, &n_ids, err) == 0);
            dec_stats st;
            trace tr = {0};
            char label[64];
            snprintf(label, sizeof label, "%s prompt %d", what, i);
            equal += check_exact(tm, dm, specs[si], ids, n_ids, 256, &st, &tr, label);
            new_tokens += st.new_tokens, steps += st.target_steps;
            drafted += st.drafted, accepted += st.accepted;
        }
        fprintf(stderr,
                "%s %s: %ld/%d prompts equal to greedy, %.2f tokens per target step, "
                "%.0f%% of drafts accepted\n",
                what, specs[si], equal, n, (double)new_tokens / steps,
                100.0 * accepted / (drafted ? drafted : 1));
        CHECK_MSG((double)new_tokens / steps > 1.3, "%s: speculative decoding should beat greedy",
                  what);
    }
    ds_free(ds);
    tok_free(t);
}

/* The end token inside an accepted run: with the target as its own draft every draft is
 * accepted, so a story's end token arrives as a drafted token with more drafts behind it. */
static void test_end_inside(const model *m) {
    char err[ERR_LEN];
    tok *t;
    ds_set *ds;
    CHECK_MSG(tok_load(&t, test_shared("models/tok512.bin"), err) == 0, "%s", err);
    CHECK_MSG(ds_open(&ds, "tinystories", "raw", test_shared("datasets"), err) == 0, "%s", err);
    int cases = 0;
    for (int i = 0; i < 20 && cases < 3; i++) {
        int ids[1024], n_ids;
        CHECK(tok_encode(t, ds_get(ds, i)->prompt, 1, ids, &n_ids, err) == 0);
        dec_stats st;
        trace tr = {0};
        check_exact(m, m, "spec:gamma=8", ids, n_ids, 400, &st, &tr, "end inside");
        const int *out = got, n_out = n_got;
        if (!tr.end_inside) continue;
        cases++;
        /* the end token is the last one emitted, well before max_new; nothing follows it */
        CHECK_MSG(n_out > 0 && n_out < 400 && out[n_out - 1] == m->cfg.end_id,
                  "prompt %d: %d tokens, last %d", i, n_out, n_out ? out[n_out - 1] : -1);
        for (int k = 0; k + 1 < n_out; k++) CHECK(out[k] != m->cfg.end_id);
        CHECK(tr.end_inside == 1);
    }
    CHECK_MSG(cases >= 1, "no prompt ended inside an accepted run (%d)", cases);
    ds_free(ds);
    tok_free(t);
}

/* A synthetic model whose classifier is the embedding of another seed (*donor, to be closed
 * after it): with the tied random weights synth_model makes, x . x dominates the logits and
 * greedy repeats the last token, which any draft would predict. */
static model *synth_untied(const char *config, uint64_t seed, model **donor) {
    char err[ERR_LEN];
    model_config c;
    model *m = NULL;
    CHECK(synth_config(config, &c, err) == 0);
    CHECK(synth_model(&m, &c, seed, err) == 0);
    CHECK(synth_model(donor, &c, seed + 1000, err) == 0);
    m->wcls = (*donor)->tok_embd;
    return m;
}

static void test_synthetic(void) {
    model *donors[3];
    model *tm = synth_untied("64,160,2,4,2,512,512", 1, &donors[0]);
    model *dm = synth_untied("64,160,2,4,2,512,512", 2, &donors[1]);
    /* short context (64) and another shape */
    model *dshort = synth_untied("48,96,2,4,4,512,64", 3, &donors[2]);
    int prompt[600];
    for (int i = 0; i < 600; i++) prompt[i] = i == 0 ? 1 : 3 + (i * 37) % 500;
    const int gammas[] = {1, 3, 8}, max_news[] = {0, 1, 2, 37}, lens[] = {1, 9};
    char spec[64], what[96];
    for (int gi = 0; gi < 3; gi++)
        for (int mi = 0; mi < 4; mi++)
            for (int li = 0; li < 2; li++)
                for (int di = 0; di < 2; di++) {
                    const model *draft = di == 0 ? tm : dm;
                    snprintf(spec, sizeof spec, "spec:gamma=%d", gammas[gi]);
                    snprintf(what, sizeof what, "synthetic %s draft, prompt %d, max_new %d",
                             di == 0 ? "agreeing" : "disagreeing", lens[li], max_news[mi]);
                    dec_stats st;
                    trace tr = {0};
                    check_exact(tm, draft, spec, prompt, lens[li], max_news[mi], &st, &tr, what);
                    if (max_news[mi] == 0) CHECK(st.target_steps == 0 && st.draft_steps == 0);
                    if (max_news[mi] == 1) CHECK(st.target_steps == 1 && st.drafted == 0);
                    if (di == 0) CHECK(st.accepted == st.drafted);
                    if (di == 1 && max_news[mi] == 37) {
                        double rate = (double)st.accepted / (st.drafted ? st.drafted : 1);
                        CHECK_MSG(rate < 0.1, "disagreeing draft accepted %.0f%%", 100 * rate);
                    }
                    if (di == 0 && max_news[mi] == 37) /* full steps of gamma+1 tokens */
                        CHECK(st.target_steps == 1 + (36 + gammas[gi]) / (gammas[gi] + 1));
                }
    /* context edges. Target seq 512: a 505-token prompt leaves 7 tokens; drafts are trimmed */
    dec_stats st;
    trace tr = {0};
    check_exact(tm, tm, "spec:gamma=8", prompt, 505, 256, &st, &tr, "prompt near seq_len");
    CHECK(st.new_tokens == 7 && st.target_steps == 2 && st.drafted == 5);
    check_exact(tm, dm, "spec:gamma=3", prompt, 511, 256, &st, &tr, "prompt at seq_len-1");
    CHECK(st.new_tokens == 1 && st.target_steps == 1);
    /* draft context 64: a 70-token prompt never drafts; a 50-token one drafts to 64, then
     * falls back to plain target steps */
    check_exact(tm, dshort, "spec:gamma=4", prompt, 70, 30, &st, &tr, "prompt past the draft");
    CHECK(st.draft_steps == 0 && st.drafted == 0 && st.target_steps == 30);
    check_exact(tm, tm, "spec:gamma=4", prompt, 50, 40, &st, &tr, "agreeing, control");
    check_exact(tm, dshort, "spec:gamma=4", prompt, 50, 40, &st, &tr, "draft runs out");
    CHECK(st.new_tokens == 40 && st.pos_tried[0] > 0 && st.pos_tried[0] <= 64 - 50);
    model_close(tm), model_close(dm), model_close(dshort);
    for (int i = 0; i < 3; i++) model_close(donors[i]);
}

static void test_errors(const model *m) {
    char err[ERR_LEN];
    dec *d;
    dec_env env = {.target = m, .kernels = KERN_EXACT};
    CHECK(dec_create(&d, "spec", &env, err) == -1);
    CHECK_MSG(strstr(err, "needs a draft model") != NULL, "%s", err);
    env.draft = m;
    CHECK(dec_create(&d, "spec:gamma=0", &env, err) == -1);
    CHECK_MSG(strstr(err, "gamma=0 is out of range 1..64") != NULL, "%s", err);
    CHECK(dec_create(&d, "spec:gamma=5", &env, err) == 0);
    CHECK(strcmp(dec_spec(d), "spec:gamma=5") == 0);
    dec_free(d);
}

int main(void) {
    char err[ERR_LEN];
    model *s260, *xs;
    CHECK_MSG(model_open(&s260, test_shared("models/stories260K.bin"), err) == 0, "%s", err);
    CHECK_MSG(model_open(&xs, test_shared("models/llama2xs.bin"), err) == 0, "%s", err);
    test_errors(s260);
    test_synthetic();
    test_end_inside(s260);
    test_real(s260, xs, "stories260K target, llama2xs draft", 20);
    test_real(xs, s260, "llama2xs target, stories260K draft", 20);
    model_close(s260), model_close(xs);
    return test_finish("test_spec");
}
