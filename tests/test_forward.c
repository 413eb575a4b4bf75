/* test_forward.c: the forward pass's guarantees.
 *  (the kernels themselves are checked against their scalar reference in test_kernels.c)
 *  1. batch invariance: every row of random trees (random sizes, random parents, random
 *     committed prefix) has logits bit-identical (memcmp) to decoding its root-to-row path
 *     token by token, on the real models and on synthetic ones (GQA, odd widths; every
 *     architecture of model/arch.h: Q/K/V biases, per-head norms, NEOX RoPE, rope_freqs, linear
 *     RoPE scaling, head sizes other than dim / heads, in f32 and llama-quantize mixes), for 1,
 *     2 and 3 threads; with the KV cache in f16 as well (model_set_kv), whose logits differ from
 *     f32's and are as invariant.
 *  2. commit/truncate: committing a chosen path of a tree and decoding on equals decoding
 *     that path sequentially; truncating and re-decoding reproduces the same logits.
 *  3. level by level: the same trees evaluated in several passes (fwd_eval, then
 *     fwd_eval_more with parents in earlier passes) give the one-pass logits bit for bit, and
 *     committing a path across passes works as after one pass;
 *  4. bad batches (parent after child, position past the context, bad token) are refused.
 *     The int8 and int8b modes on quantized files of every type they have (the int8b mode with
 *     3 threads too), and without their weight copies (DECBENCH_PACKED=0).
 *  5. non-finite logits: a model file whose embedding row of one token is NaN
 *     fails the pass that feeds that token, naming its position and the token; with
 *     fwd_allow_nonfinite the pass returns the NaN logits.
 * Under the sanitizers (testutil.h test_keep) 1. runs each group with one of its thread counts
 * (threads_kept below). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "model/convert/convert.h"
#include "model/loader/model_file.h"
#include "model/balance.h"
#include "model/forward.h"
#include "model/kernels/kernels.h"
#include "model/convert/requant.h"
#include "model/convert/synth.h"
#include "tests/testutil.h"
#include "util/err.h"
#include "util/hash.h"
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
                            uint64_t seed, kern_mode mode) {
    char err[ERR_LEN];
    tpool *pool;
    CHECK(tpool_new(&pool, n_threads, err) == 0);
    const int B = 40, V = m->cfg.vocab_size;
    fwd_ctx *f, *ref;
    CHECK(fwd_new(&f, m, pool, B, mode, err) == 0);
    CHECK(fwd_new(&ref, m, NULL, 8, mode, err) == 0);
    rng_state r;
    rng_seed(&r, seed);
    int ctx = m->cfg.seq_len < 120 ? m->cfg.seq_len : 120;
    int *prompt = malloc(sizeof(int) * ctx);
    for (int i = 0; i < ctx; i++) prompt[i] = (int)rng_below(&r, (uint32_t)V);
    float *logits = malloc(sizeof(float) * B * V), *want = malloc(sizeof(float) * V);
    float *split = malloc(sizeof(float) * B * V);
    int tokens[64], parent[64], path[64], rows_mismatch = 0, rows_checked = 0, split_mismatch = 0;
    for (int tree = 0; tree < n_trees; tree++) {
        int P = 1 + (int)rng_below(&r, (uint32_t)(ctx - B - 1));
        int T = 1 + (int)rng_below(&r, B);
        /* committed prefix, prefilled in a random chunking through the same context */
        CHECK(fwd_truncate(f, 0, err) == 0);
        CHECK(fwd_prefill(f, prompt, P, logits, err) == 0);
        int shape = (int)rng_below(&r, 3); /* 0: random tree, 1: chain, 2: flat (all roots) */
        for (int i = 0; i < T; i++) {
            tokens[i] = (int)rng_below(&r, (uint32_t)V);
            parent[i] = shape == 1   ? i - 1
                        : shape == 2 ? -1
                                     : (int)rng_below(&r, (uint32_t)(i + 1)) - 1;
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
        /* the same tree in consecutive pieces, each pass referring to rows of earlier ones */
        for (int done = 0, k = 0; done < T; k++) {
            int len = 1 + (int)rng_below(&r, (uint32_t)(T - done)), sub[64];
            for (int i = 0; i < len; i++) sub[i] = parent[done + i];
            CHECK(fwd_scratch_rows(f) == (k == 0 ? T : done));
            CHECK((k == 0 ? fwd_eval(f, len, tokens, sub, NULL, NULL, len, split, err)
                          : fwd_eval_more(f, len, tokens + done, sub, NULL, len,
                                          split + (size_t)done * V, err)) == 0);
            done += len;
        }
        split_mismatch += memcmp(split, logits, sizeof(float) * T * V) != 0;
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
    CHECK_MSG(rows_mismatch == 0, "%s, %s, %d threads: %d of %d tree rows differ from sequential",
              what, kern_mode_name(mode), n_threads, rows_mismatch, rows_checked);
    CHECK_MSG(split_mismatch == 0,
              "%s, %s, %d threads: %d trees differ when evaluated level by level", what,
              kern_mode_name(mode), n_threads, split_mismatch);
    fprintf(stderr, "%s, %s, %d thread(s): %d tree rows bit-identical to sequential decoding\n",
            what, kern_mode_name(mode), n_threads, rows_checked - rows_mismatch);
    free(prompt), free(logits), free(want), free(split);
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
    /* fwd_eval_more: parents among earlier scratch rows only, and the batch's room */
    CHECK(fwd_eval(f, 2, tokens, p2, NULL, NULL, 0, NULL, err) == 0);
    int p3[2] = {1, 3};
    CHECK(fwd_eval_more(f, 2, tokens, p3, NULL, 0, NULL, err) == -1);
    CHECK_MSG(strstr(err, "row 3: parent 3, expected -1..2") != NULL, "%s", err);
    CHECK(fwd_scratch_rows(f) == 0); /* a failed pass leaves nothing usable in scratch */
    CHECK(fwd_eval(f, 2, tokens, p2, NULL, NULL, 0, NULL, err) == 0);
    CHECK(fwd_eval_more(f, 3, tokens, NULL, NULL, 0, NULL, err) == -1);
    CHECK_MSG(strstr(err, "3 more rows after the 2 in scratch exceed the 4") != NULL, "%s", err);
    CHECK(fwd_eval(f, 2, tokens, p2, NULL, NULL, 0, NULL, err) == 0);
    int p4[2] = {0, 2}; /* rows 2 (child of 0) and 3 (child of 2) */
    CHECK(fwd_eval_more(f, 2, tokens, p4, NULL, 0, NULL, err) == 0);
    int path3[3] = {0, 2, 3};
    CHECK(fwd_commit(f, path3, 3, err) == 0 && fwd_n_past(f) == 3 && fwd_scratch_rows(f) == 0);
    fwd_free(f);
}

