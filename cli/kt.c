/* kt: the ktune umbrella command. Each subcommand is one stage's front door. */
#include <stdio.h>
#include <string.h>
#include "cli.h"

static void kt_usage(FILE *f)
{
    fprintf(f, "usage: kt <command> [options]\n\n"
               "commands:\n"
               "  gen     enumerate a recipe, compile its variants, read their resources into a database\n"
               "  targets list the targets ktune builds for\n"
               "  ops     list the op families (problem key, dtypes, parameters, workspace)\n"
               "  problems list the GEMM problem keys of a model at a tensor-parallel size\n"
               "  explain which kernel a tuned database serves for a problem, by which path, and why\n"
               "  dump    a tuned database as sorted, diffable text\n"
               "  worker  the sweep's GPU process (started by tune; --check-reference is a device test)\n\n"
               "kt <command> --help describes a command.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        kt_usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "gen") == 0) return kt_cmd_gen(argc - 1, argv + 1);
    if (strcmp(argv[1], "targets") == 0) return kt_cmd_targets(argc - 1, argv + 1);
    if (strcmp(argv[1], "ops") == 0) return kt_cmd_ops(argc - 1, argv + 1);
    if (strcmp(argv[1], "problems") == 0) return kt_cmd_problems(argc - 1, argv + 1);
    if (strcmp(argv[1], "explain") == 0) return kt_cmd_explain(argc - 1, argv + 1);
    if (strcmp(argv[1], "dump") == 0) return kt_cmd_dump(argc - 1, argv + 1);
    if (strcmp(argv[1], "worker") == 0) return kt_cmd_worker(argc - 1, argv + 1);
    fprintf(stderr, "kt: unknown command '%s'\n", argv[1]);
    kt_usage(stderr);
    return 2;
}
