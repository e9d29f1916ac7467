/* no_metis.c — linked into simulators built with --static only. Debian ships METIS (which
 * CHOLMOD may call for nested dissection) as a shared library alone, so a static simulator
 * cannot carry it: these stand-ins satisfy the linker, and srd_sparse_without_metis tells
 * runtime/sparse/sparse.c to order with AMD only, so they are never called. */

const int srd_sparse_without_metis = 1;

/* METIS_ERROR: what METIS returns on failure, should anything call these after all. */
int METIS_NodeND(void *nvtxs, void *xadj, void *adjncy, void *vwgt, void *options, void *perm, void *iperm);
int METIS_ComputeVertexSeparator(void *nvtxs, void *xadj, void *adjncy, void *vwgt, void *options, void *sepsize,
                                 void *part);

int METIS_NodeND(void *nvtxs, void *xadj, void *adjncy, void *vwgt, void *options, void *perm, void *iperm)
{
    (void)nvtxs, (void)xadj, (void)adjncy, (void)vwgt, (void)options, (void)perm, (void)iperm;
    return -4;
}

int METIS_ComputeVertexSeparator(void *nvtxs, void *xadj, void *adjncy, void *vwgt, void *options, void *sepsize,
                                 void *part)
{
    (void)nvtxs, (void)xadj, (void)adjncy, (void)vwgt, (void)options, (void)sepsize, (void)part;
    return -4;
}
