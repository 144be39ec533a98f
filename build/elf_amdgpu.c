/* elf_amdgpu.c: kernel resources from the NT_AMDGPU_METADATA note; see elf_amdgpu.h.
 *
 * The metadata is streamed once per query: a walk reads the top-level map, descends into
 * amdhsa.kernels, decodes each kernel map into an amd_kernel and hands it to a callback.
 * Nothing is allocated; names point into the caller's buffer. */
#include "elf_amdgpu.h"

#include <limits.h>
#include <string.h>

#include "msgpack_read.h"

/* Code object v2 (YAML metadata) used owner "AMD" and this type; recognised only to say so. */
#define AMD_NT_AMD_HSA_METADATA_V2 10

enum {
    AMD_VGPR, AMD_SGPR, AMD_AGPR, AMD_LDS, AMD_SCRATCH,
    AMD_VGPR_SPILLS, AMD_SGPR_SPILLS, AMD_WAVE, AMD_MAX_WG, AMD_NFIELDS
};

static const struct amd_field {
    const char *key;
    int required;       /* required by the code-object v3+ spec; optional ones default to 0 */
} amd_fields[AMD_NFIELDS] = {
    [AMD_VGPR]        = { ".vgpr_count", 1 },
    [AMD_SGPR]        = { ".sgpr_count", 1 },
    [AMD_AGPR]        = { ".agpr_count", 0 },
    [AMD_LDS]         = { ".group_segment_fixed_size", 1 },
    [AMD_SCRATCH]     = { ".private_segment_fixed_size", 1 },
    [AMD_VGPR_SPILLS] = { ".vgpr_spill_count", 0 },
    [AMD_SGPR_SPILLS] = { ".sgpr_spill_count", 0 },
    [AMD_WAVE]        = { ".wavefront_size", 1 },
    [AMD_MAX_WG]      = { ".max_flat_workgroup_size", 1 },
};

/* One decoded element of amdhsa.kernels. */
typedef struct amd_kernel {
    uint32_t index;
    const char *name;           /* NULL when the map has no .name */
    uint32_t name_len;
    int have[AMD_NFIELDS];
    int val[AMD_NFIELDS];
} amd_kernel;

/* An opened code object positioned at the start of its metadata. */
typedef struct amd_doc {
    elf_file f;
    mp_reader r;
    const char *target;         /* amdhsa.target, once the walk has passed it */
    uint32_t target_len;
    char *err;
    size_t errlen;
} amd_doc;

/* 0: keep walking; 1: stop (found what it wanted); -1: fault, message already in err. */
typedef int (*amd_kernel_cb)(void *ctx, amd_doc *d, const amd_kernel *k);

/* Scan the notes of one SHT_NOTE section. 1 found the metadata, 0 not here, -1 fault. */
static int amd_scan_notes(const elf_file *f, const elf_section *s, elf_note *meta,
                          int *saw_v2, char *err, size_t errlen)
{
    elf_note_iter it;
    elf_note n;
    int rc;
    if (elf_note_begin(f, s, &it, err, errlen)) return -1;
    while ((rc = elf_note_next(&it, &n, err, errlen)) == 1) {
        if (n.type == ELF_NT_AMDGPU_METADATA && elf_note_owner_is(&n, "AMDGPU")) {
            *meta = n;
            return 1;
        }
        if (n.type == AMD_NT_AMD_HSA_METADATA_V2 && elf_note_owner_is(&n, "AMD")) *saw_v2 = 1;
    }
    return rc;
}

static int amd_find_metadata(const elf_file *f, elf_note *meta, char *err, size_t errlen)
{
    elf_section s;
    uint32_t i, notes = 0;
    int saw_v2 = 0, rc;
    for (i = 1; i < f->shnum; i++) {
        if (elf_section_at(f, i, &s, err, errlen)) return -1;
        if (s.type != ELF_SHT_NOTE) continue;
        notes++;
        rc = amd_scan_notes(f, &s, meta, &saw_v2, err, errlen);
        if (rc) return rc < 0 ? -1 : 0;
    }
    if (saw_v2)
        elf_err(err, errlen, "no NT_AMDGPU_METADATA note: this is a code object v2 (YAML "
                "NT_AMD_HSA_METADATA note), which is not supported");
    else
        elf_err(err, errlen, "no NT_AMDGPU_METADATA note (owner AMDGPU, type %d) in %u SHT_NOTE "
                "section(s) of %u sections", ELF_NT_AMDGPU_METADATA, notes, f->shnum);
    return -1;
}

