/* shapes.c: see shapes.h. */
#include "shapes.h"
#include "model.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int bsh_has_config(const char *models_dir, const char *name)
{
    char path[1024];
    struct stat st;
    if (name[0] == '.')
        return 0;
    snprintf(path, sizeof path, "%s/%s/config.json", models_dir, name);
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Appends name to a comma-separated list unless it is there already. */
static void bsh_add_word(char *list, size_t len, const char *word)
{
    size_t wl = strlen(word);
    for (const char *p = list; *p;) {
        const char *end = strchr(p, ',');
        size_t l = end ? (size_t)(end - p) : strlen(p);
        if (l == wl && !strncmp(p, word, wl))
            return;
        p = end ? end + 1 : p + l;
    }
    size_t used = strlen(list);
    snprintf(list + used, len - used, "%s%s", used ? "," : "", word);
}

static bsh_shape *bsh_find_or_add(bsh_list *l, int tp, int n, int k)
{
    for (int i = 0; i < l->n; i++)
        if (l->v[i].tp == tp && l->v[i].n == n && l->v[i].k == k)
            return &l->v[i];
    if (l->n == l->cap) {
        int cap = l->cap ? l->cap * 2 : 32;
        bsh_shape *v = realloc(l->v, sizeof *v * (size_t)cap);
        if (!v)
            return NULL;
        l->v = v;
        l->cap = cap;
    }
    bsh_shape *s = &l->v[l->n++];
    memset(s, 0, sizeof *s);
    s->tp = tp;
    s->n = n;
    s->k = k;
    return s;
}

int bsh_collect(const char *models_dir, const int *tps, int ntp, bsh_list *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    struct dirent **names = NULL;
    int nn = scandir(models_dir, &names, NULL, alphasort);
    if (nn < 0) {
        snprintf(err, errlen, "--models %s: %s", models_dir, strerror(errno));
        return -1;
    }
    int rc = 0, models = 0;
    for (int t = 0; t < ntp && rc == 0; t++)
        for (int i = 0; i < nn && rc == 0; i++) {
            const char *name = names[i]->d_name;
            if (!bsh_has_config(models_dir, name))
                continue;
            models += t == 0;
            char dir[1024], why[512];
            snprintf(dir, sizeof dir, "%s/%s", models_dir, name);
            model_problems mp;
            if (model_load(dir, tps[t], &mp, why, sizeof why)) {
                fprintf(stderr, "bench_gemm: skipping %s at tp %d: %s\n", name, tps[t], why);
                continue;
            }
            for (int p = 0; p < mp.nproblems; p++) {
                const model_problem *pr = &mp.problems[p];
                bsh_shape *s = bsh_find_or_add(out, tps[t], pr->n, pr->k);
                if (!s) {
                    snprintf(err, errlen, "out of memory");
                    rc = -1;
                    break;
                }
                size_t before = strlen(s->models);
                bsh_add_word(s->models, sizeof s->models, name);
                s->nmodels += strlen(s->models) != before;
                for (int l = 0; l < pr->nlayers; l++)
                    bsh_add_word(s->layers, sizeof s->layers, model_layer_name(pr->layers[l]));
            }
        }
    for (int i = 0; i < nn; i++)
        free(names[i]);
    free(names);
    if (rc == 0 && models == 0) {
        snprintf(err, errlen, "--models %s: no <name>/config.json under it", models_dir);
        rc = -1;
    } else if (rc == 0 && out->n == 0) {
        snprintf(err, errlen, "--models %s: no model could be split at the tensor parallelisms asked for", models_dir);
        rc = -1;
    }
    if (rc)
        bsh_free(out);
    return rc;
}

void bsh_free(bsh_list *l)
{
    free(l->v);
    memset(l, 0, sizeof *l);
}
