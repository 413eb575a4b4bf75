/* suffix_tree.h: the suffix trees of SuffixDecoding (Oliaro et al., "SuffixDecoding: Extreme
 * Speculative Decoding for Emerging AI Applications", NeurIPS 2025, arXiv 2411.04975, section
 * 4.1): token sequences (a prompt and its output, or every output of a run) indexed by every
 * substring of up to `depth` tokens, each node counting how often its substring occurs, and
 * the speculation tree grown from them (section 4.2).
 *
 * Structure: a trie of the substrings of length <= depth (no path compression, unlike the
 * reference's suffix tree, ArcticInference csrc/suffix_decoding: a node is one token, which
 * keeps insertion and removal simple; the memory bound below makes up for the extra nodes).
 * count(node) = occurrences of its substring, which is what the reference counts ("suffixes
 * that end at or pass through the node"). Appending a token to the newest sequence extends
 * the <= depth suffixes that end at it: O(depth) hash lookups.
 *
 * Memory is fixed when the tree is created and never grows: at most max_nodes nodes and
 * max_tokens stored tokens (the sequences themselves, needed to remove them): 5 ints per
 * node, 2 to 4 hash slots of one int per node and one int per stored token, 32-40 bytes per
 * node when max_tokens = max_nodes. When an append needs room, whole sequences are removed oldest
 * first (FIFO, as the reference's suffix_cache_max_requests evicts requests), their substrings'
 * counts decremented and emptied nodes freed; when the newest sequence is the only one left, it
 * stops growing instead (stree_frozen).
 *
 * Speculation (stree_speculate, after the reference's SuffixTree::speculate and
 * _speculate_tree): for each pattern length p = 1, 2, ... (the last p tokens of the context,
 * p < min(context, depth)) whose node exists, grow a tree below it greedily by estimated
 * probability: a candidate's probability is its parent's times count(candidate) /
 * count(parent), the most probable candidate is taken next, candidates below min_prob are
 * dropped, and at most min(max_spec, floor(alpha p)) tokens are taken (MAX_SPEC = alpha p,
 * section 4.2); the tree's score is the sum of its probabilities, and the highest-scoring
 * pattern length wins (ties: the longer pattern). Ties between candidates are broken by the
 * draft order of their parents, then the lower token id: nothing depends on node numbering or
 * insertion order, so a tree rebuilt from its saved sequences speculates exactly as the
 * original did.
 *
 * State file (stree_save / stree_load), little-endian uint32s unless said otherwise:
 *   bytes 0..7   magic "DBSUFFX1"
 *   version      1
 *   vocab        tokens are 0..vocab-1
 *   n_seqs       sequences, oldest first
 *   n_seqs x     length (>= 1), then length tokens
 *   uint64       FNV-1a (util/hash.h) of every byte before it
 * and nothing after. Loading rebuilds the tree by appending the sequences in order (a tree
 * smaller than the file's keeps its newest sequences). */
#ifndef DECODERS_SUFFIX_TREE_H
#define DECODERS_SUFFIX_TREE_H

#include <stddef.h>

typedef struct suffix_tree suffix_tree;

/* A tree of substrings up to depth tokens long, within max_nodes nodes and max_tokens stored
 * tokens (all allocated here). */
int stree_new(suffix_tree **out, int depth, int max_nodes, long max_tokens, char *err);
void stree_free(suffix_tree *t);
/* Removes every sequence. */
void stree_clear(suffix_tree *t);

/* Starts a new (empty) sequence: the next appends extend it. */
void stree_begin(suffix_tree *t);
/* Appends token to the newest sequence, removing the oldest sequences while room is short.
 * Returns 1 (and adds nothing) when the newest sequence alone fills the tree: it is frozen
 * until the next stree_begin. */
int stree_append(suffix_tree *t, int token);

int stree_nodes(const suffix_tree *t);    /* nodes in use (the root not counted) */
long stree_tokens(const suffix_tree *t);  /* tokens stored */
int stree_seqs(const suffix_tree *t);     /* sequences stored (an empty newest one included) */
long stree_evicted(const suffix_tree *t); /* sequences removed to make room, since creation */
int stree_frozen(const suffix_tree *t);   /* the newest sequence stopped growing */
/* Occurrences of s[0..n) in the stored sequences (0 when absent, or n is not 1..depth). */
int stree_count(const suffix_tree *t, const int *s, int n);

