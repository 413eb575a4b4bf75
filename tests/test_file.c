/* test_file.c: util/file.h and util/num.h, the helpers every reader of a user-named file and
 * every number parser go through.
 *
 *   - file_open_regular / file_check_regular / file_check_output: a FIFO is refused at once (an
 *     alarm fails the test if anything blocks), a directory "is a directory", a device and a
 *     socket are named, a missing file says "cannot open WHAT"; outputs may be absent;
 *   - file_out: the new contents appear at PATH only on commit, with no PATH.tmp left; an abort,
 *     a failed write (file size limit: EFBIG) or too little space keeps PATH's old contents and
 *     removes PATH.tmp; a second writer of the same PATH is refused while the first holds it;
 *   - file_check_io: an output on an input (by inode: links, other spellings; by resolved
 *     path for files not yet written), on another output, or whose PATH.tmp is an input, is
 *     refused naming both options; a database read through another option may be the one
 *     appended to; the kinds of inputs, outputs and output folders;
 *   - num_parse: overflow and trailing garbage are refused quoting what was typed. */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "tests/testutil.h"
#include "util/err.h"
#include "util/file.h"
#include "util/num.h"
#include "util/paths.h"

static char err[ERR_LEN];

static int exists(const char *path) {
    struct stat st;
    return lstat(path, &st) == 0;
}

static void write_text(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    CHECK(f && fputs(text, f) >= 0);
    if (f) fclose(f);
}

