/* test_sampling.c: sampling at temperature > 0 (decoders/sampling.h, dec_choose.c), on the real
 * models (stories260K target, llama2xs draft).
 *  1. the noise function is the one sampling.h specifies: keys and uniforms equal an independent
 *     implementation's (values below, from Python's integers), the Gumbel noise within 4 ulp of
 *     Python's math.log and bit-equal to the values pinned here (a machine or compiler giving
 *     other bits fails: seeds must reproduce everywhere); samp_log / samp_exp within 2^-50 of
 *     libm's;
 *  2. the kept set and distribution (samp_dist) equal a brute-force sort for top-k, top-p and
 *     both, with ties, and the coupled pick (pruned) the brute-force argmax of logit / T + g;
 *  3. coupled mode: every decoder's output equals plain sampling's for the same seed, token for
 *     token, over prompts, seeds, temperatures and cuts; top_k = 1 is greedy; in both modes,
 *     generate() allocates nothing;
 *  4. standard mode, statistically: for each decoder, N seeded generations of L tokens from one
 *     prompt against N of plain sampling: the distribution of every position and of every pair of
 *     adjacent positions is compared by a two-sample chi-square test (categories with fewer than
 *     20 pooled counts merged), each at significance 1e-4 (SIGNIFICANCE says why); the rejection
 *     tests' acceptances agree with their expected number (|z| < 4); and a deliberately biased
 *     verifier (a rejected draft replaced by a draw from p instead of the residual:
 *     dec_sampling.test_flaw) fails the same test with p < 1e-9. Everything is seeded, so the
 * outcome is the same on every run and machine (the statistics are printed).
 * Under the sanitizers (testutil.h test_keep), whose builds compute the same tokens, 3. runs
 * a quarter of its decoders per prompt and setting (rotating: each on 3 of the 12) and 4. draws 500
 * samples of each decoder instead of 2000 (against the first 500 of plain sampling's): every
 * decoder still runs in both modes and is checked the same way at the same significance (the
 * Sequoia shapes of tree and recycle in coupled mode only); plain sampling and the biased
 * verifier keep their 2000 (its p of 1e-13 needs them). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/sampling.h"
#include "model/loader/model_file.h"
#include "model/tokenizer/tokenizer.h"
#include "tests/dec_check.h"
#include "tests/testutil.h"
#include "util/clock.h"
#include "util/err.h"
#include "util/rng.h"

DEC_CHECK_COUNT_MALLOC

/* ---- 1. the noise function ---------------------------------------------------------------- */

