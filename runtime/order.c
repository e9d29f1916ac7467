/* order.c — builds the DOF-group adjacency graph and orders it by reverse Cuthill–McKee to keep the Jacobian banded. */
#include "order.h"
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

static int compare_int(const void *pa, const void *pb)
{
    int a = *(const int *)pa, b = *(const int *)pb;
    return (a > b) - (a < b);
}

/* ---- graph construction ---- */

static bool cliques_valid(int n, int n_cliques, const int *cstart, const int *members)
{
    if (n < 0 || n_cliques < 0 || (n_cliques > 0 && (!cstart || !members)))
        return false;
    for (int c = 0; c < n_cliques; c++)
        if (cstart[c] < 0 || cstart[c + 1] < cstart[c])
            return false;
    for (int c = 0; c < n_cliques; c++)
        for (int k = cstart[c]; k < cstart[c + 1]; k++)
            if (members[k] < 0 || members[k] >= n)
                return false;
    return true;
}

/* Sorts each vertex's raw neighbour list and keeps one copy of each neighbour other than
 * itself, compacting everything towards the front; returns the final edge-end count. */
static size_t dedup_lists(int n, const size_t *raw_start, int *raw, int *start)
{
    size_t out = 0;
    for (int v = 0; v < n; v++) {
        int   *list = raw + raw_start[v];
        size_t len = raw_start[v + 1] - raw_start[v];
        qsort(list, len, sizeof *list, compare_int);
        start[v] = (int)out;
        for (size_t k = 0; k < len; k++)
            if (list[k] != v && (k == 0 || list[k] != list[k - 1]))
                raw[out++] = list[k];
    }
    start[n] = (int)out;
    return out;
}

/* Offsets of each vertex's raw list: every pair of every clique, duplicates included; size_t
 * because a few large cliques can exceed int before deduplication. */
static size_t *raw_offsets(int n, int n_cliques, const int *cstart, const int *members)
{
    size_t *raw_start = calloc((size_t)n + 1, sizeof *raw_start);
    if (!raw_start)
        return NULL;
    for (int c = 0; c < n_cliques; c++)
        for (int k = cstart[c]; k < cstart[c + 1]; k++)
            raw_start[members[k] + 1] += (size_t)(cstart[c + 1] - cstart[c] - 1);
    for (int v = 0; v < n; v++)
        raw_start[v + 1] += raw_start[v];
    return raw_start;
}

static int *raw_lists(int n, int n_cliques, const int *cstart, const int *members, const size_t *raw_start)
{
    size_t  total = raw_start[n];
    int    *raw = malloc((total ? total : 1) * sizeof *raw);
    size_t *fill = malloc(((size_t)n + 1) * sizeof *fill);
    if (raw && fill) {
        memcpy(fill, raw_start, ((size_t)n + 1) * sizeof *fill);
        for (int c = 0; c < n_cliques; c++)
            for (int i = cstart[c]; i < cstart[c + 1]; i++)
                for (int j = cstart[c]; j < cstart[c + 1]; j++)
                    if (i != j)
                        raw[fill[members[i]]++] = members[j];
    } else {
        free(raw);
        raw = NULL;
    }
    free(fill);
    return raw;
}

/* On invalid input (a member outside 0..n-1, decreasing cstart) or out of memory the result has
 * start == NULL but keeps n (when n >= 0), so that srd_rcm still yields a valid permutation (the
 * identity) for callers that do not check; srd_graph_free accepts it. */
srd_graph srd_graph_from_cliques(int n, int n_cliques, const int *cstart, const int *members)
{
    srd_graph g = {n > 0 ? n : 0, NULL, NULL};
    if (!cliques_valid(n, n_cliques, cstart, members))
        return g;
    size_t *raw_start = raw_offsets(n, n_cliques, cstart, members);
    int    *raw = raw_start ? raw_lists(n, n_cliques, cstart, members, raw_start) : NULL;
    int    *start = malloc(((size_t)n + 1) * sizeof *start);
    size_t  kept = raw && start ? dedup_lists(n, raw_start, raw, start) : 0;
    free(raw_start);
    if (!raw || !start || kept > INT_MAX) {
        free(raw);
        free(start);
        return g;
    }
    int *adj = realloc(raw, (kept ? kept : 1) * sizeof *adj);
    g.start = start;
    g.adj = adj ? adj : raw; /* a failed shrink leaves the larger block valid */
    return g;
}

void srd_graph_free(srd_graph *g)
{
    if (!g)
        return;
    free(g->start);
    free(g->adj);
    g->start = NULL;
    g->adj = NULL;
    g->n = 0;
}

/* ---- reverse Cuthill–McKee ---- */

typedef struct RcmWork {
    const srd_graph *g;
    int             *queue;    /* BFS queue of the level-structure searches */
    int             *seen;     /* seen[v] == stamp: reached by the current search */
    int              stamp;
    bool            *numbered; /* already placed in perm */
    struct Neighbour {
        int degree, vertex;
    } *scratch;                /* one vertex's unnumbered neighbours, for sorting */
} RcmWork;

static int degree(const srd_graph *g, int v) { return g->start[v + 1] - g->start[v]; }

