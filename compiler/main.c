/* main.c — the srdc command line: the pass list of each command reads top to bottom here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "elab.h"
#include "parse.h"

#ifndef SRD_VERSION
#define SRD_VERSION "0.0.0"
#endif

enum { EXIT_OK = 0, EXIT_BAD_INPUT = 1, EXIT_NUMERIC = 2, EXIT_IO = 3 };

static const char *usage_text =
    "usage: srdc <command> [options] FILE\n"
    "\n"
    "commands:\n"
    "  check FILE          parse, check and elaborate FILE; print diagnostics only\n"
    "  dump FILE [--json] [--elements]\n"
    "                      print the elaborated model: counts of nodes, edges, triangles,\n"
    "                      DOFs, elements by kind, fixed DOFs, total mass, bandwidth;\n"
    "                      --elements lists every element instance with its stencil\n"
    "  help [COMMAND]      show help for a command\n"
    "\n"
    "options:\n"
    "  --help, -h          show this help\n"
    "  --version           print the version\n"
    "\n"
    "exit status: 0 success, 1 bad input, 2 numerical failure, 3 I/O error\n"
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
    "usage: srdc dump FILE [--json] [--elements]\n"
    "\n"
    "Builds the model like `check` and prints a summary: objects, nodes, edges, triangles,\n"
    "DOFs by kind, fixed DOFs, total mass, half-bandwidth before and after the\n"
    "bandwidth-reducing ordering, element instances by kind, params and environment.\n"
    "--json prints the same as one JSON object for scripts. --elements then lists every\n"
    "element instance: its nodes, its edges with orientation signs, and its data.\n"
    "\n"
    "examples:\n"
    "  srdc dump examples/cantilever_rod.srd\n"
    "  srdc dump --json examples/parachute.srd | python3 -m json.tool\n"
    "  srdc dump --elements examples/star_roller.srd | less\n";

static int print_help(const char *cmd)
{
    if (!cmd)
        fputs(usage_text, stdout);
    else if (!strcmp(cmd, "check"))
        fputs(check_help, stdout);
    else if (!strcmp(cmd, "dump"))
        fputs(dump_help, stdout);
    else if (!strcmp(cmd, "help"))
        fputs("usage: srdc help [COMMAND]\n\nShows the help of COMMAND, or the list of commands.\n\nexample:\n  srdc help dump\n",
              stdout);
    else {
        fprintf(stderr, "srdc: error: unknown command `%s`\n", cmd);
        fputs(usage_text, stderr);
        return EXIT_BAD_INPUT;
    }
    return EXIT_OK;
}

/* Front end from file to model; diagnostics are printed to stderr. */
static srd_model *build_model(const char *path, Arena *arena)
{
    Program prog = { 0 };
    srd_model *m = NULL;
    if (parse_program(arena, path, parse_stdlib_dir(), &prog))
        m = elab_program(&prog, arena, path);
    diag_flush(stderr);
    return m;
}

static int cmd_check_or_dump(int argc, char **argv, bool dump)
{
    const char *file = NULL;
    bool json = false, elements = false;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--json") && dump)
            json = true;
        else if (!strcmp(argv[i], "--elements") && dump)
            elements = true;
        else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
            return print_help(dump ? "dump" : "check");
        else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "srdc: error: unknown option `%s`\n", argv[i]);
            fprintf(stderr, "hint: see `srdc help %s`\n", dump ? "dump" : "check");
            return EXIT_BAD_INPUT;
        } else if (file) {
            fprintf(stderr, "srdc: error: more than one input file (`%s` and `%s`)\n", file, argv[i]);
            return EXIT_BAD_INPUT;
        } else
            file = argv[i];
    }
    if (!file) {
        fprintf(stderr, "srdc: error: no input file\nhint: srdc %s FILE.srd\n", dump ? "dump" : "check");
        return EXIT_BAD_INPUT;
    }
    Arena arena;
    arena_init(&arena);
    srd_model *m = build_model(file, &arena);
    int status = m ? EXIT_OK : EXIT_BAD_INPUT;
    if (m && dump) {
        if (json)
            srd_model_print_json(m, stdout);
        else
            srd_model_print(m, stdout);
        if (elements)
            srd_model_print_elements(m, stdout);
        if (fflush(stdout) != 0)
            status = EXIT_IO;
    }
    srd_model_free(m);
    arena_free(&arena);
    diag_reset();
    return status;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return print_help(NULL), EXIT_BAD_INPUT;
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h"))
        return print_help(NULL);
    if (!strcmp(cmd, "--version")) {
        printf("srdc %s\n", SRD_VERSION);
        return EXIT_OK;
    }
    if (!strcmp(cmd, "help"))
        return print_help(argc > 2 ? argv[2] : NULL);
    if (!strcmp(cmd, "check"))
        return cmd_check_or_dump(argc - 2, argv + 2, false);
    if (!strcmp(cmd, "dump"))
        return cmd_check_or_dump(argc - 2, argv + 2, true);
    fprintf(stderr, "srdc: error: unknown command `%s`\n", cmd);
    if (strstr(cmd, ".srd"))
        fprintf(stderr, "hint: to check a file, run `srdc check %s`\n", cmd);
    else
        fputs("hint: the commands are check, dump and help\n", stderr);
    return EXIT_BAD_INPUT;
}
