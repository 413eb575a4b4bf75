/* test_tokenizer_bpe.c: byte-level BPE vocabularies (model/tokenizer/tok_bpe.c,
 * model/tokenizer/tok_pre.c) and the vocabulary-type dispatch. llama.cpp's reference vectors for
 * every byte-level vocabulary in ../shared/tokenizer-vectors, with decode(encode(s)) == s for each;
 * llama.cpp's test-tokenizer-1-bpe properties (every token's text and every code point round trip);
 * special and user-defined tokens; the merge order on a vocabulary built here; every
 * pre-tokenizer on long and awkward inputs (nothing quadratic); every load error. Under the
 * sanitizers (testutil.h test_keep) a quarter of the code points and half of the long inputs
 * run, spread over every vocabulary and pre-tokenizer. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "model/formats/gguf.h"
#include "model/tokenizer/tok_internal.h"
#include "model/tokenizer/tokenizer.h"
#include "tests/fuzz_vocab.c"
#include "tests/testutil.h"
#include "util/err.h"

typedef struct {
    const char *name; /* ggml-vocab-<name>.gguf */
    int n, bos, eos, eot, pad, add_bos;
    const char *pre;
} vocab_facts;

/* From the files' metadata (tokenizer.ggml.*); EOT found by text where no key names it. */
static const vocab_facts vocabs[] = {
    {"llama-bpe", 128256, 128000, 128001, 128009, -1, 1, "llama-bpe"},
    {"qwen2", 151669, 151643, 151645, 151645, -1, 0, "qwen2"},
    {"deepseek-coder", 32256, 32013, 32014, 32014, 32014, 1, "deepseek-coder"},
    {"deepseek-llm", 102400, 100000, 100001, 100001, 100001, 1, "deepseek-llm"},
    {"gpt-2", 50257, 50256, 50256, 50256, -1, 0, "gpt-2"},
};
#define N_VOCABS (int)(sizeof vocabs / sizeof vocabs[0])

static tok *load_vocab(const char *name) {
    char rel[128], err[ERR_LEN];
    snprintf(rel, sizeof rel, "tokenizer-vectors/ggml-vocab-%s.gguf", name);
    tok *t = NULL;
    if (tok_load(&t, test_shared(rel), err) != 0) {
        fprintf(stderr, "cannot load %s: %s\n", rel, err);
        exit(1);
    }
    return t;
}

/* Encodes text with flags into a malloc'd array; returns the count, -1 on error. */
static int enc(const tok *t, const char *text, int flags, int **ids) {
    char err[ERR_LEN];
    int n = -1;
    *ids = malloc((strlen(text) + 3) * sizeof **ids);
    int rc = tok_encode_flags(t, text, flags, *ids, &n, err);
    CHECK_MSG(rc == 0, "encode '%.40s': %s", text, err);
    return rc == 0 ? n : -1;
}

/* Decodes ids into out (cap bytes); control tokens as their text when special (llama.cpp's
 * common_detokenize(special = true)). Returns the length. */
static size_t dec(const tok *t, const int *ids, int n, int special, char *out, size_t cap) {
    size_t len = 0;
    char piece[TOK_PIECE_MAX];
    for (int i = 0; i < n; i++) {
        int k = tok_decode(t, i ? ids[i - 1] : -1, ids[i], piece, sizeof piece);
        CHECK(k >= 0);
        if (k == 0 && special) {
            const char *p = tok_piece(t, ids[i]);
            k = (int)strlen(p);
            memcpy(piece, p, (size_t)k);
        }
        if (k < 0 || len + (size_t)k >= cap) break;
        memcpy(out + len, piece, (size_t)k);
        len += (size_t)k;
    }
    out[len] = 0;
    return len;
}

static void print_ids(const char *label, const int *ids, int n) {
    fprintf(stderr, "  %s:", label);
    for (int i = 0; i < n && i < 64; i++) fprintf(stderr, " %d", ids[i]);
    fprintf(stderr, "\n");
}

static int valid_utf8(const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        int l = u[i] < 0x80             ? 1
                : (u[i] & 0xe0) == 0xc0 ? 2
                : (u[i] & 0xf0) == 0xe0 ? 3
                : (u[i] & 0xf8) == 0xf0 ? 4
                                        : 0;
        if (!l || i + (size_t)l > n) return 0;
        for (int k = 1; k < l; k++)
            if ((u[i + k] & 0xc0) != 0x80) return 0;
        i += (size_t)l;
    }
    return 1;
}

static size_t put_utf8(uint32_t cp, char *o) {
    if (cp < 0x80) return o[0] = (char)cp, 1;
    if (cp < 0x800) return o[0] = (char)(0xc0 | cp >> 6), o[1] = (char)(0x80 | (cp & 63)), 2;
    if (cp < 0x10000)
        return o[0] = (char)(0xe0 | cp >> 12), o[1] = (char)(0x80 | ((cp >> 6) & 63)),
               o[2] = (char)(0x80 | (cp & 63)), 3;
    o[0] = (char)(0xf0 | cp >> 18), o[1] = (char)(0x80 | ((cp >> 12) & 63));
    o[2] = (char)(0x80 | ((cp >> 6) & 63)), o[3] = (char)(0x80 | (cp & 63));
    return 4;
}

/* ---- llama.cpp's vectors ------------------------------------------------------------------ */

