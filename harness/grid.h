/* grid.h: the parameter grid of `decbench sweep --grid SPEC`.
 *
 *   SPEC   = NAME[:KEY=VALUES[;KEY=VALUES]...]
 *   VALUES = ITEM[,ITEM]...      ITEM = INT | INT..INT (inclusive, ascending) | WORD
 *          | OTHER_KEY           a tie: the key takes OTHER_KEY's value at every point
 *
 *   lookahead:W=1,2,4,8,16;N=2,3,5,7;G=W     20 points, G always equal to W
 *   spec:gamma=1..8                          8 points
 *   ouroboros:K=0,1,3,5;warm=0,1             8 points
 *
 * Keys are separated by ';' because ',' separates values (as in a decoder spec: quote the
 * argument in the shell). A value that is exactly the name of another key of the same grid
 * is a tie; WORDs are otherwise passed through (enum values such as refill=lade). The grid
 * knows nothing of the decoders: dec_create() checks names, keys and ranges of every point.
 *
 * Points are the cartesian product of the untied keys, the FIRST key varying slowest (the
 * order of nested loops written in the order given), so the order is stable and readable. */
#ifndef HARNESS_GRID_H
#define HARNESS_GRID_H

#include <stddef.h>

#define GRID_MAX_KEYS 16
#define GRID_MAX_VALUES 256  /* values of one key */
#define GRID_MAX_POINTS 4096 /* a typo such as 1..100000 should fail, not run for a week */
#define GRID_NAME_LEN 32

typedef struct {
    char name[GRID_NAME_LEN]; /* decoder name */
    int n_keys;
    char key[GRID_MAX_KEYS][GRID_NAME_LEN];
    int tie[GRID_MAX_KEYS]; /* index of the key this one follows (a root, never tied), or -1 */
    int n_values[GRID_MAX_KEYS];
    char *values[GRID_MAX_KEYS]; /* n_values[k] strings of GRID_NAME_LEN bytes each (owned) */
} grid;

/* Parses spec into g. Returns 0, or -1 with a one-line message in err (ERR_LEN): empty
 * decoder name, KEY without '=', empty value, duplicate key, bad or descending range, a tie
 * to an unknown key or to itself, too many points. On failure g holds nothing to free. */
int grid_parse(grid *g, const char *spec, char *err);

/* Number of points (product of the untied keys' value counts; 1 for a grid without keys). */
long grid_points(const grid *g);

/* Writes point i (0 <= i < grid_points) as a decoder spec "name:K=v,K=v" (keys in the order
 * given) into out. Returns 0, or -1 if i is out of range or out is too short. */
int grid_point(const grid *g, long i, char *out, size_t n);

void grid_free(grid *g);

#endif
