/* fuzz_vocab.c: libFuzzer target for the byte-level BPE vocabulary reader (tok_bpe.c), its
 * pre-tokenizers (tok_pre.c) and the encoder and decoder on arbitrary text; and, on every
 * vocabulary that loads, the vocabulary copy of convert/synth (convert_vocab: pairs copied
 * verbatim, padding tokens appended) and the draft check (tok_compatible).
 *
 * Random bytes almost never make a GGUF file, so each input describes a vocabulary that is
 * then written as GGUF (model/formats/gguf.h's writer) and loaded with tok_load, as a file on disk:
 *   byte 0   pre-tokenizer: index into fuzz_vocab_pres (the last entries are unknown names)
 *   byte 1   flags: 1 the 256 byte stand-ins come first, 2 tokenizer.ggml.add_bos_token,
 *            4 tokenizer.ggml.bos_token_id = byte 2, 8 no token_type array, 16 parse
 *            special tokens when encoding, 32 tokenizer.chat_template = the text, 64
 *            tokenizer.ggml.add_eos_token, 128 pad the copy by 128 tokens (else by 1)
 *   byte 2   BOS id
 *   then     the vocabulary up to the first "\0\0": lines split at '\n'; "m..." is a merge,
 *            "0".."9" then text is a token of that type (7..9 are invalid types), any other
 *            line a normal token
 *   then     the text to encode (up to its first NUL byte).
 * Loading may fail (that is the expected outcome for most inputs); a load that succeeds must
 * encode the text without crashing, every id in range, and decode every id; it must be
 * compatible with itself, and its copy padded by 1 or 128 unused tokens must load, be compatible
 * with it both ways, and encode the text to the same ids (unless the text or vocabulary holds
 * "[PAD", which the padding tokens could match). A crash, sanitizer report, leak or abort() is a
 * bug.
 *
 * Build and run (clang; Debian: libclang-rt-14-dev):
 *   CC=clang cmake -S . -B build-fuzz -DDECBENCH_FUZZ=ON -DDECBENCH_NATIVE=OFF
 *   cmake --build build-fuzz --target fuzz_vocab -j2
 *   ctest --test-dir build -R test_tokenizer_bpe  # writes build/tests/tmp_test_tokenizer_bpe/seeds
 *   mkdir -p /tmp/vocab-corpus && cp build/tests/tmp_test_tokenizer_bpe/seeds/seed*
 * /tmp/vocab-corpus/
 *   ./build-fuzz/tests/fuzz_vocab /tmp/vocab-corpus -max_len=4096 -max_total_time=600
 * Without libFuzzer the same entry, fuzz_vocab_one(), replays those seeds and a seeded set of
 * their mutations in test_tokenizer_bpe.c on every test run. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/convert/convert.h"
#include "model/formats/gguf.h"
#include "model/tokenizer/tokenizer.h"
#include "util/err.h"
#include "tests/fuzz_files.h"

static const char *const fuzz_vocab_pres[] = {
    "gpt-2",   "llama-bpe", "qwen2",     "deepseek-llm", "deepseek-coder", "deepseek-v3",
    "default", "falcon",    "starcoder", "poro-chat",    "viking",         "tekken",
    "mpt",     "",          "klingon",   "llama3 "};
#define FUZZ_N_PRES (sizeof fuzz_vocab_pres / sizeof fuzz_vocab_pres[0])

volatile unsigned fuzz_vocab_sink;

/* GGUF writes go to a per-process file (tmpfs when there is one). */
static const char *fuzz_vocab_path(void) {
    static char path[64];
    return fuzz_scratch_path("fuzz_vocab", ".gguf", path, sizeof path);
}

/* The ids of text under t, or -1 if it does not encode; ids holds strlen(text) + 3. */
static int fuzz_vocab_ids(const tok *t, const char *text, int flags, int *ids) {
    char err[ERR_LEN];
    int n = 0;
    return tok_encode_flags(t, text, flags, ids, &n, err) == 0 ? n : -1;
}

