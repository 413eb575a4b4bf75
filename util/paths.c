#include "util/paths.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int paths_is_dir(const char *path) {
    struct stat st;
    return path && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int try_dir(const char *dir, char *out, size_t n) {
    snprintf(out, n, "%s", dir);
    return paths_is_dir(dir);
}

int paths_shared_dir(const char *explicit_dir, char *out, size_t n) {
    if (explicit_dir && explicit_dir[0]) return try_dir(explicit_dir, out, n) ? 0 : -1;
    const char *env = getenv("DECBENCH_SHARED");
    if (env && env[0]) return try_dir(env, out, n) ? 0 : -1;
    if (try_dir("../shared", out, n) || try_dir("shared", out, n)) return 0;
#ifdef DECBENCH_SOURCE_DIR
    if (try_dir(DECBENCH_SOURCE_DIR "/../shared", out, n)) return 0;
#endif
    return -1;
}

static int sub_dir(const char *env_name, const char *explicit_dir, const char *sub, char *out,
                   size_t n) {
    if (explicit_dir && explicit_dir[0]) return try_dir(explicit_dir, out, n) ? 0 : -1;
    const char *env = getenv(env_name);
    if (env && env[0]) return try_dir(env, out, n) ? 0 : -1;
    char shared[4096];
    if (paths_shared_dir(NULL, shared, sizeof shared) != 0) {
        snprintf(out, n, "%s/%s", shared, sub);
        return -1;
    }
    snprintf(out, n, "%s/%s", shared, sub);
    return paths_is_dir(out) ? 0 : -1;
}

int paths_models_dir(const char *explicit_shared, char *out, size_t n) {
    if (explicit_shared && explicit_shared[0]) {
        snprintf(out, n, "%s/models", explicit_shared);
        return paths_is_dir(out) ? 0 : -1;
    }
    return sub_dir("DECBENCH_MODELS", NULL, "models", out, n);
}

int paths_datasets_dir(const char *explicit_dir, char *out, size_t n) {
    return sub_dir("DECBENCH_DATASETS", explicit_dir, "datasets", out, n);
}

int paths_data_dir(const char *sub, char *out, size_t n) {
    char dir[4096];
    snprintf(out, n, "%s", sub);
    const char *home = getenv("DECBENCH_HOME");
    if (home && home[0]) {
        snprintf(dir, sizeof dir, "%s/%s", home, sub);
        if (try_dir(dir, out, n)) return 0;
        snprintf(dir, sizeof dir, "%s/share/decbench/%s", home, sub);
        if (try_dir(dir, out, n)) return 0;
    }
    /* The binary's folder: /proc/self/exe names the file even when run through a symlink. */
    char exe[2048];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            snprintf(dir, sizeof dir, "%s/../share/decbench/%s", exe, sub);
            if (try_dir(dir, out, n)) return 0;
        }
    }
#ifdef DECBENCH_INSTALL_DATADIR
    snprintf(dir, sizeof dir, "%s/%s", DECBENCH_INSTALL_DATADIR, sub);
    if (try_dir(dir, out, n)) return 0;
#endif
#ifdef DECBENCH_SOURCE_DIR
    snprintf(dir, sizeof dir, "%s/%s", DECBENCH_SOURCE_DIR, sub);
    if (try_dir(dir, out, n)) return 0;
#endif
    return -1;
}
