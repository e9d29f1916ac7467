/* contact.h — contact statistics of a run: how many nodes are within the contact distance of
 * the ground or an obstacle, and how deep the deepest one is, for the run summary. */
#ifndef SRD_CONTACT_H
#define SRD_CONTACT_H
#include "srd_kernel.h"
#include "srd_model.h"

typedef struct srd_contact_stats {
    int           has_contact;   /* the model has a ground or sphere obstacles */
    srd_kernel_fn height;        /* uneven ground: the generated height z = h(x, y), or NULL */
    srd_elem_batch batch;        /* the height kernel's batch over every node */
    int32_t      *res;
    double       *data, *out;
    int           active_now, active_max;
    double        active_max_t;
    double        deepest, deepest_t; /* largest penetration below a surface (m), and when */
    double        samples, active_sum;
    srd_obstacle *posed;         /* the obstacles with their current pose (shapes and names the
                                    model's): the caller updates moving ones before sampling */
} srd_contact_stats;

/* height may be NULL (flat or inclined ground, spheres only). */
void srd_contact_stats_init(srd_contact_stats *c, const srd_model *m, srd_kernel_fn height);
/* Measures the gaps at configuration q (DOF vector) and time t. */
void srd_contact_stats_sample(srd_contact_stats *c, const srd_model *m, const double *q, const double *params,
                              double t);
void srd_contact_stats_free(srd_contact_stats *c);

#endif
