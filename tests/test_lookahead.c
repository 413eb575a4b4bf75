/* test_lookahead.c: lookahead decoding (decoders/lookahead.c).
 *  1. layout (white box: the decoder's file is compiled into this test): every window row sees
 *     exactly the paper's cells (level-0 columns <= i and column i of the levels below) at
 *     position base + level + column, candidates see only the current token and their own
 *     prefix, shared prefixes share rows (share=1) or not (share=0), rows past the wanted depth
 *     are cut, logits are read where needed; the three refill rules move the window as their
 *     header says;
 *  2. exactness on both real models, the first 20 TinyStories prompts x 256 new tokens at the
 *     default, every variant on a few prompts; the end token arrives inside an accepted run on
 *     some of them (checked: nothing after it);
 *  3. synthetic grid: W 1/2/5/15 x N 2/3/5 x G 0/1/5/15 on an untied random model and on a
 *     "positional" one (dec_check.h: everything it predicts is right), prompts of 1 and 9
 *     tokens, max_new 0/1/2/37; the variants on a few shapes;
 *  4. N=2, G=0, refill=align is Jacobi decoding: same tokens, steps, rows and acceptance as
 *     jacobi:window=W-1, for both init rules;
 *  5. context edges (a prompt near seq_len, a short-context model), no allocation in
 *     generate, parameter errors;
 *  6. LADE's start (init=lade, fill_prefill=1): greedy's tokens on the real model, prompts of
 *     1 token, of a few and of 600 (prefill chunks before the window's pass); the prompt pass
 *     stays one step that yields one token; the window enters the first decode step filled one
 *     level further; no allocation; the new parameters stay out of the spec by default.
 *  7. preset=lade (LADE's own configuration): the parameters it sets, a contradicting one or
 *     N=2 refused, the same run as the parameters spelled out, at most N-1 tokens a step
 *     (LADE's match loop) where the defaults emit N, nothing verified before the window is full
 *     (fill_verify=0) although the pool has candidates, greedy's tokens everywhere.
 * Under the sanitizers (testutil.h test_keep) the real-model runs are thinned, the grids are
 * not: 2.'s 20 prompts to one in four (prompts 0, 7, 10, 13 and 19; the end token arrives inside
 * an accepted run on 10), its variants and 6.'s specs to one prompt each (rotating), 7.'s preset
 * runs to 2 of their 6 prompts; every spec still runs and is compared with greedy.
 * With DECBENCH_REPORT=1 it also prints the variant comparison on 20 prompts (slow). */
#include <stdlib.h>
#include <string.h>

#include "model/loader/model_file.h"
#include "tests/dec_check.h"
#include "tests/testutil.h"
#include "util/err.h"

/* the decoder under test, its static functions visible (the library's copy is not linked in
 * twice: the vtable is renamed) */
#define dec_lookahead_vtable lookahead_vtable_under_test
#include "decoders/lookahead.c"
#undef dec_lookahead_vtable

DEC_CHECK_COUNT_MALLOC

static int ids[20][DEC_CHECK_MAX_PROMPT], lens[20];

/* ---- 1. layout ----------------------------------------------------------------------- */

/* 1 if row a is an ancestor of (or is) row r. */
static int sees(const lookahead *la, int r, int a) {
    for (; r >= 0; r = la->par[r])
        if (r == a) return 1;
    return 0;
}

static int depth(const lookahead *la, int r) {
    int d = -1;
    for (; r >= 0; r = la->par[r]) d++;
    return d;
}

/* A decoder with its state set as after the fill steps: context 0..9, cells numbered. */
static lookahead *la_setup(dec **d, const model *m, const char *spec) {
    char err[ERR_LEN];
    dec_env env = {.target = m, .kernels = KERN_EXACT};
    CHECK_MSG(dec_create(d, spec, &env, err) == 0, "%s", err);
    lookahead *la = (*d)->impl;
    for (int i = 0; i < 10; i++) la->ctx[i] = 20 + i;
    la->len = 10;
    la->top = la->N - 2, la->width = la->W;
    for (int l = 0; l <= la->top; l++)
        for (int i = 0; i < la->W; i++) LV(la, l, i) = 100 + 16 * l + i;
    return la;
}

