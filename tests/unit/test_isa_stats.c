/* test_isa_stats: instruction mix and loop finding on committed disassembly fixtures
 * (tests/data/isa, regenerated and independently counted with awk by make.sh there) and on small
 * hand-written listings for the boundary cases. Run from the repository root. */
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include "kt_test.h"
#include "isa_stats.h"

#define FIX "tests/data/isa/"

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) { fprintf(stderr, "cannot open %s (run from the repository root)\n", path); return NULL; }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) { free(s); s = NULL; }
    if (s) s[n] = '\0';
    fclose(f);
    return s;
}

/* Expected counts in kt_isa_stats field order, as printed by make.sh's awk counter. */
static void check_stats(const kt_isa_stats *s, const int want[11], const char *what)
{
    const int got[11] = {s->mma, s->lds_read, s->lds_write, s->global_load, s->global_store,
                         s->scalar_load, s->scratch, s->barrier, s->valu, s->salu, s->total};
    static const char *names[11] = {"mma", "lds_read", "lds_write", "global_load", "global_store",
                                    "scalar_load", "scratch", "barrier", "valu", "salu", "total"};
    for (int i = 0; i < 11; i++) {
        kt_test_checks++;
        if (got[i] != want[i]) {
            kt_test_failures++;
            fprintf(stderr, "%s: %s = %d, expected %d\n", what, names[i], got[i], want[i]);
        }
    }
}

static void test_gfx1201(void)
{
    char *text = slurp(FIX "gfx1201.txt"), err[256];
    KT_CHECK(text != NULL);
    if (!text) return;
    kt_isa_report r;
    KT_CHECK_INT(isa_stats_parse(text, "k", &r, err, sizeof err), 0);
    check_stats(&r.whole, (const int[]){2, 2, 2, 2, 2, 2, 0, 2, 27, 26, 67}, "gfx1201 whole");
    KT_CHECK_INT(r.nloops, 1);
    KT_CHECK_INT(r.hot, 0);
    KT_CHECK_INT(r.loops[0].start, 0x16c8 - 0x1600);
    KT_CHECK_INT(r.loops[0].end, 0x175c - 0x1600);
    check_stats(&r.loops[0].s, (const int[]){2, 2, 2, 2, 0, 0, 0, 2, 4, 10, 24}, "gfx1201 loop");
    KT_CHECK_INT(r.sass, 0);
    /* The only function may be left unnamed. */
    KT_CHECK_INT(isa_stats_parse(text, NULL, &r, err, sizeof err), 0);
    KT_CHECK(strcmp(r.kernel, "k") == 0);

    char js[2048];
    int n = isa_stats_to_json(&r, js, sizeof js);
    KT_CHECK(n > 0 && (size_t)n == strlen(js));
    KT_CHECK(strcmp(js, "{\"kernel\":\"k\",\"whole\":{\"mma\":2,\"lds_read\":2,\"lds_write\":2,"
        "\"global_load\":2,\"global_store\":2,\"scalar_load\":2,\"scratch\":0,\"barrier\":2,\"valu\":27,"
        "\"salu\":26,\"total\":67},\"hot\":{\"start\":200,\"end\":348,\"mma\":2,\"lds_read\":2,"
        "\"lds_write\":2,\"global_load\":2,\"global_store\":0,\"scalar_load\":0,\"scratch\":0,"
        "\"barrier\":2,\"valu\":4,\"salu\":10,\"total\":24},\"loops\":[{\"start\":200,\"end\":348,"
        "\"mma\":2,\"total\":24}],\"loops_dropped\":0}") == 0);
    /* A buffer one byte short fails cleanly and stays terminated. */
    char small[sizeof js];
    KT_CHECK_INT(isa_stats_to_json(&r, small, (size_t)n), -1);
    KT_CHECK_INT(strlen(small), n - 1);
    free(text);
}

