/* fuzz_wtype.c: libFuzzer target for the weight-type kernels, differential: arbitrary bytes as
 * the blocks of every row of the weight-type table (wtype.h), multiplied on every instruction
 * set the CPU runs and by the scalar reference; any difference in any output bit (NaN against
 * NaN aside: payloads need not propagate alike) traps, as does any sanitizer report.
 *
 * Input: byte 0 picks the type (modulo the table), byte 1 the tokens T (1..9), byte 2 the rows
 * (1..40) and blocks per row (1..4), byte 3 (its low 6 bits all set) a matrix too big for the
 * cache (the streaming tiles, T = 1 or 2: rare, as each costs ~100 ms under the sanitizers); the
 * rest, repeated as needed, are the weight bytes. Any input is valid. Types with an int8 mode
 * (kernels.h) are multiplied in that mode too, against its own reference, and again from their
 * packed rows where they have them; and in the int8b mode, from the rows and from their 16-row
 * copy.
 *
 * Build and run (clang; see tests/fuzz_gguf.c for the build directory):
 *   cmake --build build-fuzz --target fuzz_wtype -j2
 *   ./build-fuzz/tests/fuzz_wtype -max_len=4096 -max_total_time=600
 * Without libFuzzer the same entry, fuzz_wtype_one(), runs from tests/test_kernels.c over a
 * seeded set of random inputs on every test run. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/kernels/kernels.h"

static int same_bits(const float *a, const float *b, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (memcmp(&a[i], &b[i], 4) != 0 && !(isnan(a[i]) && isnan(b[i]))) return 0;
    return 1;
}

/* The fuzz entry: returns the number of instruction sets compared; traps on a difference. */
int fuzz_wtype_one(const uint8_t *data, size_t size) {
    if (size < 5) return 0;
    const wtype t = (wtype)(data[0] % WTYPE_COUNT);
    const wtype_traits *tt = wtype_get(t);
    int T = 1 + data[1] % 9, rows = 1 + data[2] % 40, blocks = 1 + (data[2] / 40) % 4;
    int streams = (data[3] & 0x3f) == 0x3f;
    if (streams) T = 1 + T % 2; /* the streaming tiles are the T = 1 and 2 ones */
    int K = tt->block == 1 ? 16 * blocks + data[2] % 16 : tt->block * blocks;
    size_t row_bytes = wtype_row_bytes(t, K);
    if (streams) rows = (int)((600 << 10) / row_bytes) + 3; /* streams (kern_streams) */
    size_t n = row_bytes * (size_t)rows;
    const uint8_t *src = data + 4;
    size_t nsrc = size - 4;
    unsigned char *w = malloc(n);
    float *x = malloc(sizeof(float) * (size_t)T * K), *y = malloc(sizeof(float) * (size_t)T * rows);
    float *ref = malloc(sizeof(float) * (size_t)T * rows);
    int compared = 0;
    if (w && x && y && ref) {
        for (size_t i = 0; i < n; i++) w[i] = src[i % nsrc] ^ (unsigned char)(i / nsrc);
        for (int i = 0; i < T * K; i++) x[i] = (float)((i * 37) % 29) * 0.125f - 1.75f;
        wmat m = {t, w, rows, K, NULL, NULL};
        kern_matmul_ref(&m, 0, rows, x, K, T, ref, rows);
        for (int isa = 0; isa < KERN_ISA_COUNT; isa++) {
            if (!kern_isa_supported((kern_isa)isa)) continue;
            memset(y, 0, sizeof(float) * (size_t)T * rows);
            kern_matmul_isa((kern_isa)isa, &m, 0, rows, x, K, T, y, rows);
            if (!same_bits(y, ref, (size_t)T * rows)) __builtin_trap();
            compared++;
        }
        /* the int8 mode of the types that have one: the same bytes, activations quantized */
        size_t lda = kern_act_bytes(K);
        unsigned char *xa = kern_int8_supported(t) ? aligned_alloc(64, lda * (size_t)T) : NULL;
        if (xa) {
            kern_act_quantize(x, K, T, K, xa, lda);
            kern_matmul_int8_ref(&m, 0, rows, xa, lda, T, ref, rows);
            /* from the rows' own layout, then from the type's packed rows (kernels.h) */
            size_t np = kern_int8_packed_size(&m);
            unsigned char *pk = np ? malloc(np) : NULL;
            if (pk) kern_int8_pack(&m, pk, 0, 1);
            for (int packed = 0; packed <= (pk != NULL); packed++) {
                m.packed = packed ? pk : NULL;
                for (int isa = 0; isa < KERN_ISA_COUNT; isa++) {
                    if (!kern_isa_supported((kern_isa)isa)) continue;
                    memset(y, 0, sizeof(float) * (size_t)T * rows);
                    kern_matmul_int8_isa((kern_isa)isa, &m, 0, rows, xa, lda, T, y, rows);
                    if (!same_bits(y, ref, (size_t)T * rows)) __builtin_trap();
                    compared++;
                }
            }
            m.packed = NULL;
            free(pk);
        }
        free(xa);
        /* the int8b mode: from the rows' own layout and from the 16-row copy (kernels.h) */
        xa = kern_int8b_supported(t) ? aligned_alloc(64, kern_act8b_bytes(T, K)) : NULL;
        if (xa) {
            kern_act8b_quantize(x, K, T, K, xa);
            kern_matmul_int8b_ref(&m, 0, rows, xa, T, ref, rows);
            unsigned char *r16 = malloc(kern_int8b_packed_size(&m));
            if (r16) kern_int8b_pack(&m, r16, 0, 1);
            for (int copy = 0; copy <= (r16 != NULL); copy++) {
                m.r16 = copy ? r16 : NULL;
                const int vnni0 = kern_avxvnni_active();
                for (int isa = 0; isa < KERN_ISA_COUNT; isa++) {
                    if (!kern_isa_supported((kern_isa)isa)) continue;
                    /* AVX2 with and without AVX-VNNI, where the CPU has it */
                    const int vmax = isa == KERN_ISA_AVX2 && kern_avxvnni_supported();
                    for (int v = 0; v <= vmax; v++) {
                        if (isa == KERN_ISA_AVX2) kern_avxvnni_use(v);
                        memset(y, 0, sizeof(float) * (size_t)T * rows);
                        kern_matmul_int8b_isa((kern_isa)isa, &m, 0, rows, xa, T, y, rows);
                        if (!same_bits(y, ref, (size_t)T * rows)) __builtin_trap();
                        compared++;
                    }
                }
                kern_avxvnni_use(vnni0);
            }
            m.r16 = NULL;
            free(r16);
        }
        free(xa);
    }
    free(w), free(x), free(y), free(ref);
    return compared;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fuzz_wtype_one(data, size);
    return 0;
}
