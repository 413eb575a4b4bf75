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
 *  5. statistics add up (tests/dec_check.c), and generate() allocates nothing;
 *  6. dynamic draft length (p_min, adapt=1): still greedy's tokens; p_min cuts drafts (fewer
 *     draft passes, stop_p_min counted), every step has exactly one stop reason, adapt moves
 *     the aimed length; the new parameters stay out of the spec at their defaults.
 * Under the sanitizers (testutil.h test_sanitized) the real prompts' runs take a quarter of the
 * prompts at gamma 4 and 2 at gamma 1 and 8; every check still applies. */
#include <stdlib.h>
#include <string.h>

#include "model/loader/model_file.h"
#include "tests/dec_check.h"
#include "tests/testutil.h"
#include "util/err.h"

DEC_CHECK_COUNT_MALLOC

#define N_PROMPTS 20
static int ids[N_PROMPTS][DEC_CHECK_MAX_PROMPT], lens[N_PROMPTS];

static void test_real(const model *tm, const model *dm, const char *what) {
    dec_env env = {.target = tm, .draft = dm, .kernels = KERN_EXACT};
    const char *specs[] = {"spec:gamma=4", "spec:gamma=1", "spec:gamma=8"};
    for (int si = 0; si < 3; si++) {
        long new_tokens = 0, steps = 0, drafted = 0, accepted = 0, equal = 0, plain = 0;
        /* every prompt at the default, a few at 1 and 8; a quarter and 2 under the sanitizers */
        int n =
            si == 0 ? (test_sanitized() ? N_PROMPTS / 4 : N_PROMPTS) : (test_sanitized() ? 2 : 4);
        for (int i = 0; i < n; i++) {
            dec_stats st;
            dec_check_trace tr;
            char label[96];
            snprintf(label, sizeof label, "%s prompt %d", what, i);
            equal += dec_check_exact(&env, specs[si], ids[i], lens[i], 256, NULL, &st, &tr, label);
            new_tokens += st.new_tokens, steps += st.target_steps;
            drafted += st.drafted, accepted += st.accepted;
            plain += st.target_steps - 1 - st.pos_tried[0]; /* steps that drafted nothing */
        }
        fprintf(stderr,
                "%s %s: %ld/%d prompts equal to greedy, %.2f tokens per target step, %.0f%% of "
                "drafts accepted, %ld plain target steps\n",
                what, specs[si], equal, n, (double)new_tokens / steps,
                100.0 * accepted / (drafted ? drafted : 1), plain);
        CHECK_MSG((double)new_tokens / steps > 1.3, "%s: speculative decoding should beat greedy",
                  what);
    }
}

/* The end token inside an accepted run: with the target as its own draft every draft is
 * accepted, so a story's end token arrives as a drafted token with more drafts behind it. */
static void test_end_inside(const model *m) {
    dec_env env = {.target = m, .draft = m, .kernels = KERN_EXACT};
    static int got[DEC_CHECK_MAX_OUT];
    int cases = 0;
    for (int i = 0; i < N_PROMPTS && cases < 3; i++) {
        dec_stats st;
        dec_check_trace tr;
        CHECK(dec_check_exact(&env, "spec:gamma=8", ids[i], lens[i], 400, got, &st, &tr,
                              "end inside"));
        int n = st.new_tokens;
        /* the last step emitted accepted drafts only: the end token was one of them */
        if (n == 400 || tr.last.accepted == 0 || tr.last.emitted != tr.last.accepted) continue;
        cases++;
        CHECK(got[n - 1] == m->cfg.end_id);
        for (int k = 0; k + 1 < n; k++) CHECK(got[k] != m->cfg.end_id);
    }
    CHECK_MSG(cases >= 1, "no prompt ended inside an accepted run");
}

