/* render.c — the scene of render.h: projection, depth order, shading; Cairo draws. */
#include "render.h"
#include <cairo.h>
#include <fontconfig/fontconfig.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "srd_model.h"
#include "vec3.h"

#define PI 3.14159265358979323846

static void unit(double *v)
{
    double n = sqrt(srd_dot3(v, v));
    if (n > 0)
        for (int c = 0; c < 3; c++)
            v[c] /= n;
}

/* ---- camera ---- */

static double cell_size(const srd_frame *f, size_t c)
{
    const srd_frame_field *r = srd_frame_field_on(f, "radius", 1), *h = srd_frame_field_on(f, "thickness", 1);
    return fmax(r ? r->values[c] : 0, h ? 0.5 * h->values[c] : 0);
}

/* Grows the box by the spheres, boxes and finite cylinders the model meets (an endless
 * cylinder is drawn through the picture, not fitted). */
static void obstacle_bounds(const srd_frame *f, double lo[3], double hi[3])
{
    const srd_frame_field *ob = srd_frame_field_named(f, "obstacles");
    for (size_t k = 0; ob && ob->ncomp == 12 && k < ob->tuples; k++) {
        const double *o = &ob->values[12 * k];
        for (int c = 0; c < 3; c++) {
            double reach = o[0] == 0 ? o[7] : o[0] == 1 ? 0.5 * o[4 + c] : o[11] > 0 ? o[7] + 0.5 * o[11] : 0;
            if ((o[0] == 2 && !(o[11] > 0)) || o[0] == 3)
                continue;
            lo[c] = fmin(lo[c], o[1 + c] - reach);
            hi[c] = fmax(hi[c], o[1 + c] + reach);
        }
    }
}

void srd_render_bounds(const srd_frame *frames, int n, double lo[3], double hi[3])
{
    double grow = 0;
    for (int c = 0; c < 3; c++) {
        lo[c] = INFINITY;
        hi[c] = -INFINITY;
    }
    for (int k = 0; k < n; k++) {
        const srd_frame *f = &frames[k];
        for (size_t i = 0; i < f->n_points; i++)
            for (int c = 0; c < 3; c++) {
                lo[c] = fmin(lo[c], f->x[3 * i + c]);
                hi[c] = fmax(hi[c], f->x[3 * i + c]);
            }
        for (size_t c = 0; c < f->n_cells; c++)
            grow = fmax(grow, cell_size(f, c));
    }
    if (n > 0)
        obstacle_bounds(&frames[0], lo, hi);
    for (int c = 0; c < 3; c++) {
        lo[c] -= grow;
        hi[c] += grow;
    }
}

/* The direction the camera looks along for a view of the box. */
static void view_direction(const double lo[3], const double hi[3], srd_view_kind view, double d[3], double up[3])
{
    double ext[3] = { hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2] };
    double size = fmax(ext[0], fmax(ext[1], ext[2]));
    if (view == SRD_VIEW_AUTO)
        view = ext[1] <= 0.05 * size ? SRD_VIEW_FRONT : SRD_VIEW_ISO; /* flat in x-z: face it */
    double dirs[][3] = { { 0, 0, 0 }, { 0, 1, 0 }, { -1, 0, 0 }, { 0, 0, -1 }, { -0.55, 1, -0.5 } };
    memcpy(d, dirs[view], 3 * sizeof(double));
    unit(d);
    up[0] = 0;
    up[1] = view == SRD_VIEW_TOP ? 1 : 0;
    up[2] = view == SRD_VIEW_TOP ? 0 : 1;
}