static int amd_open(amd_doc *d, const void *buf, size_t len, char *err, size_t errlen)
{
    elf_note meta = { 0 };
    memset(d, 0, sizeof *d);
    d->err = err;
    d->errlen = errlen;
    if (elf_open_machine(&d->f, buf, len, ELF_EM_AMDGPU, "AMDGPU", err, errlen)) return -1;
    if (amd_find_metadata(&d->f, &meta, err, errlen)) return -1;
    mp_init(&d->r, meta.desc, meta.descsz, (size_t)(meta.desc - d->f.buf), err, errlen);
    return 0;
}

/* Read a map key, which the AMDGPU metadata always writes as a string. */
static int amd_read_key(amd_doc *d, mp_value *key)
{
    if (mp_read(&d->r, key)) return -1;
    if (key->type != MP_STR)
        return mp_fail(&d->r, key->offset, "map key: expected a string, found %s", mp_type_name(key->type));
    return 0;
}

/* A resource count: a non-negative integer that fits an int. */
static int amd_read_count(amd_doc *d, const amd_kernel *k, int field, int *out)
{
    mp_value v;
    int64_t x;
    if (mp_read(&d->r, &v)) return -1;
    if (mp_to_int64(&v, &x) || x < 0 || x > INT_MAX)
        return mp_fail(&d->r, v.offset, "kernel #%u: %s: expected an int in 0..INT_MAX, found %s%s",
                       k->index, amd_fields[field].key, mp_type_name(v.type),
                       v.type == MP_INT || v.type == MP_UINT ? " out of range" : "");
    *out = (int)x;
    return 0;
}

static int amd_field_of(const mp_value *key)
{
    int i;
    for (i = 0; i < AMD_NFIELDS; i++)
        if (mp_str_eq(key, amd_fields[i].key)) return i;
    return -1;
}

/* Decode the next kernel map of amdhsa.kernels. */
static int amd_read_kernel(amd_doc *d, uint32_t index, amd_kernel *k)
{
    mp_value map, key, name;
    uint32_t i;
    int field;
    memset(k, 0, sizeof *k);
    k->index = index;
    if (mp_read(&d->r, &map)) return -1;
    if (map.type != MP_MAP)
        return mp_fail(&d->r, map.offset, "amdhsa.kernels[%u]: expected a map, found %s",
                       index, mp_type_name(map.type));
    for (i = 0; i < map.v.count; i++) {
        if (amd_read_key(d, &key)) return -1;
        if (mp_str_eq(&key, ".name")) {
            if (mp_read(&d->r, &name)) return -1;
            if (name.type != MP_STR)
                return mp_fail(&d->r, name.offset, "kernel #%u: .name: expected a string, found %s",
                               index, mp_type_name(name.type));
            k->name = name.v.bytes.p;
            k->name_len = name.v.bytes.len;
        } else if ((field = amd_field_of(&key)) >= 0) {
            if (amd_read_count(d, k, field, &k->val[field])) return -1;
            k->have[field] = 1;
        } else if (mp_skip(&d->r)) {
            return -1;
        }
    }
    if (!k->name)
        return mp_fail(&d->r, map.offset, "kernel #%u has no .name", index);
    return 0;
}

static int amd_walk_kernels(amd_doc *d, amd_kernel_cb cb, void *ctx)
{
    mp_value arr;
    amd_kernel k;
    uint32_t i;
    int rc;
    if (mp_read(&d->r, &arr)) return -1;
    if (arr.type != MP_ARRAY)
        return mp_fail(&d->r, arr.offset, "amdhsa.kernels: expected an array, found %s",
                       mp_type_name(arr.type));
    for (i = 0; i < arr.v.count; i++) {
        if (amd_read_kernel(d, i, &k)) return -1;
        if ((rc = cb(ctx, d, &k)) != 0) return rc;
    }
    return 0;
}

static int amd_read_target(amd_doc *d)
{
    mp_value v;
    if (mp_read(&d->r, &v)) return -1;
    if (v.type != MP_STR)
        return mp_fail(&d->r, v.offset, "amdhsa.target: expected a string, found %s", mp_type_name(v.type));
    d->target = v.v.bytes.p;
    d->target_len = v.v.bytes.len;
    return 0;
}

/* Walk the top-level map; cb sees every kernel (NULL: kernels are skipped). Returns 0 after
 * the whole map, 1 when cb stopped the walk, -1 on a fault. */
static int amd_walk(amd_doc *d, amd_kernel_cb cb, void *ctx)
{
    mp_value top, key;
    uint32_t i;
    int rc;
    if (mp_read(&d->r, &top)) return -1;
    if (top.type != MP_MAP)
        return mp_fail(&d->r, top.offset, "metadata: expected a map, found %s", mp_type_name(top.type));
    for (i = 0; i < top.v.count; i++) {
        if (amd_read_key(d, &key)) return -1;
        if (cb && mp_str_eq(&key, "amdhsa.kernels")) {
            if ((rc = amd_walk_kernels(d, cb, ctx)) != 0) return rc;
        } else if (mp_str_eq(&key, "amdhsa.target")) {
            if (amd_read_target(d)) return -1;
        } else if (mp_skip(&d->r)) {
            return -1;
        }
    }
    return 0;
}

