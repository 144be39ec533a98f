/* closure.c: include-closure discovery and hashing. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "closure.h"
#include "file_io.h"
#include "sha256.h"

#define CLOSURE_MAX_FILES 256

typedef struct closure_set {
    char *paths[CLOSURE_MAX_FILES];  /* relative to the templates root, normalised */
    int n;
} closure_set;

/* Collapse "a/./b" and "a/x/../b" so one file has one name in the set. */
static void closure_normalise(char *p)
{
    char *parts[64];
    int n = 0;
    char tmp[1024];
    snprintf(tmp, sizeof tmp, "%s", p);
    for (char *tok = strtok(tmp, "/"); tok && n < 64; tok = strtok(NULL, "/")) {
        if (strcmp(tok, ".") == 0) continue;
        if (strcmp(tok, "..") == 0 && n > 0 && strcmp(parts[n - 1], "..") != 0) { n--; continue; }
        parts[n++] = tok;
    }
    size_t used = 0;
    p[0] = 0;
    for (int i = 0; i < n; i++) used += (size_t)sprintf(p + used, "%s%s", i ? "/" : "", parts[i]);
}

static int closure_has(const closure_set *s, const char *rel)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->paths[i], rel) == 0) return 1;
    return 0;
}

static int closure_visit(const char *root, const char *rel, closure_set *s, const char *from, int line,
                         char *err, size_t errlen)
{
    char full[3200];
    if (closure_has(s, rel)) return 0;
    snprintf(full, sizeof full, "%s/%s", root, rel);
    size_t len;
    char *text = file_read_all(full, 0, &len);
    if (!text) {
        if (from) snprintf(err, errlen, "%s/%s:%d: included file '%s' not found under %s", root, from, line, rel, root);
        else snprintf(err, errlen, "%s: not found", full);
        return 1;
    }
    if (s->n == CLOSURE_MAX_FILES) { free(text); snprintf(err, errlen, "%s: include closure exceeds %d files", full, CLOSURE_MAX_FILES); return 1; }
    s->paths[s->n++] = strdup(rel);
    int rc = 0, lineno = 0;
    for (char *p = text; *p && !rc; ) {
        char *eol = strchr(p, '\n');
        lineno++;
        char *q = p;
        while (*q == ' ' || *q == '\t') q++;
        if (*q == '#') {
            q++;
            while (*q == ' ' || *q == '\t') q++;
            if (strncmp(q, "include", 7) == 0) {
                q += 7;
                while (*q == ' ' || *q == '\t') q++;
                char *close = *q == '"' ? strchr(q + 1, '"') : NULL;
                if (close && (!eol || close < eol)) {
                    char inc[1024], cand[2100], dir[1024];
                    snprintf(inc, sizeof inc, "%.*s", (int)(close - q - 1), q + 1);
                    /* templates root first (how templates name each other), then beside the includer */
                    snprintf(cand, sizeof cand, "%s", inc);
                    snprintf(full, sizeof full, "%s/%s", root, cand);
                    if (access(full, R_OK) != 0) {
                        snprintf(dir, sizeof dir, "%s", rel);
                        char *slash = strrchr(dir, '/');
                        if (slash) { *slash = 0; snprintf(cand, sizeof cand, "%s/%s", dir, inc); }
                    }
                    closure_normalise(cand);
                    rc = closure_visit(root, cand, s, rel, lineno, err, errlen);
                }
            }
        }
        p = eol ? eol + 1 : p + strlen(p);
    }
    free(text);
    return rc;
}

static int closure_cmp(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int closure_hash(const char *templates_root, const char *const *roots, int nroots,
                 char hex[65], int *nfiles, char *err, size_t errlen)
{
    closure_set s = {{0}, 0};
    int rc = 0;
    for (int i = 0; i < nroots && !rc; i++) {
        char rel[1024];
        snprintf(rel, sizeof rel, "%s", roots[i]);
        closure_normalise(rel);
        rc = closure_visit(templates_root, rel, &s, NULL, 0, err, errlen);
    }
    if (!rc) {
        qsort(s.paths, (size_t)s.n, sizeof s.paths[0], closure_cmp);
        sha256_ctx c;
        sha256_init(&c);
        for (int i = 0; i < s.n && !rc; i++) {
            char full[2048];
            size_t len;
            snprintf(full, sizeof full, "%s/%s", templates_root, s.paths[i]);
            char *text = file_read_all(full, 0, &len);
            if (!text) { snprintf(err, errlen, "%s: vanished while hashing", full); rc = 1; break; }
            sha256_update(&c, s.paths[i], strlen(s.paths[i]) + 1);
            sha256_update(&c, &len, sizeof len);
            sha256_update(&c, text, len);
            free(text);
        }
        sha256_final_hex(&c, hex);
        if (nfiles) *nfiles = s.n;
    }
    for (int i = 0; i < s.n; i++) free(s.paths[i]);
    return rc;
}
