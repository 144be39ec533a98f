/* isa_stats.c: static instruction mix of one kernel from llvm-objdump or cuobjdump text
 * (see isa_stats.h). The text is read once; the selected function's instructions become an
 * array of (offset, class, control flow, branch target), over which loops are found. */
#define _POSIX_C_SOURCE 200809L
#include <ctype.h>
#include <errno.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "isa_stats.h"

extern char **environ;

enum { C_OTHER, C_MMA, C_LDS_READ, C_LDS_WRITE, C_GLOAD, C_GSTORE, C_SLOAD, C_SCRATCH, C_BARRIER,
       C_VALU, C_SALU };
/* Control flow out of an instruction. COND and CALL also fall through; END has no successor. */
enum { F_NEXT, F_JUMP, F_COND, F_CALL, F_END };

typedef struct isa_inst {
    long off;           /* byte offset from the function start */
    long target;        /* branch/call target offset, -1 if none */
    unsigned char cls;
    unsigned char flow;
    unsigned char pad;  /* padding when it trails the function (s_code_end, s_nop, NOP, BRA self) */
} isa_inst;

typedef struct isa_fn {
    isa_inst *v;
    int n, cap;
} isa_fn;

static void isa_err(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || !errlen) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static int isa_prefix(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

static int isa_push(isa_fn *f, isa_inst in)
{
    if (f->n == f->cap) {
        int cap = f->cap ? f->cap * 2 : 256;
        isa_inst *v = realloc(f->v, (size_t)cap * sizeof *v);
        if (!v) return -1;
        f->v = v;
        f->cap = cap;
    }
    f->v[f->n++] = in;
    return 0;
}

/* ---- AMD (llvm-objdump) ---------------------------------------------------------------- */

static int isa_amd_class(const char *m)
{
    if (isa_prefix(m, "v_wmma") || isa_prefix(m, "v_swmmac") || isa_prefix(m, "v_mfma") ||
        isa_prefix(m, "v_smfmac")) return C_MMA;
    if (isa_prefix(m, "ds_read") || isa_prefix(m, "ds_load")) return C_LDS_READ;
    if (isa_prefix(m, "ds_write") || isa_prefix(m, "ds_store")) return C_LDS_WRITE;
    if (isa_prefix(m, "global_load") || isa_prefix(m, "buffer_load") || isa_prefix(m, "flat_load"))
        return C_GLOAD;
    if (isa_prefix(m, "global_store") || isa_prefix(m, "buffer_store") || isa_prefix(m, "flat_store"))
        return C_GSTORE;
    if (isa_prefix(m, "s_load") || isa_prefix(m, "s_buffer_load")) return C_SLOAD;
    if (isa_prefix(m, "scratch_load") || isa_prefix(m, "scratch_store")) return C_SCRATCH;
    if (strcmp(m, "s_barrier") == 0 || strcmp(m, "s_barrier_wait") == 0) return C_BARRIER;
    if (isa_prefix(m, "v_")) return C_VALU;
    if (isa_prefix(m, "s_")) return C_SALU;
    return C_OTHER;
}

/* Parse "<name+0xOFF>" or "<name>" from a comment; 1 when it names `fn`. */
static int isa_amd_annot(const char *s, const char *fn, long *off)
{
    const char *lt = strrchr(s, '<');
    if (!lt) return 0;
    size_t len = strlen(fn);
    if (strncmp(lt + 1, fn, len) != 0) return 0;
    const char *p = lt + 1 + len;
    if (*p == '>') { *off = 0; return 1; }
    if (*p != '+') return 0;
    char *end;
    long v = strtol(p + 1, &end, 16);
    if (*end != '>') return 0;
    *off = v;
    return 1;
}

/* One instruction line: "\tMNEMONIC operands   // ADDR: ENCODING [<sym+0xOFF>]". Returns 1 and
 * fills *in for an instruction, 0 for any other line. */
static int isa_amd_line(const char *line, const char *fn, long base, isa_inst *in)
{
    if (line[0] != '\t' && line[0] != ' ') return 0;
    const char *p = line;
    while (*p == '\t' || *p == ' ') p++;
    if (!islower((unsigned char)*p)) return 0;
    const char *cm = strstr(p, "//");
    if (!cm) return 0;
    char *end;
    long addr = strtol(cm + 2, &end, 16);
    if (end == cm + 2 || *end != ':') return 0;
    char m[64];
    size_t k = 0;
    while (p[k] && !isspace((unsigned char)p[k]) && k + 1 < sizeof m) { m[k] = p[k]; k++; }
    m[k] = '\0';

    in->off = addr - base;
    in->target = -1;
    in->cls = (unsigned char)isa_amd_class(m);
    in->flow = F_NEXT;
    in->pad = strcmp(m, "s_code_end") == 0 || strcmp(m, "s_nop") == 0;
    if (isa_prefix(m, "s_endpgm") || strcmp(m, "s_setpc_b64") == 0) in->flow = F_END;
    int jump = strcmp(m, "s_branch") == 0;
    int cond = isa_prefix(m, "s_cbranch_") && strcmp(m, "s_cbranch_join") != 0 &&
               strcmp(m, "s_cbranch_g_fork") != 0 && strcmp(m, "s_cbranch_i_fork") != 0;
    if (jump || cond) {
        long t;
        if (!isa_amd_annot(end, fn, &t)) {
            /* SOPP: the operand is a signed 16-bit dword offset from the next instruction. */
            long imm = strtol(p + k, NULL, 0);
            imm &= 0xffff;
            if (imm & 0x8000) imm -= 0x10000;
            t = addr + 4 + 4 * imm - base;
        }
        in->target = t;
        in->flow = jump ? F_JUMP : F_COND;
    }
    return 1;
}

/* "0000000000001600 <name>:" -> name (in buf) and base address. */
static int isa_amd_header(const char *line, char *name, size_t namelen, long *base)
{
    char *end;
    if (!isxdigit((unsigned char)line[0])) return 0;
    long a = strtol(line, &end, 16);
    if (end[0] != ' ' || end[1] != '<') return 0;
    const char *s = end + 2;
    size_t len = strlen(s);
    if (len < 3 || strcmp(s + len - 2, ">:") != 0) return 0;
    len -= 2;
    if (len >= namelen) len = namelen - 1;
    memcpy(name, s, len);
    name[len] = '\0';
    *base = a;
    return 1;
}

/* ---- NVIDIA (cuobjdump -sass) ------------------------------------------------------------ */

static int isa_sass_class(const char *op)
{
    if (strstr(op, "MMA")) return C_MMA;
    if (!strcmp(op, "LDS") || !strcmp(op, "LDSM")) return C_LDS_READ;
    if (!strcmp(op, "STS") || !strcmp(op, "STSM")) return C_LDS_WRITE;
    if (!strcmp(op, "LDG") || !strcmp(op, "LDGSTS") || !strcmp(op, "UTMALDG") || !strcmp(op, "UBLKCP"))
        return C_GLOAD;
    if (!strcmp(op, "STG") || !strcmp(op, "UTMASTG")) return C_GSTORE;
    if (!strcmp(op, "LDC") || !strcmp(op, "ULDC")) return C_SLOAD;
    if (!strcmp(op, "LDL") || !strcmp(op, "STL")) return C_SCRATCH;
    if (!strcmp(op, "BAR")) return C_BARRIER;
    if (op[0] == 'U') return C_SALU;
    return C_VALU;
}

/* One instruction line: an address comment (slash-star 0090 star-slash), an optional guard
 * ("@!P0"), the opcode with its modifiers, operands up to ';', then the encoding comment. */
static int isa_sass_line(const char *line, isa_inst *in)
{
    const char *p = line;
    while (*p == ' ' || *p == '\t') p++;
    if (p[0] != '/' || p[1] != '*' || !isxdigit((unsigned char)p[2])) return 0;
    char *end;
    long addr = strtol(p + 2, &end, 16);
    if (end[0] != '*' || end[1] != '/') return 0;
    p = end + 2;
    while (*p == ' ' || *p == '\t') p++;
    int pred = 0;
    if (*p == '@') {
        pred = strncmp(p, "@PT ", 4) != 0;
        while (*p && !isspace((unsigned char)*p)) p++;
        while (*p == ' ' || *p == '\t') p++;
    }
    char op[64], base[64];
    size_t k = 0;
    while (p[k] && !isspace((unsigned char)p[k]) && p[k] != ';' && k + 1 < sizeof op) { op[k] = p[k]; k++; }
    op[k] = '\0';
    if (!k) return 0;
    size_t b = strcspn(op, ".");
    memcpy(base, op, b);
    base[b] = '\0';
    const char *args = p + k, *semi = strchr(args, ';');
    if (!semi) return 0;

    in->off = addr;
    in->target = -1;
    in->cls = (unsigned char)isa_sass_class(base);
    in->flow = F_NEXT;
    in->pad = !strcmp(base, "NOP");
    if (!strcmp(base, "BRA") || !strcmp(base, "JMP") || !strcmp(base, "CALL")) {
        /* The target is the last hex literal; a predicate operand ("BRA !P4, 0x..") or an
         * @-guard makes the branch conditional. */
        const char *hx = NULL;
        for (const char *q = args; q + 1 < semi; q++)
            if (q[0] == '0' && q[1] == 'x') hx = q;
        if (hx) {
            in->target = strtol(hx, NULL, 16);
            int guarded = pred || memchr(args, ',', (size_t)(semi - args)) != NULL;
            in->flow = !strcmp(base, "CALL") ? F_CALL : guarded ? F_COND : F_JUMP;
            in->pad = in->flow == F_JUMP && in->target == addr;  /* the trap after EXIT */
        }
    } else if (!pred && (!strcmp(base, "EXIT") || !strcmp(base, "RET") || !strcmp(base, "BRX") ||
                         !strcmp(base, "JMX"))) {
        in->flow = F_END;
    }
    return 1;
}

/* "\t\tFunction : name" -> name. */
static int isa_sass_header(const char *line, char *name, size_t namelen)
{
    const char *p = line;
    while (*p == ' ' || *p == '\t') p++;
    if (strncmp(p, "Function : ", 11) != 0) return 0;
    p += 11;
    size_t len = strcspn(p, " \t\r");
    if (len >= namelen) len = namelen - 1;
    memcpy(name, p, len);
    name[len] = '\0';
    return 1;
}

/* ---- reading the text -------------------------------------------------------------------- */

/* Collect the instructions of the selected function. names gets the functions seen (for the
 * error message). Returns 0, or -1 with err set. */
static int isa_collect(const char *text, const char *kernel, kt_isa_report *out, isa_fn *f,
                       char *err, size_t errlen)
{
    int sass = strstr(text, "Function : ") != NULL;
    char *line = NULL, cur[256] = "", names[512] = "";
    size_t cap = 0;
    int nfn = 0, selected = 0, done = 0;
    long base = 0;
    const char *s = text;
    out->sass = sass;
    while (*s) {
        size_t len = strcspn(s, "\n");
        if (len + 1 > cap) {
            char *nl = realloc(line, len + 1);
            if (!nl) { free(line); isa_err(err, errlen, "out of memory"); return -1; }
            line = nl;
            cap = len + 1;
        }
        memcpy(line, s, len);
        line[len] = '\0';
        if (len && line[len - 1] == '\r') line[len - 1] = '\0';
        s += len + (s[len] == '\n');

        int header = sass ? isa_sass_header(line, cur, sizeof cur)
                          : isa_amd_header(line, cur, sizeof cur, &base);
        if (header) {
            nfn++;
            size_t nl = strlen(names);
            if (nl + strlen(cur) + 3 < sizeof names) snprintf(names + nl, sizeof names - nl, "%s%s", nl ? ", " : "", cur);
            if (selected) done = 1;
            selected = !done && (kernel ? strcmp(cur, kernel) == 0 : nfn == 1);
            if (selected) snprintf(out->kernel, sizeof out->kernel, "%s", cur);
            continue;
        }
        if (!sass && !strncmp(line, "Disassembly of section", 22)) { if (selected) done = 1; selected = 0; }
        if (sass && strstr(line, "......")) { if (selected) done = 1; selected = 0; }
        if (!selected) continue;
        isa_inst in;
        if ((sass ? isa_sass_line(line, &in) : isa_amd_line(line, cur, base, &in)) && isa_push(f, in) < 0) {
            free(line);
            isa_err(err, errlen, "out of memory");
            return -1;
        }
    }
    free(line);
    if (!kernel && nfn > 1) {
        isa_err(err, errlen, "%d functions in the disassembly (%s); name the kernel", nfn, names);
        return -1;
    }
    if (!out->kernel[0]) {
        if (nfn) isa_err(err, errlen, "kernel %s not found; functions: %s", kernel ? kernel : "(any)", names);
        else isa_err(err, errlen, "no function found: not llvm-objdump -d or cuobjdump -sass output");
        return -1;
    }
    if (f->n == 0) {
        isa_err(err, errlen, "kernel %s has no instruction lines with addresses", out->kernel);
        return -1;
    }
    return 0;
}

/* ---- analysis ---------------------------------------------------------------------------- */

static void isa_count(kt_isa_stats *s, const isa_inst *in)
{
    s->total++;
    switch (in->cls) {
    case C_MMA: s->mma++; break;
    case C_LDS_READ: s->lds_read++; break;
    case C_LDS_WRITE: s->lds_write++; break;
    case C_GLOAD: s->global_load++; break;
    case C_GSTORE: s->global_store++; break;
    case C_SLOAD: s->scalar_load++; break;
    case C_SCRATCH: s->scratch++; break;
    case C_BARRIER: s->barrier++; break;
    case C_VALU: s->valu++; break;
    case C_SALU: s->salu++; break;
    default: break;
    }
}

/* Index of the instruction at offset off, -1 when none starts there. */
static int isa_find(const isa_fn *f, long off)
{
    int lo = 0, hi = f->n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        if (f->v[mid].off == off) return mid;
        if (f->v[mid].off < off) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

/* Mark in seen[] every instruction reachable from index from (inclusive). */
static void isa_reach(const isa_fn *f, int from, unsigned char *seen, int *stack)
{
    int sp = 0;
    memset(seen, 0, (size_t)f->n);
    stack[sp++] = from;
    seen[from] = 1;
    while (sp) {
        int i = stack[--sp];
        const isa_inst *in = &f->v[i];
        int succ[2], ns = 0;
        if (in->flow != F_JUMP && in->flow != F_END && i + 1 < f->n) succ[ns++] = i + 1;
        if (in->flow == F_JUMP || in->flow == F_COND || in->flow == F_CALL) {
            int t = isa_find(f, in->target);
            if (t >= 0) succ[ns++] = t;
        }
        for (int k = 0; k < ns; k++)
            if (!seen[succ[k]]) { seen[succ[k]] = 1; stack[sp++] = succ[k]; }
    }
}

static int isa_analyse(const isa_fn *f, kt_isa_report *out, char *err, size_t errlen)
{
    int n = f->n;
    while (n > 0 && f->v[n - 1].pad) n--;   /* trailing alignment padding is not code */
    isa_fn body = {f->v, n, n};
    for (int i = 0; i < n; i++) isa_count(&out->whole, &f->v[i]);

    unsigned char *from_entry = malloc((size_t)n + 1), *from_head = malloc((size_t)n + 1);
    int *stack = malloc(((size_t)n + 1) * sizeof *stack);
    if (!from_entry || !from_head || !stack) {
        free(from_entry); free(from_head); free(stack);
        isa_err(err, errlen, "out of memory");
        return -1;
    }
    isa_reach(&body, 0, from_entry, stack);
    /* Each loop head is the target of one or more backward branches; the loop runs to the
     * last of them that can actually come back to it (block layout can place a backward jump
     * that closes no cycle). Heads are visited in address order, so loops[] is sorted. */
    memset(from_head, 0, (size_t)n);
    for (int i = 0; i < n; i++) {
        const isa_inst *in = &f->v[i];
        if ((in->flow == F_JUMP || in->flow == F_COND) && in->target <= in->off) {
            int h = isa_find(&body, in->target);
            if (h >= 0) from_head[h] = 1;   /* borrowed as the is-head mark until the scan */
        }
    }
    int nheads = 0;
    for (int h = 0; h < n; h++)
        if (from_head[h] && from_entry[h]) stack[nheads++] = h;
    int *heads = malloc(((size_t)nheads + 1) * sizeof *heads);
    if (!heads) {
        free(from_entry); free(from_head); free(stack);
        isa_err(err, errlen, "out of memory");
        return -1;
    }
    memcpy(heads, stack, (size_t)nheads * sizeof *heads);
    for (int k = 0; k < nheads; k++) {
        int h = heads[k], latch = -1;
        isa_reach(&body, h, from_head, stack);
        for (int i = h; i < n; i++)
            if ((f->v[i].flow == F_JUMP || f->v[i].flow == F_COND) && f->v[i].target == f->v[h].off &&
                from_head[i]) latch = i;
        if (latch < 0) continue;
        if (out->nloops == ISA_STATS_MAX_LOOPS) { out->loops_dropped++; continue; }
        kt_isa_loop *l = &out->loops[out->nloops++];
        l->start = f->v[h].off;
        l->end = f->v[latch].off;
        for (int i = h; i <= latch; i++) isa_count(&l->s, &f->v[i]);
    }
    free(heads);
    free(from_entry);
    free(from_head);
    free(stack);

    out->hot = -1;
    for (int i = 0; i < out->nloops; i++) {
        const kt_isa_loop *l = &out->loops[i], *b = out->hot >= 0 ? &out->loops[out->hot] : NULL;
        if (!b || l->s.mma > b->s.mma || (l->s.mma == b->s.mma && l->end - l->start < b->end - b->start))
            out->hot = i;
    }
    return 0;
}

int isa_stats_parse(const char *disasm, const char *kernel, kt_isa_report *out, char *err, size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    if (!disasm || !out) { isa_err(err, errlen, "no input"); return -1; }
    memset(out, 0, sizeof *out);
    out->hot = -1;
    isa_fn f = {0};
    int rc = isa_collect(disasm, kernel, out, &f, err, errlen);
    if (rc == 0) rc = isa_analyse(&f, out, err, errlen);
    free(f.v);
    return rc;
}

/* ---- JSON -------------------------------------------------------------------------------- */

typedef struct isa_buf { char *p; size_t n, len; int over; } isa_buf;

static void isa_put(isa_buf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    size_t room = b->len < b->n ? b->n - b->len : 0;
    int w = vsnprintf(room ? b->p + b->len : NULL, room, fmt, ap);
    va_end(ap);
    if (w < 0 || (size_t)w >= room) b->over = 1;
    b->len += w > 0 ? (size_t)w : 0;
}

static void isa_put_counts(isa_buf *b, const kt_isa_stats *s)
{
    isa_put(b, "\"mma\":%d,\"lds_read\":%d,\"lds_write\":%d,\"global_load\":%d,\"global_store\":%d,"
               "\"scalar_load\":%d,\"scratch\":%d,\"barrier\":%d,\"valu\":%d,\"salu\":%d,\"total\":%d",
            s->mma, s->lds_read, s->lds_write, s->global_load, s->global_store, s->scalar_load,
            s->scratch, s->barrier, s->valu, s->salu, s->total);
}

int isa_stats_to_json(const kt_isa_report *r, char *buf, size_t n)
{
    isa_buf b = {buf, n, 0, 0};
    if (!r || !buf || !n) return -1;
    buf[0] = '\0';
    isa_put(&b, "{\"kernel\":\"");
    for (const char *c = r->kernel; *c; c++) {
        if (*c == '"' || *c == '\\') isa_put(&b, "\\%c", *c);
        else if ((unsigned char)*c < 0x20) isa_put(&b, "\\u%04x", (unsigned char)*c);
        else isa_put(&b, "%c", *c);
    }
    isa_put(&b, "\",\"whole\":{");
    isa_put_counts(&b, &r->whole);
    if (r->hot >= 0) {
        const kt_isa_loop *h = &r->loops[r->hot];
        isa_put(&b, "},\"hot\":{\"start\":%ld,\"end\":%ld,", h->start, h->end);
        isa_put_counts(&b, &h->s);
        isa_put(&b, "},\"loops\":[");
    } else {
        isa_put(&b, "},\"hot\":null,\"loops\":[");
    }
    for (int i = 0; i < r->nloops; i++)
        isa_put(&b, "%s{\"start\":%ld,\"end\":%ld,\"mma\":%d,\"total\":%d}", i ? "," : "",
                r->loops[i].start, r->loops[i].end, r->loops[i].s.mma, r->loops[i].s.total);
    isa_put(&b, "],\"loops_dropped\":%d}", r->loops_dropped);
    if (b.over) { buf[n - 1] = '\0'; return -1; }
    return (int)b.len;
}

/* ---- running the disassembler ------------------------------------------------------------ */

int isa_stats_of_code_object(const char *tool, const char *mcpu, const char *path, const char *kernel,
                             kt_isa_report *out, char *err, size_t errlen)
{
    if (err && errlen) err[0] = '\0';
    if (!mcpu || !path || !out) { isa_err(err, errlen, "no target or path"); return -1; }
    int sass = strncmp(mcpu, "sm_", 3) == 0;
    if (!tool) tool = sass ? "cuobjdump" : "llvm-objdump-19";
    char cpu[96];
    snprintf(cpu, sizeof cpu, "--mcpu=%s", mcpu);
    char *argv[5] = {(char *)tool, sass ? "-sass" : "-d", sass ? (char *)path : cpu,
                     sass ? NULL : (char *)path, NULL};

    int fd[2];
    FILE *errf = tmpfile();   /* the tool's stderr, quoted on failure */
    if (!errf || pipe(fd) < 0) {
        if (errf) fclose(errf);
        isa_err(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_adddup2(&fa, fileno(errf), 2);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    posix_spawn_file_actions_addclose(&fa, fd[1]);
    pid_t pid;
    int rc = posix_spawnp(&pid, tool, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    if (rc != 0) {
        close(fd[0]);
        fclose(errf);
        isa_err(err, errlen, "cannot run %s: %s", tool, strerror(rc));
        return -1;
    }

    size_t len = 0, cap = 1 << 16;
    char *text = malloc(cap);
    int oom = !text;
    for (;;) {
        if (!oom && len + 4096 + 1 > cap) {
            char *t = realloc(text, cap * 2);
            if (t) { text = t; cap *= 2; } else oom = 1;
        }
        char sink[4096];
        ssize_t r = oom ? read(fd[0], sink, sizeof sink) : read(fd[0], text + len, cap - len - 1);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        if (!oom) len += (size_t)r;
    }
    close(fd[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}

    if (oom) {
        free(text);
        fclose(errf);
        isa_err(err, errlen, "out of memory reading %s output", tool);
        return -1;
    }
    text[len] = '\0';
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        char msg[256] = "";
        rewind(errf);
        size_t m = fread(msg, 1, sizeof msg - 1, errf);
        msg[m] = '\0';
        msg[strcspn(msg, "\n")] = '\0';
        isa_err(err, errlen, "%s %s failed (status %d): %s", tool, path,
                WIFEXITED(status) ? WEXITSTATUS(status) : -1, msg);
        free(text);
        fclose(errf);
        return -1;
    }
    fclose(errf);
    rc = isa_stats_parse(text, kernel, out, err, errlen);
    free(text);
    return rc;
}
