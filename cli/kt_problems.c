/* kt problems: the GEMM problem keys one rank of a model runs at a tensor-parallel size, one line
 * per key, so what the tuner must cover is visible before anything is tuned (seed 003). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tuner/model.h"
#include "cli.h"

static void problems_usage(FILE *f)
{
    fprintf(f, "usage: kt problems --modelpath DIR --tp N\n\n"
               "  --modelpath DIR  a model directory holding config.json (or the config.json itself),\n"
               "                   e.g. models/llama-3.1-8b; Llama, Mistral, Qwen2 and Qwen3 dense decoders\n"
               "  --tp N           tensor-parallel size, sharded as vLLM does\n\n"
               "Prints one line per problem key (every GEMM shape of a rank x every M bucket): the key, a\n"
               "tab, and the layers it serves with their calls per forward pass. A summary goes to stderr.\n");
}

int kt_cmd_problems(int argc, char **argv)
{
    const char *modelpath = NULL, *tp_text = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) { problems_usage(stdout); return 0; }
        if (strcmp(a, "--modelpath") != 0 && strcmp(a, "--tp") != 0) {
            fprintf(stderr, "kt problems: unknown option '%s'\n", a);
            problems_usage(stderr);
            return 2;
        }
        if (!val) { fprintf(stderr, "kt problems: %s needs a value\n", a); problems_usage(stderr); return 2; }
        if (strcmp(a, "--modelpath") == 0) modelpath = val;
        else tp_text = val;
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
    char err[768];
    if (model_load(modelpath, (int)tp, &m, err, sizeof err)) {
        fprintf(stderr, "kt problems: %s\n", err);
        return 1;
    }
    for (int i = 0; i < m.nproblems; i++) {
        const model_problem *p = &m.problems[i];
        char layers[64] = "";
        for (int l = 0; l < p->nlayers; l++)
            snprintf(layers + strlen(layers), sizeof layers - strlen(layers), "%s%s", l ? "," : "",
                     model_layer_name(p->layers[l]));
        for (int b = 0; b < model_m_bucket_count(); b++) {
            char key[96];
            if (model_problem_key(p, model_m_bucket_at(b), key, sizeof key) < 0) {
                fprintf(stderr, "kt problems: key for n=%d k=%d does not fit\n", p->n, p->k);
                return 1;
            }
            printf("%s\t%s x%d/forward\n", key, layers, p->count);
        }
    }
    const model_config *c = &m.config;
    fprintf(stderr, "%s: %s %s, tp %d: %d q heads and %d kv heads per rank", c->path, c->architecture, c->dtype,
            m.tp, m.heads_per_rank, m.kv_heads_per_rank);
    if (m.kv_replicas > 1) fprintf(stderr, " (each kv head replicated on %d ranks)", m.kv_replicas);
    fprintf(stderr, "; %d GEMM shapes x %d M buckets = %d problem keys\n", m.nproblems, model_m_bucket_count(),
            m.nproblems * model_m_bucket_count());
    return 0;
}