/* The int8 and int8b modes change the bits of a quantized model only (their products run on
 * rounded activations; the logits stay close) and leave an f32 model's bits alone. */
static void test_int8_differs_only_when_quantized(void) {
    char err[ERR_LEN];
    const char *files[] = {"models/stories260K.bin", "models/quantized/xs_Q8_0.gguf"};
    for (int i = 0; i < 2; i++) {
        model *m;
        CHECK_MSG(model_open(&m, test_shared(files[i]), err) == 0, "%s", err);
        if (!m) continue;
        int V = m->cfg.vocab_size, tokens[8] = {1, 40, 300, 7, 99, 12, 5, 260};
        float *a = malloc(sizeof(float) * 8 * V), *b = malloc(sizeof(float) * 8 * V);
        fwd_ctx *fe;
        CHECK(fwd_new(&fe, m, NULL, 8, KERN_EXACT, err) == 0);
        CHECK(fwd_eval(fe, 8, tokens, NULL, NULL, NULL, 8, a, err) == 0);
        const kern_mode modes[2] = {KERN_EXACT_INT8, KERN_EXACT_INT8B};
        for (int k8 = 0; k8 < 2; k8++) {
            const char *name = kern_mode_name(modes[k8]);
            fwd_ctx *fi;
            CHECK(fwd_new(&fi, m, NULL, 8, modes[k8], err) == 0);
            CHECK(fwd_eval(fi, 8, tokens, NULL, NULL, NULL, 8, b, err) == 0);
            double num = 0, den = 0;
            for (int k = 0; k < 8 * V; k++)
                num += fabs((double)a[k] - b[k]), den += fabs((double)a[k]);
            if (i == 0)
                CHECK_MSG(memcmp(a, b, sizeof(float) * 8 * V) == 0, "%s: %s mode changed f32 bits",
                          files[i], name);
            else
                CHECK_MSG(num > 0 && num < 0.05 * den, "%s: %s logits differ by %g (relative)",
                          files[i], name, num / den);
            fwd_free(fi);
        }
        fwd_free(fe);
        free(a), free(b);
        model_close(m);
    }
}

/* Greedy from prompt {1, 2, 3} for n tokens into out; returns the index of the failing pass
 * (its error in err), or -1 when all passed. */
static int greedy_tokens(fwd_ctx *f, int V, int n, int *out, float *logits, char *err) {
    int prompt[3] = {1, 2, 3};
    if (fwd_truncate(f, 0, err) || fwd_prefill(f, prompt, 3, logits, err)) return 0;
    for (int k = 0; k < n; k++) {
        out[k] = fwd_argmax(logits, V);
        int zero = 0;
        if (fwd_eval(f, 1, &out[k], NULL, NULL, NULL, 1, logits, err) ||
            fwd_commit(f, &zero, 1, err))
            return k + 1;
    }
    return -1;
}

/* DECBENCH_PACKED=0 keeps the int8 mode from making packed rows and the int8b mode from making
 * 16-row copies (kernels.h), and greedy decoding gives the same tokens and logits without them,
 * bit for bit (on a CPU whose int8 tile reads packed rows the two runs take different tiles;
 * elsewhere neither makes a copy; the int8b tiles pack each group on the fly without one). */
static void test_packed_switch(kern_mode mode) {
    char err[ERR_LEN];
    const char *file = "models/quantized/kq_Q4_K_M.gguf";
    int toks[2][12];
    float *lg[2] = {NULL, NULL};
    for (int off = 0; off < 2; off++) {
        model *m;
        if (off) setenv("DECBENCH_PACKED", "0", 1);
        CHECK_MSG(model_open(&m, test_shared(file), err) == 0, "%s", err);
        fwd_ctx *f = NULL;
        if (m) CHECK(fwd_new(&f, m, NULL, 4, mode, err) == 0);
        unsetenv("DECBENCH_PACKED");
        if (!m) break;
        const int V = m->cfg.vocab_size;
        const unsigned char *copy = mode == KERN_EXACT_INT8B ? m->wcls.r16 : m->wcls.packed;
        const size_t want = mode == KERN_EXACT_INT8B ? kern_int8b_packed_size(&m->wcls)
                                                     : kern_int8_packed_bytes(&m->wcls);
        CHECK_MSG(off ? copy == NULL : (copy != NULL) == (want > 0),
                  "%s: %s copy %s with DECBENCH_PACKED %s", file, kern_mode_name(mode),
                  copy ? "made" : "missing", off ? "0" : "unset");
        lg[off] = malloc(sizeof(float) * V);
        CHECK_MSG(f && greedy_tokens(f, V, 12, toks[off], lg[off], err) < 0, "%s", err);
        if (off) {
            CHECK_MSG(memcmp(toks[0], toks[1], sizeof toks[0]) == 0 &&
                          memcmp(lg[0], lg[1], sizeof(float) * V) == 0,
                      "%s: %s greedy differs without its copy", file, kern_mode_name(mode));
        }
        fwd_free(f);
        model_close(m);
    }
    free(lg[0]), free(lg[1]);
}

