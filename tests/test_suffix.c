/* test_suffix.c: SuffixDecoding (decoders/suffix.c) and its suffix trees (suffix_tree.c).
 *  1. the tree against brute force: after random appends over a small vocabulary, with and
 *     without evictions (a tree far smaller than the text), every substring's count equals
 *     its occurrences in the sequences the tree still holds (the newest ones, FIFO), the node
 *     count equals the number of distinct substrings, and a sequence that alone fills the tree
 *     freezes; clear empties it;
 *  2. speculation by hand: counts, probabilities, the budget alpha x pattern, min_prob, the
 *     single path (tree=0), nothing below the end token, ties by parent then token;
 *  3. real models: stories260K and llama2xs targets, the first 20 TinyStories prompts x 256
 *     new tokens through one decoder (warm across them) and its variants (a single path, cold,
 *     a budget of 1, a tiny global tree that evicts): all exact; the warm tree takes fewer
 *     target steps than the cold one and speculates from earlier outputs; a prompt seen
 *     before is then decoded in far fewer steps, its end token inside an accepted path;
 *  4. synthetic grid (max_new 0/1/2/37, one-token and longer prompts, a model that repeats
 *     itself) and a prompt near the context's end;
 *  5. generate() allocates nothing;
 *  6. state: save -> load -> save gives the same bytes and the same decoding as the decoder
 *     that was never saved; corrupted, truncated, foreign and mismatched files are refused with
 *     a message and change nothing; warm=0 refuses state; the fuzz target's seeds and 3000
 *     mutations replayed (tests/fuzz_suffix_state.c).
 * Under the sanitizers (testutil.h test_sanitized) stories260K's runs take a quarter of the
 * prompts; every spec still runs and is compared with greedy. */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "decoders/decoder.h"
#include "decoders/suffix_tree.h"
#include "model/convert/synth.h"
#include "model/loader/model_file.h"
#include "tests/dec_check.h"
#include "tests/fuzz_suffix_state.c"
#include "tests/testutil.h"
#include "util/err.h"
#include "util/rng.h"

DEC_CHECK_COUNT_MALLOC

#define N_PROMPTS 20
static int ids[N_PROMPTS][DEC_CHECK_MAX_PROMPT], lens[N_PROMPTS];

/* ---- 1. the tree against brute force ------------------------------------------------------ */

#define BF_MAX 4096
static int bf_tok[BF_MAX], bf_seq[BF_MAX]; /* every token appended, and its sequence */

/* Occurrences of s[0..n) within one sequence, over sequences first..last. */
static int bf_count(const int *s, int n, int total, int first, int last) {
    int c = 0;
    for (int i = 0; i + n <= total; i++) {
        if (bf_seq[i] < first || bf_seq[i + n - 1] > last || bf_seq[i] != bf_seq[i + n - 1])
            continue;
        c += !memcmp(bf_tok + i, s, sizeof(int) * (size_t)n);
    }
    return c;
}

