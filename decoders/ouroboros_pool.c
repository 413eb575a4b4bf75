/* ouroboros_pool.c: refinement and the pool file of ouroboros_pool.h. */
#include "decoders/ouroboros_pool.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/state_file.h"
#include "util/err.h"

static const char MAGIC[8] = {'D', 'B', 'O', 'U', 'R', 'O', 'P', '1'};
#define HEADER_BYTES (8 + 5 * 4)

void ouro_pool_replace(ngram_pool *p, int key, const int *old, const int *phrase) {
    size_t bytes = sizeof(int) * (size_t)ngram_pool_n(p);
    for (int i = 0; i < ngram_pool_count(p, key); i++)
        if (memcmp(ngram_pool_get(p, key, i), old, bytes) == 0) {
            ngram_pool_remove(p, key, i);
            break;
        }
    ngram_pool_add(p, key, phrase);
}

int ouro_pool_save(const ngram_pool *p, int vocab, const char *path, char *err) {
    const int len = ngram_pool_n(p);
    size_t n_keys = 0, size = HEADER_BYTES + 8;
    for (int k = 0; k < vocab; k++)
        if (ngram_pool_count(p, k)) n_keys++, size += 8 + 4 * (size_t)ngram_pool_count(p, k) * len;
    unsigned char *buf = malloc(size), *b = buf;
    if (!buf) return err_set(err, "%s: out of memory for %zu bytes", path, size);
    b = sf_put_head(b, MAGIC, vocab), b = sf_put_u32(b, (uint32_t)ngram_pool_g(p));
    b = sf_put_u32(b, (uint32_t)len), b = sf_put_u32(b, (uint32_t)n_keys);
    for (int k = 0; k < vocab; k++) {
        int count = ngram_pool_count(p, k);
        if (!count) continue;
        b = sf_put_u32(b, (uint32_t)k), b = sf_put_u32(b, (uint32_t)count);
        for (int i = count - 1; i >= 0; i--) { /* oldest first */
            const int *ph = ngram_pool_get(p, k, i);
            for (int j = 0; j < len; j++) b = sf_put_u32(b, (uint32_t)ph[j]);
        }
    }
    int rc = sf_write(buf, size, "Ouroboros pool", path, err);
    free(buf);
    return rc;
}

/* Checks buf (fill == NULL) or adds its phrases to fill (after a successful check). */
static int parse(const unsigned char *buf, size_t size, int vocab, int len, const char *path,
                 ngram_pool *fill, char *err) {
    if (sf_check_head(buf, size, MAGIC, HEADER_BYTES, vocab, "Ouroboros pool", path, err))
        return -1;
    uint32_t fvocab = (uint32_t)vocab, cap = sf_get_u32(buf + 16), flen = sf_get_u32(buf + 20),
             n_keys = sf_get_u32(buf + 24);
    if (cap < 1 || cap > 65535)
        return err_set(err, "%s: byte 16: %u phrases per key, expected 1..65535", path, cap);
    if (flen != (uint32_t)len)
        return err_set(err, "%s: byte 20: phrases of %u tokens, this decoder's beta is %d", path,
                       flen, len);
    if (n_keys > fvocab)
        return err_set(err, "%s: byte 24: %u keys for a vocabulary of %u", path, n_keys, fvocab);
    size_t at = HEADER_BYTES, end = size - 8;
    long prev = -1;
    int phrase[256];
    for (uint32_t r = 0; r < n_keys; r++) {
        if (end - at < 8)
            return err_set(err, "%s: byte %zu: truncated in key record %u of %u", path, at, r + 1,
                           n_keys);
        uint32_t key = sf_get_u32(buf + at), n = sf_get_u32(buf + at + 4);
        if ((long)key <= prev || key >= fvocab)
            return err_set(err, "%s: byte %zu: key %u, expected %ld..%u (keys increase)", path, at,
                           key, prev + 1, fvocab - 1);
        if (n < 1 || n > cap)
            return err_set(err, "%s: byte %zu: key %u has %u phrases, expected 1..%u", path, at + 4,
                           key, n, cap);
        at += 8;
        if ((end - at) / 4 / flen < n)
            return err_set(err, "%s: byte %zu: truncated in the phrases of key %u", path, at, key);
        for (uint32_t i = 0; i < n; i++) { /* oldest first: adding them in order keeps LRU */
            for (uint32_t j = 0; j < flen; j++, at += 4) {
                uint32_t t = sf_get_u32(buf + at);
                if (t >= fvocab)
                    return err_set(err, "%s: byte %zu: token %u outside the vocabulary of %u", path,
                                   at, t, fvocab);
                phrase[j] = (int)t;
            }
            if (fill) ngram_pool_add(fill, (int)key, phrase);
        }
        prev = key;
    }
    return sf_check_end(buf, at, end, path, err);
}

int ouro_pool_load(ngram_pool *p, int vocab, const char *path, char *err) {
    size_t size = 0;
    unsigned char *buf;
    if (sf_read(path, "pool", &buf, &size, err)) return -1;
    int rc = parse(buf, size, vocab, ngram_pool_n(p), path, NULL, err);
    if (rc == 0) {
        ngram_pool_clear(p);
        parse(buf, size, vocab, ngram_pool_n(p), path, p, err);
    }
    free(buf);
    return rc;
}
