/* elab.h — elaboration: runs the checked program (loops, lets, declarations) and builds the
 * flat srd_model. Also the evaluator's view of the model under construction. */
#ifndef SRD_ELAB_H
#define SRD_ELAB_H
#include <stdbool.h>
#include "ast.h"
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
    Binding    *next;
};
enum { BIND_LET, BIND_PARAM, BIND_LOOP, BIND_ARG, BIND_BUILTIN };

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
    double      E, nu, G, rho, area, I1, I2, J, radius, thickness, length, mass;
    double      EA, EI1, EI2, GJ;   /* rods: stiffnesses (defaults from the section, or given) */
    double      kappa_bar[2], tau_bar, phi_bar;
    bool        natural_given; /* curvature/twist (rods) or angle (shells) given: else stress-free reference */
    double     *s;        /* rods: arc-length fraction per node */
} ElabObj;

typedef struct ElabMaterial {
    const char *name;
    SrcLoc      loc;
    double      E, nu, rho;
    bool        has_E, has_nu, has_rho;
    const char *runtime_param;
} ElabMaterial;

typedef struct Decl {         /* fn, energy, force */
    Stmt *stmt;
    bool  recursive;          /* reported by the recursion check: calls stay quiet */
} Decl;

/* Statements whose effect is resolved once joins are merged and elements exist. */
typedef struct PendingLoad {
    int    node;
    double f[3];
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
    double     *data;    /* parameter values */
} PendingApply;

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
 * edge's first / second node, and the edge's direction stands for the tangent there. */
enum { EDGE_WALL_AT_FIRST = 4, EDGE_WALL_AT_SECOND = 8 };

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
    DARRAY(ClampRecord) clamps;
    DARRAY(PendingMotion) motions;
    DARRAY(PendingRelease) releases;
    DARRAY(double) body_mass; /* per node: point masses of bodies */
    DARRAY(int) tri_edge;     /* 3 per tri: the edge opposite each corner */
    int      seen[BK_COUNT];  /* environment blocks already given */
    SrcLoc   gravity_loc;
    const char *const *overrides;   /* -p name=value */
    int      n_overrides;
    bool    *override_used;
    SrcLoc   probe_locs[3][256]; /* per analysis block kind */

    /* user-applied elements: appended to model element sets at the end */
    const Stmt *fn_stack[64];
    int         fn_depth;
    int         errors_at_start;
} Elab;

#define DPUSH(arr, val) do { \
        if ((arr).n == (arr).cap) { \
            (arr).cap = (arr).cap ? 2 * (arr).cap : 64; \
            (arr).a = elab_grow((arr).a, sizeof *(arr).a * (size_t)(arr).cap); \
        } \
        (arr).a[(arr).n++] = (val); \
    } while (0)
void *elab_grow(void *p, size_t size);

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

/* Records a run-time expression with the local values in scope; returns its index. */
int elab_remember_expr(Elab *e, Expr *x);
/* Run-time expression `index` of a model built by elaboration. */
static inline const RunExpr *elab_run_expr(const srd_model *m, int index)
{
    return &((const RunExpr *)m->run_exprs)[index];
}

/* ---- evaluator (eval.c) ---- */
Value eval_expr(Elab *e, Expr *x);
/* True when v is a number; otherwise reports why not (unknown name with a hint, ...). */
bool  eval_require_num(Elab *e, Value v, Expr *x);
Value value_error(void);
Value value_num(double v, Dims d);
Binding *scope_lookup(Elab *e, const char *name);
void scope_bind(Elab *e, const char *name, Value v, SrcLoc loc, int kind);
/* "a length (m)" or "a 3-vector of lengths (m)" */
void value_describe(const Value *v, char *buf, size_t n);
const Decl *elab_find_decl(Elab *e, const char *name);
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
