/* test_ngram_pool.c: the n-gram pool (decoders/ngram_pool.h).
 *  1. add/get/count: newest first, a re-added n-gram is refreshed (not duplicated) and
 *     becomes the newest, a full key evicts its least recently added or refreshed n-gram;
 *     keys are independent; touch, remove, clear; G = 0 holds nothing; keys out of range.
 *  2. random operations against a naive model (a list per key), thousands of them on a small
 *     vocabulary so that hits, refreshes and evictions all happen, for several (G, n).
 *  3. nothing is allocated after ngram_pool_new (malloc is counted).
 *  4. bad arguments are refused with a message naming the value and the range. */
#include <stdlib.h>
#include <string.h>

#include "decoders/ngram_pool.h"
#include "tests/dec_check.h"
#include "tests/testutil.h"
#include "util/err.h"
#include "util/rng.h"

DEC_CHECK_COUNT_MALLOC

static int same(const int *a, const int *b, int n) {
    return a && memcmp(a, b, sizeof(int) * n) == 0;
}

static void test_basics(void) {
    char err[ERR_LEN];
    ngram_pool *p;
    CHECK(ngram_pool_new(&p, 10, 3, 2, err) == 0);
    CHECK(ngram_pool_n(p) == 2 && ngram_pool_g(p) == 3 && ngram_pool_size(p) == 0);
    int a[2] = {1, 2}, b[2] = {3, 4}, c[2] = {5, 6}, e[2] = {7, 8};
    CHECK(ngram_pool_add(p, 4, a) == 1);
    CHECK(ngram_pool_add(p, 4, b) == 1);
    CHECK(ngram_pool_add(p, 4, c) == 1);
    CHECK(ngram_pool_count(p, 4) == 3 && ngram_pool_count(p, 5) == 0);
    CHECK(same(ngram_pool_get(p, 4, 0), c, 2) && same(ngram_pool_get(p, 4, 2), a, 2));
    CHECK(ngram_pool_get(p, 4, 3) == NULL && ngram_pool_get(p, 4, -1) == NULL);
    /* a is refreshed: now the newest, still 3 entries; then e evicts the least recent, b */
    CHECK(ngram_pool_add(p, 4, a) == 0);
    CHECK(ngram_pool_count(p, 4) == 3 && same(ngram_pool_get(p, 4, 0), a, 2));
    CHECK(ngram_pool_add(p, 4, e) == 1);
    CHECK(ngram_pool_count(p, 4) == 3 && ngram_pool_size(p) == 3);
    CHECK(same(ngram_pool_get(p, 4, 0), e, 2) && same(ngram_pool_get(p, 4, 1), a, 2) &&
          same(ngram_pool_get(p, 4, 2), c, 2));
    /* another key is independent */
    CHECK(ngram_pool_add(p, 9, b) == 1 && ngram_pool_count(p, 9) == 1 && ngram_pool_size(p) == 4);
    /* touch moves to the newest; remove drops; clear empties */
    ngram_pool_touch(p, 4, 2);
    CHECK(same(ngram_pool_get(p, 4, 0), c, 2) && same(ngram_pool_get(p, 4, 2), a, 2));
    ngram_pool_remove(p, 4, 1);
    CHECK(ngram_pool_count(p, 4) == 2 && same(ngram_pool_get(p, 4, 1), a, 2));
    CHECK(ngram_pool_size(p) == 3);
    ngram_pool_remove(p, 4, 5); /* out of range: nothing */
    ngram_pool_touch(p, 4, 7);
    CHECK(ngram_pool_count(p, 4) == 2);
    /* keys out of range */
    CHECK(ngram_pool_add(p, 10, a) == -1 && ngram_pool_add(p, -1, a) == -1);
    CHECK(ngram_pool_count(p, 10) == 0 && ngram_pool_get(p, -1, 0) == NULL);
    ngram_pool_clear(p);
    CHECK(ngram_pool_size(p) == 0 && ngram_pool_count(p, 4) == 0 && ngram_pool_count(p, 9) == 0);
    ngram_pool_free(p);
    /* G = 0: never holds anything */
    CHECK(ngram_pool_new(&p, 5, 0, 4, err) == 0);
    int g[4] = {1, 2, 3, 4};
    CHECK(ngram_pool_add(p, 1, g) == 0 && ngram_pool_count(p, 1) == 0 && ngram_pool_size(p) == 0);
    ngram_pool_free(p);
    ngram_pool_free(NULL);
}

