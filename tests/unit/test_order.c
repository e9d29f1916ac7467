/* test_order.c — unit tests of the clique graph builder and the reverse Cuthill–McKee ordering (order.c). */
#include "order.h"
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tap.h"

static uint64_t xorshift(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* A random relabelling, so the input order carries no locality. */
static int *shuffled_labels(int n, uint64_t seed)
{
    int *p = malloc(sizeof *p * (size_t)n);
    for (int i = 0; i < n; i++)
        p[i] = i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int)(xorshift(&seed) % (uint64_t)(i + 1));
        int tmp = p[i];
        p[i] = p[j];
        p[j] = tmp;
    }
    return p;
}

static bool is_permutation(const int *perm, int n)
{
    char *seen = calloc((size_t)n + 1, 1);
    bool  ok = true;
    for (int k = 0; k < n && ok; k++) {
        ok = perm[k] >= 0 && perm[k] < n && !seen[perm[k]];
        if (ok)
            seen[perm[k]] = 1;
    }
    free(seen);
    return ok;
}

static int *positions_of(const int *perm, int n)
{
    int *pos = malloc(sizeof *pos * ((size_t)n + 1));
    for (int k = 0; k < n; k++)
        pos[perm[k]] = k;
    return pos;
}

static int *identity(int n)
{
    int *p = malloc(sizeof *p * ((size_t)n + 1));
    for (int k = 0; k < n; k++)
        p[k] = k;
    return p;
}

/* Cliques listed as flat pairs/triples/...: clique c is members[c*size .. c*size+size-1]. */
typedef struct Cliques {
    int  n_cliques;
    int *start, *members;
} Cliques;

static Cliques uniform_cliques(int n_cliques, int size)
{
    Cliques c = {n_cliques, malloc(sizeof(int) * ((size_t)n_cliques + 1)),
                 malloc(sizeof(int) * ((size_t)n_cliques * (size_t)size + 1))};
    for (int k = 0; k <= n_cliques; k++)
        c.start[k] = k * size;
    return c;
}

static void cliques_free(Cliques *c)
{
    free(c->start);
    free(c->members);
}

/* Orders g with RCM and returns the bandwidth, after checking that perm is a permutation. */
static int rcm_bandwidth(Tally *t, const char *name, const srd_graph *g)
{
    int *perm = malloc(sizeof *perm * ((size_t)g->n + 1));
    srd_rcm(g, perm);
    bool ok = is_permutation(perm, g->n);
    check(t, ok, "%s: perm is a permutation", name);
    int bw = -1;
    if (ok) {
        int *pos = positions_of(perm, g->n);
        bw = srd_graph_bandwidth(g, pos);
        free(pos);
    }
    free(perm);
    return bw;
}

static int original_bandwidth(const srd_graph *g)
{
    int *id = identity(g->n);
    int  bw = srd_graph_bandwidth(g, id);
    free(id);
    return bw;
}