void srd_render_fit(const double lo[3], const double hi[3], srd_view_kind view, double aspect, srd_camera *cam)
{
    double d[3], centre[3], radius = 0;
    view_direction(lo, hi, view, d, cam->up);
    for (int c = 0; c < 3; c++) {
        centre[c] = 0.5 * (lo[c] + hi[c]);
        radius += 0.25 * (hi[c] - lo[c]) * (hi[c] - lo[c]);
    }
    radius = fmax(sqrt(radius), 1e-9);
    cam->fov_deg = 30;
    /* the bounding sphere fits the narrower of the two fields of view, with a margin */
    double half = 0.5 * cam->fov_deg * PI / 180, narrow = aspect >= 1 ? half : atan(tan(half) * aspect);
    double dist = 1.08 * radius / sin(narrow);
    for (int c = 0; c < 3; c++) {
        cam->target[c] = centre[c];
        cam->eye[c] = centre[c] - dist * d[c];
    }
    cam->ortho_height = 2.16 * radius / fmin(1, aspect);
}

typedef struct Basis {
    double right[3], up[3], forward[3], focal; /* focal: pixels per unit of x / depth */
} Basis;

static Basis basis_of(const srd_camera *cam, int height)
{
    Basis b;
    srd_sub3(cam->target, cam->eye, b.forward);
    unit(b.forward);
    srd_cross3(b.forward, cam->up, b.right);
    unit(b.right);
    srd_cross3(b.right, b.forward, b.up);
    b.focal = cam->fov_deg > 0 ? 0.5 * height / tan(0.5 * cam->fov_deg * PI / 180) : height / cam->ortho_height;
    return b;
}

static bool project(const srd_camera *cam, const Basis *b, int width, int height, const double p[3], double out[3])
{
    double v[3];
    srd_sub3(p, cam->eye, v);
    double x = srd_dot3(v, b->right), y = srd_dot3(v, b->up), z = srd_dot3(v, b->forward);
    double scale = cam->fov_deg > 0 ? b->focal / z : b->focal;
    out[0] = 0.5 * width + x * scale;
    out[1] = 0.5 * height - y * scale;
    out[2] = z;
    return cam->fov_deg <= 0 || z > 1e-12;
}

bool srd_render_project(const srd_camera *cam, int width, int height, const double p[3], double out[3])
{
    Basis b = basis_of(cam, height);
    return project(cam, &b, width, height, p, out);
}

/* ---- colours ---- */

static void object_colour(int object, double rgb[3])
{
    static const double palette[][3] = { { 0.85, 0.42, 0.20 }, { 0.20, 0.50, 0.78 }, { 0.35, 0.68, 0.35 },
                                         { 0.78, 0.32, 0.55 }, { 0.90, 0.72, 0.20 }, { 0.45, 0.40, 0.75 } };
    int k = (object < 0 ? 0 : object) % 6;
    memcpy(rgb, palette[k], sizeof palette[k]);
}

/* A perceptually ordered map from dark blue through green to yellow, for u in [0, 1]. */
static void field_colour(double u, double rgb[3])
{
    static const double stops[][3] = { { 0.27, 0.00, 0.33 }, { 0.23, 0.32, 0.55 }, { 0.13, 0.57, 0.55 },
                                       { 0.37, 0.79, 0.38 }, { 0.99, 0.91, 0.15 } };
    u = fmin(1, fmax(0, isfinite(u) ? u : 0)) * 4;
    int k = u >= 4 ? 3 : (int)u;
    double s = u - k;
    for (int c = 0; c < 3; c++)
        rgb[c] = (1 - s) * stops[k][c] + s * stops[k + 1][c];
}

/* A field that can colour the model: one with a value per point or per cell. */
static const srd_frame_field *colour_field(const srd_frame *f, const char *name)
{
    const srd_frame_field *fd = NULL;
    for (int i = 0; i < f->n_fields && !fd; i++)
        if (f->fields[i].on_cells != 2 && !strcmp(f->fields[i].name, name))
            fd = &f->fields[i];
    return fd;
}

/* The names of the colouring fields, each once. */
static void list_fields(const srd_frame *f, char *out, size_t n)
{
    size_t at = 0;
    out[0] = 0;
    for (int i = 0; i < f->n_fields && at < n; i++)
        if (f->fields[i].on_cells != 2 && colour_field(f, f->fields[i].name) == &f->fields[i])
            at += (size_t)snprintf(out + at, n - at, "%s%s", at ? ", " : "", f->fields[i].name);
}

