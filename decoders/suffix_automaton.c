/* suffix_automaton.c: see suffix_automaton.h. */
#include "decoders/suffix_automaton.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"

/* Texts longer than this are refused at creation: every index stays an int (3 edges a token). */
#define SAUTO_MAX_TOKENS (1L << 28)

struct suffix_automaton {
    long max_tokens, n; /* the text's room and length */
    int *text;
    int n_states, last;                 /* last: the state of the whole text */
    int *len, *link, *first_end, *head; /* per state; head: its first edge, -1 none */
    int n_edges;
    int *etok, *eto, *enext; /* per edge: token, target, next edge of the same state */
    int *hash;               /* (state, token) -> edge + 1, linear probing, 0 = empty */
    size_t hmask;
    int *efrom; /* per edge: its state (the hash compares keys through it) */
};

static size_t slot_of(const suffix_automaton *a, int state, int token) {
    uint64_t k = (uint64_t)(uint32_t)state << 32 | (uint32_t)token;
    k ^= k >> 33, k *= 0xff51afd7ed558ccdull, k ^= k >> 33;
    return (size_t)k & a->hmask;
}

/* The edge of state for token, -1 if none. */
static int find(const suffix_automaton *a, int state, int token) {
    for (size_t s = slot_of(a, state, token);; s = (s + 1) & a->hmask) {
        int e = a->hash[s] - 1;
        if (e < 0 || (a->efrom[e] == state && a->etok[e] == token)) return e;
    }
}

static void add_edge(suffix_automaton *a, int state, int token, int to) {
    int e = a->n_edges++;
    a->etok[e] = token, a->eto[e] = to, a->efrom[e] = state;
    a->enext[e] = a->head[state], a->head[state] = e;
    size_t s = slot_of(a, state, token);
    while (a->hash[s]) s = (s + 1) & a->hmask;
    a->hash[s] = e + 1;
}

static int new_state(suffix_automaton *a, int len, int first_end, int link) {
    int s = a->n_states++;
    a->len[s] = len, a->first_end[s] = first_end, a->link[s] = link, a->head[s] = -1;
    return s;
}

int sauto_new(suffix_automaton **out, long max_tokens, char *err) {
    *out = NULL;
    if (max_tokens < 1 || max_tokens > SAUTO_MAX_TOKENS)
        return err_set(err, "suffix automaton: %ld tokens, expected 1..%ld", max_tokens,
                       SAUTO_MAX_TOKENS);
    suffix_automaton *a = calloc(1, sizeof *a);
    if (!a) return err_set(err, "suffix automaton: out of memory");
    a->max_tokens = max_tokens;
    /* a text of n tokens: at most 2n - 1 states (n >= 2; 2 for n = 1) and 3n - 4 edges
     * (n >= 3; 3 for n = 2), edges never removed (a clone's redirections reuse them) */
    size_t S = 2 * (size_t)max_tokens, E = 3 * (size_t)max_tokens + 3;
    size_t h = 2;
    while (h < 2 * E) h <<= 1;
    a->hmask = h - 1;
    a->text = malloc(sizeof(int) * (size_t)max_tokens);
    a->len = malloc(sizeof(int) * S), a->link = malloc(sizeof(int) * S);
    a->first_end = malloc(sizeof(int) * S), a->head = malloc(sizeof(int) * S);
    a->etok = malloc(sizeof(int) * E), a->eto = malloc(sizeof(int) * E);
    a->enext = malloc(sizeof(int) * E), a->efrom = malloc(sizeof(int) * E);
    a->hash = calloc(h, sizeof(int));
    if (!a->text || !a->len || !a->link || !a->first_end || !a->head || !a->etok || !a->eto ||
        !a->enext || !a->efrom || !a->hash) {
        sauto_free(a);
        return err_set(err, "suffix automaton: out of memory for %ld tokens", max_tokens);
    }
    sauto_clear(a);
    *out = a;
    return 0;
}

void sauto_free(suffix_automaton *a) {
    if (!a) return;
    free(a->text), free(a->len), free(a->link), free(a->first_end), free(a->head);
    free(a->etok), free(a->eto), free(a->enext), free(a->efrom), free(a->hash);
    free(a);
}

void sauto_clear(suffix_automaton *a) {
    /* only the slots in use are cleared: a per-prompt automaton sized for the whole context
     * does not pay for its full hash table on every prompt */
    if ((size_t)a->n_edges * 4 < a->hmask)
        for (int e = 0; e < a->n_edges; e++) {
            size_t s = slot_of(a, a->efrom[e], a->etok[e]);
            while (a->hash[s] != e + 1) s = (s + 1) & a->hmask;
            a->hash[s] = 0;
        }
    else
        memset(a->hash, 0, sizeof(int) * (a->hmask + 1));
    a->n = 0, a->n_states = 0, a->n_edges = 0;
    a->last = new_state(a, 0, -1, -1);
}

int sauto_append(suffix_automaton *a, int token) {
    if (a->n == a->max_tokens) return 1;
    a->text[a->n++] = token;
    int cur = new_state(a, a->len[a->last] + 1, (int)a->n - 1, -1), p = a->last;
    for (; p != -1 && find(a, p, token) < 0; p = a->link[p]) add_edge(a, p, token, cur);
    if (p == -1) {
        a->link[cur] = 0;
    } else {
        int q = a->eto[find(a, p, token)];
        if (a->len[p] + 1 == a->len[q]) {
            a->link[cur] = q;
        } else { /* q also holds longer strings: split off the ones of length <= len(p) + 1 */
            int clone = new_state(a, a->len[p] + 1, a->first_end[q], a->link[q]);
            for (int e = a->head[q]; e >= 0; e = a->enext[e])
                add_edge(a, clone, a->etok[e], a->eto[e]);
            for (int e; p != -1 && a->eto[e = find(a, p, token)] == q; p = a->link[p])
                a->eto[e] = clone;
            a->link[q] = a->link[cur] = clone;
        }
    }
    a->last = cur;
    return 0;
}

long sauto_len(const suffix_automaton *a) {
    return a->n;
}
int sauto_states(const suffix_automaton *a) {
    return a->n_states;
}
long sauto_edges(const suffix_automaton *a) {
    return a->n_edges;
}
const int *sauto_text(const suffix_automaton *a) {
    return a->text;
}

sauto_match sauto_step(const suffix_automaton *a, sauto_match m, int token) {
    int s = m.state, l = m.len;
    if (s < 0 || s >= a->n_states) s = 0, l = 0; /* a cursor of an emptied automaton */
    int e;
    while ((e = find(a, s, token)) < 0 && s != 0) s = a->link[s], l = a->len[s];
    if (e < 0) return (sauto_match){0, 0};
    return (sauto_match){a->eto[e], l + 1};
}

sauto_match sauto_fix(const suffix_automaton *a, sauto_match m) {
    if (m.state < 0 || m.state >= a->n_states || m.len <= 0) return (sauto_match){0, 0};
    while (m.state != 0 && m.len <= a->len[a->link[m.state]]) m.state = a->link[m.state];
    return m;
}

long sauto_first_end(const suffix_automaton *a, int state) {
    return a->first_end[state];
}
int sauto_link(const suffix_automaton *a, int state) {
    return a->link[state];
}
int sauto_state_len(const suffix_automaton *a, int state) {
    return a->len[state];
}
