/* dec_spec.c: decoder specs ("name:key=value,..."): parsing against a decoder's parameter
 * table, the canonical spec (every parameter, table order), and what a spec means without
 * creating the decoder (dec_describe). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/dec_framework.h"
#include "util/err.h"

/* A real parameter's value as the canonical spec prints it (%g), so that the spec stored with
 * a sample determines the value exactly. */
static double real_canonical(double v) {
    char buf[32];
    snprintf(buf, sizeof buf, "%g", v);
    return strtod(buf, NULL);
}

const int *dec_param_list(const dec *d, int i, int *n) {
    *n = d->param[i];
    return d->list[i];
}

/* Appends the '-'-separated integers of val to list parameter idx; "a..b" stands for a to b
 * (a <= b). A list whose default is empty may be empty. */
static int parse_list(dec *d, int idx, const char *val, char *err) {
    const param_def *p = &d->vt->params[idx];
    if (!*val && p->def_list && !*p->def_list) return 0;
    for (const char *s = val;; s++) {
        char *end = (char *)s;
        long v = 0, last;
        if (*s >= '0' && *s <= '9') v = strtol(s, &end, 10); /* no sign: '-' separates */
        last = v;
        if (end != s && end[0] == '.' && end[1] == '.' && end[2] >= '0' && end[2] <= '9') {
            last = strtol(end + 2, &end, 10);
            if (last < v)
                return err_set(err, "%s: %s=%s: the range %ld..%ld is empty", d->vt->name, p->key,
                               val, v, last);
        }
        if (end == s || (*end && *end != '-'))
            return err_set(err, "%s: %s=%s is not a list of integers joined by '-' (e.g. %s)",
                           d->vt->name, p->key, val, *p->def_list ? p->def_list : "1-3-5");
        for (; v <= last; v++) {
            if (v < p->min || v > p->max)
                return err_set(err, "%s: %s value %ld is out of range %d..%d", d->vt->name,
                               p->key, v, p->min, p->max);
            if (d->param[idx] == DEC_MAX_LIST)
                return err_set(err, "%s: %s has more than %d values", d->vt->name, p->key,
                               DEC_MAX_LIST);
            d->list[idx][d->param[idx]++] = (int)v;
        }
        if (!*end) return 0;
        s = end;
    }
}

/* The canonical spec: every parameter, in table order (a quiet one only when it is not its
 * default); list parameters joined by '-'. list: the parsed lists (NULL: the defaults, given
 * as text in the table). */
static void canonical(const dec_vtable *vt, const int *param, const double *rparam,
                      const int (*list)[DEC_MAX_LIST], const char (*str)[DEC_MAX_STR], char *out,
                      size_t n) {
    snprintf(out, n, "%s", vt->name);
    for (int i = 0, shown = 0; i < dec_n_params(vt); i++) {
        const param_def *p = &vt->params[i];
        if (p->quiet && p->kind != PARAM_LIST && param[i] == p->def &&
            rparam[i] == real_canonical(p->rdef))
            continue;
        if (p->kind == PARAM_STR && (!str || !str[i][0])) continue; /* "": its default */
        size_t len = strlen(out);
        char sep = shown++ ? ',' : ':';
        if (p->kind == PARAM_STR)
            snprintf(out + len, n - len, "%c%s=%s", sep, p->key, str[i]);
        else if (p->kind == PARAM_INT)
            snprintf(out + len, n - len, "%c%s=%d", sep, p->key, param[i]);
        else if (p->kind == PARAM_REAL)
            snprintf(out + len, n - len, "%c%s=%g", sep, p->key, rparam[i]);
        else if (p->kind == PARAM_LIST && !list)
            snprintf(out + len, n - len, "%c%s=%s", sep, p->key, p->def_list);
        else if (p->kind == PARAM_LIST && !param[i])
            snprintf(out + len, n - len, "%c%s=", sep, p->key);
        else if (p->kind == PARAM_LIST) {
            snprintf(out + len, n - len, "%c%s=%d", sep, p->key, list[i][0]);
            for (int k = 1; k < param[i]; k++)
                snprintf(out + strlen(out), n - strlen(out), "-%d", list[i][k]);
        } else
            snprintf(out + len, n - len, "%c%s=%s", sep, p->key, p->choices[param[i]]);
    }
}

