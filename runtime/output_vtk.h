/* output_vtk.h — ParaView output: one .vtu (VTK XML unstructured grid) per frame and a .pvd
 * series that is rewritten after every frame, so a run that stops early leaves valid files. */
#ifndef SRD_OUTPUT_VTK_H
#define SRD_OUTPUT_VTK_H
#include "srd_model.h"

typedef struct srd_vtk_series {
    char   *dir, *name;
    int     frames, cap;
    double *times;
} srd_vtk_series;

/* Creates dir if needed. Returns 0, or -1 with errno set. */
int  srd_vtk_open(srd_vtk_series *s, const char *dir, const char *name);
/* Writes frame `frames` at time t: positions from q, velocities from v and net forces on the
 * nodes from f (each may be NULL: zeros). Rod edges become line cells carrying radius and
 * twist, triangles triangle cells, bodies vertex cells. Returns 0, or -1 on an I/O error. */
int  srd_vtk_write(srd_vtk_series *s, const srd_model *m, const double *q, const double *v, const double *f,
                   double t);
void srd_vtk_close(srd_vtk_series *s);

#endif
