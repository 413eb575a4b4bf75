/* tok_spm.c: SentencePiece BPE vocabularies (llama2.c tokenizer files and GGUF "llama"
 * vocabularies) with encoding and decoding: the "llama" row of the vocabulary-type table
 * (tokenizer.c), llama.cpp's llm_tokenizer_spm. See tokenizer.h.
 *
 * Internally every piece is kept twice: as stored in the file (tok_piece) and in its
 * SentencePiece form, where a space is '▁' (U+2581). llama2.c files store '▁' as ' ', so
 * their pieces are converted on load; the text to encode gets the same conversion, which is
 * also what SentencePiece and llama.cpp do (a literal '▁' in the text therefore encodes like a
 * space, as it does there). */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/formats/gguf.h"
#include "model/tokenizer/tok_internal.h"
#include "util/err.h"
#include "util/hash.h"
#include "util/heap.h"

#define SPACE_MARK "\xe2\x96\x81" /* '▁', SentencePiece's whitespace symbol */
/* Longest decoded piece: SentencePiece vocabularies keep the limit they always had. */
#define SPM_PIECE_MAX 128

typedef struct {
    char *text; /* arena: per id, the stored piece then the key, NUL-terminated */
    size_t *piece_off, *key_off;
    uint32_t *key_len;
    float *score;
    uint8_t *byte;    /* the byte of a TT_BYTE token */
    int byte_id[256]; /* the <0xXX> token of each byte, or -1 */
    int32_t *hash;    /* key -> id for mergeable pieces; open addressing, -1 = empty */
    uint32_t hash_cap;
    int unk, add_space;
} spm;

/* One vocabulary entry as read from a file, before conversion. */
typedef struct {
    const char *piece;
    size_t len;
    float score;
    int type;
} entry;

static const char *spm_piece(const tok *t, int id) {
    const spm *v = t->impl;
    return v->text + v->piece_off[id];
}

static void spm_free(void *impl) {
    spm *v = impl;
    free(v->text);
    free(v->piece_off);
    free(v->key_off);
    free(v->key_len);
    free(v->score);
    free(v->byte);
    free(v->hash);
    free(v);
}

/* Pieces that BPE may produce: SentencePiece never merges into control, unknown, byte or
 * unused pieces (so "<s>" typed as text never becomes BOS). */
static int mergeable(int type) {
    return type == TT_NORMAL || type == TT_USER || type == TT_UNDEFINED;
}

static uint32_t hash_span(const char *s, size_t n) {
    return (uint32_t)hash_fnv1a(s, n);
}

/* The id of a mergeable piece whose key is s[0..n), or -1. */
static int lookup(const spm *v, const char *s, size_t n) {
    uint32_t h = hash_span(s, n) & (v->hash_cap - 1);
    for (; v->hash[h] >= 0; h = (h + 1) & (v->hash_cap - 1)) {
        int id = v->hash[h];
        if (v->key_len[id] == n && memcmp(v->text + v->key_off[id], s, n) == 0) return id;
    }
    return -1;
}

/* "<0xHH>" -> 0..255, else -1. */
static int parse_byte_piece(const char *s, size_t n) {
    if (n != 6 || memcmp(s, "<0x", 3) != 0 || s[5] != '>') return -1;
    int v = 0;
    for (int i = 3; i < 5; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9'   ? c - '0'
                : c >= 'A' && c <= 'F' ? c - 'A' + 10
                : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                       : -1;
        if (d < 0) return -1;
        v = v * 16 + d;
    }
    return v;
}

