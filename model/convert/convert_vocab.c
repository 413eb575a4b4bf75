/* convert_vocab.c: the vocabulary half of convert.h (llama2.c tokenizer files and GGUF
 * vocabularies read into GGUF's form). A GGUF vocabulary of any type is copied key by key (its
 * tokenizer.* pairs verbatim: merges, pre-tokenizer, special ids, chat template, ...), only
 * the per-token arrays rebuilt so that padding rows can be appended. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/convert/convert.h"
#include "model/formats/gguf.h"
#include "util/err.h"
#include "util/file.h"

/* Token types with GGUF's ids (tokenizer.ggml.token_type). */
enum { TT_NORMAL = 1, TT_UNKNOWN = 2, TT_CONTROL = 3, TT_UNUSED = 5, TT_BYTE = 6 };

#define SPACE_MARK "\xe2\x96\x81" /* '▁' */

struct convert_vocab {
    int n;
    char *arena;        /* every piece, back to back */
    const char **piece; /* into arena; lengths in len (pieces may hold any byte) */
    uint64_t *len;
    float *score; /* NULL: the GGUF vocabulary has no scores (byte-level BPE) */
    int32_t *type;
    int bos, eos, unk, add_bos;
    gguf *g;         /* a GGUF source, whose other tokenizer.* pairs are copied; or NULL */
    char path[1024]; /* where it was read from, for messages */
};

int convert_vocab_size(const convert_vocab *v) {
    return v->n;
}

const char *convert_vocab_path(const convert_vocab *v) {
    return v->path;
}

void convert_vocab_free(convert_vocab *v) {
    if (!v) return;
    gguf_close(v->g);
    free(v->arena);
    free(v->piece);
    free(v->len);
    free(v->score);
    free(v->type);
    free(v);
}

/* Allocates the per-token arrays and an arena of arena_bytes. */
static convert_vocab *vocab_new(int n, size_t arena_bytes) {
    convert_vocab *v = calloc(1, sizeof *v);
    if (!v) return NULL;
    v->n = n;
    v->arena = malloc(arena_bytes ? arena_bytes : 1);
    v->piece = malloc(sizeof *v->piece * (size_t)n);
    v->len = malloc(sizeof *v->len * (size_t)n);
    v->score = malloc(sizeof *v->score * (size_t)n);
    v->type = malloc(sizeof *v->type * (size_t)n);
    if (!v->arena || !v->piece || !v->len || !v->score || !v->type) {
        convert_vocab_free(v);
        return NULL;
    }
    v->unk = 0, v->bos = 1, v->eos = 2, v->add_bos = 1;
    return v;
}

static int is_byte_piece(const unsigned char *s, size_t n) {
    const char *hex = "0123456789ABCDEFabcdef";
    return n == 6 && memcmp(s, "<0x", 3) == 0 && s[5] == '>' && s[3] && s[4] && strchr(hex, s[3]) &&
           strchr(hex, s[4]);
}

/* llama2.c tokenizer: int32 max_token_length, then per token float32 score, int32 length,
 * bytes, with ' ' where SentencePiece has '▁'. */
