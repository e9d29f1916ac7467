/* srd_model.h — the elaborated, flat model: nodes, edges, triangles, DOFs, element instances,
 * boundary conditions, environment and analyses. The compiler fills it; the runtime reads it.
 * All values in SI. All memory is owned by the model and released by srd_model_free. */
#ifndef SRD_MODEL_H
#define SRD_MODEL_H
#include <stdio.h>

enum { SRD_VIEW_EYE = 1, SRD_VIEW_TARGET = 2, SRD_VIEW_UP = 4, SRD_VIEW_FOV = 8, SRD_VIEW_FROM = 16 };
enum { SRD_OBJ_ROD, SRD_OBJ_SHELL, SRD_OBJ_BODY, SRD_OBJ_LATTICE, SRD_OBJ_SOLID };
/* DOF kinds. A rigid body's node carries its centre of mass (x, y, z) and then its rotation
 * (3 ROT DOFs: the Cayley parameters of the body's turn since the step start, see body.h). A
 * constraint instance carries its Lagrange multipliers (LAMBDA DOFs: its reactions). */
enum { SRD_DOF_NODE_X, SRD_DOF_NODE_Y, SRD_DOF_NODE_Z, SRD_DOF_TWIST, SRD_DOF_XI, SRD_DOF_ROT, SRD_DOF_LAMBDA };
enum { SRD_BEND_HINGE, SRD_BEND_MIDEDGE };

typedef struct srd_object {
    char  *name;        /* "finger", "limb[3]" */
    int    kind;        /* SRD_OBJ_* */
    int    n_nodes;     /* nodes created for this object (before joins merged any) */
    int   *nodes;       /* its nodes, model indices after merging */
    int    first_edge, n_edges;
    int    first_tri, n_tris;
    int    closed;      /* rod: a closed loop */
    int    bending;     /* shell: SRD_BEND_* */
    double E, nu, G, rho;
    double area;        /* rod: cross-section area; shell: mid-surface area */
    double I1, I2, J;   /* rod: area moments about the two cross-section axes, polar */
    double radius;      /* rod: for output (equivalent radius) */
    double thickness;   /* shell */
    double length;      /* rod: rest length along the path */
    double mass;        /* rho * volume (body: its mass) */
} srd_object;

/* One kind of element with its instances (stretch, bend_twist, hinge, midedge, or a user energy). */
typedef struct srd_elemset {
    char   *kind;
    int     n;          /* instances */
    int     n_node;     /* nodes per instance */
    int     n_edge;     /* edges per instance */
    int     n_data;     /* per-instance values */
    char  **data_names; /* n_data names */
    int    *nodes;      /* n * n_node */
    int    *edges;      /* n * n_edge */
    signed char *signs; /* n * n_edge: +1 when the edge runs along the stencil's direction */
    double *data;       /* n * n_data */
    int    *object;     /* n: owning object, -1 for junction elements */
    unsigned char *param_column; /* n_data flags, or NULL: the column changes with a run-time
                                    param, so kernels read it even when it is uniform */
    int     dynamic;    /* 1: the runtime finds the instances during a run (contact pairs); the
                           set has none when elaborated */
    int     n_lambda;   /* constraints: multipliers per instance (0 for energies and forces) */
    int    *lambda_dof; /* n: the first of the instance's n_lambda multiplier DOFs */
    int     cap;
} srd_elemset;

/* A rigid body: its node is the centre of mass, its principal axes the columns of `axes` at the
 * reference (world coordinates), its principal moments `inertia` about them. */
enum { SRD_SHAPE_NONE, SRD_SHAPE_BOX, SRD_SHAPE_SPHERE, SRD_SHAPE_CYLINDER, SRD_SHAPE_CAPSULE, SRD_SHAPE_MESH };
typedef struct srd_body {
    int    object;      /* its object (kind SRD_OBJ_BODY) */
    int    node;
    double mass;
    double inertia[3];  /* principal moments of inertia, kg m^2 */
    double axes[9];     /* column k: principal axis k at the reference */
    double omega0[3];   /* initial angular velocity (world) */
    double velocity0[3];/* initial velocity of the centre of mass */
    int    shape;       /* SRD_SHAPE_*: for pictures and contact */
    double size[3];     /* box: edges along the axes; sphere: r; cylinder/capsule: r, length */
    int    n_points;    /* a mesh: its vertices in the body's axes, relative to the centre (contact) */
    double *points;
    int    world;       /* the world as a body (held in full), which joints to `world` join */
} srd_body;

