/* tune_grid.h: the coarse grid `decbench tune` probes.
 *
 * Each decoder's vtable names its own grid (dec_vtable.tune_grid, a `sweep --grid` spec,
 * harness/grid.h): the parameter values worth trying on a CPU, cheapest first. Why those: a CPU
 * pass of T rows costs about T/4..T/2 one-row passes once T passes the bandwidth-bound range, so
 * wide windows and long drafts rarely pay; the papers' GPU defaults (lookahead W=15,N=5,G=15;
 * Ouroboros W=20) sit at the top. Every decoder of the registry takes part: one without a grid
 * is probed at its defaults, so a decoder that lands without one is still tried. */
#ifndef HARNESS_TUNE_GRID_H
#define HARNESS_TUNE_GRID_H

#include <stddef.h>

/* Decoder i's grid as a sweep spec ("lookahead:W=2,4,8;..."; its bare name when it has none)
 * into buf; 1 when it has a grid, 0 when not, -1 for no decoder i. */
int tune_grid_of(int i, char *buf, size_t n);

/* Every decoder of the registry except greedy, with its points (decoder specs as written, not
 * yet validated), interleaved round-robin across decoders in registry order, those with a grid first (decoder A's first
 * point, B's first, ..., A's second, ...) so that a budget that stops the probes early still
 * leaves every decoder its cheapest settings. *points is malloc'd (strings too):
 * tune_points_free(). */
int tune_points(char ***points, int *n, char *err);
void tune_points_free(char **points, int n);

#endif
