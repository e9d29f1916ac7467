/* main.c — the srdc command line: the pass list of each command reads top to bottom here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "plot_cli.h"
#include "render_cli.h"
#include "view.h"
#include "aot.h"
#include "clock.h"
#include "elab.h"
#include "kernels.h"
#include "kernel/backend.h"
#include "kernel/tier.h"
#include "parse.h"
#include "run.h"
#include "sens/grad.h"
#include "sens/optimize.h"
#include "sweep.h"

#ifndef SRD_VERSION
#define SRD_VERSION "0.0.0"
#endif

static const char *usage_text =
    "usage: srdc <command> [options] FILE\n"
    "\n"
    "commands:\n"
    "  check FILE          parse, check and elaborate FILE; print diagnostics only\n"
    "  dump FILE [--json] [--elements] [--kernels]\n"
    "                      print the elaborated model: counts of nodes, edges, triangles,\n"
    "                      DOFs, elements by kind, fixed DOFs, total mass, bandwidth;\n"
    "                      --elements lists every element instance with its stencil;\n"
    "                      --kernels compiles the element kernels and prints their\n"
    "                      operation counts and the time of each compiler stage\n"
    "  run FILE [--out DIR] [--duration T] [--dt DT] [-p NAME=VALUE]... [--solver S] [--quiet] [--verbose]\n"
    "                      compile the model and run its static, modes and simulate analyses\n"
    "  run FILE --resume DIR [--duration T] ...\n"
    "                      continue the simulation DIR holds from its last checkpoint\n"
    "  build FILE [-o NAME] [--portable] [--static]\n"
    "                      compile the model into a standalone simulator NAME that runs\n"
    "                      without LLVM, srdc or the .srd files, with params settable by -p\n"
    "  sweep FILE -p NAME=RANGE... [-j N] [--out DIR] [--slurm | --mpi]\n"
    "                      build once, run over a grid of param values in parallel and\n"
    "                      write DIR/summary.csv\n"
    "  optimize FILE [-p NAME=VALUE]... [--out DIR]\n"
    "                      minimise the objective of the model's optimize block over its params\n"
    "  grad FILE [-p NAME=VALUE]... [--static|--simulate] [--adjoint] [--objective EXPR] [--quiet]\n"
    "                      the derivatives of the static equilibrium's probes and of the\n"
    "                      natural frequencies with respect to every param\n"
    "  emit-llvm FILE [-o OUT] [--unoptimized]\n"
    "                      write the LLVM IR of the model's element kernels\n"
    "  render DIR [-o FILE.png|.gif|.mp4] [--frame N|first|last|all] [--view V] [--color FIELD]\n"
    "                      draw a run's frames (its VTK output in DIR) as pictures or a video\n"
    "  view DIR [-o FILE.html] [--series NAME] [--max-frames N]\n"
    "                      write one self-contained HTML page that plays the run in 3D\n"
    "  plot DIR            plot a run's probes, energies and frequencies as PNG pictures\n"
    "  help [COMMAND]      show help for a command\n"
    "\n"
    "options:\n"
    "  --help, -h          show this help\n"
    "  --version           print the version\n"
    "\n"
    "exit status: 0 success, 1 bad input, 2 numerical failure, 3 I/O error, 4 out of memory\n"
    "documentation: docs/language.md (the language), docs/cli.md (the commands)\n";

static const char *check_help =
    "usage: srdc check FILE\n"
    "\n"
    "Parses FILE and the modules it uses, checks names, units and dimensions, and builds the\n"
    "discrete model. Prints every error as file:line:col with the source line and a caret;\n"
    "prints nothing when the model is fine.\n"
    "\n"
    "examples:\n"
    "  srdc check examples/pneunet.srd\n"
    "  srdc check robot.srd && echo fine\n";

static const char *dump_help =
    "usage: srdc dump FILE [--json] [--elements] [--kernels]\n"
    "\n"
    "Builds the model like `check` and prints a summary: objects, nodes, edges, triangles,\n"
    "DOFs by kind, fixed DOFs, total mass, half-bandwidth before and after the\n"
    "bandwidth-reducing ordering, element instances by kind, params and environment.\n"
    "--json prints the same as one JSON object for scripts. --elements then lists every\n"
    "element instance: its nodes, its edges with orientation signs, and its data.\n"
    "--kernels derives and JIT-compiles every element kind's kernel and prints, per kind,\n"
    "the stencil size and the operations of value, gradient and Hessian (or Jacobian) after\n"
    "sharing, then the wall time of parsing, elaboration, lowering, code generation and JIT.\n"
    "\n"
    "examples:\n"
    "  srdc dump examples/cantilever_rod.srd\n"
    "  srdc dump --json examples/parachute.srd | python3 -m json.tool\n"
    "  srdc dump --elements examples/star_roller.srd | less\n";

static const char *emit_help =
    "usage: srdc emit-llvm FILE [-o OUT] [--unoptimized]\n"
    "\n"
    "Writes the LLVM IR of the model's element kernels (one function srd_kernel_KIND per\n"
    "element kind, plus its internal chunks) to OUT, or to standard output. By default the IR\n"
    "is optimised as the JIT optimises it; --unoptimized writes it as generated.\n"
    "\n"
    "examples:\n"
    "  srdc emit-llvm examples/cantilever_shell_hinge.srd -o hinge.ll\n"
    "  srdc emit-llvm --unoptimized examples/pneunet.srd | less\n";

static const char *run_help =
    "usage: srdc run FILE [--out DIR] [--duration T] [--dt DT] [-p NAME=VALUE]... [--solver S] [--quiet] [--verbose]\n"
    "       srdc run FILE --resume DIR [--duration T] [-p NAME=VALUE]... [--solver S] [--quiet] [--verbose]\n"
    "\n"
    "Compiles the model's element kernels (JIT) and runs its analyses in this order: `static`\n"
    "(equilibrium under gravity and loads, in load steps), `modes` (natural frequencies and\n"
    "mode shapes, at the reference or the static equilibrium) and `simulate` (the chosen\n"
    "integrator). Frames go to DIR (default `out`) as VTK files with a .pvd series for\n"
    "ParaView (or node positions as CSV), probes to DIR/static_probes.csv, DIR/modes_probes.csv\n"
    "and DIR/probes.csv (the simulation's), frequencies to DIR/modes.csv, energies to\n"
    "DIR/energy.csv, written as the run goes; the summary lists every file written. At every\n"
    "output frame the simulation saves DIR/checkpoint.bin: --resume DIR continues it from there\n"
    "(with the same model, -p values and --dt; --duration may grow), writing into DIR exactly\n"
    "what an uninterrupted run would have written. -p overrides a `param`; its value may\n"
    "carry a unit and must have the param's dimension and lie in its declared range.\n"
    "--verbose prints the residual of every Newton iteration; --quiet prints only errors.\n"
    "--solver auto|dense|banded|sparse overrides the linear solver of every analysis.\n"
    "\n"
    "exit status: 0 success, 1 bad input, 2 numerical failure (frames so far are kept), 3 I/O,\n"
    "4 out of memory (or a model too large for it)\n"
    "\n"
    "examples:\n"
    "  srdc run examples/cantilever_rod.srd --out out/cantilever\n"
    "  srdc run robot.srd -p E=2MPa --duration 0.5 --dt 1ms\n"
    "  srdc run examples/rod_drop.srd --out drop --duration 0.5   # stopped at 0.5 s, then\n"
    "  srdc run examples/rod_drop.srd --resume drop                # continued to the full 1 s\n";

static const char *build_help =
    "usage: srdc build FILE [-o NAME] [--portable] [--static | --shared] [--quiet]\n"
    "\n"
    "Compiles the model's kernels ahead of time (no JIT) and links them with the runtime into one\n"
    "executable NAME (default: FILE without .srd). The simulator needs only libc, libm, OpenBLAS\n"
    "and LAPACK; it carries copies of the model's files, so that -p values reach masses,\n"
    "stiffnesses, loads and the ground exactly as in `srdc run`, and it gives the same results.\n"
    "It takes the options of `srdc run` (-p, --duration, --dt, --out, --quiet, --verbose) and\n"
    "--info (the model summary) and --help (its params with defaults, units and ranges).\n"
    "A param that sets the discretisation (nodes, spacing, mesh, bending) keeps its built value:\n"
    "run other values with `srdc run` or `srdc sweep`.\n"
    "The code is tuned for this machine's CPU; --portable targets any x86-64 with AVX2 and FMA.\n"
    "--static links OpenBLAS, LAPACK(E), the Fortran runtime and libgcc into the executable (about\n"
    "27 MB), so that it needs only libc and libm: for machines without OpenBLAS.\n"
    "--shared makes a shared library NAME (default: FILE without .srd, plus .so) of the kernels and\n"
    "the model's files instead, for libsrd to open (srd_open in C, srd.Model in Python): no JIT.\n"
    "\n"
    "examples:\n"
    "  srdc build examples/pneunet.srd -o pneunet\n"
    "  ./pneunet --help\n"
    "  ./pneunet -p kappa0=20/m --duration 0.5 --out run1\n";

static const char *sweep_help =
    "usage: srdc sweep FILE (-p NAME=RANGE)... [--csv SETS.csv] [-j N] [--out DIR] [--duration T]\n"
    "                 [--dt DT] [--quiet]\n"
    "                 [--slurm [--chunk K] [--partition P] [--time T] [--submit]]\n"
    "                 [--mpi [--ranks N] [--mpirun CMD]]\n"
    "       srdc sweep --status DIR | --collect DIR\n"
    "\n"
    "Builds FILE into a simulator once (as `srdc build`), then runs it for every combination of\n"
    "the given param values, N runs at a time (default: the number of processors). A param that\n"
    "sets the discretisation (`nodes = n;`, a spacing, a mesh, a bending model) makes a new model\n"
    "per value: then each run is `srdc run FILE -p ...` instead of one simulator. RANGE is\n"
    "  a..b:lin:n    n values evenly spaced from a to b\n"
    "  a..b:log:n    n values evenly spaced in log from a to b (a, b > 0)\n"
    "  v1,v2,...     the listed values\n"
    "  v             one value\n"
    "each value with a unit where the param has one. With --csv, each row of SETS.csv (a header of\n"
    "param names, then values with units or in SI) is one run instead of the grid.\n"
    "Run k writes its outputs to DIR/run_k (default DIR: sweep); DIR/summary.csv gets a row per\n"
    "run: its index, the param values (SI), its exit status (ok, bad_input, numerical_failure,\n"
    "io_error, out_of_memory) and the last value of every probe. A failed run is reported and the sweep goes on.\n"
    "Exit status: 0 when every run succeeded, 2 when some failed, 1 for bad input.\n"
    "Past one machine (docs/cluster.md): --slurm writes DIR/slurm/job_N.sbatch, a Slurm job array of\n"
    "K runs per task over the runs that have not succeeded (--submit hands it to sbatch; the same\n"
    "command again resubmits what failed or was killed); --mpi runs the rows under `mpirun` (or\n"
    "CMD), one rank handing rows to the others as they finish. --status DIR counts the runs by\n"
    "status; --collect DIR merges DIR/summary.csv from the runs that finished.\n"
    "\n"
    "examples:\n"
    "  srdc sweep examples/cantilever_rod.srd -p youngs=1MPa..1GPa:log:16 -j 2\n"
    "  srdc sweep examples/cantilever_rod.srd -p youngs=1MPa..1GPa:log:400 --slurm --chunk 4 --submit\n"
    "  srdc sweep examples/cantilever_rod.srd -p youngs=1MPa..1GPa:log:16 --mpi --ranks 9\n"
    "  srdc sweep examples/pneunet.srd -p kappa0=5/m,10/m,20/m -p tip_force=0,1 --out pneunet_sweep\n"
    "  srdc sweep cantilever.srd -p n=11,21,41     mesh convergence, with `nodes = n;`\n";

static const char *grad_help =
    "usage: srdc grad FILE [-p NAME=VALUE]... [--static|--simulate] [--adjoint] [--objective EXPR]\n"
    "                 [--quiet]\n"
    "\n"
    "Solves the model's static block and prints the derivative of each of its probes with respect\n"
    "to every param, with units (d(tip_z)/d(E) in m/Pa): the equilibrium's stiffness factorised\n"
    "once, then one solve with it per param, the residual's change derived from the elements'\n"
    "energies; the last line gives what the solve and the derivatives cost. How a param\n"
    "moves the model's values comes from elaborating it with the param seeded (dual numbers,\n"
    "exact), or where that carries no derivative (the reference geometry: a path, a mesh) from\n"
    "elaborating it at nearby values (fourth-order differences, about 1e-11 relative). Params that\n"
    "set the discretisation, and the parts' forces on each other, are reported as not derived.\n"
    "\n"
    "With a modes block it also prints the derivative of each mode's frequency (d(f1)/d(E) in\n"
    "Hz/Pa) at the block's configuration, from the exact third derivative of the energy along the\n"
    "mode; a repeated frequency or a rigid mode is named as having none.\n"
    "\n"
    "With a simulate block that has probes (or --simulate; --static for the static block) it runs\n"
    "the simulation and prints the derivatives of its probes at the end of the run: forward\n"
    "sensitivities of the implicit steps taken (one pass for every param), or with --adjoint one\n"
    "backward pass per probe value. The last line gives what the run and the passes cost;\n"
    "SRD_GRAD_MEMORY (bytes) bounds the memory, segments of the run then being recomputed.\n"
    "\n"
    "--objective EXPR (or an optimize block) prints that objective (as `minimize = EXPR;` holds\n"
    "it) and its derivative with respect to every param instead.\n"
    "\n"
    "example:\n"
    "  srdc grad examples/cantilever_rod.srd -p E=2MPa\n";

static const char *optimize_help =
    "usage: srdc optimize FILE [-p NAME=VALUE]... [--out DIR]\n"
    "\n"
    "Minimises the objective of the model's `optimize` block (an expression of the probes and params\n"
    "of its static block, or of its simulation: final values, integral(...) over the steps,\n"
    "track(...) of measurements; track(rod.z, \"curve.csv\") of a measured curve) over the params\n"
    "the block varies, each within its declared range, with NLopt: L-BFGS (default), MMA or SLSQP\n"
    "with the objective's gradients (a static equilibrium's sensitivities, or a simulation's by\n"
    "the adjoint, as `srdc grad`), or BOBYQA without them. -p values are the start.\n"
    "Every evaluation is printed and kept in DIR/history.csv (default DIR: optimize); the optimum's\n"
    "-p values go to DIR/optimum.args, for `srdc run FILE $(cat DIR/optimum.args)` or a built\n"
    "simulator.\n"
    "\n"
    "example:\n"
    "  srdc optimize examples/finger_reach.srd --out out/reach\n";

static const char *render_help =
    "usage: srdc render DIR [-o FILE.png|.gif|.mp4] [--series NAME] [--frame N|first|last|all] [--size WxH]\n"
    "                       [--view auto|front|side|top|iso] [--color FIELD]\n"
    "\n"
    "Draws frames of a run (the VTK series a `run` wrote into DIR) as PNG pictures: rods as\n"
    "shaded tubes of their radius, shell triangles shaded on both sides, springs as lines,\n"
    "point bodies as dots, solids by their surfaces, a flat ground as a grid, and the time. The camera fits every frame of\n"
    "the run, so a series of pictures keeps one view.\n"
    "\n"
    "  -o FILE         the picture (default DIR/NAME.png); with --frame all, FILE_000000.png ...;\n"
    "                  FILE.mp4 or FILE.gif: a video of the run in real time (with ffmpeg)\n"
    "  --series NAME   the series NAME.pvd (default: the one with the most frames)\n"
    "  --frame F       a frame index, first, last (default) or all\n"
    "  --time T        the frame nearest T seconds\n"
    "  --size WxH      pixels (default 960x640)\n"
    "  --view V        auto (default: front for a model in the x-z plane, else a three-quarter\n"
    "                  view from above), front (along +y), side (along -x), top, iso\n"
    "  --eye X,Y,Z, --target X,Y,Z, --up X,Y,Z, --fov DEG\n"
    "                  the camera (metres; the field of view in degrees, 0: orthographic),\n"
    "                  instead of the fitted one\n"
    "  --color FIELD   colour by a field of the frames (velocity, strain, reaction, ...: the\n"
    "                  magnitude of a vector), over its range in the whole run, with a colour bar;\n"
    "                  default: one colour per object\n"
    "\n"
    "examples:\n"
    "  srdc run examples/cantilever_rod.srd --out out/c && srdc render out/c\n"
    "  srdc render out/c --frame all --color velocity -o out/c/frame\n"
    "  srdc render out/s -o out/s/roll.mp4 --color velocity\n";

static const char *plot_help =
    "usage: srdc plot DIR\n"
    "\n"
    "Plots what a run wrote into DIR as PNG pictures, with matplotlib: DIR/probes.png (the\n"
    "simulation's probes against time), DIR/energy.png, DIR/static_probes.png (when the static\n"
    "analysis wrote several load steps), DIR/modes_probes.png and DIR/modes.png. Columns are\n"
    "grouped by unit (DIR/units.csv), one panel per unit, the unit on the axis. Needs Python 3\n"
    "with matplotlib (Debian's python3-matplotlib; SRD_PYTHON names another Python).\n"
    "\n"
    "example:\n"
    "  srdc run examples/jumper.srd --out out/j && srdc plot out/j\n";

static const char *view_help =
    "usage: srdc view DIR [-o FILE.html] [--series NAME] [--max-frames N]\n"
    "\n"
    "Writes one HTML file that plays a run (the VTK series a `run` wrote into DIR) in 3D in a\n"
    "web browser, offline: three.js, the viewer and the frames are inside the file. Drag to\n"
    "rotate, scroll to zoom, right-drag to pan; a time slider, play/pause and speed; colour by\n"
    "object or by a field of the frames (the magnitude of a vector) with a colour bar. Rods are\n"
    "tubes of their radius, shells two-sided triangles, springs lines, point bodies spheres, a\n"
    "flat ground a grid. The page's address can pick a frame and a field:\n"
    "FILE.html#frame=last&field=velocity (frame: first, last or 1 to the number shown).\n"
    "\n"
    "  -o FILE.html      the page (default DIR/NAME.html)\n"
    "  --series NAME     the series NAME.pvd (default: the one with the most frames)\n"
    "  --max-frames N    at most N frames in the page (default 300): every k-th frame from the\n"
    "                    first and the last, k the smallest that keeps N or fewer and 24 MB or\n"
    "                    less of frame data\n"
    "\n"
    "examples:\n"
    "  srdc run examples/parachute.srd --out out/p && srdc view out/p\n"
    "  srdc view out/p -o parachute.html --max-frames 100\n";

static int print_help(const char *cmd)
{
    if (!cmd)
        fputs(usage_text, stdout);
    else if (!strcmp(cmd, "run"))
        fputs(run_help, stdout);
    else if (!strcmp(cmd, "emit-llvm"))
        fputs(emit_help, stdout);
    else if (!strcmp(cmd, "build"))
        fputs(build_help, stdout);
    else if (!strcmp(cmd, "sweep"))
        fputs(sweep_help, stdout);
    else if (!strcmp(cmd, "grad"))
        fputs(grad_help, stdout);
    else if (!strcmp(cmd, "optimize"))
        fputs(optimize_help, stdout);
    else if (!strcmp(cmd, "check"))
        fputs(check_help, stdout);
    else if (!strcmp(cmd, "dump"))
        fputs(dump_help, stdout);
    else if (!strcmp(cmd, "render"))
        fputs(render_help, stdout);
    else if (!strcmp(cmd, "view"))
        fputs(view_help, stdout);
    else if (!strcmp(cmd, "plot"))
        fputs(plot_help, stdout);
    else if (!strcmp(cmd, "help"))
        fputs("usage: srdc help [COMMAND]\n\nShows the help of COMMAND, or the list of commands.\n\nexample:\n  srdc help dump\n",
              stdout);
    else {
        fprintf(stderr, "srdc: error: unknown command `%s`\n", cmd);
        fputs(usage_text, stderr);
        return SRD_EXIT_BAD_INPUT;
    }
    return SRD_EXIT_OK;
}

typedef struct Timings {
    double parse, elab;
} Timings;

/* Front end from file to model, with run-time param overrides (may be none); diagnostics
 * are printed to stderr. */
