/* suffix_automaton.h: a suffix automaton over token ids, built one token at a time, for
 * SAM-Decoding (Hu et al., "SAM Decoding: Speculative Decoding via Suffix Automaton", arXiv
 * 2411.10666, section 3; reference hyx1999/SAM-Decoding samd/sam/dyn_sam.py and
 * static_sam.py).
 *
 * The automaton of a text t[0..n) recognises exactly its substrings. Each state stands for a
 * set of substrings with the same end positions: `len` is the longest, the suffix link points
 * to the state of the longest suffix outside the set, and `first_end` is the position of the
 * last token of the substring's first occurrence (the reference's min_endpos, 0-based here).
 * Appending a token is the standard online construction (Blumer et al. 1985): amortised O(1)
 * state and edge updates, at most one state cloned.
 *
 * Matching (sauto_step): a cursor (state, len) is the longest suffix of some other token stream
 * that occurs in t; stepping it by a token follows suffix links until an edge for the token
 * exists (amortised O(1) per token, as the reference's transfer_state). A cursor kept across
 * appends is renormalised with sauto_fix (an append may split the cursor's state; the
 * reference keeps the unsplit state, which walks the same edges right after the split).
 *
 * Memory is fixed when the automaton is created and never grows: a text of at most max_tokens
 * tokens has at most 2 max_tokens states (the root included) and 3 max_tokens edges, and the
 * arrays are sized for that (about 110-130 bytes per token with the edge hash); an append past
 * max_tokens adds nothing and returns 1. Any token id >= 0 is accepted. */
#ifndef DECODERS_SUFFIX_AUTOMATON_H
#define DECODERS_SUFFIX_AUTOMATON_H

typedef struct suffix_automaton suffix_automaton;

/* A match cursor: state (0 = the root, the empty string) and the matched length. */
typedef struct {
    int state, len;
} sauto_match;

/* An automaton for up to max_tokens tokens (>= 1; all memory allocated here). */
int sauto_new(suffix_automaton **out, long max_tokens, char *err);
void sauto_free(suffix_automaton *a);
/* Empties the text. */
void sauto_clear(suffix_automaton *a);
/* Appends token (>= 0). Returns 1 (and adds nothing) when the text already holds max_tokens. */
int sauto_append(suffix_automaton *a, int token);

long sauto_len(const suffix_automaton *a);   /* tokens in the text */
int sauto_states(const suffix_automaton *a); /* states, the root included (<= 2 len + 1) */
long sauto_edges(const suffix_automaton *a); /* transitions (<= 3 len) */
const int *sauto_text(const suffix_automaton *a);

/* The cursor m (a suffix matched in the text) extended by token: the longest suffix of the
 * matched string followed by token that occurs in the text ({0, 0} when none does). */
sauto_match sauto_step(const suffix_automaton *a, sauto_match m, int token);
/* m after appends: the state that now holds its length (appends never change what matches). */
sauto_match sauto_fix(const suffix_automaton *a, sauto_match m);
/* The first occurrence of state's strings: the position of its last token (-1 for the root). */
long sauto_first_end(const suffix_automaton *a, int state);
/* The suffix link of state (-1 for the root) and the longest length of its strings. */
int sauto_link(const suffix_automaton *a, int state);
int sauto_state_len(const suffix_automaton *a, int state);

#endif
