/* tok_pre.c: the pre-tokenizers of byte-level BPE vocabularies, one row per split rule set,
 * chosen by the GGUF key tokenizer.ggml.pre. A pre-tokenizer cuts text into words before BPE
 * merges within each word. The rules are llama.cpp's (llama-vocab.cpp, llm_tokenizer_bpe;
 * most come from each model's Hugging Face tokenizer.json) and are applied as llama.cpp's
 * unicode_regex_split applies them: the regexes of a row run in turn, each splitting every
 * word so far into its matches and the text between them, matching within that word only
 * (so "$" and the look-ahead of \s+(?!\S) stop at the word's end).
 *
 * Regex engine: PCRE2 (Debian libpcre2-8, 10.42) with UTF + UCP for \p{L}, \p{N}, \p{P},
 * \p{S}, \p{M}, and JIT compilation. Measured against ICU 72's uregex, the alternative, on
 * 913 KB of Spec-Bench and HumanEval text (English, code, some CJK) with the Llama-3 rule, one
 * core, best of 5:
 *     PCRE2 JIT                                  117 MB/s
 *     PCRE2 interpreter (no JIT)                  29 MB/s
 *     ICU uregex, UTF-16 (conversion included)    35 MB/s
 *     ICU uregex, UTF-8 UText                     32 MB/s
 * With JIT the split is a small part of encoding (the whole encoder runs at 16-49 MB/s by
 * vocabulary, the merge loop dominating), so ICU would roughly halve Llama-3's throughput.
 * Both engines pass every llama.cpp vector. Neither has llama.cpp's Unicode tables (15.1):
 * PCRE2 10.42 has 14.0 and classes about 5100 code points differently (4970 of them letters
 * added in 15.0/15.1, nearly all CJK extension H and I ideographs), ICU 72 has 15.0 and
 * differs on 627 (CJK extension I); no vector contains one. PCRE2 also matches UTF-8 in place
 * and speaks the Perl syntax the rules are written in.
 *
 * Where llama.cpp does not follow its own regex, we follow llama.cpp:
 *   - \s is llama.cpp's whitespace set (Unicode White_Space), written out as WS below: PCRE2's
 *     \s would add U+180E.
 *   - The regexes without \p{..} run in llama.cpp on code points with every non-ASCII space
 *     replaced by U+000B, so a class such as [\x{800}-\x{4E00}] never matches a space there;
 *     our classes leave those spaces out explicitly (NOSPACE_800_4E00).
 *   - The case-insensitive contractions (?i:'s|'t|...) are written '[sS]|'[tT]|..., ASCII only,
 *     as llama.cpp's rewrite of them (PCRE2's caseless 's' would also match U+017F).
 *   - For the GPT-2 and Llama-3 rules llama.cpp runs hand-written splitters instead of the
 *     regex; they agree with the regex except on unassigned code points, which they cut into
 *     single-code-point words.
 * Invalid UTF-8 never reaches here: tok_bpe.c replaces it first, as llama.cpp does. */
#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stdlib.h>
#include <string.h>

#include "model/tokenizer/tok_internal.h"
#include "util/err.h"

/* llama.cpp's whitespace (\s): White_Space, U+0009-000D, space, U+0085, U+00A0, U+1680,
 * U+2000-200A, U+2028, U+2029, U+202F, U+205F, U+3000. */
#define WS                                                                                         \
    "\\t-\\r "                                                                                     \
    "\\x{85}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}"
#define S "[" WS "]"
#define NS "[^" WS "]"
/* [\x{800}-\x{4E00}] less the spaces in it (see the header comment). */
#define NOSPACE_800_4E00                                                                           \
    "\\x{800}-\\x{167F}\\x{1681}-\\x{1FFF}\\x{200B}-\\x{2027}\\x{202A}-\\x{202E}\\x{2030}-\\x{"    \
    "205E}"                                                                                        \
    "\\x{2060}-\\x{2FFF}\\x{3001}-\\x{4E00}"
/* CJK ideographs U+4E00-9FA5, U+0800-4E00 and Hangul U+AC00-D7FF, as DeepSeek's rules. */
#define DEEPSEEK_CJK "[\\x{4E00}-\\x{9FA5}" NOSPACE_800_4E00 "\\x{AC00}-\\x{D7FF}]+"

/* GPT-2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S) */
#define GPT2 "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^" WS "\\p{L}\\p{N}]+|" S "+(?!" NS ")"
/* Llama-3 (digits 1..3) and Qwen2 (single digits). */
#define LLAMA3_LIKE(digits)                                                                        \
    "'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD]|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|"         \
    "\\p{N}" digits "| ?[^" WS "\\p{L}\\p{N}]+[\\r\\n]*|" S "*[\\r\\n]+|" S "+(?!" NS ")|" S "+"
