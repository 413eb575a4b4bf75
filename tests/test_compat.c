/* test_compat.c: files llama.cpp loads load here too (model/GGUF.md, "Which files work").
 *
 * Always, on fixtures built here, one per quirk of a real file:
 *   - llama.cpp's convert-llama2c-to-ggml writes tokenizer.ggml.seperator_token_id and
 *     padding_token_id = 4294967295 (its "no token"), EOS 2, no pre-tokenizer, add-BOS or
 *     vocab_size key, context_length 128, general.name "llama" and an output.weight copied from
 *     the tied embedding: stories260K converted by decbench and rewritten so. It loads with one
 *     warning line and decodes greedily to the checkpoint's tokens.
 *   - GPT-NeoX and MPT vocabularies (ggml-vocab-gpt-neox/mpt.gguf) hold pieces of 512 spaces
 *     (1024 bytes stored): a byte-level vocabulary with such a piece, and a SentencePiece one
 *     with a piece longer than the 128 bytes it was once limited to, load, encode to the long
 *     piece and decode it whole.
 *   - a llama2.c tokenizer whose pieces exceed its max_token_length (llama.cpp's converter
 *     ignores that field).
 *   - a model whose vocab_size differs from its tokens' count, and whose trained context is
 *     past 2^20 (both load in llama.cpp).
 * With DECBENCH_LLAMA_CPP_MODELS naming llama.cpp's models/ folder: every vocabulary-only GGUF
 * there whose type decbench reads (tokenizer.ggml.model llama or gpt2) loads and reproduces
 * llama.cpp's vectors (the .inp/.out files beside it, as its test-tokenizer-0 runs them: no
 * BOS, control tokens as text). Without it that part is skipped with a note. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/convert/convert.h"
#include "model/formats/gguf.h"
#include "model/loader/model_file.h"
#include "model/model.h"
#include "model/tokenizer/tokenizer.h"
#include "tests/dec_check.h"
#include "tests/testutil.h"
#include "util/err.h"

#define SP "\xe2\x96\x81"    /* '▁' */
#define NO_TOKEN 4294967295u /* llama.cpp's LLAMA_TOKEN_NULL as its converters write it */

static void write_file(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    CHECK(fwrite(data, 1, n, f) == n);
    fclose(f);
}

/* tok_load(path) succeeds with exactly one warning line, naming the file and holding every
 * needle (NULL-terminated). Returns the vocabulary (the caller frees it) or NULL. */
static tok *load_warned(const char *path, const char *const *needles) {
    char err[ERR_LEN] = "";
    tok *t = NULL;
    CHECK_MSG(tok_load(&t, path, err) == 0, "%s", err);
    if (!t) return NULL;
    const char *w = tok_warnings(t);
    CHECK_MSG(strstr(w, path) && !strchr(w, '\n'), "warnings of %s: '%s'", path, w);
    for (int i = 0; needles[i]; i++)
        CHECK_MSG(strstr(w, needles[i]), "warning '%s' lacks '%s'", w, needles[i]);
    return t;
}

/* The ids of text (no BOS unless flags say so) in a malloc'd array; the count, -1 on error. */
static int enc(const tok *t, const char *text, int flags, int **ids) {
    char err[ERR_LEN];
    int n = -1;
    *ids = malloc((strlen(text) + 3) * sizeof **ids);
    int rc = tok_encode_flags(t, text, flags, *ids, &n, err);
    CHECK_MSG(rc == 0, "encode '%.40s': %s", text, err);
    return rc == 0 ? n : -1;
}

/* decode(ids) == want, byte for byte (prev starts at `first_prev`). */
static void check_round_trip(const tok *t, const int *ids, int n, int first_prev, const char *want,
                             const char *what) {
    size_t cap = strlen(want) + 1, len = 0;
    char *out = malloc(cap);
    int ok = out != NULL;
    for (int i = 0; i < n && ok; i++) {
        size_t k;
        const char *s = tok_text(t, i ? ids[i - 1] : first_prev, ids[i], &k);
        ok = s && len + k < cap;
        if (ok) memcpy(out + len, s, k), len += k;
    }
    CHECK_MSG(ok && len == cap - 1 && memcmp(out, want, len) == 0, "%s: round trip", what);
    free(out);
}

