/* test_tokenizer.c: the tokenizer spec. Known ids for both shared vocabularies, round trips,
 * byte fallback, invalid UTF-8, llama.cpp's reference vectors (ggml-vocab-llama-spm.gguf.inp
 * / .out) through both the GGUF vocabulary and the llama2.c file of the same vocabulary, and
 * every error path of the loaders. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <math.h>

#include "model/formats/gguf.h"
#include "model/tokenizer/tokenizer.h"
#include "tests/testutil.h"
#include "util/err.h"

#define SP "\xe2\x96\x81" /* '▁' */

static tok *load(const char *rel) {
    char err[ERR_LEN];
    tok *t = NULL;
    if (tok_load(&t, test_shared(rel), err) != 0) {
        fprintf(stderr, "cannot load %s: %s\n", rel, err);
        exit(1);
    }
    return t;
}

/* Encodes text; returns the count (ids must hold strlen + 3). */
static int enc(const tok *t, const char *text, int bos, int *ids) {
    char err[ERR_LEN];
    int n = -1;
    int rc = tok_encode(t, text, bos, ids, &n, err);
    CHECK_MSG(rc == 0, "encode '%s': %s", text, err);
    return n;
}

static int same_ids(const int *a, int na, const int *b, int nb) {
    return na == nb && memcmp(a, b, na * sizeof *a) == 0;
}

static void print_ids(const char *label, const int *ids, int n) {
    fprintf(stderr, "  %s:", label);
    for (int i = 0; i < n; i++) fprintf(stderr, " %d", ids[i]);
    fprintf(stderr, "\n");
}

/* Decodes ids[0..n) (ids[0] may be BOS) into out; returns the byte length. */
static size_t decode_all(const tok *t, const int *ids, int n, char *out, size_t cap) {
    size_t len = 0;
    char piece[TOK_PIECE_MAX];
    for (int i = 0; i < n; i++) {
        int k = tok_decode(t, i ? ids[i - 1] : -1, ids[i], piece, sizeof piece);
        CHECK(k >= 0);
        if (k < 0 || len + (size_t)k >= cap) return len;
        memcpy(out + len, piece, (size_t)k);
        len += (size_t)k;
    }
    out[len] = 0;
    return len;
}

/* encode(text) with BOS, then decode == text, byte for byte. */
static void round_trip(const tok *t, const char *text) {
    size_t len = strlen(text);
    int *ids = malloc((len + 3) * sizeof *ids);
    char *out = malloc(len + 64);
    int n = enc(t, text, 1, ids);
    CHECK(n >= 1 && ids[0] == tok_bos(t));
    size_t got = decode_all(t, ids, n, out, len + 64);
    CHECK_MSG(got == len && memcmp(out, text, len) == 0, "round trip of '%s' gave '%s'", text, out);
    free(ids);
    free(out);
}

