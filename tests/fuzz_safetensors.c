/* fuzz_safetensors.c: libFuzzer target for the safetensors reader (model/formats/safetensors.h).
 *
 * Each input is written to a memfd and opened by path (/proc/self/fd/N), exactly as a file on
 * disk would be; when it opens, every tensor is looked up by name (which must find that very
 * tensor: names are unique), its first and last byte are read, and every F32/F16/BF16 tensor is
 * converted (st_read_f32) and loaded again through st_load_f32 with its own shape; other dtypes
 * must be refused by both. The same file is then loaded as Medusa heads (decoders/medusa_head.h:
 * two heads of one ResBlock, from a scratch folder whose medusa_lm_head.safetensors links to
 * the input), whose forward pass runs on every head that loads. A crash, sanitizer report,
 * leak or abort() is a bug; an error return is the expected outcome.
 *
 * Build and run (clang; Debian: libclang-rt-14-dev):
 *   CC=clang cmake -S . -B build-fuzz -DDECBENCH_FUZZ=ON -DDECBENCH_NATIVE=OFF
 *   cmake --build build-fuzz --target fuzz_safetensors -j2
 *   ctest --test-dir build -R test_safetensors  # writes build/tests/tmp_test_safetensors/seeds
 *   mkdir -p /tmp/st-corpus && cp build/tests/tmp_test_safetensors/seeds/seed* /tmp/st-corpus/
 *   ./build-fuzz/tests/fuzz_safetensors /tmp/st-corpus -max_len=4096 -max_total_time=600
 * Without libFuzzer the same entry, fuzz_safetensors_one(), replays those seeds and a seeded
 * set of their mutations in test_safetensors.c on every test run. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/formats/safetensors.h"
#include "decoders/medusa_head.h"
#include "tests/fuzz_files.h"
#include "util/err.h"

volatile unsigned fuzz_safetensors_sink; /* keeps the reads from being optimized away */

static unsigned fuzz_walk(const safetensors *s) {
    unsigned sum = 0;
    char err[ERR_LEN];
    for (int i = 0; i < st_count(s); i++) {
        const st_tensor *t = st_tensor_at(s, i);
        if (st_find(s, t->name) != t) abort();
        uint64_t bytes = t->end - t->begin;
        if (bytes != t->n_elements * (uint64_t)st_dtype_size(t->dtype)) abort();
        if (bytes) {
            const unsigned char *b = t->data;
            sum += b[0] + b[bytes - 1];
        }
        int readable = t->dtype == ST_F32 || t->dtype == ST_F16 || t->dtype == ST_BF16;
        float *out = malloc(sizeof(float) * (t->n_elements ? t->n_elements : 1));
        if (!out) continue;
        if ((st_read_f32(s, t, out, err) == 0) != readable) abort();
        if ((st_load_f32(s, t->name, t->n_dims, t->shape, out, err) == 0) != readable) abort();
        for (uint64_t k = 0; k < t->n_elements; k++) sum += out[k] == out[k];
        free(out);
    }
    return sum + (st_find(s, "no such tensor") == NULL);
}

static char medusa_dir[128];

/* Removes the scratch folder (at exit: libFuzzer ends its runs with exit()). */
static void fuzz_medusa_cleanup(void) {
    char path[256];
    snprintf(path, sizeof path, "%s/config.json", medusa_dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/medusa_lm_head.safetensors", medusa_dir);
    unlink(path);
    rmdir(medusa_dir);
}

/* The input as Medusa heads: a per-process folder holding config.json and a link to it.
 * Returns 0 when they do not load, else 1 + a checksum. */
static unsigned fuzz_medusa(const char *input) {
    char *dir = medusa_dir;
    char path[256], err[ERR_LEN];
    if (!dir[0]) {
        fuzz_scratch_path("fuzz_safetensors_medusa", "", dir, sizeof medusa_dir);
        mkdir(dir, 0700);
        atexit(fuzz_medusa_cleanup);
        snprintf(path, sizeof path, "%s/config.json", dir);
        FILE *f = fopen(path, "w");
        if (!f) return 0;
        fputs("{\"medusa_num_heads\": 2, \"medusa_num_layers\": 1}", f);
        fclose(f);
    }
    snprintf(path, sizeof path, "%s/medusa_lm_head.safetensors", dir);
    unlink(path);
    if (symlink(input, path) != 0) return 0;
    medusa_head *h;
    if (medusa_head_open(&h, dir, err) != 0) return 0;
    unsigned sum = 1;
    float *x = calloc((size_t)h->dim * 3, sizeof(float)), *lg = malloc(sizeof(float) * h->vocab);
    for (int k = 0; x && lg && k < h->n_heads; k++) {
        medusa_head_logits(h, k, x, lg, x + h->dim, NULL);
        sum += lg[h->vocab - 1] == lg[0];
    }
    free(x), free(lg);
    medusa_head_free(h);
    return sum;
}

/* The fuzz entry: never fails, only crashes if the library has a bug. */
int fuzz_safetensors_one(const uint8_t *data, size_t size) {
    char path[64];
    int fd = fuzz_memfd("fuzz_safetensors", data, size, path, sizeof path);
    if (fd < 0) return 0;
    char err[ERR_LEN];
    safetensors *s;
    if (st_open(&s, path, err) == 0) {
        fuzz_safetensors_sink += fuzz_walk(s);
        st_close(s);
        fuzz_safetensors_sink += fuzz_medusa(path);
    }
    close(fd);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return fuzz_safetensors_one(data, size);
}
