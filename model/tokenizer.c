/* tokenizer.c: SentencePiece BPE vocabularies (llama2.c tokenizer files and GGUF "llama"
 * vocabularies) with encoding and decoding. See tokenizer.h.
 *
 * Internally every piece is kept twice: as stored in the file (tok_piece) and in its
 * SentencePiece form, where a space is '▁' (U+2581). llama2.c files store '▁' as ' ', so
 * their pieces are converted on load; the text to encode gets the same conversion, which is
 * also what SentencePiece and llama.cpp do (a literal '▁' in the text therefore encodes like a
 * space, as it does there). */
#include "model/tokenizer.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/gguf.h"
#include "util/err.h"
#include "util/file.h"
#include "util/hash.h"

/* SentencePiece piece types, with the ids GGUF's tokenizer.ggml.token_type uses. */
enum { TT_UNDEFINED = 0, TT_NORMAL, TT_UNKNOWN, TT_CONTROL, TT_USER, TT_UNUSED, TT_BYTE };

#define SPACE_MARK "\xe2\x96\x81" /* '▁', SentencePiece's whitespace symbol */

struct tok {
    int n;
    char *text; /* arena: per id, the stored piece then the key, NUL-terminated */
    size_t *piece_off, *key_off;
    uint32_t *key_len;
    float *score;
    uint8_t *type;    /* TT_* */
    uint8_t *byte;    /* the byte of a TT_BYTE token */
    int byte_id[256]; /* the <0xXX> token of each byte, or -1 */
    int32_t *hash;    /* key -> id for mergeable pieces; open addressing, -1 = empty */
    uint32_t hash_cap;
    int bos, eos, unk, add_bos, add_space;
};

/* One vocabulary entry as read from a file, before conversion. */
typedef struct {
    const char *piece;
    size_t len;
    float score;
    int type;
} entry;

int tok_vocab_size(const tok *t) {
    return t->n;
}
int tok_bos(const tok *t) {
    return t->bos;
}
int tok_eos(const tok *t) {
    return t->eos;
}
int tok_add_bos(const tok *t) {
    return t->add_bos;
}

const char *tok_piece(const tok *t, int id) {
    return id >= 0 && id < t->n ? t->text + t->piece_off[id] : NULL;
}

