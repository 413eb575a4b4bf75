/* runner.c: the measurement loop of `run` and `sweep` (design in runner.h); the shared options
 * are in runner_opts.c. */
#include "harness/runner.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/err.h"
#include "util/rng.h"
#include "util/file.h"
#include "util/hash.h"

static int is_greedy_spec(const char *canon) {
    return !strcmp(canon, "greedy");
}

/* ---- opening: datasets, then models, then prompts ------------------------------------------ */

/* The chat format for chat templates: --chat-template, else the vocabulary's own
 * (tokenizer.chat_template of the GGUF, as llama.cpp recognises it), else none (each template
 * keeps its source's format). */
static const char *chat_format(const runner_opts *o) {
    if (o->chat_template) return o->chat_template;
    char *tpl = NULL, ignored[ERR_LEN], path[4096];
    session_find_model(o->tokenizer ? o->tokenizer : o->model, path, sizeof path);
    /* A file that cannot be read is reported by the model loader, in its own words. */
    if (tok_file_chat_template(path, &tpl, ignored)) return NULL;
    const char *chat = ds_chat_detect(tpl);
    free(tpl);
    return chat;
}

static int open_datasets(runner *r, char *err) {
    const runner_opts *o = &r->o;
    const char *chat = chat_format(o);
    for (int i = 0; i < o->n_datasets; i++) {
        ds_set *s;
        if (ds_open_chat(&s, o->datasets[i], o->template_name, chat, o->data_dir, err)) return -1;
        r->sets[r->n_sets++] = s;
        for (int j = 0; j + 1 < r->n_sets; j++)
            if (!strcmp(ds_name(r->sets[j]), ds_name(s)))
                return err_set(err, "dataset %s is given twice", ds_name(s));
        if (ds_select(s, o->offset, o->limit, o->shuffle, o->seed, err)) return -1;
        size_t a = strlen(r->datasets), b = strlen(r->templates);
        snprintf(r->datasets + a, sizeof r->datasets - a, "%s%s", i ? "," : "", ds_name(s));
        snprintf(r->templates + b, sizeof r->templates - b, "%s%s", i ? "," : "", ds_template(s));
    }
    /* --turns beyond the first need a chat template: refused here, before any model work. */
    for (int i = 0; o->turns > 1 && i < r->n_sets; i++)
        for (int j = 0; j < ds_count(r->sets[i]); j++) {
            const ds_sample *x = ds_get(r->sets[i], j);
            if (x->n_turns < 2) continue;
            char *probe;
            const char *none[] = {""};
            if (ds_turn_prompt(r->sets[i], x, 2, none, &probe, err)) return -1;
            free(probe);
            break;
        }
    /* The workload's order and turns, recorded with the datasets and templates (--resume
     * compares both): nothing is added for the defaults, so older runs still match. */
    size_t a = strlen(r->datasets), b = strlen(r->templates);
    if (o->order == RUNNER_ORDER_INTERLEAVE)
        snprintf(r->datasets + a, sizeof r->datasets - a, ";order=interleave:%d", o->order_n);
    else if (o->order == RUNNER_ORDER_SHUFFLE)
        snprintf(r->datasets + a, sizeof r->datasets - a, ";order=shuffle:%llu",
                 (unsigned long long)o->order_seed);
    if (o->turns > 1) snprintf(r->templates + b, sizeof r->templates - b, ";turns=%d", o->turns);
    if (o->cut_long) {
        b = strlen(r->templates);
        snprintf(r->templates + b, sizeof r->templates - b, ";cut-long");
    }
    return 0;
}

/* --cut-long: a prompt that leaves less than max_new tokens of context (the target's, or the
 * draft's when shorter: the draft reads the prompt too) is cut to half that context (room for
 * max_new up to the other half, and for the drafts and trees decoders verify beyond the output),
 * keeping its first token when it is BOS and its last tokens, where the papers' prompts put the
 * question and the cue to answer (few-shot examples and the start of an article go). Returns 1 when
 * it cut. */
static int cut_prompt(const runner *r, runner_prompt *p) {
    int seq = r->s.target->cfg.seq_len;
    if (r->s.draft && r->s.draft->cfg.seq_len < seq) seq = r->s.draft->cfg.seq_len;
    int keep = seq / 2;
    if (!r->o.cut_long || p->n_ids + p->max_new <= seq || p->n_ids <= keep) return 0;
    int head = p->ids[0] == r->s.target->cfg.bos_id ? 1 : 0;
    memmove(p->ids + head, p->ids + p->n_ids - (keep - head),
            sizeof *p->ids * (size_t)(keep - head));
    p->n_ids = keep;
    return 1;
}

/* The (dataset, sample) entries in --order (runner.h); *out malloc'd, pairs of ints. */
static int order_entries(const runner *r, int **out, int *n_out, char *err) {
    int total = 0;
    for (int i = 0; i < r->n_sets; i++) total += ds_count(r->sets[i]);
    int *e = malloc(sizeof *e * 2 * (size_t)(total ? total : 1)), n = 0;
    if (!e) return err_set(err, "out of memory");
    if (r->o.order == RUNNER_ORDER_INTERLEAVE) {
        int *next = calloc((size_t)r->n_sets, sizeof *next);
        if (!next) {
            free(e);
            return err_set(err, "out of memory");
        }
        while (n < total)
            for (int i = 0; i < r->n_sets; i++)
                for (int c = 0; c < r->o.order_n && next[i] < ds_count(r->sets[i]); c++)
                    e[2 * n] = i, e[2 * n + 1] = next[i]++, n++;
        free(next);
    } else {
        for (int i = 0; i < r->n_sets; i++)
            for (int j = 0; j < ds_count(r->sets[i]); j++) e[2 * n] = i, e[2 * n + 1] = j, n++;
    }
    if (r->o.order == RUNNER_ORDER_SHUFFLE) { /* Fisher-Yates, as ds_select does */
        rng_state g;
        rng_seed(&g, r->o.order_seed);
        for (int i = n - 1; i > 0; i--) {
            int j = (int)rng_below(&g, (uint32_t)(i + 1));
            int a = e[2 * i], b = e[2 * i + 1];
            e[2 * i] = e[2 * j], e[2 * i + 1] = e[2 * j + 1];
            e[2 * j] = a, e[2 * j + 1] = b;
        }
    }
    *out = e;
    *n_out = n;
    return 0;
}

