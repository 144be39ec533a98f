/* test_elf_amdgpu.c: the AMDGPU code-object reader (build/elf_amdgpu.c, build/elf.c).
 *
 * Real code objects: tests/data/amd_*.co (compiled by tests/data/make_fixtures.sh; the numbers
 * below are what llvm-readelf-19 --notes prints for them). Faults: those files patched or cut
 * at every offset, and small code objects built here around hand-written msgpack metadata.
 * Every fault must come back as a nonzero return with the message checked, never a crash;
 * run under ASan/UBSan (the fuzz build) to also prove no out-of-bounds read. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf.h"
#include "elf_amdgpu.h"
#include "kt_test.h"
#include "kt_elf_fixture.h"

/* every read goes through an exact-size copy (kt_elf_fixture.h) */
#define read_res(p, n, k, r, e, el) read_with(elf_amdgpu_read_resources, (p), (n), (k), (r), (e), (el))

/* ---- helpers ---- */

typedef struct blob {
    unsigned char *p;
    size_t n, cap;
} blob;

static void blob_byte(blob *b, unsigned c)
{
    if (b->n == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 512;
        b->p = realloc(b->p, b->cap);
        if (!b->p) { perror("realloc"); exit(2); }
    }
    b->p[b->n++] = (unsigned char)c;
}

static void blob_le(blob *b, uint64_t x, int bytes)
{
    int i;
    for (i = 0; i < bytes; i++) blob_byte(b, (unsigned)(x >> (8 * i)) & 0xff);
}

static void blob_bytes(blob *b, const void *p, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) blob_byte(b, ((const unsigned char *)p)[i]);
}

static void blob_pad(blob *b, size_t align)
{
    while (b->n % align) blob_byte(b, 0);
}







/* Offset of the NT_AMDGPU_METADATA note header inside the fixture. */
static size_t note_of(const unsigned char *p, size_t n, elf_note *note)
{
    elf_file f;
    elf_section s;
    elf_note_iter it;
    char err[256];
    shdr_of(p, n, ".note", &s);
    elf_open(&f, p, n, err, sizeof err);
    elf_note_begin(&f, &s, &it, err, sizeof err);
    while (elf_note_next(&it, note, err, sizeof err) == 1)
        if (note->type == ELF_NT_AMDGPU_METADATA) return (size_t)note->offset;
    fprintf(stderr, "fixture has no metadata note\n");
    exit(2);
}

/* Replace every occurrence of from (same length as to) inside [lo, hi). */
static int patch_all(unsigned char *p, size_t lo, size_t hi, const char *from, const char *to)
{
    size_t k = strlen(from), i;
    int hits = 0;
    for (i = lo; i + k <= hi; i++)
        if (memcmp(p + i, from, k) == 0) { memcpy(p + i, to, k); hits++; }
    return hits;
}

/* ---- real code objects ---- */

typedef struct expect {
    const char *name;
    int vgpr, sgpr, agpr, lds, scratch, vspill, sspill, wave, maxwg;
} expect;

static const expect gfx1201[] = {
    { "k_axpy",    4, 10, 0, 0,    0,    0,  0, 32, 1024 },
    { "k_lds",     4,  4, 0, 4096, 0,    0,  0, 32, 256 },
    { "k_scratch", 33, 6, 0, 0,    2064, 0,  0, 32, 1024 },
    { "k_spill",   16, 4, 0, 0,    108,  41, 0, 32, 1024 },
    { "k_sspill",  3, 13, 0, 0,    0,    0,  4, 32, 1024 },
};
static const expect gfx1100[] = {
    { "k_axpy",    4, 18, 0, 0,    0,    0,  0, 32, 1024 },
    { "k_lds",     4,  4, 0, 4096, 0,    0,  0, 32, 256 },
    { "k_scratch", 34, 7, 0, 0,    2064, 0,  0, 32, 1024 },
    { "k_spill",   16, 7, 0, 0,    112,  29, 0, 32, 1024 },
    { "k_sspill",  3, 13, 0, 0,    0,    0,  4, 32, 1024 },
};
static const expect gfx942[] = {
    { "k_axpy",    6, 14, 0, 0,    0,    0,  0,  64, 1024 },
    { "k_lds",     4, 10, 0, 4096, 0,    0,  0,  64, 256 },
    { "k_scratch", 20, 27, 0, 0,   2064, 0,  0,  64, 1024 },
    { "k_spill",   32, 11, 0, 0,   40,   9,  0,  64, 1024 },
    { "k_sspill",  3, 18, 0, 0,    0,    0,  16, 64, 1024 },
};
static const expect gfx942_agpr[] = {
    { "k_acc",     5, 10, 1, 0,    0,    0,  0,  64, 1024 },   /* vgpr 5 = align(arch, 4) + 1 agpr */
};

