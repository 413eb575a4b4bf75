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

typedef struct {
    char *text; /* arena: per id, the stored piece then the key, NUL-terminated */
    size_t *piece_off, *key_off;
    uint32_t *key_len, *piece_len;
    char *dec; /* arena: what each id decodes to (spm_finish), NUL-terminated */
    size_t *dec_off, *dec_len;
    float *score;
    uint8_t *byte;    /* the byte of a TT_BYTE token */
    int byte_id[256]; /* the <0xXX> token of each byte, or -1 */
    int32_t *hash;    /* key -> id for mergeable pieces; open addressing, -1 = empty */
    int32_t *all;     /* stored piece -> id for every token (tok_kind.find), the same way */
    uint32_t hash_cap;
    int add_space;
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
    free(v->piece_len);
    free(v->dec);
    free(v->dec_off);
    free(v->dec_len);
    free(v->score);
    free(v->byte);
    free(v->hash);
    free(v->all);
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

/* The id of the token whose stored piece is s[0..n), or -1 (the lowest id of duplicates). */
static int spm_find(const tok *t, const char *s, size_t n) {
    const spm *v = t->impl;
    uint32_t h = hash_span(s, n) & (v->hash_cap - 1);
    for (; v->all[h] >= 0; h = (h + 1) & (v->hash_cap - 1)) {
        int id = v->all[h];
        if (v->piece_len[id] == n && memcmp(v->text + v->piece_off[id], s, n) == 0) return id;
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

/* Builds the tables from n entries. space_stored: the file writes '▁' as ' '. t->type is
 * taken as it is when the loader filled it, else made from the entries' types. */
static int build(tok *t, const entry *e, int n, int space_stored, int add_space, const char *path,
                 char *err) {
    spm *v = calloc(1, sizeof *v);
    if (!v) return err_set(err, "%s: out of memory for %d tokens", path, n);
    t->impl = v;
    v->add_space = add_space;
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
    v->piece_len = malloc(n * sizeof *v->piece_len);
    v->score = malloc(n * sizeof *v->score);
    if (!t->type && (t->type = malloc(n)))
        for (int i = 0; i < n; i++) t->type[i] = (uint8_t)e[i].type;
    v->byte = calloc(n, 1);
    v->hash_cap = 16;
    while (v->hash_cap < 2u * (uint32_t)n) v->hash_cap *= 2;
    v->hash = malloc(v->hash_cap * sizeof *v->hash);
    v->all = malloc(v->hash_cap * sizeof *v->all);
    if (!v->text || !v->piece_off || !v->key_off || !v->key_len || !v->piece_len || !v->score ||
        !t->type || !v->byte || !v->hash || !v->all)
        return err_set(err, "%s: out of memory for %d tokens", path, n);
    memset(v->hash, 0xff, v->hash_cap * sizeof *v->hash);
    memset(v->all, 0xff, v->hash_cap * sizeof *v->all);
    for (int b = 0; b < 256; b++) v->byte_id[b] = -1;

    size_t pos = 0;
    for (int i = 0; i < n; i++) {
        v->piece_off[i] = pos;
        memcpy(v->text + pos, e[i].piece, e[i].len);
        pos += e[i].len;
        v->piece_len[i] = (uint32_t)e[i].len;
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
        v->score[i] = e[i].score;
        /* An infinite score orders like any other; NaN orders nothing (llama.cpp's merge queue
         * would be undefined with it). */
        if (isnan(e[i].score)) return err_set(err, "%s: token %d: score is not a number", path, i);
        if (spm_find(t, e[i].piece, e[i].len) < 0) {
            uint32_t h = hash_span(e[i].piece, e[i].len) & (v->hash_cap - 1);
            while (v->all[h] >= 0) h = (h + 1) & (v->hash_cap - 1);
            v->all[h] = i;
        }
        if (t->type[i] == TT_BYTE) {
            int b = parse_byte_piece(e[i].piece, e[i].len);
            if (b < 0)
                return err_set(err, "%s: token %d: a byte token's piece must read <0xXX>", path, i);
            v->byte[i] = (uint8_t)b;
            if (v->byte_id[b] < 0) v->byte_id[b] = i;
        } else if (mergeable(t->type[i]) && v->key_len[i] > 0) {
            /* Duplicates keep the lowest id (a well-formed vocabulary has none). */
            const char *k = v->text + v->key_off[i];
            if (lookup(v, k, v->key_len[i]) >= 0) continue;
            uint32_t h = hash_span(k, v->key_len[i]) & (v->hash_cap - 1);
            while (v->hash[h] >= 0) h = (h + 1) & (v->hash_cap - 1);
            v->hash[h] = i;
        }
    }
    return 0;
}

/* What each id decodes to (tok_text), once the types are final (tokenizer.c makes the
 * end-of-turn texts control tokens after the load): control tokens nothing, byte tokens their
 * byte, the rest the key with each '▁' as one ' '. Any length: the arena is at most the keys'
 * size. */
static int spm_finish(tok *t, const char *path, char *err) {
    spm *v = t->impl;
    size_t total = 0;
    for (int i = 0; i < t->n; i++) total += v->key_len[i] + 1;
    v->dec = malloc(total + 1);
    v->dec_off = malloc((size_t)t->n * sizeof *v->dec_off);
    v->dec_len = malloc((size_t)t->n * sizeof *v->dec_len);
    if (!v->dec || !v->dec_off || !v->dec_len) return err_set(err, "%s: out of memory", path);
    size_t pos = 0;
    for (int i = 0; i < t->n; i++) {
        size_t start = pos;
        v->dec_off[i] = pos;
        if (t->type[i] == TT_BYTE) {
            v->dec[pos++] = (char)v->byte[i];
        } else if (t->type[i] != TT_CONTROL) {
            const char *k = v->text + v->key_off[i];
            size_t len = v->key_len[i];
            for (size_t j = 0; j < len;) {
                if (j + 3 <= len && memcmp(k + j, SPACE_MARK, 3) == 0) {
                    v->dec[pos++] = ' ';
                    j += 3;
                } else {
                    v->dec[pos++] = k[j++];
                }
            }
        }
        v->dec_len[i] = pos - start;
        v->dec[pos++] = 0;
    }
    return 0;
}

/* ---- llama2.c tokenizer files ---------------------------------------------------------- */

int tok_spm_load_llama2c(tok *t, const unsigned char *p, size_t size, const char *path, char *err) {
    if (size < 4) return err_set(err, "%s: truncated: no max_token_length header", path);
    /* max_token_length only sizes llama2.c's own buffers; llama.cpp's converter ignores it,
     * and so does this reader (a longer piece is only noted). */
    int32_t max_len;
    memcpy(&max_len, p, 4);
    /* First pass: validate every record and count them (the file does not store the count). */
    int n = 0, longer = 0, first_longer = 0;
    int32_t longest = 0;
    for (size_t pos = 4; pos < size; n++) {
        if (size - pos < 8)
            return err_set(err, "%s: token %d: truncated record header (%zu of 8 bytes)", path, n,
                           size - pos);
        if (n == INT_MAX / 4) return err_set(err, "%s: more than %d tokens", path, INT_MAX / 4);
        int32_t len;
        memcpy(&len, p + pos + 4, 4);
        pos += 8;
        if (len < 0) return err_set(err, "%s: token %d: length %d is negative", path, n, len);
        if ((size_t)len > size - pos)
            return err_set(err, "%s: token %d: truncated piece (%d bytes, %zu left)", path, n, len,
                           size - pos);
        if (len > max_len && !longer++) first_longer = n;
        if (len > longest) longest = len;
        pos += (size_t)len;
    }
    if (n < 3)
        return err_set(err, "%s: %d tokens; a Llama vocabulary needs at least 3 (unk, BOS, EOS)",
                       path, n);
    if (longer)
        tok_warn(t,
                 "%s: %d pieces are longer than its max_token_length %d (first: token %d; the "
                 "longest %d bytes): read whole, as llama.cpp's converter reads them",
                 path, longer, max_len, first_longer, longest);
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
    t->bos = 1, t->eos = 2, t->unk = 0, t->add_bos = 1;
    int rc = build(t, e, n, 1, 1, path, err);
    free(e);
    return rc ? rc : spm_finish(t, path, err);
}

/* ---- GGUF vocabularies ----------------------------------------------------------------- */

/* Reads tokens, scores and types; the special ids follow in tokenizer.c, then spm_finish. */
static int spm_load_gguf(tok *t, const gguf *g, char *err) {
    const char *path = gguf_path(g);
    uint64_t n = 0, n_scores = 0;
    entry *e = NULL;
    float *scores = NULL;
    char *empty = NULL;
    int rc = -1;
    if (gguf_get_arr_len(g, "tokenizer.ggml.tokens", GGUF_STRING, &n, err)) goto done;
    if (n < 1 || n > INT_MAX / 4) {
        err_set(err, "%s: tokenizer.ggml.tokens has %llu tokens (need 1..%d)", path,
                (unsigned long long)n, INT_MAX / 4);
        goto done;
    }
    t->n = (int)n;
    e = malloc(n * sizeof *e);
    scores = calloc(n, sizeof *scores);
    empty = malloc(24 * n);
    if (!e || !scores || !empty) {
        err_set(err, "%s: out of memory", path);
        goto done;
    }
    /* llama.cpp reads a missing score as 0 and the first n of a longer array */
    if (gguf_find_key(g, "tokenizer.ggml.scores") < 0) {
        tok_warn(t,
                 "%s: no tokenizer.ggml.scores: every score is 0 (merges go left to right), "
                 "as llama.cpp reads it",
                 path);
    } else {
        if (gguf_get_arr_f32_prefix(g, "tokenizer.ggml.scores", scores, n, err)) goto done;
        if (gguf_get_arr_len(g, "tokenizer.ggml.scores", GGUF_F32, &n_scores, err)) goto done;
        if (n_scores > n)
            tok_warn(t,
                     "%s: tokenizer.ggml.scores has %llu elements for %llu tokens: the rest "
                     "are ignored, as llama.cpp ignores them",
                     path, (unsigned long long)n_scores, (unsigned long long)n);
    }
    if (tok_read_types(t, g, err)) goto done;
    uint64_t n_empty = 0;
    for (uint64_t i = 0; i < n; i++) {
        gguf_str s;
        if (gguf_get_arr_str(g, "tokenizer.ggml.tokens", i, &s, err)) goto done;
        e[i] = (entry){s.ptr, (size_t)s.len, scores[i], t->type[i]};
        if (s.len == 0) { /* llama.cpp names an empty token this way, so it can never match */
            char *name = empty + 24 * n_empty++;
            e[i].len = (size_t)snprintf(name, 24, "[EMPTY_%llu]", (unsigned long long)i);
            e[i].piece = name;
        }
    }
    int add_space = 1;
    t->add_bos = 1;
    if (gguf_find_key(g, "tokenizer.ggml.add_space_prefix") >= 0 &&
        gguf_get_bool(g, "tokenizer.ggml.add_space_prefix", &add_space, err))
        goto done;
    rc = build(t, e, (int)n, 0, add_space, path, err);
done:
    free(e);
    free(scores);
    free(empty);
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
            if (b < 0) b = t->unk;
            if (b < 0) {
                rc = err_set(err,
                             "tok_encode: byte 0x%02x has no token and the vocabulary no "
                             "unknown token",
                             (unsigned char)buf[sym[i].start + j]);
                break;
            }
            ids[count++] = b;
        }
    }
    free(buf), free(sym), free(heap);
    if (rc) return -1;
    *n = count;
    return 0;
}

/* ---- decoding -------------------------------------------------------------------------- */

static const char *spm_text(const tok *t, int prev, int id, size_t *len) {
    const spm *v = t->impl;
    const char *s = v->dec + v->dec_off[id];
    *len = v->dec_len[id];
    /* SentencePiece's dummy prefix: the first word after BOS carries a space nobody typed. */
    if (t->bos >= 0 && prev == t->bos && t->type[id] != TT_BYTE && *len > 0 && s[0] == ' ')
        s++, (*len)--;
    return s;
}

const tok_kind tok_kind_spm = {
    .model = "llama",
    .what = "SentencePiece BPE",
    .def_bos = 1,
    .def_eos = 2,
    .def_unk = 0,
    .load_gguf = spm_load_gguf,
    .finish = spm_finish,
    .find = spm_find,
    .encode = spm_encode,
    .text = spm_text,
    .piece = spm_piece,
    .free_impl = spm_free,
};
