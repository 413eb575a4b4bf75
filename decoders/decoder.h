/* decoder.h: the one interface every decoding algorithm implements.
 *
 * A decoder is created from a spec string "name:key=value,key=value" (e.g. "greedy",
 * "lookahead:W=15,N=5,G=15", "spec:gamma=4"), generates for a prompt up to max_new tokens,
 * and fills one statistics record. Every decoder must emit exactly the tokens greedy decoding
 * emits for the same model, prompt and max_new: generation stops after max_new tokens or
 * right after the model's end token (which is emitted, and nothing after it). With sampling
 * (dec_env.sampling, temperature > 0) the same holds for plain sampling's tokens in coupled
 * mode, and for their distribution in standard mode.
 *
 * The statistics a decoder fills (dec_stats, dec_step) and their definitions are in
 * stats/stats.h: one list, shared with results/ which stores them. */
#ifndef DECODERS_DECODER_H
#define DECODERS_DECODER_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "model/forward.h"
#include "stats/stats.h"

/* How tokens are chosen (decoders/sampling.h has the details and the noise function).
 * temperature 0 (the zero value of this struct) is greedy decoding: argmax, ties to the lowest
 * id, whatever the other fields say; every decoder then emits greedy's tokens. At T > 0 the
 * target's distribution is softmax(logits / T) restricted to the top_k most likely tokens
 * (0: all), then to the smallest most-likely set of probability >= top_p (1: all), and:
 *  - DEC_SAMPLING_STANDARD: plain decoding draws from it; speculative decoders keep that
 *    distribution with the rejection rule (Leviathan et al., Chen et al.; several candidates:
 *    SpecInfer, as LADE does). Each decoder's output is distributed as plain sampling's, not
 *    equal to it;
 *  - DEC_SAMPLING_COUPLED: the token at position p is argmax(logits / T + g(seed, p, token))
 *    over that set (Gumbel-max with noise that depends on the seed and the position only), so
 *    plain sampling is a deterministic function of the prefix and every decoder emits exactly
 *    its tokens for the same seed. */
typedef enum { DEC_SAMPLING_STANDARD = 0, DEC_SAMPLING_COUPLED = 1 } dec_sampling_mode;

typedef struct {
    double temperature; /* 0: greedy */
    int top_k;          /* 0: no top-k cut */
    double top_p;       /* 0 or >= 1: no top-p cut */
    unsigned long long seed;
    dec_sampling_mode mode;
    /* Tests only: a deliberately biased verifier, to prove the statistical checks catch one.
     * 1: a rejected draft is replaced by a draw from the target's distribution instead of the
     * residual max(0, p - q) (a classic bug; tests/test_sampling.c); 2: every proposal is
     * accepted (`run`'s acceptance check, tests/cli_sampling.sh). 0 otherwise. */
    int test_flaw;
} dec_sampling;

/* Whether s samples (temperature > 0) and, if so, in which mode; "greedy", "standard" or
 * "coupled" for messages and the database. */
int dec_sampling_on(const dec_sampling *s);
const char *dec_sampling_name(const dec_sampling *s);
/* "standard" / "coupled" -> mode; -1 if neither. */
int dec_sampling_parse_mode(const char *name, dec_sampling_mode *out);
/* Checks the ranges (temperature 0..100, top_k >= 0, top_p 0..1); message names the field. */
int dec_sampling_check(const dec_sampling *s, char *err);

/* How close plain decoding's choice at pos was, for mismatch reports: the largest score minus
 * the second (greedy: logits; coupled: logit / T + g(seed, pos, token) over the kept set);
 * NAN in standard mode (a draw has no margin) or on failure. */
double dec_sampling_margin(const dec_sampling *s, const float *logits, int vocab, int pos);

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
    /* Temperature, top-k, top-p, seed and mode; zero: greedy (see dec_sampling). */
    dec_sampling sampling;
    /* The target's vocabulary (tok_fingerprint), for files of token ids built with one (REST's
     * datastore); 0: unknown, such files are then checked by the vocabulary's size only. */
    uint64_t vocab_fingerprint;
    /* Optional (may be NULL): every forward context the decoder makes is attached to this
     * rendezvous as sequence slot rdv_slot (model/rendezvous.h), whose thread then calls
     * dec_generate between fwd_rdv_enter and fwd_rdv_leave: `run --batch`. */
    struct fwd_rdv *rdv;
    int rdv_slot;
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

/* Sets the sampling seed of the next dec_generate calls (nothing else changes; no effect at
 * temperature 0). Each call starts from the seed, so a decoder is a deterministic function of
 * (prompt, seed): repeats and reruns give the same output. */
void dec_set_seed(dec *d, unsigned long long seed);

/* The decoder's name ("lookahead") and its full canonical spec with every parameter
 * ("lookahead:W=15,N=5,G=15,..."), owned by d. */
const char *dec_name(const dec *d);
const char *dec_spec(const dec *d);

/* What a spec means, without creating the decoder (no model, no memory): parsing only. */
typedef struct {
    const char *name;       /* "lookahead" */
    char spec[512];         /* the canonical spec: what dec_spec() of a decoder made from it says */
    int needs_draft;        /* 1: dec_create needs a draft model */
    const char *state_name; /* what it keeps across prompts ("pool"), or NULL: nothing */
    int keeps_state;        /* state_name set and these parameters use it (not warm=0) */
} dec_info;

/* Fills *out for spec; fails as dec_create does on an unknown decoder or a bad parameter. */
int dec_describe(const char *spec, dec_info *out, char *err);

/* Lists the decoders and their parameters (for --help and error messages). */
const char *dec_help(void);

/* The registry, for listings (`decbench counters`): the number of decoders, and decoder i's
 * name and own counters (*n = 0 and NULL when it has none). */
int dec_registry_size(void);
const char *dec_registry_name(int i);
const stat_def *dec_registry_counters(int i, int *n);
/* What decoder i keeps across prompts ("pool"), or NULL. */
const char *dec_registry_state_name(int i);
/* Decoder i's coarse grid for `decbench tune` (sweep --grid syntax, without the name), or NULL:
 * its defaults only. */
const char *dec_registry_tune_grid(int i);
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