/* Encodes every selected prompt in --order; refuses (or with --skip-long drops) prompts that
 * leave no room in the context for a single new token. Later turns (--turns) get their entry
 * now and their text when first measured (runner_prepare). */
static int encode_prompts(runner *r, char *err) {
    int total = 0, seq = r->s.target->cfg.seq_len, dropped = 0, cut = 0, *order = NULL, n_order = 0;
    int n_cut = 0;
    if (order_entries(r, &order, &n_order, err)) return -1;
    for (int k = 0; k < n_order; k++) {
        const ds_sample *x = ds_get(r->sets[order[2 * k]], order[2 * k + 1]);
        total += x->n_turns < r->o.turns ? x->n_turns : r->o.turns;
    }
    r->prompts = calloc((size_t)(total ? total : 1), sizeof *r->prompts);
    if (!r->prompts) {
        free(order);
        return err_set(err, "out of memory");
    }
    r->run_max_new = -1;
    for (int i = 0; i < r->n_sets; i++) {
        int max_new = r->o.max_new ? r->o.max_new : ds_default_max_new(r->sets[i]);
        r->run_max_new = r->run_max_new < 0 || r->run_max_new == max_new ? max_new : 0;
    }
    for (int k = 0; k < n_order; k++) {
        ds_set *set = r->sets[order[2 * k]];
        int j = order[2 * k + 1];
        int max_new = r->o.max_new ? r->o.max_new : ds_default_max_new(set);
        {
            runner_prompt *p = &r->prompts[r->n_prompts];
            p->sample = ds_get(set, j);
            p->set = set;
            p->turn = 1;
            p->first = r->n_prompts;
            p->key_index = p->sample->index;
            p->max_new = max_new;
            size_t bytes;
            if (!r->o.cut_long && !session_text_fits(&r->s, p->sample->prompt, seq, &bytes)) {
                /* longer than the context for certain: not encoded (--cut-long needs its
                 * tokens: it keeps the last ones) */
                if (r->o.skip_long) {
                    dropped++;
                    continue;
                }
                free(order);
                return err_set(err,
                               "%s[%d] (id %s): the prompt is %zu bytes, more than %d tokens "
                               "(of at most %zu bytes each), but the context length of %s is "
                               "%d: leave such prompts out with --skip-long",
                               p->sample->dataset, p->sample->index, p->sample->id, bytes, seq,
                               r->s.token_bytes, r->s.target->path, seq);
            }
            if (session_encode_flags(&r->s, p->sample->prompt,
                                     ds_turn_parse_special(set, 1) ? TOK_PARSE_SPECIAL : 0, &p->ids,
                                     &p->n_ids, err)) {
                free(order);
                return -1;
            }
            n_cut += cut_prompt(r, p);
            if (p->n_ids >= seq) {
                /* Not counted in n_prompts: its ids are freed here, not by runner_close. */
                free(p->ids);
                p->ids = NULL;
                if (r->o.skip_long) {
                    dropped++;
                    continue;
                }
                free(order);
                return err_set(err,
                               "%s[%d] (id %s): the prompt is %d tokens but the context length "
                               "of %s is %d: leave such prompts out with --skip-long",
                               p->sample->dataset, p->sample->index, p->sample->id, p->n_ids,
                               r->s.target->path, seq);
            }
            if (p->n_ids + max_new > seq) cut++;
            if (max_new > r->max_out) r->max_out = max_new;
            r->n_prompts++;
            /* the record's later turns, prepared when measured */
            int first = r->n_prompts - 1;
            for (int t = 2; t <= p->sample->n_turns && t <= r->o.turns; t++) {
                runner_prompt *q = &r->prompts[r->n_prompts++];
                *q = (runner_prompt){.sample = p->sample,
                                     .set = set,
                                     .turn = t,
                                     .first = first,
                                     .key_index = p->sample->index + (t - 1) * RUNNER_TURN_STRIDE,
                                     .max_new = max_new};
            }
        }
    }
    free(order);
    if (dropped)
        progress_note(&r->prog,
                      "note: %d prompt(s) longer than the context (%d) left out (--skip-long)",
                      dropped, seq);
    if (n_cut)
        progress_note(&r->prog, "note: %d prompt(s) cut to fit the context (--cut-long)", n_cut);
    if (cut)
        progress_note(&r->prog,
                      "note: %d prompt(s) leave less than max_new tokens of context: their "
                      "outputs stop at position %d, for every decoder alike",
                      cut, seq);
    if (r->n_prompts == 0) return err_set(err, "no prompts selected");
    return 0;
}

int runner_check_datasets(const runner_opts *o, char *err) {
    static runner r; /* large; one command per process */
    memset(&r, 0, sizeof r);
    r.o = *o;
    int rc = open_datasets(&r, err);
    for (int i = 0; i < r.n_sets; i++) ds_free(r.sets[i]);
    memset(&r, 0, sizeof r);
    return rc;
}

static void draft_fingerprint(const runner *r, int64_t *bytes, char hex[17]);