static srd_model *build_model_with(const char *path, Arena *arena, Program *prog, Timings *tm,
                                   const char *const *overrides, int n_overrides)
{
    srd_model *m = NULL;
    double t0 = srd_milliseconds();
    bool parsed = parse_program(arena, path, parse_stdlib_dir(), prog);
    double t1 = srd_milliseconds();
    if (parsed)
        m = elab_program_with(prog, arena, path, overrides, n_overrides);
    if (tm) {
        tm->parse = t1 - t0;
        tm->elab = srd_milliseconds() - t1;
    }
    diag_flush(stderr);
    return m;
}

static srd_model *build_model(const char *path, Arena *arena, Program *prog, Timings *tm)
{
    return build_model_with(path, arena, prog, tm, NULL, 0);
}

/* Derives and compiles every element kernel, then prints what it took. */
static int print_kernels(const Program *prog, const srd_model *m, const Timings *tm)
{
    ModelKernels mk;
    char err[512];
    double t0 = srd_milliseconds();
    if (!kernels_lower(&mk, prog, m, true, err, sizeof err) || !kernels_jit(&mk, JIT_CHUNK_OPS, err, sizeof err)) {
        fprintf(stderr, "srdc: error: %s\n", err);
        kernels_free(&mk);
        return SRD_EXIT_BAD_INPUT;
    }
    double total = srd_milliseconds() - t0 + tm->parse + tm->elab;
    printf("kernels\n  %-18s %6s %9s %8s %9s %9s %7s\n", "kind", "DOFs", "instances", "value", "gradient",
           "Hessian", "chunks");
    for (int s = 0; s < mk.n; s++) {
        const KernelSet *ks = &mk.sets[s];
        if (!ks->lowered.kind) {
            printf("  %-18s  (no definition yet)\n", m->sets[s].kind);
            continue;
        }
        printf("  %-18s %6d %9d %8d %9d %9d%s %6d\n", ks->lowered.kind, ks->lowered.nd, m->sets[s].n,
               ks->lowered.ops_value, ks->lowered.ops_grad, ks->lowered.ops_jac, ks->lowered.is_force ? "J" : " ",
               ks->chunks);
    }
    printf("compile time\n  parse %.2f ms, elaborate %.2f ms, lower and differentiate %.2f ms, "
           "generate IR %.2f ms, %s %.2f ms; total %.1f ms\n",
           tm->parse, tm->elab, mk.ms_lower, mk.ms_codegen,
           mk.cache_hit ? "load from the kernel cache" : "optimise and JIT", mk.ms_jit, total);
    kernels_free(&mk);
    return SRD_EXIT_OK;
}

