/* test_pipeline: kt gen's freshness laws on a tiny template compiled for gfx1201 with clang-19
 * (skipped, saying so, where there is none). A row whose cache key matches is skipped, but the
 * recipe's declarations (threads, LDS a launch provides) are not in that key: changing one must
 * re-analyse the row, without recompiling. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sqlite3.h>
#include "kt_test.h"
#include "build/pipeline.h"

static char dir[] = "/tmp/kt_test_pipeline_XXXXXX";

static void write_text(const char *rel, const char *text)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, rel);
    FILE *f = fopen(path, "w");
    KT_CHECK(f != NULL);
    if (f) { fputs(text, f); fclose(f); }
}

/* The recipe with threads() and lds_bytes() returning the given figures (lds 0: not at launch). */
static const char *law = "";   /* a recipe field line, e.g. "law = \"other\"," */

static void write_recipe(int threads, int lds_at_launch)
{
    char text[1024];
    snprintf(text, sizeof text,
             "return {\n  family = \"toy\", template = \"tiny.hip\", kernel = \"kt_tiny\", ops = { \"tiny\" }, %s\n"
             "  axes = { { \"N\", { 1, 2 } } },\n"
             "  threads = function(p, t) return %d end,\n"
             "  %s\n"
             "  constraint = function(p, t) return true end,\n}\n",
             law, threads, lds_at_launch ? "" : "--");
    char *at = strstr(text, "  --");
    if (lds_at_launch) {
        char tail[512];
        char *mark = strstr(text, "  \n");
        snprintf(tail, sizeof tail, "%s", mark + 3);
        snprintf(mark, sizeof text - (size_t)(mark - text),
                 "  lds_at_launch = true, lds_bytes = function(p, t) return %d end,\n%s", lds_at_launch, tail);
    } else if (at) {
        memmove(at, at + 5, strlen(at + 5) + 1);
    }
    write_text("templates/toy/tiny.lua", text);
}