static void test_vectors(void) {
    for (int v = 0; v < N_VOCABS; v++) {
        const vocab_facts *f = &vocabs[v];
        tok *t = load_vocab(f->name);
        CHECK(strcmp(tok_model_name(t), "gpt2") == 0);
        CHECK_MSG(tok_vocab_size(t) == f->n && tok_bos(t) == f->bos && tok_eos(t) == f->eos &&
                      tok_eot(t) == f->eot && tok_pad(t) == f->pad &&
                      tok_add_bos(t) == f->add_bos && strcmp(tok_pre_name(t), f->pre) == 0,
                  "%s: n %d bos %d eos %d eot %d pad %d add_bos %d pre %s", f->name,
                  tok_vocab_size(t), tok_bos(t), tok_eos(t), tok_eot(t), tok_pad(t), tok_add_bos(t),
                  tok_pre_name(t));
        CHECK(tok_chat_template(t) == NULL); /* the vector files carry none */
        char rel[128];
        snprintf(rel, sizeof rel, "tokenizer-vectors/ggml-vocab-%s.gguf.inp", f->name);
        FILE *fi = fopen(test_shared(rel), "rb");
        snprintf(rel, sizeof rel, "tokenizer-vectors/ggml-vocab-%s.gguf.out", f->name);
        FILE *fo = fopen(test_shared(rel), "rb");
        CHECK(fi && fo);
        if (!fi || !fo) return;
        static char inp[1 << 16], outs[1 << 16], back[1 << 16];
        size_t ni = fread(inp, 1, sizeof inp - 1, fi), no = fread(outs, 1, sizeof outs - 1, fo);
        inp[ni] = outs[no] = 0;
        fclose(fi), fclose(fo);
        const char *sep = "\n__ggml_vocab_test__\n";
        char *p = inp, *line = outs;
        int cases = 0, passed = 0, round = 0;
        for (char *end; (end = strstr(p, sep)); p = end + strlen(sep)) {
            *end = 0;
            char *nl = strchr(line, '\n');
            if (nl) *nl = 0;
            int want[2048], nw = 0;
            for (char *q = line; nw < 2048;) {
                char *e;
                long x = strtol(q, &e, 10);
                if (e == q) break;
                want[nw++] = (int)x;
                q = e;
            }
            int *ids, n = enc(t, p, 0, &ids);
            cases++;
            if (n == nw && memcmp(ids, want, (size_t)n * sizeof *ids) == 0) {
                passed++;
            } else {
                fprintf(stderr, "%s: case %d '%s' differs\n", f->name, cases, p);
                print_ids("want", want, nw);
                print_ids("got ", ids, n);
            }
            /* Byte-level BPE loses nothing: every input is valid UTF-8 and comes back. */
            CHECK(valid_utf8(p, strlen(p)));
            size_t len = dec(t, ids, n, 0, back, sizeof back);
            if (len == strlen(p) && memcmp(back, p, len) == 0)
                round++;
            else
                fprintf(stderr, "%s: case %d decodes to '%s'\n", f->name, cases, back);
            free(ids);
            *end = '\n';
            if (nl) *nl = '\n';
            line = nl ? nl + 1 : line + strlen(line);
        }
        fprintf(stderr, "  %s: %d of %d vectors match, %d round trips\n", f->name, passed, cases,
                round);
        CHECK_MSG(cases == 46 && passed == cases && round == cases, "%s", f->name);
        tok_free(t);
    }
}

/* ---- llama.cpp's test-tokenizer-1-bpe ------------------------------------------------------ */

/* Every token's text (control tokens as their text) encodes, with special tokens parsed, to
 * tokens that decode to that text; under ignore_merges (Llama-3) to that one token. Texts
 * that are not whole UTF-8 (tokens ending inside a character) are skipped, as there. */
static void test_every_token(void) {
    for (int v = 0; v < N_VOCABS; v++) {
        tok *t = load_vocab(vocabs[v].name);
        int one = strcmp(vocabs[v].pre, "llama-bpe") == 0, checked = 0, bad = 0;
        char s[TOK_PIECE_MAX], back[4 * TOK_PIECE_MAX];
        for (int id = 0; id < tok_vocab_size(t); id++) {
            size_t len = dec(t, &id, 1, 1, s, sizeof s);
            if (len == 0 || !valid_utf8(s, len) || memchr(s, 0, len)) continue;
            int *ids, n = enc(t, s, TOK_PARSE_SPECIAL, &ids);
            size_t blen = dec(t, ids, n, 1, back, sizeof back);
            if (blen != len || memcmp(back, s, len) != 0 || (one && n != 1)) {
                if (bad++ < 5)
                    fprintf(stderr, "%s: token %d '%s' -> %d tokens '%s'\n", vocabs[v].name, id, s,
                            n, back);
            }
            checked++;
            free(ids);
        }
        fprintf(stderr, "  %s: %d token texts round trip, %d do not\n", vocabs[v].name, checked,
                bad);
        CHECK(bad == 0 && checked > tok_vocab_size(t) / 2);
        tok_free(t);
    }
}

/* Every code point (except surrogates and the unassigned planes 4-13, as there) encodes and
 * decodes to itself; U+0000 cannot be in a C string. Checked on one vocabulary per
 * pre-tokenizer family in full. */
static void test_every_code_point(void) {
    const char *names[] = {"llama-bpe", "deepseek-llm"};
    for (int v = 0; v < 2; v++) {
        tok *t = load_vocab(names[v]);
        int bad = 0, checked = 0;
        char s[8], back[64];
        int ids[16], n;
        char err[ERR_LEN];
        for (uint32_t cp = 1; cp < 0x110000; cp++) {
            if ((cp >= 0xd800 && cp <= 0xdfff) || (cp >= 0x40000 && cp <= 0xe0000)) continue;
            if (!test_keep(cp, 4)) continue; /* a quarter under the sanitizers */
            size_t len = put_utf8(cp, s);
            s[len] = 0;
            if (tok_encode(t, s, 0, ids, &n, err) != 0) {
                if (bad++ < 5) fprintf(stderr, "%s: U+%04X: %s\n", names[v], cp, err);
                continue;
            }
            size_t blen = dec(t, ids, n, 0, back, sizeof back);
            if (blen != len || memcmp(back, s, len) != 0)
                if (bad++ < 5) fprintf(stderr, "%s: U+%04X decodes to '%s'\n", names[v], cp, back);
            checked++;
        }
        fprintf(stderr, "  %s: %d code points round trip\n", names[v], checked - bad);
        CHECK(bad == 0 && checked > (test_sanitized() ? 100000 : 400000));
        tok_free(t);
    }
}

