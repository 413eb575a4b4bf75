/* tune_grid.c: the coarse grid of `decbench tune` (see tune_grid.h). */
#include "harness/tune_grid.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/decoder.h"
#include "harness/grid.h"
#include "util/err.h"

/* One line per decoder: the values worth a probe on a CPU, cheapest first (the first key varies
 * slowest). Why these: a CPU pass of T rows costs about T/4..T/2 one-row passes once T passes
 * the bandwidth-bound range (README, "Cost at scale"), so wide windows and long drafts rarely
 * pay; the papers' GPU defaults (lookahead W=15,N=5,G=15; Ouroboros W=20) sit at the top. */
static const char *const table[] = {
    "pld:ngram=2,3,4;k=4,10",
    "jacobi:window=2,4,8",
    "lookahead:W=2,4,8;N=2,3,5;G=W",
    "spec:gamma=1,2,3,4,6,8",
    "ouroboros:gamma=2,4;W=4,8;K=1,3",
    "tree:mode=static,dynamic;nodes=4,8,16",
    "suffix:budget=4,8,16",
};
#define N_TABLE (int)(sizeof table / sizeof table[0])

const char *tune_grid_for(const char *name) {
    size_t len = strlen(name);
    for (int i = 0; i < N_TABLE; i++)
        if (!strncmp(table[i], name, len) && table[i][len] == ':') return table[i];
    return NULL;
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
    /* Registry order for decoders without a line, table order first for the others. */
    int *order = malloc(sizeof(int) * (size_t)n_dec), n_order = 0;
    for (int pass = 0; order && pass < 2; pass++)
        for (int i = 0; i < n_dec; i++) {
            const char *name = dec_registry_name(i);
            if (strcmp(name, "greedy") && (tune_grid_for(name) != NULL) == !pass)
                order[n_order++] = i;
        }
    for (int k = 0; order && rc == 0 && k < n_order; k++) {
        int i = order[k];
        const char *name = dec_registry_name(i), *spec = tune_grid_for(name);
        rc = grid_parse(&g[i], spec ? spec : name, err);
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
