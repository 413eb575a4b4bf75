/* test_jacobi.c: Jacobi decoding (decoders/jacobi.c) emits exactly greedy's tokens.
 *  1. real models: stories260K and llama2xs (context 256: the context caps max_new), the first
 *     20 TinyStories prompts x 256 new tokens at the default window, a few prompts at other
 *     windows and with random initial guesses;
 *  2. synthetic grid: windows 1/2/5/16 x init prompt/random x max_new 0/1/2/37 x a one-token
 *     prompt (BOS) and a longer one, on an untied random model (varied text) and on a
 *     "positional" one (dec_check.h: every guess it refines is right, so after the first step
 *     whole windows are accepted: the step count is checked);
 *  3. context edges: prompts 7 and 1 tokens short of seq_len (the window is cut: no row past
 *     the context), a short-context model;
 *  4. the end token accepted inside a multi-token run (a prompt built to make the window guess
 *     it): generation stops right there;
 *  5. generate() allocates nothing; parameters are checked; runs are reproducible.
 * Under the sanitizers (testutil.h test_keep) 1.'s 20 prompts are thinned to one in four
 * (prompts 0, 7, 10, 13 and 19) and its other windows to one of their two prompts; every window
 * still runs and is compared with greedy. The grid runs in full. */
#include <stdlib.h>
#include <string.h>

#include "decoders/decoder.h"
#include "model/convert/synth.h"
#include "model/loader/model_file.h"
#include "tests/dec_check.h"
#include "tests/testutil.h"
#include "util/err.h"

DEC_CHECK_COUNT_MALLOC

static int ids[20][DEC_CHECK_MAX_PROMPT], lens[20];

static void test_real(const char *path, int n_prompts) {
    char err[ERR_LEN];
    model *m;
    CHECK_MSG(model_open(&m, test_shared(path), err) == 0, "%s", err);
    if (!m) return;
    dec_env env = {.target = m, .kernels = KERN_EXACT};
    dec_check_exact(&env, "jacobi", &m->cfg.bos_id, 1, 256, NULL, NULL, NULL, "BOS-only prompt");
    const char *specs[] = {"jacobi", "jacobi:window=4", "jacobi:init=random,seed=7",
                           "jacobi:window=64"};
    for (int si = 0; si < 4; si++) {
        long tokens = 0, steps = 0, rows = 0, equal = 0;
        int n = si == 0 ? n_prompts : si == 3 ? 1 : 2, runs = 0;
        for (int i = 0; i < n; i++) {
            if (!test_keep(i + (long)n * si, si == 0 ? 4 : 2)) continue;
            runs++;
            dec_stats st;
            equal += dec_check_exact(&env, specs[si], ids[i], lens[i], 256, NULL, &st, NULL, path);
            tokens += st.new_tokens, steps += st.target_steps, rows += st.target_rows;
        }
        fprintf(stderr,
                "%s %s: %ld/%d prompts equal to greedy, %.3f tokens per target step, %.1f rows per "
                "step\n",
                path, specs[si], equal, runs, (double)tokens / steps,
                (double)rows / (steps - runs));
    }
    model_close(m);
}

static void test_synthetic(void) {
    model *donor, *m = dec_check_synth_untied("64,160,2,4,2,512,512", 1, &donor);
    model *pdonor, *pos = dec_check_synth_positional("64,160,2,4,2,512,512", 5, &pdonor);
    int prompt[DEC_CHECK_SYNTH_PROMPT];
    dec_check_synth_prompt(prompt);
    const int windows[] = {1, 2, 5, 16}, max_news[] = {0, 1, 2, 37}, plens[] = {1, 9};
    const char *inits[] = {"prompt", "random"};
    for (int wi = 0; wi < 4; wi++)
        for (int ii = 0; ii < 2; ii++)
            for (int mi = 0; mi < 4; mi++)
                for (int li = 0; li < 2; li++)
                    for (int pi = 0; pi < 2; pi++) {
                        char spec[64], what[96];
                        int w = windows[wi], max_new = max_news[mi];
                        snprintf(spec, sizeof spec, "jacobi:window=%d,init=%s,seed=%d", w,
                                 inits[ii], 3 + mi);
                        snprintf(what, sizeof what, "%s model, prompt %d, max_new %d",
                                 pi ? "positional" : "untied", plens[li], max_new);
                        dec_env env = {.target = pi ? pos : m, .kernels = KERN_EXACT};
                        dec_stats st;
                        dec_check_exact(&env, spec, prompt, plens[li], max_new, NULL, &st, NULL,
                                        what);
                        if (max_new == 0) CHECK(st.target_steps == 0 && st.new_tokens == 0);
                        if (max_new == 1) CHECK(st.target_steps == 1 && st.drafted == 0);
                        /* positional: after the first step every refined guess is right; a
                         * step that takes the whole window leaves only fresh guesses, so at
                         * worst a full step (w + 1 tokens) and a one-token step alternate */
                        if (pi && max_new > 2)
                            CHECK_MSG(st.target_steps <= 2 + 2 * ((max_new - 2 + w + 1) / (w + 2)),
                                      "%s %s: %ld steps", what, spec, st.target_steps);
                    }
    /* context edges: seq_len 512; a 505-token prompt leaves 7 tokens, a 511-token one 1 */
    dec_env env = {.target = m, .kernels = KERN_EXACT};
    dec_stats st;
    dec_check_trace tr;
    dec_check_exact(&env, "jacobi:window=16", prompt, 505, 256, NULL, &st, &tr, "near seq_len");
    CHECK(st.new_tokens == 7 && tr.max_rows <= 7);
    dec_check_exact(&env, "jacobi:window=16", prompt, 511, 256, NULL, &st, &tr, "seq_len - 1");
    CHECK(st.new_tokens == 1 && st.target_steps == 1);
    env.target = pos; /* windows cut by the context while every guess is accepted */
    dec_check_exact(&env, "jacobi:window=16", prompt, 480, 256, NULL, &st, &tr, "positional end");
    CHECK(st.new_tokens == 32 && tr.max_rows <= 31);
    model *dshort, *m2 = dec_check_synth_untied("48,96,2,4,4,512,64", 3, &dshort);
    env.target = m2;
    dec_check_exact(&env, "jacobi:window=64", prompt, 50, 40, NULL, &st, &tr, "context 64");
    CHECK(st.new_tokens == 14 && tr.max_rows <= 14);
    model_close(m2), model_close(dshort);
    model_close(m), model_close(donor), model_close(pos), model_close(pdonor);
}

