/* token_tree.h: greedy verification of a token tree that one target pass evaluated (the tree
 * decoder's draft trees, suffix decoding's speculation trees, Token Recycling's static trees).
 *
 * The pass's rows 0..n-1 hold the current token at row 0 (the root) and the candidate tokens
 * below it, parents before children (parent[r] < r for r > 0, parent[0] = -1), siblings with
 * distinct tokens; top[r] is the target's token after row r's root-to-r path (greedy: the
 * argmax of its logits). The accepted path follows, from the root, the child whose token is
 * its parent's top, as long as there is one, and stops right after an accepted end token. By
 * the forward pass's batch invariance every accepted token, and the target's token after the
 * last of them (the bonus), is what greedy decoding emits. */
#ifndef DECODERS_TOKEN_TREE_H
#define DECODERS_TOKEN_TREE_H

/* Finds the accepted path: path[0..*n_path) receives its rows, the root first (what
 * fwd_commit takes), emit[] the tokens to emit: the accepted nodes' tokens, then the bonus
 * top[last row] unless an end token (end_id) was accepted. Returns how many tokens to emit;
 * the accepted nodes are *n_path - 1 of them. path and emit need room for n. */
int token_tree_accept(int n, const int *tok, const int *parent, const int *top, int end_id,
                      int *path, int *n_path, int *emit);

/* The tree verified as the decoder's sampling settings say: at temperature 0 each row's argmax
 * and token_tree_accept; above 0 dec_tree_walk (dec_impl.h) with the candidates taken as fixed
 * guesses (they are functions of the prefix: a draft's top-k, a suffix tree's counts), which
 * the coupled pick verifies by a match and standard sampling by the multi-candidate rule for
 * deterministic candidates (SpecInfer; LADE), so the emitted tokens are plain sampling's, or
 * distributed as them. logits: n rows of the target's vocabulary; root_pos: the position of
 * row 0's token; scratch: 2 n ints. Returns the tokens to emit and fills path and n_path as
 * token_tree_accept does. */
struct dec;
int token_tree_verify(struct dec *d, int n, const int *tok, const int *parent,
                      const float *logits, int root_pos, int *scratch, int *path, int *n_path,
                      int *emit);

/* token_tree_verify for a tree whose children were DRAWN from a draft model (standard sampling
 * only: the tree decoder's draw=1): drow[r] is the row of dl holding the draft distribution
 * row r was drawn from (its parent's), and every proposal at a node is tested, duplicates
 * included, by SpecInfer's multi-step speculative sampling (dec_accept_node with draft rows:
 * accept x with min(1, p'(x) / q(x)), else p' <- norm(max(0, p' - q))), which keeps plain
 * sampling's distribution when the siblings are independent draws from q. */
int token_tree_verify_drawn(struct dec *d, int n, const int *tok, const int *parent,
                            const float *logits, int root_pos, const int *drow, const float *dl,
                            int *scratch, int *path, int *n_path, int *emit);

/* Counts a verified tree's acceptance by sibling rank into the decoder's counters: for each
 * accepted row (path[1..n_path)) of rank r, counter first_accept + min(r, 3); for each row whose
 * parent is on the path (the candidates the verifier compared below a node it reached, the
 * accepted ones among them), counter first_offered + min(r, 3). rank[row] is row's sibling rank
 * (rows 1..n-1; row 0 is the root); on_path is scratch of n ints. accept / offered per rank is
 * the acceptance Sequoia's positional model takes (decoders/sequoia.h), from any tree shape. */
void token_tree_count_ranks(struct dec *d, int n, const int *parent, const int *path, int n_path,
                            const int *rank, int first_accept, int first_offered, int *on_path);

/* The depth of the tree's deepest row (0: the root alone): the "drafted" length of a step,
 * its longest path (stats/stats.h). */
int token_tree_depth(int n, const int *parent, int *depth_scratch);

#endif
