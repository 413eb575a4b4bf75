/* test_ouroboros.c: Ouroboros (decoders/ouroboros.c) emits exactly greedy's tokens, and its
 * phrase pool survives a file round trip.
 *  1. real models: stories260K target with llama2xs draft and the reverse, the first 20
 *     TinyStories prompts x 256 new tokens, one pool warm across the 20 (a small window,
 *     W=2 beta=3, to keep the test short; the defaults and every ablation switch on a few
 *     prompts); the pool must be used (draft phrases, suffixes, inspiration, refinement);
 *  2. synthetic grid: gamma 1/3/8 x K 0/1/3 x beta 2/4/8, with a draft that agrees on
 *     everything (the target itself) and one that disagrees on everything (acceptance ~0);
 *  3. edges: max_new 0 and 1, a one-token prompt, a prompt near the target's seq_len, a draft
 *     whose context is shorter than the prompt or runs out on the way (suffix-only steps);
 *  4. the end token inside an accepted run: stop right there, nothing after it;
 *  5. generate() allocates nothing;
 *  6. warm start: warm=0 repeats itself, warm=1 carries the pool; save -> load -> save gives the
 *     same bytes and the same decoding as the decoder that was never saved; a corrupted,
 *     truncated, foreign or mismatched file is refused with a message and changes nothing; the
 *     decoder interface's state hooks reach the same pool file, and its own counters reach
 *     dec_stats;
 *  7. the options beyond the default: trim=1 cuts every draft to gamma (the
 *     reference's cut; without it drafts run past gamma), p_min stops drafts short, adapt=1
 *     moves the aimed length; all still greedy's tokens, one stop reason per step.
 * Under the sanitizers (testutil.h test_keep) 1.'s 20 warm prompts are thinned to one in four
 * (prompts 0, 7, 10, 13 and 19, still through one decoder) and its other specs to one of their
 * two prompts, 7.'s exactness runs to 2 of their 4 prompts and its draft lengths to the first 2;
 * every spec still runs and is compared with greedy, and the pool is still checked to be used. The
 * grid runs in full. */
#include <stdlib.h>
#include <string.h>

#include "decoders/ouroboros.h"
#include "model/loader/model_file.h"
#include "tests/dec_check.h"
#include "tests/testutil.h"
#include "util/err.h"

DEC_CHECK_COUNT_MALLOC

#define N_PROMPTS 20
static int ids[N_PROMPTS][DEC_CHECK_MAX_PROMPT], lens[N_PROMPTS];

/* Runs spec on prompts [0, n) with ONE decoder (the pool stays warm across them), checking each
 * output against greedy; sums the statistics and the Ouroboros counters. Under the sanitizers
 * only the prompts test_keep(i + n * salt, k) keeps. */
static void run_prompts(const dec_env *env, const char *spec, int n, int max_new, dec_stats *sum,
                        ouroboros_counts *cs, const char *what, int k, int salt) {
    char err[ERR_LEN];
    static int want[DEC_CHECK_MAX_OUT], got[DEC_CHECK_MAX_OUT];
    memset(sum, 0, sizeof *sum), memset(cs, 0, sizeof *cs);
    dec *d;
    if (dec_create(&d, spec, env, err)) {
        CHECK_MSG(0, "%s: %s", spec, err);
        return;
    }
    int equal = 0, runs = 0;
    for (int i = 0; i < n; i++) {
        if (!test_keep(i + (long)n * salt, k)) continue;
        runs++;
        int n_want = dec_check_greedy(env, ids[i], lens[i], max_new, want), n_got = -1;
        dec_stats st;
        ouroboros_counts c;
        CHECK_MSG(dec_generate(d, ids[i], lens[i], max_new, got, &n_got, &st, err) == 0, "%s", err);
        int same = n_got == n_want && memcmp(got, want, sizeof(int) * (size_t)n_want) == 0;
        CHECK_MSG(same, "%s %s prompt %d: %d tokens vs greedy's %d", what, spec, i, n_got, n_want);
        equal += same;
        CHECK(ouroboros_counts_get(d, &c, err) == 0);
        /* the same counts reach the statistics, through the vtable's counter table */
        CHECK(st.n_counters == 14 && !strcmp(st.counter_defs[4].name, "inspired") &&
              st.counters[1] == c.draft_tokens && st.counters[4] == c.inspired &&
              st.counters[7] == c.suffix_tokens && st.counters[8] == c.pool_phrases);
        sum->new_tokens += st.new_tokens, sum->target_steps += st.target_steps;
        sum->target_rows += st.target_rows, sum->draft_steps += st.draft_steps;
        sum->drafted += st.drafted, sum->accepted += st.accepted;
        cs->draft_phrase_tokens += c.draft_phrase_tokens, cs->window_phrases += c.window_phrases;
        cs->inspired += c.inspired, cs->refined += c.refined, cs->suffix_tokens += c.suffix_tokens;
        cs->pool_phrases = c.pool_phrases;
    }
    fprintf(stderr,
            "%s %s: %d/%d equal, %.2f tokens/target step, %.1f rows/step, %.0f%% accepted, "
            "%.2f draft steps/token; %ld draft phrase tokens, %ld suffix tokens, %ld window "
            "phrases, %ld inspired, %ld refined, pool %ld\n",
            what, spec, equal, runs, (double)sum->new_tokens / sum->target_steps,
            (double)sum->target_rows / (sum->target_steps - runs),
            100.0 * sum->accepted / (sum->drafted ? sum->drafted : 1),
            (double)sum->draft_steps / sum->new_tokens, cs->draft_phrase_tokens, cs->suffix_tokens,
            cs->window_phrases, cs->inspired, cs->refined, cs->pool_phrases);
    dec_free(d);
}