int srd_render_field_range(const srd_frame *frames, int n, const char *field, double *lo, double *hi, char *err,
                           size_t err_n)
{
    *lo = INFINITY;
    *hi = -INFINITY;
    for (int k = 0; k < n; k++) {
        const srd_frame_field *fd = colour_field(&frames[k], field);
        if (!fd) {
            char names[1024];
            list_fields(&frames[k], names, sizeof names);
            snprintf(err, err_n, "no field `%s` in the frames; they have: %s", field, names);
            return -1;
        }
        size_t count = fd->on_cells ? frames[k].n_cells : frames[k].n_points;
        for (size_t i = 0; i < count; i++) {
            double v = srd_frame_value(fd, i);
            if (isfinite(v)) {
                *lo = fmin(*lo, v);
                *hi = fmax(*hi, v);
            }
        }
    }
    if (!(*hi > *lo)) { /* a constant field: any range shows it in one colour */
        *hi = (isfinite(*hi) ? *hi : 0) + 0.5;
        *lo = *hi - 1;
    }
    return 0;
}

/* ---- the scene: primitives in depth order ---- */

typedef struct Prim {
    int    kind;         /* 1 point body, 3 line, 5 triangle */
    size_t cell;
    double depth;
    double p[3][3];      /* projected corners (x, y, depth) */
    double size;         /* tube radius or 0 */
    double rgb[3];
    double shade;        /* triangles: Lambert factor */
    double alpha;        /* 1, or less for obstacles: the model shows through them */
} Prim;

typedef struct Scene {
    const srd_frame         *f;
    const srd_camera        *cam;
    Basis                    b;
    int                      width, height;
    const srd_frame_field   *field;
    double                   lo, hi;
} Scene;

static int by_depth(const void *a, const void *b)
{
    double da = ((const Prim *)a)->depth, db = ((const Prim *)b)->depth;
    return da < db ? 1 : da > db ? -1 : 0; /* far first */
}

static void cell_colour(const Scene *sc, size_t c, const int32_t *nodes, int k, double rgb[3])
{
    const srd_frame_field *id = srd_frame_field_on(sc->f, "object_id", 1);
    if (!sc->field) {
        object_colour(id ? (int)id->values[c] : 0, rgb);
        return;
    }
    double v = 0;
    if (sc->field->on_cells)
        v = srd_frame_value(sc->field, c);
    else
        for (int j = 0; j < k; j++)
            v += srd_frame_value(sc->field, (size_t)nodes[j]) / k;
    field_colour((v - sc->lo) / (sc->hi - sc->lo), rgb);
}

/* The light comes from above the camera's left shoulder. */
static double lambert_at(const Scene *sc, const double *x0, const double *x1, const double *x2)
{
    double a[3], b[3], n[3], light[3];
    srd_sub3(x1, x0, a);
    srd_sub3(x2, x0, b);
    srd_cross3(a, b, n);
    unit(n);
    for (int c = 0; c < 3; c++)
        light[c] = -0.45 * sc->b.right[c] + 0.6 * sc->b.up[c] - 0.65 * sc->b.forward[c];
    unit(light);
    if (srd_dot3(n, sc->b.forward) > 0) /* two-sided: the face the camera sees */
        for (int c = 0; c < 3; c++)
            n[c] = -n[c];
    return 0.3 + 0.7 * fmax(0, srd_dot3(n, light));
}

static double lambert(const Scene *sc, const int32_t *v)
{
    const double *x = sc->f->x;
    return lambert_at(sc, &x[3 * v[0]], &x[3 * v[1]], &x[3 * v[2]]);
}

/* The primitive of k nodes v (a point, a line or a triangle) coloured as cell c. */
static bool fill_prim(const Scene *sc, size_t c, const int32_t *v, int k, Prim *p)
{
    const srd_frame *f = sc->f;
    p->kind = k == 1 ? 1 : k == 2 ? 3 : 5;
    p->cell = c;
    p->depth = 0;
    for (int j = 0; j < k; j++) {
        if (!project(sc->cam, &sc->b, sc->width, sc->height, &f->x[3 * v[j]], p->p[j]))
            return false;
        p->depth += p->p[j][2] / k;
    }
    p->size = cell_size(f, c);
    cell_colour(sc, c, v, k, p->rgb);
    p->shade = k == 3 ? lambert(sc, v) : 1;
    p->alpha = 1;
    return true;
}

