/* output_vtk.h — ParaView output: one .vtu (VTK XML unstructured grid) per frame and a .pvd
 * series. A frame is written under a temporary name and renamed when complete, and the .pvd is
 * valid after every frame, so a run that stops early, or is killed, leaves only whole files. */
#ifndef SRD_OUTPUT_VTK_H
#define SRD_OUTPUT_VTK_H
#include "srd_model.h"

typedef struct srd_vtk_series {
    char *dir, *name;
    int   frames;
    FILE *pvd;              /* open after the first frame */
    long  pvd_entries_end;  /* where the closing tags start: the next entry overwrites them */
    char *failed_path;      /* the file whose write failed, and why (errno) */
    int   failed_errno;
} srd_vtk_series;

/* Creates dir if needed. Returns 0, or -1 with errno set. */
int  srd_vtk_open(srd_vtk_series *s, const char *dir, const char *name);
/* Writes frame `frames` at time t: positions from q, velocities from v and net forces on the
 * nodes from f (each may be NULL: zeros). Rod edges become line cells carrying radius and
 * twist, triangles triangle cells, bodies vertex cells. Returns 0, or -1 on an I/O error. */
int  srd_vtk_write(srd_vtk_series *s, const srd_model *m, const double *q, const double *v, const double *f,
                   double t);
/* After a failed srd_vtk_write: "cannot write PATH: REASON". */
void srd_vtk_error(const srd_vtk_series *s, char *buf, size_t n);
void srd_vtk_close(srd_vtk_series *s);
/* Continues a series an earlier run wrote, after its frame `frames - 1`: the .pvd is cut back to
 * those frames' entries (pvd_bytes, the saved pvd_entries_end) and closed again, so that the
 * next frame follows them. Returns 0, or -1 with errno set. */
int  srd_vtk_resume(srd_vtk_series *s, const char *dir, const char *name, int frames, long pvd_bytes);

#endif