static void test_gfx942(void)
{
    char *text = slurp(FIX "gfx942.txt"), err[256];
    KT_CHECK(text != NULL);
    if (!text) return;
    kt_isa_report r;
    KT_CHECK_INT(isa_stats_parse(text, "kloops", &r, err, sizeof err), 0);
    check_stats(&r.whole, (const int[]){5, 1, 1, 3, 1, 2, 0, 2, 77, 30, 122}, "gfx942 whole");
    /* Two loops; the backward jump at +0xf0 to +0xcc closes no cycle and is not one. */
    KT_CHECK_INT(r.nloops, 2);
    KT_CHECK_INT(r.loops[0].start, 0x58);
    KT_CHECK_INT(r.loops[0].end, 0xc0);
    KT_CHECK_INT(r.loops[1].start, 0x110);
    KT_CHECK_INT(r.loops[1].end, 0x29c);
    check_stats(&r.loops[0].s, (const int[]){4, 1, 1, 2, 0, 0, 0, 2, 2, 5, 17}, "gfx942 K loop");
    check_stats(&r.loops[1].s, (const int[]){1, 0, 0, 1, 0, 0, 0, 0, 55, 8, 65}, "gfx942 epilogue");
    /* The hot loop is the one with the most MFMA, not the widest. */
    KT_CHECK_INT(r.hot, 0);

    KT_CHECK_INT(isa_stats_parse(text, "kplain", &r, err, sizeof err), 0);
    check_stats(&r.whole, (const int[]){0, 0, 0, 1, 1, 1, 0, 0, 2, 3, 8}, "gfx942 kplain");
    KT_CHECK_INT(r.nloops, 0);
    KT_CHECK_INT(r.hot, -1);
    char js[1024];
    KT_CHECK(isa_stats_to_json(&r, js, sizeof js) > 0);
    KT_CHECK_CONTAINS(js, "\"hot\":null,\"loops\":[]");

    KT_CHECK_INT(isa_stats_parse(text, NULL, &r, err, sizeof err), -1);
    KT_CHECK_CONTAINS(err, "kloops, kplain");
    KT_CHECK_INT(isa_stats_parse(text, "kloop", &r, err, sizeof err), -1);
    KT_CHECK_CONTAINS(err, "kloop not found");
    free(text);
}

static void test_sm90a(void)
{
    char *text = slurp(FIX "sm_90a.txt"), err[256];
    KT_CHECK(text != NULL);
    if (!text) return;
    kt_isa_report r;
    KT_CHECK_INT(isa_stats_parse(text, "kloops", &r, err, sizeof err), 0);
    KT_CHECK_INT(r.sass, 1);
    check_stats(&r.whole, (const int[]){2, 2, 2, 3, 4, 8, 0, 2, 76, 8, 107}, "sm_90a whole");
    KT_CHECK_INT(r.nloops, 2);
    KT_CHECK_INT(r.loops[0].start, 0x290);
    KT_CHECK_INT(r.loops[0].end, 0x3e0);
    KT_CHECK_INT(r.loops[1].start, 0x4c0);
    KT_CHECK_INT(r.loops[1].end, 0x620);
    check_stats(&r.loops[0].s, (const int[]){2, 2, 2, 2, 0, 0, 0, 2, 11, 1, 22}, "sm_90a K loop");
    check_stats(&r.loops[1].s, (const int[]){0, 0, 0, 1, 0, 0, 0, 0, 21, 1, 23}, "sm_90a epilogue");
    KT_CHECK_INT(r.hot, 0);
    /* kplain comes first in the cubin; the branch-to-self trap after EXIT is no loop. */
    KT_CHECK_INT(isa_stats_parse(text, "kplain", &r, err, sizeof err), 0);
    check_stats(&r.whole, (const int[]){0, 0, 0, 1, 1, 3, 0, 0, 5, 0, 10}, "sm_90a kplain");
    KT_CHECK_INT(r.nloops, 0);
    free(text);
}

/* Hand-written listings in llvm-objdump's layout for the cases the fixtures do not reach. */
#define AMD_HEAD "\n" "0000000000001000 <t>:\n"
#define I(mn, addr, tail) "\t" mn "  // 0000000010" addr ": BF800000" tail "\n"