static void test_tree_brute_force(void) {
    char err[ERR_LEN];
    const int depths[] = {1, 3, 6}, nodes[] = {100000, 300, 60};
    rng_state r;
    rng_seed(&r, 42);
    for (int di = 0; di < 3; di++)
        for (int ni = 0; ni < 3; ni++) {
            suffix_tree *t;
            const int D = depths[di];
            CHECK(stree_new(&t, D, nodes[ni], nodes[ni], err) == 0);
            int total = 0, n_seq = 0;
            for (int s = 0; s < 12; s++) {
                stree_begin(t);
                n_seq++;
                int len = 5 + (int)rng_below(&r, 40);
                for (int i = 0; i < len && total < BF_MAX; i++) {
                    int tok = (int)rng_below(&r, 4); /* a small vocabulary: many repeats */
                    if (stree_append(t, tok)) break; /* frozen: the sequence alone fills it */
                    bf_tok[total] = tok, bf_seq[total++] = n_seq - 1;
                }
            }
            /* the sequences still held: the newest stree_seqs() */
            const int first = n_seq - stree_seqs(t), last = n_seq - 1;
            long held = 0;
            for (int i = 0; i < total; i++) held += bf_seq[i] >= first;
            CHECK_MSG(held == stree_tokens(t), "depth %d nodes %d: %ld tokens held, tree says %ld",
                      D, nodes[ni], held, stree_tokens(t));
            CHECK(stree_evicted(t) == first);
            if (nodes[ni] == 100000) CHECK(first == 0);
            if (nodes[ni] == 60) CHECK(first > 0);
            /* every substring of length <= D: its count; distinct ones = nodes */
            int distinct = 0, bad = 0;
            for (int i = 0; i < total; i++) {
                if (bf_seq[i] < first) continue;
                for (int n = 1; n <= D && i + n <= total && bf_seq[i + n - 1] == bf_seq[i]; n++) {
                    int want = bf_count(bf_tok + i, n, total, first, last);
                    bad += stree_count(t, bf_tok + i, n) != want;
                    /* first occurrence among the held text: one node */
                    int seen = 0;
                    for (int j = 0; j < i && !seen; j++)
                        seen = bf_seq[j] >= first && bf_seq[j] == bf_seq[j + n - 1] &&
                               j + n <= total && !memcmp(bf_tok + j, bf_tok + i, sizeof(int) * n);
                    distinct += !seen;
                }
            }
            CHECK_MSG(bad == 0, "depth %d nodes %d: %d counts differ from brute force", D,
                      nodes[ni], bad);
            CHECK_MSG(distinct == stree_nodes(t),
                      "depth %d nodes %d: %d distinct substrings, %d "
                      "nodes",
                      D, nodes[ni], distinct, stree_nodes(t));
            stree_clear(t);
            CHECK(stree_nodes(t) == 0 && stree_tokens(t) == 0 && stree_count(t, bf_tok, 1) == 0);
            stree_free(t);
        }
    /* a sequence that alone fills the tree freezes until the next begin */
    suffix_tree *t;
    CHECK(stree_new(&t, 4, 10, 100, err) == 0);
    int k = 0;
    while (k < 50 && stree_append(t, k % 7) == 0) k++;
    CHECK(k > 0 && k < 50 && stree_frozen(t) && stree_nodes(t) <= 10 && stree_tokens(t) == k);
    stree_begin(t);
    CHECK(!stree_frozen(t) && stree_append(t, 1) == 0 && stree_evicted(t) == 1);
    stree_free(t);
}

/* ---- 2. speculation by hand ---------------------------------------------------------------- */