static int load_llama2c(convert_vocab **out, const unsigned char *p, size_t size, const char *path,
                        char *err) {
    int n = 0;
    size_t spaces = 0, bytes = 0;
    for (size_t pos = 4; pos < size; n++) { /* validate and count */
        int32_t len;
        if (size - pos < 8) return err_set(err, "%s: token %d: truncated record", path, n);
        memcpy(&len, p + pos + 4, 4);
        pos += 8;
        if (len < 0 || (size_t)len > size - pos)
            return err_set(err, "%s: token %d: length %d runs past the end of the file", path, n,
                           len);
        for (int32_t j = 0; j < len; j++) spaces += p[pos + j] == ' ';
        bytes += (size_t)len;
        pos += (size_t)len;
        if (n == INT_MAX / 4) return err_set(err, "%s: too many tokens", path);
    }
    if (n < 3)
        return err_set(err, "%s: %d tokens; a Llama vocabulary needs unk, BOS, EOS", path, n);
    static const char *special[3] = {"<unk>", "<s>", "</s>"};
    convert_vocab *v = vocab_new(n, bytes + 2 * spaces + 16);
    if (!v) return err_set(err, "%s: out of memory", path);
    char *a = v->arena;
    size_t pos = 4;
    for (int i = 0; i < n; i++) {
        int32_t len;
        memcpy(&v->score[i], p + pos, 4);
        memcpy(&len, p + pos + 4, 4);
        const unsigned char *s = p + pos + 8;
        pos += 8 + (size_t)len;
        v->piece[i] = a;
        if (i < 3) { /* llama2.c's export writes BOS/EOS as "\n<s>\n" / "\n</s>\n" */
            size_t k = strlen(special[i]);
            memcpy(a, special[i], k), a += k;
        } else {
            for (int32_t j = 0; j < len; j++)
                if (s[j] == ' ')
                    memcpy(a, SPACE_MARK, 3), a += 3;
                else
                    *a++ = (char)s[j];
        }
        v->len[i] = (uint64_t)(a - v->piece[i]);
        v->type[i] = i == 0                          ? TT_UNKNOWN
                     : i <= 2 || len == 0            ? TT_CONTROL
                     : is_byte_piece(s, (size_t)len) ? TT_BYTE
                                                     : TT_NORMAL;
    }
    *out = v;
    return 0;
}

/* An id key: a value that is no token (llama.cpp's converters write 4294967295 for "none")
 * counts as absent, as llama.cpp reads it; tok_load warns about it. */
static int opt_id(const gguf *g, const char *key, int n, int *out, char *err) {
    uint32_t id;
    if (gguf_find_key(g, key) < 0) return 0;
    if (gguf_get_u32(g, key, &id, err)) return -1;
    if (id < (uint32_t)n) *out = (int)id;
    return 0;
}

/* Reads the per-token arrays of any GGUF vocabulary; keeps g for the other keys. */
static int load_gguf(convert_vocab **out, const char *path, char *err) {
    gguf *g;
    if (gguf_open(&g, path, err)) return -1;
    convert_vocab *v = NULL;
    const char *model;
    uint64_t n = 0, bytes = 0;
    int rc = -1;
    if (gguf_get_str(g, "tokenizer.ggml.model", &model, err) ||
        gguf_get_arr_len(g, "tokenizer.ggml.tokens", GGUF_STRING, &n, err))
        goto done;
    if (n < 3 || n > INT_MAX / 4) {
        err_set(err, "%s: tokenizer.ggml.tokens has %llu tokens", path, (unsigned long long)n);
        goto done;
    }
    gguf_str s;
    for (uint64_t i = 0; i < n; i++) {
        if (gguf_get_arr_str(g, "tokenizer.ggml.tokens", i, &s, err)) goto done;
        bytes += s.len;
    }
    if (!(v = vocab_new((int)n, (size_t)bytes))) {
        err_set(err, "%s: out of memory", path);
        goto done;
    }
    v->eos = -1; /* written only if the source has one (a GGUF source keeps its own keys) */
    char *a = v->arena;
    for (uint64_t i = 0; i < n; i++) {
        gguf_get_arr_str(g, "tokenizer.ggml.tokens", i, &s, err);
        memcpy(a, s.ptr, (size_t)s.len);
        v->piece[i] = a, v->len[i] = s.len, a += s.len;
        v->type[i] = TT_NORMAL;
    }
    int add_bos = 1;
    if (gguf_find_key(g, "tokenizer.ggml.scores") < 0) {
        free(v->score);
        v->score = NULL;
    } else if (gguf_get_arr_f32(g, "tokenizer.ggml.scores", v->score, n, err)) {
        goto done;
    }
    if ((gguf_find_key(g, "tokenizer.ggml.token_type") >= 0 &&
         gguf_get_arr_i32(g, "tokenizer.ggml.token_type", v->type, n, err)) ||
        opt_id(g, "tokenizer.ggml.bos_token_id", v->n, &v->bos, err) ||
        opt_id(g, "tokenizer.ggml.eos_token_id", v->n, &v->eos, err) ||
        opt_id(g, "tokenizer.ggml.unknown_token_id", v->n, &v->unk, err) ||
        (gguf_find_key(g, "tokenizer.ggml.add_bos_token") >= 0 &&
         gguf_get_bool(g, "tokenizer.ggml.add_bos_token", &add_bos, err)))
        goto done;
    v->add_bos = add_bos;
    v->g = g, g = NULL;
    *out = v, v = NULL;
    rc = 0;
done:
    convert_vocab_free(v);
    gguf_close(g);
    return rc;
}

