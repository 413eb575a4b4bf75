/* test_registry.c: the decoder framework's own functions (decoders/registry.c) that no
 * decoder test covers by itself: the vtable check of the optional members (every refusal, one
 * line each), the registry listing, the state API on a decoder without state, the decoder
 * counters reaching dec_stats, and dec_guess, the window rule jacobi and lookahead share. */
#include <string.h>

#include "decoders/dec_impl.h"
#include "model/loader/model_file.h"
#include "tests/testutil.h"
#include "util/err.h"

static int gen_none(dec *d, const int *prompt, int n, char *err) {
    (void)d, (void)prompt, (void)n, (void)err;
    return 0;
}
static int save_none(const dec *d, const char *path, char *what, size_t n, char *err) {
    (void)d, (void)path, (void)what, (void)n, (void)err;
    return 0;
}

static void test_vtable_check(void) {
    char err[ERR_LEN];
    static const stat_def good[2] = {{"tree_rows", STAT_INT, STAT_SUM, STAT_DET, "rows"},
                                     {"theory", STAT_REAL, STAT_MEAN, STAT_VARIES, "expected"}};
    static const stat_def dup[2] = {{"a", STAT_INT, STAT_SUM, STAT_DET, "x"},
                                    {"a", STAT_INT, STAT_SUM, STAT_DET, "y"}};
    static const stat_def upper[1] = {{"Tree", STAT_INT, STAT_SUM, STAT_DET, "x"}};
    static const stat_def nodef[1] = {{"tree", STAT_INT, STAT_SUM, STAT_DET, NULL}};
    dec_vtable vt = {.name = "t", .generate = gen_none};
    CHECK(dec_vtable_check(&vt, err) == 0); /* no optional member at all */
    vt.counters = good, vt.n_counters = 2;
    CHECK(dec_vtable_check(&vt, err) == 0);
    struct {
        const stat_def *defs;
        int n;
        const char *msg;
    } bad[] = {
        {good, STAT_MAX_COUNTERS + 1, "t: 33 counters declared (0..32, with a table)"},
        {NULL, 1, "t: 1 counters declared"},
        {good, -1, "t: -1 counters declared"},
        {dup, 2, "t: counter 1 ('a') needs a unique [a-z0-9_] name and a definition"},
        {upper, 1, "t: counter 0 ('Tree') needs a unique"},
        {nodef, 1, "t: counter 0 ('tree') needs a unique [a-z0-9_] name and a definition"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        vt.counters = bad[i].defs, vt.n_counters = bad[i].n;
        err[0] = 0;
        CHECK_MSG(dec_vtable_check(&vt, err) == -1 && strstr(err, bad[i].msg), "case %zu: '%s'", i,
                  err);
    }
    vt.counters = NULL, vt.n_counters = 0;
    vt.state_name = "tree";
    CHECK(dec_vtable_check(&vt, err) == -1 && strstr(err, "t: state 'tree' without state_save"));
    vt.state_save = save_none;
    CHECK(dec_vtable_check(&vt, err) == -1); /* still no state_load */
}

static void test_registry_listing(void) {
    int n_with = 0, found_ouro = 0;
    for (int i = 0; i < dec_registry_size(); i++) {
        int n;
        const stat_def *defs = dec_registry_counters(i, &n);
        CHECK((n == 0) == (defs == NULL));
        n_with += n > 0;
        if (!strcmp(dec_registry_name(i), "ouroboros"))
            found_ouro = n == 14 && !strcmp(defs[8].name, "pool_phrases") && defs[8].agg == STAT_MAX;
    }
    CHECK(dec_registry_size() >= 6 && !strcmp(dec_registry_name(0), "greedy"));
    CHECK(dec_registry_name(-1) == NULL && dec_registry_name(dec_registry_size()) == NULL);
    CHECK(n_with >= 1 && found_ouro);
}

/* A decoder without state refuses every state call with a message naming it; greedy's
 * dec_stats carries no decoder counters. */
static void test_stateless(const model *m) {
    char err[ERR_LEN], what[32] = "x";
    dec_env env = {.target = m, .kernels = KERN_EXACT};
    dec *d;
    CHECK(dec_create(&d, "pld:ngram=2", &env, err) == 0);
    CHECK(dec_state_name(d) == NULL);
    CHECK(dec_state_check(d, err) == -1 && strstr(err, "pld:ngram=2,k=10 keeps no state"));
    CHECK(dec_state_save(d, test_tmp("s.bin"), what, sizeof what, err) == -1 && what[0] == 0);
    CHECK(dec_state_load(d, test_tmp("s.bin"), err) == -1 && strstr(err, "nothing to save"));
    int prompt[3] = {1, 400, 401}, out[4], n;
    dec_stats st;
    CHECK(dec_generate(d, prompt, 3, 4, out, &n, &st, err) == 0);
    CHECK(st.n_counters == 0 && st.counter_defs == NULL);
    dec_free(d);
}

/* dec_guess: the latest known token p - period, p - 2 period, ... back; ctx[p % len] when the
 * context is shorter than that; a seeded uniform draw with random. */
static void test_guess(void) {
    const int ctx[6] = {10, 11, 12, 13, 14, 15};
    rng_state r;
    rng_seed(&r, 7);
    CHECK(dec_guess(ctx, 6, 6, 4, 0, &r, 100) == 12);  /* 6 - 4 = 2 */
    CHECK(dec_guess(ctx, 6, 9, 4, 0, &r, 100) == 15);  /* 9 - 4 = 5 */
    CHECK(dec_guess(ctx, 6, 12, 4, 0, &r, 100) == 14); /* 8 is unknown: 4 */
    CHECK(dec_guess(ctx, 2, 3, 8, 0, &r, 100) == 11);  /* 3 - 8 < 0: ctx[3 % 2] */
    rng_state a, b;
    rng_seed(&a, 7), rng_seed(&b, 7);
    int g1 = dec_guess(ctx, 6, 6, 4, 1, &a, 100), g2 = dec_guess(ctx, 6, 6, 4, 1, &b, 100);
    CHECK(g1 == g2 && g1 >= 0 && g1 < 100 && g1 == (int)rng_below(&r, 100));
}

int main(void) {
    char err[ERR_LEN];
    model *m;
    CHECK_MSG(model_open(&m, test_shared("models/stories260K.bin"), err) == 0, "%s", err);
    test_vtable_check();
    test_registry_listing();
    test_stateless(m);
    test_guess();
    model_close(m);
    return test_finish("test_registry");
}