static void test_layout(const model *m) {
    dec *d;
    const int W = 5, N = 4;
    for (int share = 0; share <= 1; share++)
        for (int jac = 0; jac <= 1; jac++) {
            char spec[96];
            snprintf(spec, sizeof spec, "lookahead:W=%d,N=%d,G=3,share=%d,jacobi=%d", W, N, share,
                     jac);
            lookahead *la = la_setup(&d, m, spec);
            int cur = la->ctx[9], g1[3] = {5, 6, 7}, g2[3] = {5, 6, 9}, g3[3] = {8, 8, 8};
            ngram_pool_add(la->pool, cur, g1), ngram_pool_add(la->pool, cur, g2);
            ngram_pool_add(la->pool, cur, g3);
            int L, n_out, n = la_build(d, la, 100, 1, &L, &n_out);
            CHECK(L == 3 && n == W * (N - 1) + (share ? 7 : 9) && la->cand0 == W * (N - 1));
            CHECK(la->tok[0] == cur && la->par[0] == -1);
            /* window rows: visibility and positions (depth = position - base) */
            int bad = 0;
            for (int l = 0; l < N - 1; l++)
                for (int i = 0; i < W; i++) {
                    int r = ROW(la, l, i);
                    bad += r < 0 || la->tok[r] != (l || i ? 100 + 16 * l + i : cur);
                    bad += depth(la, r) != l + i;
                    for (int l2 = 0; l2 < N - 1; l2++)
                        for (int i2 = 0; i2 < W; i2++) {
                            int want = l2 == 0 ? i2 <= i : i2 == i && l2 <= l;
                            bad += sees(la, r, ROW(la, l2, i2)) != want;
                        }
                    for (int c = la->cand0; c < n; c++) bad += sees(la, r, c);
                }
            CHECK_MSG(bad == 0, "%s: %d layout errors in the window", spec, bad);
            /* candidates: row 0 and their own prefix only; every n-gram is a path */
            bad = 0;
            for (int c = la->cand0; c < n; c++) {
                bad += !sees(la, c, 0);
                for (int r = 1; r < la->cand0; r++) bad += sees(la, c, r);
                bad += la->par[c] >= c || depth(la, c) > 3;
            }
            const int *gs[3] = {g1, g2, g3};
            for (int k = 0; k < 3; k++) {
                int found = 0;
                for (int c = la->cand0; c < n; c++) {
                    if (depth(la, c) != 3) continue;
                    int ok = 1;
                    for (int r = c, j = 2; j >= 0; r = la->par[r], j--)
                        ok &= la->tok[r] == gs[k][j];
                    found += ok;
                }
                bad += found != 1;
            }
            CHECK_MSG(bad == 0, "%s: %d layout errors in the candidates", spec, bad);
            /* logits: row 0, level 0 if jacobi, the top level, every candidate */
            int want_out = 1 + (jac ? W - 1 : 0) + W + (n - la->cand0);
            CHECK_MSG(n_out == want_out, "%s: %d logits rows, expected %d", spec, n_out, want_out);
            /* cut at depth 2: cells with level + column > 2 and candidate tokens past 2 go */
            n = la_build(d, la, 2, 1, &L, &n_out);
            bad = L != 2;
            for (int l = 0; l < N - 1; l++)
                for (int i = 0; i < W; i++) bad += (ROW(la, l, i) >= 0) != (l + i <= 2);
            for (int r = 0; r < n; r++) bad += depth(la, r) > 2;
            CHECK_MSG(bad == 0, "%s: %d errors in the cut window", spec, bad);
            dec_free(d);
        }
}

