/* tok_bpe.c: byte-level BPE vocabularies (GGUF tokenizer.ggml.model = "gpt2": GPT-2, Llama-3,
 * Qwen2/2.5/3, DeepSeek, StarCoder, ...): the "gpt2" row of the vocabulary-type table
 * (tokenizer.c), llama.cpp's llm_tokenizer_bpe.
 *
 * Encoding a raw text stretch (special tokens are matched before, in tokenizer.c):
 *   1. UTF-8 as llama.cpp reads it: a byte that does not start a sequence, or a sequence cut
 *      short, becomes U+FFFD; overlong forms are read as the code point they spell. Surrogates
 *      and values past U+10FFFF (which llama.cpp keeps as bytes or throws on) also become
 *      U+FFFD here, so the pre-tokenizer always sees valid UTF-8.
 *   2. The pre-tokenizer (tok_pre.c, by tokenizer.ggml.pre) cuts the text into words.
 *   3. Each byte of a word stands for the printable code point GPT-2 assigned it (bytes
 *      0x21-0x7E, 0xA1-0xAC, 0xAE-0xFF are themselves, the other 68 become U+0100..U+0143 in
 *      byte order), one symbol per byte. With ignore_merges (Llama-3) a word that is a token
 *      is that token. Otherwise adjacent symbols merge by the merge list, lowest rank first,
 *      leftmost on ties, until no pair is in the list (llama.cpp's llm_bigram_bpe order).
 *   4. Each final symbol is its token; a symbol that is no token (in a vocabulary lacking a
 *      byte's stand-in, or made by a merge whose result is no token) becomes the tokens of its
 *      single bytes, if any, as in llama.cpp.
 * The merge loop works on ids, so that a pair lookup is one hash probe on two integers and
 * nothing is allocated per word. Hugging Face's BPE merges two tokens into a token; llama.cpp
 * merges any two strings its list names, and so do we: a string of the merge list that is no
 * token gets an id past the vocabulary's (an "extra"), never emitted itself (step 4). A merge
 * entry without a space after its first byte names nothing llama.cpp could match and is
 * skipped. Both are warned about (tok_warnings).
 *
 * Decoding maps each code point of a normal token back to its byte (a code point outside the
 * map, which llama.cpp prints as "[UNK_BYTE_0x..]", is kept as its UTF-8, and so is a byte
 * that is not valid UTF-8: such tokens load with a warning, as llama.cpp reads them);
 * user-defined tokens are their text, control tokens nothing. Pieces have no length limit.
 * llama.cpp's optional clean-up of spaces before punctuation (clean_spaces) is not applied:
 * decoding stays the exact inverse of encoding. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/formats/gguf.h"
#include "model/tokenizer/tok_internal.h"
#include "util/err.h"
#include "util/hash.h"
#include "util/huge.h"
#include "util/heap.h"

#define MAPPED_CP_END 0x144 /* the stand-ins are below U+0144 */

typedef struct {
    int32_t left, right; /* token ids; left = -1 marks an empty slot */
    int32_t rank, result;
} merge;

/* A slot of the token table: the id and its text's FNV-1a hash (low 32 bits), so that a probe
 * that meets another text rarely reads that text. */
typedef struct {
    int32_t id;
    uint32_t h;
} tslot;

typedef struct {
    char *text;          /* arena: stored token texts, each NUL-terminated */
    uint32_t *off, *len; /* per id, into text */
    char *dec;           /* arena: what each token decodes to */
    uint32_t *dec_off, *dec_len;
    tslot *hash; /* token text -> id, open addressing, id -1 = empty */
    uint32_t hash_cap;
    merge *merges; /* (left, right) -> rank and result, open addressing */
    uint32_t merge_cap;
    /* Extras: strings of the merge list that are no token, with ids n, n + 1, ... */
    char *xtext;
    uint32_t *xoff, *xlen;
    int32_t *xhash; /* extra text -> index, open addressing, -1 = empty */
    uint32_t n_x, cap_x, xtext_len, xtext_cap, xhash_cap;
    int n;               /* the vocabulary's size: the first extra id */
    char mapped[256][2]; /* the stand-in of each byte, UTF-8 */
    uint8_t mapped_len[256];
    int byte_tok[256]; /* the token of each byte's stand-in, or -1 */
    tok_pre *pre;
    char pre_name[64];
    int ignore_merges;
} bpe;