/* Builds the tables from n entries. space_stored: the file writes '▁' as ' '. */
static int build(tok *t, const entry *e, int n, int space_stored, int unk, int add_space,
                 const char *path, char *err) {
    spm *v = calloc(1, sizeof *v);
    if (!v) return err_set(err, "%s: out of memory for %d tokens", path, n);
    t->impl = v;
    v->unk = unk, v->add_space = add_space;
    t->n = n;
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        size_t key = e[i].len;
        if (space_stored)
            for (size_t j = 0; j < e[i].len; j++) key += e[i].piece[j] == ' ' ? 2 : 0;
        total += e[i].len + key + 2;
    }
    v->text = malloc(total ? total : 1);
    v->piece_off = malloc(n * sizeof *v->piece_off);
    v->key_off = malloc(n * sizeof *v->key_off);
    v->key_len = malloc(n * sizeof *v->key_len);
    v->score = malloc(n * sizeof *v->score);
    t->type = malloc(n);
    v->byte = calloc(n, 1);
    v->hash_cap = 16;
    while (v->hash_cap < 2u * (uint32_t)n) v->hash_cap *= 2;
    v->hash = malloc(v->hash_cap * sizeof *v->hash);
    if (!v->text || !v->piece_off || !v->key_off || !v->key_len || !v->score || !t->type ||
        !v->byte || !v->hash)
        return err_set(err, "%s: out of memory for %d tokens", path, n);
    memset(v->hash, 0xff, v->hash_cap * sizeof *v->hash);
    for (int b = 0; b < 256; b++) v->byte_id[b] = -1;

    size_t pos = 0;
    for (int i = 0; i < n; i++) {
        v->piece_off[i] = pos;
        memcpy(v->text + pos, e[i].piece, e[i].len);
        pos += e[i].len;
        v->text[pos++] = 0;
        v->key_off[i] = pos;
        for (size_t j = 0; j < e[i].len; j++) {
            if (space_stored && e[i].piece[j] == ' ')
                memcpy(v->text + pos, SPACE_MARK, 3), pos += 3;
            else
                v->text[pos++] = e[i].piece[j];
        }
        v->key_len[i] = (uint32_t)(pos - v->key_off[i]);
        v->text[pos++] = 0;
        /* What tok_decode writes: the key with each '▁' as one ' '. */
        size_t decoded = v->key_len[i];
        const char *k = v->text + v->key_off[i], *end = k + v->key_len[i];
        while ((k = memmem(k, (size_t)(end - k), SPACE_MARK, 3))) decoded -= 2, k += 3;
        v->score[i] = e[i].score;
        t->type[i] = (uint8_t)e[i].type;
        if (!isfinite(e[i].score))
            return err_set(err, "%s: token %d: score is not a finite number", path, i);
        if (decoded >= SPM_PIECE_MAX)
            return err_set(err, "%s: token %d: piece of %zu bytes exceeds the %d-byte limit", path,
                           i, decoded, SPM_PIECE_MAX - 1);
        if (e[i].type == TT_BYTE) {
            int b = parse_byte_piece(e[i].piece, e[i].len);
            if (b < 0)
                return err_set(err, "%s: token %d: a byte token's piece must read <0xXX>", path, i);
            v->byte[i] = (uint8_t)b;
            if (v->byte_id[b] < 0) v->byte_id[b] = i;
        } else if (mergeable(e[i].type) && v->key_len[i] > 0) {
            /* Duplicates keep the lowest id (a well-formed vocabulary has none). */
            const char *k = v->text + v->key_off[i];
            if (lookup(v, k, v->key_len[i]) >= 0) continue;
            uint32_t h = hash_span(k, v->key_len[i]) & (v->hash_cap - 1);
            while (v->hash[h] >= 0) h = (h + 1) & (v->hash_cap - 1);
            v->hash[h] = i;
        }
    }
    if (t->bos < 0 || t->bos >= n || t->eos < 0 || t->eos >= n || v->unk < 0 || v->unk >= n)
        return err_set(err, "%s: BOS/EOS/UNK ids %d/%d/%d outside the %d tokens", path, t->bos,
                       t->eos, v->unk, n);
    return 0;
}

/* ---- llama2.c tokenizer files ---------------------------------------------------------- */