static void test_speculation(void) {
    char err[ERR_LEN];
    suffix_tree *t;
    stree_spec *ws;
    CHECK(stree_new(&t, 8, 1000, 1000, err) == 0 && stree_spec_new(&ws, 16, 0.05, err) == 0);
    /* "1 2 3 4 5" twice, "1 2 3 6 7" once, "1 2 3 8" once */
    const int seqs[4][5] = {{1, 2, 3, 4, 5}, {1, 2, 3, 4, 5}, {1, 2, 3, 6, 7}, {1, 2, 3, 8, 0}};
    for (int s = 0; s < 4; s++) {
        stree_begin(t);
        for (int i = 0; i < (s == 3 ? 4 : 5); i++) stree_append(t, seqs[s][i]);
    }
    const int c123[3] = {1, 2, 3};
    CHECK(stree_count(t, c123, 3) == 4 && stree_count(t, c123 + 2, 1) == 4);
    stree_draft d;
    int ctx[3] = {9, 2, 3}; /* patterns "3" (p=1) and "2 3" (p=2) occur; "9 2 3" does not */
    stree_speculate(t, ctx, 3, 16, 10.0, 0.1, 1, -1, ws, &d);
    /* p=2: below "2 3": 4 (2/4), then 5 (2/4), 6 (1/4), 8 (1/4), 7 (1/4): ties go to the
     * earlier parent (8's is the pattern, 7's is 6), then the lower token */
    CHECK_MSG(d.match_len == 2 && d.n == 5, "match %d, %d tokens", d.match_len, d.n);
    const int want_tok[5] = {4, 5, 6, 8, 7}, want_par[5] = {-1, 0, -1, -1, 2};
    const double want_p[5] = {0.5, 0.5, 0.25, 0.25, 0.25};
    for (int i = 0; i < 5 && d.n == 5; i++)
        CHECK_MSG(d.tok[i] == want_tok[i] && d.parent[i] == want_par[i] && d.prob[i] == want_p[i],
                  "token %d: %d (parent %d, p %g)", i, d.tok[i], d.parent[i], d.prob[i]);
    CHECK(d.score == 1.75);
    /* alpha 1.0: at most p tokens, so p=2 grows [4, 5] (score 1.0) and p=1 [4] (0.5) */
    stree_speculate(t, ctx, 3, 16, 1.0, 0.1, 1, -1, ws, &d);
    CHECK(d.match_len == 2 && d.n == 2 && d.tok[0] == 4 && d.tok[1] == 5 && d.score == 1.0);
    /* min_prob 0.3: only the 4 -> 5 path; a budget of 1: only 4 */
    stree_speculate(t, ctx, 3, 16, 10.0, 0.3, 1, -1, ws, &d);
    CHECK(d.n == 2 && d.tok[0] == 4 && d.tok[1] == 5);
    stree_speculate(t, ctx, 3, 1, 10.0, 0.1, 1, -1, ws, &d);
    CHECK(d.n == 1 && d.tok[0] == 4);
    /* a single path: the most frequent child each time */
    stree_speculate(t, ctx, 3, 16, 10.0, 0.1, 0, -1, ws, &d);
    CHECK(d.n == 2 && d.tok[0] == 4 && d.parent[1] == 0 && d.tok[1] == 5);
    /* nothing grows below the end token (4 here) */
    stree_speculate(t, ctx, 3, 16, 10.0, 0.1, 1, 4, ws, &d);
    CHECK(d.n == 4 && d.tok[0] == 4 && d.tok[1] == 6 && d.tok[2] == 8 && d.tok[3] == 7);
    /* an unknown tail: no speculation */
    int none[2] = {3, 9};
    stree_speculate(t, none, 2, 16, 10.0, 0.1, 1, -1, ws, &d);
    CHECK(d.n == 0 && d.match_len == 0);
    /* a fixed shape (Sequoia's trees): below "2 3" the continuations by rank are 4 (count 2),
     * 6 and 8 (1 each: the lower token first); rank 3 does not exist, rank 16 is past the
     * ranks a shape may name: both dropped */
    const int sh_par[6] = {-1, -1, 0, 1, -1, -1}, sh_rank[6] = {0, 1, 0, 0, 3, 16};
    const stree_shape shape = {6, sh_par, sh_rank};
    stree_speculate_shape(t, ctx, 3, 16, 10.0, &shape, -1, ws, &d);
    const int sh_tok[4] = {4, 6, 5, 7}, sh_dpar[4] = {-1, -1, 0, 1}, sh_drank[4] = {0, 1, 0, 0};
    CHECK_MSG(d.n == 4 && d.match_len == 2 && d.score == 1.5, "shape: %d tokens, match %d, %g",
              d.n, d.match_len, d.score);
    for (int i = 0; i < 4 && d.n == 4; i++)
        CHECK_MSG(d.tok[i] == sh_tok[i] && d.parent[i] == sh_dpar[i] && d.rank[i] == sh_drank[i],
                  "shape token %d: %d (parent %d, rank %d)", i, d.tok[i], d.parent[i], d.rank[i]);
    /* nothing below the end token (4), and at most max_spec tokens, the shape's first */
    stree_speculate_shape(t, ctx, 3, 16, 10.0, &shape, 4, ws, &d);
    CHECK(d.n == 3 && d.tok[0] == 4 && d.tok[1] == 6 && d.tok[2] == 7 && d.parent[2] == 1);
    stree_speculate_shape(t, ctx, 3, 2, 10.0, &shape, -1, ws, &d);
    CHECK(d.n == 2 && d.tok[0] == 4 && d.tok[1] == 6);
    stree_speculate_shape(t, none, 2, 16, 10.0, &shape, -1, ws, &d);
    CHECK(d.n == 0 && d.match_len == 0);
    stree_spec_free(ws);
    stree_free(t);
}