/* ---- the pre-tokenizers' split, where llama.cpp departs from a plain regex engine ---------- */

/* words: the expected words joined by '|' (no case here contains a '|'). */
static void expect_split(const char *pre, const char *text, const char *words) {
    char err[ERR_LEN];
    tok_pre *p;
    int im, ab;
    if (tok_pre_open(&p, pre, &im, &ab, err) != 0) {
        CHECK_MSG(0, "%s", err);
        return;
    }
    tok_pre_scratch *s = tok_pre_scratch_new(p);
    size_t len = strlen(text), n = 0;
    tok_span *w = malloc(2 * (len + 1) * sizeof *w);
    CHECK(tok_pre_split(p, s, text, len, w, w + len + 1, len + 1, &n, err) == 0);
    char got[256] = "";
    for (size_t i = 0; i < n; i++) {
        if (i) strcat(got, "|");
        strncat(got, text + w[i].start, w[i].len);
    }
    CHECK_MSG(strcmp(got, words) == 0, "%s '%s': got '%s', want '%s'", pre, text, got, words);
    free(w);
    tok_pre_scratch_free(s);
    tok_pre_free(p);
}

static void test_split_rules(void) {
    /* Llama-3's contractions ignore case (ASCII only); GPT-2's do not. */
    expect_split("llama-bpe", "'Sx", "'S|x");
    expect_split("llama-bpe", "HE'LL'sx", "HE|'LL|'s|x");
    expect_split("gpt-2", "'Sx", "'|Sx");
    expect_split("gpt-2", "he's", "he|'s");
    /* Digits: 1..3 for Llama-3, one by one for Qwen2 and DeepSeek-Coder, runs for GPT-2. */
    expect_split("llama-bpe", "12345", "123|45");
    expect_split("qwen2", "12345", "1|2|3|4|5");
    expect_split("deepseek-coder", "123", "1|2|3");
    expect_split("gpt-2", "a 12345", "a| 12345");
    /* \s+(?!\S) leaves the last space to the next word; \s*[\r\n]+ ends at the last newline. */
    expect_split("gpt-2", "a   b", "a|  | b");
    expect_split("llama-bpe", "a \n\n b", "a| \n\n| b");
    expect_split("llama-bpe", "a   ", "a|   ");
    /* llama.cpp's whitespace set: U+180E is not a space (PCRE2's \s would say it is). */
    expect_split("llama-bpe", "!\xe1\xa0\x8e!", "!\xe1\xa0\x8e!");
    expect_split("llama-bpe", "!\xe2\x80\x80!", "!|\xe2\x80\x80|!"); /* " ?" is U+0020 only */
    /* DeepSeek's code-point classes never match a space (llama.cpp ran them on text with
     * spaces replaced by U+000B): U+3000 and U+2000 stay with the word that follows. */
    expect_split("deepseek-llm",
                 "a\xe3\x80\x80"
                 "b",
                 "a|\xe3\x80\x80"
                 "b");
    expect_split("deepseek-coder", "!\xe2\x80\x80!", "!|\xe2\x80\x80!");
    /* "$" is the end of the word, not before a final newline. */
    expect_split("deepseek-llm", "x  \n", "x|  |\n");
    /* Later rules split earlier words; text between matches is a word too. */
    expect_split("default", "a+=1234", "a|+=|123|4");
    expect_split("deepseek-coder", "\xe4\xb8\xad\xe6\x96\x87 x", "\xe4\xb8\xad\xe6\x96\x87| x");
}

/* ---- special and user-defined tokens ------------------------------------------------------- */

static int contains(const int *ids, int n, int id) {
    for (int i = 0; i < n; i++)
        if (ids[i] == id) return 1;
    return 0;
}

static void test_specials(void) {
    tok *q = load_vocab("qwen2");
    int *ids, n;
    /* Control tokens are text unless parsed. */
    n = enc(q, "<|im_start|>user\nHi<|im_end|>\n", TOK_PARSE_SPECIAL, &ids);
    CHECK(n >= 4 && ids[0] == 151644 && contains(ids, n, 151645));
    free(ids);
    n = enc(q, "<|im_start|>user\nHi<|im_end|>\n", 0, &ids);
    CHECK(n > 4 && !contains(ids, n, 151644) && !contains(ids, n, 151645));
    free(ids);
    /* User-defined tokens are matched always, as llama.cpp and Hugging Face do. */
    n = enc(q, "a<think>b</think>", 0, &ids);
    CHECK(contains(ids, n, 151667) && contains(ids, n, 151668));
    free(ids);
    /* llama.cpp makes the FIM tokens (user-defined in the file) control tokens: text unless
     * parsed, and they decode to nothing. */
    n = enc(q, "<|fim_prefix|>", 0, &ids);
    CHECK(n > 1 && !contains(ids, n, 151659));
    free(ids);
    n = enc(q, "<|fim_prefix|>", TOK_PARSE_SPECIAL, &ids);
    CHECK(n == 1 && ids[0] == 151659);
    free(ids);
    char buf[TOK_PIECE_MAX];
    CHECK(tok_decode(q, -1, 151659, buf, sizeof buf) == 0);
    CHECK(tok_decode(q, -1, 151667, buf, sizeof buf) == 7 && strcmp(buf, "<think>") == 0);
    CHECK(tok_decode(q, -1, 151669, buf, sizeof buf) == -1 && tok_piece(q, 151669) == NULL);
    /* Special-looking text that is no token stays text. */
    n = enc(q, "<|im_star|>", TOK_PARSE_SPECIAL, &ids);
    CHECK(n > 1 && !contains(ids, n, 151644));
    free(ids);
    tok_free(q);

    /* Llama-3: BOS from the flag and from parsed text; the longer special token wins. */
    tok *l = load_vocab("llama-bpe");
    n = enc(l, "<|begin_of_text|>Hello", TOK_ADD_BOS | TOK_PARSE_SPECIAL, &ids);
    CHECK(n == 3 && ids[0] == 128000 && ids[1] == 128000 && ids[2] == 9906);
    free(ids);
    n = enc(l, "", TOK_ADD_BOS, &ids);
    CHECK(n == 1 && ids[0] == 128000);
    free(ids);
    n = enc(l, "", 0, &ids);
    CHECK(n == 0);
    free(ids);
    CHECK(tok_decode(l, -1, 128000, buf, sizeof buf) == 0);
    tok_free(l);

    /* DeepSeek's user-defined single characters: raw "õ" is token 32000, as in llama.cpp. */
    tok *d = load_vocab("deepseek-coder");
    n = enc(d, "\xc3\xb5", 0, &ids);
    CHECK(n == 1 && ids[0] == 32000);
    free(ids);
    tok_free(d);
}

