/* view.c — the page of view.h: the template (view.html) with three.js, the viewer's script and
 * the run as JSON put in its @@ markers. The JSON holds the mesh once (the first frame's cells,
 * sorted by how they are drawn), then per frame the points as base64 little-endian Float32 and
 * each field that changes as base64 Uint16 over the field's range in the run: colours need no
 * more than 1/65535 of the range, and that halves the bytes of the largest part of the file. */
#include "view.h"
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "render.h"
#include "vec3.h"
#include "srd_model.h"
#include "view_assets.h"

static void put_base64(FILE *f, const unsigned char *b, size_t n)
{
    static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)b[i] << 16 | (i + 1 < n ? (uint32_t)b[i + 1] << 8 : 0) | (i + 2 < n ? b[i + 2] : 0);
        char out[4] = { digits[v >> 18 & 63], digits[v >> 12 & 63], i + 1 < n ? digits[v >> 6 & 63] : '=',
                        i + 2 < n ? digits[v & 63] : '=' };
        fwrite(out, 1, 4, f);
    }
}

/* n numbers as little-endian Float32 (bytes == 4) or as Uint16 of (v - lo) / (hi - lo), in quotes;
 * little-endian whatever the host, since the browser reads them so. */
static void put_array(FILE *f, const double *v, size_t n, int bytes, double lo, double hi)
{
    unsigned char *b = srd_xcalloc((size_t)bytes * n + 1, 1);
    for (size_t i = 0; i < n; i++) {
        uint32_t u;
        if (bytes == 4) {
            float x = (float)v[i];
            memcpy(&u, &x, 4);
        } else {
            double s = (v[i] - lo) / (hi - lo);
            u = (uint32_t)lround(65535 * fmin(1, fmax(0, isfinite(s) ? s : 0)));
        }
        for (int k = 0; k < bytes; k++)
            b[(size_t)bytes * i + (size_t)k] = (unsigned char)(u >> 8 * k);
    }
    fputc('"', f);
    put_base64(f, b, (size_t)bytes * n);
    fputc('"', f);
    free(b);
}

/* A JSON string; '<' escaped so that no text of the data can close its <script> element. */
static void put_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++)
        if (*s == '"' || *s == '\\' || *s == '<' || (unsigned char)*s < 0x20)
            fprintf(f, "\\u%04x", (unsigned char)*s);
        else
            fputc(*s, f);
    fputc('"', f);
}

static void put_numbers(FILE *f, const char *key, const double *v, size_t n)
{
    fprintf(f, "\"%s\":[", key);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s%.9g", i ? "," : "", isfinite(v[i]) ? v[i] : 0);
    fputc(']', f);
}

/* ---- the mesh: cells sorted into what draws them ---- */

enum { TUBES, TRIS, LINES, DOTS, KINDS };

typedef struct Mesh {
    int     *cells[KINDS], *nodes[KINDS];
    size_t   n[KINDS];
    double  *tube_radius;
} Mesh;

static int kind_of(const srd_frame *f, size_t c, int k, const srd_frame_field *radius)
{
    if (k == 2 && f->types[c] == 3)
        return radius && radius->values[c] > 0 ? TUBES : LINES;
    if (k == 3 && f->types[c] == 5)
        return TRIS;
    return k == 1 && f->types[c] == 1 ? DOTS : -1;
}

static void build_mesh(const srd_frame *f, Mesh *m)
{
    const srd_frame_field *radius = srd_frame_field_on(f, "radius", 1);
    memset(m, 0, sizeof *m);
    for (int k = 0; k < KINDS; k++) {
        m->cells[k] = srd_xcalloc(f->n_cells + 1, sizeof(int));
        m->nodes[k] = srd_xcalloc(3 * f->n_cells + 1, sizeof(int));
    }
    m->tube_radius = srd_xcalloc(f->n_cells + 1, sizeof(double));
    for (size_t c = 0; c < f->n_cells; c++) {
        size_t at = c ? (size_t)f->offsets[c - 1] : 0;
        int k = f->offsets[c] - (int)at, kind = kind_of(f, c, k, radius);
        if (kind < 0)
            continue;
        if (kind == TUBES)
            m->tube_radius[m->n[TUBES]] = radius->values[c];
        for (int j = 0; j < k; j++)
            m->nodes[kind][(size_t)k * m->n[kind] + (size_t)j] = f->connectivity[at + (size_t)j];
        m->cells[kind][m->n[kind]++] = (int)c;
    }
}

