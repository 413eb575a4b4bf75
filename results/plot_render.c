/* plot_render.c: running gnuplot on a script of plots/ (report_plot_render).
 *
 * gnuplot is started directly (no shell, so paths need no shell quoting); the three paths
 * reach the script as gnuplot string variables. Its stderr goes to a temporary file so that a
 * failure can be reported as one line, as library errors are. */
#include "results/report.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/err.h"

extern char **environ;

/* name='value' with the value quoted for a gnuplot single-quoted string ('' is a quote). */
static int put_var(char *out, size_t n, size_t *off, const char *name, const char *value) {
    int w = snprintf(out + *off, n - *off, "%s%s='", *off ? ";" : "", name);
    if (w < 0 || (size_t)w >= n - *off) return -1;
    *off += (size_t)w;
    for (const char *p = value; *p; p++) {
        if (*off + 3 >= n) return -1;
        if (*p == '\'') out[(*off)++] = '\'';
        out[(*off)++] = *p;
    }
    if (*off + 2 >= n) return -1;
    out[(*off)++] = '\'';
    out[*off] = 0;
    return 0;
}

static long file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

int report_plot_render(report_plot_kind kind, const char *plots_dir, const char *data_dir,
                       const char *out_dir, char *err) {
    if ((unsigned)kind >= REPORT_PLOT_KINDS)
        return err_set(err, "report_plot_render: unknown plot kind %d", (int)kind);
#ifdef DECBENCH_SOURCE_DIR
    if (!plots_dir) plots_dir = DECBENCH_SOURCE_DIR "/plots";
#endif
    if (!plots_dir) return err_set(err, "report_plot_render: no plots directory given");
    char script[4352], vars[16384], log[4352];
    snprintf(script, sizeof script, "%s/%s", plots_dir, report_plot_script(kind));
    if (file_size(script) < 0) return err_set(err, "report_plot_render: no script %s", script);
    size_t off = 0;
    if (put_var(vars, sizeof vars, &off, "plotsdir", plots_dir) != 0 ||
        put_var(vars, sizeof vars, &off, "datadir", data_dir) != 0 ||
        put_var(vars, sizeof vars, &off, "outdir", out_dir) != 0)
        return err_set(err, "report_plot_render: paths too long");
    snprintf(log, sizeof log, "%s/.gnuplot-%s.log", out_dir, report_plot_script(kind));

    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    char *argv[] = {"gnuplot", "-e", vars, script, NULL};
    pid_t pid;
    int rc = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        unlink(log);
        return err_set(err, "report_plot_render: cannot run gnuplot: %s%s", strerror(rc),
                       rc == ENOENT ? " (install gnuplot, e.g. gnuplot-nox)" : "");
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }

    /* gnuplot's first complaint, if any, for the message. */
    char first[256] = "";
    FILE *f = fopen(log, "r");
    if (f) {
        char line[256];
        while (fgets(line, sizeof line, f))
            if (strstr(line, "rror") || strstr(line, "arning")) {
                line[strcspn(line, "\n")] = 0;
                snprintf(first, sizeof first, "%s", line);
                break;
            }
        fclose(f);
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return err_set(err, "report_plot_render: gnuplot %s failed (%s); log in %s",
                       report_plot_script(kind), first[0] ? first : "no message", log);
    const char *base = report_plot_file(kind);
    int len = (int)(strcspn(base, "."));
    for (int i = 0; i < 2; i++) {
        char out[4352];
        snprintf(out, sizeof out, "%s/%.*s.%s", out_dir, len, base, i ? "svg" : "png");
        if (file_size(out) <= 0)
            return err_set(err, "report_plot_render: gnuplot %s wrote no %s (%s)",
                           report_plot_script(kind), out, first[0] ? first : "no message");
    }
    unlink(log);
    return 0;
}