/* ---- 3. real models -------------------------------------------------------------------------- */

/* Runs spec over prompts [0, n) with one decoder instance (warm across them); sums. */
static void run_prompts(const dec_env *env, const char *spec, int n, dec_stats *sum, double *cnt,
                        const char *what) {
    char err[ERR_LEN];
    static int want[DEC_CHECK_MAX_OUT], got[DEC_CHECK_MAX_OUT];
    memset(sum, 0, sizeof *sum);
    for (int c = 0; c < STAT_MAX_COUNTERS; c++) cnt[c] = 0;
    dec *d;
    if (dec_create(&d, spec, env, err)) {
        CHECK_MSG(0, "%s: %s", spec, err);
        return;
    }
    int equal = 0;
    for (int i = 0; i < n; i++) {
        int n_want = dec_check_greedy(env, ids[i], lens[i], 256, want), n_got = -1;
        dec_stats st;
        CHECK_MSG(dec_generate(d, ids[i], lens[i], 256, got, &n_got, &st, err) == 0, "%s", err);
        int same = n_got == n_want && !memcmp(got, want, sizeof(int) * (size_t)n_want);
        CHECK_MSG(same, "%s %s prompt %d: %d tokens vs greedy's %d", what, spec, i, n_got, n_want);
        equal += same;
        sum->new_tokens += st.new_tokens, sum->target_steps += st.target_steps;
        sum->target_rows += st.target_rows, sum->drafted += st.drafted;
        sum->accepted += st.accepted;
        for (int c = 0; c < st.n_counters; c++)
            cnt[c] = st.counter_defs[c].agg == STAT_MAX ? st.counters[c] : cnt[c] + st.counters[c];
        CHECK(st.counters[0] <= st.target_steps - 1 && st.counters[2] <= st.counters[0]);
    }
    fprintf(stderr,
            "%s %s: %d/%d equal, %.2f tokens per target step, %.1f rows per step; %.0f "
            "speculations (%.0f from earlier outputs), mean pattern %.1f; global tree %.0f nodes, "
            "%.0f tokens, %.0f evicted\n",
            what, spec, equal, n, (double)sum->new_tokens / sum->target_steps,
            (double)sum->target_rows / (sum->target_steps - n), cnt[0], cnt[2],
            cnt[3] / (cnt[0] ? cnt[0] : 1), cnt[4], cnt[5], cnt[6]);
    dec_free(d);
}

