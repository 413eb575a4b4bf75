/* test_forward.c: the forward pass's guarantees.
 *  (the kernels themselves are checked against their scalar reference in test_kernels.c)
 *  1. batch invariance: every row of random trees (random sizes, random parents, random
 *     committed prefix) has logits bit-identical (memcmp) to decoding its root-to-row path
 *     token by token, on the real models and on synthetic ones (GQA, odd widths; every
 *     architecture of model/arch.h: Q/K/V biases, per-head norms, NEOX RoPE, rope_freqs, linear
 *     RoPE scaling, head sizes other than dim / heads, in f32 and llama-quantize mixes), for 1,
 *     2 and 3 threads.
 *  2. commit/truncate: committing a chosen path of a tree and decoding on equals decoding
 *     that path sequentially; truncating and re-decoding reproduces the same logits.
 *  3. bad batches (parent after child, position past the context, bad token) are refused. */
#include <stdlib.h>
#include <string.h>

#include "model/convert.h"
#include "model/forward.h"
#include "model/synth.h"
#include "tests/testutil.h"
#include "util/err.h"
#include "util/rng.h"

/* Reference logits of a path: truncate to the prefix, feed the path one token at a time. */
static void sequential_logits(fwd_ctx *f, int prefix, const int *path, int n, float *out) {
    char err[ERR_LEN];
    static const int zero = 0;
    CHECK(fwd_truncate(f, prefix, err) == 0);
    for (int i = 0; i < n; i++) {
        CHECK(fwd_eval(f, 1, &path[i], NULL, NULL, &zero, 1, out, err) == 0);
        CHECK(fwd_commit(f, &zero, 1, err) == 0);
    }
}

static void test_invariance(const model *m, const char *what, int n_threads, int n_trees,
                            uint64_t seed) {
    char err[ERR_LEN];
    tpool *pool;
    CHECK(tpool_new(&pool, n_threads, err) == 0);
    const int B = 40, V = m->cfg.vocab_size;
    fwd_ctx *f, *ref;
    CHECK(fwd_new(&f, m, pool, B, KERN_EXACT, err) == 0);
    CHECK(fwd_new(&ref, m, NULL, 8, KERN_EXACT, err) == 0);
    rng_state r;
    rng_seed(&r, seed);
    int ctx = m->cfg.seq_len < 120 ? m->cfg.seq_len : 120;
    int *prompt = malloc(sizeof(int) * ctx);
    for (int i = 0; i < ctx; i++) prompt[i] = (int)rng_below(&r, (uint32_t)V);
    float *logits = malloc(sizeof(float) * B * V), *want = malloc(sizeof(float) * V);
    int tokens[64], parent[64], path[64], rows_mismatch = 0, rows_checked = 0;
    for (int tree = 0; tree < n_trees; tree++) {
        int P = 1 + (int)rng_below(&r, (uint32_t)(ctx - B - 1));
        int T = 1 + (int)rng_below(&r, B);
        /* committed prefix, prefilled in a random chunking through the same context */
        CHECK(fwd_truncate(f, 0, err) == 0);
        CHECK(fwd_prefill(f, prompt, P, logits, err) == 0);
        int shape = (int)rng_below(&r, 3); /* 0: random tree, 1: chain, 2: flat (all roots) */
        for (int i = 0; i < T; i++) {
            tokens[i] = (int)rng_below(&r, (uint32_t)V);
            parent[i] = shape == 1 ? i - 1 : shape == 2 ? -1 : (int)rng_below(&r, (uint32_t)(i + 1)) - 1;
        }
        CHECK(fwd_eval(f, T, tokens, parent, NULL, NULL, T, logits, err) == 0);
        CHECK(fwd_truncate(ref, 0, err) == 0);
        CHECK(fwd_prefill(ref, prompt, P, want, err) == 0);
        for (int i = 0; i < T; i++) {
            int n = 0;
            for (int j = i; j >= 0; j = parent[j]) path[n++] = j;
            int seq[64];
            for (int k = 0; k < n; k++) seq[k] = tokens[path[n - 1 - k]];
            sequential_logits(ref, P, seq, n, want);
            rows_checked++;
            if (memcmp(want, logits + (size_t)i * V, sizeof(float) * V) != 0) rows_mismatch++;
        }
        /* commit the path of the deepest row, then one more token: equals sequential */
        int deepest = T - 1, n = 0;
        for (int j = deepest; j >= 0; j = parent[j]) path[n++] = j;
        int cpath[64], seq[65];
        for (int k = 0; k < n; k++) cpath[k] = path[n - 1 - k], seq[k] = tokens[cpath[k]];
        CHECK(fwd_commit(f, cpath, n, err) == 0);
        seq[n] = (int)rng_below(&r, (uint32_t)V);
        CHECK(fwd_eval(f, 1, &seq[n], NULL, NULL, NULL, 1, logits, err) == 0);
        sequential_logits(ref, P, seq, n + 1, want);
        CHECK_MSG(memcmp(want, logits, sizeof(float) * V) == 0,
                  "%s: decoding after committing a path differs from sequential", what);
        /* truncate back into the committed path and re-decode: same logits */
        int cut = P + (int)rng_below(&r, (uint32_t)n + 1);
        CHECK(fwd_truncate(f, cut, err) == 0);
        CHECK(fwd_eval(f, 1, &seq[cut - P], NULL, NULL, NULL, 1, logits, err) == 0);
        sequential_logits(ref, cut, &seq[cut - P], 1, want);
        CHECK_MSG(memcmp(want, logits, sizeof(float) * V) == 0,
                  "%s: decoding after truncate differs from sequential", what);
    }
    CHECK_MSG(rows_mismatch == 0, "%s, %d threads: %d of %d tree rows differ from sequential",
              what, n_threads, rows_mismatch, rows_checked);
    fprintf(stderr, "%s, %d thread(s): %d tree rows bit-identical to sequential decoding\n", what,
            n_threads, rows_checked - rows_mismatch);
    free(prompt), free(logits), free(want);
    fwd_free(f), fwd_free(ref);
    tpool_free(pool);
}