static void test_synthetic(void)
{
    kt_isa_report r;
    char err[256];
    /* Nested loops with the same matrix count: the inner (smaller) one is hot. A backward
     * branch whose target comes only from the immediate (no <sym+off> note) still counts. */
    const char *nested = AMD_HEAD
        I("s_mov_b32 s0, 0", "00", "")
        I("v_mov_b32_e32 v0, 0", "04", "")                       /* outer head */
        I("v_wmma_f32_16x16x16_f16 v[0:7], v[8:11], v[12:15], v[0:7]", "08", "") /* inner head */
        I("v_wmma_f32_16x16x16_f16 v[0:7], v[8:11], v[12:15], v[0:7]", "0C", "")
        I("s_cbranch_scc0 65533", "10", "")                       /* -3: 0x14 - 12 = 0x08 */
        I("s_add_i32 s0, s0, 1", "14", "")
        I("s_cbranch_vccnz 65531", "18", " <t+0x4>")
        I("s_endpgm", "1C", "")
        I("s_branch 65535", "20", " <t+0x20>")                    /* after s_endpgm: unreachable */
        I("s_code_end", "24", "")
        I("s_code_end", "28", "");
    KT_CHECK_INT(isa_stats_parse(nested, "t", &r, err, sizeof err), 0);
    KT_CHECK_INT(r.whole.total, 9);   /* the trailing s_code_end are padding */
    KT_CHECK_INT(r.whole.mma, 2);
    KT_CHECK_INT(r.nloops, 2);
    KT_CHECK_INT(r.loops[0].start, 4);
    KT_CHECK_INT(r.loops[0].end, 0x18);
    KT_CHECK_INT(r.loops[1].start, 8);
    KT_CHECK_INT(r.loops[1].end, 0x10);
    KT_CHECK_INT(r.loops[0].s.mma, 2);
    KT_CHECK_INT(r.loops[1].s.mma, 2);
    KT_CHECK_INT(r.hot, 1);

    /* Two latches to one head make one loop ending at the last; a reachable branch to itself
     * is a (one-instruction) loop; gfx12 barriers count once (the wait). */
    const char *latches = AMD_HEAD
        I("s_barrier_signal -1", "00", "")
        I("s_barrier_wait 0xffff", "04", "")
        I("v_mfma_f32_16x16x16_f16 v[0:3], v[4:5], v[6:7], v[0:3]", "08", "")   /* head */
        I("s_cbranch_execz 65534", "0C", " <t+0x8>")
        I("ds_load_b128 v[0:3], v4", "10", "")
        I("s_cbranch_scc1 65532", "14", " <t+0x8>")
        I("s_cbranch_scc0 65535", "18", " <t+0x18>")
        I("s_endpgm", "1C", "");
    KT_CHECK_INT(isa_stats_parse(latches, "t", &r, err, sizeof err), 0);
    KT_CHECK_INT(r.whole.barrier, 1);
    KT_CHECK_INT(r.whole.salu, 5);
    KT_CHECK_INT(r.nloops, 2);
    KT_CHECK_INT(r.loops[0].start, 8);
    KT_CHECK_INT(r.loops[0].end, 0x14);
    KT_CHECK_INT(r.loops[0].s.total, 4);
    KT_CHECK_INT(r.loops[0].s.lds_read, 1);
    KT_CHECK_INT(r.loops[1].start, 0x18);
    KT_CHECK_INT(r.loops[1].end, 0x18);
    KT_CHECK_INT(r.hot, 0);

    /* CRLF line ends parse the same. */
    char crlf[2048];
    size_t k = 0;
    for (const char *c = latches; *c && k + 2 < sizeof crlf; c++) {
        if (*c == '\n') crlf[k++] = '\r';
        crlf[k++] = *c;
    }
    crlf[k] = '\0';
    KT_CHECK_INT(isa_stats_parse(crlf, "t", &r, err, sizeof err), 0);
    KT_CHECK_INT(r.nloops, 2);
    KT_CHECK_INT(r.whole.total, 8);

    /* SASS: a branch with a predicate operand is conditional; an unguarded BRA is not, so code
     * after it is reached only through its target; CALL reaches its subroutine. */
    const char *sass =
        "\t\tFunction : s\n"
        "        /*0000*/                   MOV R0, RZ ;  /* 0x0 */\n"
        "                                                 /* 0x0 */\n"
        "        /*0010*/                   HMMA.16816.F32 R4, R8, R10, R4 ;\n"
        "        /*0020*/              @!P1 BRA !P4, 0x10 ;\n"
        "        /*0030*/                   CALL.REL.NOINC 0x80 ;\n"
        "        /*0040*/                   BRA 0x60 ;\n"
        "        /*0050*/                   BRA 0x40 ;\n"          /* unreachable: no loop */
        "        /*0060*/                   EXIT ;\n"
        "        /*0070*/                   BRA 0x70;\n"
        "        /*0080*/                   LDS R2, [R3] ;\n"      /* subroutine, a loop of its own */
        "        /*0090*/               @P0 BRA 0x80 ;\n"
        "        /*00a0*/                   RET.REL.NODEC R14 0x0 ;\n"
        "        /*00b0*/                   BRA 0xb0;\n"
        "        /*00c0*/                   NOP;\n"
        "\t\t..........\n";
    KT_CHECK_INT(isa_stats_parse(sass, "s", &r, err, sizeof err), 0);
    KT_CHECK_INT(r.whole.total, 11);
    KT_CHECK_INT(r.whole.mma, 1);
    KT_CHECK_INT(r.whole.lds_read, 1);
    KT_CHECK_INT(r.nloops, 2);
    KT_CHECK_INT(r.loops[0].start, 0x10);
    KT_CHECK_INT(r.loops[0].end, 0x20);
    KT_CHECK_INT(r.loops[1].start, 0x80);
    KT_CHECK_INT(r.loops[1].end, 0x90);
    KT_CHECK_INT(r.hot, 0);

    /* More loops than kept: the surplus is counted as dropped. */
    size_t cap = 100 + (ISA_STATS_MAX_LOOPS + 3) * 160;
    char *many = malloc(cap);
    KT_CHECK(many != NULL);
    if (many) {
        size_t len = (size_t)snprintf(many, cap, "0000000000000000 <m>:\n");
        for (int i = 0; i < ISA_STATS_MAX_LOOPS + 3; i++) {
            len += (size_t)snprintf(many + len, cap - len, "\tv_add_f32 v0, v0, v0  // %012X: 00\n", i * 8);
            len += (size_t)snprintf(many + len, cap - len, "\ts_cbranch_scc0 65534  // %012X: 00 <m+0x%x>\n",
                                    i * 8 + 4, i * 8);
        }
        snprintf(many + len, cap - len, "\ts_endpgm  // %012X: 00\n", (ISA_STATS_MAX_LOOPS + 3) * 8);
        KT_CHECK_INT(isa_stats_parse(many, "m", &r, err, sizeof err), 0);
        KT_CHECK_INT(r.nloops, ISA_STATS_MAX_LOOPS);
        KT_CHECK_INT(r.loops_dropped, 3);
        /* The longest report still fits the documented bound. */
        r.loops[0].start = r.loops[0].end = 0x7fffffff;
        memset(r.kernel, '\x01', sizeof r.kernel - 1);
        char *js = malloc(ISA_STATS_JSON_MAX);
        KT_CHECK(js && isa_stats_to_json(&r, js, ISA_STATS_JSON_MAX) > 0);
        free(js);
        free(many);
    }

    KT_CHECK_INT(isa_stats_parse("no disassembly here\n", NULL, &r, err, sizeof err), -1);
    KT_CHECK_CONTAINS(err, "no function");
    KT_CHECK_INT(isa_stats_parse(AMD_HEAD "\tnot an instruction\n", "t", &r, err, sizeof err), -1);
    KT_CHECK_CONTAINS(err, "no instruction");
}

