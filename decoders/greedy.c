/* greedy.c: plain decoding, one token per target pass: the baseline every other decoder must
 * reproduce token for token (in distribution under standard sampling). Its tokens are
 * dec_pick's: the argmax at temperature 0 (greedy decoding proper), plain sampling at T > 0;
 * the name stays "greedy" in every mode, as the one-pass-per-token reference. */
#include <stdlib.h>

#include "decoders/dec_impl.h"
#include "util/err.h"

typedef struct {
    fwd_ctx *f;
    float *logits;
} greedy;

static int greedy_create(dec *d, char *err) {
    greedy *g = calloc(1, sizeof *g);
    if (!g) return err_set(err, "greedy: out of memory");
    d->impl = g;
    g->logits = malloc(sizeof(float) * (size_t)d->env.target->cfg.vocab_size);
    if (!g->logits) return err_set(err, "greedy: out of memory");
    return dec_fwd_new(d, d->env.target, 1, &g->f, err);
}

static int greedy_generate(dec *d, const int *prompt, int n_prompt, char *err) {
    greedy *g = d->impl;
    if (dec_prefill(d, DEC_TARGET, g->f, prompt, n_prompt, g->logits, err)) return -1;
    int pos = n_prompt, tok = dec_pick(d, g->logits, pos); /* the token at position pos */
    dec_emit(d, &tok, 1);
    static const int row0 = 0;
    while (!d->done) {
        if (dec_eval(d, DEC_TARGET, g->f, 1, &tok, NULL, &row0, 1, g->logits, 0, err) ||
            fwd_commit(g->f, &row0, 1, err))
            return -1;
        tok = dec_pick(d, g->logits, ++pos);
        dec_step_done(d, 1, 0, 0, dec_emit(d, &tok, 1));
    }
    return 0;
}

static void greedy_destroy(dec *d) {
    greedy *g = d->impl;
    if (!g) return;
    fwd_free(g->f);
    free(g->logits);
    free(g);
}

const dec_vtable dec_greedy_vtable = {
    .name = "greedy",
    .summary = "one token per target pass (the baseline)",
    .create = greedy_create,
    .generate = greedy_generate,
    .destroy = greedy_destroy,
};