/* ---- rewriting a GGUF's keys ------------------------------------------------------------- */

typedef struct {
    const char *key;
    int type; /* GGUF_U32 or GGUF_STRING; -1: drop the key */
    uint32_t u;
    const char *s;
} key_edit;

/* Copies src to dst with the keys of edits dropped or set (set ones appended in order) and,
 * if tie_output, an output.weight holding token_embd.weight's data when src has none. */
static int rewrite(const char *src, const char *dst, const key_edit *edits, int n_edits,
                   int tie_output) {
    char err[ERR_LEN];
    gguf *g;
    if (gguf_open(&g, src, err)) {
        CHECK_MSG(0, "%s", err);
        return -1;
    }
    gguf_writer *w = gguf_writer_new(0);
    for (int i = 0; i < gguf_kv_count(g); i++) {
        int edited = 0;
        for (int e = 0; e < n_edits; e++) edited |= strcmp(gguf_kv_key(g, i), edits[e].key) == 0;
        if (!edited) gguf_writer_copy_kv(w, g, i);
    }
    for (int e = 0; e < n_edits; e++) {
        if (edits[e].type == GGUF_U32) gguf_writer_add_u32(w, edits[e].key, edits[e].u);
        if (edits[e].type == GGUF_STRING) gguf_writer_add_str(w, edits[e].key, edits[e].s);
    }
    for (int i = 0; i < gguf_tensor_count(g); i++) {
        const gguf_tensor *t = gguf_tensor_at(g, i);
        gguf_writer_add_tensor(w, t->name, t->type, t->n_dims, t->ne, t->data, t->nbytes);
    }
    const gguf_tensor *emb = gguf_find_tensor(g, "token_embd.weight");
    if (tie_output && emb && !gguf_find_tensor(g, "output.weight"))
        gguf_writer_add_tensor(w, "output.weight", emb->type, emb->n_dims, emb->ne, emb->data,
                               emb->nbytes);
    int rc = gguf_writer_write(w, dst, err);
    CHECK_MSG(rc == 0, "%s", err);
    gguf_writer_free(w);
    gguf_close(g);
    return rc;
}

/* ---- llama.cpp's convert-llama2c-to-ggml ------------------------------------------------- */