static void test_noise(void) {
    /* seed, pos, stream, id, key(seed, pos), u, g: computed with Python from the definitions in
     * sampling.h (integers exact; g with math.log) */
    static const struct {
        uint64_t seed;
        int pos, stream, id;
        uint64_t key;
        double u, g;
    } want[] = {
        {0x0ull, 0, 0, 0, 0xa706dd2f4d197e6full, 0x1.1c13ade1c7e5ep-3, -0x1.5c8c496496464p-1},
        {0x1ull, 5, 0, 7, 0xb1441d254bd86cd7ull, 0x1.63343458b0280p-1, 0x1.01917f5522694p+0},
        {0x2aull, 100, 0, 511, 0xdfbdb9072cdbcb8full, 0x1.bf6876a52d46fp-2, 0x1.828ac3152593bp-3},
        {0xdeadbeefcafef00dull, 123456, 0, 31999, 0x3512c90a56aac60bull, 0x1.7058625bbf2b4p-1,
         0x1.1c5bb1295b67cp+0},
        {0x7ull, 3, 3, 2, 0x6baa78681a99f995ull, 0x1.c5a7c9381718ap-1, 0x1.0e587553924d4p+1},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        uint64_t k = samp_key(want[i].seed, want[i].pos);
        double u = samp_uniform(k, (uint32_t)want[i].stream, (uint32_t)want[i].id);
        CHECK_MSG(k == want[i].key && u == want[i].u, "case %zu: key %016llx u %a", i,
                  (unsigned long long)k, u);
        if (want[i].stream != SAMP_GUMBEL) continue;
        double g = samp_gumbel(k, want[i].id);
        CHECK_MSG(fabs(g - want[i].g) <= 4 * fabs(nextafter(want[i].g, 0) - want[i].g),
                  "case %zu: g %a vs %a", i, g, want[i].g);
    }
    /* this implementation's bits (the reproducibility contract): any change here changes every
     * coupled output */
    static const double pinned[] = {-0x1.5c8c496496464p-1, 0x1.01917f5522694p+0,
                                    0x1.828ac3152593ap-3, 0x1.1c5bb1295b67cp+0};
    for (int i = 0; i < 4; i++) {
        double g = samp_gumbel(samp_key(want[i].seed, want[i].pos), want[i].id);
        CHECK_MSG(g == pinned[i], "pinned %d: %a vs %a", i, g, pinned[i]);
    }
    /* log and exp against libm */
    double worst_log = 0, worst_exp = 0;
    rng_state r;
    rng_seed(&r, 3);
    for (int i = 0; i < 200000; i++) {
        double x = ldexp(1.0 + (double)(rng_u64(&r) >> 11) / 9007199254740992.0,
                         (int)rng_below(&r, 120) - 60);
        double a = samp_log(x), b = log(x);
        if (b != 0) worst_log = fmax(worst_log, fabs(a - b) / fmax(fabs(b), 1e-300));
        double y = -60.0 * (double)(rng_u64(&r) >> 11) / 9007199254740992.0;
        worst_exp = fmax(worst_exp, fabs(samp_exp(y) - exp(y)) / exp(y));
    }
    fprintf(stderr, "noise: samp_log relative error <= %.3g, samp_exp <= %.3g\n", worst_log,
            worst_exp);
    CHECK(worst_log < 0x1p-50 && worst_exp < 0x1p-50);
    CHECK(samp_log(1.0) == 0 && samp_exp(0) == 1 && samp_exp(-800) == 0);
}

/* ---- 2. the kept set ---------------------------------------------------------------------- */

static const float *g_sort_logits;
static int by_logit(const void *a, const void *b) {
    int x = *(const int *)a, y = *(const int *)b;
    float lx = g_sort_logits[x], ly = g_sort_logits[y];
    return lx > ly ? -1 : lx < ly ? 1 : x - y;
}

static void test_cut(void) {
    enum { V = 512 };
    char err[ERR_LEN];
    samp_work *w;
    CHECK_MSG(samp_work_new(&w, V, err) == 0, "%s", err);
    static float l[V];
    static double p[V], want[V];
    static int order[V];
    rng_state r;
    rng_seed(&r, 11);
    const struct {
        double T, top_p;
        int top_k;
    } cases[] = {{1, 1, 0}, {0.7, 1, 40}, {1.3, 0.9, 0}, {0.5, 0.8, 20}, {2, 0.5, 1}, {1, 0.3, 3}};
    for (int trial = 0; trial < 20; trial++) {
        for (int v = 0; v < V; v++) /* coarse values: ties happen */
            l[v] = (float)((int)rng_below(&r, 64) - 40) * 0.25f;
        for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
            dec_sampling s = {
                .temperature = cases[c].T, .top_k = cases[c].top_k, .top_p = cases[c].top_p};
            int kept = samp_dist(w, &s, l, p);
            /* brute force: sort, cut at k, then the shortest prefix reaching top_p */
            for (int v = 0; v < V; v++) order[v] = v;
            g_sort_logits = l;
            qsort(order, V, sizeof order[0], by_logit);
            int k = s.top_k > 0 && s.top_k < V ? s.top_k : V;
            double lmax = l[order[0]], zk = 0, cum = 0;
            for (int i = 0; i < k; i++) zk += exp((l[order[i]] - lmax) / s.temperature);
            int m = 0;
            while (m < k) {
                cum += exp((l[order[m++]] - lmax) / s.temperature);
                if (s.top_p < 1 && cum >= s.top_p * zk * (1 - 1e-12)) break;
            }
            memset(want, 0, sizeof want);
            for (int i = 0; i < m; i++)
                want[order[i]] = exp((l[order[i]] - lmax) / s.temperature) / cum;
            double diff = 0;
            for (int v = 0; v < V; v++) diff = fmax(diff, fabs(p[v] - want[v]));
            CHECK_MSG(kept == m && diff < 1e-12, "trial %d case %zu: kept %d vs %d, diff %g", trial,
                      c, kept, m, diff);
            /* the coupled pick (pruned: most logarithms skipped) is the brute-force argmax of
             * logit / T + g over the kept set */
            for (int pos = 0; pos < 8; pos++) {
                s.seed = (uint64_t)trial * 7919 + pos;
                uint64_t key = samp_key(s.seed, pos);
                int brute = -1;
                double best = 0;
                for (int i = 0; i < m; i++) {
                    int v = order[i];
                    double sc = (double)l[v] / s.temperature + samp_gumbel(key, v);
                    if (brute < 0 || sc > best || (sc == best && v < brute)) brute = v, best = sc;
                }
                int got = samp_gumbel_pick(w, &s, l, pos);
                CHECK_MSG(got == brute, "trial %d case %zu pos %d: pick %d, brute force %d", trial,
                          c, pos, got, brute);
            }
        }
    }
    samp_work_free(w);
}