static void test_synthetic(void) {
    model *donors[3];
    model *tm = dec_check_synth_untied("64,160,2,4,2,512,512", 1, &donors[0]);
    model *dm = dec_check_synth_untied("64,160,2,4,2,512,512", 2, &donors[1]);
    /* short context (64) and another shape */
    model *dshort = dec_check_synth_untied("48,96,2,4,4,512,64", 3, &donors[2]);
    int prompt[DEC_CHECK_SYNTH_PROMPT];
    dec_check_synth_prompt(prompt);
    const int gammas[] = {1, 3, 8}, max_news[] = {0, 1, 2, 37}, plen[] = {1, 9};
    char spec[64], what[96];
    for (int gi = 0; gi < 3; gi++)
        for (int mi = 0; mi < 4; mi++)
            for (int li = 0; li < 2; li++)
                for (int di = 0; di < 2; di++) {
                    const model *draft = di == 0 ? tm : dm;
                    snprintf(spec, sizeof spec, "spec:gamma=%d", gammas[gi]);
                    snprintf(what, sizeof what, "synthetic %s draft, prompt %d, max_new %d",
                             di == 0 ? "agreeing" : "disagreeing", plen[li], max_news[mi]);
                    dec_env env = {.target = tm, .draft = draft, .kernels = KERN_EXACT};
                    dec_stats st;
                    CHECK(dec_check_exact(&env, spec, prompt, plen[li], max_news[mi], NULL, &st,
                                          NULL, what));
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
    dec_env env = {.target = tm, .draft = tm, .kernels = KERN_EXACT};
    dec_stats st;
    CHECK(dec_check_exact(&env, "spec:gamma=8", prompt, 505, 256, NULL, &st, NULL,
                          "prompt near seq_len"));
    CHECK(st.new_tokens == 7 && st.target_steps == 2 && st.drafted == 5);
    env.draft = dm;
    CHECK(dec_check_exact(&env, "spec:gamma=3", prompt, 511, 256, NULL, &st, NULL,
                          "prompt at seq_len-1"));
    CHECK(st.new_tokens == 1 && st.target_steps == 1);
    /* draft context 64: a 70-token prompt never drafts; a 50-token one drafts to 64, then
     * falls back to plain target steps */
    env.draft = dshort;
    CHECK(dec_check_exact(&env, "spec:gamma=4", prompt, 70, 30, NULL, &st, NULL,
                          "prompt past the draft"));
    CHECK(st.draft_steps == 0 && st.drafted == 0 && st.target_steps == 30);
    CHECK(dec_check_exact(&env, "spec:gamma=4", prompt, 50, 40, NULL, &st, NULL, "draft runs out"));
    CHECK(st.new_tokens == 40 && st.pos_tried[0] > 0 && st.pos_tried[0] <= 64 - 50);
    model_close(tm), model_close(dm), model_close(dshort);
    for (int i = 0; i < 3; i++) model_close(donors[i]);
}

/* Both models' prompt passes are prefill time (a draft's prompt pass decodes nothing). With the
 * target as its own draft and one token to generate, spec's call is two equal prompt passes and
 * one emit, so t_prefill is nearly all of t_total; when the draft's pass counted as decode time it
 * was about half. Best of 5, against a loaded machine. */
static void test_prefill_time(const model *m) {
    char err[ERR_LEN];
    dec_env env = {.target = m, .draft = m, .kernels = KERN_EXACT};
    static int prompt[300], out[8];
    prompt[0] = 1;
    for (int i = 1; i < 300; i++) prompt[i] = 2 + (i * 37) % 500;
    dec *d;
    CHECK(dec_create(&d, "spec:gamma=4", &env, err) == 0);
    double best = 0;
    for (int r = 0; r < 5; r++) {
        dec_stats st;
        int n;
        CHECK(dec_generate(d, prompt, 300, 1, out, &n, &st, err) == 0);
        CHECK(n == 1 && st.target_steps == 1 && st.draft_steps == 1 && st.t_draft > 0);
        CHECK(st.t_prefill <= st.t_target + st.t_draft + 1e-9);
        if (st.t_prefill / st.t_total > best) best = st.t_prefill / st.t_total;
    }
    CHECK_MSG(best > 0.9,
              "t_prefill is %.0f%% of t_total at best: the draft's prompt pass is not "
              "in it",
              100 * best);
    dec_free(d);
}

static void test_no_malloc(const model *tm, const model *dm) {
    char err[ERR_LEN];
    dec_env env = {.target = tm, .draft = dm, .kernels = KERN_EXACT};
    dec *d;
    static int out[DEC_CHECK_MAX_OUT];
    int n;
    dec_stats st;
    CHECK(dec_create(&d, "spec:gamma=4", &env, err) == 0);
    long before = dec_check_mallocs;
    CHECK(dec_generate(d, ids[0], lens[0], 300, out, &n, &st, err) == 0);
    CHECK_MSG(!dec_check_counting || dec_check_mallocs == before, "%ld allocations in generate",
              dec_check_mallocs - before);
    dec_free(d);
    CHECK(dec_create(&d, "spec:gamma=2,p_min=0.6,adapt=1", &env, err) == 0);
    before = dec_check_mallocs;
    CHECK(dec_generate(d, ids[1], lens[1], 300, out, &n, &st, err) == 0);
    CHECK_MSG(!dec_check_counting || dec_check_mallocs == before,
              "%ld allocations in generate (p_min, adapt)", dec_check_mallocs - before);
    dec_free(d);
}

/* The decoder counters of spec.c, by row: stop_gamma, stop_p_min, stop_end, stop_room,
 * draft_goal. */
enum { STOP_GAMMA, STOP_P_MIN, STOP_END, STOP_ROOM, DRAFT_GOAL };

static void test_dynamic(const model *tm, const model *dm) {
    dec_env env = {.target = tm, .draft = dm, .kernels = KERN_EXACT};
    const char *specs[] = {"spec:gamma=4", "spec:gamma=4,p_min=0.75", "spec:gamma=4,adapt=1",
                           "spec:gamma=3,p_min=0.5,adapt=1,gamma_max=8"};
    long draft_steps[4] = {0}, steps[4] = {0}, stops[4][5] = {{0}};
    for (int s = 0; s < 4; s++)
        for (int i = 0; i < 6; i++) {
            dec_stats st;
            char what[64];
            snprintf(what, sizeof what, "dynamic prompt %d", i);
            CHECK(dec_check_exact(&env, specs[s], ids[i], lens[i], 256, NULL, &st, NULL, what));
            draft_steps[s] += st.draft_steps, steps[s] += st.verify_steps;
            CHECK_MSG(st.n_counters == 5 && !strcmp(st.counter_defs[STOP_P_MIN].name, "stop_p_min"),
                      "%d counters", st.n_counters);
            for (int c = 0; c < 5; c++) stops[s][c] += (long)st.counters[c];
        }
    for (int s = 0; s < 4; s++) {
        fprintf(stderr,
                "%s: %ld target steps, %ld draft passes; stops: gamma %ld, p_min %ld, end %ld, "
                "room %ld; mean aimed length %.2f\n",
                specs[s], steps[s], draft_steps[s], stops[s][STOP_GAMMA], stops[s][STOP_P_MIN],
                stops[s][STOP_END], stops[s][STOP_ROOM], (double)stops[s][DRAFT_GOAL] / steps[s]);
        CHECK_MSG(stops[s][STOP_GAMMA] + stops[s][STOP_P_MIN] + stops[s][STOP_END] +
                          stops[s][STOP_ROOM] ==
                      steps[s],
                  "%s: one stop reason per step", specs[s]);
    }
    /* fixed gamma: 4 aimed at on every step the draft had room for (room counts those without) */
    CHECK(stops[0][STOP_P_MIN] == 0 && stops[0][DRAFT_GOAL] % 4 == 0 &&
          stops[0][DRAFT_GOAL] >= 4 * (steps[0] - stops[0][STOP_ROOM]));
    CHECK(stops[1][STOP_P_MIN] > steps[1] / 2 && draft_steps[1] < draft_steps[0] * 3 / 4);
    CHECK(stops[2][DRAFT_GOAL] % 4 != 0 && stops[2][STOP_P_MIN] == 0);
    CHECK(stops[3][STOP_P_MIN] > 0);
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
    /* parameters added later appear only when set; a real one is stored as printed */
    CHECK(dec_create(&d, "spec:gamma=5,p_min=0,adapt=0,gamma_max=16", &env, err) == 0);
    CHECK_MSG(strcmp(dec_spec(d), "spec:gamma=5") == 0, "%s", dec_spec(d));
    dec_free(d);
    CHECK(dec_create(&d, "spec:p_min=0.123456789,adapt=1", &env, err) == 0);
    CHECK_MSG(strcmp(dec_spec(d), "spec:gamma=4,p_min=0.123457,adapt=1") == 0, "%s", dec_spec(d));
    dec_free(d);
    CHECK(dec_create(&d, "spec:p_min=1.5", &env, err) == -1);
    CHECK_MSG(strstr(err, "spec: p_min=1.5 is out of range 0..1") != NULL, "%s", err);
    CHECK(dec_create(&d, "spec:p_min=high", &env, err) == -1);
    CHECK_MSG(strstr(err, "spec: p_min=high is not a number") != NULL, "%s", err);
    CHECK(dec_create(&d, "spec:p_min=nan", &env, err) == -1);
}

int main(void) {
    char err[ERR_LEN];
    model *s260, *xs;
    CHECK_MSG(model_open(&s260, test_shared("models/stories260K.bin"), err) == 0, "%s", err);
    CHECK_MSG(model_open(&xs, test_shared("models/llama2xs.bin"), err) == 0, "%s", err);
    if (dec_check_tinystories(N_PROMPTS, ids, lens)) return test_finish("test_spec");
    test_errors(s260);
    test_no_malloc(s260, xs);
    test_prefill_time(s260);
    test_synthetic();
    test_end_inside(s260);
    test_dynamic(s260, xs);
    test_real(s260, xs, "stories260K target, llama2xs draft");
    test_real(xs, s260, "llama2xs target, stories260K draft");
    model_close(s260), model_close(xs);
    return test_finish("test_spec");
}
