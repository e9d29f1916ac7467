/* main.c — the entry point of every simulator `srdc build` makes. It reads the command line,
 * elaborates the model again from the copies of its files (so that `-p` values reach masses,
 * stiffnesses, loads and the ground exactly as in `srdc run`), checks that the result still fits
 * the kernels compiled into it, and runs the analyses with the shared driver. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "diag.h"
#include "driver.h"
#include "elab.h"
#include "render_hook.h"
#include "sources.h"
#include "srd_built.h"

static const char *name;

static void print_usage(FILE *out)
{
    fprintf(out,
            "usage: %s [-p NAME=VALUE]... [--duration T] [--dt DT] [--out DIR] [--quiet] [--verbose]\n"
            "       %s --resume DIR [-p NAME=VALUE]... [--duration T] [--quiet] [--verbose]\n"
            "       %s --info | --help | --version\n"
            "       %s render DIR [options of `srdc render`]\n"
            "\n"
            "Runs the model %s (compiled by srdc %s): its static, modes and simulate analyses.\n"
            "Frames go to DIR (default `out`) as VTK files with a .pvd series, probes to\n"
            "DIR/static_probes.csv, DIR/modes_probes.csv and DIR/probes.csv (the simulation's),\n"
            "energies to DIR/energy.csv, frequencies to DIR/modes.csv, and a checkpoint to\n"
            "DIR/checkpoint.bin at every output frame. `render DIR` draws the frames of DIR as pictures\n"
            "or a video, as `srdc render` does (not in a simulator built with --static).\n"
            "\n"
            "options:\n"
            "  -p NAME=VALUE    set a param; the value may carry a unit (-p E=2MPa) and must have the\n"
            "                   param's dimension and lie in its range\n"
            "  --duration T     simulate for T (0.5, 0.5s, 10ms) instead of the model's duration\n"
            "  --dt DT          time step instead of the model's\n"
            "  --out DIR        output directory (default out)\n"
            "  --resume DIR     continue the simulation in DIR from its checkpoint, bit for bit as if\n"
            "                   never interrupted (same -p values and --dt; --duration may grow)\n"
            "  --quiet          print only errors\n"
            "  --verbose        print the residual of every Newton iteration\n"
            "  --solver S       linear solver: auto, dense, banded or sparse\n"
            "  --info           print the model summary (as `srdc dump`) and exit\n"
            "  --help           print this help and exit\n"
            "\n"
            "exit status: 0 success, 1 bad input, 2 numerical failure (frames so far are kept), 3 I/O,\n"
            "4 out of memory (or a model too large for it)\n",
            name, name, name, name, srd_built.model_path, srd_built.version);
}

static void print_range_end(FILE *out, double v, const char *unit)
{
    if (isinf(v))
        fputs(v > 0 ? "inf" : "-inf", out);
    else
        fprintf(out, "%g%s%s", v, strcmp(unit, "1") ? " " : "", strcmp(unit, "1") ? unit : "");
}

/* The params, or the inputs (input 1), one a line; false when there are none. */
static bool print_param_list(FILE *out, int input, const char *title)
{
    bool any = false;
    for (int k = 0; k < srd_built.n_params; k++) {
        const srd_built_param *p = &srd_built.params[k];
        if (p->input != input)
            continue;
        if (!any)
            fprintf(out, "\n%s (default, dimension, range):\n", title);
        any = true;
        bool unitless = !strcmp(p->unit, "1");
        fprintf(out, "  %-16s %g%s%s, %s", p->name, p->value, unitless ? "" : " ", unitless ? "" : p->unit,
                p->dimension);
        if (isfinite(p->lo) || isfinite(p->hi)) {
            fputs(", ", out);
            print_range_end(out, p->lo, p->unit);
            fputs(" .. ", out);
            print_range_end(out, p->hi, p->unit);
        }
        fputc('\n', out);
    }
    return any;
}

static void print_params(FILE *out)
{
    if (!srd_built.n_params) {
        fprintf(out, "\nThis model has no params.\n");
        return;
    }
    print_param_list(out, 0, "params");
    print_param_list(out, 1, "inputs, set while the model runs; -p sets their starting value");
    const srd_built_param *p = &srd_built.params[0];
    for (int k = srd_built.n_params - 1; k >= 0; k--)
        p = srd_built.params[k].input ? p : &srd_built.params[k]; /* the first param, else an input */
    fprintf(out, "\nexample:\n  %s -p %s=%g%s --out run1\n", name, p->name, p->value,
            strcmp(p->unit, "1") ? p->unit : "");
}

int main(int argc, char **argv)
{
    name = srd_built.name;
    srd_exit_when_out_of_memory(name);
    if (argc > 1 && !strcmp(argv[1], "render"))
        return srd_sim_render(name, argc - 2, argv + 2);
    srd_run_options o = { .program = name, .out = "out" };
    o.overrides = calloc((size_t)argc + 1, sizeof(char *));
    bool info = false;
    int status = SRD_EXIT_OK;
    for (int i = 1; i < argc && status == SRD_EXIT_OK; i++) {
        const char *a = argv[i];
        int taken = srd_run_options_parse(&o, argc, argv, &i);
        if (taken < 0)
            status = SRD_EXIT_BAD_INPUT;
        else if (taken)
            continue;
        else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            print_usage(stdout);
            print_params(stdout);
            free(o.overrides);
            return SRD_EXIT_OK;
        } else if (!strcmp(a, "--version")) {
            printf("%s: model %s, built by srdc %s\n", name, srd_built.model_path, srd_built.version);
            free(o.overrides);
            return SRD_EXIT_OK;
        } else if (!strcmp(a, "--info"))
            info = true;
        else {
            fprintf(stderr, "%s: error: unknown %s `%s`\nhint: see `%s --help`\n", name,
                    a[0] == '-' ? "option" : "argument", a, name);
            status = SRD_EXIT_BAD_INPUT;
        }
    }
    if (status != SRD_EXIT_OK) {
        free(o.overrides);
        return status;
    }
    for (int k = 0; k < srd_built.n_files; k++)
        sources_provide(srd_built.files[k].path, srd_built.files[k].text, srd_built.files[k].len);
    diag_set_program(name);
    Arena arena;
    arena_init(&arena);
    Program prog = { 0 };
    srd_model *m = elab_file(&arena, &prog, srd_built.model_path, srd_built.stdlib_dir, o.overrides, o.n_overrides);
    diag_flush(stderr);
    if (!m || !srd_built_matches(&srd_built, m, stderr, name))
        status = SRD_EXIT_BAD_INPUT;
    else if (info)
        srd_model_print(m, stdout);
    else
        status = srd_run(m, &srd_built.kernels, &o);
    if (info && fflush(stdout) != 0)
        status = SRD_EXIT_IO;
    srd_model_free(m);
    arena_free(&arena);
    diag_reset();
    sources_reset();
    free(o.overrides);
    return status;
}