/* An element instance: set and index in it. */
typedef struct srd_part {
    int set, instance;
} srd_part;

/* A `joint`: the constraints that hold its ends together, its motor, and where it is. */
enum { SRD_JOINT_FIXED, SRD_JOINT_REVOLUTE, SRD_JOINT_PRISMATIC, SRD_JOINT_SPHERICAL, SRD_JOINT_UNIVERSAL };
enum { SRD_MOTOR_NONE, SRD_MOTOR_POSITION, SRD_MOTOR_VELOCITY, SRD_MOTOR_EFFORT };
typedef struct srd_joint {
    char    *name;
    int      type;        /* SRD_JOINT_* */
    int      body_a;      /* body, or -1 when end a is a node */
    int      body_b;
    double   at[3], axis[3]; /* at the reference */
    int      n_parts;
    srd_part part[4];     /* its constraint instances */
    int      motor;       /* SRD_MOTOR_* */
    srd_part motor_part;  /* set -1: none */
} srd_joint;

/* Contact between the model's own parts (`contact self`, or `contact a, b { ... }` for some of
 * them): every edge of the rods and shells that take part against every other such edge that
 * shares no node with it; with shells, every node of those objects against every shell triangle
 * it is not a corner of; with rigid bodies, every node against every body (and every edge
 * against every capsule or sphere). The runtime finds the pairs within reach each step and
 * fills the dynamic element sets of std.contact listed in `set` (-1: none in this model). */
enum {
    SRD_PAIR_EDGE,                /* edge_contact */
    SRD_PAIR_EDGE_FRICTION,       /* edge_friction: four instances a pair, one per node */
    SRD_PAIR_TRI,                 /* node_triangle_contact */
    SRD_PAIR_TRI_FRICTION,        /* node_triangle_friction: four a pair */
    SRD_PAIR_BODY,                /* node_body_contact */
    SRD_PAIR_BODY_FRICTION,       /* node_body_friction (the node's side) */
    SRD_PAIR_BODY_FRICTION_BODY,  /* body_node_friction (the body's side) */
    SRD_PAIR_EDGE_BODY,           /* edge_body_contact */
    SRD_PAIR_EDGE_BODY_FRICTION,  /* edge_body_friction: two a pair, one per node */
    SRD_PAIR_EDGE_BODY_FRICTION_BODY, /* edge_body_friction_on_body */
    SRD_PAIR_SETS
};
typedef struct srd_self_contact {
    int     present;
    int     n_objects;
    int    *objects;      /* the objects that take part (rods, shells, rigid bodies) */
    double  stiffness, delta, friction, slip_velocity;
    double  radius;       /* the contact radius given, or 0: a rod's radius, half a shell's thickness */
    int     set[SRD_PAIR_SETS];
} srd_self_contact;

typedef struct srd_param {
    char  *name;
    double value;       /* default, SI */
    char  *unit;        /* SI unit text, "Pa" */
    signed char dims[4];/* exponents of length, mass, time, temperature */
    double lo, hi;      /* declared range, or -inf/inf */
    int    shapes;      /* sets the discretisation (nodes, spacing, mesh, bending): a new value
                           means a new model, not new inputs to the same kernels */
    int    input;       /* 1: an `input`, a signal set while the model runs (by its `control`
                           block or a library user writing srd_sim.params[k]); 0: a param */
} srd_param;

typedef struct srd_load {
    int    node;
    double f[3];        /* value at the reference (t = 0, default params) */
    int    expr;        /* index of the run-time expression for the compiler, or -1 */
} srd_load;

typedef struct srd_actuation {
    char  *target;      /* curvature, twist, rest_length, E, angle */
    int    set;         /* element set it acts on */
    int    n;           /* instances targeted */
    int   *instances;
    double *s;          /* arc-length fraction per instance (or 0) */
    int    expr;        /* run-time expression index */
} srd_actuation;

/* A rigid obstacle. Its pose may change with time: then `expr` holds the run-time expressions
 * (-1: constant) and the values here are those at t = 0. A moving or turned obstacle's elements
 * are `moving_<shape>_contact` and `moving_<shape>_friction`, whose pose columns (and their
 * step-start copies, named with a trailing 0) schedules rewrite each step; a plane's are
 * `plane_contact` and `plane_friction`, moving or not. */
