/* progress.c: the live bar and the plain progress lines (see progress.h). */
#include "harness/progress.h"

#include <stdarg.h>
#include <string.h>
#include <unistd.h>

#include "util/clock.h"

void progress_init(progress *p, FILE *out, int live) {
    memset(p, 0, sizeof *p);
    p->out = out;
    p->live = live >= 0 ? live : isatty(fileno(out));
    p->last_tps = -1;
}

void progress_begin(progress *p, const char *title, long total) {
    snprintf(p->title, sizeof p->title, "%s", title);
    p->total = total;
    p->done = p->measured = 0;
    p->t_measured = 0;
    p->t_begin = p->t_drawn = clock_now();
    p->current[0] = '\0';
}

void progress_skip(progress *p, long n) {
    p->done += n;
}

static void fmt_eta(double s, char *buf, size_t n) {
    if (s < 0) {
        snprintf(buf, n, "?");
        return;
    }
    long t = (long)(s + 0.5);
    if (t >= 3600)
        snprintf(buf, n, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
    else
        snprintf(buf, n, "%ld:%02ld", t / 60, t % 60);
}

/* Seconds left, from the mean time of the samples measured so far (-1: unknown yet). */
static double eta(const progress *p) {
    if (p->measured == 0) return -1;
    return p->t_measured / p->measured * (double)(p->total - p->done);
}

static void clear_live(progress *p) {
    if (p->live && p->drawn) fprintf(p->out, "\r\033[K");
    p->drawn = 0;
}

static void draw(progress *p, double now) {
    char e[32];
    fmt_eta(eta(p), e, sizeof e);
    double dt = now - p->t_sample;
    /* Before the first token of a sample, the previous sample's speed if it was the same
     * decoder's, else none: a warm-up or a new decoder must not show another one's speed. */
    double tps = dt > 0 && p->sample_tokens                 ? p->sample_tokens / dt
                 : strcmp(p->current, p->last_current) == 0 ? p->last_tps
                                                            : -1;
    char speed[32];
    if (tps >= 0)
        snprintf(speed, sizeof speed, "%.1f tok/s", tps);
    else
        snprintf(speed, sizeof speed, "- tok/s");
    int pct = p->total ? (int)(100 * p->done / p->total) : 100;
    if (p->live) {
        char bar[21];
        int fill = pct / 5;
        for (int i = 0; i < 20; i++) bar[i] = i < fill ? '#' : '.';
        bar[20] = '\0';
        fprintf(p->out, "\r\033[K%s [%s] %ld/%ld  %-30.30s %14s  ETA %s", p->title, bar, p->done,
                p->total, p->current, speed, e);
        p->drawn = 1;
    } else {
        fprintf(p->out, "%s: %ld/%ld samples (%d%%), %s %s, ETA %s\n", p->title, p->done, p->total,
                pct, p->current, speed, e);
    }
    fflush(p->out);
    p->t_drawn = now;
}

void progress_sample_start(progress *p, const char *decoder) {
    snprintf(p->current, sizeof p->current, "%s", decoder);
    p->sample_tokens = 0;
    p->t_sample = clock_now();
    if (p->live) draw(p, p->t_sample);
}

void progress_tokens(progress *p, int n) {
    p->sample_tokens += n;
    double now = clock_now();
    if (p->live && now - p->t_drawn >= PROGRESS_REDRAW_SECONDS) draw(p, now);
}

void progress_sample_done(progress *p, int new_tokens, double seconds) {
    p->done++;
    p->measured++;
    p->t_measured += seconds;
    p->sample_tokens = new_tokens;
    double now = clock_now();
    p->last_tps = seconds > 0 ? new_tokens / seconds : -1;
    snprintf(p->last_current, sizeof p->last_current, "%s", p->current);
    /* Plain mode: the first sample (shows it started), then every few seconds; the last
     * is progress_end's line. */
    if (p->live ||
        (p->done < p->total && (p->measured == 1 || now - p->t_drawn >= PROGRESS_PLAIN_SECONDS)))
        draw(p, now);
}

void progress_note(progress *p, const char *fmt, ...) {
    clear_live(p);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(p->out, fmt, ap);
    va_end(ap);
    fputc('\n', p->out);
    fflush(p->out);
}

void progress_end(progress *p) {
    clear_live(p);
    char e[32];
    fmt_eta(clock_now() - p->t_begin, e, sizeof e);
    fprintf(p->out, "%s: %ld/%ld samples, %ld measured in %s\n", p->title, p->done, p->total,
            p->measured, e);
    fflush(p->out);
}
