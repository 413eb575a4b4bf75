/* runner_plan.c: what a run will measure, checked before it measures: the decoder specs
 * (canonical, deduplicated), the --shard plan, the state files and the files it reads and
 * writes. */
#include "harness/runner_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/err.h"
#include "util/file.h"
#include "util/hash.h"
#include "util/rng.h"

int runner_is_greedy(const char *canon) {
    return !strcmp(canon, "greedy");
}

/* ---- decoder specs ------------------------------------------------------------------------ */

void runner_free_specs(char **canon, char **shown, int n) {
    for (int i = 0; i < n; i++) {
        if (canon) free(canon[i]);
        if (shown) free(shown[i]);
    }
    free(canon);
    free(shown);
}

int runner_batch_spec(const runner_opts *o, const char *spec, char *err) {
    dec_info info;
    if (o->batch < 2 || dec_describe(spec, &info, err)) return 0; /* dec_create says what */
    if (info.keeps_state)
        return err_set(err,
                       "--batch cannot run %s: it keeps its %s across prompts, in their order, "
                       "and B sequences at once would each build another (run it without "
                       "--batch)",
                       spec, info.state_name);
    return 0;
}

int runner_specs(runner *r, const char *const *specs, int n, int add_greedy, char ***canon_out,
                 char ***shown_out, int *n_out, char *err) {
    char **canon = calloc((size_t)n + 1, sizeof *canon),
         **shown = calloc((size_t)n + 1, sizeof *shown);
    int k = 0;
    if (!canon || !shown) goto oom;
    dec_env env = session_env(&r->s);
    for (int i = -1; i < n; i++) {
        if (i < 0 && !add_greedy) continue;
        const char *spec = i < 0 ? "greedy" : specs[i];
        dec *d;
        if (runner_batch_spec(&r->o, spec, err) || dec_create(&d, spec, &env, err)) goto fail;
        int dup = 0;
        for (int j = 0; j < k && !dup; j++) dup = !strcmp(canon[j], dec_spec(d));
        if (!dup) {
            canon[k] = strdup(dec_spec(d));
            shown[k] = strdup(spec);
            if (!canon[k] || !shown[k++]) {
                dec_free(d);
                goto oom;
            }
        }
        dec_free(d);
    }
    *canon_out = canon;
    *shown_out = shown;
    *n_out = k;
    return 0;
oom:
    err_set(err, "out of memory");
fail:
    runner_free_specs(canon, shown, k);
    return -1;
}

/* ---- --shard I/N (design in runner.h) ------------------------------------------------------ */

const char *runner_shard_text(const runner *r) {
    static char text[32];
    if (!r->shard.n) return NULL;
    snprintf(text, sizeof text, "%d/%d", r->shard.i, r->shard.n);
    return text;
}

/* Whether a decoder carries state from prompt to prompt (its units must stay whole). */
static int keeps_state(const char *canon, int *out, char *err) {
    dec_info info;
    if (dec_describe(canon, &info, err)) return -1;
    *out = info.keeps_state;
    return 0;
}