static void test_known_ids(void) {
    tok *big = load("models/tok32000.bin"), *small = load("models/tok512.bin");
    int ids[64];
    CHECK(tok_vocab_size(big) == 32000 && tok_vocab_size(small) == 512);
    CHECK(tok_bos(big) == 1 && tok_eos(big) == 2 && tok_add_bos(big) == 1);

    int n = enc(big, "Once upon a time", 1, ids);
    const int want_big[] = {1, 9038, 2501, 263, 931};
    CHECK(same_ids(ids, n, want_big, 5));

    /* tok512 (the TinyStories vocabulary): every word below is a piece of its own. */
    n = enc(small, "Once upon a time", 1, ids);
    const int want_small[] = {1, 403, 407, 261, 378};
    if (!same_ids(ids, n, want_small, 5)) print_ids("tok512 'Once upon a time'", ids, n);
    CHECK(same_ids(ids, n, want_small, 5));
    CHECK(strcmp(tok_piece(small, 403), " Once") == 0);
    CHECK(strcmp(tok_piece(small, 261), " a") == 0);

    /* Empty text: nothing, not even the dummy prefix. */
    CHECK(enc(big, "", 0, ids) == 0);
    CHECK(enc(big, "", 1, ids) == 1 && ids[0] == 1);

    /* Byte fallback: U+65E5 is not in tok512, so it is <0xE6><0x97><0xA5> (id 3 + byte);
     * U+00E9 is, as one piece. */
    n = enc(small, "\xe6\x97\xa5", 0, ids);
    CHECK(n == 4 && ids[1] == 3 + 0xe6 && ids[2] == 3 + 0x97 && ids[3] == 3 + 0xa5);
    n = enc(small, "\xc3\xa9", 0, ids);
    CHECK(n == 2 && ids[1] == 485);

    /* Control pieces typed as text stay text: "<s>" never encodes to BOS. */
    n = enc(big, "<s></s><unk>", 0, ids);
    for (int i = 0; i < n; i++) CHECK(ids[i] > 2);
    /* Neither does a literal byte-token spelling. */
    n = enc(big, "<0x41>", 0, ids);
    for (int i = 0; i < n; i++) CHECK(ids[i] > 258);

    /* A literal '▁' in the text is a space, as in SentencePiece and llama.cpp. */
    int ids2[64];
    n = enc(big, "a b", 0, ids);
    CHECK(same_ids(ids, n, ids2, enc(big, "a" SP "b", 0, ids2)));

    /* Decoding rules from tokenizer.h. */
    char buf[TOK_PIECE_MAX];
    CHECK(tok_decode(big, 1, 9038, buf, sizeof buf) == 4 && strcmp(buf, "Once") == 0);
    CHECK(tok_decode(big, 9038, 2501, buf, sizeof buf) == 5 && strcmp(buf, " upon") == 0);
    CHECK(tok_decode(big, -1, 1, buf, sizeof buf) == 0 && buf[0] == 0);
    CHECK(tok_decode(big, -1, 2, buf, sizeof buf) == 0);
    CHECK(tok_decode(big, -1, 3 + 0x0a, buf, sizeof buf) == 1 && buf[0] == '\n');
    CHECK(tok_decode(big, -1, 3, buf, sizeof buf) == 1 && buf[0] == 0); /* <0x00> */
    CHECK(tok_decode(big, -1, 32000, buf, sizeof buf) == -1);
    CHECK(tok_decode(big, -1, -1, buf, sizeof buf) == -1);
    CHECK(strcmp(tok_piece(big, 1), "\n<s>\n") == 0); /* as stored by llama2.c */
    CHECK(tok_piece(big, 32000) == NULL && tok_piece(big, -1) == NULL);
    tok_free(big);
    tok_free(small);
}

static void test_round_trips(void) {
    const char *vocabs[] = {"models/tok512.bin", "models/tok32000.bin",
                            "tokenizer-vectors/ggml-vocab-llama-spm.gguf"};
    const char *texts[] = {
        "Once upon a time, there was a little girl named Lily.",
        "h\xc3\xa9llo w\xc3\xb6rld \xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e \xf0\x9f\x99\x82",
        "  leading and trailing spaces  ",
        "tabs\tand\nnewlines\r\n\n",
        "\x01\x02\x7f control bytes and \xe2\x96\x81 a literal-free line",
        "x",
        " ",
    };
    for (int v = 0; v < 3; v++) {
        tok *t = load(vocabs[v]);
        for (size_t i = 0; i < sizeof texts / sizeof texts[0]; i++) {
            if (strstr(texts[i], "\xe2\x96\x81")) continue; /* '▁' decodes as ' ' by design */
            round_trip(t, texts[i]);
        }
        /* Invalid UTF-8: lone continuation bytes, truncated sequences, overlong forms,
         * surrogates, bytes past U+10FFFF. Every byte comes back. */
        round_trip(t, "\x80\xbf abc \xc3 \xe2\x82 \xf0\x9f\x99 \xc0\xaf \xed\xa0\x80 "
                      "\xf4\x90\x80\x80 \xff\xfe");
        round_trip(t, "\xe6\x97"); /* truncated at the end */
        tok_free(t);
    }
}

/* Every byte value and a pseudo-random byte soup encode without error, use only byte or
 * normal tokens, and round trip. */