enum { SRD_OBSTACLE_CENTER, SRD_OBSTACLE_AXIS, SRD_OBSTACLE_ANGLE, SRD_OBSTACLE_SPIN, SRD_OBSTACLE_N_EXPR };
typedef struct srd_obstacle {
    char  *shape;       /* sphere, box, cylinder, plane */
    char  *name;        /* as declared, or NULL */
    double center[3], size[3], radius;   /* plane: center is its point */
    double axis[3];     /* cylinder: unit axis; box: the axis `angle` turns it about; plane: unit normal */
    double length;      /* cylinder: between the flat caps; 0 for an endless one */
    double angle;       /* box: its turn about axis (rad) */
    double spin;        /* cylinder: angular velocity about its own axis (1/s), seen by friction */
    double stiffness, delta, friction, slip_velocity;
    int    moving;      /* its elements are the moving_ kinds (pose in run-time columns) */
    int    expr[SRD_OBSTACLE_N_EXPR]; /* run-time expressions of the pose, or -1 */
} srd_obstacle;

/* What a probe records: a DOF or node position; the reaction (force and moment) the
 * constraints exert on a region; the contact force of the ground or an obstacle. */
enum { SRD_PROBE_STATE, SRD_PROBE_REACTION, SRD_PROBE_CONTACT, SRD_PROBE_BODY, SRD_PROBE_JOINT };
/* What a body or joint probe records (its `component`): a body's angular momentum and angular
 * velocity (world), its axis k (SRD_BODY_AXIS + k); a joint's force and torque on its body b
 * (torque about the joint's point), its motor's torque or force. */
enum { SRD_BODY_MOMENTUM, SRD_BODY_OMEGA, SRD_BODY_AXIS };
enum { SRD_JOINT_FORCE, SRD_JOINT_TORQUE, SRD_JOINT_MOTOR };

typedef struct srd_probe {
    char  *name;
    int    kind;        /* SRD_PROBE_* */
    int    dof;         /* DOF probed, or -1 for a node vector */
    int    node;        /* state: the node; reaction: the point moments are taken about */
    int    component;   /* 0..2 or -1 for the full vector */
    double every;
    int    n_nodes;     /* reaction: the constrained region (nodes and the edges between them) */
    int   *nodes;
    int    target;      /* contact: -1 the ground, k obstacle k; body and joint probes: the body or joint */
    char  *target_name; /* contact: "ground" or the obstacle's name, as written */
} srd_probe;

/* Prescribed motion: the DOFs of `nodes` (and the twists of `edges`) are constraints whose
 * values follow run-time expression `expr`: a displacement from the reference (move), or a
 * rotation by an angle about `axis` through `center` (rotate). */
enum { SRD_MOTION_MOVE, SRD_MOTION_ROTATE };

/* `release sel at T;`: from time T on, a simulation treats these constrained DOFs as free
 * (clamps, fixes and motions of the region stop holding them). */
typedef struct srd_release {
    double time;
    int    n_dofs;
    int   *dofs;
} srd_release;

typedef struct srd_motion {
    int    kind;        /* SRD_MOTION_* */
    int    expr;        /* run-time expression: displacement (3-vector) or angle */
    int    n_nodes;
    int   *nodes;
    int    n_edges;     /* rotate: rod edges inside the region, whose frames turn with it */
    int   *edges;
    double axis[3], center[3];
} srd_motion;

/* Limits of the integer settings of analyses, checked where they are read (the front end for
 * the model's values, the run options for --dt and --duration). Each is far above any useful
 * value and keeps counts well inside an int. */
#define SRD_MAX_TIME_STEPS        1000000000 /* duration / dt of a simulation */
#define SRD_MAX_NEWTON_ITERATIONS 100000     /* max_iterations per step or load step */
#define SRD_MAX_LOAD_STEPS        10000000   /* load_steps of a static analysis */

typedef struct srd_analysis {
    int    present;
    char  *method;      /* implicit_euler, implicit_midpoint, newmark, euler, verlet, rk4, static, modes */
    char  *start;       /* simulate: reference (NULL) or equilibrium, the static block's result */
    double dt, duration, tolerance;
    int    dt_line, dt_col; /* where the file sets dt (for messages about it), or 0 */
    int    max_iterations;
    int    line_search;
    char  *solver;      /* auto, dense, banded */
    int    load_steps;
    int    mode_count;
    char  *output_format, *output_name;
    double output_every;
    int    output_binary; /* vtk: arrays as appended raw binary */
    int    n_probes;
    srd_probe *probes;
} srd_analysis;

