/* dec_check.h: "generate with decoder X and compare with greedy", shared by the decoder tests.
 *
 * dec_check_vs() runs a decoder spec and CHECKs (testutil.h) that its output equals a greedy
 * output token for token, and that its statistics obey the framework's definitions
 * (decoder.h): one histogram entry per target step after the prefill, accepted <= drafted,
 * sum of k * accept_hist[k] = accepted, at least one token per step, no more than
 * accepted + steps tokens, rows in the trace adding up to target_rows, and per-position counts
 * consistent. A decoder that needs more than one target pass per step should not use it. */
#ifndef TESTS_DEC_CHECK_H
#define TESTS_DEC_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "decoders/decoder.h"

#define DEC_CHECK_MAX_OUT 1024   /* longest output the helpers handle */
#define DEC_CHECK_MAX_PROMPT 512 /* longest tokenized prompt */

/* What the per-step trace saw while a decoder ran. */
typedef struct {
    long steps, rows, emitted; /* sums over the on_step calls */
    int max_rows;              /* the widest target pass */
    int multi;                 /* steps that emitted more than one token */
    dec_step last;             /* the last step (zeroed if none) */
} dec_check_trace;

/* Greedy's output for the prompt on env->target (env's draft and callbacks are ignored).
 * Returns the token count, or -1 after a failed CHECK. */
int dec_check_greedy(const dec_env *env, const int *prompt, int n_prompt, int max_new, int *out);

/* Runs spec with env (its on_step/user are replaced by the trace's) and compares with
 * want[0..n_want). got (DEC_CHECK_MAX_OUT, may be NULL), st and tr (may be NULL) receive the
 * output, the statistics and the trace. `what` labels failure messages. Returns 1 if equal. */
int dec_check_vs(const dec_env *env, const char *spec, const int *prompt, int n_prompt, int max_new,
                 const int *want, int n_want, int *got, dec_stats *st, dec_check_trace *tr,
                 const char *what);

/* dec_check_greedy then dec_check_vs. */
int dec_check_exact(const dec_env *env, const char *spec, const int *prompt, int n_prompt,
                    int max_new, int *got, dec_stats *st, dec_check_trace *tr, const char *what);

/* The first n (<= 64) prompts of the shared TinyStories set ("raw" template), encoded with
 * models/tok512.bin and BOS into ids[i] (DEC_CHECK_MAX_PROMPT each), lengths into lens.
 * Returns 0, or -1 after a failed CHECK. */
int dec_check_tinystories(int n, int (*ids)[DEC_CHECK_MAX_PROMPT], int *lens);

/* A synthetic model of `config` (synth.h) whose classifier is the embedding of a second model
 * (seed + 1000), returned in *donor (close it after the model). synth_model ties the
 * classifier to the embedding, and with random weights x . x then dominates the logits: greedy
 * repeats the last token and every decoder looks perfect. Untied, the text is varied. */
model *dec_check_synth_untied(const char *config, uint64_t seed, model **donor);

/* dec_check_synth_untied, then every token embedding set to token 0's: the model ignores its
 * input tokens and greedy's next token depends on the position only, so any prediction the
 * model makes for a later position (a Jacobi guess, a lookahead n-gram) is right: drafts built
 * from its own outputs are accepted in full, exercising the multi-token paths. */
model *dec_check_synth_positional(const char *config, uint64_t seed, model **donor);

/* The prompt the synthetic-model tests share: BOS, then tokens 3..502 in a fixed varied order
 * (vocabularies of at least 503); DEC_CHECK_SYNTH_PROMPT tokens. */
#define DEC_CHECK_SYNTH_PROMPT 600
void dec_check_synth_prompt(int prompt[DEC_CHECK_SYNTH_PROMPT]);

/* Counting allocations, to show that a decoder's generate() allocates nothing: write
 * DEC_CHECK_COUNT_MALLOC once at file scope of a test; dec_check_mallocs then counts every
 * malloc/calloc/realloc of the process (glibc's allocator is wrapped by symbol interposition).
 * Under AddressSanitizer, which owns malloc, nothing is counted and dec_check_counting is 0. */
