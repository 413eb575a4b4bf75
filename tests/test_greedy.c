/* test_greedy.c: greedy decoding equals llama2.c's reference run.c token for token.
 *
 * tests/data/greedy_runc.tsv holds, for stories260K and llama2xs and a dozen prompts, the ids
 * run.c (karpathy/llama2.c, temperature 0) printed: the expected ids were produced by the
 * reference implementation, not by this project, so this is an independent check of the
 * tokenizer (prompt ids), the forward pass and the greedy decoder. run.c's -n counts prompt
 * plus generated positions and it stops before printing BOS (1); decbench emits the end token.
 * Each case runs with 1 and 2 threads.
 *
 * Two checks of the decoder framework on real weights follow: a prompt longer than one prefill
 * chunk (64 tokens) gives what feeding it one token at a time gives, and dec_env.cancel stops
 * a generation (DEC_CANCELLED) without spoiling the decoder's next one. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/decoder.h"
#include "model/loader/model_file.h"
#include "model/tokenizer/tokenizer.h"
#include "tests/testutil.h"
#include "util/err.h"

#define SRC_DIR DECBENCH_SOURCE_DIR

static int parse_json_string(const char *s, char *out, size_t n) {
    /* the prompts are plain ASCII with \" escapes only */
    if (*s++ != '"') return -1;
    size_t k = 0;
    while (*s && *s != '"' && k + 1 < n) {
        if (*s == '\\') s++;
        out[k++] = *s++;
    }
    out[k] = '\0';
    return *s == '"' ? 0 : -1;
}

/* A 205-token prompt: greedy through dec_generate (prefilled in 64-token chunks) equals a loop
 * of one-token forward passes. */
static void test_long_prompt(const model *m, const tok *t) {
    char err[ERR_LEN], text[2048] = "";
    for (int i = 0; i < 7; i++)
        strcat(text, "Lily and Tom went to the park to play with a big red ball. They laughed. ");
    int ids[600], n_ids;
    CHECK(tok_encode(t, text, 1, ids, &n_ids, err) == 0);
    CHECK_MSG(n_ids > 3 * 64 && n_ids < 300, "prompt of %d tokens", n_ids);
    const int max_new = 40, V = m->cfg.vocab_size;
    int want[64], n_want = 0;
    fwd_ctx *f;
    float *logits = malloc(sizeof(float) * (size_t)V);
    CHECK(fwd_new(&f, m, NULL, 1, KERN_EXACT, err) == 0);
    for (int i = 0; i < n_ids; i++) CHECK(fwd_prefill(f, ids + i, 1, logits, err) == 0);
    while (n_want < max_new) {
        int next = fwd_argmax(logits, V);
        want[n_want++] = next;
        if (next == 1) break;
        CHECK(fwd_prefill(f, &next, 1, logits, err) == 0);
    }
    fwd_free(f);
    free(logits);
    dec_env env = {.target = m, .kernels = KERN_EXACT};
    dec *d;
    CHECK(dec_create(&d, "greedy", &env, err) == 0);
    int out[64], n_out;
    dec_stats st;
    CHECK(dec_generate(d, ids, n_ids, max_new, out, &n_out, &st, err) == 0);
    CHECK_MSG(n_out == n_want && memcmp(out, want, sizeof(int) * (size_t)n_out) == 0,
              "long prompt (%d tokens): chunked prefill differs from token-by-token", n_ids);
    dec_free(d);
}

/* env.cancel: raised before a generation, it returns DEC_CANCELLED at once; the same decoder
 * then generates normally once it is lowered. */
