/* elab.h — elaboration: runs the checked program (loops, lets, declarations) and builds the
 * flat srd_model. Also the evaluator's view of the model under construction. */
#ifndef SRD_ELAB_H
#define SRD_ELAB_H
#include <stdbool.h>
#include "ast.h"
#include "dual.h"
#include "names.h"
#include "srd_model.h"

typedef enum { SEL_NODE, SEL_EDGE, SEL_TRI, SEL_HINGE } SelKind;
enum { COMP_ALL = -1, COMP_X, COMP_Y, COMP_Z, COMP_THETA };

/* A set of nodes, edges, triangles or hinges (indices before joins are merged). */
typedef struct Sel {
    SelKind kind;
    int     n;
    int    *items;
    double *s;          /* arc-length fraction per item (rods), NULL otherwise */
    int     component;  /* COMP_* */
    int     rod_end;    /* 1: a rod's .start, 2: its .end (clamp fixes the end edge too) */
    int     obj;        /* the single object it came from, or -1 */
} Sel;

typedef enum { V_ERR, V_NUM, V_STR, V_WORD, V_OBJ, V_MATERIAL, V_SEL, V_GEOM, V_SECTION, V_STENCIL } VKind;

typedef struct Geom Geom;

typedef struct Value {
    VKind       kind;
    int         n;        /* V_NUM: components; 9 for a 3x3 matrix */
    double      v[9];
    double      dv[9];    /* V_NUM: d(v)/d(the seeded param) (Elab.seed), 0 when none is seeded */
    Dims        dims;
    bool        any_dims; /* the literal 0 */
    bool        known;    /* false: depends on t, s, DOFs or step state */
    const char *param;    /* the run-time param it depends on (first one), or NULL */
    const char *str;      /* V_STR, V_WORD; V_STENCIL: stencil kind */
    int         index;    /* V_OBJ / V_MATERIAL index */
    Sel        *sel;      /* V_SEL */
    Geom       *geom;     /* V_GEOM, V_SECTION */
} Value;

/* A geometry or cross-section call with its evaluated arguments. */
struct Geom {
    const char *fn;       /* line, polyline, arc, circle, helix, rectangle, hexagon, disc, obj, dismech,
                             circular, elliptic, rectangular */
    SrcLoc      loc;
    int         n_args;
    Value      *args;
    const char **names;   /* named arguments or NULL */
    SrcLoc     *locs;
};

typedef struct Binding Binding;
struct Binding {
    const char *name;
    Value       val;
    SrcLoc      loc;
    int         kind;     /* BIND_* */
    const Value *moment;  /* a reaction probe's moment (its `.mx`, `.my`, `.mz`); NULL otherwise */
    Binding    *next;
};
enum { BIND_LET, BIND_PARAM, BIND_LOOP, BIND_ARG, BIND_BUILTIN };

/* A shell edge's stretching stiffness ks (energy 1/2 ks eps^2 l): the equilateral lattice's
 * (sqrt(3)/2) E h l, or 2 E h l / (1 - nu^2), the value MAT-DiSMech's code gives mid-edge shells. */
enum { SHELL_STRETCH_LATTICE, SHELL_STRETCH_DISMECH_MIDEDGE };

/* The grids of a `lattice`: simple cubic, body-centred cubic, face-centred cubic. */
enum { LATTICE_CUBIC, LATTICE_BCC, LATTICE_FCC };

/* The energies of a `solid` (std.solids) and the values each tetrahedron carries. */
enum { SOLID_NEO_HOOKEAN, SOLID_STVK, SOLID_LINEAR };
enum { SOLID_DATA = 12 };

