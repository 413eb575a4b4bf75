/* runner_record.c: the run record a run stores, and --resume: checking that a stored run is
 * the same work and picking up where it stopped. */
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

/* ---- the run record and --resume ---------------------------------------------------------- */

/* The draft's fingerprint for the run record and --resume: its file's, or for --draft
 * self:TYPE (no file) FNV-1a 64 of the target's fingerprint and "self:TYPE": the draft is a
 * deterministic function of the two (model/convert/requant.h). hex = "" when there is no draft or
 * its file cannot be read. */
void runner_draft_fingerprint(const runner *r, int64_t *bytes, char hex[17]) {
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
    run->kv_type = kv_type_name(r->s.kv);
    run->seed = r->o.seed;
    run->env = env;
    run->sampling = dec_sampling_name(&r->o.sampling);
    run->temperature = r->o.sampling.temperature;
    run->top_k = r->o.sampling.top_k;
    run->top_p = r->o.sampling.top_p;
    run->sampling_seed = r->o.sampling.seed;
    run->shard = runner_shard_text(r);
    run->batch = r->o.batch;
    run->continuous = r->o.continuous;
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
    runner_draft_fingerprint(r, &bytes, dhash);
    struct {
        const char *what, *stored, *now;
    } text[] = {{"model", run.model_hash, mhash},
                {"draft model", run.draft_hash, dhash},
                {"datasets", run.datasets, r->datasets},
                {"templates", run.prompt_template, r->templates},
                {"kernels", run.kernels, kern_mode_name(r->s.kernels)},
                {"--kv-type", run.kv_type, kv_type_name(r->s.kv)},
                {"--sampling", run.sampling, dec_sampling_name(&r->o.sampling)}};
    struct {
        const char *what;
        int64_t stored, now;
    } num[] = {{"--max-new", run.max_new, r->run_max_new},
               {"--repeats", run.repeats, r->o.repeats},
               {"--shuffle seed", (int64_t)run.seed, (int64_t)r->o.seed},
               {"--top-k", run.top_k, r->o.sampling.top_k},
               {"--batch", run.batch, r->o.batch > 1 ? r->o.batch : 1},
               {"--continuous", run.continuous, r->o.continuous},
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