/* The window after an advance of a tokens, for each refill rule (top-level outputs 200+i). */
static void test_refill(const model *m) {
    const char *rules[] = {"align", "lade", "llamacpp"};
    const int W = 6, N = 4;
    for (int ri = 0; ri < 3; ri++)
        for (int a = 1; a <= 3; a++) {
            dec *d;
            char spec[96];
            snprintf(spec, sizeof spec, "lookahead:W=%d,N=%d,refill=%s", W, N, rules[ri]);
            lookahead *la = la_setup(&d, m, spec);
            int L, n_out;
            la_build(d, la, 100, 1, &L, &n_out);
            for (int i = 0; i < W; i++) la->am[ROW(la, N - 2, i)] = 200 + i;
            int old[3][6];
            for (int l = 0; l < N - 1; l++)
                for (int i = 0; i < W; i++) old[l][i] = LV(la, l, i);
            for (int i = 0; i < a; i++) la->ctx[la->len++] = 40 + i; /* the accepted tokens */
            la_advance(d, la, a, 9);
            /* the rules, written out: one shift (level l <- l+1, top <- outputs), then
             * align: a-1 columns to the left, fresh guesses (-1) at the end;
             * llamacpp: a-1 more shifts, each refilling the top with a copy of level 0 */
            int ref[3][6], top = N - 2;
            for (int l = 0; l < top; l++) memcpy(ref[l], old[l + 1], sizeof ref[l]);
            for (int i = 0; i < W; i++) ref[top][i] = 200 + i;
            if (ri == 0)
                for (int l = 0; l <= top; l++)
                    for (int i = 0; i < W; i++) ref[l][i] = i + a - 1 < W ? ref[l][i + a - 1] : -1;
            if (ri == 2)
                for (int v = 1; v < a; v++) {
                    for (int l = 0; l < top; l++) memcpy(ref[l], ref[l + 1], sizeof ref[l]);
                    memcpy(ref[top], ref[0], sizeof ref[top]);
                }
            int bad = la->width != W || la->top != N - 2;
            for (int l = 0; l <= top; l++)
                for (int i = 0; i < W; i++)
                    bad += ref[l][i] >= 0 ? LV(la, l, i) != ref[l][i]
                                          : LV(la, l, i) >= 100; /* fresh: a context token */
            CHECK_MSG(bad == 0, "%s, advance %d: %d cells misplaced", spec, a, bad);
            dec_free(d);
        }
}

/* ---- 2. real models ------------------------------------------------------------------- */

static int end_inside(const dec_check_trace *tr, const int *got, int n, int end_id) {
    return n > 0 && got[n - 1] == end_id && tr->last.emitted >= 2 &&
           tr->last.accepted == tr->last.emitted && tr->last.drafted > tr->last.accepted;
}

/* Runs spec on prompts [0, n) (under the sanitizers those test_keep(i + n * salt, k) keeps). */
static void run_set(const dec_env *env, const char *spec, int n, const char *what, int *ends, int k,
                    int salt) {
    long tokens = 0, steps = 0, rows = 0, equal = 0, drafted = 0, accepted = 0, runs = 0;
    for (int i = 0; i < n; i++) {
        if (!test_keep(i + (long)n * salt, k)) continue;
        runs++;
        dec_stats st;
        dec_check_trace tr;
        int got[DEC_CHECK_MAX_OUT];
        equal += dec_check_exact(env, spec, ids[i], lens[i], 256, got, &st, &tr, what);
        tokens += st.new_tokens, steps += st.target_steps, rows += st.target_rows;
        drafted += st.drafted, accepted += st.accepted;
        if (ends) *ends += end_inside(&tr, got, st.new_tokens, env->target->cfg.end_id);
    }
    fprintf(stderr,
            "%s %s: %ld/%ld equal to greedy, %ld tokens in %ld target steps: %.3f tokens/step, "
            "%.1f rows/step, %.0f%% of drafted accepted\n",
            what, spec, equal, runs, tokens, steps, (double)tokens / steps,
            (double)rows / (steps - runs), 100.0 * accepted / (drafted ? drafted : 1));
}