static bool make_prim(const Scene *sc, size_t c, Prim *p)
{
    const srd_frame *f = sc->f;
    size_t at = c ? (size_t)f->offsets[c - 1] : 0;
    int k = f->offsets[c] - (int)at;
    if (!(k == 1 || k == 2 || k == 3) || f->types[c] != (k == 1 ? 1 : k == 2 ? 3 : 5))
        return false;
    return fill_prim(sc, c, &f->connectivity[at], k, p);
}

/* ---- solids: tetrahedra (VTK_TETRA) drawn by their boundary faces ---- */

typedef struct TetFace {
    int32_t key[3], v[3]; /* sorted corners; corners as the tetrahedron orients them outward */
    size_t  cell;
} TetFace;

static int tet_face_cmp(const void *a, const void *b)
{
    const TetFace *x = a, *y = b;
    for (int k = 0; k < 3; k++)
        if (x->key[k] != y->key[k])
            return x->key[k] < y->key[k] ? -1 : 1;
    return 0;
}

/* The four faces of tetrahedron cell c, each turned away from the corner it omits. */
static size_t tet_cell_faces(const srd_frame *f, size_t c, TetFace *out)
{
    static const int opp[4][3] = { { 1, 2, 3 }, { 0, 3, 2 }, { 0, 1, 3 }, { 0, 2, 1 } };
    size_t at = c ? (size_t)f->offsets[c - 1] : 0;
    if (f->types[c] != 10 || f->offsets[c] - (int)at != 4)
        return 0;
    for (int k = 0; k < 4; k++) {
        TetFace *t = &out[k];
        for (int j = 0; j < 3; j++)
            t->v[j] = t->key[j] = f->connectivity[at + (size_t)opp[k][j]];
        for (int i = 0; i < 2; i++) /* sort the key */
            for (int j = 0; j < 2 - i; j++)
                if (t->key[j] > t->key[j + 1]) {
                    int32_t s = t->key[j];
                    t->key[j] = t->key[j + 1];
                    t->key[j + 1] = s;
                }
        t->cell = c;
    }
    return 4;
}

/* Triangles of the faces met once (the solids' surfaces, cavities included); returns the count. */
static size_t tet_prims(const Scene *sc, Prim *out)
{
    const srd_frame *f = sc->f;
    TetFace *faces = srd_xcalloc(4 * f->n_cells + 1, sizeof *faces);
    size_t n = 0, made = 0;
    for (size_t c = 0; c < f->n_cells; c++)
        n += tet_cell_faces(f, c, &faces[n]);
    qsort(faces, n, sizeof *faces, tet_face_cmp);
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && !tet_face_cmp(&faces[i], &faces[j]))
            j++;
        if (j == i + 1)
            made += fill_prim(sc, faces[i].cell, faces[i].v, 3, &out[made]);
        i = j;
    }
    free(faces);
    return made;
}

static double pixels(const Scene *sc, double size, double depth)
{
    return size * (sc->cam->fov_deg > 0 ? sc->b.focal / depth : sc->b.focal);
}

