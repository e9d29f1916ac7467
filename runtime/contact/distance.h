/* distance.h — distances between the parts of contact (segments, points, triangles), by the same
 * closest-point regions as std.contact's segment_params and triangle_params: what the runtime
 * measures to find pairs, check steps and report overlaps. */
#ifndef SRD_DISTANCE_H
#define SRD_DISTANCE_H

/* Between segments a0-a1 and b0-b1. */
double srd_segment_distance(const double *a0, const double *a1, const double *b0, const double *b1);
/* Between point p and triangle a b c. */
double srd_point_triangle_distance(const double *p, const double *a, const double *b, const double *c);
/* From point p, in a body's axes, to the surface of its shape (SRD_SHAPE_BOX, SPHERE, CAPSULE,
 * CYLINDER, with srd_body's size: a box's edges, else radius and length along the z axis):
 * negative inside, as std.contact's shape_gap. */
double srd_shape_gap(const double *p, int shape, const double *size);

#endif
