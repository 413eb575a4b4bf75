/* fuzz_llama2c.c: libFuzzer target for the llama2.c checkpoint loader (legacy 7-field header
 * and version-1 "ak42" header): the header fields, the size they imply and the binding of every
 * array into the mapped file.
 *
 * Each input is written to a memfd and opened by path (/proc/self/fd/N), exactly as a file on
 * disk would be, through model_open (format dispatch) and model_open_llama2c. When it loads,
 * the first and last value of every matrix and vector are read (the binding must stay inside
 * the file), and a model small enough is run: one forward pass of two tokens, so every shape
 * the loader accepts is one the forward pass can use. A custom mutator fits the file size to a
 * mutated header half of the time (fuzz_llama2c_fit), so new shapes get past the size check.
 * A crash, sanitizer report or leak is a bug; an error return is the expected outcome.
 *
 * Build and run (clang; needs the compiler-rt fuzzer runtime, Debian: libclang-rt-14-dev):
 *   CC=clang cmake -S . -B build-fuzz -DDECBENCH_FUZZ=ON -DDECBENCH_NATIVE=OFF
 *   cmake --build build-fuzz --target fuzz_llama2c -j2
 *   ctest --test-dir build -R test_model   # a normal build; writes tmp_test_model/seeds_llama2c
 *   mkdir -p /tmp/llama2c-corpus
 *   cp build/tests/tmp_test_model/seeds_llama2c/seed* /tmp/llama2c-corpus/
 *   ./build-fuzz/tests/fuzz_llama2c /tmp/llama2c-corpus -max_len=65536 -max_total_time=600
 * Crashing inputs are written to ./crash-*; replay one with ./build-fuzz/tests/fuzz_llama2c FILE.
 *
 * Without libFuzzer the same entry, fuzz_llama2c_one(), is driven by test_model.c over its seeds
 * and a fixed, seeded corpus of mutations, so the normal test suite exercises it on every run. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/loader/model_file.h"
#include "model/forward.h"
#include "model/formats/llama2c.h"
#include "model/model.h"
#include "tests/fuzz_files.h"
#include "util/err.h"

/* Reads the first and last byte of every array the loader bound. */
static unsigned fuzz_llama2c_walk(const model *m) {
    const model_config *c = &m->cfg;
    unsigned sum = 0;
    const wmat *big[] = {&m->tok_embd, &m->wcls};
    for (int i = 0; i < 2; i++) {
        const unsigned char *p = big[i]->data;
        size_t n = wtype_row_bytes(big[i]->type, big[i]->cols) * (size_t)big[i]->rows;
        sum += p[0] + p[n - 1];
    }
    for (int l = 0; l < c->n_layers; l++) {
        const model_layer *y = &m->layers[l];
        const wmat *w[] = {&y->wq, &y->wk, &y->wv, &y->wo, &y->w1, &y->w2, &y->w3};
        for (int i = 0; i < 7; i++) {
            const unsigned char *p = w[i]->data;
            size_t n = wtype_row_bytes(w[i]->type, w[i]->cols) * (size_t)w[i]->rows;
            sum += p[0] + p[n - 1];
        }
        sum += (unsigned)(y->rms_att[0] + y->rms_att[c->dim - 1] + y->rms_ffn[0] +
                              y->rms_ffn[c->dim - 1] !=
                          0.0f);
    }
    sum += (unsigned)(m->rms_final[0] + m->rms_final[c->dim - 1] != 0.0f);
    return sum;
}

/* One pass of two tokens through a model whose KV cache and logits stay small (the file size
 * bounds the weights but not seq_len x kv_dim x n_layers of cache). */