/* A `control every P { ... }` block: a sampled-data controller run before the step that starts
 * at each multiple of `period`. It works on one array of values: its vars (state kept between
 * samples, starting at `init`), its lets, the probe values it reads and its period, each a
 * named slot. Its
 * steps run in order; each evaluates run-time expression `expr` (n components) into a slot or
 * into input `param`. */
enum { SRD_CONTROL_VAR, SRD_CONTROL_LET, SRD_CONTROL_PROBE, SRD_CONTROL_PERIOD };
typedef struct srd_control_slot {
    char  *name;
    int    kind;        /* SRD_CONTROL_* */
    int    first, n;    /* its values in the data array */
    int    probe;       /* SRD_CONTROL_PROBE: index into simulate.probes */
} srd_control_slot;

typedef struct srd_control_step {
    int    slot;        /* the slot it writes, or -1 */
    int    param;       /* the input it writes, or -1 */
    int    n;           /* components */
    int    expr;        /* run-time expression (compiled as a schedule kernel) */
} srd_control_step;

typedef struct srd_control {
    int     present;
    double  period;
    int     n_data;
    double *init;       /* n_data: the vars' initial values, 0 elsewhere */
    int     n_slots;
    srd_control_slot *slots;
    int     n_steps;
    srd_control_step *steps;
} srd_control;

/* A term of an objective that reads more than the analysis's final probe values (optimize.c):
 *   SRD_TERM_INTEGRAL     integral(g): the trapezoidal sum over the simulation's steps of g, a
 *                         run-time expression of the probes at the step, t and the params;
 *   SRD_TERM_TRACK_TIME   track(h, "file.csv"): the sum over the file's rows (t_i, y_i) of
 *                         (h(t_i) - y_i)^2, the probes interpolated linearly between steps;
 *   SRD_TERM_TRACK_CURVE  track(rod.z, "file.csv"): the sum over the rows (s_i, y_i) of
 *                         (z(s_i) - y_i)^2, z interpolated linearly between the rod's nodes at
 *                         their reference arc-length fractions, in the final configuration. */
enum { SRD_TERM_INTEGRAL, SRD_TERM_TRACK_TIME, SRD_TERM_TRACK_CURVE };

typedef struct srd_objective_term {
    int     kind;             /* SRD_TERM_* */
    int     call;             /* run-time expression of the call itself (the compiler's handle) */
    int     expr;             /* run-time expression of g or h (-1 for a curve) */
    int     n_rows;
    double *x, *y;            /* track: the file's times (s) or arc-length fractions, and values (SI) */
    int     object;           /* curve: the rod */
    int     component;        /* curve: 0..2 */
    double *s;                /* curve: the arc-length fraction of each of the rod's nodes */
} srd_objective_term;

/* An `optimize` block: minimise `objective` (a run-time expression of the probes of
 * srd_objective_analysis, the params and the terms' values) over the params `vary`, each within
 * its declared range, with NLopt. */
typedef struct srd_optimize {
    int     present;
    int     objective;        /* run-time expression index */
    int     n_terms;
    srd_objective_term *terms;
    int     n_vary;
    int    *vary;             /* param indices */
    char   *method;           /* lbfgs, mma, slsqp (with gradients) or bobyqa (without) */
    double  tolerance;        /* relative change of the objective that ends the search */
    int     max_evaluations;
} srd_optimize;

