/* test_msgpack.c: laws of the MessagePack reader (build/msgpack_read.c).
 *
 * A small encoder lives here, in the test only, so the laws can be stated as round trips:
 * what is encoded decodes to the same value, mp_skip consumes exactly one encoding, every
 * proper prefix of an encoding is a "truncated" fault, nesting past MP_MAX_DEPTH is refused,
 * and random value trees decode back to the text they were generated from. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kt_test.h"
#include "msgpack_read.h"

/* ---- test-only encoder ---- */

typedef struct enc {
    unsigned char *p;
    size_t n, cap;
} enc;

static void enc_byte(enc *e, unsigned c)
{
    if (e->n == e->cap) {
        e->cap = e->cap ? 2 * e->cap : 256;
        e->p = realloc(e->p, e->cap);
        if (!e->p) { perror("realloc"); exit(2); }
    }
    e->p[e->n++] = (unsigned char)c;
}

static void enc_be(enc *e, uint64_t x, int bytes)
{
    int i;
    for (i = bytes - 1; i >= 0; i--) enc_byte(e, (unsigned)(x >> (8 * i)) & 0xff);
}

static void enc_bytes(enc *e, const void *p, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) enc_byte(e, ((const unsigned char *)p)[i]);
}

static void enc_uint(enc *e, uint64_t u)
{
    if (u <= 0x7f) enc_byte(e, (unsigned)u);
    else if (u <= 0xff) { enc_byte(e, 0xcc); enc_be(e, u, 1); }
    else if (u <= 0xffff) { enc_byte(e, 0xcd); enc_be(e, u, 2); }
    else if (u <= 0xffffffffu) { enc_byte(e, 0xce); enc_be(e, u, 4); }
    else { enc_byte(e, 0xcf); enc_be(e, u, 8); }
}

static void enc_int(enc *e, int64_t i)
{
    uint64_t bits = (uint64_t)i;   /* two's complement image, the wire format */
    if (i >= 0) enc_uint(e, (uint64_t)i);
    else if (i >= -32) enc_byte(e, (unsigned)(bits & 0xff));
    else if (i >= -128) { enc_byte(e, 0xd0); enc_be(e, bits, 1); }
    else if (i >= -32768) { enc_byte(e, 0xd1); enc_be(e, bits, 2); }
    else if (i >= -2147483647 - 1) { enc_byte(e, 0xd2); enc_be(e, bits, 4); }
    else { enc_byte(e, 0xd3); enc_be(e, bits, 8); }
}

static void enc_sized(enc *e, unsigned fix, unsigned fixmax, unsigned b8, unsigned b16, unsigned b32, uint32_t n)
{
    if (fix && n <= fixmax) enc_byte(e, fix | n);
    else if (b8 && n <= 0xff) { enc_byte(e, b8); enc_be(e, n, 1); }
    else if (n <= 0xffff) { enc_byte(e, b16); enc_be(e, n, 2); }
    else { enc_byte(e, b32); enc_be(e, n, 4); }
}

static void enc_str(enc *e, const char *s, uint32_t n) { enc_sized(e, 0xa0, 31, 0xd9, 0xda, 0xdb, n); enc_bytes(e, s, n); }
static void enc_bin(enc *e, const void *s, uint32_t n) { enc_sized(e, 0, 0, 0xc4, 0xc5, 0xc6, n); enc_bytes(e, s, n); }
static void enc_array(enc *e, uint32_t n) { enc_sized(e, 0x90, 15, 0, 0xdc, 0xdd, n); }
static void enc_map(enc *e, uint32_t n) { enc_sized(e, 0x80, 15, 0, 0xde, 0xdf, n); }

static void enc_f64(enc *e, double d)
{
    uint64_t bits;
    memcpy(&bits, &d, 8);
    enc_byte(e, 0xcb);
    enc_be(e, bits, 8);
}

static void enc_f32(enc *e, float f)
{
    uint32_t bits;
    memcpy(&bits, &f, 4);
    enc_byte(e, 0xca);
    enc_be(e, bits, 4);
}

/* A reader over a heap copy of exactly n bytes, so an overread is a sanitizer error. */
typedef struct exact {
    unsigned char *p;
    mp_reader r;
    char err[256];
} exact;

