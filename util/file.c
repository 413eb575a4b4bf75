/* file.c: see file.h. */
#include "util/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "util/err.h"
#include "util/paths.h"

const char *file_kind_name(mode_t mode) {
    if (S_ISREG(mode)) return "a regular file";
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISLNK(mode)) return "a symbolic link";
    return "an unknown kind of file";
}

/* The message for a file that exists but is not regular. */
static int not_regular(const char *path, mode_t mode, const char *what, char *err) {
    if (S_ISDIR(mode)) return err_set(err, "%s: is a directory, expected a %s file", path, what);
    return err_set(err, "%s: is not a regular file (%s), expected a %s file", path,
                   file_kind_name(mode), what);
}

int file_check_regular(const char *path, const char *what, char *err) {
    struct stat st;
    if (stat(path, &st) != 0)
        return err_set(err, "%s: cannot open %s: %s", path, what, strerror(errno));
    return S_ISREG(st.st_mode) ? 0 : not_regular(path, st.st_mode, what, err);
}

int file_check_output(const char *path, const char *what, char *err) {
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT) return 0;
        return err_set(err, "%s: cannot use as %s file: %s", path, what, strerror(errno));
    }
    return S_ISREG(st.st_mode) ? 0 : not_regular(path, st.st_mode, what, err);
}

int file_open_regular(const char *path, const char *what, char *err) {
    /* O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer. It changes
     * nothing for a regular file, and is cleared once fstat has said that is what we have. */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (fd < 0) { /* a socket fails here (ENXIO): say what it is rather than strerror's words */
        int e = errno;
        if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
            return not_regular(path, st.st_mode, what, err);
        return err_set(err, "%s: cannot open %s: %s", path, what, strerror(e));
    }
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return err_set(err, "%s: cannot open %s: %s", path, what, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return not_regular(path, st.st_mode, what, err);
    }
    int flags = fcntl(fd, F_GETFL);
    if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
        int e = errno;
        close(fd);
        return err_set(err, "%s: cannot open %s: %s", path, what, strerror(e));
    }
    return fd;
}

int file_map_regular(const char *path, const char *what, void **map, size_t *size, char *err) {
    int fd = file_open_regular(path, what, err);
    if (fd < 0) return -1;
    struct stat st;
    int rc = 0;
    if (fstat(fd, &st) != 0) {
        rc = err_set(err, "%s: cannot stat: %s", path, strerror(errno));
    } else if (st.st_size == 0) {
        rc = err_set(err, "%s: empty file", path);
    } else {
        *size = (size_t)st.st_size;
        *map = mmap(NULL, *size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (*map == MAP_FAILED) rc = err_set(err, "%s: mmap failed: %s", path, strerror(errno));
    }
    close(fd);
    return rc;
}

FILE *file_fopen_regular(const char *path, const char *what, char *err) {
    int fd = file_open_regular(path, what, err);
    if (fd < 0) return NULL;
    FILE *f = fdopen(fd, "rb");
    if (!f) {
        err_set(err, "%s: cannot open %s: %s", path, what, strerror(errno));
        close(fd);
    }
    return f;
}

int file_read_all(const char *path, const char *what, uint64_t max, unsigned char **buf,
                  size_t *size, char *err) {
    *buf = NULL;
    *size = 0;
    int fd = file_open_regular(path, what, err);
    if (fd < 0) return -1;
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        return err_set(err, "%s: cannot read %s: %s", path, what, strerror(e));
    }
    if ((uint64_t)st.st_size > max) {
        char have[32], limit[32];
        close(fd);
        return err_set(err, "%s: %s file of %s, more than the %s a %s file may have", path, what,
                       file_human_size((uint64_t)st.st_size, have, sizeof have),
                       file_human_size(max, limit, sizeof limit), what);
    }
    size_t n = (size_t)st.st_size, done = 0;
    unsigned char *b = malloc(n + 1);
    if (!b) {
        close(fd);
        return err_set(err, "%s: out of memory for %zu bytes", path, n);
    }
    /* The size may change while we read (a writer): what was there at fstat time is read, and
     * a file that shrank is a read error rather than a short buffer. */
    while (done < n) {
        ssize_t k = read(fd, b + done, n - done);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            int e = k < 0 ? errno : 0;
            free(b);
            close(fd);
            return err_set(err, "%s: cannot read %s: %s", path, what,
                           e ? strerror(e) : "the file shrank while being read");
        }
        done += (size_t)k;
    }
    close(fd);
    b[n] = 0;
    *buf = b;
    *size = n;
    return 0;
}

const char *file_human_size(uint64_t bytes, char *buf, size_t n) {
    static const char *const units[] = {"bytes", "kB", "MB", "GB", "TB", "PB", "EB"};
    double v = (double)bytes;
    int u = 0;
    while (v >= 1000.0 && u < 6) v /= 1000.0, u++;
    if (u == 0)
        snprintf(buf, n, "%llu bytes", (unsigned long long)bytes);
    else
        snprintf(buf, n, "%.1f %s", v, units[u]);
    return buf;
}