/* Sets parameter idx (not a list) from the text val; the messages name key as typed. */
static int parse_value(dec *d, int idx, const char *kv, const char *val, char *err) {
    const dec_vtable *vt = d->vt;
    const param_def *p = &vt->params[idx];
    if (p->kind == PARAM_INT) {
        char *end;
        errno = 0;
        long v = strtol(val, &end, 10);
        if (!*val || *end) return err_set(err, "%s: %s=%s is not an integer", vt->name, kv, val);
        /* the value as typed: strtol saturates what overflows */
        if (errno == ERANGE || v < p->min || v > p->max)
            return err_set(err, "%s: %s=%.40s is out of range %d..%d", vt->name, kv, val, p->min,
                           p->max);
        d->param[idx] = (int)v;
    } else if (p->kind == PARAM_STR) {
        if (strlen(val) >= DEC_MAX_STR || strpbrk(val, ",;="))
            return err_set(err, "%s: %s=%.40s: a value of at most %d bytes without ',', ';' or '='",
                           vt->name, kv, val, DEC_MAX_STR - 1);
        snprintf(d->str[idx], DEC_MAX_STR, "%s", val);
    } else if (p->kind == PARAM_REAL) {
        char *end;
        double v = strtod(val, &end);
        if (!*val || *end || !isfinite(v))
            return err_set(err, "%s: %s=%s is not a number", vt->name, kv, val);
        if (v < p->rmin || v > p->rmax)
            return err_set(err, "%s: %s=%s is out of range %g..%g", vt->name, kv, val, p->rmin,
                           p->rmax);
        d->rparam[idx] = real_canonical(v);
    } else {
        int found = -1;
        for (int c = 0; c < 6 && p->choices[c]; c++)
            if (strcmp(p->choices[c], val) == 0) found = c;
        if (found < 0) {
            char params[2048];
            dec_list_params(vt, params, sizeof params);
            return err_set(err, "%s: %s=%s is not valid; %s", vt->name, kv, val, params);
        }
        d->param[idx] = found;
    }
    return 0;
}

static int param_index(const dec_vtable *vt, const char *key) {
    for (int i = 0; i < dec_n_params(vt); i++)
        if (strcmp(vt->params[i].key, key) == 0) return i;
    return -1;
}

/* Applies the presets chosen (param_def.sets): each parameter a preset names takes its value,
 * unless the spec gave it another one (an error: the preset's name would then not mean what
 * it says). given[i]: parameter i was in the spec. */
