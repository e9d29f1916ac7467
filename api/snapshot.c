/* snapshot.c — a simulation's complete state as bytes in memory, and back: what `--resume`
 * restores (time, q, v, the elements' step-start frames, rigid bodies' turns, the controller
 * and the inputs), for branching rollouts, search and resets to any point. */
#include <stdlib.h>
#include <string.h>
#include "alloc.h"
#include "checkpoint.h"
#include "instance.h"

/* What a snapshot must match: the model and its params, inputs aside (they are state). */
static uint64_t fingerprint(const srd_instance *inst)
{
    const srd_model *m = inst->m;
    double *params = srd_xcalloc((size_t)m->n_params + 1, sizeof(double));
    for (int k = 0; k < m->n_params; k++)
        params[k] = m->params[k].input ? m->params[k].value : inst->s.params[k];
    uint64_t h = srd_checkpoint_fingerprint(m, params, inst->s.dt, 0);
    free(params);
    return h;
}

srd_status srd_save_state(srd_instance *inst, void **data, size_t *size)
{
    API_CHECK(inst);
    if (!data || !size)
        return api_fail(inst, SRD_ERR_ARGUMENT, "srd_save_state: `data` and `size` must not be NULL");
    *data = NULL;
    *size = 0;
    api_views_to_state(inst);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    srd_checkpoint_pos pos;
    memset(&pos, 0, sizeof pos);
    bool ok = f && srd_checkpoint_save(f, &inst->s, fingerprint(inst), &pos) == 0;
    if (f && fclose(f) != 0)
        ok = false;
    if (!ok) {
        free(buf);
        return api_fail(inst, SRD_ERR_MEMORY, "srd_save_state: the snapshot could not be written in memory");
    }
    *data = buf;
    *size = len;
    return SRD_OK;
}

srd_status srd_load_state(srd_instance *inst, const void *data, size_t size)
{
    API_CHECK(inst);
    if (!data)
        return api_fail(inst, SRD_ERR_ARGUMENT, "srd_load_state: `data` is NULL");
    FILE *f = fmemopen((void *)data, size, "rb");
    if (!f)
        return api_fail(inst, SRD_ERR_MEMORY, "srd_load_state: cannot read the snapshot");
    srd_checkpoint_pos pos;
    char err[1024];
    int status = srd_checkpoint_load(f, "the snapshot", &inst->s, fingerprint(inst), &pos, err, sizeof err);
    fclose(f);
    if (status != 0) {
        /* A refused header leaves the state untouched; a short one may have written part of it. */
        inst->failed = strstr(err, "cut short") != NULL;
        return api_fail(inst, SRD_ERR_INPUT, "%s%s", err, inst->failed ? "\nhint: reset the instance" : "");
    }
    inst->failed = false;
    api_views_from_state(inst);
    return SRD_OK;
}

void srd_free(void *data) { free(data); }
