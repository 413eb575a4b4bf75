/* tokenizer.h: vocabularies and their encoders, one per vocabulary type.
 *
 * Sources: llama2.c tokenizer files (int32 max_token_length, then per token float32 score,
 * int32 length, bytes; '▁' stored as ' ') and the vocabulary inside GGUF files
 * (tokenizer.ggml.* keys, readable from a vocabulary-only GGUF of any architecture).
 * tokenizer.ggml.model picks the vocabulary type from one table (tokenizer.c), as llama.cpp's
 * llama_vocab_type does:
 *   "llama"  SentencePiece BPE (tok_spm.c): a dummy-prefix space, then repeatedly merge the
 *            adjacent pair whose merged piece has the highest score (leftmost on ties), with
 *            byte fallback <0xXX> for characters not in the vocabulary.
 *   "gpt2"   byte-level BPE (tok_bpe.c): the text is split into words by the pre-tokenizer
 *            named by tokenizer.ggml.pre (tok_pre.c: Llama-3, Qwen2, DeepSeek, GPT-2, ...),
 *            each word's bytes become GPT-2's printable stand-ins and are merged by rank
 *            (tokenizer.ggml.merges, lowest rank first).
 * Both encode as llama.cpp's llama_tokenize does (its reference vectors are the tests).
 * Any byte string is accepted: it never crashes (invalid UTF-8 goes through byte fallback in
 * SentencePiece, and becomes U+FFFD in byte-level BPE, as in llama.cpp).
 *
 * Leniency: a vocabulary llama.cpp loads and can tokenize with loads here too. Where it is
 * odd but usable (a special-token id that is no token, such as llama.cpp's converters' "no
 * token" 4294967295; merges that name no token; token types outside 0..6; ...), it is read as
 * llama.cpp reads it and the load leaves a warning (tok_warnings) for the command line to print.
 * Pieces have no length limit: memory is bounded by the file's size. model/GGUF.md lists each
 * check and whether it refuses or warns. */
#ifndef MODEL_TOKENIZER_H
#define MODEL_TOKENIZER_H

#include <stddef.h>
#include <stdint.h>

/* A buffer size for tok_decode that holds the pieces of common vocabularies (Llama, Qwen,
 * GPT-2). Pieces can be longer (GPT-NeoX and MPT have one of 512 spaces): tok_text has no
 * limit. */
#define TOK_PIECE_MAX 512

typedef struct tok tok;
typedef struct gguf gguf;

/* Loads a llama2.c tokenizer file or the vocabulary of a GGUF file (detected by content).
 * Only tokenizer.* keys are read (and <arch>.vocab_size, to warn when it differs from the
 * token count), so a GGUF of any architecture (or none) works. */
int tok_load(tok **out, const char *path, char *err);
void tok_free(tok *t);
/* What the load read leniently, one line per kind of oddity, each naming the file and the key
 * ("" when nothing): the caller (the command line) prints each line as a warning. Owned by t. */
const char *tok_warnings(const tok *t);

int tok_vocab_size(const tok *t);
/* Special ids, -1 when the vocabulary has none. EOT is tokenizer.ggml.eot_token_id, else the
 * end-of-turn token found by its text as llama.cpp finds it ("<|eot_id|>", "<|im_end|>", ...);
 * pad is tokenizer.ggml.padding_token_id. */
int tok_bos(const tok *t);
int tok_eos(const tok *t);
int tok_eot(const tok *t);
int tok_pad(const tok *t);
/* 1 if prompts should start with BOS (GGUF's tokenizer.ggml.add_bos_token, else the
 * vocabulary type's default as in llama.cpp; 1 for llama2.c files). */
int tok_add_bos(const tok *t);
/* tokenizer.ggml.add_eos_token: 1 if inputs end with EOS (0 for every vocabulary decbench's
 * datasets use; compared for drafts). */
