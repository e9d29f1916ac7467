/* output_vtk.c — VTK XML frames and the ParaView series file. */
#include "output_vtk.h"
#include "solid_stress.h"
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "files.h"
#include <unistd.h>

int srd_vtk_open(srd_vtk_series *s, const char *dir, const char *name)
{
    memset(s, 0, sizeof *s);
    if (srd_make_dirs(dir) != 0)
        return -1;
    s->dir = srd_xstrdup(dir);
    s->name = srd_xstrdup(name);
    return s->dir && s->name ? 0 : -1;
}

/* Remembers which file failed and why, for the caller's message; returns -1. */
static int fail(srd_vtk_series *s, const char *path)
{
    s->failed_errno = errno;
    free(s->failed_path);
    s->failed_path = srd_xstrdup(path);
    return -1;
}

static int pvd_create(srd_vtk_series *s, const char *path)
{
    s->pvd = fopen(path, "w");
    if (!s->pvd)
        return -1;
    fprintf(s->pvd, "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\" "
                    "byte_order=\"LittleEndian\">\n  <Collection>\n");
    s->pvd_entries_end = ftell(s->pvd);
    return s->pvd_entries_end < 0 ? -1 : 0;
}

/* Adds frame `frames` to the series: its entry overwrites the closing tags, which follow it
 * again, in one write. The file only grows, so it is a valid series after every frame and
 * each frame costs one short write, not a rewrite of the whole list. */
static int pvd_append(srd_vtk_series *s, double t)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.pvd", s->dir, s->name);
    if (!s->pvd && pvd_create(s, path) != 0)
        return fail(s, path);
    if (fseek(s->pvd, s->pvd_entries_end, SEEK_SET) != 0)
        return fail(s, path);
    fprintf(s->pvd, "    <DataSet timestep=\"%.9g\" group=\"\" part=\"0\" file=\"%s_%06d.vtu\"/>\n", t, s->name,
            s->frames);
    s->pvd_entries_end = ftell(s->pvd);
    fprintf(s->pvd, "  </Collection>\n</VTKFile>\n");
    if (fflush(s->pvd) != 0 || ferror(s->pvd) || s->pvd_entries_end < 0)
        return fail(s, path);
    return 0;
}

/* ---- frames: every field is an array, written as text or appended raw binary ---- */

enum { VTK_F64, VTK_I32, VTK_U8 };

typedef struct VtkArray {
    const char *name;   /* NULL: the points' coordinates */
    int         type, ncomp;
    size_t      n;      /* values (tuples times components) */
    void       *data;
    int         digits; /* significant digits of an ASCII Float64 */
} VtkArray;

typedef struct VtkFrame {
    VtkArray a[24];
    int      n;
    int      first_cells, first_point_data, first_cell_data; /* where each section starts */
    size_t   n_points, n_cells;
} VtkFrame;

static void *add_array(VtkFrame *fr, const char *name, int type, int ncomp, size_t n)
{
    static const size_t sizes[] = { sizeof(double), sizeof(int32_t), 1 };
    VtkArray *a = &fr->a[fr->n++];
    a->name = name;
    a->type = type;
    a->ncomp = ncomp;
    a->n = n;
    a->data = srd_xcalloc(n + 1, sizes[type]);
    a->digits = name ? 9 : 12;
    return a->data;
}

/* The cells: rod edges, lattice springs and 2-node user elements (springs) as lines, triangles, bodies as
 * vertices; per cell, the object it belongs to (or -1) and the rod edge, triangle or element
 * behind it. */
typedef struct CellList {
    int n, *nodes, *offsets, *object;
    unsigned char *type;
    int *edge, *tri; /* per cell, or -1 */
    int *set, *inst; /* per cell: the std.solids set and instance of a tetrahedron, or -1 */
    int n_tets;
} CellList;

static bool drawn_as_line(const srd_elemset *set)
{
    static const char *not_drawn[] = { "stretch", "lattice_spring", "rft_drag", "tangent_follower", "normal_follower" };
    for (size_t k = 0; k < sizeof not_drawn / sizeof *not_drawn; k++)
        if (!strcmp(set->kind, not_drawn[k]))
            return false;
    return set->n_node == 2 && set->n_edge == 0;
}