/* ---- 3. coupled mode: exact ----------------------------------------------------------------- */

#define N_PROMPTS 4
/* REST's datastore (dec_check_rest_store: TinyStories paragraphs the prompts are not among),
 * written in the working folder at the start. */
#define REST_DS "tmp_test_sampling_rest.ds"
/* Medusa's heads trained for stories260K (train/, committed as test data). */
#define MEDUSA_HEAD DECBENCH_SOURCE_DIR "/tests/data/heads/stories260K-medusa"
static int ids[N_PROMPTS][DEC_CHECK_MAX_PROMPT], lens[N_PROMPTS];
/* eagle's draft head: the one trained for stories260K (train/, committed as test data) */
#define EAGLE_HEAD "eagle:head=" DECBENCH_SOURCE_DIR "/tests/data/heads/stories260K-eagle"

static const char *const all_specs[] = {
    "jacobi:window=4",
    "jacobi:window=16,init=random",
    "lookahead:W=4,N=3,G=4",
    "lookahead:W=5,N=4,G=5,seed_pool=1,jacobi=1",
    "lookahead:W=4,N=3,G=4,init=lade,fill_prefill=1",
    "lookahead:W=3,N=2,G=3,share=0,refill=lade",
    "pld:ngram=3,k=4",
    "spec:gamma=4",
    "spec:gamma=2,p_min=0.5,adapt=1",
    "ouroboros:gamma=4,W=4,beta=4,K=2",
    "ouroboros:gamma=2,W=4,beta=3,K=3,trim=1,p_min=0.3,adapt=1",
    "tree:shape=3-2-1",
    "tree:mode=dynamic,nodes=8,depth=4,k=2",
    "tree:mode=split,branches=2,p_split=10,nodes=8",
    "tree:shape=3-2-1,draw=1",
    "suffix:budget=8",
    "recycle:nodes=16",
    "sam:k=4,threshold=2",
    ("rest:ds=" REST_DS),
    "skip:gamma=4",
    "skip:layers=2,adapt=swift,window=8",
    "tree:mode=sequoia,nodes=8,depth=4",
    "recycle:tree=sequoia,nodes=12",
    "suffix:shape=sequoia,budget=8",
    ("rest:ds=" REST_DS ",shape=sequoia,num_draft=8"),
    "medusa:head=" MEDUSA_HEAD ",nodes=20",
    EAGLE_HEAD ",total_tokens=8,depth=3,top_k=3",
    EAGLE_HEAD ",mode=static",
};
#define N_SPECS (int)(sizeof all_specs / sizeof all_specs[0])