static int cmd_check_or_dump(int argc, char **argv, bool dump)
{
    const char *file = NULL;
    bool json = false, elements = false, kernels = false;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--json") && dump)
            json = true;
        else if (!strcmp(argv[i], "--elements") && dump)
            elements = true;
        else if (!strcmp(argv[i], "--kernels") && dump)
            kernels = true;
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return print_help(dump ? "dump" : "check");
        else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "srdc: error: unknown option `%s`\n", argv[i]);
            fprintf(stderr, "hint: see `srdc help %s`\n", dump ? "dump" : "check");
            return SRD_EXIT_BAD_INPUT;
        } else if (file) {
            fprintf(stderr, "srdc: error: more than one input file (`%s` and `%s`)\n", file, argv[i]);
            return SRD_EXIT_BAD_INPUT;
        } else
            file = argv[i];
    }
    if (!file) {
        fprintf(stderr, "srdc: error: no input file\nhint: srdc %s FILE.srd\n", dump ? "dump" : "check");
        return SRD_EXIT_BAD_INPUT;
    }
    Arena arena;
    arena_init(&arena);
    Program prog = { 0 };
    Timings tm;
    srd_model *m = build_model(file, &arena, &prog, &tm);
    int status = m ? SRD_EXIT_OK : SRD_EXIT_BAD_INPUT;
    if (m && dump) {
        if (json)
            srd_model_print_json(m, stdout);
        else
            srd_model_print(m, stdout);
        if (elements)
            srd_model_print_elements(m, stdout);
        if (kernels)
            status = print_kernels(&prog, m, &tm);
        if (fflush(stdout) != 0)
            status = SRD_EXIT_IO;
    }
    srd_model_free(m);
    arena_free(&arena);
    diag_reset();
    return status;
}