static void test_real(const model *m, const char *what, int n) {
    dec_env env = {.target = m, .kernels = KERN_EXACT};
    dec_stats warm, cold, st;
    double cw[STAT_MAX_COUNTERS], cc[STAT_MAX_COUNTERS], c[STAT_MAX_COUNTERS];
    run_prompts(&env, "suffix", n, &warm, cw, what);
    run_prompts(&env, "suffix:warm=0", n, &cold, cc, what);
    CHECK_MSG(warm.target_steps < cold.target_steps && cw[2] > cc[2],
              "%s: warm %ld steps (%.0f global), cold %ld", what, warm.target_steps, cw[2],
              cold.target_steps);
    CHECK_MSG((double)warm.new_tokens / warm.target_steps > 1.5, "%s: %.2f tokens per step", what,
              (double)warm.new_tokens / warm.target_steps);
    run_prompts(&env, "suffix:tree=0", n, &st, c, what);
    run_prompts(&env, "suffix:budget=1,depth=4", n / 2, &st, c, what);
    CHECK(st.target_rows <= 2 * (st.target_steps - n / 2));
    run_prompts(&env, "suffix:nodes=3000", n, &st, c, what); /* about 1 output: evicts */
    CHECK_MSG(c[6] > 0 && c[4] <= 3000, "%.0f evicted, %.0f nodes", c[6], c[4]);
    /* Sequoia's shape: as many tokens per step as the grown trees within 15%, in no more
     * rows; its accepted tokens counted by sibling rank, most of them rank 0 */
    run_prompts(&env, "suffix:shape=sequoia", n, &st, c, what);
    CHECK_MSG((double)st.new_tokens / st.target_steps >
                      0.85 * (double)warm.new_tokens / warm.target_steps &&
                  st.target_rows <= warm.target_rows,
              "%s: shape=sequoia %.2f tokens per step in %ld rows, grown %.2f in %ld", what,
              (double)st.new_tokens / st.target_steps, st.target_rows,
              (double)warm.new_tokens / warm.target_steps, warm.target_rows);
    CHECK_MSG(c[7] > 0 && c[7] > c[8] && c[7] + c[8] + c[9] + c[10] == st.accepted,
              "%s: accepted by rank %.0f %.0f %.0f %.0f of %ld", what, c[7], c[8], c[9], c[10],
              st.accepted);
    /* what shape=sequoia's parameters refuse */
    const char *bad[][2] = {{"suffix:accept=0.5", "shape=prob does not use them"},
                            {"suffix:levels=3", "shape=prob does not use them"},
                            {"suffix:shape=sequoia,tree=0", "tree=0 is one path"},
                            {"suffix:shape=sequoia,accept=0.7/0.5", "suffix: accept"}};
    for (int i = 0; i < 4; i++) {
        char err[ERR_LEN] = "";
        dec *d = NULL;
        CHECK_MSG(dec_create(&d, bad[i][0], &env, err) != 0 && strstr(err, bad[i][1]),
                  "%s: \"%s\"", bad[i][0], err);
        dec_free(d);
    }
}

/* A prompt decoded twice by one warm decoder: the second time its own earlier output is in the
 * global tree: few steps, and the end token arrives inside an accepted path. */
static void on_step(void *user, const dec_step *s) {
    *(dec_step *)user = *s;
}

static void test_seen_prompt(const model *m) {
    char err[ERR_LEN];
    static int want[DEC_CHECK_MAX_OUT], got[DEC_CHECK_MAX_OUT];
    dec_step last = {0};
    dec_env env = {.target = m, .kernels = KERN_EXACT, .on_step = on_step, .user = &last};
    int ended_inside = 0;
    for (int i = 0; i < 4; i++) {
        dec *d;
        dec_stats a, b;
        int n1, n2, n_want = dec_check_greedy(&env, ids[i], lens[i], 400, want);
        CHECK(dec_create(&d, "suffix", &env, err) == 0);
        CHECK(dec_generate(d, ids[i], lens[i], 400, got, &n1, &a, err) == 0);
        CHECK(dec_generate(d, ids[i], lens[i], 400, got, &n2, &b, err) == 0);
        dec_free(d);
        CHECK(n2 == n_want && !memcmp(got, want, sizeof(int) * (size_t)n_want));
        CHECK_MSG(b.target_steps * 3 < a.target_steps, "prompt %d: %ld then %ld steps", i,
                  a.target_steps, b.target_steps);
        if (i == 0)
            fprintf(stderr, "the same prompt twice: %ld then %ld target steps for %d tokens\n",
                    a.target_steps, b.target_steps, n2);
        if (n2 < 400 && last.accepted > 0 && last.emitted == last.accepted) {
            ended_inside++;
            CHECK(got[n2 - 1] == m->cfg.end_id);
        }
    }
    CHECK_MSG(ended_inside > 0, "no story ended inside an accepted path");
}