static void test_coupled(const model *tm, const model *dm) {
    const struct {
        double T, top_p;
        int top_k;
        unsigned long long seed;
    } cfg[] = {{1.0, 1, 0, 1}, {0.8, 0.95, 40, 2}, {1.5, 0.9, 0, 12345}};
    long equal = 0, total = 0, differs_from_greedy = 0;
    for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
        dec_env env = {.target = tm,
                       .draft = dm,
                       .kernels = KERN_EXACT,
                       .sampling = {.temperature = cfg[c].T,
                                    .top_k = cfg[c].top_k,
                                    .top_p = cfg[c].top_p,
                                    .seed = cfg[c].seed,
                                    .mode = DEC_SAMPLING_COUPLED}};
        dec_env genv = {.target = tm, .kernels = KERN_EXACT};
        for (int i = 0; i < N_PROMPTS; i++) {
            static int want[DEC_CHECK_MAX_OUT], greedy[DEC_CHECK_MAX_OUT];
            int n_want = dec_check_greedy(&env, ids[i], lens[i], 64, want);
            int n_greedy = dec_check_greedy(&genv, ids[i], lens[i], 64, greedy);
            differs_from_greedy += n_want != n_greedy || memcmp(want, greedy, sizeof(int) * n_want);
            for (int s = 0; s < N_SPECS; s++) {
                if (!test_keep(((long)c * N_PROMPTS + i) * N_SPECS + s, 4)) continue;
                char what[96];
                snprintf(what, sizeof what, "coupled T=%g k=%d p=%g seed %llu prompt %d", cfg[c].T,
                         cfg[c].top_k, cfg[c].top_p, cfg[c].seed, i);
                equal += dec_check_vs(&env, all_specs[s], ids[i], lens[i], 64, want, n_want, NULL,
                                      NULL, NULL, what);
                total++;
            }
        }
    }
    fprintf(stderr,
            "coupled: %ld/%ld outputs equal plain sampling's; %ld of %d plain samples "
            "differ from greedy\n",
            equal, total, differs_from_greedy, (int)(sizeof cfg / sizeof cfg[0]) * N_PROMPTS);
    CHECK(equal == total && differs_from_greedy >= 10);
    /* top_k = 1 keeps the argmax alone: greedy's tokens whatever the noise */
    dec_env env = {
        .target = tm,
        .draft = dm,
        .kernels = KERN_EXACT,
        .sampling = {.temperature = 1, .top_k = 1, .seed = 9, .mode = DEC_SAMPLING_COUPLED}};
    dec_env genv = {.target = tm, .kernels = KERN_EXACT};
    static int g[DEC_CHECK_MAX_OUT];
    int n = dec_check_greedy(&genv, ids[0], lens[0], 64, g);
    CHECK(
        dec_check_vs(&env, "spec:gamma=3", ids[0], lens[0], 64, g, n, NULL, NULL, NULL, "top_k=1"));
}

static void test_no_malloc(const model *tm, const model *dm) {
    char err[ERR_LEN];
    static int out[DEC_CHECK_MAX_OUT];
    for (int mode = 0; mode < 2; mode++)
        for (int s = 0; s < N_SPECS; s++) {
            dec_env env = {
                .target = tm,
                .draft = dm,
                .kernels = KERN_EXACT,
                .sampling = {.temperature = 0.9,
                             .top_k = 30,
                             .top_p = 0.95,
                             .mode = mode ? DEC_SAMPLING_COUPLED : DEC_SAMPLING_STANDARD}};
            dec *d;
            int n;
            dec_stats st;
            if (dec_create(&d, all_specs[s], &env, err)) {
                CHECK_MSG(0, "%s: %s", all_specs[s], err);
                continue;
            }
            long before = dec_check_mallocs;
            CHECK(dec_generate(d, ids[1], lens[1], 64, out, &n, &st, err) == 0);
            CHECK_MSG(!dec_check_counting || dec_check_mallocs == before,
                      "%s (%s): %ld allocations in generate", all_specs[s],
                      mode ? "coupled" : "standard", dec_check_mallocs - before);
            dec_free(d);
        }
}

/* ---- 4. standard mode: the distribution ----------------------------------------------------- */

/* Q(a, x), the regularized upper incomplete gamma function: the chi-square survival function is
 * Q(df / 2, x / 2). Series below a + 1, continued fraction (modified Lentz) above. */
static double gamma_q(double a, double x) {
    if (x <= 0) return 1;
    double lg = lgamma(a);
    if (x < a + 1) {
        double sum = 1 / a, term = sum;
        for (int n = 1; n < 1000; n++) {
            term *= x / (a + n);
            sum += term;
            if (term < sum * 1e-16) break;
        }
        return 1 - sum * exp(-x + a * log(x) - lg);
    }
    double b = x + 1 - a, c = 1 / 1e-300, d = 1 / b, h = d;
    for (int i = 1; i < 1000; i++) {
        double an = -i * (i - a);
        b += 2;
        d = an * d + b;
        if (fabs(d) < 1e-300) d = 1e-300;
        c = b + an / c;
        if (fabs(c) < 1e-300) c = 1e-300;
        d = 1 / d;
        double del = d * c;
        h *= del;
        if (fabs(del - 1) < 1e-16) break;
    }
    return exp(-x + a * log(x) - lg) * h;
}

