/* test_output.c — unit tests of the runtime's outputs (output_vtk.c, files.c): frames appear
 * whole or not at all, the .pvd series stays valid and costs one short write per frame, and a
 * failed write names its file. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>
#include "elab.h"
#include "files.h"
#include "output_vtk.h"
#include "parse.h"
#include "tap.h"

static Arena arena;

static srd_model *small_rod(void)
{
    const char *text = "material rubber { E = 2 MPa; nu = 0.5; rho = 1200 kg/m^3; }\n"
                       "rod finger { path = line((0, 0, 0) m, (0.1, 0, 0) m); nodes = 5; radius = 1 mm; "
                       "material = rubber; }\nstatic { }\n";
    Program prog = { 0 };
    srd_model *m = NULL;
    if (parse_program_text(&arena, "output_test.srd", text, strlen(text), parse_stdlib_dir(), &prog))
        m = elab_program(&prog, &arena, "output_test.srd");
    diag_reset();
    return m;
}

/* Bytes this process has written so far (Linux's /proc/self/io), or -1. */
static long long bytes_written(void)
{
    FILE *f = fopen("/proc/self/io", "r");
    long long w = -1;
    char line[128];
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "wchar: %lld", &w) == 1)
            break;
    if (f)
        fclose(f);
    return w;
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static int count_entries(const char *path, bool *closed)
{
    FILE *f = fopen(path, "r");
    char line[512], last[512] = "";
    int n = 0;
    while (f && fgets(line, sizeof line, f)) {
        n += strstr(line, "<DataSet") != NULL;
        snprintf(last, sizeof last, "%s", line);
    }
    if (f)
        fclose(f);
    *closed = !strcmp(last, "</VTKFile>\n");
    return n;
}

/* 2,000 frames of a small rod: the series file must cost a short write per frame, not a
 * rewrite of every entry so far (which writes about 100 MB here). */
static void test_series_is_linear(Tally *t, const srd_model *m, const char *dir)
{
    srd_vtk_series s;
    const int frames = 2000;
    double *q = calloc((size_t)m->n_dofs, sizeof(double));
    check(t, srd_vtk_open(&s, dir, "lin") == 0, "open a series in %s", dir);
    long long before = bytes_written();
    int bad = 0;
    for (int k = 0; k < frames; k++)
        bad |= srd_vtk_write(&s, m, q, NULL, NULL, 1e-3 * k) != 0;
    long long written = bytes_written() - before;
    char path[512];
    snprintf(path, sizeof path, "%s/lin_000000.vtu", dir);
    long frame = file_size(path);
    check(t, !bad && frame > 0, "%d frames written (%ld bytes each)", frames, frame);
    check(t, before >= 0 && written < (long long)frames * (frame + 200),
          "bytes written grow linearly: %lld for %d frames of %ld bytes", written, frames, frame);
    snprintf(path, sizeof path, "%s/lin.pvd", dir);
    bool closed = false;
    check(t, count_entries(path, &closed) == frames && closed, "the .pvd lists every frame and is closed");
    srd_vtk_close(&s);
    free(q);
}

/* A file-size limit makes the third frame's write fail part way: that frame must not appear
 * under its final name, the series must still list the two whole frames, and the error must
 * name the file. */
static void test_failed_frame(Tally *t, const srd_model *m, const char *dir)
{
    srd_vtk_series s;
    double *q = calloc((size_t)m->n_dofs, sizeof(double));
    srd_vtk_open(&s, dir, "cut");
    int ok = srd_vtk_write(&s, m, q, NULL, NULL, 0) == 0 && srd_vtk_write(&s, m, q, NULL, NULL, 1) == 0;
    char path[512];
    snprintf(path, sizeof path, "%s/cut_000000.vtu", dir);
    long frame = file_size(path);
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = (rlim_t)(frame / 2);
    signal(SIGXFSZ, SIG_IGN);
    setrlimit(RLIMIT_FSIZE, &lim);
    int third = srd_vtk_write(&s, m, q, NULL, NULL, 2);
    setrlimit(RLIMIT_FSIZE, &old);
    check(t, ok && third == -1, "the third frame's write fails under a %ld-byte file limit", frame / 2);
    snprintf(path, sizeof path, "%s/cut_000002.vtu", dir);
    check(t, access(path, F_OK) != 0, "no cut_000002.vtu");
    snprintf(path, sizeof path, "%s/cut_000002.vtu.tmp", dir);
    check(t, access(path, F_OK) != 0, "no temporary file left");
    char msg[4300];
    srd_vtk_error(&s, msg, sizeof msg);
    check(t, strstr(msg, "cut_000002.vtu") && strstr(msg, strerror(EFBIG)), "the error names the frame: %s", msg);
    snprintf(path, sizeof path, "%s/cut.pvd", dir);
    bool closed = false;
    check(t, count_entries(path, &closed) == 2 && closed, "the .pvd lists the two whole frames and is closed");
    srd_vtk_close(&s);
    free(q);
}

/* Every write to a full device is reported, with the file's name. */
static void test_outfile_full_disk(Tally *t, const char *dir)
{
    char link[512];
    snprintf(link, sizeof link, "%s/probes.csv", dir);
    if (symlink("/dev/full", link) != 0) {
        check(t, false, "cannot make %s a link to /dev/full", link);
        return;
    }
    srd_outfile o;
    check(t, srd_outfile_open(&o, dir, "probes.csv") == 0, "open probes.csv (on /dev/full)");
    srd_outfile_printf(&o, "t,x\n0,1\n");
    check(t, srd_outfile_flush(&o) == -1, "the flush fails");
    check(t, srd_outfile_close(&o) == -1, "and so does the close");
    char msg[4300];
    srd_outfile_error(&o, msg, sizeof msg);
    check(t, strstr(msg, "probes.csv") && strstr(msg, strerror(ENOSPC)), "the error names the file: %s", msg);
    unlink(link);
}

static void remove_dir(const char *dir)
{
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

int main(void)
{
    arena_init(&arena);
    Tally t = { 0, 0 };
    char dir[256];
    srd_model *m = small_rod();
    check(&t, m != NULL, "the test model elaborates");
    if (m && tap_mkdtemp(dir, sizeof dir, "srd_test_output_")) {
        test_series_is_linear(&t, m, dir);
        test_failed_frame(&t, m, dir);
        test_outfile_full_disk(&t, dir);
        remove_dir(dir);
    }
    srd_model_free(m);
    arena_free(&arena);
    printf("# %d checks, %d failed\n", t.run, t.failed);
    return t.failed ? 1 : 0;
}
