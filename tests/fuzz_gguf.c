/* fuzz_gguf.c: libFuzzer target for the GGUF reader and its two consumers, the vocabulary
 * loader (tok_load) and the Llama model loader (model_open_gguf), whose matrices of every
 * weight type are then run through the kernels.
 *
 * Each input is written to a memfd and opened by path (/proc/self/fd/N), exactly as a file on
 * disk would be; when it opens, every key, array element and tensor is read through the
 * public getters, tok_load then encodes and decodes through whatever vocabulary it holds, and
 * model_open_gguf binds whatever model it describes, of any architecture (and the kernels
 * multiply and dequantize a few rows of each of its first layer's matrices, in whatever block
 * type they are; every bound vector is read to its end: norms, Q/K/V biases, per-head norms,
 * RoPE factors; then a forward pass of two tokens runs on a context of at most 64) (tok_load also
 * parses non-GGUF inputs as llama2.c tokenizer files, so that loader gets fuzzed too). A crash,
 * sanitizer report or leak is a bug; an error return is the expected outcome.
 *
 * Build and run (clang; needs the compiler-rt fuzzer runtime, Debian: libclang-rt-14-dev):
 *   CC=clang cmake -S . -B build-fuzz -DDECBENCH_FUZZ=ON -DDECBENCH_NATIVE=OFF
 *   cmake --build build-fuzz --target fuzz_gguf -j
 *   ctest --test-dir build -R test_gguf   # a normal build; writes build/tests/tmp_test_gguf/seeds
 *   mkdir -p /tmp/gguf-corpus && cp build/tests/tmp_test_gguf/seeds/seed* /tmp/gguf-corpus/
 *   ./build-fuzz/tests/fuzz_gguf /tmp/gguf-corpus -max_len=32768 -max_total_time=600
 * Crashing inputs are written to ./crash-*; replay one with ./build-fuzz/tests/fuzz_gguf FILE.
 *
 * Without libFuzzer the same entry, fuzz_gguf_one(), is driven by test_gguf.c over a fixed,
 * seeded corpus of mutations, so the normal test suite exercises it on every run. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/forward.h"
#include "model/formats/gguf.h"
#include "model/kernels/kernels.h"
#include "model/loader/model_file.h"
#include "model/model.h"
#include "model/tokenizer/tokenizer.h"
#include "tests/fuzz_files.h"
#include "util/err.h"

/* Reads everything a caller could read from an opened file. Returns a checksum so that the
 * reads are not optimized away. */
static unsigned fuzz_walk(const gguf *g) {
    unsigned sum = 0;
    char err[ERR_LEN];
    for (int i = 0; i < gguf_kv_count(g); i++) {
        const char *key = gguf_kv_key(g, i);
        sum += (unsigned)gguf_find_key(g, key) == (unsigned)i;
        uint32_t u32;
        int32_t i32;
        uint64_t u64;
        float f;
        int b;
        const char *s;
        sum += gguf_get_u32(g, key, &u32, err) == 0;
        sum += gguf_get_i32(g, key, &i32, err) == 0;
        sum += gguf_get_u64(g, key, &u64, err) == 0;
        sum += gguf_get_f32(g, key, &f, err) == 0;
        sum += gguf_get_bool(g, key, &b, err) == 0;
        if (gguf_get_str(g, key, &s, err) == 0) sum += (unsigned)strlen(s);
        gguf_vtype et;
        uint64_t n;
        if (gguf_kv_array(g, i, &et, &n) != 0) continue;
        if (et == GGUF_STRING) {
            for (uint64_t k = 0; k < n; k++) {
                gguf_str str;
                if (gguf_get_arr_str(g, key, k, &str, err) == 0 && str.len)
                    sum += (unsigned char)str.ptr[0] + (unsigned char)str.ptr[str.len - 1];
            }
            continue;
        }
        /* n elements fit in the file, so this allocation is bounded by its size. */
        void *buf = malloc(n * 4 + 4);
        if (!buf) continue;
        if (gguf_get_arr_f32(g, key, buf, n, err) == 0 && n) sum += ((unsigned char *)buf)[0];
        if (gguf_get_arr_i32(g, key, buf, n, err) == 0 && n) sum += ((unsigned char *)buf)[0];
        free(buf);
    }
    for (int i = 0; i < gguf_tensor_count(g); i++) {
        const gguf_tensor *t = gguf_tensor_at(g, i);
        sum += gguf_find_tensor(g, t->name) == t;
        sum += gguf_type_name(t->type) != NULL;
        if (t->nbytes) {
            const unsigned char *d = t->data;
            sum += d[0] + d[t->nbytes - 1];
        }
    }
    return sum;
}

static unsigned fuzz_tokenizer(const char *path) {
    char err[ERR_LEN];
    tok *t;
    if (tok_load(&t, path, err) != 0) return 0;
    static const char *texts[] = {"", " ", "Hello world",
                                  "<s>\xe2\x96\x81\xff\xc3 \xf0\x9f\x99\x82"};
    int ids[64], n;
    size_t len;
    unsigned sum = 0;
    for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
        if (tok_encode(t, texts[i], 1, ids, &n, err) != 0) continue;
        for (int k = 0; k < n; k++) {
            if (!tok_text(t, k ? ids[k - 1] : -1, ids[k], &len)) abort();
            sum += (unsigned)len;
        }
    }
    for (int id = 0; id < tok_vocab_size(t) && id < 4096; id++) {
        if (!tok_text(t, 1, id, &len)) abort();
        sum += (unsigned)len;
    }
    tok_free(t);
    return sum;
}