/* Two-sample chi-square over categories (counts a[i], b[i] of two samples of equal size n):
 * categories with fewer than 20 pooled counts (10 expected per sample) are merged into one
 * (kept if it reaches 20).
 * Returns the p-value; *stat and *df receive the statistic. */
static double chi2_two(const long *a, const long *b, int n_cat, double *stat, int *df) {
    double x = 0;
    long ra = 0, rb = 0;
    int k = 0;
    for (int i = 0; i < n_cat; i++) {
        if (a[i] + b[i] < 20) {
            ra += a[i], rb += b[i];
            continue;
        }
        x += (double)(a[i] - b[i]) * (a[i] - b[i]) / (a[i] + b[i]);
        k++;
    }
    if (ra + rb >= 20) x += (double)(ra - rb) * (ra - rb) / (ra + rb), k++;
    *stat = x, *df = k - 1;
    return k > 1 ? gamma_q((k - 1) / 2.0, x / 2) : 1;
}

#define N_SAMPLES 2000
#define SAMPLE_LEN 6
/* Per test. Two-sample chi-square tests of plain sampling against itself with other seeds give
 * smallest p-values of 0.007 to 0.16 over the 11 tests of a decoder (measured over 6 seed sets),
 * and the 66 tests here are correlated; 1e-4 keeps a correct decoder's chance of a false alarm
 * under 1%. The biased verifier gives p around 1e-13 at this N. */
#define SIGNIFICANCE 1e-4

/* count generations of SAMPLE_LEN tokens with seeds seed0 + 1..count: out[s][j]. One decoder
 * instance, reseeded per sample. Accumulates the rejection tests' statistics into st_sum. */
static int generate_all(const dec_env *env, const char *spec, const int *prompt, int n_prompt,
                        unsigned long long seed0, int count, int (*out)[SAMPLE_LEN],
                        dec_stats *st_sum) {
    char err[ERR_LEN];
    dec *d;
    if (dec_create(&d, spec, env, err)) {
        CHECK_MSG(0, "%s: %s", spec, err);
        return -1;
    }
    memset(st_sum, 0, sizeof *st_sum);
    for (int s = 0; s < count; s++) {
        int buf[SAMPLE_LEN], n;
        dec_stats st;
        dec_set_seed(d, seed0 + (unsigned long long)s + 1);
        if (dec_generate(d, prompt, n_prompt, SAMPLE_LEN, buf, &n, &st, err)) {
            CHECK_MSG(0, "%s: %s", spec, err);
            dec_free(d);
            return -1;
        }
        for (int j = 0; j < SAMPLE_LEN; j++) out[s][j] = j < n ? buf[j] : -1;
        st_sum->samp_tests += st.samp_tests, st_sum->samp_accepts += st.samp_accepts;
        st_sum->samp_expected += st.samp_expected, st_sum->samp_variance += st.samp_variance;
        st_sum->drafted += st.drafted, st_sum->accepted += st.accepted;
        st_sum->target_steps += st.target_steps;
    }
    dec_free(d);
    return 0;
}

/* Categories: a token (or the end of the output, -1) per position, a pair per adjacent
 * positions; counted by hashing into a table (tokens < 512 here: a pair is t1 * 513 + t2). */
enum { CAT_TOK = 513, CAT_PAIR = 513 * 513 };
static long cnt_a[CAT_PAIR], cnt_b[CAT_PAIR];

