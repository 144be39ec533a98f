/* kt problems: the problem keys one rank of a model runs at a tensor-parallel size, for every op
 * family (or those --only names), one line per key, so what the tuner must cover is visible
 * before anything is tuned (seed 003). The same derivation as tune's (tuner/tune.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tuner/model.h"
#include "tuner/sweep.h"
#include "tuner/tune.h"
#include "cli.h"

static void problems_usage(FILE *f)
{
    fprintf(f, "usage: kt problems --modelpath DIR --tp N [--only OPS]\n\n"
               "  --modelpath DIR  a model directory holding config.json (or the config.json itself),\n"
               "                   e.g. models/llama-3.1-8b; Llama, Mistral, Qwen2 and Qwen3 dense decoders\n"
               "  --tp N           tensor-parallel size, sharded as vLLM does\n"
               "  --only OPS       op families, comma-separated (default: every family; `kt ops` lists them)\n\n"
               "Prints one line per problem key (every family's shapes of a rank x its buckets): the key, a\n"
               "tab, and the layers it serves with their calls per forward pass. A summary goes to stderr.\n");
}

int kt_cmd_problems(int argc, char **argv)
{
    const char *modelpath = NULL, *tp_text = NULL, *only = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) { problems_usage(stdout); return 0; }
        const char **slot = !strcmp(a, "--modelpath") ? &modelpath : !strcmp(a, "--tp") ? &tp_text :
                            !strcmp(a, "--only") ? &only : NULL;
        if (!slot) {
            fprintf(stderr, "kt problems: unknown option '%s'\n", a);
            problems_usage(stderr);
            return 2;
        }
        if (!val) { fprintf(stderr, "kt problems: %s needs a value\n", a); problems_usage(stderr); return 2; }
        *slot = val;
        i++;
    }
    if (!modelpath || !tp_text) {
        fprintf(stderr, "kt problems: --modelpath and --tp are required\n");
        problems_usage(stderr);
        return 2;
    }
    char *end;
    long tp = strtol(tp_text, &end, 10);
    if (end == tp_text || *end || tp < 1 || tp > 1024) {
        fprintf(stderr, "kt problems: --tp %s: expected a count 1..1024\n", tp_text);
        return 2;
    }
    model_problems m;
    sweep_problem *ps = NULL;
    int np = 0;
    char err[768];
    if (kt_tune_problems(modelpath, (int)tp, NULL, only, &m, &ps, &np, err, sizeof err)) {
        fprintf(stderr, "kt problems: %s\n", err);
        return 1;
    }
    for (int i = 0; i < np; i++) printf("%s\t%s x%d/forward\n", ps[i].key, ps[i].layers, ps[i].calls);
    const model_config *c = &m.config;
    fprintf(stderr, "%s: %s %s, tp %d: %d q heads and %d kv heads per rank", c->path, c->architecture, c->dtype,
            m.tp, m.heads_per_rank, m.kv_heads_per_rank);
    if (m.kv_replicas > 1) fprintf(stderr, " (each kv head replicated on %d ranks)", m.kv_replicas);
    fprintf(stderr, "; %d problem keys\n", np);
    for (int i = 0; i < m.nattn; i++)
        fprintf(stderr, "  attention %s: %d layers, head_dim %d, %d q / %d kv heads per rank, window %d, softcap %d\n",
                m.attn[i].kind, m.attn[i].layers, m.attn[i].head_dim, m.attn[i].heads_per_rank,
                m.attn[i].kv_heads_per_rank, m.attn[i].window, m.attn[i].softcap);
    for (int i = 0; i < m.nnot_derived; i++)
        fprintf(stderr, "  not derived: %s x%d/forward: %s\n", m.not_derived[i].layers, m.not_derived[i].count,
                m.not_derived[i].reason);
    free(ps);
    return 0;
}