static void test_nonfinite(void) {
    char err[ERR_LEN];
    model_config c;
    CHECK(synth_config("64,172,2,8,4,512,64", &c, err) == 0);
    c.shared_classifier = 0; /* a NaN embedding row then poisons only the passes fed that token */
    const char *path = test_tmp("nan_row.bin");
    CHECK_MSG(synth_write(path, &c, 11, err) == 0, "%s", err);
    model *m;
    CHECK_MSG(model_open(&m, path, err) == 0, "%s", err);
    if (!m) return;
    int V = c.vocab_size, out[8], again[8];
    float *logits = malloc(sizeof(float) * V);
    fwd_ctx *f;
    CHECK(fwd_new(&f, m, NULL, 4, KERN_EXACT, err) == 0);
    CHECK_MSG(greedy_tokens(f, V, 8, out, logits, err) == -1, "%s", err);
    fwd_free(f);
    model_close(m);
    /* the first output token that is neither in the prompt {1, 2, 3} nor output before */
    int k = 0;
    for (; k < 8; k++) {
        int seen = out[k] <= 3;
        for (int j = 0; j < k; j++) seen |= out[j] == out[k];
        if (!seen) break;
    }
    CHECK_MSG(k < 8, "greedy repeats prompt tokens only");
    if (k == 8) {
        free(logits);
        return;
    }
    /* its embedding row (after the 28-byte header, rows of dim floats) becomes NaN */
    FILE *w = fopen(path, "r+b");
    CHECK(w && fseek(w, 28 + (long)out[k] * c.dim * 4, SEEK_SET) == 0);
    for (int i = 0; w && i < c.dim; i++) {
        float nan = NAN;
        CHECK(fwrite(&nan, 4, 1, w) == 1);
    }
    if (w) fclose(w);
    CHECK_MSG(model_open(&m, path, err) == 0, "%s", err);
    CHECK(fwd_new(&f, m, NULL, 4, KERN_EXACT, err) == 0);
    /* pass k + 1 (the one fed out[k], at position 3 + k) fails; the passes before it agree */
    CHECK_MSG(greedy_tokens(f, V, 8, again, logits, err) == k + 1, "%s", err);
    CHECK(memcmp(again, out, sizeof(int) * (size_t)(k + 1)) == 0);
    char want[160];
    snprintf(want, sizeof want,
             "nan_row.bin: non-finite logits at position %d (the pass fed "
             "token %d): logit 0 is NaN",
             3 + k, out[k]);
    CHECK_MSG(strstr(err, want) && !strchr(err, '\n'), "'%s' lacks '%s'", err, want);
    /* allowed: the pass returns the NaN logits */
    fwd_allow_nonfinite(f, 1);
    CHECK_MSG(greedy_tokens(f, V, 8, again, logits, err) == -1, "%s", err);
    CHECK(isnan(logits[0]));
    fwd_free(f);
    model_close(m);
    free(logits);
}

/* One corrupt value reaches the logits check in every kernel mode, wherever it is: each weight
 * matrix of a layer and the classifier (a float weight NaN or infinite; a block type's scale
 * NaN or infinite, for the runtime: the loader refuses such files, but a model made in memory
 * is not loaded), a norm weight, and an embedding row so large that its sum of squares
 * overflows (RMSNorm scaled it by 1 / sqrt(inf) = 0 and the next layers saw zeros). Before,
 * the int8 mode turned every NaN into 0 at the next product's quantizer, and in both modes a
 * NaN in Q or K became a softmax weight of 1e-38: the logits were numbers, decoding went on. */
static int first_pass_fails(const model *m, kern_mode mode, char *err) {
    fwd_ctx *f;
    if (fwd_new(&f, m, NULL, 4, mode, err)) return -1;
    const int toks[3] = {1, 5, 9};
    float *logits = malloc(sizeof(float) * (size_t)m->cfg.vocab_size * 3);
    int rc = fwd_eval(f, 3, toks, NULL, NULL, NULL, 3, logits, err);
    free(logits);
    fwd_free(f);
    return rc != 0 && strstr(err, "non-finite logits at position") ? 1 : 0;
}

/* A KV cache of 8192 positions or more asks for 2 MB pages, one of fewer or DECBENCH_KV_HUGE=0
 * does not (forward.c, kv_huge_pages), and the logits are the same bits either way (after 200
 * positions, so the cache holds what the pass reads). Skipped where the kernel has no
 * transparent huge pages. */