static void free_mesh(Mesh *m)
{
    for (int k = 0; k < KINDS; k++) {
        free(m->cells[k]);
        free(m->nodes[k]);
    }
    free(m->tube_radius);
}

static void put_ints(FILE *f, const char *key, const int *v, size_t n)
{
    fprintf(f, "\"%s\":[", key);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%s%d", i ? "," : "", v[i]);
    fputc(']', f);
}

static void put_mesh(FILE *out, const srd_frame *f)
{
    static const char *names[KINDS][2] = { { "tubes", "tube_cells" }, { "tris", "tri_cells" },
                                           { "lines", "line_cells" }, { "dots", "dot_cells" } };
    static const int per[KINDS] = { 2, 3, 2, 1 };
    Mesh m;
    build_mesh(f, &m);
    fputs("\"mesh\":{", out);
    for (int k = 0; k < KINDS; k++) {
        put_ints(out, names[k][0], m.nodes[k], (size_t)per[k] * m.n[k]);
        fputc(',', out);
        put_ints(out, names[k][1], m.cells[k], m.n[k]);
        fputc(',', out);
    }
    put_numbers(out, "tube_radius", m.tube_radius, m.n[TUBES]);
    const srd_frame_field *id = srd_frame_field_on(f, "object_id", 1);
    fputs(",\"cell_object\":[", out);
    for (size_t c = 0; c < f->n_cells; c++)
        fprintf(out, "%s%d", c ? "," : "", id ? (int)id->values[c] : 0);
    fputs("]}", out);
    free_mesh(&m);
}

/* ---- fields and frames ---- */

/* The fields to colour by: those with a value per point or per cell, but the objects' numbers
 * (the page colours by object anyway). */
static bool colours(const srd_frame_field *fd)
{
    return fd->on_cells != 2 && strcmp(fd->name, "object_id");
}

static size_t tuples(const srd_frame *f, const srd_frame_field *fd)
{
    return fd->on_cells ? f->n_cells : f->n_points;
}

static double *magnitudes(const srd_frame *f, const srd_frame_field *fd)
{
    size_t n = tuples(f, fd);
    double *v = srd_xcalloc(n + 1, sizeof(double));
    for (size_t i = 0; i < n; i++)
        v[i] = srd_frame_value(fd, i);
    return v;
}

/* The same values in every frame: written once. */
static bool is_static(const srd_view_run *run, int i)
{
    const srd_frame_field *a = &run->frames[0].fields[i];
    size_t n = tuples(&run->frames[0], a) * (size_t)a->ncomp;
    for (int k = 1; k < run->n; k++)
        if (memcmp(a->values, run->frames[k].fields[i].values, n * sizeof(double)))
            return false;
    return true;
}

typedef struct Field {
    int    index;       /* in the frames' fields */
    bool   fixed;       /* the same in every frame */
    double lo, hi;
} Field;

static void put_field(FILE *out, const srd_view_run *run, const Field *fl, int k)
{
    const srd_frame *f = &run->frames[0];
    const srd_frame_field *fd = &f->fields[fl->index];
    const char *unit = srd_render_field_unit(fd->name);
    fprintf(out, "%s{\"index\":%d,\"name\":", k ? "," : "", k);
    put_string(out, fd->name);
    fputs(",\"unit\":", out);
    put_string(out, unit ? unit : "");
    fprintf(out, ",\"ncomp\":%d,\"cells\":%s,\"lo\":%.9g,\"hi\":%.9g", fd->ncomp, fd->on_cells ? "true" : "false",
            fl->lo, fl->hi);
    if (fl->fixed) {
        double *v = magnitudes(f, fd);
        fputs(",\"values\":", out);
        put_array(out, v, tuples(f, fd), 2, fl->lo, fl->hi);
        free(v);
    }
    fputc('}', out);
}

/* The colouring fields of the run with their ranges; the count, or -1 with a message. */
static int list_fields(const srd_view_run *run, Field *out, char *err, size_t err_n)
{
    int n = 0;
    for (int i = 0; i < run->frames[0].n_fields; i++) {
        const srd_frame_field *fd = &run->frames[0].fields[i];
        if (!colours(fd) || srd_frame_field_on(&run->frames[0], fd->name, fd->on_cells) != fd)
            continue;
        out[n] = (Field){ i, is_static(run, i), 0, 1 };
        if (srd_render_field_range(run->frames, run->n, fd->name, &out[n].lo, &out[n].hi, err, err_n) != 0)
            return -1;
        n++;
    }
    return n;
}

