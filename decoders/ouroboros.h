/* ouroboros.h: direct access to the Ouroboros decoder's phrase pool and counters, for tests.
 * The harness does not include it: it reaches the same pool file through the decoder
 * interface's state hooks (dec_state_save/load, `run --state-save/--state-load` and their
 * aliases --pool-save/--pool-load) and stores the same counters through the vtable's counter
 * table (results: counters table).
 *
 * The pool lives as long as the decoder: with warm=1 (the default) it carries over from one
 * dec_generate() call to the next, as Ouroboros' reference code keeps it for a whole
 * benchmark; warm=0 empties it at the start of every call. The file format is described in
 * decoders/ouroboros_pool.h. Every function fails (-1, message in err) on a decoder that is not
 * "ouroboros". */
#ifndef DECODERS_OUROBOROS_H
#define DECODERS_OUROBOROS_H

#include "decoders/decoder.h"

/* Counters of the last dec_generate() call (pool_phrases: the pool's size after it). */
typedef struct {
    long draft_passes;        /* draft forward passes while drafting (catch-up included) */
    long draft_tokens;        /* tokens those passes produced */
    long draft_phrase_tokens; /* of which taken from pool phrases the draft verified */
    long window_phrases;      /* phrases the draft's lookahead window put into the pool */
    long inspired;            /* new phrases from candidate inspiration */
    long refined;             /* suffixes rewritten by candidate refinement */
    long suffix_steps;        /* target steps that accepted at least one suffix token */
    long suffix_tokens;       /* suffix tokens accepted by the target */
    long pool_phrases;
    long stop[4];    /* target steps by why their draft ended: gamma, p_min, end token, room */
    long draft_goal; /* the draft lengths aimed at, summed over target steps */
} ouroboros_counts;

/* Writes the pool to path (it is not modified). */
int ouroboros_pool_save(const dec *d, const char *path, char *err);
/* Replaces the pool by the file's content; on error the pool is unchanged. The file's vocab
 * and phrase length (beta) must equal the decoder's. */
int ouroboros_pool_load(dec *d, const char *path, char *err);
int ouroboros_pool_clear(dec *d, char *err);
int ouroboros_counts_get(const dec *d, ouroboros_counts *out, char *err);

#endif
