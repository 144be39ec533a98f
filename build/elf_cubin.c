/* elf_cubin.c: kernel resources from an NVIDIA cubin; see elf_cubin.h for what each field
 * means and where it comes from.
 *
 * .nv.info sections are sequences of records {u8 format, u8 attribute, u16 value-or-size}
 * followed, for format EIFMT_SVAL only, by a payload of that many bytes. Records that name a
 * function start their payload with its u32 symbol index. */
#include "elf_cubin.h"

#include <limits.h>
#include <string.h>

#define CUBIN_STT_FUNC      2
#define CUBIN_STB_LOCAL     0
#define CUBIN_STO_ENTRY     0x10    /* st_other bit ptxas sets on kernel entry points */
#define CUBIN_ABI_V2        8       /* e_ident[EI_ABIVERSION] from which the SM moved to bits 8-15 */

#define EIFMT_NVAL 1
#define EIFMT_BVAL 2
#define EIFMT_HVAL 3
#define EIFMT_SVAL 4

#define EIATTR_MAX_THREADS    0x05
#define EIATTR_REQNTID        0x10
#define EIATTR_FRAME_SIZE     0x11
#define EIATTR_MIN_STACK_SIZE 0x12
#define EIATTR_REGCOUNT       0x2f
#define EIATTR_ANNOTATIONS    0x55

#define CUBIN_ANNOT_SPILL     1     /* annotation kind ptxas gives its spill LDL/STL */
#define CUBIN_SHARED_RESERVE  1024  /* driver reserve at the bottom of the shared window */
#define CUBIN_RESERVE_SM      90    /* first SM whose .nv.shared sections include that reserve */

/* SASS (sm_70+): 128-bit instructions, opcode in bits 0-11, LDL/STL width code in bits 73-75. */
#define SASS_INSN_BYTES 16
#define SASS_OP_STL     0x387
#define SASS_OP_LDL     0x983

typedef struct cubin_doc {
    elf_file f;
    elf_section symtab;
    int sm;
    char *err;
    size_t errlen;
} cubin_doc;

/* One .nv.info record. */
typedef struct cubin_attr {
    uint8_t fmt, id;
    uint16_t value;             /* HVAL/BVAL value, or SVAL payload size */
    const unsigned char *payload;
    uint64_t offset;            /* file offset of the record */
} cubin_attr;

typedef struct cubin_attr_iter {
    const unsigned char *base;
    uint64_t pos, end;          /* file offsets */
} cubin_attr_iter;

/* What the .nv.info sections say about one kernel. */
typedef struct cubin_info {
    int have_regcount;
    uint32_t regcount;
    uint32_t frame, min_stack;
    uint64_t max_threads, reqntid;  /* 0: not recorded */
    uint64_t spill_bytes;
} cubin_info;

/* The kernel being read. */
typedef struct cubin_kernel {
    elf_symbol sym;
    elf_section text;
    const unsigned char *text_data;
} cubin_kernel;

/* ABI v1 (EI_ABIVERSION 7) keeps the SM in the low byte of e_flags, ABI v2 (8, CUDA 13) in
 * bits 8-15, where v1 kept texture-mode and addressing flags. */
static int cubin_sm_of(const elf_file *f)
{
    return (int)(f->abiversion >= CUBIN_ABI_V2 ? (f->flags >> 8) & 0xff : f->flags & 0xff);
}

static int cubin_open(cubin_doc *d, const void *buf, size_t len, char *err, size_t errlen)
{
    uint32_t i;
    memset(d, 0, sizeof *d);
    d->err = err;
    d->errlen = errlen;
    if (elf_open_machine(&d->f, buf, len, ELF_EM_CUDA, "CUDA", err, errlen)) return -1;
    d->sm = cubin_sm_of(&d->f);
    for (i = 1; i < d->f.shnum; i++) {
        if (elf_section_at(&d->f, i, &d->symtab, err, errlen)) return -1;
        if (d->symtab.type == ELF_SHT_SYMTAB) return 0;
    }
    elf_err(err, errlen, "no symbol table (SHT_SYMTAB) among %u sections, so no kernels can be found",
            d->f.shnum);
    return -1;
}