static void test_real(const model *tm, const model *dm, const char *what) {
    dec_env env = {.target = tm, .draft = dm, .kernels = KERN_EXACT};
    dec_stats sum;
    ouroboros_counts c;
    run_prompts(&env, "ouroboros:W=2,beta=3,K=2", N_PROMPTS, 256, &sum, &c, what, 4, 0);
    CHECK_MSG((double)sum.new_tokens / sum.target_steps > 1.5, "%s: too few tokens per step", what);
    CHECK(c.draft_phrase_tokens > 0 && c.suffix_tokens > 0 && c.window_phrases > 0);
    CHECK(c.inspired > 0 && c.refined > 0);
    /* the defaults and each ablation switch, on a few prompts */
    const char *specs[] = {
        "ouroboros", "ouroboros:lookahead=0,W=4,beta=4", "ouroboros:suffix=0,W=4,beta=4",
        "ouroboros:inspire=0,refine=0,W=4,beta=4", "ouroboros:warm=0,gamma=8,W=4,beta=4"};
    for (int i = 0; i < 5; i++)
        run_prompts(&env, specs[i], 2, i == 0 ? 96 : 128, &sum, &c, what, 2, i);
    CHECK(c.pool_phrases > 0);
}

static void test_synthetic(void) {
    model *donors[3];
    model *tm = dec_check_synth_untied("64,160,2,4,2,512,512", 1, &donors[0]);
    model *dm = dec_check_synth_untied("64,160,2,4,2,512,512", 2, &donors[1]);
    model *dshort = dec_check_synth_untied("48,96,2,4,4,512,64", 3, &donors[2]);
    int prompt[DEC_CHECK_SYNTH_PROMPT];
    dec_check_synth_prompt(prompt);
    const int gammas[] = {1, 3, 8}, Ks[] = {0, 1, 3}, betas[] = {2, 4, 8};
    char spec[128], what[96];
    long suffix_tokens = 0, phrase_tokens = 0;
    for (int gi = 0; gi < 3; gi++)
        for (int ki = 0; ki < 3; ki++)
            for (int bi = 0; bi < 3; bi++)
                for (int di = 0; di < 2; di++) {
                    dec_env env = {.target = tm, .draft = di ? dm : tm, .kernels = KERN_EXACT};
                    snprintf(spec, sizeof spec, "ouroboros:gamma=%d,K=%d,beta=%d,W=3", gammas[gi],
                             Ks[ki], betas[bi]);
                    snprintf(what, sizeof what, "synthetic, %s draft",
                             di ? "disagreeing" : "agreeing");
                    dec_stats sum;
                    ouroboros_counts c;
                    int len = 1 + 7 * ki; /* one-token prompts too */
                    memcpy(ids[0], prompt, sizeof(int) * (size_t)len), lens[0] = len;
                    memcpy(ids[1], prompt + 100, sizeof(int) * 20), lens[1] = 20;
                    ids[1][0] = 1;
                    run_prompts(&env, spec, 2, 48, &sum, &c, what, 1, 0);
                    suffix_tokens += c.suffix_tokens, phrase_tokens += c.draft_phrase_tokens;
                    if (di == 1) {
                        double rate = (double)sum.accepted / (sum.drafted ? sum.drafted : 1);
                        CHECK_MSG(rate < 0.1, "%s: disagreeing draft accepted %.0f%%", spec,
                                  100 * rate);
                    }
                }
    CHECK_MSG(suffix_tokens > 0 && phrase_tokens > 0, "suffix %ld, phrase %ld tokens",
              suffix_tokens, phrase_tokens);
    /* edges */
    dec_env env = {.target = tm, .draft = dm, .kernels = KERN_EXACT};
    dec_stats st;
    dec_check_trace tr;
    const char *spec_d = "ouroboros:W=3,beta=4";
    CHECK(dec_check_exact(&env, spec_d, prompt, 5, 0, NULL, &st, &tr, "max_new 0"));
    CHECK(st.target_steps == 0 && st.draft_steps == 0 && st.new_tokens == 0);
    CHECK(dec_check_exact(&env, spec_d, prompt, 5, 1, NULL, &st, &tr, "max_new 1"));
    CHECK(st.target_steps == 1 && st.new_tokens == 1 && st.drafted == 0);
    CHECK(dec_check_exact(&env, spec_d, prompt, 1, 30, NULL, &st, &tr, "one-token prompt"));
    env.draft = tm;
    CHECK(dec_check_exact(&env, "ouroboros:gamma=8,W=3,beta=4", prompt, 505, 256, NULL, &st, &tr,
                          "prompt near seq_len"));
    CHECK(st.new_tokens == 7 && st.target_steps <= 2);
    CHECK(dec_check_exact(&env, spec_d, prompt, 511, 256, NULL, &st, &tr, "prompt at seq_len-1"));
    CHECK(st.new_tokens == 1);
    env.draft = dshort; /* context 64 */
    CHECK(dec_check_exact(&env, spec_d, prompt, 70, 30, NULL, &st, &tr, "prompt past the draft"));
    CHECK(st.draft_steps == 0 && st.new_tokens == 30);
    CHECK(dec_check_exact(&env, spec_d, prompt, 50, 40, NULL, &st, &tr, "draft runs out"));
    CHECK(st.draft_steps > 0 && st.new_tokens == 40);
    model_close(tm), model_close(dm), model_close(dshort);
    for (int i = 0; i < 3; i++) model_close(donors[i]);
}