/* ---- 4. synthetic grid ------------------------------------------------------------------------
 */

static void test_synthetic(void) {
    char err[ERR_LEN];
    model *donor, *rep;
    model *m = dec_check_synth_untied("64,160,2,4,2,512,512", 1, &donor);
    model_config c; /* tied: greedy repeats itself, long accepted runs */
    CHECK(synth_config("64,160,2,4,2,512,512", &c, err) == 0 && synth_model(&rep, &c, 4, err) == 0);
    int prompt[DEC_CHECK_SYNTH_PROMPT];
    dec_check_synth_prompt(prompt);
    const char *specs[] = {"suffix", "suffix:tree=0,budget=3", "suffix:depth=2,alpha=300",
                           "suffix:min_prob=1,budget=40"};
    const int max_news[] = {0, 1, 2, 37}, plen[] = {1, 9, 300};
    char what[96];
    for (int si = 0; si < 4; si++)
        for (int mi = 0; mi < 4; mi++)
            for (int li = 0; li < 3; li++)
                for (int k = 0; k < 2; k++) {
                    dec_env env = {.target = k ? rep : m, .kernels = KERN_EXACT};
                    dec_stats st;
                    snprintf(what, sizeof what, "synthetic %s, prompt %d, max_new %d",
                             k ? "repeating" : "untied", plen[li], max_news[mi]);
                    CHECK(dec_check_exact(&env, specs[si], prompt, plen[li], max_news[mi], NULL,
                                          &st, NULL, what));
                    if (max_news[mi] == 0) CHECK(st.target_steps == 0);
                    if (max_news[mi] == 1) CHECK(st.target_steps == 1 && st.drafted == 0);
                    /* a repeating output: most tokens speculated (depth=2: one per step) */
                    if (k && max_news[mi] == 37)
                        CHECK_MSG(st.accepted > (si == 2 ? 15 : 20), "%s %s: %ld accepted",
                                  specs[si], what, st.accepted);
                }
    dec_env env = {.target = rep, .kernels = KERN_EXACT};
    dec_stats st;
    CHECK(dec_check_exact(&env, "suffix", prompt, 505, 256, NULL, &st, NULL, "near seq_len"));
    CHECK(st.new_tokens == 7);
    model_close(m), model_close(donor), model_close(rep);
}

/* ---- 5, 6. allocation, state ------------------------------------------------------------------
 */

static void test_no_malloc(const model *m) {
    char err[ERR_LEN];
    dec_env env = {.target = m, .kernels = KERN_EXACT};
    static int out[DEC_CHECK_MAX_OUT];
    dec *d;
    int n;
    dec_stats st;
    CHECK(dec_create(&d, "suffix:nodes=2000", &env, err) == 0);
    long before = dec_check_mallocs;
    for (int i = 0; i < 4; i++) /* the small tree evicts on the way */
        CHECK(dec_generate(d, ids[i], lens[i], 300, out, &n, &st, err) == 0);
    CHECK_MSG(!dec_check_counting || dec_check_mallocs == before, "%ld allocations in generate",
              dec_check_mallocs - before);
    dec_free(d);
}

static int same_files(const char *a, const char *b) {
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int same = fa && fb, ca, cb;
    while (same && ((ca = fgetc(fa)) != EOF || (cb = fgetc(fb)) != EOF)) same = ca == fgetc(fb);
    (void)cb;
    if (fa) fclose(fa);
    if (fb) fclose(fb);
    return same;
}

static long file_size(const char *path) {
    struct stat s;
    return stat(path, &s) == 0 ? (long)s.st_size : -1;
}

