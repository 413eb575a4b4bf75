/* registry.c: the decoder table, spec parsing and the shared framework of dec_impl.h. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "decoders/dec_impl.h"
#include "decoders/sampling.h"
#include "util/clock.h"
#include "util/err.h"

/* Rows every forward context holds at least (dec_fwd_new), and the prompt chunk of dec_prefill. */
#define MIN_BATCH 64

extern const dec_vtable dec_greedy_vtable;
extern const dec_vtable dec_jacobi_vtable;
extern const dec_vtable dec_lookahead_vtable;
extern const dec_vtable dec_pld_vtable;
extern const dec_vtable dec_spec_vtable;
extern const dec_vtable dec_ouroboros_vtable;
extern const dec_vtable dec_tree_vtable;
extern const dec_vtable dec_suffix_vtable;

/* One line per decoder. */
static const dec_vtable *const registry[] = {
    &dec_greedy_vtable, &dec_jacobi_vtable, &dec_lookahead_vtable,
    &dec_pld_vtable,    &dec_spec_vtable,   &dec_ouroboros_vtable,
    &dec_tree_vtable,   &dec_suffix_vtable,
};
#define N_DECODERS (int)(sizeof registry / sizeof registry[0])

static void list_names(char *buf, size_t n) {
    buf[0] = '\0';
    for (int i = 0; i < N_DECODERS; i++)
        snprintf(buf + strlen(buf), n - strlen(buf), "%s%s", i ? ", " : "", registry[i]->name);
}