/* A tube: a thick round-capped line shaded across its width by a gradient. */
static void draw_tube(cairo_t *cr, const Scene *sc, const Prim *p)
{
    double w = fmax(1.2, 2 * pixels(sc, p->size, p->depth));
    double dx = p->p[1][0] - p->p[0][0], dy = p->p[1][1] - p->p[0][1], len = hypot(dx, dy);
    double nx = len > 0 ? -dy / len : 0, ny = len > 0 ? dx / len : 1;
    double mx = 0.5 * (p->p[0][0] + p->p[1][0]), my = 0.5 * (p->p[0][1] + p->p[1][1]);
    cairo_pattern_t *g = cairo_pattern_create_linear(mx - nx * w / 2, my - ny * w / 2, mx + nx * w / 2, my + ny * w / 2);
    const double stops[][2] = { { 0, 0.45 }, { 0.3, 1.15 }, { 1, 0.35 } };
    for (int s = 0; s < 3; s++)
        cairo_pattern_add_color_stop_rgb(g, stops[s][0], fmin(1, p->rgb[0] * stops[s][1]),
                                         fmin(1, p->rgb[1] * stops[s][1]), fmin(1, p->rgb[2] * stops[s][1]));
    cairo_set_source(cr, g);
    cairo_set_line_width(cr, w);
    cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND);
    cairo_move_to(cr, p->p[0][0], p->p[0][1]);
    cairo_line_to(cr, p->p[1][0], p->p[1][1]);
    cairo_stroke(cr);
    cairo_pattern_destroy(g);
}

static void draw_prim(cairo_t *cr, const Scene *sc, const Prim *p)
{
    if (p->kind == 3 && p->size > 0) {
        draw_tube(cr, sc, p);
        return;
    }
    cairo_set_source_rgba(cr, p->rgb[0] * p->shade, p->rgb[1] * p->shade, p->rgb[2] * p->shade, p->alpha);
    if (p->kind == 1) {
        cairo_arc(cr, p->p[0][0], p->p[0][1], 4, 0, 2 * PI);
        cairo_fill(cr);
    } else if (p->kind == 3) {
        cairo_set_line_width(cr, 1.2);
        cairo_move_to(cr, p->p[0][0], p->p[0][1]);
        cairo_line_to(cr, p->p[1][0], p->p[1][1]);
        cairo_stroke(cr);
    } else {
        cairo_move_to(cr, p->p[0][0], p->p[0][1]);
        cairo_line_to(cr, p->p[1][0], p->p[1][1]);
        cairo_line_to(cr, p->p[2][0], p->p[2][1]);
        cairo_close_path(cr);
        if (p->alpha < 1) { /* an outline would double the see-through edges */
            cairo_fill(cr);
            return;
        }
        cairo_fill_preserve(cr); /* the outline closes hairline gaps between neighbours */
        cairo_set_line_width(cr, 0.6);
        cairo_stroke(cr);
    }
}

/* ---- obstacles: triangle meshes of their shapes, sorted with the model ---- */

enum { SPHERE_LAT = 12, SPHERE_LON = 24, CYL_SIDES = 32 };

typedef struct Tris {
    Prim  *prims;
    size_t n;
} Tris;

static void add_triangle(const Scene *sc, Tris *t, const double *a, const double *b, const double *c)
{
    Prim *p = &t->prims[t->n];
    const double *x[3] = { a, b, c };
    p->kind = 5;
    p->size = 0;
    p->depth = 0;
    for (int j = 0; j < 3; j++) {
        if (!project(sc->cam, &sc->b, sc->width, sc->height, x[j], p->p[j]))
            return;
        p->depth += p->p[j][2] / 3;
    }
    p->rgb[0] = p->rgb[1] = 0.66;
    p->rgb[2] = 0.70;
    p->alpha = 0.4;
    p->shade = lambert_at(sc, a, b, c);
    t->n++;
}

static void add_quad(const Scene *sc, Tris *t, const double *a, const double *b, const double *c, const double *d)
{
    add_triangle(sc, t, a, b, c);
    add_triangle(sc, t, a, c, d);
}

static void sphere_point(const double *o, double r, int i, int j, double *x)
{
    double th = PI * i / SPHERE_LAT, ph = 2 * PI * j / SPHERE_LON;
    x[0] = o[1] + r * sin(th) * cos(ph);
    x[1] = o[2] + r * sin(th) * sin(ph);
    x[2] = o[3] + r * cos(th);
}

static void add_sphere(const Scene *sc, Tris *t, const double *o)
{
    for (int i = 0; i < SPHERE_LAT; i++)
        for (int j = 0; j < SPHERE_LON; j++) {
            double a[3], b[3], c[3], d[3];
            sphere_point(o, o[7], i, j, a);
            sphere_point(o, o[7], i + 1, j, b);
            sphere_point(o, o[7], i + 1, j + 1, c);
            sphere_point(o, o[7], i, j + 1, d);
            add_quad(sc, t, a, b, c, d);
        }
}

