/* suffix_tree.c: see suffix_tree.h. */
#include "decoders/suffix_tree.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "decoders/sequoia.h"
#include "decoders/state_file.h"
#include "util/err.h"

/* A node: one token below its parent. Index 0 is the root (the empty string); 0 in child and
 * sibling means none (the root is nobody's child). */
typedef struct {
    int token, count, parent;
    int child, sibling; /* first child; next sibling (the children form a list) */
} snode;

struct suffix_tree {
    int depth, max_nodes, n_nodes;
    long max_tokens;
    snode *node;           /* [max_nodes + 1] */
    int free_list, unused; /* freed nodes (linked by sibling); never used: unused..max_nodes */
    int *hash;             /* (parent, token) -> node, linear probing, 0 = empty */
    size_t hmask;
    int *ring; /* the stored tokens, oldest first from ring_head */
    long ring_head, n_tok;
    long *seq_len; /* the sequences' lengths, oldest first from seq_head (a ring too) */
    long seq_head, n_seq, max_seq;
    int *active; /* the newest sequence's suffix nodes: active[i] holds its last i+1 tokens */
    int n_active, frozen;
    long evicted;
    int *walk; /* eviction scratch: one suffix's nodes */
};

static size_t slot_of(const suffix_tree *t, int parent, int token) {
    uint64_t k = (uint64_t)(uint32_t)parent << 32 | (uint32_t)token;
    k ^= k >> 33, k *= 0xff51afd7ed558ccdull, k ^= k >> 33;
    return (size_t)k & t->hmask;
}

/* The child of parent for token, 0 if none. A short child list is scanned (the node array of
 * a young tree is small and cached, where the hash table is sized for the full tree and each
 * probe a cache miss: measured 97 -> 28 us of bookkeeping per step on stories260K); a long
 * one, as the root's, is looked up in the hash. */
static int find(const suffix_tree *t, int parent, int token) {
    int n = 0;
    for (int c = t->node[parent].child; c; c = t->node[c].sibling)
        if (t->node[c].token == token)
            return c;
        else if (++n == 8)
            break;
    if (n < 8) return 0; /* the whole list was scanned */
    for (size_t s = slot_of(t, parent, token);; s = (s + 1) & t->hmask) {
        int x = t->hash[s];
        if (!x || (t->node[x].parent == parent && t->node[x].token == token)) return x;
    }
}

/* A new node under parent (room was checked by the caller). */
static int add(suffix_tree *t, int parent, int token) {
    int x = t->free_list ? t->free_list : t->unused++;
    if (t->free_list) t->free_list = t->node[x].sibling;
    t->node[x] = (snode){.token = token, .parent = parent, .sibling = t->node[parent].child};
    t->node[parent].child = x;
    size_t s = slot_of(t, parent, token);
    while (t->hash[s]) s = (s + 1) & t->hmask;
    t->hash[s] = x;
    t->n_nodes++;
    return x;
}

/* Removes node x (count 0, no children): from the hash (backward-shift deletion, which keeps
 * every probe sequence unbroken), from its parent's list, into the free list. */
static void drop(suffix_tree *t, int x) {
    snode *n = &t->node[x];
    size_t i = slot_of(t, n->parent, n->token);
    while (t->hash[i] != x) i = (i + 1) & t->hmask;
    for (size_t j = (i + 1) & t->hmask; t->hash[j]; j = (j + 1) & t->hmask) {
        size_t home = slot_of(t, t->node[t->hash[j]].parent, t->node[t->hash[j]].token);
        /* the entry at j may move to i if its home is not cyclically within (i, j] */
        if (((j - home) & t->hmask) >= ((j - i) & t->hmask)) t->hash[i] = t->hash[j], i = j;
    }
    t->hash[i] = 0;
    int *link = &t->node[n->parent].child;
    while (*link != x) link = &t->node[*link].sibling;
    *link = n->sibling;
    n->sibling = t->free_list;
    t->free_list = x;
    t->n_nodes--;
}

