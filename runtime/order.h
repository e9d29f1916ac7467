/* order.h — bandwidth-reducing ordering (reverse Cuthill–McKee) of the model's DOF groups. */
#ifndef SRD_ORDER_H
#define SRD_ORDER_H

/* Graph in CSR form: vertices 0..n-1, neighbours of v are adj[start[v] .. start[v+1]-1]. */
typedef struct srd_graph {
    int  n;
    int *start; /* n + 1 */
    int *adj;
} srd_graph;

/* Builds a symmetric graph from cliques: clique c has members members[cstart[c]..cstart[c+1]-1]
 * (every pair becomes an edge; duplicates removed). Caller frees with srd_graph_free. */
srd_graph srd_graph_from_cliques(int n, int n_cliques, const int *cstart, const int *members);
void      srd_graph_free(srd_graph *g);

/* perm[k] = the vertex placed k-th. Reverse Cuthill–McKee per connected component, each
 * started from a pseudo-peripheral vertex (George–Liu). Deterministic. */
void srd_rcm(const srd_graph *g, int *perm);

/* Largest |pos[u] - pos[v]| over the graph's edges, in vertex units. */
int srd_graph_bandwidth(const srd_graph *g, const int *pos);

#endif
