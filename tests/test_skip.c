/* test_skip.c: layer-skip self-speculation (decoders/skip.c).
 *  1. exactness on both real models: the first 20 TinyStories prompts x 256 new tokens at the
 *     defaults (SWIFT's starting set), fixed sets of whole layers and of sublayers, no
 *     threshold, the adaptive threshold off, SWIFT's optimisation (adapt=swift) across prompts,
 *     the offline search (adapt=search: on the first prompt only); the
 *     drafts must be used (accepted > 0) and the sublayers counted (skip_attn, skip_mlp equal
 *     to the set's size times the draft passes for a fixed set);
 *  2. a synthetic grid: gamma 1/3/8 x max_new 0/1/2/37 x prompts of 1 and 9 tokens x two
 *     sets, on an untied random model and a positional one, which also shows the cache after
 *     each step is plain decoding's (a wrong K/V changes later tokens);
 *  3. specs: the canonical spec, ranges (1..3) and empty lists, a layer past the model refused;
 *  4. the state file: the set and the optimiser saved and loaded (the loaded decoder then runs
 *     exactly as the saving one goes on), and damaged files refused with the state unchanged;
 *  5. no allocation in generate;
 *  6. white box: adapt=search's model of a pass's cost and of the tokens per step, SWIFT's random
 *     candidates (k sublayers, never of the first or last layer).
 * Under the sanitizers (testutil.h test_sanitized) the real prompts' runs take 5 of 20 prompts
 * (2 of 4 for the other sets); every set still runs and is compared with greedy. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/loader/model_file.h"
#include "tests/dec_check.h"
#include "tests/testutil.h"
#include "util/err.h"

#define dec_skip_vtable skip_vtable_under_test
#include "decoders/skip.c"
#undef dec_skip_vtable

DEC_CHECK_COUNT_MALLOC

/* White box: the search's model of the speed, and SWIFT's candidates. */
static void test_parts(const model *m) {
    const model_config *c = &m->cfg;
    unsigned char none[8] = {0}, all[8];
    memset(all, FWD_SKIP_ATTN | FWD_SKIP_MLP, sizeof all);
    CHECK(pass_share(c, none) == 1);
    /* stories260K: classifier 64 x 512; per layer attention 2 x 64 x 64 + 2 x 64 x 32, MLP
     * 3 x 64 x 172 */
    double cls = 64.0 * 512, attn = 12288, mlp = 33024, full = cls + 5 * (attn + mlp);
    CHECK(fabs(pass_share(c, all) - cls / full) < 1e-12);
    unsigned char one[8] = {0, FWD_SKIP_MLP};
    CHECK(fabs(pass_share(c, one) - (full - mlp) / full) < 1e-12);
    CHECK(objective(8, 1, 1) == 1 && objective(4, 1, 0.5) == 5 / 3.0);
    CHECK(fabs(objective(4, 0.5, 0.5) - 1.9375 / 3) < 1e-12);
    /* candidates: k sublayers of layers 1..L-2 */
    skip s = {.nl = 5};
    unsigned char cand[5];
    int pick[10], seen[5][4] = {{0}};
    s.cand = cand, s.pick = pick;
    rng_seed(&s.rng, SKIP_SEED);
    for (int t = 0; t < 200; t++) {
        int k = t % 7, n = 0;
        draw_candidate(&s, k);
        for (int l = 0; l < 5; l++) {
            n += (cand[l] & FWD_SKIP_ATTN) != 0, n += (cand[l] & FWD_SKIP_MLP) != 0;
            seen[l][cand[l]]++;
        }
        CHECK_MSG(n == (k < 6 ? k : 6), "%d of %d sublayers", n, k);
        CHECK(cand[0] == 0 && cand[4] == 0);
    }
    for (int l = 1; l < 4; l++) CHECK(seen[l][1] > 0 && seen[l][2] > 0 && seen[l][3] > 0);
}

static int ids[20][DEC_CHECK_MAX_PROMPT], lens[20];

/* Counter `name` of decoder d's last statistics st (-1 if it has none). */
static double counter(const dec_stats *st, const char *name) {
    int n = 0;
    const stat_def *defs = NULL;
    for (int i = 0; i < dec_registry_size(); i++)
        if (!strcmp(dec_registry_name(i), "skip")) defs = dec_registry_counters(i, &n);
    for (int i = 0; i < n; i++)
        if (!strcmp(defs[i].name, name)) return st->counters[i];
    return -1;
}

