/* token_store.c: the token datastore and its suffix array (token_store.h). */
#include "util/token_store.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"
#include "util/file.h"
#include "util/hash.h"

/* ---- the suffix array -------------------------------------------------------------------- */

/* Prefix doubling: after the round of length k, rank[i] is the class of the suffix at i cut to
 * k tokens (a shorter suffix before its extensions) and sa lists the suffixes in that order.
 * The next round sorts by (rank[i], rank[i + k], -1 past the end) with one stable counting
 * sort by the first key over an order already sorted by the second: the suffixes too short to
 * have a second key first, then sa's order shifted by k. It stops when every class holds one
 * suffix, after at most log2(n) + 1 rounds of O(n + classes). */
int tstore_sa_build(const uint32_t *s, int n, int vocab, uint32_t *sa, char *err) {
    if (n <= 0) return 0;
    const int K = vocab > n ? vocab : n;
    int *rank = malloc(sizeof(int) * (size_t)n), *tmp = malloc(sizeof(int) * (size_t)n);
    int *cnt = calloc((size_t)K + 1, sizeof(int));
    if (!rank || !tmp || !cnt) {
        free(rank), free(tmp), free(cnt);
        return err_set(err, "suffix array of %d tokens: out of memory", n);
    }
    for (int i = 0; i < n; i++) cnt[s[i] + 1]++;
    for (int c = 0; c < K; c++) cnt[c + 1] += cnt[c];
    for (int i = 0; i < n; i++) sa[cnt[s[i]]++] = (uint32_t)i;
    rank[sa[0]] = 0;
    for (int j = 1; j < n; j++) rank[sa[j]] = rank[sa[j - 1]] + (s[sa[j]] != s[sa[j - 1]]);
    int classes = rank[sa[n - 1]] + 1;
    for (long k = 1; classes < n; k *= 2) {
        int p = 0;
        for (long i = n - k; i < n; i++) tmp[p++] = (int)i;
        for (int j = 0; j < n; j++)
            if (sa[j] >= k) tmp[p++] = (int)(sa[j] - k);
        memset(cnt, 0, sizeof(int) * ((size_t)classes + 1));
        for (int i = 0; i < n; i++) cnt[rank[i] + 1]++;
        for (int c = 0; c < classes; c++) cnt[c + 1] += cnt[c];
        for (int j = 0; j < n; j++) sa[cnt[rank[tmp[j]]]++] = (uint32_t)tmp[j];
        /* the new classes into tmp, then swapped in */
        tmp[sa[0]] = 0;
        for (int j = 1; j < n; j++) {
            long a = sa[j - 1], b = sa[j];
            int ra = a + k < n ? rank[a + k] : -1, rb = b + k < n ? rank[b + k] : -1;
            tmp[b] = tmp[a] + (rank[a] != rank[b] || ra != rb);
        }
        int *t = rank;
        rank = tmp, tmp = t;
        classes = rank[sa[n - 1]] + 1;
    }
    free(rank), free(tmp), free(cnt);
    return 0;
}

/* ---- the file ----------------------------------------------------------------------------- */

static unsigned char *put_u32(unsigned char *b, uint32_t v) {
    for (int i = 0; i < 4; i++) b[i] = (unsigned char)(v >> (8 * i));
    return b + 4;
}