/* BLOOM, Poro, GPT-3 Finnish, Viking: ?[^(\s|.,!?…。，、।۔،)]+ */
#define PORO " ?[^(" WS "|.,!?\\x{2026}\\x{3002}\\x{FF0C}\\x{3001}\\x{964}\\x{6D4}\\x{60C})]+"

#define MAX_REGEX 6
#define MAX_NAMES 11

typedef struct {
    const char *names[MAX_NAMES]; /* tokenizer.ggml.pre values; the first names the row */
    const char *regex[MAX_REGEX];
    int ignore_merges; /* a word that is a whole token is taken as is (Llama-3, Tekken) */
    int add_bos;       /* default add-BOS flag before tokenizer.ggml.add_bos_token */
} pre_row;

static const pre_row rows[] = {
    {{"default"}, {"[\\p{P}\\$\\+<=>\\^~\\|]+", GPT2, "\\p{N}+", "[0-9][0-9][0-9]"}, 0, 0},
    {{"gpt-2", "phi-2", "jina-es", "jina-de", "gigachat", "jina-v1-en", "jina-v2-es", "jina-v2-de",
      "jina-v2-code", "roberta-bpe"},
     {GPT2},
     0,
     0},
    {{"mpt", "olmo", "jais"}, {GPT2}, 0, 0}, /* GPT-NeoX vocabularies carry "mpt" */
    {{"llama-bpe", "llama3", "llama-v3", "falcon3"}, {LLAMA3_LIKE("{1,3}")}, 1, 1},
    {{"dbrx", "smaug-bpe", "chatglm-bpe"}, {LLAMA3_LIKE("{1,3}")}, 0, 0},
    {{"qwen2", "deepseek-r1-qwen", "megrez", "stablelm2"}, {LLAMA3_LIKE("")}, 0, 0},
    {{"deepseek-llm"},
     {"[\\r\\n]",
      S "?[A-Za-z\\x{B5}\\x{C0}-\\x{D6}\\x{D8}-\\x{F6}\\x{F8}-\\x{1BA}\\x{1BC}-\\x{1BF}"
        "\\x{1C4}-\\x{293}\\x{295}-\\x{2AF}\\x{370}-\\x{373}\\x{376}\\x{377}\\x{37B}-\\x{37D}"
        "\\x{37F}\\x{386}\\x{388}-\\x{38A}\\x{38C}\\x{38E}-\\x{3A1}\\x{3A3}-\\x{3F5}"
        "\\x{3F7}-\\x{481}\\x{48A}-\\x{52F}\\x{531}-\\x{556}\\x{10A0}-\\x{10C5}"
        "\\x{13A0}-\\x{13F5}\\x{13F8}-\\x{13FD}\\x{1C90}-\\x{1CBA}\\x{1CBD}-\\x{1CBF}"
        "\\x{1D00}-\\x{1D2B}\\x{1D6B}-\\x{1D77}\\x{1D79}-\\x{1D9A}\\x{1E00}-\\x{1F15}"
        "\\x{1F18}-\\x{1F1D}\\x{1F20}-\\x{1F45}\\x{1F48}-\\x{1F4D}\\x{1F50}-\\x{1F57}\\x{1F59}"
        "\\x{1F5B}\\x{1F5D}\\x{1F5F}-\\x{1F7D}\\x{1F80}-\\x{1FB4}\\x{1FB6}-\\x{1FBC}\\x{1FBE}"
        "\\x{1FC2}-\\x{1FC4}\\x{1FC6}-\\x{1FCC}\\x{1FD0}-\\x{1FD3}\\x{1FD6}-\\x{1FDB}"
        "\\x{1FE0}-\\x{1FEC}\\x{1FF2}-\\x{1FF4}\\x{1FF6}-\\x{1FFC}\\x{2102}\\x{2107}"
        "\\x{210A}-\\x{2113}\\x{2115}\\x{2119}-\\x{211D}\\x{2124}\\x{2126}\\x{2128}"
        "\\x{212A}-\\x{212D}\\x{212F}-\\x{2134}\\x{2139}\\x{213C}-\\x{213F}\\x{2145}-\\x{2149}"
        "\\x{214E}\\x{2183}\\x{2184}\\x{2C00}-\\x{2C7B}\\x{2C7E}-\\x{2CE4}\\x{2CEB}-\\x{2CEE}"
        "\\x{2CF2}\\x{2CF3}\\x{A640}-\\x{A66D}\\x{A680}-\\x{A69B}\\x{A722}-\\x{A76F}"
        "\\x{A771}-\\x{A787}\\x{A78B}-\\x{A78E}\\x{AB70}-\\x{ABBF}\\x{FB00}-\\x{FB06}"
        "\\x{FB13}-\\x{FB17}\\x{FF21}-\\x{FF3A}\\x{FF41}-\\x{FF5A}\\x{10400}-\\x{1044F}"
        "\\x{104B0}-\\x{104D3}\\x{104D8}-\\x{104FB}\\x{10C80}-\\x{10CB2}\\x{10CC0}-\\x{10CF2}"
        "\\x{118A0}-\\x{118DF}\\x{1E900}-\\x{1E943}]+",
      /* U+3000 is a space (see the header comment): the class starts at U+3001 */
      S "?[!-/:-~\\x{FF01}-\\x{FF0F}\\x{FF1A}-\\x{FF5E}\\x{2018}-\\x{201F}\\x{3001}-\\x{3002}]+",
      S "+$", DEEPSEEK_CJK, "\\p{N}+"},
     0,
     0},
    {{"deepseek-coder"}, {"[\\r\\n]", S "?\\p{L}+", S "?\\p{P}+", DEEPSEEK_CJK, "\\p{N}"}, 0, 0},
    {{"deepseek-v3"},
     {"\\p{N}{1,3}", "[\\x{4E00}-\\x{9FA5}\\x{3040}-\\x{309F}\\x{30A0}-\\x{30FF}]+",
      "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?"
      "[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\\r\\n]*|" S "*[\\r\\n]+|" S "+(?!" NS ")|" S "+"},
     0,
     0},
    {{"falcon"}, {"[\\p{P}\\$\\+<=>\\^~\\|`]+", GPT2, "[0-9][0-9][0-9]"}, 0, 0},
    {{"starcoder", "refact", "command-r", "smollm", "codeshell", "exaone", "minerva-7b"},
     {"\\p{N}", GPT2},
     0,
     0},
    {{"poro-chat", "bloom", "gpt3-finnish"}, {PORO}, 0, 0},
    {{"viking"}, {PORO, "\\p{N}"}, 0, 0},
    /* Mistral's Tekken: "upper case" is any letter but a-z, "lower case" any but A-Z (the rule
     * as llama.cpp rewrote it; non-ASCII letters count as both). */
    {{"tekken"},
     {"[^\\r\\n\\p{L}\\p{N}]?(?:(?=\\p{L})[^a-z])*(?:(?=\\p{L})[^A-Z])+|"
      "[^\\r\\n\\p{L}\\p{N}]?(?:(?=\\p{L})[^a-z])+(?:(?=\\p{L})[^A-Z])*|\\p{N}| ?[^" WS
      "\\p{L}\\p{N}]+[\\r\\n/]*|" S "*[\\r\\n]+|" S "+(?!" NS ")|" S "+"},
     1,
     1},
};