/* With init=prompt the guess for position p is the token at p - window. A prompt made of the
 * last `s` tokens of a story (ending with the end token) repeated, cut 3 tokens before the end
 * of a period, makes a window of s guess the period's end: the model, copying, accepts its
 * last real token and the end token in one step, with more guesses behind them. */
static void test_end_inside(void) {
    char err[ERR_LEN];
    model *m;
    CHECK_MSG(model_open(&m, test_shared("models/stories260K.bin"), err) == 0, "%s", err);
    if (!m) return;
    dec_env env = {.target = m, .kernels = KERN_EXACT};
    int found = 0;
    for (int i = 0; i < 20 && !found; i++) {
        int story[DEC_CHECK_MAX_OUT], n = dec_check_greedy(&env, ids[i], lens[i], 400, story);
        if (n < 1 || story[n - 1] != m->cfg.end_id) continue;
        for (int s = 6; s <= 32 && s <= n && !found; s += 2) {
            const int *z = story + n - s;
            int prompt[128], len = 0, got[DEC_CHECK_MAX_OUT];
            prompt[len++] = m->cfg.bos_id;
            for (int k = 0; k < 3 * s - 3; k++) prompt[len++] = z[k % s];
            char spec[64];
            snprintf(spec, sizeof spec, "jacobi:window=%d", s);
            dec_stats st;
            dec_check_trace tr;
            dec_check_exact(&env, spec, prompt, len, 100, got, &st, &tr, "end inside");
            int g = st.new_tokens;
            found = g > 0 && got[g - 1] == m->cfg.end_id && tr.last.emitted >= 2 &&
                    tr.last.accepted == tr.last.emitted && tr.last.drafted > tr.last.accepted;
            if (found)
                fprintf(stderr, "end inside an accepted run: story %d, window %d, %d tokens\n", i,
                        s, g);
        }
    }
    CHECK_MSG(found, "no prompt made the end token arrive inside an accepted run");
    model_close(m);
}

static void test_alloc_and_params(void) {
    char err[ERR_LEN];
    model *donor, *m = dec_check_synth_untied("64,160,2,4,2,512,512", 1, &donor);
    dec_env env = {.target = m, .kernels = KERN_EXACT};
    dec *d;
    CHECK(dec_create(&d, "jacobi:init=random,seed=9", &env, err) == 0);
    CHECK(strcmp(dec_spec(d), "jacobi:window=16,init=random,seed=9") == 0);
    int prompt[9] = {1, 5, 9, 13, 17, 21, 25, 29, 33}, out1[64], out2[64], n1, n2;
    dec_stats st1, st2;
    long before = dec_check_mallocs;
    CHECK(dec_generate(d, prompt, 9, 60, out1, &n1, &st1, err) == 0);
    CHECK_MSG(dec_check_mallocs == before, "generate allocated %ld times",
              dec_check_mallocs - before);
    CHECK(dec_generate(d, prompt, 9, 60, out2, &n2, &st2, err) == 0);
    CHECK(n1 == n2 && memcmp(out1, out2, sizeof(int) * n1) == 0); /* reproducible */
    CHECK(st1.target_steps == st2.target_steps && st1.accepted == st2.accepted);
    dec_free(d);
    CHECK(dec_create(&d, "jacobi:window=0", &env, err) == -1 && strstr(err, "1..64"));
    CHECK(dec_create(&d, "jacobi:init=zero", &env, err) == -1 && strstr(err, "prompt|random"));
    model_close(m), model_close(donor);
}

int main(void) {
    if (dec_check_tinystories(20, ids, lens)) return test_finish("test_jacobi");
    test_real("models/stories260K.bin", 20);
    test_real("models/llama2xs.bin", 20);
    test_synthetic();
    test_end_inside();
    test_alloc_and_params();
    return test_finish("test_jacobi");
}
