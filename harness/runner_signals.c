/* runner_signals.c: the signals the measurement loop answers (runner.h).
 *
 *   - SIGINT/SIGTERM: the sample being generated stops before its next forward pass (the
 *     decoders poll runner_cancel_flag() through dec_env.cancel); a second one exits at once.
 *   - SIGBUS inside a watched model file's mapping: the file shrank while in use (truncated,
 *     or rewritten in place by a copy), and the pages past its new end no longer exist. The
 *     handler maps zero pages over the rest of that mapping, so the instruction that faulted
 *     (in any thread of the pool) reads zeros and the pass runs to its end, and raises the
 *     same stop flag: the sample is dropped unstored, and runner_measure reports "FILE changed
 *     while in use", which leaves the run 'incomplete' (resumable once the file is restored).
 *     A SIGBUS anywhere else keeps its default action (the process dies with a core dump).
 *     mmap is not on POSIX's list of async-signal-safe functions, but it is a plain system
 *     call on Linux, touching no lock or state of this process.
 *
 * A handler can only reach the loop through globals: these are the one piece of process-wide
 * state in the harness. */
#include "harness/runner.h"

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static volatile sig_atomic_t g_stop;    /* dec_env.cancel: stop before the next forward pass */
static volatile sig_atomic_t g_signals; /* SIGINT/SIGTERM received */
static volatile sig_atomic_t g_bus;     /* 1 + index of the watched file that shrank; 0: none */

enum { MAX_WATCHED = 4 };
static struct {
    uintptr_t begin, end; /* the mapping, whole pages */
    char path[1024];
} g_watched[MAX_WATCHED];
static volatile sig_atomic_t g_n_watched;

static void on_signal(int sig) {
    (void)sig;
    g_signals = g_signals + 1;
    g_stop = 1;
    if (g_signals > 1) {
        static const char m[] = "\ndecbench: second interrupt: stopping now; the run stays "
                                "'running' (resumable with --resume)\n";
        (void)!write(2, m, sizeof m - 1);
        _exit(130); /* no transaction is lost half-written: SQLite rolls it back */
    }
    static const char m[] =
        "\ndecbench: interrupted: stopping after the current forward pass "
        "(the unfinished sample is not stored; interrupt again to stop at once)\n";
    (void)!write(2, m, sizeof m - 1);
}

static void on_bus(int sig, siginfo_t *si, void *context) {
    (void)context;
    uintptr_t a = (uintptr_t)si->si_addr;
    long page = sysconf(_SC_PAGESIZE);
    for (int i = 0; i < g_n_watched; i++) {
        if (a < g_watched[i].begin || a >= g_watched[i].end) continue;
        uintptr_t from = a & ~(uintptr_t)(page - 1);
        void *z = mmap((void *)from, g_watched[i].end - from, PROT_READ,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
        if (z == MAP_FAILED) break;
        if (!g_bus) g_bus = i + 1;
        g_stop = 1;
        return; /* the faulting read is retried on the zero page */
    }
    signal(sig, SIG_DFL); /* not ours: the retried access dies as it would have */
}

void runner_catch_signals(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sa.sa_flags = SA_RESTART; /* SQLite's and stdio's system calls carry on */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    struct sigaction sb;
    memset(&sb, 0, sizeof sb);
    sb.sa_sigaction = on_bus;
    sb.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&sb.sa_mask);
    sigaction(SIGBUS, &sb, NULL);
}

int runner_stopped(void) {
    return g_stop > 0;
}

const volatile sig_atomic_t *runner_cancel_flag(void) {
    return &g_stop;
}

void runner_watch_model(const model *m) {
    if (!m || !m->file_map || g_n_watched >= MAX_WATCHED) return;
    long page = sysconf(_SC_PAGESIZE);
    int i = g_n_watched;
    g_watched[i].begin = (uintptr_t)m->file_map;
    g_watched[i].end =
        ((uintptr_t)m->file_map + m->file_map_size + (uintptr_t)page - 1) & ~(uintptr_t)(page - 1);
    snprintf(g_watched[i].path, sizeof g_watched[i].path, "%s", m->path);
    g_n_watched = i + 1; /* last: the handler sees only complete entries */
}

void runner_unwatch_models(void) {
    g_n_watched = 0;
}

const char *runner_changed_file(void) {
    return g_bus ? g_watched[g_bus - 1].path : NULL;
}