static int query_int(const char *db, const char *sql)
{
    sqlite3 *h = NULL;
    sqlite3_stmt *st = NULL;
    int v = -1;
    if (sqlite3_open_v2(db, &h, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
        sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        v = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(h);
    return v;
}

static char err[2048];

static int gen(const kt_gen_options *o, kt_gen_summary *sum)
{
    err[0] = 0;
    int rc = pipeline_gen(o, kt_target_find("gfx1201"), sum, err, sizeof err);
    if (rc) fprintf(stderr, "pipeline_gen: %s\n", err);
    return rc;
}

/* a model's filter stand-in: only the N = 1 variant is used */
static int keep_n1(const void *ctx, const char *ops, const char *params_json)
{
    (void)ctx;
    return ops != NULL && strstr(params_json, "\"N\":1") != NULL;
}

#define ROW(col, name) "SELECT " col " FROM kernel WHERE name = '" name "' AND target = 'gfx1201'"

int main(void)
{
    char path[512], recipe[512], db[512], cache[512];
    KT_CHECK(mkdtemp(dir) != NULL);
    const char *sub[] = {"templates", "templates/arch", "templates/toy", NULL};
    for (int i = 0; sub[i]; i++) { snprintf(path, sizeof path, "%s/%s", dir, sub[i]); mkdir(path, 0777); }
    write_text("templates/arch/gfx12.h", "/* tiny prelude: nothing */\n");
    /* 16 KiB of static LDS, so the workgroup's waves decide how many fit a WGP */
    write_text("templates/toy/tiny.hip",
               "extern \"C\" __attribute__((global)) void KT_KERNEL_NAME(float *y)\n{\n"
               "    __attribute__((shared)) float buf[4096];\n"
               "    unsigned i = __builtin_amdgcn_workitem_id_x();\n"
               "    buf[i] = y[i] * KT_N;\n    __builtin_amdgcn_s_barrier();\n"
               "    y[i] = buf[(i + 1) % 4096];\n}\n");
    snprintf(recipe, sizeof recipe, "%s/templates/toy/tiny.lua", dir);
    snprintf(db, sizeof db, "%s/t.ktdb", dir);
    snprintf(cache, sizeof cache, "%s/cache", dir);
    kt_gen_options o = {.recipe = recipe, .db_path = db, .cache_dir = cache, .jobs = 1, .quiet = 1};
    kt_gen_summary sum;

    write_recipe(32, 0);
    if (gen(&o, &sum) != 0 && strstr(err, "no AMD compiler")) {
        printf("test_pipeline: skipped (no gfx1201 compiler, see above)\n");
        return 0;
    }
    KT_CHECK_INT(sum.compiled, 2);
    KT_CHECK_INT(sum.ok, 2);
    KT_CHECK_INT(query_int(db, ROW("threads", "kt_tiny_n1")), 32);
    int waves32 = query_int(db, ROW("waves_per_simd", "kt_tiny_n1"));
    KT_CHECK_INT(query_int(db, ROW("lds_bytes", "kt_tiny_n1")), 16384);

    /* unchanged: nothing compiled, nothing re-analysed */
    KT_CHECK_INT(gen(&o, &sum), 0);
    KT_CHECK_INT(sum.compiled, 0);

    /* threads() changed: the code objects are the same (same key, no compile), the rows are not */
    write_recipe(256, 0);
    KT_CHECK_INT(gen(&o, &sum), 0);
    KT_CHECK_INT(sum.compiled, 0);
    KT_CHECK_INT(query_int(db, ROW("threads", "kt_tiny_n1")), 256);
    KT_CHECK_INT(query_int(db, ROW("threads", "kt_tiny_n2")), 256);
    int waves256 = query_int(db, ROW("waves_per_simd", "kt_tiny_n1"));
    KT_CHECK(waves256 != waves32);
    KT_CHECK(waves256 > 0);

    /* LDS every launch provides (lds_at_launch) changed: lds_bytes and occupancy follow */
    write_recipe(256, 32768);
    KT_CHECK_INT(gen(&o, &sum), 0);
    KT_CHECK_INT(sum.compiled, 0);
    KT_CHECK_INT(query_int(db, ROW("lds_bytes", "kt_tiny_n1")), 16384 + 32768);
    int waves_dyn = query_int(db, ROW("waves_per_simd", "kt_tiny_n1"));
    KT_CHECK(waves_dyn < waves256);
    write_recipe(256, 53248);
    KT_CHECK_INT(gen(&o, &sum), 0);
    KT_CHECK_INT(query_int(db, ROW("lds_bytes", "kt_tiny_n1")), 16384 + 53248);
    KT_CHECK_INT(sum.ok, 0);
    KT_CHECK_INT(sum.excluded, 2);    /* 16 + 52 KiB: over the workgroup's 64 KiB */
    /* and back to no launch-time LDS */
    write_recipe(256, 0);
    KT_CHECK_INT(gen(&o, &sum), 0);
    KT_CHECK_INT(sum.compiled, 0);
    KT_CHECK_INT(query_int(db, ROW("lds_bytes", "kt_tiny_n1")), 16384);
    KT_CHECK_INT(query_int(db, ROW("waves_per_simd", "kt_tiny_n1")), waves256);
    KT_CHECK_INT(query_int(db, ROW("count(*)", "kt_tiny_n1") " AND status = 'ok'"), 1);

    /* the law is in the params, not the source: a new one refreshes the stored params text
     * (the row keeps its key, code and figures; nothing is compiled) */
    KT_CHECK(query_int(db, ROW("instr(params, '\"law\":\"tiny\"')", "kt_tiny_n1")) > 0);
    int hash_len = query_int(db, ROW("length(code_hash)", "kt_tiny_n1"));
    law = "law = \"other\",";
    write_recipe(256, 0);
    KT_CHECK_INT(gen(&o, &sum), 0);
    KT_CHECK_INT(sum.compiled, 0);
    KT_CHECK_INT(sum.ok, 2);
    KT_CHECK(query_int(db, ROW("params = '{\"N\":1,\"law\":\"other\"}'", "kt_tiny_n1")) == 1);
    KT_CHECK(query_int(db, ROW("params = '{\"N\":2,\"law\":\"other\"}'", "kt_tiny_n2")) == 1);
    KT_CHECK_INT(query_int(db, ROW("length(code_hash)", "kt_tiny_n1")), hash_len);
    KT_CHECK_INT(query_int(db, ROW("waves_per_simd", "kt_tiny_n1")), waves256);

    /* a keep filter builds what it keeps and retires nothing it leaves out (the database may serve
     * other models) */
    o.keep = keep_n1;
    KT_CHECK_INT(gen(&o, &sum), 0);
    KT_CHECK_INT(sum.unused, 1);
    KT_CHECK_INT(sum.variants, 1);
    KT_CHECK_INT(sum.ok, 1);
    KT_CHECK_INT(sum.retired, 0);
    KT_CHECK_INT(query_int(db, ROW("count(*)", "kt_tiny_n2") " AND status = 'ok'"), 1);
    /* and still retires what the recipe no longer admits: N = 1 gone from the axes, N = 2 declined */
    write_text("templates/toy/tiny.lua",
               "return {\n  family = \"toy\", template = \"tiny.hip\", kernel = \"kt_tiny\", ops = { \"tiny\" },\n"
               "  axes = { { \"N\", { 2 } } },\n  threads = function(p, t) return 256 end,\n"
               "  constraint = function(p, t) return true end,\n}\n");
    KT_CHECK_INT(gen(&o, &sum), 0);
    KT_CHECK_INT(sum.unused, 1);
    KT_CHECK_INT(sum.retired, 1);
    KT_CHECK_INT(query_int(db, ROW("count(*)", "kt_tiny_n1") " AND status = 'excluded'"), 1);
    KT_CHECK_INT(query_int(db, ROW("count(*)", "kt_tiny_n2") " AND status = 'ok'"), 1);
    o.keep = NULL;

    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (!kt_test_failures && system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    KT_TEST_END();
}