/* isa_stats_of_code_object spawns the tool without a shell: a stand-in tool checks the argv it
 * is given and prints a fixture named with shell metacharacters, which must arrive intact. */
static void test_spawn(void)
{
    char dir[] = "/tmp/kt_isa_XXXXXX", tool[128], path[160], err[512];
    kt_isa_report r;
    if (!mkdtemp(dir)) { KT_CHECK(!"mkdtemp"); return; }
    snprintf(tool, sizeof tool, "%s/objdump", dir);
    /* Through a shell this name would end the command with status 7 before cat saw it. */
    snprintf(path, sizeof path, "%s/a b';exit 7;'$(false).txt", dir);
    FILE *f = fopen(tool, "w");
    KT_CHECK(f != NULL);
    if (!f) return;
    fputs("#!/bin/sh\n[ \"$1\" = -d ] && [ \"$2\" = --mcpu=gfx942 ] && [ $# -eq 3 ] || "
          "{ echo \"bad arguments: $*\" >&2; exit 3; }\nexec cat \"$3\"\n", f);
    fclose(f);
    chmod(tool, 0755);
    char *text = slurp(FIX "gfx942.txt");
    f = fopen(path, "w");
    if (f && text) fputs(text, f);
    if (f) fclose(f);
    free(text);

    KT_CHECK_INT(isa_stats_of_code_object(tool, "gfx942", path, "kloops", &r, err, sizeof err), 0);
    KT_CHECK_INT(r.whole.mma, 5);
    KT_CHECK_INT(r.hot, 0);
    /* A failing tool: its status and first stderr line come back. */
    KT_CHECK_INT(isa_stats_of_code_object(tool, "gfx1201", path, "kloops", &r, err, sizeof err), -1);
    KT_CHECK_CONTAINS(err, "status 3");
    KT_CHECK_CONTAINS(err, "bad arguments: -d --mcpu=gfx1201");
    KT_CHECK_INT(isa_stats_of_code_object("/nonexistent/objdump", "gfx942", path, NULL, &r, err, sizeof err), -1);
    KT_CHECK_CONTAINS(err, "cannot run");
    unlink(path);
    unlink(tool);
    rmdir(dir);

    /* The real llvm-objdump on the committed code object agrees with the committed listing. */
    int rc = isa_stats_of_code_object(NULL, "gfx1201", FIX "gfx1201.co", "k", &r, err, sizeof err);
    if (rc != 0 && strstr(err, "cannot run")) {
        printf("test_isa_stats: llvm-objdump-19 not found, real-tool check skipped\n");
        return;
    }
    KT_CHECK_INT(rc, 0);
    check_stats(&r.whole, (const int[]){2, 2, 2, 2, 2, 2, 0, 2, 27, 26, 67}, "gfx1201.co whole");
    KT_CHECK_INT(r.nloops, 1);
}

int main(void)
{
    test_gfx1201();
    test_gfx942();
    test_sm90a();
    test_synthetic();
    test_spawn();
    KT_TEST_END();
}
