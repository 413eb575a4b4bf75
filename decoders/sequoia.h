/* sequoia.h: the Sequoia tree shape (Chen, May, Svirschevski, Huang, Ryabinin, Jia, Chen,
 * "Sequoia: Scalable, Robust, and Hardware-aware Speculative Decoding", arXiv 2402.12374,
 * section 3.1): the static token tree of at most n draft nodes and depth D that maximises the
 * expected number of accepted tokens, by dynamic programming over the acceptance by sibling
 * rank, and the budget n that maximises tokens per second on a measured cost curve
 * (section 3.3, the hardware-aware optimizer).
 *
 * The model ("positional acceptance"): below any node the verifier reaches, the target's next
 * token is the draft's rank-r candidate with probability p[r], whatever the depth and the
 * path, and the events of different ranks exclude each other (one token follows). A tree's
 * expected tokens per step, counting the root (the bonus token the target always adds), is
 * then F(T) = 1 + sum over the root's children c of p[rank(c)] F(subtree(c)): F of a chain of
 * first choices is 1 + p0 + p0^2 + ..., and the expected accepted tokens are F - 1.
 *
 * The recurrence (section 3.1, with the children's ranks any subset of 0..K-1 rather than a
 * prefix, so a measured vector that is not decreasing is still optimised exactly):
 *   V(m, d)    = 1 + G(d, 0, m - 1)    the best F of at most m nodes, the root included,
 *                                      depth at most d (V(m, 0) = 1)
 *   G(d, r, m) = the best sum over ranks >= r of p[rank] V(size, d - 1) on at most m nodes:
 *                max(G(d, r + 1, m), max over s = 1..m of p[r] V(s, d - 1) + G(d, r + 1, m - s))
 * in O(D K n^2) time; ties go to fewer nodes (a rank of acceptance 0 is never offered). The
 * tree is returned breadth-first (parents before children, depth by depth), each node with its
 * parent and its rank below that parent: the node of rank r below a parent stands for the
 * drafter's r-th most likely next token after the parent's path. */
#ifndef DECODERS_SEQUOIA_H
#define DECODERS_SEQUOIA_H

#define SEQUOIA_MAX_RANKS 16   /* acceptance values (sibling ranks) at most */
#define SEQUOIA_MAX_NODES 1024 /* draft nodes at most */
#define SEQUOIA_MAX_DEPTH 64

typedef struct {
    int parent; /* index in the same array, -1: the root (the current token) */
    int rank;   /* 0: the best candidate below the parent */
    int depth;  /* 1: a child of the root */
} sequoia_node;

/* Parses an acceptance vector "P0/P1/..." (1..SEQUOIA_MAX_RANKS numbers in [0, 1] whose sum is
 * at most 1) into p[], *k its length. what names the source in messages ("tree: accept"). */
int sequoia_parse_accept(const char *s, const char *what, double *p, int *k, char *err);

/* The best tree of at most n draft nodes (the root not counted) and depth at most depth for
 * acceptance p[0..k): out[0..*n_out) (out has room for n), *expected its expected accepted
 * tokens per step (F - 1, the bonus not counted). Errors: p outside [0, 1] or summing to more
 * than 1, k outside 1..SEQUOIA_MAX_RANKS, n outside 1..SEQUOIA_MAX_NODES, depth outside
 * 1..SEQUOIA_MAX_DEPTH, out of memory. */
int sequoia_tree(const double *p, int k, int n, int depth, sequoia_node *out, int *n_out,
                 double *expected, char *err);

/* sequoia_tree for a vector given as text: accept parsed as sequoia_parse_accept does (what names
 * it in messages), its ranks cut to the first max_ranks (0: all of them); *out receives a
 * malloc'd array of the tree's *n_out nodes (free() it), NULL on error. The decoders that lay
 * Sequoia's shape on their drafts (tree, recycle, suffix, rest) make it with this. */
int sequoia_tree_text(const char *accept, const char *what, int max_ranks, int n, int depth,
                      sequoia_node **out, int *n_out, char *err);

/* Laying the shape on a decoder's own tree (suffix trees, REST's trie): the child of sibling
 * rank `rank` (0: the first in before's order) among the siblings first, next(ctx, first), ...
 * (0 ends the list), or 0 when there are no more than `rank` of them (rank <
 * SEQUOIA_MAX_RANKS). One pass over the list, keeping its best rank + 1 in order. */
int sequoia_child_of_rank(const void *ctx, int first, int (*next)(const void *ctx, int c),
                          int (*before)(const void *ctx, int a, int b), int rank);

/* The hardware-aware choice: the budget n in 1..n_max and depth limit d in 1..depth that
 * maximise (expected accepted + 1) / (cost[n] + d draft_cost), cost[i] the seconds of one
 * target pass of i + 1 rows (i = 0..n_cost-1; n_max is cut to n_cost - 1) and draft_cost the
 * seconds the drafter spends per depth of the tree (0: the drafter is free, as Token
 * Recycling's matrix). Gives the best n, d, its expected accepted tokens and its tokens per
 * second; ties go to the smaller n, then the smaller d. */
typedef struct {
    int n, depth;
    double expected, tokens_per_s;
} sequoia_pick;
int sequoia_budget(const double *p, int k, int n_max, int depth, const double *cost, int n_cost,
                   double draft_cost, sequoia_pick *best, char *err);

#endif
