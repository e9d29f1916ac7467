/* elab_internal.h — what the elaboration files share: property reading, object builders,
 * and the final assembly of the model. */
#ifndef SRD_ELAB_INTERNAL_H
#define SRD_ELAB_INTERNAL_H
#include "elab.h"
#include "props.h"

enum { MAX_PROPS = 48 };

/* The properties of one block after checking. */
typedef struct PropValues {
    Elab           *e;                /* the elaboration reading them */
    const PropSpec *specs[MAX_PROPS];
    int             n_specs;
    Value           val[MAX_PROPS];
    bool            set[MAX_PROPS], bad[MAX_PROPS];
    Stmt           *where[MAX_PROPS];
    Stmt           *extra[MAX_PROPS]; /* output and probe lines */
    int             n_extra;
    int             n_unknown;        /* unknown properties reported */
    int             run_expr[MAX_PROPS]; /* a timed property that changes with t: its run-time
                                            expression (val holds its value at t = 0, unknown) */
} PropValues;

void         props_read(Elab *e, const Stmt *blk, PropValues *pv, const char *owner);
const Value *prop_get(const PropValues *pv, const char *name);
bool         prop_given(const PropValues *pv, const char *name);
/* A scalar property's value, or dflt. prop_num carries no derivative (elab_value_only);
 * prop_dual does. */
double       prop_num(const PropValues *pv, const char *name, double dflt);
Dual         prop_dual(const PropValues *pv, const char *name, Dual dflt);
/* prop_dual's value, the Dual itself kept in *keep (the model takes values, derivatives are
 * kept aside). */
double       prop_kept(const PropValues *pv, const char *name, Dual dflt, Dual *keep);
bool         props_complete(const Stmt *blk, const PropValues *pv, const char *owner);
/* Where a property's value was written, or `fallback` when it was not. */
SrcLoc       prop_loc(const PropValues *pv, const char *name, SrcLoc fallback);

/* objects.c */
void elab_material(Elab *e, Stmt *s, const char *name);
void elab_rod(Elab *e, Stmt *s, const char *name);
void elab_shell(Elab *e, Stmt *s, const char *name);
void elab_body(Elab *e, Stmt *s, const char *name);
/* Geometry arguments bound to their signature (out[k] is V_ERR when absent), and the node and
 * edge builders, for lattice.c. */
bool elab_geom_args(const Geom *g, Value *out, SrcLoc *locs);
bool elab_room_for(Elab *e, int n, SrcLoc loc);
/* A shell mesh from its geometry (rectangle(...), obj(...), ...); false after an error. */
struct GeomMesh;
bool elab_build_mesh(Elab *e, const Geom *g, struct GeomMesh *mesh);
/* A file named in the model, relative to the model's directory (for solid.c's meshes). */
const char *elab_relative_path(Elab *e, const char *name, SrcLoc loc);
int  elab_add_node(Elab *e, const double x[3], int obj, int local);
int  elab_add_edge(Elab *e, int a, int b, int obj);
/* rigid.c */
bool elab_is_rigid(const PropValues *pv);
/* Records a rigid body for object obj: mass (out) and inertia from its shape, density, mass or
 * inertia; false after an error. */
bool elab_rigid_body(Elab *e, const PropValues *pv, int obj, double *mass, SrcLoc loc, const char *name);
int  elab_rigid_of(const Elab *e, int obj);
void elab_joint(Elab *e, Stmt *s, const char *name);
/* A rigid body made by elaboration (an rfem element): a uniform shape of density rho about
 * `center` with its z axis along `axis` (size: radius and length). False after an error. */
bool elab_add_rigid(Elab *e, const char *name, SrcLoc loc, const double *center, int shape, double radius,
                    double length, Dual rho, const double *axis);
/* rfem.c */
void elab_rfem(Elab *e, Stmt *s, const char *name);
/* finalize: the model's rigid bodies (node_body too), the joints' element instances (map: node
 * before merging -> model node), then, once DOFs are numbered, the world's rotation held and
 * the motors' actuations. */
bool rigid_add_bodies(Elab *e, srd_model *m, const int *map);
bool rigid_add_joints(Elab *e, srd_model *m, const int *map, unsigned char *needs_twist);
void rigid_fix_world(Elab *e, srd_model *m);
/* Ground contact and friction of every rigid body's shape on a flat ground. */
void rigid_add_ground(srd_model *m);
/* The same for every obstacle (sphere, box, cylinder, plane), obstacle by obstacle. */
void rigid_add_obstacles(srd_model *m);
/* Element columns of a moving (or turned) obstacle or a plane (finalize.c), appended to p: its
 * pose at t = 0 and the step-start pose (names with a trailing 0), then its shape, the
 * obstacle's radius under `radius_name`. */
typedef struct PoseColumns {
    const char *names[24];
    double      values[24];
    int         n;
} PoseColumns;
void elab_moving_columns(const srd_obstacle *o, const char *radius_name, PoseColumns *p);
void rigid_add_motors(Elab *e, srd_model *m);
/* lattice.c */
void elab_lattice(Elab *e, Stmt *s, const char *name);
/* The stiffness relation of a lattice (LATTICE_*) joining `shells` shells of neighbours with
 * springs of one stiffness k: its Young's modulus along the grid axes is beta k / a and its
 * Poisson ratio there nu. False when the lattice has no shear stiffness. */
bool lattice_relation(int grid, int shells, double *beta, double *nu);
/* Adds one `lattice_spring` instance per lattice edge of the flat model (after joins are
 * merged); returns the set, or -1 when there is no lattice. edge_of[i] receives the model edge
 * of instance i (an array of n_edges ints). */
int  lattice_add_springs(Elab *e, srd_model *m, int *edge_of);
/* solid.c */
void elab_solid(Elab *e, Stmt *s, const char *name);
/* Adds one std.solids instance per tetrahedron of every solid of the flat model; map takes a
 * node before joins to its model node. */
void solid_add_tets(Elab *e, srd_model *m, const int *map);
/* contact.c: the dynamic element sets of `contact`, once edges are known; false after an error. */
bool contact_add_pairs(Elab *e, srd_model *m);
/* analysis.c */
void elab_environment(Elab *e, Stmt *s);
void elab_analysis(Elab *e, Stmt *s);

/* finalize.c: merge joins, build elements, DOFs, masses, ordering. */
void elab_finalize(Elab *e);

/* Inputs (elab.c): whether `name` is one, and a hint saying how to use it after an error that
 * needed its value while the model is built. */
bool elab_is_input(const Elab *e, const char *name);
void elab_hint_input(const Elab *e, Diag *d, const char *name);
/* A name about to be declared: false after reporting a clash with an earlier one. */
bool elab_check_new_name(Elab *e, const char *name, SrcLoc loc);

/* The `control` block (control.c): noted where it is declared, elaborated once the whole file
 * (its probes, params and inputs) is known. */
void elab_control_declared(Elab *e, Stmt *s);
void elab_control(Elab *e);
/* How many values a probe gives and their dimension; false for a motor probe (its dimension
 * depends on the joint). */
bool elab_probe_type(const srd_probe *p, int *n, Dims *d);
/* Binds probe p by name as an unknown value of its type for a controller or an objective to
 * read (a reaction's force, with its moment for `.mx`, `.my`, `.mz`). Returns the values a slot
 * of it holds (a reaction's 6), or 0 for a motor probe. */
int elab_bind_probe(Elab *e, const srd_probe *p, SrcLoc loc);

/* The `optimize` block (optimize.c): the same, once the static block's probes are known. */
void elab_optimize_declared(Elab *e, Stmt *s);
void elab_optimize(Elab *e);

#endif