static void test_from_cliques(Tally *t)
{
    /* Two triangles sharing the edge 1-2, one repeated pair and a self-repeat. */
    int       start[] = {0, 3, 6, 8, 10};
    int       members[] = {0, 1, 2, 2, 1, 3, 1, 2, 4, 4};
    srd_graph g = srd_graph_from_cliques(5, 4, start, members);
    check(t, g.start != NULL && g.n == 5, "from_cliques: built");
    if (!g.start)
        return;
    int want_start[] = {0, 2, 5, 8, 10, 10};
    int want_adj[] = {1, 2, 0, 2, 3, 0, 1, 3, 1, 2};
    check(t, memcmp(g.start, want_start, sizeof want_start) == 0 && memcmp(g.adj, want_adj, sizeof want_adj) == 0,
          "from_cliques: duplicates and self-pairs removed, neighbours sorted");
    bool symmetric = true;
    for (int v = 0; v < g.n; v++)
        for (int e = g.start[v]; e < g.start[v + 1]; e++) {
            int  u = g.adj[e];
            bool back = false;
            for (int f = g.start[u]; f < g.start[u + 1]; f++)
                back |= g.adj[f] == v;
            symmetric &= back;
        }
    check(t, symmetric, "from_cliques: symmetric");
    srd_graph_free(&g);
    check(t, g.start == NULL && g.adj == NULL && g.n == 0, "graph_free clears the graph");
    srd_graph_free(&g);

    int bad_members[] = {0, 5};
    int pair_start[] = {0, 2};
    g = srd_graph_from_cliques(5, 1, pair_start, bad_members);
    check(t, g.start == NULL && g.n == 5, "from_cliques: member out of range gives start == NULL, n kept");
    int p5[5] = {0, 0, 0, 0, 0};
    srd_rcm(&g, p5);
    check(t, is_permutation(p5, 5) && srd_graph_bandwidth(&g, p5) == 0,
          "rcm on a failed graph gives the identity, bandwidth 0");
    srd_graph_free(&g);
    int neg_members[] = {0, -1};
    g = srd_graph_from_cliques(5, 1, pair_start, neg_members);
    check(t, g.start == NULL, "from_cliques: negative member gives start == NULL");
    int decreasing[] = {2, 0};
    g = srd_graph_from_cliques(5, 1, decreasing, members);
    check(t, g.start == NULL, "from_cliques: decreasing cstart gives start == NULL");
    g = srd_graph_from_cliques(-1, 0, NULL, NULL);
    check(t, g.start == NULL, "from_cliques: negative n gives start == NULL");

    g = srd_graph_from_cliques(0, 0, NULL, NULL);
    check(t, g.start != NULL && g.n == 0, "from_cliques: empty graph");
    int perm[1] = {42};
    srd_rcm(&g, perm);
    check(t, perm[0] == 42 && srd_graph_bandwidth(&g, perm) == 0, "rcm: empty graph is a no-op");
    srd_graph_free(&g);

    g = srd_graph_from_cliques(3, 0, NULL, NULL);
    int p3[3];
    srd_rcm(&g, p3);
    check(t, g.start && p3[0] == 0 && p3[1] == 1 && p3[2] == 2, "rcm: isolated vertices keep their order");
    srd_graph_free(&g);
}

static void test_path(Tally *t)
{
    int      n = 5000;
    int     *label = shuffled_labels(n, 12345);
    Cliques  c = uniform_cliques(n - 1, 2);
    for (int i = 0; i + 1 < n; i++) {
        c.members[2 * i] = label[i];
        c.members[2 * i + 1] = label[i + 1];
    }
    srd_graph g = srd_graph_from_cliques(n, c.n_cliques, c.start, c.members);
    int       before = original_bandwidth(&g);
    int       after = rcm_bandwidth(t, "scrambled path", &g);
    check(t, after == 1, "scrambled path: bandwidth %d -> %d", before, after);

    /* Deterministic: same graph, same answer. */
    int *p1 = malloc(sizeof(int) * (size_t)n), *p2 = malloc(sizeof(int) * (size_t)n);
    srd_rcm(&g, p1);
    srd_rcm(&g, p2);
    check(t, memcmp(p1, p2, sizeof(int) * (size_t)n) == 0, "rcm: deterministic");
    /* A path is ordered from one end to the other. */
    check(t, (p1[0] == label[0] && p1[n - 1] == label[n - 1]) || (p1[0] == label[n - 1] && p1[n - 1] == label[0]),
          "scrambled path: starts at an end (pseudo-peripheral)");
    free(p1);
    free(p2);
    srd_graph_free(&g);
    cliques_free(&c);
    free(label);
}