typedef struct ElabObj {
    const char *name;
    int         kind;     /* SRD_OBJ_* */
    SrcLoc      loc;
    int         first_node, n_nodes;
    int         first_edge, n_edges;
    int         first_tri, n_tris;
    int         first_hinge, n_hinges;
    bool        closed;
    bool        broken;   /* its block had errors: uses of it stay quiet */
    int         bending;
    int         stretching; /* shells: SHELL_STRETCH_* */
    /* Values a param may set carry their derivative (dual.h); the rest follow the geometry. */
    Dual        E, nu, G, rho, area, I1, I2, J, radius, thickness, mass;
    double      length;
    Dual        EA, EI1, EI2, GJ;   /* rods: stiffnesses (defaults from the section, or given) */
    Dual        kappa_bar[2], tau_bar, phi_bar;
    bool        natural_given; /* curvature/twist (rods) or angle (shells) given: else stress-free reference */
    double     *s;        /* rods: arc-length fraction per node */
    Dual       *spring_k; /* lattices: stiffness per edge (N/m) */
    int         grid;     /* lattices: LATTICE_* */
    int         neighbours; /* lattices: shells of neighbours joined by springs */
    double      spacing;  /* lattices: the grid's cube edge a */
    int         n_tets;   /* solids: tetrahedra */
    int        *tets;     /* solids: 4 * n_tets nodes (before joins are merged), positively oriented */
    double     *tet_data; /* solids: SOLID_DATA values per tetrahedron (mu, lambda, volume, Dm^-1) */
    Dual       *tet_lame; /* solids: mu and lambda per tetrahedron, with their derivatives */
    int         energy;   /* solids: SOLID_* */
    int         n_cavity; /* solids: triangles bounding cavities (normals into the solid) */
    int        *cavity;   /* solids: 3 * n_cavity nodes (before joins are merged) */
} ElabObj;

typedef struct ElabMaterial {
    const char *name;
    SrcLoc      loc;
    Dual        E, nu, rho;
    bool        has_E, has_nu, has_rho;
    const char *runtime_param;  /* a param E, nu or rho depends on, or NULL */
} ElabMaterial;

typedef struct Decl {         /* fn, energy, force */
    Stmt *stmt;
    bool  recursive;          /* reported by the recursion check: calls stay quiet */
} Decl;

/* Statements whose effect is resolved once joins are merged and elements exist. */
typedef struct PendingLoad {
    int    node;
    Dual   f[3];
    int    expr;
} PendingLoad;

typedef struct PendingAct {
    const char *target;  /* curvature, twist, rest_length, E, angle */
    int         obj;
    Sel        *sel;     /* NULL: the whole object */
    int         expr;
    SrcLoc      loc;
} PendingAct;

typedef struct PendingApply {
    const Stmt *def;     /* the energy or force */
    SrcLoc      loc;
    int        *nodes;   /* node stencil arguments in order */
    int        *edges;   /* edge stencil arguments in order */
    Dual       *data;    /* parameter values */
    Sel        *tris;    /* a triangle selection filling node arguments tri_node.. +2, or NULL */
    int         tri_node;
    int         n_lambda;/* a constraint: its multipliers per instance */
} PendingApply;

/* A rigid body's inertial data (the object's node is its centre of mass). */
typedef struct ElabRigid {
    int    obj;
    double inertia[3];   /* principal moments */
    double axes[9];      /* column k: principal axis k in the world at the reference */
    double v0[3], w0[3]; /* initial velocity and angular velocity (world) */
    int    shape;        /* SRD_SHAPE_* */
    double size[3];
    bool   world;        /* the world as a body: held in full */
    int    n_points;     /* a mesh's vertices in the body's axes, about its centre (malloc'd) */
    double *points;
    double offset[3];    /* a mesh: its centre of mass from `position` */
    Dual   mass;         /* with its derivative (the moments follow it unless given) */
    bool   inertia_given;
} ElabRigid;

