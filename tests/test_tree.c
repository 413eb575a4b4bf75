/* test_tree.c: token-tree speculative decoding (decoders/tree.c) emits exactly greedy's tokens.
 *  1. the spec: the shape list in both forms ("4,2,2,1" and "4-2-2-1"), its canonical form,
 *     and every refusal (a value out of range, too many nodes, a bare value after a non-list);
 *  2. one-branch trees are speculative decoding: static shape 1-1-1-1, dynamic k=1 depth=4 and
 *     split branches=1 nodes=4 take exactly spec:gamma=4's steps, rows, draft passes and draft
 *     rows, and accept the same tokens (a sharp check of the tree bookkeeping, level-by-level
 *     draft passes included);
 *  3. real models: stories260K target with llama2xs draft (and the reverse), the first 12
 *     TinyStories prompts x 256 new tokens with the default static tree (bench/decoders.sh
 *     runs 20; 12 keep the sanitizer build's run short), a few with the
 *     dynamic and split trees; the trees take fewer target steps than a chain of the same
 *     depth, and accept tokens from branches other than the draft's first choice;
 *  4. synthetic grid: each mode x a draft that agrees on everything (the target itself) or on
 *     nothing x max_new 0/1/2/37 x one-token and longer prompts;
 *  5. context edges: a prompt near the target's seq_len, a draft whose context is shorter than
 *     the prompt (never drafts) or runs out on the way;
 *  6. the end token inside an accepted path: stop right there, nothing after it;
 *  7. statistics add up (tests/dec_check.c), the counters agree with them, and generate()
 *     allocates nothing in any mode;
 *  8. draw=1 (children drawn from the draft, standard sampling only): greedy and coupled runs
 *     are draw=0's exactly, the spec hides it at 0, other modes refuse it; at T > 0 the trees
 *     hold drawn tokens (siblings that repeat, children beyond the draft's top-k) and plain
 *     sampling's distribution is kept (tests/test_sampling.c, its chi-square test).
 * Under the sanitizers (testutil.h test_keep) 3.'s prompts are thinned to one in three (4 of
 * 12) and to one in two (2 of 4), the chain equivalence of 2. to 2 of its 4 prompts; the chain
 * and the trees still run on the same prompts, every spec is compared with greedy, and the
 * static tree must still beat the chain; mode=sequoia runs on the first pair only, and 6.
 * stops at its first prompt ending inside a path. */
#include <stdlib.h>
#include <string.h>

#include "model/loader/model_file.h"
#include "tests/dec_check.h"
#include "tests/testutil.h"
#include "util/err.h"

DEC_CHECK_COUNT_MALLOC

#define N_PROMPTS 20
static int ids[N_PROMPTS][DEC_CHECK_MAX_PROMPT], lens[N_PROMPTS];

/* The index of counter `name` in st (-1 if absent). */
static int counter(const dec_stats *st, const char *name) {
    for (int i = 0; i < st->n_counters; i++)
        if (!strcmp(st->counter_defs[i].name, name)) return i;
    CHECK_MSG(0, "no counter %s", name);
    return -1;
}

/* The tree counters agree with the framework's figures. */
static void check_counters(const dec_stats *st, const char *what) {
    double ranks = 0;
    const char *names[4] = {"accept_rank0", "accept_rank1", "accept_rank2", "accept_rank3up"};
    for (int i = 0; i < 4; i++) ranks += st->counters[counter(st, names[i])];
    CHECK_MSG(ranks == st->accepted, "%s: accepted ranks add up to %.0f, accepted %ld", what, ranks,
              st->accepted);
    double nodes = st->counters[counter(st, "tree_nodes")];
    CHECK_MSG(nodes >= st->drafted && nodes == st->target_rows - (st->target_steps - 1),
              "%s: %.0f tree nodes, %ld drafted, %ld rows in %ld steps", what, nodes, st->drafted,
              st->target_rows, st->target_steps);
    int dmax = counter(st, "accepted_depth_max");
    long deepest = 0;
    for (int k = 0; k <= DEC_HIST_MAX; k++)
        if (st->accept_hist[k]) deepest = k;
    CHECK_MSG(st->counters[dmax] == deepest, "%s: accepted_depth_max %.0f, histogram's %ld", what,
              st->counters[dmax], deepest);
}