static void test_kv_huge_pages(void) {
    if (access("/sys/kernel/mm/transparent_hugepage/enabled", R_OK) != 0) {
        printf("kv huge pages: the kernel has no transparent huge pages; skipped\n");
        return;
    }
    char err[ERR_LEN];
    model_config c;
    CHECK(synth_config("64,128,2,4,4,300,8192", &c, err) == 0);
    model *m;
    CHECK_MSG(synth_model(&m, &c, 5, err) == 0, "%s", err);
    if (!m) return;
    int tokens[200];
    for (int i = 0; i < 200; i++) tokens[i] = (i * 37 + 11) % 300;
    float *la = malloc(sizeof(float) * 300), *lb = malloc(sizeof(float) * 300);
    fwd_ctx *a = NULL, *b = NULL, *small = NULL;
    CHECK_MSG(fwd_new(&a, m, NULL, 4, KERN_EXACT, err) == 0, "%s", err);
    setenv("DECBENCH_KV_HUGE", "0", 1);
    CHECK_MSG(fwd_new(&b, m, NULL, 4, KERN_EXACT, err) == 0, "%s", err);
    unsetenv("DECBENCH_KV_HUGE");
    CHECK(model_set_context(m, 4096, err) == 0);
    CHECK_MSG(fwd_new(&small, m, NULL, 4, KERN_EXACT, err) == 0, "%s", err);
    if (a && b && small && la && lb) {
        CHECK_MSG(fwd_kv_huge(a), "a cache of 8196 positions did not ask for 2 MB pages");
        CHECK_MSG(!fwd_kv_huge(b), "DECBENCH_KV_HUGE=0 asked for 2 MB pages");
        CHECK_MSG(!fwd_kv_huge(small), "a cache of 4100 positions asked for 2 MB pages");
        CHECK_MSG(fwd_prefill(a, tokens, 200, la, err) == 0, "%s", err);
        CHECK_MSG(fwd_prefill(b, tokens, 200, lb, err) == 0, "%s", err);
        CHECK_MSG(memcmp(la, lb, sizeof(float) * 300) == 0,
                  "logits differ with and without 2 MB pages");
    }
    fwd_free(a), fwd_free(b), fwd_free(small);
    free(la), free(lb);
    model_close(m);
}

static long minor_faults(void) {
    struct rusage u;
    return getrusage(RUSAGE_SELF, &u) == 0 ? u.ru_minflt : -1;
}

/* Decoding maps the cache's pages ahead in batches (forward.c, kv_populate), not one fault at a
 * time as each head stream crosses into a fresh page: 240 tokens decoded one by one over 16
 * head streams of 256-byte slots cross a page boundary every 16 tokens, so 15 of their passes
 * faulted; ahead, only the passes that map the next 128 slots count faults (the task's count
 * includes pages mapped by MADV_POPULATE_WRITE). Not counted under the sanitizers, whose
 * shadow memory faults in as the cache is read; nor where the kernel refuses
 * MADV_POPULATE_WRITE (before Linux 5.14). */
static void test_kv_populated(void) {
    char err[ERR_LEN];
    model_config c;
    CHECK(synth_config("256,512,2,4,4,300,1024", &c, err) == 0);
    model *m;
    CHECK_MSG(synth_model(&m, &c, 9, err) == 0, "%s", err);
    if (!m) return;
    fwd_ctx *f = NULL;
    float *logits = malloc(sizeof(float) * 300);
    CHECK_MSG(fwd_new(&f, m, NULL, 4, KERN_EXACT, err) == 0, "%s", err);
    if (f && logits) {
        int tok = 1, faulted = 0;
        CHECK_MSG(fwd_prefill(f, &tok, 1, logits, err) == 0, "%s", err);
        for (int i = 0; i < 240; i++) {
            tok = fwd_argmax(logits, 300);
            long before = minor_faults();
            CHECK_MSG(fwd_prefill(f, &tok, 1, logits, err) == 0, "%s", err);
            faulted += minor_faults() != before;
        }
        if (!fwd_kv_maps_ahead(f))
            printf("kv populated: the kernel refuses MADV_POPULATE_WRITE; not checked\n");
        else if (test_sanitized())
            printf("kv populated: %d of 240 passes faulted (not checked under the sanitizers)\n",
                   faulted);
        else
            CHECK_MSG(faulted <= 4, "%d of 240 one-token passes faulted", faulted);
    }
    fwd_free(f);
    free(logits);
    model_close(m);
}

static void test_nonfinite_reaches_logits(void) {
    char err[ERR_LEN];
    model_config c;
    CHECK(synth_config("256,512,2,4,2,300,64", &c, err) == 0);
    c.shared_classifier = 0;
    model *base;
    CHECK_MSG(synth_model(&base, &c, 3, err) == 0, "%s", err);
    if (!base) return;
    const char *types[] = {"f32", "f16", "q8_0", "q4_0", "q4_k", "q6_k"};
    for (int ti = 0; ti < 6; ti++) {
        model *m = base;
        convert_opts o = {.name = "t"};
        CHECK(convert_scheme_parse(types[ti], &o) == 0);
        if (ti > 0) CHECK_MSG(model_requantize(&m, base, &o, NULL, err) == 0, "%s", err);
        const kern_mode modes[2] = {KERN_EXACT, KERN_EXACT_INT8};
        for (int mi = 0; mi < 2; mi++) {
            CHECK_MSG(first_pass_fails(m, modes[mi], err) == 0, "%s %s: a clean model fails: %s",
                      types[ti], kern_mode_name(modes[mi]), err);
            const char *names[8] = {"wq", "wk", "wv", "wo", "w1", "w2", "w3", "wcls"};
            const wmat *w[8];
            model_layer_mats(&m->layers[1], w);
            w[7] = &m->wcls;
            for (int wi = 0; wi < 8; wi++)
                for (int v = 0; v < 2; v++) {
                    const wtype_traits *tt = wtype_get(w[wi]->type);
                    size_t row = wtype_row_bytes(w[wi]->type, w[wi]->cols);
                    unsigned char *at = (unsigned char *)w[wi]->data + 3 * row;
                    unsigned char keep[4];
                    memcpy(keep, at, 4);
                    if (w[wi]->type == WTYPE_F32) {
                        float x = v ? INFINITY : NAN;
                        memcpy(at + 20, &x, 4);
                    } else { /* the f16 (scale) at row 3's first block */
                        uint16_t h = v ? 0x7c00 : 0x7e00;
                        at += tt->block == 1 ? 10 : tt->scale[0].at;
                        memcpy(keep, at, 4);
                        memcpy(at, &h, 2);
                    }
                    int rc = first_pass_fails(m, modes[mi], err);
                    CHECK_MSG(rc == 1, "%s %s: %s %s in %s: pass %s (%s)", types[ti],
                              kern_mode_name(modes[mi]), v ? "inf" : "NaN",
                              tt->block == 1 ? "weight" : "scale", names[wi],
                              rc == 0 ? "succeeds" : "fails otherwise", err);
                    if (w[wi]->type == WTYPE_F32) at += 20;
                    memcpy(at, keep, 4);
                }
            /* a norm weight */
            float *norm = (float *)m->layers[0].rms_ffn, keepn = norm[7];
            norm[7] = NAN;
            CHECK_MSG(first_pass_fails(m, modes[mi], err) == 1, "%s %s: NaN norm weight", types[ti],
                      kern_mode_name(modes[mi]));
            norm[7] = keepn;
            CHECK(first_pass_fails(m, modes[mi], err) == 0);
        }
        if (m != base) model_close(m);
    }
    /* an embedding row whose sum of squares overflows (f32 weights: each value 1e20) */
    float *emb = (float *)base->tok_embd.data + 5 * (size_t)c.dim, keep[256];
    memcpy(keep, emb, sizeof keep);
    for (int i = 0; i < c.dim; i++) emb[i] = 1e20f;
    CHECK_MSG(first_pass_fails(base, KERN_EXACT, err) == 1, "an overflowing RMSNorm: %s", err);
    memcpy(emb, keep, sizeof keep);
    model_close(base);
}