int tok_spm_load_llama2c(tok *t, const unsigned char *p, size_t size, const char *path, char *err) {
    if (size < 4) return err_set(err, "%s: truncated: no max_token_length header", path);
    int32_t max_len;
    memcpy(&max_len, p, 4);
    if (max_len <= 0 || max_len >= SPM_PIECE_MAX)
        return err_set(err, "%s: max_token_length %d is not in 1..%d", path, max_len,
                       SPM_PIECE_MAX - 1);
    /* First pass: validate every record and count them (the file does not store the count). */
    int n = 0;
    for (size_t pos = 4; pos < size; n++) {
        if (size - pos < 8)
            return err_set(err, "%s: token %d: truncated record header (%zu of 8 bytes)", path, n,
                           size - pos);
        int32_t len;
        memcpy(&len, p + pos + 4, 4);
        pos += 8;
        if (len < 0 || len > max_len)
            return err_set(err, "%s: token %d: length %d is not in 0..max_token_length (%d)", path,
                           n, len, max_len);
        if ((size_t)len > size - pos)
            return err_set(err, "%s: token %d: truncated piece (%d bytes, %zu left)", path, n, len,
                           size - pos);
        pos += (size_t)len;
    }
    if (n < 3)
        return err_set(err, "%s: %d tokens; a Llama vocabulary needs at least 3 (unk, BOS, EOS)",
                       path, n);
    entry *e = malloc(n * sizeof *e);
    if (!e) return err_set(err, "%s: out of memory", path);
    size_t pos = 4;
    for (int i = 0; i < n; i++) {
        int32_t len;
        memcpy(&e[i].score, p + pos, 4);
        memcpy(&len, p + pos + 4, 4);
        e[i].piece = (const char *)p + pos + 8;
        e[i].len = (size_t)len;
        pos += 8 + (size_t)len;
        /* The format has no types: Llama's layout puts unk, BOS, EOS at 0, 1, 2. */
        e[i].type = i == 0                                        ? TT_UNKNOWN
                    : i <= 2                                      ? TT_CONTROL
                    : parse_byte_piece(e[i].piece, e[i].len) >= 0 ? TT_BYTE
                                                                  : TT_NORMAL;
    }
    t->bos = 1, t->eos = 2, t->add_bos = 1;
    int rc = build(t, e, n, 1, 0, 1, path, err);
    free(e);
    return rc;
}

/* ---- GGUF vocabularies ----------------------------------------------------------------- */

/* An optional u32 id key: absent keeps *out. */
static int opt_id(const gguf *g, const char *key, int *out, char *err) {
    uint32_t v;
    if (gguf_find_key(g, key) < 0) return 0;
    if (gguf_get_u32(g, key, &v, err)) return -1;
    if (v > INT_MAX) return err_set(err, "%s: %s = %u is out of range", gguf_path(g), key, v);
    *out = (int)v;
    return 0;
}

static int opt_bool(const gguf *g, const char *key, int *out, char *err) {
    if (gguf_find_key(g, key) < 0) return 0;
    return gguf_get_bool(g, key, out, err);
}