static void test_real(const char *path) {
    char err[ERR_LEN];
    model *m;
    CHECK_MSG(model_open(&m, test_shared(path), err) == 0, "%s", err);
    if (!m) return;
    dec_env env = {.target = m, .kernels = KERN_EXACT};
    dec_check_exact(&env, "skip", &m->cfg.bos_id, 1, 256, NULL, NULL, NULL, "BOS-only prompt");
    /* sublayers skipped per draft pass for the fixed sets (5 layers: SWIFT's set is 1 and 3) */
    const struct {
        const char *spec;
        int attn, mlp;
    } runs[] = {{"skip", 2, 2},
                {"skip:layers=2", 1, 1},
                {"skip:attn=1..3,mlp=2", 3, 1},
                {"skip:gamma=4,conf=0", 2, 2},
                {"skip:layers=1-3,auto=0", 2, 2},
                {"skip:adapt=swift", -1, -1},
                {"skip:adapt=search,gamma=2", -2, -2}};
    for (size_t si = 0; si < sizeof runs / sizeof runs[0]; si++) {
        long tokens = 0, steps = 0, equal = 0, drafted = 0, accepted = 0, passes = 0;
        double attn = 0, mlp = 0, iters = 0;
        int n = si == 0 || si == 5 ? (test_sanitized() ? 5 : 20) : (test_sanitized() ? 2 : 4);
        double first_iters = -1;
        dec *d;
        CHECK_MSG(dec_create(&d, runs[si].spec, &env, err) == 0, "%s", err);
        if (!d) continue;
        for (int i = 0; i < n; i++) {
            int want[DEC_CHECK_MAX_OUT], got[DEC_CHECK_MAX_OUT], n_got;
            int n_want = dec_check_greedy(&env, ids[i], lens[i], 256, want);
            dec_stats st;
            CHECK_MSG(dec_generate(d, ids[i], lens[i], 256, got, &n_got, &st, err) == 0, "%s", err);
            int same = n_got == n_want && !memcmp(got, want, sizeof(int) * (size_t)n_got);
            CHECK_MSG(same, "%s %s prompt %d: differs from greedy", path, runs[si].spec, i);
            equal += same, tokens += st.new_tokens, steps += st.target_steps;
            drafted += st.drafted, accepted += st.accepted, passes += st.draft_steps;
            attn += counter(&st, "skip_attn"), mlp += counter(&st, "skip_mlp");
            iters += counter(&st, "opt_iters");
            if (first_iters < 0) first_iters = iters;
        }
        dec_free(d);
        fprintf(stderr,
                "%s %s: %ld/%d equal to greedy, %.3f tokens per target step, %.0f%% of %ld "
                "drafted accepted, %.2f attention + %.2f MLP sublayers skipped per draft pass, "
                "%.0f candidates scored\n",
                path, runs[si].spec, equal, n, (double)tokens / steps,
                100.0 * accepted / (drafted ? drafted : 1), drafted, attn / passes, mlp / passes,
                iters);
        CHECK_MSG(accepted > 0, "%s %s: no draft accepted", path, runs[si].spec);
        if (runs[si].attn >= 0)
            CHECK(attn == (double)runs[si].attn * passes && mlp == (double)runs[si].mlp * passes);
        else if (runs[si].attn == -1) /* SWIFT: candidates scored, in the draft passes too */
            CHECK(iters > 0 && passes > drafted);
        else /* the search: every sublayer scored in its first round, on the first prompt only */
            CHECK_MSG(first_iters >= 2 * m->cfg.n_layers && iters == first_iters, "%.0f, %.0f",
                      first_iters, iters);
    }
    model_close(m);
}

