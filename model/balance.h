/* balance.h: how a one-row product's rows are shared between threads that do not finish
 * together.
 *
 * A one-row product gives each thread one contiguous piece (forward.c, mm_run): it streams its
 * rows best whole, and stealing rows back and forth gained nothing there. Even pieces finish
 * together only if every thread starts at once and runs at one speed. Neither holds: the
 * caller publishes the job and starts at once, while a worker sees it a cache-line transfer
 * later (about 1 us between two vCPUs of a Zen 5 VM, a 1.9 us round trip), and two cores of a
 * VM (or a hybrid CPU's performance and efficiency cores) stream at different rates: on the Zen
 * 5 VM one vCPU took 15% longer for the same pieces, which vCPU depending on the run. So each
 * thread waited at every join, about a tenth of a one-row pass of the 110M preset
 * (docs/measurements/2026-12-02-zen5-balance.md).
 *
 * A balance learns, per product shape, how much more than an even share the first piece (the
 * one the caller claims) should take: after each product whose pieces ran one a thread, the
 * first piece's end is compared with the last of the others', and the lead moves by a fraction
 * of the gap. Which thread computes which rows changes no bit (every row is computed by the same
 * code whoever runs it), so this is a matter of time only.
 *
 * DECBENCH_BALANCE sets it per process: unset, the leads are learned; a number in [-0.25, 0.25]
 * is every product's lead, fixed (0: even pieces; the tests force both ends to check that no
 * split changes a bit). */
#ifndef MODEL_BALANCE_H
#define MODEL_BALANCE_H

#include <stdint.h>

/* Product shapes a balance remembers (a layer's products are the same few shapes in every
 * layer: Q/K/V, output, gate and up, down, the classifier) */
#define BALANCE_SHAPES 8
/* Pieces whose ends a product records (balance_update ignores wider products) */
#define BALANCE_MAX_PIECES 16

typedef struct {
    struct {
        int rows, cols, jobs;
        float lead; /* the first piece's share of the rows beyond 1 / pieces */
    } shape[BALANCE_SHAPES];
    int used, next;
    int learn; /* 0: every lead is `fixed` */
    float fixed;
} balance;

/* From DECBENCH_BALANCE's value (NULL: unset): 0, or -1 with err set for a value that is not a
 * number in [-0.25, 0.25]. */
int balance_init(balance *b, const char *env, char *err);

/* One product's record: when it started, and each piece's end and thread (-1: not yet). */
typedef struct {
    uint64_t start, end[BALANCE_MAX_PIECES];
    int thread[BALANCE_MAX_PIECES];
} balance_run;

/* A clock for ends (ticks of the CPU's time-stamp counter on x86, else nanoseconds). */
uint64_t balance_now(void);

/* The lead of a product shape, added at 0 (an even split) on first use; the fixed lead when
 * leads are not learned (then balance_update must not be called with it). */
float *balance_lead(balance *b, int rows, int cols, int jobs);

/* Piece i of `pieces` over `units` units: [*u0, *u1), the first piece 1 / pieces + lead of
 * them (at least one unit a piece where there are enough), the others even shares of the rest. */
void balance_split(int units, int pieces, float lead, int i, int *u0, int *u1);

/* After a product of `pieces` pieces recorded in r: moves *lead toward equal ends when piece 0
 * ran on the caller (thread 0, which claims first) and every other piece on a worker. With two
 * threads that is piece i on thread i; with more, the workers' claims are in any order, so the
 * caller's piece is compared with the last of theirs. */
void balance_update(float *lead, int pieces, const balance_run *r);

#endif