/* The f16 KV cache (model_set_kv): a pass's logits differ from the f32 cache's (the values are
 * rounded when stored), yet equal what a cache holding the same values rounded gives: f16 is
 * f32 attention over the halves. Compared on stories260K after a prompt of 40 tokens: the
 * logits of the 41st. */
static void test_kv_f16_rounds(model *m) {
    char err[ERR_LEN];
    const int V = m->cfg.vocab_size, P = 40;
    int tokens[41];
    for (int i = 0; i < 41; i++) tokens[i] = (i * 37 + 11) % V;
    float *l32 = malloc(sizeof(float) * V), *l16 = malloc(sizeof(float) * V);
    fwd_ctx *f32, *f16;
    model_set_kv(m, KV_F32);
    CHECK(fwd_new(&f32, m, NULL, 8, KERN_EXACT, err) == 0);
    model_set_kv(m, KV_F16);
    CHECK(fwd_new(&f16, m, NULL, 8, KERN_EXACT, err) == 0);
    model_set_kv(m, KV_F32);
    CHECK(fwd_kv_bytes(f16, 10) * 2 == fwd_kv_bytes(f32, 10));
    CHECK(fwd_kv_bytes(f32, 1) == 2 * (size_t)m->cfg.n_layers * m->cfg.kv_dim * sizeof(float));
    CHECK(fwd_prefill(f32, tokens, P + 1, l32, err) == 0);
    CHECK(fwd_prefill(f16, tokens, P + 1, l16, err) == 0);
    CHECK_MSG(memcmp(l32, l16, sizeof(float) * V) != 0, "an f16 cache gave the f32 cache's logits");
    int close = 1;
    for (int i = 0; i < V; i++) close &= fabsf(l32[i] - l16[i]) < 0.05f * (1 + fabsf(l32[i]));
    CHECK_MSG(close, "the f16 cache's logits are far from the f32 cache's");
    fwd_free(f32), fwd_free(f16);
    free(l32), free(l16);
}

/* fwd_repeat_prefix (decbench cost's long contexts): the prefix grows to n positions by repeating
 * its keys and values; a pass after it runs and gives finite logits, the same as after a second
 * context repeated the same way (the repeat is deterministic); it refuses an empty prefix and a
 * length past the context, and leaves a longer prefix alone. */
static void test_repeat_prefix(const model *m) {
    char err[ERR_LEN];
    const int V = m->cfg.vocab_size;
    int tokens[5] = {1, 20, 33, 7, 100}, next = 45;
    float *a = malloc(sizeof(float) * V), *b = malloc(sizeof(float) * V);
    fwd_ctx *f = NULL, *g = NULL;
    CHECK(fwd_new(&f, m, NULL, 4, KERN_EXACT, err) == 0 &&
          fwd_new(&g, m, NULL, 8, KERN_EXACT, err) == 0);
    CHECK(fwd_repeat_prefix(f, 10, err) == -1 && strstr(err, "no committed position"));
    CHECK(fwd_prefill(f, tokens, 5, a, err) == 0 && fwd_prefill(g, tokens, 5, b, err) == 0);
    CHECK(fwd_repeat_prefix(f, m->cfg.seq_len + 1, err) == -1 && strstr(err, "exceed the context"));
    CHECK(fwd_repeat_prefix(f, 3, err) == 0 && fwd_n_past(f) == 5);
    CHECK(fwd_repeat_prefix(f, 37, err) == 0 && fwd_n_past(f) == 37);
    CHECK(fwd_repeat_prefix(g, 20, err) == 0 && fwd_repeat_prefix(g, 37, err) == 0);
    CHECK(fwd_eval(f, 1, &next, NULL, NULL, NULL, 1, a, err) == 0);
    CHECK(fwd_eval(g, 1, &next, NULL, NULL, NULL, 1, b, err) == 0);
    /* 5 rows repeated to 37 in one step or in two: the same cache, the same logits */
    CHECK(memcmp(a, b, sizeof(float) * V) == 0);
    CHECK(fwd_commit(f, (const int[]){0}, 1, err) == 0 && fwd_n_past(f) == 38);
    fwd_free(f), fwd_free(g);
    free(a), free(b);
}

/* Layer skipping (fwd_set_skip, the self-speculative drafts of decoders/skip.c). A full pass
 * keeps its bits: the logits of a fixed chain hash to the value the code computed before masks
 * existed, in a context that never set one and in one that masked a pass and cleared the mask.
 * A masked pass differs from the full one and depends on which sublayer is skipped; an all-zero
 * mask is a full pass; with every sublayer skipped a row sees nothing but its own token (the
 * residual stream passes through unchanged: no context, no position); masked rows cannot be
 * committed (nor a prompt prefilled under a mask), and a full pass over the same rows then
 * commits a cache that gives the next pass a never-masked context's logits bit for bit. */
