/* stats.c: the framework counters' table and accessors, generated from STAT_COUNTERS. */
#include "stats/stats.h"

#include <string.h>

/* The kind follows from the C type: counts are integers, times are real. */
#define STAT_KIND_int STAT_INT
#define STAT_KIND_long STAT_INT
#define STAT_KIND_double STAT_REAL

const stat_def stat_counters[STAT_N_COUNTERS] = {
#define STAT_ROW_(name, type, agg, det, def) {#name, STAT_KIND_##type, STAT_##agg, STAT_##det, def},
    STAT_COUNTERS(STAT_ROW_)
#undef STAT_ROW_
};

double stat_value(const dec_stats *s, int i) {
    switch (i) {
#define STAT_CASE_(name, type, agg, det, def)                                                      \
    case STAT_##name:                                                                              \
        return (double)s->name;
        STAT_COUNTERS(STAT_CASE_)
#undef STAT_CASE_
    }
    return 0;
}

const stat_derived_def stat_derived[STAT_N_DERIVED] = {
#define STAT_DROW_(name, c, sql, def) {#name, sql, def},
    STAT_DERIVED(STAT_DROW_)
#undef STAT_DROW_
};

double stat_derived_value(const dec_stats *s, int i) {
    switch (i) {
#define STAT_DCASE_(name, c, sql, def)                                                             \
    case STAT_D_##name:                                                                            \
        return c;
        STAT_DERIVED(STAT_DCASE_)
#undef STAT_DCASE_
    }
    return 0;
}

const char *stat_agg_name(stat_agg a) {
    return a == STAT_MEAN ? "mean" : a == STAT_MAX ? "max" : "sum";
}

const char *stat_agg_sql(stat_agg a) {
    return a == STAT_MEAN ? "AVG" : a == STAT_MAX ? "MAX" : "SUM";
}

const char *stat_det_name(stat_det d) {
    return d == STAT_VARIES ? "varies" : "det";
}

int stat_find(const char *name) {
    for (int i = 0; i < STAT_N_COUNTERS; i++)
        if (!strcmp(stat_counters[i].name, name)) return i;
    return -1;
}
