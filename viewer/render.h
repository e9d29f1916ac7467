/* render.h — draws frames of a run as pictures: rods as shaded tubes of their radius, shell
 * triangles shaded on both sides, springs and other line elements as lines, point bodies as
 * dots, the ground as a grid; a camera that fits the whole run, colouring by object or by a
 * field with a colour bar, and the time. Cairo does the drawing and antialiasing; this module
 * does the projection and the scene. */
#ifndef SRD_RENDER_H
#define SRD_RENDER_H
#include <stdbool.h>
#include <stddef.h>
#include "frames.h"

typedef enum { SRD_VIEW_AUTO, SRD_VIEW_FRONT, SRD_VIEW_SIDE, SRD_VIEW_TOP, SRD_VIEW_ISO } srd_view_kind;

typedef struct srd_camera {
    double eye[3], target[3], up[3];
    double fov_deg;       /* vertical field of view; 0: orthographic */
    double ortho_height;  /* orthographic: metres across the picture's height */
} srd_camera;

typedef struct srd_render_options {
    int           width, height;
    srd_view_kind view;
    const char   *color_field;  /* NULL: colour by object */
    bool          show_time;
} srd_render_options;

/* The bounding box of every point of the frames, grown by their largest radius/thickness. */
void srd_render_bounds(const srd_frame *frames, int n, double lo[3], double hi[3]);
/* A camera that shows the box whole from the given side (auto: the front for a flat model in
 * the x-z plane, else a three-quarter view from above). */
void srd_render_fit(const double lo[3], const double hi[3], srd_view_kind view, double aspect, srd_camera *cam);
/* Pixel position of point p and its depth along the view; false when it is behind the eye. */
bool srd_render_project(const srd_camera *cam, int width, int height, const double p[3], double out[3]);
/* Draws frame f at time t to a PNG file. The colour range of a field is [lo, hi] (the caller
 * takes it over the whole run, so that colours mean the same in every frame). 0, or -1 with a
 * message in err (an unknown field lists the fields there are). */
int srd_render_png(const srd_frame *f, double t, const srd_camera *cam, const srd_render_options *o, double lo,
                   double hi, const char *path, char *err, size_t err_n);
/* The range of a field's values (the magnitude of a vector) over the frames; -1 when a frame
 * lacks it (err then lists the fields there are). */
int srd_render_field_range(const srd_frame *frames, int n, const char *field, double *lo, double *hi, char *err,
                           size_t err_n);
/* The model's `view` block as the frames carry it (FieldData "view": what is given, eye, target,
 * up, fov in radians, from): what it gives, in SRD_VIEW_* bits of srd_model.h, the field of view
 * in degrees and the side to look from. */
typedef struct srd_view_block {
    unsigned      given;
    double        eye[3], target[3], up[3], fov_deg;
    srd_view_kind from;
} srd_view_block;

/* Reads frame f's view block; false when it has none. */
bool srd_render_view_block(const srd_frame *f, srd_view_block *vb);

/* Frees what Cairo and fontconfig keep for the whole process (their font caches), once no
 * picture is drawn any more: a command that drew ends with this, so that nothing is left. */
void srd_render_finish(void);
/* The SI unit runtime/output_vtk.c writes a field in ("m/s"), or NULL when it is not known. */
const char *srd_render_field_unit(const char *name);

#endif
