/* plot_render.c: running gnuplot on a script of plots/ (report_plot_render).
 *
 * No path and no value from the database ever reaches gnuplot as code. gnuplot is started
 * directly (no shell) as `gnuplot <plots>/common.gp <plots>/<kind>.gp`: file arguments are
 * opened, not parsed. It runs inside a private folder made next to the figures
 * (<out>/.decbench-plot-XXXXXX) holding a copy of the data file under its fixed name; the
 * scripts read and write fixed names there. Passing the folders as gnuplot string variables
 * (as this file once did) let a quote or a newline in `--out` end the string inside the
 * script's `eval` and run any command.
 *
 * The figures are then renamed into out_dir, once both are checked whole (gnuplot exits 0 when
 * its writes fail), so a failure (gnuplot error, full disk) leaves no half-written or empty
 * figure behind and older figures as they were, and the private folder is removed on every path.
 * gnuplot's stderr goes to a log in the private folder, whose first error line becomes the message.
 */
#include "results/plot/plot.h"

#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/err.h"
#include "util/file.h"
#include "util/paths.h"

extern char **environ;

#define LOG_NAME "gnuplot.log"

/* snprintf into a path buffer; 1 if the result did not fit. */
static int path_fmt(char *out, size_t n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int path_fmt(char *out, size_t n, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(out, n, fmt, ap);
    va_end(ap);
    return w < 0 || (size_t)w >= n;
}

static long file_size(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* Copies src to dst (both regular files); -1 with errno set on failure. */
static int copy_file(const char *src, const char *dst) {
    FILE *in = fopen(src, "rb");
    if (!in) return -1;
    FILE *out = fopen(dst, "wb");
    if (!out) {
        fclose(in);
        return -1;
    }
    char buf[65536];
    size_t n;
    int rc = 0;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        if (fwrite(buf, 1, n, out) != n) rc = -1;
    if (ferror(in)) rc = -1;
    fclose(in);
    if (fclose(out) != 0) rc = -1;
    return rc;
}

/* Whether a figure gnuplot wrote is whole: a PNG ends with its IEND chunk, an SVG with the
 * closing </svg> tag (then white space). gnuplot exits 0 even when its writes fail: with a file
 * size limit of 2 kB it left 2048-byte figures, which once replaced good ones. */
static int figure_complete(const char *path, const char *ext) {
    static const unsigned char iend[12] = {0, 0, 0, 0, 'I', 'E', 'N', 'D', 0xae, 0x42, 0x60, 0x82};
    unsigned char tail[64];
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    long n = 0;
    if (fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) > 0) {
        long k = n < (long)sizeof tail ? n : (long)sizeof tail;
        n = fseek(f, -k, SEEK_END) == 0 && fread(tail, 1, (size_t)k, f) == (size_t)k ? k : 0;
    }
    fclose(f);
    if (!strcmp(ext, "png")) return n >= 12 && !memcmp(tail + n - 12, iend, 12);
    while (n > 0 && strchr(" \t\r\n", tail[n - 1])) n--;
    return n >= 6 && !memcmp(tail + n - 6, "</svg>", 6);
}

/* Removes the private folder and everything render() put in it. */
static void remove_work(const char *work, const char *stem) {
    static const char *const suffix[] = {".tsv", ".png", ".svg"};
    char path[4400];
    for (int i = 0; i < 3; i++)
        if (!path_fmt(path, sizeof path, "%s/%s%s", work, stem, suffix[i])) unlink(path);
    if (!path_fmt(path, sizeof path, "%s/" LOG_NAME, work)) unlink(path);
    rmdir(work);
}

/* gnuplot's first complaint in the log, or "" (for the message). */
static void first_complaint(const char *work, char *out, size_t n) {
    char path[4400], line[256];
    out[0] = 0;
    FILE *f = path_fmt(path, sizeof path, "%s/" LOG_NAME, work) ? NULL : fopen(path, "r");
    if (!f) return;
    while (fgets(line, sizeof line, f))
        if (strstr(line, "rror") || strstr(line, "arning")) {
            line[strcspn(line, "\n")] = 0;
            snprintf(out, n, "%s", line);
            break;
        }
    fclose(f);
}

/* Runs gnuplot in work; 0 when it exited with status 0. */
static int run_gnuplot(const char *work, const char *common, const char *script, char *err) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addchdir_np(&fa, work);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, LOG_NAME, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    char *argv[] = {"gnuplot", (char *)common, (char *)script, NULL};
    pid_t pid;
    int rc = posix_spawnp(&pid, "gnuplot", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0)
        return err_set(err, "cannot run gnuplot: %s%s", strerror(rc),
                       rc == ENOENT ? " (install gnuplot, e.g. gnuplot-nox)" : "");
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

int report_plot_render(report_plot_kind kind, const char *plots_dir, const char *data_dir,
                       const char *out_dir, char *err) {
    if ((unsigned)kind >= REPORT_PLOT_KINDS)
        return err_set(err, "plot: unknown plot kind %d", (int)kind);
    const char *name = report_plot_script(kind);
    char stem[64];
    snprintf(stem, sizeof stem, "%.*s", (int)strcspn(name, "."), name);
    return report_plot_render_named(stem, plots_dir, data_dir, out_dir, err);
}

int report_plot_render_named(const char *stem, const char *plots_dir, const char *data_dir,
                             const char *out_dir, char *err) {
    char found[4096];
    if (!plots_dir) {
        if (paths_data_dir("plots", found, sizeof found) != 0)
            return err_set(err,
                           "plot: no folder of gnuplot scripts found (last tried %s); give "
                           "--plots-dir DIR or set DECBENCH_HOME",
                           found);
        plots_dir = found;
    }
    char name[80], data[80];
    snprintf(name, sizeof name, "%s.gp", stem);
    snprintf(data, sizeof data, "%s.tsv", stem);
    /* Absolute script paths: gnuplot runs in another folder. */
    char script[4400], common[4400], cwd[4096];
    const char *base = plots_dir[0] == '/' ? "" : getcwd(cwd, sizeof cwd);
    if (!base) return err_set(err, "plot: cannot read the current folder: %s", strerror(errno));
    const char *sep = *base ? "/" : "";
    if (path_fmt(script, sizeof script, "%s%s%s/%s", base, sep, plots_dir, name) ||
        path_fmt(common, sizeof common, "%s%s%s/common.gp", base, sep, plots_dir))
        return err_set(err, "plot: the plots folder's path is too long");
    /* gnuplot opens them: a FIFO there would block it forever */
    char e[ERR_LEN];
    if (file_check_regular(script, "gnuplot script", e) ||
        file_check_regular(common, "gnuplot script", e))
        return err_set(err, "plot: %s", e);

    char work[4400], src[4400], dst[4400];
    if (path_fmt(work, sizeof work, "%s/.decbench-plot-XXXXXX", out_dir) ||
        path_fmt(src, sizeof src, "%s/%s", data_dir, data))
        return err_set(err, "plot: the output or data folder's path is too long");
    if (!mkdtemp(work))
        return err_set(err, "plot: cannot create a folder in %s: %s", out_dir, strerror(errno));
    path_fmt(dst, sizeof dst, "%s/%s", work, data); /* fits: work is shorter */
    if (link(src, dst) != 0 && copy_file(src, dst) != 0) {
        int e = errno;
        remove_work(work, stem);
        return err_set(err, "plot: cannot read %s: %s", src, strerror(e));
    }
    int rc = run_gnuplot(work, common, script, err);
    char first[256];
    first_complaint(work, first, sizeof first);
    if (rc < 0) {
        remove_work(work, stem);
        return -1;
    }
    if (rc > 0) {
        remove_work(work, stem);
        return err_set(err, "plot: gnuplot %s failed (%s)", name, first[0] ? first : "no message");
    }
    /* Both figures must exist before either replaces an older one. */
    static const char *const ext[] = {"png", "svg"};
    for (int i = 0; i < 2; i++) {
        if (path_fmt(src, sizeof src, "%s/%s.%s", work, stem, ext[i]) || file_size(src) <= 0) {
            remove_work(work, stem);
            return err_set(err, "plot: gnuplot %s wrote no %s.%s (%s)", name, stem, ext[i],
                           first[0] ? first : "no message");
        }
        if (!figure_complete(src, ext[i])) {
            long size = file_size(src);
            remove_work(work, stem);
            return err_set(err,
                           "plot: gnuplot %s wrote an incomplete %s.%s (%ld bytes; a full disk or "
                           "a file size limit?): the older figures are kept",
                           name, stem, ext[i], size);
        }
    }
    for (int i = 0; i < 2; i++) {
        path_fmt(src, sizeof src, "%s/%s.%s", work, stem, ext[i]); /* fitted above */
        if (path_fmt(dst, sizeof dst, "%s/%s.%s", out_dir, stem, ext[i]) || rename(src, dst) != 0) {
            int e = errno;
            remove_work(work, stem);
            return err_set(err, "plot: cannot write %s: %s", dst, strerror(e));
        }
    }
    remove_work(work, stem);
    return 0;
}
