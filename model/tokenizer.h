/* tokenizer.h: SentencePiece-style BPE vocabularies (Llama's).
 *
 * Sources: llama2.c tokenizer files (int32 max_token_length, then per token float32 score,
 * int32 length, bytes; '▁' stored as ' ') and the vocabulary inside GGUF files
 * (tokenizer.ggml.* keys). Encoding follows SentencePiece BPE: a dummy-prefix space, then
 * repeatedly merge the adjacent pair whose merged piece has the highest score (leftmost on
 * ties), with byte fallback <0xXX> for characters not in the vocabulary. Any byte string is
 * accepted: invalid UTF-8 goes through byte fallback, it never crashes. */
#ifndef MODEL_TOKENIZER_H
#define MODEL_TOKENIZER_H

#include <stddef.h>

#define TOK_PIECE_MAX 128 /* room for any decoded piece, with its NUL */

typedef struct tok tok;

/* Loads a llama2.c tokenizer file or the vocabulary of a GGUF file (detected by content). */
int tok_load(tok **out, const char *path, char *err);
void tok_free(tok *t);

int tok_vocab_size(const tok *t);
int tok_bos(const tok *t);
int tok_eos(const tok *t);
/* 1 if prompts should start with BOS (GGUF's tokenizer.ggml.add_bos_token; 1 for llama2.c). */
int tok_add_bos(const tok *t);

/* Encodes text (NUL-terminated, any bytes). add_bos prepends BOS. ids must have room for
 * strlen(text) + 3 entries. Writes the count to *n. */
int tok_encode(const tok *t, const char *text, int add_bos, int *ids, int *n, char *err);

/* The text token `id` stands for when it follows `prev` (-1 if none): '▁' becomes ' ', the
 * leading space is dropped right after BOS, <0xXX> becomes that byte, control tokens (BOS,
 * EOS) become "". Writes NUL-terminated text to buf (size >= TOK_PIECE_MAX), returns the
 * byte length (byte tokens may write a NUL byte, so use the length). Ids out of range give
 * -1. */
int tok_decode(const tok *t, int prev, int id, char *buf, size_t n);

/* The stored piece of id, as in the vocabulary file, or NULL if out of range. */
const char *tok_piece(const tok *t, int id);

#endif