static void test_spec_strings(const model *m) {
    char err[ERR_LEN];
    dec_env env = {.target = m, .kernels = KERN_EXACT};
    dec *d;
    CHECK(dec_create(&d, "tree", &env, err) == -1);
    CHECK_MSG(strstr(err, "tree needs a draft model") != NULL, "%s", err);
    env.draft = m;
    const char *canon = "tree:mode=static,shape=4-2-2-1,nodes=16,depth=6,k=4,branches=4,p_split=10";
    const char *same[] = {"tree", "tree:shape=4,2,2,1", "tree:shape=4-2-2-1,mode=static",
                          "tree:shape=4,2-2,1,nodes=16", canon};
    for (int i = 0; i < 5; i++) {
        CHECK_MSG(dec_create(&d, same[i], &env, err) == 0, "%s: %s", same[i], err);
        CHECK_MSG(!strcmp(dec_spec(d), canon), "%s -> %s", same[i], dec_spec(d));
        dec_free(d);
    }
    CHECK(dec_create(&d, "tree:mode=split,shape=3,nodes=9,p_split=5", &env, err) == 0);
    CHECK(!strcmp(dec_spec(d), "tree:mode=split,shape=3,nodes=9,depth=6,k=4,branches=4,p_split=5"));
    dec_free(d);
    /* sequoia: accept= (a string of '/'-joined probabilities) appears only when given */
    CHECK(dec_create(&d, "tree:mode=sequoia", &env, err) == 0);
    CHECK(!strcmp(dec_spec(d), "tree:mode=sequoia,shape=4-2-2-1,nodes=16,depth=6,k=4,branches=4,"
                               "p_split=10"));
    dec_free(d);
    CHECK(dec_create(&d, "tree:mode=sequoia,nodes=8,accept=0.6/0.2", &env, err) == 0);
    CHECK(!strcmp(dec_spec(d), "tree:mode=sequoia,shape=4-2-2-1,nodes=8,depth=6,k=4,branches=4,"
                               "p_split=10,accept=0.6/0.2"));
    dec_free(d);
    struct {
        const char *spec, *msg;
    } bad[] = {
        {"tree:shape=4-0", "tree: shape value 0 is out of range 1..16"},
        {"tree:shape=4-x",
         "tree: shape=4-x is not a list of integers joined by '-' (e.g. 4-2-2-1)"},
        {"tree:shape=", "tree: shape= is not a list of integers"},
        {"tree:shape=4--2", "is not a list of integers"},
        {"tree:shape=16-16-16", "tree: shape 16-16-16 grows more than 1024 nodes"},
        {"tree:shape=1-1-1-1-1-1-1-1-1-1-1-1-1-1-1-1-1", "tree: shape has more than 16 values"},
        {"tree:mode=static,3", "tree: '3' is not key=value"},
        {"tree:mode=bushy", "tree: mode=bushy is not valid"},
        {"tree:nodes=0", "tree: nodes=0 is out of range 1..1024"},
        {"tree:accept=0.5", "tree: accept= is the acceptance by rank mode=sequoia"},
        {"tree:mode=dynamic,accept=0.5", "mode=dynamic does not use it"},
        {"tree:mode=sequoia,accept=0.5/1.5", "tree: accept=0.5/1.5: 1.5 is not a probability"},
        {"tree:mode=sequoia,accept=0.7/0.4", "sums to 1.1, more than 1"},
        {"tree:mode=sequoia,accept=0.5-0.2", "not numbers joined by '/'"},
        {"tree:mode=sequoia,draw=1", "mode=sequoia picks them by rank"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK_MSG(dec_create(&d, bad[i].spec, &env, err) == -1, "%s accepted", bad[i].spec);
        CHECK_MSG(strstr(err, bad[i].msg) != NULL, "%s: %s", bad[i].spec, err);
    }
}

/* One-branch trees against spec:gamma=4, prompt by prompt: identical figures. */
static void test_chain_equivalence(const model *tm, const model *dm) {
    dec_env env = {.target = tm, .draft = dm, .kernels = KERN_EXACT};
    /* sequoia with one rank: the best tree of 4 nodes is the chain of 4 first choices */
    const char *chains[] = {"tree:shape=1-1-1-1", "tree:mode=dynamic,k=1,depth=4",
                            "tree:mode=split,branches=1,nodes=4",
                            "tree:mode=sequoia,nodes=4,depth=8,accept=0.9"};
    for (int i = 0; i < 4; i++) {
        if (!test_keep(i, 2)) continue;
        dec_stats ref, st;
        CHECK(
            dec_check_exact(&env, "spec:gamma=4", ids[i], lens[i], 200, NULL, &ref, NULL, "chain"));
        for (int c = 0; c < 4; c++) {
            CHECK(dec_check_exact(&env, chains[c], ids[i], lens[i], 200, NULL, &st, NULL, "chain"));
            CHECK_MSG(st.target_steps == ref.target_steps && st.target_rows == ref.target_rows &&
                          st.draft_steps == ref.draft_steps && st.draft_rows == ref.draft_rows &&
                          st.drafted == ref.drafted && st.accepted == ref.accepted &&
                          !memcmp(st.accept_hist, ref.accept_hist, sizeof st.accept_hist),
                      "prompt %d %s: steps %ld rows %ld draft %ld/%ld drafted %ld accepted %ld; "
                      "spec: %ld %ld %ld/%ld %ld %ld",
                      i, chains[c], st.target_steps, st.target_rows, st.draft_steps, st.draft_rows,
                      st.drafted, st.accepted, ref.target_steps, ref.target_rows, ref.draft_steps,
                      ref.draft_rows, ref.drafted, ref.accepted);
            CHECK(st.counters[counter(&st, "branch_steps")] == 0);
        }
    }
}

/* Sums over prompts [0, n) of spec's statistics (each output checked against greedy); under the
 * sanitizers over those test_keep(i, k) keeps. */
static void run_prompts(const dec_env *env, const char *spec, int n, int k, dec_stats *sum,
                        double *cnt, const char *what) {
    memset(sum, 0, sizeof *sum);
    for (int c = 0; c < STAT_MAX_COUNTERS; c++) cnt[c] = 0;
    int equal = 0, runs = 0;
    for (int i = 0; i < n; i++) {
        if (!test_keep(i, k)) continue;
        runs++;
        dec_stats st;
        char label[96];
        snprintf(label, sizeof label, "%s prompt %d", what, i);
        equal += dec_check_exact(env, spec, ids[i], lens[i], 256, NULL, &st, NULL, label);
        if (strncmp(spec, "tree", 4) == 0) check_counters(&st, label);
        sum->new_tokens += st.new_tokens, sum->target_steps += st.target_steps;
        sum->target_rows += st.target_rows, sum->draft_steps += st.draft_steps;
        sum->drafted += st.drafted, sum->accepted += st.accepted;
        for (int c = 0; c < st.n_counters; c++) cnt[c] += st.counters[c];
    }
    fprintf(stderr,
            "%s %s: %d/%d equal to greedy, %.2f tokens per target step, %.1f rows per step, "
            "%.2f draft passes per step\n",
            what, spec, equal, runs, (double)sum->new_tokens / sum->target_steps,
            (double)sum->target_rows / (sum->target_steps - runs),
            (double)sum->draft_steps / (sum->target_steps - runs));
}

static void test_real(const model *tm, const model *dm, const char *what, int n) {
    dec_env env = {.target = tm, .draft = dm, .kernels = KERN_EXACT};
    dec_stats chain, st;
    double c[STAT_MAX_COUNTERS], unused[STAT_MAX_COUNTERS];
    run_prompts(&env, "spec:gamma=4", n, n > 4 ? 3 : 2, &chain, unused, what);
    const double chain_tps = (double)chain.new_tokens / chain.target_steps;
    const char *specs[] = {"tree", "tree:mode=dynamic", "tree:mode=split,nodes=8",
                           "tree:mode=sequoia"};
    for (int s = 0; s < 4; s++) {
        if (s == 3 && test_sanitized() && n <= 4) continue; /* sequoia: the first pair's 2 */
        int ns = s == 0 ? n : 4;
        run_prompts(&env, specs[s], ns, ns > 4 ? 3 : 2, &st, c, what);
        if (s == 0) {
            /* depth 4 like the chain, with the draft's second choices: fewer target steps */
            CHECK_MSG((double)st.new_tokens / st.target_steps > chain_tps,
                      "%s: the static tree (%.2f tokens/step) does not beat spec:gamma=4 (%.2f)",
                      what, (double)st.new_tokens / st.target_steps, chain_tps);
            fprintf(stderr, "  accepted by rank: %.0f %.0f %.0f %.0f; %.0f steps took a branch\n",
                    c[3], c[4], c[5], c[6], c[2]);
        }
        CHECK_MSG(c[2] > 0 && c[4] > 0, "%s %s: no accepted token off the draft's first choice",
                  what, specs[s]);
    }
}

/* The end token inside an accepted path: with the target as its own draft every first choice
 * is accepted, so a story's end token arrives as a drafted token with more below it. */
static void test_end_inside(const model *m) {
    dec_env env = {.target = m, .draft = m, .kernels = KERN_EXACT};
    static int got[DEC_CHECK_MAX_OUT];
    const char *specs[] = {"tree:shape=2-2-1-1-1-1-1-1", "tree:mode=dynamic,depth=8,nodes=24",
                           "tree:mode=split,nodes=12", "tree:mode=sequoia,depth=8,nodes=24"};
    for (int s = 0; s < 4; s++) {
        int cases = 0;
        const int want = s == 3 && test_sanitized() ? 1 : 2; /* sequoia: one under them */
        for (int i = 0; i < N_PROMPTS && cases < want; i++) {
            dec_stats st;
            dec_check_trace tr;
            CHECK(
                dec_check_exact(&env, specs[s], ids[i], lens[i], 400, got, &st, &tr, "end inside"));
            int n = st.new_tokens;
            if (n == 400 || tr.last.accepted == 0 || tr.last.emitted != tr.last.accepted) continue;
            cases++;
            CHECK(got[n - 1] == m->cfg.end_id);
            for (int k = 0; k + 1 < n; k++) CHECK(got[k] != m->cfg.end_id);
        }
        CHECK_MSG(cases >= 1, "%s: no prompt ended inside an accepted path", specs[s]);
    }
}

static void test_synthetic(void) {
    model *donors[3];
    model *tm = dec_check_synth_untied("64,160,2,4,2,512,512", 1, &donors[0]);
    model *dm = dec_check_synth_untied("64,160,2,4,2,512,512", 2, &donors[1]);
    model *dshort = dec_check_synth_untied("48,96,2,4,4,512,64", 3, &donors[2]);
    int prompt[DEC_CHECK_SYNTH_PROMPT];
    dec_check_synth_prompt(prompt);
    const char *specs[] = {"tree:shape=3-2-1",
                           "tree:shape=1-2-1-3-1",
                           "tree:mode=dynamic,k=3",
                           "tree:mode=dynamic,k=2,depth=9,nodes=40",
                           "tree:mode=split,branches=3,p_split=0",
                           "tree:mode=split,nodes=30",
                           "tree:mode=sequoia,nodes=12,depth=5",
                           "tree:mode=sequoia,nodes=20,depth=4,accept=0.2/0.5/0.1"};
    /* whether the first-choice chain is the tree's deepest path (else the agreeing draft's
     * accepted path may be shorter than the tree: dynamic keeps what the budget allows, a
     * sequoia vector whose second rank is likelier grows deeper below it) */
    const int chain_deepest[] = {1, 1, 0, 0, 1, 1, 1, 0};
    enum { N_SYNTH = sizeof specs / sizeof specs[0] };
    const int max_news[] = {0, 1, 2, 37}, plen[] = {1, 9};
    char what[128];
    for (int si = 0; si < N_SYNTH; si++)
        for (int mi = 0; mi < 4; mi++)
            for (int li = 0; li < 2; li++)
                for (int di = 0; di < 2; di++) {
                    snprintf(what, sizeof what, "synthetic %s draft, prompt %d, max_new %d",
                             di == 0 ? "agreeing" : "disagreeing", plen[li], max_news[mi]);
                    dec_env env = {.target = tm, .draft = di == 0 ? tm : dm, .kernels = KERN_EXACT};
                    dec_stats st;
                    CHECK(dec_check_exact(&env, specs[si], prompt, plen[li], max_news[mi], NULL,
                                          &st, NULL, what));
                    if (max_news[mi] == 0) CHECK(st.target_steps == 0 && st.draft_steps == 0);
                    if (max_news[mi] == 1) CHECK(st.target_steps == 1 && st.drafted == 0);
                    if (max_news[mi] > 0) check_counters(&st, what);
                    /* the target itself: the first-choice path is accepted to the tree's depth
                     * (dynamic: as deep as the budget kept it, at least its first node) */
                    if (di == 0 && chain_deepest[si])
                        CHECK_MSG(st.accepted == st.drafted, "%s %s: accepted %ld of %ld",
                                  specs[si], what, st.accepted, st.drafted);
                    if (di == 0 && !chain_deepest[si])
                        CHECK_MSG(st.accepted >= st.pos_tried[0], "%s %s: accepted %ld in %ld",
                                  specs[si], what, st.accepted, st.pos_tried[0]);
                    if (di == 1 && max_news[mi] == 37) {
                        double rate = (double)st.accepted / (st.drafted ? st.drafted : 1);
                        CHECK_MSG(rate < 0.2, "%s %s accepted %.0f%%", specs[si], what, 100 * rate);
                    }
                }
    /* context edges. Target seq 512: a 505-token prompt leaves 7 tokens; trees are trimmed */
    dec_env env = {.target = tm, .draft = tm, .kernels = KERN_EXACT};
    dec_stats st;
    for (int si = 0; si < N_SYNTH; si++) {
        CHECK(dec_check_exact(&env, specs[si], prompt, 505, 256, NULL, &st, NULL,
                              "prompt near seq_len"));
        CHECK(st.new_tokens == 7);
    }
    env.draft = dm;
    CHECK(dec_check_exact(&env, "tree", prompt, 511, 256, NULL, &st, NULL, "prompt at seq_len-1"));
    CHECK(st.new_tokens == 1 && st.target_steps == 1);
    /* draft context 64: a 70-token prompt never drafts; a 50-token one drafts until 64, then
     * plain target steps */
    env.draft = dshort;
    for (int si = 0; si < N_SYNTH; si++) {
        CHECK(dec_check_exact(&env, specs[si], prompt, 70, 30, NULL, &st, NULL,
                              "prompt past the draft"));
        CHECK(st.draft_steps == 0 && st.drafted == 0 && st.target_steps == 30);
        CHECK(dec_check_exact(&env, specs[si], prompt, 50, 40, NULL, &st, NULL, "draft runs out"));
        CHECK(st.new_tokens == 40 && st.pos_tried[0] > 0 && st.pos_tried[0] < st.target_steps);
    }
    model_close(tm), model_close(dm), model_close(dshort);
    for (int i = 0; i < 3; i++) model_close(donors[i]);
}

/* The positional model predicts every later position right: whole trees of first choices are
 * accepted, and the bonus token after the deepest node. */
static void test_positional(void) {
    model *donor;
    model *m = dec_check_synth_positional("64,160,2,4,2,512,512", 7, &donor);
    int prompt[DEC_CHECK_SYNTH_PROMPT];
    dec_check_synth_prompt(prompt);
    dec_env env = {.target = m, .draft = m, .kernels = KERN_EXACT};
    dec_stats st;
    CHECK(dec_check_exact(&env, "tree:shape=2-2-2", prompt, 9, 41, NULL, &st, NULL, "positional"));
    CHECK_MSG(st.target_steps == 1 + 10 && st.accepted == 30, "%ld steps, %ld accepted",
              st.target_steps, st.accepted);
    model_close(m), model_close(donor);
}

static void test_no_malloc(const model *tm, const model *dm) {
    char err[ERR_LEN];
    dec_env env = {.target = tm, .draft = dm, .kernels = KERN_EXACT};
    static int out[DEC_CHECK_MAX_OUT];
    const char *specs[] = {"tree", "tree:mode=dynamic", "tree:mode=split", "tree:mode=sequoia"};
    for (int s = 0; s < 4; s++) {
        dec *d;
        int n;
        dec_stats st;
        CHECK(dec_create(&d, specs[s], &env, err) == 0);
        long before = dec_check_mallocs;
        CHECK(dec_generate(d, ids[0], lens[0], 300, out, &n, &st, err) == 0);
        CHECK_MSG(!dec_check_counting || dec_check_mallocs == before,
                  "%s: %ld allocations in generate", specs[s], dec_check_mallocs - before);
        dec_free(d);
    }
}

/* ---- 8. draw=1 ------------------------------------------------------------------------------ */

typedef struct {
    int rows_max;
} draw_log;

static void draw_step(void *user, const dec_step *s) {
    draw_log *g = user;
    if (s->rows > g->rows_max) g->rows_max = s->rows;
}

static void test_draw(const model *tm, const model *dm) {
    char err[ERR_LEN];
    dec_env env = {.target = tm, .draft = dm, .kernels = KERN_EXACT};
    dec *d;
    CHECK(dec_create(&d, "tree:shape=2-2-1,draw=0", &env, err) == 0);
    CHECK(strstr(dec_spec(d), "draw") == NULL);
    dec_free(d);
    CHECK(dec_create(&d, "tree:shape=2-2-1,draw=1", &env, err) == 0 &&
          strstr(dec_spec(d), ",draw=1"));
    dec_free(d);
    CHECK(dec_create(&d, "tree:mode=dynamic,draw=1", &env, err) == -1 && strstr(err, "draw=1") &&
          strstr(err, "dynamic"));
    CHECK(dec_create(&d, "tree:mode=split,draw=1", &env, err) == -1 && strstr(err, "split"));
    /* greedy and coupled: the top-k tree, as draw=0 */
    for (int mode = 0; mode < 2; mode++) {
        dec_env e = env;
        if (mode)
            e.sampling =
                (dec_sampling){.temperature = 0.8, .seed = 5, .mode = DEC_SAMPLING_COUPLED};
        for (int i = 0; i < 3; i++) {
            static int a[DEC_CHECK_MAX_OUT], b[DEC_CHECK_MAX_OUT];
            dec_stats sa, sb;
            int na = dec_check_greedy(&e, ids[i], lens[i], 120, a);
            CHECK(dec_check_vs(&e, "tree:shape=3-2-1", ids[i], lens[i], 120, a, na, b, &sa, NULL,
                               "draw=0"));
            CHECK(dec_check_vs(&e, "tree:shape=3-2-1,draw=1", ids[i], lens[i], 120, a, na, b, &sb,
                               NULL, "draw=1"));
            CHECK_MSG(sa.target_steps == sb.target_steps && sa.target_rows == sb.target_rows &&
                          sa.accepted == sb.accepted && sa.draft_rows == sb.draft_rows,
                      "mode %d prompt %d: draw=1 moved the figures", mode, i);
        }
    }
    /* standard sampling: drawn children (a rank beyond the top-k, or the tree's ranks counted
     * for tokens the top-k would have held anyway) */
    env.sampling = (dec_sampling){.temperature = 1.0, .seed = 3, .mode = DEC_SAMPLING_STANDARD};
    draw_log g = {0};
    env.on_step = draw_step, env.user = &g;
    CHECK(dec_create(&d, "tree:shape=2-2-1,draw=1", &env, err) == 0);
    static int out[DEC_CHECK_MAX_OUT];
    double beyond = 0, total = 0;
    for (int i = 0; i < 4; i++) {
        int n;
        dec_stats st;
        long before = dec_check_mallocs;
        CHECK(dec_generate(d, ids[i], lens[i], 120, out, &n, &st, err) == 0);
        CHECK_MSG(!dec_check_counting || dec_check_mallocs == before, "draw=1: %ld allocations",
                  dec_check_mallocs - before);
        beyond +=
            st.counters[counter(&st, "accept_rank2")] + st.counters[counter(&st, "accept_rank3up")];
        total += st.accepted;
    }
    dec_free(d);
    fprintf(stderr, "draw=1 at T=1: %.0f of %.0f accepted tokens ranked third or lower\n", beyond,
            total);
    CHECK_MSG(beyond > 0 && g.rows_max <= 1 + 2 + 4 + 4, "draw=1: %.0f beyond the top 2, %d rows",
              beyond, g.rows_max);
}

int main(void) {
    char err[ERR_LEN];
    model *s260, *xs;
    CHECK_MSG(model_open(&s260, test_shared("models/stories260K.bin"), err) == 0, "%s", err);
    CHECK_MSG(model_open(&xs, test_shared("models/llama2xs.bin"), err) == 0, "%s", err);
    if (dec_check_tinystories(N_PROMPTS, ids, lens)) return test_finish("test_tree");
    test_spec_strings(s260);
    test_no_malloc(s260, xs);
    test_chain_equivalence(s260, xs);
    test_positional();
    test_draw(s260, xs);
    test_synthetic();
    test_end_inside(s260);
    test_real(s260, xs, "stories260K target, llama2xs draft", 12);
    test_real(xs, s260, "llama2xs target, stories260K draft", 4);
    model_close(s260), model_close(xs);
    return test_finish("test_tree");
}