/* ---- listing ---- */

typedef struct amd_list_ctx {
    elf_kernel_fn fn;
    void *ctx;
    int count;
} amd_list_ctx;

static int amd_list_cb(void *ctx, amd_doc *d, const amd_kernel *k)
{
    amd_list_ctx *l = ctx;
    (void)d;
    l->count++;
    return l->fn && l->fn(l->ctx, k->name, k->name_len) ? 1 : 0;
}

int elf_amdgpu_list_kernels(const void *buf, size_t len, elf_kernel_fn fn, void *ctx,
                            char *err, size_t errlen)
{
    amd_doc d;
    amd_list_ctx l = { fn, ctx, 0 };
    if (amd_open(&d, buf, len, err, errlen)) return -1;
    if (amd_walk(&d, amd_list_cb, &l) < 0) return -1;
    return l.count;
}

/* ---- resources ---- */

typedef struct amd_find_ctx {
    const char *want;           /* NULL: the first kernel */
    kt_resources *out;
    int found;
} amd_find_ctx;

static int amd_fill(amd_doc *d, const amd_kernel *k, kt_resources *out)
{
    int i;
    for (i = 0; i < AMD_NFIELDS; i++) {
        if (amd_fields[i].required && !k->have[i]) {
            elf_err(d->err, d->errlen, "kernel '");
            elf_err_append_name(d->err, d->errlen, k->name, k->name_len);
            elf_err_append(d->err, d->errlen, "': metadata has no %s", amd_fields[i].key);
            return -1;
        }
    }
    if (k->val[AMD_WAVE] != 32 && k->val[AMD_WAVE] != 64) {
        elf_err(d->err, d->errlen, "kernel '");
        elf_err_append_name(d->err, d->errlen, k->name, k->name_len);
        elf_err_append(d->err, d->errlen, "': .wavefront_size %d is neither 32 nor 64", k->val[AMD_WAVE]);
        return -1;
    }
    memset(out, 0, sizeof *out);
    out->vgpr = k->val[AMD_VGPR];
    out->sgpr = k->val[AMD_SGPR];
    out->agpr = k->val[AMD_AGPR];
    out->lds_bytes = k->val[AMD_LDS];
    out->scratch_bytes = k->val[AMD_SCRATCH];
    out->vgpr_spills = k->val[AMD_VGPR_SPILLS];
    out->sgpr_spills = k->val[AMD_SGPR_SPILLS];
    out->wave_size = k->val[AMD_WAVE];
    out->max_wg_size = k->val[AMD_MAX_WG];
    return 0;
}

static int amd_find_cb(void *ctx, amd_doc *d, const amd_kernel *k)
{
    amd_find_ctx *c = ctx;
    if (c->want && (strlen(c->want) != k->name_len || memcmp(c->want, k->name, k->name_len) != 0))
        return 0;
    c->found = 1;
    return amd_fill(d, k, c->out) ? -1 : 1;
}

int elf_amdgpu_read_resources(const void *buf, size_t len, const char *kernel_name,
                              kt_resources *out, char *err, size_t errlen)
{
    amd_doc d;
    amd_find_ctx c = { kernel_name, out, 0 };
    if (amd_open(&d, buf, len, err, errlen)) return -1;
    if (amd_walk(&d, amd_find_cb, &c) < 0) return -1;
    if (!c.found) {
        elf_err_kernel_not_found(buf, len, kernel_name, "code object", elf_amdgpu_list_kernels, err, errlen);
        return -1;
    }
    return 0;
}

/* ---- target ---- */

int elf_amdgpu_target(const void *buf, size_t len, char *target, size_t targetlen,
                      unsigned *mach, char *err, size_t errlen)
{
    amd_doc d;
    if (amd_open(&d, buf, len, err, errlen)) return -1;
    if (amd_walk(&d, NULL, NULL) < 0) return -1;
    if (!d.target) {
        elf_err(err, errlen, "metadata has no amdhsa.target");
        return -1;
    }
    if (target) {
        if ((size_t)d.target_len >= targetlen) {
            elf_err(err, errlen, "amdhsa.target of %u bytes does not fit a %zu-byte buffer",
                    d.target_len, targetlen);
            return -1;
        }
        memcpy(target, d.target, d.target_len);
        target[d.target_len] = 0;
    }
    if (mach) *mach = d.f.flags & 0xffu;
    return 0;
}
