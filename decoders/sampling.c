/* sampling.c: the noise function, the kept set and the distribution of a row (sampling.h). */
#include "decoders/sampling.h"

#include <math.h>
#include <stdlib.h>

#include "util/err.h"

uint64_t samp_mix(uint64_t z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

uint64_t samp_key(uint64_t seed, int pos) {
    return samp_mix(samp_mix(seed) ^ (uint64_t)(uint32_t)pos);
}

double samp_uniform(uint64_t key, uint32_t stream, uint32_t id) {
    uint64_t bits = samp_mix(key ^ ((uint64_t)stream << 32 | id));
    return ((double)(bits >> 11) + 0.5) * (1.0 / 9007199254740992.0); /* 2^-53 */
}

/* ln 2 split so that e * LN2_HI is exact for |e| < 2^11 (its low 11 bits are zero). */
static const double LN2_HI = 6.93147180369123816490e-01, LN2_LO = 1.90821492927058770002e-10;

/* 1/k for samp_log's series, rounded once each (at compile time): multiplying by them is
 * faster than dividing and as reproducible. */
static const double inv_odd[13] = {1.0,      1.0 / 3,  1.0 / 5,  1.0 / 7,  1.0 / 9,
                                   1.0 / 11, 1.0 / 13, 1.0 / 15, 1.0 / 17, 1.0 / 19,
                                   1.0 / 21, 1.0 / 23, 1.0 / 25};

double samp_log(double x) {
    /* x = m 2^e with m in [sqrt(1/2), sqrt(2)); log m = 2 atanh(s), s = (m - 1) / (m + 1),
     * |s| <= 0.1716, by its series to s^25 (the next term is below 2^-60 of the sum). */
    int e;
    double m = frexp(x, &e);
    if (m < 0.70710678118654752440) m *= 2.0, e--;
    double s = (m - 1.0) / (m + 1.0), s2 = s * s, t = inv_odd[12];
    for (int k = 11; k >= 0; k--) t = inv_odd[k] + s2 * t;
    return ((double)e * LN2_LO + 2.0 * s * t) + (double)e * LN2_HI;
}

/* 1/n! for n = 0..13, each rounded once (at compile time). */
static const double inv_fact[14] = {1.0,
                                    1.0,
                                    1.0 / 2,
                                    1.0 / 6,
                                    1.0 / 24,
                                    1.0 / 120,
                                    1.0 / 720,
                                    1.0 / 5040,
                                    1.0 / 40320,
                                    1.0 / 362880,
                                    1.0 / 3628800,
                                    1.0 / 39916800,
                                    1.0 / 479001600,
                                    1.0 / 6227020800.0};

double samp_exp(double x) {
    /* exp(x) = 2^k exp(r), k = round(x / ln 2), |r| <= 0.3466, exp(r) by its Taylor polynomial
     * of degree 13 in Horner's form (the next term is below 2^-57). */
    if (x < -746.0) return 0.0;
    if (x > 709.0) return HUGE_VAL;
    double k = floor(x * 1.44269504088896340736 + 0.5);
    double r = (x - k * LN2_HI) - k * LN2_LO, t = inv_fact[13];
    for (int i = 12; i >= 0; i--) t = inv_fact[i] + r * t;
    return ldexp(t, (int)k);
}

double samp_gumbel(uint64_t key, int token) {
    return -samp_log(-samp_log(samp_uniform(key, SAMP_GUMBEL, (uint32_t)token)));
}

struct samp_work {
    int V;
    int *heap;           /* candidate ids, a max-heap by (logit, -id) */
    int *order;          /* the top-k ids, most likely first */
    unsigned char *keep; /* the kept set of the last row */
    double *e;           /* scratch weights for samp_gumbel_pick */
};

int samp_work_new(samp_work **out, int vocab, char *err) {
    samp_work *w = calloc(1, sizeof *w);
    if (w) {
        w->V = vocab;
        w->heap = malloc(sizeof(int) * (size_t)vocab);
        w->order = malloc(sizeof(int) * (size_t)vocab);
        w->keep = malloc((size_t)vocab);
        w->e = malloc(sizeof(double) * (size_t)vocab);
    }
    if (!w || !w->heap || !w->order || !w->keep || !w->e) {
        samp_work_free(w);
        return err_set(err, "sampling: out of memory");
    }
    *out = w;
    return 0;
}

void samp_work_free(samp_work *w) {
    if (!w) return;
    free(w->heap);
    free(w->order);
    free(w->keep);
    free(w->e);
    free(w);
}

/* a before b in the heap order: larger logit, then lower id */
static int above(const float *l, int a, int b) {
    return l[a] > l[b] || (l[a] == l[b] && a < b);
}

static void sift_down(int *h, int n, int i, const float *l) {
    for (;;) {
        int c = 2 * i + 1;
        if (c >= n) return;
        if (c + 1 < n && above(l, h[c + 1], h[c])) c++;
        if (!above(l, h[c], h[i])) return;
        int t = h[c];
        h[c] = h[i], h[i] = t, i = c;
    }
}

static int heap_pop(int *h, int *n, const float *l) {
    int top = h[0];
    h[0] = h[--*n];
    sift_down(h, *n, 0, l);
    return top;
}

static int no_cut(const dec_sampling *s, int V) {
    return (s->top_k <= 0 || s->top_k >= V) && (s->top_p <= 0 || s->top_p >= 1);
}

/* Marks the kept set (sampling.h) in w->keep; p receives exp((l - l_max) / T) for the kept
 * tokens, 0 elsewhere, *z their sum. Returns the number kept. The heap makes a cut cost
 * O(V + kept log V) rather than a sort of the vocabulary. */
static int kept_set(samp_work *w, const dec_sampling *s, const float *l, double *p, double *z) {
    const int V = w->V;
    const double T = s->temperature, lmax = l[fwd_argmax(l, V)];
    double sum = 0;
    if (no_cut(s, V)) {
        for (int v = 0; v < V; v++) {
            w->keep[v] = 1;
            sum += p[v] = samp_exp(((double)l[v] - lmax) / T);
        }
        *z = sum;
        return V;
    }
    int n = V, kept = 0;
    for (int v = 0; v < V; v++) w->heap[v] = v, w->keep[v] = 0, p[v] = 0;
    for (int i = V / 2 - 1; i >= 0; i--) sift_down(w->heap, n, i, l);
    const int k = s->top_k > 0 && s->top_k < V ? s->top_k : V;
    const double top_p = s->top_p > 0 && s->top_p < 1 ? s->top_p : 1;
    /* The normaliser top-p measures against: the top-k set's weight (all of it when k = V). */
    double zk = 0;
    if (k < V)
        for (int i = 0; i < k; i++) {
            w->order[i] = heap_pop(w->heap, &n, l);
            zk += samp_exp(((double)l[w->order[i]] - lmax) / T);
        }
    else
        for (int v = 0; v < V; v++) zk += samp_exp(((double)l[v] - lmax) / T);
    for (int i = 0; i < k; i++) {
        int v = k < V ? w->order[i] : heap_pop(w->heap, &n, l);
        double e = samp_exp(((double)l[v] - lmax) / T);
        w->keep[v] = 1, p[v] = e, sum += e, kept++;
        if (top_p < 1 && sum >= top_p * zk) break;
    }
    *z = sum;
    return kept;
}

int samp_dist(samp_work *w, const dec_sampling *s, const float *logits, double *p) {
    double z;
    int kept = kept_set(w, s, logits, p, &z);
    const double inv = 1.0 / z;
    for (int v = 0; v < w->V; v++) p[v] *= inv;
    return kept;
}

/* An upper bound of g = -log(-log u) that needs no logarithm: -log u >= 1 - u, so
 * g <= -log(1 - u) = -log(m 2^k) <= (1 - k) ln 2 for 1 - u = m 2^k, m in [1/2, 1) (frexp);
 * plus 2^-20 for the rounding of 1 - u. Typically 0.7-1.4: most tokens of a vocabulary are
 * further than that below the best score so far, and their logarithms are never computed. */
static double gumbel_bound(uint64_t key, int token) {
    int k;
    frexp(1.0 - samp_uniform(key, SAMP_GUMBEL, (uint32_t)token), &k);
    return (1 - k) * 0.69314718055994530942 + 0x1p-20;
}

int samp_gumbel_pick(samp_work *w, const dec_sampling *s, const float *logits, int pos) {
    const uint64_t key = samp_key(s->seed, pos);
    const double T = s->temperature;
    const int all = no_cut(s, w->V);
    double z;
    if (!all) kept_set(w, s, logits, w->e, &z);
    /* the most likely token first: its score is a good bar for the pruning */
    int best = fwd_argmax(logits, w->V);
    /* Scores are logit / T; when that overflows (T below ~1e-307 for logits of order 10) they
     * are taken relative to the best logit, (logit - best) / T, which stays finite for the best
     * and its ties and keeps the argmax the limit T -> 0 has. Unshifted, every score was +-inf
     * and the lowest token id won. At any other T the shift is 0 and the scores are as ever. */
    const double shift = isfinite((double)logits[best] / T) ? 0.0 : (double)logits[best];
    double best_s = ((double)logits[best] - shift) / T + samp_gumbel(key, best);
    for (int v = 0; v < w->V; v++) {
        if (v == best || (!all && !w->keep[v])) continue;
        double base = ((double)logits[v] - shift) / T;
        if (base + gumbel_bound(key, v) < best_s) continue; /* cannot win: exact pruning */
        double sc = base + samp_gumbel(key, v);
        if (sc > best_s || (sc == best_s && v < best)) best = v, best_s = sc;
    }
    return best;
}

int samp_draw(const double *p, int vocab, double u) {
    double total = 0;
    for (int v = 0; v < vocab; v++) total += p[v];
    const double target = u * total;
    double cum = 0;
    int last = -1;
    for (int v = 0; v < vocab; v++) {
        if (p[v] <= 0) continue;
        cum += p[v];
        last = v;
        if (cum > target) return v;
    }
    return last;
}