/* A small SentencePiece vocabulary with the converter's special-id keys. */
static void test_converter_special_ids(void) {
    const char *tokens[] = {"<unk>", "<s>", "</s>", SP "a", "b"};
    float scores[] = {0, 0, 0, -1, -2};
    int32_t types[] = {2, 3, 3, 1, 1};
    char err[ERR_LEN];
    const char *p = test_tmp("converter_ids.gguf");
    gguf_writer *w = gguf_writer_new(0);
    gguf_writer_add_array(w, "tokenizer.ggml.tokens", GGUF_STRING, tokens, NULL, 5);
    gguf_writer_add_array(w, "tokenizer.ggml.scores", GGUF_F32, scores, NULL, 5);
    gguf_writer_add_array(w, "tokenizer.ggml.token_type", GGUF_I32, types, NULL, 5);
    gguf_writer_add_str(w, "tokenizer.ggml.model", "llama");
    gguf_writer_add_u32(w, "tokenizer.ggml.unknown_token_id", 0);
    gguf_writer_add_u32(w, "tokenizer.ggml.bos_token_id", 1);
    gguf_writer_add_u32(w, "tokenizer.ggml.eos_token_id", 2);
    gguf_writer_add_u32(w, "tokenizer.ggml.seperator_token_id", NO_TOKEN);
    gguf_writer_add_u32(w, "tokenizer.ggml.padding_token_id", NO_TOKEN);
    CHECK(gguf_writer_write(w, p, err) == 0);
    gguf_writer_free(w);
    tok *t = load_warned(p, (const char *[]){"tokenizer.ggml.seperator_token_id = 4294967295",
                                             "tokenizer.ggml.padding_token_id = 4294967295",
                                             "read as absent", NULL});
    if (!t) return;
    CHECK(tok_bos(t) == 1 && tok_eos(t) == 2 && tok_pad(t) == -1 && tok_eot(t) == -1);
    int *ids, n = enc(t, "ab", TOK_ADD_BOS, &ids);
    CHECK(n == 3 && ids[0] == 1 && ids[1] == 3 && ids[2] == 4);
    free(ids);
    tok_free(t);

    /* Every special-id key llama.cpp reads follows the rule, each role keeping its default:
     * BOS 1, EOS 2, unknown 0 for SentencePiece, none for the others; EOT is then found by
     * its text, as llama.cpp finds it. */
    const char *keys[] = {"tokenizer.ggml.bos_token_id",     "tokenizer.ggml.eos_token_id",
                          "tokenizer.ggml.eot_token_id",     "tokenizer.ggml.eom_token_id",
                          "tokenizer.ggml.unknown_token_id", "tokenizer.ggml.mask_token_id",
                          "tokenizer.ggml.fim_pre_token_id", "tokenizer.ggml.fim_suf_token_id",
                          "tokenizer.ggml.fim_mid_token_id", "tokenizer.ggml.fim_pad_token_id",
                          "tokenizer.ggml.fim_rep_token_id", "tokenizer.ggml.fim_sep_token_id",
                          "tokenizer.ggml.prefix_token_id",  "tokenizer.ggml.suffix_token_id",
                          "tokenizer.ggml.middle_token_id"};
    const char *tokens6[] = {"<unk>", "<s>", "</s>", SP "a", "b", "<|im_end|>"};
    float scores6[] = {0, 0, 0, -1, -2, 0};
    int32_t types6[] = {2, 3, 3, 1, 1, 4};
    w = gguf_writer_new(0);
    gguf_writer_add_array(w, "tokenizer.ggml.tokens", GGUF_STRING, tokens6, NULL, 6);
    gguf_writer_add_array(w, "tokenizer.ggml.scores", GGUF_F32, scores6, NULL, 6);
    gguf_writer_add_array(w, "tokenizer.ggml.token_type", GGUF_I32, types6, NULL, 6);
    gguf_writer_add_str(w, "tokenizer.ggml.model", "llama");
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
        gguf_writer_add_u32(w, keys[k], 6 + (uint32_t)k);
    CHECK(gguf_writer_write(w, p, err) == 0);
    gguf_writer_free(w);
    t = load_warned(p, (const char *[]){"tokenizer.ggml.bos_token_id = 6",
                                        "tokenizer.ggml.middle_token_id = 20", NULL});
    if (!t) return;
    CHECK(tok_bos(t) == 1 && tok_eos(t) == 2 && tok_pad(t) == -1 && tok_eot(t) == 5);
    size_t len;
    CHECK(tok_text(t, -1, 5, &len) && len == 0); /* "<|im_end|>" became a control token */
    tok_free(t);
}

