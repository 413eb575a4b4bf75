/* registry.c: the decoder table (one line per decoder), lookups by name and the listings
 * built from it (dec_help, dec_registry_*), and the check of a vtable's optional members. */
#include <stdio.h>
#include <string.h>

#include "decoders/dec_framework.h"
#include "util/err.h"

extern const dec_vtable dec_greedy_vtable;
extern const dec_vtable dec_jacobi_vtable;
extern const dec_vtable dec_lookahead_vtable;
extern const dec_vtable dec_pld_vtable;
extern const dec_vtable dec_spec_vtable;
extern const dec_vtable dec_ouroboros_vtable;
extern const dec_vtable dec_tree_vtable;
extern const dec_vtable dec_suffix_vtable;
extern const dec_vtable dec_recycle_vtable;
extern const dec_vtable dec_sam_vtable;
extern const dec_vtable dec_rest_vtable;
extern const dec_vtable dec_skip_vtable;
extern const dec_vtable dec_medusa_vtable;
extern const dec_vtable dec_eagle_vtable;

/* One line per decoder. */
static const dec_vtable *const registry[] = {
    &dec_greedy_vtable,  &dec_jacobi_vtable,    &dec_lookahead_vtable, &dec_pld_vtable,
    &dec_spec_vtable,    &dec_ouroboros_vtable, &dec_tree_vtable,      &dec_suffix_vtable,
    &dec_recycle_vtable, &dec_sam_vtable,       &dec_rest_vtable,      &dec_skip_vtable,
    &dec_medusa_vtable,  &dec_eagle_vtable,
};
#define N_DECODERS (int)(sizeof registry / sizeof registry[0])

const dec_vtable *dec_registry_find(const char *name, size_t len) {
    for (int i = 0; i < N_DECODERS; i++)
        if (strlen(registry[i]->name) == len && strncmp(registry[i]->name, name, len) == 0)
            return registry[i];
    return NULL;
}

const dec_vtable *dec_registry_vtable(int i) {
    return i >= 0 && i < N_DECODERS ? registry[i] : NULL;
}

void dec_list_names(char *buf, size_t n) {
    buf[0] = '\0';
    for (int i = 0; i < N_DECODERS; i++)
        snprintf(buf + strlen(buf), n - strlen(buf), "%s%s", i ? ", " : "", registry[i]->name);
}

void dec_list_params(const dec_vtable *vt, char *buf, size_t n) {
    buf[0] = '\0';
    for (int i = 0; i < dec_n_params(vt); i++) {
        const param_def *p = &vt->params[i];
        size_t len = strlen(buf);
        if (p->kind == PARAM_INT)
            snprintf(buf + len, n - len, "%s%s (%d..%d, default %d)", i ? ", " : "", p->key, p->min,
                     p->max, p->def);
        else if (p->kind == PARAM_LIST)
            snprintf(buf + len, n - len, "%s%s (%d..%d values in %d..%d joined by '-', default %s)",
                     i ? ", " : "", p->key, *p->def_list ? 1 : 0, DEC_MAX_LIST, p->min, p->max,
                     *p->def_list ? p->def_list : "none");
        else if (p->kind == PARAM_STR)
            snprintf(buf + len, n - len, "%s%s (%s)", i ? ", " : "", p->key,
                     p->help ? p->help : "text");
        else if (p->kind == PARAM_REAL)
            snprintf(buf + len, n - len, "%s%s (%g..%g, default %g)", i ? ", " : "", p->key,
                     p->rmin, p->rmax, p->rdef);
        else {
            snprintf(buf + len, n - len, "%s%s (", i ? ", " : "", p->key);
            for (int c = 0; c < 6 && p->choices[c]; c++)
                snprintf(buf + strlen(buf), n - strlen(buf), "%s%s", c ? "|" : "", p->choices[c]);
            snprintf(buf + strlen(buf), n - strlen(buf), ", default %s)", p->choices[p->def]);
        }
    }
    if (dec_n_params(vt) == 0) snprintf(buf, n, "none");
}

const char *dec_help(void) {
    static char buf[8192];
    buf[0] = '\0';
    for (int i = 0; i < N_DECODERS; i++) {
        char params[2048];
        dec_list_params(registry[i], params, sizeof params);
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf),
                 "  %-10s %s\n             parameters: %s\n", registry[i]->name,
                 registry[i]->summary, params);
    }
    return buf;
}

int dec_registry_size(void) {
    return N_DECODERS;
}

const char *dec_registry_name(int i) {
    return i >= 0 && i < N_DECODERS ? registry[i]->name : NULL;
}

const stat_def *dec_registry_counters(int i, int *n) {
    *n = i >= 0 && i < N_DECODERS ? registry[i]->n_counters : 0;
    return *n ? registry[i]->counters : NULL;
}

const char *dec_registry_state_name(int i) {
    return i >= 0 && i < N_DECODERS ? registry[i]->state_name : NULL;
}

const char *dec_registry_tune_grid(int i) {
    return i >= 0 && i < N_DECODERS ? registry[i]->tune_grid : NULL;
}

int dec_n_params(const dec_vtable *vt) {
    int n = 0;
    while (n < DEC_MAX_PARAMS && vt->params[n].key) n++;
    return n;
}

int dec_vtable_check(const dec_vtable *vt, char *err) {
    if (vt->n_counters < 0 || vt->n_counters > STAT_MAX_COUNTERS ||
        (vt->n_counters > 0 && !vt->counters))
        return err_set(err, "%s: %d counters declared (0..%d, with a table)", vt->name,
                       vt->n_counters, STAT_MAX_COUNTERS);
    for (int i = 0; i < vt->n_counters; i++) {
        const char *n = vt->counters[i].name;
        int ok = n && *n && vt->counters[i].definition;
        for (const char *p = n; ok && *p; p++)
            ok = (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_';
        for (int j = 0; ok && j < i; j++) ok = strcmp(vt->counters[j].name, n) != 0;
        if (!ok)
            return err_set(err,
                           "%s: counter %d ('%s') needs a unique [a-z0-9_] name and a "
                           "definition",
                           vt->name, i, n ? n : "(null)");
    }
    for (int i = dec_n_params(vt); i < DEC_MAX_PARAMS; i++)
        if (vt->params[i].key)
            return err_set(err, "%s: parameter %d ('%s') follows an empty row of its table",
                           vt->name, i, vt->params[i].key);
    if (vt->state_name && (!vt->state_save || !vt->state_load))
        return err_set(err, "%s: state '%s' without state_save and state_load", vt->name,
                       vt->state_name);
    return 0;
}