static int cubin_is_kernel(const elf_symbol *s)
{
    return (s->info & 0xf) == CUBIN_STT_FUNC && (s->info >> 4) != CUBIN_STB_LOCAL &&
           (s->other & CUBIN_STO_ENTRY) && s->shndx != 0;
}

/* Call cb for every kernel symbol: 0 walked all, 1 cb stopped, -1 fault. */
static int cubin_walk(cubin_doc *d, int (*cb)(void *ctx, cubin_doc *d, const elf_symbol *s), void *ctx)
{
    elf_symbol s;
    uint32_t i, n;
    int rc;
    if (elf_symbol_count(&d->f, &d->symtab, &n, d->err, d->errlen)) return -1;
    for (i = 1; i < n; i++) {
        if (elf_symbol_at(&d->f, &d->symtab, i, &s, d->err, d->errlen)) return -1;
        if (cubin_is_kernel(&s) && (rc = cb(ctx, d, &s)) != 0) return rc;
    }
    return 0;
}

/* The first section whose name is prefix followed by name: 1 found, 0 absent, -1 fault. */
static int cubin_find_named(cubin_doc *d, const char *prefix, const char *name, elf_section *s)
{
    size_t plen = strlen(prefix);
    uint32_t i;
    for (i = 1; i < d->f.shnum; i++) {
        if (elf_section_at(&d->f, i, s, d->err, d->errlen)) return -1;
        if (strncmp(s->name, prefix, plen) == 0 && strcmp(s->name + plen, name) == 0) return 1;
    }
    return 0;
}

/* ---- .nv.info records ---- */

static int cubin_attr_begin(cubin_doc *d, const elf_section *s, cubin_attr_iter *it)
{
    const unsigned char *data;
    if (elf_section_data(&d->f, s, &data, d->err, d->errlen)) return -1;
    it->base = d->f.buf;
    it->pos = s->offset;
    it->end = data ? s->offset + s->size : s->offset;
    return 0;
}

/* 1: a record in *a; 0: end of section; -1: fault. */
static int cubin_attr_next(cubin_doc *d, cubin_attr_iter *it, cubin_attr *a)
{
    const unsigned char *p;
    if (it->pos >= it->end) return 0;
    if (it->end - it->pos < 4) {
        elf_err(d->err, d->errlen, "truncated .nv.info record at offset 0x%llx (%llu bytes left, need 4)",
                (unsigned long long)it->pos, (unsigned long long)(it->end - it->pos));
        return -1;
    }
    p = it->base + it->pos;
    a->fmt = p[0];
    a->id = p[1];
    a->value = elf_u16(p + 2);
    a->offset = it->pos;
    a->payload = NULL;
    it->pos += 4;
    if (a->fmt == EIFMT_SVAL) {
        if (a->value > it->end - it->pos) {
            elf_err(d->err, d->errlen, ".nv.info record 0x%02x at offset 0x%llx: payload of %u bytes runs "
                    "past the end of its section", a->id, (unsigned long long)a->offset, a->value);
            return -1;
        }
        a->payload = p + 4;
        it->pos += a->value;
    } else if (a->fmt != EIFMT_NVAL && a->fmt != EIFMT_BVAL && a->fmt != EIFMT_HVAL) {
        elf_err(d->err, d->errlen, ".nv.info record at offset 0x%llx has unknown format %u",
                (unsigned long long)a->offset, a->fmt);
        return -1;
    }
    return 1;
}

/* Payload of an SVAL record of at least min bytes (and a multiple of unit when unit > 0). */
static int cubin_attr_payload(cubin_doc *d, const cubin_attr *a, const char *what, unsigned min, unsigned unit)
{
    if (a->fmt != EIFMT_SVAL || a->value < min || (unit && a->value % unit)) {
        elf_err(d->err, d->errlen, "%s record at offset 0x%llx: format %u with %u payload bytes, "
                "expected format %d with %s%u%s", what, (unsigned long long)a->offset, a->fmt, a->value,
                EIFMT_SVAL, unit ? "a multiple of " : "at least ", unit ? unit : min, " bytes");
        return -1;
    }
    return 0;
}