static void test_all_bytes(void) {
    tok *t = load("models/tok32000.bin");
    char text[1024];
    uint64_t s = 42;
    for (int round = 0; round < 200; round++) {
        int len = (int)(s % 1000);
        for (int i = 0; i < len; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            char c = (char)(s >> 56);
            text[i] = c ? c : 'z';
        }
        text[len] = 0;
        round_trip(t, text);
    }
    tok_free(t);
}

/* Splits the .inp file at "\n__ggml_vocab_test__\n" and compares with each .out line. */
static void test_reference_vectors(void) {
    const char *vocabs[] = {"tokenizer-vectors/ggml-vocab-llama-spm.gguf", "models/tok32000.bin"};
    FILE *fi = fopen(test_shared("tokenizer-vectors/ggml-vocab-llama-spm.gguf.inp"), "rb");
    FILE *fo = fopen(test_shared("tokenizer-vectors/ggml-vocab-llama-spm.gguf.out"), "rb");
    CHECK(fi && fo);
    if (!fi || !fo) return;
    static char inp[1 << 16], outs[1 << 16];
    size_t ni = fread(inp, 1, sizeof inp - 1, fi), no = fread(outs, 1, sizeof outs - 1, fo);
    inp[ni] = outs[no] = 0;
    fclose(fi);
    fclose(fo);
    const char *sep = "\n__ggml_vocab_test__\n";
    for (int v = 0; v < 2; v++) {
        tok *t = load(vocabs[v]);
        CHECK(tok_vocab_size(t) == 32000);
        char *p = inp, *line = outs;
        int cases = 0, passed = 0;
        for (char *end; (end = strstr(p, sep)); p = end + strlen(sep)) {
            *end = 0;
            char *nl = strchr(line, '\n');
            if (nl) *nl = 0;
            int want[1024], nw = 0;
            for (char *q = line; nw < 1024;) {
                char *e;
                long x = strtol(q, &e, 10);
                if (e == q) break;
                want[nw++] = (int)x;
                q = e;
            }
            int *ids = malloc((strlen(p) + 3) * sizeof *ids);
            int n = enc(t, p, 0, ids);
            cases++;
            if (same_ids(ids, n, want, nw)) {
                passed++;
            } else {
                fprintf(stderr, "%s: case %d '%s' differs\n", vocabs[v], cases, p);
                print_ids("want", want, nw);
                print_ids("got ", ids, n);
            }
            free(ids);
            *end = '\n';
            if (nl) *nl = '\n';
            line = nl ? nl + 1 : line + strlen(line);
        }
        CHECK_MSG(cases == 46 && passed == cases, "%s: %d of %d vectors match", vocabs[v], passed,
                  cases);
        tok_free(t);
    }
}

/* Seconds to encode the first len bytes of text (NUL-terminated there temporarily). */
static double encode_time(const tok *t, char *text, size_t len, int *ids, int *n) {
    char saved = text[len];
    text[len] = 0;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    *n = enc(t, text, 1, ids);
    clock_gettime(CLOCK_MONOTONIC, &b);
    text[len] = saved;
    return (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
}

/* Long prompts: the merge loop is O(n log n), so 10x the text must cost well under the 100x
 * a quadratic rescan would (measured ~70 ms for 200 KB in a release build). Checked on prose
 * and on one repeated character, the worst case for naive rescans. */
static void test_long_prompt(void) {
    tok *t = load("models/tok32000.bin");
    size_t len = 200000;
    char *text = malloc(len + 1);
    int *ids = malloc((len + 3) * sizeof *ids);
    const char *words = "The quick brown fox jumps over the lazy dog, again and again. ";
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < len; i++) text[i] = pass ? 'a' : words[i % strlen(words)];
        text[len] = 0;
        /* Best of 3 each: one preempted run on a loaded machine (CI runs tests two at a
         * time, other jobs share the cores) failed this check with a correct encoder. */
        int n_small, n_big;
        double small = 1e9, big = 1e9;
        for (int rep = 0; rep < 3; rep++) {
            double s = encode_time(t, text, len / 10, ids, &n_small);
            double b = encode_time(t, text, len, ids, &n_big);
            small = s < small ? s : small;
            big = b < big ? b : big;
        }
        fprintf(stderr, "  %s: 20 KB -> %d tokens in %.1f ms, 200 KB -> %d tokens in %.1f ms\n",
                pass ? "repeated 'a'" : "prose", n_small, 1e3 * small, n_big, 1e3 * big);
        /* Either bound passes: the ratio catches a quadratic rescan on a quiet machine; the
         * absolute one (a quadratic rescan of 50,000 tokens takes seconds) on a loaded one,
         * where cache misses and preemption made 200 KB cost 40-60x 20 KB (177 ms, load 10). */
        CHECK(n_big > 1000 && (big < 30 * small + 0.05 || big < 0.5));
    }
    free(text);
    free(ids);
    tok_free(t);
}

