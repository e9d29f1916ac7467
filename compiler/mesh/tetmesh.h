/* tetmesh.h — tetrahedral meshes of `solid`s: generated boxes and cylinders, Gmsh (.msh, ASCII
 * v2 and v4) and TetGen (.node/.ele) import, closed OBJ/STL surfaces filled by the `tetgen`
 * command, and the check that every tetrahedron is positively oriented and not degenerate. */
#ifndef SRD_TETMESH_H
#define SRD_TETMESH_H
#include <stdbool.h>
#include <stddef.h>

typedef struct TetMesh {
    int     n_nodes, n_tets;
    double *x;      /* 3 * n_nodes */
    int    *tet;    /* 4 * n_tets, 0-based, positively oriented: (b-a).((c-a)x(d-a)) > 0 */
    int    *region; /* per tet: Gmsh physical tag or TetGen region attribute (0: none) */
    long   *line;   /* per tet: the line of the file that defines it (0: generated) */
    char   *file;   /* the file that defines the tetrahedra, or NULL */
} TetMesh;

void tetmesh_free(TetMesh *m);

/* A box [origin, origin + size] of nx x ny x nz cubes (each the smallest count that makes a cell
 * no longer than `spacing`), each cut into six tetrahedra about its main diagonal, so that the
 * faces of neighbouring cubes match. When cavity_size is not NULL, the cubes whose centres lie in
 * the box [cavity_origin, cavity_origin + cavity_size] are left out (a closed cavity, at least
 * one cell from the box's faces). Returns NULL or a message. */
const char *tetmesh_box(const double origin[3], const double size[3], double spacing, const double *cavity_origin,
                        const double *cavity_size, TetMesh *out);
/* A cylinder of `radius` and `length` from `base` along the unit `axis`: rings of a disc
 * triangulation extruded in layers, each prism cut into three tetrahedra by its corners' indices
 * (conforming across faces). */
const char *tetmesh_cylinder(const double base[3], const double axis[3], double radius, double length, double spacing,
                             TetMesh *out);

/* Import; coordinates times `scale`. On failure, err holds "mesh file `F`, line N: ..." or
 * another message that names the file. */
bool tetmesh_read_msh(const char *path, double scale, TetMesh *out, char *err, size_t err_n);
/* base.node and base.ele (path may name either file, or the base). */
bool tetmesh_read_tetgen(const char *path, double scale, TetMesh *out, char *err, size_t err_n);
/* A closed triangulated surface (OBJ or STL, ASCII or binary): false (err set) when it cannot be
 * read or is not closed. */
struct GeomMesh;
bool tetmesh_read_surface(const char *path, double scale, struct GeomMesh *out, char *err, size_t err_n);
/* A closed triangulated surface (OBJ or STL, ASCII or binary) filled with tetrahedra of at most
 * max_volume (0: TetGen's choice) by the `tetgen` command (quality bound 1.4). */
bool tetmesh_fill_surface(const char *path, double scale, double max_volume, TetMesh *out, char *err, size_t err_n);

/* The closed surfaces of the mesh that bound cavities: its boundary faces less the outer surface
 * (the connected set of faces holding the node of largest x), oriented with their normals out
 * of the cavity (into the solid), so that the volume they enclose is positive. Returns their
 * count; *tris (3 per face, malloc'd) receives them. */
int tetmesh_cavities(const TetMesh *m, int **tris);

/* Signed volume of tetrahedron t (positive when oriented). */
double tetmesh_volume(const TetMesh *m, int t);
/* The first tetrahedron whose volume is below `ratio` times its longest edge cubed (inverted or
 * degenerate), or -1. */
int tetmesh_first_bad(const TetMesh *m, double ratio);

#endif