static void put_frame(FILE *out, const srd_view_run *run, int k, const Field *fields, int n_fields)
{
    const srd_frame *f = &run->frames[k];
    fprintf(out, "%s{\"t\":%.9g,\"index\":%d,\"x\":", k ? ",\n" : "", run->times[k], run->index[k]);
    put_array(out, f->x, 3 * f->n_points, 4, 0, 1);
    fputs(",\"v\":[", out);
    for (int i = 0; i < n_fields; i++) {
        const srd_frame_field *fd = &f->fields[fields[i].index];
        if (i)
            fputc(',', out);
        if (fields[i].fixed) {
            fputs("null", out);
            continue;
        }
        double *v = magnitudes(f, fd);
        put_array(out, v, tuples(f, fd), 2, fields[i].lo, fields[i].hi);
        free(v);
    }
    fputs("]}", out);
}

/* ---- the camera and the ground ---- */

/* The camera srdc render fits (the run's box seen from its side), for the page to place at the
 * window's aspect. */
/* The model's `view` block (srd_render_view_block) on the fitted camera: the side it looks from, then what it gives. Returns the distance
 * from the eye to the target (given, or the fitted one) when it gives an eye, else 0 (the page
 * fits the distance). */
static double file_view(const srd_frame *f, const double lo[3], const double hi[3], srd_camera *cam)
{
    srd_view_block vb;
    if (!srd_render_view_block(f, &vb))
        return 0;
    if (vb.given & SRD_VIEW_FROM)
        srd_render_fit(lo, hi, vb.from, 1.0, cam);
    if (vb.given & SRD_VIEW_EYE)
        memcpy(cam->eye, vb.eye, sizeof vb.eye);
    if (vb.given & SRD_VIEW_TARGET)
        memcpy(cam->target, vb.target, sizeof vb.target);
    if (vb.given & SRD_VIEW_UP)
        memcpy(cam->up, vb.up, sizeof vb.up);
    if ((vb.given & SRD_VIEW_FOV) && vb.fov_deg > 0) /* the page has no orthographic view: it keeps 30 degrees */
        cam->fov_deg = vb.fov_deg;
    double d[3];
    srd_sub3(cam->target, cam->eye, d);
    return (vb.given & SRD_VIEW_EYE) ? sqrt(srd_dot3(d, d)) : 0;
}

static void put_camera(FILE *out, const srd_view_run *run)
{
    double lo[3], hi[3], centre[3], dir[3], r = 0, span = 0, len = 0;
    srd_camera cam;
    srd_render_bounds(run->frames, run->n, lo, hi);
    srd_render_fit(lo, hi, SRD_VIEW_AUTO, 1.0, &cam);
    double distance = file_view(&run->frames[0], lo, hi, &cam);
    for (int c = 0; c < 3; c++) {
        centre[c] = distance > 0 ? cam.target[c] : 0.5 * (lo[c] + hi[c]);
        r += 0.25 * (hi[c] - lo[c]) * (hi[c] - lo[c]);
        span = fmax(span, hi[c] - lo[c]);
        dir[c] = cam.target[c] - cam.eye[c];
        len += dir[c] * dir[c];
    }
    for (int c = 0; c < 3; c++)
        dir[c] /= sqrt(len);
    r = fmax(sqrt(r), 1e-9);
    fputs("\"camera\":{", out);
    fprintf(out, "\"distance\":%.9g,", distance);
    put_numbers(out, "centre", centre, 3);
    fputc(',', out);
    put_numbers(out, "dir", dir, 3);
    fputc(',', out);
    put_numbers(out, "up", cam.up, 3);
    fprintf(out, ",\"fov\":%.9g,\"radius\":%.9g,\"span\":%.9g}", cam.fov_deg, r, fmax(span, 1e-9));
}

static void put_ground(FILE *out, const srd_frame *f)
{
    const srd_frame_field *g = srd_frame_field_on(f, "ground", 2);
    if (g && g->ncomp == 6)
        put_numbers(out, "ground", g->values, 6);
    else
        fputs("\"ground\":null", out);
}