static int apply_presets(dec *d, const int *given, char *err) {
    const dec_vtable *vt = d->vt;
    for (int i = 0; i < dec_n_params(vt); i++) {
        const param_def *p = &vt->params[i];
        const char *sets = p->kind == PARAM_ENUM ? p->sets[d->param[i]] : NULL;
        if (!sets) continue;
        char copy[512], *save = NULL;
        snprintf(copy, sizeof copy, "%s", sets);
        for (char *kv = strtok_r(copy, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
            char *eq = strchr(kv, '=');
            int idx = eq ? (*eq = '\0', param_index(vt, kv)) : -1;
            if (idx < 0 || vt->params[idx].kind == PARAM_LIST)
                return err_set(err, "%s: %s=%s sets '%s', not a parameter of its table", vt->name,
                               p->key, p->choices[d->param[i]], kv);
            int before = d->param[idx];
            double rbefore = d->rparam[idx];
            if (parse_value(d, idx, kv, eq + 1, err)) return -1;
            if (given[idx] && (d->param[idx] != before || d->rparam[idx] != rbefore))
                return err_set(err,
                               "%s: %s=%s sets %s=%s; the spec's other value contradicts it "
                               "(drop the preset, or that parameter)",
                               vt->name, p->key, p->choices[d->param[i]], kv, eq + 1);
        }
    }
    return 0;
}

int dec_params_parse(dec *d, const char *s, char *err) {
    const dec_vtable *vt = d->vt;
    int given[DEC_MAX_PARAMS] = {0};
    for (int i = 0; i < dec_n_params(vt); i++) {
        d->param[i] = vt->params[i].kind == PARAM_LIST ? 0 : vt->params[i].def;
        d->rparam[i] = real_canonical(vt->params[i].rdef);
        d->str[i][0] = '\0';
        if (vt->params[i].kind == PARAM_LIST && parse_list(d, i, vt->params[i].def_list, err))
            return -1;
    }
    char copy[512];
    if (strlen(s) >= sizeof copy) return err_set(err, "%s: parameter list too long", vt->name);
    strcpy(copy, s);
    char *save = NULL;
    int list_open = -1; /* the list parameter bare values continue */
    for (char *kv = strtok_r(copy, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(kv, '=');
        char params[2048];
        dec_list_params(vt, params, sizeof params);
        if (!eq && list_open >= 0) {
            if (parse_list(d, list_open, kv, err)) return -1;
            continue;
        }
        if (!eq)
            return err_set(err, "%s: '%s' is not key=value; parameters: %s", vt->name, kv, params);
        *eq = '\0';
        const char *val = eq + 1;
        int idx = param_index(vt, kv);
        if (idx < 0)
            return err_set(err, "%s: unknown parameter '%s'; parameters: %s", vt->name, kv, params);
        const param_def *p = &vt->params[idx];
        list_open = -1;
        given[idx] = 1;
        if (p->kind == PARAM_LIST) {
            d->param[idx] = 0;
            if (parse_list(d, idx, val, err)) return -1;
            list_open = idx;
        } else if (parse_value(d, idx, kv, val, err)) {
            return -1;
        }
    }
    if (apply_presets(d, given, err)) return -1;
    canonical(vt, d->param, d->rparam, (const int(*)[DEC_MAX_LIST])d->list,
              (const char(*)[DEC_MAX_STR])d->str, d->spec, sizeof d->spec);
    return 0;
}

int dec_registry_default_spec(int i, char *buf, size_t n) {
    const dec_vtable *vt = dec_registry_vtable(i);
    if (!vt) return -1;
    int param[DEC_MAX_PARAMS];
    double rparam[DEC_MAX_PARAMS];
    for (int k = 0; k < dec_n_params(vt); k++)
        param[k] = vt->params[k].def, rparam[k] = real_canonical(vt->params[k].rdef);
    canonical(vt, param, rparam, NULL, NULL, buf, n);
    return 0;
}

/* The decoder a spec names (its text up to ':'), or an error listing the valid ones. */
const dec_vtable *dec_vtable_of_spec(const char *spec, char *err) {
    const char *colon = strchr(spec, ':');
    size_t name_len = colon ? (size_t)(colon - spec) : strlen(spec);
    const dec_vtable *vt = dec_registry_find(spec, name_len);
    if (!vt) {
        char names[512];
        dec_list_names(names, sizeof names);
        err_set(err, "unknown decoder '%.*s'; valid decoders: %s", (int)name_len, spec, names);
    }
    return vt;
}

int dec_describe(const char *spec, dec_info *out, char *err) {
    memset(out, 0, sizeof *out);
    const dec_vtable *vt = dec_vtable_of_spec(spec, err);
    if (!vt || dec_vtable_check(vt, err)) return -1;
    dec d = {.vt = vt}; /* parameters only: nothing is created */
    const char *colon = strchr(spec, ':');
    if (dec_params_parse(&d, colon ? colon + 1 : "", err)) return -1;
    out->name = vt->name;
    snprintf(out->spec, sizeof out->spec, "%s", d.spec);
    out->needs_draft = vt->needs_draft;
    out->state_name = vt->state_name;
    char ignored[ERR_LEN];
    out->keeps_state = vt->state_name && (!vt->state_check || vt->state_check(&d, ignored) == 0);
    return 0;
}