static void add_cell(CellList *c, const int *nodes, int k, int type, int object, int edge, int tri)
{
    c->set[c->n] = c->inst[c->n] = -1;
    int at = c->n ? c->offsets[c->n - 1] : 0;
    memcpy(&c->nodes[at], nodes, sizeof(int) * (size_t)k);
    c->offsets[c->n] = at + k;
    c->type[c->n] = (unsigned char)type;
    c->object[c->n] = object;
    c->edge[c->n] = edge;
    c->tri[c->n] = tri;
    c->n++;
}

static void list_cells(const srd_model *m, CellList *c)
{
    size_t cap = (size_t)m->n_edges + m->n_tris + m->n_objects + 1;
    for (int k = 0; k < m->n_sets; k++)
        cap += drawn_as_line(&m->sets[k]) || srd_tet_kind(&m->sets[k]) >= 0 ? (size_t)m->sets[k].n : 0;
    memset(c, 0, sizeof *c);
    c->nodes = srd_xcalloc(4 * cap, sizeof(int));
    c->set = srd_xcalloc(cap, sizeof(int));
    c->inst = srd_xcalloc(cap, sizeof(int));
    c->offsets = srd_xcalloc(cap, sizeof(int));
    c->object = srd_xcalloc(cap, sizeof(int));
    c->edge = srd_xcalloc(cap, sizeof(int));
    c->tri = srd_xcalloc(cap, sizeof(int));
    c->type = srd_xcalloc(cap, 1);
    for (int e = 0; e < m->n_edges; e++)
        if (m->edge_is_rod[e] || m->objects[m->edge_object[e]].kind == SRD_OBJ_LATTICE)
            add_cell(c, &m->edge_nodes[2 * e], 2, 3, m->edge_object[e], e, -1);
    for (int t = 0; t < m->n_tris; t++)
        add_cell(c, &m->tri_nodes[3 * t], 3, 5, m->tri_object[t], -1, t);
    for (int o = 0; o < m->n_objects; o++)
        if (m->objects[o].kind == SRD_OBJ_BODY)
            add_cell(c, &m->objects[o].nodes[0], 1, 1, o, -1, -1);
    for (int k = 0; k < m->n_sets; k++)
        for (int i = 0; drawn_as_line(&m->sets[k]) && i < m->sets[k].n; i++)
            add_cell(c, &m->sets[k].nodes[2 * i], 2, 3, -1, -1, -1);
    /* tetrahedra of solids: VTK_TETRA (10) */
    for (int k = 0; k < m->n_sets; k++)
        for (int i = 0; srd_tet_kind(&m->sets[k]) >= 0 && i < m->sets[k].n; i++) {
            add_cell(c, &m->sets[k].nodes[4 * i], 4, 10, m->sets[k].object[i], -1, -1);
            c->set[c->n - 1] = k;
            c->inst[c->n - 1] = i;
            c->n_tets++;
        }
}

static void free_cells(CellList *c)
{
    free(c->nodes);
    free(c->offsets);
    free(c->object);
    free(c->edge);
    free(c->tri);
    free(c->type);
    free(c->set);
    free(c->inst);
}

static double edge_strain(const srd_model *m, const double *q, int e)
{
    const double *a = &q[m->node_dof[m->edge_nodes[2 * e]]], *b = &q[m->node_dof[m->edge_nodes[2 * e + 1]]];
    double l = sqrt((b[0] - a[0]) * (b[0] - a[0]) + (b[1] - a[1]) * (b[1] - a[1]) + (b[2] - a[2]) * (b[2] - a[2]));
    return l / m->edge_rest[e] - 1;
}

static void unit_edge(const srd_model *m, const double *q, int e, double *t)
{
    const double *a = &q[m->node_dof[m->edge_nodes[2 * e]]], *b = &q[m->node_dof[m->edge_nodes[2 * e + 1]]];
    double l = 0;
    for (int c = 0; c < 3; c++) {
        t[c] = b[c] - a[c];
        l += t[c] * t[c];
    }
    for (int c = 0; c < 3; c++)
        t[c] /= sqrt(l);
}

