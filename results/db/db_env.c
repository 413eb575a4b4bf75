/* db_env.c: capturing the machine and build a run ran in (environments table).
 *
 * Everything here is best effort: a missing /proc, git or source dir leaves a field unknown
 * rather than failing the benchmark. The commit is read from the source dir the binary was
 * built from (DECBENCH_SOURCE_DIR), which is the one that matters for reproducing a number. */
#include "results/db/db.h"

#include <cblas.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static void copy(char *dst, size_t n, const char *src) {
    snprintf(dst, n, "%s", src ? src : "");
}

static void trim(char *s) {
    size_t n = strlen(s);
    while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ')) s[--n] = 0;
}

/* Runs git with args[] (NULL-terminated) in the source dir, directly (no shell: the folder
 * name is never parsed as a command); first output line into out. 0 if git printed a line and
 * succeeded, 1 if it succeeded silently, -1 otherwise. */
static int git_line(const char *const *args, char *out, size_t n) {
#ifdef DECBENCH_SOURCE_DIR
    char *argv[8] = {"git", "-C", DECBENCH_SOURCE_DIR};
    int a = 3;
    for (; *args && a < 7; args++) argv[a++] = (char *)*args;
    argv[a] = NULL;
    int fd[2];
    if (pipe(fd) != 0) return -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    pid_t pid;
    int rc = posix_spawnp(&pid, "git", &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    if (rc != 0) {
        close(fd[0]);
        return -1;
    }
    FILE *p = fdopen(fd[0], "r");
    out[0] = 0;
    int got = 0;
    if (p) {
        got = fgets(out, (int)n, p) != NULL;
        /* Drain so git does not die of SIGPIPE; its status decides success. */
        char sink[256];
        while (fgets(sink, sizeof sink, p)) {
        }
        fclose(p);
    } else {
        close(fd[0]);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    trim(out);
    int ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    return got && ok ? 0 : (ok ? 1 : -1);
#else
    (void)args;
    (void)out;
    (void)n;
    return -1;
#endif
}

static void capture_git(db_env *e) {
    char line[128];
    if (git_line((const char *const[]){"rev-parse", "HEAD", NULL}, line, sizeof line) == 0 &&
        strlen(line) == 40)
        copy(e->git_commit, sizeof e->git_commit, line);
    else
        return;
    /* Dirty = tracked files differ from HEAD; untracked files (build dirs, results) do not
     * change what was compiled from the repository. */
    int rc = git_line((const char *const[]){"status", "--porcelain", "--untracked-files=no", NULL},
                      line, sizeof line);
    e->git_dirty = rc == 0 ? 1 : rc == 1 ? 0 : -1;
}

static void capture_cpu(db_env *e) {
    e->cpu_threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[1024];
    int phys = 0, cores = 0;
    /* Distinct (physical id, core id) pairs; at most 4096 tracked. */
    static const int MAXP = 4096;
    int pairs[4096][2], n_pairs = 0;
    while (fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (!colon) continue;
        const char *val = colon + 1 + (colon[1] == ' ');
        if (!e->cpu_model[0] && strncmp(line, "model name", 10) == 0) {
            copy(e->cpu_model, sizeof e->cpu_model, val);
            trim(e->cpu_model);
        } else if (strncmp(line, "physical id", 11) == 0) {
            sscanf(val, "%d", &phys);
        } else if (strncmp(line, "core id", 7) == 0 && sscanf(val, "%d", &cores) == 1) {
            int seen = 0;
            for (int i = 0; i < n_pairs && !seen; i++)
                seen = pairs[i][0] == phys && pairs[i][1] == cores;
            if (!seen && n_pairs < MAXP) {
                pairs[n_pairs][0] = phys;
                pairs[n_pairs][1] = cores;
                n_pairs++;
            }
        }
    }
    fclose(f);
    e->cpu_cores = n_pairs > 0 ? n_pairs : -1;
}

void db_env_capture(db_env *e) {
    memset(e, 0, sizeof *e);
    e->git_dirty = e->cpu_cores = e->cpu_threads = e->openblas_threads = -1;
#ifdef DECBENCH_COMPILER
    copy(e->compiler, sizeof e->compiler, DECBENCH_COMPILER);
#endif
#ifdef DECBENCH_C_FLAGS
    copy(e->cflags, sizeof e->cflags, DECBENCH_C_FLAGS);
    trim(e->cflags);
#endif
    capture_git(e);
    capture_cpu(e);
    copy(e->openblas_config, sizeof e->openblas_config, openblas_get_config());
    trim(e->openblas_config);
    copy(e->openblas_core, sizeof e->openblas_core, openblas_get_corename());
    trim(e->openblas_core);
    e->openblas_threads = openblas_get_num_threads();
    if (gethostname(e->hostname, sizeof e->hostname) != 0) e->hostname[0] = 0;
    e->hostname[sizeof e->hostname - 1] = 0;
    struct utsname u;
    if (uname(&u) == 0) snprintf(e->os, sizeof e->os, "%s %s %s", u.sysname, u.release, u.machine);
}