static int cmd_run(int argc, char **argv)
{
    srd_run_options o = { .program = "srdc", .out = "out" };
    const char *file = NULL;
    o.overrides = calloc((size_t)argc + 1, sizeof(char *));
    int status = SRD_EXIT_OK;
    for (int i = 0; i < argc && status == SRD_EXIT_OK; i++) {
        const char *a = argv[i];
        int taken = srd_run_options_parse(&o, argc, argv, &i);
        if (taken < 0)
            status = SRD_EXIT_BAD_INPUT;
        else if (taken)
            continue;
        else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            free(o.overrides);
            return print_help("run");
        } else if (a[0] == '-') {
            fprintf(stderr, "srdc: error: unknown option `%s`\nhint: see `srdc help run`\n", a);
            status = SRD_EXIT_BAD_INPUT;
        } else
            file = a;
    }
    if (status == SRD_EXIT_OK && !file) {
        fprintf(stderr, "srdc: error: no input file\nhint: srdc run FILE.srd\n");
        status = SRD_EXIT_BAD_INPUT;
    }
    if (status != SRD_EXIT_OK) {
        free(o.overrides);
        return status;
    }
    Arena arena;
    arena_init(&arena);
    Program prog = { 0 };
    srd_model *m = build_model_with(file, &arena, &prog, NULL, o.overrides, o.n_overrides);
    status = m ? run_model(&prog, m, &o) : SRD_EXIT_BAD_INPUT;
    srd_model_free(m);
    arena_free(&arena);
    diag_reset();
    free(o.overrides);
    return status;
}

