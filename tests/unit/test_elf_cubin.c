/* test_elf_cubin.c: the NVIDIA cubin reader (build/elf_cubin.c, build/elf.c).
 *
 * Real cubin: tests/data/nv_kernels_sm_90a.cubin (nvcc 13.0; the numbers below are what ptxas -v
 * printed, saved beside it as nv_kernels_sm_90a.ptxas.txt, and what cuFuncGetAttribute returned
 * on an H200 for registers, static shared memory and local memory). Faults: that file patched
 * field by field, and cut at every offset. Messages are checked, not just return codes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf.h"
#include "elf_cubin.h"
#include "kt_test.h"
#include "kt_elf_fixture.h"

/* every read goes through an exact-size copy (kt_elf_fixture.h) */
#define read_res(p, n, k, r, e, el) read_with(elf_cubin_read_resources, (p), (n), (k), (r), (e), (el))

#define CUBIN "nv_kernels_sm_90a.cubin"

/* ---- helpers ---- */






/* Index of the symbol called name in .symtab, and the file offset of its entry. */
static uint32_t symbol_of(const unsigned char *p, size_t n, const char *name, size_t *entry)
{
    elf_file f;
    elf_section st;
    elf_symbol sym;
    uint32_t i, count;
    char err[256];
    shdr_of(p, n, ".symtab", &st);
    elf_open(&f, p, n, err, sizeof err);
    elf_symbol_count(&f, &st, &count, err, sizeof err);
    for (i = 0; i < count; i++) {
        if (elf_symbol_at(&f, &st, i, &sym, err, sizeof err) == 0 && strcmp(sym.name, name) == 0) {
            if (entry) *entry = (size_t)(st.offset + (uint64_t)i * 24);
            return i;
        }
    }
    fprintf(stderr, "fixture has no symbol %s\n", name);
    exit(2);
}

/* File offset of the first .nv.info record in section sec with attribute attr (and, when
 * sym >= 0, a payload starting with that symbol index). */
static size_t record_of(const unsigned char *p, size_t n, const char *sec, int attr, long sym)
{
    elf_section s;
    size_t pos, end;
    shdr_of(p, n, sec, &s);
    pos = (size_t)s.offset;
    end = (size_t)(s.offset + s.size);
    while (pos + 4 <= end) {
        unsigned fmt = p[pos], id = p[pos + 1], size = elf_u16(p + pos + 2);
        if ((int)id == attr && (sym < 0 || (fmt == 4 && elf_u32(p + pos + 4) == (uint32_t)sym)))
            return pos;
        pos += 4 + (fmt == 4 ? size : 0);
    }
    fprintf(stderr, "fixture has no record 0x%02x in %s\n", attr, sec);
    exit(2);
}

/* ---- the real cubin ---- */

typedef struct expect {
    const char *name;
    int regs, lds, scratch, spills, maxwg;
} expect;

/* In symbol-table order. spills = ptxas "spill stores" + "spill loads" bytes. */
static const expect want[] = {
    { "k_dynamic", 10, 0,    0,    0,   0 },
    { "k_mixed",   24, 0,    368,  228, 0 },     /* 100 + 128 spill bytes; the local array is not */
    { "k_spill",   24, 0,    72,   192, 0 },     /* 88 + 104 */
    { "k_frame",   30, 0,    2048, 0,   0 },     /* local array only */
    { "k_shared",  12, 4096, 0,    0,   256 },   /* section is 5120: 1 KiB reserve + 4096 */
    { "k_axpy",    10, 0,    0,    0,   0 },
};
#define NWANT (int)(sizeof want / sizeof want[0])

