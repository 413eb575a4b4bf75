/* test_suffix_automaton.c: the suffix automaton of SAM-Decoding (decoders/suffix_automaton.h)
 * against brute force on random sequences:
 *  1. a text matched against itself as it grows (the dynamic automaton's use: a cursor stepped
 *     by each token before the token is appended, then fixed): after every token, the lookup's
 *     length is the longest suffix of t[0..i] that ends before i, its state's first end the
 *     earliest position where that suffix ends, and the cursor after the append is consistent
 *     (len(link) < len <= len(state));
 *  2. another sequence matched against a finished text (the static automaton's use): the
 *     longest suffix of u[0..j] occurring in t and its first end, after every token;
 *  3. the memory bound: states <= 2n - 1 (n >= 2), edges <= 3n - 4 (n >= 3) after every append,
 *     and every substring of up to 8 tokens is recognised, no other;
 *  4. capacity: an append past max_tokens adds nothing; creation errors; clear and reuse (a
 *     small and a full hash table), token ids up to INT_MAX;
 *  5. the fuzz target's entry (tests/fuzz_suffix_automaton.c) on 3000 seeded random inputs of
 *     both token widths (300 under the sanitizers). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/suffix_automaton.h"
#include "tests/fuzz_suffix_automaton.c"
#include "tests/testutil.h"
#include "util/err.h"
#include "util/rng.h"

#define MAXN 160

/* The longest common suffix of s[0..m) and t[0..e] over e < n_ends: *len, and the first e that
 * reaches it (*first, -1 when len is 0). */
static void brute(const int *s, int m, const int *t, int n_ends, int *len, int *first) {
    *len = 0, *first = -1;
    for (int e = 0; e < n_ends; e++) {
        int l = 0;
        while (l < m && l <= e && s[m - 1 - l] == t[e - l]) l++;
        if (l > *len) *len = l, *first = e;
    }
}

/* Whether a recognises s[0..m) by walking edges from the root (a fresh cursor). */
static int recognises(const suffix_automaton *a, const int *s, int m) {
    sauto_match c = {0, 0};
    for (int i = 0; i < m; i++) {
        c = sauto_step(a, c, s[i]);
        if (c.len != i + 1) return 0;
    }
    return 1;
}

static int occurs(const int *s, int m, const int *t, int n) {
    for (int i = 0; i + m <= n; i++)
        if (!memcmp(s, t + i, sizeof(int) * (size_t)m)) return 1;
    return 0;
}

static void random_text(rng_state *r, int *t, int n, int alphabet) {
    for (int i = 0; i < n; i++) {
        int x = (int)rng_below(r, (uint32_t)alphabet);
        t[i] = alphabet == 3 ? (x == 2 ? INT_MAX : x) : x; /* the largest id too */
    }
    if (alphabet == 4) /* a periodic run inside: long matches */
        for (int i = n / 2; i < n; i++) t[i] = t[i - 7];
}

static int bounds_ok(const suffix_automaton *a, long n) {
    long s = sauto_states(a), e = sauto_edges(a);
    return s <= (n >= 2 ? 2 * n - 1 : n + 1) && e <= (n >= 3 ? 3 * n - 4 : n == 2 ? 3 : n);
}

static void test_self_match(suffix_automaton *a, const int *t, int n, const char *what) {
    sauto_clear(a);
    sauto_match cur = {0, 0};
    int bad = 0;
    for (int i = 0; i < n && !bad; i++) {
        sauto_match look = sauto_step(a, cur, t[i]);
        int len, first;
        brute(t, i + 1, t, i, &len, &first);
        if (look.len != len) bad = 1;
        if (!bad && len > 0 && sauto_first_end(a, look.state) != first) bad = 2;
        cur = look;
        CHECK(sauto_append(a, t[i]) == 0);
        cur = sauto_fix(a, cur);
        if (!bad && cur.len != len) bad = 3;
        if (!bad && len > 0 &&
            !(sauto_state_len(a, sauto_link(a, cur.state)) < len &&
              len <= sauto_state_len(a, cur.state)))
            bad = 4;
        if (!bad && !bounds_ok(a, i + 1)) bad = 5;
        if (bad)
            CHECK_MSG(0, "%s: token %d: check %d (lookup %d, brute %d at %d, first end %ld)", what,
                      i, bad, look.len, len, first,
                      look.len > 0 ? sauto_first_end(a, look.state) : -1L);
    }
    CHECK(sauto_len(a) == n && !memcmp(sauto_text(a), t, sizeof(int) * (size_t)n));
}