int stree_new(suffix_tree **out, int depth, int max_nodes, long max_tokens, char *err) {
    *out = NULL;
    if (depth < 1 || max_nodes < 1 || max_tokens < 1)
        return err_set(err, "suffix tree: depth %d, %d nodes, %ld tokens: each must be >= 1", depth,
                       max_nodes, max_tokens);
    suffix_tree *t = calloc(1, sizeof *t);
    if (!t) return err_set(err, "suffix tree: out of memory");
    t->depth = depth, t->max_nodes = max_nodes, t->max_tokens = max_tokens;
    t->max_seq = max_tokens + 1; /* every sequence but the newest holds a token */
    size_t h = 2;
    while (h < 2 * (size_t)max_nodes) h <<= 1;
    t->hmask = h - 1;
    t->node = malloc(sizeof *t->node * ((size_t)max_nodes + 1));
    t->hash = calloc(h, sizeof *t->hash);
    t->ring = malloc(sizeof *t->ring * (size_t)max_tokens);
    t->seq_len = malloc(sizeof *t->seq_len * (size_t)t->max_seq);
    t->active = malloc(sizeof *t->active * (size_t)depth);
    t->walk = malloc(sizeof *t->walk * (size_t)depth);
    if (!t->node || !t->hash || !t->ring || !t->seq_len || !t->active || !t->walk) {
        stree_free(t);
        return err_set(err, "suffix tree: out of memory for %d nodes and %ld tokens", max_nodes,
                       max_tokens);
    }
    t->node[0] = (snode){0};
    t->unused = 1;
    *out = t;
    return 0;
}

void stree_free(suffix_tree *t) {
    if (!t) return;
    free(t->node), free(t->hash), free(t->ring), free(t->seq_len), free(t->active), free(t->walk);
    free(t);
}

void stree_clear(suffix_tree *t) {
    memset(t->hash, 0, sizeof *t->hash * (t->hmask + 1));
    t->node[0] = (snode){0};
    t->unused = 1, t->free_list = 0, t->n_nodes = 0;
    t->ring_head = t->n_tok = t->seq_head = t->n_seq = 0;
    t->n_active = t->frozen = 0;
}

void stree_begin(suffix_tree *t) {
    t->n_active = t->frozen = 0;
    if (t->n_seq && t->seq_len[(t->seq_head + t->n_seq - 1) % t->max_seq] == 0) return;
    t->seq_len[(t->seq_head + t->n_seq++) % t->max_seq] = 0;
}

/* Removes the oldest sequence: every substring occurrence it holds is uncounted, emptied
 * nodes (deepest first: a child never counts more than its parent) are freed. */
static void evict_oldest(suffix_tree *t) {
    const long len = t->seq_len[t->seq_head];
    for (long j = 0; j < len; j++) {
        int x = 0, m = 0;
        for (long k = j; k < len && k - j < t->depth; k++) {
            x = find(t, x, t->ring[(t->ring_head + k) % t->max_tokens]);
            t->node[x].count--;
            t->walk[m++] = x;
        }
        while (m > 0 && t->node[t->walk[m - 1]].count == 0) drop(t, t->walk[--m]);
    }
    t->node[0].count -= (int)len;
    t->ring_head = (t->ring_head + len) % t->max_tokens;
    t->n_tok -= len;
    t->seq_head = (t->seq_head + 1) % t->max_seq;
    t->n_seq--;
    t->evicted++;
}

/* The child of parent for token, created if needed, counted once more. */
static int bump(suffix_tree *t, int parent, int token) {
    int x = find(t, parent, token);
    if (!x) x = add(t, parent, token);
    t->node[x].count++;
    return x;
}

int stree_append(suffix_tree *t, int token) {
    if (!t->n_seq) stree_begin(t);
    if (t->frozen) return 1;
    const int k = t->n_active < t->depth - 1 ? t->n_active : t->depth - 1; /* new suffixes: k+1 */
    while ((t->max_nodes - t->n_nodes < k + 1 || t->n_tok == t->max_tokens) && t->n_seq > 1)
        evict_oldest(t);
    if (t->max_nodes - t->n_nodes < k + 1 || t->n_tok == t->max_tokens) return t->frozen = 1;
    t->ring[(t->ring_head + t->n_tok++) % t->max_tokens] = token;
    t->seq_len[(t->seq_head + t->n_seq - 1) % t->max_seq]++;
    for (int i = k; i >= 1; i--) t->active[i] = bump(t, t->active[i - 1], token);
    t->active[0] = bump(t, 0, token);
    t->n_active = k + 1;
    t->node[0].count++;
    return 0;
}

int stree_nodes(const suffix_tree *t) {
    return t->n_nodes;
}
long stree_tokens(const suffix_tree *t) {
    return t->n_tok;
}
int stree_seqs(const suffix_tree *t) {
    return (int)t->n_seq;
}
long stree_evicted(const suffix_tree *t) {
    return t->evicted;
}
int stree_frozen(const suffix_tree *t) {
    return t->frozen;
}

int stree_count(const suffix_tree *t, const int *s, int n) {
    if (n < 1 || n > t->depth) return 0;
    int x = 0;
    for (int i = 0; i < n; i++)
        if (!(x = find(t, x, s[i]))) return 0;
    return t->node[x].count;
}

