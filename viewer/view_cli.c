/* view_cli.c — `srdc view`: reads a run's VTK series, keeps every k-th frame when there are
 * too many for one page, and writes the page of view.h. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "cli.h"
#include "view.h"

/* A page holds at most this much frame data (base64 text) unless --max-frames says fewer. */
#define FRAME_BYTES_BUDGET (24.0 * 1024 * 1024)

typedef struct Options {
    const char *dir, *out, *series;
    int         max_frames;
} Options;

static int usage_error(const char *fmt, const char *what)
{
    return srd_cli_error("view", fmt, what);
}

/* Reads the options; -1 on success, else the exit status of an error. */
static int parse_options(int argc, char **argv, Options *o)
{
    *o = (Options){ NULL, NULL, NULL, 300 };
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool takes = !strcmp(a, "-o") || !strcmp(a, "--series") || !strcmp(a, "--max-frames");
        char *end = NULL;
        if (takes && !v)
            return usage_error("`%s` needs a value", a);
        if (!strcmp(a, "-o"))
            o->out = v;
        else if (!strcmp(a, "--series"))
            o->series = v;
        else if (!strcmp(a, "--max-frames") && ((o->max_frames = (int)strtol(v, &end, 10)) < 2 || *end))
            return usage_error("`--max-frames %s`: write a number of frames, 2 or more", v);
        else if (!takes && srd_cli_operand("view", a, &o->dir) != 0)
            return 1;
        i += takes;
    }
    if (!o->dir)
        return usage_error("%s", "which run? write `srdc view DIR` with the directory of a run's output");
    return -1;
}

/* Bytes of one frame in the page: 3 Float32 per point and a Uint16 per value of each field,
 * as base64 (4 characters per 3 bytes). */
static double frame_bytes(const srd_frame *f)
{
    double bytes = 12.0 * (double)f->n_points;
    for (int i = 0; i < f->n_fields; i++)
        if (f->fields[i].on_cells != 2)
            bytes += 2.0 * (double)(f->fields[i].on_cells ? f->n_cells : f->n_points);
    return bytes * 4 / 3;
}

/* The step k between the frames kept: the smallest with at most max_frames frames (every k-th
 * from the first, and the last) and at most FRAME_BYTES_BUDGET of frame data. */
static int frame_step(int n, int max_frames, double bytes)
{
    int k = 1;
    for (;;) {
        int kept = (n - 1) / k + 1 + ((n - 1) % k != 0);
        if (kept <= max_frames && kept * bytes <= FRAME_BYTES_BUDGET)
            return k;
        if (kept <= 2)
            return k;
        k++;
    }
}

/* Reads the frames to show into run (index, times, frames allocated); -1 with a message. */
static int read_kept(const srd_series *s, const Options *o, srd_view_run *run, char *err, size_t err_n)
{
    srd_frame first;
    if (srd_frame_read(s->paths[0], &first, err, err_n) != 0)
        return -1;
    int step = frame_step(s->n, o->max_frames, frame_bytes(&first));
    srd_frame *frames = srd_xcalloc((size_t)s->n, sizeof *frames);
    int *index = srd_xcalloc((size_t)s->n, sizeof(int));
    double *times = srd_xcalloc((size_t)s->n, sizeof(double));
    frames[0] = first;
    int n = 1;
    for (int k = step; k < s->n + step - 1 && n > 0; k += step) {
        int at = k < s->n ? k : s->n - 1; /* the last frame always */
        index[n] = at;
        times[n] = s->times[at];
        n = srd_frame_read(s->paths[at], &frames[n], err, err_n) == 0 ? n + 1 : -n;
    }
    *run = (srd_view_run){ NULL, n < 0 ? -n : n, frames, times, index };
    times[0] = s->times[0];
    return n < 0 ? -1 : 0;
}

static void free_run(srd_view_run *run)
{
    srd_frames_free((srd_frame *)run->frames, run->n);
    free((double *)run->times);
    free((int *)run->index);
}

/* The page's path: -o, else DIR/SERIES.html. */
static char *page_path(const Options *o, const char *pvd)
{
    if (o->out)
        return srd_xstrdup(o->out);
    size_t n = strlen(pvd);
    char *path = srd_xcalloc(n + 2, 1);
    snprintf(path, n + 2, "%.*s.html", (int)n - 4, pvd);
    return path;
}

static int view(const Options *o, const char *pvd, char *err, size_t err_n)
{
    srd_series s;
    if (srd_series_read(pvd, &s, err, err_n) != 0)
        return -1;
    srd_view_run run = { 0 };
    int status = read_kept(&s, o, &run, err, err_n);
    const char *base = strrchr(pvd, '/') ? strrchr(pvd, '/') + 1 : pvd;
    char title[256], *path = page_path(o, pvd);
    snprintf(title, sizeof title, "%.*s", (int)strlen(base) - 4, base);
    run.title = title;
    if (status == 0)
        status = srd_view_write(path, &run, err, err_n);
    if (status == 0) {
        FILE *f = fopen(path, "rb");
        long size = f && fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
        if (f)
            fclose(f);
        printf("wrote %s (%.1f MB; %d of the series' %d frames)\n", path, size / 1e6, run.n, s.n);
    }
    free(path);
    free_run(&run);
    srd_series_free(&s);
    return status;
}

int srd_view_command(int argc, char **argv)
{
    Options o;
    int status = parse_options(argc, argv, &o);
    if (status >= 0)
        return status;
    char err[2048] = "";
    char *pvd = srd_series_find(o.dir, o.series, err, sizeof err);
    status = pvd && view(&o, pvd, err, sizeof err) == 0 ? 0 : 1;
    if (status != 0)
        fprintf(stderr, "srdc: error: %s\n", err);
    free(pvd);
    return status;
}
