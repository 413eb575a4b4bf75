/* report_figures.c: the figures a report shows, one row each: column header, machine key,
 * markdown format, how it is computed from a rep_stat, and its one-line definition.
 *
 * The summary layout is this table (one column per row); its note, `decbench counters` and
 * results/README.md (checked by tests/cli_counters.sh) print the definitions from here, so a
 * figure is defined in one place. The sums behind them come from the counter list
 * (stats/stats.h) through rep_collect (report_data.c). */
#include "results/report/report_internal.h"

#include <math.h>

static double ratio(double a, double b) {
    return b > 0 ? a / b : NAN;
}

static double tps_dec(const rep_stat *s) {
    return s->tps_dec;
}
static double tps_dec_sd(const rep_stat *s) {
    return s->tps_dec_sd;
}
static double tps_e2e(const rep_stat *s) {
    return s->tps_e2e;
}
static double tps_e2e_sd(const rep_stat *s) {
    return s->tps_e2e_sd;
}
static double speedup_dec(const rep_stat *s) {
    return s->speedup_dec;
}
static double speedup_e2e(const rep_stat *s) {
    return s->speedup_e2e;
}
static double speedup_sb(const rep_stat *s) {
    return s->speedup_sb;
}
static double speedup_dec_sd(const rep_stat *s) {
    return s->speedup_dec_sd;
}
static double speedup_e2e_sd(const rep_stat *s) {
    return s->speedup_e2e_sd;
}
static double speedup_prompt_sd(const rep_stat *s) {
    return s->speedup_prompt_sd;
}
/* vLLM's mean acceptance length: steps that drafted nothing are not counted (header). */
static double tau(const rep_stat *s) {
    return 1 + ratio(s->c[STAT_accepted], s->c[STAT_drafting_steps]);
}
static double mean_accepted_tokens(const rep_stat *s) {
    return ratio(s->d[STAT_D_decode_tokens], s->d[STAT_D_decode_steps]);
}
static double acceptance_pct(const rep_stat *s) {
    return 100 * ratio(s->c[STAT_accepted], s->c[STAT_drafted]);
}
static double draft_pct(const rep_stat *s) {
    return 100 * rep_draft_share(s);
}
static double book_pct(const rep_stat *s) {
    return 100 * rep_book_share(s);
}
static double exact_pct(const rep_stat *s) {
    return 100 * rep_exact_share(s);
}

const rep_figure rep_figures[] = {
    {"tok/s", "tps_decode", "%.1f", tps_dec,
     "decode-only tok/s: per repeat, sum decode_tokens / sum t_decode (tokens and time after the "
     "prompt passes); mean over repeats",
     NULL},

    {"sd", "tps_decode_sd", "%.1f", tps_dec_sd,
     "sample standard deviation of tok/s over repeats (n - 1; blank with one repeat)",
     "tps_decode"},
    {"tok/s e2e", "tps_e2e", "%.1f", tps_e2e,
     "end-to-end tok/s: per repeat, sum new_tokens / sum t_total; mean over repeats", NULL},

    {"sd e2e", "tps_e2e_sd", "%.1f", tps_e2e_sd, "sample standard deviation of tok/s e2e",
     "tps_e2e"},
    {"speed-up", "speedup_decode", "%.2fx", speedup_dec,
     "greedy's sum of t_decode / the decoder's, over the prompts both ran (each prompt's time: "
     "its mean over repeats)",
     NULL},

    {"speed-up sd", "speedup_decode_sd", "%.2f", speedup_dec_sd,
     "sample standard deviation over repeats of each repeat's speed-up (greedy's total t_decode "
     "in that repeat / the decoder's): the noise of the speed-up",
     "speedup_decode"},
    {"speed-up e2e", "speedup_e2e", "%.2fx", speedup_e2e, "the same with t_total", NULL},

    {"speed-up e2e sd", "speedup_e2e_sd", "%.2f", speedup_e2e_sd, "the same with t_total",
     "speedup_e2e"},
    {"speed-up SB", "speedup_specbench", "%.2fx", speedup_sb,
     "Spec-Bench's speed-up (evaluation/speed.py at hemingkx/Spec-Bench@fd2c1cd): a question's "
     "tok/s = its turns' new_tokens / their t_total, both turns of a multi-turn question "
     "together (:27-30); per repeat, the mean over questions of the decoder's tok/s / the same "
     "mean of greedy's in the same repeat (:59-61); the mean of those over repeats (:98-116)",
     NULL},

    {"prompt sd", "speedup_prompt_sd", "%.2f", speedup_prompt_sd,
     "sample standard deviation over the prompts of each prompt's end-to-end speed-up (greedy's "
     "mean t_total / the decoder's): how much the speed-up varies from prompt to prompt",
     NULL},

    {"tokens/step", "tokens_per_step", "%.2f", rep_tokens_per_step,
     "sum new_tokens / sum target_steps (greedy: 1; LADE's compression ratio)", NULL},

    {"accepted/step", "accepted_per_step", "%.2f", rep_accepted_len,
     "sum accepted / sum verify_steps: drafted tokens confirmed per verification, bonus excluded",
     NULL},

    {"tau (vLLM)", "tau", "%.2f", tau,
     "vLLM's mean acceptance length: 1 + sum accepted / sum drafting_steps, the steps that "
     "drafted nothing left out (vllm/v1/spec_decode/metrics.py:91 at vllm@016a858; "
     "Scheduler.make_spec_decoding_stats observes only steps with draft tokens); the 1 counts "
     "a bonus token whether or not it was emitted",
     NULL},

    {"mean acc. tokens (SB)", "mean_accepted_tokens", "%.2f", mean_accepted_tokens,
     "Spec-Bench's #Mean Accepted Tokens: sum decode_tokens / sum decode_steps, the tokens each "
     "decode step added (a bonus token only when it was emitted), every step of every sample "
     "and turn in one mean (evaluation/speed.py:29,65 at hemingkx/Spec-Bench@fd2c1cd; "
     "model/pld/pld.py:134, model/lade/decoding.py:459); its loops also count the pass that "
     "carries the prompt, which here yields one token and is left out, as in `report --layout "
     "samples -f jsonl`",
     NULL},

    {"accept %", "acceptance_pct", "%.1f", acceptance_pct,
     "100 sum accepted / sum drafted: the share of drafted tokens the target confirmed", NULL},

    {"rows/step", "rows_per_step", "%.1f", rep_rows_per_step,
     "sum target_rows / sum decode_steps: rows per target decode pass (greedy: 1)", NULL},

    {"draft %", "draft_time_pct", "%.1f", draft_pct,
     "100 sum t_draft / sum t_total: end-to-end time in draft-model passes", NULL},

    {"book %", "bookkeeping_pct", "%.1f", book_pct,
     "100 sum t_book / sum t_total: end-to-end time in the decoder's own work", NULL},

    {"exact %", "exact_pct", "%.1f", exact_pct,
     "100 matched samples / checked samples (output equal to greedy's)", NULL},
};
const int rep_n_figures = (int)(sizeof rep_figures / sizeof rep_figures[0]);

int report_figure_count(void) {
    return rep_n_figures;
}

void report_figure_info(int i, const char **header, const char **key, const char **definition) {
    *header = rep_figures[i].header;
    *key = rep_figures[i].key;
    *definition = rep_figures[i].definition;
}
