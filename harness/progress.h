/* progress.h: progress of a benchmark run on stderr.
 *
 * On a terminal: one live line redrawn in place (bar, samples done/total, current decoder,
 * live tok/s of the sample being generated, ETA). Otherwise (CI logs, files): plain lines,
 * at most one every PROGRESS_PLAIN_SECONDS plus the first and the last, so a long run does
 * not flood a log. Messages (progress_note) clear the live line first so they stay readable.
 *
 * Cost inside the measurement: progress_tokens() is the only call made while a decoder is
 * timed (from the token callback, terminal mode only). It adds to a counter and reads the
 * clock; it redraws at most every PROGRESS_REDRAW_SECONDS, a few microseconds each, i.e.
 * well under 0.1% of any sample. Without a terminal the runner installs no callback at all. */
#ifndef HARNESS_PROGRESS_H
#define HARNESS_PROGRESS_H

#include <stdio.h>

#define PROGRESS_REDRAW_SECONDS 0.25
#define PROGRESS_PLAIN_SECONDS 5.0

typedef struct {
    FILE *out;
    int live;          /* 1: terminal, redraw in place */
    char title[64];    /* e.g. "run 12" or "sweep point 3/8" */
    long total, done;  /* samples, skipped ones (--resume) included in done */
    long measured;     /* samples generated in this process (for the ETA) */
    double t_begin;    /* clock at progress_begin */
    double t_measured; /* seconds spent in measured samples */
    /* the sample in flight */
    char current[48];
    double t_sample;
    long sample_tokens;
    double last_tps;       /* end-to-end tok/s of the last finished sample (< 0: none) */
    char last_current[48]; /* ... and its decoder: shown only while the same one runs */
    double t_drawn;        /* last redraw / plain line */
    int drawn;             /* a live line is on screen */
} progress;

/* live < 0: decide from isatty(fileno(out)). */
void progress_init(progress *p, FILE *out, int live);
void progress_begin(progress *p, const char *title, long total);
/* Samples already stored (resume): counted as done, not in the ETA. */
void progress_skip(progress *p, long n);
void progress_sample_start(progress *p, const char *decoder);
void progress_tokens(progress *p, int n); /* from the decoder's token callback */
void progress_sample_done(progress *p, int new_tokens, double seconds);
/* A message line (newline added), printed above the live line. */
void progress_note(progress *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Final line of this run. */
void progress_end(progress *p);

#endif
