/* kt ops: the op families of this build (runtime/op.h's table), each with its problem key's
 * dimensions and bucket edges, dtypes, variant parameters and workspace, so `tune --only`,
 * `kt explain --op` and --shapes entries can be written without reading the source. */
#include <stdio.h>
#include <string.h>
#include "cli.h"
#include "runtime/op.h"

int kt_cmd_ops(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("usage: kt ops\n\nLists the op families this build tunes and serves.\n");
        return 0;
    }
    if (argc > 1) { fprintf(stderr, "kt ops: unexpected '%s'\n", argv[1]); return 2; }
    for (int i = 0; i < kt_op_count(); i++) {
        const kt_op *op = kt_op_at(i);
        printf("%s: %s\n  key:       %s <dtype>", op->name, op->summary, op->name);
        for (int d = 0; d < op->ndims; d++) printf(" %s%sN", op->dims[d].name, op->dims[d].bucketed ? "<=" : "=");
        printf("\n  dtypes:   ");
        for (int t = 0; t < op->ndtypes; t++) printf(" %s", op->dtypes[t]);
        /* one line per bucketed dimension; the first decides the phase */
        for (int b = 0, first = 1; b < op->ndims; b++) {
            const kt_op_dim *d = &op->dims[b];
            if (!d->bucketed) continue;
            printf("\n  buckets:   %s <=", d->name);
            for (int e = 0; e < d->nedges; e++) printf(" %d", d->edges[e]);
            if (first) printf("  (decode up to %d)", op->decode_edge);
            first = 0;
        }
        /* the static dimensions whose 0 means "none" (win=0: no sliding window) */
        for (int z = 0, first = 1; z < op->ndims; z++)
            if (op->dims[z].zero_ok) printf("%s %s", first ? "\n  may be 0: " : "", op->dims[z].name), first = 0;
        printf("\n  params:   ");
        for (int p = 0; p < op->nparams; p++) printf(" %s", op->params[p].name);
        printf("\n  workspace:");
        if (op->nworkspaces == 0) printf(" none");
        for (int w = 0; w < op->nworkspaces; w++) printf(" %s", op->workspace_names[w]);
        printf("\n  from models: %s\n", op->from_model ? "yes" : "no");
    }
    return 0;
}