/* Corner k of a box row: its centre, edges, and its turn o[11] about the unit axis o[8..10]. */
static void box_corner(const double *o, int k, double *x)
{
    double d[3], kxd[3], a = o[11], kd = 0;
    for (int c = 0; c < 3; c++) {
        d[c] = ((k >> c) & 1 ? 0.5 : -0.5) * o[4 + c];
        kd += o[8 + c] * d[c];
    }
    srd_cross3(&o[8], d, kxd);
    for (int c = 0; c < 3; c++)
        x[c] = o[1 + c] + d[c] * cos(a) + kxd[c] * sin(a) + o[8 + c] * kd * (1 - cos(a));
}

static void add_box(const Scene *sc, Tris *t, const double *o)
{
    static const int faces[6][4] = { { 0, 1, 3, 2 }, { 4, 6, 7, 5 }, { 0, 4, 5, 1 },
                                     { 2, 3, 7, 6 }, { 0, 2, 6, 4 }, { 1, 5, 7, 3 } };
    double x[8][3];
    for (int k = 0; k < 8; k++)
        box_corner(o, k, x[k]);
    for (int f = 0; f < 6; f++)
        add_quad(sc, t, x[faces[f][0]], x[faces[f][1]], x[faces[f][2]], x[faces[f][3]]);
}

/* A cylinder's rim point k at the end `end` (-1 or +1) of a length `len`. */
static void rim_point(const double *o, const double *e1, const double *e2, double len, int k, int end, double *x)
{
    double ph = 2 * PI * k / CYL_SIDES;
    for (int c = 0; c < 3; c++)
        x[c] = o[1 + c] + 0.5 * end * len * o[8 + c] + o[7] * (cos(ph) * e1[c] + sin(ph) * e2[c]);
}

static void add_cylinder(const Scene *sc, Tris *t, const double *o, double scene_size)
{
    double e1[3], e2[3], len = o[11] > 0 ? o[11] : 2 * scene_size; /* an endless one: well past the model */
    double a[3] = { 1, 0, 0 };
    if (fabs(o[8]) > 0.9)
        a[0] = 0, a[1] = 1;
    srd_cross3(&o[8], a, e1);
    unit(e1);
    srd_cross3(&o[8], e1, e2);
    for (int k = 0; k < CYL_SIDES; k++) {
        double p[4][3];
        rim_point(o, e1, e2, len, k, -1, p[0]);
        rim_point(o, e1, e2, len, k + 1, -1, p[1]);
        rim_point(o, e1, e2, len, k + 1, 1, p[2]);
        rim_point(o, e1, e2, len, k, 1, p[3]);
        add_quad(sc, t, p[0], p[1], p[2], p[3]);
        if (o[11] > 0) {
            double lo[3], hi[3];
            for (int c = 0; c < 3; c++) {
                lo[c] = o[1 + c] - 0.5 * len * o[8 + c];
                hi[c] = o[1 + c] + 0.5 * len * o[8 + c];
            }
            add_triangle(sc, t, lo, p[1], p[0]);
            add_triangle(sc, t, hi, p[3], p[2]);
        }
    }
}

static size_t obstacle_triangles(const srd_frame_field *ob)
{
    return ob ? ob->tuples * (2 * SPHERE_LAT * SPHERE_LON + 4 * CYL_SIDES + 12) : 0;
}

static void add_obstacles(const Scene *sc, const srd_frame_field *ob, Tris *t, double scene_size)
{
    for (size_t k = 0; ob && k < ob->tuples; k++) {
        const double *o = &ob->values[12 * k];
        if (o[0] == 0)
            add_sphere(sc, t, o);
        else if (o[0] == 1)
            add_box(sc, t, o);
        else if (o[0] == 2)
            add_cylinder(sc, t, o, scene_size); /* a plane (3) is not drawn */
    }
}