static void test_skip_layers(const model *m) {
    char err[ERR_LEN];
    const int V = m->cfg.vocab_size, nl = m->cfg.n_layers;
    int prompt[4] = {1, 20, 33, 7}, chain[3] = {100, 45, 61}, next = 45;
    float *a = malloc(sizeof(float) * 3 * V), *b = malloc(sizeof(float) * 3 * V),
          *c = malloc(sizeof(float) * 3 * V);
    unsigned char none[64] = {0}, one[64] = {0}, attn[64] = {0}, all[64];
    one[2] = FWD_SKIP_ATTN | FWD_SKIP_MLP, attn[2] = FWD_SKIP_ATTN;
    memset(all, FWD_SKIP_ATTN | FWD_SKIP_MLP, sizeof all);
    CHECK(nl <= 64);
    fwd_ctx *f = NULL, *g = NULL;
    CHECK(fwd_new(&f, m, NULL, 4, KERN_EXACT, err) == 0 &&
          fwd_new(&g, m, NULL, 4, KERN_EXACT, err) == 0);
    CHECK(fwd_prefill(f, prompt, 4, a, err) == 0 && fwd_prefill(g, prompt, 4, b, err) == 0);
    CHECK(fwd_eval(f, 3, chain, NULL, NULL, NULL, 3, a, err) == 0);
    /* computed before fwd_set_skip existed (stories260K, the exact kernels: every ISA's bits) */
    uint64_t h = hash_fnv1a(a, sizeof(float) * 3 * V);
    CHECK_MSG(h == 0x42ad58f7c29c48a6ull, "full pass logits hash %016llx", (unsigned long long)h);
    fwd_set_skip(g, one);
    CHECK(fwd_eval(g, 3, chain, NULL, NULL, NULL, 3, b, err) == 0);
    CHECK(memcmp(a, b, sizeof(float) * 3 * V) != 0);
    fwd_set_skip(g, attn);
    CHECK(fwd_eval(g, 3, chain, NULL, NULL, NULL, 3, c, err) == 0);
    CHECK(memcmp(a, c, sizeof(float) * 3 * V) != 0 && memcmp(b, c, sizeof(float) * 3 * V) != 0);
    /* masked rows are not committed, nor a prompt prefilled with a mask */
    CHECK(fwd_commit(g, (const int[]){0}, 1, err) == -1 && strstr(err, "skipped layers"));
    CHECK(fwd_prefill(g, prompt, 1, c, err) == -1 && strstr(err, "skipped"));
    fwd_set_skip(g, none);
    CHECK(fwd_eval(g, 3, chain, NULL, NULL, NULL, 3, b, err) == 0);
    CHECK(memcmp(a, b, sizeof(float) * 3 * V) == 0);
    /* the draft's rows again, then the verification over the same tokens: commit, and the next
     * pass sees the cache of a context that never masked anything */
    fwd_set_skip(g, one);
    CHECK(fwd_eval(g, 1, chain, NULL, NULL, NULL, 1, c, err) == 0);
    CHECK(fwd_eval_more(g, 2, chain + 1, NULL, NULL, 2, c, err) == 0);
    fwd_set_skip(g, NULL);
    CHECK(fwd_eval(g, 3, chain, NULL, NULL, NULL, 3, b, err) == 0);
    CHECK(memcmp(a, b, sizeof(float) * 3 * V) == 0);
    CHECK(fwd_commit(f, (const int[]){0, 1, 2}, 3, err) == 0);
    CHECK(fwd_commit(g, (const int[]){0, 1, 2}, 3, err) == 0);
    CHECK(fwd_eval(f, 1, &next, NULL, NULL, NULL, 1, a, err) == 0);
    CHECK(fwd_eval(g, 1, &next, NULL, NULL, NULL, 1, b, err) == 0);
    CHECK(memcmp(a, b, sizeof(float) * V) == 0);
    /* everything skipped: the logits of a token do not depend on the context or position */
    fwd_set_skip(f, all), fwd_set_skip(g, all);
    CHECK(fwd_truncate(g, 1, err) == 0);
    CHECK(fwd_eval(f, 1, &next, NULL, NULL, NULL, 1, a, err) == 0);
    CHECK(fwd_eval(g, 1, &next, NULL, NULL, NULL, 1, b, err) == 0);
    CHECK(memcmp(a, b, sizeof(float) * V) == 0);
    for (int l = 0; l < nl; l++) all[l] = FWD_SKIP_MLP; /* attention still sees the context */
    CHECK(fwd_eval(f, 1, &next, NULL, NULL, NULL, 1, a, err) == 0);
    CHECK(fwd_eval(g, 1, &next, NULL, NULL, NULL, 1, b, err) == 0);
    CHECK(memcmp(a, b, sizeof(float) * V) != 0);
    fwd_free(f), fwd_free(g);
    free(a), free(b), free(c);
}

/* Under the sanitizers each group of invariance runs (one model, kernel mode and KV type over
 * its thread counts) keeps one thread count, rotating from group to group (test_keep), so every
 * count still runs on several models of each kind; the trees are unchanged. */
static int inv_group;
static int threads_kept(int t, int n_t) {
    int keep = test_keep((long)inv_group * n_t + t - 1, n_t);
    if (t == n_t) inv_group++;
    return keep;
}

/* A synthetic model of shape spec (synth_shape_parse) in weight scheme (convert_scheme_parse),
 * written as GGUF to the test's file and opened; vocab > 0: that vocabulary and a separate
 * classifier. NULL (and a failed check) if any step fails. */
