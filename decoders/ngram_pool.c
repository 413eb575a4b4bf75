/* ngram_pool.c: see ngram_pool.h. Layout: key k owns G consecutive entries of n tokens,
 * stored oldest first (entry cnt-1 is the newest), with one 32-bit hash per entry so that the
 * duplicate check compares hashes before tokens. Refreshing or evicting shifts the younger
 * entries down by one: at most G entries, no pointers to maintain. */
#include "decoders/ngram_pool.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"

struct ngram_pool {
    int n_keys, G, n;
    long size;
    int *cnt;       /* [n_keys] */
    int *tok;       /* [n_keys][G][n] */
    uint32_t *hash; /* [n_keys][G] */
};

static uint32_t ngram_hash(const int *t, int n) {
    uint32_t h = 2166136261u;
    for (int i = 0; i < n; i++) h = (h ^ (uint32_t)t[i]) * 16777619u;
    return h;
}

int ngram_pool_new(ngram_pool **out, int n_keys, int G, int n, char *err) {
    *out = NULL;
    if (n_keys < 1) return err_set(err, "ngram pool: %d keys, expected at least 1", n_keys);
    if (G < 0 || G > 65535) return err_set(err, "ngram pool: G=%d, expected 0..65535", G);
    if (n < 1 || n > 256) return err_set(err, "ngram pool: n=%d, expected 1..256", n);
    ngram_pool *p = calloc(1, sizeof *p);
    if (!p) return err_set(err, "ngram pool: out of memory");
    p->n_keys = n_keys, p->G = G, p->n = n;
    size_t slots = (size_t)n_keys * (size_t)(G ? G : 1);
    p->cnt = calloc((size_t)n_keys, sizeof(int));
    p->tok = malloc(slots * (size_t)n * sizeof(int));
    p->hash = malloc(slots * sizeof(uint32_t));
    if (!p->cnt || !p->tok || !p->hash) {
        ngram_pool_free(p);
        return err_set(err, "ngram pool: out of memory (%zu MiB)",
                       slots * ((size_t)n * sizeof(int) + 4) >> 20);
    }
    *out = p;
    return 0;
}

void ngram_pool_free(ngram_pool *p) {
    if (!p) return;
    free(p->cnt), free(p->tok), free(p->hash);
    free(p);
}

void ngram_pool_clear(ngram_pool *p) {
    memset(p->cnt, 0, sizeof(int) * (size_t)p->n_keys);
    p->size = 0;
}

int ngram_pool_n(const ngram_pool *p) {
    return p->n;
}
int ngram_pool_g(const ngram_pool *p) {
    return p->G;
}
long ngram_pool_size(const ngram_pool *p) {
    return p->size;
}

int ngram_pool_count(const ngram_pool *p, int key) {
    return key >= 0 && key < p->n_keys ? p->cnt[key] : 0;
}

static int *entry(const ngram_pool *p, int key, int j) {
    return p->tok + ((size_t)key * p->G + j) * p->n;
}

const int *ngram_pool_get(const ngram_pool *p, int key, int i) {
    int c = ngram_pool_count(p, key);
    return i >= 0 && i < c ? entry(p, key, c - 1 - i) : NULL;
}

/* Drops entry j (oldest-first index) of key, shifting the younger ones down. */
static void drop(ngram_pool *p, int key, int j) {
    int c = p->cnt[key], n = p->n;
    uint32_t *h = p->hash + (size_t)key * p->G;
    memmove(entry(p, key, j), entry(p, key, j + 1), sizeof(int) * (size_t)(c - 1 - j) * n);
    memmove(h + j, h + j + 1, sizeof(uint32_t) * (size_t)(c - 1 - j));
    p->cnt[key] = c - 1;
    p->size--;
}

/* Appends as the newest entry; the key must have room. */
static void push(ngram_pool *p, int key, const int *ngram, uint32_t h) {
    int c = p->cnt[key];
    memcpy(entry(p, key, c), ngram, sizeof(int) * (size_t)p->n);
    p->hash[(size_t)key * p->G + c] = h;
    p->cnt[key] = c + 1;
    p->size++;
}

int ngram_pool_add(ngram_pool *p, int key, const int *ngram) {
    if (key < 0 || key >= p->n_keys) return -1;
    if (p->G == 0) return 0;
    uint32_t h = ngram_hash(ngram, p->n);
    const uint32_t *hs = p->hash + (size_t)key * p->G;
    for (int j = 0; j < p->cnt[key]; j++)
        if (hs[j] == h && memcmp(entry(p, key, j), ngram, sizeof(int) * (size_t)p->n) == 0) {
            drop(p, key, j);
            push(p, key, ngram, h);
            return 0;
        }
    if (p->cnt[key] == p->G) drop(p, key, 0); /* evict the least recent */
    push(p, key, ngram, h);
    return 1;
}

void ngram_pool_touch(ngram_pool *p, int key, int i) {
    const int *g = ngram_pool_get(p, key, i);
    if (!g || i == 0) return;
    int tmp[256];
    memcpy(tmp, g, sizeof(int) * (size_t)p->n);
    int j = p->cnt[key] - 1 - i;
    uint32_t h = p->hash[(size_t)key * p->G + j];
    drop(p, key, j);
    push(p, key, tmp, h);
}

void ngram_pool_remove(ngram_pool *p, int key, int i) {
    if (ngram_pool_get(p, key, i)) drop(p, key, p->cnt[key] - 1 - i);
}