/* x*y*z of a MAX_THREADS / REQNTID record. */
static int cubin_attr_threads(cubin_doc *d, const cubin_attr *a, const char *what, uint64_t *out)
{
    uint64_t x, y, z;
    if (cubin_attr_payload(d, a, what, 12, 0)) return -1;
    x = elf_u32(a->payload);
    y = elf_u32(a->payload + 4);
    z = elf_u32(a->payload + 8);
    /* Each factor is below 2^32; check the product stays meaningful before multiplying on. */
    if (x * y > INT_MAX || x * y * z > INT_MAX) {
        elf_err(d->err, d->errlen, "%s record at offset 0x%llx: %llu x %llu x %llu threads is out of range",
                what, (unsigned long long)a->offset, (unsigned long long)x, (unsigned long long)y,
                (unsigned long long)z);
        return -1;
    }
    *out = x * y * z;
    return 0;
}

/* Bytes one tagged spill instruction moves, from its SASS encoding. */
static int cubin_spill_width(cubin_doc *d, const cubin_kernel *k, uint64_t off, uint64_t rec, uint64_t *bytes)
{
    static const unsigned widths[8] = { 1, 1, 2, 2, 4, 8, 16, 16 };  /* U8 S8 U16 S16 32 64 128 U.128 */
    const unsigned char *insn;
    uint64_t lo, hi;
    unsigned op;
    if (off % SASS_INSN_BYTES || off > k->text.size || k->text.size - off < SASS_INSN_BYTES) {
        elf_err(d->err, d->errlen, "spill annotation at offset 0x%llx: text offset 0x%llx is not an "
                "instruction of %s (0x%llx bytes)", (unsigned long long)rec, (unsigned long long)off,
                k->text.name, (unsigned long long)k->text.size);
        return -1;
    }
    insn = k->text_data + off;
    lo = elf_u64(insn);
    hi = elf_u64(insn + 8);
    op = (unsigned)(lo & 0xfff);
    if (op != SASS_OP_STL && op != SASS_OP_LDL) {
        elf_err(d->err, d->errlen, "spill annotation at offset 0x%llx: instruction at %s+0x%llx has "
                "opcode 0x%03x, not STL/LDL", (unsigned long long)rec, k->text.name,
                (unsigned long long)off, op);
        return -1;
    }
    *bytes = widths[(hi >> 9) & 7];
    return 0;
}

static int cubin_annotations(cubin_doc *d, const cubin_kernel *k, const cubin_attr *a, cubin_info *info)
{
    uint32_t i;
    uint64_t bytes;
    if (cubin_attr_payload(d, a, "EIATTR_ANNOTATIONS", 0, 8)) return -1;
    for (i = 0; i < a->value; i += 8) {
        if (elf_u32(a->payload + i) != CUBIN_ANNOT_SPILL) continue;
        if (d->sm < 70 || !k->text_data) {
            elf_err(d->err, d->errlen, "spill annotations of sm_%d code in %s cannot be decoded "
                    "(128-bit SASS from sm_70 on only)", d->sm, k->text.name);
            return -1;
        }
        if (cubin_spill_width(d, k, elf_u32(a->payload + i + 4), a->offset + 4 + i, &bytes)) return -1;
        info->spill_bytes += bytes;
    }
    return 0;
}

/* Records keyed by symbol: apply those naming this kernel. */
static int cubin_sym_attr(cubin_doc *d, const cubin_kernel *k, const cubin_attr *a, const char *what,
                          uint32_t *out, int *have)
{
    if (cubin_attr_payload(d, a, what, 8, 0)) return -1;
    if (elf_u32(a->payload) != k->sym.index) return 0;
    *out = elf_u32(a->payload + 4);
    if (have) *have = 1;
    return 0;
}