static void test_real(const char *path) {
    char err[ERR_LEN];
    model *m;
    CHECK_MSG(model_open(&m, test_shared(path), err) == 0, "%s", err);
    if (!m) return;
    dec_env env = {.target = m, .kernels = KERN_EXACT};
    int ends = 0;
    run_set(&env, "lookahead", 20, path, &ends, 4, 0);
    dec_check_exact(&env, "lookahead", &m->cfg.bos_id, 1, 256, NULL, NULL, NULL, "BOS-only prompt");
    if (strstr(path, "stories260K"))
        CHECK_MSG(ends >= 1, "%s: the end token never arrived inside an accepted run", path);
    const char *variants[] = {"lookahead:refill=lade",  "lookahead:refill=llamacpp",
                              "lookahead:full_bonus=0", "lookahead:jacobi=1,share=0",
                              "lookahead:seed_pool=1",  "lookahead:init=random,seed=3",
                              "lookahead:W=5,N=3,G=5",  "lookahead:W=2,N=2,G=1"};
    for (int v = 0; v < 8 && strstr(path, "stories260K"); v++)
        run_set(&env, variants[v], 2, path, NULL, 2, v);
    if (getenv("DECBENCH_REPORT") && strstr(path, "stories260K")) {
        const char *report[] = {"lookahead:refill=lade",
                                "lookahead:refill=llamacpp",
                                "lookahead:full_bonus=0",
                                "lookahead:refill=lade,full_bonus=0",
                                "lookahead:refill=llamacpp,full_bonus=0",
                                "lookahead:jacobi=1",
                                "lookahead:seed_pool=1",
                                "lookahead:share=0",
                                "lookahead:init=random",
                                "lookahead:N=2,W=15,G=15",
                                "lookahead:W=7,N=5,G=7",
                                "jacobi",
                                "pld",
                                "greedy"};
        for (int v = 0; v < 14; v++) run_set(&env, report[v], 20, "report", NULL, 1, 0);
    }
    model_close(m);
}

/* ---- 3-5. synthetic ------------------------------------------------------------------- */

static void test_grid(void) {
    model *donor, *m = dec_check_synth_untied("64,160,2,4,2,512,512", 1, &donor);
    model *pdonor, *pos = dec_check_synth_positional("64,160,2,4,2,512,512", 5, &pdonor);
    int prompt[DEC_CHECK_SYNTH_PROMPT];
    dec_check_synth_prompt(prompt);
    const int Ws[] = {1, 2, 5, 15}, Ns[] = {2, 3, 5}, Gs[] = {0, 1, 5, 15};
    long pos_tokens = 0, pos_steps = 0;
    for (int wi = 0; wi < 4; wi++)
        for (int ni = 0; ni < 3; ni++)
            for (int gi = 0; gi < 4; gi++)
                for (int pi = 0; pi < 2; pi++) {
                    char spec[96], what[64];
                    snprintf(spec, sizeof spec, "lookahead:W=%d,N=%d,G=%d", Ws[wi], Ns[ni], Gs[gi]);
                    dec_env env = {.target = pi ? pos : m, .kernels = KERN_EXACT};
                    int plen = (wi + gi) % 2 ? 1 : 9;
                    snprintf(what, sizeof what, "%s, prompt %d", pi ? "positional" : "untied",
                             plen);
                    dec_stats st;
                    dec_check_exact(&env, spec, prompt, plen, 37, NULL, &st, NULL, what);
                    if (pi) pos_tokens += st.new_tokens, pos_steps += st.target_steps;
                }
    CHECK_MSG(pos_tokens > 2 * pos_steps, "positional model: %ld tokens in %ld steps", pos_tokens,
              pos_steps);
    /* the variants, and max_new 0/1/2, on a few shapes */
    const char *shapes[] = {"W=4,N=3,G=4", "W=15,N=5,G=15", "W=1,N=4,G=2"};
    const char *variants[] = {"",
                              ",refill=lade",
                              ",refill=llamacpp",
                              ",full_bonus=0",
                              ",refill=lade,full_bonus=0",
                              ",jacobi=1",
                              ",share=0",
                              ",seed_pool=1",
                              ",init=random,seed=11",
                              ",refill=llamacpp,jacobi=1,seed_pool=1,share=0"};
    const int max_news[] = {0, 1, 2, 37};
    for (int si = 0; si < 3; si++)
        for (int vi = 0; vi < 10; vi++)
            for (int mi = 0; mi < 4; mi++)
                for (int pi = 0; pi < 2; pi++) {
                    if (mi < 3 && (vi > 1 || pi)) continue;
                    char spec[160], what[64];
                    snprintf(spec, sizeof spec, "lookahead:%s%s", shapes[si], variants[vi]);
                    dec_env env = {.target = pi ? pos : m, .kernels = KERN_EXACT};
                    snprintf(what, sizeof what, "%s, max_new %d", pi ? "positional" : "untied",
                             max_news[mi]);
                    dec_stats st;
                    dec_check_exact(&env, spec, prompt, 1 + 8 * pi, max_news[mi], NULL, &st, NULL,
                                    what);
                    if (max_news[mi] == 0) CHECK(st.target_steps == 0 && st.new_tokens == 0);
                    if (max_news[mi] == 1) CHECK(st.target_steps == 1 && st.drafted == 0);
                }
    /* context edges: 7 tokens left of 512, then 1; a context of 64 */
    dec_env env = {.target = pos, .kernels = KERN_EXACT};
    dec_stats st;
    dec_check_trace tr;
    dec_check_exact(&env, "lookahead:jacobi=1", prompt, 505, 256, NULL, &st, &tr, "near seq_len");
    CHECK(st.new_tokens == 7);
    dec_check_exact(&env, "lookahead", prompt, 511, 256, NULL, &st, &tr, "seq_len - 1");
    CHECK(st.new_tokens == 1 && st.target_steps == 1);
    model *sdonor, *small = dec_check_synth_positional("48,96,2,4,4,512,64", 3, &sdonor);
    env.target = small;
    dec_check_exact(&env, "lookahead:W=15,N=5,G=15,seed_pool=1", prompt, 40, 40, NULL, &st, &tr,
                    "context 64");
    CHECK(st.new_tokens == 24);
    model_close(small), model_close(sdonor);
    model_close(m), model_close(donor), model_close(pos), model_close(pdonor);
}