/* Invalid UTF-8 becomes U+FFFD (llama.cpp's reading), never an error or a crash. */
static void test_invalid_utf8(void) {
    tok *t = load_vocab("llama-bpe");
    const char *bad[] = {"\xff",
                         ("a\x80"
                          "b"),
                         "\xe6\x97",
                         "\xc0\xaf",
                         "\xed\xa0\x80",
                         "\xf4\x90\x80\x80"};
    /* a cut sequence is one U+FFFD per byte: llama.cpp steps one byte past an invalid lead */
    const char *same[] = {"\xef\xbf\xbd",
                          ("a\xef\xbf\xbd"
                           "b"),
                          "\xef\xbf\xbd\xef\xbf\xbd",
                          "/",
                          "\xef\xbf\xbd",
                          "\xef\xbf\xbd"};
    for (int i = 0; i < 6; i++) {
        int *a, *b, na = enc(t, bad[i], 0, &a), nb = enc(t, same[i], 0, &b);
        CHECK_MSG(na == nb && memcmp(a, b, (size_t)na * sizeof *a) == 0, "case %d", i);
        free(a), free(b);
    }
    tok_free(t);
}

/* ---- a vocabulary built here --------------------------------------------------------------- */

/* GPT-2's stand-in of byte b, as UTF-8. */
static size_t stand_in(int b, char *out) {
    int keep = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
    uint32_t n = 0;
    for (int c = 0; c < b; c++)
        n += !((c >= 0x21 && c <= 0x7e) || (c >= 0xa1 && c <= 0xac) || (c >= 0xae && c <= 0xff));
    return put_utf8(keep ? (uint32_t)b : 256 + n, out);
}

typedef struct {
    const char *tokens[300];
    int32_t types[300];
    int n;
    const char *merges[16];
    int n_merges;
    char bytes[256][4];
} mini;

/* The 256 stand-ins, then extra tokens. */
static void mini_init(mini *m) {
    memset(m, 0, sizeof *m);
    for (int b = 0; b < 256; b++) {
        stand_in(b, m->bytes[b]);
        m->tokens[m->n] = m->bytes[b];
        m->types[m->n++] = 1;
    }
}

static void mini_add(mini *m, const char *text, int type) {
    m->tokens[m->n] = text;
    m->types[m->n++] = type;
}

/* Writes the vocabulary with pre-tokenizer pre (NULL: no key) and extra keys. */
static const char *mini_write(const mini *m, const char *pre, const char *name) {
    const char *p = test_tmp(name);
    char err[ERR_LEN];
    gguf_writer *w = gguf_writer_new(0);
    gguf_writer_add_str(w, "tokenizer.ggml.model", "gpt2");
    if (pre) gguf_writer_add_str(w, "tokenizer.ggml.pre", pre);
    gguf_writer_add_array(w, "tokenizer.ggml.tokens", GGUF_STRING, m->tokens, NULL, (uint64_t)m->n);
    gguf_writer_add_array(w, "tokenizer.ggml.token_type", GGUF_I32, m->types, NULL, (uint64_t)m->n);
    gguf_writer_add_array(w, "tokenizer.ggml.merges", GGUF_STRING, m->merges, NULL,
                          (uint64_t)m->n_merges);
    gguf_writer_add_u32(w, "tokenizer.ggml.bos_token_id", 0); /* Llama-3's rule adds BOS */
    CHECK_MSG(gguf_writer_write(w, p, err) == 0, "%s", err);
    gguf_writer_free(w);
    return p;
}

static tok *mini_load(const mini *m, const char *pre) {
    char err[ERR_LEN];
    tok *t = NULL;
    CHECK_MSG(tok_load(&t, mini_write(m, pre, "mini.gguf"), err) == 0, "%s", err);
    return t;
}

/* ids of text, compared with want[0..nw). */
static void expect_ids(const tok *t, const char *text, const int *want, int nw) {
    int *ids, n = enc(t, text, 0, &ids);
    CHECK_MSG(n == nw && memcmp(ids, want, (size_t)nw * sizeof *ids) == 0, "'%s'", text);
    if (n != nw || memcmp(ids, want, (size_t)nw * sizeof *ids) != 0) {
        print_ids("want", want, nw);
        print_ids("got ", ids, n);
    }
    free(ids);
}

