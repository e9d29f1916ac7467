/* watch.h — measures a run's state against the range where the model means something: the
 * strain of linear-elastic springs, and the time step of explicit methods against the highest
 * natural frequency. The driver turns the figures into warnings. */
#ifndef SRD_WATCH_H
#define SRD_WATCH_H
#include "sim.h"

/* Strain beyond which a linear-elastic spring (energy 1/2 ks eps^2 l) is warned about: Hooke's
 * law is a small-strain model; at 20 % it differs from the common hyperelastic laws (neo-Hookean,
 * Mooney-Rivlin) by tens of percent, and no elastomer's modulus is constant that far. */
#define SRD_STRAIN_LIMIT 0.2

typedef struct srd_strain {
    double strain; /* largest |l / l0 - 1| of a stretching spring (rod and shell edges) */
    int    object; /* its object, or -1 when the model has none */
} srd_strain;

/* The largest strain of any stretching spring at the configuration q, measured against the
 * rest lengths in force (actuated ones included). */
srd_strain srd_max_strain(const srd_sim *s, const double *q);

/* An upper bound of the highest natural frequency (rad/s) of the free DOFs with mass at the
 * current configuration: Gershgorin's bound on M^-1/2 K M^-1/2 (K the stiffness, the Hessian of
 * the energy, assembled here), max_i sum_j |K_ij| / sqrt(m_i m_j). Never below the true value,
 * and close to it for chains and lattices whose stiffest mode is a zigzag of neighbours. 0 when
 * nothing has both mass and stiffness. */
double srd_max_frequency_bound(srd_sim *s);

/* The largest stable time step of an explicit method on an undamped linear system whose highest
 * angular frequency is w: 2 / w for symplectic Euler and Verlet, 2 sqrt(2) / w for RK4 (where
 * its stability region crosses the imaginary axis); 0 for implicit methods (no limit). */
double srd_stable_dt(srd_method method, double w);

#endif
