/* render_cli.c — `srdc render`: finds a run's VTK series, fits the camera to the whole run and
 * writes the chosen frames as PNG pictures. */
#include "render_cli.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "alloc.h"
#include "cli.h"
#include "render.h"
#include "srd_model.h"

typedef struct Options {
    const char *dir, *out, *series, *frame, *time;
    srd_render_options r;
    bool        has_eye, has_target, has_up, has_fov;
    double      eye[3], target[3], up[3], fov;
} Options;

static int usage_error(const char *fmt, const char *what)
{
    return srd_cli_error("render", fmt, what);
}

static bool parse_size(const char *s, int *w, int *h)
{
    char *end;
    long a = strtol(s, &end, 10);
    if (*end != 'x')
        return false;
    long b = strtol(end + 1, &end, 10);
    if (*end || a < 16 || b < 16 || a > 8192 || b > 8192)
        return false;
    *w = (int)a;
    *h = (int)b;
    return true;
}

static bool parse_view(const char *s, srd_view_kind *v)
{
    static const char *names[] = { "auto", "front", "side", "top", "iso" };
    for (int k = 0; k < 5; k++)
        if (!strcmp(s, names[k])) {
            *v = (srd_view_kind)k;
            return true;
        }
    return false;
}

/* "x,y,z" in metres (or dimensionless for --up). */
static bool parse_point(const char *s, double *p)
{
    char *end;
    for (int c = 0; c < 3; c++) {
        p[c] = strtod(s, &end);
        if (end == s || !isfinite(p[c]) || *end != (c < 2 ? ',' : '\0'))
            return false;
        s = end + 1;
    }
    return true;
}

/* The camera options: --eye, --target, --up (x,y,z) and --fov (degrees; 0 for orthographic).
 * Returns 1 when a is one (the value consumed), 0 when not, -1 on a bad value. */
static int camera_option(const char *a, const char *v, Options *o)
{
    double *dest = !strcmp(a, "--eye") ? o->eye : !strcmp(a, "--target") ? o->target : !strcmp(a, "--up") ? o->up : NULL;
    if (dest) {
        *(dest == o->eye ? &o->has_eye : dest == o->target ? &o->has_target : &o->has_up) = true;
        return parse_point(v, dest) ? 1 : -1;
    }
    if (strcmp(a, "--fov"))
        return 0;
    char *end;
    o->fov = strtod(v, &end);
    o->has_fov = true;
    return *end || end == v || !(o->fov >= 0 && o->fov < 170) ? -1 : 1;
}

/* Reads the options; returns -1 on success, else the exit status of an error. */
static int parse_options(int argc, char **argv, Options *o)
{
    memset(o, 0, sizeof *o);
    o->frame = "last";
    o->r = (srd_render_options){ 960, 640, SRD_VIEW_AUTO, NULL, true };
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool takes = !strcmp(a, "-o") || !strcmp(a, "--series") || !strcmp(a, "--frame") || !strcmp(a, "--time") ||
                     !strcmp(a, "--size") ||
                     !strcmp(a, "--view") || !strcmp(a, "--color") || !strcmp(a, "--eye") || !strcmp(a, "--target") ||
                     !strcmp(a, "--up") || !strcmp(a, "--fov");
        if (takes && !v)
            return usage_error("`%s` needs a value", a);
        int camera = takes ? camera_option(a, v, o) : 0;
        if (camera < 0)
            return usage_error(!strcmp(a, "--fov") ? "`--fov %s`: write the field of view in degrees, 0 (orthographic) "
                                                     "to under 170"
                                                   : "`%s`: write a point or direction as x,y,z (metres), for example "
                                                     "0.05,-0.3,0.1",
                               !strcmp(a, "--fov") ? v : a);
        if (camera)
            ;
        else if (!strcmp(a, "-o"))
            o->out = v;
        else if (!strcmp(a, "--series"))
            o->series = v;
        else if (!strcmp(a, "--frame"))
            o->frame = v;
        else if (!strcmp(a, "--time"))
            o->time = v;
        else if (!strcmp(a, "--color"))
            o->r.color_field = v;
        else if (!strcmp(a, "--size") && !parse_size(v, &o->r.width, &o->r.height))
            return usage_error("`--size %s`: write WIDTHxHEIGHT in pixels, 16 to 8192, for example 960x640", v);
        else if (!strcmp(a, "--view") && !parse_view(v, &o->r.view))
            return usage_error("unknown view `%s`: auto, front, side, top or iso", v);
        else if (!takes && srd_cli_operand("render", a, &o->dir) != 0)
            return 1;
        i += takes;
    }
    if (!o->dir)
        return usage_error("%s", "which run? write `srdc render DIR` with the directory of a run's output");
    return -1;
}

