/* token_store.h: a datastore of token sequences indexed by a suffix array, the retrieval
 * store of REST (He et al. 2023, arXiv 2311.08252; decoders/rest.c): `decbench datastore
 * build` writes one, the rest decoder reads it and looks up the suffixes of its context.
 *
 * The corpus is one array of tokens (each tokenized document after the other, with the BOS
 * its tokenizer prepends, as REST's DraftRetriever Writer concatenates its entries) and its
 * suffix array: sa[i] is the start of the i-th smallest suffix, suffixes compared token by
 * token as unsigned integers, a suffix that is a prefix of another being the smaller. Built
 * by prefix doubling with radix sort (Manber and Myers 1993; O(n log n) time, 4 n ints of
 * scratch besides the output), which the tests check against sorting with a comparator.
 *
 * The file (all integers little-endian), framed as the decoders' state files
 * (decoders/state_file.h): the magic "DBTOKSTR" (8 bytes), u32 version 1 at byte 8, u32 the
 * vocabulary's size at byte 12, u64 the vocabulary's fingerprint at byte 16 (tok_fingerprint:
 * a store built with another vocabulary of the same size is refused; 0 = unknown, not
 * checked), u32 the token count n at byte 24, u32 the documents at byte 28, then n u32 tokens,
 * n u32 suffix array entries, and the FNV-1a hash of every byte before it (8 bytes). Reading
 * checks all of it (size, each token within the vocabulary, the suffix array a permutation
 * whose first tokens do not decrease, the checksum) and names the file, the byte and the field
 * of the first fault. The full order of the suffixes is not re-checked (that costs up to n^2
 * comparisons on repetitive text): a crafted file with a valid checksum and a misordered array
 * makes lookups miss, never read out of bounds, and a decoder's output stays exact since every
 * draft is verified. */
#ifndef UTIL_TOKEN_STORE_H
#define UTIL_TOKEN_STORE_H

#include <stddef.h>
#include <stdint.h>

#define TSTORE_MAGIC "DBTOKSTR"
#define TSTORE_HEADER 32
/* Tokens a store may hold: the suffix array's entries and the lookups are 32-bit ints. */
#define TSTORE_MAX_TOKENS 0x7ffffff0

typedef struct {
    uint32_t *tok; /* n tokens */
    uint32_t *sa;  /* n suffix starts, in suffix order */
    int n, vocab, docs;
    uint64_t fingerprint;
} tstore;

/* The suffix array of s[0..n) (tokens < vocab) into sa[0..n). 0, or -1 when out of memory. */
int tstore_sa_build(const uint32_t *s, int n, int vocab, uint32_t *sa, char *err);

/* Builds the suffix array of tok[0..n) and writes the store to path through path.tmp and a
 * rename (util/file.h). Every token must be < vocab. */
int tstore_write(const char *path, const uint32_t *tok, int n, int docs, int vocab,
                 uint64_t fingerprint, char *err);

/* Reads and checks the store at path for a model of `vocab` tokens whose vocabulary has
 * `fingerprint` (0: unknown, the file's is not compared). *out is NULL on error. */
int tstore_load(tstore **out, const char *path, int vocab, uint64_t fingerprint, char *err);
/* The same on the file's bytes (tests, the fuzz target); path names it in messages. */
int tstore_load_bytes(tstore **out, const unsigned char *buf, size_t size, int vocab,
                      uint64_t fingerprint, const char *path, char *err);
void tstore_free(tstore *s);

/* The suffixes starting with q[0..m) (m >= 1): sa[*lo..*hi). Returns *hi - *lo. */
int tstore_find(const tstore *s, const int *q, int m, int *lo, int *hi);

#endif