/* N=2, G=0, refill=align: level 0 is a Jacobi window of W-1 guesses, refreshed the same way. */
static void test_jacobi_case(void) {
    char err[ERR_LEN];
    model *donor, *m = dec_check_synth_untied("64,160,2,4,2,512,512", 1, &donor);
    model *pdonor, *pos = dec_check_synth_positional("64,160,2,4,2,512,512", 5, &pdonor);
    model *real;
    CHECK_MSG(model_open(&real, test_shared("models/stories260K.bin"), err) == 0, "%s", err);
    const model *models[] = {m, pos, real};
    const int Ws[] = {2, 5, 17};
    const char *inits[] = {"prompt", "random"};
    for (int mi = 0; mi < 3; mi++)
        for (int wi = 0; wi < 3; wi++)
            for (int ii = 0; ii < 2; ii++) {
                char la_spec[96], ja_spec[96];
                snprintf(la_spec, sizeof la_spec,
                         "lookahead:W=%d,N=2,G=0,refill=align,init=%s,seed=4", Ws[wi], inits[ii]);
                snprintf(ja_spec, sizeof ja_spec, "jacobi:window=%d,init=%s,seed=4", Ws[wi] - 1,
                         inits[ii]);
                dec_env env = {.target = models[mi], .kernels = KERN_EXACT};
                const int *p = mi == 2 ? ids[wi] : ids[0];
                int plen = mi == 2 ? lens[wi] : 1 + wi * 4;
                dec_stats a, b;
                dec_check_exact(&env, la_spec, p, plen, 60, NULL, &a, NULL, "lookahead N=2");
                dec_check_exact(&env, ja_spec, p, plen, 60, NULL, &b, NULL, "jacobi");
                CHECK_MSG(
                    a.target_steps == b.target_steps && a.target_rows == b.target_rows &&
                        a.accepted == b.accepted && a.drafted == b.drafted &&
                        memcmp(a.accept_hist, b.accept_hist, sizeof a.accept_hist) == 0,
                    "model %d: %s took %ld steps / %ld rows / %ld accepted, %s %ld / %ld / %ld", mi,
                    la_spec, a.target_steps, a.target_rows, a.accepted, ja_spec, b.target_steps,
                    b.target_rows, b.accepted);
            }
    model_close(real), model_close(m), model_close(donor), model_close(pos), model_close(pdonor);
}

