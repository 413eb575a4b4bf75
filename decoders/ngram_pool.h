/* ngram_pool.h: a fixed-size pool of n-grams keyed by a token, least recently used out.
 *
 * Lookahead decoding (arXiv 2402.02057, Section 3.2 and Algorithm 1) keeps, for every token
 * k, the n-grams that followed k on the Jacobi trajectory; the candidates verified after k
 * are k's entries. This pool is that cache, written to be reused by other decoders
 * (Ouroboros shares one between its draft and target):
 *   - a key is a token in [0, n_keys); each key holds up to G distinct n-grams of exactly n
 *     tokens (the tokens AFTER the key: the key itself is not stored);
 *   - ngram_pool_add() of an n-gram already present makes it the most recent (LADE's "a hit
 *     moves to the back"); adding to a full key evicts its least recent n-gram;
 *   - lookup is O(1) by key; entries of a key are listed newest first;
 *   - all memory (n_keys x G x n tokens) is allocated by ngram_pool_new: nothing after.
 * Adding costs O(G) (a duplicate check against per-entry hashes, then a shift of at most G
 * entries), independent of the vocabulary and of how many n-grams are stored.
 *
 * Ownership: the pool owns its storage. Pointers returned by ngram_pool_get stay valid until
 * the next add/touch/remove/clear on the same key. Not thread-safe. */
#ifndef DECODERS_NGRAM_POOL_H
#define DECODERS_NGRAM_POOL_H

typedef struct ngram_pool ngram_pool;

/* A pool for keys 0..n_keys-1 (>= 1), up to G (0..65535) n-grams of n (1..256) tokens each.
 * G = 0 gives a pool that never holds anything (adds are no-ops). */
int ngram_pool_new(ngram_pool **out, int n_keys, int G, int n, char *err);
void ngram_pool_free(ngram_pool *p); /* NULL is fine */

/* Empties every key: O(n_keys). */
void ngram_pool_clear(ngram_pool *p);

int ngram_pool_n(const ngram_pool *p);     /* tokens per n-gram */
int ngram_pool_g(const ngram_pool *p);     /* n-grams per key at most */
long ngram_pool_size(const ngram_pool *p); /* n-grams held, all keys */

/* Number of n-grams held for key (0 for a key out of range). */
int ngram_pool_count(const ngram_pool *p, int key);

/* The i-th most recent n-gram of key (i = 0: newest), n tokens; NULL if out of range. */
const int *ngram_pool_get(const ngram_pool *p, int key, int i);

/* Adds ngram[0..n) under key, or refreshes it if present. Returns 1 if it was new, 0 if it
 * was already there (now the newest), -1 if the key is out of range (nothing done). */
int ngram_pool_add(ngram_pool *p, int key, const int *ngram);

/* Makes the i-th most recent n-gram of key the newest (e.g. after it was accepted). */
void ngram_pool_touch(ngram_pool *p, int key, int i);

/* Removes the i-th most recent n-gram of key. */
void ngram_pool_remove(ngram_pool *p, int key, int i);

#endif