typedef struct srd_model {
    char   *source;          /* path of the .srd file */
    int     planar;

    int     n_objects;
    srd_object *objects;

    int     n_nodes;
    double *x0;              /* 3 * n_nodes, reference positions */
    double *node_mass;
    int    *node_object;     /* the object that created the node (first one when merged) */
    int    *node_local;      /* its index within that object */

    int     n_bodies;        /* rigid bodies (a point-mass body has none) */
    srd_body *bodies;
    int    *node_body;       /* n_nodes: the rigid body a node is the centre of, or -1 */
    int     n_joints;
    srd_joint *joints;

    int     n_edges;
    int    *edge_nodes;      /* 2 * n_edges */
    int    *edge_object;
    double *edge_rest;       /* rest length */
    int    *edge_twist;      /* DOF index of the twist angle, or -1 */
    int    *edge_xi;         /* DOF index of the mid-edge xi, or -1 */
    int    *edge_is_rod;

    int     n_tris;
    int    *tri_nodes;       /* 3 * n_tris */
    int    *tri_edges;       /* 3 * n_tris: edge opposite node k */
    signed char *tri_edge_sign; /* +1 when the edge runs along the triangle's orientation */
    int    *tri_object;

    int     n_dofs;
    int    *node_dof;        /* first of the node's 3 DOFs (x, y, z consecutive) */
    int    *dof_kind;        /* SRD_DOF_* */
    int    *dof_owner;       /* node (x/y/z) or edge (twist/xi) index */
    double *dof_mass;
    unsigned char *dof_fixed;
    int     n_fixed;
    /* Slides: a clamped rod end holds its end node and its end edge's direction, so the edge's
     * other node moves along that line only (the edge stretches like any other). */
    int     n_slides;
    int    *slide_node;      /* the node that slides */
    int    *slide_anchor;    /* the clamped end node the line goes through */
    double *slide_axis;      /* 3 * n_slides: the line's unit direction at the reference */
    int     bandwidth_natural; /* half-bandwidth in declaration order */
    int     bandwidth;         /* after the bandwidth-reducing ordering */

    int     n_sets;
    srd_elemset *sets;

    int     n_params;
    srd_param *params;

    int     n_loads;
    srd_load *loads;
    int     n_actuations;
    srd_actuation *actuations;
    int     n_motions;
    srd_motion *motions;
    int     n_releases;
    srd_release *releases;

    /* environment */
    double  gravity[3];
    int     has_gravity;
    double  medium_density;       /* 0: none */
    double  viscous_eta;          /* 0: none */
    double  damping_alpha, damping_beta;
    int     has_rft;   double rft_ct, rft_cn;
    int     has_drag;  double drag_cd, drag_density;
    int     has_ground;
    double  ground_normal[3], ground_point[3];
    double  ground_stiffness, ground_delta, ground_friction, ground_slip_velocity;
    int     ground_height_expr;   /* run-time expression of z = f(x, y), or -1 */
    /* The compiler's table of run-time expressions (loads that change with time, actuation
     * values, ground height), opaque to the runtime; owned by the compiler's arena. */
    const void *run_exprs;
    int     n_run_exprs;
    int     n_obstacles;
    srd_obstacle *obstacles;
    srd_self_contact self_contact;

    /* The camera of pictures (`view` block): what is given, by SRD_VIEW_* bits. */
    unsigned view_given;
    double   view_eye[3], view_target[3], view_up[3], view_fov;
    int      view_from;       /* 1 front, 2 side, 3 top, 4 iso (as srdc render --view) */

    srd_analysis simulate, statics, modes;
    srd_control  control;
    srd_optimize optimize;
} srd_model;

srd_model *srd_model_new(void);
void       srd_model_free(srd_model *m);

/* Element sets: find or create by kind, then append instances. */
int  srd_model_elemset(srd_model *m, const char *kind, int n_node, int n_edge, int n_data,
                       const char *const *data_names);
/* Index of the data column called `name`, or -1. */
int  srd_elemset_column(const srd_elemset *s, const char *name);
/* 1 when every instance has the same value in data column c and no param can change it. */
int  srd_elemset_uniform(const srd_elemset *s, int c);
int  srd_elemset_add(srd_elemset *s, const int *nodes, const int *edges, const signed char *signs,
                     const double *data, int object);
int  srd_model_add_object(srd_model *m, const srd_object *o);

double srd_model_total_mass(const srd_model *m);
/* The analysis whose probes an `optimize` objective reads: the simulation (its final values)
 * when the model has one, else the static equilibrium. */
const srd_analysis *srd_objective_analysis(const srd_model *m);
/* The rigid body of object o (a `body` with a shape or an inertia), or -1 (a point mass, or
 * another kind of object). */
int    srd_model_body_of(const srd_model *m, int o);
/* The contact radius of object o's edges under `contact self`: the one given, else a rod's
 * radius or half a shell's thickness. */
double srd_contact_radius(const srd_model *m, int o);
/* "rod finger, node 37, z" — for numerical-failure reports. */
void   srd_model_describe_dof(const srd_model *m, int dof, char *buf, size_t n);

void srd_model_print(const srd_model *m, FILE *out);
void srd_model_print_json(const srd_model *m, FILE *out);
/* Every element instance with its stencil (nodes, signed edges) and data. */
void srd_model_print_elements(const srd_model *m, FILE *out);

#endif