/* The default simulator name: the file's base name without .srd. */
static char *default_output(const char *file, bool shared)
{
    const char *base = strrchr(file, '/') ? strrchr(file, '/') + 1 : file;
    size_t n = strlen(base);
    if (n > 4 && !strcmp(base + n - 4, ".srd"))
        n -= 4;
    char *out = malloc(n + 4);
    memcpy(out, base, n);
    strcpy(out + n, shared ? ".so" : "");
    return out;
}

static int cmd_build(int argc, char **argv)
{
    BuildOptions o = { 0 };
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-o") && i + 1 < argc)
            o.output = argv[++i];
        else if (!strcmp(argv[i], "--portable"))
            o.portable = true;
        else if (!strcmp(argv[i], "--static"))
            o.static_libs = true;
        else if (!strcmp(argv[i], "--shared"))
            o.shared = true;
        else if (!strcmp(argv[i], "--quiet"))
            o.quiet = true;
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return print_help("build");
        else if (argv[i][0] == '-') {
            fprintf(stderr, "srdc: error: unknown option `%s`\nhint: see `srdc help build`\n", argv[i]);
            return SRD_EXIT_BAD_INPUT;
        } else if (o.file) {
            fprintf(stderr, "srdc: error: more than one input file (`%s` and `%s`)\n", o.file, argv[i]);
            return SRD_EXIT_BAD_INPUT;
        } else
            o.file = argv[i];
    }
    if (!o.file) {
        fprintf(stderr, "srdc: error: no input file\nhint: srdc build FILE.srd -o NAME\n");
        return SRD_EXIT_BAD_INPUT;
    }
    if (o.shared && o.static_libs) {
        fprintf(stderr, "srdc: error: --shared and --static exclude each other\nhint: a shared library is opened by "
                        "libsrd, which has the runtime; leave out --static\n");
        return SRD_EXIT_BAD_INPUT;
    }
    char *fallback = o.output ? NULL : default_output(o.file, o.shared);
    if (!o.output)
        o.output = fallback;
    char err[512];
    const SrdBackend *b = srd_backend(err, sizeof err);
    if (!b)
        fprintf(stderr, "srdc: error: %s\n", err);
    int status = b ? b->build_simulator(&o) : SRD_EXIT_BAD_INPUT;
    free(fallback);
    return status;
}

