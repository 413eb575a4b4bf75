/* report_samples.c: the `samples` layout, one row per sample, and its JSONL form: the records of
 * a Spec-Bench answer file, so that Spec-Bench's evaluation/speed.py (and anything written for
 * its files) reads decbench results.
 *
 * A Spec-Bench record is one question with the turns of one method: {"question_id",
 * "category", "answer_id", "model_id", "choices": [{"index": 0, "turns", "new_tokens",
 * "wall_time", "decoding_steps", "accept_lengths"}]}, the four lists per turn except
 * accept_lengths, one flat list of the tokens each decoding step produced over all turns.
 * Here: one record per dataset x question x decoder x repeat (both turns of a multi-turn
 * question in one record), with
 *   new_tokens      samples.new_tokens per turn;
 *   wall_time       samples.t_total (seconds, the whole generate call, as Spec-Bench times it);
 *   decoding_steps  target passes after the prompt pass (STAT_DERIVED decode_steps);
 *   accept_lengths  tokens per decoding step, the bonus when emitted (Spec-Bench's convention,
 *                   so its "mean accepted tokens" is decbench's mean acc. tokens (SB),
 *                   report_figures.c): from the per-step trace when the
 *                   run stored one (--trace), in step order; otherwise the accept histogram
 *                   expanded (k accepted drafted tokens -> k + 1), ascending, which is the same
 *                   multiset unless a step emitted no bonus (an accepted end token, lookahead's
 *                   full_bonus=0: store --trace for those), so every mean and histogram
 *                   speed.py computes is exact; a decoder
 *                   without verification steps (greedy) gets one 1 per decoding step;
 *   turns           "" per turn: decbench keeps the output's hash, not its text (the record
 *                   carries "output_hash" per turn instead);
 * plus decbench's own keys: dataset, decoder (the short label), spec, repeat, run, matched.
 * Spec-Bench keeps one method per file: filter with `report --decoder NAME|LABEL`. */
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "results/report/report_internal.h"
#include "util/text_escape.h"
#include "util/err.h"

/* Turn t of record i is stored with sample_index i + (t - 1) * 10^6 (schema.sql step 6): the
 * record's index is the remainder. */
static const char SAMPLES_SQL[] =
    "SELECT s.id, s.run_id, s.dataset, s.sample_index %% 1000000, s.sample_key, s.category, "
    "s.decoder, s.spec, s.repeat, s.turn, s.new_tokens, s.target_steps, s.t_total, s.matched, "
    "s.output_hash, s.accepted, s.verify_steps, %s, "
    "(SELECT r.model_path FROM runs r WHERE r.id = s.run_id), s.drafting_steps "
    "FROM samples s WHERE s.run_id = ? "
    "ORDER BY s.dataset, s.spec <> 'greedy', s.spec, s.sample_index %% 1000000, s.repeat, s.turn";

/* Tokens per decoding step of sample sid into arr (see the header comment). */
static int accept_lengths(sqlite3 *h, int64_t sid, int64_t decode_steps, json_t *arr, char *err) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(
            h, "SELECT emitted FROM trace WHERE sample_id = ? AND step > 0 ORDER BY step", -1, &st,
            NULL) != SQLITE_OK)
        return err_set(err, "report: %s", db_errmsg(h));
    sqlite3_bind_int64(st, 1, sid);
    int traced = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        json_array_append_new(arr, json_integer(sqlite3_column_int64(st, 0)));
        traced = 1;
    }
    sqlite3_finalize(st);
    if (traced) return 0;
    if (sqlite3_prepare_v2(
            h,
            "SELECT k, count FROM histograms WHERE sample_id = ? AND kind = 'accept' "
            "ORDER BY k",
            -1, &st, NULL) != SQLITE_OK)
        return err_set(err, "report: %s", db_errmsg(h));
    sqlite3_bind_int64(st, 1, sid);
    int64_t n = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        int64_t k = sqlite3_column_int64(st, 0), c = sqlite3_column_int64(st, 1);
        /* one entry per verification step: no more than a sample's tokens (each step yields
         * one), whatever the histogram says */
        if (c < 0 || n + c > DB_MAX_TOKENS + 1) {
            sqlite3_finalize(st);
            return err_set(err,
                           "report: sample %" PRId64 ": its accept histogram counts more "
                           "verification steps than a sample has tokens (%d)",
                           sid, DB_MAX_TOKENS);
        }
        for (int64_t i = 0; i < c; i++) json_array_append_new(arr, json_integer(k + 1));
        n += c;
    }
    sqlite3_finalize(st);
    if (decode_steps > DB_MAX_TOKENS + 1)
        return err_set(err,
                       "report: sample %" PRId64 ": %" PRId64 " decode steps, more than a "
                       "sample has tokens (%d)",
                       sid, decode_steps, DB_MAX_TOKENS);
    for (int64_t i = 0; n == 0 && i < decode_steps; i++)
        json_array_append_new(arr, json_integer(1));
    return 0;
}

