/* test_grid.c: the spec of harness/grid.h (`decbench sweep --grid`): comma lists, ranges,
 * ties, the point order, and one-line errors for every malformed grid. */
#include <stdio.h>
#include <string.h>

#include "harness/grid.h"
#include "tests/testutil.h"
#include "util/err.h"

/* Expands spec and checks the points, joined with " | ". */
static void expands(const char *spec, long n, const char *want) {
    grid g;
    char err[ERR_LEN] = "";
    int rc = grid_parse(&g, spec, err);
    CHECK_MSG(rc == 0, "%s: %s", spec, err);
    if (rc) return;
    CHECK_MSG(grid_points(&g) == n, "%s: %ld points, want %ld", spec, grid_points(&g), n);
    char all[4096] = "", p[256];
    for (long i = 0; i < grid_points(&g); i++) {
        CHECK(grid_point(&g, i, p, sizeof p) == 0);
        snprintf(all + strlen(all), sizeof all - strlen(all), "%s%s", i ? " | " : "", p);
    }
    if (want) CHECK_MSG(!strcmp(all, want), "%s:\n  got  %s\n  want %s", spec, all, want);
    CHECK(grid_point(&g, grid_points(&g), p, sizeof p) == -1);
    CHECK(grid_point(&g, -1, p, sizeof p) == -1);
    grid_free(&g);
}

static void fails(const char *spec, const char *want) {
    grid g;
    char err[ERR_LEN] = "";
    CHECK_MSG(grid_parse(&g, spec, err) == -1, "%s should fail", spec);
    CHECK_MSG(strstr(err, want), "%s: '%s' not in: %s", spec, want, err);
    CHECK_MSG(!strchr(err, '\n'), "not one line: %s", err);
}

int main(void) {
    expands("greedy", 1, "greedy");
    expands("spec:gamma=1..4", 4, "spec:gamma=1 | spec:gamma=2 | spec:gamma=3 | spec:gamma=4");
    expands("ouroboros:K=0,1,3,5", 4,
            "ouroboros:K=0 | ouroboros:K=1 | ouroboros:K=3 | ouroboros:K=5");
    /* first key slowest; G tied to W */
    expands("lookahead:W=1,2;N=2,3;G=W", 4,
            "lookahead:W=1,N=2,G=1 | lookahead:W=1,N=3,G=1 | lookahead:W=2,N=2,G=2 | "
            "lookahead:W=2,N=3,G=2");
    /* the tie may come before the key it follows; chains resolve to the root */
    expands("lookahead:G=W;W=4,8;N=5", 2, "lookahead:G=4,W=4,N=5 | lookahead:G=8,W=8,N=5");
    expands("x:a=1,2;b=a;c=b", 2, "x:a=1,b=1,c=1 | x:a=2,b=2,c=2");
    /* the lookahead paper's scaling grid: 5 x 4 points */
    expands("lookahead:W=1,2,4,8,16;N=2,3,5,7;G=W", 20, NULL);
    /* words, mixed lists and ranges, blanks, a trailing ';' */
    expands("lookahead:refill=lade,align ; W=1..2,8;", 6,
            "lookahead:refill=lade,W=1 | lookahead:refill=lade,W=2 | lookahead:refill=lade,W=8 | "
            "lookahead:refill=align,W=1 | lookahead:refill=align,W=2 | lookahead:refill=align,W=8");
    expands("spec:gamma=-1..1", 3, "spec:gamma=-1 | spec:gamma=0 | spec:gamma=1");

    fails(":W=1", "no decoder name");
    fails("", "no decoder name");
    fails("lookahead:W", "is not KEY=VALUES");
    fails("lookahead:W=", "W has no values");
    fails("lookahead:W=,", "W has no values");
    fails("lookahead:=3", "empty key");
    fails("lookahead:W=1;W=2", "W is given twice");
    fails("spec:gamma=8..1", "descending");
    fails("spec:gamma=1..x", "two integers");
    fails("spec:gamma=1..100000", "more than 256 values");
    fails("lookahead:W=W", "ties the key to itself");
    fails("lookahead:W=G;G=W", "cycle");
    fails("lookahead:W=1,2;G=W,4", "must be the key's only value");
    fails("x:a=1..200;b=1..200", "more than 4096");
    /* a key after ',' instead of ';': said so, with the grid as meant */
    fails("lookahead:W=1,2,N=2", "grid: W=1,2,N=2: 'N=2' is another key, but keys are separated "
                                 "by ';' (W=1,2;N=2)");
    fails("lookahead:W=1,N=2;G=W", "'N=2' is another key");
    fails("lookahead:W==2", "a value holds '='");
    return test_finish("test_grid");
}