/* With the target as its own draft every draft is accepted, so a story's end token arrives as
 * a drafted token with more behind it: the output must stop right after it. */
static void test_end_inside(const model *m) {
    dec_env env = {.target = m, .draft = m, .kernels = KERN_EXACT};
    int cases = 0;
    static int got[DEC_CHECK_MAX_OUT];
    for (int i = 0; i < N_PROMPTS && cases < 2; i++) {
        dec_stats st;
        dec_check_trace tr;
        CHECK(dec_check_exact(&env, "ouroboros:gamma=8,W=3,beta=4", ids[i], lens[i], 400, got, &st,
                              &tr, "end inside"));
        int n = st.new_tokens;
        if (n == 400 || tr.last.accepted == 0 || tr.last.emitted != tr.last.accepted) continue;
        cases++; /* the last step emitted accepted drafts only: the end token was one of them */
        CHECK(got[n - 1] == m->cfg.end_id);
        for (int k = 0; k + 1 < n; k++) CHECK(got[k] != m->cfg.end_id);
    }
    CHECK_MSG(cases >= 1, "no prompt ended inside an accepted run");
}

static void test_no_malloc(const model *tm, const model *dm) {
    char err[ERR_LEN];
    dec_env env = {.target = tm, .draft = dm, .kernels = KERN_EXACT};
    dec *d;
    static int out[DEC_CHECK_MAX_OUT];
    int n;
    dec_stats st;
    CHECK(dec_create(&d, "ouroboros:W=4,beta=4", &env, err) == 0);
    CHECK(dec_generate(d, ids[0], lens[0], 128, out, &n, &st, err) == 0);
    long before = dec_check_mallocs;
    CHECK(dec_generate(d, ids[1], lens[1], 128, out, &n, &st, err) == 0);
    CHECK_MSG(!dec_check_counting || dec_check_mallocs == before, "%ld allocations in generate",
              dec_check_mallocs - before);
    dec_free(d);
}