typedef struct fixture {
    const char *file, *target;
    unsigned mach;
    const expect *k;
    int nk;
} fixture;

static const fixture fixtures[] = {
    { "amd_kernels_gfx1201.co", "amdgcn-amd-amdhsa--gfx1201", 0x4e, gfx1201, 5 },
    { "amd_kernels_gfx1100.co", "amdgcn-amd-amdhsa--gfx1100", 0x41, gfx1100, 5 },
    { "amd_kernels_gfx942.co",  "amdgcn-amd-amdhsa--gfx942",  0x4c, gfx942, 5 },
    { "amd_agpr_gfx942.co",     "amdgcn-amd-amdhsa--gfx942",  0x4c, gfx942_agpr, 1 },
};
#define NFIXTURES (int)(sizeof fixtures / sizeof fixtures[0])

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

static void check_expect(const expect *e, const kt_resources *r)
{
    KT_CHECK_INT(r->vgpr, e->vgpr);
    KT_CHECK_INT(r->sgpr, e->sgpr);
    KT_CHECK_INT(r->agpr, e->agpr);
    KT_CHECK_INT(r->lds_bytes, e->lds);
    KT_CHECK_INT(r->scratch_bytes, e->scratch);
    KT_CHECK_INT(r->vgpr_spills, e->vspill);
    KT_CHECK_INT(r->sgpr_spills, e->sspill);
    KT_CHECK_INT(r->wave_size, e->wave);
    KT_CHECK_INT(r->max_wg_size, e->maxwg);
}