static void test_merge_order(void) {
    mini m;
    mini_init(&m); /* token b is byte b's stand-in */
    int a = 'a', b = 'b', c = 'c';
    mini_add(&m, "ab", 1);          /* 256 */
    mini_add(&m, "bc", 1);          /* 257 */
    mini_add(&m, "abc", 1);         /* 258 */
    mini_add(&m, "aa", 1);          /* 259 */
    m.merges[m.n_merges++] = "b c"; /* rank 0: wins over "a b" */
    m.merges[m.n_merges++] = "a b";
    m.merges[m.n_merges++] = "a bc";
    m.merges[m.n_merges++] = "a a";
    tok *t = mini_load(&m, "gpt-2");
    if (!t) return;
    expect_ids(t, "abc", (int[]){258}, 1);              /* b+c, then a+bc */
    expect_ids(t, "ab", (int[]){256}, 1);               /* only a+b applies */
    expect_ids(t, "aaa", (int[]){259, a}, 2);           /* equal ranks: leftmost first */
    expect_ids(t, "cab", (int[]){c, 256}, 2);           /* no "c a" merge */
    expect_ids(t, "ab abc", (int[]){256, ' ', 258}, 3); /* " abc": the space stays alone */
    expect_ids(t, "b", (int[]){b}, 1);
    tok_free(t);

    /* Ranks the other way round: "a b" first, and "ab c" is no merge, so abc stays ab + c. */
    mini_init(&m);
    mini_add(&m, "ab", 1);
    mini_add(&m, "bc", 1);
    m.merges[m.n_merges++] = "a b";
    m.merges[m.n_merges++] = "b c";
    t = mini_load(&m, "gpt-2");
    if (!t) return;
    expect_ids(t, "abc", (int[]){256, c}, 2);
    tok_free(t);

    /* ignore_merges (Llama-3's rule): a word that is a token is taken whole even without a
     * merge path to it; other rules merge as usual. */
    mini_init(&m);
    mini_add(&m, "xyz", 1); /* 256, no merges */
    t = mini_load(&m, "llama-bpe");
    if (!t) return;
    expect_ids(t, "xyz", (int[]){256}, 1);
    CHECK(tok_add_bos(t) == 1 && tok_bos(t) == 0); /* the rule's default, as llama.cpp's */
    tok_free(t);
    t = mini_load(&m, "gpt-2");
    if (!t) return;
    expect_ids(t, "xyz", (int[]){'x', 'y', 'z'}, 3);
    tok_free(t);
}

/* ---- every pre-tokenizer on long and awkward inputs ---------------------------------------- */

static const char *const pre_names[] = {"default",      "gpt-2",
                                        "mpt",          "olmo",
                                        "llama-bpe",    "llama3",
                                        "falcon3",      "dbrx",
                                        "qwen2",        "stablelm2",
                                        "deepseek-llm", "deepseek-coder",
                                        "deepseek-v3",  "deepseek-r1-qwen",
                                        "falcon",       "starcoder",
                                        "refact",       "command-r",
                                        "smollm",       "poro-chat",
                                        "bloom",        "viking",
                                        "tekken",       "jais",
                                        "chatglm-bpe",  "megrez",
                                        "exaone",       "minerva-7b",
                                        "codeshell",    "roberta-bpe"};

/* Seconds to encode text, best of 3 (the machine is shared: one run may be preempted). */
static double seconds(const tok *t, const char *text, int *n) {
    double best = 1e9;
    for (int r = 0; r < 3; r++) {
        int *ids;
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        *n = enc(t, text, 0, &ids);
        clock_gettime(CLOCK_MONOTONIC, &b);
        free(ids);
        double s = (double)(b.tv_sec - a.tv_sec) + 1e-9 * (double)(b.tv_nsec - a.tv_nsec);
        if (s < best) best = s;
    }
    return best;
}

/* One unit repeated to len bytes. */
static char *repeat(const char *unit, size_t len) {
    char *s = malloc(len + 1);
    size_t u = strlen(unit);
    for (size_t i = 0; i < len; i++) s[i] = unit[i % u];
    s[len] = 0;
    /* do not cut a UTF-8 character at the end */
    size_t end = len;
    while (end > 0 && ((unsigned char)s[end - 1] & 0xc0) == 0x80) end--;
    if (end > 0 && (unsigned char)s[end - 1] >= 0xc0) s[end - 1] = 'x';
    return s;
}

static void test_pre_tokenizers(void) {
    /* The shapes that make naive splitters quadratic or blow a regex stack: one long word, a
     * long run of spaces, of newlines, of digits, of punctuation, of CJK, and prose. */
    const char *units[] = {"a",   " ",
                           "\n",  "7",
                           "!",   "\xe4\xb8\xad",
                           "A",   "Hello World ",
                           " \n", "The quick brown fox's 12345 jumps, again!\n  "};
    mini m;
    mini_init(&m);
    for (size_t r = 0; r < sizeof pre_names / sizeof pre_names[0]; r++) {
        tok *t = mini_load(&m, pre_names[r]);
        if (!t) continue;
        CHECK(strcmp(tok_pre_name(t), pre_names[r]) == 0);
        for (size_t u = 0; u < sizeof units / sizeof units[0]; u++) {
            if (!test_keep((long)(r * (sizeof units / sizeof units[0]) + u), 2)) continue;
            char *small = repeat(units[u], 10000), *big = repeat(units[u], 100000);
            int ns, nb;
            double ts = seconds(t, small, &ns), tb = seconds(t, big, &nb);
            /* Every byte is a token of its own here (no merges), so nb is the length. */
            CHECK_MSG(nb == (int)strlen(big), "%s unit %zu: %d tokens", pre_names[r], u, nb);
            int *ids, n = enc(t, big, 0, &ids);
            char *back = malloc(strlen(big) + 1);
            size_t blen = dec(t, ids, n, 0, back, strlen(big) + 1);
            CHECK_MSG(blen == strlen(big) && memcmp(back, big, blen) == 0, "%s unit %zu round trip",
                      pre_names[r], u);
            free(ids), free(back);
            /* Linear: 10x the text, ~10x the time. A quadratic splitter would take seconds on
             * 100 KB (10^10 steps); the slack absorbs a loaded machine (7x seen under -j2).
             * Either bound passes: at load 15 (CI's tests plus other jobs on 2 cores) a linear
             * run once missed the ratio; a quadratic one takes far more than 2 s on 100 KB. */
            CHECK_MSG(tb < 30 * ts + 0.1 || tb < 2.0, "%s unit %zu: 10 KB %.1f ms, 100 KB %.1f ms",
                      pre_names[r], u, 1e3 * ts, 1e3 * tb);
            free(small), free(big);
        }
        tok_free(t);
    }
    /* A 1 MB single word under Tekken's rule (a repeated group) still splits. */
    tok *t = mini_load(&m, "tekken");
    if (t) {
        char *huge = repeat("Ab", 1 << 20);
        int n;
        seconds(t, huge, &n);
        CHECK(n == 1 << 20);
        free(huge);
        tok_free(t);
    }
    /* Real vocabularies on 100 KB of prose: well under a second (measured ~2-5 ms). */
    for (int v = 0; v < N_VOCABS; v++) {
        tok *r = load_vocab(vocabs[v].name);
        char *big = repeat("The quick brown fox's 12345 jumps, again!\n  \xe4\xb8\xad\xe6\x96\x87 ",
                           100000);
        char *small =
            repeat("The quick brown fox's 12345 jumps, again!\n  \xe4\xb8\xad\xe6\x96\x87 ", 10000);
        int nb, ns;
        double ts = seconds(r, small, &ns), tb = seconds(r, big, &nb);
        fprintf(stderr, "  %s: 100 KB -> %d tokens in %.1f ms (10 KB: %.1f ms)\n", vocabs[v].name,
                nb, 1e3 * tb, 1e3 * ts);
        CHECK(nb > 10000 && (tb < 30 * ts + 0.1 || tb < 2.0));
        free(big), free(small);
        tok_free(r);
    }
}