static void test_bad_batches(const model *m) {
    char err[ERR_LEN];
    fwd_ctx *f;
    CHECK(fwd_new(&f, m, NULL, 4, KERN_EXACT, err) == 0);
    int tokens[4] = {1, 2, 3, 4}, parent[4] = {-1, 2, 0, 0};
    CHECK(fwd_eval(f, 4, tokens, parent, NULL, NULL, 4, NULL, err) == -1);
    CHECK(strstr(err, "row 1: parent 2") != NULL);
    int bad_tok[1] = {m->cfg.vocab_size};
    CHECK(fwd_eval(f, 1, bad_tok, NULL, NULL, NULL, 0, NULL, err) == -1);
    CHECK(strstr(err, "outside the vocabulary") != NULL);
    int pos[1] = {m->cfg.seq_len};
    CHECK(fwd_eval(f, 1, tokens, NULL, pos, NULL, 0, NULL, err) == -1);
    CHECK(strstr(err, "outside the context") != NULL);
    CHECK(fwd_eval(f, 5, tokens, NULL, NULL, NULL, 0, NULL, err) == -1);
    CHECK(fwd_truncate(f, 3, err) == -1);
    int p2[2] = {-1, -1};
    CHECK(fwd_eval(f, 2, tokens, p2, NULL, NULL, 0, NULL, err) == 0);
    int path[2] = {0, 1}; /* row 1 is a root, not a child of row 0 */
    CHECK(fwd_commit(f, path, 2, err) == -1);
    CHECK(strstr(err, "does not continue the path") != NULL);
    fwd_free(f);
}

int main(void) {
    char err[ERR_LEN];
    model *real[2];
    const char *names[2] = {"models/stories260K.bin", "models/llama2xs.bin"};
    for (int i = 0; i < 2; i++) {
        CHECK_MSG(model_open(&real[i], test_shared(names[i]), err) == 0, "%s", err);
        for (int t = 1; t <= 3; t++) test_invariance(real[i], names[i], t, 12, 100 + t);
    }
    test_bad_batches(real[0]);
    model_config c;
    /* GQA (6 heads on 2 kv heads), widths that are not multiples of 16, vocab 300 */
    CHECK(synth_config("96,200,3,6,2,300,160", &c, err) == 0);
    model *syn;
    CHECK(synth_model(&syn, &c, 42, err) == 0);
    for (int t = 1; t <= 3; t++) test_invariance(syn, "synthetic 96,200,3,6,2,300", t, 10, 7 + t);
    model_close(syn);
    for (int i = 0; i < 2; i++) model_close(real[i]);
    /* every block type (kq_Q4_K_M holds q4_k and q6_k; Q3_K_M q3_k, q4_k and q5_k) */
    const char *quant[] = {"models/quantized/xs_Q4_K_M.gguf", "models/quantized/xs_Q4_0.gguf",
                           "models/quantized/kq_Q4_K_M.gguf", "models/quantized/kq_Q3_K_M.gguf",
                           "models/quantized/kq_Q2_K.gguf",   "models/quantized/kq_Q5_K_M.gguf",
                           "models/quantized/kq_Q4_1.gguf",   "models/quantized/kq_Q5_0.gguf",
                           "models/quantized/kq_Q5_1.gguf",   "models/quantized/kq_Q6_K.gguf"};
    /* each architecture's small shape (synth.h), with a separate classifier */
    const char *arch_shapes[][2] = {{"tiny-qwen2", "f32"},    {"tiny-qwen3", "Q4_K_M"},
                                    {"tiny-llama3", "Q4_0"},  {"tiny-mistral", "f32"},
                                    {"tiny-dscoder", "Q6_K"}, {"tiny-qwen3", "f32"}};
    for (size_t i = 0; i < sizeof arch_shapes / sizeof arch_shapes[0]; i++) {
        synth_shape s;
        convert_opts o = {.name = "t"};
        const char *path = test_tmp("arch.gguf");
        model *a = NULL;
        CHECK_MSG(synth_shape_parse(arch_shapes[i][0], &s, err) == 0 &&
                      convert_scheme_parse(arch_shapes[i][1], &o) == 0,
                  "%s", err);
        s.cfg.shared_classifier = 0;
        s.cfg.vocab_size = 300;
        CHECK_MSG(synth_write_gguf(path, &s, &o, NULL, 5, err) == 0 &&
                      model_open(&a, path, err) == 0,
                  "%s: %s", arch_shapes[i][0], err);
        char what[64];
        snprintf(what, sizeof what, "%s %s", arch_shapes[i][0], arch_shapes[i][1]);
        for (int t = 1; a && t <= 3; t++) test_invariance(a, what, t, 6, 70 + t);
        model_close(a);
    }
    for (size_t i = 0; i < sizeof quant / sizeof quant[0]; i++) {
        model *q;
        CHECK_MSG(model_open(&q, test_shared(quant[i]), err) == 0, "%s", err);
        if (!q) continue;
        for (int t = 1; t <= 3; t++) test_invariance(q, quant[i], t, i < 3 ? 8 : 4, 50 + t);
        model_close(q);
    }
    return test_finish("test_forward");
}
