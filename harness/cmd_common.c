/* cmd_common.c: what every subcommand prints the same way: errors (exit 1), usage errors
 * (exit 2), the version.
 *
 * Library messages start with the module or function that failed ("db_open: ...",
 * "report_plot_data: ..."): useful in a test log, noise to a user, who did not call db_open.
 * cmd_fail drops such prefixes wherever they head the message or a ": "-separated part of it;
 * what remains names the file, line or field at fault. Only known module prefixes are dropped,
 * so a file that happens to be called "my_data" keeps its name in the message. */
#include <stdio.h>
#include <string.h>

#include "decoders/decoder.h"
#include "harness/commands.h"
#include "results/db/db.h"
#include "results/plot/plot.h"
#include "util/err.h"

/* Prefixes of our library functions, and the bare module names used as message heads. */
static const char *const fn_prefixes[] = {
    "db_",     "report_",  "rep_",     "plot_",  "tok_",  "ds_",     "model_", "dec_",
    "fwd_",    "gguf_",    "convert_", "synth_", "kern_", "wtype_",  "tpool_", "session_",
    "runner_", "compare_", "file_",    "paths_", "num_",  "sha256_", "merge_", "shard_"};
static const char *const modules[] = {"report", "plot", "compare", "merge"};

/* Length of a removable head "name: " at s, or 0. */
static size_t removable(const char *s) {
    size_t word = strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789_");
    if (word == 0 || strncmp(s + word, ": ", 2) != 0) return 0;
    for (size_t i = 0; i < sizeof modules / sizeof modules[0]; i++)
        if (strlen(modules[i]) == word && !strncmp(s, modules[i], word)) return word + 2;
    if (!memchr(s, '_', word)) return 0;
    for (size_t i = 0; i < sizeof fn_prefixes / sizeof fn_prefixes[0]; i++)
        if (!strncmp(s, fn_prefixes[i], strlen(fn_prefixes[i]))) return word + 2;
    return 0;
}

void cmd_clean_message(const char *msg, char *out, size_t n) {
    size_t o = 0;
    int at_head = 1; /* at the start, or right after ": " */
    for (const char *p = msg; *p && o + 1 < n;) {
        size_t skip = at_head ? removable(p) : 0;
        if (skip) {
            p += skip;
            continue;
        }
        at_head = p[0] == ':' && p[1] == ' ';
        if (at_head) {
            out[o++] = *p++;
            if (o + 1 < n) out[o++] = *p++;
            continue;
        }
        out[o++] = *p++;
    }
    out[o] = '\0';
}

int cmd_fail(const char *cmd, const char *msg) {
    char clean[2 * ERR_LEN];
    cmd_clean_message(msg, clean, sizeof clean);
    fprintf(stderr, "decbench %s: %s\n", cmd, clean);
    return 1;
}

int cmd_usage(const char *cmd, const char *msg) {
    cmd_fail(cmd, msg);
    return 2;
}

void cmd_version(void) {
    db_env e;
    db_env_capture(&e);
    printf("decbench %s (results schema %d", DECBENCH_VERSION, db_schema_version());
    if (e.git_commit[0]) printf(", commit %.12s%s", e.git_commit, e.git_dirty == 1 ? "+dirty" : "");
    printf(", %s)\n", e.compiler);
}

int cmd_sets_check(const char *const *sets, int n, char *err) {
    for (int i = 0; i < n; i++) {
        const char *v = sets[i], *colon = strchr(v, ':');
        int known = 0;
        for (int k = 0; colon && k < dec_registry_size(); k++)
            known |= strlen(dec_registry_name(k)) == (size_t)(colon - v) &&
                     !strncmp(dec_registry_name(k), v, (size_t)(colon - v));
        if (!colon || !colon[1] || !known)
            return err_set(err,
                           "--set '%s': expected NAME:KEY=VALUE,... with NAME a decoder "
                           "(decbench decoders)",
                           v);
        for (int j = 0; j < i; j++)
            if (!strncmp(sets[j], v, (size_t)(colon - v) + 1))
                return err_set(err,
                               "--set: %.*s given twice (one --set a decoder, its "
                               "parameters joined by ',')",
                               (int)(colon - v), v);
    }
    return 0;
}

const char *cmd_set_of(const char *const *sets, int n, const char *name) {
    size_t len = strlen(name);
    for (int i = 0; i < n; i++)
        if (!strncmp(sets[i], name, len) && sets[i][len] == ':') return sets[i] + len + 1;
    return NULL;
}
