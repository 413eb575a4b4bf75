/* fuzz_datastore.c: libFuzzer target for REST's datastore reader (tstore_load_bytes,
 * util/token_store.h) and its lookups.
 *
 * Random bytes almost never carry a valid checksum, which the reader checks last, so the
 * input is a file WITHOUT its checksum and byte 0 says what to do with it: bit 0 set, append
 * the right FNV-1a checksum (every other check is reached); clear, append 8 bytes of the
 * input's end as they are. The vocabulary is 512, the fingerprint unknown (0). A load that
 * succeeds must hold only tokens of the vocabulary and a suffix array that is a permutation;
 * every lookup of the file's own substrings must return a range inside the array; writing the
 * store again (its suffix array rebuilt) must give a file that loads to the same tokens, whose
 * lookups agree with a brute-force count. A crash, sanitizer report, leak or abort() is a bug.
 *
 * Build and run (clang; Debian: libclang-rt-14-dev):
 *   CC=clang cmake -S . -B build-fuzz -DDECBENCH_FUZZ=ON -DDECBENCH_NATIVE=OFF
 *   cmake --build build-fuzz --target fuzz_datastore -j2
 *   ctest --test-dir build -R test_rest  # writes build/tests/tmp_test_rest/seeds
 *   mkdir -p /tmp/ds-corpus && cp build/tests/tmp_test_rest/seeds/seed* /tmp/ds-corpus/
 *   ./build-fuzz/tests/fuzz_datastore /tmp/ds-corpus -max_len=4096 -max_total_time=600
 * Without libFuzzer the same entry, fuzz_datastore_one(), replays those seeds and a seeded set
 * of their mutations in test_rest.c on every test run. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/fuzz_files.h"
#include "util/err.h"
#include "util/hash.h"
#include "util/token_store.h"

#define FUZZ_VOCAB 512

static const char *fuzz_ds_path(void) {
    static char path[64];
    return fuzz_scratch_path("fuzz_datastore", ".ds", path, sizeof path);
}

static int brute_count(const tstore *s, const int *q, int m) {
    int c = 0;
    for (int i = 0; i + m <= s->n; i++) {
        int j = 0;
        while (j < m && (int)s->tok[i + j] == q[j]) j++;
        c += j == m;
    }
    return c;
}

int fuzz_datastore_one(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    size_t body = size - 1, n = body;
    unsigned char *buf = malloc(body + 8);
    char err[ERR_LEN];
    if (!buf) return 0;
    memcpy(buf, data + 1, body);
    if (data[0] & 1) {
        uint64_t h = hash_fnv1a(buf, body);
        for (int i = 0; i < 8; i++) buf[n++] = (unsigned char)(h >> (8 * i));
    }
    tstore *s = NULL, *again = NULL;
    if (tstore_load_bytes(&s, buf, n, FUZZ_VOCAB, 0, "fuzz", err) == 0) {
        unsigned char *seen = calloc((size_t)s->n + 1, 1);
        if (!seen) abort();
        for (int i = 0; i < s->n; i++) {
            if (s->tok[i] >= FUZZ_VOCAB || s->sa[i] >= (uint32_t)s->n || seen[s->sa[i]]) abort();
            seen[s->sa[i]] = 1;
        }
        free(seen);
        int q[4];
        for (int i = 0; i < s->n && i < 64; i++)
            for (int m = 1; m <= 4 && i + m <= s->n; m++) {
                for (int j = 0; j < m; j++) q[j] = (int)s->tok[i + j];
                int lo, hi;
                tstore_find(s, q, m, &lo, &hi);
                if (lo < 0 || hi < lo || hi > s->n) abort();
            }
        if (tstore_write(fuzz_ds_path(), s->tok, s->n, s->docs, FUZZ_VOCAB, 0, err) == 0) {
            if (tstore_load(&again, fuzz_ds_path(), FUZZ_VOCAB, 0, err) != 0) abort();
            if (again->n != s->n || memcmp(again->tok, s->tok, sizeof(uint32_t) * (size_t)s->n))
                abort();
            for (int i = 0; i < again->n && i < 64; i++)
                for (int m = 1; m <= 4 && i + m <= again->n; m++) {
                    for (int j = 0; j < m; j++) q[j] = (int)again->tok[i + j];
                    int lo, hi;
                    if (tstore_find(again, q, m, &lo, &hi) != brute_count(again, q, m)) abort();
                }
            unlink(fuzz_ds_path());
        }
    }
    tstore_free(s), tstore_free(again);
    free(buf);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return fuzz_datastore_one(data, size);
}
