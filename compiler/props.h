/* props.h — what each block accepts: property names, shapes, dimensions, requirements. */
#ifndef SRD_PROPS_H
#define SRD_PROPS_H
#include <stdbool.h>
#include "ast.h"

typedef enum {
    P_NUM,      /* a number or vector with a dimension */
    P_INT,      /* a positive integer known when the model is built */
    P_WORD,     /* one of `words` */
    P_MATERIAL, /* a material name */
    P_PATH,     /* line(...), polyline(...), arc(...), circle(...), helix(...) */
    P_MESH,     /* rectangle(...), hexagon(...), disc(...), obj(...), dismech(...) */
    P_SECTION,  /* circular(r), elliptic(a, b), rectangular(w, h) */
    P_SOLID,    /* box(...), cylinder(...), sphere(...): a lattice's body */
    P_TETMESH,  /* box(...), cylinder(...), gmsh(...), tetgen(...), filled(...): a solid's mesh */
    P_HEIGHT,   /* an expression of x and y giving a height */
    P_REF,      /* a rigid body, a single node (finger.start) or `world`: a joint's end */
    P_TIMED,    /* a number of any dimension that may change with time t (a motor's target) */
} PropShape;

typedef struct PropSpec {
    BlockKind   block;
    const char *name;
    PropShape   shape;
    int         n;          /* P_NUM components */
    signed char l, m, t, k; /* P_NUM dimension */
    bool        required;
    bool        runtime_ok; /* may depend on a run-time param */
    const char *words;      /* P_WORD: space-separated choices */
    const char *doc;
    bool        discrete;   /* sets the discretisation: may depend on a param, and the model is
                               then elaborated again for each value (run, sweep) */
    bool        timed;      /* P_NUM that may be an expression of time t (a moving obstacle's pose) */
} PropSpec;

const PropSpec *props_find(BlockKind b, const char *name);
/* All properties of a block, for hints and documentation. */
int props_list(BlockKind b, const PropSpec **out, int max);
Dims props_dims(const PropSpec *p);

#endif
