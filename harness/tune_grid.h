/* tune_grid.h: the coarse grid `decbench tune` probes, one table line per decoder.
 *
 * The table (tune_grid.c) holds one `sweep --grid` spec (harness/grid.h) per decoder: the
 * parameter values worth trying on a CPU, cheapest first. Adding a decoder, or a new setting
 * of one (a dynamic draft length, say), is one line there. Every decoder of the registry takes
 * part: one without a line is probed at its defaults, so a decoder that lands without a line is
 * still tried; a line naming a decoder the registry lacks is ignored. */
#ifndef HARNESS_TUNE_GRID_H
#define HARNESS_TUNE_GRID_H

#include <stddef.h>

/* The table's grid for decoder `name`, or NULL (then: its defaults). */
const char *tune_grid_for(const char *name);

/* Every decoder of the registry except greedy, with its points (decoder specs as written, not
 * yet validated), interleaved round-robin across decoders in table order (decoder A's first
 * point, B's first, ..., A's second, ...) so that a budget that stops the probes early still
 * leaves every decoder its cheapest settings. *points is malloc'd (strings too):
 * tune_points_free(). */
int tune_points(char ***points, int *n, char *err);
void tune_points_free(char **points, int n);

#endif