/* stories260K as llama.cpp's converter writes it, next to the checkpoint. */
static void test_converted_llama2c(void) {
    char err[ERR_LEN];
    const char *ours = test_tmp("stories260K.gguf"), *theirs = test_tmp("stories260K-l2c.gguf");
    model *m = NULL, *g = NULL;
    convert_vocab *v = NULL;
    convert_opts o = {.fallback = CONVERT_FALLBACK_F16};
    CHECK(convert_scheme_parse("f32", &o) == 0);
    int rc = model_open(&m, test_shared("models/stories260K.bin"), err) ||
             convert_vocab_load(&v, test_shared("models/tok512.bin"), err) ||
             convert_gguf(m, v, &o, ours, NULL, err);
    CHECK_MSG(rc == 0, "%s", err);
    convert_vocab_free(v);
    const key_edit edits[] = {
        {"general.name", GGUF_STRING, 0, "llama"},
        {"general.file_type", -1, 0, NULL},
        {"llama.context_length", GGUF_U32, 128, NULL}, /* the converter's own n_ctx */
        {"llama.rope.freq_base", -1, 0, NULL},
        {"llama.vocab_size", -1, 0, NULL},
        {"tokenizer.ggml.pre", -1, 0, NULL},
        {"tokenizer.ggml.add_bos_token", -1, 0, NULL},
        {"tokenizer.ggml.add_eos_token", -1, 0, NULL},
        {"tokenizer.ggml.eos_token_id", GGUF_U32, 2, NULL},
        {"tokenizer.ggml.seperator_token_id", GGUF_U32, NO_TOKEN, NULL},
        {"tokenizer.ggml.padding_token_id", GGUF_U32, NO_TOKEN, NULL},
    };
    if (rc || rewrite(ours, theirs, edits, sizeof edits / sizeof edits[0], 1)) goto done;
    tok *t =
        load_warned(theirs, (const char *[]){"tokenizer.ggml.seperator_token_id = 4294967295",
                                             "tokenizer.ggml.padding_token_id = 4294967295", NULL});
    CHECK(t && tok_bos(t) == 1 && tok_eos(t) == 2 && tok_add_bos(t) == 1 && tok_pad(t) == -1);
    tok_free(t);
    CHECK_MSG(model_open(&g, theirs, err) == 0, "%s", err);
    if (!g) goto done;
    CHECK(g->cfg.seq_len == 128 && g->cfg.bos_id == 1 && g->cfg.eos_id == 2 && g->cfg.end_id == 2 &&
          m->cfg.end_id == 1);
    CHECK(g->wcls.data != g->tok_embd.data); /* the copied classifier, the same floats */
    /* Greedy from the same prompts: the same tokens, the checkpoint stopping at its end token
     * (BOS, llama2.c's) where the converted file, ending at EOS 2, goes on. */
    int ids[4][DEC_CHECK_MAX_PROMPT], lens[4];
    if (dec_check_tinystories(4, ids, lens)) goto done;
    for (int i = 0; i < 4; i++) {
        int a[DEC_CHECK_MAX_OUT], b[DEC_CHECK_MAX_OUT];
        int max_new = 100 - lens[i];
        dec_env ea = {.target = m}, eb = {.target = g};
        int na = dec_check_greedy(&ea, ids[i], lens[i], max_new, a);
        int nb = dec_check_greedy(&eb, ids[i], lens[i], max_new, b);
        CHECK_MSG(na > 0 && nb >= na && memcmp(a, b, sizeof(int) * (size_t)na) == 0,
                  "prompt %d: %d tokens against the checkpoint's %d", i, nb, na);
    }
done:
    model_close(g);
    model_close(m);
}

/* Keys llama.cpp reads without refusing: a vocab_size other than the tokens' count (it names
 * the model's size class there; the tokens give the size) and a trained context past
 * decbench's largest (Llama-3-8B-Gradient-4194k declares 4194304). */
static void test_model_keys(void) {
    char err[ERR_LEN];
    const char *src = test_tmp("stories260K.gguf"), *p = test_tmp("stories260K-keys.gguf");
    const key_edit edits[] = {
        {"llama.vocab_size", GGUF_U32, 600, NULL},
        {"llama.context_length", GGUF_U32, 4194304, NULL},
    };
    if (rewrite(src, p, edits, 2, 0)) return;
    model *m = NULL;
    CHECK_MSG(model_open(&m, p, err) == 0, "%s", err);
    if (m) {
        CHECK(m->cfg.vocab_size == 512 && m->cfg.ctx_train == MODEL_MAX_SEQ &&
              m->cfg.seq_len == MODEL_DEFAULT_CTX);
        model_close(m);
    }
    tok_free(load_warned(p, (const char *[]){"llama.vocab_size = 600 differs from its 512 tokens",
                                             "ignored", NULL}));
}

/* ---- long pieces ------------------------------------------------------------------------- */

/* A byte-level vocabulary as GPT-NeoX's: runs of 2, 4, ..., 512 spaces ("Ġ" each), merged by
 * doubling. */