/* Curvature at the interior nodes of rods: DER's |kappa b| = 2 tan(phi / 2) over the Voronoi
 * length (half of each adjacent edge at rest), phi the turning angle; 0 elsewhere. */
static void node_curvature(const srd_model *m, const double *q, double *kappa)
{
    for (int o = 0; o < m->n_objects; o++) {
        const srd_object *ob = &m->objects[o];
        if (ob->kind != SRD_OBJ_ROD)
            continue;
        for (int k = ob->closed ? 0 : 1; k < ob->n_edges; k++) {
            int e0 = ob->first_edge + (k ? k - 1 : ob->n_edges - 1), e1 = ob->first_edge + k;
            double t0[3], t1[3], x[3];
            unit_edge(m, q, e0, t0);
            unit_edge(m, q, e1, t1);
            x[0] = t0[1] * t1[2] - t0[2] * t1[1];
            x[1] = t0[2] * t1[0] - t0[0] * t1[2];
            x[2] = t0[0] * t1[1] - t0[1] * t1[0];
            double kb = 2 * sqrt(x[0] * x[0] + x[1] * x[1] + x[2] * x[2]) / (1 + t0[0] * t1[0] + t0[1] * t1[1] + t0[2] * t1[2]);
            kappa[m->edge_nodes[2 * e1]] = kb / (0.5 * (m->edge_rest[e0] + m->edge_rest[e1]));
        }
    }
}

static void node_vectors(VtkFrame *fr, const srd_model *m, const char *name, const double *values)
{
    double *out = add_array(fr, name, VTK_F64, 3, 3 * (size_t)m->n_nodes);
    for (int i = 0; values && i < m->n_nodes; i++)
        memcpy(&out[3 * i], &values[m->node_dof[i]], 3 * sizeof(double));
}

static void point_fields(VtkFrame *fr, const srd_model *m, const double *q, const srd_vtk_fields *f)
{
    size_t n = (size_t)m->n_nodes;
    fr->first_point_data = fr->n;
    double *u = add_array(fr, "displacement", VTK_F64, 3, 3 * n);
    for (size_t i = 0; i < n; i++)
        for (int c = 0; c < 3; c++)
            u[3 * i + c] = q[m->node_dof[i] + c] - m->x0[3 * i + c];
    node_vectors(fr, m, "velocity", f->v);
    node_vectors(fr, m, "force", f->force);
    if (f->reaction)
        node_vectors(fr, m, "reaction", f->reaction);
    if (f->contact)
        node_vectors(fr, m, "contact_force", f->contact);
    node_curvature(m, q, add_array(fr, "curvature", VTK_F64, 1, n));
    int32_t *id = add_array(fr, "object_id", VTK_I32, 1, n);
    for (size_t i = 0; i < n; i++)
        id[i] = m->node_object[i];
}

/* Solids' tetrahedra: their Cauchy stress and Green strain tensors and the stress's von Mises
 * value (zero on other cells), and their equivalent strain sqrt(2/3 e:e), e the deviatoric
 * Green strain, as `strain`. Written only when the model has solids. */
static void tet_fields(VtkFrame *fr, const srd_model *m, const double *q, const CellList *c, double *strain)
{
    size_t n = (size_t)c->n;
    double *stress = add_array(fr, "stress", VTK_F64, 9, 9 * n), *green = add_array(fr, "green_strain", VTK_F64, 9, 9 * n);
    double *vm = add_array(fr, "von_mises", VTK_F64, 1, n);
    /* stress and strain are difference quotients of the positions: as many digits as they */
    fr->a[fr->n - 1].digits = fr->a[fr->n - 2].digits = fr->a[fr->n - 3].digits = 12;
    for (size_t k = 0; k < n; k++) {
        if (c->set[k] < 0)
            continue;
        double *g = &green[9 * k], tr;
        srd_tet_stress(m, &m->sets[c->set[k]], c->inst[k], q, &stress[9 * k], g);
        vm[k] = srd_von_mises(&stress[9 * k]);
        tr = (g[0] + g[4] + g[8]) / 3;
        double dev = 0;
        for (int i = 0; i < 9; i++)
            dev += (g[i] - (i % 4 == 0) * tr) * (g[i] - (i % 4 == 0) * tr);
        strain[k] = sqrt(2.0 / 3.0 * dev);
    }
}

