/* draft_head.h: a learned drafter's head (an EAGLE head, eagle_head.h, or Medusa heads,
 * medusa_head.h) behind one small interface that runs the passes eagle and medusa trace as
 * draft passes, for measuring their cost (`decbench cost --head`, harness/cost_head.c) without
 * the harness reaching the decoders' own headers.
 *
 * A pass has the meaning of the trace's draft pass of each decoder:
 *   EAGLE   `rows` rows appended after `context` rows of the head's own cache, `logit_rows` of
 *           them read out by the target's classifier (eagle's appends compute one row's logits,
 *           its tree levels every row's: the cost is the same for a level of that many rows);
 *   Medusa  `rows` heads run on one hidden state, each its ResBlocks and its own classifier
 *           (logit rows = rows; no attention: the context does not matter). */
#ifndef DECODERS_DRAFT_HEAD_H
#define DECODERS_DRAFT_HEAD_H

#include <stdint.h>

#include "model/model.h"
#include "model/tpool.h"

enum { DRAFT_HEAD_EAGLE = 1, DRAFT_HEAD_MEDUSA = 2 };

typedef struct draft_head draft_head;

typedef struct {
    int kind;          /* DRAFT_HEAD_EAGLE or DRAFT_HEAD_MEDUSA */
    int heads;         /* Medusa: the heads in the file; EAGLE: 1 */
    int64_t bytes;     /* the head's own weights (EAGLE: without the target's classifier) */
    double macs_row;   /* multiply-adds of a pass per row (EAGLE) or per head (Medusa) */
    double macs_logit; /* per logit row (EAGLE: the target's classifier; Medusa: in macs_row) */
    double bytes_read; /* weight bytes a pass reads (EAGLE: head + classifier; Medusa: a head) */
    const char *file;  /* the head's safetensors file (for messages and stored runs) */
} draft_head_info;

/* Which head DIR holds, from its safetensors file's name; -1 and one line naming both files
 * when it holds neither. */
int draft_head_kind(const char *dir, char *err);

/* Loads the head in DIR for target (refused, one line, when it does not fit the target), with
 * room for passes of up to max_rows rows. pool may be NULL. */
int draft_head_open(draft_head **out, const char *dir, const model *target, tpool *pool,
                    int max_rows, char *err);
void draft_head_free(draft_head *h);
const draft_head_info *draft_head_info_of(const draft_head *h);

/* EAGLE: fills the head's cache with `context` rows of random tokens and features (the values
 * do not change a pass's time); the passes then run after them. Medusa: nothing to do. */
int draft_head_reach(draft_head *h, int context, char *err);

/* One pass (above) after the reached context. */
int draft_head_pass(draft_head *h, int rows, int logit_rows, char *err);

#endif
