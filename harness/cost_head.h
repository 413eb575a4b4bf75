/* cost_head.h: the cost curve of a learned drafter's head pass (`decbench cost --head DIR`):
 * an EAGLE head's pass t(rows, context, logit rows) or Medusa's K heads t(K, 0, K), measured
 * over a cost grid with a target model (cost_head.c says what each point is). */
#ifndef HARNESS_COST_HEAD_H
#define HARNESS_COST_HEAD_H

#include <stdint.h>

#include "decoders/draft_head.h"
#include "harness/measure.h"
#include "model/model.h"
#include "model/tpool.h"

typedef struct {
    int kind;           /* DRAFT_HEAD_EAGLE or DRAFT_HEAD_MEDUSA (decoders/draft_head.h) */
    int heads;          /* Medusa: the heads in the file; EAGLE: 1 */
    int64_t head_bytes; /* the head's own weights (EAGLE: without the target's classifier) */
} cost_head_info;

/* Measures the head in DIR with target over g, calling fn for each point (stops when fn fails);
 * *info is filled before the first call.
 * A head that does not fit the target is refused with its loader's one-line message. */
int cost_head_grid(const char *dir, const model *target, tpool *pool, const measure_grid *g,
                   measure_point_fn fn, void *user, cost_head_info *info, char *err);

#endif
