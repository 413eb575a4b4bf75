/* sampling.h: the arithmetic of sampling at temperature > 0 (dec_sampling, decoder.h): the
 * noise function, the top-k / top-p cut, the target's distribution, and the rejection rules
 * speculative decoders verify with. Decoders do not call these directly: they call the
 * framework's dec_pick / dec_propose / dec_draft_pick / dec_accept / dec_accept_node /
 * dec_tree_walk (dec_impl.h), which use them. Tests call them to compute exact distributions.
 *
 * Everything here is a deterministic function of its inputs, computed with IEEE double
 * operations in a fixed order (the build has -ffp-contract=off; log and exp are the fixed
 * series below, not libm's, whose last bits differ between libraries), so a seed gives the
 * same tokens on every machine, as the forward pass gives the same logits.
 *
 * The noise (counter-based: no generator state, nothing depends on call order):
 *   mix(z)   = splitmix64's output for state z: z += 0x9E3779B97F4A7C15;
 *              z ^= z >> 30; z *= 0xBF58476D1CE4E5B9; z ^= z >> 27; z *= 0x94D049BB133111EB;
 *              z ^= z >> 31 (uint64 arithmetic, wrapping)
 *   key(seed, pos)        = mix(mix(seed) ^ pos)            (pos: the token's position in the
 *                                                            sequence, prompt included)
 *   bits(key, stream, id) = mix(key ^ (stream << 32 | id))   (id: a token id or an index)
 *   u(key, stream, id)    = ((bits >> 11) + 0.5) / 2^53      (in (0, 1), never 0 or 1)
 *   g(seed, pos, token)   = -samp_log(-samp_log(u(key(seed, pos), SAMP_GUMBEL, token)))
 *   samp_log(x): x = m 2^e (frexp; m < sqrt(1/2) doubled), s = (m - 1) / (m + 1), t = 1/25,
 *   t = 1/k + s^2 t for k = 23, 21, .., 1 (1/k rounded to double), log = (e ln2_lo + 2 s t) +
 *   e ln2_hi with ln2_hi = 0x1.62e42feep-1, ln2_lo = 0x1.a39ef35793c76p-33;
 *   samp_exp(x) (standard mode's weights): k = floor(x / ln 2 + 1/2), r = (x - k ln2_hi) -
 *   k ln2_lo, 2^k times the degree-13 Taylor polynomial of e^r in Horner's form (1/n! rounded)
 * Coupled mode: the token at pos is argmax over the kept set of (double)logit / T + g, ties to
 * the lowest id. Standard mode draws with uniforms of the other streams: plain sampling and
 * residuals by inverse CDF over the kept tokens in id order, the rejection tests as u < ratio.
 *
 * The kept set and the distribution of a row (samp_dist): with T > 0, the top_k largest
 * logits (ties to the lower id; 0: all); then, in that order, the shortest prefix whose
 * probability under softmax(logits / T) renormalised over the top-k set reaches top_p;
 * p(v) = exp((l_v - l_max) / T) / Z over the kept set, 0 elsewhere. That is Hugging Face's
 * order: temperature, then top-k, then top-p on the tempered probabilities (transformers 4.37
 * generation/utils.py, _get_logits_warper: TemperatureLogitsWarper, TopKLogitsWarper,
 * TopPLogitsWarper). It is not llama.cpp's: its default chain (common/common.h:153-162 at
 * ggerganov/llama.cpp@c392e50) runs top-k, typical-p, top-p, min-p (default 0.05), xtc and
 * temperature LAST, so its top-p cut is measured on softmax(logits) at temperature 1 and its
 * min-p cut removes tokens below 0.05 of the most likely one; with top_p = 1 and min-p 0 the
 * two orders keep the same set (top-k does not depend on T) and give the same distribution.
 * llama.cpp's order is not offered: it would be a fourth recorded sampling setting (a runs
 * column, the CLI, compare's and merge's checks), not a change here. */
#ifndef DECODERS_SAMPLING_H
#define DECODERS_SAMPLING_H

#include <stdint.h>

#include "decoders/decoder.h"

/* Streams of the noise: one per use, so no two uses of a position share a uniform. */
enum {
    SAMP_GUMBEL = 0, /* coupled mode, id = token */
    SAMP_PICK = 1,   /* standard: plain sampling at pos */
    SAMP_DRAFT = 2,  /* standard: a draft model's sample at pos, id = its index among siblings */
    SAMP_ACCEPT = 3, /* standard: the rejection test, id = the test's index at this node */
    SAMP_RESID = 4   /* standard: the residual draw after every candidate was rejected */
};

uint64_t samp_mix(uint64_t z);
uint64_t samp_key(uint64_t seed, int pos);
double samp_uniform(uint64_t key, uint32_t stream, uint32_t id);
/* The natural log of x > 0 and exp(x), as fixed series (about 1 ulp; bit-reproducible). */
double samp_log(double x);
double samp_exp(double x);
/* g(seed, pos, token) of the header, from key = samp_key(seed, pos). */
double samp_gumbel(uint64_t key, int token);

/* Working memory for one vocabulary size (no allocation after samp_work_new). */
typedef struct samp_work samp_work;
int samp_work_new(samp_work **out, int vocab, char *err);
void samp_work_free(samp_work *w);

/* The kept set and distribution of a logits row (header). p: vocab doubles, summing to 1 over
 * the kept set, 0 elsewhere. Returns the number of kept tokens. Needs s->temperature > 0. */
int samp_dist(samp_work *w, const dec_sampling *s, const float *logits, double *p);

/* Coupled mode's token at pos (header); temperature > 0. */
int samp_gumbel_pick(samp_work *w, const dec_sampling *s, const float *logits, int pos);

/* The token whose cumulative probability (over ids in increasing order) first exceeds
 * u * sum(p) (the last token with p > 0 if rounding leaves u * sum beyond the total). */
int samp_draw(const double *p, int vocab, double u);

#endif
