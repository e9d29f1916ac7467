/* modeshape.h — what a mode shape is (rigid, bending in which plane, torsion, axial) and how
 * large to draw it. Mode shapes come mass-normalised from srd_modes (v . M v = 1). */
#ifndef SRD_MODESHAPE_H
#define SRD_MODESHAPE_H
#include <stddef.h>
#include "srd_model.h"

/* The factor a mass-normalised mode is multiplied by for display: the largest node
 * displacement becomes a tenth of `length` or the largest twist half a radian, whichever
 * comes first. One factor for every DOF keeps the shape (a torsion mode's nodes, which
 * barely move, stay still instead of having their round-off blown up). 0 for a zero mode. */
double srd_mode_display_scale(const srd_model *m, const double *mode, double length);

/* A short name for the mode `mode` (n_dofs, mass-normalised) about the configuration q, of
 * angular frequency w, into out: "rigid" when w is below 1e-5 of w_bound (an upper bound of
 * the model's highest frequency: round-off leaves zero modes near 1e-8 of it); else "torsion"
 * or "axial" when twist, or node motion along the rods' tangents, carries most of the modal
 * mass; else "bending x-z" (the plane of the rods' dominant axis and the dominant direction of
 * the transverse motion; "bending" alone when no direction carries 90 % of it); nodes off rods
 * give "along x|y|z" (or "mixed"). */
void srd_mode_label(const srd_model *m, const double *q, const double *mode, double w, double w_bound, char *out,
                    size_t n);

#endif