/* ---- load errors --------------------------------------------------------------------------- */

static void expect_error(const char *path, const char *needle1, const char *needle2) {
    char err[ERR_LEN] = "";
    tok *t = NULL;
    int rc = tok_load(&t, path, err);
    CHECK_MSG(rc == -1 && t == NULL, "%s loaded (expected '%s')", path, needle1);
    CHECK_MSG(strstr(err, path) != NULL, "message '%s' does not name the file", err);
    CHECK_MSG(strstr(err, needle1) != NULL, "message '%s' lacks '%s'", err, needle1);
    if (needle2) CHECK_MSG(strstr(err, needle2) != NULL, "message '%s' lacks '%s'", err, needle2);
    CHECK_MSG(strchr(err, '\n') == NULL, "message '%s' is not one line", err);
    tok_free(t);
}

/* tok_load(path) succeeds with warnings naming the file and holding needle (one line per
 * oddity); returns the vocabulary (the caller frees it), NULL after a failed check. */
static tok *expect_warning(const char *path, const char *needle) {
    char err[ERR_LEN] = "";
    tok *t = NULL;
    CHECK_MSG(tok_load(&t, path, err) == 0, "%s: %s", path, err);
    if (!t) return NULL;
    const char *w = tok_warnings(t);
    CHECK_MSG(strstr(w, path) && strstr(w, needle), "warnings '%s' lack '%s'", w, needle);
    return t;
}

