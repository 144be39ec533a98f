/* recipe.c: the recipe evaluator. Recipes run in a sandbox (base, math, string, table; no io, os
 * or require): a recipe describes a space, it does not touch the machine. */
#include <ctype.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>
#include "recipe.h"

#define GEN_MAX_AXES 16
#define GEN_MAX_VALUES 64
#define GEN_MAX_PRODUCT 1000000

typedef struct gen_axis {
    char name[32];
    int nvalues;
    int is_string[GEN_MAX_VALUES];
    long long num[GEN_MAX_VALUES];
    char str[GEN_MAX_VALUES][32];
} gen_axis;

/* "family" is accepted and ignored: the recipe's folder under templates/ is its family */
static const char *const gen_known_fields[] = {
    "family", "template", "kernel", "ops", "axes", "threads", "lds_bytes", "constraint", "targets", "lds_at_launch", "law", "companions", NULL,
};

static void gen_open_sandbox(lua_State *L)
{
    static const luaL_Reg libs[] = {
        {"", luaopen_base}, {LUA_MATHLIBNAME, luaopen_math},
        {LUA_STRLIBNAME, luaopen_string}, {LUA_TABLIBNAME, luaopen_table}, {NULL, NULL},
    };
    for (const luaL_Reg *lib = libs; lib->func; lib++) {
        lua_pushcfunction(L, lib->func);
        lua_pushstring(L, lib->name);
        lua_call(L, 1, 0);
    }
    /* base exposes file loaders; a recipe has no business reading files */
    static const char *const unsafe[] = {"dofile", "loadfile", "load", "loadstring", "require", NULL};
    for (int i = 0; unsafe[i]; i++) { lua_pushnil(L); lua_setglobal(L, unsafe[i]); }
}

/* __index of a parameter or target table: a misspelt name is an error at the recipe's line. */
static int gen_strict_index(lua_State *L)
{
    const char *what = lua_tostring(L, lua_upvalueindex(1));
    return luaL_error(L, "unknown %s '%s'", what, luaL_optstring(L, 2, "?"));
}

static int gen_readonly_newindex(lua_State *L)
{
    const char *what = lua_tostring(L, lua_upvalueindex(1));
    return luaL_error(L, "%s table is read-only (assigning '%s')", what, luaL_optstring(L, 2, "?"));
}

/* Leaves a metatable on the stack that makes a table strict about reads and read-only. */
static void gen_push_strict_meta(lua_State *L, const char *what)
{
    lua_newtable(L);
    lua_pushstring(L, what);
    lua_pushcclosure(L, gen_strict_index, 1);
    lua_setfield(L, -2, "__index");
    lua_pushstring(L, what);
    lua_pushcclosure(L, gen_readonly_newindex, 1);
    lua_setfield(L, -2, "__newindex");
}

/* t.reg_cap(threads, blocks): the registers a lane may hold when `blocks` blocks of `threads`
 * must be resident on one compute unit (the law's: an SM, an RDNA CU of two SIMDs, a CDNA CU of
 * four), never above the lane's maximum; 0 where that many waves do not fit the unit's slots. What
 * a recipe's occupancy axis needs to leave out a bound that cannot hold or changes nothing. */
static lua_Integer gen_cap(const kt_target *t, lua_Integer threads, lua_Integer blocks)
{
    const lua_Integer waves = blocks * (threads / t->wave_size);
    lua_Integer cap;
    if (t->vendor == KT_VENDOR_NVIDIA) {
        /* registers per SM over the block's threads, in the 8-register steps ptxas allocates */
        cap = waves > t->max_waves_per_simd ? 0 : t->regs_per_simd / (blocks * threads) / 8 * 8;
    } else {
        const lua_Integer simds = strncmp(t->mma, "mfma", 4) == 0 ? t->simds_per_pool : t->simds_per_pool / 2;
        const lua_Integer per_simd = (waves + simds - 1) / simds;
        cap = per_simd > t->max_waves_per_simd ? 0 : t->regs_per_simd / per_simd / t->reg_granule * t->reg_granule;
    }
    return cap > t->max_regs_per_thread ? t->max_regs_per_thread : cap;
}

static int gen_reg_cap(lua_State *L)
{
    const kt_target *t = lua_touserdata(L, lua_upvalueindex(1));
    const lua_Integer threads = luaL_checkinteger(L, 1), blocks = luaL_checkinteger(L, 2);
    if (threads <= 0 || blocks <= 0 || threads % t->wave_size != 0)
        return luaL_error(L, "reg_cap: threads and blocks must be positive, threads whole waves");
    lua_pushinteger(L, gen_cap(t, threads, blocks));
    return 1;
}