static void cell_fields(VtkFrame *fr, const srd_model *m, const double *q, const CellList *c)
{
    size_t n = (size_t)c->n;
    fr->first_cell_data = fr->n;
    double *radius = add_array(fr, "radius", VTK_F64, 1, n), *thick = add_array(fr, "thickness", VTK_F64, 1, n);
    double *twist = add_array(fr, "twist", VTK_F64, 1, n), *strain = add_array(fr, "strain", VTK_F64, 1, n);
    int32_t *id = add_array(fr, "object_id", VTK_I32, 1, n);
    if (c->n_tets)
        tet_fields(fr, m, q, c, strain);
    for (size_t k = 0; k < n; k++) {
        int e = c->edge[k], t = c->tri[k];
        id[k] = c->object[k];
        if (e >= 0) {
            radius[k] = m->objects[m->edge_object[e]].radius;
            twist[k] = m->edge_twist[e] >= 0 ? q[m->edge_twist[e]] : 0.0;
            strain[k] = edge_strain(m, q, e);
        } else if (t >= 0) {
            thick[k] = m->objects[m->tri_object[t]].thickness;
            for (int j = 0; j < 3; j++)
                strain[k] += edge_strain(m, q, m->tri_edges[3 * t + j]) / 3;
        }
    }
}

static void build_frame(VtkFrame *fr, const srd_model *m, const double *q, const srd_vtk_fields *f)
{
    memset(fr, 0, sizeof *fr);
    fr->n_points = (size_t)m->n_nodes;
    double *x = add_array(fr, NULL, VTK_F64, 3, 3 * fr->n_points);
    for (int i = 0; i < m->n_nodes; i++)
        memcpy(&x[3 * i], &q[m->node_dof[i]], 3 * sizeof(double));
    CellList c;
    list_cells(m, &c);
    fr->n_cells = (size_t)c.n;
    fr->first_cells = fr->n;
    size_t len = c.n ? (size_t)c.offsets[c.n - 1] : 0;
    memcpy(add_array(fr, "connectivity", VTK_I32, 1, len), c.nodes, sizeof(int32_t) * len);
    memcpy(add_array(fr, "offsets", VTK_I32, 1, fr->n_cells), c.offsets, sizeof(int32_t) * fr->n_cells);
    memcpy(add_array(fr, "types", VTK_U8, 1, fr->n_cells), c.type, fr->n_cells);
    point_fields(fr, m, q, f);
    cell_fields(fr, m, q, &c);
    free_cells(&c);
}

static void free_frame(VtkFrame *fr)
{
    for (int k = 0; k < fr->n; k++)
        free(fr->a[k].data);
}

static size_t array_bytes(const VtkArray *a)
{
    return a->n * (a->type == VTK_F64 ? sizeof(double) : a->type == VTK_I32 ? sizeof(int32_t) : 1);
}

/* One DataArray: its values as text, or a reference into the appended block at *offset. */
static void write_array(FILE *f, const VtkArray *a, bool binary, size_t *offset)
{
    static const char *types[] = { "Float64", "Int32", "UInt8" };
    fprintf(f, "        <DataArray type=\"%s\"", types[a->type]);
    if (a->name)
        fprintf(f, " Name=\"%s\"", a->name);
    if (a->ncomp > 1)
        fprintf(f, " NumberOfComponents=\"%d\"", a->ncomp);
    if (binary) {
        fprintf(f, " format=\"appended\" offset=\"%zu\"/>\n", *offset);
        *offset += sizeof(uint64_t) + array_bytes(a);
        return;
    }
    fprintf(f, " format=\"ascii\">\n");
    for (size_t i = 0; i < a->n; i++) {
        if (a->type == VTK_F64)
            fprintf(f, "%.*g", a->digits, ((const double *)a->data)[i]);
        else
            fprintf(f, "%d", a->type == VTK_I32 ? ((const int32_t *)a->data)[i] : ((const unsigned char *)a->data)[i]);
        fputc((i + 1) % (size_t)a->ncomp ? ' ' : '\n', f);
    }
    fprintf(f, "        </DataArray>\n");
}

