/* rendezvous.h: B sequences decoded by B threads, their forward passes gathered into shared
 * passes (`decbench run --batch B`).
 *
 * Each sequence runs its decoder, unchanged, in a thread of its own: the thread is only its
 * control flow. The threads take turns (a baton): one runs at a time, so no two ever compute at
 * once outside the thread pool and a pass's time is the pass's alone. A thread that reaches a
 * forward pass of a context attached to its slot (fwd_rdv_attach: fwd_set_hook) leaves the pass
 * here and hands the baton on; once every sequence in the rendezvous waits for a pass, the
 * thread holding the baton runs them all: the passes of one model (its kernel mode and pool)
 * stacked in fwd_group_eval passes, each sequence's logits and K/V bit-identical to its own
 * fwd_eval (model/forward.h), then every waiting sequence is runnable again. A sequence that
 * finishes leaves (fwd_rdv_leave), so the others never wait for it; one that is doing its own
 * work holds the baton, and the gather waits for its pass.
 *
 * Passes a group cannot take run alone, in the same turn: fwd_eval_more (a tree level over rows
 * already in scratch), a context with skipped layers or in the blas mode (fwd_groupable), a
 * pass larger than a group holds. A group pass that fails (a bad row, non-finite logits) leaves
 * its contexts as a failed fwd_eval does; each of its parts then runs alone, so a sequence's
 * error is its own pass's, as without the rendezvous. */
#ifndef MODEL_RENDEZVOUS_H
#define MODEL_RENDEZVOUS_H

#include "model/forward.h"

typedef struct fwd_rdv fwd_rdv;

/* Rows a group pass holds at most: larger gathers run as several group passes. */
#define FWD_RDV_GROUP_ROWS 512

/* A rendezvous of up to max_seqs sequence slots (1..FWD_RDV_MAX_SEQS). */
#define FWD_RDV_MAX_SEQS 256
int fwd_rdv_new(fwd_rdv **out, int max_seqs, char *err);
/* No thread may be inside (all left). Detach the contexts first or free them before. */
void fwd_rdv_free(fwd_rdv *r);

/* Every pass of c now goes through r as slot's (fwd_set_hook); c's pool, model and kernel mode
 * choose its group. A context belongs to one slot; fwd_set_hook(c, NULL) detaches it. */
void fwd_rdv_attach(fwd_rdv *r, fwd_ctx *c, int slot);

/* Slot's sequence joins (from any thread): it will get the baton in its turn. A caller that
 * starts several sequences joins them all before their threads enter, so that their first
 * passes are gathered together. */
void fwd_rdv_join(fwd_rdv *r, int slot);
/* The calling thread is slot's sequence (joined here if it was not): returns once it holds the
 * baton. */
void fwd_rdv_enter(fwd_rdv *r, int slot);
/* The sequence of slot is done (it holds the baton): hands the baton on, running the passes the
 * others wait for if no one else can run. */
void fwd_rdv_leave(fwd_rdv *r, int slot);

/* Of slot's passes of model m (since fwd_rdv_reset), its prompt passes (fwd_prefill's) left
 * out: how many ran, and the rows of all the sequences in them (its own included, and other
 * sequences' prompt rows sharing them): rows / passes is the mean rows a pass. */
void fwd_rdv_counts(fwd_rdv *r, int slot, const model *m, long *passes, long *rows);
void fwd_rdv_reset(fwd_rdv *r, int slot);

#endif
