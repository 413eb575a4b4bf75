/* decoder.h: the one interface every decoding algorithm implements.
 *
 * A decoder is created from a spec string "name:key=value,key=value" (e.g. "greedy",
 * "lookahead:W=15,N=5,G=15", "spec:gamma=4"), generates for a prompt up to max_new tokens,
 * and fills one statistics record. Every decoder must emit exactly the tokens greedy decoding
 * emits for the same model, prompt and max_new: generation stops after max_new tokens or
 * right after the model's end token (which is emitted, and nothing after it).
 *
 * The statistics a decoder fills (dec_stats, dec_step) and their definitions are in
 * stats/stats.h: one list, shared with results/ which stores them. */
#ifndef DECODERS_DECODER_H
#define DECODERS_DECODER_H

#include <signal.h>
#include <stddef.h>

#include "model/forward.h"
#include "stats/stats.h"

typedef struct {
    const model *target;
    const model *draft; /* NULL when none was given */
    tpool *pool;        /* may be NULL */
    kern_mode kernels;
    /* Optional callbacks (may be NULL): new output tokens as they are accepted, and one call
     * per target step. */
    void (*on_tokens)(void *user, const int *tokens, int n);
    void (*on_step)(void *user, const dec_step *s);
    void *user;
    /* Optional: once *cancel is non-zero (a signal handler may set it), the next forward pass
     * is not run and dec_generate returns DEC_CANCELLED. A long sample (a 7B model, 1024
     * tokens) then stops within one pass instead of running to its end. */
    const volatile sig_atomic_t *cancel;
    /* Optional (may be NULL): one call per forward pass of either model, prompt chunks
     * included (the pass trace: stats/stats.h, dec_pass). */
    void (*on_pass)(void *user, const dec_pass *p);
    /* Non-zero: NaN or infinite logits are decoded like any others (argmax of garbage) instead
     * of failing the generate call naming the position (forward.h, fwd_allow_nonfinite). */
    int allow_nonfinite;
} dec_env;

/* dec_generate's return value when env.cancel stopped it: the output is partial, discard it. */
#define DEC_CANCELLED 1

typedef struct dec dec;

/* Creates a decoder from spec. Errors name the unknown decoder or parameter and list the
 * valid ones, or the value out of range with its allowed range. */
int dec_create(dec **out, const char *spec, const dec_env *env, char *err);
void dec_free(dec *d);

/* Generates up to max_new tokens after prompt[0..n_prompt) (which should start with BOS).
 * out must have room for max_new tokens; *n_out receives the count. stats is zeroed and filled.
 * Returns 0, -1 on error (message in err) or DEC_CANCELLED (see dec_env.cancel).
 * The context length bounds n_prompt + max_new: tokens beyond it are not generated. */
int dec_generate(dec *d, const int *prompt, int n_prompt, int max_new, int *out, int *n_out,
                 dec_stats *stats, char *err);

/* The decoder's name ("lookahead") and its full canonical spec with every parameter
 * ("lookahead:W=15,N=5,G=15,..."), owned by d. */
const char *dec_name(const dec *d);
const char *dec_spec(const dec *d);

/* Lists the decoders and their parameters (for --help and error messages). */
const char *dec_help(void);

/* The registry, for listings (`decbench counters`): the number of decoders, and decoder i's
 * name and own counters (*n = 0 and NULL when it has none). */
int dec_registry_size(void);
const char *dec_registry_name(int i);
const stat_def *dec_registry_counters(int i, int *n);
/* Decoder i's canonical spec with every parameter at its default, into buf: what reports
 * shorten labels against ("lookahead:W=5" = the parameters that differ from these). */
int dec_registry_default_spec(int i, char *buf, size_t n);

/* ---- state kept across generate calls (warm starts across runs) ---------------------------
 * Decoders that keep state (Ouroboros' phrase pool) can write it to a file and start from
 * one. dec_state_name() is NULL for a decoder without state ("pool" for Ouroboros); the
 * other functions then fail with a message saying so. */
const char *dec_state_name(const dec *d);
/* Fails (message: "<spec>: <reason>") when this instance's parameters make saved state
 * meaningless (Ouroboros warm=0 empties its pool before every prompt). */
int dec_state_check(const dec *d, char *err);
/* Writes the state to path, atomically (path.tmp, then a rename); *what gets a short
 * description of what was written ("312 phrases"), or "". */
int dec_state_save(const dec *d, const char *path, char *what, size_t n_what, char *err);
/* Replaces the state by the file's; on error the state is unchanged. */
int dec_state_load(dec *d, const char *path, char *err);

#endif