/* The smallest p-value over the positions and pairs; prints each test. */
static double compare_samples(int (*a)[SAMPLE_LEN], int (*b)[SAMPLE_LEN], int count,
                              const char *what, int print) {
    double worst = 1;
    for (int j = 0; j < 2 * SAMPLE_LEN - 1; j++) {
        int pair = j >= SAMPLE_LEN, p0 = pair ? j - SAMPLE_LEN : j,
            n_cat = pair ? CAT_PAIR : CAT_TOK;
        memset(cnt_a, 0, sizeof(long) * n_cat), memset(cnt_b, 0, sizeof(long) * n_cat);
        for (int s = 0; s < count; s++) {
            int x = a[s][p0] + 1, y = b[s][p0] + 1;
            if (pair) x = x * CAT_TOK + a[s][p0 + 1] + 1, y = y * CAT_TOK + b[s][p0 + 1] + 1;
            cnt_a[x]++, cnt_b[y]++;
        }
        double stat;
        int df;
        double pv = chi2_two(cnt_a, cnt_b, n_cat, &stat, &df);
        if (print)
            fprintf(stderr, "  %s %s %d%s: chi2 = %.1f, df = %d, p = %.3g\n", what,
                    pair ? "pair" : "position", p0 + 1, pair ? "-next" : "", stat, df, pv);
        if (pv < worst) worst = pv;
    }
    return worst;
}

static void test_standard(const model *tm, const model *dm) {
    char err[ERR_LEN];
    tok *t = NULL;
    CHECK_MSG(tok_load(&t, test_shared("models/tok512.bin"), err) == 0, "%s", err);
    if (!t) return;
    /* A prompt that repeats itself, so that prompt lookup and lookahead's n-grams find drafts. */
    int prompt[64], n_prompt = 0;
    CHECK(tok_encode(t, "Lily and Tom went to the park. Lily and Tom", 1, prompt, &n_prompt, err) ==
          0);
    tok_free(t);
    static int plain[N_SAMPLES][SAMPLE_LEN], got[N_SAMPLES][SAMPLE_LEN];
    dec_env env = {.target = tm,
                   .draft = dm,
                   .kernels = KERN_EXACT,
                   .sampling = {.temperature = 1.0, .mode = DEC_SAMPLING_STANDARD}};
    dec_stats st;
    /* Plain sampling with other seeds than the decoders': a decoder's tokens that no draft
     * covered are plain sampling's own draws for its seed, so equal seeds would correlate the
     * two samples and hide differences (the test assumes independent samples). */
    if (generate_all(&env, "greedy", prompt, n_prompt, 1000000, N_SAMPLES, plain, &st)) return;
    /* the decoders' sample: a quarter under the sanitizers (the first n of plain's) */
    const int n = test_sanitized() ? N_SAMPLES / 4 : N_SAMPLES;
    const char *specs[] = {"spec:gamma=4",
                           "spec:gamma=2,p_min=0.4,adapt=1",
                           "ouroboros:gamma=3,W=4,beta=3,K=3",
                           "lookahead:W=4,N=3,G=4,seed_pool=1,jacobi=1",
                           "jacobi:window=4",
                           "pld:ngram=2,k=4",
                           "tree:shape=2-2-1",
                           "tree:shape=2-2-1,draw=1",
                           "tree:shape=3-3,draw=1",
                           "suffix:budget=6",
                           "recycle:nodes=12",
                           "sam:k=4,threshold=1",
                           "rest:ds=" REST_DS ",num_draft=16",
                           "skip:gamma=4,layers=2",
                           "medusa:head=" MEDUSA_HEAD ",nodes=15",
                           EAGLE_HEAD ",total_tokens=8,depth=3,top_k=3",
                           "tree:mode=sequoia,nodes=8,depth=4",
                           "recycle:tree=sequoia,nodes=12",
                           "suffix:shape=sequoia,budget=6"};
    /* the last five (the learned heads' trees and Sequoia's shapes, verified as fixed guesses
     * by the code the tree, recycle and suffix specs above run; their own code runs under the
     * sanitizers in the coupled test and in test_eagle, test_medusa and test_tree) only outside
     * the sanitizers, whose stage they would lengthen by about two minutes (the heads' forward
     * passes are the slowest code under ASan) */
    const size_t n_specs = sizeof specs / sizeof specs[0] - (test_sanitized() ? 5 : 0);
    for (size_t i = 0; i < n_specs; i++) {
        if (generate_all(&env, specs[i], prompt, n_prompt, 0, n, got, &st)) continue;
        double p = compare_samples(plain, got, n, specs[i], 1);
        double z = st.samp_variance > 0
                       ? (st.samp_accepts - st.samp_expected) / sqrt(st.samp_variance)
                       : 0;
        fprintf(stderr,
                "standard %s: smallest p = %.3g over %d tests; %ld rejection tests, %ld accepted, "
                "%.1f expected (z = %.2f); %.2f tokens per target step\n",
                specs[i], p, 2 * SAMPLE_LEN - 1, st.samp_tests, st.samp_accepts, st.samp_expected,
                z, (double)SAMPLE_LEN * n / st.target_steps);
        CHECK_MSG(p >= SIGNIFICANCE, "%s: distribution differs from plain sampling's (p = %.3g)",
                  specs[i], p);
        CHECK_MSG(st.samp_tests > n / 4 && fabs(z) < 4, "%s: %ld tests, z = %.2f", specs[i],
                  st.samp_tests, z);
    }
    /* the biased verifier: rejected drafts replaced by a draw from p, not from the residual;
     * for a tree of drawn children too (SpecInfer's residual after each rejected sibling) */
    env.sampling.test_flaw = 1;
    const char *flawed[] = {"spec:gamma=4", "tree:shape=3-3,draw=1"};
    for (int f = 0; f < 2; f++) {
        if (generate_all(&env, flawed[f], prompt, n_prompt, 0, N_SAMPLES, got, &st)) continue;
        char what[64];
        snprintf(what, sizeof what, "flawed %s", flawed[f]);
        double p = compare_samples(plain, got, N_SAMPLES, what, 1);
        fprintf(stderr, "standard, biased verifier %s: smallest p = %.3g (must fail)\n", flawed[f],
                p);
        CHECK_MSG(p < 1e-9, "the biased verifier passed %s (p = %.3g)", flawed[f], p);
    }
}