static int wanted(const report_opts *o, const char *decoder, const char *label) {
    const char *f = o->ablation_decoder;
    return !f || !strcmp(f, decoder) || !strcmp(f, label);
}

int rep_samples_layout(db *d, const int64_t *ids, int n_ids, const report_opts *o, rtable *t,
                       FILE *jsonl, char *err) {
    sqlite3 *h = db_sqlite(d);
    char sql[2048];
    snprintf(sql, sizeof sql, SAMPLES_SQL, stat_derived[STAT_D_decode_steps].sql);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) != SQLITE_OK)
        return err_set(err, "report: %s", db_errmsg(h));
    int c[16];
    if (t) {
        const char *cols[][3] = {{"run", "run", "i"},
                                 {"dataset", "dataset", "t"},
                                 {"index", "index", "i"},
                                 {"id", "question_id", "t"},
                                 {"turn", "turn", "i"},
                                 {"decoder", "label", "t"},
                                 {"spec", "spec", "t"},
                                 {"repeat", "repeat", "i"},
                                 {"new tokens", "new_tokens", "i"},
                                 {"steps", "decoding_steps", "i"},
                                 {"tokens/step", "tokens_per_step", "r"},
                                 {"tau (vLLM)", "tau", "r"},
                                 {"wall s", "wall_time", "r"},
                                 {"tok/s e2e", "tps_e2e", "r"},
                                 {"exact", "matched", "i"},
                                 {"mean acc. tokens (SB)", "mean_accepted_tokens", "r"}};
        for (int k = 0; k < 16; k++)
            c[k] = rt_col_add(t, cols[k][0], cols[k][1],
                              cols[k][2][0] == 't'   ? RT_TEXT
                              : cols[k][2][0] == 'i' ? RT_INT
                                                     : RT_REAL,
                              k == 12   ? "%.4f"
                              : k == 13 ? "%.1f"
                                        : "%.2f");
        rt_col_hide(t, c[6]);
    }
    json_t *rec = NULL, *choice = NULL;
    char *prev = NULL; /* the record's key (whole: a cut key could join two records) */
    int rc = 0;
    long rows = 0;
    for (int r = 0; rc == 0 && r < n_ids; r++) {
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, ids[r]);
        while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