/* t's copy through convert_vocab, padded by `pad` tokens: compatible both ways, same ids. */
static void fuzz_vocab_copy(const tok *t, const char *text, int flags, int pad) {
    char err[ERR_LEN], copy[80];
    convert_vocab *v = NULL;
    snprintf(copy, sizeof copy, "%s.copy", fuzz_vocab_path());
    if (convert_vocab_load(&v, fuzz_vocab_path(), err)) return; /* < 3 tokens: not a model's */
    gguf_writer *w = gguf_writer_new(0);
    int ok = w && convert_vocab_write(v, w, convert_vocab_eos(v), tok_vocab_size(t) + pad) == 0 &&
             gguf_writer_write(w, copy, err) == 0;
    gguf_writer_free(w);
    convert_vocab_free(v);
    if (!ok) abort();
    tok *u;
    if (tok_load(&u, copy, err)) abort(); /* the copy of a vocabulary that loads must load */
    unlink(copy);
    if (tok_vocab_size(u) != tok_vocab_size(t) + pad) abort();
    /* Without BOS/EOS keys a byte-level vocabulary takes llama.cpp's default id 11, which a
     * vocabulary of at most 11 tokens does not hold: padded past 11, the copy has the special
     * tokens its source lacks, and the two are rightly not compatible. */
    int defaults_differ = tok_bos(t) != tok_bos(u) || tok_eos(t) != tok_eos(u);
    if (defaults_differ && !(tok_vocab_size(t) <= 11 && tok_vocab_size(u) > 11)) abort();
    if (!defaults_differ && (tok_compatible(t, u, copy, err) || tok_compatible(u, t, copy, err)))
        abort();
    int padded = strstr(text, "[PAD") != NULL;
    for (int id = 0; id < tok_vocab_size(t) && !padded; id++)
        padded = strstr(tok_piece(t, id), "[PAD") != NULL;
    size_t len = strlen(text);
    int *a = malloc((len + 3) * sizeof *a), *b = malloc((len + 3) * sizeof *b);
    if (a && b && !padded) {
        int na = fuzz_vocab_ids(t, text, flags, a), nb = fuzz_vocab_ids(u, text, flags, b);
        if (na != nb || (na > 0 && memcmp(a, b, sizeof *a * (size_t)na) != 0)) abort();
    }
    free(a), free(b);
    tok_free(u);
}

static void fuzz_vocab_check(const tok *t, const char *text, int flags) {
    char err[ERR_LEN];
    size_t len = strlen(text);
    int *ids = malloc((len + 3) * sizeof *ids), n = 0;
    if (!ids) return;
    if (tok_encode_flags(t, text, flags, ids, &n, err) == 0) {
        if (n < 0 || (size_t)n > len + 3) abort();
        for (int i = 0; i < n; i++) {
            if (ids[i] < 0 || ids[i] >= tok_vocab_size(t)) abort();
            size_t k;
            const char *piece = tok_text(t, i ? ids[i - 1] : -1, ids[i], &k);
            if (!piece || piece[k] != 0) abort();
            fuzz_vocab_sink += (unsigned)k;
        }
    }
    free(ids);
}

