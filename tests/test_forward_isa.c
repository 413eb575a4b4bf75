/* test_forward_isa.c: a real model file gives the same logits on every instruction set.
 * test_kernels checks each kernel against its scalar reference on random blocks; this checks
 * the whole pass a user runs: llama.cpp-quantized files of every block type, in each kernel
 * mode (exact, exact-int8, exact-int8b), opened and run once per instruction set this CPU has
 * (AVX-512, AVX2 with and without AVX-VNNI, scalar; kernels.h kern_isa_use), with 2 threads.
 * The passes are the sizes whose tiles differ (64 rows of prompt, a tree of 24, a chain of 8,
 * one row) and every row's logits must equal the first instruction set's bit for bit (memcmp):
 * a CPU without AVX-512 computes what one with it does. An instruction set the CPU lacks is
 * skipped with a line saying so (a CI host without AVX-VNNI still compares the rest). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/forward.h"
#include "model/kernels/kernels.h"
#include "model/loader/model_file.h"
#include "model/tpool.h"
#include "tests/testutil.h"
#include "util/err.h"
#include "util/rng.h"

enum { PROMPT = 64, TREE = 24, CHAIN = 8 };
#define ROWS (PROMPT + TREE + CHAIN + 1)

typedef struct {
    const char *name;
    kern_isa isa;
    int avxvnni; /* the AVX2 tiles' AVX-VNNI build (kern_avxvnni_use) */
} isa_setting;

static const isa_setting settings[] = {{"avx512", KERN_ISA_AVX512, 1},
                                       {"avx2, avx-vnni", KERN_ISA_AVX2, 1},
                                       {"avx2", KERN_ISA_AVX2, 0},
                                       {"scalar", KERN_ISA_SCALAR, 0}};
enum { N_SETTINGS = sizeof settings / sizeof settings[0] };

static int setting_usable(const isa_setting *s) {
    if (!kern_isa_supported(s->isa)) return 0;
    return s->isa != KERN_ISA_AVX2 || !s->avxvnni || kern_avxvnni_supported();
}

/* The four passes on a fresh context of m: a 64-token prompt (all rows' logits), a random tree
 * of 24 rows after it, a chain of 8 after the tree's first path is committed, then one row.
 * Writes ROWS rows of V logits; 0 on success. */
static int run_passes(const model *m, kern_mode mode, tpool *pool, float *logits, char *err) {
    const int V = m->cfg.vocab_size;
    rng_state r;
    rng_seed(&r, 7);
    int tok[PROMPT], parent[TREE];
    fwd_ctx *f;
    if (fwd_new(&f, m, pool, PROMPT, mode, err) != 0) return -1;
    for (int i = 0; i < PROMPT; i++) tok[i] = (int)rng_below(&r, (uint32_t)V);
    int rc = fwd_eval(f, PROMPT, tok, NULL, NULL, NULL, PROMPT, logits, err);
    int all[PROMPT];
    for (int i = 0; i < PROMPT; i++) all[i] = i;
    if (rc == 0) rc = fwd_commit(f, all, PROMPT, err);
    logits += (size_t)PROMPT * V;
    for (int i = 0; i < TREE; i++) {
        tok[i] = (int)rng_below(&r, (uint32_t)V);
        parent[i] = i ? (int)rng_below(&r, (uint32_t)i) : -1;
    }
    if (rc == 0) rc = fwd_eval(f, TREE, tok, parent, NULL, NULL, TREE, logits, err);
    int path[TREE], n = 0; /* root to the last row */
    for (int v = TREE - 1; v >= 0; v = parent[v]) path[n++] = v;
    for (int i = 0; i < n / 2; i++) {
        int t = path[i];
        path[i] = path[n - 1 - i], path[n - 1 - i] = t;
    }
    if (rc == 0) rc = fwd_commit(f, path, n, err);
    logits += (size_t)TREE * V;
    for (int i = 0; i < CHAIN; i++) tok[i] = (int)rng_below(&r, (uint32_t)V);
    if (rc == 0) rc = fwd_eval(f, CHAIN, tok, NULL, NULL, NULL, CHAIN, logits, err);
    if (rc == 0) rc = fwd_commit(f, all, CHAIN, err);
    logits += (size_t)CHAIN * V;
    if (rc == 0) rc = fwd_eval(f, 1, tok, NULL, NULL, NULL, 1, logits, err);
    fwd_free(f);
    return rc;
}

static void test_file_modes(const char *file, tpool *pool) {
    char err[ERR_LEN];
    const kern_mode modes[] = {KERN_EXACT, KERN_EXACT_INT8, KERN_EXACT_INT8B};
    for (size_t k = 0; k < sizeof modes / sizeof modes[0]; k++) {
        float *first = NULL;
        const char *first_name = NULL;
        size_t n = 0;
        for (int s = 0; s < N_SETTINGS; s++) {
            if (!setting_usable(&settings[s])) continue;
            CHECK(kern_isa_use(settings[s].isa) == 0);
            kern_avxvnni_use(settings[s].avxvnni);
            model *m;
            CHECK_MSG(model_open(&m, test_shared(file), err) == 0, "%s: %s", file, err);
            if (!m) return;
            n = (size_t)ROWS * m->cfg.vocab_size;
            float *lg = malloc(sizeof(float) * n);
            CHECK_MSG(run_passes(m, modes[k], pool, lg, err) == 0, "%s %s %s: %s", file,
                      kern_mode_name(modes[k]), settings[s].name, err);
            if (!first) {
                first = lg, first_name = settings[s].name;
            } else {
                size_t i = 0;
                while (i < n && memcmp(&first[i], &lg[i], sizeof(float)) == 0) i++;
                CHECK_MSG(i == n, "%s %s: %s and %s differ first at row %zu, logit %zu", file,
                          kern_mode_name(modes[k]), first_name, settings[s].name,
                          i / (size_t)m->cfg.vocab_size, i % (size_t)m->cfg.vocab_size);
                free(lg);
            }
            model_close(m);
        }
        free(first);
    }
}

int main(void) {
    char err[ERR_LEN];
    for (int s = 0; s < N_SETTINGS; s++)
        if (!setting_usable(&settings[s]))
            printf("test_forward_isa: this CPU has no %s: not compared\n", settings[s].name);
    tpool *pool;
    CHECK_MSG(tpool_new(&pool, 2, err) == 0, "%s", err);
    /* every block type of llama.cpp's quantizers the int8 modes have (kq_Q4_K_M holds q4_k and
     * q6_k; Q3_K_M q3_k, q4_k and q5_k; Q5_K_M q5_k and q6_k), and Q2_K, which they do not */
    const char *files[] = {"models/quantized/kq_Q8_0.gguf",   "models/quantized/kq_Q4_0.gguf",
                           "models/quantized/kq_Q4_K_M.gguf", "models/quantized/kq_Q6_K.gguf",
                           "models/quantized/kq_Q5_K_M.gguf", "models/quantized/kq_Q3_K_M.gguf",
                           "models/quantized/kq_Q4_1.gguf",   "models/quantized/kq_Q5_0.gguf",
                           "models/quantized/kq_Q5_1.gguf",   "models/quantized/kq_Q2_K.gguf"};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) test_file_modes(files[i], pool);
    tpool_free(pool);
    return test_finish("test_forward_isa");
}