int runner_shard_plan(runner *r, char *const *canon, int n, char *err) {
    runner_shard *s = &r->shard;
    if (!r->o.shard_n) return 0;
    s->i = r->o.shard_i, s->n = r->o.shard_n;
    s->repeats = r->o.repeats, s->prompts = r->n_prompts;
    s->specs = calloc((size_t)n + 1, sizeof *s->specs);
    int *stateful = calloc((size_t)n + 1, sizeof *stateful);
    if (!s->specs || !stateful) {
        free(stateful);
        return err_set(err, "out of memory");
    }
    for (int k = 0; k < n; k++) {
        if (runner_is_greedy(canon[k])) continue;
        if (keeps_state(canon[k], &stateful[s->n_specs], err)) {
            free(stateful);
            return -1;
        }
        if (!(s->specs[s->n_specs++] = strdup(canon[k]))) {
            free(stateful);
            return err_set(err, "out of memory");
        }
    }
    /* A run of greedy alone: greedy's samples are the units. */
    int greedy_units = s->n_specs == 0;
    if (greedy_units && !(s->specs[s->n_specs++] = strdup("greedy"))) {
        free(stateful);
        return err_set(err, "out of memory");
    }
    size_t P = (size_t)s->prompts, R = (size_t)s->repeats, S = (size_t)s->n_specs;
    s->mine = calloc(S * R * P + 1, 1);
    s->greedy = calloc(R * P + 1, 1);
    if (!s->mine || !s->greedy) {
        free(stateful);
        return err_set(err, "out of memory");
    }
    long long total = 0;
    for (size_t k = 0; k < S; k++) total += (long long)(R * P);
    /* The units in their one order; each unit starting in this shard's interval is mine. */
    long long lo = total * (s->i - 1), hi = total * s->i, at = 0; /* all x N */
#define UNIT(k, rep, i0, i1)                                                                       \
    do {                                                                                           \
        long long start = at * s->n;                                                               \
        at += (long long)((i1) - (i0));                                                            \
        if (start >= lo && start < hi)                                                             \
            for (size_t u_ = (i0); u_ < (i1); u_++) {                                              \
                s->mine[((k)*R + (rep)) * P + u_] = 1;                                             \
                s->greedy[(rep)*P + u_] = 1;                                                       \
            }                                                                                      \
    } while (0)
    for (size_t i = 0; i < P; i++)
        for (size_t rep = 0; rep < R; rep++)
            for (size_t k = 0; k < S; k++)
                if (!stateful[k]) UNIT(k, rep, i, i + 1);
    for (size_t rep = 0; rep < R; rep++)
        for (size_t k = 0; k < S; k++)
            if (stateful[k]) UNIT(k, rep, (size_t)0, P);
#undef UNIT
    free(stateful);
    s->samples = 0;
    for (size_t u = 0; u < S * R * P; u++) s->samples += s->mine[u];
    if (!greedy_units)
        for (size_t u = 0; u < R * P; u++) s->samples += s->greedy[u];
    return 0;
}

/* Whether this process measures (spec, repeat, prompt). */
int runner_in_shard(const runner *r, const char *canon, int rep, int prompt) {
    const runner_shard *s = &r->shard;
    if (!s->n) return 1;
    size_t P = (size_t)s->prompts, R = (size_t)s->repeats;
    for (int k = 0; k < s->n_specs; k++)
        if (!strcmp(s->specs[k], canon))
            return s->mine[((size_t)k * R + (size_t)rep) * P + (size_t)prompt];
    return runner_is_greedy(canon) ? s->greedy[(size_t)rep * P + (size_t)prompt] : 0;
}

/* ---- decoder state files (--state-load / --state-save) ---------------------------------- */

/* Whether decoder d takes part in --state-load/--state-save: it keeps state and, with
 * state_only (the --pool-* aliases), state of that name. */
int runner_has_state(const runner *r, const dec *d) {
    return dec_state_name(d) && (!r->state_only || !strcmp(dec_state_name(d), r->state_only));
}

/* The decoders whose state is named `state` ("ouroboros" for "pool"), for messages. */
static void decoders_with_state(const char *state, char *out, size_t n) {
    out[0] = '\0';
    for (int i = 0; i < dec_registry_size(); i++) {
        const char *s = dec_registry_state_name(i);
        if (s && !strcmp(s, state))
            snprintf(out + strlen(out), n - strlen(out), "%s%s", *out ? "/" : "",
                     dec_registry_name(i));
    }
}

