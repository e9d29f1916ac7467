/* natural.h — natural curvature, twist and hinge angle taken from the reference configuration
 * for element instances flagged `natural_from_reference` (stress-free reference shapes). */
#ifndef SRD_NATURAL_H
#define SRD_NATURAL_H
#include "srd_model.h"

/* Overwrites the natural-shape columns of the flagged rows of `data` (a copy of set s's data):
 * bend-twist rows get kappa1_bar, kappa2_bar (1/m) and tau_bar (1/m) measured with the initial
 * directors d1 (3 per edge, edge orientation) and initial reference twists (one per instance);
 * hinge rows get phi_bar. */
void srd_natural_shape(const srd_model *m, const srd_elemset *s, double *data, const double *d1,
                       const double *ref_twist);

#endif