static void write_section(FILE *f, const VtkFrame *fr, int lo, int hi, bool binary, size_t *offset)
{
    for (int k = lo; k < hi; k++)
        write_array(f, &fr->a[k], binary, offset);
}

/* Appended raw data: each array as a 64-bit byte count and its bytes, in the machine's
 * (little-endian on every platform srd builds for) byte order. */
static void write_appended(FILE *f, const VtkFrame *fr)
{
    fprintf(f, "  <AppendedData encoding=\"raw\">\n   _");
    for (int k = 0; k < fr->n; k++) {
        uint64_t bytes = array_bytes(&fr->a[k]);
        fwrite(&bytes, sizeof bytes, 1, f);
        fwrite(fr->a[k].data, 1, bytes, f);
    }
    fprintf(f, "\n  </AppendedData>\n");
}

/* An obstacle as 12 numbers: shape (0 sphere, 1 box, 2 cylinder, 3 plane), centre (a plane's
 * point), box edges, radius, axis (a cylinder's; a plane's normal; the one a box turns about),
 * and a cylinder's length (0: endless) or a box's turn (rad). */
static void obstacle_row(const srd_obstacle *o, double *row)
{
    row[0] = !strcmp(o->shape, "sphere") ? 0 : !strcmp(o->shape, "box") ? 1 : !strcmp(o->shape, "plane") ? 3 : 2;
    for (int c = 0; c < 3; c++) {
        row[1 + c] = o->center[c];
        row[4 + c] = o->size[c];
        row[8 + c] = o->axis[c];
    }
    row[7] = o->radius;
    row[11] = row[0] == 1 ? o->angle : o->length;
}

static void field_array(FILE *f, const char *name, int tuples, int comps, const double *v)
{
    fprintf(f, "      <DataArray type=\"Float64\" Name=\"%s\" NumberOfTuples=\"%d\" NumberOfComponents=\"%d\" "
               "format=\"ascii\">\n",
            name, tuples, comps);
    for (int i = 0; i < tuples * comps; i++)
        fprintf(f, "%s%.12g", i % comps ? " " : "        ", v[i]);
    fprintf(f, "\n      </DataArray>\n");
}

/* Data of the whole frame, so that a picture can draw what the model touches: a flat
 * ground's plane (normal, then a point on it) and the obstacles; and the file's camera.
 * Always text: a few numbers. */
static void write_field_data(FILE *f, const srd_model *m, const srd_obstacle *obstacles)
{
    bool ground = m->has_ground && m->ground_height_expr < 0;
    if (!ground && !m->n_obstacles && !m->view_given)
        return;
    fprintf(f, "    <FieldData>\n");
    if (m->view_given) { /* the `view` block: what is given, eye, target, up, fov (rad), from */
        double v[12] = { m->view_given, 0, 0, 0, 0, 0, 0, 0, 0, 0, m->view_fov, m->view_from };
        for (int c = 0; c < 3; c++) {
            v[1 + c] = m->view_eye[c];
            v[4 + c] = m->view_target[c];
            v[7 + c] = m->view_up[c];
        }
        field_array(f, "view", 1, 12, v);
    }
    if (ground) {
        double g[6] = { m->ground_normal[0], m->ground_normal[1], m->ground_normal[2],
                        m->ground_point[0],  m->ground_point[1],  m->ground_point[2] };
        field_array(f, "ground", 1, 6, g);
    }
    if (m->n_obstacles) {
        double *rows = srd_xcalloc(12 * (size_t)m->n_obstacles, sizeof(double));
        for (int k = 0; k < m->n_obstacles; k++)
            obstacle_row(obstacles ? &obstacles[k] : &m->obstacles[k], &rows[12 * k]);
        field_array(f, "obstacles", m->n_obstacles, 12, rows);
        free(rows);
    }
    fprintf(f, "    </FieldData>\n");
}

