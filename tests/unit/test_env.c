/* test_env.c: the environment knobs (runtime/kt_env.h) are read through kt_env_get only, and the
 * table in runtime/kt_env.c and README.md's Environment table name the same variables, both ways.
 * Runs from the repository root (tests/run_unit.sh does). */
#define _XOPEN_SOURCE 700
#include <ctype.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "kt_test.h"
#include "runtime/kt_env.h"

/* spelt in two pieces so this file does not match what it looks for */
static const char GETENV_CALL[] = "getenv" "(";

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) { free(s); s = NULL; }
    if (s) s[n] = 0;
    fclose(f);
    return s;
}

static int in_table(const char *name, size_t len)
{
    int n;
    const kt_env_knob *k = kt_env_knobs(&n);
    for (int i = 0; i < n; i++)
        if (strlen(k[i].name) == len && strncmp(k[i].name, name, len) == 0) return 1;
    return 0;
}

static int line_of(const char *s, const char *at)
{
    int line = 1;
    for (const char *p = s; p < at; p++) line += *p == '\n';
    return line;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

static size_t name_len(const char *p)
{
    size_t n = 0;
    while (isupper((unsigned char)p[n]) || isdigit((unsigned char)p[n]) || p[n] == '_') n++;
    return n;
}

static int stray_getenv, unknown_names;

/* Every name after `prefix` (a literal, "kt_env_get(\"", "${KT_", ...) must be in the table. */
static void check_names(const char *path, const char *s, const char *prefix, size_t keep)
{
    for (const char *p = strstr(s, prefix); p; p = strstr(p + 1, prefix)) {
        const char *name = p + strlen(prefix) - keep;
        size_t len = name_len(name);
        if (len && !in_table(name, len)) {
            unknown_names++;
            fprintf(stderr, "%s:%d: %.*s is not in runtime/kt_env.c's table\n", path, line_of(s, p), (int)len, name);
        }
    }
}

static int visit(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    const char *base = path + ftw->base;
    if (type == FTW_D && ftw->level > 0 &&
        (!strcmp(base, ".git") || !strcmp(base, "out") || !strcmp(base, "shared") || !strcmp(base, "node_modules")))
        return FTW_SKIP_SUBTREE;
    if (type != FTW_F) return FTW_CONTINUE;
    int is_c = ends_with(path, ".c") || ends_with(path, ".h");
    int is_script = ends_with(path, ".sh") || ends_with(path, ".lua") || !strcmp(path, "./Makefile") || !strcmp(path, "./tune");
    if (!is_c && !is_script) return FTW_CONTINUE;
    char *s = slurp(path);
    if (!s) return FTW_CONTINUE;
    if (ends_with(path, ".c") && strcmp(path, "./runtime/kt_env.c") != 0)
        for (const char *p = strstr(s, GETENV_CALL); p; p = strstr(p + 1, GETENV_CALL)) {
            stray_getenv++;
            fprintf(stderr, "%s:%d: calls getenv directly; use kt_env_get (runtime/kt_env.h)\n", path, line_of(s, p));
        }
    if (is_c) check_names(path, s, "kt_env_get(\"", 0);
    if (is_script) {
        check_names(path, s, "${KT_", 3);
        check_names(path, s, "$KT_", 3);
        check_names(path, s, "os.getenv" "(\"", 0);
    }
    free(s);
    return FTW_CONTINUE;
}

/* README.md's "## Environment" table: every backticked name in a row's first cell. */
static int readme_names(char names[][64], int max)
{
    char *s = slurp("README.md");
    KT_CHECK(s != NULL);
    if (!s) return 0;
    const char *sec = strstr(s, "\n## Environment\n");
    KT_CHECK(sec != NULL);
    int n = 0;
    if (sec) {
        const char *end = strstr(sec + 1, "\n## ");
        if (!end) end = s + strlen(s);
        for (const char *line = sec + 1; line && line < end; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
            if (line[0] != '|') continue;
            const char *cell_end = strchr(line + 1, '|');
            if (!cell_end || cell_end > end) continue;
            for (const char *p = line + 1; p < cell_end; p++) {
                if (*p != '`') continue;
                const char *q = memchr(p + 1, '`', (size_t)(cell_end - p - 1));
                if (!q) break;
                if (n < max) snprintf(names[n++], 64, "%.*s", (int)(q - p - 1), p + 1);
                p = q;
            }
        }
    }
    free(s);
    return n;
}

static void test_get(void)
{
    setenv("KT_CACHE", "/tmp/kt-env-test-cache", 1);
    KT_CHECK(kt_env_get("KT_CACHE") && strcmp(kt_env_get("KT_CACHE"), "/tmp/kt-env-test-cache") == 0);
    unsetenv("KT_CACHE");
    KT_CHECK(kt_env_get("KT_CACHE") == NULL);
    /* a name outside the table is refused even when it is set */
    const char *bogus = "KT_NOT_A_KNOB";
    setenv(bogus, "1", 1);
    KT_CHECK(kt_env_get(bogus) == NULL);
    KT_CHECK(kt_env_get(NULL) == NULL);
}

static void test_table(void)
{
    int n;
    const kt_env_knob *k = kt_env_knobs(&n);
    KT_CHECK(n > 0);
    for (int i = 0; i < n; i++) {
        KT_CHECK(k[i].name && name_len(k[i].name) == strlen(k[i].name));
        KT_CHECK(k[i].dflt && k[i].dflt[0]);
        KT_CHECK(k[i].meaning && k[i].meaning[0] && !strchr(k[i].meaning, '\n'));
        for (int j = 0; j < i; j++)
            if (!strcmp(k[i].name, k[j].name)) { KT_CHECK(!"duplicate name"); fprintf(stderr, "  %s twice\n", k[i].name); }
    }
}

static void test_sources(void)
{
    FILE *f = fopen("runtime/kt_env.c", "r");
    KT_CHECK(f != NULL);   /* run from the repository root */
    if (f) fclose(f);
    stray_getenv = unknown_names = 0;
    KT_CHECK(nftw(".", visit, 32, FTW_PHYS | FTW_ACTIONRETVAL) == 0);
    KT_CHECK_INT(stray_getenv, 0);
    KT_CHECK_INT(unknown_names, 0);
}

static void test_readme(void)
{
    static char names[256][64];
    int nr = readme_names(names, 256);
    KT_CHECK(nr > 0);
    for (int i = 0; i < nr; i++)
        if (!in_table(names[i], strlen(names[i]))) {
            KT_CHECK(!"README row not in the table");
            fprintf(stderr, "  README.md's Environment table has %s; runtime/kt_env.c's table does not\n", names[i]);
        }
    int n;
    const kt_env_knob *k = kt_env_knobs(&n);
    for (int i = 0; i < n; i++) {
        int found = 0;
        for (int j = 0; j < nr; j++) found |= !strcmp(names[j], k[i].name);
        if (!found) {
            KT_CHECK(!"knob missing from README");
            fprintf(stderr, "  %s is in runtime/kt_env.c's table, not in README.md's Environment table\n", k[i].name);
        }
    }
}

int main(void)
{
    test_get();
    test_table();
    test_sources();
    test_readme();
    KT_TEST_END();
}