/* Frames with another mesh than the first cannot share its cells and fields. */
static int check_mesh(const srd_view_run *run, char *err, size_t err_n)
{
    const srd_frame *a = &run->frames[0];
    for (int k = 1; k < run->n; k++) {
        const srd_frame *b = &run->frames[k];
        bool same = a->n_points == b->n_points && a->n_cells == b->n_cells && a->n_fields == b->n_fields &&
                    !memcmp(a->offsets, b->offsets, a->n_cells * sizeof(int32_t)) &&
                    !memcmp(a->types, b->types, a->n_cells) &&
                    !memcmp(a->connectivity, b->connectivity,
                            (a->n_cells ? (size_t)a->offsets[a->n_cells - 1] : 0) * sizeof(int32_t));
        for (int i = 0; same && i < a->n_fields; i++)
            same = !strcmp(a->fields[i].name, b->fields[i].name) && a->fields[i].ncomp == b->fields[i].ncomp &&
                   a->fields[i].on_cells == b->fields[i].on_cells;
        if (!same) {
            snprintf(err, err_n, "frame %d of the series has another mesh or other fields than frame %d; the "
                     "viewer shows runs of one mesh", run->index[k], run->index[0]);
            return -1;
        }
    }
    return 0;
}

static int put_data(FILE *out, const srd_view_run *run, char *err, size_t err_n)
{
    Field fields[32];
    int n_fields = list_fields(run, fields, err, err_n);
    if (n_fields < 0)
        return -1;
    fputs("{\"title\":", out);
    put_string(out, run->title);
    fputc(',', out);
    put_camera(out, run);
    fputc(',', out);
    put_ground(out, &run->frames[0]);
    fputc(',', out);
    put_mesh(out, &run->frames[0]);
    fputs(",\n\"fields\":[", out);
    for (int i = 0; i < n_fields; i++)
        put_field(out, run, &fields[i], i);
    fputs("],\n\"frames\":[", out);
    for (int k = 0; k < run->n; k++)
        put_frame(out, run, k, fields, n_fields);
    fputs("]}", out);
    return 0;
}

/* ---- the template ---- */

static void put_html_text(FILE *out, const char *s)
{
    for (; *s; s++)
        if (*s == '<' || *s == '>' || *s == '&' || *s == '"')
            fprintf(out, "&#%d;", *s);
        else
            fputc(*s, out);
}

/* What goes in marker `name` (the text between two @@). */
static int put_marker(FILE *out, const char *name, size_t len, const srd_view_run *run, char *err, size_t err_n)
{
#define IS(word) (len == strlen(word) && !strncmp(name, word, len))
    if (IS("TITLE"))
        put_html_text(out, run->title);
    else if (IS("THREE_VERSION"))
        fputs(srd_asset_three_version, out);
    else if (IS("LICENSE"))
        fwrite(srd_asset_three_license, 1, srd_asset_three_license_len, out);
    else if (IS("THREE"))
        fwrite(srd_asset_three_js, 1, srd_asset_three_js_len, out);
    else if (IS("ORBIT"))
        fwrite(srd_asset_orbit_js, 1, srd_asset_orbit_js_len, out);
    else if (IS("VIEW"))
        fwrite(srd_asset_view_js, 1, srd_asset_view_js_len, out);
    else if (IS("DATA"))
        return put_data(out, run, err, err_n);
    else
        fprintf(out, "@@%.*s@@", (int)len, name); /* not one of ours: the text as it was */
    return 0;
#undef IS
}

/* The template with each marker @@NAME@@ (NAME in capitals and '_') replaced. */
static int put_page(FILE *out, const srd_view_run *run, char *err, size_t err_n)
{
    const char *at = (const char *)srd_asset_view_html, *end = at + srd_asset_view_html_len;
    while (at < end) {
        const char *open = strstr(at, "@@");
        if (!open) {
            fwrite(at, 1, (size_t)(end - at), out);
            break;
        }
        size_t len = strspn(open + 2, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_");
        bool marker = len > 0 && !strncmp(open + 2 + len, "@@", 2);
        fwrite(at, 1, (size_t)(open - at) + (marker ? 0 : 2), out);
        if (marker && put_marker(out, open + 2, len, run, err, err_n) != 0)
            return -1;
        at = open + 2 + (marker ? len + 2 : 0);
    }
    return 0;
}

int srd_view_write(const char *path, const srd_view_run *run, char *err, size_t err_n)
{
    if (check_mesh(run, err, err_n) != 0)
        return -1;
    FILE *out = fopen(path, "w");
    if (!out) {
        snprintf(err, err_n, "cannot write %s: %s", path, strerror(errno));
        return -1;
    }
    int status = put_page(out, run, err, err_n);
    bool bad = ferror(out) != 0;
    bad |= fclose(out) != 0;
    if (bad && status == 0) {
        snprintf(err, err_n, "cannot write %s: %s", path, strerror(errno));
        status = -1;
    }
    if (status != 0)
        remove(path);
    return status;
}