static void check_kernel(const expect *e, const kt_resources *r)
{
    KT_CHECK_INT(r->vgpr, e->regs);
    KT_CHECK_INT(r->sgpr, 0);
    KT_CHECK_INT(r->agpr, 0);
    KT_CHECK_INT(r->lds_bytes, e->lds);
    KT_CHECK_INT(r->scratch_bytes, e->scratch);
    KT_CHECK_INT(r->vgpr_spills, e->spills);
    KT_CHECK_INT(r->sgpr_spills, 0);
    KT_CHECK_INT(r->wave_size, 32);
    KT_CHECK_INT(r->max_wg_size, e->maxwg);
}

typedef struct names {
    char list[512];
    int n, stop_after;
} names;

static int collect(void *ctx, const char *name, size_t len)
{
    names *c = ctx;
    size_t used = strlen(c->list);
    snprintf(c->list + used, sizeof c->list - used, "%s%.*s", c->n ? "," : "", (int)len, name);
    c->n++;
    return c->stop_after && c->n >= c->stop_after;
}

static void test_fixture(void)
{
    size_t n;
    unsigned char *p = load(CUBIN, &n);
    kt_resources r;
    char err[512];
    names c;
    int i, sm = 0;
    if (!p) { KT_CHECK(p != NULL); return; }
    for (i = 0; i < NWANT; i++) {
        KT_CHECK_INT(read_res(p, n, want[i].name, &r, err, sizeof err), 0);
        check_kernel(&want[i], &r);
    }
    KT_CHECK_INT(read_res(p, n, NULL, &r, err, sizeof err), 0);
    check_kernel(&want[0], &r);
    memset(&c, 0, sizeof c);
    KT_CHECK_INT(elf_cubin_list_kernels(p, n, collect, &c, err, sizeof err), NWANT);
    KT_CHECK(strcmp(c.list, "k_dynamic,k_mixed,k_spill,k_frame,k_shared,k_axpy") == 0);
    memset(&c, 0, sizeof c);
    c.stop_after = 2;
    KT_CHECK_INT(elf_cubin_list_kernels(p, n, collect, &c, err, sizeof err), 2);
    KT_CHECK_INT(elf_cubin_sm(p, n, &sm, err, sizeof err), 0);
    KT_CHECK_INT(sm, 90);

    KT_CHECK(read_res(p, n, "nope", &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "kernel 'nope' not found; the cubin has 6 kernels: k_dynamic, k_mixed, "
                           "k_spill, k_frame, k_shared, k_axpy");
    /* A device-function or section name is not a kernel name. */
    KT_CHECK(read_res(p, n, ".text.k_axpy", &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "not found");
    KT_CHECK(elf_cubin_read_resources(p, n, "nope", &r, NULL, 0) != 0);
    free(p);
}

/* Cuts before the end of the section table fail as truncation; later cuts (only program
 * headers live there) either still read the same numbers or fail with a message. */
static void test_truncation(void)
{
    size_t n, k, table_end;
    unsigned char *p = load(CUBIN, &n);
    kt_resources full, r;
    char err[512];
    int bad = 0;
    if (!p) { KT_CHECK(p != NULL); return; }
    table_end = (size_t)(elf_u64(p + 0x28) + 64u * elf_u16(p + 0x3c));
    KT_CHECK(table_end <= n);
    KT_CHECK_INT(read_res(p, n, "k_mixed", &full, err, sizeof err), 0);
    for (k = 0; k < n; k++) {
        int rc = read_res(p, k, "k_mixed", &r, err, sizeof err);
        if (k < table_end) {
            if (rc == 0 || !strstr(err, k < 4 ? "not an ELF file" : "truncated")) {
                if (bad++ < 5) fprintf(stderr, "cut at %zu: rc %d: %s\n", k, rc, err);
            }
        } else if (rc == 0 ? memcmp(&r, &full, sizeof r) != 0 : err[0] == 0) {
            bad++;
        }
    }
    KT_CHECK_INT(bad, 0);
    free(p);
}

static void test_header_faults(void)
{
    size_t n, an;
    unsigned char *p = load(CUBIN, &n), *q;
    unsigned char *amd = load("amd_kernels_gfx942.co", &an);
    kt_resources r;
    char err[512];
    int sm = 0;
    if (!p || !amd) { KT_CHECK(p && amd); free(p); free(amd); return; }
    q = copy_of(p, n);
    KT_CHECK(read_res(amd, an, NULL, &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "wrong machine: e_machine 224 at offset 0x12, expected 190 (CUDA)");
    KT_CHECK_INT(elf_cubin_sm(amd, an, &sm, err, sizeof err), -1);
    q[0] = 0;
    KT_CHECK(read_res(q, n, NULL, &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "bad magic");
    /* ABI v1 layout (EI_ABIVERSION 7): SM in the low byte of e_flags. */
    memcpy(q, p, n);
    q[8] = 7;
    put_le(q + 0x30, 0x005a055a, 4);
    KT_CHECK_INT(elf_cubin_sm(q, n, &sm, err, sizeof err), 0);
    KT_CHECK_INT(sm, 90);
    free(q);
    free(p);
    free(amd);
}

static void test_symbol_faults(void)
{
    size_t n, symsh, entry, strsh;
    unsigned char *p = load(CUBIN, &n), *q;
    elf_section symtab, strtab;
    kt_resources r;
    char err[512];
    uint32_t i;
    if (!p) { KT_CHECK(p != NULL); return; }
    q = copy_of(p, n);
    symsh = shdr_of(p, n, ".symtab", &symtab);
    strsh = shdr_of(p, n, ".strtab", &strtab);
    symbol_of(p, n, "k_axpy", &entry);

    put_le(q + symsh + 4, 0, 4);                       /* .symtab no longer SHT_SYMTAB */
    KT_CHECK(read_res(q, n, NULL, &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "no symbol table (SHT_SYMTAB)");
    memcpy(q, p, n);
    put_le(q + symsh + 56, 16, 8);                     /* entry size */
    KT_CHECK(read_res(q, n, NULL, &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "has entry size 16, expected 24");
    memcpy(q, p, n);
    put_le(q + symsh + 32, (uint64_t)n, 8);            /* symbols past the end of the file */
    KT_CHECK(read_res(q, n, NULL, &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "(.symtab) data at offset");
    memcpy(q, p, n);
    put_le(q + entry, 0x00ffffff, 4);                   /* k_axpy's name outside .strtab */
    KT_CHECK(read_res(q, n, "k_axpy", &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "name offset 16777215 outside its string table");
    memcpy(q, p, n);
    put_le(q + strsh + 24, (uint64_t)n - 1, 8);         /* .strtab outside the file */
    KT_CHECK(read_res(q, n, NULL, &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "lies outside the file");
    memcpy(q, p, n);
    put_le(q + entry + 6, 60000, 2);                    /* k_axpy in a section that does not exist */
    KT_CHECK(read_res(q, n, "k_axpy", &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "section 60000 out of range");
    memcpy(q, p, n);
    put_le(q + symsh + 40, 999, 4);                     /* .symtab's string table link */
    KT_CHECK(read_res(q, n, NULL, &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "string table section 999 out of range");
    {   /* the public helpers guard their own indices */
        elf_file f;
        elf_section s;
        elf_symbol sym;
        KT_CHECK_INT(elf_open(&f, p, n, err, sizeof err), 0);
        KT_CHECK_INT(elf_symbol_at(&f, &symtab, (uint32_t)(symtab.size / 24), &sym, err, sizeof err), -1);
        KT_CHECK_CONTAINS(err, "out of range (symbol table section");
        KT_CHECK_INT(elf_section_find(&f, ".no.such.section", &s, err, sizeof err), 0);
        KT_CHECK_INT(elf_section_at(&f, f.shnum, &s, err, sizeof err), -1);
        KT_CHECK_CONTAINS(err, "out of range");
    }
    /* Without entry marks there are no kernels. */
    memcpy(q, p, n);
    for (i = 0; i < symtab.size / 24; i++) q[symtab.offset + i * 24 + 5] &= (unsigned char)~0x10;
    KT_CHECK_INT(elf_cubin_list_kernels(q, n, NULL, NULL, err, sizeof err), 0);
    KT_CHECK(read_res(q, n, "k_axpy", &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "kernel 'k_axpy' not found; the cubin has no kernels");
    free(q);
    free(p);
}

static void test_register_faults(void)
{
    size_t n, textsh, rec;
    unsigned char *p = load(CUBIN, &n), *q;
    elf_section text;
    kt_resources r;
    char err[512];
    uint32_t sym;
    if (!p) { KT_CHECK(p != NULL); return; }
    q = copy_of(p, n);
    textsh = shdr_of(p, n, ".text.k_axpy", &text);
    sym = symbol_of(p, n, "k_axpy", NULL);
    rec = record_of(p, n, ".nv.info", 0x2f, sym);

    /* Older cubins carry the count in sh_info's top byte: equal is fine, different is a fault. */
    put_le(q + textsh + 44, (10u << 24) | (text.info & 0xffffff), 4);
    KT_CHECK_INT(read_res(q, n, "k_axpy", &r, err, sizeof err), 0);
    KT_CHECK_INT(r.vgpr, 10);
    put_le(q + textsh + 44, (11u << 24) | (text.info & 0xffffff), 4);
    KT_CHECK(read_res(q, n, "k_axpy", &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "kernel 'k_axpy': register counts disagree: .text.k_axpy sh_info says 11, "
                           "EIATTR_REGCOUNT says 10");
    /* Without EIATTR_REGCOUNT the sh_info byte is used; without either it is a fault. */
    q[rec + 1] = 0x2e;
    put_le(q + textsh + 44, (13u << 24) | (text.info & 0xffffff), 4);
    KT_CHECK_INT(read_res(q, n, "k_axpy", &r, err, sizeof err), 0);
    KT_CHECK_INT(r.vgpr, 13);
    put_le(q + textsh + 44, text.info, 4);
    KT_CHECK(read_res(q, n, "k_axpy", &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "kernel 'k_axpy': no register count (no EIATTR_REGCOUNT record");
    memcpy(q, p, n);
    put_le(q + rec + 8, 0, 4);
    KT_CHECK(read_res(q, n, "k_axpy", &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "EIATTR_REGCOUNT 0 is not a register count (1..255)");
    {   /* no global .nv.info at all: its header now carries another section's name */
        elf_section info, symtab;
        size_t infosh = shdr_of(p, n, ".nv.info", &info);
        size_t symsh = shdr_of(p, n, ".symtab", &symtab);
        memcpy(q, p, n);
        put_le(q + infosh, elf_u32(p + symsh), 4);
        KT_CHECK(read_res(q, n, "k_axpy", &r, err, sizeof err) != 0);
        KT_CHECK_CONTAINS(err, "no register count (no EIATTR_REGCOUNT record");
    }
    memcpy(q, p, n);
    put_le(q + rec + 2, 4, 2);                         /* REGCOUNT payload too short */
    KT_CHECK(read_res(q, n, "k_axpy", &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "EIATTR_REGCOUNT record at offset");
    KT_CHECK_CONTAINS(err, "with 4 payload bytes, expected format 4 with at least 8 bytes");
    free(q);
    free(p);
}

static void test_info_faults(void)
{
    size_t n, infosh, first, maxt, frame;
    unsigned char *p = load(CUBIN, &n), *q;
    elf_section info;
    kt_resources r;
    char err[512];
    if (!p) { KT_CHECK(p != NULL); return; }
    q = copy_of(p, n);
    infosh = shdr_of(p, n, ".nv.info.k_shared", &info);
    first = (size_t)info.offset;
    maxt = record_of(p, n, ".nv.info.k_shared", 0x05, -1);
    frame = record_of(p, n, ".nv.info", 0x11, symbol_of(p, n, "k_frame", NULL));

    q[first] = 9;
    KT_CHECK(read_res(q, n, "k_shared", &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "has unknown format 9");
    memcpy(q, p, n);
    put_le(q + maxt + 2, 0xffff, 2);
    KT_CHECK(read_res(q, n, "k_shared", &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "payload of 65535 bytes runs past the end of its section");
    memcpy(q, p, n);
    {
        /* cut the section 2 bytes into its last record's 4-byte header */
        size_t pos = first, last = first, end = first + (size_t)info.size;
        while (pos < end) { last = pos; pos += 4 + (p[pos] == 4 ? elf_u16(p + pos + 2) : 0); }
        put_le(q + infosh + 32, last - first + 2, 8);
    }
    KT_CHECK(read_res(q, n, "k_shared", &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "truncated .nv.info record at offset");
    memcpy(q, p, n);
    put_le(q + infosh + 24, (uint64_t)n, 8);
    KT_CHECK(read_res(q, n, "k_shared", &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "(.nv.info.k_shared) data at offset");

    /* EIATTR_MAX_THREADS: a product out of int range, a short payload, or REQNTID instead. */
    memcpy(q, p, n);
    put_le(q + maxt + 4, 0xffffffffu, 4);
    KT_CHECK(read_res(q, n, "k_shared", &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "EIATTR_MAX_THREADS record at offset");
    KT_CHECK_CONTAINS(err, "4294967295 x 1 x 1 threads is out of range");
    memcpy(q, p, n);
    put_le(q + maxt + 4, 8, 4);
    put_le(q + maxt + 8, 4, 4);
    put_le(q + maxt + 12, 2, 4);
    KT_CHECK_INT(read_res(q, n, "k_shared", &r, err, sizeof err), 0);
    KT_CHECK_INT(r.max_wg_size, 64);
    q[maxt + 1] = 0x10;
    KT_CHECK_INT(read_res(q, n, "k_shared", &r, err, sizeof err), 0);
    KT_CHECK_INT(r.max_wg_size, 64);
    memcpy(q, p, n);
    put_le(q + maxt + 2, 8, 2);
    KT_CHECK(read_res(q, n, "k_shared", &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "with 8 payload bytes, expected format 4 with at least 12 bytes");

    /* scratch is the larger of FRAME_SIZE and MIN_STACK_SIZE. */
    memcpy(q, p, n);
    put_le(q + frame + 8, 4096, 4);
    KT_CHECK_INT(read_res(q, n, "k_frame", &r, err, sizeof err), 0);
    KT_CHECK_INT(r.scratch_bytes, 4096);
    put_le(q + frame + 8, 16, 4);
    KT_CHECK_INT(read_res(q, n, "k_frame", &r, err, sizeof err), 0);
    KT_CHECK_INT(r.scratch_bytes, 2048);
    put_le(q + frame + 8, 0x80000000u, 4);
    KT_CHECK(read_res(q, n, "k_frame", &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "kernel 'k_frame': stack frame or spill bytes out of range");
    free(q);
    free(p);
}

static void test_spill_faults(void)
{
    size_t n, ann;
    unsigned char *p = load(CUBIN, &n), *q;
    kt_resources r;
    char err[512];
    unsigned size;
    if (!p) { KT_CHECK(p != NULL); return; }
    q = copy_of(p, n);
    ann = record_of(p, n, ".nv.info.k_spill", 0x55, -1);
    size = elf_u16(p + ann + 2);
    KT_CHECK(size > 0 && size % 8 == 0);

    /* Another annotation kind is not a spill: one 4-byte STL/LDL less. */
    put_le(q + ann + 4, 2, 4);
    KT_CHECK_INT(read_res(q, n, "k_spill", &r, err, sizeof err), 0);
    KT_CHECK_INT(r.vgpr_spills, 192 - 4);
    memcpy(q, p, n);
    put_le(q + ann + 8, 0, 4);                          /* the first instruction is no STL/LDL */
    KT_CHECK(read_res(q, n, "k_spill", &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "instruction at .text.k_spill+0x0 has opcode");
    KT_CHECK_CONTAINS(err, "not STL/LDL");
    memcpy(q, p, n);
    put_le(q + ann + 8, 4, 4);
    KT_CHECK(read_res(q, n, "k_spill", &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "text offset 0x4 is not an instruction of .text.k_spill");
    memcpy(q, p, n);
    put_le(q + ann + 8, 0xfffffff0u, 4);
    KT_CHECK(read_res(q, n, "k_spill", &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "is not an instruction of .text.k_spill");
    memcpy(q, p, n);
    put_le(q + ann + 2, size - 4, 2);
    KT_CHECK(read_res(q, n, "k_spill", &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "EIATTR_ANNOTATIONS record at offset");
    KT_CHECK_CONTAINS(err, "expected format 4 with a multiple of 8 bytes");
    /* Spills of pre-Volta code (64-bit SASS) are not decoded: a fault, not a guess. */
    memcpy(q, p, n);
    put_le(q + 0x30, (elf_u32(p + 0x30) & ~0xff00u) | (60u << 8), 4);
    KT_CHECK(read_res(q, n, "k_spill", &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "spill annotations of sm_60 code in .text.k_spill cannot be decoded");
    free(q);
    free(p);
}

static void test_shared(void)
{
    size_t n, sh, res;
    unsigned char *p = load(CUBIN, &n), *q;
    elf_section s, text, reserved;
    kt_resources r;
    char err[512];
    if (!p) { KT_CHECK(p != NULL); return; }
    q = copy_of(p, n);
    sh = shdr_of(p, n, ".nv.shared.k_shared", &s);
    res = shdr_of(p, n, ".nv.shared.reserved.0", &reserved);
    shdr_of(p, n, ".text.k_shared", &text);
    KT_CHECK_INT(s.size, 4096 + 1024);

    put_le(q + sh + 32, 100, 8);
    KT_CHECK(read_res(q, n, "k_shared", &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "kernel 'k_shared': .nv.shared.k_shared is 100 bytes, smaller than the "
                           "1024-byte reserve it starts with on sm_90");
    /* Before sm_90 the section holds the static bytes only. */
    memcpy(q, p, n);
    put_le(q + 0x30, (elf_u32(p + 0x30) & ~0xff00u) | (80u << 8), 4);
    KT_CHECK_INT(read_res(q, n, "k_shared", &r, err, sizeof err), 0);
    KT_CHECK_INT(r.lds_bytes, 5120);
    /* A reserved-shared section tied to this kernel counts; the global one does not. */
    memcpy(q, p, n);
    put_le(q + res + 32, 64, 8);
    KT_CHECK_INT(read_res(q, n, "k_shared", &r, err, sizeof err), 0);
    KT_CHECK_INT(r.lds_bytes, 4096);
    put_le(q + res + 44, text.index, 4);
    KT_CHECK_INT(read_res(q, n, "k_shared", &r, err, sizeof err), 0);
    KT_CHECK_INT(r.lds_bytes, 4096 + 64);
    KT_CHECK_INT(read_res(q, n, "k_axpy", &r, err, sizeof err), 0);
    KT_CHECK_INT(r.lds_bytes, 0);
    put_le(q + res + 32, 0x7fffffff, 8);
    KT_CHECK(read_res(q, n, "k_shared", &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "kernel 'k_shared': static shared memory size out of range");
    free(q);
    free(p);
}

int main(void)
{
    test_fixture();
    test_truncation();
    test_header_faults();
    test_symbol_faults();
    test_register_faults();
    test_info_faults();
    test_spill_faults();
    test_shared();
    KT_TEST_END();
}