/* W x H grid: 4-neighbour edges as pairs, or (triangles) each square split into two triangles. */
static srd_graph grid_graph(int w, int h, bool triangles, uint64_t seed)
{
    int    *label = shuffled_labels(w * h, seed);
    int     size = triangles ? 3 : 2;
    int     count = triangles ? 2 * (w - 1) * (h - 1) : (w - 1) * h + w * (h - 1);
    Cliques c = uniform_cliques(count, size);
    int     k = 0;
    for (int j = 0; j < h; j++) {
        for (int i = 0; i < w; i++) {
            int v = label[j * w + i];
            if (triangles && i + 1 < w && j + 1 < h) {
                int e = label[j * w + i + 1], n = label[(j + 1) * w + i], ne = label[(j + 1) * w + i + 1];
                int tri[6] = {v, e, ne, v, ne, n};
                memcpy(c.members + k, tri, sizeof tri);
                k += 6;
            } else if (!triangles) {
                if (i + 1 < w) {
                    c.members[k++] = v;
                    c.members[k++] = label[j * w + i + 1];
                }
                if (j + 1 < h) {
                    c.members[k++] = v;
                    c.members[k++] = label[(j + 1) * w + i];
                }
            }
        }
    }
    srd_graph g = srd_graph_from_cliques(w * h, count, c.start, c.members);
    cliques_free(&c);
    free(label);
    return g;
}

static void test_grids(Tally *t)
{
    struct {
        int  w, h;
        bool triangles;
    } cases[] = {{20, 50, false}, {50, 20, false}, {30, 30, false}, {20, 50, true}, {37, 41, true}, {1, 100, false}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int       w = cases[k].w, h = cases[k].h, narrow = w < h ? w : h;
        char      name[80];
        snprintf(name, sizeof name, "scrambled %dx%d grid%s", w, h, cases[k].triangles ? " of triangles" : "");
        srd_graph g = grid_graph(w, h, cases[k].triangles, 99 + k);
        int       before = original_bandwidth(&g);
        int       after = rcm_bandwidth(t, name, &g);
        /* A level structure from a corner has diagonals of at most `narrow` vertices, and RCM
         * keeps each edge within about two consecutive levels. */
        check(t, after >= narrow - 1 && after <= narrow + 1, "%s: bandwidth %d -> %d (narrow side %d)", name, before,
              after, narrow);
        srd_graph_free(&g);
    }
}

static void test_disconnected(Tally *t)
{
    /* Three components interleaved by label: a path of 100 (even labels), a 10x10 grid (odd
     * labels 1..199), a triangle; plus isolated vertices. */
    int     n = 100 + 100 + 3 + 7;
    Cliques c = uniform_cliques(99 + 180 + 3, 2);
    int     k = 0;
    for (int i = 0; i + 1 < 100; i++) {
        c.members[k++] = 2 * i;
        c.members[k++] = 2 * i + 2;
    }
    for (int j = 0; j < 10; j++)
        for (int i = 0; i < 10; i++) {
            int v = 2 * (j * 10 + i) + 1;
            if (i + 1 < 10) {
                c.members[k++] = v;
                c.members[k++] = v + 2;
            }
            if (j + 1 < 10) {
                c.members[k++] = v;
                c.members[k++] = v + 20;
            }
        }
    int tri[3] = {200, 201, 202};
    for (int e = 0; e < 3; e++) {
        c.members[k++] = tri[e];
        c.members[k++] = tri[(e + 1) % 3];
    }
    srd_graph g = srd_graph_from_cliques(n, c.n_cliques, c.start, c.members);
    cliques_free(&c);
    int *perm = malloc(sizeof(int) * (size_t)n);
    srd_rcm(&g, perm);
    check(t, is_permutation(perm, n), "disconnected: perm is a permutation");
    int *pos = positions_of(perm, n);
    int  bw = srd_graph_bandwidth(&g, pos);
    check(t, bw >= 9 && bw <= 11, "disconnected: bandwidth %d (that of the 10x10 grid)", bw);
    /* Each component occupies consecutive positions, in the order of its lowest vertex. */
    bool contiguous = true;
    for (int p = 0; p < 100; p++)
        contiguous &= perm[p] % 2 == 0 && perm[p] < 200;
    for (int p = 100; p < 200; p++)
        contiguous &= perm[p] % 2 == 1 && perm[p] < 200;
    for (int p = 200; p < 203; p++)
        contiguous &= perm[p] >= 200 && perm[p] <= 202;
    for (int p = 203; p < n; p++)
        contiguous &= perm[p] == p;
    check(t, contiguous, "disconnected: components contiguous, in order of their lowest vertex");
    free(pos);
    free(perm);
    srd_graph_free(&g);
}