/* The frame nearest time `spec` (seconds, "2.5" or "2.5s"), or -1 when it is not a time. */
static int frame_at(const char *spec, const srd_series *s)
{
    char *end;
    double t = strtod(spec, &end);
    if (end == spec || !isfinite(t) || (*end && strcmp(end, "s")))
        return -1;
    int best = 0;
    for (int k = 1; k < s->n; k++)
        if (fabs(s->times[k] - t) < fabs(s->times[best] - t))
            best = k;
    return best;
}

/* The frames to draw: "last", "first", "all" or an index. */
static int frame_range(const char *spec, int n, int *lo, int *hi)
{
    char *end;
    long k = strtol(spec, &end, 10);
    if (!strcmp(spec, "last"))
        k = n - 1;
    else if (!strcmp(spec, "first"))
        k = 0;
    else if (!strcmp(spec, "all")) {
        *lo = 0;
        *hi = n - 1;
        return 0;
    } else if (*end || end == spec || k < 0 || k >= n)
        return -1;
    *lo = *hi = (int)k;
    return 0;
}

static void output_path(const Options *o, const char *pvd, int k, bool many, char *path, size_t n)
{
    const char *base = strrchr(pvd, '/') ? strrchr(pvd, '/') + 1 : pvd;
    int stem = (int)strlen(base) - 4;
    if (o->out && !many)
        snprintf(path, n, "%s", o->out);
    else if (o->out)
        snprintf(path, n, "%s_%06d.png", o->out, k);
    else if (many)
        snprintf(path, n, "%s/%.*s_%06d.png", o->dir, stem, base, k);
    else
        snprintf(path, n, "%s/%.*s.png", o->dir, stem, base);
}

/* ---- videos: the frames as pictures in a scratch directory, then the ffmpeg program ---- */

static bool video_output(const char *out)
{
    size_t n = out ? strlen(out) : 0;
    return n > 4 && (!strcmp(out + n - 4, ".gif") || !strcmp(out + n - 4, ".mp4"));
}

/* Frames [lo, hi] every `step`-th, played back in real time at most 50 per second. */
static double video_rate(const srd_series *s, int lo, int hi, int *step)
{
    double span = s->times[hi] - s->times[lo], dt = hi > lo ? span / (hi - lo) : 0;
    *step = 1;
    if (!(dt > 0))
        return 10;
    while (1 / (*step * dt) > 50)
        (*step)++;
    return 1 / (*step * dt);
}

static void remove_scratch(const char *dir, int count)
{
    char path[1100];
    for (int k = 0; k < count; k++) {
        snprintf(path, sizeof path, "%s/f_%06d.png", dir, k);
        unlink(path);
    }
    snprintf(path, sizeof path, "%s/ffmpeg.log", dir);
    unlink(path);
    rmdir(dir);
}