static uint32_t get_u32(const unsigned char *b) {
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static uint64_t get_u64(const unsigned char *b) {
    return get_u32(b) | (uint64_t)get_u32(b + 4) << 32;
}

static unsigned char *put_u64(unsigned char *b, uint64_t v) {
    return put_u32(put_u32(b, (uint32_t)v), (uint32_t)(v >> 32));
}

int tstore_write(const char *path, const uint32_t *tok, int n, int docs, int vocab,
                 uint64_t fingerprint, char *err) {
    if (n < 0 || n > TSTORE_MAX_TOKENS)
        return err_set(err, "%s: %d tokens, more than a datastore holds (%d)", path, n,
                       TSTORE_MAX_TOKENS);
    for (int i = 0; i < n; i++)
        if (tok[i] >= (uint32_t)vocab)
            return err_set(err, "%s: token %u at %d is not in the vocabulary of %d", path, tok[i],
                           i, vocab);
    size_t size = TSTORE_HEADER + 8 * (size_t)n + 8;
    unsigned char *buf = malloc(size);
    uint32_t *sa = malloc(sizeof(uint32_t) * ((size_t)n + 1));
    if (!buf || !sa) {
        free(buf), free(sa);
        return err_set(err, "%s: out of memory for %d tokens", path, n);
    }
    if (tstore_sa_build(tok, n, vocab, sa, err)) {
        free(buf), free(sa);
        return -1;
    }
    memcpy(buf, TSTORE_MAGIC, 8);
    unsigned char *p = put_u32(put_u32(buf + 8, 1), (uint32_t)vocab);
    p = put_u32(put_u32(put_u64(p, fingerprint), (uint32_t)n), (uint32_t)docs);
    for (int i = 0; i < n; i++) p = put_u32(p, tok[i]);
    for (int i = 0; i < n; i++) p = put_u32(p, sa[i]);
    free(sa);
    put_u64(p, hash_fnv1a(buf, size - 8));
    file_out o;
    int rc = file_out_open(&o, path, "datastore", err);
    if (rc == 0) rc = file_out_check_space(&o, size, err);
    if (rc == 0 && fwrite(buf, 1, size, o.f) != size) {
        int e = errno;
        file_out_abort(&o);
        rc = err_set(err, "%s: cannot write the datastore: %s", path, strerror(e));
    } else if (rc == 0)
        rc = file_out_commit(&o, err);
    free(buf);
    return rc;
}

void tstore_free(tstore *s) {
    if (!s) return;
    free(s->tok), free(s->sa);
    free(s);
}

int tstore_load_bytes(tstore **out, const unsigned char *buf, size_t size, int vocab,
                      uint64_t fingerprint, const char *path, char *err) {
    *out = NULL;
    if (size < TSTORE_HEADER + 8)
        return err_set(err, "%s: truncated: %zu bytes, fewer than the %d of an empty datastore",
                       path, size, TSTORE_HEADER + 8);
    if (memcmp(buf, TSTORE_MAGIC, 8) != 0)
        return err_set(err, "%s: byte 0: not a decbench datastore (magic %s)", path, TSTORE_MAGIC);
    uint32_t version = get_u32(buf + 8), fvocab = get_u32(buf + 12);
    uint64_t ffp = get_u64(buf + 16);
    uint32_t n = get_u32(buf + 24), docs = get_u32(buf + 28);
    if (version != 1) return err_set(err, "%s: byte 8: version %u, expected 1", path, version);
    if (fvocab != (uint32_t)vocab)
        return err_set(err, "%s: byte 12: built for a vocabulary of %u tokens, the model has %d",
                       path, fvocab, vocab);
    if (ffp && fingerprint && ffp != fingerprint)
        return err_set(err,
                       "%s: byte 16: built with another vocabulary (fingerprint %016llx, the "
                       "model's tokenizer has %016llx): rebuild it with this model",
                       path, (unsigned long long)ffp, (unsigned long long)fingerprint);
    if (n > TSTORE_MAX_TOKENS)
        return err_set(err, "%s: byte 24: %u tokens, more than a datastore holds (%d)", path, n,
                       TSTORE_MAX_TOKENS);
    if (docs > n) return err_set(err, "%s: byte 28: %u documents in %u tokens", path, docs, n);
    size_t want = TSTORE_HEADER + 8 * (size_t)n + 8;
    if (size < want)
        return err_set(err, "%s: truncated: %zu bytes, the %u tokens at byte 24 need %zu", path,
                       size, n, want);
    if (size > want)
        return err_set(err, "%s: byte %zu: %zu unexpected bytes after the suffix array", path,
                       want - 8, size - want);
    tstore *s = calloc(1, sizeof *s);
    unsigned char *seen = calloc((size_t)n + 1, 1);
    if (s) {
        s->tok = malloc(sizeof(uint32_t) * ((size_t)n + 1));
        s->sa = malloc(sizeof(uint32_t) * ((size_t)n + 1));
    }
    if (!s || !seen || !s->tok || !s->sa) {
        free(seen), tstore_free(s);
        return err_set(err, "%s: out of memory for %u tokens", path, n);
    }
    s->n = (int)n, s->vocab = vocab, s->docs = (int)docs, s->fingerprint = ffp;
    const unsigned char *tp = buf + TSTORE_HEADER, *sp = tp + 4 * (size_t)n;
    int rc = 0;
    for (uint32_t i = 0; rc == 0 && i < n; i++)
        if ((s->tok[i] = get_u32(tp + 4 * (size_t)i)) >= (uint32_t)vocab)
            rc = err_set(err, "%s: byte %zu: token %u (index %u) is not in the vocabulary of %d",
                         path, TSTORE_HEADER + 4 * (size_t)i, s->tok[i], i, vocab);
    for (uint32_t i = 0; rc == 0 && i < n; i++) {
        uint32_t v = get_u32(sp + 4 * (size_t)i);
        size_t at = (size_t)(sp - buf) + 4 * (size_t)i;
        if (v >= n)
            rc = err_set(err, "%s: byte %zu: suffix array entry %u is %u, past the %u tokens", path,
                         at, i, v, n);
        else if (seen[v])
            rc = err_set(err, "%s: byte %zu: suffix array entry %u repeats suffix %u", path, at, i,
                         v);
        else if (i > 0 && s->tok[v] < s->tok[s->sa[i - 1]])
            rc = err_set(err, "%s: byte %zu: suffix array entry %u is out of order", path, at, i);
        else
            seen[v] = 1, s->sa[i] = v;
    }
    free(seen);
    if (rc == 0 && get_u64(buf + size - 8) != hash_fnv1a(buf, size - 8))
        rc =
            err_set(err, "%s: byte %zu: checksum mismatch (the file is corrupted)", path, size - 8);
    if (rc) {
        tstore_free(s);
        return -1;
    }
    *out = s;
    return 0;
}

/* A store of 2^31 tokens is 16 GB; the file's own size is checked against its header. */
#define TSTORE_MAX_BYTES ((uint64_t)TSTORE_HEADER + 8ull * TSTORE_MAX_TOKENS + 8)

int tstore_load(tstore **out, const char *path, int vocab, uint64_t fingerprint, char *err) {
    *out = NULL;
    unsigned char *buf;
    size_t size;
    if (file_read_all(path, "datastore", TSTORE_MAX_BYTES, &buf, &size, err)) return -1;
    int rc = tstore_load_bytes(out, buf, size, vocab, fingerprint, path, err);
    free(buf);
    return rc;
}

/* ---- lookup ------------------------------------------------------------------------------- */

/* The suffix at p against q[0..m): < 0, 0 (it starts with q) or > 0. */
static int cmp_prefix(const tstore *s, uint32_t p, const int *q, int m) {
    for (int i = 0; i < m; i++) {
        if (p + (uint32_t)i >= (uint32_t)s->n) return -1; /* a proper prefix of q: smaller */
        uint32_t a = s->tok[p + i], b = (uint32_t)q[i];
        if (a != b) return a < b ? -1 : 1;
    }
    return 0;
}

int tstore_find(const tstore *s, const int *q, int m, int *lo, int *hi) {
    int a = 0, b = s->n;
    while (a < b) { /* the first suffix >= q */
        int mid = a + (b - a) / 2;
        if (cmp_prefix(s, s->sa[mid], q, m) < 0)
            a = mid + 1;
        else
            b = mid;
    }
    *lo = a;
    b = s->n;
    while (a < b) { /* the first suffix > q (not starting with it) */
        int mid = a + (b - a) / 2;
        if (cmp_prefix(s, s->sa[mid], q, m) <= 0)
            a = mid + 1;
        else
            b = mid;
    }
    *hi = a;
    return *hi - *lo;
}
