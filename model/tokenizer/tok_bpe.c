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
 *   4. Each final symbol is its token; a symbol that is no token (only in a vocabulary lacking
 *      a byte's stand-in) becomes the tokens of its single bytes, if any, as in llama.cpp.
 * Merges are checked on load to name two tokens whose concatenation is a token (as Hugging
 * Face's BPE requires), so the merge loop works on token ids: a pair lookup is one hash probe
 * on two integers and nothing is allocated per word.
 *
 * Decoding maps each code point of a normal token back to its byte (a code point outside the
 * map, which llama.cpp prints as "[UNK_BYTE_0x..]", is kept as its UTF-8); user-defined tokens
 * are their text, control tokens nothing. llama.cpp's optional clean-up of spaces before
 * punctuation (clean_spaces) is not applied: decoding stays the exact inverse of encoding. */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/formats/gguf.h"
#include "model/tokenizer/tok_internal.h"
#include "util/err.h"
#include "util/hash.h"
#include "util/heap.h"

#define MAPPED_CP_END 0x144 /* the stand-ins are below U+0144 */

typedef struct {
    int32_t left, right; /* token ids; left = -1 marks an empty slot */
    int32_t rank, result;
} merge;

typedef struct {
    char *text;          /* arena: stored token texts, each NUL-terminated */
    uint32_t *off, *len; /* per id, into text */
    char *dec;           /* arena: what each token decodes to */
    uint32_t *dec_off, *dec_len;
    int32_t *hash; /* token text -> id, open addressing, -1 = empty */
    uint32_t hash_cap;
    merge *merges; /* (left, right) -> rank and result, open addressing */
    uint32_t merge_cap;
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
    tok_pre_free(v->pre);
    free(v);
}

/* The id of the token whose text is s[0..n), or -1. */
static int lookup(const bpe *v, const char *s, size_t n) {
    uint32_t h = (uint32_t)hash_fnv1a(s, n) & (v->hash_cap - 1);
    for (; v->hash[h] >= 0; h = (h + 1) & (v->hash_cap - 1)) {
        int id = v->hash[h];
        if (v->len[id] == n && memcmp(v->text + v->off[id], s, n) == 0) return id;
    }
    return -1;
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

/* An optional u32 id key: absent keeps *out; present must be a token (what = "BOS", ...). */
static int opt_id(const gguf *g, const char *key, int n, int *out, int required_in_range,
                  char *err) {
    uint32_t x;
    if (gguf_find_key(g, key) < 0) return 0;
    if (gguf_get_u32(g, key, &x, err)) return -1;
    if (x >= (uint32_t)n) {
        if (required_in_range)
            return err_set(err, "%s: %s = %u is outside the %d tokens", gguf_path(g), key, x, n);
        return 0; /* an informative id outside the vocabulary is ignored, as in llama.cpp */
    }
    *out = (int)x;
    return 0;
}

/* Special tokens llama.cpp finds by their text when no key names them, and marks control
 * tokens (so they decode to nothing and are not matched in text unless parsing specials). */
typedef struct {
    const char *keys[2];  /* GGUF keys naming the role's token (either) */
    const char *texts[8]; /* the texts searched, first present wins */
} role;

static const role roles[] = {
    {{"tokenizer.ggml.eot_token_id"},
     {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<EOT>",
      "<\xef\xbd\x9c"
      "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>"}},
    {{"tokenizer.ggml.eom_token_id"}, {"<|eom_id|>"}},
    {{"tokenizer.ggml.fim_pre_token_id", "tokenizer.ggml.prefix_token_id"},
     {"<|fim_prefix|>", "<fim-prefix>",
      "<\xef\xbd\x9c"
      "fim\xe2\x96\x81"
      "begin\xef\xbd\x9c>",
      "<PRE>"}},
    {{"tokenizer.ggml.fim_suf_token_id", "tokenizer.ggml.suffix_token_id"},
     {"<|fim_suffix|>", "<fim-suffix>",
      "<\xef\xbd\x9c"
      "fim\xe2\x96\x81hole\xef\xbd\x9c>",
      "<SUF>"}},
    {{"tokenizer.ggml.fim_mid_token_id", "tokenizer.ggml.middle_token_id"},
     {"<|fim_middle|>", "<fim-middle>",
      "<\xef\xbd\x9c"
      "fim\xe2\x96\x81"
      "end\xef\xbd\x9c>",
      "<MID>"}},
    {{"tokenizer.ggml.fim_pad_token_id"}, {"<|fim_pad|>", "<fim-pad>", "<PAD>"}},
    {{"tokenizer.ggml.fim_rep_token_id"},
     {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>"}},
    {{"tokenizer.ggml.fim_sep_token_id"}, {"<|file_sep|>"}},
};
/* End-of-generation texts: always control tokens in llama.cpp. */
static const char *const eog_texts[] = {"<|eot_id|>",    "<|im_end|>", "<|end|>", "<end_of_turn>",
                                        "<|endoftext|>", "<|eom_id|>", "<EOT>"};

static int find_specials(tok *t, const gguf *g, char *err) {
    const bpe *v = t->impl;
    for (size_t r = 0; r < sizeof roles / sizeof roles[0]; r++) {
        int keyed = -1;
        for (int k = 0; k < 2 && roles[r].keys[k]; k++)
            if (opt_id(g, roles[r].keys[k], t->n, &keyed, 0, err)) return -1;
        if (keyed < 0)
            for (int k = 0; k < 8 && roles[r].texts[k] && keyed < 0; k++)
                if ((keyed = lookup(v, roles[r].texts[k], strlen(roles[r].texts[k]))) >= 0)
                    t->type[keyed] = TT_CONTROL;
        if (r == 0) t->eot = keyed;
    }
    for (size_t k = 0; k < sizeof eog_texts / sizeof eog_texts[0]; k++) {
        int id = lookup(v, eog_texts[k], strlen(eog_texts[k]));
        if (id >= 0) t->type[id] = TT_CONTROL;
    }
    return 0;
}

/* Tokens: texts (valid UTF-8, distinct), types, the text index. */
static int load_tokens(tok *t, bpe *v, const gguf *g, char *err) {
    const char *path = gguf_path(g);
    uint64_t n;
    char q[200];
    if (gguf_get_arr_len(g, "tokenizer.ggml.tokens", GGUF_STRING, &n, err)) return -1;
    if (n < 1 || n > INT_MAX / 4)
        return err_set(err, "%s: tokenizer.ggml.tokens has %llu tokens (need 1..%d)", path,
                       (unsigned long long)n, INT_MAX / 4);
    t->n = (int)n;
    int32_t *types = malloc(n * sizeof *types);
    t->type = malloc(n);
    v->off = malloc(n * sizeof *v->off);
    v->len = malloc(n * sizeof *v->len);
    if (!types || !t->type || !v->off || !v->len) {
        free(types);
        return err_set(err, "%s: out of memory for %llu tokens", path, (unsigned long long)n);
    }
    int rc = -1;
    if (gguf_find_key(g, "tokenizer.ggml.token_type") >= 0) {
        if (gguf_get_arr_i32(g, "tokenizer.ggml.token_type", types, n, err)) goto done;
    } else {
        for (uint64_t i = 0; i < n; i++) types[i] = TT_NORMAL;
    }
    size_t total = 0;
    for (uint64_t i = 0; i < n; i++) {
        gguf_str s;
        if (gguf_get_arr_str(g, "tokenizer.ggml.tokens", i, &s, err)) goto done;
        if (types[i] < TT_UNDEFINED || types[i] > TT_BYTE) {
            err_set(err, "%s: tokenizer.ggml.token_type[%llu] = %d is not a known type", path,
                    (unsigned long long)i, types[i]);
            goto done;
        }
        t->type[i] = (uint8_t)types[i];
        for (size_t at = 0; at < s.len;) {
            size_t l = tok_utf8_valid_len((const unsigned char *)s.ptr + at, s.len - at);
            if (!l) {
                err_set(err, "%s: tokenizer.ggml.tokens[%llu] '%s' is not valid UTF-8 (byte %zu)",
                        path, (unsigned long long)i, quote(s.ptr, s.len, q, sizeof q), at);
                goto done;
            }
            at += l;
        }
        total += (s.len ? s.len : 24) + 1;
    }
    if (!(v->text = malloc(total))) {
        err_set(err, "%s: out of memory for the token texts", path);
        goto done;
    }
    v->hash_cap = 16;
    while (v->hash_cap < 2u * (uint32_t)n) v->hash_cap *= 2;
    if (!(v->hash = malloc(v->hash_cap * sizeof *v->hash))) {
        err_set(err, "%s: out of memory", path);
        goto done;
    }
    memset(v->hash, 0xff, v->hash_cap * sizeof *v->hash);
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
        int dup = lookup(v, k, v->len[i]);
        if (dup >= 0) {
            err_set(err, "%s: tokenizer.ggml.tokens[%llu] '%s' repeats token %d", path,
                    (unsigned long long)i, quote(k, v->len[i], q, sizeof q), dup);
            goto done;
        }
        uint32_t h = (uint32_t)hash_fnv1a(k, v->len[i]) & (v->hash_cap - 1);
        while (v->hash[h] >= 0) h = (h + 1) & (v->hash_cap - 1);
        v->hash[h] = (int32_t)i;
    }
    rc = 0;
done:
    free(types);
    return rc;
}

/* Merges "A B" (split at the first space after the first byte, as llama.cpp does): A, B
 * and AB must be tokens; a repeated pair keeps its first (best) rank. */
static int load_merges(bpe *v, const gguf *g, char *err) {
    const char *path = gguf_path(g);
    uint64_t n;
    char q[200];
    if (gguf_get_arr_len(g, "tokenizer.ggml.merges", GGUF_STRING, &n, err)) return -1;
    if (n > INT_MAX / 4)
        return err_set(err, "%s: tokenizer.ggml.merges has %llu entries", path,
                       (unsigned long long)n);
    v->merge_cap = 16;
    while (v->merge_cap < 2u * (uint32_t)n) v->merge_cap *= 2;
    if (!(v->merges = malloc(v->merge_cap * sizeof *v->merges)))
        return err_set(err, "%s: out of memory for %llu merges", path, (unsigned long long)n);
    for (uint32_t i = 0; i < v->merge_cap; i++) v->merges[i].left = -1;
    char *joined = NULL;
    size_t joined_cap = 0;
    int rc = -1;
    for (uint64_t i = 0; i < n; i++) {
        gguf_str s;
        if (gguf_get_arr_str(g, "tokenizer.ggml.merges", i, &s, err)) goto done;
        const char *sp = s.len > 1 ? memchr(s.ptr + 1, ' ', s.len - 1) : NULL;
        if (!sp) {
            err_set(err,
                    "%s: tokenizer.ggml.merges[%llu] '%s' is not two tokens separated by "
                    "a space",
                    path, (unsigned long long)i, quote(s.ptr, s.len, q, sizeof q));
            goto done;
        }
        size_t la = (size_t)(sp - s.ptr), lb = s.len - la - 1;
        int a = lookup(v, s.ptr, la), b = lookup(v, sp + 1, lb);
        if (a < 0 || b < 0) {
            err_set(err, "%s: tokenizer.ggml.merges[%llu] names an unknown token '%s'", path,
                    (unsigned long long)i,
                    a < 0 ? quote(s.ptr, la, q, sizeof q) : quote(sp + 1, lb, q, sizeof q));
            goto done;
        }
        if (la + lb > joined_cap) {
            free(joined);
            joined_cap = 2 * (la + lb);
            if (!(joined = malloc(joined_cap))) {
                err_set(err, "%s: out of memory", path);
                goto done;
            }
        }
        memcpy(joined, s.ptr, la);
        memcpy(joined + la, sp + 1, lb);
        int ab = lookup(v, joined, la + lb);
        if (ab < 0) {
            err_set(err, "%s: tokenizer.ggml.merges[%llu] makes '%s', which is not a token", path,
                    (unsigned long long)i, quote(joined, la + lb, q, sizeof q));
            goto done;
        }
        if (find_merge(v, a, b)) continue;
        uint32_t h = pair_hash(a, b) & (v->merge_cap - 1);
        while (v->merges[h].left >= 0) h = (h + 1) & (v->merge_cap - 1);
        v->merges[h] = (merge){a, b, (int32_t)i, ab};
    }
    rc = 0;
done:
    free(joined);
    return rc;
}

/* What each token decodes to (see the header comment). */
static int build_decoded(const tok *t, bpe *v, const char *path, char *err) {
    size_t total = 0;
    for (int i = 0; i < t->n; i++) total += v->len[i];
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
                uint32_t cp = utf8_get(s + at, l);
                if (cp < MAPPED_CP_END && byte_of[cp] >= 0)
                    v->dec[pos++] = (char)byte_of[cp];
                else
                    memcpy(v->dec + pos, s + at, l), pos += l;
                at += l;
            }
        } /* control, unknown, unused, byte, undefined: nothing, as in llama.cpp */
        v->dec_len[i] = (uint32_t)(pos - start);
        if (v->dec_len[i] >= TOK_PIECE_MAX)
            return err_set(err, "%s: token %d: piece of %u bytes exceeds the %d-byte limit", path,
                           i, v->dec_len[i], TOK_PIECE_MAX - 1);
    }
    return 0;
}

static int bpe_load_gguf(tok *t, const gguf *g, char *err) {
    const char *path = gguf_path(g);
    bpe *v = calloc(1, sizeof *v);
    if (!v) return err_set(err, "%s: out of memory", path);
    t->impl = v;
    if (load_tokens(t, v, g, err) || load_merges(v, g, err)) return -1;
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
    if (opt_id(g, "tokenizer.ggml.bos_token_id", t->n, &t->bos, 1, err) ||
        opt_id(g, "tokenizer.ggml.eos_token_id", t->n, &t->eos, 1, err) ||
        opt_id(g, "tokenizer.ggml.padding_token_id", t->n, &t->pad, 0, err))
        return -1;
    if (gguf_find_key(g, "tokenizer.ggml.add_bos_token") >= 0 &&
        gguf_get_bool(g, "tokenizer.ggml.add_bos_token", &t->add_bos, err))
        return -1;
    if (t->add_bos && t->bos < 0)
        return err_set(err,
                       "%s: prompts start with BOS (tokenizer.ggml.add_bos_token) but "
                       "tokenizer.ggml.bos_token_id is missing",
                       path);
    if (find_specials(t, g, err)) return -1;
    for (int b = 0; b < 256; b++) {
        v->mapped_len[b] = (uint8_t)utf8_put(stand_in(b), v->mapped[b]);
        v->byte_tok[b] = lookup(v, v->mapped[b], v->mapped_len[b]);
    }
    return build_decoded(t, v, path, err);
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
        if (sym[i].id >= 0) {
            if (emit(sym[i].id, ids, count, cap, err)) return -1;
            continue;
        }
        /* A lone byte without a token for its stand-in: the tokens of the stand-in's bytes. */
        const char *m = v->mapped[w[sym[i].start]];
        for (int j = 0; j < v->mapped_len[w[sym[i].start]]; j++) {
            int id = lookup(v, m + j, 1);
            if (id >= 0 && emit(id, ids, count, cap, err)) return -1;
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

static int bpe_decode(const tok *t, int prev, int id, char *buf, size_t n) {
    (void)prev;
    const bpe *v = t->impl;
    size_t len = v->dec_len[id];
    if (len >= n) len = n - 1;
    memcpy(buf, v->dec + v->dec_off[id], len);
    buf[len] = 0;
    return (int)len;
}

const tok_kind tok_kind_bpe = {
    .model = "gpt2",
    .what = "byte-level BPE",
    .load_gguf = bpe_load_gguf,
    .encode = bpe_encode,
    .decode = bpe_decode,
    .piece = bpe_piece,
    .free_impl = bpe_free,
};