static int encode(const Options *o, const char *dir, double fps, char *err, size_t err_n)
{
    char input[1100], rate[32], log[1100];
    snprintf(input, sizeof input, "%s/f_%%06d.png", dir);
    snprintf(rate, sizeof rate, "%.6g", fps);
    snprintf(log, sizeof log, "%s/ffmpeg.log", dir);
    bool gif = !strcmp(o->out + strlen(o->out) - 4, ".gif");
    /* a GIF gets its own palette; an MP4 the widely played H.264 in 4:2:0, even-sized */
    const char *filter = gif ? "split[a][b];[a]palettegen[p];[b][p]paletteuse" : "pad=ceil(iw/2)*2:ceil(ih/2)*2";
    char *argv[] = { "ffmpeg", "-y", "-loglevel", "error", "-framerate", rate, "-i", input, "-vf", (char *)filter,
                     gif ? "-loop" : "-c:v", gif ? "0" : "libx264", gif ? "-f" : "-pix_fmt", gif ? "gif" : "yuv420p",
                     (char *)o->out, NULL };
    int ran = srd_cli_run(argv, log, err, err_n);
    if (ran == 127)
        snprintf(err, err_n, "`ffmpeg` is not installed; a video needs it (Debian: apt-get install ffmpeg), or render "
                 "PNG pictures with `--frame all`");
    if (ran != 0) {
        if (strstr(err, "failed")) { /* keep the log's words: the scratch directory goes */
            FILE *f = fopen(log, "r");
            char line[512] = "";
            if (f && fgets(line, sizeof line, f))
                snprintf(err, err_n, "ffmpeg failed: %s", line);
            if (f)
                fclose(f);
        }
        return -1;
    }
    return 0;
}

static int draw_video(const Options *o, const srd_series *s, srd_frame *frames, int lo, int hi,
                      const srd_camera *cam, double flo, double fhi, char *err, size_t err_n)
{
    int step, count = 0;
    double fps = video_rate(s, lo, hi, &step);
    const char *tmp = getenv("TMPDIR");
    char dir[1024];
    if (snprintf(dir, sizeof dir, "%s/srd_render_XXXXXX", tmp && *tmp ? tmp : "/tmp") >= (int)sizeof dir) {
        snprintf(err, err_n, "TMPDIR is too long a path");
        return -1;
    }
    if (!mkdtemp(dir)) {
        snprintf(err, err_n, "cannot make a scratch directory in %s: %s", tmp && *tmp ? tmp : "/tmp", strerror(errno));
        return -1;
    }
    int status = 0;
    for (int k = lo; k <= hi && status == 0; k += step) {
        char path[1100];
        snprintf(path, sizeof path, "%s/f_%06d.png", dir, count++);
        status = srd_render_png(&frames[k], s->times[k], cam, &o->r, flo, fhi, path, err, err_n);
    }
    if (status == 0)
        status = encode(o, dir, fps, err, err_n);
    remove_scratch(dir, count);
    if (status == 0)
        printf("wrote %s (%d frames at %.4g per second)\n", o->out, count, fps);
    return status;
}

/* The fitted camera with what the options set. With an eye or a target given, the other
 * keeps its fitted place (a new eye keeps looking at the run's centre); an orthographic view
 * (--fov 0) shows the run's bounding sphere. Looking along the up direction leaves no way to
 * hold the picture upright: refused. */
static int set_camera(const Options *o, const double lo[3], const double hi[3], srd_camera *cam, char *err,
                      size_t err_n)
{
    if (o->has_eye)
        memcpy(cam->eye, o->eye, sizeof o->eye);
    if (o->has_target)
        memcpy(cam->target, o->target, sizeof o->target);
    if (o->has_up)
        memcpy(cam->up, o->up, sizeof o->up);
    if (o->has_fov)
        cam->fov_deg = o->fov;
    double d[3] = { cam->target[0] - cam->eye[0], cam->target[1] - cam->eye[1], cam->target[2] - cam->eye[2] };
    double dd = d[0] * d[0] + d[1] * d[1] + d[2] * d[2], uu = 0, du = 0, r = 0;
    for (int c = 0; c < 3; c++) {
        uu += cam->up[c] * cam->up[c];
        du += d[c] * cam->up[c];
        r += 0.25 * (hi[c] - lo[c]) * (hi[c] - lo[c]);
    }
    if (!(dd > 0)) {
        snprintf(err, err_n, "the eye and the target are the same point; move one of them");
        return -1;
    }
    if (!(uu > 0) || du * du >= (1 - 1e-9) * dd * uu) {
        snprintf(err, err_n, "the camera looks along its up direction (%g, %g, %g), so the picture has no upright; "
                 "give --up another direction", cam->up[0], cam->up[1], cam->up[2]);
        return -1;
    }
    if (cam->fov_deg <= 0)
        cam->ortho_height = 2.16 * sqrt(r) / fmin(1, (double)o->r.width / o->r.height);
    return 0;
}