int fuzz_vocab_one(const uint8_t *data, size_t size) {
    if (size < 3) return 0;
    const char *pre = fuzz_vocab_pres[data[0] % FUZZ_N_PRES];
    int flags = data[1], bos = data[2];
    const uint8_t *p = data + 3, *end = data + size;
    const uint8_t *split = NULL;
    for (const uint8_t *q = p; q + 1 < end && !split; q++)
        if (q[0] == 0 && q[1] == 0) split = q;
    const uint8_t *vend = split ? split : end;
    char *text = malloc(split ? (size_t)(end - split - 2) + 1 : 1);
    if (!text) return 0;
    size_t tlen = split ? (size_t)(end - split - 2) : 0;
    if (tlen) memcpy(text, split + 2, tlen);
    text[tlen] = 0;

    /* Lines of the vocabulary part (each a NUL-terminated copy). */
    size_t max_lines = 257 + (size_t)(vend - p) + 1;
    char **tokens = calloc(max_lines, sizeof *tokens), **merges = calloc(max_lines, sizeof *merges);
    int32_t *types = calloc(max_lines, sizeof *types);
    char *copy = malloc((size_t)(vend - p) + 1);
    static char stand_ins[256][4];
    uint64_t nt = 0, nm = 0;
    if (!tokens || !merges || !types || !copy) goto done;
    if (flags & 1) {
        for (int b = 0; b < 256; b++) {
            int keep = (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae);
            int n = 0;
            for (int c = 0; c < b; c++)
                n += !((c >= 0x21 && c <= 0x7e) || (c >= 0xa1 && c <= 0xac) || (c >= 0xae));
            unsigned cp = keep ? (unsigned)b : 256u + (unsigned)n;
            if (cp < 0x80)
                stand_ins[b][0] = (char)cp, stand_ins[b][1] = 0;
            else
                stand_ins[b][0] = (char)(0xc0 | cp >> 6),
                stand_ins[b][1] = (char)(0x80 | (cp & 63)), stand_ins[b][2] = 0;
            tokens[nt] = stand_ins[b];
            types[nt++] = 1;
        }
    }
    memcpy(copy, p, (size_t)(vend - p));
    copy[vend - p] = 0;
    for (char *line = copy, *next; line; line = next) {
        next = strchr(line, '\n');
        if (next) *next++ = 0;
        if (line[0] == 'm') {
            merges[nm++] = line + 1;
        } else if (line[0] >= '0' && line[0] <= '9') {
            types[nt] = line[0] - '0';
            tokens[nt++] = line + 1;
        } else {
            types[nt] = 1;
            tokens[nt++] = line;
        }
    }
    char err[ERR_LEN];
    gguf_writer *w = gguf_writer_new(0);
    if (!w) goto done;
    gguf_writer_add_str(w, "tokenizer.ggml.model", "gpt2");
    if (pre[0]) gguf_writer_add_str(w, "tokenizer.ggml.pre", pre);
    gguf_writer_add_array(w, "tokenizer.ggml.tokens", GGUF_STRING, tokens, NULL, nt);
    if (!(flags & 8))
        gguf_writer_add_array(w, "tokenizer.ggml.token_type", GGUF_I32, types, NULL, nt);
    gguf_writer_add_array(w, "tokenizer.ggml.merges", GGUF_STRING, merges, NULL, nm);
    if (flags & 2) gguf_writer_add_bool(w, "tokenizer.ggml.add_bos_token", 1);
    if (flags & 4) gguf_writer_add_u32(w, "tokenizer.ggml.bos_token_id", (uint32_t)bos);
    if (flags & 32) gguf_writer_add_str(w, "tokenizer.chat_template", text);
    if (flags & 64) gguf_writer_add_bool(w, "tokenizer.ggml.add_eos_token", 1);
    int written = gguf_writer_write(w, fuzz_vocab_path(), err) == 0;
    gguf_writer_free(w);
    tok *t;
    if (written && tok_load(&t, fuzz_vocab_path(), err) == 0) {
        int enc = (flags & 2 ? TOK_ADD_BOS : 0) | (flags & 16 ? TOK_PARSE_SPECIAL : 0);
        fuzz_vocab_check(t, text, enc);
        if (tok_compatible(t, t, fuzz_vocab_path(), err)) abort();
        fuzz_vocab_copy(t, text, enc, flags & 128 ? 128 : 1);
        for (int id = 0; id < tok_vocab_size(t); id++) {
            size_t k;
            if (!tok_text(t, -1, id, &k)) abort();
            fuzz_vocab_sink += (unsigned)k;
            const char *s = tok_piece(t, id);
            if (!s) abort();
        }
        tok_free(t);
    }
    if (written) unlink(fuzz_vocab_path());
done:
    free(tokens);
    free(merges);
    free(types);
    free(copy);
    free(text);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return fuzz_vocab_one(data, size);
}