/* A speculation tree: n tokens, parents first (parent[i] < i, -1: below the current token),
 * prob[i] the estimated probability of reaching token i; score = sum of prob; match_len the
 * pattern length it grew from (0: none). Arrays of max_spec entries, owned by the workspace. */
typedef struct {
    int n, *tok, *parent;
    double *prob, score;
    int match_len;
    int *rank; /* stree_speculate_shape: each token's sibling rank below its parent (-1 else) */
} stree_draft;

/* Scratch for stree_speculate (no allocation per call): drafts of up to max_spec tokens with
 * min_prob down to min_prob_floor (which bounds the candidates one node can add). */
typedef struct stree_spec stree_spec;
int stree_spec_new(stree_spec **out, int max_spec, double min_prob_floor, char *err);
void stree_spec_free(stree_spec *s);

/* Grows the best speculation tree for the context ctx[0..n_ctx) (its last token is the
 * current one) into *out (out's arrays are the workspace's: valid until its next call). At
 * most max_spec (<= the workspace's) tokens, max_spec_factor alpha (MAX_SPEC = alpha x pattern
 * length), candidates of estimated probability >= min_prob; tree = 0 grows a single path (the
 * most frequent continuation, ArcticInference's default). Nothing grows below end_id. */
void stree_speculate(const suffix_tree *t, const int *ctx, int n_ctx, int max_spec, double alpha,
                     double min_prob, int tree, int end_id, stree_spec *ws, stree_draft *out);

/* A fixed tree shape (decoders/sequoia.h's trees): n nodes, parents first (parent[j] < j, -1:
 * below the current token), rank[j] the sibling rank node j stands for (a rank of
 * SEQUOIA_MAX_RANKS or more, which decoders/sequoia.h's trees never have, matches no child). */
typedef struct {
    int n;
    const int *parent, *rank;
} stree_shape;

/* As stree_speculate, but each pattern length's tree is the shape laid on the suffix tree: shape
 * node j is the rank[j]-th most frequent continuation (ties: the lower token) below its parent's
 * token, dropped with its subtree where there is none or the parent is end_id; at most
 * min(max_spec, alpha x pattern length, shape->n) tokens (the shape's first ones). Probabilities
 * and scores as stree_speculate's (so the pattern lengths compete as there); min_prob is not
 * applied (the shape decides the width). */
void stree_speculate_shape(const suffix_tree *t, const int *ctx, int n_ctx, int max_spec,
                           double alpha, const stree_shape *shape, int end_id, stree_spec *ws,
                           stree_draft *out);

/* Writes the tree's sequences to path (through path.tmp and a rename); vocab goes into the
 * header. *n_seqs / *n_tokens (may be NULL) receive what was written. */
int stree_save(const suffix_tree *t, int vocab, const char *path, long *n_seqs, long *n_tokens,
               char *err);
/* Replaces the tree's sequences by the file's. The whole file is checked first (magic,
 * version, vocabulary, lengths, tokens, checksum): on error the tree is unchanged and err
 * names the file, the byte offset and what was expected. */
int stree_load(suffix_tree *t, int vocab, const char *path, char *err);
/* The same for a file's bytes (the fuzz target's entry); path names it in messages. */
int stree_load_bytes(suffix_tree *t, int vocab, const unsigned char *buf, size_t size,
                     const char *path, char *err);

/* The state file's sequences without a tree, for other decoders that keep token sequences in the
 * same format (sam's datastore). stree_file_parse checks buf as stree_load_bytes does, calling
 * sink->begin before each sequence and sink->token for each of its tokens as it goes (sink
 * NULL: check only; a sink sees a prefix of the sequences when the check then fails).
 * stree_file_write writes n_seqs sequences, lens[i] tokens each, concatenated in tok (empty
 * ones left out), through path.tmp and a rename; *n_tokens (may be NULL) the tokens written. */
typedef struct {
    void (*begin)(void *user);
    void (*token)(void *user, int token);
    void *user;
} stree_sink;
int stree_file_parse(const unsigned char *buf, size_t size, int vocab, const char *path,
                     const stree_sink *sink, char *err);
int stree_file_write(const char *path, int vocab, const int *tok, const long *lens, long n_seqs,
                     long *n_tokens, char *err);

#endif