/* ---- speculation (section 4.2) ------------------------------------------------------------ */

typedef struct {
    double prob;
    int node, parent, token; /* parent: the draft index of the candidate's parent, -1 none */
} cand;

struct stree_spec {
    int max_spec, heap_cap, n_heap;
    cand *heap;
    stree_draft best, cur;
    int *shape_row, *node; /* shape walks: each shape node's draft index (-1: dropped), each
                            * draft index's suffix-tree node; max_spec each */
};

static int draft_alloc(stree_draft *d, int n) {
    d->tok = malloc(sizeof(int) * (size_t)n), d->parent = malloc(sizeof(int) * (size_t)n);
    d->prob = malloc(sizeof(double) * (size_t)n), d->rank = malloc(sizeof(int) * (size_t)n);
    return d->tok && d->parent && d->prob && d->rank ? 0 : -1;
}

int stree_spec_new(stree_spec **out, int max_spec, double min_prob_floor, char *err) {
    *out = NULL;
    if (max_spec < 1 || !(min_prob_floor > 0 && min_prob_floor <= 1))
        return err_set(err, "suffix speculation: %d tokens, min_prob %g: expected >= 1, (0, 1]",
                       max_spec, min_prob_floor);
    stree_spec *s = calloc(1, sizeof *s);
    if (!s) return err_set(err, "suffix speculation: out of memory");
    *out = s;
    s->max_spec = max_spec;
    /* each node taken adds at most 1/min_prob candidates (their counts add up to at most its
     * own); the pattern's node adds as many */
    s->heap_cap = (max_spec + 1) * (int)(1.0 / min_prob_floor + 1e-9) + 1;
    s->heap = malloc(sizeof *s->heap * (size_t)s->heap_cap);
    s->shape_row = malloc(sizeof(int) * (size_t)max_spec);
    s->node = malloc(sizeof(int) * (size_t)max_spec);
    if (!s->heap || draft_alloc(&s->best, max_spec) || draft_alloc(&s->cur, max_spec) ||
        !s->shape_row || !s->node)
        return err_set(err, "suffix speculation: out of memory");
    return 0;
}

void stree_spec_free(stree_spec *s) {
    if (!s) return;
    free(s->heap), free(s->shape_row), free(s->node);
    stree_draft *d[2] = {&s->best, &s->cur};
    for (int i = 0; i < 2; i++)
        free(d[i]->tok), free(d[i]->parent), free(d[i]->prob), free(d[i]->rank);
    free(s);
}

/* a before b: more probable, then the earlier parent, then the lower token */
static int before(const cand *a, const cand *b) {
    if (a->prob != b->prob) return a->prob > b->prob;
    if (a->parent != b->parent) return a->parent < b->parent;
    return a->token < b->token;
}

static void heap_push(stree_spec *s, cand c) {
    int i = s->n_heap++;
    while (i > 0 && before(&c, &s->heap[(i - 1) / 2]))
        s->heap[i] = s->heap[(i - 1) / 2], i = (i - 1) / 2;
    s->heap[i] = c;
}

static cand heap_pop(stree_spec *s) {
    cand top = s->heap[0], last = s->heap[--s->n_heap];
    int i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= s->n_heap) break;
        if (c + 1 < s->n_heap && before(&s->heap[c + 1], &s->heap[c])) c++;
        if (!before(&s->heap[c], &last)) break;
        s->heap[i] = s->heap[c], i = c;
    }
    if (s->n_heap) s->heap[i] = last;
    return top;
}

/* The candidates below node x (probability prob, draft index parent): every child at least
 * min_prob likely, or (path) only the most frequent (ties: the lower token). */
static void push_children(const suffix_tree *t, stree_spec *s, int x, double prob, int parent,
                          double min_prob, int tree) {
    const snode *n = &t->node[x];
    cand best = {.prob = -1};
    for (int c = n->child; c; c = t->node[c].sibling) {
        cand k = {prob * t->node[c].count / n->count, c, parent, t->node[c].token};
        if (k.prob < min_prob) continue;
        if (tree)
            heap_push(s, k);
        else if (before(&k, &best))
            best = k;
    }
    if (!tree && best.prob >= 0) heap_push(s, best);
}

