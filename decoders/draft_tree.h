/* draft_tree.h: the token tree a drafter grows below the current token for one verifying pass
 * of the target, shared by the tree decoder (a draft model, tree.c) and EAGLE (a draft head,
 * eagle.c): its nodes, the drafter's top tokens, and EAGLE-2's dynamic growth (Li et al., "EAGLE-2:
 * Faster Inference of Language Models with Dynamic Draft Trees", arXiv 2406.16858; reference
 * SafeAILab/EAGLE, eagle/model/cnets1.py topK_genrate). The decoders keep what differs: how
 * their drafter evaluates a level, their static and shaped trees, and the verification. */
#ifndef DECODERS_DRAFT_TREE_H
#define DECODERS_DRAFT_TREE_H

typedef struct {
    int token;
    int parent;   /* node index; -1: the root (the current token) */
    int depth;    /* 1: a child of the root */
    int rank;     /* 0: the drafter's most probable child of its parent, 1 the second, ... */
    int drow;     /* its row in the drafter's scratch (a draft model's or a head's), -1: not
                   * evaluated */
    int lrow;     /* its row in the latest drafter pass's logits, -1: none */
    int trow;     /* its row in the target's pass, -1: not in the tree */
    double value; /* dynamic growth: the log-probability of its path under the drafter */
} dtree_node;

/* The nodes of one step's tree, parents before children, and the scratch of growing it. */
typedef struct {
    dtree_node *node;
    int n_node;
    int *order, *eval; /* room for every node: a sort's order, the nodes a drafter pass takes */
    int *ctok;         /* room for the widest top-k: dtree_top_tokens' tokens */
    double *clogp;     /* and their log-probabilities */
} dtree;

/* Appends a node (not evaluated, not in the target's pass); returns its index. */
int dtree_add(dtree *t, int token, int parent, int rank, double value);

/* The n most probable tokens of a row of V logits, most probable first (ties: the lower id),
 * into tok[]; with logp, their log-probabilities (log-softmax at temperature 1). n <= V. Also
 * Medusa's heads' top-k and Token Recycling's matrix rows. */
void dtree_top_tokens(const float *l, int V, int n, int *tok, double *logp);

/* The drafter of a dynamic tree. expand: one drafter pass over nodes t->eval[0..n), each a
 * child of the root or of a node evaluated before in this step; it sets their drow and lrow.
 * logits: the drafter's logits (V of them) after node parent's path, -1 the root's. */
typedef struct {
    int (*expand)(void *ctx, int n, char *err);
    const float *(*logits)(const void *ctx, int parent);
    void *ctx;
    int V;
} dtree_drafter;

/* EAGLE-2's dynamic tree into t (emptied first): the root's k most probable children, each
 * valued by its log-probability; then, for levels - 1 more levels, the newest level's k
 * best-valued nodes that are not end_id are evaluated and get their k most probable children,
 * a child's value its parent's plus its own log-probability; growth stops early when no such
 * node is left. Finally the `keep` best-valued nodes of all are marked for the target's pass
 * (trow = 0), the others not (-1). "Best-valued": the higher value first, ties to the node
 * created first (so a parent, whose value is never lower than its child's, comes before it).
 * Returns -1 (err set) when a drafter pass fails. */
int dtree_grow_dynamic(dtree *t, const dtree_drafter *dr, int levels, int k, int keep, int end_id,
                       char *err);

#endif