static void test_cancel(const model *m, const model *draft, const tok *t) {
    char err[ERR_LEN];
    int ids[64], n_ids;
    CHECK(tok_encode(t, "Once upon a time", 1, ids, &n_ids, err) == 0);
    const char *specs[] = {"greedy", "lookahead", "spec", "ouroboros", "pld", "jacobi"};
    int ref[64], n_ref = 0;
    for (int k = 0; k < 6; k++) {
        volatile sig_atomic_t flag = 1;
        dec_env env = {.target = m, .draft = draft, .kernels = KERN_EXACT, .cancel = &flag};
        dec *d;
        CHECK_MSG(dec_create(&d, specs[k], &env, err) == 0, "%s", err);
        int out[64], n_out;
        dec_stats st;
        CHECK_MSG(dec_generate(d, ids, n_ids, 48, out, &n_out, &st, err) == DEC_CANCELLED,
                  "%s: a raised cancel flag did not cancel", specs[k]);
        CHECK(n_out == 0);
        flag = 0;
        CHECK_MSG(dec_generate(d, ids, n_ids, 48, out, &n_out, &st, err) == 0, "%s: %s", specs[k], err);
        if (k == 0) memcpy(ref, out, sizeof(int) * (size_t)(n_ref = n_out));
        CHECK_MSG(n_out == n_ref && memcmp(out, ref, sizeof(int) * (size_t)n_out) == 0,
                  "%s after a cancelled generation differs from greedy", specs[k]);
        dec_free(d);
    }
}

int main(void) {
    char err[ERR_LEN], path[2048];
    snprintf(path, sizeof path, "%s/tests/data/greedy_runc.tsv", SRC_DIR);
    FILE *f = fopen(path, "r");
    CHECK_MSG(f != NULL, "cannot open %s", path);
    if (!f) return test_finish("test_greedy");
    tok *t;
    CHECK_MSG(tok_load(&t, test_shared("models/tok512.bin"), err) == 0, "%s", err);
    char line[16384];
    int cases = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n') continue;
        char *model_name = strtok(line, "\t"), *prompt_json = strtok(NULL, "\t");
        int steps = atoi(strtok(NULL, "\t"));
        char *ids_s = strtok(NULL, "\n");
        int want[1024], n_want = 0;
        for (char *p = strtok(ids_s, " "); p; p = strtok(NULL, " ")) want[n_want++] = atoi(p);
        char prompt[512], mpath[256];
        CHECK(parse_json_string(prompt_json, prompt, sizeof prompt) == 0);
        snprintf(mpath, sizeof mpath, "models/%s", model_name);
        model *m;
        CHECK_MSG(model_open(&m, test_shared(mpath), err) == 0, "%s", err);
        int ids[600], n_ids;
        CHECK(tok_encode(t, prompt, 1, ids, &n_ids, err) == 0);
        int max_new = steps - n_ids + 1;
        if (n_want < max_new) want[n_want++] = 1; /* run.c stopped at the end token */
        for (int threads = 1; threads <= 2; threads++) {
            tpool *pool;
            CHECK(tpool_new(&pool, threads, err) == 0);
            dec_env env = {.target = m, .pool = pool, .kernels = KERN_EXACT};
            dec *d;
            CHECK(dec_create(&d, "greedy", &env, err) == 0);
            int out[1024], n_out;
            dec_stats st;
            CHECK(dec_generate(d, ids, n_ids, max_new, out, &n_out, &st, err) == 0);
            int same = n_out == n_want && memcmp(out, want, sizeof(int) * n_out) == 0;
            CHECK_MSG(same, "%s %s (%d threads): %d tokens, run.c %d", model_name, prompt, threads,
                      n_out, n_want);
            CHECK(st.target_steps == n_out && st.new_tokens == n_out);
            dec_free(d);
            tpool_free(pool);
            cases++;
        }
        model_close(m);
    }
    fclose(f);
    CHECK_MSG(cases == 48, "%d cases run, expected 24 prompts x 2 thread counts", cases);
    model *m, *draft;
    CHECK_MSG(model_open(&m, test_shared("models/stories260K.bin"), err) == 0, "%s", err);
    CHECK_MSG(model_open(&draft, test_shared("models/llama2xs.bin"), err) == 0, "%s", err);
    test_long_prompt(m, t);
    test_cancel(m, draft, t);
    model_close(m);
    model_close(draft);
    tok_free(t);
    return test_finish("test_greedy");
}