/* Runs the kernels over the first rows of w (T = 1 and 5) and dequantizes its last row: a
 * block type's tiles and to_float read exactly the block bytes the loader validated. */
static unsigned fuzz_matrix(const wmat *w) {
    int rows = w->rows < 24 ? w->rows : 24;
    float *x = calloc((size_t)w->cols * 5, sizeof(float)), *y = calloc(5 * 24, sizeof(float));
    float *row = malloc(sizeof(float) * (size_t)w->cols);
    unsigned sum = 0;
    if (x && y && row) {
        for (int i = 0; i < w->cols * 5; i++) x[i] = (float)(i % 7) * 0.25f - 0.5f;
        kern_matmul(w, 0, rows, x, w->cols, 1, y, 24);
        kern_matmul(w, 0, rows, x, w->cols, 5, y, 24);
        kern_row_to_f32(w, w->rows - 1, row);
        sum += (unsigned)(y[0] == y[0]) + (unsigned)(row[w->cols - 1] == row[0]);
    }
    free(x), free(y), free(row);
    return sum;
}

/* The Llama loader on the same file: shapes were checked against the config, so the first
 * and last byte of every matrix must be readable, and the kernels must read them safely. */
static unsigned fuzz_model(const char *path) {
    char err[ERR_LEN];
    model *m;
    if (model_open_gguf(&m, path, err) != 0) return 0;
    unsigned sum = 0;
    const model_config *c = &m->cfg;
    const wmat *mats[] = {&m->tok_embd, &m->wcls};
    for (int i = 0; i < 2; i++) {
        size_t n = wtype_row_bytes(mats[i]->type, mats[i]->cols) * (size_t)mats[i]->rows;
        sum += ((const unsigned char *)mats[i]->data)[n - 1];
        sum += fuzz_matrix(mats[i]);
    }
    for (int l = 0; l < c->n_layers; l++) {
        const model_layer *y = &m->layers[l];
        const wmat *w[] = {&y->wq, &y->wk, &y->wv, &y->wo, &y->w1, &y->w2, &y->w3};
        for (int i = 0; i < 7; i++) {
            size_t n = wtype_row_bytes(w[i]->type, w[i]->cols) * (size_t)w[i]->rows;
            sum += ((const unsigned char *)w[i]->data)[n - 1];
            if (l == 0) sum += fuzz_matrix(w[i]);
        }
        sum += (unsigned)(y->rms_att[c->dim - 1] + y->rms_ffn[c->dim - 1] != 0.0f);
        int q = c->n_heads * c->head_size;
        if (y->bq)
            sum += (unsigned)(y->bq[q - 1] + y->bk[c->kv_dim - 1] + y->bv[c->kv_dim - 1] != 0);
        if (y->q_norm)
            sum += (unsigned)(y->q_norm[c->head_size - 1] + y->k_norm[c->head_size - 1] != 0);
    }
    sum += (unsigned)(m->rms_final[c->dim - 1] != 0.0f);
    if (m->rope_freqs) sum += (unsigned)(m->rope_freqs[c->rope_dim / 2 - 1] != 0.0f);
    /* a pass over two tokens through every per-architecture step (the weights may be NaN:
     * nothing is checked but that it runs) */
    fwd_ctx *f = NULL;
    float *logits = malloc(sizeof(float) * 2 * (size_t)c->vocab_size);
    int toks[2] = {0, c->vocab_size - 1};
    if (logits && model_set_context(m, c->seq_len < 64 ? c->seq_len : 64, err) == 0 &&
        fwd_new(&f, m, NULL, 2, KERN_EXACT, err) == 0 &&
        fwd_eval(f, c->seq_len >= 2 ? 2 : 1, toks, NULL, NULL, NULL, c->seq_len >= 2 ? 2 : 1,
                 logits, err) == 0)
        sum += (unsigned)(logits[0] == logits[0]);
    fwd_free(f);
    free(logits);
    model_close(m);
    return sum;
}

volatile unsigned fuzz_gguf_sink; /* keeps the reads above from being optimized away */

/* The fuzz entry: never fails, only crashes if the library has a bug. */
int fuzz_gguf_one(const uint8_t *data, size_t size) {
    char path[64];
    int fd = fuzz_memfd("fuzz_gguf", data, size, path, sizeof path);
    if (fd < 0) return 0;
    char err[ERR_LEN];
    gguf *g;
    if (gguf_open(&g, path, err) == 0) {
        fuzz_gguf_sink += fuzz_walk(g);
        gguf_close(g);
    }
    fuzz_gguf_sink += fuzz_tokenizer(path) + fuzz_model(path);
    close(fd);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return fuzz_gguf_one(data, size);
}
