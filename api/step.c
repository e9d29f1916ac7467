/* step.c — time in the C API: steps of the simulate block's method, resets, and many instances
 * stepped at once on threads. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>
#include "alloc.h"
#include "instance.h"
#include "report.h"

/* Halvings of a failing implicit step before it is given up, as in `srdc run`. */
enum { MAX_HALVINGS = 6 };

srd_status srd_reset(srd_instance *inst)
{
    API_CHECK(inst);
    return api_start(inst);
}

static srd_status refuse_failed(srd_instance *inst)
{
    return api_fail(inst, SRD_ERR_STATE,
                    "the instance failed at t = %.6g s and keeps the state of its last good step\n"
                    "hint: srd_reset (Model.reset() in Python) starts it again; the failure was:\n%s",
                    inst->s.t, inst->message ? inst->message : "");
}

/* Says when and where a step failed, and what to try; the instance stays failed. */
static srd_status report_failure(srd_instance *inst, int code)
{
    char *buf;
    size_t len;
    FILE *f = api_stream_open(&buf, &len);
    if (f)
        srd_report_step_failure(f, "srd", &inst->s, inst->method, code);
    inst->failed = true;
    return api_fail_text(inst, SRD_ERR_NUMERIC, api_stream_text(f, &buf, &len));
}

static srd_status take_steps(srd_instance *inst, long n)
{
    if (inst->failed)
        return refuse_failed(inst);
    api_views_to_state(inst);
    srd_status st = SRD_OK;
    for (long k = 0; k < n && st == SRD_OK; k++) {
        int code = srd_step(&inst->s, inst->method, MAX_HALVINGS);
        if (code)
            st = report_failure(inst, code);
    }
    api_views_from_state(inst);
    return st;
}

srd_status srd_run_steps(srd_instance *inst, int n)
{
    API_CHECK(inst);
    if (n < 0)
        return api_fail(inst, SRD_ERR_ARGUMENT, "cannot take %d steps", n);
    return take_steps(inst, n);
}

srd_status srd_run_until(srd_instance *inst, double t)
{
    API_CHECK(inst);
    if (!isfinite(t))
        return api_fail(inst, SRD_ERR_ARGUMENT, "cannot advance to t = %g s", t);
    double left = (t - inst->s.t) / inst->s.dt;
    if (left > 2e9)
        return api_fail(inst, SRD_ERR_ARGUMENT, "advancing to t = %g s takes %.3g steps of %g s, too many", t, left,
                        inst->s.dt);
    long n = left > 1e-9 ? (long)ceil(left - 1e-9) : 0;
    return take_steps(inst, n);
}

srd_status srd_set_dt(srd_instance *inst, double dt)
{
    API_CHECK(inst);
    if (!(dt > 0) || !isfinite(dt))
        return api_fail(inst, SRD_ERR_ARGUMENT, "the time step must be a positive number of seconds, not %g", dt);
    inst->dt = dt;
    inst->s.dt = dt;
    inst->s.step_dt = dt;
    return SRD_OK;
}

double srd_time(const srd_instance *inst) { return inst ? inst->s.t : NAN; }
double srd_dt(const srd_instance *inst) { return inst ? inst->s.dt : NAN; }
long   srd_steps(const srd_instance *inst) { return inst ? inst->s.steps : 0; }

/* ---- many instances on threads ---- */

typedef struct Batch {
    srd_instance *const *insts;
    int                 n, steps;
    srd_status         *status;
    atomic_int          next;
} Batch;

static void *batch_worker(void *arg)
{
    Batch *b = arg;
    for (int k; (k = atomic_fetch_add(&b->next, 1)) < b->n;)
        b->status[k] = b->insts[k] ? take_steps(b->insts[k], b->steps) : SRD_ERR_ARGUMENT;
    return NULL;
}

static int batch_threads(int threads, int n)
{
    if (threads <= 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cpus < 1 ? 1 : (int)cpus;
    }
    return threads < n ? threads : n;
}

/* Runs the batch on `threads` threads, the calling one among them. */
static void run_batch(Batch *b, int threads)
{
    pthread_t *helpers = srd_xcalloc((size_t)threads, sizeof *helpers);
    int started = 0;
    for (int j = 1; j < threads; j++)
        if (pthread_create(&helpers[started], NULL, batch_worker, b) == 0)
            started++;
    batch_worker(b);
    for (int j = 0; j < started; j++)
        pthread_join(helpers[j], NULL);
    free(helpers);
}

srd_status srd_run_many(srd_instance *const *insts, int n, int steps, int threads, srd_status *status)
{
    if (n < 0 || (n > 0 && !insts) || steps < 0)
        return api_fail(NULL, SRD_ERR_ARGUMENT, "srd_run_many: %d instances, %d steps", n, steps);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            if (insts[i] && insts[i] == insts[j])
                return api_fail(NULL, SRD_ERR_ARGUMENT, "srd_run_many: instances %d and %d are the same one", j, i);
    Batch b = { insts, n, steps, status ? status : srd_xcalloc((size_t)n + 1, sizeof *status), 0 };
    if (n > 0)
        run_batch(&b, batch_threads(threads, n));
    srd_status first = SRD_OK;
    for (int k = 0; k < n && first == SRD_OK; k++)
        first = b.status[k];
    if (first != SRD_OK)
        for (int k = 0; k < n; k++)
            if (b.status[k] != SRD_OK) {
                api_fail(NULL, first, "srd_run_many: instance %d failed: %s", k, srd_error(insts[k]));
                break;
            }
    if (!status)
        free(b.status);
    return first;
}