/* The longest draft (drafted tokens of a step; K=0: no suffix in it) and the steps past gamma. */
typedef struct {
    int gamma, longest;
    long past;
} draft_lens;

static void on_draft(void *user, const dec_step *s) {
    draft_lens *l = user;
    if (s->drafted > l->longest) l->longest = s->drafted;
    l->past += s->drafted > l->gamma;
}

static void test_options(const model *tm, const model *dm) {
    char err[ERR_LEN];
    dec_env env = {.target = tm, .draft = dm, .kernels = KERN_EXACT};
    const char *specs[] = {"ouroboros:gamma=2,W=8,beta=4,K=0",
                           "ouroboros:gamma=2,W=8,beta=4,K=0,trim=1",
                           "ouroboros:gamma=3,W=8,beta=4,K=2,p_min=0.75",
                           "ouroboros:gamma=2,W=8,beta=4,K=2,adapt=1,gamma_max=6"};
    static int out[DEC_CHECK_MAX_OUT];
    for (int s = 0; s < 4; s++) {
        draft_lens len = {.gamma = s < 2 ? 2 : 99};
        long stops[5] = {0}, steps = 0;
        for (int i = 0; i < 4; i++) {
            if (!test_keep(i + 4 * (long)s, 2)) continue;
            dec_stats st;
            char what[64];
            snprintf(what, sizeof what, "options prompt %d", i);
            CHECK(dec_check_exact(&env, specs[s], ids[i], lens[i], 200, NULL, &st, NULL, what));
            for (int c = 0; c < 5; c++) stops[c] += (long)st.counters[9 + c];
            steps += st.verify_steps;
        }
        /* the lengths: a cold pool per call, one decoder reporting each step */
        dec_env e = env;
        e.on_step = on_draft, e.user = &len;
        dec *d;
        int n;
        dec_stats st;
        CHECK(dec_create(&d, specs[s], &e, err) == 0);
        for (int i = 0; i < (test_sanitized() ? 2 : 4); i++) /* 2 show the lengths as well */
            CHECK(dec_generate(d, ids[i], lens[i], 200, out, &n, &st, err) == 0);
        dec_free(d);
        fprintf(stderr,
                "%s: longest draft %d, %ld steps past gamma; stops: gamma %ld, p_min %ld, end "
                "%ld, room %ld; mean aimed length %.2f\n",
                specs[s], len.longest, len.past, stops[0], stops[1], stops[2], stops[3],
                (double)stops[4] / steps);
        CHECK_MSG(stops[0] + stops[1] + stops[2] + stops[3] == steps, "%s: one reason per step",
                  specs[s]);
        if (s == 0) CHECK(len.longest > 2 && len.past > 0);
        if (s == 1) CHECK(len.longest == 2 && len.past == 0);
        if (s == 2) CHECK(stops[1] > 0);
        if (s == 3) CHECK(stops[4] != 2 * steps && stops[1] == 0);
    }
    /* the new parameters stay out of the spec at their defaults */
    dec *d;
    CHECK(dec_create(&d, "ouroboros:trim=0,p_min=0,adapt=0", &env, err) == 0);
    CHECK_MSG(!strcmp(dec_spec(d), "ouroboros:gamma=4,W=20,beta=8,K=3,lookahead=1,suffix=1,"
                                   "inspire=1,refine=1,warm=1,seed=10"),
              "%s", dec_spec(d));
    dec_free(d);
}

static long file_size(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return n;
}

static int same_files(const char *a, const char *b) {
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    int same = fa && fb;
    while (same) {
        int ca = fgetc(fa), cb = fgetc(fb);
        if (ca != cb) same = 0;
        if (ca == EOF) break;
    }
    if (fa) fclose(fa);
    if (fb) fclose(fb);
    return same;
}