static void test_long_pieces_bpe(void) {
    enum { N = 256 + 9 };
    static char stand_ins[256][4], runs[9][1100];
    const char *tokens[N], *merges[9];
    static char merge_text[9][1100];
    int32_t types[N];
    for (int b = 0; b < 256; b++) {
        int keep = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || b >= 0xae, k = 0;
        for (int c = 0; c < b; c++)
            k += !((c >= 0x21 && c <= 0x7e) || (c >= 0xa1 && c <= 0xac) || c >= 0xae);
        unsigned cp = keep ? (unsigned)b : 256u + (unsigned)k;
        if (cp < 0x80)
            stand_ins[b][0] = (char)cp;
        else
            stand_ins[b][0] = (char)(0xc0 | cp >> 6), stand_ins[b][1] = (char)(0x80 | (cp & 63));
        tokens[b] = stand_ins[b], types[b] = 1;
    }
    for (int r = 0; r < 9; r++) { /* run r: 2^(r+1) spaces, "Ġ" is U+0120 = c4 a0 */
        int half = 1 << r;
        char *s = runs[r], *m = merge_text[r];
        for (int i = 0; i < 2 * half; i++) memcpy(s + 2 * i, "\xc4\xa0", 2);
        s[4 * half] = 0;
        memcpy(m, s, (size_t)2 * half), m[2 * half] = ' ';
        memcpy(m + 2 * half + 1, s, (size_t)2 * half), m[4 * half + 1] = 0;
        tokens[256 + r] = s, types[256 + r] = 1, merges[r] = m;
    }
    char err[ERR_LEN];
    const char *p = test_tmp("long_bpe.gguf");
    gguf_writer *w = gguf_writer_new(0);
    gguf_writer_add_str(w, "tokenizer.ggml.model", "gpt2");
    gguf_writer_add_str(w, "tokenizer.ggml.pre", "mpt");
    gguf_writer_add_array(w, "tokenizer.ggml.tokens", GGUF_STRING, tokens, NULL, N);
    gguf_writer_add_array(w, "tokenizer.ggml.token_type", GGUF_I32, types, NULL, N);
    gguf_writer_add_array(w, "tokenizer.ggml.merges", GGUF_STRING, merges, NULL, 9);
    gguf_writer_add_u32(w, "tokenizer.ggml.bos_token_id", 0);
    gguf_writer_add_u32(w, "tokenizer.ggml.eos_token_id", 0);
    CHECK(gguf_writer_write(w, p, err) == 0);
    gguf_writer_free(w);
    tok *t = NULL;
    CHECK_MSG(tok_load(&t, p, err) == 0, "%s", err);
    if (!t) return;
    CHECK(tok_warnings(t)[0] == 0);
    size_t len;
    const char *s = tok_text(t, -1, 264, &len);
    CHECK(s && len == 512 && strspn(s, " ") == 512 && s[512] == 0);
    char buf[TOK_PIECE_MAX];
    CHECK(tok_decode(t, -1, 264, buf, sizeof buf) == -1); /* too long for it: said, not cut */
    /* 599 spaces then "xy": GPT-2's rule leaves the last space to the word " xy", and the
     * other 598 merge down to 512 + 64 + 16 + 4 + 2 (stand-ins of ' ', 'x', 'y' are ids 32,
     * 120, 121). */
    char text[700];
    memset(text, ' ', 600);
    memcpy(text + 599, "xy", 3);
    int *ids, n = enc(t, text, 0, &ids);
    const int want[] = {264, 261, 259, 257, 256, ' ', 'x', 'y'};
    CHECK_MSG(n == 8 && memcmp(ids, want, sizeof want) == 0, "%d ids, first %d", n,
              n > 0 ? ids[0] : -1);
    check_round_trip(t, ids, n, -1, text, "599 spaces");
    free(ids);
    tok_free(t);
}

