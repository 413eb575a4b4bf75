/* session.h: what every model-running subcommand sets up: thread pool, target (and draft)
 * model, tokenizer, kernels mode. */
#ifndef HARNESS_SESSION_H
#define HARNESS_SESSION_H

#include "decoders/decoder.h"
#include "model/tokenizer/tokenizer.h"

typedef struct {
    model *target, *draft;
    tok *tokenizer;
    tpool *pool;
    kern_mode kernels;
    kv_type kv; /* how the KV caches store keys and values (session_set_kv) */
    int threads;
    /* The files opened (session_find_model's answer for what was named). */
    char model_path[4096], draft_path[4096], tokenizer_path[4096];
    char draft_note[512]; /* --draft self:TYPE: what was built (for the user), else "" */
    int allow_nonfinite; /* --allow-nonfinite: passed to the decoders (dec_env) */
    /* The most bytes of text one token of the vocabulary can stand for (session_text_fits). */
    size_t token_bytes;
    dec_sampling sampling; /* zero (greedy) after session_open; set by the command */
    uint64_t vocab_fingerprint; /* tok_fingerprint of the tokenizer (dec_env) */
} session;

/* Where a model (or tokenizer) named on the command line is: the path as given when it
 * exists; else, for a bare file name (no '/'), that file in the models folder
 * ($DECBENCH_MODELS, else <shared>/models) when it is there, so `--model stories260K.bin`
 * works from any folder; else the name unchanged (the loader then says it is missing).
 * Returns out. */
const char *session_find_model(const char *name, char *out, size_t n);

/* The --kernels option's text, shared by run, sweep, generate, cost and paper. */
#define KERNELS_METAVAR "auto|exact|exact-int8|exact-int8b|blas"
#define KERNELS_HELP                                                                               \
    "auto (default: exact-int8b for a quantized model or draft, else exact), exact "               \
    "(batch-invariant, float products), exact-int8 (batch-invariant, int8 products for "           \
    "every block type but q2_k), exact-int8b (batch-invariant, int8 products summed per block, "   \
    "16-row tiles) or blas (OpenBLAS sgemm, not invariant: mismatches likely)"

/* The --kernels value (NULL: "auto") as a kernel mode, or an error naming the accepted ones: the
 * one place the option is parsed. */
int session_kernels(const char *name, kern_mode *out, char *err);

/* The --kv-type option's text (model/model.h's kv_types[]), shared by run, sweep, tune, paper,
 * generate and cost. */
#define KV_TYPE_HELP                                                                               \
    "how the KV cache stores keys and values: f32 (default: the bits the pass computed) or f16 "   \
    "(IEEE half, rounded to nearest even, as llama.cpp's default cache: half the memory and "      \
    "traffic, other logits; batch-invariant too)"

/* The --kv-type value (NULL: "f32") as a KV cache type, or an error naming the accepted ones:
 * the one place the option is parsed. */
int session_kv_type(const char *name, kv_type *out, char *err);

/* Makes the target's and the draft's forward contexts store keys and values as name (NULL:
 * f32): --kv-type. */
int session_set_kv(session *s, const char *name, char *err);

/* Opens model (required), draft (may be NULL), tokenizer (NULL: the GGUF model's own
 * vocabulary, else tok<vocab>.bin in the models folder), each found by session_find_model,
 * kernels (a KERNELS_METAVAR name, NULL: "auto", resolved here over target and draft:
 * kern_mode_resolve),
 * threads (0: one per core). Refuses a tokenizer whose vocabulary size differs from the
 * model's, and a draft whose vocabulary differs from the target's. A draft "self:TYPE"
 * (self:q8_0, self:q4_0, self:Q4_K_M, ...: what `decbench convert --type` writes) is no file
 * but the target requantized in memory (model/convert/requant.h; a draft FILE named so is given as
 * ./self:...). */
int session_open(session *s, const char *model_path, const char *draft_path,
                 const char *tokenizer_path, const char *kernels, int threads, char *err);
void session_close(session *s);

/* Prints what tok_load read leniently (tok_warnings), one "decbench: warning: " line each, on
 * stderr. session_open does it for the tokenizers it loads. */
void session_print_warnings(const tok *t);

/* The TYPE of a draft given as "self:TYPE", else NULL. */
const char *session_self_type(const char *draft_path);

/* Sets the context of the target to n tokens (1..its trained context), and the draft's to n or
 * its own trained context if shorter: --ctx. n = 0 keeps MODEL_DEFAULT_CTX (model.h). */
int session_set_ctx(session *s, int n, char *err);

/* The default thread count: the CPUs of this process's affinity mask (taskset, numactl). */
int session_cores(void);

/* Encodes text with BOS (when the vocabulary wants it) into a malloc'd array. */
int session_encode(const session *s, const char *text, int **ids, int *n, char *err);
/* The same with TOK_* flags added (TOK_PARSE_SPECIAL for a chat format's control tokens). */
int session_encode_flags(const session *s, const char *text, int flags, int **ids, int *n,
                         char *err);

/* Whether text may encode to fewer than max_tokens tokens: 0 when it certainly cannot, for
 * being longer than max_tokens x token_bytes bytes and than SESSION_ENCODE_ALWAYS (a text up
 * to 1 MB is encoded all the same, in half a second at most, so that the message refusing it
 * gives its exact length in tokens). Every token stands for at most token_bytes
 * bytes of the text (the longest piece of the vocabulary, as stored or decoded; at least 4,
 * a character the vocabulary lacks being one unknown token): the encoders lose no byte, and
 * each byte a piece stands for takes at least one byte of the piece (SentencePiece's space is
 * the 3 bytes of U+2581; byte-level BPE's stand-ins are 1 or 2 bytes; a byte-fallback token
 * <0xXX> is 6; a control token written in the text is its own text). So a prompt far beyond
 * the context is refused without encoding it: a 100 MB line took 51 s and 2.9 GB to encode
 * before the "prompt too long" message. */
#define SESSION_ENCODE_ALWAYS ((size_t)1 << 20)
int session_text_fits(const session *s, const char *text, long max_tokens, size_t *len);

/* The dec_env of the opened models: target, draft, thread pool, kernels, sampling and the
 * vocabulary's fingerprint. */
dec_env session_env(const session *s);

#endif