int runner_check_states(runner *r, char *const *canon, int n, char *err) {
    if (!r->state_load && !r->state_save) return 0;
    const char *opt = r->state_load ? r->load_opt : r->save_opt;
    /* "ouroboros decoder(s)" for the --pool-* aliases, "decoder(s) with state" otherwise */
    char only[128] = "";
    if (r->state_only) decoders_with_state(r->state_only, only, sizeof only);
    const char *sp = *only ? " " : "";
    const char *with = *only ? "" : " with state";
    dec_env env = session_env(&r->s);
    int n_state = 0, rc = 0;
    const char *what = "state"; /* the state's name, a string of the decoder's vtable */
    for (int k = 0; k < n && rc == 0; k++) {
        dec_info info;
        if (dec_describe(canon[k], &info, err)) return -1;
        if (!info.state_name) continue; /* an instance only for those that keep state */
        dec *d;
        if (dec_create(&d, canon[k], &env, err)) return -1;
        if (runner_has_state(r, d)) {
            char e[ERR_LEN];
            n_state++;
            what = dec_state_name(d);
            if (dec_state_check(d, e) || (r->state_load && dec_state_load(d, r->state_load, e)))
                rc = err_set(err, "%s: %s", opt, e);
        }
        dec_free(d);
    }
    if (rc) return -1;
    if (n_state == 0) return err_set(err, "%s: the run has no %s%sdecoder%s", opt, only, sp, with);
    if (r->state_save && n_state > 1)
        return err_set(err, "%s: the run has %d %s%sdecoders%s; give it one", r->save_opt, n_state,
                       only, sp, with);
    if (r->state_save) { /* can the file be created? (written through a .tmp and a rename) */
        file_out probe;
        char e[ERR_LEN];
        if (file_out_open(&probe, r->state_save, what, e))
            return err_set(err, "%s: %s", r->save_opt, e);
        file_out_abort(&probe);
    }
    return 0;
}

int runner_check_files(const runner *r, const file_io *extra, int n_extra, char *err) {
    enum { FIXED = 6 };
    file_io io[FIXED + RUNNER_MAX_DATASETS + 32];
    int n = 0;
    io[n++] = (file_io){"--model", r->s.model_path, FILE_IO_IN, NULL};
    if (r->o.draft && !session_self_type(r->o.draft)) /* self:TYPE is built in memory */
        io[n++] = (file_io){"--draft", r->s.draft_path, FILE_IO_IN, NULL};
    io[n++] = (file_io){"--tokenizer", r->s.tokenizer_path, FILE_IO_IN, NULL};
    for (int i = 0; i < r->n_sets; i++)
        io[n++] = (file_io){"--dataset", ds_path(r->sets[i]), FILE_IO_IN, NULL};
    /* The one input an output may replace: the state file a run loads and saves, which
     * accumulates warm starts across runs (`--pool-load P --pool-save P`): it is read at the
     * start of each repeat and replaced, whole, only after the last sample. */
    int accumulate = r->state_load && r->state_save && file_same(r->state_load, r->state_save);
    io[n++] = (file_io){r->load_opt ? r->load_opt : "--state-load",
                        accumulate ? NULL : r->state_load, FILE_IO_IN, NULL};
    io[n++] =
        (file_io){r->save_opt ? r->save_opt : "--state-save", r->state_save, FILE_IO_OUT, NULL};
    io[n++] = (file_io){"--db", r->o.db_path, FILE_IO_DB, NULL};
    if (n_extra > (int)(sizeof io / sizeof io[0]) - n) return err_set(err, "too many files");
    for (int i = 0; i < n_extra; i++) io[n++] = extra[i];
    return file_check_io(io, n, err);
}

/* Every measured instance with state starts from the --state-load file. */
int runner_load_states(runner *r, dec *const *decs, int n, char *err) {
    for (int k = 0; r->state_load && k < n; k++) {
        if (!runner_has_state(r, decs[k])) continue;
        char e[ERR_LEN];
        if (dec_state_load(decs[k], r->state_load, e))
            return err_set(err, "%s: %s", r->load_opt, e);
    }
    return 0;
}

/* After the run's last sample: the state of its decoder with state to r->state_save. */
int runner_save_states(runner *r, dec *const *decs, char *const *canon, int n, char *err) {
    for (int k = 0; r->state_save && k < n; k++) {
        if (!runner_has_state(r, decs[k])) continue;
        char e[ERR_LEN], what[128];
        if (dec_state_save(decs[k], r->state_save, what, sizeof what, e))
            return err_set(err, "%s: %s", r->save_opt, e);
        fprintf(stderr, "decbench run: wrote the %s of %s%s%s%s to %s\n", dec_state_name(decs[k]),
                canon[k], what[0] ? " (" : "", what, what[0] ? ")" : "", r->state_save);
    }
    return 0;
}