struct tok_pre {
    const pre_row *row;
    pcre2_code *re[MAX_REGEX];
    int n_re;
};

struct tok_pre_scratch {
    pcre2_match_data *md;
    pcre2_match_context *mc;
    pcre2_jit_stack *stack;
};

const char *tok_pre_row_name(const tok_pre *p) {
    return p->row->names[0];
}

void tok_pre_free(tok_pre *p) {
    if (!p) return;
    for (int i = 0; i < p->n_re; i++) pcre2_code_free(p->re[i]);
    free(p);
}

int tok_pre_open(tok_pre **out, const char *name, int *ignore_merges, int *add_bos, char *err) {
    *out = NULL;
    const pre_row *row = NULL;
    for (size_t r = 0; r < sizeof rows / sizeof rows[0] && !row; r++)
        for (int k = 0; k < MAX_NAMES && rows[r].names[k] && !row; k++)
            if (strcmp(rows[r].names[k], name) == 0) row = &rows[r];
    if (!row) return err_set(err, "pre-tokenizer '%.60s' is not supported", name);
    tok_pre *p = calloc(1, sizeof *p);
    if (!p) return err_set(err, "out of memory");
    p->row = row;
    for (int i = 0; i < MAX_REGEX && row->regex[i]; i++) {
        int code;
        PCRE2_SIZE at;
        p->re[i] = pcre2_compile((PCRE2_SPTR)row->regex[i], PCRE2_ZERO_TERMINATED,
                                 PCRE2_UTF | PCRE2_UCP | PCRE2_DOLLAR_ENDONLY, &code, &at, NULL);
        if (!p->re[i]) {
            PCRE2_UCHAR msg[120];
            pcre2_get_error_message(code, msg, sizeof msg);
            tok_pre_free(p);
            return err_set(err, "pre-tokenizer '%s': regex %d does not compile at %zu: %s", name, i,
                           (size_t)at, (const char *)msg);
        }
        p->n_re = i + 1;
        /* Without JIT (another CPU, or a PCRE2 built without it) the interpreter runs the
         * same patterns, about 6x slower. */
        pcre2_jit_compile(p->re[i], PCRE2_JIT_COMPLETE);
    }
    *ignore_merges = row->ignore_merges;
    *add_bos = row->add_bos;
    *out = p;
    return 0;
}