static model *synth_opened(const char *spec, const char *scheme, const char *file, int vocab,
                           uint64_t seed) {
    char err[ERR_LEN];
    synth_shape s;
    convert_opts o = {.name = "t"};
    const char *path = test_tmp(file);
    model *m = NULL;
    const int parsed =
        synth_shape_parse(spec, &s, err) == 0 && convert_scheme_parse(scheme, &o) == 0;
    CHECK_MSG(parsed, "%s %s: %s", spec, scheme, err);
    if (!parsed) return NULL;
    if (vocab > 0) s.cfg.shared_classifier = 0, s.cfg.vocab_size = vocab;
    CHECK_MSG(synth_write_gguf(path, &s, &o, NULL, seed, err) == 0 &&
                  model_open(&m, path, err) == 0,
              "%s %s: %s", spec, scheme, err);
    return m;
}

/* One-row passes whose products split their rows unevenly between the threads (model/balance.h:
 * the first piece a quarter more or less than an even share, or learned) give the bits of one
 * thread; and a bad DECBENCH_BALANCE is refused, naming it. */
static void test_balance_leads(void) {
    char err[ERR_LEN];
    /* products large enough to share the threads (PARALLEL_MIN_MACS), whose row pieces the
     * leads make uneven: llama in Q4_K_M (q4_k and q6_k), Qwen2 in Q6_K (whole heads a piece) */
    const char *specs[][2] = {{"256,512,2,4,2,1000,64", "Q4_K_M"},
                              {"qwen2:256,512,2,4,2,1000,64", "Q6_K"}};
    const char *leads[] = {"-0.25", "0.25", NULL};
    for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
        model *m = synth_opened(specs[i][0], specs[i][1], "balance.gguf", 0, 9);
        if (!m) continue;
        const int V = m->cfg.vocab_size, units = m->cfg.dim / 64;
        int u0, u1;
        balance_split(units, 2, 0.25f, 0, &u0, &u1);
        CHECK_MSG(2 * u1 > units + 1, "%s: the test's leads split %d units evenly", specs[i][0],
                  units);
        fwd_ctx *ref;
        CHECK(fwd_new(&ref, m, NULL, 8, KERN_EXACT_INT8B, err) == 0);
        float *want = malloc(sizeof(float) * V), *got = malloc(sizeof(float) * V);
        for (int t = 2; t <= 3; t++)
            for (size_t k = 0; k < sizeof leads / sizeof leads[0]; k++) {
                tpool *pool;
                fwd_ctx *f;
                CHECK(tpool_new(&pool, t, err) == 0);
                if (leads[k]) setenv("DECBENCH_BALANCE", leads[k], 1);
                CHECK_MSG(fwd_new(&f, m, pool, 8, KERN_EXACT_INT8B, err) == 0, "%s", err);
                unsetenv("DECBENCH_BALANCE");
                int prompt[5] = {1, 40, 90, 7, 33}, mismatch = 0;
                CHECK(fwd_truncate(ref, 0, err) == 0 &&
                      fwd_prefill(ref, prompt, 5, want, err) == 0);
                CHECK(fwd_prefill(f, prompt, 5, got, err) == 0);
                for (int step = 0; step < 12; step++) { /* one row a pass, committed */
                    const int tok = (step * 37 + 11) % V, row0 = 0;
                    CHECK(fwd_eval(ref, 1, &tok, NULL, NULL, NULL, 1, want, err) == 0 &&
                          fwd_commit(ref, &row0, 1, err) == 0);
                    CHECK(fwd_eval(f, 1, &tok, NULL, NULL, NULL, 1, got, err) == 0 &&
                          fwd_commit(f, &row0, 1, err) == 0);
                    mismatch += memcmp(want, got, sizeof(float) * V) != 0;
                }
                CHECK_MSG(mismatch == 0, "%s %s, %d threads, DECBENCH_BALANCE=%s: %d of 12 differ",
                          specs[i][0], specs[i][1], t, leads[k] ? leads[k] : "(learned)", mismatch);
                printf("%s %s, %d threads, DECBENCH_BALANCE=%s: 12 one-row passes bit-identical "
                       "to one thread's\n",
                       specs[i][0], specs[i][1], t, leads[k] ? leads[k] : "(learned)");
                fwd_free(f);
                tpool_free(pool);
            }
        fwd_free(ref);
        free(want), free(got);
        setenv("DECBENCH_BALANCE", "0.3", 1);
        fwd_ctx *bad = NULL;
        CHECK(fwd_new(&bad, m, NULL, 8, KERN_EXACT_INT8B, err) != 0 && !bad &&
              strstr(err, "DECBENCH_BALANCE=0.3"));
        unsetenv("DECBENCH_BALANCE");
        model_close(m);
    }
}

/* fwd_argmax: the first of equal largest logits; a NaN never wins past the first logit, and a
 * NaN first logit wins (no logit compares greater than it), as the loop it replaced chose. */
static void test_argmax(void) {
    const float nan = NAN, inf = INFINITY;
    const float a[] = {1, 3, 2, 3}, b[] = {-inf, -inf}, c[] = {0, nan, 5, nan, 5, -1};
    const float d[] = {nan, 7, 9}, e[] = {-2, inf, 1, inf};
    CHECK(fwd_argmax(a, 4) == 1 && fwd_argmax(b, 2) == 0 && fwd_argmax(c, 6) == 2);
    CHECK(fwd_argmax(d, 3) == 0 && fwd_argmax(e, 4) == 1 && fwd_argmax(a, 1) == 0);
}