/* Two ranges of one param would make every run pass it twice: refused like in `srdc run`. */
static int add_sweep_spec(SweepOptions *o, const char *spec)
{
    int k = srd_override_find((const char *const *)o->specs, o->n_specs, spec);
    if (k >= 0) {
        srd_override_report_twice("srdc", o->specs[k], spec);
        return SRD_EXIT_BAD_INPUT;
    }
    o->specs[o->n_specs++] = spec;
    return SRD_EXIT_OK;
}

/* A count option's value (`--chunk K`, `--ranks N`) from lo to hi; -1 (with a message) when not. */
static int sweep_count(const char *option, const char *text, int lo, int hi, const char *what)
{
    char *end;
    long v = strtol(text, &end, 10);
    if (*end || end == text || v < lo || v > hi) {
        fprintf(stderr, "srdc: error: `%s %s`: %s is a whole number from %d to %d\n", option, text, what, lo, hi);
        fprintf(stderr, "hint: see `srdc help sweep`\n");
        return -1;
    }
    return (int)v;
}

/* The options of the cluster modes (docs/cluster.md); 1 when a was one, -1 on a bad value. */
static int sweep_cluster_option(SweepOptions *o, const char *a, const char *value)
{
    if (!strcmp(a, "--slurm") || !strcmp(a, "--mpi") || !strcmp(a, "--submit")) {
        if (!strcmp(a, "--submit"))
            o->submit = true;
        else if (o->mode != SWEEP_LOCAL && o->mode != (!strcmp(a, "--slurm") ? SWEEP_SLURM : SWEEP_MPI)) {
            fprintf(stderr, "srdc: error: --slurm and --mpi are two ways to run a sweep: give one\n"
                            "hint: an MPI allocation inside a Slurm job: `srdc sweep ... --mpi` in the job script "
                            "(docs/cluster.md)\n");
            return -1;
        } else
            o->mode = !strcmp(a, "--slurm") ? SWEEP_SLURM : SWEEP_MPI;
        return 1;
    }
    if (!value)
        return 0;
    if (!strcmp(a, "--chunk"))
        return (o->chunk = sweep_count(a, value, 1, 1000000, "a chunk, the runs per array task,")) < 0 ? -1 : 2;
    if (!strcmp(a, "--ranks") && !strcmp(value, "1")) {
        fprintf(stderr, "srdc: error: `--ranks 1`: an MPI sweep needs at least 2 ranks, one to hand out the rows "
                        "and the others to run them\nhint: --ranks 3 or more; on one machine, the local pool "
                        "(srdc sweep without --mpi) needs no MPI\n");
        return -1;
    }
    if (!strcmp(a, "--ranks"))
        return (o->ranks = sweep_count(a, value, 2, 100000, "the number of MPI ranks (one manager, then workers)"))
               < 0 ? -1 : 2;
    const char **slot = !strcmp(a, "--partition") ? &o->partition : !strcmp(a, "--time") ? &o->time
                      : !strcmp(a, "--mpirun") ? &o->mpirun : NULL;
    if (slot)
        *slot = value;
    return slot ? 2 : 0;
}