static int spm_load_gguf(tok *t, const gguf *g, char *err) {
    const char *path = gguf_path(g);
    uint64_t n = 0;
    entry *e = NULL;
    float *scores = NULL;
    int32_t *types = NULL;
    int rc = -1;
    if (gguf_get_arr_len(g, "tokenizer.ggml.tokens", GGUF_STRING, &n, err)) goto done;
    if (n < 3 || n > INT_MAX / 4) {
        err_set(err, "%s: tokenizer.ggml.tokens has %llu tokens (need 3..%d)", path,
                (unsigned long long)n, INT_MAX / 4);
        goto done;
    }
    e = malloc(n * sizeof *e);
    scores = malloc(n * sizeof *scores);
    types = malloc(n * sizeof *types);
    if (!e || !scores || !types) {
        err_set(err, "%s: out of memory", path);
        goto done;
    }
    if (gguf_get_arr_f32(g, "tokenizer.ggml.scores", scores, n, err)) goto done;
    if (gguf_find_key(g, "tokenizer.ggml.token_type") >= 0) {
        if (gguf_get_arr_i32(g, "tokenizer.ggml.token_type", types, n, err)) goto done;
    } else {
        for (uint64_t i = 0; i < n; i++) types[i] = TT_NORMAL;
    }
    for (uint64_t i = 0; i < n; i++) {
        gguf_str s;
        if (gguf_get_arr_str(g, "tokenizer.ggml.tokens", i, &s, err)) goto done;
        if (types[i] < TT_UNDEFINED || types[i] > TT_BYTE) {
            err_set(err, "%s: tokenizer.ggml.token_type[%llu] = %d is not a known type", path,
                    (unsigned long long)i, types[i]);
            goto done;
        }
        e[i] = (entry){s.ptr, (size_t)s.len, scores[i], types[i]};
    }
    int unk = 0, add_space = 1;
    t->bos = 1, t->eos = 2, t->add_bos = 1;
    if (opt_id(g, "tokenizer.ggml.bos_token_id", &t->bos, err) ||
        opt_id(g, "tokenizer.ggml.eos_token_id", &t->eos, err) ||
        opt_id(g, "tokenizer.ggml.unknown_token_id", &unk, err) ||
        opt_bool(g, "tokenizer.ggml.add_bos_token", &t->add_bos, err) ||
        opt_bool(g, "tokenizer.ggml.add_space_prefix", &add_space, err))
        goto done;
    rc = build(t, e, (int)n, 0, unk, add_space, path, err);
    /* EOT and padding only inform (nothing encodes them): an id outside the vocabulary is
     * ignored, as llama.cpp ignores it. */
    if (rc == 0 && (opt_id(g, "tokenizer.ggml.eot_token_id", &t->eot, err) ||
                    opt_id(g, "tokenizer.ggml.padding_token_id", &t->pad, err)))
        rc = -1;
    if (t->eot >= (int)n) t->eot = -1;
    if (t->pad >= (int)n) t->pad = -1;
done:
    free(e);
    free(scores);
    free(types);
    return rc;
}

/* ---- encoding -------------------------------------------------------------------------- */

/* Length of the UTF-8 sequence at s (n bytes left): 1..4 for a well-formed code point, or 1
 * for a byte that does not start one (it then goes through byte fallback on its own). */
static size_t utf8_len(const unsigned char *s, size_t n) {
    size_t len = tok_utf8_valid_len(s, n);
    return len ? len : 1;
}

typedef struct {
    int start, len; /* span in the normalized text; len 0 once merged into its left */
    int prev, next;
} symbol;

/* A candidate merge of symbols left and right (adjacent when pushed). */
typedef struct {
    float score;
    int left, right, len;
} bigram;

/* Max-heap order: higher score first, then the leftmost pair (SentencePiece's rule). */
static int before(const bigram *a, const bigram *b) {
    return a->score > b->score || (a->score == b->score && a->left < b->left);
}

HEAP_DEFINE(bigram, before)

static void try_pair(const spm *v, const char *buf, const symbol *sym, int left, bigram *heap,
                     int *nheap) {
    if (left < 0 || sym[left].next < 0) return;
    int right = sym[left].next;
    int len = sym[left].len + sym[right].len;
    int id = lookup(v, buf + sym[left].start, (size_t)len);
    if (id >= 0) bigram_heap_push(heap, nheap, (bigram){v->score[id], left, right, len});
}