static void draw_scene(cairo_t *cr, const Scene *sc, double scene_size)
{
    const srd_frame_field *ob = srd_frame_field_named(sc->f, "obstacles");
    if (ob && ob->ncomp != 12)
        ob = NULL;
    Prim *prims = srd_xcalloc(4 * sc->f->n_cells + obstacle_triangles(ob) + 1, sizeof(Prim));
    size_t n = 0;
    for (size_t c = 0; c < sc->f->n_cells; c++)
        n += make_prim(sc, c, &prims[n]);
    n += tet_prims(sc, &prims[n]);
    Tris t = { prims + n, 0 };
    add_obstacles(sc, ob, &t, scene_size);
    n += t.n;
    qsort(prims, n, sizeof *prims, by_depth);
    for (size_t i = 0; i < n; i++)
        draw_prim(cr, sc, &prims[i]);
    free(prims);
}

/* ---- the ground: a grid on the plane under the model ---- */

static void ground_frame(const double *g, double e1[3], double e2[3])
{
    double n[3] = { g[0], g[1], g[2] }, a[3] = { 1, 0, 0 };
    unit(n);
    if (fabs(n[0]) > 0.9)
        a[0] = 0, a[1] = 1;
    srd_cross3(n, a, e1);
    unit(e1);
    srd_cross3(n, e1, e2);
}

static void draw_ground(cairo_t *cr, const Scene *sc, const double lo[3], const double hi[3])
{
    const srd_frame_field *g = srd_frame_field_named(sc->f, "ground");
    if (!g || g->ncomp != 6)
        return;
    double e1[3], e2[3], centre[3], span = 0;
    ground_frame(g->values, e1, e2);
    for (int c = 0; c < 3; c++) {
        centre[c] = 0.5 * (lo[c] + hi[c]);
        span = fmax(span, hi[c] - lo[c]);
    }
    double n[3] = { g->values[0], g->values[1], g->values[2] }, r[3];
    unit(n);
    srd_sub3(centre, &g->values[3], r);
    double off = srd_dot3(r, n), step = pow(10, floor(log10(span / 2)));
    int lines = (int)ceil(1.5 * span / step);
    cairo_set_line_width(cr, 0.8);
    cairo_set_source_rgba(cr, 0.35, 0.35, 0.38, 0.55);
    for (int i = -lines; i <= lines; i++)
        for (int dir = 0; dir < 2; dir++) {
            double a[3], b[3], pa[3], pb[3];
            const double *u = dir ? e1 : e2, *w = dir ? e2 : e1;
            for (int c = 0; c < 3; c++) {
                double base = centre[c] - off * n[c] + i * step * u[c];
                a[c] = base - lines * step * w[c];
                b[c] = base + lines * step * w[c];
            }
            if (!project(sc->cam, &sc->b, sc->width, sc->height, a, pa) ||
                !project(sc->cam, &sc->b, sc->width, sc->height, b, pb))
                continue;
            cairo_move_to(cr, pa[0], pa[1]);
            cairo_line_to(cr, pb[0], pb[1]);
        }
    cairo_stroke(cr);
}

/* ---- labels ---- */

static void draw_label(cairo_t *cr, double x, double y, const char *text)
{
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, 14);
    cairo_set_source_rgb(cr, 0.15, 0.15, 0.18);
    cairo_move_to(cr, x, y);
    cairo_show_text(cr, text);
}

const char *srd_render_field_unit(const char *name)
{
    static const char *units[][2] = { { "displacement", "m" }, { "velocity", "m/s" },  { "force", "N" },
                                      { "reaction", "N" },     { "contact_force", "N" }, { "curvature", "1/m" },
                                      { "radius", "m" },       { "thickness", "m" },     { "twist", "rad" },
                                      { "strain", "1" } };
    for (size_t k = 0; k < sizeof units / sizeof *units; k++)
        if (!strcmp(name, units[k][0]))
            return units[k][1];
    return NULL;
}

/* The colour bar's title: the field and its unit. */
static void field_title(const char *name, char *out, size_t n)
{
    const char *unit = srd_render_field_unit(name);
    if (unit)
        snprintf(out, n, "%s (%s)", name, unit);
    else
        snprintf(out, n, "%s", name);
}