static bool sweep_stray_option(const char *option, const char *mode, const char *flag)
{
    fprintf(stderr, "srdc: error: %s is an option of %s sweeps\nhint: add %s (docs/cluster.md)\n", option, mode, flag);
    return false;
}

/* Options that belong to one mode given without it are refused. */
static bool sweep_modes_agree(const SweepOptions *o)
{
    const char *slurm_only = o->chunk       ? "--chunk"
                           : o->partition   ? "--partition"
                           : o->time        ? "--time"
                           : o->submit      ? "--submit"
                                            : NULL;
    const char *mpi_only = o->ranks ? "--ranks" : o->mpirun ? "--mpirun" : NULL;
    if (slurm_only && o->mode != SWEEP_SLURM)
        return sweep_stray_option(slurm_only, "Slurm", "--slurm");
    if (mpi_only && o->mode != SWEEP_MPI)
        return sweep_stray_option(mpi_only, "MPI", "--mpi");
    return true;
}

/* `srdc sweep --status DIR` and `--collect DIR`: a sweep directory and nothing else. */
static int cmd_sweep_dir(int argc, char **argv)
{
    bool status = !strcmp(argv[0], "--status");
    if (argc != 2) {
        fprintf(stderr, "srdc: error: %s takes a sweep directory and nothing else\nhint: srdc sweep %s DIR\n",
                argv[0], argv[0]);
        return SRD_EXIT_BAD_INPUT;
    }
    return status ? sweep_status(argv[1]) : sweep_collect(argv[1]);
}

static int cmd_sweep(int argc, char **argv)
{
    if (argc > 0 && (!strcmp(argv[0], "--status") || !strcmp(argv[0], "--collect")))
        return cmd_sweep_dir(argc, argv);
    SweepOptions o = { .out = "sweep" };
    o.specs = calloc((size_t)argc + 1, sizeof(char *));
    int status = SRD_EXIT_OK;
    for (int i = 0; i < argc && status == SRD_EXIT_OK; i++) {
        const char *a = argv[i];
        bool has_value = i + 1 < argc;
        int cluster = sweep_cluster_option(&o, a, has_value ? argv[i + 1] : NULL);
        if (cluster != 0) {
            status = cluster < 0 ? SRD_EXIT_BAD_INPUT : SRD_EXIT_OK;
            i += cluster == 2;
        } else if (!strcmp(a, "-p") && has_value)
            status = add_sweep_spec(&o, argv[++i]);
        else if (!strcmp(a, "--csv") && has_value)
            o.sets = argv[++i];
        else if (!strcmp(a, "--out") && has_value)
            o.out = argv[++i];
        else if ((!strcmp(a, "--duration") || !strcmp(a, "--dt")) && has_value) {
            /* Checked here, not by every run. */
            srd_run_options check = { .program = "srdc" };
            int at = i;
            if (srd_run_options_parse(&check, argc, argv, &at) < 0)
                status = SRD_EXIT_BAD_INPUT;
            *(!strcmp(a, "--dt") ? &o.dt : &o.duration) = argv[++i];
        }
        else if (!strcmp(a, "--quiet"))
            o.quiet = true;
        else if (!strcmp(a, "-j") && has_value) {
            char *end;
            long j = strtol(argv[++i], &end, 10);
            if (*end || j < 1 || j > 1024) {
                fprintf(stderr, "srdc: error: `-j %s` needs a number of parallel runs from 1 to 1024\n", argv[i]);
                status = SRD_EXIT_BAD_INPUT;
            }
            o.jobs = (int)j;
        } else if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            free(o.specs);
            return print_help("sweep");
        } else if (a[0] == '-') {
            fprintf(stderr, "srdc: error: unknown option `%s`\nhint: see `srdc help sweep`\n", a);
            status = SRD_EXIT_BAD_INPUT;
        } else if (o.file) {
            fprintf(stderr, "srdc: error: more than one input file (`%s` and `%s`)\n", o.file, a);
            status = SRD_EXIT_BAD_INPUT;
        } else
            o.file = a;
    }
    if (status == SRD_EXIT_OK && !sweep_modes_agree(&o))
        status = SRD_EXIT_BAD_INPUT;
    if (status == SRD_EXIT_OK && !o.file) {
        fprintf(stderr, "srdc: error: no input file\nhint: srdc sweep FILE.srd -p NAME=a..b:log:n\n");
        status = SRD_EXIT_BAD_INPUT;
    }
    if (status == SRD_EXIT_OK)
        status = sweep_model(&o);
    free(o.specs);
    return status;
}

static int cmd_emit_llvm(int argc, char **argv)
{
    const char *file = NULL, *out = NULL;
    bool unoptimized = false;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-o") && i + 1 < argc)
            out = argv[++i];
        else if (!strcmp(argv[i], "--unoptimized"))
            unoptimized = true;
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return print_help("emit-llvm");
        else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "srdc: error: unknown option `%s`\nhint: see `srdc help emit-llvm`\n", argv[i]);
            return SRD_EXIT_BAD_INPUT;
        } else
            file = argv[i];
    }
    if (!file) {
        fprintf(stderr, "srdc: error: no input file\nhint: srdc emit-llvm FILE.srd [-o OUT.ll]\n");
        return SRD_EXIT_BAD_INPUT;
    }
    Arena arena;
    arena_init(&arena);
    Program prog = { 0 };
    srd_model *m = build_model(file, &arena, &prog, NULL);
    int status = m ? SRD_EXIT_OK : SRD_EXIT_BAD_INPUT;
    ModelKernels mk;
    char err[512];
    if (m && !kernels_lower(&mk, &prog, m, true, err, sizeof err)) {
        fprintf(stderr, "srdc: error: %s\n", err);
        status = SRD_EXIT_BAD_INPUT;
    } else if (m) {
        const SrdBackend *b = srd_backend(err, sizeof err);
        if (!b)
            fprintf(stderr, "srdc: error: %s\n", err);
        status = b ? b->emit_llvm(&mk, out, unoptimized) : SRD_EXIT_BAD_INPUT;
        kernels_free(&mk);
    }
    srd_model_free(m);
    arena_free(&arena);
    diag_reset();
    return status;
}