/* A temperature so small that logit / T overflows (3e-308: logits of order 1 give 1e307+) still
 * picks as the limit T -> 0 does: the argmax when it is unique, one of the tied best when not;
 * an unshifted score made every token +-inf and the lowest id won (garbage text, exit 0). */
static void test_tiny_temperature(void) {
    enum { V = 64 };
    char err[ERR_LEN];
    samp_work *w;
    CHECK_MSG(samp_work_new(&w, V, err) == 0, "%s", err);
    float l[V];
    rng_state r;
    rng_seed(&r, 5);
    const double Ts[] = {3e-308, 1e-306, 2.3e-308};
    for (int trial = 0; trial < 40; trial++) {
        for (int v = 0; v < V; v++) l[v] = (float)(rng_unit(&r) * 8 - (trial % 2 ? 9 : 2));
        int top = 0, second = -1;
        for (int v = 1; v < V; v++) top = l[v] > l[top] ? v : top;
        if (trial % 4 == 3) second = (top + 7) % V, l[second] = l[top]; /* a tie */
        for (size_t i = 0; i < sizeof Ts / sizeof Ts[0]; i++) {
            dec_sampling s = {.temperature = Ts[i], .mode = DEC_SAMPLING_COUPLED, .seed = 9};
            int got = samp_gumbel_pick(w, &s, l, trial);
            CHECK_MSG(got == top || got == second, "T=%g trial %d: picked %d (logit %g), best %d (%g)",
                      Ts[i], trial, got, l[got], top, l[top]);
        }
    }
    samp_work_free(w);
}

int main(void) {
    char err[ERR_LEN];
    test_noise();
    test_cut();
    test_tiny_temperature();
    model *tm = NULL, *dm = NULL;
    CHECK_MSG(model_open(&tm, test_shared("models/stories260K.bin"), err) == 0, "%s", err);
    CHECK_MSG(model_open(&dm, test_shared("models/llama2xs.bin"), err) == 0, "%s", err);
    if (tm && dm && dec_check_tinystories(N_PROMPTS, ids, lens) == 0 &&
        dec_check_rest_store(REST_DS, 64, 1000) == 0) {
        double t0 = clock_now();
        test_coupled(tm, dm);
        test_no_malloc(tm, dm);
        double t1 = clock_now();
        test_standard(tm, dm);
        fprintf(stderr, "time: coupled %.1f s, standard %.1f s\n", t1 - t0, clock_now() - t1);
    }
    model_close(dm);
    model_close(tm);
    return test_finish("test_sampling");
}