void tok_free(tok *t) {
    if (!t) return;
    free(t->text);
    free(t->piece_off);
    free(t->key_off);
    free(t->key_len);
    free(t->score);
    free(t->type);
    free(t->byte);
    free(t->hash);
    free(t);
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
static int lookup(const tok *t, const char *s, size_t n) {
    uint32_t h = hash_span(s, n) & (t->hash_cap - 1);
    for (; t->hash[h] >= 0; h = (h + 1) & (t->hash_cap - 1)) {
        int id = t->hash[h];
        if (t->key_len[id] == n && memcmp(t->text + t->key_off[id], s, n) == 0) return id;
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
static int build(tok *t, const entry *e, int n, int space_stored, const char *path, char *err) {
    t->n = n;
    size_t total = 0;
    for (int i = 0; i < n; i++) {
        size_t key = e[i].len;
        if (space_stored)
            for (size_t j = 0; j < e[i].len; j++) key += e[i].piece[j] == ' ' ? 2 : 0;
        total += e[i].len + key + 2;
    }
    t->text = malloc(total ? total : 1);
    t->piece_off = malloc(n * sizeof *t->piece_off);
    t->key_off = malloc(n * sizeof *t->key_off);
    t->key_len = malloc(n * sizeof *t->key_len);
    t->score = malloc(n * sizeof *t->score);
    t->type = malloc(n);
    t->byte = calloc(n, 1);
    t->hash_cap = 16;
    while (t->hash_cap < 2u * (uint32_t)n) t->hash_cap *= 2;
    t->hash = malloc(t->hash_cap * sizeof *t->hash);
    if (!t->text || !t->piece_off || !t->key_off || !t->key_len || !t->score || !t->type ||
        !t->byte || !t->hash)
        return err_set(err, "%s: out of memory for %d tokens", path, n);
    memset(t->hash, 0xff, t->hash_cap * sizeof *t->hash);
    for (int b = 0; b < 256; b++) t->byte_id[b] = -1;

    size_t pos = 0;
    for (int i = 0; i < n; i++) {
        t->piece_off[i] = pos;
        memcpy(t->text + pos, e[i].piece, e[i].len);
        pos += e[i].len;
        t->text[pos++] = 0;
        t->key_off[i] = pos;
        for (size_t j = 0; j < e[i].len; j++) {
            if (space_stored && e[i].piece[j] == ' ')
                memcpy(t->text + pos, SPACE_MARK, 3), pos += 3;
            else
                t->text[pos++] = e[i].piece[j];
        }
        t->key_len[i] = (uint32_t)(pos - t->key_off[i]);
        t->text[pos++] = 0;
        /* What tok_decode writes: the key with each '▁' as one ' '. */
        size_t decoded = t->key_len[i];
        const char *k = t->text + t->key_off[i], *end = k + t->key_len[i];
        while ((k = memmem(k, (size_t)(end - k), SPACE_MARK, 3))) decoded -= 2, k += 3;
        t->score[i] = e[i].score;
        t->type[i] = (uint8_t)e[i].type;
        if (!isfinite(e[i].score))
            return err_set(err, "%s: token %d: score is not a finite number", path, i);
        if (decoded >= TOK_PIECE_MAX)
            return err_set(err, "%s: token %d: piece of %zu bytes exceeds the %d-byte limit", path,
                           i, decoded, TOK_PIECE_MAX - 1);
        if (e[i].type == TT_BYTE) {
            int b = parse_byte_piece(e[i].piece, e[i].len);
            if (b < 0)
                return err_set(err, "%s: token %d: a byte token's piece must read <0xXX>", path, i);
            t->byte[i] = (uint8_t)b;
            if (t->byte_id[b] < 0) t->byte_id[b] = i;
        } else if (mergeable(e[i].type) && t->key_len[i] > 0) {
            /* Duplicates keep the lowest id (a well-formed vocabulary has none). */
            const char *k = t->text + t->key_off[i];
            if (lookup(t, k, t->key_len[i]) >= 0) continue;
            uint32_t h = hash_span(k, t->key_len[i]) & (t->hash_cap - 1);
            while (t->hash[h] >= 0) h = (h + 1) & (t->hash_cap - 1);
            t->hash[h] = i;
        }
    }
    if (t->bos < 0 || t->bos >= n || t->eos < 0 || t->eos >= n || t->unk < 0 || t->unk >= n)
        return err_set(err, "%s: BOS/EOS/UNK ids %d/%d/%d outside the %d tokens", path, t->bos,
                       t->eos, t->unk, n);
    return 0;
}

/* ---- llama2.c tokenizer files ---------------------------------------------------------- */

static int load_llama2c(tok *t, const unsigned char *p, size_t size, const char *path, char *err) {
    if (size < 4) return err_set(err, "%s: truncated: no max_token_length header", path);
    int32_t max_len;
    memcpy(&max_len, p, 4);
    if (max_len <= 0 || max_len >= TOK_PIECE_MAX)
        return err_set(err, "%s: max_token_length %d is not in 1..%d", path, max_len,
                       TOK_PIECE_MAX - 1);
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
    t->unk = 0, t->bos = 1, t->eos = 2, t->add_bos = 1, t->add_space = 1;
    int rc = build(t, e, n, 1, path, err);
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

static int load_gguf(tok *t, const char *path, char *err) {
    gguf *g;
    if (gguf_open(&g, path, err)) return -1;
    const char *model;
    uint64_t n = 0;
    entry *e = NULL;
    float *scores = NULL;
    int32_t *types = NULL;
    int rc = -1;
    if (gguf_get_str(g, "tokenizer.ggml.model", &model, err)) goto done;
    if (strcmp(model, "llama") != 0) {
        err_set(err,
                "%s: tokenizer model '%.40s' is not supported (only 'llama' SentencePiece "
                "vocabularies)",
                path, model);
        goto done;
    }
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
    t->unk = 0, t->bos = 1, t->eos = 2, t->add_bos = 1, t->add_space = 1;
    if (opt_id(g, "tokenizer.ggml.bos_token_id", &t->bos, err) ||
        opt_id(g, "tokenizer.ggml.eos_token_id", &t->eos, err) ||
        opt_id(g, "tokenizer.ggml.unknown_token_id", &t->unk, err) ||
        opt_bool(g, "tokenizer.ggml.add_bos_token", &t->add_bos, err) ||
        opt_bool(g, "tokenizer.ggml.add_space_prefix", &t->add_space, err))
        goto done;
    rc = build(t, e, (int)n, 0, path, err);
done:
    free(e);
    free(scores);
    free(types);
    gguf_close(g);
    return rc;
}

int tok_load(tok **out, const char *path, char *err) {
    *out = NULL;
    if (file_check_regular(path, "tokenizer", err)) return -1; /* a FIFO would block open() */
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return err_set(err, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return err_set(err, "%s: cannot stat: %s", path, strerror(errno));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return err_set(err, "%s: %s", path,
                       S_ISDIR(st.st_mode) ? "is a directory" : "not a regular file");
    }
    if (st.st_size == 0) {
        close(fd);
        return err_set(err, "%s: empty file", path);
    }
    size_t size = (size_t)st.st_size;
    void *map = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) return err_set(err, "%s: mmap failed: %s", path, strerror(errno));
    tok *t = calloc(1, sizeof *t);
    int rc;
    if (!t)
        rc = err_set(err, "%s: out of memory", path);
    else if (size >= 4 && memcmp(map, "GGUF", 4) == 0)
        rc = load_gguf(t, path, err);
    else
        rc = load_llama2c(t, map, size, path, err);
    munmap(map, size);
    if (rc) {
        tok_free(t);
        return -1;
    }
    *out = t;
    return 0;
}

/* ---- encoding -------------------------------------------------------------------------- */

/* Length of the UTF-8 sequence at s (n bytes left): 1..4 for a well-formed code point, or 1
 * for a byte that does not start one (it then goes through byte fallback on its own). */
static size_t utf8_len(const unsigned char *s, size_t n) {
    unsigned char c = s[0];
    size_t len = c < 0x80             ? 1
                 : (c & 0xe0) == 0xc0 ? 2
                 : (c & 0xf0) == 0xe0 ? 3
                 : (c & 0xf8) == 0xf0 ? 4
                                      : 0;
    if (len <= 1 || len > n) return 1;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xc0) != 0x80) return 1;
    /* Overlong forms, surrogates and values past U+10FFFF are not code points either. */
    if (len == 2 && c < 0xc2) return 1;
    if (len == 3 && ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0))) return 1;
    if (len == 4 && ((c == 0xf0 && s[1] < 0x90) || c > 0xf4 || (c == 0xf4 && s[1] >= 0x90)))
        return 1;
    return len;
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

