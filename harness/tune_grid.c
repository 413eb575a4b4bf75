/* tune_grid.c: the points of `decbench tune`'s coarse grid (see tune_grid.h). */
#include "harness/tune_grid.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/decoder.h"
#include "harness/grid.h"
#include "util/err.h"

int tune_grid_of(int i, char *buf, size_t n) {
    const char *name = dec_registry_name(i), *g = dec_registry_tune_grid(i);
    if (!name) return -1;
    if (g)
        snprintf(buf, n, "%s:%s", name, g);
    else
        snprintf(buf, n, "%s", name);
    return g != NULL;
}

void tune_points_free(char **points, int n) {
    for (int i = 0; points && i < n; i++) free(points[i]);
    free(points);
}

int tune_points(char ***out, int *n_out, char *err) {
    *out = NULL;
    *n_out = 0;
    int n_dec = dec_registry_size(), total = 0, rc = 0;
    grid *g = calloc((size_t)n_dec, sizeof *g);
    long *count = calloc((size_t)n_dec, sizeof *count);
    if (!g || !count) {
        free(g), free(count);
        return err_set(err, "out of memory");
    }
    /* Registry order, decoders with a grid first. */
    int *order = malloc(sizeof(int) * (size_t)n_dec), n_order = 0;
    char spec[1024];
    for (int pass = 0; order && pass < 2; pass++)
        for (int i = 0; i < n_dec; i++)
            if (strcmp(dec_registry_name(i), "greedy") &&
                (dec_registry_tune_grid(i) != NULL) == !pass)
                order[n_order++] = i;
    for (int k = 0; order && rc == 0 && k < n_order; k++) {
        int i = order[k];
        tune_grid_of(i, spec, sizeof spec);
        rc = grid_parse(&g[i], spec, err);
        if (rc == 0) total += (int)(count[i] = grid_points(&g[i]));
    }
    char **pts = rc == 0 && order ? calloc((size_t)total + 1, sizeof *pts) : NULL;
    if (rc == 0 && !pts) rc = err_set(err, "out of memory");
    int n = 0;
    for (long j = 0; rc == 0 && n < total; j++)
        for (int k = 0; rc == 0 && k < n_order; k++) {
            int i = order[k];
            if (j >= count[i]) continue;
            char p[1024];
            if (grid_point(&g[i], j, p, sizeof p) || !(pts[n++] = strdup(p)))
                rc = err_set(err, "tune: grid point %ld of %s: too long or out of memory", j,
                             dec_registry_name(i));
        }
    for (int k = 0; order && k < n_order; k++)
        if (count[order[k]]) grid_free(&g[order[k]]);
    free(g), free(count), free(order);
    if (rc) {
        tune_points_free(pts, n);
        return -1;
    }
    *out = pts;
    *n_out = n;
    return 0;
}