static unsigned fuzz_llama2c_forward(const model *m) {
    const model_config *c = &m->cfg;
    uint64_t kv_bytes = 8ull * (uint64_t)c->n_layers * ((uint64_t)c->seq_len + 2) * c->kv_dim;
    if (kv_bytes > (64u << 20) || c->vocab_size > 65536 || c->hidden_dim > 65536) return 0;
    char err[ERR_LEN];
    fwd_ctx *f;
    if (fwd_new(&f, m, NULL, 2, KERN_EXACT, err) != 0) return 0;
    float *logits = malloc(2 * sizeof(float) * (size_t)c->vocab_size);
    unsigned sum = 1; /* non-zero: a pass was attempted */
    int tokens[2] = {1 % c->vocab_size, c->vocab_size - 1}, path[2] = {0, 1};
    int n = c->seq_len >= 2 ? 2 : 1;
    if (logits && fwd_eval(f, n, tokens, NULL, NULL, NULL, n, logits, err) == 0) {
        sum += (unsigned)fwd_argmax(logits + (size_t)(n - 1) * c->vocab_size, c->vocab_size);
        sum += (unsigned)(fwd_commit(f, path, n, err) == 0);
    }
    free(logits);
    fwd_free(f);
    return sum;
}

volatile unsigned fuzz_llama2c_sink;       /* keeps the reads above from being optimized away */
int fuzz_llama2c_loaded, fuzz_llama2c_ran; /* inputs that loaded, and that ran a forward pass */

/* The fuzz entry: never fails, only crashes if the library has a bug. */
int fuzz_llama2c_one(const uint8_t *data, size_t size) {
    char path[64];
    int fd = fuzz_memfd("fuzz_llama2c", data, size, path, sizeof path);
    if (fd < 0) return 0;
    char err[ERR_LEN];
    model *m;
    if (model_open_llama2c(&m, path, err) == 0) {
        fuzz_llama2c_loaded++;
        unsigned ran = fuzz_llama2c_forward(m);
        fuzz_llama2c_ran += ran != 0;
        fuzz_llama2c_sink += fuzz_llama2c_walk(m) + ran;
        model_close(m);
    }
    /* the format dispatch in front of it (GGUF inputs go to fuzz_gguf's reader) */
    if (size >= 4 && memcmp(data, "GGUF", 4) != 0 && model_open(&m, path, err) == 0)
        model_close(m);
    close(fd);
    return 0;
}

/* Resizes data (capacity max) to the size its header implies when the header is valid, the
 * new bytes zero: a random mutation of a header field almost never comes with the file size
 * that matches it, and without one the loader stops at its size check. Returns the new size
 * (size unchanged when the header is invalid or implies more than max). */
size_t fuzz_llama2c_fit(uint8_t *data, size_t size, size_t max) {
    int v1 = size >= 37 && memcmp(data, "24ka", 4) == 0; /* 0x616b3432 little-endian */
    size_t at = v1 ? 8 : 0;
    if (size < at + 28) return size;
    int32_t h[7];
    memcpy(h, data + at, sizeof h);
    if (h[5] == INT32_MIN || (v1 && h[5] <= 0)) return size;
    model_config c = {.dim = h[0],
                      .hidden_dim = h[1],
                      .n_layers = h[2],
                      .n_heads = h[3],
                      .n_kv_heads = h[4],
                      .vocab_size = h[5] < 0 ? -h[5] : h[5],
                      .seq_len = h[6]};
    model_config_derive(&c);
    char err[ERR_LEN];
    if (model_config_check(&c, "fit", err)) return size;
    /* legacy: 28-byte header, the arrays, RoPE tables; v1: 256-byte header, no RoPE tables */
    int shared = v1 ? data[36] == 1 : h[5] > 0;
    uint64_t want = llama2c_legacy_size(&c, shared);
    if (v1) want = want - 28 - 4 * (uint64_t)c.seq_len * c.head_size + 256;
    if (want > max) return size;
    if (want > size) memset(data + size, 0, want - size);
    return (size_t)want;
}

/* libFuzzer's own mutation, then (every other time) the size fitted to the header. */
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max) __attribute__((weak));
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max, unsigned seed);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max, unsigned seed) {
    size = LLVMFuzzerMutate(data, size, max);
    return seed % 2 ? fuzz_llama2c_fit(data, size, max) : size;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return fuzz_llama2c_one(data, size);
}