int convert_vocab_load(convert_vocab **out, const char *path, char *err) {
    *out = NULL;
    FILE *f = file_fopen_regular(path, "tokenizer", err); /* a directory or FIFO is refused */
    if (!f) return -1;
    unsigned char head[4] = {0};
    size_t got = fread(head, 1, 4, f);
    if (got == 4 && memcmp(head, "GGUF", 4) == 0) {
        fclose(f);
        if (load_gguf(out, path, err)) return -1;
        snprintf((*out)->path, sizeof(*out)->path, "%s", path);
        return 0;
    }
    /* A llama2.c tokenizer is a few hundred KB: read it whole. */
    unsigned char *buf = NULL;
    long size = -1;
    if (fseek(f, 0, SEEK_END) == 0) size = ftell(f);
    if (size < 4 || size > (1L << 30) || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return err_set(err, "%s: %s", path,
                       size >= 0 && size < 4 ? "too short for a tokenizer file"
                                             : "not a readable tokenizer file");
    }
    if (!(buf = malloc((size_t)size)) || fread(buf, 1, (size_t)size, f) != (size_t)size) {
        free(buf);
        fclose(f);
        return err_set(err, "%s: cannot read %ld bytes", path, size);
    }
    fclose(f);
    int rc = load_llama2c(out, buf, (size_t)size, path, err);
    free(buf);
    if (rc == 0) snprintf((*out)->path, sizeof(*out)->path, "%s", path);
    return rc;
}

int convert_vocab_eos(const convert_vocab *v) {
    return v->eos;
}

/* Whether piece p of length n is one of v's pieces listed in at[0..k). */
static int vocab_holds(const convert_vocab *v, const int *at, int k, const char *p, size_t n) {
    for (int j = 0; j < k; j++)
        if (v->len[at[j]] == n && memcmp(v->piece[at[j]], p, n) == 0) return 1;
    return 0;
}

/* The per-token arrays of n rows: v's tokens, then "[PADi]" of type unused (llama.cpp's
 * converter pads a vocabulary to the embedding's rows that way: Qwen2.5's 151665 tokens to 151936
 * or 152064 rows). A vocabulary may already hold a "[PADi]" at another id (the fuzzer made one);
 * since the loader rejects a repeated token, that pad becomes "[PADi_k]" with the least k free.
 * Pads cannot repeat each other: plain ones differ in i, only suffixed ones hold '_'. */
