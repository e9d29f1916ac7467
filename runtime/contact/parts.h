/* parts.h — the parts that touch in contact between a model's parts (runtime/contact/pairs.c):
 * rod and shell edges, nodes, shell triangles and rigid bodies; where they are at a
 * configuration, how far apart two of them are, how far one moves over a step. */
#ifndef SRD_PARTS_H
#define SRD_PARTS_H
#include <stdbool.h>
#include <stddef.h>
#include "srd_model.h"

enum { SRD_PART_EDGE, SRD_PART_NODE, SRD_PART_TRI, SRD_PART_BODY };
/* The pairs that act, by the kinds of their parts (the first part named first). */
enum { SRD_CLASS_NONE = -1, SRD_CLASS_EDGE_EDGE, SRD_CLASS_NODE_TRI, SRD_CLASS_NODE_BODY, SRD_CLASS_EDGE_BODY,
       SRD_CLASSES };

typedef struct srd_parts {
    const srd_model *m;
    const double *axes;   /* the bodies' axes at the step start (9 per body), the sim's */
    int     n;
    int    *kind;         /* SRD_PART_* */
    int    *node;         /* 3 per part: its nodes (an edge's two, a node's one, a body's node) */
    int    *label;        /* the model edge, triangle, node or body: for messages */
    double *radius;       /* contact radius (a body: 0, its surface is its shape) */
    double *bound;        /* a body: the radius of a sphere about its centre that holds it; else 0 */
} srd_parts;

/* The parts of the objects in m's `contact` (nodes only when shells or bodies take part). */
void srd_parts_init(srd_parts *ps, const srd_model *m, const double *axes);
void srd_parts_free(srd_parts *ps);
int  srd_parts_size(const srd_parts *ps, int k);
/* The class of the pair (a, b), a the part named first (SRD_CLASS_NONE: they do not act), and
 * whether a and b share a node (such parts never act on each other). */
int  srd_parts_class(const srd_parts *ps, int a, int b);
bool srd_parts_share_node(const srd_parts *ps, int a, int b);
/* Part k's box at configuration q (n_dofs values), grown by `grow`. */
void srd_parts_box(const srd_parts *ps, const double *q, int k, double grow, double *lo, double *hi);
/* The distance between the pair's parts at q (a named first); from q0 to q1 at fraction tau
 * of the straight path (a body turns by tau of its turn). */
double srd_parts_distance(const srd_parts *ps, const double *q, int a, int b);
double srd_parts_path_distance(const srd_parts *ps, const double *q0, const double *q1, int a, int b, double tau);
/* The farthest any point of part k moves from q0 to q1; with q0 NULL, the largest speed of its
 * points when q1 holds velocities (a body's rotation rates times its bound). */
double srd_parts_move(const srd_parts *ps, const double *q0, const double *q1, int k);
/* "`rope` edge 12", "`sheet` triangle 3", "`sheet` node 7", "body `palm`". */
void   srd_parts_describe(const srd_parts *ps, int k, char *buf, size_t n);

#endif