/* A copy of src with byte `at` changed (flip) or cut there (!flip). */
static void damaged_copy(const char *src, const char *dst, long at, int flip) {
    FILE *f = fopen(src, "rb"), *g = fopen(dst, "wb");
    int c;
    for (long i = 0; f && g && (c = fgetc(f)) != EOF; i++) {
        if (i == at && !flip) break;
        fputc(i == at ? c ^ 0x5a : c, g);
    }
    if (f) fclose(f);
    if (g) fclose(g);
}

static void test_state(const model *m) {
    char err[ERR_LEN], what[128];
    dec_env env = {.target = m, .kernels = KERN_EXACT};
    static int out[DEC_CHECK_MAX_OUT];
    int n;
    dec_stats st, st2;
    const char *f1 = strcpy((char[4096]){0}, test_tmp("state1.bin"));
    const char *f2 = strcpy((char[4096]){0}, test_tmp("state2.bin"));
    const char *bad = strcpy((char[4096]){0}, test_tmp("bad.bin"));
    dec *a, *b;
    CHECK(dec_create(&a, "suffix", &env, err) == 0 && dec_create(&b, "suffix", &env, err) == 0);
    CHECK(!strcmp(dec_state_name(a), "suffix tree") && dec_state_check(a, err) == 0);
    for (int i = 0; i < 5; i++)
        CHECK(dec_generate(a, ids[i], lens[i], 200, out, &n, &st, err) == 0);
    CHECK_MSG(dec_state_save(a, f1, what, sizeof what, err) == 0, "%s", err);
    CHECK_MSG(strstr(what, "5 outputs, ") != NULL, "%s", what);
    CHECK(dec_state_load(b, f1, err) == 0 && dec_state_save(b, f2, what, sizeof what, err) == 0);
    CHECK(same_files(f1, f2));
    /* the loaded decoder decodes the next prompt exactly as the original */
    CHECK(dec_generate(a, ids[5], lens[5], 200, out, &n, &st, err) == 0);
    CHECK(dec_generate(b, ids[5], lens[5], 200, out, &n, &st2, err) == 0);
    CHECK_MSG(st.target_steps == st2.target_steps && st.target_rows == st2.target_rows &&
                  st.accepted == st2.accepted,
              "after a load: %ld steps %ld rows, the original %ld %ld", st2.target_steps,
              st2.target_rows, st.target_steps, st.target_rows);
    /* refusals leave the state as it was: b saved again equals a saved again */
    long size = file_size(f1);
    struct {
        long at;
        int flip;
        const char *msg;
    } cases[] = {
        {0, 1, "byte 0: not a decbench suffix tree file (magic DBSUFFX1)"},
        {8, 1, "byte 8: version"},
        {12, 1, "byte 12: a vocabulary of"},
        {30, 1, "byte 28: token"}, /* a token's third byte: past the vocabulary */
        {29, 0, "truncated in sequence 1 of 5"},
        {size - 1, 1, "checksum mismatch"},
        {size - 9, 0, "sequence 5 of"}, /* the last sequence cut short */
        {10, 0, "truncated: 10 bytes"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        damaged_copy(f1, bad, cases[i].at, cases[i].flip);
        CHECK(dec_state_load(b, bad, err) == -1);
        CHECK_MSG(strstr(err, bad) && strstr(err, cases[i].msg), "case %zu: %s", i, err);
    }
    CHECK(dec_state_load(b, test_tmp("missing.bin"), err) == -1 && strstr(err, "cannot open"));
    CHECK(dec_state_save(a, f1, what, sizeof what, err) == 0 &&
          dec_state_save(b, f2, what, sizeof what, err) == 0 && same_files(f1, f2));
    dec_free(a), dec_free(b);
    CHECK(dec_create(&a, "suffix:warm=0", &env, err) == 0);
    CHECK(dec_state_check(a, err) == -1 && strstr(err, "(warm=0); use warm=1"));
    dec_free(a);
}

/* The fuzz target's seeds (a saved file of the real tree, each tree size and checksum mode)
 * into <tmp>/seeds, then 3000 seeded mutations through fuzz_suffix_state_one. */
static void test_fuzz_corpus(const model *m) {
    char err[ERR_LEN], dir[600];
    dec_env env = {.target = m, .kernels = KERN_EXACT};
    static int out[DEC_CHECK_MAX_OUT];
    int n;
    dec_stats st;
    dec *d;
    const char *path = strcpy((char[4096]){0}, test_tmp("seed_state.bin"));
    CHECK(dec_create(&d, "suffix", &env, err) == 0);
    for (int i = 0; i < 2; i++) CHECK(dec_generate(d, ids[i], lens[i], 40, out, &n, &st, err) == 0);
    char what[64];
    CHECK(dec_state_save(d, path, what, sizeof what, err) == 0);
    dec_free(d);
    static uint8_t file[4096], seeds[4][4096], buf[4096];
    FILE *f = fopen(path, "rb");
    size_t fn = f ? fread(file, 1, sizeof file, f) : 0;
    if (f) fclose(f);
    CHECK(fn > 28 && fn < sizeof file);
    snprintf(dir, sizeof dir, "%s/seeds", test_tmpdir());
    mkdir(dir, 0755);
    size_t sizes[4];
    const uint8_t modes[4] = {1 | 2 << 1 | 3 << 4, 1 | 7 << 1 | 7 << 4, 0 | 5 << 1,
                              1 | 1 << 1 | 0 << 4};
    for (int k = 0; k < 4; k++) {
        seeds[k][0] = modes[k];
        memcpy(seeds[k] + 1, file, fn - 8); /* the body; mode bit 0 restores the checksum */
        sizes[k] = fn - 7;
        if (!(modes[k] & 1)) memcpy(seeds[k] + 1 + fn - 8, file + fn - 8, 8), sizes[k] = fn + 1;
        char p[700];
        snprintf(p, sizeof p, "%s/seed%d", dir, k);
        FILE *g = fopen(p, "wb");
        if (g) fwrite(seeds[k], 1, sizes[k], g), fclose(g);
        fuzz_suffix_state_one(seeds[k], sizes[k]);
    }
    uint64_t r = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 3000; i++) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        size_t k = r % 4, sz = sizes[k];
        memcpy(buf, seeds[k], sz);
        for (int mu = 0; mu < 1 + (int)(r >> 61); mu++) {
            r ^= r << 13, r ^= r >> 7, r ^= r << 17;
            size_t at = (r >> 8) % sz;
            switch (r % 4) {
            case 0:
                buf[at] = (uint8_t)(r >> 24);
                break;
            case 1:
                buf[at] ^= (uint8_t)(1u << ((r >> 32) % 8));
                break;
            case 2:
                if (sz > 2) memmove(buf + at, buf + at + 1, sz - at - 1), sz--;
                break;
            default:
                if (sz < sizeof buf)
                    memmove(buf + at + 1, buf + at, sz - at), buf[at] = (uint8_t)(r >> 40), sz++;
            }
        }
        fuzz_suffix_state_one(buf, sz);
    }
    fprintf(stderr, "  3004 inputs through fuzz_suffix_state_one\n");
}

int main(void) {
    char err[ERR_LEN];
    model *s260, *xs;
    CHECK_MSG(model_open(&s260, test_shared("models/stories260K.bin"), err) == 0, "%s", err);
    CHECK_MSG(model_open(&xs, test_shared("models/llama2xs.bin"), err) == 0, "%s", err);
    if (dec_check_tinystories(N_PROMPTS, ids, lens)) return test_finish("test_suffix");
    test_tree_brute_force();
    test_speculation();
    test_no_malloc(s260);
    test_state(s260);
    test_fuzz_corpus(s260);
    test_synthetic();
    test_seen_prompt(s260);
    test_real(s260, "stories260K", test_sanitized() ? N_PROMPTS / 4 : N_PROMPTS);
    test_real(xs, "llama2xs", 8);
    model_close(s260), model_close(xs);
    return test_finish("test_suffix");
}