extern long dec_check_mallocs;
extern const int dec_check_counting;
#if defined(__SANITIZE_ADDRESS__)
#define DEC_CHECK_NO_COUNT 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define DEC_CHECK_NO_COUNT 1
/* A Medusa head folder at dir (created): config.json and medusa_lm_head.safetensors in F32 with
 * n_heads heads of n_layers ResBlocks for model m (its hidden size and vocabulary): every
 * weight uniform in +-noise / 2 (seed), plus m's own classifier in each head's classifier, so
 * that a head proposes tokens the target likes (the quality does not matter to exactness: the
 * tests need some acceptance to walk deep paths; with noise 0 every head proposes the target's
 * next token). Returns 0, or -1 after a failed CHECK. */
int dec_check_medusa_head(const char *dir, const model *m, int n_heads, int n_layers, float noise,
                          uint64_t seed);

#endif
/* A Medusa head folder at dir (created): config.json and medusa_lm_head.safetensors in F32 with
 * n_heads heads of n_layers ResBlocks for model m (its hidden size and vocabulary): every
 * weight uniform in +-noise / 2 (seed), plus m's own classifier in each head's classifier, so
 * that a head proposes tokens the target likes (the quality does not matter to exactness: the
 * tests need some acceptance to walk deep paths; with noise 0 every head proposes the target's
 * next token). Returns 0, or -1 after a failed CHECK. */
int dec_check_medusa_head(const char *dir, const model *m, int n_heads, int n_layers, float noise,
                          uint64_t seed);

#endif
#ifdef DEC_CHECK_NO_COUNT
#define DEC_CHECK_COUNT_MALLOC                                                                     \
    long dec_check_mallocs = 0;                                                                    \
    const int dec_check_counting = 0;
#else
#define DEC_CHECK_COUNT_MALLOC                                                                     \
    long dec_check_mallocs = 0;                                                                    \
    const int dec_check_counting = 1;                                                              \
    extern void *__libc_malloc(size_t);                                                            \
    extern void *__libc_calloc(size_t, size_t);                                                    \
    extern void *__libc_realloc(void *, size_t);                                                   \
    void *malloc(size_t n) {                                                                       \
        __atomic_fetch_add(&dec_check_mallocs, 1, __ATOMIC_RELAXED);                               \
        return __libc_malloc(n);                                                                   \
    }                                                                                              \
    void *calloc(size_t a, size_t b) {                                                             \
        __atomic_fetch_add(&dec_check_mallocs, 1, __ATOMIC_RELAXED);                               \
        return __libc_calloc(a, b);                                                                \
    }                                                                                              \
    void *realloc(void *p, size_t n) {                                                             \
        __atomic_fetch_add(&dec_check_mallocs, 1, __ATOMIC_RELAXED);                               \
        return __libc_realloc(p, n);                                                               \
    }
/* A Medusa head folder at dir (created): config.json and medusa_lm_head.safetensors in F32 with
 * n_heads heads of n_layers ResBlocks for model m (its hidden size and vocabulary): every
 * weight uniform in +-noise / 2 (seed), plus m's own classifier in each head's classifier, so
 * that a head proposes tokens the target likes (the quality does not matter to exactness: the
 * tests need some acceptance to walk deep paths; with noise 0 every head proposes the target's
 * next token). Returns 0, or -1 after a failed CHECK. */
int dec_check_medusa_head(const char *dir, const model *m, int n_heads, int n_layers, float noise,
                          uint64_t seed);

#endif

/* REST's datastore (util/token_store.h) for the TinyStories tests, at path: the paragraphs
 * (reference answers) of TinyStories records [first, first + n), encoded with tok512.bin and
 * BOS, its fingerprint recorded. Pick records the test does not prompt with. Returns 0, or -1
 * after a failed CHECK. */
int dec_check_rest_store(const char *path, int first, int n);

/* A Medusa head folder at dir (created): config.json and medusa_lm_head.safetensors in F32 with
 * n_heads heads of n_layers ResBlocks for model m (its hidden size and vocabulary): every
 * weight uniform in +-noise / 2 (seed), plus m's own classifier in each head's classifier, so
 * that a head proposes tokens the target likes (the quality does not matter to exactness: the
 * tests need some acceptance to walk deep paths; with noise 0 every head proposes the target's
 * next token). Returns 0, or -1 after a failed CHECK. */
int dec_check_medusa_head(const char *dir, const model *m, int n_heads, int n_layers, float noise,
                          uint64_t seed);

#endif