/* A SentencePiece vocabulary with runs of 2, 4, ..., 256 '▁' (the longer scoring higher). */
static void test_long_pieces_spm(void) {
    enum { N = 3 + 256 + 1 + 7 + 1 };
    static char bytes[256][8], runs[8][800];
    const char *tokens[N];
    float scores[N];
    int32_t types[N];
    const char *specials[3] = {"<unk>", "<s>", "</s>"};
    for (int i = 0; i < 3; i++) tokens[i] = specials[i], scores[i] = 0, types[i] = i ? 3 : 2;
    for (int b = 0; b < 256; b++) {
        snprintf(bytes[b], sizeof bytes[b], "<0x%02X>", b);
        tokens[3 + b] = bytes[b], scores[3 + b] = 0, types[3 + b] = 6;
    }
    tokens[3 + 256] = SP, scores[3 + 256] = -100, types[3 + 256] = 1;
    for (int r = 0; r < 7; r++) { /* runs of 2^(r+1): 2 .. 128; the last token 256 */
        int k = 1 << (r + 1);
        for (int i = 0; i < k; i++) memcpy(runs[r] + 3 * i, SP, 3);
        runs[r][3 * k] = 0;
        tokens[3 + 257 + r] = runs[r], scores[3 + 257 + r] = (float)r, types[3 + 257 + r] = 1;
    }
    for (int i = 0; i < 256; i++) memcpy(runs[7] + 3 * i, SP, 3);
    runs[7][3 * 256] = 0;
    /* the last: 256 '▁', 768 bytes stored, 256 decoded (the old limit was 127) */
    tokens[N - 1] = runs[7], scores[N - 1] = 7, types[N - 1] = 1;
    char err[ERR_LEN];
    const char *p = test_tmp("long_spm.gguf");
    gguf_writer *w = gguf_writer_new(0);
    gguf_writer_add_str(w, "tokenizer.ggml.model", "llama");
    gguf_writer_add_array(w, "tokenizer.ggml.tokens", GGUF_STRING, tokens, NULL, N);
    gguf_writer_add_array(w, "tokenizer.ggml.scores", GGUF_F32, scores, NULL, N);
    gguf_writer_add_array(w, "tokenizer.ggml.token_type", GGUF_I32, types, NULL, N);
    CHECK(gguf_writer_write(w, p, err) == 0);
    gguf_writer_free(w);
    tok *t = NULL;
    CHECK_MSG(tok_load(&t, p, err) == 0, "%s", err);
    if (!t) return;
    /* 255 spaces and the dummy prefix: 256 '▁', one token; after BOS it decodes to 255. */
    char text[300];
    memset(text, ' ', 255);
    text[255] = 0;
    int *ids, n = enc(t, text, TOK_ADD_BOS, &ids);
    CHECK_MSG(n == 2 && ids[0] == 1 && ids[1] == N - 1, "%d ids", n);
    size_t len;
    const char *s = tok_text(t, 1, N - 1, &len);
    CHECK(s && len == 255 && strspn(s, " ") == 255);
    CHECK(tok_text(t, -1, N - 1, &len) && len == 256);
    check_round_trip(t, ids + 1, n - 1, 1, text, "255 spaces");
    free(ids);
    tok_free(t);
}

/* llama2.c's tokenizer format: pieces longer than max_token_length (3 here). */
static void test_llama2c_max_token_length(void) {
    static unsigned char buf[2048];
    size_t pos = 0;
    int32_t max_len = 3;
    memcpy(buf, &max_len, 4), pos = 4;
    const char *pieces[] = {"<unk>", "\n<s>\n", "\n</s>\n", "a", " long piece of text"};
    for (int i = 0; i < 5; i++) {
        float score = i == 4 ? 1.0f : 0.0f;
        int32_t len = (int32_t)strlen(pieces[i]);
        memcpy(buf + pos, &score, 4), memcpy(buf + pos + 4, &len, 4);
        memcpy(buf + pos + 8, pieces[i], (size_t)len);
        pos += 8 + (size_t)len;
    }
    const char *p = test_tmp("long_llama2c.bin");
    write_file(p, buf, pos);
    tok *t = load_warned(p, (const char *[]){"4 pieces are longer than its max_token_length 3",
                                             "first: token 0", NULL});
    if (!t) return;
    size_t len;
    const char *s = tok_text(t, -1, 4, &len);
    CHECK(s && len == 19 && memcmp(s, " long piece of text", 19) == 0);
    tok_free(t);
}

/* ---- llama.cpp's own vocabulary files ---------------------------------------------------- */

/* Reads a whole file (NUL-terminated) or returns NULL. */
static char *slurp(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) free(s), s = NULL;
    if (s) s[n] = 0;
    fclose(f);
    return s;
}