static void test_fixture(const fixture *fx)
{
    size_t n;
    unsigned char *p = load(fx->file, &n);
    kt_resources r;
    char err[512], target[128], want[512] = "";
    unsigned mach = 0;
    names c;
    int i;
    KT_CHECK(p != NULL);
    if (!p) return;
    for (i = 0; i < fx->nk; i++) {
        KT_CHECK_INT(read_res(p, n, fx->k[i].name, &r, err, sizeof err), 0);
        KT_CHECK_CONTAINS(err, "");
        check_expect(&fx->k[i], &r);
        snprintf(want + strlen(want), sizeof want - strlen(want), "%s%s", i ? "," : "", fx->k[i].name);
    }
    /* NULL picks the first kernel. */
    KT_CHECK_INT(read_res(p, n, NULL, &r, err, sizeof err), 0);
    check_expect(&fx->k[0], &r);
    /* Listing, in metadata order, and stopping early. */
    memset(&c, 0, sizeof c);
    KT_CHECK_INT(elf_amdgpu_list_kernels(p, n, collect, &c, err, sizeof err), fx->nk);
    KT_CHECK(strcmp(c.list, want) == 0);
    memset(&c, 0, sizeof c);
    c.stop_after = 1;
    KT_CHECK_INT(elf_amdgpu_list_kernels(p, n, collect, &c, err, sizeof err), 1);
    KT_CHECK_INT(elf_amdgpu_list_kernels(p, n, NULL, NULL, err, sizeof err), fx->nk);
    /* Target and machine. */
    KT_CHECK_INT(elf_amdgpu_target(p, n, target, sizeof target, &mach, err, sizeof err), 0);
    KT_CHECK(strcmp(target, fx->target) == 0);
    KT_CHECK_INT(mach, fx->mach);
    KT_CHECK_INT(elf_amdgpu_target(p, n, target, 8, NULL, err, sizeof err), -1);
    KT_CHECK_CONTAINS(err, "does not fit a 8-byte buffer");
    KT_CHECK_INT(elf_amdgpu_target(p, n, NULL, 0, NULL, err, sizeof err), 0);
    /* A missing kernel names itself and what is there. */
    KT_CHECK(read_res(p, n, "k_nope", &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "kernel 'k_nope' not found");
    KT_CHECK_CONTAINS(err, fx->nk == 5 ? "has 5 kernels: k_axpy, k_lds, k_scratch, k_spill, k_sspill"
                                       : "has 1 kernel: k_acc");
    /* A tiny error buffer truncates, a NULL one is allowed. */
    KT_CHECK(read_res(p, n, "k_nope", &r, err, 5) != 0);
    KT_CHECK_INT(strlen(err), 4);
    KT_CHECK(elf_amdgpu_read_resources(p, n, "k_nope", &r, NULL, 0) != 0);
    free(p);
}

/* Every cut of the file fails (the section table is at the end) with a truncation message. */
static void test_truncation(const char *file)
{
    size_t n, k;
    unsigned char *p = load(file, &n);
    kt_resources r;
    char err[512];
    int bad = 0;
    if (!p) { KT_CHECK(p != NULL); return; }
    for (k = 0; k < n; k++) {
        if (read_res(p, k, "k_axpy", &r, err, sizeof err) == 0) {
            bad++;
            continue;
        }
        if (k < 4 ? !strstr(err, "not an ELF file") : !strstr(err, "truncated")) {
            if (bad++ < 5) fprintf(stderr, "%s cut at %zu: %s\n", file, k, err);
        }
    }
    KT_CHECK_INT(bad, 0);
    free(p);
}

static void test_header_faults(void)
{
    size_t n, cn;
    unsigned char *p = load("amd_kernels_gfx942.co", &n), *q;
    unsigned char *cubin = load("nv_kernels_sm_90a.cubin", &cn);
    kt_resources r;
    char err[512];
    if (!p || !cubin) { KT_CHECK(p && cubin); free(p); free(cubin); return; }
    q = copy_of(p, n);

    KT_CHECK(read_res((const unsigned char *)"", 0, NULL, &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "not an ELF file (bad magic at offset 0)");
    KT_CHECK(elf_amdgpu_read_resources(NULL, 100, NULL, &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "not an ELF file");

    q[1] = 'F';
    KT_CHECK(read_res(q, n, NULL, &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "bad magic");
    memcpy(q, p, n);
    q[4] = 1;
    KT_CHECK(read_res(q, n, NULL, &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "not ELF64 (EI_CLASS 1 at offset 4)");
    memcpy(q, p, n);
    q[5] = 2;
    KT_CHECK(read_res(q, n, NULL, &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "not little-endian (EI_DATA 2 at offset 5)");
    memcpy(q, p, n);
    put_le(q + 0x12, 62, 2);
    KT_CHECK(read_res(q, n, NULL, &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "wrong machine: e_machine 62 at offset 0x12, expected 224 (AMDGPU)");
    KT_CHECK(read_res(cubin, cn, NULL, &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "e_machine 190");
    memcpy(q, p, n);
    put_le(q + 0x3a, 40, 2);
    KT_CHECK(read_res(q, n, NULL, &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "section header entry size 40");
    memcpy(q, p, n);
    put_le(q + 0x3e, 200, 2);
    KT_CHECK(read_res(q, n, NULL, &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "section name table index 200 out of range");
    memcpy(q, p, n);
    put_le(q + 0x28, (uint64_t)n - 10, 8);
    KT_CHECK(read_res(q, n, NULL, &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "truncated: section header table");
    memcpy(q, p, n);
    put_le(q + 0x28, UINT64_MAX - 8, 8);      /* offsets near 2^64 must not wrap */
    KT_CHECK(read_res(q, n, NULL, &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "truncated: section header table");
    memcpy(q, p, n);
    put_le(q + 0x3c, 0xff00, 2);
    KT_CHECK(read_res(q, n, NULL, &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "holds 65280 entries");
    memcpy(q, p, n);
    put_le(q + 0x28, 0, 8);                    /* no section table: no notes */
    KT_CHECK(read_res(q, n, NULL, &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "no NT_AMDGPU_METADATA note");
    free(q);
    free(p);
    free(cubin);
}

static void test_section_faults(void)
{
    size_t n, sh, strsh;
    unsigned char *p = load("amd_kernels_gfx1201.co", &n), *q;
    elf_section note, strtab;
    kt_resources r;
    char err[512];
    if (!p) { KT_CHECK(p != NULL); return; }
    q = copy_of(p, n);
    sh = shdr_of(p, n, ".note", &note);
    strsh = shdr_of(p, n, ".shstrtab", &strtab);

    put_le(q + sh + 24, (uint64_t)n - 4, 8);          /* .note sh_offset near the end */
    KT_CHECK(read_res(q, n, NULL, &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "(.note) data at offset");
    KT_CHECK_CONTAINS(err, "extends past the end of the file");
    memcpy(q, p, n);
    put_le(q + sh + 32, UINT64_MAX, 8);               /* .note sh_size huge */
    KT_CHECK(read_res(q, n, NULL, &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "extends past the end of the file");
    memcpy(q, p, n);
    put_le(q + sh, 0x7fffffff, 4);                    /* .note sh_name outside .shstrtab */
    KT_CHECK(read_res(q, n, NULL, &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "name offset 2147483647 outside its string table");
    memcpy(q, p, n);
    put_le(q + strsh + 32, elf_u32(p + sh) + 3, 8);   /* .shstrtab ends inside ".note" */
    KT_CHECK(read_res(q, n, NULL, &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "is not NUL-terminated inside its string table");
    memcpy(q, p, n);
    put_le(q + strsh + 24, (uint64_t)n, 8);           /* .shstrtab itself outside the file */
    KT_CHECK(read_res(q, n, NULL, &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "string table section");
    KT_CHECK_CONTAINS(err, "lies outside the file");
    memcpy(q, p, n);
    put_le(q + sh + 4, 1, 4);                          /* .note is no longer SHT_NOTE */
    KT_CHECK(read_res(q, n, NULL, &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "no NT_AMDGPU_METADATA note (owner AMDGPU, type 32) in 0 SHT_NOTE");
    free(q);
    free(p);
}

static void test_note_faults(void)
{
    size_t n, at, sh;
    unsigned char *p = load("amd_kernels_gfx1100.co", &n), *q;
    elf_note note;
    elf_section s;
    kt_resources r;
    char err[512];
    if (!p) { KT_CHECK(p != NULL); return; }
    q = copy_of(p, n);
    at = note_of(p, n, &note);
    sh = shdr_of(p, n, ".note", &s);

    put_le(q + at + 4, 0xfffffff0u, 4);               /* descsz */
    KT_CHECK(read_res(q, n, NULL, &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "run past the end of the note section");
    memcpy(q, p, n);
    put_le(q + at, 0xffffffffu, 4);                   /* namesz */
    KT_CHECK(read_res(q, n, NULL, &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "name size 4294967295");
    memcpy(q, p, n);
    put_le(q + at + 8, 33, 4);                        /* type */
    KT_CHECK(read_res(q, n, NULL, &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "no NT_AMDGPU_METADATA note (owner AMDGPU, type 32)");
    memcpy(q, p, n);
    q[at + 12 + 5] = 'X';                             /* owner AMDGPX */
    KT_CHECK(read_res(q, n, NULL, &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "no NT_AMDGPU_METADATA note");
    memcpy(q, p, n);
    put_le(q + sh + 32, s.size - (uint64_t)(at - s.offset) - 20, 8);  /* cut inside the note */
    KT_CHECK(read_res(q, n, NULL, &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "run past the end of the note section");
    memcpy(q, p, n);
    put_le(q + sh + 32, (uint64_t)(at - s.offset) + 8, 8);           /* cut inside the header */
    KT_CHECK(read_res(q, n, NULL, &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "truncated note header");

    /* Garbage where the msgpack map should be. */
    memcpy(q, p, n);
    q[note.desc - p] = 0xc1;
    KT_CHECK(read_res(q, n, NULL, &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "invalid type byte 0xc1");
    memcpy(q, p, n);
    q[note.desc - p] = 0x91;
    KT_CHECK(read_res(q, n, NULL, &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "metadata: expected a map, found array");
    memcpy(q, p, n);
    memset(q + (note.desc - p), 0xff, note.descsz);
    KT_CHECK(read_res(q, n, NULL, &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "expected a map, found int");
    memcpy(q, p, n);
    put_le(q + at + 4, note.descsz / 2, 4);          /* msgpack cut in half, before the last kernel */
    KT_CHECK(read_res(q, n, "k_sspill", &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "truncated");
    KT_CHECK_CONTAINS(err, "msgpack at offset 0x");

    /* Metadata that decodes but breaks the schema. */
    memcpy(q, p, n);
    KT_CHECK_INT(patch_all(q, note.desc - p, (note.desc - p) + note.descsz, ".vgpr_count", ".vgpr_xount"), 5);
    KT_CHECK(read_res(q, n, "k_lds", &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "kernel 'k_lds': metadata has no .vgpr_count");
    memcpy(q, p, n);
    patch_all(q, note.desc - p, (note.desc - p) + note.descsz, ".wavefront_size\x20", ".wavefront_size\x30");
    KT_CHECK(read_res(q, n, "k_spill", &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "kernel 'k_spill': .wavefront_size 48 is neither 32 nor 64");
    memcpy(q, p, n);
    KT_CHECK_INT(patch_all(q, note.desc - p, (note.desc - p) + note.descsz, ".sgpr_count\x12", ".sgpr_count\xc0"), 1);
    KT_CHECK(read_res(q, n, "k_axpy", &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "kernel #0: .sgpr_count: expected an int in 0..INT_MAX, found nil");
    free(q);
    free(p);
}

/* ---- small code objects built here ---- */

/* msgpack writers (the reader's own laws are in test_msgpack.c) */
static void mp_str(blob *b, const char *s)
{
    size_t k = strlen(s);
    if (k < 32) blob_byte(b, 0xa0 | (unsigned)k);
    else { blob_byte(b, 0xd9); blob_byte(b, (unsigned)k); }
    blob_bytes(b, s, k);
}
static void mp_uint(blob *b, uint32_t u)
{
    if (u < 128) blob_byte(b, u);
    else { blob_byte(b, 0xce); blob_byte(b, u >> 24); blob_byte(b, (u >> 16) & 0xff);
           blob_byte(b, (u >> 8) & 0xff); blob_byte(b, u & 0xff); }
}
static void mp_map(blob *b, unsigned n) { blob_byte(b, 0x80 | n); }
static void mp_array(blob *b, unsigned n) { blob_byte(b, 0x90 | n); }
static void mp_kv(blob *b, const char *k, uint32_t v) { mp_str(b, k); mp_uint(b, v); }

/* The required fields of one kernel map (7 pairs with .name), values derived from base. */
static void mp_kernel_body(blob *b, const char *name, uint32_t base)
{
    mp_kv(b, ".vgpr_count", base + 1);
    mp_kv(b, ".sgpr_count", base + 2);
    mp_kv(b, ".group_segment_fixed_size", base + 3);
    mp_kv(b, ".private_segment_fixed_size", base + 4);
    mp_kv(b, ".wavefront_size", 64);
    mp_kv(b, ".max_flat_workgroup_size", 256);
    mp_str(b, ".name");
    mp_str(b, name);
}

typedef struct synth_opts {
    const char *owner;          /* default "AMDGPU" */
    uint32_t type;              /* default 32 */
    int extended_numbering;     /* e_shnum 0 and e_shstrndx 0xffff, real values in section 0 */
    int align8;                 /* note section with sh_addralign 8 */
    int no_note_section;
} synth_opts;

/* A minimal AMDGPU ELF64: header, one note, .shstrtab, section table. */
static blob synth_elf(const blob *desc, const synth_opts *o)
{
    static const char shstr[] = "\0.note\0.shstrtab";
    const char *owner = o->owner ? o->owner : "AMDGPU";
    uint32_t namesz = (uint32_t)strlen(owner) + 1;
    size_t note_off, note_size, str_off, shoff;
    size_t align = o->align8 ? 8 : 4;
    blob b = { 0 };
    blob_bytes(&b, "\177ELF\2\1\1\100\3", 9);
    while (b.n < 16) blob_byte(&b, 0);
    blob_le(&b, 3, 2);                              /* ET_DYN */
    blob_le(&b, ELF_EM_AMDGPU, 2);
    blob_le(&b, 1, 4);
    blob_le(&b, 0, 8);                              /* entry */
    blob_le(&b, 0, 8);                              /* phoff */
    blob_le(&b, 0, 8);                              /* shoff, patched below */
    blob_le(&b, 0x54c, 4);                          /* e_flags: gfx942 */
    blob_le(&b, 64, 2);
    blob_le(&b, 56, 2);
    blob_le(&b, 0, 2);
    blob_le(&b, 64, 2);
    blob_le(&b, o->extended_numbering ? 0 : 3, 2);
    blob_le(&b, o->extended_numbering ? 0xffff : 2, 2);
    note_off = b.n;
    blob_le(&b, namesz, 4);
    blob_le(&b, desc->n, 4);
    blob_le(&b, o->type ? o->type : ELF_NT_AMDGPU_METADATA, 4);
    blob_bytes(&b, owner, namesz);
    blob_pad(&b, align);
    blob_bytes(&b, desc->p, desc->n);
    blob_pad(&b, align);
    note_size = b.n - note_off;
    str_off = b.n;
    blob_bytes(&b, shstr, sizeof shstr);
    blob_pad(&b, 8);
    shoff = b.n;
    /* [0] null (or the extended counts), [1] .note, [2] .shstrtab */
    blob_le(&b, 0, 4); blob_le(&b, 0, 4); blob_le(&b, 0, 8); blob_le(&b, 0, 8); blob_le(&b, 0, 8);
    blob_le(&b, o->extended_numbering ? 3 : 0, 8);
    blob_le(&b, o->extended_numbering ? 2 : 0, 4); blob_le(&b, 0, 4); blob_le(&b, 0, 8); blob_le(&b, 0, 8);
    blob_le(&b, 1, 4); blob_le(&b, o->no_note_section ? 1 : ELF_SHT_NOTE, 4); blob_le(&b, 2, 8);
    blob_le(&b, 0, 8); blob_le(&b, note_off, 8); blob_le(&b, note_size, 8);
    blob_le(&b, 0, 4); blob_le(&b, 0, 4); blob_le(&b, align, 8); blob_le(&b, 0, 8);
    blob_le(&b, 7, 4); blob_le(&b, 3, 4); blob_le(&b, 0, 8);
    blob_le(&b, 0, 8); blob_le(&b, str_off, 8); blob_le(&b, sizeof shstr, 8);
    blob_le(&b, 0, 4); blob_le(&b, 0, 4); blob_le(&b, 1, 8); blob_le(&b, 0, 8);
    put_le(b.p + 0x28, shoff, 8);
    return b;
}

/* Read kernel `kernel` of a synthetic object around desc; returns rc, message in err. */
static int synth_read(const blob *desc, const synth_opts *o, const char *kernel, kt_resources *r,
                      char *err, size_t errlen)
{
    static const synth_opts none;
    blob e = synth_elf(desc, o ? o : &none);
    int rc = read_res(e.p, e.n, kernel, r, err, errlen);
    free(e.p);
    return rc;
}

/* Top map {amdhsa.version: [1,2], amdhsa.kernels: [...], amdhsa.target: "..."} header. */
static void mp_top(blob *b, unsigned nkernels)
{
    mp_map(b, 3);
    mp_str(b, "amdhsa.version");
    mp_array(b, 2); mp_uint(b, 1); mp_uint(b, 2);
    mp_str(b, "amdhsa.kernels");
    mp_array(b, nkernels);
}

static void test_synthetic_ok(void)
{
    blob d = { 0 };
    kt_resources r;
    char err[512], target[64];
    unsigned mach;
    synth_opts o;
    int nest;

    /* Optional fields absent read as 0; unknown keys, nested or not, are stepped over. */
    mp_top(&d, 2);
    mp_map(&d, 7);
    mp_kernel_body(&d, "first", 10);
    mp_map(&d, 11);
    mp_str(&d, ".args");
    mp_array(&d, 2);
    mp_map(&d, 1); mp_kv(&d, ".offset", 0);
    mp_map(&d, 1); mp_str(&d, ".value_kind"); mp_str(&d, "by_value");
    mp_kernel_body(&d, "second", 20);
    mp_kv(&d, ".agpr_count", 7);
    mp_kv(&d, ".vgpr_spill_count", 8);
    mp_str(&d, ".sgpr_spill_count");
    blob_byte(&d, 0xcd); blob_byte(&d, 0x01); blob_byte(&d, 0x00);   /* uint16 256 */
    mp_str(&d, "amdhsa.target");
    mp_str(&d, "amdgcn-amd-amdhsa--gfx942");

    KT_CHECK_INT(synth_read(&d, NULL, "first", &r, err, sizeof err), 0);
    KT_CHECK_INT(r.vgpr, 11); KT_CHECK_INT(r.sgpr, 12); KT_CHECK_INT(r.agpr, 0);
    KT_CHECK_INT(r.lds_bytes, 13); KT_CHECK_INT(r.scratch_bytes, 14);
    KT_CHECK_INT(r.vgpr_spills, 0); KT_CHECK_INT(r.sgpr_spills, 0);
    KT_CHECK_INT(r.wave_size, 64); KT_CHECK_INT(r.max_wg_size, 256);
    KT_CHECK_INT(synth_read(&d, NULL, "second", &r, err, sizeof err), 0);
    KT_CHECK_INT(r.vgpr, 21); KT_CHECK_INT(r.agpr, 7);
    KT_CHECK_INT(r.vgpr_spills, 8); KT_CHECK_INT(r.sgpr_spills, 256);

    /* The same object with extended section numbering, and with an 8-aligned note section. */
    memset(&o, 0, sizeof o);
    o.extended_numbering = 1;
    KT_CHECK_INT(synth_read(&d, &o, "second", &r, err, sizeof err), 0);
    KT_CHECK_INT(r.vgpr, 21);
    memset(&o, 0, sizeof o);
    o.align8 = 1;
    KT_CHECK_INT(synth_read(&d, &o, "first", &r, err, sizeof err), 0);
    KT_CHECK_INT(r.vgpr, 11);
    {
        blob e = synth_elf(&d, &o);
        KT_CHECK_INT(elf_amdgpu_target(e.p, e.n, target, sizeof target, &mach, err, sizeof err), 0);
        KT_CHECK(strcmp(target, "amdgcn-amd-amdhsa--gfx942") == 0);
        KT_CHECK_INT(mach, 0x4c);
        free(e.p);
    }
    free(d.p);

    /* Nesting up to the bound under an unknown key is fine. */
    memset(&d, 0, sizeof d);
    mp_map(&d, 2);
    mp_str(&d, "amdhsa.printf");
    for (nest = 0; nest < 31; nest++) mp_array(&d, 1);
    blob_byte(&d, 0xc0);
    mp_str(&d, "amdhsa.kernels");
    mp_array(&d, 1); mp_map(&d, 7); mp_kernel_body(&d, "k", 0);
    KT_CHECK_INT(synth_read(&d, NULL, NULL, &r, err, sizeof err), 0);
    /* Without amdhsa.target the target query says so. */
    {
        blob e = synth_elf(&d, &o);
        KT_CHECK_INT(elf_amdgpu_target(e.p, e.n, target, sizeof target, &mach, err, sizeof err), -1);
        KT_CHECK_CONTAINS(err, "metadata has no amdhsa.target");
        free(e.p);
    }
    free(d.p);

    /* Hostile kernel names are printed with '?' for unprintable bytes. */
    memset(&d, 0, sizeof d);
    mp_map(&d, 1);
    mp_str(&d, "amdhsa.kernels");
    mp_array(&d, 1); mp_map(&d, 7); mp_kernel_body(&d, "a\nb\033c", 0);
    KT_CHECK(synth_read(&d, NULL, "zz", &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "has 1 kernel: a?b?c");
    free(d.p);
}

/* One synthetic fault: metadata written by build, message that must come back. */
static void expect_fault(void (*build)(blob *), const char *kernel, const char *msg)
{
    blob d = { 0 };
    kt_resources r;
    char err[512];
    build(&d);
    KT_CHECK(synth_read(&d, NULL, kernel, &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, msg);
    free(d.p);
}

static void bad_deep(blob *d)
{
    int i;
    mp_map(d, 1);
    mp_str(d, "amdhsa.printf");
    for (i = 0; i < 40; i++) mp_array(d, 1);
    blob_byte(d, 0xc0);
}
static void bad_int_key(blob *d) { mp_map(d, 1); mp_uint(d, 5); mp_uint(d, 6); }
static void bad_kernels_type(blob *d) { mp_map(d, 1); mp_str(d, "amdhsa.kernels"); mp_map(d, 0); }
static void bad_kernel_type(blob *d) { mp_map(d, 1); mp_str(d, "amdhsa.kernels"); mp_array(d, 1); mp_uint(d, 3); }
static void bad_no_name(blob *d)
{
    mp_map(d, 1); mp_str(d, "amdhsa.kernels"); mp_array(d, 1);
    mp_map(d, 1); mp_kv(d, ".vgpr_count", 3);
}
static void bad_name_type(blob *d)
{
    mp_map(d, 1); mp_str(d, "amdhsa.kernels"); mp_array(d, 1);
    mp_map(d, 1); mp_kv(d, ".name", 3);
}
static void bad_negative(blob *d)
{
    mp_map(d, 1); mp_str(d, "amdhsa.kernels"); mp_array(d, 1);
    mp_map(d, 1); mp_str(d, ".sgpr_count"); blob_byte(d, 0xff);    /* -1 */
}
static void bad_too_big(blob *d)
{
    mp_map(d, 1); mp_str(d, "amdhsa.kernels"); mp_array(d, 1);
    mp_map(d, 1); mp_kv(d, ".vgpr_count", 0x80000000u);
}
static void bad_unknown_value(blob *d)
{
    mp_map(d, 1); mp_str(d, "amdhsa.kernels"); mp_array(d, 1);
    mp_map(d, 2); mp_str(d, ".args"); mp_array(d, 1); blob_byte(d, 0xc1);
}
static void bad_target_type(blob *d) { mp_map(d, 1); mp_str(d, "amdhsa.target"); mp_uint(d, 1); }
static void no_kernels(blob *d) { mp_map(d, 1); mp_str(d, "amdhsa.kernels"); mp_array(d, 0); }
static void bad_missing_max_wg(blob *d)
{
    mp_map(d, 1); mp_str(d, "amdhsa.kernels"); mp_array(d, 1);
    mp_map(d, 6);
    mp_kv(d, ".vgpr_count", 1); mp_kv(d, ".sgpr_count", 1); mp_kv(d, ".group_segment_fixed_size", 1);
    mp_kv(d, ".private_segment_fixed_size", 1); mp_kv(d, ".wavefront_size", 32); mp_str(d, ".name"); mp_str(d, "k");
}
static void bad_count(blob *d)
{
    mp_map(d, 1); mp_str(d, "amdhsa.printf");
    blob_byte(d, 0xdd); blob_le(d, 0xffffffffu, 4);    /* array32 of 2^32-1, little-endian on purpose */
}

static void test_synthetic_faults(void)
{
    blob d = { 0 };
    kt_resources r;
    char err[512];
    synth_opts o;

    expect_fault(bad_deep, NULL, "containers nested deeper than 32");
    expect_fault(bad_int_key, NULL, "map key: expected a string, found uint");
    expect_fault(bad_kernels_type, NULL, "amdhsa.kernels: expected an array, found map");
    expect_fault(bad_kernel_type, NULL, "amdhsa.kernels[0]: expected a map, found uint");
    expect_fault(bad_no_name, NULL, "kernel #0 has no .name");
    expect_fault(bad_name_type, NULL, "kernel #0: .name: expected a string, found uint");
    expect_fault(bad_negative, NULL, ".sgpr_count: expected an int in 0..INT_MAX, found int");
    expect_fault(bad_too_big, NULL, ".vgpr_count: expected an int in 0..INT_MAX, found uint out of range");
    expect_fault(bad_unknown_value, NULL, "invalid type byte 0xc1");
    expect_fault(bad_target_type, NULL, "amdhsa.target: expected a string, found uint");
    expect_fault(no_kernels, NULL, "the code object has no kernels");
    expect_fault(no_kernels, "k_x", "kernel 'k_x' not found; the code object has no kernels");
    expect_fault(bad_missing_max_wg, "k", "kernel 'k': metadata has no .max_flat_workgroup_size");
    expect_fault(bad_count, NULL, "cannot fit");

    /* Code object v2 is named as such; no note at all is named as missing. */
    no_kernels(&d);
    memset(&o, 0, sizeof o);
    o.owner = "AMD";
    o.type = 10;
    KT_CHECK(synth_read(&d, &o, NULL, &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "code object v2");
    memset(&o, 0, sizeof o);
    o.no_note_section = 1;
    KT_CHECK(synth_read(&d, &o, NULL, &r, err, sizeof err) != 0);
    KT_CHECK_CONTAINS(err, "no NT_AMDGPU_METADATA note (owner AMDGPU, type 32) in 0 SHT_NOTE section(s)");
    free(d.p);
}

int main(void)
{
    int i;
    for (i = 0; i < NFIXTURES; i++) test_fixture(&fixtures[i]);
    for (i = 0; i < NFIXTURES; i++) test_truncation(fixtures[i].file);
    test_header_faults();
    test_section_faults();
    test_note_faults();
    test_synthetic_ok();
    test_synthetic_faults();
    KT_TEST_END();
}