/* Grows s->cur below node x: the most probable candidate first, max tokens. */
static void grow(const suffix_tree *t, stree_spec *s, int x, int max, double min_prob, int tree,
                 int end_id) {
    stree_draft *d = &s->cur;
    d->n = 0, d->score = 0;
    s->n_heap = 0;
    push_children(t, s, x, 1.0, -1, min_prob, tree);
    while (d->n < max && s->n_heap) {
        cand c = heap_pop(s);
        int i = d->n++;
        d->tok[i] = c.token, d->parent[i] = c.parent, d->prob[i] = c.prob, d->rank[i] = -1;
        d->score += c.prob;
        if (c.token != end_id) push_children(t, s, c.node, c.prob, i, min_prob, tree);
    }
}

/* Sibling order for sequoia_child_of_rank: the most frequent first, ties to the lower token. */
static int sibling_next(const void *ctx, int c) {
    return ((const suffix_tree *)ctx)->node[c].sibling;
}

static int sibling_before(const void *ctx, int a, int b) {
    const snode *node = ((const suffix_tree *)ctx)->node, *x = &node[a], *y = &node[b];
    return x->count > y->count || (x->count == y->count && x->token < y->token);
}

/* Fills s->cur below node x from a fixed shape (parents before children): shape node j becomes
 * the rank[j]-th child of its parent's draft node, if that parent was drafted, is not the end
 * token and has such a child; max tokens at most. prob and score as grow's. */
static void walk_shape(const suffix_tree *t, stree_spec *s, int x, int max, const int *shape_par,
                       const int *shape_rank, int n_shape, int end_id) {
    stree_draft *d = &s->cur;
    d->n = 0, d->score = 0;
    for (int j = 0; j < n_shape && d->n < max; j++) {
        s->shape_row[j] = -1;
        const int pi = shape_par[j] < 0 ? -1 : s->shape_row[shape_par[j]];
        if (shape_par[j] >= 0 && (pi < 0 || d->tok[pi] == end_id)) continue;
        const int pn = pi < 0 ? x : s->node[pi];
        const int c = sequoia_child_of_rank(t, t->node[pn].child, sibling_next, sibling_before,
                                            shape_rank[j]);
        if (!c) continue;
        const int i = d->n++;
        d->tok[i] = t->node[c].token, d->parent[i] = pi, d->rank[i] = shape_rank[j];
        d->prob[i] = (pi < 0 ? 1.0 : d->prob[pi]) * t->node[c].count / t->node[pn].count;
        d->score += d->prob[i];
        s->node[i] = c, s->shape_row[j] = i;
    }
}

static void speculate(const suffix_tree *t, const int *ctx, int n_ctx, int max_spec, double alpha,
                      double min_prob, int tree, const stree_shape *shape, int end_id,
                      stree_spec *ws, stree_draft *out) {
    stree_draft *best = &ws->best;
    best->n = 0, best->score = 0, best->match_len = 0;
    if (max_spec > ws->max_spec) max_spec = ws->max_spec;
    const int longest = (n_ctx < t->depth ? n_ctx : t->depth) - 1;
    for (int p = 1; p <= longest; p++) {
        int x = 0;
        for (int i = n_ctx - p; i < n_ctx && (x = find(t, x, ctx[i])); i++) {
        }
        if (!x) break; /* no longer pattern occurs either */
        int max = (int)(alpha * p + 1e-6);
        if (max > max_spec) max = max_spec;
        if (max < 1) continue;
        if (shape)
            walk_shape(t, ws, x, max, shape->parent, shape->rank,
                       shape->n < ws->max_spec ? shape->n : ws->max_spec, end_id);
        else
            grow(t, ws, x, max, min_prob, tree, end_id);
        if (ws->cur.n > 0 && ws->cur.score >= best->score) {
            stree_draft swap = *best;
            *best = ws->cur, ws->cur = swap;
            best->match_len = p;
        }
    }
    *out = *best;
}

void stree_speculate(const suffix_tree *t, const int *ctx, int n_ctx, int max_spec, double alpha,
                     double min_prob, int tree, int end_id, stree_spec *ws, stree_draft *out) {
    speculate(t, ctx, n_ctx, max_spec, alpha, min_prob, tree, NULL, end_id, ws, out);
}

void stree_speculate_shape(const suffix_tree *t, const int *ctx, int n_ctx, int max_spec,
                           double alpha, const stree_shape *shape, int end_id, stree_spec *ws,
                           stree_draft *out) {
    speculate(t, ctx, n_ctx, max_spec, alpha, 0, 1, shape, end_id, ws, out);
}

/* ---- the state file ----------------------------------------------------------------------- */

static const char MAGIC[8] = {'D', 'B', 'S', 'U', 'F', 'F', 'X', '1'};
#define HEADER_BYTES (8 + 3 * 4)