tok_pre_scratch *tok_pre_scratch_new(const tok_pre *p) {
    (void)p;
    tok_pre_scratch *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->md = pcre2_match_data_create(1, NULL);
    s->mc = pcre2_match_context_create(NULL);
    if (!s->md || !s->mc) {
        tok_pre_scratch_free(s);
        return NULL;
    }
    return s;
}

/* JIT matching keeps backtracking state on a stack: PCRE2's default 32 KiB on the machine
 * stack suffices for ordinary text; a match that needs more (a long word under a rule with a
 * repeated group, such as Tekken's) is retried once with a 64 MiB one, made on first need. */
static int grow_stack(tok_pre_scratch *s) {
    if (s->stack) return -1;
    if (!(s->stack = pcre2_jit_stack_create(32 * 1024, 64 * 1024 * 1024, NULL))) return -1;
    pcre2_jit_stack_assign(s->mc, NULL, s->stack);
    return 0;
}

void tok_pre_scratch_free(tok_pre_scratch *s) {
    if (!s) return;
    pcre2_match_data_free(s->md);
    pcre2_match_context_free(s->mc);
    if (s->stack) pcre2_jit_stack_free(s->stack);
    free(s);
}

int tok_pre_split(const tok_pre *p, tok_pre_scratch *s, const char *text, size_t len,
                  tok_span *words, tok_span *tmp, size_t cap, size_t *n, char *err) {
    *n = 0;
    if (len == 0) return 0;
    size_t nw = 1;
    words[0] = (tok_span){0, (uint32_t)len};
    for (int r = 0; r < p->n_re; r++) {
        size_t m = 0;
        for (size_t w = 0; w < nw; w++) {
            PCRE2_SPTR subj = (PCRE2_SPTR)text + words[w].start;
            size_t sl = words[w].len, off = 0, prev = 0;
            while (off < sl) {
                int rc = pcre2_match(p->re[r], subj, sl, off, PCRE2_NO_UTF_CHECK, s->md, s->mc);
                if (rc == PCRE2_ERROR_JIT_STACKLIMIT && grow_stack(s) == 0)
                    rc = pcre2_match(p->re[r], subj, sl, off, PCRE2_NO_UTF_CHECK, s->md, s->mc);
                if (rc == PCRE2_ERROR_NOMATCH) break;
                if (rc < 0) {
                    PCRE2_UCHAR msg[120];
                    pcre2_get_error_message(rc, msg, sizeof msg);
                    return err_set(err, "tok_encode: pre-tokenizer '%s', regex %d: %s",
                                   p->row->names[0], r, (const char *)msg);
                }
                PCRE2_SIZE *ov = pcre2_get_ovector_pointer(s->md);
                size_t ms = ov[0], me = ov[1];
                if (me == ms) { /* no rule matches empty text; step over it if one ever does */
                    off = me + 1;
                    while (off < sl && (subj[off] & 0xc0) == 0x80) off++;
                    continue;
                }
                if (m + 2 > cap) return err_set(err, "tok_encode: pre-tokenizer overflow");
                if (ms > prev)
                    tmp[m++] = (tok_span){words[w].start + (uint32_t)prev, (uint32_t)(ms - prev)};
                tmp[m++] = (tok_span){words[w].start + (uint32_t)ms, (uint32_t)(me - ms)};
                prev = off = me;
            }
            if (prev < sl) {
                if (m + 1 > cap) return err_set(err, "tok_encode: pre-tokenizer overflow");
                tmp[m++] = (tok_span){words[w].start + (uint32_t)prev, (uint32_t)(sl - prev)};
            }
        }
        memcpy(words, tmp, m * sizeof *words);
        nw = m;
    }
    *n = nw;
    return 0;
}