/* t.occupancy_fits(threads, blocks, lds, regs): whether a recipe's occupancy axis should offer
 * `blocks` resident blocks a unit (0: no bound, always) for a variant of `threads` whose LDS is
 * `lds` bytes and whose register estimate is `regs`: true, or false and the reason. Offered on
 * NVIDIA where the bound fits the unit's wave slots and LDS, binds (its cap under the estimate)
 * and is not far under it (under 0.8 of it: a sure spill). */
static int gen_occupancy_fits(lua_State *L)
{
    const kt_target *t = lua_touserdata(L, lua_upvalueindex(1));
    const lua_Integer threads = luaL_checkinteger(L, 1), blocks = luaL_checkinteger(L, 2);
    const lua_Integer lds = luaL_checkinteger(L, 3);
    const lua_Number regs = luaL_checknumber(L, 4);
    const char *why = NULL;
    if (blocks > 0) {
        if (threads <= 0 || threads % t->wave_size != 0)
            return luaL_error(L, "occupancy_fits: threads must be positive, whole waves");
        const lua_Number cap = (lua_Number)gen_cap(t, threads, blocks);
        /* ptxas spends registers past an occupancy step (measured on the H200); LLVM's AMDGPU
         * allocator already aims at an occupancy, and bounds under it spilled (gfx1100: 9 of the
         * 24 decode variants CI samples) */
        if (t->vendor != KT_VENDOR_NVIDIA) why = "OB: NVIDIA only (AMD's allocator bounds registers itself)";
        else if (cap == 0 || blocks * lds > t->lds_per_pool) why = "OB: that many blocks do not fit a unit";
        else if (cap >= regs) why = "OB: the register estimate fits that many blocks unbounded";
        else if (cap < 0.8 * regs) why = "OB: a register cap far under the estimate (a spill)";
    }
    lua_pushboolean(L, why == NULL);
    if (!why) return 1;
    lua_pushstring(L, why);
    return 2;
}

static void gen_push_target(lua_State *L, const kt_target *t)
{
    lua_newtable(L);
    lua_pushstring(L, t->name); lua_setfield(L, -2, "name");
    lua_pushstring(L, t->vendor == KT_VENDOR_AMD ? "amd" : "nvidia"); lua_setfield(L, -2, "vendor");
    lua_pushstring(L, t->mma); lua_setfield(L, -2, "mma");
    lua_pushinteger(L, t->wave_size); lua_setfield(L, -2, "wave_size");
    lua_pushinteger(L, t->lds_per_workgroup); lua_setfield(L, -2, "lds_per_workgroup");
    lua_pushinteger(L, kt_target_lds_at_launch_max(t)); lua_setfield(L, -2, "lds_at_launch_max");
    lua_pushinteger(L, t->regs_per_simd); lua_setfield(L, -2, "regs_per_simd");
    lua_pushinteger(L, t->max_regs_per_thread); lua_setfield(L, -2, "max_regs_per_thread");
    lua_pushinteger(L, t->max_waves_per_simd); lua_setfield(L, -2, "max_waves_per_simd");
    lua_pushinteger(L, t->lds_per_pool); lua_setfield(L, -2, "lds_per_pool");
    lua_pushlightuserdata(L, (void *)t);
    lua_pushcclosure(L, gen_reg_cap, 1);
    lua_setfield(L, -2, "reg_cap");
    lua_pushlightuserdata(L, (void *)t);
    lua_pushcclosure(L, gen_occupancy_fits, 1);
    lua_setfield(L, -2, "occupancy_fits");
    gen_push_strict_meta(L, "target field");
    lua_setmetatable(L, -2);
}

static int gen_fail(char *err, size_t errlen, const char *fmt, const char *a, const char *b)
{
    snprintf(err, errlen, fmt, a, b);
    return 1;
}