int runner_open(runner *r, const runner_opts *o, char *err) {
    memset(r, 0, sizeof *r);
    r->o = *o;
    progress_init(&r->prog, stderr, -1);
    /* Test hook: the mismatch path (divergence, margin, 'failed' run) cannot be reached with
     * exact decoders, so the CLI tests corrupt one output token of every non-greedy sample. */
    /* Test hook: a verifier that accepts too often (dec_sampling.test_flaw = 2), to prove the
     * standard-sampling check fails a run (tests/cli_sampling.sh). */
    const char *flaw = getenv("DECBENCH_TEST_SAMPLING_FLAW");
    if (flaw) {
        r->o.sampling.test_flaw = atoi(flaw);
        progress_note(&r->prog, "decbench: TEST HOOK DECBENCH_TEST_SAMPLING_FLAW=%s", flaw);
    }
    const char *flip = getenv("DECBENCH_TEST_FLIP_TOKEN");
    r->test_flip = flip ? atoi(flip) : -1;
    if (flip)
        progress_note(&r->prog,
                      "decbench: TEST HOOK DECBENCH_TEST_FLIP_TOKEN=%d: every non-greedy "
                      "output is corrupted at that position",
                      r->test_flip);
    /* Datasets first: a malformed record must fail before a model is even loaded. */
    if (open_datasets(r, err) ||
        session_open(&r->s, o->model, o->draft, o->tokenizer, o->kernels, o->threads, err) ||
        session_set_ctx(&r->s, o->ctx, err) || encode_prompts(r, err))
        return -1;
    if (r->s.draft_note[0]) progress_note(&r->prog, "decbench: %s", r->s.draft_note);
    if (session_self_type(o->draft)) draft_fingerprint(r, &r->self_bytes, r->self_hash);
    r->s.allow_nonfinite = o->allow_nonfinite;
    runner_watch_model(r->s.target); /* a SIGBUS in their mappings: runner_signals.c */
    runner_watch_model(r->s.draft);
    r->s.sampling = r->o.sampling;
    r->out = malloc(sizeof(int) * (size_t)r->max_out);
    /* Every verification step emits at least one token; the margin of 16 covers decoders that
     * may close a step without emitting (a full trace is never cut below that). */
    r->cap_trace = 2 * r->max_out + 16;
    r->trace = malloc(sizeof *r->trace * (size_t)(r->cap_trace + 1));
    r->logits = malloc(sizeof(float) * (size_t)r->s.target->cfg.vocab_size);
    if (!r->out || !r->trace || !r->logits) return err_set(err, "out of memory");
    return 0;
}