static int cubin_apply_attr(cubin_doc *d, const cubin_kernel *k, const cubin_attr *a,
                            int per_kernel, cubin_info *info)
{
    if (!per_kernel && a->id != EIATTR_REGCOUNT && a->id != EIATTR_FRAME_SIZE &&
        a->id != EIATTR_MIN_STACK_SIZE)
        return 0;       /* unkeyed records in the global section describe no kernel in particular */
    switch (a->id) {
    case EIATTR_REGCOUNT:
        return cubin_sym_attr(d, k, a, "EIATTR_REGCOUNT", &info->regcount, &info->have_regcount);
    case EIATTR_FRAME_SIZE:
        return cubin_sym_attr(d, k, a, "EIATTR_FRAME_SIZE", &info->frame, NULL);
    case EIATTR_MIN_STACK_SIZE:
        return cubin_sym_attr(d, k, a, "EIATTR_MIN_STACK_SIZE", &info->min_stack, NULL);
    case EIATTR_MAX_THREADS:
        return cubin_attr_threads(d, a, "EIATTR_MAX_THREADS", &info->max_threads);
    case EIATTR_REQNTID:
        return cubin_attr_threads(d, a, "EIATTR_REQNTID", &info->reqntid);
    case EIATTR_ANNOTATIONS:
        return cubin_annotations(d, k, a, info);
    default:
        return 0;
    }
}

/* Apply every record of one .nv.info section. Per-kernel sections only hold this kernel's
 * records; the global one holds everybody's, told apart by symbol index. */
static int cubin_scan_info(cubin_doc *d, const cubin_kernel *k, const elf_section *s,
                           int per_kernel, cubin_info *info)
{
    cubin_attr_iter it;
    cubin_attr a;
    int rc;
    if (cubin_attr_begin(d, s, &it)) return -1;
    while ((rc = cubin_attr_next(d, &it, &a)) == 1)
        if (cubin_apply_attr(d, k, &a, per_kernel, info)) return -1;
    return rc;
}

static int cubin_read_info(cubin_doc *d, const cubin_kernel *k, cubin_info *info)
{
    elf_section s;
    int rc;
    memset(info, 0, sizeof *info);
    if ((rc = cubin_find_named(d, ".nv.info", "", &s)) < 0) return -1;
    if (rc && cubin_scan_info(d, k, &s, 0, info)) return -1;
    if ((rc = cubin_find_named(d, ".nv.info.", k->sym.name, &s)) < 0) return -1;
    if (rc && cubin_scan_info(d, k, &s, 1, info)) return -1;
    return 0;
}

/* ---- resources ---- */

static int cubin_registers(cubin_doc *d, const cubin_kernel *k, const cubin_info *info, int *out)
{
    uint32_t from_text = k->text.info >> 24;
    if (info->have_regcount && from_text && from_text != info->regcount) {
        elf_err(d->err, d->errlen, "kernel '%s': register counts disagree: %s sh_info says %u, "
                "EIATTR_REGCOUNT says %u", k->sym.name, k->text.name, from_text, info->regcount);
        return -1;
    }
    if (!info->have_regcount && from_text == 0) {
        elf_err(d->err, d->errlen, "kernel '%s': no register count (no EIATTR_REGCOUNT record, and "
                "%s sh_info 0x%08x carries none)", k->sym.name, k->text.name, k->text.info);
        return -1;
    }
    if (info->have_regcount && (info->regcount == 0 || info->regcount > 255)) {
        elf_err(d->err, d->errlen, "kernel '%s': EIATTR_REGCOUNT %u is not a register count (1..255)",
                k->sym.name, info->regcount);
        return -1;
    }
    *out = (int)(info->have_regcount ? info->regcount : from_text);
    return 0;
}

/* Static shared bytes; see elf_cubin.h for the reserve rule. */
static int cubin_shared(cubin_doc *d, const cubin_kernel *k, int *out)
{
    static const char reserved[] = ".nv.shared.reserved.";
    elf_section s, own = { 0 };
    uint64_t bytes = 0, extra = 0;
    uint32_t i;
    int has_own = 0;
    for (i = 1; i < d->f.shnum; i++) {
        if (elf_section_at(&d->f, i, &s, d->err, d->errlen)) return -1;
        if (strncmp(s.name, reserved, sizeof reserved - 1) == 0) {
            if (s.info != 0 && s.info == k->text.index) {
                if (s.size > INT_MAX - extra) goto range;
                extra += s.size;
            }
        } else if (!has_own && strncmp(s.name, ".nv.shared.", 11) == 0 && strcmp(s.name + 11, k->sym.name) == 0) {
            own = s;
            has_own = 1;
        }
    }
    if (has_own) {
        bytes = own.size;
        if (d->sm >= CUBIN_RESERVE_SM) {
            if (bytes < CUBIN_SHARED_RESERVE) {
                elf_err(d->err, d->errlen, "kernel '%s': %s is %llu bytes, smaller than the %d-byte "
                        "reserve it starts with on sm_%d", k->sym.name, own.name,
                        (unsigned long long)bytes, CUBIN_SHARED_RESERVE, d->sm);
                return -1;
            }
            bytes -= CUBIN_SHARED_RESERVE;
        }
    }
    if (bytes > INT_MAX - extra) goto range;
    *out = (int)(bytes + extra);
    return 0;
range:
    elf_err(d->err, d->errlen, "kernel '%s': static shared memory size out of range", k->sym.name);
    return -1;
}