/* A `joint` block. An end is a rigid body (index into rigids), a node, or the world. */
enum { JOINT_FIXED, JOINT_REVOLUTE, JOINT_PRISMATIC, JOINT_SPHERICAL, JOINT_UNIVERSAL };
enum { END_WORLD, END_BODY, END_NODE };
enum { MOTOR_NONE, MOTOR_POSITION, MOTOR_VELOCITY, MOTOR_EFFORT };
enum { JOINT_K, JOINT_C, JOINT_REST, JOINT_LO, JOINT_HI, JOINT_K_LIM, JOINT_LIM_WIDTH, JOINT_TARGET, JOINT_N_DUALS };
typedef struct PendingJoint {
    const char *name;
    SrcLoc      loc;
    int         type;
    int         end_kind[2], end[2];
    int         rod_obj[2], rod_end[2]; /* a node end that is a rod's .start (1) or .end (2) */
    SrcLoc      end_loc[2];
    double      at[3], axis[3], axis2[3];
    double      k, c, rest, lim[2], k_lim, lim_width; /* spring, damper, natural value, limits (rad or m) */
    Dual        k_rot[3], c_rot[3];   /* rfem: rotational springs and dampers about axis, axis2, their normal */
    bool        has_lim;
    int         motor;        /* MOTOR_* */
    double      target;       /* the motor's value when constant */
    int         target_expr;  /* its run-time expression when it changes with time, or -1 */
    Dual        d[JOINT_N_DUALS]; /* k, c, rest, lim, k_lim, lim_width, target with their derivatives */
} PendingJoint;

/* `pressure sel = p;`: the triangles it pushes and its value (a number, or a run-time
 * expression when it changes with time). */
typedef struct PendingPressure {
    Sel   *tris;
    int    solid;    /* `pressure S.cavity`: the solid whose cavities it inflates (tris NULL), or -1 */
    Dual   p;
    int    expr;     /* run-time expression, or -1 */
    SrcLoc loc;
} PendingPressure;

/* `move sel = u(t);` or `rotate sel about axis = angle(t);`: the region's DOFs follow it. */
typedef struct PendingMotion {
    int    kind;        /* SRD_MOTION_* */
    Sel   *nodes;
    int    expr;
    double axis[3];
    SrcLoc loc;
} PendingMotion;

/* `release sel at T;` */
typedef struct PendingRelease {
    Sel   *nodes;
    double time;
    double dtime; /* along the seeded param (elab_tangent.h) */
    SrcLoc loc;
} PendingRelease;

typedef struct ClampRecord {
    Sel   *nodes;
    SrcLoc loc;
} ClampRecord;

/* A value a run-time expression closed over at elaboration (a loop index, a local let). */
typedef struct CapturedValue {
    const char *name;
    int         n;
    double      v[9];
    const char *param;  /* a param the value depends on, or NULL */
} CapturedValue;

/* A run-time expression (time-dependent load, actuation value, ground height) with the
 * elaboration-time values it reads; srd_model.run_exprs points at a table of these. */
typedef struct RunExpr {
    const Expr    *expr;
    int            n_captured;
    CapturedValue *captured;   /* outermost first */
} RunExpr;

/* Growable arrays of plain data. */
#define DARRAY(T) struct { T *a; int n, cap; }

/* edge_fix bits of a rod's end edge held by `clamp r.start` / `clamp r.end`: the wall is at the
 * edge's first / second node, and the edge's direction stands for the tangent there (its other
 * node slides along it). */
enum { EDGE_WALL_AT_FIRST = 4, EDGE_WALL_AT_SECOND = 8 };

/* The environment's numbers a param may set, with their derivatives (the model keeps values). */
typedef struct ElabEnv {
    Dual gravity[3], medium_density, viscous_eta, damping_alpha, damping_beta, rft_ct, rft_cn, drag_cd, drag_density;
    Dual ground_stiffness, ground_delta, ground_friction, ground_slip_velocity, ground_level, ground_normal[3];
    Dual contact[5];  /* contact between parts: delta, stiffness, friction, slip velocity, radius */
} ElabEnv;

/* An obstacle's numbers a param may set, with their derivatives (constant ones: a pose that
 * changes with time is its schedule's; the axis carries none). */
