/* output_vtk.c — VTK XML frames and the ParaView series file. */
#include "output_vtk.h"
#include <errno.h>
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

static void write_cells(FILE *f, const srd_model *m, int n_bodies)
{
    fprintf(f, "      <Cells>\n        <DataArray type=\"Int32\" Name=\"connectivity\" format=\"ascii\">\n");
    for (int e = 0; e < m->n_edges; e++)
        if (m->edge_is_rod[e])
            fprintf(f, "%d %d\n", m->edge_nodes[2 * e], m->edge_nodes[2 * e + 1]);
    for (int t = 0; t < m->n_tris; t++)
        fprintf(f, "%d %d %d\n", m->tri_nodes[3 * t], m->tri_nodes[3 * t + 1], m->tri_nodes[3 * t + 2]);
    for (int o = 0; o < m->n_objects; o++)
        if (m->objects[o].kind == SRD_OBJ_BODY)
            fprintf(f, "%d\n", m->objects[o].nodes[0]);
    fprintf(f, "        </DataArray>\n        <DataArray type=\"Int32\" Name=\"offsets\" format=\"ascii\">\n");
    int offset = 0;
    for (int e = 0; e < m->n_edges; e++)
        if (m->edge_is_rod[e])
            fprintf(f, "%d\n", offset += 2);
    for (int t = 0; t < m->n_tris; t++)
        fprintf(f, "%d\n", offset += 3);
    for (int b = 0; b < n_bodies; b++)
        fprintf(f, "%d\n", offset += 1);
    fprintf(f, "        </DataArray>\n        <DataArray type=\"UInt8\" Name=\"types\" format=\"ascii\">\n");
    for (int e = 0; e < m->n_edges; e++)
        if (m->edge_is_rod[e])
            fprintf(f, "3\n");
    for (int t = 0; t < m->n_tris; t++)
        fprintf(f, "5\n");
    for (int b = 0; b < n_bodies; b++)
        fprintf(f, "1\n");
    fprintf(f, "        </DataArray>\n      </Cells>\n");
}

/* Per cell: the rod radius (half the thickness for shells) and the twist angle of rod edges. */
static void write_cell_data(FILE *f, const srd_model *m, const double *q, int n_bodies)
{
    fprintf(f, "      <CellData Scalars=\"radius\">\n        <DataArray type=\"Float64\" Name=\"radius\" format=\"ascii\">\n");
    for (int e = 0; e < m->n_edges; e++)
        if (m->edge_is_rod[e])
            fprintf(f, "%.9g\n", m->objects[m->edge_object[e]].radius);
    for (int t = 0; t < m->n_tris; t++)
        fprintf(f, "%.9g\n", 0.5 * m->objects[m->tri_object[t]].thickness);
    for (int b = 0; b < n_bodies; b++)
        fprintf(f, "0\n");
    fprintf(f, "        </DataArray>\n        <DataArray type=\"Float64\" Name=\"twist\" format=\"ascii\">\n");
    for (int e = 0; e < m->n_edges; e++)
        if (m->edge_is_rod[e])
            fprintf(f, "%.9g\n", m->edge_twist[e] >= 0 ? q[m->edge_twist[e]] : 0.0);
    for (int t = 0; t < m->n_tris + n_bodies; t++)
        fprintf(f, "0\n");
    fprintf(f, "        </DataArray>\n      </CellData>\n");
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

static void write_node_vectors(FILE *f, const srd_model *m, const char *name, const double *values)
{
    fprintf(f, "        <DataArray type=\"Float64\" Name=\"%s\" NumberOfComponents=\"3\" format=\"ascii\">\n", name);
    for (int i = 0; i < m->n_nodes; i++) {
        const double *u = values ? &values[m->node_dof[i]] : NULL;
        fprintf(f, "%.9g %.9g %.9g\n", u ? u[0] : 0.0, u ? u[1] : 0.0, u ? u[2] : 0.0);
    }
    fprintf(f, "        </DataArray>\n");
}

static void write_frame(FILE *f, const srd_model *m, const double *q, const double *v, const double *force)
{
    int n_bodies = 0;
    for (int o = 0; o < m->n_objects; o++)
        n_bodies += m->objects[o].kind == SRD_OBJ_BODY;
    int n_rod_edges = 0;
    for (int e = 0; e < m->n_edges; e++)
        n_rod_edges += m->edge_is_rod[e];
    fprintf(f, "<?xml version=\"1.0\"?>\n<VTKFile type=\"UnstructuredGrid\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
               "  <UnstructuredGrid>\n    <Piece NumberOfPoints=\"%d\" NumberOfCells=\"%d\">\n",
            m->n_nodes, n_rod_edges + m->n_tris + n_bodies);
    fprintf(f, "      <Points>\n        <DataArray type=\"Float64\" NumberOfComponents=\"3\" format=\"ascii\">\n");
    for (int i = 0; i < m->n_nodes; i++) {
        const double *x = &q[m->node_dof[i]];
        fprintf(f, "%.12g %.12g %.12g\n", x[0], x[1], x[2]);
    }
    fprintf(f, "        </DataArray>\n      </Points>\n");
    write_cells(f, m, n_bodies);
    fprintf(f, "      <PointData Vectors=\"velocity\">\n");
    write_node_vectors(f, m, "velocity", v);
    write_node_vectors(f, m, "force", force);
    fprintf(f, "      </PointData>\n");
    write_cell_data(f, m, q, n_bodies);
    fprintf(f, "    </Piece>\n  </UnstructuredGrid>\n</VTKFile>\n");
}

int srd_vtk_write(srd_vtk_series *s, const srd_model *m, const double *q, const double *v, const double *force,
                  double t)
{
    char path[4096], tmp[4200];
    snprintf(path, sizeof path, "%s/%s_%06d.vtu", s->dir, s->name, s->frames);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return fail(s, tmp);
    write_frame(f, m, q, v, force);
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
