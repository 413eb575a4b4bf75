/* runner_open.c: opening a run (runner.h): its datasets, then the models, then the prompts
 * encoded and ordered; and closing it. */
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
int runner_cut_prompt(const runner *r, runner_prompt *p) {
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
                               "%d: leave such prompts out with --skip-long"
                               ", or keep their last tokens with --cut-long",
                               p->sample->dataset, p->sample->index, p->sample->id, bytes, seq,
                               r->s.token_bytes, r->s.target->path, seq);
            }
            if (session_encode_flags(&r->s, p->sample->prompt,
                                     ds_turn_parse_special(set, 1) ? TOK_PARSE_SPECIAL : 0, &p->ids,
                                     &p->n_ids, err)) {
                free(order);
                return -1;
            }
            n_cut += runner_cut_prompt(r, p);
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
                               "of %s is %d: leave such prompts out with --skip-long"
                               ", or keep their last tokens with --cut-long",
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
        session_set_ctx(&r->s, o->ctx, err) || session_set_kv(&r->s, o->kv_type, err) ||
        encode_prompts(r, err))
        return -1;
    if (r->s.draft_note[0]) progress_note(&r->prog, "decbench: %s", r->s.draft_note);
    if (session_self_type(o->draft)) runner_draft_fingerprint(r, &r->self_bytes, r->self_hash);
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
