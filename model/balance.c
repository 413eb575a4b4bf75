/* balance.c: shares of a one-row product's rows between threads (see balance.h). */
#include "model/balance.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/err.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

/* The lead moves by this fraction of the gap between the ends, over the product's time. With
 * two pieces, a gap g (the first piece finishing g sooner) is closed by moving g / 4 of the rows
 * when both stream at one rate: half the gap's time goes to each side, each side holding half
 * the rows. Half of that a step, so that one noisy product moves the split little. */
#define LEAD_GAIN 0.125f
/* The most a first piece takes beyond or short of an even share. */
#define LEAD_MAX 0.25f

uint64_t balance_now(void) {
#if defined(__x86_64__) || defined(__i386__)
    return __rdtsc(); /* 11 ns here, against 26 ns for clock_gettime (a VM's kvm-clock) */
#else
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
#endif
}

int balance_init(balance *b, const char *env, char *err) {
    memset(b, 0, sizeof *b);
    b->learn = 1;
    if (!env) return 0;
    char *end;
    const float v = strtof(env, &end);
    if (end == env || *end || !(v >= -LEAD_MAX && v <= LEAD_MAX))
        return err_set(err, "DECBENCH_BALANCE=%s: not a number in [-%.2f, %.2f] (unset: learned)",
                       env, (double)LEAD_MAX, (double)LEAD_MAX);
    b->learn = 0, b->fixed = v;
    return 0;
}

float *balance_lead(balance *b, int rows, int cols, int jobs) {
    if (!b->learn) return &b->fixed;
    for (int i = 0; i < b->used; i++)
        if (b->shape[i].rows == rows && b->shape[i].cols == cols && b->shape[i].jobs == jobs)
            return &b->shape[i].lead;
    int i = b->used < BALANCE_SHAPES ? b->used++ : b->next++ % BALANCE_SHAPES;
    b->shape[i].rows = rows, b->shape[i].cols = cols, b->shape[i].jobs = jobs;
    b->shape[i].lead = 0;
    return &b->shape[i].lead;
}

void balance_split(int units, int pieces, float lead, int i, int *u0, int *u1) {
    if (pieces < 2) {
        *u0 = 0, *u1 = units;
        return;
    }
    int first = (int)((1.0f / (float)pieces + lead) * (float)units + 0.5f);
    const int most = units - (pieces - 1); /* a unit for each other piece where there are enough */
    if (first > most) first = most;
    if (first < 1) first = units >= pieces; /* one unit, or none when there are too few */
    if (i == 0) {
        *u0 = 0, *u1 = first;
        return;
    }
    const int rest = units - first, others = pieces - 1, k = i - 1;
    const int per = rest / others, extra = rest % others;
    *u0 = first + k * per + (k < extra ? k : extra);
    *u1 = *u0 + per + (k < extra ? 1 : 0);
}

void balance_update(float *lead, int pieces, const balance_run *r) {
    if (pieces < 2 || pieces > BALANCE_MAX_PIECES || r->thread[0] != 0) return;
    uint64_t last = 0;
    for (int i = 1; i < pieces; i++) {
        if (r->thread[i] < 1) return; /* run by the caller too, or not recorded */
        if (r->end[i] > last) last = r->end[i];
    }
    const uint64_t end0 = r->end[0], span = (last > end0 ? last : end0) - r->start;
    if (!span) return;
    const float gap = (float)(int64_t)(last - end0) / (float)span;
    float l = *lead + LEAD_GAIN * gap;
    *lead = l > LEAD_MAX ? LEAD_MAX : l < -LEAD_MAX ? -LEAD_MAX : l;
}