/* GPT-2's bytes_to_unicode: the code point standing for byte b. */
static uint32_t stand_in(int b) {
    if ((b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff))
        return (uint32_t)b;
    uint32_t n = 0;
    for (int c = 0; c < b; c++)
        n += !((c >= 0x21 && c <= 0x7e) || (c >= 0xa1 && c <= 0xac) || (c >= 0xae && c <= 0xff));
    return 256 + n;
}

static size_t utf8_put(uint32_t cp, char *out) {
    if (cp < 0x80) return out[0] = (char)cp, 1;
    if (cp < 0x800) {
        out[0] = (char)(0xc0 | (cp >> 6));
        out[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (char)(0xe0 | (cp >> 12));
        out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        out[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    out[0] = (char)(0xf0 | (cp >> 18));
    out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    out[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

/* The code point of the valid sequence at s (len bytes from tok_utf8_valid_len). */
static uint32_t utf8_get(const unsigned char *s, size_t len) {
    if (len == 1) return s[0];
    if (len == 2) return (uint32_t)(s[0] & 0x1f) << 6 | (s[1] & 0x3f);
    if (len == 3)
        return (uint32_t)(s[0] & 0x0f) << 12 | (uint32_t)(s[1] & 0x3f) << 6 | (s[2] & 0x3f);
    return (uint32_t)(s[0] & 0x07) << 18 | (uint32_t)(s[1] & 0x3f) << 12 |
           (uint32_t)(s[2] & 0x3f) << 6 | (s[3] & 0x3f);
}

static const char *bpe_piece(const tok *t, int id) {
    const bpe *v = t->impl;
    return v->text + v->off[id];
}

static void bpe_free(void *impl) {
    bpe *v = impl;
    free(v->text);
    free(v->off);
    free(v->len);
    free(v->dec);
    free(v->dec_off);
    free(v->dec_len);
    free(v->hash);
    free(v->merges);
    free(v->xtext);
    free(v->xoff);
    free(v->xlen);
    free(v->xhash);
    tok_pre_free(v->pre);
    free(v);
}

/* The id of the token whose text is a[0..na) followed by b[0..nb) (h: hash_fnv1a of it), or
 * -1. */
static int lookup2_h(const bpe *v, const char *a, size_t na, const char *b, size_t nb,
                     uint64_t h) {
    for (uint32_t at = (uint32_t)h & (v->hash_cap - 1); v->hash[at].id >= 0;
         at = (at + 1) & (v->hash_cap - 1)) {
        const int id = v->hash[at].id;
        if (v->hash[at].h != (uint32_t)h || v->len[id] != na + nb) continue;
        const char *t = v->text + v->off[id];
        if (memcmp(t, a, na) == 0 && (!nb || memcmp(t + na, b, nb) == 0)) return id;
    }
    return -1;
}

static int lookup_h(const bpe *v, const char *s, size_t n, uint64_t h) {
    return lookup2_h(v, s, n, NULL, 0, h);
}

static int lookup(const bpe *v, const char *s, size_t n) {
    return lookup_h(v, s, n, hash_fnv1a(s, n));
}

static uint32_t pair_hash(int32_t a, int32_t b) {
    uint64_t x = (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
    x *= 0x9e3779b97f4a7c15ull;
    return (uint32_t)(x >> 32);
}

/* The merge of tokens a and b, or NULL. */
static const merge *find_merge(const bpe *v, int32_t a, int32_t b) {
    uint32_t h = pair_hash(a, b) & (v->merge_cap - 1);
    for (; v->merges[h].left >= 0; h = (h + 1) & (v->merge_cap - 1))
        if (v->merges[h].left == a && v->merges[h].right == b) return &v->merges[h];
    return NULL;
}

/* s[0..n) quoted for a one-line message: printable ASCII kept, the rest as \xNN, cut at 40. */
static const char *quote(const char *s, size_t n, char *buf, size_t cap) {
    size_t o = 0;
    for (size_t i = 0; i < n && o + 8 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        if (i == 40) {
            o += (size_t)snprintf(buf + o, cap - o, "...");
            break;
        }
        if (c >= 0x20 && c < 0x7f && c != '\\' && c != '\'')
            buf[o++] = (char)c;
        else
            o += (size_t)snprintf(buf + o, cap - o, "\\x%02x", c);
    }
    buf[o] = 0;
    return buf;
}

static int bpe_find(const tok *t, const char *s, size_t n) {
    return lookup(t->impl, s, n);
}

/* The extra id of s[0..n) (a string of the merge list that is no token), added if new; -1
 * when out of memory. */
static int32_t extra_id(bpe *v, const char *s, size_t n) {
    if (v->xhash) {
        uint32_t h = (uint32_t)hash_fnv1a(s, n) & (v->xhash_cap - 1);
        for (; v->xhash[h] >= 0; h = (h + 1) & (v->xhash_cap - 1)) {
            int32_t x = v->xhash[h];
            if (v->xlen[x] == n && memcmp(v->xtext + v->xoff[x], s, n) == 0) return v->n + x;
        }
    }
    if (v->n_x == v->cap_x) { /* grow the lists and rehash */
        uint32_t cap = v->cap_x ? 2 * v->cap_x : 64;
        uint32_t *off = realloc(v->xoff, cap * sizeof *off), *len;
        if (!off) return -1;
        v->xoff = off;
        if (!(len = realloc(v->xlen, cap * sizeof *len))) return -1;
        v->xlen = len;
        int32_t *hash = malloc(2 * cap * sizeof *hash);
        if (!hash) return -1;
        memset(hash, 0xff, 2 * cap * sizeof *hash);
        for (uint32_t x = 0; x < v->n_x; x++) {
            uint32_t h = (uint32_t)hash_fnv1a(v->xtext + v->xoff[x], v->xlen[x]) & (2 * cap - 1);
            while (hash[h] >= 0) h = (h + 1) & (2 * cap - 1);
            hash[h] = (int32_t)x;
        }
        free(v->xhash);
        v->xhash = hash, v->xhash_cap = 2 * cap, v->cap_x = cap;
    }
    if (!v->xtext || v->xtext_len + n > v->xtext_cap) { /* allocated even for "": no NULL + 0 */
        size_t cap = v->xtext_cap ? v->xtext_cap : 256;
        while (cap < v->xtext_len + n) cap *= 2;
        if (cap > UINT32_MAX) return -1;
        char *text = realloc(v->xtext, cap);
        if (!text) return -1;
        v->xtext = text, v->xtext_cap = (uint32_t)cap;
    }
    uint32_t x = v->n_x++;
    v->xoff[x] = v->xtext_len, v->xlen[x] = (uint32_t)n;
    if (n) memcpy(v->xtext + v->xtext_len, s, n); /* "a " names the empty string */
    v->xtext_len += (uint32_t)n;
    uint32_t h = (uint32_t)hash_fnv1a(s, n) & (v->xhash_cap - 1);
    while (v->xhash[h] >= 0) h = (h + 1) & (v->xhash_cap - 1);
    v->xhash[h] = (int32_t)x;
    return v->n + (int32_t)x;
}

/* The id of a string of the merge list, a[0..na) then b[0..nb) (h: its hash_fnv1a): its token,
 * else an extra id, the string then copied whole into *buf (-1: out of memory). */
static int32_t merge_part(bpe *v, const char *a, size_t na, const char *b, size_t nb, uint64_t h,
                          int *extra, char **buf, size_t *cap) {
    int id = lookup2_h(v, a, na, b, nb, h);
    if (id >= 0) return id;
    *extra = 1;
    if (!nb) return extra_id(v, a, na);
    if (na + nb > *cap) {
        free(*buf);
        *cap = 2 * (na + nb);
        if (!(*buf = malloc(*cap))) {
            *cap = 0;
            return -1;
        }
    }
    memcpy(*buf, a, na), memcpy(*buf + na, b, nb);
    return extra_id(v, *buf, na + nb);
}

/* Tokens: texts (distinct), types, the text index. */
static int load_tokens(tok *t, bpe *v, const gguf *g, char *err) {
    const char *path = gguf_path(g);
    uint64_t n;
    char q[200];
    if (gguf_get_arr_len(g, "tokenizer.ggml.tokens", GGUF_STRING, &n, err)) return -1;
    if (n < 1 || n > INT_MAX / 4)
        return err_set(err, "%s: tokenizer.ggml.tokens has %llu tokens (need 1..%d)", path,
                       (unsigned long long)n, INT_MAX / 4);
    t->n = v->n = (int)n;
    v->off = malloc(n * sizeof *v->off);
    v->len = malloc(n * sizeof *v->len);
    if (!v->off || !v->len)
        return err_set(err, "%s: out of memory for %llu tokens", path, (unsigned long long)n);
    if (tok_read_types(t, g, err)) return -1;
    size_t total = 0;
    uint64_t invalid = 0, first_invalid = 0;
    size_t invalid_at = 0;
    for (uint64_t i = 0; i < n; i++) {
        gguf_str s;
        if (gguf_get_arr_str(g, "tokenizer.ggml.tokens", i, &s, err)) return -1;
        for (size_t at = 0; at < s.len;) {
            size_t l = tok_utf8_valid_len((const unsigned char *)s.ptr + at, s.len - at);
            if (!l) {
                if (!invalid++) first_invalid = i, invalid_at = at;
                break;
            }
            at += l;
        }
        total += (s.len ? s.len : 24) + 1;
    }
    if (total > UINT32_MAX) return err_set(err, "%s: the token texts exceed 4 GB", path);
    if (!(v->text = malloc(total)))
        return err_set(err, "%s: out of memory for the token texts", path);
    v->hash_cap = 16;
    while (v->hash_cap < 2u * (uint32_t)n) v->hash_cap *= 2;
    if (!(v->hash = huge_alloc(v->hash_cap * sizeof *v->hash)))
        return err_set(err, "%s: out of memory", path);
    for (uint32_t i = 0; i < v->hash_cap; i++) v->hash[i].id = -1;
    size_t pos = 0;
    for (uint64_t i = 0; i < n; i++) {
        gguf_str s;
        gguf_get_arr_str(g, "tokenizer.ggml.tokens", i, &s, err);
        v->off[i] = (uint32_t)pos;
        if (s.len == 0) /* llama.cpp names an empty token this way, so it can never match */
            pos += (size_t)sprintf(v->text + pos, "[EMPTY_%llu]", (unsigned long long)i);
        else
            memcpy(v->text + pos, s.ptr, s.len), pos += s.len;
        v->len[i] = (uint32_t)(pos - v->off[i]);
        v->text[pos++] = 0;
        const char *k = v->text + v->off[i];
        const uint64_t h = hash_fnv1a(k, v->len[i]);
        int dup = lookup_h(v, k, v->len[i], h);
        if (dup >= 0) /* llama.cpp asserts that every text is one token */
            return err_set(err, "%s: tokenizer.ggml.tokens[%llu] '%s' repeats token %d", path,
                           (unsigned long long)i, quote(k, v->len[i], q, sizeof q), dup);
        uint32_t at = (uint32_t)h & (v->hash_cap - 1);
        while (v->hash[at].id >= 0) at = (at + 1) & (v->hash_cap - 1);
        v->hash[at] = (tslot){(int32_t)i, (uint32_t)h};
    }
    if (invalid)
        tok_warn(t,
                 "%s: tokenizer.ggml.tokens: %llu texts are not valid UTF-8 (first: [%llu] '%s', "
                 "byte %zu): kept, as llama.cpp keeps them (they decode to their bytes)",
                 path, (unsigned long long)invalid, (unsigned long long)first_invalid,
                 quote(v->text + v->off[first_invalid], v->len[first_invalid], q, sizeof q),
                 invalid_at);
    return 0;
}

/* One entry of the merge list on its way into the table: its parts a and b, their hashes and
 * their join's, their ids. */
typedef struct {
    const char *a, *b;
    size_t la, lb;
    uint64_t ha, hb, hab;
    int32_t ia, ib, iab;
    int split; /* 0: no space to split at */
} merge_entry;

/* Merges "A B" (split at the first space after the first byte, as llama.cpp does); a repeated
 * pair keeps its first (best) rank. See the header comment for entries that name no token.
 * MERGE_BATCH entries at a time, in three passes: each part's token slot fetched while the
 * others are hashed, then the lookups, each merge's slot fetched, then the inserts, in the
 * list's order (the same table as one entry at a time). One at a time, every lookup and insert
 * waited on a miss: llama-bpe's 280000 merges took 47-57 ms, in batches 33-36 ms (Zen 5 VM,
 * both with the tables in huge pages, which took them from 120 ms). */
#define MERGE_BATCH 32
static int load_merges(tok *t, bpe *v, const gguf *g, char *err) {
    const char *path = gguf_path(g);
    uint64_t n;
    char q[200];
    if (gguf_get_arr_len(g, "tokenizer.ggml.merges", GGUF_STRING, &n, err)) return -1;
    if (n > INT_MAX / 4)
        return err_set(err, "%s: tokenizer.ggml.merges has %llu entries", path,
                       (unsigned long long)n);
    v->merge_cap = 16;
    while (v->merge_cap < 2u * (uint32_t)n) v->merge_cap *= 2;
    if (!(v->merges = huge_alloc(v->merge_cap * sizeof *v->merges)))
        return err_set(err, "%s: out of memory for %llu merges", path, (unsigned long long)n);
    for (uint32_t i = 0; i < v->merge_cap; i++) v->merges[i].left = -1;
    char *joined = NULL;
    size_t joined_cap = 0;
    uint64_t unsplit = 0, first_unsplit = 0, untoken = 0, first_untoken = 0;
    int rc = -1;
    merge_entry e[MERGE_BATCH];
    for (uint64_t i0 = 0; i0 < n; i0 += MERGE_BATCH) {
        const int nb = n - i0 < MERGE_BATCH ? (int)(n - i0) : MERGE_BATCH;
        for (int k = 0; k < nb; k++) { /* 1: the parts, their hashes, their slots fetched */
            gguf_str s;
            if (gguf_get_arr_str(g, "tokenizer.ggml.merges", i0 + k, &s, err)) goto done;
            const char *sp = s.len > 1 ? memchr(s.ptr + 1, ' ', s.len - 1) : NULL;
            e[k].a = s.ptr, e[k].split = sp != NULL;
            if (!sp) {
                if (!unsplit++) first_unsplit = i0 + k;
                continue;
            }
            e[k].la = (size_t)(sp - s.ptr), e[k].b = sp + 1, e[k].lb = s.len - e[k].la - 1;
            e[k].ha = hash_fnv1a(e[k].a, e[k].la), e[k].hb = hash_fnv1a(e[k].b, e[k].lb);
            e[k].hab = hash_fnv1a_more(e[k].ha, e[k].b, e[k].lb);
            __builtin_prefetch(&v->hash[(uint32_t)e[k].ha & (v->hash_cap - 1)]);
            __builtin_prefetch(&v->hash[(uint32_t)e[k].hb & (v->hash_cap - 1)]);
            __builtin_prefetch(&v->hash[(uint32_t)e[k].hab & (v->hash_cap - 1)]);
        }
        for (int k = 0; k < nb; k++) { /* 2: the ids, the merge's slot fetched */
            if (!e[k].split) continue;
            int extra = 0;
            e[k].ia =
                merge_part(v, e[k].a, e[k].la, NULL, 0, e[k].ha, &extra, &joined, &joined_cap);
            e[k].ib =
                merge_part(v, e[k].b, e[k].lb, NULL, 0, e[k].hb, &extra, &joined, &joined_cap);
            e[k].iab = merge_part(v, e[k].a, e[k].la, e[k].b, e[k].lb, e[k].hab, &extra, &joined,
                                  &joined_cap);
            if (e[k].ia < 0 || e[k].ib < 0 || e[k].iab < 0) {
                err_set(err, "%s: out of memory for the merges", path);
                goto done;
            }
            if (extra && !untoken++) first_untoken = i0 + k;
            __builtin_prefetch(&v->merges[pair_hash(e[k].ia, e[k].ib) & (v->merge_cap - 1)]);
        }
        for (int k = 0; k < nb; k++) { /* 3: into the table, in the list's order */
            if (!e[k].split || find_merge(v, e[k].ia, e[k].ib)) continue;
            uint32_t h = pair_hash(e[k].ia, e[k].ib) & (v->merge_cap - 1);
            while (v->merges[h].left >= 0) h = (h + 1) & (v->merge_cap - 1);
            v->merges[h] = (merge){e[k].ia, e[k].ib, (int32_t)(i0 + k), e[k].iab};
        }
    }
    gguf_str s;
    if (unsplit) {
        gguf_get_arr_str(g, "tokenizer.ggml.merges", first_unsplit, &s, err);
        tok_warn(t,
                 "%s: tokenizer.ggml.merges: %llu entries are not two strings separated by a "
                 "space (first: [%llu] '%s'): ignored, as llama.cpp can never apply them",
                 path, (unsigned long long)unsplit, (unsigned long long)first_unsplit,
                 quote(s.ptr, s.len, q, sizeof q));
    }
    if (untoken) {
        gguf_get_arr_str(g, "tokenizer.ggml.merges", first_untoken, &s, err);
        tok_warn(t,
                 "%s: tokenizer.ggml.merges: %llu entries name or make a string that is no token "
                 "(first: [%llu] '%s'): applied as llama.cpp applies them (a result that is no "
                 "token is written as the tokens of its bytes)",
                 path, (unsigned long long)untoken, (unsigned long long)first_untoken,
                 quote(s.ptr, s.len, q, sizeof q));
    }
    rc = 0;
done:
    free(joined);
    return rc;
}

/* What each token decodes to (see the header comment), once the types are final (tokenizer.c
 * makes the end-of-turn texts control tokens after the load); and the token of each byte. */
static int bpe_finish(tok *t, const char *path, char *err) {
    bpe *v = t->impl;
    for (int b = 0; b < 256; b++) {
        v->mapped_len[b] = (uint8_t)utf8_put(stand_in(b), v->mapped[b]);
        v->byte_tok[b] = lookup(v, v->mapped[b], v->mapped_len[b]);
        if (v->byte_tok[b] < 0 && v->xhash) { /* a stand-in that only the merge list names */
            uint32_t h = (uint32_t)hash_fnv1a(v->mapped[b], v->mapped_len[b]) & (v->xhash_cap - 1);
            for (; v->xhash[h] >= 0 && v->byte_tok[b] < 0; h = (h + 1) & (v->xhash_cap - 1)) {
                int32_t x = v->xhash[h];
                if (v->xlen[x] == v->mapped_len[b] &&
                    memcmp(v->xtext + v->xoff[x], v->mapped[b], v->mapped_len[b]) == 0)
                    v->byte_tok[b] = v->n + x;
            }
        }
    }
    size_t total = 0;
    for (int i = 0; i < t->n; i++) total += v->len[i] + 1;
    v->dec = malloc(total ? total : 1);
    v->dec_off = malloc((size_t)t->n * sizeof *v->dec_off);
    v->dec_len = malloc((size_t)t->n * sizeof *v->dec_len);
    if (!v->dec || !v->dec_off || !v->dec_len) return err_set(err, "%s: out of memory", path);
    int16_t byte_of[MAPPED_CP_END];
    for (int c = 0; c < MAPPED_CP_END; c++) byte_of[c] = -1;
    for (int b = 0; b < 256; b++) byte_of[stand_in(b)] = (int16_t)b;
    size_t pos = 0;
    for (int i = 0; i < t->n; i++) {
        const unsigned char *s = (const unsigned char *)v->text + v->off[i];
        size_t n = v->len[i], start = pos;
        v->dec_off[i] = (uint32_t)pos;
        if (t->type[i] == TT_USER) {
            memcpy(v->dec + pos, s, n), pos += n;
        } else if (t->type[i] == TT_NORMAL) {
            for (size_t at = 0; at < n;) {
                size_t l = tok_utf8_valid_len(s + at, n - at);
                uint32_t cp = l ? utf8_get(s + at, l) : MAPPED_CP_END;
                if (!l) l = 1; /* a byte that is not UTF-8: itself */
                if (cp < MAPPED_CP_END && byte_of[cp] >= 0)
                    v->dec[pos++] = (char)byte_of[cp];
                else
                    memcpy(v->dec + pos, s + at, l), pos += l;
                at += l;
            }
        } /* control, unknown, unused, byte, undefined: nothing, as in llama.cpp */
        v->dec_len[i] = (uint32_t)(pos - start);
        v->dec[pos++] = 0;
    }
    return 0;
}

/* Tokens, merges and the pre-tokenizer (with its add-BOS default); the special ids follow in
 * tokenizer.c, then bpe_finish. */
static int bpe_load_gguf(tok *t, const gguf *g, char *err) {
    const char *path = gguf_path(g);
    bpe *v = calloc(1, sizeof *v);
    if (!v) return err_set(err, "%s: out of memory", path);
    t->impl = v;
    if (load_tokens(t, v, g, err) || load_merges(t, v, g, err)) return -1;
    const char *pre = "default"; /* llama.cpp's choice (with a warning) when the key is absent */
    if (gguf_find_key(g, "tokenizer.ggml.pre") >= 0 &&
        gguf_get_str(g, "tokenizer.ggml.pre", &pre, err))
        return -1;
    if (tok_pre_open(&v->pre, pre, &v->ignore_merges, &t->add_bos, err)) {
        char msg[ERR_LEN];
        snprintf(msg, sizeof msg, "%s", err);
        return err_set(err, "%s: tokenizer.ggml.pre: %s", path, msg);
    }
    snprintf(v->pre_name, sizeof v->pre_name, "%s", pre);
    t->pre = v->pre_name;
    return 0;
}

/* ---- encoding -------------------------------------------------------------------------- */

/* Step 1 of the header comment: text[0..len) as valid UTF-8 in out (room for 3 * len). */
static size_t sanitize(const unsigned char *s, size_t len, char *out) {
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        unsigned char c = s[i];
        size_t l = (c & 0x80) == 0   ? 1
                   : (c & 0x40) == 0 ? 0
                   : (c & 0x20) == 0 ? 2
                   : (c & 0x10) == 0 ? 3
                   : (c & 0x08) == 0 ? 4
                                     : 0;
        for (size_t k = 1; k < l && l; k++)
            if (i + k >= len || (s[i + k] & 0xc0) != 0x80) l = 0;
        uint32_t cp = 0xfffd;
        if (l == 1) cp = c;
        if (l == 2) cp = (uint32_t)(c & 0x1f) << 6 | (s[i + 1] & 0x3f);
        if (l == 3)
            cp = (uint32_t)(c & 0x0f) << 12 | (uint32_t)(s[i + 1] & 0x3f) << 6 | (s[i + 2] & 0x3f);
        if (l == 4)
            cp = (uint32_t)(c & 0x07) << 18 | (uint32_t)(s[i + 1] & 0x3f) << 12 |
                 (uint32_t)(s[i + 2] & 0x3f) << 6 | (s[i + 3] & 0x3f);
        if ((cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) cp = 0xfffd;
        o += utf8_put(cp, out + o);
        i += l ? l : 1;
    }
    return o;
}

typedef struct {
    int32_t id;         /* token, or -1 for a byte whose stand-in is no token */
    int32_t start, len; /* bytes of the word; len 0 once merged into its left */
    int32_t prev, next;
} symbol;

typedef struct {
    int32_t rank, left, right, len, result;
} bigram;

/* Min-heap order: lowest rank, then leftmost (llama.cpp's llm_bigram_bpe comparator). */
static int before(const bigram *a, const bigram *b) {
    return a->rank < b->rank || (a->rank == b->rank && a->left < b->left);
}

HEAP_DEFINE(bigram, before)

static void try_pair(const bpe *v, const symbol *sym, int left, bigram *heap, int *nheap) {
    if (left < 0 || sym[left].next < 0) return;
    int right = sym[left].next;
    if (sym[left].id < 0 || sym[right].id < 0) return;
    const merge *m = find_merge(v, sym[left].id, sym[right].id);
    if (m)
        bigram_heap_push(heap, nheap,
                         (bigram){m->rank, left, right, sym[left].len + sym[right].len, m->result});
}

typedef struct {
    symbol *sym;
    bigram *heap;
    char *mapped; /* a word in stand-ins, for ignore_merges */
} scratch;

static int emit(int id, int *ids, int *count, size_t cap, char *err) {
    if ((size_t)*count >= cap)
        return err_set(err,
                       "tok_encode: more than strlen + 3 = %zu tokens (the vocabulary "
                       "lacks byte tokens?)",
                       cap);
    ids[(*count)++] = id;
    return 0;
}

/* Steps 3-4 for one word w[0..k). */
static int encode_word(const bpe *v, const unsigned char *w, int k, scratch *s, int *ids,
                       int *count, size_t cap, char *err) {
    if (v->ignore_merges || k == 1) {
        size_t m = 0;
        for (int i = 0; i < k; i++) {
            memcpy(s->mapped + m, v->mapped[w[i]], v->mapped_len[w[i]]);
            m += v->mapped_len[w[i]];
        }
        int id = lookup(v, s->mapped, m);
        if (id >= 0) return emit(id, ids, count, cap, err);
    }
    symbol *sym = s->sym;
    for (int i = 0; i < k; i++)
        sym[i] = (symbol){v->byte_tok[w[i]], i, 1, i - 1, i + 1 < k ? i + 1 : -1};
    int nheap = 0;
    for (int i = 0; i + 1 < k; i++) try_pair(v, sym, i, s->heap, &nheap);
    while (nheap > 0) {
        bigram b = bigram_heap_pop(s->heap, &nheap);
        symbol *l = &sym[b.left], *r = &sym[b.right];
        if (l->len == 0 || r->len == 0 || l->next != b.right || l->len + r->len != b.len) continue;
        l->id = b.result;
        l->len += r->len;
        r->len = 0;
        l->next = r->next;
        if (r->next >= 0) sym[r->next].prev = b.left;
        try_pair(v, sym, l->prev, s->heap, &nheap);
        try_pair(v, sym, b.left, s->heap, &nheap);
    }
    for (int i = 0; i >= 0; i = sym[i].next) {
        if (sym[i].id >= 0 && sym[i].id < v->n) {
            if (emit(sym[i].id, ids, count, cap, err)) return -1;
            continue;
        }
        /* No token (a lone byte without a token for its stand-in, or a merge's result that is
         * no token): the tokens of its text's single bytes, as llama.cpp writes it. */
        for (int c = sym[i].start; c < sym[i].start + sym[i].len; c++) {
            const char *m = v->mapped[w[c]];
            for (int j = 0; j < v->mapped_len[w[c]]; j++) {
                int id = lookup(v, m + j, 1);
                if (id >= 0 && emit(id, ids, count, cap, err)) return -1;
            }
        }
    }
    return 0;
}

static int bpe_encode(const tok *t, const char *text, size_t len, int *ids, int *n, size_t cap,
                      char *err) {
    const bpe *v = t->impl;
    if (len == 0) return 0;
    /* Valid UTF-8 (the usual case) is used in place. */
    size_t at = 0, l;
    while (at < len && (l = tok_utf8_valid_len((const unsigned char *)text + at, len - at)))
        at += l;
    char *clean = NULL;
    if (at < len) {
        if (!(clean = malloc(3 * len))) return err_set(err, "tok_encode: out of memory");
        len = sanitize((const unsigned char *)text, len, clean);
        text = clean;
    }
    if (len > INT32_MAX / 4) {
        free(clean);
        return err_set(err, "tok_encode: text of %zu bytes is too long", len);
    }
    tok_span *words = malloc(2 * (len + 1) * sizeof *words);
    tok_pre_scratch *ps = tok_pre_scratch_new(v->pre);
    scratch s = {0};
    int rc = -1;
    size_t nw = 0, longest = 0;
    if (!words || !ps) {
        err_set(err, "tok_encode: out of memory for %zu bytes of text", len);
        goto done;
    }
    if (tok_pre_split(v->pre, ps, text, len, words, words + len + 1, len + 1, &nw, err)) goto done;
    for (size_t i = 0; i < nw; i++)
        if (words[i].len > longest) longest = words[i].len;
    s.sym = malloc(longest * sizeof *s.sym);
    s.heap = malloc(3 * longest * sizeof *s.heap);
    s.mapped = malloc(2 * longest);
    if (!s.sym || !s.heap || !s.mapped) {
        err_set(err, "tok_encode: out of memory for a word of %zu bytes", longest);
        goto done;
    }
    for (size_t i = 0; i < nw; i++)
        if (encode_word(v, (const unsigned char *)text + words[i].start, (int)words[i].len, &s, ids,
                        n, cap, err))
            goto done;
    rc = 0;
done:
    free(s.sym);
    free(s.heap);
    free(s.mapped);
    tok_pre_scratch_free(ps);
    free(words);
    free(clean);
    return rc;
}

/* ---- decoding -------------------------------------------------------------------------- */

static const char *bpe_text(const tok *t, int prev, int id, size_t *len) {
    (void)prev;
    const bpe *v = t->impl;
    *len = v->dec_len[id];
    return v->dec + v->dec_off[id];
}

const tok_kind tok_kind_bpe = {
    .model = "gpt2",
    .what = "byte-level BPE",
    .def_bos = 11, /* llama.cpp's defaults for "gpt2" vocabularies (GPT-2's token 11 is ",") */
    .def_eos = 11,
    .def_unk = -1,
    .load_gguf = bpe_load_gguf,
    .finish = bpe_finish,
    .find = bpe_find,
    .encode = bpe_encode,
    .text = bpe_text,
    .piece = bpe_piece,
    .free_impl = bpe_free,
};