static void exact_init(exact *x, const void *p, size_t n, size_t base)
{
    x->p = malloc(n ? n : 1);
    if (!x->p) { perror("malloc"); exit(2); }
    if (n) memcpy(x->p, p, n);
    mp_init(&x->r, x->p, n, base, x->err, sizeof x->err);
}

static void exact_free(exact *x) { free(x->p); }

/* ---- laws ---- */

static void law_uint_round_trip(void)
{
    static const uint64_t vals[] = {
        0, 1, 0x7f, 0x80, 0xff, 0x100, 0xffff, 0x10000, 0xffffffffu, 0x100000000ull,
        0x7fffffffffffffffull, 0x8000000000000000ull, 0xffffffffffffffffull
    };
    size_t i;
    for (i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        enc e = { 0 };
        exact x;
        mp_value v;
        int64_t s;
        enc_uint(&e, vals[i]);
        exact_init(&x, e.p, e.n, 0);
        KT_CHECK_INT(mp_read(&x.r, &v), 0);
        KT_CHECK_INT(v.type, MP_UINT);
        KT_CHECK(v.v.u == vals[i]);
        KT_CHECK_INT(x.r.pos, e.n);
        KT_CHECK_INT(mp_to_int64(&v, &s), vals[i] <= (uint64_t)INT64_MAX ? 0 : -1);
        exact_free(&x);
        free(e.p);
    }
}

static void law_int_round_trip(void)
{
    static const int64_t vals[] = {
        -1, -31, -32, -33, -127, -128, -129, -32767, -32768, -32769,
        -2147483647, -2147483647 - 1, (int64_t)-2147483647 - 2, INT64_MIN + 1, INT64_MIN
    };
    size_t i;
    for (i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        enc e = { 0 };
        exact x;
        mp_value v;
        int64_t s = 0;
        enc_int(&e, vals[i]);
        exact_init(&x, e.p, e.n, 0);
        KT_CHECK_INT(mp_read(&x.r, &v), 0);
        KT_CHECK_INT(v.type, MP_INT);
        KT_CHECK(v.v.i == vals[i]);
        KT_CHECK_INT(mp_to_int64(&v, &s), 0);
        KT_CHECK(s == vals[i]);
        KT_CHECK_INT(x.r.pos, e.n);
        exact_free(&x);
        free(e.p);
    }
}

/* Every width form of the value 5 (non-minimal encodings are legal) reads as 5. */
static void law_every_int_width(void)
{
    static const unsigned codes[] = { 0xcc, 0xcd, 0xce, 0xcf, 0xd0, 0xd1, 0xd2, 0xd3 };
    static const int widths[] = { 1, 2, 4, 8, 1, 2, 4, 8 };
    int i;
    for (i = 0; i < 8; i++) {
        enc e = { 0 };
        exact x;
        mp_value v;
        int64_t s = 0;
        enc_byte(&e, codes[i]);
        enc_be(&e, 5, widths[i]);
        exact_init(&x, e.p, e.n, 0);
        KT_CHECK_INT(mp_read(&x.r, &v), 0);
        KT_CHECK_INT(v.type, i < 4 ? MP_UINT : MP_INT);
        KT_CHECK_INT(mp_to_int64(&v, &s), 0);
        KT_CHECK_INT(s, 5);
        exact_free(&x);
        free(e.p);
    }
}

static void law_str_bin_round_trip(void)
{
    static const uint32_t lens[] = { 0, 1, 31, 32, 255, 256, 65535, 65536 };
    char *buf = malloc(65536);
    size_t i;
    int kind;
    if (!buf) exit(2);
    for (i = 0; i < 65536; i++) buf[i] = (char)('a' + i % 26);
    for (kind = 0; kind < 2; kind++) {
        for (i = 0; i < sizeof lens / sizeof lens[0]; i++) {
            enc e = { 0 };
            exact x;
            mp_value v;
            if (kind) enc_bin(&e, buf, lens[i]); else enc_str(&e, buf, lens[i]);
            exact_init(&x, e.p, e.n, 0);
            KT_CHECK_INT(mp_read(&x.r, &v), 0);
            KT_CHECK_INT(v.type, kind ? MP_BIN : MP_STR);
            KT_CHECK_INT(v.v.bytes.len, lens[i]);
            KT_CHECK(memcmp(v.v.bytes.p, buf, lens[i]) == 0);
            KT_CHECK_INT(x.r.pos, e.n);
            exact_free(&x);
            free(e.p);
        }
    }
    free(buf);
}