typedef struct ElabObstacle {
    Dual stiffness, delta, friction, slip_velocity, radius, size[3], length;
    Dual center[3], angle, spin;   /* a plane's point is its centre */
    Dual axis[3];                  /* a unit vector; a plane's normal is its axis */
} ElabObstacle;

typedef struct Elab {
    Arena   *arena;
    Program *prog;
    srd_model *model;
    Binding *globals;
    Binding *scope;           /* innermost first; ends in globals */
    int      loop_depth;

    DARRAY(ElabObj) objs;
    DARRAY(ElabMaterial) mats;
    DARRAY(Decl) decls;

    DARRAY(double) x0;        /* 3 per node */
    DARRAY(int) node_obj, node_local;
    DARRAY(double) node_mass;
    DARRAY(int) edge_nodes;   /* 2 per edge */
    DARRAY(int) edge_obj;
    DARRAY(int) tri_nodes;    /* 3 per tri */
    DARRAY(int) tri_obj;
    DARRAY(int) hinge_edge;   /* per hinge: the shared edge */
    DARRAY(int) hinge_nodes;  /* 4 per hinge: edge ends, then the opposite vertices */
    DARRAY(int) joins;        /* pairs of node indices */
    DARRAY(SrcLoc) join_locs;
    DARRAY(unsigned char) node_fix;  /* bit k: component k fixed */
    DARRAY(unsigned char) edge_fix;  /* bit 0: twist, bit 1: xi; EDGE_WALL_AT_*: a clamped rod end */
    DARRAY(RunExpr) exprs;    /* run-time expressions referenced by the model */
    DARRAY(PendingLoad) loads;
    DARRAY(PendingAct) acts;
    DARRAY(PendingApply) applies;
    DARRAY(PendingPressure) pressures;
    DARRAY(ClampRecord) clamps;
    DARRAY(PendingMotion) motions;
    DARRAY(PendingRelease) releases;
    DARRAY(Dual) body_mass;   /* per node: point masses of bodies */
    DARRAY(ElabRigid) rigids; /* rigid bodies */
    DARRAY(PendingJoint) joints;
    DARRAY(int) tri_edge;     /* 3 per tri: the edge opposite each corner */
    int      seen[BK_COUNT];  /* environment blocks already given */
    SrcLoc   gravity_loc;
    const Stmt *contact;      /* the `contact` block, or NULL */
    const Stmt *control;      /* the `control` block, or NULL */
    const Stmt *optimize;     /* the `optimize` block, or NULL */
    struct srd_optimize *objective; /* while `minimize` is checked: where its terms go */
    bool        in_term;      /* while the argument of an objective's term is checked */
    const char *unknown_name_hint; /* the hint of an unknown name that is close to none, or NULL */
    int         control_depth; /* 1 while the control block is elaborated */
    const char *const *overrides;   /* -p name=value */
    int      n_overrides;
    bool    *override_used;
    SrcLoc   probe_locs[3][256]; /* per analysis block kind */

    /* user-applied elements: appended to model element sets at the end */
    const Stmt *fn_stack[64];
    SrcLoc      fn_calls[64];  /* where each function on fn_stack was called */
    int         fn_depth;
    int         errors_at_start;
    int         eval_depth;   /* expressions being evaluated, nested (inlined functions included) */
    bool        too_deep;     /* ELAB_MAX_EVAL_DEPTH was reported */
    long long   work;         /* loop iterations plus evaluated expression nodes so far */
    bool        over_budget;  /* ELAB_MAX_WORK was reported: every loop stops */

    /* Hash tables for name lookup (eval.c). global_names holds the chain of bindings from
     * global_top down; objs, mats and decls are indexed up to the counts given. */
    NameTable   global_names, obj_names, mat_names, decl_names;
    Binding    *global_top;
    int         objs_indexed, mats_indexed, decls_indexed;
    /* The local bindings above global_top (a loop body's lets), indexed in local_names when
     * they are many: local_head and local_base are the scope and global_top it was made for,
     * locals_reach_top whether that chain passes global_top. */
    NameTable   local_names;
    Binding    *local_head, *local_base;
    bool        locals_reach_top;

    /* Derivatives along one param (Value.dv, dual.h): `seed` names it (NULL: none), and a
     * switch (min, max, abs, a comparison, ...) within seed_reach of its value is noted, where
     * a derivative would not hold. tan_lost: a value moved by the seed went where no
     * derivative is carried; dep_lost: a value depending on some param did (the columns a
     * param moves are then found by elaborating again, kernels.c). */
    const char *seed;
    double      seed_reach;
    bool        tan_switch, tan_lost, dep_lost;
    double    **row_tan;      /* finalize (elab_tangent.c): per element set, its rows' derivatives */
    unsigned char **row_dep;  /* per set: the columns that depend on a param */
    int        *row_cap;      /* per set: rows room was made for */
    int         n_row_sets;
    Dual       *dof_mass;     /* per model DOF, once masses are lumped */
    double     *control_dinit;/* the control block's data: its vars' initial values' derivatives */
    int         control_dinit_n;
    ElabEnv     env;
    DARRAY(ElabObstacle) obstacles; /* per model obstacle */

    /* Results of function calls by their arguments (eval.c): f1(x) = f0(x) + f0(x) evaluates
     * f0 once, so nesting such functions costs linear, not exponential, work. */
    struct FnMemo **memo;
    int         memo_cap, memo_n;
} Elab;