/* The whole file as a string (static buffer), or "" if it cannot be read. */
static const char *read_text(const char *path) {
    static char buf[4096];
    buf[0] = '\0';
    FILE *f = fopen(path, "rb");
    if (!f) return buf;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* Every check fails with a one-line message containing want and the path. */
#define EXPECT_ERR(call, path, want)                                                               \
    do {                                                                                           \
        err[0] = '\0';                                                                             \
        CHECK_MSG((call) < 0, "%s succeeded", #call);                                              \
        CHECK_MSG(strstr(err, want) && strstr(err, path) && !strchr(err, '\n'),                    \
                  "%s: '%s' lacks '%s' or the path", #call, err, want);                            \
    } while (0)

static void test_readers(void) {
    const char *reg = test_tmp("regular.txt"), *fifo = test_tmp("fifo"), *dir = test_tmpdir();
    const char *missing = test_tmp("missing.txt"), *sock = test_tmp("sock");
    write_text(reg, "x");
    unlink(fifo);
    CHECK(mkfifo(fifo, 0600) == 0);
    unlink(sock);
    int sfd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    snprintf(sa.sun_path, sizeof sa.sun_path, "%s", sock);
    int have_sock = sfd >= 0 && bind(sfd, (struct sockaddr *)&sa, sizeof sa) == 0;

    int fd = file_open_regular(reg, "model", err);
    CHECK_MSG(fd >= 0, "%s", err);
    char c = 0;
    CHECK(fd >= 0 && read(fd, &c, 1) == 1 && c == 'x'); /* a blocking descriptor that reads */
    if (fd >= 0) close(fd);
    CHECK(file_check_regular(reg, "model", err) == 0);
    CHECK(file_check_output(reg, "database", err) == 0);
    CHECK(file_check_output(missing, "database", err) == 0);

    EXPECT_ERR(file_open_regular(fifo, "model", err), fifo,
               "is not a regular file (a FIFO), expected a model file");
    EXPECT_ERR(file_check_regular(fifo, "tokenizer", err), fifo, "(a FIFO), expected a tokenizer");
    EXPECT_ERR(file_check_output(fifo, "database", err), fifo, "(a FIFO), expected a database");
    EXPECT_ERR(file_open_regular(dir, "dataset", err), dir, "is a directory, expected a dataset");
    EXPECT_ERR(file_check_regular(dir, "pool", err), dir, "is a directory");
    EXPECT_ERR(file_check_output(dir, "database", err), dir, "is a directory");
    EXPECT_ERR(file_open_regular(missing, "model", err), missing,
               "cannot open model: No such file or directory");
    EXPECT_ERR(file_check_regular(missing, "pool", err), missing, "cannot open pool");
    /* --db /dev/null: SQLite would create /dev/null-journal */
    EXPECT_ERR(file_check_output("/dev/null", "database", err), "/dev/null",
               "(a character device)");
    EXPECT_ERR(file_open_regular("/dev/zero", "model", err), "/dev/zero", "(a character device)");
    FILE *f = file_fopen_regular(reg, "model", err);
    CHECK_MSG(f && fgetc(f) == 'x', "%s", err);
    if (f) fclose(f);
    CHECK(file_fopen_regular(fifo, "pool", err) == NULL && strstr(err, "(a FIFO)"));
    /* file_read_all: the whole file with a NUL after it; a directory, a FIFO and a file over
     * the limit refused (a directory's ftell once asked malloc for 9 EB) */
    unsigned char *buf = NULL;
    size_t size = 1;
    CHECK_MSG(file_read_all(reg, "pool", 1, &buf, &size, err) == 0, "%s", err);
    CHECK(buf && size == 1 && buf[0] == 'x' && buf[1] == 0);
    free(buf);
    EXPECT_ERR(file_read_all(dir, "pool", 1000, &buf, &size, err), dir,
               "is a directory, expected a pool file");
    CHECK(buf == NULL && size == 0);
    EXPECT_ERR(file_read_all(fifo, "pool", 1000, &buf, &size, err), fifo, "(a FIFO)");
    write_text(reg, "0123456789");
    EXPECT_ERR(file_read_all(reg, "pool", 9, &buf, &size, err), reg,
               "pool file of 10 bytes, more than the 9 bytes a pool file may have");
    if (have_sock) EXPECT_ERR(file_open_regular(sock, "model", err), sock, "(a socket)");
    if (sfd >= 0) close(sfd);
    unlink(sock);
}

static void test_out(void) {
    const char *path = test_tmp("out.txt"), *tmp = test_tmp("out.txt.tmp");
    unlink(path), unlink(tmp);
    file_out o, o2;
    /* commit: contents appear, no .tmp left */
    CHECK_MSG(file_out_open(&o, path, "report", err) == 0, "%s", err);
    CHECK(exists(tmp) && !exists(path));
    fputs("new", o.f);
    CHECK_MSG(file_out_commit(&o, err) == 0, "%s", err);
    CHECK(strcmp(read_text(path), "new") == 0 && !exists(tmp));
    file_out_abort(&o); /* harmless after commit */
    CHECK(strcmp(read_text(path), "new") == 0);

    /* abort: the old contents stay, the .tmp goes */
    CHECK(file_out_open(&o, path, "report", err) == 0);
    fputs("half", o.f);
    file_out_abort(&o);
    file_out_abort(&o);
    CHECK(strcmp(read_text(path), "new") == 0 && !exists(tmp));

    /* a stale .tmp (a killed writer) is replaced */
    write_text(tmp, "stale stale stale");
    CHECK(file_out_open(&o, path, "report", err) == 0);
    fputs("fresh", o.f);
    CHECK(file_out_commit(&o, err) == 0);
    CHECK(strcmp(read_text(path), "fresh") == 0 && !exists(tmp));

    /* a second writer of the same path is refused while the first writes */
    CHECK(file_out_open(&o, path, "report", err) == 0);
    EXPECT_ERR(file_out_open(&o2, path, "report", err), path, "another process is writing it");
    file_out_abort(&o);
    CHECK(file_out_open(&o2, path, "report", err) == 0);
    file_out_abort(&o2);

    /* more than the file system holds: refused before writing, .tmp removed */
    CHECK(file_out_open(&o, path, "report", err) == 0);
    EXPECT_ERR(file_out_check_space(&o, 1ull << 62, err), path,
               "needs 4.6 EB (4611686018427387904 bytes) but its file system has");
    CHECK(!exists(tmp) && strcmp(read_text(path), "fresh") == 0);
    CHECK(file_out_open(&o, path, "report", err) == 0);
    CHECK_MSG(file_out_check_space(&o, 1000, err) == 0, "%s", err);
    file_out_abort(&o);

    /* a failed write (file size limit 64 kB, SIGXFSZ ignored: write() fails with EFBIG) */
    struct rlimit old, small;
    getrlimit(RLIMIT_FSIZE, &old);
    small = old;
    small.rlim_cur = 65536;
    void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
    CHECK(setrlimit(RLIMIT_FSIZE, &small) == 0);
    CHECK(file_out_open(&o, path, "report", err) == 0);
    static char big[100000];
    memset(big, 'z', sizeof big);
    fwrite(big, 1, sizeof big, o.f);
    EXPECT_ERR(file_out_commit(&o, err), path, "write failed: File too large");
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, prev);
    CHECK(!exists(tmp) && strcmp(read_text(path), "fresh") == 0);

    /* outputs that are not regular files are refused before anything is created */
    const char *fifo = test_tmp("fifo");
    EXPECT_ERR(file_out_open(&o, fifo, "report", err), fifo, "(a FIFO)");
    EXPECT_ERR(file_out_open(&o, test_tmpdir(), "report", err), test_tmpdir(), "is a directory");
    CHECK(!exists(test_tmp("fifo.tmp")));
    EXPECT_ERR(file_out_open(&o, test_tmp("no/such/dir/x"), "report", err), "no/such/dir/x.tmp",
               "cannot create: No such file or directory");

    char buf[32];
    CHECK(strcmp(file_human_size(915893991505948ull, buf, sizeof buf), "915.9 TB") == 0);
    CHECK(strcmp(file_human_size(999, buf, sizeof buf), "999 bytes") == 0);
    CHECK(strcmp(file_human_size(512000000000ull, buf, sizeof buf), "512.0 GB") == 0);
}

/* file_same, paths_resolve and file_check_io: an output never replaces an input. */
static void test_io(void) {
    char dir[1024], in[1100], link_in[1100], hard[1100], out[1100], db[1100], file[1100];
    snprintf(dir, sizeof dir, "%s/io", test_tmpdir());
    mkdir(dir, 0777);
    snprintf(in, sizeof in, "%s/in.bin", dir);
    snprintf(link_in, sizeof link_in, "%s/link.bin", dir);
    snprintf(hard, sizeof hard, "%s/hard.bin", dir);
    snprintf(out, sizeof out, "%s/new/../out.txt", dir); /* absent: compared by path */
    snprintf(db, sizeof db, "%s/r.db", dir);
    snprintf(file, sizeof file, "%s/in.bin/x", dir); /* below a file */
    unlink(link_in), unlink(hard), unlink(db), unlink(test_tmp("io/out.txt"));
    write_text(in, "model");
    write_text(db, "SQLite format 3");
    CHECK(symlink(in, link_in) == 0 && link(in, hard) == 0);

    /* the same file by inode (a symbolic link, a hard link, another spelling) */
    CHECK(file_same(in, link_in) && file_same(in, hard) && !file_same(in, db));
    char dotted[1200];
    snprintf(dotted, sizeof dotted, "%s/./io/../io//in.bin", test_tmpdir());
    CHECK(file_same(in, dotted));
    /* files yet to be written: by resolved path */
    char r1[4096], r2[4096], plain[1100];
    snprintf(plain, sizeof plain, "%s/out.txt", dir);
    CHECK(paths_resolve(out, r1, sizeof r1) == 0 && paths_resolve(plain, r2, sizeof r2) == 0);
    CHECK_MSG(strcmp(r1, r2) == 0, "'%s' vs '%s'", r1, r2);
    CHECK(r1[0] == '/' && !strstr(r1, "/../") && !strstr(r1, "//"));
    CHECK(file_same(out, plain) && !file_same(out, test_tmp("io/other.txt")));
    CHECK(paths_resolve("rel/../x", r1, sizeof r1) == 0 && r1[0] == '/' && !strstr(r1, "rel"));
    CHECK(!file_same(in, plain)); /* one exists, the other does not */

    /* an output on an input: refused, naming both options and the file */
    file_io io[] = {{"--state-save", link_in, FILE_IO_OUT, NULL},
                    {"--model", in, FILE_IO_IN, NULL}};
    EXPECT_ERR(file_check_io(io, 2, err), link_in, "--state-save names the input file");
    CHECK(strstr(err, "(--model)") != NULL);
    /* on the database appended to */
    file_io on_db[] = {{"--db", db, FILE_IO_DB, NULL}, {"--csv", db, FILE_IO_OUT, NULL}};
    EXPECT_ERR(file_check_io(on_db, 2, err), db, "--csv names the input file");
    CHECK(strstr(err, "(--db)") != NULL);
    /* a database read through another option may be the one appended to */
    file_io same_db[] = {{"--db", db, FILE_IO_DB, NULL},
                         {"--project-cost", db, FILE_IO_IN_DB, NULL}};
    CHECK_MSG(file_check_io(same_db, 2, err) == 0, "%s", err);
    /* but not the file a report replaces */
    file_io report[] = {{"--out", db, FILE_IO_OUT, NULL}, {"--db", db, FILE_IO_IN_DB, NULL}};
    EXPECT_ERR(file_check_io(report, 2, err), db, "--out names the input file");
    /* two outputs yet to be written, spelled differently */
    file_io twice[] = {{"--csv", out, FILE_IO_OUT, NULL}, {"--db", plain, FILE_IO_DB, NULL}};
    EXPECT_ERR(file_check_io(twice, 2, err), out, "--csv names the input file");
    file_io two_out[] = {{"--csv", out, FILE_IO_OUT, NULL}, {"-o", plain, FILE_IO_OUT, NULL}};
    EXPECT_ERR(file_check_io(two_out, 2, err), out, "--csv and -o name the same file");
    /* OUT.tmp, which file_out truncates first, on an input */
    char tmp_in[1100], out_of_tmp[1100];
    snprintf(tmp_in, sizeof tmp_in, "%s/m.gguf.tmp", dir);
    snprintf(out_of_tmp, sizeof out_of_tmp, "%s/m.gguf", dir);
    write_text(tmp_in, "model");
    file_io via_tmp[] = {{"-o", out_of_tmp, FILE_IO_OUT, "GGUF"},
                         {"--model", tmp_in, FILE_IO_IN, NULL}};
    EXPECT_ERR(file_check_io(via_tmp, 2, err), tmp_in, "is written through");
    CHECK(strcmp(read_text(tmp_in), "model") == 0);
    /* inputs may share a file; absent entries are skipped */
    file_io inputs[] = {{"--model", in, FILE_IO_IN, "model"},
                        {"--tokenizer", hard, FILE_IO_IN, "tokenizer"},
                        {"--draft", NULL, FILE_IO_IN, "model"},
                        {"--csv", plain, FILE_IO_OUT, "CSV"}};
    CHECK_MSG(file_check_io(inputs, 4, err) == 0, "%s", err);
    CHECK(!exists(plain) && !exists(test_tmp("io/out.txt.tmp")));

    /* kinds, for the entries that name one */
    file_io missing[] = {{"--project-cost", test_tmp("io/nope.csv"), FILE_IO_IN, "cost"}};
    EXPECT_ERR(file_check_io(missing, 1, err), "nope.csv", "--project-cost ");
    CHECK(strstr(err, "cannot open cost: No such file or directory") != NULL);
    file_io fifo_out[] = {{"--csv", test_tmp("fifo"), FILE_IO_OUT, "CSV"}};
    EXPECT_ERR(file_check_io(fifo_out, 1, err), "fifo", "(a FIFO), expected a CSV file");
    file_io no_folder[] = {{"--csv", test_tmp("io/no/such/x.csv"), FILE_IO_OUT, "CSV"}};
    EXPECT_ERR(file_check_io(no_folder, 1, err), "x.csv.tmp", "cannot create");
    file_io dir_on_file[] = {{"--out", file, FILE_IO_OUT_DIR, "figures"}};
    EXPECT_ERR(file_check_io(dir_on_file, 1, err), "in.bin", "is not a folder");
    file_io dir_is_file[] = {{"--out", in, FILE_IO_OUT_DIR, "figures"}};
    EXPECT_ERR(file_check_io(dir_is_file, 1, err), in, "is a regular file, expected a folder");
    char deep[1200];
    snprintf(deep, sizeof deep, "%s/a/b/c", dir);
    file_io dir_new[] = {{"--out", deep, FILE_IO_OUT_DIR, "figures"}};
    CHECK_MSG(file_check_io(dir_new, 1, err) == 0, "%s", err);
    file_io scripts[] = {{"--plots-dir", in, FILE_IO_IN_DIR, "gnuplot scripts"}};
    EXPECT_ERR(file_check_io(scripts, 1, err), in, "expected a folder of gnuplot scripts");
}

static void test_num(void) {
    long long v = -7;
    CHECK(num_parse("42", 0, 100, &v, "--n", err) == 0 && v == 42);
    CHECK(num_parse("-5", -10, 10, &v, "--n", err) == 0 && v == -5);
    CHECK(num_parse("9223372036854775807", 0, INT64_MAX, &v, "--n", err) == 0 && v == INT64_MAX);
    v = -7;
    EXPECT_ERR(num_parse("99999999999999999999", 0, 2147483647, &v, "--seed", err), "--seed",
               "--seed: 99999999999999999999 is out of range 0..2147483647");
    CHECK(v == -7);
    EXPECT_ERR(num_parse("-99999999999999999999", 0, 10, &v, "--n", err), "--n",
               "-99999999999999999999 is out of range 0..10");
    EXPECT_ERR(num_parse("4294967360", 1, 65536, &v, "dim", err), "dim",
               "dim: 4294967360 is out of range 1..65536");
    EXPECT_ERR(num_parse("101", 0, 100, &v, "--n", err), "--n", "101 is out of range 0..100");
    EXPECT_ERR(num_parse("", 0, 100, &v, "--n", err), "--n", "'' is not an integer");
    EXPECT_ERR(num_parse("12x", 0, 100, &v, "--n", err), "--n", "'12x' is not an integer");
    EXPECT_ERR(num_parse("1e3", 0, 10000, &v, "--n", err), "--n", "'1e3' is not an integer");
    EXPECT_ERR(num_parse("123456789012345678901234567890123456789012345", 0, 1, &v, "--n", err),
               "--n", "1234567890123456789012345678901234567890... is out of range");
    CHECK(v == -7);
}

int main(void) {
    alarm(60); /* a FIFO that blocks an open() must fail the test, not hang it */
    test_readers();
    test_out();
    test_io();
    test_num();
    return test_finish("test_file");
}
