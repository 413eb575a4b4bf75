/* grid.c: parsing and expanding `--grid` specs (grammar in grid.h). */
#include "harness/grid.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/err.h"

/* Strips leading and trailing blanks in place. */
static char *trim(char *s) {
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
    return s;
}

static int parse_long(const char *s, long *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno) return -1;
    *out = v;
    return 0;
}

static int add_value(grid *g, int k, const char *v, const char *key, char *err) {
    if (g->n_values[k] >= GRID_MAX_VALUES)
        return err_set(err, "grid: %s has more than %d values", key, GRID_MAX_VALUES);
    if (strlen(v) >= GRID_NAME_LEN) return err_set(err, "grid: %s value '%s' is too long", key, v);
    snprintf(g->values[k] + (size_t)g->n_values[k]++ * GRID_NAME_LEN, GRID_NAME_LEN, "%s", v);
    return 0;
}

/* One ITEM of a value list: INT, INT..INT or WORD. */
static int parse_item(grid *g, int k, char *item, char *err) {
    const char *key = g->key[k];
    char *dots = strstr(item, "..");
    if (!dots) return add_value(g, k, item, key, err);
    *dots = '\0';
    long a, b;
    if (parse_long(trim(item), &a) || parse_long(trim(dots + 2), &b))
        return err_set(err, "grid: %s=%s..%s: a range needs two integers", key, item, dots + 2);
    if (a > b) return err_set(err, "grid: %s=%ld..%ld: the range is descending", key, a, b);
    if (b - a >= GRID_MAX_VALUES)
        return err_set(err, "grid: %s=%ld..%ld has more than %d values", key, a, b,
                       GRID_MAX_VALUES);
    for (long v = a; v <= b; v++) {
        char buf[24];
        snprintf(buf, sizeof buf, "%ld", v);
        if (add_value(g, k, buf, key, err)) return -1;
    }
    return 0;
}

static int parse_key(grid *g, char *kv, char *err) {
    char *eq = strchr(kv, '=');
    if (!eq) return err_set(err, "grid: '%s' is not KEY=VALUES (keys are separated by ';')", kv);
    *eq = '\0';
    char *key = trim(kv), *vals = eq + 1;
    if (!*key) return err_set(err, "grid: empty key before '=%s'", vals);
    if (strlen(key) >= GRID_NAME_LEN) return err_set(err, "grid: key '%s' is too long", key);
    for (int j = 0; j < g->n_keys; j++)
        if (!strcmp(g->key[j], key)) return err_set(err, "grid: key %s is given twice", key);
    if (g->n_keys >= GRID_MAX_KEYS) return err_set(err, "grid: more than %d keys", GRID_MAX_KEYS);
    int k = g->n_keys++;
    snprintf(g->key[k], GRID_NAME_LEN, "%s", key);
    g->tie[k] = -1;
    g->values[k] = malloc((size_t)GRID_MAX_VALUES * GRID_NAME_LEN);
    if (!g->values[k]) return err_set(err, "grid: out of memory");
    /* "W=1,2,N=2": a key given after a ',' instead of a ';' would otherwise be taken as the
     * word "N=2", a value of W, and fail later as "W=N=2 is not an integer" */
    char *eq2 = strchr(vals, '=');
    if (eq2) {
        char *comma = eq2;
        while (comma > vals && *comma != ',') comma--;
        if (*comma == ',')
            return err_set(err,
                           "grid: %s=%s: '%s' is another key, but keys are separated by ';' "
                           "(%s=%.*s;%s)",
                           key, vals, trim(comma + 1), key, (int)(comma - vals), vals,
                           trim(comma + 1));
        return err_set(err, "grid: %s=%s: a value holds '='", key, vals);
    }
    char *save = NULL;
    for (char *it = strtok_r(vals, ",", &save); it; it = strtok_r(NULL, ",", &save))
        if (*trim(it) && parse_item(g, k, trim(it), err)) return -1;
    if (g->n_values[k] == 0) return err_set(err, "grid: %s has no values", key);
    return 0;
}