/* Copy a string field of the recipe table (at index -1) into dst; missing or not a string is an error. */
static int gen_string_field(lua_State *L, const char *path, const char *field, char *dst, size_t n,
                            char *err, size_t errlen)
{
    lua_getfield(L, -1, field);
    if (lua_type(L, -1) != LUA_TSTRING) {
        lua_pop(L, 1);
        return gen_fail(err, errlen, "%s: recipe field '%s' must be a string", path, field);
    }
    size_t len;
    const char *s = lua_tolstring(L, -1, &len);
    if (len == 0 || len >= n) {
        lua_pop(L, 1);
        return gen_fail(err, errlen, "%s: recipe field '%s' is empty or too long", path, field);
    }
    memcpy(dst, s, len + 1);
    lua_pop(L, 1);
    return 0;
}

static int gen_is_identifier(const char *s)
{
    if (!*s || !(isalpha((unsigned char)*s) || *s == '_')) return 0;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_')) return 0;
    return 1;
}

static int gen_read_axes(lua_State *L, const char *path, gen_axis *axes, int *naxes, char *err, size_t errlen)
{
    char msg[256];
    lua_getfield(L, -1, "axes");
    if (!lua_istable(L, -1)) { lua_pop(L, 1); return gen_fail(err, errlen, "%s: recipe field 'axes' must be a list%s", path, ""); }
    int n = (int)lua_objlen(L, -1);
    if (n == 0 || n > GEN_MAX_AXES) {
        lua_pop(L, 1);
        snprintf(msg, sizeof msg, "has %d entries (1..%d allowed)", n, GEN_MAX_AXES);
        return gen_fail(err, errlen, "%s: recipe 'axes' %s", path, msg);
    }
    for (int i = 0; i < n; i++) {
        gen_axis *ax = &axes[i];
        memset(ax, 0, sizeof *ax);
        lua_rawgeti(L, -1, i + 1);
        lua_rawgeti(L, -1, 1);
        lua_rawgeti(L, -2, 2);
        const char *name = lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : NULL;
        if (!name || !gen_is_identifier(name) || strlen(name) >= sizeof ax->name || !lua_istable(L, -1)) {
            lua_pop(L, 4);
            snprintf(msg, sizeof msg, "axes[%d] must be { \"name\", { values... } } with an identifier name", i + 1);
            return gen_fail(err, errlen, "%s: %s", path, msg);
        }
        strcpy(ax->name, name);
        for (int j = 0; j < i; j++)
            if (strcmp(axes[j].name, name) == 0) {
                lua_pop(L, 4);
                return gen_fail(err, errlen, "%s: axis '%s' is declared twice", path, name);
            }
        ax->nvalues = (int)lua_objlen(L, -1);
        if (ax->nvalues == 0 || ax->nvalues > GEN_MAX_VALUES) {
            lua_pop(L, 4);
            return gen_fail(err, errlen, "%s: axis '%s' needs 1..64 values", path, name);
        }
        for (int v = 0; v < ax->nvalues; v++) {
            lua_rawgeti(L, -1, v + 1);
            if (lua_type(L, -1) == LUA_TNUMBER) {
                lua_Number x = lua_tonumber(L, -1);
                if (x != (lua_Number)(long long)x) {
                    lua_pop(L, 5);
                    return gen_fail(err, errlen, "%s: axis '%s' has a non-integer value", path, name);
                }
                ax->num[v] = (long long)x;
            } else if (lua_type(L, -1) == LUA_TSTRING && gen_is_identifier(lua_tostring(L, -1)) &&
                       strlen(lua_tostring(L, -1)) < sizeof ax->str[v]) {
                ax->is_string[v] = 1;
                strcpy(ax->str[v], lua_tostring(L, -1));
            } else {
                lua_pop(L, 5);
                return gen_fail(err, errlen, "%s: axis '%s' values must be integers or identifier strings", path, name);
            }
            lua_pop(L, 1);
        }
        lua_pop(L, 3);
    }
    lua_pop(L, 1);
    *naxes = n;
    return 0;
}

static void gen_push_params(lua_State *L, const gen_axis *axes, int naxes, const int *idx)
{
    lua_newtable(L);
    for (int a = 0; a < naxes; a++) {
        if (axes[a].is_string[idx[a]]) lua_pushstring(L, axes[a].str[idx[a]]);
        else lua_pushnumber(L, (lua_Number)axes[a].num[idx[a]]);
        lua_setfield(L, -2, axes[a].name);
    }
    gen_push_strict_meta(L, "axis");
    lua_setmetatable(L, -2);
}