static void law_scalars(void)
{
    enc e = { 0 };
    exact x;
    mp_value v;
    enc_byte(&e, 0xc0);
    enc_byte(&e, 0xc2);
    enc_byte(&e, 0xc3);
    enc_f32(&e, 1.5f);
    enc_f64(&e, -0.25);
    enc_f64(&e, NAN);
    enc_byte(&e, 0xd4); enc_byte(&e, 0xfb); enc_byte(&e, 0x42);             /* fixext1, type -5 */
    enc_byte(&e, 0xd8); enc_byte(&e, 0x07); enc_bytes(&e, "0123456789abcdef", 16);
    enc_byte(&e, 0xc7); enc_byte(&e, 3); enc_byte(&e, 0x01); enc_bytes(&e, "xyz", 3);
    enc_byte(&e, 0xd5); enc_byte(&e, 2); enc_bytes(&e, "ab", 2);                    /* fixext2 */
    enc_byte(&e, 0xd6); enc_byte(&e, 4); enc_bytes(&e, "abcd", 4);                  /* fixext4 */
    enc_byte(&e, 0xd7); enc_byte(&e, 8); enc_bytes(&e, "abcdefgh", 8);              /* fixext8 */
    enc_byte(&e, 0xc8); enc_be(&e, 2, 2); enc_byte(&e, 0x80); enc_bytes(&e, "pq", 2); /* ext16, type -128 */
    enc_byte(&e, 0xc9); enc_be(&e, 0, 4); enc_byte(&e, 0x7f);                       /* ext32, empty */
    exact_init(&x, e.p, e.n, 0);
    KT_CHECK_INT(mp_read(&x.r, &v), 0); KT_CHECK_INT(v.type, MP_NIL);
    KT_CHECK_INT(mp_read(&x.r, &v), 0); KT_CHECK_INT(v.type, MP_BOOL); KT_CHECK_INT(v.v.boolean, 0);
    KT_CHECK_INT(mp_read(&x.r, &v), 0); KT_CHECK_INT(v.type, MP_BOOL); KT_CHECK_INT(v.v.boolean, 1);
    KT_CHECK_INT(mp_read(&x.r, &v), 0); KT_CHECK_INT(v.type, MP_FLOAT); KT_CHECK(v.v.f == 1.5);
    KT_CHECK_INT(mp_read(&x.r, &v), 0); KT_CHECK_INT(v.type, MP_FLOAT); KT_CHECK(v.v.f == -0.25);
    KT_CHECK_INT(mp_read(&x.r, &v), 0); KT_CHECK(isnan(v.v.f));
    KT_CHECK_INT(mp_read(&x.r, &v), 0); KT_CHECK_INT(v.type, MP_EXT);
    KT_CHECK_INT(v.v.bytes.ext_type, -5); KT_CHECK_INT(v.v.bytes.len, 1); KT_CHECK_INT(v.v.bytes.p[0], 0x42);
    KT_CHECK_INT(mp_read(&x.r, &v), 0); KT_CHECK_INT(v.v.bytes.ext_type, 7); KT_CHECK_INT(v.v.bytes.len, 16);
    KT_CHECK_INT(mp_read(&x.r, &v), 0); KT_CHECK_INT(v.v.bytes.ext_type, 1); KT_CHECK_INT(v.v.bytes.len, 3);
    KT_CHECK(memcmp(v.v.bytes.p, "xyz", 3) == 0);
    KT_CHECK_INT(mp_read(&x.r, &v), 0); KT_CHECK_INT(v.v.bytes.ext_type, 2); KT_CHECK_INT(v.v.bytes.len, 2);
    KT_CHECK_INT(mp_read(&x.r, &v), 0); KT_CHECK_INT(v.v.bytes.ext_type, 4); KT_CHECK_INT(v.v.bytes.len, 4);
    KT_CHECK_INT(mp_read(&x.r, &v), 0); KT_CHECK_INT(v.v.bytes.ext_type, 8); KT_CHECK_INT(v.v.bytes.len, 8);
    KT_CHECK(memcmp(v.v.bytes.p, "abcdefgh", 8) == 0);
    KT_CHECK_INT(mp_read(&x.r, &v), 0); KT_CHECK_INT(v.v.bytes.ext_type, -128); KT_CHECK_INT(v.v.bytes.len, 2);
    KT_CHECK_INT(mp_read(&x.r, &v), 0); KT_CHECK_INT(v.type, MP_EXT);
    KT_CHECK_INT(v.v.bytes.ext_type, 127); KT_CHECK_INT(v.v.bytes.len, 0);
    KT_CHECK_INT(x.r.pos, e.n);
    /* The end of the buffer is a fault, not a value. */
    KT_CHECK_INT(mp_read(&x.r, &v), -1);
    KT_CHECK_CONTAINS(x.err, "found the end");
    exact_free(&x);
    free(e.p);
}

