/* tok_internal.h: what the tokenizer's files share; not for use outside model/tokenizer/.
 *   tokenizer.c  the public API, file detection, the table of vocabulary types, special-token
 *                partitioning (common to all types)
 *   tok_spm.c    SentencePiece BPE vocabularies (GGUF "llama" and llama2.c files)
 *   tok_bpe.c    byte-level BPE vocabularies (GGUF "gpt2")
 *   tok_pre.c    the byte-level BPE pre-tokenizers (tokenizer.ggml.pre), on PCRE2 */
#ifndef MODEL_TOK_INTERNAL_H
#define MODEL_TOK_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "model/formats/gguf.h"
#include "model/tokenizer/tokenizer.h"

/* Token types, with the ids GGUF's tokenizer.ggml.token_type uses (llama.cpp's
 * llama_token_type). */
enum { TT_UNDEFINED = 0, TT_NORMAL, TT_UNKNOWN, TT_CONTROL, TT_USER, TT_UNUSED, TT_BYTE };

/* One row per vocabulary type, as llama.cpp's llama_vocab_type / llm_tokenizer_*. */
typedef struct {
    const char *model; /* the tokenizer.ggml.model value */
    const char *what;  /* for messages */
    /* llama.cpp's special ids for this type when no key names them (-1: none). */
    int def_bos, def_eos, def_unk;
    /* Fills t (n, types, the type's default add_bos, impl) from g's tokenizer.* keys; the
     * special ids are read after it, in tokenizer.c. */
    int (*load_gguf)(tok *t, const gguf *g, char *err);
    /* Completes the load once the special ids are known (may be NULL). */
    int (*finish)(tok *t, const char *path, char *err);
    /* The id of the token whose stored text is s[0..n) (any type), or -1. */
    int (*find)(const tok *t, const char *s, size_t n);
    /* Appends the tokens of text[0..len) (raw text between special tokens) to ids at *n,
     * never past cap. */
    int (*encode)(const tok *t, const char *text, size_t len, int *ids, int *n, size_t cap,
                  char *err);
    /* What id decodes to after prev (tok_text; id already range-checked). */
    const char *(*text)(const tok *t, int prev, int id, size_t *len);
    const char *(*piece)(const tok *t, int id); /* id already range-checked */
    void (*free_impl)(void *impl);
} tok_kind;

extern const tok_kind tok_kind_spm, tok_kind_bpe;

struct tok {
    const tok_kind *kind;
    int n;
    int bos, eos, eot, pad, unk, add_bos; /* ids -1 = none */
    int add_eos;                     /* tokenizer.ggml.add_eos_token (0 when absent) */
    uint8_t *type;                   /* TT_* per id (owned here, filled by the loader) */
    const char *pre;                 /* pre-tokenizer name ("" for SentencePiece) */
    char *chat_template;             /* tokenizer.chat_template, or NULL */
    /* Tokens matched in the raw text before encoding (llama.cpp's tokenizer_st_partition):
     * user-defined always, control and unknown with TOK_PARSE_SPECIAL; longest first. */
    int *special;
    int n_special;
    void *impl; /* the kind's own state */
    char *warn; /* tok_warnings: lines separated by '\n', or NULL */
};

/* Appends one warning line to t (tok_warnings). Out of memory drops the line: a warning is
 * never a reason to fail. */
void tok_warn(tok *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Fills t->type (t->n entries) from tokenizer.ggml.token_type, as llama.cpp reads it: absent
 * means every token normal, a longer array's extra elements and values outside 0..6
 * (undefined) are warned about, a shorter one is refused. */
int tok_read_types(tok *t, const gguf *g, char *err);

/* tok_spm.c: a llama2.c tokenizer file mapped at p. */
int tok_spm_load_llama2c(tok *t, const unsigned char *p, size_t size, const char *path, char *err);

/* ---- tok_pre.c ---------------------------------------------------------------------- */

typedef struct tok_pre tok_pre;
typedef struct {
    uint32_t start, len; /* bytes */
} tok_span;

/* The pre-tokenizer named by a tokenizer.ggml.pre value, compiled. Sets *ignore_merges (a
 * word that is a whole token is taken as is) and, when the row has one, *add_bos (the
 * default before tokenizer.ggml.add_bos_token). Unknown names fail, naming the name. */
int tok_pre_open(tok_pre **out, const char *name, int *ignore_merges, int *add_bos, char *err);
void tok_pre_free(tok_pre *p);
const char *tok_pre_row_name(const tok_pre *p);
/* Per-call state (PCRE2 match data and JIT stack): one per encoding call, so that calls may
 * run in parallel. */
typedef struct tok_pre_scratch tok_pre_scratch;
tok_pre_scratch *tok_pre_scratch_new(const tok_pre *p);
void tok_pre_scratch_free(tok_pre_scratch *s);
/* Splits text[0..len) (valid UTF-8) into words as llama.cpp's unicode_regex_split does: each
 * regex of the row in turn splits every word so far into its matches and the text between
 * them. words and tmp hold cap spans each (cap >= the number of code points + 1); *n gets
 * the count. */
int tok_pre_split(const tok_pre *p, tok_pre_scratch *s, const char *text, size_t len,
                  tok_span *words, tok_span *tmp, size_t cap, size_t *n, char *err);

/* UTF-8 helpers shared by the byte-level files. */
/* Length of the well-formed UTF-8 sequence at s (n bytes left), 0 if none starts there. */
size_t tok_utf8_valid_len(const unsigned char *s, size_t n);

#endif