static int key_index(const grid *g, const char *name) {
    for (int j = 0; j < g->n_keys; j++)
        if (!strcmp(g->key[j], name)) return j;
    return -1;
}

/* A value naming another key of the grid makes a tie; follow chains to an untied root. */
static int resolve_ties(grid *g, char *err) {
    for (int k = 0; k < g->n_keys; k++)
        for (int v = 0; v < g->n_values[k]; v++) {
            const char *val = g->values[k] + (size_t)v * GRID_NAME_LEN;
            int j = key_index(g, val);
            if (j < 0) continue;
            if (j == k) return err_set(err, "grid: %s=%s ties the key to itself", g->key[k], val);
            if (g->n_values[k] != 1)
                return err_set(err, "grid: %s: a tie to %s must be the key's only value", g->key[k],
                               val);
            g->tie[k] = j;
        }
    for (int k = 0; k < g->n_keys; k++) {
        int r = g->tie[k], hops = 0;
        while (r >= 0 && g->tie[r] >= 0) {
            r = g->tie[r];
            if (++hops > g->n_keys)
                return err_set(err, "grid: the ties of %s form a cycle", g->key[k]);
        }
        g->tie[k] = r;
    }
    return 0;
}

int grid_parse(grid *g, const char *spec, char *err) {
    memset(g, 0, sizeof *g);
    char *copy = strdup(spec);
    if (!copy) return err_set(err, "grid: out of memory");
    char *colon = strchr(copy, ':');
    if (colon) *colon = '\0';
    char *name = trim(copy);
    int rc = -1;
    if (!*name) {
        err_set(err, "grid '%s': no decoder name (expected NAME:KEY=VALUES;...)", spec);
        goto done;
    }
    if (strlen(name) >= GRID_NAME_LEN) {
        err_set(err, "grid: decoder name '%s' is too long", name);
        goto done;
    }
    snprintf(g->name, sizeof g->name, "%s", name);
    char *save = NULL;
    for (char *kv = colon ? strtok_r(colon + 1, ";", &save) : NULL; kv;
         kv = strtok_r(NULL, ";", &save))
        if (*trim(kv) && parse_key(g, kv, err)) goto done;
    if (resolve_ties(g, err)) goto done;
    if (grid_points(g) > GRID_MAX_POINTS) {
        err_set(err, "grid '%s' has %ld points, more than %d", spec, grid_points(g),
                GRID_MAX_POINTS);
        goto done;
    }
    rc = 0;
done:
    free(copy);
    if (rc) grid_free(g);
    return rc;
}

long grid_points(const grid *g) {
    long n = 1;
    for (int k = 0; k < g->n_keys; k++)
        if (g->tie[k] < 0) {
            n *= g->n_values[k];
            if (n > GRID_MAX_POINTS) return GRID_MAX_POINTS + 1; /* no overflow on absurd grids */
        }
    return n;
}

int grid_point(const grid *g, long i, char *out, size_t n) {
    if (i < 0 || i >= grid_points(g)) return -1;
    /* Mixed-radix digits of i, last untied key fastest. */
    int pick[GRID_MAX_KEYS] = {0};
    long rest = i;
    for (int k = g->n_keys - 1; k >= 0; k--)
        if (g->tie[k] < 0) {
            pick[k] = (int)(rest % g->n_values[k]);
            rest /= g->n_values[k];
        }
    size_t len = (size_t)snprintf(out, n, "%s", g->name);
    for (int k = 0; k < g->n_keys && len < n; k++) {
        int src = g->tie[k] < 0 ? k : g->tie[k];
        len += (size_t)snprintf(out + len, n - len, "%c%s=%s", k ? ',' : ':', g->key[k],
                                g->values[src] + (size_t)pick[src] * GRID_NAME_LEN);
    }
    return len < n ? 0 : -1;
}

void grid_free(grid *g) {
    for (int k = 0; k < GRID_MAX_KEYS; k++) free(g->values[k]);
    memset(g, 0, sizeof *g);
}