/* The reference: per key an array of n-grams, oldest first. */
typedef struct {
    int cnt[16];
    int tok[16][8][4];
} naive;

static int naive_add(naive *m, int G, int n, int key, const int *g) {
    int *c = &m->cnt[key];
    for (int j = 0; j < *c; j++)
        if (memcmp(m->tok[key][j], g, sizeof(int) * n) == 0) {
            memmove(m->tok[key][j], m->tok[key][j + 1], sizeof m->tok[key][0] * (*c - 1 - j));
            memcpy(m->tok[key][*c - 1], g, sizeof(int) * n);
            return 0;
        }
    if (*c == G) {
        memmove(m->tok[key][0], m->tok[key][1], sizeof m->tok[key][0] * (G - 1));
        (*c)--;
    }
    memcpy(m->tok[key][(*c)++], g, sizeof(int) * n);
    return 1;
}

static void test_random(int G, int n, uint64_t seed) {
    char err[ERR_LEN];
    ngram_pool *p;
    long before = dec_check_mallocs;
    CHECK(ngram_pool_new(&p, 16, G, n, err) == 0);
    CHECK(!dec_check_counting || dec_check_mallocs > before); /* the counter works */
    static naive m;
    memset(&m, 0, sizeof m);
    rng_state r;
    rng_seed(&r, seed);
    int bad = 0, hits = 0, evictions = 0;
    long allocs = dec_check_mallocs;
    for (int op = 0; op < 20000; op++) {
        int key = (int)rng_below(&r, 16), g[4];
        for (int t = 0; t < n; t++) g[t] = (int)rng_below(&r, n == 1 ? 12 : 3); /* few n-grams */
        int full = m.cnt[key] == G, want = naive_add(&m, G, n, key, g);
        int got = ngram_pool_add(p, key, g);
        hits += want == 0, evictions += want == 1 && full;
        bad += got != want;
        if (op % 7 == 0) {
            long size = 0;
            for (int k = 0; k < 16; k++) {
                size += m.cnt[k];
                bad += ngram_pool_count(p, k) != m.cnt[k];
                for (int i = 0; i < m.cnt[k]; i++)
                    bad += !same(ngram_pool_get(p, k, i), m.tok[k][m.cnt[k] - 1 - i], n);
            }
            bad += ngram_pool_size(p) != size;
        }
    }
    CHECK_MSG(bad == 0, "G=%d n=%d: %d differences from the reference", G, n, bad);
    CHECK_MSG(hits > 100 && evictions > 100, "G=%d n=%d: %d hits, %d evictions", G, n, hits,
              evictions);
    CHECK_MSG(dec_check_mallocs == allocs, "G=%d n=%d: %ld allocations after ngram_pool_new", G, n,
              dec_check_mallocs - allocs);
    ngram_pool_free(p);
}

static void test_errors(void) {
    char err[ERR_LEN];
    ngram_pool *p = (ngram_pool *)&err; /* must be reset to NULL on failure */
    CHECK(ngram_pool_new(&p, 0, 4, 4, err) == -1 && p == NULL);
    CHECK_MSG(strstr(err, "0 keys") != NULL, "%s", err);
    CHECK(ngram_pool_new(&p, 10, -1, 4, err) == -1 && strstr(err, "G=-1") &&
          strstr(err, "0..65535"));
    CHECK(ngram_pool_new(&p, 10, 4, 0, err) == -1 && strstr(err, "n=0") && strstr(err, "1..256"));
    CHECK(ngram_pool_new(&p, 10, 4, 257, err) == -1 && strstr(err, "n=257"));
}

int main(void) {
    test_basics();
    const int Gs[] = {1, 2, 5, 8}, ns[] = {1, 2, 4};
    for (int gi = 0; gi < 4; gi++)
        for (int ni = 0; ni < 3; ni++) test_random(Gs[gi], ns[ni], 100 + gi * 3 + ni);
    test_errors();
    return test_finish("test_ngram_pool");
}