static void test_synthetic(void) {
    model *donor, *m = dec_check_synth_untied("64,160,4,4,2,512,512", 1, &donor);
    model *pdonor, *pos = dec_check_synth_positional("64,160,4,4,2,512,512", 5, &pdonor);
    int prompt[DEC_CHECK_SYNTH_PROMPT];
    dec_check_synth_prompt(prompt);
    const int gammas[] = {1, 3, 8}, max_news[] = {0, 1, 2, 37};
    long k = 0, multi = 0;
    for (int gi = 0; gi < 3; gi++)
        for (int mi = 0; mi < 4; mi++)
            for (int li = 0; li < 2; li++)
                for (int pi = 0; pi < 2; pi++)
                    for (int ci = 0; ci < 2; ci++) {
                        if (!test_keep(k++, 2)) continue;
                        char spec[96], what[96];
                        snprintf(spec, sizeof spec, "skip:gamma=%d,%s", gammas[gi],
                                 ci ? "attn=1-2,mlp=2,conf=0" : "layers=1");
                        snprintf(what, sizeof what, "%s model, prompt %d, max_new %d",
                                 pi ? "positional" : "untied", li ? 9 : 1, max_news[mi]);
                        dec_env env = {.target = pi ? pos : m, .kernels = KERN_EXACT};
                        dec_stats st;
                        dec_check_trace tr;
                        dec_check_exact(&env, spec, prompt, li ? 9 : 1, max_news[mi], NULL, &st,
                                        &tr, what);
                        if (max_news[mi] == 0) CHECK(st.target_steps == 0);
                        if (max_news[mi] == 1) CHECK(st.target_steps == 1 && st.drafted == 0);
                        multi += tr.multi;
                    }
    CHECK_MSG(multi > 0, "no step emitted more than one token");
    model_close(m), model_close(donor), model_close(pos), model_close(pdonor);
}

static void test_specs(const model *m) {
    char err[ERR_LEN];
    dec_env env = {.target = m, .kernels = KERN_EXACT};
    dec *d;
    CHECK(dec_create(&d, "skip", &env, err) == 0);
    CHECK_MSG(!strcmp(dec_spec(d), "skip:gamma=8,conf=0.8,auto=1,layers=,attn=,mlp=,adapt=none,"
                                   "ratio=0.45,window=32,max_score=0.9,tolerance=300,"
                                   "max_iter=1000"),
              "%s", dec_spec(d));
    dec_free(d);
    CHECK(dec_create(&d, "skip:layers=1..3,attn=0,4", &env, err) == 0);
    CHECK_MSG(strstr(dec_spec(d), "layers=1-2-3,attn=0-4,mlp=,"), "%s", dec_spec(d));
    dec_free(d);
    CHECK(dec_create(&d, "skip:layers=5", &env, err) == -1 &&
          strstr(err, "layers value 5: the model has 5 layers (0..4)"));
    CHECK(dec_create(&d, "skip:mlp=3..1", &env, err) == -1 && strstr(err, "range 3..1 is empty"));
    CHECK(dec_create(&d, "skip:attn=x", &env, err) == -1 && strstr(err, "attn=x"));
    CHECK(dec_create(&d, "skip:ratio=1.5", &env, err) == -1 && strstr(err, "0..1"));
    /* a list whose default is not empty still needs a value */
    dec_env with_draft = env;
    with_draft.draft = m;
    CHECK_MSG(dec_create(&d, "tree:shape=", &with_draft, err) == -1 &&
                  strstr(err, "shape= is not a list"),
              "%s", err);
    /* generate allocates nothing, with and without the optimiser */
    const char *specs[] = {"skip", "skip:adapt=swift,window=8"};
    for (int i = 0; i < 2; i++) {
        CHECK(dec_create(&d, specs[i], &env, err) == 0);
        int out[200], n;
        dec_stats st;
        long before = dec_check_mallocs;
        CHECK(dec_generate(d, ids[0], lens[0], 200, out, &n, &st, err) == 0);
        CHECK_MSG(dec_check_mallocs == before, "%s: generate allocated %ld times", specs[i],
                  dec_check_mallocs - before);
        dec_free(d);
    }
}

/* Generates prompt i with d; returns its statistics. */
static dec_stats run(dec *d, int i) {
    char err[ERR_LEN];
    int out[DEC_CHECK_MAX_OUT], n;
    dec_stats st;
    memset(&st, 0, sizeof st);
    CHECK_MSG(dec_generate(d, ids[i], lens[i], 128, out, &n, &st, err) == 0, "%s", err);
    return st;
}

