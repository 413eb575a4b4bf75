/* test_balance.c: the shares of a one-row product's rows (model/balance.h). Every split covers
 * the units once, in order, whatever the lead and piece count, each piece at least one unit
 * where there are enough; the lead moves toward the piece that finished later, stays within its
 * bounds, and moves only when each piece ran on its own thread; DECBENCH_BALANCE's values parse
 * or are refused, naming the variable. (test_forward checks that uneven pieces change no bit.) */
#include <string.h>

#include "model/balance.h"
#include "tests/testutil.h"
#include "util/err.h"

static void test_split(void) {
    const float leads[] = {-1.0f, -0.25f, -0.1f, 0.0f, 0.03f, 0.25f, 1.0f};
    int bad = 0;
    for (int units = 0; units <= 70; units++)
        for (int pieces = 1; pieces <= 5; pieces++)
            for (size_t l = 0; l < sizeof leads / sizeof leads[0]; l++) {
                int at = 0;
                for (int i = 0; i < pieces; i++) {
                    int u0, u1;
                    balance_split(units, pieces, leads[l], i, &u0, &u1);
                    bad += u0 != at || u1 < u0 || (units >= pieces && u1 == u0);
                    at = u1;
                }
                bad += at != units;
            }
    CHECK_MSG(bad == 0, "%d splits leave a gap, overlap or an empty piece", bad);
    int u0, u1;
    balance_split(8, 2, 0.0f, 0, &u0, &u1);
    CHECK(u0 == 0 && u1 == 4);
    balance_split(8, 2, 0.25f, 0, &u0, &u1);
    CHECK(u1 == 6);
    balance_split(8, 2, -0.25f, 1, &u0, &u1);
    CHECK(u0 == 2 && u1 == 8);
    balance_split(9, 3, 0.1f, 2, &u0, &u1); /* first 4 (3.9 rounded), the other 5 as 3 and 2 */
    CHECK(u1 == 9 && u1 - u0 == 2);
}

static void test_update(void) {
    float lead = 0;
    balance_run r = {.start = 1000, .end = {2000, 3000}, .thread = {0, 1}};
    balance_update(&lead, 2, &r); /* the other piece ended later: the first takes more */
    CHECK(lead > 0.06f && lead < 0.07f);
    r.end[0] = 3000, r.end[1] = 2000;
    float back = lead;
    balance_update(&back, 2, &r);
    CHECK(back < lead);
    r.thread[0] = 1, r.thread[1] = 0; /* the pieces ran on each other's threads: no move */
    float same = 0.1f;
    balance_update(&same, 2, &r);
    CHECK(same == 0.1f);
    r.thread[0] = 0, r.thread[1] = 0; /* the caller ran both */
    balance_update(&same, 2, &r);
    CHECK(same == 0.1f);
    balance_run far = {.start = 0, .end = {1, 1000000}, .thread = {0, 1}};
    float top = 0;
    for (int i = 0; i < 100; i++) balance_update(&top, 2, &far);
    CHECK(top == 0.25f);
    balance_run three = {.start = 0, .end = {100, 200, 150}, .thread = {0, 2, 1}};
    float l3 = 0;
    balance_update(&l3, 3, &three); /* workers in any order; the last of them counts */
    CHECK(l3 > 0);
}

static void test_init(void) {
    char err[ERR_LEN];
    balance b;
    CHECK(balance_init(&b, NULL, err) == 0 && b.learn);
    float *a = balance_lead(&b, 768, 768, 3), *c = balance_lead(&b, 2048, 768, 2);
    CHECK(a != c && *a == 0 && balance_lead(&b, 768, 768, 3) == a);
    for (int i = 0; i < 3 * BALANCE_SHAPES; i++) balance_lead(&b, 100 + i, 1, 1);
    CHECK(b.used == BALANCE_SHAPES);
    CHECK(balance_init(&b, "0", err) == 0 && !b.learn && b.fixed == 0);
    CHECK(balance_init(&b, "-0.25", err) == 0 && !b.learn && b.fixed == -0.25f);
    CHECK(*balance_lead(&b, 768, 768, 3) == -0.25f);
    const char *bad[] = {"", "x", "0.3", "-0.26", "0.1x", "nan"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        CHECK_MSG(balance_init(&b, bad[i], err) != 0 && strstr(err, "DECBENCH_BALANCE="),
                  "DECBENCH_BALANCE=%s accepted", bad[i]);
    }
}

int main(void) {
    test_split();
    test_update();
    test_init();
    return test_finish("test_balance");
}