/* ---- file_out ---------------------------------------------------------------------------- */

/* Opens PATH.tmp locked for this process. Returns the fd, -1 on error, -2 when the name was
 * renamed or removed between the open and the lock (the caller tries again). */
static int open_locked_tmp(const file_out *o, char *err) {
    /* O_NOFOLLOW: a symbolic link at PATH.tmp is not followed (we would write elsewhere and
     * then rename the link into place). O_NONBLOCK: a FIFO there cannot block the open. */
    int fd = open(o->tmp, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0666);
    if (fd < 0) return err_set(err, "%s: cannot create: %s", o->tmp, strerror(errno));
    struct stat st, now;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return err_set(err, "%s: exists and is not a regular file: remove it", o->tmp);
    }
    /* The lock is a courtesy: a file system without flock (ENOLCK, EOPNOTSUPP) writes
     * without it, as every writer did before. */
    if (flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK) {
        close(fd);
        return err_set(err, "%s: another process is writing it (%s is locked)", o->path, o->tmp);
    }
    /* The writer we waited for may have renamed this very file into place meanwhile: then it
     * is PATH now and must not be truncated. */
    if (lstat(o->tmp, &now) != 0 || now.st_dev != st.st_dev || now.st_ino != st.st_ino) {
        close(fd);
        return -2;
    }
    int flags = fcntl(fd, F_GETFL);
    if (ftruncate(fd, 0) != 0 || flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0) {
        int e = errno;
        unlink(o->tmp);
        close(fd);
        return err_set(err, "%s: cannot create: %s", o->tmp, strerror(e));
    }
    return fd;
}

int file_out_open(file_out *o, const char *path, const char *what, char *err) {
    memset(o, 0, sizeof *o);
    if (strlen(path) >= sizeof o->path) return err_set(err, "%.100s...: path too long", path);
    if (file_check_output(path, what, err)) return -1;
    snprintf(o->path, sizeof o->path, "%s", path);
    snprintf(o->tmp, sizeof o->tmp, "%s.tmp", path);
    int fd = -2;
    for (int attempt = 0; attempt < 8 && fd == -2; attempt++) fd = open_locked_tmp(o, err);
    if (fd == -2) return err_set(err, "%s: another process keeps replacing %s", path, o->tmp);
    if (fd < 0) return -1;
    if (!(o->f = fdopen(fd, "wb"))) {
        int e = errno;
        unlink(o->tmp);
        close(fd);
        return err_set(err, "%s: cannot create: %s", o->tmp, strerror(e));
    }
    return 0;
}

int file_out_check_space(file_out *o, uint64_t bytes, char *err) {
    struct statvfs vs;
    if (fstatvfs(fileno(o->f), &vs) != 0) return 0; /* unknown: let the writes tell */
    uint64_t avail = (uint64_t)vs.f_bavail * (uint64_t)vs.f_frsize;
    if (bytes <= avail) return 0;
    char need[32], have[32];
    file_human_size(bytes, need, sizeof need);
    file_human_size(avail, have, sizeof have);
    file_out_abort(o);
    return err_set(err, "%s: needs %s (%llu bytes) but its file system has %s available", o->path,
                   need, (unsigned long long)bytes, have);
}

int file_out_commit(file_out *o, char *err) {
    if (!o->f) return err_set(err, "%s: nothing to commit", o->path);
    int bad = fflush(o->f) != 0 || ferror(o->f);
    int e = bad ? errno : 0;
    if (!bad && fsync(fileno(o->f)) != 0) bad = 1, e = errno;
    if (!bad && rename(o->tmp, o->path) != 0) bad = 1, e = errno;
    if (bad) {
        file_out_abort(o);
        return err_set(err, "%s: write failed: %s", o->path, e ? strerror(e) : "I/O error");
    }
    int closed = fclose(o->f); /* releases the lock; the data was flushed and synced above */
    o->f = NULL;
    return closed == 0 ? 0 : err_set(err, "%s: close failed: %s", o->path, strerror(errno));
}

void file_out_abort(file_out *o) {
    if (!o->f) return;
    unlink(o->tmp); /* while the lock is held: the name is still ours */
    fclose(o->f);
    o->f = NULL;
}

/* ---- file_check_io ----------------------------------------------------------------------- */

int file_same(const char *a, const char *b) {
    struct stat sa, sb;
    int ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
    if (ea && eb) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    if (ea || eb) return 0;
    char ra[FILE_PATH_MAX], rb[FILE_PATH_MAX];
    if (paths_resolve(a, ra, sizeof ra) || paths_resolve(b, rb, sizeof rb)) return !strcmp(a, b);
    return !strcmp(ra, rb);
}

static int given(const file_io *f) {
    return f->path && f->path[0];
}

static int is_output(file_io_role r) {
    return r == FILE_IO_OUT || r == FILE_IO_DB;
}

static int is_input(file_io_role r) {
    return r == FILE_IO_IN || r == FILE_IO_IN_DB;
}

/* The folder an output lands in: the nearest existing ancestor of path (created below it when
 * the command creates folders), which must be a folder this user can write. */