static void test_state(const model *m) {
    char err[ERR_LEN], what[128];
    dec_env env = {.target = m, .kernels = KERN_EXACT};
    const char *spec = "skip:adapt=swift,window=16", *path = test_tmp("skip_state.bin");
    dec *a, *b;
    CHECK(dec_create(&a, spec, &env, err) == 0 && dec_create(&b, spec, &env, err) == 0);
    if (!a || !b) return;
    CHECK(!strcmp(dec_state_name(a), "layer set") && dec_state_check(a, err) == 0);
    run(a, 0), run(a, 1);
    CHECK_MSG(dec_state_save(a, path, what, sizeof what, err) == 0, "%s", err);
    CHECK_MSG(strstr(what, "sublayers skipped"), "%s", what);
    CHECK_MSG(dec_state_load(b, path, err) == 0, "%s", err);
    /* the loaded decoder goes on as the saving one does: same set, same optimiser, same draws */
    for (int i = 2; i < 5; i++) {
        dec_stats sa = run(a, i), sb = run(b, i);
        CHECK_MSG(sa.target_steps == sb.target_steps && sa.accepted == sb.accepted &&
                      counter(&sa, "opt_iters") == counter(&sb, "opt_iters") &&
                      counter(&sa, "opt_better") == counter(&sb, "opt_better") &&
                      counter(&sa, "skip_attn") == counter(&sb, "skip_attn"),
                  "prompt %d: %ld/%ld steps", i, sa.target_steps, sb.target_steps);
    }
    /* a fresh decoder differs from a loaded one (the file carries something) */
    dec *c = NULL, *e = NULL;
    CHECK(dec_create(&c, spec, &env, err) == 0 && dec_create(&e, spec, &env, err) == 0);
    dec_stats s2 = run(c, 2), s3;
    CHECK(dec_state_load(c, path, err) == 0 && dec_state_load(e, path, err) == 0);
    s3 = run(c, 2), run(e, 2);
    CHECK(counter(&s2, "skip_attn") != counter(&s3, "skip_attn") ||
          s2.target_steps != s3.target_steps);
    /* damaged files: refused, naming the byte, the state unchanged */
    FILE *f = fopen(path, "rb");
    unsigned char buf[256];
    size_t size = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f) fclose(f);
    CHECK(size == 20 + 5 + 28 + 8);
    const char *bad = test_tmp("skip_bad.bin");
    struct {
        size_t at;
        unsigned char v;
        const char *msg;
    } cases[] = {{0, 'X', "not a decbench layer set file"},
                 {16, 4, "a set for 4 layers, the model has 5"},
                 {21, 9, "layer 1: skip bits 9"},
                 {33, 2, "optimiser's state is not valid"},
                 {40, 0xff, "checksum mismatch"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned char copy[256];
        memcpy(copy, buf, size);
        copy[cases[i].at] = cases[i].v;
        FILE *g = fopen(bad, "wb");
        CHECK(g && fwrite(copy, 1, size, g) == size);
        if (g) fclose(g);
        CHECK_MSG(dec_state_load(c, bad, err) == -1 && strstr(err, cases[i].msg), "%s", err);
    }
    FILE *g = fopen(bad, "wb");
    CHECK(g && fwrite(buf, 1, size - 9, g) == size - 9);
    if (g) fclose(g);
    CHECK_MSG(dec_state_load(c, bad, err) == -1 && strstr(err, "truncated"), "%s", err);
    /* after the refusals c is as it was: it runs on as e, which saw none of them */
    dec_stats sc = run(c, 3), se = run(e, 3);
    CHECK(sc.target_steps == se.target_steps &&
          counter(&sc, "opt_iters") == counter(&se, "opt_iters") &&
          counter(&sc, "skip_attn") == counter(&se, "skip_attn"));
    dec_free(a), dec_free(b), dec_free(c), dec_free(e);
}

int main(void) {
    if (dec_check_tinystories(20, ids, lens)) return test_finish("test_skip");
    char err[ERR_LEN];
    model *m;
    CHECK_MSG(model_open(&m, test_shared("models/stories260K.bin"), err) == 0, "%s", err);
    if (m) {
        test_parts(m);
        test_specs(m);
        test_state(m);
        model_close(m);
    }
    test_real("models/stories260K.bin");
    test_real("models/llama2xs.bin");
    test_synthetic();
    return test_finish("test_skip");
}