int main(void) {
    char err[ERR_LEN];
    model *real[2];
    const char *names[2] = {"models/stories260K.bin", "models/llama2xs.bin"};
    for (int i = 0; i < 2; i++) {
        CHECK_MSG(model_open(&real[i], test_shared(names[i]), err) == 0, "%s", err);
        for (int t = 1; t <= 3; t++)
            if (threads_kept(t, 3)) test_invariance(real[i], names[i], t, 12, 100 + t, KERN_EXACT);
    }
    /* the f16 KV cache: batch-, tree- and thread-invariant as the f32 one */
    for (int i = 0; i < 2; i++) {
        model_set_kv(real[i], KV_F16);
        for (int t = 1; t <= 3; t++)
            if (threads_kept(t, 3))
                test_invariance(
                    real[i], i ? "models/llama2xs.bin, f16 KV" : "models/stories260K.bin, f16 KV",
                    t, 8, 200 + t, KERN_EXACT);
        model_set_kv(real[i], KV_F32);
    }
    test_kv_f16_rounds(real[0]);
    test_repeat_prefix(real[0]);
    test_skip_layers(real[0]);
    test_bad_batches(real[0]);
    test_nonfinite();
    test_nonfinite_reaches_logits();
    test_kv_huge_pages();
    test_kv_populated();
    test_argmax();
    test_balance_leads();
    model_config c;
    /* GQA (6 heads on 2 kv heads), widths that are not multiples of 16, vocab 300 */
    CHECK(synth_config("96,200,3,6,2,300,160", &c, err) == 0);
    model *syn;
    CHECK(synth_model(&syn, &c, 42, err) == 0);
    for (int t = 1; t <= 3; t++)
        if (threads_kept(t, 3))
            test_invariance(syn, "synthetic 96,200,3,6,2,300", t, 10, 7 + t, KERN_EXACT);
    model_set_kv(syn, KV_F16); /* GQA, a head size of 16 (160 / 6 rounds down: odd widths) */
    for (int t = 1; t <= 3; t++)
        if (threads_kept(t, 3))
            test_invariance(syn, "synthetic 96,200,3,6,2,300, f16 KV", t, 6, 17 + t, KERN_EXACT);
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
        model *a = synth_opened(arch_shapes[i][0], arch_shapes[i][1], "arch.gguf", 300, 5);
        char what[64];
        snprintf(what, sizeof what, "%s %s", arch_shapes[i][0], arch_shapes[i][1]);
        for (int t = 1; a && t <= 3; t++)
            if (threads_kept(t, 3)) test_invariance(a, what, t, 6, 70 + t, KERN_EXACT);
        /* quantized: the int8b mode too, whose pieces are whole heads when the layer's steps
         * need them (Qwen's biases, norms and NEOX RoPE, run by the products' threads) */
        for (int t = 1; a && strcmp(arch_shapes[i][1], "f32") != 0 && t <= 3; t++)
            if (threads_kept(t, 3)) test_invariance(a, what, t, 4, 150 + t, KERN_EXACT_INT8B);
        if (a && i == 0) { /* Qwen2's biases and NEOX RoPE, with an f16 KV cache */
            model_set_kv(a, KV_F16);
            for (int t = 1; t <= 3; t++)
                if (threads_kept(t, 3))
                    test_invariance(a, "tiny-qwen2 f32, f16 KV", t, 4, 130 + t, KERN_EXACT);
        }
        model_close(a);
    }
    for (size_t i = 0; i < sizeof quant / sizeof quant[0]; i++) {
        model *q;
        CHECK_MSG(model_open(&q, test_shared(quant[i]), err) == 0, "%s", err);
        if (!q) continue;
        for (int t = 1; t <= 3; t++)
            if (threads_kept(t, 3))
                test_invariance(q, quant[i], t, i < 3 ? 8 : 4, 50 + t, KERN_EXACT);
        model_close(q);
    }
    /* the int8 mode: every type it has (q8_0, q4_0, q5_0, q4_1, q5_1, q3_k, q4_k, q5_k, q6_k), 1
     * and 2 threads; and on a model without those types it computes the exact mode's bits */
    const char *int8[] = {"models/quantized/xs_Q4_K_M.gguf", "models/quantized/xs_Q8_0.gguf",
                          "models/quantized/kq_Q4_0.gguf",   "models/quantized/kq_Q6_K.gguf",
                          "models/quantized/kq_Q5_0.gguf",   "models/quantized/kq_Q5_K_M.gguf",
                          "models/quantized/kq_Q4_1.gguf",   "models/quantized/xs_Q5_1.gguf",
                          "models/quantized/kq_Q3_K_M.gguf"};
    for (size_t i = 0; i < sizeof int8 / sizeof int8[0]; i++) {
        model *q;
        CHECK_MSG(model_open(&q, test_shared(int8[i]), err) == 0, "%s", err);
        if (!q) continue;
        for (int t = 1; t <= 2; t++)
            if (threads_kept(t, 2)) test_invariance(q, int8[i], t, 6, 70 + t, KERN_EXACT_INT8);
        /* the int8b mode on the same files: the same types, 1, 2 and 3 threads (row pieces of
         * 32 that end inside a matrix's groups of 16, and 3 threads' pieces) */
        for (int t = 1; t <= 3; t++)
            if (threads_kept(t, 3)) test_invariance(q, int8[i], t, 4, 90 + t, KERN_EXACT_INT8B);
        if (i == 0) { /* and with an f16 KV cache */
            model_set_kv(q, KV_F16);
            for (int t = 1; t <= 3; t++)
                if (threads_kept(t, 3))
                    test_invariance(q, "models/quantized/xs_Q4_K_M.gguf, f16 KV", t, 4, 110 + t,
                                    KERN_EXACT_INT8B);
            model_set_kv(q, KV_F32);
        }
        model_close(q);
    }
    test_int8_differs_only_when_quantized();
    test_packed_switch(KERN_EXACT_INT8);
    test_packed_switch(KERN_EXACT_INT8B);
    return test_finish("test_forward");
}
