/* geom.h — path and mesh generators (rods' centrelines, shells' triangulations) and importers.
 * All lengths in metres. Results are malloc'd; free them with geom_*_free. Functions return
 * NULL-free results or an error string (static or in `err`), never abort. */
#ifndef SRD_GEOM_H
#define SRD_GEOM_H
#include <stdbool.h>
#include <stddef.h>

typedef struct GeomPath {
    int     n_nodes;
    double *x;       /* 3 * n_nodes */
    bool    closed;  /* last node connects to the first (circle) */
    double  length;  /* arc length of the sampled polyline, including the closing edge */
} GeomPath;

typedef struct GeomMesh {
    int     n_nodes;
    double *x;       /* 3 * n_nodes */
    int     n_tris;
    int    *tri;     /* 3 * n_tris, counter-clockwise seen from +normal; every triangle non-degenerate */
} GeomMesh;

void geom_path_free(GeomPath *p);
void geom_mesh_free(GeomMesh *m);

/* ---- paths: n >= 2 nodes (n >= 3 for a circle). Return NULL on success, else a message. ---- */
const char *geom_line(const double a[3], const double b[3], int n, GeomPath *out);
/* Vertices are kept as nodes; the n-1 edges are shared among segments in proportion to their
 * lengths (largest remainder), each segment getting at least one. Needs n-1 >= segments. */
const char *geom_polyline(const double *pts, int n_pts, int n, GeomPath *out);
/* Points c + r(cos a u + sin a v), a from a0 to a1 (radians), with u, v orthonormal,
 * u x v = axis/|axis|, u the projection of +x on the plane (of +y if axis is along x). */
const char *geom_arc(const double c[3], double r, double a0, double a1, const double axis[3], int n, GeomPath *out);
/* A closed circle of n nodes, the first at angle a0 (0: along the frame's first axis), same
 * frame as geom_arc. */
const char *geom_circle(const double c[3], double r, const double axis[3], double a0, int n, GeomPath *out);
/* Helix about `axis` through c: radius r, rise `pitch` per turn, `turns` turns, starting at angle 0. */
const char *geom_helix(const double c[3], double r, double pitch, double turns, const double axis[3], int n, GeomPath *out);
/* Arc length of each path kind before sampling, to turn a spacing into a node count. */
double geom_polyline_length(const double *pts, int n_pts);

/* ---- meshes, in the plane z = origin z ---- */
typedef enum {
    MESH_EQUILATERAL,          /* rows along x offset by half a spacing; near-equilateral */
    MESH_EQUILATERAL_ALIGNED,  /* same, rotated 90 degrees: rows along y */
    MESH_RIGHT_ISOSCELES,      /* square grid, every square cut along the same diagonal */
    MESH_RANDOM,               /* jittered interior nodes (fixed seed), grid connectivity */
    MESH_NONUNIFORM,           /* grid graded along x: spacing grows geometrically (ratio 3 end to end) */
} MeshPattern;

/* Rectangle [ox, ox+length] x [oy, oy+width]; `spacing` is the target edge length.
 * Grid patterns: round(length/spacing)+1 by round(width/spacing)+1 nodes (at least 2 each).
 * Equilateral patterns: rows round(width/(spacing*sqrt(3)/2))+1 apart so triangles stay
 * near-equilateral; even rows have round(length/spacing)+1 nodes, odd rows one more (half
 * cells at both ends). `seed` drives MESH_RANDOM. */
const char *geom_rectangle(const double origin[3], double length, double width, double spacing,
                           MeshPattern pattern, unsigned seed, GeomMesh *out);
/* Regular hexagon of circumradius r centred at c (corners at angles 0, 60, ... degrees),
 * equilateral triangles; rings = round(r/spacing) (at least 1). */
const char *geom_hexagon(const double c[3], double r, double spacing, GeomMesh *out);
/* Disc of radius r centred at c: concentric rings round(r/spacing), ring k has 6k nodes. */
const char *geom_disc(const double c[3], double r, double spacing, GeomMesh *out);

/* Closed sphere of radius r centred at c: the icosahedron's faces cut into n^2 triangles each,
 * n = round(r / sin(72 deg) / spacing) (at least 1), nodes projected radially onto the sphere;
 * 10 n^2 + 2 nodes, triangles counter-clockwise seen from outside. */
const char *geom_sphere(const double c[3], double r, double spacing, GeomMesh *out);

/* ---- importers; `err` receives "line N: what is wrong" ---- */
/* Wavefront OBJ: `v x y z` and `f a b c ...` (polygons fanned into triangles, a/b/c index
 * forms and negative indices accepted); coordinates multiplied by `scale`. */
bool geom_read_obj(const char *path, double scale, GeomMesh *out, char *err, size_t err_n);
/* MAT-DiSMech-style text input (see docs/language.md): sections "*Nodes" (x, y, z per line),
 * "*Triangles" (1-based node indices), optional "*Edges" (ignored for shells: edges are
 * derived from triangles). Commas or spaces separate values; '#' starts a comment. */
bool geom_read_dismech(const char *path, double scale, GeomMesh *out, char *err, size_t err_n);

#endif