/* How deeply evaluation may nest: an expression's own depth (at most PARSE_MAX_EXPR_DEPTH)
 * plus those of the function bodies it calls, which the parser cannot see. A level of nested
 * built-in calls takes about 9 KB of stack in the sanitizer build: 500 levels fit in 8 MB. */
enum { ELAB_MAX_EVAL_DEPTH = 500 };
/* The total work of elaboration, in loop iterations plus evaluated expression nodes (about
 * 2 s and at most a few hundred MB): nested loops multiply, each below its own cap. */
#define ELAB_MAX_WORK 10000000LL
/* Lowers the work budget of every later elaboration in this process (0 restores
 * ELAB_MAX_WORK). The fuzz targets use it: under the sanitizers the full budget takes longer
 * than their per-input timeout, and the budget itself is tested at its real value. */
void elab_set_work_limit(long long limit);
long long elab_work_limit(void);
/* Function calls whose values are kept (struct FnMemo in eval.c): enough for any program that
 * repeats its calls, while one whose calls all differ stops adding at a few tens of MB. */
enum { ELAB_MAX_MEMO = 65536 };

#define DPUSH(arr, val) do { \
        if ((arr).n == (arr).cap) { \
            (arr).cap = (arr).cap ? 2 * (arr).cap : 64; \
            (arr).a = elab_grow((arr).a, sizeof *(arr).a * (size_t)(arr).cap); \
        } \
        (arr).a[(arr).n++] = (val); \
    } while (0)
void *elab_grow(void *p, size_t size);

/* How many data slots probe p takes in an `optimize` objective: a state probe its value's
 * components (1, or a node's 3), a reaction or a contact force its force (3; a reaction's
 * moment is not read), a body's or a joint's none. The slots follow the probes' order. */
int elab_objective_probe_width(const srd_probe *p);
/* A reaction probe's member in a controller or an objective: 0-2 for fx, fy, fz, 3-5 for mx, my,
 * mz (its moment, the last three of its six values); -1 for any other name. */
int elab_reaction_member(const char *m);

/* Builds the model from a parsed program; NULL after reporting errors. */
srd_model *elab_program(Program *prog, Arena *arena, const char *source);
/* The same with run-time param overrides ("name=value", the value with a unit): each
 * replaces its param's default before anything uses it, so materials, sections, loads and
 * gravity that depend on it follow. A bad override is reported as an error. */