int stree_save(const suffix_tree *t, int vocab, const char *path, long *n_seqs, long *n_tokens,
               char *err) {
    long seqs = 0;
    for (long s = 0; s < t->n_seq; s++) seqs += t->seq_len[(t->seq_head + s) % t->max_seq] > 0;
    size_t size = HEADER_BYTES + 4 * (size_t)seqs + 4 * (size_t)t->n_tok + 8;
    unsigned char *buf = malloc(size), *b = buf;
    if (!buf) return err_set(err, "%s: out of memory for %zu bytes", path, size);
    b = sf_put_head(b, MAGIC, vocab), b = sf_put_u32(b, (uint32_t)seqs);
    long at = t->ring_head;
    for (long s = 0; s < t->n_seq; s++) {
        long len = t->seq_len[(t->seq_head + s) % t->max_seq];
        if (len) b = sf_put_u32(b, (uint32_t)len);
        for (long i = 0; i < len; i++, at = (at + 1) % t->max_tokens)
            b = sf_put_u32(b, (uint32_t)t->ring[at]);
    }
    int rc = sf_write(buf, size, "suffix tree", path, err);
    free(buf);
    if (rc == 0 && n_seqs) *n_seqs = seqs;
    if (rc == 0 && n_tokens) *n_tokens = t->n_tok;
    return rc;
}

int stree_file_parse(const unsigned char *buf, size_t size, int vocab, const char *path,
                     const stree_sink *sink, char *err) {
    if (sf_check_head(buf, size, MAGIC, HEADER_BYTES, vocab, "suffix tree", path, err)) return -1;
    uint32_t fvocab = (uint32_t)vocab, n_seqs = sf_get_u32(buf + 16);
    size_t at = HEADER_BYTES, end = size - 8;
    for (uint32_t s = 0; s < n_seqs; s++) {
        if (end - at < 4)
            return err_set(err, "%s: byte %zu: truncated in sequence %u of %u", path, at, s + 1,
                           n_seqs);
        uint32_t len = sf_get_u32(buf + at);
        if (len < 1 || (end - at - 4) / 4 < len)
            return err_set(err, "%s: byte %zu: sequence %u of %u tokens, expected 1..%zu", path, at,
                           s + 1, len, (end - at - 4) / 4);
        at += 4;
        if (sink) sink->begin(sink->user);
        for (uint32_t i = 0; i < len; i++, at += 4) {
            uint32_t tok = sf_get_u32(buf + at);
            if (tok >= fvocab)
                return err_set(err, "%s: byte %zu: token %u outside the vocabulary of %u", path, at,
                               tok, fvocab);
            if (sink) sink->token(sink->user, (int)tok);
        }
    }
    return sf_check_end(buf, at, end, path, err);
}

int stree_file_write(const char *path, int vocab, const int *tok, const long *lens, long n_seqs,
                     long *n_tokens, char *err) {
    long total = 0, seqs = 0;
    for (long s = 0; s < n_seqs; s++) total += lens[s], seqs += lens[s] > 0;
    size_t size = HEADER_BYTES + 4 * (size_t)seqs + 4 * (size_t)total + 8;
    unsigned char *buf = malloc(size), *b = buf;
    if (!buf) return err_set(err, "%s: out of memory for %zu bytes", path, size);
    b = sf_put_head(b, MAGIC, vocab), b = sf_put_u32(b, (uint32_t)seqs);
    for (long s = 0, at = 0; s < n_seqs; at += lens[s++]) {
        if (lens[s]) b = sf_put_u32(b, (uint32_t)lens[s]);
        for (long i = 0; i < lens[s]; i++) b = sf_put_u32(b, (uint32_t)tok[at + i]);
    }
    int rc = sf_write(buf, size, "suffix tree", path, err);
    free(buf);
    if (rc == 0 && n_tokens) *n_tokens = total;
    return rc;
}

static void fill_begin(void *t) {
    stree_begin(t);
}
static void fill_token(void *t, int tok) {
    stree_append(t, tok);
}

int stree_load_bytes(suffix_tree *t, int vocab, const unsigned char *buf, size_t size,
                     const char *path, char *err) {
    if (stree_file_parse(buf, size, vocab, path, NULL, err)) return -1;
    stree_clear(t);
    const stree_sink fill = {fill_begin, fill_token, t};
    stree_file_parse(buf, size, vocab, path, &fill, err);
    return 0;
}

int stree_load(suffix_tree *t, int vocab, const char *path, char *err) {
    unsigned char *buf;
    size_t size = 0;
    if (sf_read(path, "suffix tree", &buf, &size, err)) return -1;
    int rc = stree_load_bytes(t, vocab, buf, size, path, err);
    free(buf);
    return rc;
}