int tok_add_eos(const tok *t);
/* The vocabulary type ("llama" or "gpt2", the tokenizer.ggml.model value) and the
 * pre-tokenizer ("" for SentencePiece): drafts must share both with their target. */
const char *tok_model_name(const tok *t);
const char *tok_pre_name(const tok *t);
/* tokenizer.chat_template of a GGUF file, or NULL. */
const char *tok_chat_template(const tok *t);
/* The same read from the file at path without loading the vocabulary (cheap: only the GGUF
 * header): *out is a malloc'd copy, or NULL when the file has none or is not GGUF. */
int tok_file_chat_template(const char *path, char **out, char *err);

/* Whether draft can draft for target, as llama.cpp's speculative decoding checks it: the same
 * vocabulary type, the same BOS and EOS ids and add-BOS/EOS flags, sizes within 128 tokens
 * (Qwen2.5-0.5B's 151936 against Qwen2.5-7B's 152064: padding) and identical token texts over
 * the ids both have (from id 5, as llama.cpp). One line naming the draft and the first
 * difference otherwise. */
int tok_compatible(const tok *target, const tok *draft, const char *draft_path, char *err);

/* Encoding flags. */
enum {
    TOK_ADD_BOS = 1,       /* prepend BOS */
    TOK_PARSE_SPECIAL = 2, /* control tokens written in the text ("<|im_start|>") are those
                            * tokens, not text (chat templates need it); user-defined tokens
                            * always are, as in llama.cpp */
};

/* Encodes text (NUL-terminated, any bytes) with TOK_* flags. ids must have room for
 * strlen(text) + 3 entries (an encoding that would need more fails with a message: only a
 * malformed vocabulary gets there). Writes the count to *n. Safe to call from several
 * threads at once on one tok. */
int tok_encode_flags(const tok *t, const char *text, int flags, int *ids, int *n, char *err);
/* The same with TOK_ADD_BOS if add_bos, control tokens as text. */
int tok_encode(const tok *t, const char *text, int add_bos, int *ids, int *n, char *err);

/* The text token `id` stands for when it follows `prev` (-1 if none). SentencePiece: '▁'
 * becomes ' ', the leading space is dropped right after BOS, <0xXX> becomes that byte.
 * Byte-level BPE: GPT-2's stand-ins become their bytes (a token may end inside a UTF-8
 * character: concatenate the pieces), user-defined tokens are their text. Control tokens
 * (BOS, EOS, ...) become "". Points into t (valid until tok_free; NUL-terminated, but pieces
 * may contain NUL bytes, so use *len), or NULL for an id out of range. Any length. */
const char *tok_text(const tok *t, int prev, int id, size_t *len);
/* The same copied into buf (n bytes, NUL-terminated); returns the byte length, or -1 if the id
 * is out of range or the piece does not fit (n <= its length). */
int tok_decode(const tok *t, int prev, int id, char *buf, size_t n);

/* The stored piece of id, as in the vocabulary file, or NULL if out of range. */
const char *tok_piece(const tok *t, int id);

/* The BOS and EOS ids of the GGUF vocabulary in g (of n tokens) as llama.cpp reads them: the
 * keys tokenizer.ggml.bos_token_id / eos_token_id, else the vocabulary type's default ids
 * (SentencePiece 1 / 2, byte-level BPE 11 / 11); a key naming no token (>= n) counts as
 * absent (tok_load warns about it). *bos / *eos are left unchanged when the file has no
 * vocabulary type of this table and no key, and set to -1 when the default is no token. */
int tok_gguf_bos_eos(const gguf *g, int n, int *bos, int *eos, char *err);

/* A fingerprint of the vocabulary (never 0): FNV-1a over its type, size, BOS and EOS ids and
 * every token's stored piece in id order. Files of token ids made with one vocabulary (REST's
 * datastores, util/token_store.h) record it, so that a model with another vocabulary of the
 * same size refuses them. */
uint64_t tok_fingerprint(const tok *t);

#endif