/* The .inp/.out vectors beside path: cases run and passed. */
static void run_vectors(const tok *t, const char *path, int *cases, int *passed) {
    char name[4300];
    snprintf(name, sizeof name, "%s.inp", path);
    char *inp = slurp(name);
    snprintf(name, sizeof name, "%s.out", path);
    char *outs = slurp(name);
    *cases = *passed = 0;
    const char *sep = "\n__ggml_vocab_test__\n";
    char *p = inp, *line = outs;
    for (char *end; inp && outs && (end = strstr(p, sep)); p = end + strlen(sep)) {
        *end = 0;
        char *nl = strchr(line, '\n');
        if (nl) *nl = 0;
        int *want = malloc(sizeof(int) * (strlen(line) / 2 + 2)), nw = 0;
        for (char *q = line;;) {
            char *e;
            long x = strtol(q, &e, 10);
            if (e == q) break;
            want[nw++] = (int)x;
            q = e;
        }
        int *ids, n = enc(t, p, 0, &ids);
        (*cases)++;
        if (n == nw && memcmp(ids, want, sizeof(int) * (size_t)n) == 0)
            (*passed)++;
        else
            fprintf(stderr, "    case %d ('%.30s'): %d ids, want %d\n", *cases, p, n, nw);
        free(ids), free(want);
        line = nl ? nl + 1 : line + strlen(line);
    }
    free(inp), free(outs);
}

static int by_name(const struct dirent **a, const struct dirent **b) {
    return strcmp((*a)->d_name, (*b)->d_name);
}

static void test_llama_cpp_models(void) {
    const char *dir = getenv("DECBENCH_LLAMA_CPP_MODELS");
    if (!dir || !*dir) {
        fprintf(stderr, "  note: DECBENCH_LLAMA_CPP_MODELS is not set (llama.cpp's models/ "
                        "folder): its vocabulary files were not tried\n");
        return;
    }
    struct dirent **list;
    int n = scandir(dir, &list, NULL, by_name), loaded = 0, tried = 0;
    CHECK_MSG(n >= 0, "cannot list %s", dir);
    for (int i = 0; i < n; i++) {
        const char *f = list[i]->d_name;
        size_t len = strlen(f);
        if (strncmp(f, "ggml-vocab-", 11) != 0 || len < 5 || strcmp(f + len - 5, ".gguf") != 0)
            goto next;
        char path[4200], err[ERR_LEN];
        snprintf(path, sizeof path, "%s/%s", dir, f);
        gguf *g;
        const char *model = "?";
        if (gguf_open(&g, path, err)) {
            CHECK_MSG(0, "%s", err);
            goto next;
        }
        gguf_get_str(g, "tokenizer.ggml.model", &model, err);
        int supported = strcmp(model, "llama") == 0 || strcmp(model, "gpt2") == 0;
        char type[16];
        snprintf(type, sizeof type, "%s", model);
        gguf_close(g);
        if (!supported) {
            fprintf(stderr, "  %-32s %-6s not a type decbench reads: skipped\n", f, type);
            goto next;
        }
        tried++;
        tok *t = NULL;
        if (tok_load(&t, path, err)) {
            CHECK_MSG(0, "%s", err);
            fprintf(stderr, "  %-32s %-6s REFUSED: %s\n", f, type, err);
            goto next;
        }
        loaded++;
        int cases = 0, passed = 0;
        run_vectors(t, path, &cases, &passed);
        const char *w = tok_warnings(t);
        if (cases)
            fprintf(stderr, "  %-32s %-6s loads, %d of %d vectors%s%s\n", f, type, passed, cases,
                    w[0] ? "; warning: " : "", w);
        else
            fprintf(stderr, "  %-32s %-6s loads (no vectors)%s%s\n", f, type,
                    w[0] ? "; warning: " : "", w);
        CHECK_MSG(passed == cases, "%s: %d of %d vectors", f, passed, cases);
        tok_free(t);
    next:
        free(list[i]);
    }
    free(n >= 0 ? list : NULL);
    fprintf(stderr, "  %d of %d vocabulary files of the types decbench reads load\n", loaded,
            tried);
    CHECK(tried > 0 && loaded == tried);
}

int main(void) {
    test_converter_special_ids();
    test_converted_llama2c();
    test_model_keys();
    test_long_pieces_bpe();
    test_long_pieces_spm();
    test_llama2c_max_token_length();
    test_llama_cpp_models();
    return test_finish("test_compat");
}