static void heap_push(bigram *h, int *n, bigram b) {
    int i = (*n)++;
    while (i > 0 && before(&b, &h[(i - 1) / 2])) {
        h[i] = h[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    h[i] = b;
}

static bigram heap_pop(bigram *h, int *n) {
    bigram top = h[0], last = h[--*n];
    int i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && before(&h[c + 1], &h[c])) c++;
        if (!before(&h[c], &last)) break;
        h[i] = h[c];
        i = c;
    }
    h[i] = last;
    return top;
}

static void try_pair(const tok *t, const char *buf, const symbol *sym, int left, bigram *heap,
                     int *nheap) {
    if (left < 0 || sym[left].next < 0) return;
    int right = sym[left].next;
    int len = sym[left].len + sym[right].len;
    int id = lookup(t, buf + sym[left].start, (size_t)len);
    if (id >= 0) heap_push(heap, nheap, (bigram){t->score[id], left, right, len});
}

int tok_encode(const tok *t, const char *text, int add_bos, int *ids, int *n, char *err) {
    *n = 0;
    size_t text_len = strlen(text);
    if (text_len > INT_MAX / 4)
        return err_set(err, "tok_encode: text of %zu bytes is too long", text_len);
    size_t cap_ids = text_len + 3;
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
    if (text_len && t->add_space) memcpy(buf, SPACE_MARK, 3), len = 3;
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
    for (int i = 0; i + 1 < nsym; i++) try_pair(t, buf, sym, i, heap, &nheap);
    while (nheap > 0) {
        bigram b = heap_pop(heap, &nheap);
        symbol *l = &sym[b.left], *r = &sym[b.right];
        if (l->len == 0 || r->len == 0 || l->next != b.right || l->len + r->len != b.len) continue;
        l->len += r->len;
        r->len = 0;
        l->next = r->next;
        if (r->next >= 0) sym[r->next].prev = b.left;
        try_pair(t, buf, sym, l->prev, heap, &nheap);
        try_pair(t, buf, sym, b.left, heap, &nheap);
    }
    int rc = 0, count = 0;
    if (add_bos) ids[count++] = t->bos;
    for (int i = nsym > 0 ? 0 : -1; i >= 0 && rc == 0; i = sym[i].next) {
        int id = lookup(t, buf + sym[i].start, (size_t)sym[i].len);
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
            int b = t->byte_id[(unsigned char)buf[sym[i].start + j]];
            ids[count++] = b >= 0 ? b : t->unk;
        }
    }
    free(buf), free(sym), free(heap);
    if (rc) return -1;
    *n = count;
    return 0;
}

/* ---- decoding -------------------------------------------------------------------------- */

int tok_decode(const tok *t, int prev, int id, char *buf, size_t n) {
    if (id < 0 || id >= t->n || n == 0) return -1;
    if (t->type[id] == TT_CONTROL) {
        buf[0] = 0;
        return 0;
    }
    if (t->type[id] == TT_BYTE) {
        if (n < 2) return -1;
        buf[0] = (char)t->byte[id];
        buf[1] = 0;
        return 1;
    }
    const char *k = t->text + t->key_off[id];
    size_t len = t->key_len[id], out = 0;
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