/* Call recipe function `field` (at recipe index ri) with (p, t); leaves nresults on the stack. */
static int gen_call(lua_State *L, int ri, const char *field, int pi, int ti, int nresults, char *err, size_t errlen)
{
    lua_getfield(L, ri, field);
    lua_pushvalue(L, pi);
    lua_pushvalue(L, ti);
    if (lua_pcall(L, 2, nresults, 0) != 0) {
        snprintf(err, errlen, "%s", lua_tostring(L, -1) ? lua_tostring(L, -1) : "(error object is not a string)");
        lua_pop(L, 1);
        return 1;
    }
    return 0;
}

static void gen_count_reason(gen_space *s, const char *reason)
{
    for (int i = 0; i < s->nrejected; i++)
        if (strcmp(s->rejected[i].reason, reason) == 0) { s->rejected[i].count++; return; }
    gen_reason_count *r = realloc(s->rejected, (size_t)(s->nrejected + 1) * sizeof *r);
    if (!r) return;
    s->rejected = r;
    snprintf(r[s->nrejected].reason, sizeof r[s->nrejected].reason, "%s", reason);
    r[s->nrejected].count = 1;
    s->nrejected++;
}

/* Append to buf (n bytes, *off used). A piece that does not fit is refused whole: buf keeps what it
 * had, NUL-terminated, and the caller refuses the variant rather than store a cut-off name. */
static int gen_append(char *buf, size_t n, size_t *off, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(buf + *off, n - *off, fmt, ap);
    va_end(ap);
    if (k < 0 || (size_t)k >= n - *off) { buf[*off] = 0; return 1; }
    *off += (size_t)k;
    return 0;
}

/* Name, params and source of one variant. Axis names and values are bounded (31 characters each,
 * 16 axes) but their sum is not bounded by the fixed fields: a variant that does not fit is an
 * error naming the recipe and the variant. */
static int gen_emit_variant(gen_space *s, const kt_target *t, const gen_axis *axes, int naxes,
                            const int *idx, gen_variant *v, char *err, size_t errlen)
{
    char values[GEN_MAX_AXES][32];
    size_t off = 0, po = 0, dofs = 0;
    int over = gen_append(v->name, sizeof v->name, &off, "%s", s->kernel);
    for (int a = 0; a < naxes; a++) {
        const gen_axis *ax = &axes[a];
        char lower[32];
        for (int i = 0; i < 32; i++) lower[i] = (char)tolower((unsigned char)ax->name[i]);
        if (ax->is_string[idx[a]]) snprintf(values[a], sizeof values[a], "%s", ax->str[idx[a]]);
        else snprintf(values[a], sizeof values[a], "%lld", ax->num[idx[a]]);
        if (!over) over = ax->is_string[idx[a]] ? gen_append(v->name, sizeof v->name, &off, "_%s", values[a])
                                                : gen_append(v->name, sizeof v->name, &off, "_%s%s", lower, values[a]);
    }
    if (over) {
        snprintf(err, errlen, "%s: variant %s...: kernel name longer than %zu characters (shorten the prefix, axis names or values)",
                 s->recipe_path, v->name, sizeof v->name - 1);
        return 1;
    }
    char defines[1024];
    defines[0] = 0;
    over = gen_append(v->params_json, sizeof v->params_json, &po, "{");
    for (int a = 0; a < naxes && !over; a++) {
        const gen_axis *ax = &axes[a];
        char upper[32];
        for (int i = 0; i < 32; i++) upper[i] = (char)toupper((unsigned char)ax->name[i]);
        over = ax->is_string[idx[a]]
                   ? gen_append(v->params_json, sizeof v->params_json, &po, "%s\"%s\":\"%s\"", a ? "," : "", ax->name, values[a])
                   : gen_append(v->params_json, sizeof v->params_json, &po, "%s\"%s\":%s", a ? "," : "", ax->name, values[a]);
        /* within the limits the defines fit whenever the name does; checked all the same */
        if (!over && gen_append(defines, sizeof defines, &dofs, "#define KT_%s %s\n", upper, values[a])) {
            snprintf(err, errlen, "%s: variant %s: axis defines longer than %zu characters", s->recipe_path, v->name, sizeof defines - 1);
            return 1;
        }
    }
    /* the law goes in the params only: the source, hence the cache key and code, stay the same */
    if (!over) over = gen_append(v->params_json, sizeof v->params_json, &po, ",\"law\":\"%s\"", s->law);
    if (over || gen_append(v->params_json, sizeof v->params_json, &po, "}")) {
        snprintf(err, errlen, "%s: variant %s: params JSON longer than %zu characters (shorten the axis names or values)",
                 s->recipe_path, v->name, sizeof v->params_json - 1);
        return 1;
    }
    /* the source names its recipe relative to the templates root: it is part of the cache key,
     * which must not depend on where the checkout lives or how the recipe was spelt */
    const char *slash = strrchr(s->recipe_path, '/');
    const char *base = slash ? slash + 1 : s->recipe_path;
    char family_dir[128];
    snprintf(family_dir, sizeof family_dir, "%.*s", (int)(strchr(s->template_rel, '/') - s->template_rel), s->template_rel);
    const char *fmt = "/* generated by kt gen from %s/%s for %s; do not edit */\n"
                      "#include \"%s\"\n#define KT_KERNEL_NAME %s\n%s#include \"%s\"\n";
    int len = snprintf(NULL, 0, fmt, family_dir, base, t->name, t->prelude, v->name, defines, s->template_rel);
    v->source = malloc((size_t)len + 1);
    if (!v->source) {
        snprintf(err, errlen, "%s: out of memory emitting %s", s->recipe_path, v->name);
        return 1;
    }
    snprintf(v->source, (size_t)len + 1, fmt, family_dir, base, t->name, t->prelude, v->name, defines, s->template_rel);
    return 0;
}

