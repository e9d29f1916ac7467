/* pairs.h — contact between the model's own parts (`contact self`): finding the pairs of edges
 * within reach (a spatial hash over the edges' boxes, with a margin for the step's motion),
 * filling the dynamic element sets that act on them, the new couplings in the solver's pattern,
 * and, after each step, the checks that no pair was missed or passed through another. */
#ifndef SRD_PAIRS_H
#define SRD_PAIRS_H
#include <stdbool.h>
#include <stdio.h>

struct srd_sim;
typedef struct srd_pairs srd_pairs;

/* What srd_pairs_check finds after a solve. */
enum {
    SRD_PAIRS_OK,      /* every pair within reach was among the candidates, none crossed */
    SRD_PAIRS_MISSED,  /* a node moved farther than the margin covers: find the pairs again */
    SRD_PAIRS_CROSSED, /* two edges would pass through each other on the way: cut the step */
};

/* The pairs of s's model, or NULL when it has no `contact`. */
srd_pairs *srd_pairs_new(const struct srd_sim *s);
void       srd_pairs_free(srd_pairs *p);
/* Begins a solve from configuration q_start (the start of the step or load step, n_dofs
 * values) with s->q its first guess: finds the candidate pairs at q_start within reach of the
 * contact plus the margin, puts them into the contact sets' batches (and their couplings into a
 * sparse Jacobian's pattern), and keeps the guess. dt: the step (0 in statics). */
void srd_pairs_begin(struct srd_sim *s, const double *q_start, double dt);
/* After srd_pairs_check said MISSED: the pairs found again at the same start with the margin it
 * widened, and s->q back at the first guess. */
void srd_pairs_retry(struct srd_sim *s, double dt);
/* After a converged solve ending at q: SRD_PAIRS_*. MISSED widens the margin for
 * srd_pairs_retry. */
int  srd_pairs_check(struct srd_sim *s, const double *q);
/* The candidates the batches hold now: their number, and 2 parts a pair in *pairs (grouped
 * by class; valid until the next fill). To linearise a step again later (sensitivities). */
int  srd_pairs_held(const srd_pairs *p, const int **pairs);
/* Puts n pairs (as srd_pairs_held gave them) into the batches: the candidates of a step taken
 * earlier, for its Jacobian and the kernels' tangents. */
void srd_pairs_hold(struct srd_sim *s, const int *pairs, int n);
/* The model objects of the two parts whose contact instance i of the contact pairs' set `kind`
 * (SRD_PAIR_*) stands for, among the pairs the batches hold (-1 for a rigid body, whose contact
 * radius is its shape); false when the set has no such instance. For the sensitivities, which
 * move the instance's contact thickness with the two objects' contact radii. */
bool srd_pairs_instance_objects(const srd_pairs *p, int kind, int i, int *a, int *b);
/* A checkpoint's part (checkpoint.c): the pairs held now and the margin's memory; load holds
 * them again. False when a write failed, or the file is short or names parts this model lacks. */
bool srd_pairs_save(const srd_pairs *p, FILE *f);
bool srd_pairs_load(struct srd_sim *s, FILE *f);
/* The sparse pattern was planned anew (a release): every coupling is to be added again. */
void srd_pairs_forget_couplings(srd_pairs *p);
/* Statistics of an accepted state at time t: the pairs in contact (their gap below delta, where
 * the penalty carries load) and the deepest overlap (contact thickness less the distance). */
void srd_pairs_sample(srd_pairs *p, const double *q, double t);
/* The summary line(s) of a run. */
void srd_pairs_print_summary(const srd_pairs *p, FILE *out);
/* The first time two edges overlapped by more than half their contact thickness, written as a
 * warning into buf (empty when it never happened). */
void srd_pairs_overlap_warning(const srd_pairs *p, char *buf, size_t n);

#endif