static void draw_colour_bar(cairo_t *cr, const Scene *sc, const char *field)
{
    char name[128];
    field_title(field, name, sizeof name);
    double x = sc->width - 36, y0 = 40, h = sc->height - 100;
    for (int i = 0; i < 100; i++) {
        double rgb[3];
        field_colour(i / 99.0, rgb);
        cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
        cairo_rectangle(cr, x, y0 + h * (1 - (i + 1) / 100.0), 14, h / 100 + 0.5);
        cairo_fill(cr);
    }
    char text[64];
    snprintf(text, sizeof text, "%.3g", sc->hi);
    cairo_text_extents_t ext;
    cairo_set_font_size(cr, 14);
    cairo_text_extents(cr, text, &ext);
    draw_label(cr, fmin(x, sc->width - ext.width - 6), y0 - 8, text);
    snprintf(text, sizeof text, "%.3g", sc->lo);
    cairo_text_extents(cr, text, &ext);
    draw_label(cr, fmin(x, sc->width - ext.width - 6), y0 + h + 18, text);
    cairo_text_extents(cr, name, &ext);
    draw_label(cr, sc->width - ext.width - 6, sc->height - 14, name);
}

int srd_render_png(const srd_frame *f, double t, const srd_camera *cam, const srd_render_options *o, double lo,
                   double hi, const char *path, char *err, size_t err_n)
{
    Scene sc = { f, cam, basis_of(cam, o->height), o->width, o->height, NULL, lo, hi };
    if (o->color_field && !(sc.field = colour_field(f, o->color_field))) {
        char names[1024];
        list_fields(f, names, sizeof names);
        snprintf(err, err_n, "no field `%s` in the frames; they have: %s", o->color_field, names);
        return -1;
    }
    cairo_surface_t *surface = cairo_image_surface_create(CAIRO_FORMAT_RGB24, o->width, o->height);
    cairo_t *cr = cairo_create(surface);
    cairo_set_source_rgb(cr, 0.97, 0.97, 0.96);
    cairo_paint(cr);
    double blo[3], bhi[3];
    srd_render_bounds(f, 1, blo, bhi);
    draw_ground(cr, &sc, blo, bhi);
    draw_scene(cr, &sc, fmax(bhi[0] - blo[0], fmax(bhi[1] - blo[1], bhi[2] - blo[2])));
    if (sc.field)
        draw_colour_bar(cr, &sc, o->color_field);
    if (o->show_time) {
        char text[64];
        snprintf(text, sizeof text, "t = %.4g s", t);
        draw_label(cr, 12, 22, text);
    }
    cairo_destroy(cr);
    cairo_status_t st = cairo_surface_write_to_png(surface, path);
    cairo_surface_destroy(surface);
    if (st != CAIRO_STATUS_SUCCESS) {
        snprintf(err, err_n, "cannot write %s: %s", path, cairo_status_to_string(st));
        return -1;
    }
    return 0;
}

bool srd_render_view_block(const srd_frame *f, srd_view_block *vb)
{
    const srd_frame_field *v = srd_frame_field_on(f, "view", 2);
    if (!v || v->ncomp != 12)
        return false;
    const double *x = v->values;
    vb->given = (unsigned)x[0];
    memcpy(vb->eye, &x[1], sizeof vb->eye);
    memcpy(vb->target, &x[4], sizeof vb->target);
    memcpy(vb->up, &x[7], sizeof vb->up);
    vb->fov_deg = x[10] * 180 / PI;
    vb->from = x[11] >= 1 && x[11] <= 4 ? (srd_view_kind)(int)x[11] : SRD_VIEW_AUTO;
    if (vb->from == SRD_VIEW_AUTO)
        vb->given &= ~(unsigned)SRD_VIEW_FROM;
    return true;
}

void srd_render_finish(void)
{
    cairo_debug_reset_static_data(); /* Cairo's caches, then the font configuration they held */
    FcFini();
}