static int check_folder(const file_io *f, int created, char *err) {
    char dir[FILE_PATH_MAX];
    if (strlen(f->path) >= sizeof dir)
        return err_set(err, "%s %.100s...: path too long", f->flag, f->path);
    snprintf(dir, sizeof dir, "%s", f->path);
    for (;;) {
        char *slash = strrchr(dir, '/');
        if (!slash) {
            snprintf(dir, sizeof dir, ".");
        } else if (slash == dir) {
            dir[1] = '\0';
        } else {
            *slash = '\0';
        }
        struct stat st;
        if (stat(dir, &st) == 0) {
            if (!S_ISDIR(st.st_mode))
                return err_set(err, "%s %s: cannot create the %s: %s is not a folder", f->flag,
                               f->path, f->what, dir);
            if (access(dir, W_OK | X_OK) != 0)
                return err_set(err, "%s %s: cannot create the %s in %s: %s", f->flag, f->path,
                               f->what, dir, strerror(errno));
            return 0;
        }
        if (!created || errno != ENOENT)
            return err_set(err, "%s %s: cannot create the %s: %s: %s", f->flag, f->path, f->what,
                           dir, strerror(errno));
        if (!strcmp(dir, ".") || !strcmp(dir, "/")) return 0;
    }
}

/* The kind of one entry (file_io.what given). */
static int check_kind(const file_io *f, char *err) {
    char e[ERR_LEN];
    struct stat st;
    switch (f->role) {
    case FILE_IO_IN:
    case FILE_IO_IN_DB:
        if (file_check_regular(f->path, f->what, e)) return err_set(err, "%s %s", f->flag, e);
        if (access(f->path, R_OK) != 0)
            return err_set(err, "%s %s: cannot read the %s: %s", f->flag, f->path, f->what,
                           strerror(errno));
        return 0;
    case FILE_IO_IN_DIR:
        if (stat(f->path, &st) != 0)
            return err_set(err, "%s %s: cannot open the %s: %s", f->flag, f->path, f->what,
                           strerror(errno));
        if (!S_ISDIR(st.st_mode))
            return err_set(err, "%s %s: is %s, expected a folder of %s", f->flag, f->path,
                           file_kind_name(st.st_mode), f->what);
        return 0;
    case FILE_IO_OUT: {
        /* the probe the write itself makes (PATH.tmp created, then removed): its message */
        file_out o;
        if (file_out_open(&o, f->path, f->what, e)) return err_set(err, "%s %s", f->flag, e);
        file_out_abort(&o);
        return 0;
    }
    case FILE_IO_DB:
        if (file_check_output(f->path, f->what, e)) return err_set(err, "%s %s", f->flag, e);
        return check_folder(f, 1, err);
    case FILE_IO_OUT_DIR:
        if (stat(f->path, &st) == 0) {
            if (!S_ISDIR(st.st_mode))
                return err_set(err, "%s %s: is %s, expected a folder for the %s", f->flag, f->path,
                               file_kind_name(st.st_mode), f->what);
            if (access(f->path, W_OK | X_OK) != 0)
                return err_set(err, "%s %s: cannot write the %s there: %s", f->flag, f->path,
                               f->what, strerror(errno));
            return 0;
        }
        return check_folder(f, 1, err);
    }
    return 0;
}

int file_check_io(const file_io *io, int n, char *err) {
    /* identity first: the kind checks below may create (and remove) PATH.tmp */
    for (int i = 0; i < n; i++) {
        const file_io *a = &io[i];
        if (!given(a) || !is_output(a->role)) continue;
        for (int j = 0; j < n; j++) {
            const file_io *b = &io[j];
            if (j == i || !given(b)) continue;
            /* a database appended to is an input as well: a file replaced there is an input
             * replaced; two outputs of one kind are just two outputs */
            if (is_output(b->role) && !(a->role == FILE_IO_OUT && b->role == FILE_IO_DB)) {
                if (j > i && a->role == b->role && file_same(a->path, b->path))
                    return err_set(err,
                                   "%s and %s name the same file %s: each output needs its own "
                                   "file",
                                   a->flag, b->flag, a->path);
                continue;
            }
            if (!is_input(b->role) && b->role != FILE_IO_DB) continue;
            if (b->role == FILE_IO_IN_DB && a->role == FILE_IO_DB) continue;
            if (file_same(a->path, b->path))
                return err_set(err,
                               "%s names the input file %s (%s): writing it would replace that "
                               "input; choose another file",
                               a->flag, a->path, b->flag);
            char tmp[FILE_PATH_MAX + 8];
            snprintf(tmp, sizeof tmp, "%s.tmp", a->path);
            if (a->role == FILE_IO_OUT && file_same(tmp, b->path))
                return err_set(err,
                               "%s %s is written through %s first, which names the input file "
                               "%s (%s): choose another file",
                               a->flag, a->path, tmp, b->path, b->flag);
        }
    }
    for (int i = 0; i < n; i++)
        if (given(&io[i]) && io[i].what && check_kind(&io[i], err)) return -1;
    return 0;
}