/* ---- loader errors ----------------------------------------------------------------------- */

static void write_file(const char *path, const void *data, size_t n) {
    /* Unlink first: rewriting through O_TRUNC makes ext4 flush on close (auto_da_alloc),
     * which turns thousands of small rewrites into seconds of disk waits. */
    remove(path);
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    CHECK(fwrite(data, 1, n, f) == n);
    fclose(f);
}

/* tok_load(path) fails with a message containing every needle (NULL-terminated list). */
static void expect_error(const char *path, const char *needle1, const char *needle2) {
    char err[ERR_LEN] = "";
    tok *t = NULL;
    int rc = tok_load(&t, path, err);
    CHECK_MSG(rc == -1 && t == NULL, "%s loaded", path);
    CHECK_MSG(strstr(err, path) != NULL, "message '%s' does not name the file", err);
    CHECK_MSG(strstr(err, needle1) != NULL, "message '%s' lacks '%s'", err, needle1);
    if (needle2) CHECK_MSG(strstr(err, needle2) != NULL, "message '%s' lacks '%s'", err, needle2);
    CHECK_MSG(strchr(err, '\n') == NULL, "message '%s' is not one line", err);
    tok_free(t);
}

/* tok_load(path) succeeds with one warning line naming the file and holding needle; returns
 * the vocabulary (the caller frees it), NULL after a failed check. */
static tok *expect_warning(const char *path, const char *needle) {
    char err[ERR_LEN] = "";
    tok *t = NULL;
    CHECK_MSG(tok_load(&t, path, err) == 0, "%s: %s", path, err);
    if (!t) return NULL;
    const char *w = tok_warnings(t);
    CHECK_MSG(strstr(w, path) && strstr(w, needle) && !strchr(w, '\n'),
              "warnings '%s' lack '%s' (one line naming the file)", w, needle);
    return t;
}

/* A small llama2.c tokenizer image: 3 specials + 256 bytes + "a", "b", "ab". */
static size_t make_llama2c(unsigned char *buf) {
    size_t pos = 0;
    int32_t max_len = 7;
    memcpy(buf, &max_len, 4), pos = 4;
    for (int i = 0; i < 262; i++) {
        char piece[16];
        if (i < 3)
            snprintf(piece, sizeof piece, "%s",
                     (const char *[]){"<unk>", "\n<s>\n", "\n</s>\n"}[i]);
        else if (i < 259)
            snprintf(piece, sizeof piece, "<0x%02X>", i - 3);
        else
            snprintf(piece, sizeof piece, "%s", (const char *[]){" a", "b", " ab"}[i - 259]);
        float score = i < 259 ? 0.0f : -(float)(i - 259);
        int32_t len = (int32_t)strlen(piece);
        memcpy(buf + pos, &score, 4), memcpy(buf + pos + 4, &len, 4);
        memcpy(buf + pos + 8, piece, (size_t)len);
        pos += 8 + (size_t)len;
    }
    return pos;
}