static int gen_check_fields(lua_State *L, const char *path, char *err, size_t errlen)
{
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pop(L, 1);
        int known = 0;
        if (lua_type(L, -1) == LUA_TSTRING)
            for (int i = 0; gen_known_fields[i]; i++)
                if (strcmp(lua_tostring(L, -1), gen_known_fields[i]) == 0) known = 1;
        if (!known) {
            const char *k = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "(non-string key)";
            gen_fail(err, errlen, "%s: unknown recipe field '%s' (known: family, template, kernel, ops, axes, threads, lds_bytes, constraint, targets, lds_at_launch, law, companions)", path, k);
            lua_pop(L, 1);
            return 1;
        }
    }
    static const char *const fns[] = {"threads", "constraint", NULL};
    for (int i = 0; fns[i]; i++) {
        lua_getfield(L, -1, fns[i]);
        int ok = lua_isfunction(L, -1);
        lua_pop(L, 1);
        if (!ok) return gen_fail(err, errlen, "%s: recipe field '%s' must be a function", path, fns[i]);
    }
    return 0;
}

static void gen_dirname(const char *path, char *out, size_t n)
{
    snprintf(out, n, "%s", path);
    char *slash = strrchr(out, '/');
    if (slash) *slash = 0;
    else snprintf(out, n, ".");
}

static int gen_locate_template(gen_space *s, const char *tmpl, char *err, size_t errlen)
{
    char dir[512], root[512];
    struct stat st;
    gen_dirname(s->recipe_path, dir, sizeof dir);
    gen_dirname(dir, root, sizeof root);
    const char *family_dir = strrchr(dir, '/') ? strrchr(dir, '/') + 1 : dir;
    if (strcmp(dir, ".") == 0 || strcmp(root, dir) == 0)
        return gen_fail(err, errlen, "%s: a recipe must live in templates/<family>/ (beside its template)%s", s->recipe_path, "");
    snprintf(s->templates_root, sizeof s->templates_root, "%s", root);
    if (strchr(tmpl, '/') || strlen(dir) + strlen(tmpl) + 2 > sizeof s->template_path ||
        strlen(family_dir) + strlen(tmpl) + 2 > sizeof s->template_rel)
        return gen_fail(err, errlen, "%s: template '%s' must be a plain file name beside the recipe", s->recipe_path, tmpl);
    snprintf(s->template_path, sizeof s->template_path, "%.255s/%.200s", dir, tmpl);
    snprintf(s->template_rel, sizeof s->template_rel, "%.60s/%.60s", family_dir, tmpl);
    if (stat(s->template_path, &st) != 0 || !S_ISREG(st.st_mode))
        return gen_fail(err, errlen, "%s: template '%s' not found beside the recipe", s->recipe_path, s->template_path);
    return 0;
}

