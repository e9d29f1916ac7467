/* solid_stress.h — output-side stress and strain of the tetrahedra of solids (std.solids). */
#ifndef SRD_SOLID_STRESS_H
#define SRD_SOLID_STRESS_H
#include "srd_model.h"

enum { SRD_TET_NEO_HOOKEAN, SRD_TET_STVK, SRD_TET_LINEAR };

/* SRD_TET_* of an element set of std.solids, or -1 for any other set. */
int srd_tet_kind(const srd_elemset *set);
/* Cauchy stress and Green strain (row-major 3x3) of instance i of a std.solids set at state q. */
void srd_tet_stress(const srd_model *m, const srd_elemset *set, int i, const double *q, double sigma[9],
                    double green[9]);
/* The von Mises equivalent of a symmetric stress. */
double srd_von_mises(const double s[9]);

#endif