static void test_alloc_and_params(void) {
    char err[ERR_LEN];
    model *donor, *m = dec_check_synth_positional("64,160,2,4,2,512,512", 1, &donor);
    dec_env env = {.target = m, .kernels = KERN_EXACT};
    dec *d;
    CHECK(dec_create(&d, "lookahead:seed_pool=1,jacobi=1", &env, err) == 0);
    CHECK_MSG(strcmp(dec_spec(d), "lookahead:W=15,N=5,G=15,seed_pool=1,refill=align,full_bonus=1,"
                                  "jacobi=1,share=1,init=prompt,seed=0") == 0,
              "%s", dec_spec(d));
    int prompt[9] = {1, 5, 9, 13, 17, 21, 25, 29, 33}, out1[128], out2[128], n1, n2;
    dec_stats st1, st2;
    long before = dec_check_mallocs;
    CHECK(dec_generate(d, prompt, 9, 120, out1, &n1, &st1, err) == 0);
    CHECK_MSG(dec_check_mallocs == before, "generate allocated %ld times",
              dec_check_mallocs - before);
    CHECK(dec_generate(d, prompt, 9, 120, out2, &n2, &st2, err) == 0); /* the pool starts empty */
    CHECK(n1 == n2 && memcmp(out1, out2, sizeof(int) * n1) == 0);
    CHECK(st1.target_steps == st2.target_steps && st1.target_rows == st2.target_rows);
    dec_free(d);
    CHECK(dec_create(&d, "lookahead:W=0", &env, err) == -1 && strstr(err, "W=0") &&
          strstr(err, "1..64"));
    CHECK(dec_create(&d, "lookahead:N=1", &env, err) == -1 && strstr(err, "2..12"));
    CHECK(dec_create(&d, "lookahead:G=65", &env, err) == -1 && strstr(err, "0..64"));
    CHECK(dec_create(&d, "lookahead:refill=x", &env, err) == -1 &&
          strstr(err, "align|lade|llamacpp"));
    model_close(m), model_close(donor);
}

static void test_lade_start(void) {
    char err[ERR_LEN];
    model *m;
    CHECK_MSG(model_open(&m, test_shared("models/stories260K.bin"), err) == 0, "%s", err);
    if (!m) return;
    dec_env env = {.target = m, .kernels = KERN_EXACT};
    const char *specs[] = {"lookahead:W=15,N=5,G=15,init=lade",
                           "lookahead:W=15,N=5,G=15,fill_prefill=1",
                           "lookahead:W=15,N=5,G=15,init=lade,fill_prefill=1",
                           "lookahead:W=4,N=3,G=4,fill_prefill=1,seed_pool=1,jacobi=1",
                           "lookahead:W=3,N=2,G=2,fill_prefill=1,refill=lade"};
    const int bos = 1;
    for (size_t s = 0; s < sizeof specs / sizeof specs[0]; s++) {
        long steps = 0, verify = 0, runs = 0;
        for (int i = 0; i < 5; i++) {
            if (!test_keep(i + 5 * (long)s, 5)) continue;
            runs++;
            dec_stats st;
            char what[64];
            snprintf(what, sizeof what, "lade start prompt %d", i);
            CHECK(dec_check_exact(&env, specs[s], ids[i], lens[i], 200, NULL, &st, NULL, what));
            steps += st.target_steps, verify += st.verify_steps;
        }
        CHECK(dec_check_exact(&env, specs[s], &bos, 1, 64, NULL, NULL, NULL, "BOS only"));
        CHECK_MSG(steps == verify + runs, "%s: %ld steps, %ld verifications", specs[s], steps,
                  verify);
        fprintf(stderr, "%s: %ld target steps on %ld prompts\n", specs[s], steps, runs);
    }
    /* the window's pass after a prompt longer than a prefill chunk */
    model *donor, *sm = dec_check_synth_untied("64,160,2,4,2,512,1024", 3, &donor);
    dec_env senv = {.target = sm, .kernels = KERN_EXACT};
    int prompt[DEC_CHECK_SYNTH_PROMPT];
    dec_check_synth_prompt(prompt);
    CHECK(dec_check_exact(&senv, "lookahead:W=5,N=4,G=5,fill_prefill=1", prompt,
                          DEC_CHECK_SYNTH_PROMPT, 40, NULL, NULL, NULL, "600-token prompt"));
    /* after the prompt's pass the window holds two levels (its fill step done); the decode
     * step that ends a 2-token output does not move the window */
    dec *d;
    CHECK(dec_create(&d, "lookahead:W=5,N=4,G=5,fill_prefill=1,init=lade", &env, err) == 0);
    int out[64], n;
    dec_stats st;
    CHECK(dec_generate(d, ids[0], lens[0], 2, out, &n, &st, err) == 0 && n == 2);
    lookahead *la = d->impl;
    CHECK_MSG(la->top == 1 && la->width == la->C - 1 && st.target_steps == 2, "top %d width %d",
              la->top, la->width);
    long before = dec_check_mallocs;
    CHECK(dec_generate(d, ids[1], lens[1], 60, out, &n, &st, err) == 0);
    CHECK_MSG(dec_check_mallocs == before, "fill_prefill: %ld allocations",
              dec_check_mallocs - before);
    dec_free(d);
    CHECK(dec_create(&d, "lookahead:fill_prefill=0", &env, err) == 0);
    CHECK(strcmp(dec_spec(d), "lookahead:W=15,N=5,G=15,seed_pool=0,refill=align,full_bonus=1,"
                              "jacobi=0,share=1,init=prompt,seed=0") == 0);
    dec_free(d);
    model_close(sm), model_close(donor), model_close(m);
}