int gen_enumerate(const char *recipe_path, const kt_target *t, gen_space *s, char *err, size_t errlen)
{
    gen_axis axes[GEN_MAX_AXES];
    int naxes = 0, rc = 1;
    memset(s, 0, sizeof *s);
    snprintf(s->recipe_path, sizeof s->recipe_path, "%s", recipe_path);
    lua_State *L = luaL_newstate();
    if (!L) return gen_fail(err, errlen, "%s: cannot create a Lua state (out of memory)%s", recipe_path, "");
    gen_open_sandbox(L);

    if (luaL_loadfile(L, recipe_path) != 0 || lua_pcall(L, 0, 1, 0) != 0) {
        const char *m = lua_tostring(L, -1);
        /* loadfile's "cannot open" message lacks the reason's context; both carry the path */
        snprintf(err, errlen, "%s", m ? m : "recipe failed to load");
        goto done;
    }
    if (!lua_istable(L, -1)) { gen_fail(err, errlen, "%s: recipe must return a table, got %s", recipe_path, luaL_typename(L, -1)); goto done; }
    int ri = lua_gettop(L);
    char tmpl[128];
    if (gen_check_fields(L, recipe_path, err, errlen) ||
        gen_string_field(L, recipe_path, "template", tmpl, sizeof tmpl, err, errlen) ||
        gen_string_field(L, recipe_path, "kernel", s->kernel, sizeof s->kernel, err, errlen) ||
        gen_read_axes(L, recipe_path, axes, &naxes, err, errlen))
        goto done;
    if (!gen_is_identifier(s->kernel)) { gen_fail(err, errlen, "%s: kernel prefix '%s' is not a C identifier", recipe_path, s->kernel); goto done; }
    if (gen_locate_template(s, tmpl, err, errlen)) goto done;
    /* law: how the law scores this template's variants; by default the template file's stem.
     * An identifier, so it goes into the params JSON as it is. */
    lua_getfield(L, ri, "law");
    size_t law_len = 0;
    const char *law = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &law_len) : NULL;
    if (!law && !lua_isnil(L, -1)) { gen_fail(err, errlen, "%s: recipe field 'law' must be a string%s", recipe_path, ""); goto done; }
    if (law && (law_len >= sizeof s->law || strlen(law) != law_len || !gen_is_identifier(law))) {
        snprintf(err, errlen, "%s: recipe field 'law' ('%.60s') must be an identifier of at most %zu characters",
                 recipe_path, law, sizeof s->law - 1);
        goto done;
    }
    if (law) snprintf(s->law, sizeof s->law, "%s", law);
    else if (strcspn(tmpl, ".") < sizeof s->law) snprintf(s->law, sizeof s->law, "%.*s", (int)strcspn(tmpl, "."), tmpl);
    if (!gen_is_identifier(s->law)) {
        gen_fail(err, errlen, "%s: template '%s' has no identifier stem to be the default law: set recipe field 'law'", recipe_path, tmpl);
        goto done;
    }
    lua_pop(L, 1);
    /* targets: the recipe is written for these alone (an instruction only they have); for any
     * other target the space is empty by design, which is not an error */
    lua_getfield(L, ri, "targets");
    if (!lua_isnil(L, -1)) {
        if (!lua_istable(L, -1) || lua_objlen(L, -1) == 0) {
            gen_fail(err, errlen, "%s: recipe field 'targets' must be a non-empty list of target names%s", recipe_path, "");
            goto done;
        }
        int listed = 0;
        for (int i = 1; i <= (int)lua_objlen(L, -1); i++) {
            lua_rawgeti(L, -1, i);
            if (lua_type(L, -1) != LUA_TSTRING || !kt_target_find(lua_tostring(L, -1))) {
                snprintf(err, errlen, "%s: 'targets' entry %d is not a known target name", recipe_path, i);
                goto done;
            }
            if (strcmp(lua_tostring(L, -1), t->name) == 0) listed = 1;
            size_t used = strlen(s->only_for);
            snprintf(s->only_for + used, sizeof s->only_for - used, "%s%s", used ? "," : "", lua_tostring(L, -1));
            lua_pop(L, 1);
        }
        if (!listed) { s->not_for_target = 1; rc = 0; goto done; }
    }
    lua_pop(L, 1);
    lua_getfield(L, ri, "ops");
    for (int i = 1; lua_istable(L, -1) && i <= (int)lua_objlen(L, -1); i++) {
        lua_rawgeti(L, -1, i);
        size_t used = strlen(s->ops);
        if (lua_type(L, -1) == LUA_TSTRING)
            snprintf(s->ops + used, sizeof s->ops - used, "%s%s", used ? "," : "", lua_tostring(L, -1));
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    lua_getfield(L, ri, "companions");
    for (int i = 1; lua_istable(L, -1) && i <= (int)lua_objlen(L, -1); i++) {
        lua_rawgeti(L, -1, i);
        const char *sfx = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
        if (!sfx || sfx[0] != '_' || strchr(sfx, ',') || strlen(sfx) > 24) {
            char at[16];
            snprintf(at, sizeof at, "%d", i);
            gen_fail(err, errlen, "%s: companions[%s] must be a name suffix like \"_prep\"", recipe_path, at);
            lua_pop(L, 2);
            goto done;
        }
        size_t used = strlen(s->companions);
        snprintf(s->companions + used, sizeof s->companions - used, "%s%s", used ? "," : "", sfx);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);

    long long total = 1;
    for (int a = 0; a < naxes; a++) total *= axes[a].nvalues;
    if (total > GEN_MAX_PRODUCT) { gen_fail(err, errlen, "%s: axes product too large (%s variants)", recipe_path, "> 1000000"); goto done; }
    s->total = (int)total;
    s->variants = calloc((size_t)total, sizeof *s->variants);
    if (!s->variants) { gen_fail(err, errlen, "%s: out of memory for %s variants", recipe_path, "all"); goto done; }

    gen_push_target(L, t);
    int ti = lua_gettop(L);
    lua_getfield(L, ri, "lds_bytes");
    int has_lds = lua_isfunction(L, -1);
    lua_pop(L, 1);
    lua_getfield(L, ri, "lds_at_launch");
    int at_launch = lua_toboolean(L, -1);
    lua_pop(L, 1);
    if (at_launch && !has_lds) { gen_fail(err, errlen, "%s: lds_at_launch needs an lds_bytes function%s", recipe_path, ""); goto done; }
    int idx[GEN_MAX_AXES] = {0};
    for (long long n = 0; n < total; n++) {
        gen_push_params(L, axes, naxes, idx);
        int pi = lua_gettop(L);
        if (gen_call(L, ri, "constraint", pi, ti, 2, err, errlen)) goto done;
        int pass = lua_toboolean(L, -2);
        if (!pass) {
            gen_count_reason(s, lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : "rejected by constraint");
        } else {
            gen_variant *v = &s->variants[s->nvariants];
            if (gen_call(L, ri, "threads", pi, ti, 1, err, errlen)) goto done;
            v->threads = (int)lua_tointeger(L, -1);
            lua_pop(L, 1);
            if (v->threads <= 0 || v->threads > 1024) {
                snprintf(err, errlen, "%s: threads() returned %d for an admitted variant (1..1024)", recipe_path, v->threads);
                goto done;
            }
            v->lds_estimate = -1;
            if (has_lds) {
                if (gen_call(L, ri, "lds_bytes", pi, ti, 1, err, errlen)) goto done;
                v->lds_estimate = (int)lua_tointeger(L, -1);
                lua_pop(L, 1);
                if (at_launch) v->lds_dynamic = v->lds_estimate;
            }
            if (gen_emit_variant(s, t, axes, naxes, idx, v, err, errlen)) goto done;
            s->nvariants++;
        }
        lua_settop(L, ti);
        for (int a = naxes - 1; a >= 0; a--) {   /* odometer: the last axis turns fastest */
            if (++idx[a] < axes[a].nvalues) break;
            idx[a] = 0;
        }
    }
    if (s->nvariants == 0) {
        lua_Debug ar;
        char reasons[512] = "";
        size_t used = 0;
        for (int i = 0; i < s->nrejected && used < sizeof reasons; i++)
            used += (size_t)snprintf(reasons + used, sizeof reasons - used, "%s%s x%d", i ? ", " : "",
                                     s->rejected[i].reason, s->rejected[i].count);
        lua_getfield(L, ri, "constraint");
        lua_getinfo(L, ">S", &ar);
        snprintf(err, errlen, "%s:%d: recipe admits no variant for %s (all %d rejected: %s)",
                 recipe_path, ar.linedefined, t->name, s->total, reasons);
        goto done;
    }
    rc = 0;
done:
    lua_close(L);
    if (rc) gen_space_free(s);
    return rc;
}

void gen_space_free(gen_space *s)
{
    if (!s) return;
    for (int i = 0; i < s->nvariants; i++) free(s->variants[i].source);
    free(s->variants);
    free(s->rejected);
    s->variants = NULL;
    s->rejected = NULL;
    s->nvariants = s->nrejected = 0;
}