static void law_str_eq_and_to_int(void)
{
    mp_value v;
    int64_t s;
    memset(&v, 0, sizeof v);
    v.type = MP_STR;
    v.v.bytes.p = "abc";
    v.v.bytes.len = 3;
    KT_CHECK(mp_str_eq(&v, "abc"));
    KT_CHECK(!mp_str_eq(&v, "ab"));
    KT_CHECK(!mp_str_eq(&v, "abcd"));
    v.type = MP_BIN;
    KT_CHECK(!mp_str_eq(&v, "abc"));
    KT_CHECK_INT(mp_to_int64(&v, &s), -1);
    KT_CHECK_CONTAINS(mp_type_name(MP_ARRAY), "array");
}

/* Random value trees: the generator writes the encoding and a canonical text at once; a
 * decoder built on mp_read must reproduce the text, and mp_skip must consume the encoding. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

typedef struct text {
    char *p;
    size_t n, cap;
} text;

static void text_add(text *t, const char *s)
{
    size_t k = strlen(s);
    if (t->n + k + 1 > t->cap) {
        t->cap = 2 * (t->n + k + 1);
        t->p = realloc(t->p, t->cap);
        if (!t->p) exit(2);
    }
    memcpy(t->p + t->n, s, k + 1);
    t->n += k;
}

static void gen_value(enc *e, text *t, int depth)
{
    char tmp[64];
    unsigned kind = (unsigned)(rng() % (depth < 6 ? 7 : 5));
    uint32_t i, n;
    switch (kind) {
    case 0: enc_byte(e, 0xc0); text_add(t, "nil"); break;
    case 1: { int b = (int)(rng() & 1); enc_byte(e, b ? 0xc3 : 0xc2); text_add(t, b ? "true" : "false"); } break;
    case 2: {
        unsigned shift = (unsigned)(rng() % 64);
        uint64_t u = rng() >> shift;
        enc_uint(e, u);
        snprintf(tmp, sizeof tmp, "u%llu", (unsigned long long)u);
        text_add(t, tmp);
    } break;
    case 3: {
        unsigned shift = 1 + (unsigned)(rng() % 63);
        int64_t s = -(int64_t)(rng() >> shift) - 1;
        enc_int(e, s);
        snprintf(tmp, sizeof tmp, "i%lld", (long long)s);
        text_add(t, tmp);
    } break;
    case 4: {
        char s[40];
        n = (uint32_t)(rng() % 40);
        for (i = 0; i < n; i++) s[i] = (char)('a' + rng() % 26);
        enc_str(e, s, n);
        snprintf(tmp, sizeof tmp, "s%u:%.*s", n, (int)n, s);
        text_add(t, tmp);
    } break;
    case 5:
        n = (uint32_t)(rng() % 8 ? 5 : 40);                 /* mostly small, sometimes array16 */
        n = (uint32_t)(rng() % n);
        enc_array(e, n);
        text_add(t, "[");
        for (i = 0; i < n; i++) { gen_value(e, t, depth + 1); text_add(t, ","); }
        text_add(t, "]");
        break;
    default:
        n = (uint32_t)(rng() % 5);
        enc_map(e, n);
        text_add(t, "{");
        for (i = 0; i < n; i++) {
            gen_value(e, t, depth + 1); text_add(t, ":");
            gen_value(e, t, depth + 1); text_add(t, ",");
        }
        text_add(t, "}");
        break;
    }
}

