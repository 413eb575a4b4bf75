/* fuzz_suffix_state.c: libFuzzer target for SuffixDecoding's state file reader
 * (stree_load_bytes, decoders/suffix_tree.h) and the tree it rebuilds.
 *
 * Random bytes almost never carry a valid checksum, which the reader checks last, so the
 * input is a file WITHOUT its checksum and byte 0 says what to do with it:
 *   bit 0 set    append the right FNV-1a checksum (the parser's every other check is reached)
 *   bit 0 clear  append 8 bytes of the input's end as they are (a wrong checksum, usually)
 *   bits 1..7    the tree's size: depth 1 + bits 1..3, nodes 8 << bits 4..6 (evictions when
 *                the file holds more)
 * then the file's bytes. A load that fails must leave the tree as it was (its sequences and
 * counts: checked against a tree that never saw the file); one that succeeds must hold only
 * tokens of the vocabulary (512), consistent counts (a substring occurs at least as often as
 * any extension of it), and save again to a file that loads into the same tree. A crash,
 * sanitizer report, leak or abort() is a bug.
 *
 * Build and run (clang; Debian: libclang-rt-14-dev):
 *   CC=clang cmake -S . -B build-fuzz -DDECBENCH_FUZZ=ON -DDECBENCH_NATIVE=OFF
 *   cmake --build build-fuzz --target fuzz_suffix_state -j2
 *   ctest --test-dir build -R test_suffix  # writes build/tests/tmp_test_suffix/seeds
 *   mkdir -p /tmp/suffix-corpus && cp build/tests/tmp_test_suffix/seeds/seed* /tmp/suffix-corpus/
 *   ./build-fuzz/tests/fuzz_suffix_state /tmp/suffix-corpus -max_len=4096 -max_total_time=600
 * Without libFuzzer the same entry, fuzz_suffix_state_one(), replays those seeds and a seeded
 * set of their mutations in test_suffix.c on every test run. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "decoders/suffix_tree.h"
#include "util/err.h"
#include "util/hash.h"
#include "tests/fuzz_files.h"

#define FUZZ_VOCAB 512

/* Writes are per process (tmpfs when there is one). */
static const char *fuzz_suffix_path(void) {
    static char path[64];
    return fuzz_scratch_path("fuzz_suffix", ".bin", path, sizeof path);
}

/* Every substring of up to 3 tokens of t's sequences: whether t1 and t2 count it alike, and
 * counts shrink along extensions. */
static int same_counts(const suffix_tree *a, const suffix_tree *b, const int *probe, int n) {
    for (int i = 0; i < n; i++)
        for (int len = 1; len <= 3 && i + len <= n; len++) {
            int ca = stree_count(a, probe + i, len), cb = stree_count(b, probe + i, len);
            if (ca != cb) return 0;
            if (len > 1 && ca > stree_count(a, probe + i, len - 1)) abort();
        }
    return 1;
}

int fuzz_suffix_state_one(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const int depth = 1 + (data[0] >> 1 & 7), nodes = 8 << (data[0] >> 4 & 7);
    size_t body = size - 1;
    unsigned char *buf = malloc(body + 8);
    suffix_tree *t = NULL, *ref = NULL;
    char err[ERR_LEN];
    if (!buf) return 0;
    memcpy(buf, data + 1, body);
    size_t n = body;
    if (data[0] & 1) {
        uint64_t h = hash_fnv1a(buf, body);
        for (int i = 0; i < 8; i++) buf[n++] = (unsigned char)(h >> (8 * i));
    }
    /* a tree with something in it already, and a twin that never sees the file */
    static const int before[] = {5, 6, 7, 5, 6, 8, 5, 6, 7};
    if (stree_new(&t, depth, nodes, nodes, err) || stree_new(&ref, depth, nodes, nodes, err))
        goto done;
    for (int k = 0; k < 2; k++) {
        suffix_tree *x = k ? ref : t;
        stree_begin(x);
        for (size_t i = 0; i < sizeof before / sizeof before[0]; i++) stree_append(x, before[i]);
    }
    int *probe = malloc(sizeof(int) * (n / 4 + 16));
    if (!probe) goto done;
    int n_probe = 0;
    for (size_t i = 0; i + 4 <= n && n_probe < (int)(n / 4); i += 4)
        probe[n_probe++] = (int)((buf[i] | buf[i + 1] << 8) % FUZZ_VOCAB);
    for (size_t i = 0; i < sizeof before / sizeof before[0]; i++) probe[n_probe++] = before[i];
    if (stree_load_bytes(t, FUZZ_VOCAB, buf, n, "fuzz", err) != 0) {
        if (!same_counts(t, ref, probe, n_probe) || stree_tokens(t) != stree_tokens(ref)) abort();
    } else if (stree_save(t, FUZZ_VOCAB, fuzz_suffix_path(), NULL, NULL, err) == 0) {
        if (stree_load(ref, FUZZ_VOCAB, fuzz_suffix_path(), err) != 0) abort();
        if (!same_counts(t, ref, probe, n_probe) || stree_nodes(t) != stree_nodes(ref)) abort();
        unlink(fuzz_suffix_path());
    }
    free(probe);
done:
    stree_free(t), stree_free(ref);
    free(buf);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return fuzz_suffix_state_one(data, size);
}