static int spm_encode(const tok *t, const char *text, size_t text_len, int *ids, int *n,
                      size_t cap_ids, char *err) {
    const spm *v = t->impl;
    /* Normalize: dummy-prefix space for non-empty text (as llama.cpp and SentencePiece's
     * add_dummy_prefix), then every ' ' becomes '▁'. */
    char *buf = malloc(3 * text_len + 4);
    symbol *sym = malloc((text_len + 2) * sizeof *sym);
    bigram *heap = malloc(3 * (text_len + 2) * sizeof *heap);
    if (!buf || !sym || !heap) {
        free(buf), free(sym), free(heap);
        return err_set(err, "tok_encode: out of memory for %zu bytes of text", text_len);
    }
    size_t len = 0;
    if (text_len && v->add_space) memcpy(buf, SPACE_MARK, 3), len = 3;
    for (size_t i = 0; i < text_len; i++) {
        if (text[i] == ' ')
            memcpy(buf + len, SPACE_MARK, 3), len += 3;
        else
            buf[len++] = text[i];
    }
    /* Symbols: one per code point, linked in text order. */
    int nsym = 0;
    for (size_t i = 0; i < len;) {
        size_t l = utf8_len((const unsigned char *)buf + i, len - i);
        sym[nsym] = (symbol){(int)i, (int)l, nsym - 1, -1};
        if (nsym > 0) sym[nsym - 1].next = nsym;
        nsym++;
        i += l;
    }
    /* Merge the best pair until none is in the vocabulary. Popped pairs whose symbols have
     * changed since they were pushed are stale and skipped (each merge pushes at most two
     * new pairs, so the heap holds under 3 * nsym entries). */
    int nheap = 0;
    for (int i = 0; i + 1 < nsym; i++) try_pair(v, buf, sym, i, heap, &nheap);
    while (nheap > 0) {
        bigram b = bigram_heap_pop(heap, &nheap);
        symbol *l = &sym[b.left], *r = &sym[b.right];
        if (l->len == 0 || r->len == 0 || l->next != b.right || l->len + r->len != b.len) continue;
        l->len += r->len;
        r->len = 0;
        l->next = r->next;
        if (r->next >= 0) sym[r->next].prev = b.left;
        try_pair(v, buf, sym, l->prev, heap, &nheap);
        try_pair(v, buf, sym, b.left, heap, &nheap);
    }
    int rc = 0, count = *n;
    for (int i = nsym > 0 ? 0 : -1; i >= 0 && rc == 0; i = sym[i].next) {
        int id = lookup(v, buf + sym[i].start, (size_t)sym[i].len);
        if (id >= 0 && (size_t)count < cap_ids) {
            ids[count++] = id;
            continue;
        }
        /* Byte fallback: one <0xXX> per byte of the unknown code point (unk if absent). */
        for (int j = 0; j < sym[i].len && rc == 0; j++) {
            if ((size_t)count >= cap_ids) {
                rc = err_set(err,
                             "tok_encode: more than strlen + 3 = %zu tokens (the "
                             "vocabulary lacks a '\xe2\x96\x81' piece?)",
                             cap_ids);
                break;
            }
            int b = v->byte_id[(unsigned char)buf[sym[i].start + j]];
            ids[count++] = b >= 0 ? b : v->unk;
        }
    }
    free(buf), free(sym), free(heap);
    if (rc) return -1;
    *n = count;
    return 0;
}

/* ---- decoding -------------------------------------------------------------------------- */

static int spm_decode(const tok *t, int prev, int id, char *buf, size_t n) {
    const spm *v = t->impl;
    if (t->type[id] == TT_CONTROL) {
        buf[0] = 0;
        return 0;
    }
    if (t->type[id] == TT_BYTE) {
        if (n < 2) return -1;
        buf[0] = (char)v->byte[id];
        buf[1] = 0;
        return 1;
    }
    const char *k = v->text + v->key_off[id];
    size_t len = v->key_len[id], out = 0;
    for (size_t i = 0; i < len && out + 1 < n;) {
        if (i + 3 <= len && memcmp(k + i, SPACE_MARK, 3) == 0) {
            buf[out++] = ' ';
            i += 3;
        } else {
            buf[out++] = k[i++];
        }
    }
    buf[out] = 0;
    /* SentencePiece's dummy prefix: the first word after BOS carries a space nobody typed. */
    if (prev == t->bos && out > 0 && buf[0] == ' ') {
        memmove(buf, buf + 1, out);
        out--;
    }
    return (int)out;
}

const tok_kind tok_kind_spm = {
    .model = "llama",
    .what = "SentencePiece BPE",
    .load_gguf = spm_load_gguf,
    .encode = spm_encode,
    .decode = spm_decode,
    .piece = spm_piece,
    .free_impl = spm_free,
};
