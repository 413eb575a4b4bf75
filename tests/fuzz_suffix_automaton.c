/* fuzz_suffix_automaton.c: libFuzzer target for SAM-Decoding's suffix automaton
 * (decoders/suffix_automaton.h) on any token sequence.
 *
 * The input is read as: byte 0, the room (1 + byte 0 % 200 tokens: appends past it must add
 * nothing); byte 1, the token width (bit 0: one byte per token, small alphabets and long matches;
 * else four bytes, any id up to INT_MAX); then the tokens, the first half the text, the second
 * half a stream matched against it. Checks: the state and edge bounds after every append (states
 * <= 2n - 1, edges <= 3n - 4, for n >= 3), the self-match cursor (the decoder's use) and the
 * stream's cursor against brute-force longest suffix matches and their first ends, and that a
 * full automaton refuses more. A crash, sanitizer report, leak or abort() is a bug.
 *
 * Build and run (clang; Debian: libclang-rt-14-dev):
 *   CC=clang cmake -S . -B build-fuzz -DDECBENCH_FUZZ=ON -DDECBENCH_NATIVE=OFF
 *   cmake --build build-fuzz --target fuzz_suffix_automaton -j2
 *   ./build-fuzz/tests/fuzz_suffix_automaton -max_len=2048 -max_total_time=600
 * Without libFuzzer the same entry, fuzz_suffix_automaton_one(), replays seeded random inputs
 * in test_suffix_automaton.c on every test run. */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/suffix_automaton.h"
#include "util/err.h"

/* The longest common suffix of s[0..m) and t[0..e] over e < n_ends, and its first e. */
static void fuzz_brute(const int *s, int m, const int *t, int n_ends, int *len, int *first) {
    *len = 0, *first = -1;
    for (int e = 0; e < n_ends; e++) {
        int l = 0;
        while (l < m && l <= e && s[m - 1 - l] == t[e - l]) l++;
        if (l > *len) *len = l, *first = e;
    }
}

static int fuzz_bounded(const suffix_automaton *a) {
    long n = sauto_len(a), s = sauto_states(a), e = sauto_edges(a);
    return s <= (n >= 2 ? 2 * n - 1 : n + 1) && e <= (n >= 3 ? 3 * n - 4 : n == 2 ? 3 : n);
}

int fuzz_suffix_automaton_one(const uint8_t *data, size_t size);
int fuzz_suffix_automaton_one(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    const int room = 1 + data[0] % 200, wide = !(data[1] & 1);
    const size_t w = wide ? 4 : 1;
    int n_tok = (int)((size - 2) / w);
    if (n_tok > 400) n_tok = 400;
    int *tok = malloc(sizeof(int) * (size_t)(n_tok + 1));
    char err[ERR_LEN];
    suffix_automaton *a = NULL;
    if (!tok || sauto_new(&a, room, err) != 0) abort();
    for (int i = 0; i < n_tok; i++) {
        const uint8_t *p = data + 2 + (size_t)i * w;
        tok[i] =
            wide ? (int)((uint32_t)(p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24) & INT_MAX)
                 : p[0] % 8;
    }
    const int n_text = n_tok / 2, n_stream = n_tok - n_text;
    const int *text = tok, *stream = tok + n_text;
    sauto_match cur = {0, 0};
    for (int i = 0; i < n_text; i++) {
        sauto_match look = sauto_step(a, cur, text[i]);
        const int full = i >= room;
        int len, first;
        fuzz_brute(text, i + 1, text, full ? room : i, &len, &first);
        if (look.len != len || (len > 0 && sauto_first_end(a, look.state) != first)) abort();
        if (sauto_append(a, text[i]) != full) abort();
        cur = sauto_fix(a, look);
        if (!fuzz_bounded(a) || sauto_len(a) != (full ? room : i + 1)) abort();
    }
    const int held = (int)sauto_len(a);
    if (memcmp(sauto_text(a), text, sizeof(int) * (size_t)held) != 0) abort();
    sauto_match c = {0, 0};
    for (int j = 0; j < n_stream; j++) {
        c = sauto_step(a, c, stream[j]);
        int len, first;
        fuzz_brute(stream, j + 1, text, held, &len, &first);
        if (c.len != len || (len > 0 && sauto_first_end(a, c.state) != first)) abort();
    }
    sauto_free(a);
    free(tok);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return fuzz_suffix_automaton_one(data, size);
}