static int cubin_fill(cubin_doc *d, const elf_symbol *sym, kt_resources *out)
{
    cubin_kernel k;
    cubin_info info;
    uint64_t scratch;
    kt_resources r;
    memset(&r, 0, sizeof r);
    k.sym = *sym;
    if (elf_section_at(&d->f, sym->shndx, &k.text, d->err, d->errlen)) return -1;
    if (elf_section_data(&d->f, &k.text, &k.text_data, d->err, d->errlen)) return -1;
    if (cubin_read_info(d, &k, &info)) return -1;
    if (cubin_registers(d, &k, &info, &r.vgpr)) return -1;
    if (cubin_shared(d, &k, &r.lds_bytes)) return -1;
    scratch = info.frame > info.min_stack ? info.frame : info.min_stack;
    if (scratch > INT_MAX || info.spill_bytes > INT_MAX) {
        elf_err(d->err, d->errlen, "kernel '%s': stack frame or spill bytes out of range", sym->name);
        return -1;
    }
    r.scratch_bytes = (int)scratch;
    r.vgpr_spills = (int)info.spill_bytes;
    r.wave_size = 32;
    r.max_wg_size = (int)(info.max_threads ? info.max_threads : info.reqntid);
    *out = r;
    return 0;
}

typedef struct cubin_find_ctx {
    const char *want;
    kt_resources *out;
    int found;
} cubin_find_ctx;

static int cubin_find_cb(void *ctx, cubin_doc *d, const elf_symbol *s)
{
    cubin_find_ctx *c = ctx;
    if (c->want && strcmp(c->want, s->name) != 0) return 0;
    c->found = 1;
    return cubin_fill(d, s, c->out) ? -1 : 1;
}

typedef struct cubin_list_ctx {
    elf_kernel_fn fn;
    void *ctx;
    int count;
} cubin_list_ctx;

static int cubin_list_cb(void *ctx, cubin_doc *d, const elf_symbol *s)
{
    cubin_list_ctx *l = ctx;
    (void)d;
    l->count++;
    return l->fn && l->fn(l->ctx, s->name, strlen(s->name)) ? 1 : 0;
}

int elf_cubin_list_kernels(const void *buf, size_t len, elf_kernel_fn fn, void *ctx,
                           char *err, size_t errlen)
{
    cubin_doc d;
    cubin_list_ctx l = { fn, ctx, 0 };
    if (cubin_open(&d, buf, len, err, errlen)) return -1;
    if (cubin_walk(&d, cubin_list_cb, &l) < 0) return -1;
    return l.count;
}

int elf_cubin_read_resources(const void *buf, size_t len, const char *kernel_name,
                             kt_resources *out, char *err, size_t errlen)
{
    cubin_doc d;
    cubin_find_ctx c = { kernel_name, out, 0 };
    if (cubin_open(&d, buf, len, err, errlen)) return -1;
    if (cubin_walk(&d, cubin_find_cb, &c) < 0) return -1;
    if (!c.found) {
        elf_err_kernel_not_found(buf, len, kernel_name, "cubin", elf_cubin_list_kernels, err, errlen);
        return -1;
    }
    return 0;
}

int elf_cubin_sm(const void *buf, size_t len, int *sm, char *err, size_t errlen)
{
    elf_file f;
    if (elf_open_machine(&f, buf, len, ELF_EM_CUDA, "CUDA", err, errlen)) return -1;
    *sm = cubin_sm_of(&f);
    return 0;
}