static void test_malformed_graph(Tally *t)
{
    int       start[] = {0, 1, 2};
    int       adj[] = {1, 7}; /* 7 is not a vertex */
    srd_graph g = {2, start, adj};
    int       perm[2] = {-1, -1};
    srd_rcm(&g, perm);
    check(t, perm[0] == 0 && perm[1] == 1, "rcm: malformed graph gives the identity");

    /* Not symmetric (2 -> 0 only): still a permutation. */
    int       one_way_start[] = {0, 1, 2, 3};
    int       one_way_adj[] = {1, 0, 0};
    srd_graph h = {3, one_way_start, one_way_adj};
    int       p3[3] = {-1, -1, -1};
    srd_rcm(&h, p3);
    check(t, is_permutation(p3, 3), "rcm: a non-symmetric graph still gives a permutation");
}

/* Random clique sets (sparse, dense, with isolated vertices and repeats): always a permutation,
 * and every edge found in the cliques present in the graph. */
static void test_random_graphs(Tally *t)
{
    uint64_t s = 0x9E3779B97F4A7C15u;
    bool     ok = true;
    for (int iter = 0; iter < 300 && ok; iter++) {
        int     n = 1 + (int)(xorshift(&s) % 200);
        int     nc = (int)(xorshift(&s) % 150);
        Cliques c = {nc, malloc(sizeof(int) * ((size_t)nc + 1)), malloc(sizeof(int) * ((size_t)nc * 6 + 1))};
        c.start[0] = 0;
        for (int k = 0; k < nc; k++) {
            int size = (int)(xorshift(&s) % 7);
            for (int m = 0; m < size; m++)
                c.members[c.start[k] + m] = (int)(xorshift(&s) % (uint64_t)n);
            c.start[k + 1] = c.start[k] + size;
        }
        srd_graph g = srd_graph_from_cliques(n, nc, c.start, c.members);
        int      *perm = malloc(sizeof(int) * (size_t)n);
        srd_rcm(&g, perm);
        ok = g.start && is_permutation(perm, n);
        for (int k = 0; ok && k < nc; k++)
            for (int i = c.start[k]; i < c.start[k + 1]; i++)
                for (int j = c.start[k]; j < c.start[k + 1]; j++) {
                    int  u = c.members[i], v = c.members[j];
                    bool found = u == v;
                    for (int e = g.start[u]; e < g.start[u + 1]; e++)
                        found |= g.adj[e] == v;
                    ok &= found;
                }
        free(perm);
        srd_graph_free(&g);
        cliques_free(&c);
    }
    check(t, ok, "300 random clique sets: graphs complete, perm always a permutation");
}

static void test_large(Tally *t)
{
    int       w = 1000, h = 1000;
    clock_t   t0 = clock();
    srd_graph g = grid_graph(w, h, true, 7);
    clock_t   t1 = clock();
    int       bw = rcm_bandwidth(t, "10^6-vertex grid", &g);
    clock_t   t2 = clock();
    check(t, bw >= w - 1 && bw <= w + 1, "10^6-vertex triangle grid: bandwidth %d (build %.2f s, order %.2f s)", bw,
          (double)(t1 - t0) / CLOCKS_PER_SEC, (double)(t2 - t1) / CLOCKS_PER_SEC);
    srd_graph_free(&g);
}

int main(void)
{
    Tally t = {0, 0};
    test_from_cliques(&t);
    test_path(&t);
    test_grids(&t);
    test_disconnected(&t);
    test_malformed_graph(&t);
    test_random_graphs(&t);
    test_large(&t);
    printf("# %d checks, %d failed\n", t.run, t.failed);
    return t.failed ? 1 : 0;
}