static void test_other_match(suffix_automaton *a, const int *t, int n, const int *u, int m,
                             const char *what) {
    sauto_clear(a);
    for (int i = 0; i < n; i++) sauto_append(a, t[i]);
    CHECK(bounds_ok(a, n));
    sauto_match c = {0, 0};
    for (int j = 0; j < m; j++) {
        c = sauto_step(a, c, u[j]);
        int len, first;
        brute(u, j + 1, t, n, &len, &first);
        if (c.len != len || (len > 0 && sauto_first_end(a, c.state) != first)) {
            CHECK_MSG(0, "%s: token %d: matched %d, brute %d (first end %ld, brute %d)", what, j,
                      c.len, len, len > 0 ? sauto_first_end(a, c.state) : -1L, first);
            return;
        }
    }
    /* every substring of up to 8 tokens of t is recognised; of u, exactly those occurring in t */
    for (int i = 0; i < n; i++)
        for (int l = 1; l <= 8 && i + l <= n; l++)
            if (!recognises(a, t + i, l)) {
                CHECK_MSG(0, "%s: substring at %d of %d tokens not recognised", what, i, l);
                return;
            }
    for (int i = 0; i < m; i++)
        for (int l = 1; l <= 8 && i + l <= m; l++)
            if (recognises(a, u + i, l) != occurs(u + i, l, t, n)) {
                CHECK_MSG(0, "%s: u's substring at %d of %d tokens misjudged", what, i, l);
                return;
            }
}

static void test_random(void) {
    char err[ERR_LEN];
    suffix_automaton *a;
    CHECK_MSG(sauto_new(&a, MAXN, err) == 0, "%s", err);
    if (!a) return;
    rng_state r;
    rng_seed(&r, 2411);
    const int alphabets[] = {1, 2, 3, 4, 5, 50, 1000};
    int t[MAXN], u[MAXN];
    for (int ai = 0; ai < 7; ai++)
        for (int rep = 0; rep < (test_sanitized() ? 3 : 12); rep++) {
            int n = 1 + (int)rng_below(&r, MAXN), m = 1 + (int)rng_below(&r, MAXN);
            random_text(&r, t, n, alphabets[ai]);
            random_text(&r, u, m, alphabets[ai]);
            if (rep % 3 == 1) /* u repeats pieces of t: long matches against the static text */
                for (int i = 0; i < m; i++) u[i] = rng_below(&r, 4) ? t[(i * 3 + rep) % n] : u[i];
            char what[64];
            snprintf(what, sizeof what, "alphabet %d, repeat %d, n %d", alphabets[ai], rep, n);
            test_self_match(a, t, n, what);
            test_other_match(a, t, n, u, m, what);
        }
    sauto_free(a);
}

static void test_edges(void) {
    char err[ERR_LEN];
    suffix_automaton *a;
    CHECK(sauto_new(&a, 0, err) == -1 && strstr(err, "0 tokens, expected 1.."));
    CHECK(sauto_new(&a, 1L << 29, err) == -1 && strstr(err, "expected 1..268435456"));
    CHECK(sauto_new(&a, 5, err) == 0);
    if (!a) return;
    const int t[] = {7, 7, 3, 7, 7, 9};
    for (int i = 0; i < 5; i++) CHECK(sauto_append(a, t[i]) == 0);
    CHECK(sauto_append(a, t[5]) == 1 && sauto_len(a) == 5); /* full: nothing added */
    sauto_match c = sauto_step(a, (sauto_match){0, 0}, 9);
    CHECK(c.len == 0 && c.state == 0);
    /* a cursor of states an emptied automaton no longer has starts over */
    c = sauto_step(a, (sauto_match){0, 0}, 7), c = sauto_step(a, c, 7), c = sauto_step(a, c, 3);
    CHECK(c.len == 3 && sauto_first_end(a, c.state) == 2);
    sauto_clear(a);
    CHECK(sauto_len(a) == 0 && sauto_states(a) == 1 && sauto_edges(a) == 0);
    CHECK(sauto_step(a, c, 7).len == 0 && sauto_fix(a, c).len == 0);
    CHECK(sauto_append(a, 3) == 0 && sauto_step(a, c, 3).len == 1 && !recognises(a, t, 1));
    sauto_free(a);
    sauto_free(NULL);
    /* clearing a full table (memset) and a nearly empty one (slot by slot), then reuse */
    CHECK(sauto_new(&a, 64, err) == 0);
    if (!a) return;
    rng_state r;
    rng_seed(&r, 7);
    int big[64], small[3] = {4, 5, 4};
    for (int i = 0; i < 64; i++) big[i] = (int)rng_below(&r, 1u << 30);
    for (int round = 0; round < 3; round++) {
        test_other_match(a, big, 64, big + 10, 40, "full table");
        test_other_match(a, small, 3, big, 10, "small after full");
        CHECK(!recognises(a, big, 1) || occurs(big, 1, small, 3));
    }
    sauto_free(a);
}

static void test_fuzz_replay(void) {
    rng_state r;
    rng_seed(&r, 10666);
    static uint8_t buf[1024];
    const int n = test_sanitized() ? 300 : 3000;
    for (int i = 0; i < n; i++) {
        size_t size = rng_below(&r, sizeof buf);
        for (size_t j = 0; j < size; j++) buf[j] = (uint8_t)rng_below(&r, 256);
        fuzz_suffix_automaton_one(buf, size); /* aborts on a failed check */
    }
    fprintf(stderr, "  %d inputs through fuzz_suffix_automaton_one\n", n);
}

int main(void) {
    test_edges();
    test_random();
    test_fuzz_replay();
    return test_finish("test_suffix_automaton");
}