/* ---- 7. LADE's configuration --------------------------------------------------------------- */

typedef struct {
    int steps, max_emit, fill_drafted, fill_emit_max, n_fill;
} step_log;

static void log_step(void *user, const dec_step *s) {
    step_log *g = user;
    g->steps++;
    if (s->emitted > g->max_emit) g->max_emit = s->emitted;
    if (g->steps <= g->n_fill) { /* the decode steps before the window is full */
        g->fill_drafted += s->drafted;
        if (s->emitted > g->fill_emit_max) g->fill_emit_max = s->emitted;
    }
}

static step_log run_logged(const model *m, const char *spec, const int *prompt, int n_prompt,
                           int max_new, int n_fill, dec_stats *st) {
    char err[ERR_LEN];
    step_log g = {.n_fill = n_fill};
    dec_env env = {.target = m, .kernels = KERN_EXACT, .on_step = log_step, .user = &g};
    dec *d;
    static int out[DEC_CHECK_MAX_OUT];
    int n;
    CHECK_MSG(dec_create(&d, spec, &env, err) == 0, "%s: %s", spec, err);
    CHECK_MSG(dec_generate(d, prompt, n_prompt, max_new, out, &n, st, err) == 0, "%s: %s", spec,
              err);
    dec_free(d);
    return g;
}

