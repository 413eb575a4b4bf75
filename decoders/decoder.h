/* decoder.h: the one interface every decoding algorithm implements.
 *
 * A decoder is created from a spec string "name:key=value,key=value" (e.g. "greedy",
 * "lookahead:W=15,N=5,G=15", "spec:gamma=4"), generates for a prompt up to max_new tokens,
 * and fills one statistics record. Every decoder must emit exactly the tokens greedy decoding
 * emits for the same model, prompt and max_new: generation stops after max_new tokens or
 * right after the model's end token (which is emitted, and nothing after it).
 *
 * Definitions used by every decoder (and stored by the harness):
 *   target_steps  target forward passes, the prefill pass included (greedy: exactly n_new)
 *   target_rows   rows fed to the target in those passes, prompt rows excluded
 *   draft_steps   draft-model forward passes (prefill included); draft_rows likewise
 *   drafted       tokens proposed to the target for verification (on the accepted... or
 *                 longest path: see each decoder); accepted: those the target confirmed
 *   accept_hist[k] number of verification steps that accepted k drafted tokens (the bonus
 *                 token the target adds itself is not counted), k <= DEC_HIST_MAX
 *   pos_tried[i] / pos_accepted[i]  how often draft position i (0-based) was verified /
 *                 accepted, for acceptance by position
 *   times         seconds: t_target (target forward), t_draft (draft forward), t_book (the
 *                 decoder's own work: t_total minus both), t_prefill (prompt pass), t_total */
#ifndef DECODERS_DECODER_H
#define DECODERS_DECODER_H

#include <signal.h>

#include "model/forward.h"

#define DEC_HIST_MAX 64

typedef struct {
    int prompt_tokens;
    int new_tokens;
    long target_steps, target_rows;
    long draft_steps, draft_rows;
    long drafted, accepted;
    long accept_hist[DEC_HIST_MAX + 1];
    long pos_tried[DEC_HIST_MAX], pos_accepted[DEC_HIST_MAX];
    double t_target, t_draft, t_book, t_prefill, t_total;
} dec_stats;

/* One target step, for the optional per-step trace. */
typedef struct {
    int step;       /* 0 = prefill */
    int rows;       /* rows in this target pass */
    int drafted;    /* tokens offered for verification on the chosen path */
    int accepted;   /* of those, accepted */
    int emitted;    /* tokens appended to the output by this step */
    double seconds; /* wall time of this step, bookkeeping included */
} dec_step;

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

#endif
