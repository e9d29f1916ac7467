/* team.c — the thread team of team.h: helpers wait on a condition variable for the next job
 * (a generation count), run it, and meet the caller at a pthread barrier at its end. Barriers
 * block rather than spin: the machines this runs on are shared. */
#include "team.h"
#include <pthread.h>
#include <stdlib.h>

typedef struct Member {
    struct srd_team *team;
    int              index;
    pthread_t        thread;
} Member;

struct srd_team {
    int               members;
    Member           *helpers;        /* members - 1 */
    pthread_mutex_t   mu;
    pthread_cond_t    go;
    pthread_barrier_t barrier;
    unsigned          generation;
    int               quit;
    srd_team_fn       fn;
    void             *arg;
};

/* Waits for a new generation (or quit); returns 0 to quit. */
static int await_job(Member *me, unsigned *seen)
{
    srd_team *t = me->team;
    pthread_mutex_lock(&t->mu);
    while (*seen == t->generation && !t->quit)
        pthread_cond_wait(&t->go, &t->mu);
    int go = !t->quit;
    *seen = t->generation;
    pthread_mutex_unlock(&t->mu);
    return go;
}

static void *member_main(void *arg)
{
    Member *me = arg;
    unsigned seen = 0;
    while (await_job(me, &seen)) {
        me->team->fn(me->team->arg, me->index, me->team->members);
        pthread_barrier_wait(&me->team->barrier);
    }
    return NULL;
}

/* Stops and joins the first n helpers. */
static void stop_helpers(srd_team *t, int n)
{
    pthread_mutex_lock(&t->mu);
    t->quit = 1;
    pthread_cond_broadcast(&t->go);
    pthread_mutex_unlock(&t->mu);
    for (int k = 0; k < n; k++)
        pthread_join(t->helpers[k].thread, NULL);
}

srd_team *srd_team_new(int members)
{
    srd_team *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->members = members > 1 ? members : 1;
    t->helpers = calloc((size_t)t->members, sizeof *t->helpers);
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->go, NULL);
    pthread_barrier_init(&t->barrier, NULL, (unsigned)t->members);
    for (int k = 0; k + 1 < t->members; k++) {
        t->helpers[k] = (Member){ t, k + 1, 0 };
        if (pthread_create(&t->helpers[k].thread, NULL, member_main, &t->helpers[k]) != 0) {
            stop_helpers(t, k);
            t->quit = 0;
            t->members = 1; /* the caller alone: the barrier is never waited on */
            break;
        }
    }
    return t;
}

void srd_team_free(srd_team *t)
{
    if (!t)
        return;
    stop_helpers(t, t->members - 1);
    pthread_barrier_destroy(&t->barrier);
    pthread_cond_destroy(&t->go);
    pthread_mutex_destroy(&t->mu);
    free(t->helpers);
    free(t);
}

int srd_team_members(const srd_team *t) { return t ? t->members : 1; }

void srd_team_run(srd_team *t, srd_team_fn fn, void *arg)
{
    if (!t || t->members == 1) {
        fn(arg, 0, 1);
        return;
    }
    pthread_mutex_lock(&t->mu);
    t->fn = fn;
    t->arg = arg;
    t->generation++;
    pthread_cond_broadcast(&t->go);
    pthread_mutex_unlock(&t->mu);
    fn(arg, 0, t->members);
    pthread_barrier_wait(&t->barrier);
}

void srd_team_barrier(srd_team *t)
{
    if (t && t->members > 1)
        pthread_barrier_wait(&t->barrier);
}