static void test_llama2c_errors(void) {
    expect_error(test_tmp("does-not-exist.bin"), "cannot open", NULL);
    expect_error(test_tmpdir(), "is a directory", NULL);
    const char *p = test_tmp("tok.bin");
    write_file(p, "", 0);
    expect_error(p, "empty file", NULL);
    write_file(p, "\x07\x00", 2);
    expect_error(p, "truncated", "max_token_length");
    /* max_token_length is not checked (llama.cpp's converter ignores it): no records at all is
     * what fails here. */
    write_file(p, "\x00\x00\x00\x00", 4);
    expect_error(p, "0 tokens", NULL);

    static unsigned char buf[8192];
    size_t size = make_llama2c(buf);
    write_file(p, buf, size);
    char err[ERR_LEN];
    tok *t = NULL;
    CHECK_MSG(tok_load(&t, p, err) == 0, "%s", err);
    if (t) {
        int ids[16];
        CHECK(enc(t, "ab", 1, ids) == 2 && ids[1] == 261); /* " ab" */
        /* No "▁" piece here: the dummy prefix falls back to its three UTF-8 bytes. */
        const int want[] = {3 + 0xe2, 3 + 0x96, 3 + 0x81, 260, 3 + 'a'};
        CHECK(same_ids(ids, enc(t, "ba", 0, ids), want, 5));
        tok_free(t);
    }
    /* Truncated at every offset: either a record header or a piece is cut. */
    for (size_t cut = 4; cut < size; cut++) {
        write_file(p, buf, cut);
        char err2[ERR_LEN] = "";
        t = NULL;
        int rc = tok_load(&t, p, err2);
        /* Cuts right after a whole record leave a valid shorter vocabulary. */
        if (rc == 0) {
            tok_free(t);
            continue;
        }
        CHECK_MSG((strstr(err2, "token ") && strstr(err2, "truncated")) || strstr(err2, "tokens;"),
                  "cut at %zu: %s", cut, err2);
    }
    write_file(p, buf, 20);
    expect_error(p, "token 1: truncated", NULL);
    /* Negative and huge lengths in token 5. */
    size_t off5 = 4;
    for (int i = 0; i < 5; i++) {
        int32_t len;
        memcpy(&len, buf + off5 + 4, 4);
        off5 += 8 + (size_t)len;
    }
    int32_t bad = -1;
    memcpy(buf + off5 + 4, &bad, 4);
    write_file(p, buf, size);
    expect_error(p, "token 5: length -1", NULL);
    bad = 1 << 30;
    memcpy(buf + off5 + 4, &bad, 4);
    write_file(p, buf, size);
    expect_error(p, "token 5: truncated piece (1073741824 bytes", NULL);
    /* A NaN score. */
    size = make_llama2c(buf);
    float nan = NAN;
    memcpy(buf + off5, &nan, 4);
    write_file(p, buf, size);
    expect_error(p, "token 5: score is not a number", NULL);
    /* Too few tokens. */
    write_file(p, buf, 4 + 8 + 5);
    expect_error(p, "1 tokens", NULL);
}