/* Breadth-first level structure rooted at `root` over vertices not yet numbered: returns its
 * number of levels; the last level occupies queue[*last_first .. *reached - 1]. */
static int level_structure(RcmWork *w, int root, int *last_first, int *reached)
{
    const srd_graph *g = w->g;
    int              stamp = ++w->stamp;
    int              head = 0, tail = 0, levels = 0;
    w->queue[tail++] = root;
    w->seen[root] = stamp;
    while (head < tail) {
        int level_end = tail;
        *last_first = head;
        levels++;
        for (; head < level_end; head++) {
            int v = w->queue[head];
            for (int e = g->start[v]; e < g->start[v + 1]; e++) {
                int u = g->adj[e];
                if (w->seen[u] != stamp && !w->numbered[u]) { /* numbered: only if g is not symmetric */
                    w->seen[u] = stamp;
                    w->queue[tail++] = u;
                }
            }
        }
    }
    *reached = tail;
    return levels;
}

/* George–Liu: root a level structure, move to a minimum-degree vertex (lowest index on ties) of
 * its last level, and repeat while that deepens the structure. */
static int pseudo_peripheral(RcmWork *w, int start)
{
    int last_first, reached;
    int levels = level_structure(w, start, &last_first, &reached);
    int root = start;
    while (reached > 1) {
        int best = w->queue[last_first];
        for (int k = last_first + 1; k < reached; k++) {
            int v = w->queue[k], dv = degree(w->g, v), db = degree(w->g, best);
            if (dv < db || (dv == db && v < best))
                best = v;
        }
        root = best;
        int deeper = level_structure(w, root, &last_first, &reached);
        if (deeper <= levels)
            break;
        levels = deeper;
    }
    return root;
}

static int by_degree_then_index(const void *pa, const void *pb)
{
    const struct Neighbour *a = pa, *b = pb;
    if (a->degree != b->degree)
        return a->degree < b->degree ? -1 : 1;
    return (a->vertex > b->vertex) - (a->vertex < b->vertex);
}

/* Cuthill–McKee from `root`, writing into perm from *next on (perm doubles as the queue). */
static void cuthill_mckee(RcmWork *w, int root, int *perm, int *next)
{
    const srd_graph *g = w->g;
    int              head = *next;
    perm[(*next)++] = root;
    w->numbered[root] = true;
    while (head < *next) {
        int v = perm[head++];
        int m = 0;
        for (int e = g->start[v]; e < g->start[v + 1]; e++) {
            int u = g->adj[e];
            if (!w->numbered[u]) {
                w->numbered[u] = true;
                w->scratch[m++] = (struct Neighbour){degree(g, u), u};
            }
        }
        qsort(w->scratch, (size_t)m, sizeof *w->scratch, by_degree_then_index);
        for (int k = 0; k < m; k++)
            perm[(*next)++] = w->scratch[k].vertex;
    }
}

static void reverse_ints(int *a, int n)
{
    for (int i = 0, j = n - 1; i < j; i++, j--) {
        int t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

static bool graph_well_formed(const srd_graph *g)
{
    if (!g->start || (!g->adj && g->start[g->n] > 0) || g->start[0] != 0)
        return false;
    for (int v = 0; v < g->n; v++)
        if (g->start[v + 1] < g->start[v])
            return false;
    for (int e = 0; e < g->start[g->n]; e++)
        if (g->adj[e] < 0 || g->adj[e] >= g->n)
            return false;
    return true;
}

static int max_degree(const srd_graph *g)
{
    int best = 0;
    for (int v = 0; v < g->n; v++)
        if (degree(g, v) > best)
            best = degree(g, v);
    return best;
}

/* Components come in the order of their lowest-numbered vertex, each reversed on its own, so
 * the result does not depend on anything but the graph. A malformed graph or a failed
 * allocation yields the identity ordering, which is still a valid permutation. */
void srd_rcm(const srd_graph *g, int *perm)
{
    if (!g || !perm || g->n <= 0)
        return;
    int n = g->n;
    for (int v = 0; v < n; v++)
        perm[v] = v;
    if (!graph_well_formed(g))
        return;
    RcmWork w = {.g = g};
    w.queue = malloc(sizeof(int) * (size_t)n);
    w.seen = calloc((size_t)n, sizeof(int));
    w.numbered = calloc((size_t)n, sizeof(bool));
    w.scratch = malloc(sizeof *w.scratch * ((size_t)max_degree(g) + 1));
    if (w.queue && w.seen && w.numbered && w.scratch) {
        int next = 0;
        for (int v = 0; v < n; v++) {
            if (w.numbered[v])
                continue;
            int first = next;
            cuthill_mckee(&w, pseudo_peripheral(&w, v), perm, &next);
            reverse_ints(perm + first, next - first);
        }
    }
    free(w.queue);
    free(w.seen);
    free(w.numbered);
    free(w.scratch);
}

int srd_graph_bandwidth(const srd_graph *g, const int *pos)
{
    if (!g || !g->start || !pos)
        return 0;
    int width = 0;
    for (int v = 0; v < g->n; v++) {
        for (int e = g->start[v]; e < g->start[v + 1]; e++) {
            int d = pos[g->adj[e]] - pos[v];
            if (d < 0)
                d = -d;
            if (d > width)
                width = d;
        }
    }
    return width;
}
