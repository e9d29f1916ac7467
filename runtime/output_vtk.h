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
    int   binary;           /* arrays as appended raw binary (set after srd_vtk_open) */
} srd_vtk_series;

/* The point fields of a frame beyond the positions; each may be NULL (zeros, or left out for
 * reaction and contact). n_dofs values each, read at the nodes' DOFs. */
typedef struct srd_vtk_fields {
    const double *v;        /* velocity */
    const double *force;    /* net force: external minus elastic, 0 on constrained DOFs */
    const double *reaction; /* the constraints' force on each node */
    const double *contact;  /* ground and obstacles' force on each node */
    const srd_obstacle *obstacles; /* the obstacles at the frame's time (moving ones), or NULL:
                                      the model's (their pose at t = 0) */
} srd_vtk_fields;

/* Creates dir if needed. Returns 0, or -1 with errno set. */
int  srd_vtk_open(srd_vtk_series *s, const char *dir, const char *name);
/* Writes frame `frames` at time t: positions from q, velocities from v and net forces on the
 * nodes from f (each may be NULL: zeros). Rod edges become line cells carrying radius and
 * twist, triangles triangle cells, bodies vertex cells. Returns 0, or -1 on an I/O error. */
int  srd_vtk_write(srd_vtk_series *s, const srd_model *m, const double *q, const double *v, const double *f,
                   double t);
/* srd_vtk_write with every point field: point data velocity, force, reaction, contact_force
 * (vectors), curvature (rods' interior nodes), object_id; cell data radius (rod edges),
 * thickness (shell triangles), twist, strain (rod edges; triangles: mean of their edges),
 * object_id (-1 for user elements drawn as lines). */
int  srd_vtk_write_fields(srd_vtk_series *s, const srd_model *m, const double *q, const srd_vtk_fields *fields, double t);
/* After a failed srd_vtk_write: "cannot write PATH: REASON". */
void srd_vtk_error(const srd_vtk_series *s, char *buf, size_t n);
void srd_vtk_close(srd_vtk_series *s);
/* Continues a series an earlier run wrote, after its frame `frames - 1`: the .pvd is cut back to
 * those frames' entries (pvd_bytes, the saved pvd_entries_end) and closed again, so that the
 * next frame follows them. Returns 0, or -1 with errno set. */
int  srd_vtk_resume(srd_vtk_series *s, const char *dir, const char *name, int frames, long pvd_bytes);

#endif