static void list_params(const dec_vtable *vt, char *buf, size_t n) {
    buf[0] = '\0';
    for (int i = 0; i < vt->n_params; i++) {
        const param_def *p = &vt->params[i];
        size_t len = strlen(buf);
        if (p->kind == PARAM_INT)
            snprintf(buf + len, n - len, "%s%s (%d..%d, default %d)", i ? ", " : "", p->key, p->min,
                     p->max, p->def);
        else if (p->kind == PARAM_LIST)
            snprintf(buf + len, n - len, "%s%s (1..%d values in %d..%d joined by '-', default %s)",
                     i ? ", " : "", p->key, DEC_MAX_LIST, p->min, p->max, p->def_list);
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
    if (vt->n_params == 0) snprintf(buf, n, "none");
}

const char *dec_help(void) {
    static char buf[8192];
    buf[0] = '\0';
    for (int i = 0; i < N_DECODERS; i++) {
        char params[2048];
        list_params(registry[i], params, sizeof params);
        snprintf(buf + strlen(buf), sizeof buf - strlen(buf),
                 "  %-10s %s\n             parameters: %s\n", registry[i]->name,
                 registry[i]->summary, params);
    }
    return buf;
}

static int param_index(const dec *d, const char *key, param_kind kind) {
    for (int i = 0; i < d->vt->n_params; i++)
        if (strcmp(d->vt->params[i].key, key) == 0 &&
            (d->vt->params[i].kind == PARAM_REAL) == (kind == PARAM_REAL))
            return i;
    abort(); /* a decoder asked for a parameter it did not declare: a programming error */
}

int dec_param(const dec *d, const char *key) {
    return d->param[param_index(d, key, PARAM_INT)];
}

double dec_param_real(const dec *d, const char *key) {
    return d->rparam[param_index(d, key, PARAM_REAL)];
}

/* A real parameter's value as the canonical spec prints it (%g), so that the spec stored with
 * a sample determines the value exactly. */
static double real_canonical(double v) {
    char buf[32];
    snprintf(buf, sizeof buf, "%g", v);
    return strtod(buf, NULL);
}

const int *dec_param_list(const dec *d, const char *key, int *n) {
    int i = param_index(d, key, PARAM_LIST);
    *n = d->param[i];
    return d->list[i];
}

/* Appends the '-'-separated integers of val to list parameter idx. */
static int parse_list(dec *d, int idx, const char *val, char *err) {
    const param_def *p = &d->vt->params[idx];
    for (const char *s = val;; s++) {
        char *end = (char *)s;
        long v = 0;
        if (*s >= '0' && *s <= '9') v = strtol(s, &end, 10); /* no sign: '-' separates */
        if (end == s || (*end && *end != '-'))
            return err_set(err, "%s: %s=%s is not a list of integers joined by '-' (e.g. %s)",
                           d->vt->name, p->key, val, p->def_list);
        if (v < p->min || v > p->max)
            return err_set(err, "%s: %s value %ld is out of range %d..%d", d->vt->name, p->key, v,
                           p->min, p->max);
        if (d->param[idx] == DEC_MAX_LIST)
            return err_set(err, "%s: %s has more than %d values", d->vt->name, p->key,
                           DEC_MAX_LIST);
        d->list[idx][d->param[idx]++] = (int)v;
        if (!*end) return 0;
        s = end;
    }
}

/* The canonical spec: every parameter, in table order (a quiet one only when it is not its
 * default); list parameters joined by '-'. list: the parsed lists (NULL: the defaults, given
 * as text in the table). */
static void canonical(const dec_vtable *vt, const int *param, const double *rparam,
                      const int (*list)[DEC_MAX_LIST], char *out, size_t n) {
    snprintf(out, n, "%s", vt->name);
    for (int i = 0, shown = 0; i < vt->n_params; i++) {
        const param_def *p = &vt->params[i];
        if (p->quiet && p->kind != PARAM_LIST && param[i] == p->def &&
            rparam[i] == real_canonical(p->rdef))
            continue;
        size_t len = strlen(out);
        char sep = shown++ ? ',' : ':';
        if (p->kind == PARAM_INT)
            snprintf(out + len, n - len, "%c%s=%d", sep, p->key, param[i]);
        else if (p->kind == PARAM_REAL)
            snprintf(out + len, n - len, "%c%s=%g", sep, p->key, rparam[i]);
        else if (p->kind == PARAM_LIST && !list)
            snprintf(out + len, n - len, "%c%s=%s", sep, p->key, p->def_list);
        else if (p->kind == PARAM_LIST) {
            snprintf(out + len, n - len, "%c%s=%d", sep, p->key, list[i][0]);
            for (int k = 1; k < param[i]; k++)
                snprintf(out + strlen(out), n - strlen(out), "-%d", list[i][k]);
        } else
            snprintf(out + len, n - len, "%c%s=%s", sep, p->key, p->choices[param[i]]);
    }
}

static int parse_params(dec *d, const char *s, char *err) {
    const dec_vtable *vt = d->vt;
    for (int i = 0; i < vt->n_params; i++) {
        d->param[i] = vt->params[i].kind == PARAM_LIST ? 0 : vt->params[i].def;
        d->rparam[i] = real_canonical(vt->params[i].rdef);
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
        list_params(vt, params, sizeof params);
        if (!eq && list_open >= 0) {
            if (parse_list(d, list_open, kv, err)) return -1;
            continue;
        }
        if (!eq)
            return err_set(err, "%s: '%s' is not key=value; parameters: %s", vt->name, kv, params);
        *eq = '\0';
        const char *val = eq + 1;
        int idx = -1;
        for (int i = 0; i < vt->n_params; i++)
            if (strcmp(vt->params[i].key, kv) == 0) idx = i;
        if (idx < 0)
            return err_set(err, "%s: unknown parameter '%s'; parameters: %s", vt->name, kv, params);
        const param_def *p = &vt->params[idx];
        list_open = -1;
        if (p->kind == PARAM_LIST) {
            d->param[idx] = 0;
            if (parse_list(d, idx, val, err)) return -1;
            list_open = idx;
        } else if (p->kind == PARAM_INT) {
            char *end;
            errno = 0;
            long v = strtol(val, &end, 10);
            if (!*val || *end)
                return err_set(err, "%s: %s=%s is not an integer", vt->name, kv, val);
            /* the value as typed: strtol saturates what overflows (issue 15.11) */
            if (errno == ERANGE || v < p->min || v > p->max)
                return err_set(err, "%s: %s=%.40s is out of range %d..%d", vt->name, kv, val,
                               p->min, p->max);
            d->param[idx] = (int)v;
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
            if (found < 0)
                return err_set(err, "%s: %s=%s is not valid; %s", vt->name, kv, val, params);
            d->param[idx] = found;
        }
    }
    canonical(vt, d->param, d->rparam, (const int(*)[DEC_MAX_LIST])d->list, d->spec,
              sizeof d->spec);
    return 0;
}

int dec_registry_default_spec(int i, char *buf, size_t n) {
    if (i < 0 || i >= N_DECODERS) return -1;
    int param[DEC_MAX_PARAMS];
    double rparam[DEC_MAX_PARAMS];
    for (int k = 0; k < registry[i]->n_params; k++)
        param[k] = registry[i]->params[k].def,
        rparam[k] = real_canonical(registry[i]->params[k].rdef);
    canonical(registry[i], param, rparam, NULL, buf, n);
    return 0;
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
    if (vt->state_name && (!vt->state_save || !vt->state_load))
        return err_set(err, "%s: state '%s' without state_save and state_load", vt->name,
                       vt->state_name);
    return 0;
}

static int sampling_new(dec *d, char *err);

int dec_create(dec **out, const char *spec, const dec_env *env, char *err) {
    *out = NULL;
    const char *colon = strchr(spec, ':');
    size_t name_len = colon ? (size_t)(colon - spec) : strlen(spec);
    const dec_vtable *vt = NULL;
    for (int i = 0; i < N_DECODERS; i++)
        if (strlen(registry[i]->name) == name_len &&
            strncmp(registry[i]->name, spec, name_len) == 0)
            vt = registry[i];
    if (!vt) {
        char names[512];
        list_names(names, sizeof names);
        return err_set(err, "unknown decoder '%.*s'; valid decoders: %s", (int)name_len, spec,
                       names);
    }
    if (dec_vtable_check(vt, err)) return -1;
    if (vt->needs_draft && !env->draft)
        return err_set(err, "%s needs a draft model (--draft FILE)", vt->name);
    /* a draft whose vocabulary differs by padding rows writes the target's width
     * (model_pad_logits, set by the harness after checking the vocabularies) */
    if (env->draft && model_logits_width(env->draft) != env->target->cfg.vocab_size)
        return err_set(err,
                       "draft model %s has a vocabulary of %d tokens but the target %s has %d: "
                       "they must share one vocabulary",
                       env->draft->path, env->draft->cfg.vocab_size, env->target->path,
                       env->target->cfg.vocab_size);
    if (dec_sampling_check(&env->sampling, err)) return -1;
    dec *d = calloc(1, sizeof *d);
    if (!d) return err_set(err, "decoder: out of memory");
    d->vt = vt;
    d->env = *env;
    snprintf(d->name, sizeof d->name, "%s", vt->name);
    d->end_id = env->target->cfg.end_id;
    if (parse_params(d, colon ? colon + 1 : "", err) || sampling_new(d, err) ||
        vt->create(d, err)) {
        dec_free(d);
        return -1;
    }
    *out = d;
    return 0;
}

void dec_free(dec *d) {
    if (!d) return;
    if (d->vt && d->vt->destroy) d->vt->destroy(d);
    samp_work_free(d->sw);
    free(d->sp), free(d->sq), free(d->sr);
    free(d);
}

void dec_set_seed(dec *d, unsigned long long seed) {
    d->env.sampling.seed = seed;
}

/* ---- sampling settings (decoder.h) ---- */

int dec_sampling_on(const dec_sampling *s) {
    return s->temperature > 0;
}

const char *dec_sampling_name(const dec_sampling *s) {
    return !dec_sampling_on(s)               ? "greedy"
           : s->mode == DEC_SAMPLING_COUPLED ? "coupled"
                                             : "standard";
}

int dec_sampling_parse_mode(const char *name, dec_sampling_mode *out) {
    if (!strcmp(name, "standard")) return *out = DEC_SAMPLING_STANDARD, 0;
    if (!strcmp(name, "coupled")) return *out = DEC_SAMPLING_COUPLED, 0;
    return -1;
}

int dec_sampling_check(const dec_sampling *s, char *err) {
    if (!(s->temperature >= 0 && s->temperature <= 100))
        return err_set(err, "temperature %g is out of range 0..100", s->temperature);
    if (s->top_k < 0) return err_set(err, "top-k %d is negative", s->top_k);
    if (!(s->top_p >= 0 && s->top_p <= 1))
        return err_set(err, "top-p %g is out of range 0..1", s->top_p);
    if (s->mode != DEC_SAMPLING_STANDARD && s->mode != DEC_SAMPLING_COUPLED)
        return err_set(err, "sampling mode %d is neither standard nor coupled", (int)s->mode);
    return 0;
}

/* The framework's sampling memory (dec_impl.h), only when the decoder samples. */
static int sampling_new(dec *d, char *err) {
    if (!dec_sampling_on(&d->env.sampling)) return 0;
    size_t V = (size_t)d->env.target->cfg.vocab_size;
    d->sp = malloc(sizeof(double) * V);
    d->sq = malloc(sizeof(double) * V);
    d->sr = malloc(sizeof(double) * V);
    if (!d->sp || !d->sq || !d->sr) return err_set(err, "decoder: out of memory");
    return samp_work_new(&d->sw, (int)V, err);
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

const char *dec_state_name(const dec *d) {
    return d->vt->state_name;
}

static int no_state(const dec *d, char *err) {
    return err_set(err, "%s keeps no state across prompts (nothing to save or load)", d->spec);
}

int dec_state_check(const dec *d, char *err) {
    if (!d->vt->state_name) return no_state(d, err);
    return d->vt->state_check ? d->vt->state_check(d, err) : 0;
}

int dec_state_save(const dec *d, const char *path, char *what, size_t n_what, char *err) {
    if (n_what) what[0] = '\0';
    if (!d->vt->state_name) return no_state(d, err);
    return d->vt->state_save(d, path, what, n_what, err);
}

int dec_state_load(dec *d, const char *path, char *err) {
    if (!d->vt->state_name) return no_state(d, err);
    return d->vt->state_load(d, path, err);
}

const char *dec_name(const dec *d) {
    return d->name;
}
const char *dec_spec(const dec *d) {
    return d->spec;
}

int dec_generate(dec *d, const int *prompt, int n_prompt, int max_new, int *out, int *n_out,
                 dec_stats *st, char *err) {
    memset(st, 0, sizeof *st);
    *n_out = 0;
    const model_config *cfg = &d->env.target->cfg;
    if (n_prompt < 1) return err_set(err, "empty prompt: at least one token (BOS) is needed");
    if (n_prompt > cfg->seq_len)
        return err_set(err, "prompt of %d tokens is longer than the context length %d", n_prompt,
                       cfg->seq_len);
    if (max_new < 0) return err_set(err, "max_new %d is negative", max_new);
    d->out = out;
    d->n_out = 0;
    d->max_new = max_new < cfg->seq_len - n_prompt ? max_new : cfg->seq_len - n_prompt;
    d->done = d->max_new == 0;
    d->st = st;
    st->counter_defs = d->vt->counters;
    st->n_counters = d->vt->n_counters;
    d->n_steps = 0;
    d->cancelled = 0;
    st->prompt_tokens = n_prompt;
    d->t_start = d->t_step = clock_now();
    int rc = d->done ? 0 : d->vt->generate(d, prompt, n_prompt, err);
    st->t_total = clock_now() - d->t_start;
    st->t_book = st->t_total - st->t_target - st->t_draft;
    st->new_tokens = d->n_out;
    *n_out = d->n_out;
    return rc && d->cancelled ? DEC_CANCELLED : rc;
}

/* Whether env.cancel stops the pass about to run (then err says so and the decoder fails out
 * of its loop like on any error; dec_generate turns that into DEC_CANCELLED). */
static int cancel_now(dec *d, char *err) {
    if (!d->env.cancel || !*d->env.cancel) return 0;
    d->cancelled = 1;
    return err_set(err, "cancelled");
}

/* One forward pass of `which` taking dt seconds, counted as a step with its n rows. */
static void count_pass(dec *d, dec_which which, int n, double dt, int is_prefill) {
    dec_stats *st = d->st;
    if (which == DEC_TARGET) {
        st->t_target += dt;
        st->target_steps++;
        if (!is_prefill) st->target_rows += n;
    } else {
        st->t_draft += dt;
        st->draft_steps++;
        if (!is_prefill) st->draft_rows += n;
    }
}

/* The pass trace (env.on_pass): what the pass's cost depends on. A pass of n rows asks for
 * n_out logits rows (out_rows NULL: all n, or none when n_out is 0) after `context` committed
 * tokens (a level of a tree evaluated with fwd_eval_more also attends to its few ancestors in
 * scratch, as a chain's rows do to theirs). */
static void trace_pass(dec *d, dec_which which, int n, const int *out_rows, int n_out, int context,
                       int is_prefill, double dt) {
    if (!d->env.on_pass) return;
    dec_pass p = {
        which == DEC_DRAFT, is_prefill, n, out_rows || n_out == 0 ? n_out : n, context, dt};
    d->env.on_pass(d->env.user, &p);
}

int dec_eval(dec *d, dec_which which, fwd_ctx *f, int n, const int *tokens, const int *parent,
             const int *out_rows, int n_out, float *logits, int is_prefill, char *err) {
    if (cancel_now(d, err)) return -1;
    int context = fwd_n_past(f);
    double t0 = clock_now();
    int rc = fwd_eval(f, n, tokens, parent, NULL, out_rows, n_out, logits, err);
    double dt = clock_now() - t0;
    count_pass(d, which, n, dt, is_prefill);
    trace_pass(d, which, n, out_rows, n_out, context, is_prefill, dt);
    return rc;
}

int dec_eval_more(dec *d, dec_which which, fwd_ctx *f, int n, const int *tokens, const int *parent,
                  const int *out_rows, int n_out, float *logits, char *err) {
    if (cancel_now(d, err)) return -1;
    int context = fwd_n_past(f);
    double t0 = clock_now();
    int rc = fwd_eval_more(f, n, tokens, parent, out_rows, n_out, logits, err);
    double dt = clock_now() - t0;
    count_pass(d, which, n, dt, 0);
    trace_pass(d, which, n, out_rows, n_out, context, 0, dt);
    return rc;
}

/* The prompt tokens[0..n) in chunks of MIN_BATCH (what every context holds) with a cancel
 * check before each: a long prompt on a large model takes a while. The chunking cannot change
 * the result (batch invariance); each chunk's last row also computes logits, which the next
 * overwrites. Each chunk is one pass of the trace. */
static int prefill_chunks(dec *d, dec_which which, fwd_ctx *f, const int *tokens, int n,
                          float *logits, char *err) {
    for (int done = 0; done < n;) {
        int chunk = n - done < MIN_BATCH ? n - done : MIN_BATCH;
        double c0 = clock_now();
        if (cancel_now(d, err) || fwd_prefill(f, tokens + done, chunk, logits, err)) return -1;
        int last = chunk - 1; /* one pass per chunk: its last row's logits */
        trace_pass(d, which, chunk, &last, 1, done, 1, clock_now() - c0);
        done += chunk;
    }
    return 0;
}

/* Counts a prompt pass that started at t0 as one step of `which`. Both models' prompt passes
 * are prefill time: the draft's is not decoding either (spec and Ouroboros prefill the draft
 * once per prompt, as the reference implementations time it inside the prompt phase). */
static void prefill_done(dec *d, dec_which which, double t0) {
    double dt = clock_now() - t0;
    dec_stats *st = d->st;
    st->t_prefill += dt;
    if (which == DEC_TARGET) {
        st->t_target += dt;
        st->target_steps++;
    } else {
        st->t_draft += dt;
        st->draft_steps++;
    }
    d->t_step = t0 + dt; /* the first decode step's time starts after the prompt passes */
}

int dec_prefill(dec *d, dec_which which, fwd_ctx *f, const int *prompt, int n_prompt, float *logits,
                char *err) {
    double t0 = clock_now();
    int rc =
        fwd_truncate(f, 0, err) || prefill_chunks(d, which, f, prompt, n_prompt, logits, err) ? -1 : 0;
    prefill_done(d, which, t0);
    return rc;
}

int dec_prefill_batch(dec *d, dec_which which, fwd_ctx *f, const int *prompt, int n_before, int n,
                      const int *tokens, const int *parent, int n_commit, const int *out_rows,
                      int n_out, float *logits, char *err) {
    double t0 = clock_now();
    int path[MIN_BATCH];
    for (int i = 0; i < n_commit && i < MIN_BATCH; i++) path[i] = i;
    int rc = n_commit < 1 || n_commit > MIN_BATCH
                 ? err_set(err, "dec_prefill_batch: %d prompt rows to commit (1..%d)", n_commit,
                           MIN_BATCH)
             : fwd_truncate(f, 0, err) ||
                     prefill_chunks(d, which, f, prompt, n_before, logits, err) ||
                     cancel_now(d, err)
                 ? -1
                 : 0;
    if (rc == 0) {
        double c0 = clock_now();
        rc = fwd_eval(f, n, tokens, parent, NULL, out_rows, n_out, logits, err) ? -1 : 0;
        if (rc == 0) trace_pass(d, which, n, out_rows, n_out, n_before, 1, clock_now() - c0);
        if (rc == 0 && fwd_commit(f, path, n_commit, err)) rc = -1;
    }
    prefill_done(d, which, t0);
    return rc;
}

int dec_draft_resync(fwd_ctx *fd, const int *dseq, const int *seq, int old_L, int L, char *err) {
    int dn = fwd_n_past(fd), keep = dn < old_L ? dn : old_L;
    while (keep < dn && keep < L - 1 && dseq[keep] == seq[keep]) keep++;
    return keep < dn ? fwd_truncate(fd, keep, err) : 0;
}

int dec_emit(dec *d, const int *tokens, int n) {
    int k = 0;
    while (k < n && !d->done) {
        int t = tokens[k++];
        d->out[d->n_out++] = t;
        if (t == d->end_id || d->n_out >= d->max_new) d->done = 1;
    }
    if (k && d->env.on_tokens) d->env.on_tokens(d->env.user, d->out + d->n_out - k, k);
#ifdef DECBENCH_TEST_COUNTER
    d->st->test_emits += k > 0; /* the test build's extra counter (stats/stats.h) */
#endif
    return k;
}

void dec_step_done(dec *d, int rows, int drafted, int accepted, int emitted) {
    dec_stats *st = d->st;
    st->verify_steps++;
    st->drafted += drafted;
    st->accepted += accepted;
    st->accept_hist[accepted < DEC_HIST_MAX ? accepted : DEC_HIST_MAX]++;
    for (int i = 0; i < drafted && i < DEC_HIST_MAX; i++) {
        st->pos_tried[i]++;
        if (i < accepted) st->pos_accepted[i]++;
    }
    double now = clock_now();
    if (d->env.on_step) {
        dec_step s = {++d->n_steps, rows, drafted, accepted, emitted, now - d->t_step};
        d->env.on_step(d->env.user, &s);
    } else {
        d->n_steps++;
    }
    d->t_step = now;
}

int dec_fwd_new(dec *d, const model *m, int max_batch, fwd_ctx **out, char *err) {
    if (fwd_new(out, m, d->env.pool, max_batch < MIN_BATCH ? MIN_BATCH : max_batch, d->env.kernels,
                err))
        return -1;
    fwd_allow_nonfinite(*out, d->env.allow_nonfinite);
    return 0;
}

int dec_guess(const int *ctx, int len, int p, int period, int random, rng_state *r, int vocab) {
    if (random) return (int)rng_below(r, (uint32_t)vocab);
    int q = p - period;
    while (q >= len) q -= period;
    return q >= 0 ? ctx[q] : ctx[p % len];
}