/* GGUF vocabularies: other tokenizer models are refused, missing/mismatched arrays named. */
static void test_gguf_vocab(void) {
    tok *t = load("tokenizer-vectors/ggml-vocab-llama-spm.gguf");
    CHECK(tok_vocab_size(t) == 32000 && tok_bos(t) == 1 && tok_eos(t) == 2);
    CHECK(tok_add_bos(t) == 1);
    CHECK(strcmp(tok_piece(t, 1), "<s>") == 0);
    CHECK(strcmp(tok_piece(t, 29871), "\xe2\x96\x81") == 0);
    char buf[TOK_PIECE_MAX];
    CHECK(tok_decode(t, -1, 29871, buf, sizeof buf) == 1 && strcmp(buf, " ") == 0);
    CHECK(tok_decode(t, 1, 15043, buf, sizeof buf) == 5 && strcmp(buf, "Hello") == 0);
    int ids[32];
    int n = enc(t, "Once upon a time", 1, ids);
    const int want[] = {1, 9038, 2501, 263, 931};
    CHECK(same_ids(ids, n, want, 5));
    /* Control (type 3), unknown (2) and byte (6) pieces are never merge results. */
    n = enc(t, "<s></s><unk><0x41>", 0, ids);
    for (int i = 0; i < n; i++) CHECK(ids[i] > 258);
    tok_free(t);

    const char *p = test_tmp("vocab.gguf");
    const char *tokens[] = {"<unk>", "<s>", "</s>", SP "a", "b"};
    float scores[] = {0, 0, 0, -1, -2};
    int32_t types[] = {2, 3, 3, 1, 1};
    char err[ERR_LEN];

    /* Vocabulary types outside the table are refused by name (gpt2 is tested in
     * test_tokenizer_bpe.c). */
    gguf_writer *w = gguf_writer_new(0);
    gguf_writer_add_str(w, "tokenizer.ggml.model", "bert");
    CHECK(gguf_writer_write(w, p, err) == 0);
    gguf_writer_free(w);
    expect_error(p, "tokenizer model 'bert' is not supported", NULL);

    w = gguf_writer_new(0);
    gguf_writer_add_str(w, "tokenizer.ggml.model", "llama");
    gguf_writer_add_array(w, "tokenizer.ggml.tokens", GGUF_STRING, tokens, NULL, 5);
    gguf_writer_add_array(w, "tokenizer.ggml.scores", GGUF_F32, scores, NULL, 4);
    CHECK(gguf_writer_write(w, p, err) == 0);
    gguf_writer_free(w);
    expect_error(p, "tokenizer.ggml.scores", "has 4 elements, expected at least 5");

    /* No scores: llama.cpp reads every score as 0 (merges then go left to right). */
    w = gguf_writer_new(0);
    gguf_writer_add_str(w, "tokenizer.ggml.model", "llama");
    gguf_writer_add_array(w, "tokenizer.ggml.tokens", GGUF_STRING, tokens, NULL, 5);
    CHECK(gguf_writer_write(w, p, err) == 0);
    gguf_writer_free(w);
    t = expect_warning(p, "no tokenizer.ggml.scores: every score is 0");
    if (t) {
        n = enc(t, "ab", 0, ids); /* "▁a" "b" */
        CHECK(n == 2 && ids[0] == 3 && ids[1] == 4);
        tok_free(t);
    }

    w = gguf_writer_new(0);
    gguf_writer_add_str(w, "tokenizer.ggml.model", "llama");
    gguf_writer_add_array(w, "tokenizer.ggml.tokens", GGUF_STRING, tokens, NULL, 5);
    gguf_writer_add_array(w, "tokenizer.ggml.scores", GGUF_F32, scores, NULL, 5);
    gguf_writer_add_array(w, "tokenizer.ggml.token_type", GGUF_I32, types, NULL, 5);
    gguf_writer_add_u32(w, "tokenizer.ggml.bos_token_id", 7);
    CHECK(gguf_writer_write(w, p, err) == 0);
    gguf_writer_free(w);
    /* An id that is no token counts as absent (SentencePiece's default BOS 1), as in llama.cpp. */
    t = expect_warning(p, "tokenizer.ggml.bos_token_id = 7: not token ids of its 5 tokens");
    if (t) {
        CHECK(tok_bos(t) == 1 && tok_eos(t) == 2);
        tok_free(t);
    }

    /* A valid tiny vocabulary with add_bos_token false and no byte tokens: unknown
     * characters fall back to <unk>. */
    w = gguf_writer_new(0);
    gguf_writer_add_str(w, "tokenizer.ggml.model", "llama");
    gguf_writer_add_array(w, "tokenizer.ggml.tokens", GGUF_STRING, tokens, NULL, 5);
    gguf_writer_add_array(w, "tokenizer.ggml.scores", GGUF_F32, scores, NULL, 5);
    gguf_writer_add_array(w, "tokenizer.ggml.token_type", GGUF_I32, types, NULL, 5);
    gguf_writer_add_bool(w, "tokenizer.ggml.add_bos_token", 0);
    CHECK(gguf_writer_write(w, p, err) == 0);
    gguf_writer_free(w);
    t = NULL;
    CHECK_MSG(tok_load(&t, p, err) == 0, "%s", err);
    if (t) {
        CHECK(tok_add_bos(t) == 0);
        n = enc(t, "abc", 0, ids); /* "▁a" "b" then 'c' unknown -> <unk> */
        CHECK(n == 3 && ids[0] == 3 && ids[1] == 4 && ids[2] == 0);
        tok_free(t);
    }
}

int main(void) {
    test_known_ids();
    test_round_trips();
    test_all_bytes();
    test_reference_vectors();
    test_long_prompt();
    test_llama2c_errors();
    test_gguf_vocab();
    return test_finish("test_tokenizer");
}
