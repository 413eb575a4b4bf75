/* clock.h: monotonic wall time for measurements. */
#ifndef UTIL_CLOCK_H
#define UTIL_CLOCK_H

#include <time.h>

/* Seconds on the monotonic clock (arbitrary origin): subtract two readings. */
static inline double clock_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