static void write_frame(FILE *f, const srd_model *m, const double *q, const srd_vtk_fields *fields, bool binary)
{
    VtkFrame fr;
    build_frame(&fr, m, q, fields);
    size_t offset = 0;
    fprintf(f, "<?xml version=\"1.0\"?>\n<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" "
               "header_type=\"UInt64\">\n  <UnstructuredGrid>\n");
    write_field_data(f, m, fields ? fields->obstacles : NULL);
    fprintf(f, "    <Piece NumberOfPoints=\"%zu\" NumberOfCells=\"%zu\">\n      <Points>\n", fr.n_points, fr.n_cells);
    write_section(f, &fr, 0, fr.first_cells, binary, &offset);
    fprintf(f, "      </Points>\n      <Cells>\n");
    write_section(f, &fr, fr.first_cells, fr.first_point_data, binary, &offset);
    fprintf(f, "      </Cells>\n      <PointData Vectors=\"velocity\">\n");
    write_section(f, &fr, fr.first_point_data, fr.first_cell_data, binary, &offset);
    fprintf(f, "      </PointData>\n      <CellData Scalars=\"radius\">\n");
    write_section(f, &fr, fr.first_cell_data, fr.n, binary, &offset);
    fprintf(f, "      </CellData>\n    </Piece>\n  </UnstructuredGrid>\n");
    if (binary)
        write_appended(f, &fr);
    fprintf(f, "</VTKFile>\n");
    free_frame(&fr);
}

int srd_vtk_write(srd_vtk_series *s, const srd_model *m, const double *q, const double *v, const double *force,
                  double t)
{
    srd_vtk_fields f = { v, force, NULL, NULL, NULL };
    return srd_vtk_write_fields(s, m, q, &f, t);
}

int srd_vtk_write_fields(srd_vtk_series *s, const srd_model *m, const double *q, const srd_vtk_fields *fields, double t)
{
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/%s_%06d.vtu", s->dir, s->name, s->frames);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f)
        return fail(s, tmp);
    write_frame(f, m, q, fields, s->binary);
    int bad = ferror(f);
    bad |= fclose(f);
    /* Renamed only when complete: a frame cut short by a full disk or a kill never shows
     * under its final name. */
    if (bad || rename(tmp, path) != 0) {
        fail(s, bad ? tmp : path);
        unlink(tmp);
        return -1;
    }
    if (pvd_append(s, t) != 0)
        return -1;
    s->frames++;
    return 0;
}

void srd_vtk_error(const srd_vtk_series *s, char *buf, size_t n)
{
    snprintf(buf, n, "cannot write %s: %s", s->failed_path ? s->failed_path : s->dir, strerror(s->failed_errno));
}

void srd_vtk_close(srd_vtk_series *s)
{
    if (s->pvd)
        fclose(s->pvd);
    free(s->dir);
    free(s->name);
    free(s->failed_path);
    memset(s, 0, sizeof *s);
}

int srd_vtk_resume(srd_vtk_series *s, const char *dir, const char *name, int frames, long pvd_bytes)
{
    if (srd_vtk_open(s, dir, name) != 0)
        return -1;
    if (frames <= 0)
        return 0;
    char path[4200];
    snprintf(path, sizeof path, "%s/%s.pvd", dir, name);
    s->pvd = fopen(path, "r+");
    if (!s->pvd || ftruncate(fileno(s->pvd), pvd_bytes) != 0 || fseek(s->pvd, pvd_bytes, SEEK_SET) != 0)
        return fail(s, path);
    s->frames = frames;
    s->pvd_entries_end = pvd_bytes;
    fprintf(s->pvd, "  </Collection>\n</VTKFile>\n");
    return fflush(s->pvd) != 0 || ferror(s->pvd) ? fail(s, path) : 0;
}
