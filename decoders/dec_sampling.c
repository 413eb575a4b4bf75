/* dec_sampling.c: the sampling settings of decoder.h (names, modes, ranges) and the
 * framework's per-decoder sampling memory. The arithmetic and the noise are sampling.c's. */
#include <stdlib.h>
#include <string.h>

#include "decoders/dec_framework.h"
#include "decoders/sampling.h"
#include "util/err.h"

int dec_sampling_on(const dec_sampling *s) {
    return s->temperature > 0;
}

const char *dec_sampling_name(const dec_sampling *s) {
    return !dec_sampling_on(s)               ? "greedy"
           : s->mode == DEC_SAMPLING_COUPLED ? "coupled"
                                             : "standard";
}

int dec_sampling_parse_mode(const char *name, dec_sampling_mode *out) {
    if (!strcmp(name, "standard")) return *out = DEC_SAMPLING_STANDARD, 0;
    if (!strcmp(name, "coupled")) return *out = DEC_SAMPLING_COUPLED, 0;
    return -1;
}

int dec_sampling_check(const dec_sampling *s, char *err) {
    if (!(s->temperature >= 0 && s->temperature <= 100))
        return err_set(err, "temperature %g is out of range 0..100", s->temperature);
    if (s->top_k < 0) return err_set(err, "top-k %d is negative", s->top_k);
    if (!(s->top_p >= 0 && s->top_p <= 1))
        return err_set(err, "top-p %g is out of range 0..1", s->top_p);
    if (s->mode != DEC_SAMPLING_STANDARD && s->mode != DEC_SAMPLING_COUPLED)
        return err_set(err, "sampling mode %d is neither standard nor coupled", (int)s->mode);
    return 0;
}

/* The framework's sampling memory (dec_impl.h), only when the decoder samples. */
int dec_sampling_alloc(dec *d, char *err) {
    if (!dec_sampling_on(&d->env.sampling)) return 0;
    size_t V = (size_t)d->env.target->cfg.vocab_size;
    d->sp = malloc(sizeof(double) * V);
    d->sq = malloc(sizeof(double) * V);
    d->sr = malloc(sizeof(double) * V);
    if (!d->sp || !d->sq || !d->sr) return err_set(err, "decoder: out of memory");
    return samp_work_new(&d->sw, (int)V, err);
}