/* The camera of the model's `view` block (srd_render_view_block) fills in what the command line
 * did not set. */
static void file_view(Options *o, const srd_frame *f)
{
    srd_view_block vb;
    if (!srd_render_view_block(f, &vb))
        return;
    struct { unsigned bit; bool *has; double *to; const double *from; } parts[] = {
        { SRD_VIEW_EYE, &o->has_eye, o->eye, vb.eye },
        { SRD_VIEW_TARGET, &o->has_target, o->target, vb.target },
        { SRD_VIEW_UP, &o->has_up, o->up, vb.up },
    };
    for (size_t k = 0; k < sizeof parts / sizeof *parts; k++)
        if ((vb.given & parts[k].bit) && !*parts[k].has) {
            *parts[k].has = true;
            memcpy(parts[k].to, parts[k].from, 3 * sizeof(double));
        }
    if ((vb.given & SRD_VIEW_FOV) && !o->has_fov) {
        o->has_fov = true;
        o->fov = vb.fov_deg;
    }
    if ((vb.given & SRD_VIEW_FROM) && o->r.view == SRD_VIEW_AUTO)
        o->r.view = vb.from;
}

static int draw(const Options *o, const char *pvd, const srd_series *s, srd_frame *frames, char *err, size_t err_n)
{
    int lo, hi;
    bool video = video_output(o->out);
    if (o->time) {
        if ((lo = hi = frame_at(o->time, s)) < 0) {
            snprintf(err, err_n, "`--time %s`: write a time in seconds, for example 1.5 or 1.5s", o->time);
            return -1;
        }
    } else if (video && !strcmp(o->frame, "last")) /* a video shows the whole run unless told otherwise */
        lo = 0, hi = s->n - 1;
    else if (frame_range(o->frame, s->n, &lo, &hi) != 0) {
        snprintf(err, err_n, "`--frame %s`: the series has frames 0 to %d (or write first, last, all)", o->frame,
                 s->n - 1);
        return -1;
    }
    double blo[3], bhi[3], flo = 0, fhi = 1;
    srd_render_bounds(frames, s->n, blo, bhi);
    if (o->r.color_field && srd_render_field_range(frames, s->n, o->r.color_field, &flo, &fhi, err, err_n) != 0)
        return -1;
    Options with_file = *o; /* the model's `view` block, where the command line is silent */
    file_view(&with_file, &frames[0]);
    o = &with_file;
    srd_camera cam;
    srd_render_fit(blo, bhi, o->r.view, (double)o->r.width / o->r.height, &cam);
    if (set_camera(o, blo, bhi, &cam, err, err_n) != 0)
        return -1;
    if (video)
        return draw_video(o, s, frames, lo, hi, &cam, flo, fhi, err, err_n);
    for (int k = lo; k <= hi; k++) {
        char path[4096];
        output_path(o, pvd, k, hi > lo, path, sizeof path);
        if (srd_render_png(&frames[k], s->times[k], &cam, &o->r, flo, fhi, path, err, err_n) != 0)
            return -1;
        if (k == hi)
            printf("wrote %s%s\n", path, hi > lo ? " (and the frames before it)" : "");
    }
    return 0;
}

int srd_render_command(int argc, char **argv)
{
    Options o;
    int status = parse_options(argc, argv, &o);
    if (status >= 0)
        return status;
    char err[2048] = "";
    char *pvd = srd_series_find(o.dir, o.series, err, sizeof err);
    srd_series s = { 0 };
    srd_frame *frames = NULL;
    status = 1;
    if (pvd && srd_series_read(pvd, &s, err, sizeof err) == 0 && (frames = srd_frames_read_all(&s, err, sizeof err)))
        status = draw(&o, pvd, &s, frames, err, sizeof err) == 0 ? 0 : 1;
    if (status != 0)
        fprintf(stderr, "%s: error: %s\n", srd_cli_program(), err);
    srd_frames_free(frames, s.n);
    srd_series_free(&s);
    free(pvd);
    srd_render_finish();
    return status;
}
