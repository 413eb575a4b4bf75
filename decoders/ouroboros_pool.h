/* ouroboros_pool.h: what Ouroboros needs of its phrase candidate pool (Zhao et al., arXiv
 * 2402.13720, §3) beyond the shared n-gram pool (decoders/ngram_pool.h, which holds it: key
 * token -> at most W phrases of exactly beta tokens that FOLLOW the key, LRU, O(1) by key,
 * all memory allocated up front): candidate refinement and the pool as a file.
 *
 * File format (ouro_pool_save / ouro_pool_load), every integer a little-endian uint32 unless
 * said otherwise:
 *   bytes 0..7   magic "DBOUROP1"
 *   version      1
 *   vocab, cap, len, n_keys   (vocab: keys 0..vocab-1; cap: phrases per key at most; len:
 *                tokens per phrase; n_keys: keys holding at least one phrase)
 *   n_keys records, keys strictly increasing: key, count (1..cap), then count x len tokens,
 *                oldest phrase first
 *   uint64       FNV-1a (util/hash.h) of every byte before it
 * and nothing after. A file loads only into a pool of the same vocab and len; a file with a
 * larger cap keeps each key's newest phrases. */
#ifndef DECODERS_OUROBOROS_POOL_H
#define DECODERS_OUROBOROS_POOL_H

#include "decoders/ngram_pool.h"

/* Candidate refinement: `phrase` takes the place of `old` under key as the newest phrase (the
 * reference overwrites the newest slots, which the suffixes came from). If `old` is gone it is
 * just added; if `phrase` is present it is refreshed, not duplicated. */
void ouro_pool_replace(ngram_pool *p, int key, const int *old, const int *phrase);

/* Writes the file format above; vocab is the pool's number of keys. */
int ouro_pool_save(const ngram_pool *p, int vocab, const char *path, char *err);

/* Replaces the pool's content by the file's. The whole file is checked first: on error the
 * pool is unchanged and err names the file, the byte offset and what was expected. */
int ouro_pool_load(ngram_pool *p, int vocab, const char *path, char *err);

#endif
