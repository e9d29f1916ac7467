/* frames.h — reads back the VTK series a run wrote (the .pvd list and each .vtu frame, text or
 * appended raw binary) into plain arrays for the renderer. Only the layout srd itself writes
 * is read (runtime/output_vtk.c); anything else is an error, not a guess. */
#ifndef SRD_FRAMES_H
#define SRD_FRAMES_H
#include <stddef.h>
#include <stdint.h>

typedef struct srd_frame_field {
    char   *name;
    int     ncomp;
    int     on_cells;   /* 1: one tuple per cell, 0: per point, 2: the frame's (FieldData) */
    size_t  tuples;     /* how many tuples values holds */
    double *values;     /* ncomp per tuple */
} srd_frame_field;

typedef struct srd_frame {
    size_t   n_points, n_cells;
    double  *x;                 /* 3 per point */
    int32_t *connectivity, *offsets;
    uint8_t *types;             /* VTK cell types: 1 vertex, 3 line, 5 triangle */
    int      n_fields;
    srd_frame_field fields[32];
} srd_frame;

typedef struct srd_series {
    int     n;
    double *times;
    char  **paths;              /* the frames' files, in time order */
} srd_series;

/* Reads the series file `pvd`; 0, or -1 with a message in err. */
int  srd_series_read(const char *pvd, srd_series *s, char *err, size_t err_n);
void srd_series_free(srd_series *s);
/* Reads one frame; 0, or -1 with a message in err (the frame is empty then). */
int  srd_frame_read(const char *path, srd_frame *f, char *err, size_t err_n);
void srd_frame_free(srd_frame *f);
/* The series file to show in the run directory dir: name.pvd when name is given, else the
 * series with the most frames (ties: the first path). A string to free, or NULL with a message. */
char *srd_series_find(const char *dir, const char *name, char *err, size_t err_n);
/* Reads every frame of s; NULL with a message on the first bad one. */
srd_frame *srd_frames_read_all(const srd_series *s, char *err, size_t err_n);
/* Frees n frames read by srd_frames_read_all (frames may be NULL). */
void srd_frames_free(srd_frame *frames, int n);
/* The field called name, or NULL. */
const srd_frame_field *srd_frame_field_named(const srd_frame *f, const char *name);
/* The field called name with one value per cell (on_cells 1), per point (0) or for the frame
 * (2), or NULL: object_id, for one, is both a point and a cell field. */
const srd_frame_field *srd_frame_field_on(const srd_frame *f, const char *name, int on_cells);
/* Tuple i of a field as one number: the value, or the magnitude of a vector. */
double srd_frame_value(const srd_frame_field *fd, size_t i);

#endif