static int dec_value(mp_reader *r, text *t)
{
    char tmp[64];
    mp_value v;
    uint64_t i, n;
    if (mp_read(r, &v)) return -1;
    switch (v.type) {
    case MP_NIL: text_add(t, "nil"); return 0;
    case MP_BOOL: text_add(t, v.v.boolean ? "true" : "false"); return 0;
    case MP_UINT: snprintf(tmp, sizeof tmp, "u%llu", (unsigned long long)v.v.u); text_add(t, tmp); return 0;
    case MP_INT: snprintf(tmp, sizeof tmp, "i%lld", (long long)v.v.i); text_add(t, tmp); return 0;
    case MP_STR:
        snprintf(tmp, sizeof tmp, "s%u:%.*s", v.v.bytes.len, (int)v.v.bytes.len, v.v.bytes.p);
        text_add(t, tmp);
        return 0;
    case MP_ARRAY:
    case MP_MAP:
        n = v.v.count;
        text_add(t, v.type == MP_ARRAY ? "[" : "{");
        for (i = 0; i < n; i++) {
            if (dec_value(r, t)) return -1;
            if (v.type == MP_MAP) { text_add(t, ":"); if (dec_value(r, t)) return -1; }
            text_add(t, ",");
        }
        text_add(t, v.type == MP_ARRAY ? "]" : "}");
        return 0;
    default:
        return -1;
    }
}

static void law_random_trees(void)
{
    int round;
    for (round = 0; round < 300; round++) {
        enc e = { 0 };
        text want = { 0 }, got = { 0 };
        exact x;
        size_t k;
        gen_value(&e, &want, 0);
        text_add(&got, "");
        exact_init(&x, e.p, e.n, 0);
        KT_CHECK_INT(dec_value(&x.r, &got), 0);
        KT_CHECK(strcmp(want.p, got.p) == 0);
        KT_CHECK_INT(x.r.pos, e.n);
        exact_free(&x);
        exact_init(&x, e.p, e.n, 0);
        KT_CHECK_INT(mp_skip(&x.r), 0);
        KT_CHECK_INT(x.r.pos, e.n);
        exact_free(&x);
        /* Prefix law: no proper prefix of one encoding is a complete value. */
        for (k = 0; k < e.n; k++) {
            exact_init(&x, e.p, k, 0);
            KT_CHECK_INT(mp_skip(&x.r), -1);
            KT_CHECK_CONTAINS(x.err, "truncated");
            exact_free(&x);
        }
        free(e.p);
        free(want.p);
        free(got.p);
    }
}

/* Two values back to back: skipping the first leaves the cursor on the second. */
static void law_skip_then_read(void)
{
    enc e = { 0 };
    exact x;
    mp_value v;
    enc_map(&e, 2);
    enc_str(&e, "a", 1); enc_array(&e, 3); enc_uint(&e, 1); enc_int(&e, -300); enc_str(&e, "zz", 2);
    enc_str(&e, "b", 1); enc_map(&e, 0);
    enc_uint(&e, 4242);
    exact_init(&x, e.p, e.n, 0);
    KT_CHECK_INT(mp_skip(&x.r), 0);
    KT_CHECK_INT(mp_read(&x.r, &v), 0);
    KT_CHECK_INT(v.type, MP_UINT);
    KT_CHECK_INT(v.v.u, 4242);
    exact_free(&x);
    free(e.p);
}