srd_model *elab_program_with(Program *prog, Arena *arena, const char *source, const char *const *overrides,
                             int n_overrides);

/* Parses `path` (modules from stdlib_dir) and builds its model with the overrides; NULL
 * after reporting errors, which stay queued for diag_flush. */
srd_model *elab_file(Arena *arena, Program *prog, const char *path, const char *stdlib_dir,
                     const char *const *overrides, int n_overrides);
/* The model's param nearest in spelling to `name` (for a did-you-mean hint), or NULL. */
const char *elab_closest_param(const srd_model *m, const char *name);

/* "name=value unit" for `-p`: value in SI with the param's SI unit, exactly as it reads back. */
void elab_format_override(char *buf, size_t n, const srd_param *p, double value);
/* While on, an `optimize` block needs no `vary` (`srdc grad --objective` states one to derive). */
void elab_objective_only(bool on);

/* Records a run-time expression with the local values in scope; returns its index. */
int elab_remember_expr(Elab *e, Expr *x);
/* Run-time expression `index` of a model built by elaboration. */
static inline const RunExpr *elab_run_expr(const srd_model *m, int index)
{
    return &((const RunExpr *)m->run_exprs)[index];
}

/* ---- evaluator (eval.c) ---- */
Value eval_expr(Elab *e, Expr *x);
/* Reports (once) that elaboration went past ELAB_MAX_WORK, at loc. */
void  elab_over_budget(Elab *e, SrcLoc loc);
/* True when v is a number; otherwise reports why not (unknown name with a hint, ...). */
bool  eval_require_num(Elab *e, Value v, Expr *x);
Value value_error(void);
Value value_num(double v, Dims d);
/* A number from a Dual (param: the param it depends on, kept when x.dep) and component c of a
 * value as a Dual. */
Value value_of_dual(Dual x, Dims d, const char *param);
Dual  value_dual(const Value *v, int c);
/* x's value where no derivative is carried (marks it lost when x had one, elab_value_only). */
double elab_dual_only(Elab *e, Dual x);
/* Notes a switch at g = 0 that g + dg * (the seed's change) reaches within seed_reach. */
void  eval_note_switch(Elab *e, double g, double dg);
/* Component c of v where no derivative is carried: marks the derivative or the dependence lost
 * when it had one. */
double elab_value_only(Elab *e, const Value *v, int c);
Binding *scope_lookup(Elab *e, const char *name);
/* `integral(...)` and `track(...)` (optimize.c): terms of the objective being checked
 * (e->objective), or an error anywhere else. */
Value elab_objective_call(Elab *e, Expr *x);
void scope_bind(Elab *e, const char *name, Value v, SrcLoc loc, int kind);
/* "a length (m)" or "a 3-vector of lengths (m)" */
void value_describe(const Value *v, char *buf, size_t n);
const Decl *elab_find_decl(Elab *e, const char *name);
/* The object or material declared as `name` (the first one), or -1. */
int  elab_find_object(Elab *e, const char *name);
int  elab_find_material(Elab *e, const char *name);
/* Frees the name tables. */
void elab_free_names(Elab *e);
/* Evaluates an energy or force body with its stencil bound (for checking). */
Value eval_user_element(Elab *e, const Stmt *def, const Value *params, int n_params);

/* ---- selections and object members (select.c) ---- */
Value select_member(Elab *e, Value base, Expr *x);
Value select_index(Elab *e, Value base, Expr *x);
Value select_slice(Elab *e, Value base, Expr *x);
Value select_where(Elab *e, Value base, Expr *x);
Value select_over(Elab *e, Value base, Expr *x);
/* The selection as nodes (edges contribute their end nodes, triangles their corners). */
Sel  *select_nodes(Elab *e, Sel *s);
/* Reference position (centroid) of a selection item; s is its arc-length fraction or -1. */
void select_item_position(Elab *e, SelKind k, int item, double p[3]);

#endif