#define TXT(i) ((const char *)sqlite3_column_text(st, i))
            int64_t sid = sqlite3_column_int64(st, 0), run = sqlite3_column_int64(st, 1);
            int index = sqlite3_column_int(st, 3), rep = sqlite3_column_int(st, 8),
                turn = sqlite3_column_int(st, 9);
            int64_t nt = sqlite3_column_int64(st, 10), steps = sqlite3_column_int64(st, 11),
                    acc = sqlite3_column_int64(st, 15), dsteps = sqlite3_column_int64(st, 17);
            double wall = sqlite3_column_double(st, 12);
            char lab[1024];
            rep_label(TXT(7), o->default_specs, o->default_specs ? o->n_default_specs : 0, lab,
                      sizeof lab);
            if (!wanted(o, TXT(6), lab)) continue;
            rows++;
            if (t) {
                int row = rt_row_add(t);
                rt_set_num(t, row, c[0], (double)run);
                rt_set_text(t, row, c[1], TXT(2));
                rt_set_num(t, row, c[2], index);
                rt_set_text(t, row, c[3], TXT(4));
                rt_set_num(t, row, c[4], turn);
                rt_set_text(t, row, c[5], lab);
                rt_set_text(t, row, c[6], TXT(7));
                rt_set_num(t, row, c[7], rep);
                rt_set_num(t, row, c[8], (double)nt);
                rt_set_num(t, row, c[9], (double)dsteps);
                rt_set_num(t, row, c[10], steps > 0 ? (double)nt / steps : NAN);
                int64_t drafting = sqlite3_column_int64(st, 19);
                rt_set_num(t, row, c[11], drafting > 0 ? 1 + (double)acc / drafting : NAN);
                rt_set_num(t, row, c[12], wall);
                rt_set_num(t, row, c[13], wall > 0 ? nt / wall : NAN);
                rt_set_num(t, row, c[14],
                           sqlite3_column_type(st, 13) == SQLITE_NULL
                               ? NAN
                               : sqlite3_column_double(st, 13));
                rt_set_num(t, row, c[15], dsteps > 0 ? (double)(nt - 1) / dsteps : NAN);
                continue;
            }
            /* JSONL: the turns of one question, decoder and repeat form one record */
            char *key = sqlite3_mprintf("%lld\x1f%s\x1f%d\x1f%s\x1f%d", (long long)run, TXT(2),
                                        index, TXT(7), rep);
            if (!key) {
                rc = err_set(err, "report: out of memory");
                break;
            }
            if (!prev || strcmp(key, prev)) {
                if (rec) {
                    if (json_dumpf(rec, jsonl, JSON_COMPACT | JSON_PRESERVE_ORDER)) rc = -1;
                    fputc('\n', jsonl);
                    json_decref(rec);
                }
                const char *model = TXT(18) ? TXT(18) : "";
                const char *slash = strrchr(model, '/');
                char answer[128];
                snprintf(answer, sizeof answer, "decbench-%" PRId64 "-%" PRId64, run, sid);
                const char *qid = TXT(4);
                char *end = NULL;
                long long qnum = qid ? strtoll(qid, &end, 10) : 0;
                choice = json_pack("{s:i, s:[], s:[], s:[], s:[], s:[], s:[]}", "index", 0, "turns",
                                   "new_tokens", "wall_time", "decoding_steps", "accept_lengths",
                                   "output_hash");
                rec = json_pack(
                    "{s:o, s:o, s:s, s:o, s:[o], s:o, s:o, s:o, s:i, s:I}", "question_id",
                    qid && end && !*end && *qid ? json_integer(qnum) : txt_json(qid ? qid : ""),
                    "category", TXT(5) ? txt_json(TXT(5)) : json_null(), "answer_id", answer,
                    "model_id", txt_json(slash ? slash + 1 : model), "choices", choice, "dataset",
                    txt_json(TXT(2)), "decoder", txt_json(lab), "spec", txt_json(TXT(7)), "repeat",
                    rep, "run", (json_int_t)run);
                if (!rec) {
                    rc = err_set(err, "report: out of memory");
                    break;
                }
                json_object_set_new(rec, "matched", json_true());
                sqlite3_free(prev);
                prev = key;
                key = NULL;
            }
            sqlite3_free(key);
            json_array_append_new(json_object_get(choice, "turns"), json_string(""));
            json_array_append_new(json_object_get(choice, "new_tokens"), json_integer(nt));
            json_array_append_new(json_object_get(choice, "wall_time"), json_real(wall));
            json_array_append_new(json_object_get(choice, "decoding_steps"), json_integer(dsteps));
            json_array_append_new(json_object_get(choice, "output_hash"), txt_json(TXT(14)));
            if (sqlite3_column_type(st, 13) != SQLITE_NULL && !sqlite3_column_int(st, 13))
                json_object_set_new(rec, "matched", json_false());
            if (accept_lengths(h, sid, dsteps, json_object_get(choice, "accept_lengths"), err))
                rc = -1;
#undef TXT
        }
    }
    sqlite3_finalize(st);
    sqlite3_free(prev);
    if (rec) {
        if (rc == 0 && json_dumpf(rec, jsonl, JSON_COMPACT | JSON_PRESERVE_ORDER)) rc = -1;
        if (rc == 0) fputc('\n', jsonl);
        json_decref(rec);
    }
    if (rc == 0 && rows == 0)
        return err_set(err, "report: no samples%s%s in the run(s) reported",
                       o->ablation_decoder ? " of " : "",
                       o->ablation_decoder ? o->ablation_decoder : "");
    if (rc == 0 && jsonl && ferror(jsonl)) return err_set(err, "report: cannot write JSONL");
    if (t && rc == 0)
        rt_note(t, "One row per sample; steps = target passes after the prompt pass, tau (vLLM) "
                   "= 1 + accepted drafted tokens per step that drafted, mean acc. tokens (SB) = "
                   "tokens after the prompt pass per step, wall s = the whole generate call. "
                   "--format jsonl writes Spec-Bench answer-file records instead.");
    return rc;
}