static void test_lade_preset(void) {
    char err[ERR_LEN];
    model *pdonor, *pos = dec_check_synth_positional("64,160,2,4,2,512,512", 5, &pdonor);
    dec_env env = {.target = pos, .kernels = KERN_EXACT};
    dec *d;
    /* the parameters it sets, and the canonical spec parses back to itself */
    const char *want = "lookahead:W=7,N=5,G=7,seed_pool=0,refill=lade,full_bonus=0,jacobi=0,"
                       "share=0,init=lade,seed=0,fill_prefill=1,fill_verify=0,preset=lade";
    CHECK(dec_create(&d, "lookahead:W=7,N=5,G=7,preset=lade", &env, err) == 0);
    CHECK_MSG(d && strcmp(dec_spec(d), want) == 0, "%s", d ? dec_spec(d) : err);
    dec_free(d);
    CHECK(dec_create(&d, want, &env, err) == 0 && strcmp(dec_spec(d), want) == 0);
    dec_free(d);
    CHECK(dec_create(&d, "lookahead:preset=lade,refill=lade,share=0", &env, err) == 0);
    dec_free(d);
    /* a contradiction, and N=2 (LADE's loop needs level 1) */
    CHECK(dec_create(&d, "lookahead:preset=lade,refill=align", &env, err) == -1);
    CHECK_MSG(strstr(err, "preset=lade sets refill=lade") && strstr(err, "contradicts"), "%s", err);
    CHECK(dec_create(&d, "lookahead:full_bonus=1,preset=lade", &env, err) == -1 &&
          strstr(err, "full_bonus=0"));
    CHECK(dec_create(&d, "lookahead:W=4,N=2,G=4,preset=lade", &env, err) == -1 &&
          strstr(err, "N >= 3"));
    CHECK(dec_create(&d, "lookahead:preset=ladee", &env, err) == -1 && strstr(err, "none|lade"));
    /* the same run as the parameters spelled out */
    int prompt[DEC_CHECK_SYNTH_PROMPT];
    dec_check_synth_prompt(prompt);
    dec_stats a, b;
    step_log la = run_logged(pos, "lookahead:W=5,N=4,G=5,preset=lade", prompt, 9, 120, 0, &a);
    step_log lb = run_logged(pos,
                             "lookahead:W=5,N=4,G=5,refill=lade,full_bonus=0,init=lade,"
                             "fill_prefill=1,fill_verify=0,share=0",
                             prompt, 9, 120, 0, &b);
    CHECK(a.target_steps == b.target_steps && a.target_rows == b.target_rows &&
          a.accepted == b.accepted && la.max_emit == lb.max_emit);
    /* at most N-1 tokens a step (the positional model confirms every n-gram it made): the
     * defaults take the bonus token too */
    CHECK_MSG(la.max_emit == 3, "preset=lade: %d tokens in one step (N-1 = 3)", la.max_emit);
    step_log ld = run_logged(pos, "lookahead:W=5,N=4,G=5", prompt, 9, 120, 0, &b);
    CHECK_MSG(ld.max_emit == 4, "defaults: %d tokens in one step (N = 4)", ld.max_emit);
    /* fill_verify=0: the pool holds the prompt's n-grams (seed_pool=1), yet the N-2 fill steps
     * verify nothing; the default verifies them already */
    int rep[40];
    for (int i = 0; i < 40; i++) rep[i] = 3 + i % 8; /* a prompt that repeats: n-grams */
    step_log f0 =
        run_logged(pos, "lookahead:W=5,N=5,G=5,seed_pool=1,fill_verify=0", rep, 40, 60, 3, &a);
    step_log f1 = run_logged(pos, "lookahead:W=5,N=5,G=5,seed_pool=1", rep, 40, 60, 3, &b);
    CHECK_MSG(f0.fill_drafted == 0 && f0.fill_emit_max == 1, "fill_verify=0: %d drafted, %d tokens",
              f0.fill_drafted, f0.fill_emit_max);
    CHECK_MSG(f1.fill_drafted > 0, "fill_verify=1: the fill steps drafted %d", f1.fill_drafted);
    /* greedy's tokens: synthetic shapes and max_new edges, then the real model */
    model *donor, *m = dec_check_synth_untied("64,160,2,4,2,512,512", 1, &donor);
    const char *shapes[] = {"W=4,N=3,G=4", "W=15,N=5,G=15", "W=1,N=4,G=2", "W=7,N=5,G=7"};
    const int max_news[] = {0, 1, 2, 3, 37};
    for (int si = 0; si < 4; si++)
        for (int mi = 0; mi < 5; mi++)
            for (int pi = 0; pi < 2; pi++) {
                char spec[96], what[64];
                snprintf(spec, sizeof spec, "lookahead:%s,preset=lade", shapes[si]);
                snprintf(what, sizeof what, "%s, max_new %d", pi ? "positional" : "untied",
                         max_news[mi]);
                dec_env e = {.target = pi ? pos : m, .kernels = KERN_EXACT};
                dec_check_exact(&e, spec, prompt, 1 + 8 * pi, max_news[mi], NULL, NULL, NULL, what);
            }
    model *real;
    CHECK_MSG(model_open(&real, test_shared("models/stories260K.bin"), err) == 0, "%s", err);
    dec_env renv = {.target = real, .kernels = KERN_EXACT};
    int ends = 0;
    run_set(&renv, "lookahead:W=7,N=5,G=7,preset=lade", 6, "preset", &ends, 3, 0);
    run_set(&renv, "lookahead:W=4,N=3,G=4,preset=lade", 6, "preset", &ends, 3, 1);
    model_close(real);
    model_close(m), model_close(donor), model_close(pos), model_close(pdonor);
}

int main(void) {
    if (dec_check_tinystories(20, ids, lens)) return test_finish("test_lookahead");
    model *donor, *m = dec_check_synth_untied("64,160,2,4,2,512,512", 1, &donor);
    test_layout(m);
    test_refill(m);
    model_close(m), model_close(donor);
    test_jacobi_case();
    test_grid();
    test_alloc_and_params();
    test_lade_start();
    test_lade_preset();
    test_real("models/stories260K.bin");
    test_real("models/llama2xs.bin");
    return test_finish("test_lookahead");
}