void runner_close(runner *r) {
    runner_free_specs(r->shard.specs, NULL, r->shard.n_specs);
    free(r->shard.mine);
    free(r->shard.greedy);
    for (int i = 0; i < r->n_prompts; i++) {
        free(r->prompts[i].ids);
        free(r->prompts[i].ref);
    }
    free(r->prompts);
    for (int i = 0; i < r->n_sets; i++) ds_free(r->sets[i]);
    dec_free(r->ref_dec);
    fwd_free(r->margin_ctx);
    free(r->out);
    free(r->trace);
    free(r->passes);
    free(r->logits);
    runner_unwatch_models(); /* before their mappings go */
    session_close(&r->s);
    memset(r, 0, sizeof *r);
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
        if (dec_create(&d, spec, &env, err)) goto fail;
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
static int keeps_state(runner *r, const char *canon, int *out, char *err) {
    dec_env env = session_env(&r->s);
    dec *d;
    char ignored[ERR_LEN];
    if (dec_create(&d, canon, &env, err)) return -1;
    *out = dec_state_name(d) && dec_state_check(d, ignored) == 0;
    dec_free(d);
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
        if (is_greedy_spec(canon[k])) continue;
        if (keeps_state(r, canon[k], &stateful[s->n_specs], err)) {
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
static int in_shard(const runner *r, const char *canon, int rep, int prompt) {
    const runner_shard *s = &r->shard;
    if (!s->n) return 1;
    size_t P = (size_t)s->prompts, R = (size_t)s->repeats;
    for (int k = 0; k < s->n_specs; k++)
        if (!strcmp(s->specs[k], canon))
            return s->mine[((size_t)k * R + (size_t)rep) * P + (size_t)prompt];
    return is_greedy_spec(canon) ? s->greedy[(size_t)rep * P + (size_t)prompt] : 0;
}

/* ---- decoder state files (--state-load / --state-save) ---------------------------------- */

/* Whether decoder d takes part in --state-load/--state-save: it keeps state and, with
 * state_only (the --pool-* aliases), has that name. */
static int has_state(const runner *r, const dec *d) {
    return dec_state_name(d) && (!r->state_only || !strcmp(dec_name(d), r->state_only));
}

int runner_check_states(runner *r, char *const *canon, int n, char *err) {
    if (!r->state_load && !r->state_save) return 0;
    const char *opt = r->state_load ? r->load_opt : r->save_opt;
    /* "ouroboros decoder(s)" for the --pool-* aliases, "decoder(s) with state" otherwise */
    const char *only = r->state_only ? r->state_only : "", *sp = *only ? " " : "";
    const char *with = *only ? "" : " with state";
    dec_env env = session_env(&r->s);
    int n_state = 0, rc = 0;
    const char *what = "state"; /* the state's name, a string of the decoder's vtable */
    for (int k = 0; k < n && rc == 0; k++) {
        dec *d;
        if (dec_create(&d, canon[k], &env, err)) return -1;
        if (has_state(r, d)) {
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
static int load_states(runner *r, dec *const *decs, int n, char *err) {
    for (int k = 0; r->state_load && k < n; k++) {
        if (!has_state(r, decs[k])) continue;
        char e[ERR_LEN];
        if (dec_state_load(decs[k], r->state_load, e))
            return err_set(err, "%s: %s", r->load_opt, e);
    }
    return 0;
}

/* After the run's last sample: the state of its decoder with state to r->state_save. */
static int save_states(runner *r, dec *const *decs, char *const *canon, int n, char *err) {
    for (int k = 0; r->state_save && k < n; k++) {
        if (!has_state(r, decs[k])) continue;
        char e[ERR_LEN], what[128];
        if (dec_state_save(decs[k], r->state_save, what, sizeof what, e))
            return err_set(err, "%s: %s", r->save_opt, e);
        fprintf(stderr, "decbench run: wrote the %s of %s%s%s%s to %s\n", dec_state_name(decs[k]),
                canon[k], what[0] ? " (" : "", what, what[0] ? ")" : "", r->state_save);
    }
    return 0;
}

/* ---- the run record and --resume ---------------------------------------------------------- */

/* The draft's fingerprint for the run record and --resume: its file's, or for --draft
 * self:TYPE (no file) FNV-1a 64 of the target's fingerprint and "self:TYPE": the draft is a
 * deterministic function of the two (model/convert/requant.h). hex = "" when there is no draft or its
 * file cannot be read. */
static void draft_fingerprint(const runner *r, int64_t *bytes, char hex[17]) {
    hex[0] = '\0';
    *bytes = 0;
    if (!r->o.draft) return;
    if (!session_self_type(r->o.draft)) {
        db_file_fingerprint(r->s.draft_path, bytes, hex, NULL);
        return;
    }
    char id[64];
    if (db_file_fingerprint(r->s.model_path, bytes, hex, NULL)) return;
    int n = snprintf(id, sizeof id, "%s%s", hex, r->o.draft);
    db_hash_hex(hash_fnv1a(id, (size_t)n < sizeof id ? (size_t)n : sizeof id - 1), hex);
    *bytes = (int64_t)model_weight_bytes(r->s.draft);
}

void runner_fill_run(const runner *r, db_run *run, db_env *env, const char *command) {
    memset(run, 0, sizeof *run);
    db_env_capture(env);
    run->command = command;
    run->label = r->o.label;
    run->model_path = r->s.model_path;
    run->draft_path = r->o.draft ? r->s.draft_path : NULL;
    if (session_self_type(r->o.draft)) /* no file: runner_open fingerprinted it */
        run->draft_hash = r->self_hash, run->draft_bytes = r->self_bytes;
    run->tokenizer = r->s.tokenizer_path;
    run->datasets = r->datasets;
    run->prompt_template = r->templates;
    run->max_new = r->run_max_new;
    run->repeats = r->o.repeats;
    run->warmup = r->o.warmup;
    run->threads = r->s.threads;
    run->kernels = kern_mode_name(r->s.kernels);
    run->seed = r->o.seed;
    run->env = env;
    run->sampling = dec_sampling_name(&r->o.sampling);
    run->temperature = r->o.sampling.temperature;
    run->top_k = r->o.sampling.top_k;
    run->top_p = r->o.sampling.top_p;
    run->sampling_seed = r->o.sampling.seed;
    run->shard = runner_shard_text(r);
}

char *runner_join_specs(char *const *canon, int n) {
    size_t len = 1;
    for (int i = 0; i < n; i++) len += strlen(canon[i]) + 1;
    char *s = malloc(len), *p = s;
    for (int i = 0; s && i < n; i++) p += sprintf(p, "%s%s", i ? "\n" : "", canon[i]);
    if (s) *p = '\0';
    return s;
}

int runner_check_run(runner *r, db *d, int64_t run_id, char *const *canon, int n, char *err) {
    db_run_info run;
    char inner[ERR_LEN];
    if (db_get_run(d, run_id, &run, inner)) {
        const char *msg = strncmp(inner, "db_get_run: ", 12) ? inner : inner + 12;
        return err_set(err, "--resume: %s", msg);
    }
    int rc = -1;
    char mhash[17] = "", dhash[17] = "";
    int64_t bytes;
    db_file_fingerprint(r->s.model_path, &bytes, mhash, NULL);
    draft_fingerprint(r, &bytes, dhash);
    struct {
        const char *what, *stored, *now;
    } text[] = {{"model", run.model_hash, mhash},
                {"draft model", run.draft_hash, dhash},
                {"datasets", run.datasets, r->datasets},
                {"templates", run.prompt_template, r->templates},
                {"kernels", run.kernels, kern_mode_name(r->s.kernels)},
                {"--sampling", run.sampling, dec_sampling_name(&r->o.sampling)}};
    struct {
        const char *what;
        int64_t stored, now;
    } num[] = {{"--max-new", run.max_new, r->run_max_new},
               {"--repeats", run.repeats, r->o.repeats},
               {"--shuffle seed", (int64_t)run.seed, (int64_t)r->o.seed},
               {"--top-k", run.top_k, r->o.sampling.top_k},
               {"--seed", (int64_t)run.sampling_seed, (int64_t)r->o.sampling.seed}};
    char **specs = NULL;
    int n_specs = 0;
    const char *shard = runner_shard_text(r);
    if (strcmp(run.shard, shard ? shard : "")) {
        err_set(err, "--resume %" PRId64 ": the run measured shard '%s', this command '%s'", run_id,
                run.shard, shard ? shard : "");
        goto done;
    }
    for (size_t i = 0; i < sizeof text / sizeof text[0]; i++)
        if (strcmp(text[i].stored, text[i].now)) {
            err_set(err,
                    "--resume %" PRId64 ": the run used %s '%s', this command '%s': give the "
                    "run's original options",
                    run_id, text[i].what, text[i].stored, text[i].now);
            goto done;
        }
    for (size_t i = 0; i < sizeof num / sizeof num[0]; i++)
        if (num[i].stored != num[i].now) {
            err_set(err,
                    "--resume %" PRId64 ": the run used %s %" PRId64 ", this command %" PRId64
                    ": give the run's original options",
                    run_id, num[i].what, num[i].stored, num[i].now);
            goto done;
        }
    const dec_sampling *smp = &r->o.sampling;
    double top_p = smp->top_p > 0 && dec_sampling_on(smp) ? smp->top_p : 1;
    if (run.temperature != (dec_sampling_on(smp) ? smp->temperature : 0) || run.top_p != top_p) {
        err_set(err,
                "--resume %" PRId64 ": the run used --temperature %g --top-p %g, this command "
                "%g and %g: give the run's original options",
                run_id, run.temperature, run.top_p, smp->temperature, top_p);
        goto done;
    }
    /* Every decoder the run measured must be one this command measures. */
    if (db_run_specs(d, run_id, &specs, &n_specs, err)) goto done;
    for (int i = 0; i < n_specs; i++) {
        int found = 0;
        for (int k = 0; k < n && !found; k++) found = !strcmp(canon[k], specs[i]);
        if (!found) {
            err_set(err,
                    "--resume %" PRId64 ": the run holds samples of %s, which this command does "
                    "not measure: give the run's original --decoder options",
                    run_id, specs[i]);
            goto done;
        }
    }
    rc = 0;
done:
    db_strings_free(specs, n_specs);
    db_run_info_free(&run);
    return rc;
}

int runner_resume(runner *r, db *d, int64_t run_id, char *const *canon, int n, char *err) {
    if (runner_check_run(r, d, run_id, canon, n, err)) return -1;
    return db_resume_run(d, run_id, err);
}

int runner_finish(db *d, int64_t run_id, int m, const runner_result *res, int allow_mismatch,
                  const char *error, db_status *status, char *err) {
    char why[ERR_LEN + 64] = "";
    *status = DB_COMPLETE;
    if (m < 0 || m == RUNNER_INTERRUPTED) {
        *status = DB_INCOMPLETE;
        snprintf(why, sizeof why, "%s", m < 0 ? error : "interrupted (SIGINT or SIGTERM)");
    } else if ((res->mismatches || res->samp_suspect) && !allow_mismatch) {
        *status = DB_FAILED;
        if (res->mismatches)
            snprintf(why, sizeof why, "%ld sample(s) differ from greedy", res->mismatches);
        else
            snprintf(why, sizeof why, "%ld decoder(s) failed the sampling check",
                     res->samp_suspect);
    }
    return db_stop_run(d, run_id, *status, why[0] ? why : NULL, err);
}

/* ---- one sample --------------------------------------------------------------------------- */

static void on_tokens(void *user, const int *tokens, int n) {
    (void)tokens;
    progress_tokens(&((runner *)user)->prog, n);
}

/* Trace slot 0 is left for the prefill pass, filled after the sample. */
static void on_step(void *user, const dec_step *s) {
    runner *r = user;
    if (r->n_trace < r->cap_trace) r->trace[1 + r->n_trace++] = *s;
}

/* The pass trace grows by doubling; a failed allocation drops the sample's pass trace (counted,
 * reported when the sample is stored) rather than the measurement. */
static void on_pass(void *user, const dec_pass *p) {
    runner *r = user;
    if (r->n_passes == r->cap_passes && !r->passes_lost) {
        int cap = r->cap_passes ? 2 * r->cap_passes : 1024;
        dec_pass *grown = realloc(r->passes, sizeof *grown * (size_t)cap);
        if (grown) r->passes = grown, r->cap_passes = cap;
    }
    if (r->n_passes < r->cap_passes)
        r->passes[r->n_passes++] = *p;
    else
        r->passes_lost = 1;
}

/* The session's environment with Ctrl-C wired in: a signal stops a sample within one pass. */
static dec_env cancellable_env(runner *r) {
    dec_env env = session_env(&r->s);
    env.cancel = runner_cancel_flag();
    return env;
}

static dec_env measuring_env(runner *r) {
    dec_env env = cancellable_env(r);
    env.user = r;
    /* No callback at all unless needed: nothing but the decoder runs inside its timing. */
    if (r->prog.live) env.on_tokens = on_tokens;
    if (r->o.trace) env.on_step = on_step, env.on_pass = on_pass;
    return env;
}

/* Standard sampling: outputs are draws, not plain sampling's tokens; they are checked by the
 * rejection tests' statistics (sampling_check) instead of token by token. */
static int standard_sampling(const runner *r) {
    return dec_sampling_on(&r->o.sampling) && r->o.sampling.mode == DEC_SAMPLING_STANDARD;
}

/* "tinystories[3] (id 3) lookahead:W=4 repeat 0", for messages ("turn 2" for later turns). */
static void where(const runner_prompt *p, const char *spec, int rep, char *buf, size_t n) {
    char turn[24] = "";
    if (p->turn > 1) snprintf(turn, sizeof turn, " turn %d", p->turn);
    snprintf(buf, n, "%s[%d] (id %s)%s %s repeat %d", p->sample->dataset, p->sample->index,
             p->sample->id, turn, spec, rep);
}

/* Greedy's top-1 minus top-2 logit before output position pos: a fresh forward pass over the
 * prompt plus greedy's first pos tokens. With the exact kernels, chunked prefill gives the same
 * bits as greedy's own token-by-token pass (batch invariance, model/forward.h), so this is the
 * margin greedy saw (with --kernels blas it may differ in the last bits). */
static double greedy_margin(runner *r, const runner_prompt *p, int pos, char *err) {
    fwd_ctx *f = r->margin_ctx;
    if (!f && fwd_new(&f, r->s.target, r->s.pool, 64, r->s.kernels, err)) return NAN;
    fwd_allow_nonfinite(f, r->s.allow_nonfinite);
    r->margin_ctx = f;
    int n = p->n_ids + pos;
    int *toks = malloc(sizeof(int) * (size_t)n);
    if (!toks) return err_set(err, "out of memory"), NAN;
    memcpy(toks, p->ids, sizeof(int) * (size_t)p->n_ids);
    memcpy(toks + p->n_ids, p->ref, sizeof(int) * (size_t)pos);
    int rc = fwd_truncate(f, 0, err) || fwd_prefill(f, toks, n, r->logits, err);
    free(toks);
    if (rc) return NAN;
    return dec_sampling_margin(&r->o.sampling, r->logits, r->s.target->cfg.vocab_size,
                               p->n_ids + pos);
}

/* Compares r->out[0..n) with greedy's reference and fills the match fields of s. */
static void check_exact(runner *r, const runner_prompt *p, int n, db_sample *s, const char *shown,
                        int rep, runner_result *res) {
    int pos = 0, m = n < p->n_ref ? n : p->n_ref;
    while (pos < m && r->out[pos] == p->ref[pos]) pos++;
    s->match = pos == n && pos == p->n_ref;
    if (s->match) return;
    char err[ERR_LEN] = "";
    s->diverge_pos = pos;
    s->greedy_token = pos < p->n_ref ? p->ref[pos] : -1;
    s->decoder_token = pos < n ? r->out[pos] : -1;
    s->greedy_margin = pos < p->n_ref ? greedy_margin(r, p, pos, err) : NAN;
    res->mismatches++;
    char w[512], margin[ERR_LEN + 32];
    where(p, shown, rep, w, sizeof w);
    if (!isnan(s->greedy_margin))
        snprintf(margin, sizeof margin, "%.6g", s->greedy_margin);
    else if (pos >= p->n_ref)
        snprintf(margin, sizeof margin, "none (greedy had ended)");
    else
        snprintf(margin, sizeof margin, "unknown (%s)", err);
    progress_note(&r->prog,
                  "decbench: ************************************************************\n"
                  "decbench: *** MISMATCH: %s: the output differs from greedy's\n"
                  "decbench: *** first difference at output position %d (%d greedy tokens, %d from "
                  "the decoder): greedy token %d, decoder token %d (-1: ended)\n"
                  "decbench: *** greedy's top-1 minus top-2 %s there: %s (near 0: a tie broken "
                  "by rounding; large: a decoder bug)\n"
                  "decbench: ************************************************************",
                  w, pos, p->n_ref, n, s->greedy_token, s->decoder_token,
                  dec_sampling_on(&r->o.sampling) ? "score (logit / T + noise)" : "logit", margin);
}

/* Generates one sample with d and stores it. */
static int measure_one(runner *r, db *d, int64_t run_id, dec *dc, const char *canon,
                       const char *shown, runner_prompt *p, int rep, runner_result *res,
                       char *err) {
    const ds_sample *x = p->sample;
    dec_stats st;
    int n = 0;
    char w[512];
    where(p, shown, rep, w, sizeof w);
    r->n_trace = 0;
    r->n_passes = 0;
    r->passes_lost = 0;
    progress_sample_start(&r->prog, shown);
    int g = dec_generate(dc, p->ids, p->n_ids, p->max_new, r->out, &n, &st, err);
    /* a model file that shrank during the last pass: that pass read zeros, drop the sample */
    if (g == DEC_CANCELLED || runner_changed_file()) return RUNNER_CANCELLED;
    if (g) {
        char e[ERR_LEN];
        snprintf(e, sizeof e, "%s", err);
        return err_set(err, "%s: %s", w, e);
    }
    db_sample s = {.dataset = x->dataset,
                   .sample_index = p->key_index,
                   .turn = p->turn,
                   .sample_key = x->id,
                   .category = x->category,
                   .decoder = dec_name(dc),
                   .spec = canon,
                   .repeat = rep,
                   .output_hash = db_output_hash(r->out, n)};
    if (standard_sampling(r)) {
        s.match = is_greedy_spec(canon) ? 1 : -1; /* plain sampling is its own reference */
    } else if (!p->ref) { /* greedy's first output for this prompt: it IS the reference */
        p->ref = malloc(sizeof(int) * (size_t)(n ? n : 1));
        if (!p->ref) return err_set(err, "out of memory");
        memcpy(p->ref, r->out, sizeof(int) * (size_t)n);
        p->n_ref = n;
        s.match = 1;
    } else {
        if (r->test_flip >= 0 && r->test_flip < n && !is_greedy_spec(canon)) {
            r->out[r->test_flip] = (r->out[r->test_flip] + 1) % r->s.target->cfg.vocab_size;
            s.output_hash = db_output_hash(r->out, n);
        }
        check_exact(r, p, n, &s, shown, rep, res);
    }
    int n_trace = 0;
    if (r->o.trace) {
        /* Step 0 is the prefill pass (the framework times step 1 from the prefill's end). */
        int emitted = 0;
        for (int i = 1; i <= r->n_trace; i++) emitted += r->trace[i].emitted;
        r->trace[0] = (dec_step){0, st.prompt_tokens, 0, 0, st.new_tokens - emitted, st.t_prefill};
        n_trace = 1 + r->n_trace;
        if (r->passes_lost)
            progress_note(&r->prog, "decbench: %s: out of memory for the pass trace: stored "
                          "without it", w);
        else
            s.passes = r->passes, s.n_passes = r->n_passes;
    }
    if (db_insert_sample(d, run_id, &s, &st, r->o.trace ? r->trace : NULL, n_trace, NULL, err))
        return -1;
    r->last = st;
    res->measured++;
    progress_sample_done(&r->prog, n, st.t_total);
    return 0;
}

/* Greedy's output for p without storing it (greedy not measured in this run, or resumed). */
static int reference(runner *r, runner_prompt *p, char *err) {
    dec_env env = cancellable_env(r);
    if (!r->ref_dec && dec_create(&r->ref_dec, "greedy", &env, err)) return -1;
    dec_stats st;
    int n;
    progress_sample_start(&r->prog, "greedy (reference, not stored)");
    int g = dec_generate(r->ref_dec, p->ids, p->n_ids, p->max_new, r->out, &n, &st, err);
    if (g == DEC_CANCELLED) return RUNNER_CANCELLED;
    if (g) {
        char e[ERR_LEN], w[512];
        snprintf(e, sizeof e, "%s", err);
        where(p, "greedy (reference)", 0, w, sizeof w);
        return err_set(err, "%s: %s", w, e);
    }
    p->ref = malloc(sizeof(int) * (size_t)(n ? n : 1));
    if (!p->ref) return err_set(err, "out of memory");
    memcpy(p->ref, r->out, sizeof(int) * (size_t)n);
    p->n_ref = n;
    return 0;
}

/* ---- later turns (--turns) ---------------------------------------------------------------- */

/* Greedy's answer to prompt p as text, the way FastChat puts it back into the conversation:
 * the output up to (not including) the end token, decoded, stripped of surrounding space. */
static char *answer_text(const runner *r, const runner_prompt *p) {
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    if (!m) return NULL;
    int prev = p->ids[p->n_ids - 1];
    for (int i = 0; i < p->n_ref && p->ref[i] != r->s.target->cfg.end_id; i++) {
        size_t k;
        const char *piece = tok_text(r->s.tokenizer, prev, p->ref[i], &k);
        if (piece && k > 0) fwrite(piece, 1, k, m);
        prev = p->ref[i];
    }
    fclose(m);
    char *a = buf, *z = buf + len;
    while (a < z && (*a == ' ' || *a == '\n' || *a == '\t' || *a == '\r')) a++;
    while (z > a && (z[-1] == ' ' || z[-1] == '\n' || z[-1] == '\t' || z[-1] == '\r')) z--;
    memmove(buf, a, (size_t)(z - a));
    buf[z - a] = '\0';
    return buf;
}

int runner_prepare(runner *r, int i, char *err) {
    runner_prompt *p = &r->prompts[i];
    if (p->ids || p->skip) return 0;
    /* greedy's answers to the turns before this one: measured earlier in this process, or an
     * unstored greedy pass (a shard or a resumed run that did not measure them) */
    const char *answers[16];
    char *owned[16] = {0};
    int rc = 0;
    for (int t = 1; t < p->turn && rc == 0; t++) {
        int k = p->first + t - 1;
        rc = runner_prepare(r, k, err);
        if (rc == 0 && r->prompts[k].skip) {
            p->skip = 1; /* an earlier turn did not fit: neither does this one */
            break;
        }
        if (rc == 0 && !r->prompts[k].ref) rc = reference(r, &r->prompts[k], err);
        if (rc == 0 && !(owned[t - 1] = answer_text(r, &r->prompts[k])))
            rc = err_set(err, "out of memory");
        answers[t - 1] = owned[t - 1];
    }
    char *text = NULL;
    int seq = r->s.target->cfg.seq_len;
    if (rc == 0 && !p->skip && ds_turn_prompt(p->set, p->sample, p->turn, answers, &text, err))
        rc = -1;
    size_t bytes;
    if (rc == 0 && !p->skip && !r->o.cut_long && !session_text_fits(&r->s, text, seq, &bytes)) {
        char w[512];
        where(p, "", 0, w, sizeof w);
        if (!r->o.skip_long)
            rc = err_set(err,
                         "%s: the prompt (greedy's earlier answers included) is %zu bytes, more "
                         "than %d tokens (of at most %zu bytes each), but the context length of "
                         "%s is %d: leave such prompts out with --skip-long",
                         w, bytes, seq, r->s.token_bytes, r->s.target->path, seq);
        else {
            p->skip = 1;
            progress_note(&r->prog, "note: %s left out: %zu bytes, longer than the context (%d)", w,
                          bytes, seq);
        }
    }
    if (rc == 0 && !p->skip &&
        session_encode_flags(&r->s, text,
                             ds_turn_parse_special(p->set, p->turn) ? TOK_PARSE_SPECIAL : 0,
                             &p->ids, &p->n_ids, err))
        rc = -1;
    free(text);
    for (int t = 0; t < 16; t++) free(owned[t]);
    if (rc || p->skip) return rc;
    if (cut_prompt(r, p)) {
        char w[512];
        where(p, "", 0, w, sizeof w);
        progress_note(&r->prog, "note: %s cut to %d tokens (--cut-long)", w, p->n_ids);
    }
    if (p->n_ids >= seq) {
        char w[512];
        where(p, "", 0, w, sizeof w);
        free(p->ids);
        p->ids = NULL;
        if (!r->o.skip_long)
            return err_set(err,
                           "%s: the prompt (greedy's earlier answers included) is %d tokens but "
                           "the context length of %s is %d: leave such prompts out with "
                           "--skip-long",
                           w, p->n_ids, r->s.target->path, seq);
        p->skip = 1;
        progress_note(&r->prog, "note: %s left out: %d tokens, longer than the context (%d)", w,
                      p->n_ids, seq);
    }
    return 0;
}

/* Unstored passes on the first prompt with a throw-away instance (see runner.h). */
static int warm_up(runner *r, const char *canon, const char *shown, char *err) {
    if (r->o.warmup == 0) return 0;
    dec_env env = cancellable_env(r);
    dec *d;
    if (dec_create(&d, canon, &env, err)) return -1;
    char label[64];
    snprintf(label, sizeof label, "%.40s (warm-up)", shown);
    progress_sample_start(&r->prog, label);
    const runner_prompt *p = &r->prompts[0];
    int rc = 0, n;
    dec_stats st;
    for (int i = 0; i < r->o.warmup && rc == 0 && !runner_stopped(); i++)
        rc = dec_generate(d, p->ids, p->n_ids, p->max_new, r->out, &n, &st, err);
    dec_free(d);
    return rc == DEC_CANCELLED ? RUNNER_CANCELLED : rc;
}

/* ---- the state of a resumed run ----------------------------------------------------------- */

/* A decoder that keeps state across prompts (Ouroboros' pool, the suffix decoder's tree) starts
 * each repeat from --state-load or empty, and every sample changes it. When an earlier process
 * stored some of this repeat's samples (--resume), the state they left is rebuilt before the
 * decoder measures again or its state is saved: each of them is generated again, unstored, in
 * the run's order, from the same starting state. A decoder is a deterministic function of its
 * state, the prompt and the seed (decoder.h), so this is the state an uninterrupted run would
 * have: the remaining samples measure the same work, and --state-save writes the same file.
 * The state is not a function of the outputs alone (Ouroboros' pool also learns the draft's
 * phrases and the target's corrections), which is why the samples are generated again rather
 * than their outputs replayed. idx[0..n_idx): the prompts, in order. */
static int rebuild_state(runner *r, dec *dc, const char *shown, const int *idx, int n_idx, int rep,
                         char *err) {
    char label[160];
    snprintf(label, sizeof label, "%.60s (rebuilding its %s, not stored)", shown,
             dec_state_name(dc));
    progress_note(&r->prog,
                  "decbench: %s: rebuilding its %s from the %d sample(s) of repeat %d stored "
                  "before (generated again, not stored)",
                  shown, dec_state_name(dc), n_idx, rep);
    for (int j = 0; j < n_idx; j++) {
        runner_prompt *p = &r->prompts[idx[j]];
        int prep = runner_prepare(r, idx[j], err);
        if (prep) return prep;
        if (p->skip) continue; /* left out (--skip-long): the run never generated it */
        dec_stats st;
        int n;
        progress_sample_start(&r->prog, label);
        int g = dec_generate(dc, p->ids, p->n_ids, p->max_new, r->out, &n, &st, err);
        if (g == DEC_CANCELLED || runner_changed_file()) return RUNNER_CANCELLED;
        if (g) {
            char e[ERR_LEN], w[512];
            snprintf(e, sizeof e, "%s", err);
            where(p, shown, rep, w, sizeof w);
            return err_set(err, "%s (rebuilding the %s): %s", w, dec_state_name(dc), e);
        }
    }
    return 0;
}

/* ---- the loop ----------------------------------------------------------------------------- */

/* A decoder's rejection tests over the samples this command measured (standard sampling). */
typedef struct {
    long tests, accepts;
    double expected, variance;
} samp_sums;

static void samp_add(samp_sums *c, const dec_stats *st) {
    c->tests += st->samp_tests;
    c->accepts += st->samp_accepts;
    c->expected += st->samp_expected;
    c->variance += st->samp_variance;
}

/* Acceptance against its theoretical rate: each rejection test accepts with a probability the
 * decoder knows before drawing (sum min(p, q), or p(x) for a fixed guess), so the acceptances
 * of a correct verifier are their expected number within a few standard deviations. |z| > 5
 * (a chance of 6e-7 for a correct one) is reported as a failure. Returns how many failed. */
static long sampling_check(runner *r, const samp_sums *c, char *const *shown, int n) {
    long bad = 0;
    for (int k = 0; k < n; k++) {
        if (c[k].tests == 0) continue;
        double z = c[k].variance > 0 ? (c[k].accepts - c[k].expected) / sqrt(c[k].variance) : 0;
        int suspect = fabs(z) > 5;
        bad += suspect;
        progress_note(&r->prog,
                      "decbench: sampling check: %s: %ld of %ld rejection tests accepted "
                      "(%.1f%%), theory %.1f (%.1f%%): z = %.2f%s",
                      shown[k], c[k].accepts, c[k].tests, 100.0 * c[k].accepts / c[k].tests,
                      c[k].expected, 100.0 * c[k].expected / c[k].tests, z,
                      suspect ? ": *** FAILED (|z| > 5): the verifier does not keep plain "
                                "sampling's distribution"
                              : "");
    }
    return bad;
}

int runner_measure(runner *r, db *d, int64_t run_id, char *const *canon, char *const *shown, int n,
                   const char *title, runner_result *res, char *err) {
    memset(res, 0, sizeof *res);
    dec **decs = calloc((size_t)n, sizeof *decs);
    char *warmed = calloc((size_t)n, 1), *todo = calloc((size_t)n, 1);
    samp_sums *check = calloc((size_t)n, sizeof *check);
    /* rebuild_state's work: per decoder with state, the prompts of this repeat an earlier
     * process stored, not yet generated again */
    char *stateful = calloc((size_t)n, 1);
    int *stored = malloc(sizeof *stored * (size_t)n * (size_t)(r->n_prompts + 1));
    int *n_stored = calloc((size_t)n, sizeof *n_stored);
    int rc = -1;
    if (!decs || !warmed || !todo || !check || !stateful || !stored || !n_stored) {
        err_set(err, "out of memory");
        goto done;
    }
    dec_env env = measuring_env(r);
    long total = 0; /* the samples of this shard (all of them without --shard) */
    for (int rep = 0; rep < r->o.repeats; rep++)
        for (int i = 0; i < r->n_prompts; i++)
            for (int k = 0; k < n; k++) total += in_shard(r, canon[k], rep, i);
    progress_begin(&r->prog, title, total);
    for (int rep = 0; rep < r->o.repeats; rep++) {
        /* Fresh instances per repeat: no state carries from one repeat into the next. */
        for (int k = 0; k < n; k++) {
            dec_free(decs[k]);
            decs[k] = NULL;
            if (dec_create(&decs[k], canon[k], &env, err)) goto done;
            char ignored[ERR_LEN];
            stateful[k] = dec_state_name(decs[k]) && dec_state_check(decs[k], ignored) == 0;
            n_stored[k] = 0;
        }
        if (load_states(r, decs, n, err)) goto done;
        for (int i = 0; i < r->n_prompts; i++) {
            runner_prompt *p = &r->prompts[i];
            int n_todo = 0, n_mine = 0;
            for (int k = 0; k < n; k++) {
                int done = 0, mine = in_shard(r, canon[k], rep, i);
                if (mine && db_sample_done(d, run_id, p->sample->dataset, p->key_index, canon[k],
                                           rep, &done, err))
                    goto done;
                todo[k] = mine && !done;
                n_todo += todo[k];
                n_mine += mine;
                if (mine && done && stateful[k])
                    stored[(size_t)k * (size_t)r->n_prompts + (size_t)n_stored[k]++] = i;
            }
            /* a later turn is built from greedy's earlier answers when first needed */
            int prep = n_todo ? runner_prepare(r, i, err) : 0;
            if (prep < 0) goto done;
            if (prep == RUNNER_CANCELLED) {
                rc = RUNNER_INTERRUPTED;
                goto done;
            }
            if (p->skip) n_todo = 0; /* longer than the context: left out (--skip-long) */
            for (int k = 0; p->skip && k < n; k++) todo[k] = 0;
            progress_skip(&r->prog, n_mine - n_todo);
            res->skipped += n_mine - n_todo;
            for (int k = 0; k < n; k++) {
                if (!todo[k]) continue;
                /* each step returns -1 on error, RUNNER_CANCELLED when Ctrl-C stopped it */
                int step_rc = 0;
                if (!warmed[k]) {
                    step_rc = warm_up(r, canon[k], shown[k], err);
                    warmed[k] = step_rc == 0;
                }
                if (step_rc == 0 && n_stored[k]) {
                    step_rc = rebuild_state(r, decs[k], shown[k],
                                            stored + (size_t)k * (size_t)r->n_prompts, n_stored[k],
                                            rep, err);
                    n_stored[k] = 0;
                }
                if (step_rc == 0 && !p->ref && !is_greedy_spec(canon[k]) && !standard_sampling(r))
                    step_rc = reference(r, p, err);
                if (step_rc < 0) goto done;
                if (step_rc == 0 && !runner_stopped()) {
                    step_rc =
                        measure_one(r, d, run_id, decs[k], canon[k], shown[k], p, rep, res, err);
                    if (step_rc == 0) samp_add(&check[k], &r->last);
                }
                if (step_rc < 0) goto done;
                if (step_rc == RUNNER_CANCELLED || runner_stopped()) {
                    rc = RUNNER_INTERRUPTED;
                    goto done;
                }
            }
        }
    }
    /* the saved state is the last repeat's: its samples stored before are generated again */
    for (int k = 0; r->state_save && k < n; k++) {
        if (!n_stored[k] || !has_state(r, decs[k])) continue;
        int b = rebuild_state(r, decs[k], shown[k], stored + (size_t)k * (size_t)r->n_prompts,
                              n_stored[k], r->o.repeats - 1, err);
        n_stored[k] = 0;
        if (b < 0) goto done;
        if (b == RUNNER_CANCELLED || runner_stopped()) {
            rc = RUNNER_INTERRUPTED;
            goto done;
        }
    }
    if (save_states(r, decs, canon, n, err)) goto done;
    if (standard_sampling(r)) res->samp_suspect = sampling_check(r, check, shown, n);
    rc = RUNNER_DONE;
done:
    if (runner_changed_file()) { /* whatever stopped the loop, this is why */
        rc = err_set(err,
                     "%s changed while in use: the file shrank under the run's mapping (SIGBUS); "
                     "the sample being measured is not stored: restore the file, then --resume",
                     runner_changed_file());
    }
    free(check);
    free(stateful);
    free(stored);
    free(n_stored);
    for (int k = 0; decs && k < n; k++) dec_free(decs[k]);
    free(decs);
    free(warmed);
    free(todo);
    progress_end(&r->prog);
    return rc;
}