/* The options grad and optimize share: FILE, -p, --quiet; *out takes --out DIR when not NULL. */
static int parse_model_options(GradOptions *o, const char **out, int argc, char **argv, const char *cmd)
{
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "-p") && i + 1 < argc)
            o->overrides[o->n_overrides++] = argv[++i];
        else if (out && !strcmp(argv[i], "--out") && i + 1 < argc)
            *out = argv[++i];
        else if (!strcmp(argv[i], "--quiet"))
            o->quiet = true;
        else if (!strcmp(cmd, "grad") && (!strcmp(argv[i], "--static") || !strcmp(argv[i], "--simulate")))
            o->analysis = argv[i][2] == 's' && argv[i][3] == 't' ? GRAD_STATIC : GRAD_SIMULATE;
        else if (!strcmp(cmd, "grad") && !strcmp(argv[i], "--adjoint"))
            o->adjoint = true;
        else if (!strcmp(cmd, "grad") && !strcmp(argv[i], "--objective") && i + 1 < argc)
            o->objective = argv[++i];
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return print_help(cmd), -1;
        else if (argv[i][0] == '-') {
            fprintf(stderr, "srdc: error: unknown option `%s`\nhint: see `srdc help %s`\n", argv[i], cmd);
            return SRD_EXIT_BAD_INPUT;
        } else
            o->file = argv[i];
    }
    if (!o->file) {
        fprintf(stderr, "srdc: error: no input file\nhint: srdc %s FILE.srd\n", cmd);
        return SRD_EXIT_BAD_INPUT;
    }
    return SRD_EXIT_OK;
}

static int cmd_optimize(int argc, char **argv)
{
    OptimizeOptions o = { { 0 }, NULL };
    o.model.overrides = calloc((size_t)argc + 1, sizeof(char *));
    int status = parse_model_options(&o.model, &o.out, argc, argv, "optimize");
    if (status == SRD_EXIT_OK)
        status = optimize_model(&o);
    free(o.model.overrides);
    return status < 0 ? SRD_EXIT_OK : status;
}

static int cmd_grad(int argc, char **argv)
{
    GradOptions o = { 0 };
    o.overrides = calloc((size_t)argc + 1, sizeof(char *));
    int status = parse_model_options(&o, NULL, argc, argv, "grad");
    if (status == SRD_EXIT_OK)
        status = grad_model(&o);
    free(o.overrides);
    return status < 0 ? SRD_EXIT_OK : status;
}

int main(int argc, char **argv)
{
    tier_mark_start();
    srd_exit_when_out_of_memory("srdc");
    if (argc < 2)
        return print_help(NULL), SRD_EXIT_BAD_INPUT;
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h"))
        return print_help(NULL);
    if (!strcmp(cmd, "--version")) {
        printf("srdc %s\n", SRD_VERSION);
        return SRD_EXIT_OK;
    }
    if (!strcmp(cmd, "help"))
        return print_help(argc > 2 ? argv[2] : NULL);
    if (!strcmp(cmd, "check"))
        return cmd_check_or_dump(argc - 2, argv + 2, false);
    if (!strcmp(cmd, "dump"))
        return cmd_check_or_dump(argc - 2, argv + 2, true);
    if (!strcmp(cmd, "emit-llvm"))
        return cmd_emit_llvm(argc - 2, argv + 2);
    if (!strcmp(cmd, "run"))
        return cmd_run(argc - 2, argv + 2);
    if (!strcmp(cmd, "build"))
        return cmd_build(argc - 2, argv + 2);
    if (!strcmp(cmd, "sweep"))
        return cmd_sweep(argc - 2, argv + 2);
    if (!strcmp(cmd, "grad"))
        return cmd_grad(argc - 2, argv + 2);
    if (!strcmp(cmd, "optimize"))
        return cmd_optimize(argc - 2, argv + 2);
    if (!strcmp(cmd, "render"))
        return srd_render_command(argc - 2, argv + 2);
    if (!strcmp(cmd, "plot"))
        return srd_plot_command(argc - 2, argv + 2);
    if (!strcmp(cmd, "view"))
        return srd_view_command(argc - 2, argv + 2);
    fprintf(stderr, "srdc: error: unknown command `%s`\n", cmd);
    if (strstr(cmd, ".srd"))
        fprintf(stderr, "hint: to check a file, run `srdc check %s`\n", cmd);
    else
        fputs("hint: the commands are check, dump, run, build, sweep, grad, optimize, emit-llvm, render, view, plot and help\n",
              stderr);
    return SRD_EXIT_BAD_INPUT;
}