/* Rewrites byte `at` of src into dst (xor), or truncates to `at` bytes if flip is 0. */
static void damaged_copy(const char *src, const char *dst, long at, int flip) {
    long n = file_size(src);
    unsigned char *buf = malloc((size_t)n);
    FILE *f = fopen(src, "rb");
    CHECK(f && fread(buf, 1, (size_t)n, f) == (size_t)n);
    fclose(f);
    if (flip) buf[at] ^= (unsigned char)flip;
    f = fopen(dst, "wb");
    fwrite(buf, 1, (size_t)(flip ? n : at), f);
    fclose(f);
    free(buf);
}

static void test_warm_and_files(const model *tm, const model *dm) {
    char err[ERR_LEN];
    dec_env env = {.target = tm, .draft = dm, .kernels = KERN_EXACT};
    static int out[DEC_CHECK_MAX_OUT];
    int n;
    dec_stats a, b;
    ouroboros_counts c;
    const char *spec = "ouroboros:W=4,beta=4";
    /* warm=0: the same prompt twice decodes the same way; warm=1: the pool carries over */
    dec *cold, *warm, *loaded, *other;
    CHECK(dec_create(&cold, "ouroboros:W=4,beta=4,warm=0", &env, err) == 0);
    CHECK(dec_generate(cold, ids[2], lens[2], 128, out, &n, &a, err) == 0);
    CHECK(dec_generate(cold, ids[2], lens[2], 128, out, &n, &b, err) == 0);
    CHECK(a.target_steps == b.target_steps && a.accepted == b.accepted && a.drafted == b.drafted);
    CHECK(dec_create(&warm, spec, &env, err) == 0);
    CHECK(dec_generate(warm, ids[2], lens[2], 128, out, &n, &b, err) == 0);
    CHECK(a.target_steps == b.target_steps && a.accepted == b.accepted); /* a fresh pool */
    CHECK(dec_generate(warm, ids[2], lens[2], 128, out, &n, &b, err) == 0);
    CHECK_MSG(b.target_steps < a.target_steps, "warm pool: %ld target steps, cold %ld",
              b.target_steps, a.target_steps);
    /* save -> load -> save: same bytes; the loaded decoder decodes like the original */
    const char *f1 = test_tmp("pool1.bin"), *f2 = test_tmp("pool2.bin"), *bad = test_tmp("bad.bin");
    CHECK_MSG(ouroboros_pool_save(warm, f1, err) == 0, "%s", err);
    CHECK(dec_create(&loaded, spec, &env, err) == 0);
    CHECK_MSG(ouroboros_pool_load(loaded, f1, err) == 0, "%s", err);
    CHECK(ouroboros_pool_save(loaded, f2, err) == 0);
    CHECK(same_files(f1, f2));
    CHECK(dec_generate(warm, ids[3], lens[3], 128, out, &n, &a, err) == 0);
    CHECK(dec_generate(loaded, ids[3], lens[3], 128, out, &n, &b, err) == 0);
    CHECK(a.target_steps == b.target_steps && a.accepted == b.accepted && a.drafted == b.drafted &&
          a.draft_steps == b.draft_steps);
    /* bad files: a clear message, the pool unchanged */
    CHECK(ouroboros_counts_get(loaded, &c, err) == 0);
    long before = c.pool_phrases, size = file_size(f1);
    struct {
        long at;
        int flip;
        const char *msg;
    } cases[] = {
        {size / 2, 0x40, "byte"},              /* a flipped bit: token, key, count or checksum */
        {size - 3, 0x01, "checksum mismatch"}, /* in the checksum itself */
        {size - 20, 0, "truncated"},           /* cut short */
        {10, 0, "truncated"},                  /* cut inside the header */
        {0, 'X' ^ 'D', "not a decbench Ouroboros pool file"},
        {12, 0x01, "vocabulary of 513 tokens"},
        {20, 0x01, "phrases of 5 tokens, this decoder's beta is 4"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        damaged_copy(f1, bad, cases[i].at, cases[i].flip);
        err[0] = '\0';
        CHECK(ouroboros_pool_load(loaded, bad, err) == -1);
        CHECK_MSG(strstr(err, cases[i].msg) && strstr(err, bad), "case %zu: '%s'", i, err);
        CHECK(ouroboros_counts_get(loaded, &c, err) == 0 && c.pool_phrases == before);
    }
    CHECK(ouroboros_pool_load(loaded, test_tmp("missing.bin"), err) == -1);
    CHECK_MSG(strstr(err, "cannot open") != NULL, "%s", err);
    /* a pool of other phrase length, and a decoder without a pool */
    CHECK(dec_create(&other, "ouroboros:W=4,beta=5", &env, err) == 0);
    CHECK(ouroboros_pool_load(other, f1, err) == -1);
    CHECK_MSG(strstr(err, "phrases of 4 tokens, this decoder's beta is 5") != NULL, "%s", err);
    dec_free(other);
    CHECK(dec_create(&other, "greedy", &env, err) == 0);
    CHECK(ouroboros_pool_save(other, f2, err) == -1);
    CHECK_MSG(strstr(err, "'greedy' is not ouroboros") != NULL, "%s", err);
    dec_free(other);
    CHECK(ouroboros_pool_clear(loaded, err) == 0);
    CHECK(ouroboros_counts_get(loaded, &c, err) == 0 && c.pool_phrases == 0);
    /* The same pool through the decoder interface's state hooks (what the harness uses). */
    char what[64];
    CHECK(!strcmp(dec_state_name(warm), "pool") && dec_state_check(warm, err) == 0);
    CHECK_MSG(dec_state_save(warm, f2, what, sizeof what, err) == 0, "%s", err);
    CHECK(ouroboros_counts_get(warm, &c, err) == 0);
    char want[64];
    snprintf(want, sizeof want, "%ld phrases", c.pool_phrases);
    CHECK_MSG(!strcmp(what, want), "'%s' vs '%s'", what, want);
    CHECK(ouroboros_pool_save(warm, f1, err) == 0 && same_files(f1, f2));
    CHECK_MSG(dec_state_load(loaded, f2, err) == 0, "%s", err);
    CHECK(ouroboros_counts_get(loaded, &c, err) == 0 && c.pool_phrases > 0);
    CHECK(dec_state_load(loaded, bad, err) == -1 && strstr(err, bad));
    CHECK(dec_state_check(cold, err) == -1);
    CHECK_MSG(strstr(err, "warm=0") && strstr(err, "ouroboros:"), "%s", err);
    CHECK(dec_create(&other, "greedy", &env, err) == 0);
    CHECK(dec_state_name(other) == NULL);
    CHECK(dec_state_save(other, f2, what, sizeof what, err) == -1);
    CHECK_MSG(strstr(err, "greedy keeps no state"), "%s", err);
    CHECK(dec_state_load(other, f1, err) == -1 && dec_state_check(other, err) == -1);
    dec_free(other);
    dec_free(cold), dec_free(warm), dec_free(loaded);
}

static void test_params(const model *m) {
    char err[ERR_LEN];
    dec_env env = {.target = m, .draft = m, .kernels = KERN_EXACT};
    dec *d;
    CHECK(dec_create(&d, "ouroboros:K=5,W=4", &env, err) == -1);
    CHECK_MSG(strstr(err, "K=5 exceeds W=4") != NULL, "%s", err);
    CHECK(dec_create(&d, "ouroboros:beta=0", &env, err) == -1);
    CHECK(dec_create(&d, "ouroboros", &env, err) == 0);
    CHECK(strcmp(dec_spec(d), "ouroboros:gamma=4,W=20,beta=8,K=3,lookahead=1,suffix=1,inspire=1,"
                              "refine=1,warm=1,seed=10") == 0);
    dec_free(d);
    env.draft = NULL;
    CHECK(dec_create(&d, "ouroboros", &env, err) == -1);
}

int main(void) {
    char err[ERR_LEN];
    model *s260, *xs;
    CHECK_MSG(model_open(&s260, test_shared("models/stories260K.bin"), err) == 0, "%s", err);
    CHECK_MSG(model_open(&xs, test_shared("models/llama2xs.bin"), err) == 0, "%s", err);
    if (dec_check_tinystories(N_PROMPTS, ids, lens)) return test_finish("test_ouroboros");
    test_params(s260);
    test_no_malloc(s260, xs);
    test_warm_and_files(s260, xs);
    test_end_inside(s260);
    test_options(s260, xs);
    test_real(s260, xs, "stories260K target, llama2xs draft");
    test_real(xs, s260, "llama2xs target, stories260K draft");
    test_synthetic(); /* last: it reuses the prompt buffers */
    model_close(s260), model_close(xs);
    return test_finish("test_ouroboros");
}