static void test_errors(void) {
    mini m;
    const char *p;
    tok *t;

    /* Merges llama.cpp keeps although they name no token: it merges the strings, and writes a
     * result that is no token as the tokens of its bytes. */
    mini_init(&m);
    m.merges[m.n_merges++] = "a b";
    m.merges[m.n_merges++] = "a \xe2\x82\xac";
    p = mini_write(&m, "gpt-2", "bad.gguf");
    t = expect_warning(p, "tokenizer.ggml.merges: 2 entries name or make a string that is no "
                          "token (first: [0] 'a b')");
    if (t) {
        expect_ids(t, "ab", (int[]){'a', 'b'}, 2);
        tok_free(t);
    }
    /* Through a string that is no token to one that is: "a b" -> "ab" (none), "ab c" -> "abc". */
    mini_add(&m, "abc", 1);
    m.merges[1] = "ab c";
    p = mini_write(&m, "gpt-2", "bad.gguf");
    t = expect_warning(p, "2 entries name or make a string that is no token");
    if (t) {
        expect_ids(t, "abc", (int[]){256}, 1);
        expect_ids(t, "abd", (int[]){'a', 'b', 'd'}, 3);
        tok_free(t);
    }
    mini_init(&m);
    mini_add(&m, "ab", 1);
    m.merges[m.n_merges++] = "a b";
    m.merges[m.n_merges++] = "ab";
    p = mini_write(&m, "gpt-2", "bad.gguf");
    t = expect_warning(p, "tokenizer.ggml.merges: 1 entries are not two strings separated by a "
                          "space (first: [1] 'ab'): ignored");
    if (t) {
        expect_ids(t, "ab", (int[]){256}, 1);
        tok_free(t);
    }
    m.merges[1] = " a"; /* the space at 0 does not count, as in llama.cpp */
    p = mini_write(&m, "gpt-2", "bad.gguf");
    tok_free(expect_warning(p, "(first: [1] ' a'): ignored"));

    /* Texts that are not UTF-8 load (llama.cpp keeps them) and decode to their bytes. */
    mini_init(&m);
    mini_add(&m, "ok", 1);
    mini_add(&m, "x\xff", 1);
    p = mini_write(&m, "gpt-2", "bad.gguf");
    t = expect_warning(p, "tokenizer.ggml.tokens: 1 texts are not valid UTF-8 (first: [257] "
                          "'x\\xff', byte 1)");
    if (t) {
        size_t len;
        const char *s = tok_text(t, -1, 257, &len);
        CHECK(s && len == 2 && memcmp(s, "x\xff", 2) == 0);
        tok_free(t);
    }
    m.tokens[257] = "\xed\xa0\x80"; /* a surrogate */
    p = mini_write(&m, "gpt-2", "bad.gguf");
    tok_free(expect_warning(p, "texts are not valid UTF-8"));
    m.tokens[257] = "ok"; /* llama.cpp asserts that every text is one token */
    p = mini_write(&m, "gpt-2", "bad.gguf");
    expect_error(p, "tokenizer.ggml.tokens[257] 'ok' repeats token 256", NULL);
    m.tokens[257] = "fine";
    m.types[257] = 9; /* llama.cpp reads a type it does not know as undefined */
    p = mini_write(&m, "gpt-2", "bad.gguf");
    t = expect_warning(p, "tokenizer.ggml.token_type: 1 values are not token types 0..6 (first: "
                          "[257] = 9): read as undefined");
    if (t) {
        size_t len;
        CHECK(tok_text(t, -1, 257, &len) && len == 0); /* undefined tokens decode to nothing */
        tok_free(t);
    }
    m.types[257] = 1;

    p = mini_write(&m, "klingon", "bad.gguf");
    expect_error(p, "tokenizer.ggml.pre: pre-tokenizer 'klingon' is not supported", NULL);

    /* Missing and ill-typed keys; llama.cpp's special-id rule. */
    char err[ERR_LEN];
    const char *bad = test_tmp("bad.gguf");
    int32_t nums[3] = {1, 2, 3};
    for (int k = 0; k < 7; k++) {
        gguf_writer *w = gguf_writer_new(0);
        gguf_writer_add_str(w, "tokenizer.ggml.model", "gpt2");
        if (k == 0)
            gguf_writer_add_array(w, "tokenizer.ggml.tokens", GGUF_I32, nums, NULL, 3);
        else
            gguf_writer_add_array(w, "tokenizer.ggml.tokens", GGUF_STRING, m.tokens, NULL,
                                  (uint64_t)m.n);
        if (k == 2)
            gguf_writer_add_u32(w, "tokenizer.ggml.merges", 5);
        else if (k != 1)
            gguf_writer_add_array(w, "tokenizer.ggml.merges", GGUF_STRING, m.merges, NULL, 0);
        if (k == 3) gguf_writer_add_u32(w, "tokenizer.ggml.pre", 7);
        if (k == 4) gguf_writer_add_u32(w, "tokenizer.ggml.bos_token_id", 9999);
        if (k == 5) gguf_writer_add_bool(w, "tokenizer.ggml.add_bos_token", 1);
        if (k == 6) gguf_writer_add_array(w, "tokenizer.ggml.token_type", GGUF_I32, nums, NULL, 3);
        CHECK(gguf_writer_write(w, bad, err) == 0);
        gguf_writer_free(w);
        if (k == 4 || k == 5) {
            /* BOS 9999 is no token: absent, so llama.cpp's default for byte-level BPE, 11 (and
             * that default is what a prompt starts with when add_bos_token asks for BOS). */
            t = k == 4 ? expect_warning(bad, "tokenizer.ggml.bos_token_id = 9999: not token ids "
                                             "of its 258 tokens, read as absent")
                       : NULL;
            if (k == 5) {
                CHECK_MSG(tok_load(&t, bad, err) == 0, "%s", err);
                CHECK(t && tok_warnings(t)[0] == 0);
            }
            if (t) {
                CHECK(tok_bos(t) == 11 && tok_eos(t) == 11 && tok_add_bos(t) == (k == 5));
                if (k == 5) {
                    int *ids, n = enc(t, "b", TOK_ADD_BOS, &ids);
                    CHECK(n == 2 && ids[0] == 11 && ids[1] == 'b');
                    free(ids);
                }
                tok_free(t);
            }
            continue;
        }
        const char *want[] = {"key 'tokenizer.ggml.tokens' should be an array of string",
                              "key 'tokenizer.ggml.merges' is missing",
                              "key 'tokenizer.ggml.merges' should be an array",
                              "key 'tokenizer.ggml.pre' should be a string",
                              NULL,
                              NULL,
                              "key 'tokenizer.ggml.token_type' has 3 elements, expected at least "
                              "258"};
        expect_error(bad, want[k], NULL);
    }

    /* A vocabulary lacking a byte's stand-in: that byte's text has no token; the rest still
     * encodes (llama.cpp drops what it cannot find, and so do we). */
    mini_init(&m);
    m.tokens['a'] = "\xe2\x82\xac"; /* no 'a' any more */
    t = mini_load(&m, "gpt-2");
    if (t) {
        expect_ids(t, "bab", (int[]){'b', 'b'}, 2);
        tok_free(t);
    }
}

/* ---- the fuzz target's seeds and their mutations ----------------------------------------- */

/* Seeds: per pre-tokenizer a small vocabulary with merges, user and control tokens and a
 * text with contractions, digits, spaces, newlines, CJK and invalid UTF-8. Written to
 * <tmp>/seeds for the fuzzer (see tests/fuzz_vocab.c); then 3000 mutations of them replayed
 * through the same entry. Returns the number of inputs run. */