static void law_depth_bound(void)
{
    int depth;
    for (depth = MP_MAX_DEPTH; depth <= MP_MAX_DEPTH + 1; depth++) {
        enc e = { 0 };
        exact x;
        int i;
        for (i = 0; i < depth; i++) enc_array(&e, 1);
        enc_byte(&e, 0xc0);
        exact_init(&x, e.p, e.n, 0);
        if (depth == MP_MAX_DEPTH) {
            KT_CHECK_INT(mp_skip(&x.r), 0);
        } else {
            KT_CHECK_INT(mp_skip(&x.r), -1);
            KT_CHECK_CONTAINS(x.err, "nested deeper than 32");
        }
        exact_free(&x);
        free(e.p);
    }
    {   /* A million-deep nest is refused without recursing a million times. */
        size_t n = 1000000, i;
        unsigned char *p = malloc(n);
        exact x;
        if (!p) exit(2);
        for (i = 0; i < n; i++) p[i] = 0x91;
        exact_init(&x, p, n, 0);
        KT_CHECK_INT(mp_skip(&x.r), -1);
        KT_CHECK_CONTAINS(x.err, "nested deeper");
        exact_free(&x);
        free(p);
    }
}

static void law_faults(void)
{
    exact x;
    mp_value v;
    static const unsigned char c1[] = { 0xc1 };
    static const unsigned char huge_array[] = { 0xdd, 0xff, 0xff, 0xff, 0xff, 0xc0, 0xc0 };
    static const unsigned char huge_map[] = { 0xdf, 0x80, 0x00, 0x00, 0x00, 0xc0 };
    static const unsigned char huge_str[] = { 0xdb, 0xff, 0xff, 0xff, 0xff, 'a' };
    static const unsigned char short_u32[] = { 0xce, 0x01, 0x02 };
    static const unsigned char ext_no_type[] = { 0xc7, 0x00 };

    exact_init(&x, c1, sizeof c1, 0x100);
    KT_CHECK_INT(mp_read(&x.r, &v), -1);
    KT_CHECK_CONTAINS(x.err, "invalid type byte 0xc1");
    KT_CHECK_CONTAINS(x.err, "offset 0x100");   /* base is added to positions */
    exact_free(&x);

    exact_init(&x, huge_array, sizeof huge_array, 0);
    KT_CHECK_INT(mp_skip(&x.r), -1);
    KT_CHECK_CONTAINS(x.err, "array of 4294967295 entries cannot fit");
    exact_free(&x);

    exact_init(&x, huge_map, sizeof huge_map, 0);
    KT_CHECK_INT(mp_skip(&x.r), -1);
    KT_CHECK_CONTAINS(x.err, "map of 2147483648 entries cannot fit");
    exact_free(&x);

    exact_init(&x, huge_str, sizeof huge_str, 0x10);
    KT_CHECK_INT(mp_read(&x.r, &v), -1);
    KT_CHECK_CONTAINS(x.err, "truncated: value needs 4294967295 more bytes at offset 0x15");
    exact_free(&x);

    exact_init(&x, short_u32, sizeof short_u32, 0);
    KT_CHECK_INT(mp_read(&x.r, &v), -1);
    KT_CHECK_CONTAINS(x.err, "truncated");
    exact_free(&x);

    exact_init(&x, ext_no_type, sizeof ext_no_type, 0);
    KT_CHECK_INT(mp_read(&x.r, &v), -1);
    KT_CHECK_CONTAINS(x.err, "truncated");
    exact_free(&x);

    /* First fault wins: later calls fail without rewriting the message. */
    exact_init(&x, c1, sizeof c1, 0);
    KT_CHECK_INT(mp_read(&x.r, &v), -1);
    KT_CHECK_INT(mp_fail(&x.r, 0, "a later fault"), -1);
    KT_CHECK_INT(mp_read(&x.r, &v), -1);
    KT_CHECK_CONTAINS(x.err, "invalid type byte");
    exact_free(&x);

    /* A NULL buffer is an empty one; a NULL err is allowed. */
    {
        mp_reader r;
        mp_init(&r, NULL, 5, 0, NULL, 0);
        KT_CHECK_INT(mp_read(&r, &v), -1);
    }
}

int main(void)
{
    law_uint_round_trip();
    law_int_round_trip();
    law_every_int_width();
    law_str_bin_round_trip();
    law_scalars();
    law_str_eq_and_to_int();
    law_random_trees();
    law_skip_then_read();
    law_depth_bound();
    law_faults();
    KT_TEST_END();
}
