/* team.h — a fixed team of threads that run one function together, meeting at barriers: the
 * explicit lattice integrator's threads (explicit.c). The calling thread is member 0. */
#ifndef SRD_TEAM_H
#define SRD_TEAM_H

typedef struct srd_team srd_team;

/* fn(arg, member, members) */
typedef void (*srd_team_fn)(void *arg, int member, int members);

/* A team of `members` threads (the caller and members - 1 helpers started now); NULL when no
 * helper could be started, and then the caller runs alone (srd_team_members gives 1). */
srd_team *srd_team_new(int members);
void      srd_team_free(srd_team *t);
int       srd_team_members(const srd_team *t);
/* Runs fn on every member at once and returns when all have returned. */
void      srd_team_run(srd_team *t, srd_team_fn fn, void *arg);
/* Waits until every member of the running team has reached it (a no-op alone). */
void      srd_team_barrier(srd_team *t);

#endif