static int test_fuzz_corpus(void) {
    static const char vocab[] = "ab\nbc\nabc\n\xc4\xa0"
                                "a\n4<|user|>\n3<|im_end|>\n"
                                "\xe4\xb8\xad\xe6\x96\x87\nma b\nmb c\nma bc\nm\xc4\xa0 a";
    static const char text[] = "abc ab'S <|user|> x<|im_end|>\n\n  123456 \xe4\xb8\xad\xe6\x96\x87 "
                               "\xff\xe6\x97 it's   done!\r\n";
    char dir[600];
    snprintf(dir, sizeof dir, "%s/seeds", test_tmpdir());
    mkdir(dir, 0755);
    uint8_t seeds[FUZZ_N_PRES][512];
    size_t sizes[FUZZ_N_PRES];
    int runs = 0;
    for (size_t k = 0; k < FUZZ_N_PRES; k++) {
        uint8_t *b = seeds[k];
        size_t n = 0;
        b[n++] = (uint8_t)k;
        b[n++] = 1 | 2 | 4 | 16 | (k % 3 == 0 ? 32 : 0);
        b[n++] = 0;
        memcpy(b + n, vocab, sizeof vocab - 1), n += sizeof vocab - 1;
        b[n++] = 0, b[n++] = 0;
        memcpy(b + n, text, sizeof text - 1), n += sizeof text - 1;
        sizes[k] = n;
        char path[700];
        snprintf(path, sizeof path, "%s/seed%02zu", dir, k);
        FILE *f = fopen(path, "wb");
        if (f) fwrite(b, 1, n, f), fclose(f);
        fuzz_vocab_one(b, n);
        runs++;
    }
    uint64_t r = 0x9e3779b97f4a7c15ull;
    uint8_t buf[1024];
    for (int i = 0; i < 3000; i++) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        size_t k = r % FUZZ_N_PRES, n = sizes[k];
        memcpy(buf, seeds[k], n);
        for (int m = 0; m < 1 + (int)(r >> 60); m++) {
            r ^= r << 13, r ^= r >> 7, r ^= r << 17;
            size_t at = (r >> 8) % n;
            switch (r % 4) {
            case 0:
                buf[at] = (uint8_t)(r >> 24);
                break; /* overwrite */
            case 1:
                buf[at] ^= (uint8_t)(1u << ((r >> 32) % 8));
                break; /* flip a bit */
            case 2:
                if (n > 4) memmove(buf + at, buf + at + 1, n - at - 1), n--;
                break;
            default:
                if (n < sizeof buf)
                    memmove(buf + at + 1, buf + at, n - at), buf[at] = (uint8_t)(r >> 40), n++;
            }
        }
        fuzz_vocab_one(buf, n);
        runs++;
    }
    fprintf(stderr, "  %d inputs through fuzz_vocab_one\n", runs);
    return runs;
}

/* Inputs the fuzzer found crashing, replayed on every run (fuzz_vocab_one aborts on a defect). */
static void test_fuzz_crashes(void) {
    /* deepseek-llm, stand-ins first, padded by 128: the vocabulary holds "[PAD258]" at id 256,
     * so the copy's pad 258 repeated it and the copy did not load (found by the fuzzer in CI). */
    static const uint8_t pad_name_taken[] = "\003\317\377[PAD258]\000\015";
    fuzz_vocab_one(pad_name_taken, sizeof pad_name_taken - 1);
    /* "default", bos_token_id = 135 in a 19-token vocabulary (absent, so the default id 11),
     * the copy padded by 128: the copy carried 135 verbatim, a real token of its 147, so the two
     * vocabularies' BOS differed (found by the fuzzer in CI). Out-of-range ids are not copied. */
    static const uint8_t bos_in_pad[] =
        "\346\226\207\nma b\nm\001\n\n\n\n\n\n\n\n\n\nc\nmtokenizer.ggml.mask_t"
        "\n\n\n\n\n\n\n's  \"done!\r\n";
    fuzz_vocab_one(bos_in_pad, sizeof bos_in_pad - 1);
    /* a merge list whose only string that is no token is "" (the line "ma "): the extras' text
     * was never allocated, and its lookup computed NULL + 0 (UBSan; found by the fuzzer) */
    static const uint8_t empty_extra[] =
        "\003\067\000\141\142\012\142\143\012\040\377\365\104\146\016\002\374\141\142\143\012\304"
        "\240\141\012\064\074\174\165\163\145\162\174\076\012\063\074\174\151\155\137\145\156\144"
        "\174\076\013\027\221\144\174\076\012\344\270\255\346\226\207\012\155\141\040\012\377\270"
        "\255\346\226\207\012\155\141\040";
    fuzz_vocab_one(empty_extra, sizeof empty_extra - 1);
    /* The same directly: pad 259's name is taken twice over, so it becomes "[PAD259_2]". */
    mini m;
    mini_init(&m);
    mini_add(&m, "[PAD259]", 1);   /* 256 */
    mini_add(&m, "[PAD259_1]", 1); /* 257 */
    mini_add(&m, "xy", 1);         /* 258 */
    char err[ERR_LEN];
    convert_vocab *v = NULL;
    tok *u = NULL;
    const char *copy = test_tmp("pad_taken_copy.gguf");
    CHECK_MSG(convert_vocab_load(&v, mini_write(&m, "gpt-2", "pad_taken.gguf"), err) == 0, "%s",
              err);
    gguf_writer *w = gguf_writer_new(0);
    CHECK(v && w && convert_vocab_write(v, w, -1, m.n + 3) == 0);
    CHECK_MSG(gguf_writer_write(w, copy, err) == 0, "%s", err);
    gguf_writer_free(w);
    convert_vocab_free(v);
    CHECK_MSG(tok_load(&u, copy, err) == 0, "%s", err);
    if (!u) return;
    static const char *const want[] = {"[PAD259_2]", "[PAD260]", "[PAD261]"};
    for (int i = 0; i < 3; i++)
        CHECK_MSG(strcmp(tok_piece(u, m.n + i), want[i]) == 0, "pad %d: '%s', want '%s'", m.n + i,
                  tok_piece(u, m.n + i), want[i]);
    CHECK(strcmp(tok_piece(u, 256), "[PAD259]") == 0);
    tok_free(u);
}

int main(void) {
    test_vectors();
    test_split_rules();
    test_specials();
    test_invalid_utf8();
    test_merge_order();
    test_pre_tokenizers();
    test_errors();
    test_fuzz_corpus();
    test_fuzz_crashes();
    test_every_token();
    test_every_code_point();
    return test_finish("test_tokenizer_bpe");
}