static int write_tokens(const convert_vocab *v, gguf_writer *w, int n) {
    enum { PAD_NAME = 32 }; /* "[PAD" + 2 x 10 digits + "_]" + NUL fits */
    const char **piece = malloc(sizeof *piece * (size_t)n);
    uint64_t *len = malloc(sizeof *len * (size_t)n);
    float *score = malloc(sizeof *score * (size_t)n);
    int32_t *type = malloc(sizeof *type * (size_t)n);
    char *pads = malloc(PAD_NAME * (size_t)(n - v->n) + 1);
    int *padlike = malloc(sizeof *padlike * (size_t)(v->n + 1)), npadlike = 0;
    int rc = -1;
    if (piece && len && score && type && pads && padlike) {
        for (int i = 0; i < v->n && n > v->n; i++)
            if (v->len[i] >= 4 && memcmp(v->piece[i], "[PAD", 4) == 0) padlike[npadlike++] = i;
        for (int i = 0; i < n; i++) {
            if (i < v->n) {
                piece[i] = v->piece[i], len[i] = v->len[i], type[i] = v->type[i];
                score[i] = v->score ? v->score[i] : 0.0f;
                continue;
            }
            char *p = pads + PAD_NAME * (size_t)(i - v->n);
            len[i] = (uint64_t)snprintf(p, PAD_NAME, "[PAD%d]", i);
            for (int k = 1; vocab_holds(v, padlike, npadlike, p, len[i]); k++)
                len[i] = (uint64_t)snprintf(p, PAD_NAME, "[PAD%d_%d]", i, k);
            piece[i] = p, type[i] = TT_UNUSED, score[i] = 0.0f;
        }
        gguf_writer_add_array(w, "tokenizer.ggml.tokens", GGUF_STRING, piece, len, (uint64_t)n);
        if (v->score || !v->g)
            gguf_writer_add_array(w, "tokenizer.ggml.scores", GGUF_F32, score, NULL, (uint64_t)n);
        rc = gguf_writer_add_array(w, "tokenizer.ggml.token_type", GGUF_I32, type, NULL,
                                   (uint64_t)n);
    }
    free(piece), free(len), free(score), free(type), free(pads), free(padlike);
    return rc;
}

/* Whether key is a special-token id the source's reader treats as absent (out of its range,
 * as llama.cpp's converter writes 4294967295 for "no token"). Such a key is not copied: in a
 * copy padded past the id it would name a real token the source never meant. */
static int absent_id(const convert_vocab *v, const char *key) {
    size_t k = strlen(key), t = strlen("_token_id");
    char err[ERR_LEN];
    uint32_t id;
    if (k < t || strcmp(key + k - t, "_token_id") != 0) return 0;
    return gguf_get_u32(v->g, key, &id, err) == 0 && id >= (uint32_t)v->n;
}

/* For convert.c and synth: the vocabulary's keys, written into a GGUF writer, with `eos` as
 * the EOS id and n >= its size rows. */
int convert_vocab_write(const convert_vocab *v, gguf_writer *w, int eos, int n) {
    if (n < v->n || write_tokens(v, w, n)) return -1;
    if (eos >= 0) gguf_writer_add_u32(w, "tokenizer.ggml.eos_token_id", (uint32_t)eos);
    if (v->g) { /* every other tokenizer.* pair as the source holds it */
        for (int i = 0; i < gguf_kv_count(v->g); i++) {
            const char *key = gguf_kv_key(v->g, i);
            if (strncmp(key, "tokenizer.", 10) != 0 || strcmp(key, "tokenizer.ggml.tokens") == 0 ||
                strcmp(key, "tokenizer.ggml.scores") == 0 ||
                strcmp(key, "tokenizer.ggml.token_type") == 0 ||
                strcmp(key, "tokenizer.ggml.eos_token_id") == 0 || absent_id(v, key))
                continue;
            gguf_writer_copy_kv(w, v->g, i);
        }
        return 0;
    }
    gguf_writer_add_str(w, "tokenizer.ggml.model", "llama");
    gguf_writer_add_str(w, "tokenizer.ggml.pre", "default");
    gguf_writer_add_u32(w, "tokenizer.ggml.bos_token_id", (uint32_t)v->bos);
    gguf_writer_add_u32(w, "tokenizer.ggml.unknown_token_id", (uint32_t)v->unk);
    gguf_writer_add_bool(w, "tokenizer.ggml.add_bos_token", v->add_bos);
    return gguf_writer_add_bool(w, "tokenizer.ggml.add_eos_token", 0);
}
