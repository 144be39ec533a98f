-- tune.lua: the tune command, thin: parse flags, call libkt through the FFI.
-- Build stage: every recipe under templates/ for every target asked for (with --modelpath, only the
-- variants some problem of the model can use), into one database, with
-- kt gen's summary per (recipe, target). With --modelpath, then the tuner stage (tuner/tune.c):
-- the model's GEMM problems at --tp, swept on the card (or picked by the law without one), the
-- result table and the coverage report.
local ffi = require("ffi")

ffi.cdef [[
typedef struct kt_gen_options {
    const char *recipe;
    const char *db_path;
    const char *cache_dir;
    const char *extra_flags;
    int jobs;
    int quiet;
    int sample;
    int (*keep)(const void *keep_ctx, const char *ops, const char *params_json);
    const void *keep_ctx;
} kt_gen_options;
typedef struct kt_build_filter kt_build_filter;
int kt_build_filter_open(const char *model, int tp, const char *shapes, const char *only, kt_build_filter **out,
                         char *err, size_t errlen);
int kt_build_filter_keeps(const void *filter, const char *ops, const char *params_json);
void kt_build_filter_close(kt_build_filter *f);
int pipeline_gen_and_print(const kt_gen_options *o, const char *target_name, char *err, size_t errlen);
int kt_target_count(void);
typedef struct kt_tune_options {
    const char *model; const char *db_path; const char *target; const char *args; const char *only;
    const char *shapes; int tp, gpus, resume, no_device, quiet; double budget_min;
} kt_tune_options;
int kt_tune_model(const kt_tune_options *o, char *err, size_t errlen);
int kt_tune_check_model(const char *model, int tp, const char *shapes, const char *only, char *err, size_t errlen);
int kt_target_auto(char *out, size_t len, char *msg, size_t msglen);
typedef struct kt_target { const char *name; } kt_target_head;
const kt_target_head *kt_target_at(int i);
]]

local script_dir = (arg[0]:match("^(.*)/[^/]*$") or ".")
local usage = [[
usage: tune [--target T[,T...]|all] [--db FILE] [-j N] [--flags "..."] [--recipes DIR|FILES] [--quiet]
       tune --modelpath DIR --tp N [--target auto|T] [--db FILE] [--resume] [--budget-min M]
            [--only OPS] [--shapes JSON] [--gpus N] [--no-build] [--build-all] [--no-device]

  --modelpath  a model directory with config.json (models/ has some): build for one target,
               then sweep the model's per-rank GEMMs at tensor parallelism --tp on the GPU
               and write selections; with no GPU, the law's picks, marked as such. GDN layers
               take the serving vLLM's state layout: KT_GDN_STATE=k-last (default, vLLM since
               #33291) or kv (earlier vLLM)
  --tp         tensor-parallel ranks the model is sharded over
  --resume     continue the newest unfinished sweep of this model/tp/device (measurements are
               kept by code hash in any case: nothing measured is measured again)
  --budget-min stop starting new problems after M minutes (what is done is kept; a problem
               not reached gets the law's pick for this device, measured by a later run)
  --only       op families to tune, comma-separated (default: every family; `kt ops` lists them);
               the build follows: only their variants
  --shapes     JSON file [{"n": N, "k": K}, ...] in place of the model's shapes (the build: GEMMs only)
  --gpus       worker processes, one per GPU 0..N-1, over one sweep (default 1)
  --no-build   use the kernels already in the database (built on another machine)
  --build-all  build every variant of every recipe (default: only those some problem of the
               model can use: its dtypes, head sizes and state layouts)
  --no-device  do not look for a GPU: law picks only
  --target   targets to build (default: all; with --modelpath: auto, the GPU's, else gfx1201)
  --db       database to create or update (default: out/ktune.ktdb)
  -j         parallel compiles (default: the cores available)
  --flags    extra compiler flags (part of every cache key)
  --recipes  folder of template families, each with its recipes (default: templates/), or
             recipe files, comma-separated (FILE.lua[,FILE.lua...])
]]

local function fail(msg, code)
  io.stderr:write("tune: ", msg, "\n")
  os.exit(code or 2)
end

local opt = { db = "out/ktune.ktdb", jobs = 0, recipes = script_dir .. "/templates" }
local switches = { ["--quiet"] = "quiet", ["--resume"] = "resume", ["--no-build"] = "no_build",
                   ["--no-device"] = "no_device", ["--build-all"] = "build_all" }
local i = 1
while i <= #arg do
  local a, v = arg[i], arg[i + 1]
  if a == "--help" or a == "-h" then io.write(usage) os.exit(0) end
  if switches[a] then opt[switches[a]] = true; i = i + 1
  else
    local key = ({ ["--target"] = "target", ["--db"] = "db", ["-j"] = "jobs", ["--flags"] = "flags",
                   ["--recipes"] = "recipes", ["--modelpath"] = "modelpath", ["--tp"] = "tp",
                   ["--budget-min"] = "budget_min", ["--only"] = "only", ["--shapes"] = "shapes",
                   ["--gpus"] = "gpus" })[a]
    if not key then fail("unknown option '" .. a .. "'\n" .. usage) end
    if v == nil then fail(a .. " needs a value") end
    opt[key] = v
    i = i + 2
  end
end
local function count_opt(name, value, min)
  local n = tonumber(value)
  if not n or n < min or n ~= math.floor(n) then fail(name .. " " .. tostring(value) .. ": expected a whole number >= " .. min) end
  return n
end
if opt.modelpath then
  if not opt.tp then fail("--modelpath needs --tp N (tensor-parallel ranks)") end
  if opt.build_all and opt.no_build then fail("--build-all with --no-build: nothing is built") end
  opt.tp = count_opt("--tp", opt.tp, 1)
  opt.gpus = count_opt("--gpus", opt.gpus or 1, 1)
  if opt.budget_min and (not tonumber(opt.budget_min) or tonumber(opt.budget_min) <= 0) then
    fail("--budget-min " .. opt.budget_min .. ": expected minutes > 0")
  end
else
  for _, k in ipairs({ "tp", "gpus", "budget_min", "only", "shapes", "resume", "no_build", "no_device", "build_all" }) do
    if opt[k] then fail("--" .. k:gsub("_", "-") .. " needs --modelpath") end
  end
end
local jobs = tonumber(opt.jobs)
if not jobs or jobs < 0 or jobs ~= math.floor(jobs) then fail("-j " .. tostring(opt.jobs) .. ": expected a count") end

local lib_path = script_dir .. "/out/lib/libkt.so"
local ok, kt = pcall(ffi.load, lib_path)
if not ok then fail("cannot load " .. lib_path .. " (run 'make' first): " .. tostring(kt), 1) end

-- the model is read and validated before anything is built or any database is created; a model's
-- build reads it once, into the filter that keeps only the variants some problem of it can use
-- (--build-all: every one)
local filter = nil
if opt.modelpath then
  local cerr = ffi.new("char[4096]")
  if opt.no_build or opt.build_all then
    if kt.kt_tune_check_model(opt.modelpath, opt.tp, opt.shapes, opt.only, cerr, 4096) ~= 0 then fail(ffi.string(cerr)) end
  else
    local fp = ffi.new("kt_build_filter*[1]")
    if kt.kt_build_filter_open(opt.modelpath, opt.tp, opt.shapes, opt.only, fp, cerr, 4096) ~= 0 then fail(ffi.string(cerr)) end
    filter = ffi.gc(fp[0], kt.kt_build_filter_close)
  end
end

local targets = {}
if opt.modelpath and (opt.target == nil or opt.target == "auto") then
  if opt.no_device then
    opt.target = "gfx1201"
    io.write("target: gfx1201 (--no-device; the user's card)\n")
  else
    local buf, msg = ffi.new("char[64]"), ffi.new("char[512]")
    local rc = kt.kt_target_auto(buf, 64, msg, 512)
    if rc < 0 then fail(ffi.string(msg) .. "; pass --target") end
    if rc == 0 then opt.target = ffi.string(buf)
    else opt.target = "gfx1201" end
    io.write(("target: %s (auto: %s)\n"):format(opt.target, ffi.string(msg)))
  end
end
opt.target = opt.target or "all"
if opt.modelpath and opt.target:find(",") then fail("--modelpath tunes one target at a time") end
if opt.modelpath and opt.target == "all" then fail("--modelpath tunes one target: pass --target T or auto") end
if opt.target == "all" then
  for t = 0, kt.kt_target_count() - 1 do targets[#targets + 1] = ffi.string(kt.kt_target_at(t).name) end
else
  for t in opt.target:gmatch("[^,]+") do targets[#targets + 1] = t end
end

-- every target name is checked before anything is compiled
local known = {}
for t = 0, kt.kt_target_count() - 1 do known[ffi.string(kt.kt_target_at(t).name)] = true end
for _, t in ipairs(targets) do
  if not known[t] then
    local names = {}
    for n in pairs(known) do names[#names + 1] = n end
    table.sort(names)
    fail("unknown target '" .. t .. "' (known: " .. table.concat(names, " ") .. ")")
  end
end

-- recipes: templates/<family>/<name>.lua, in a fixed order, or the recipe files named
local recipes = {}
if opt.recipes:match("%.lua$") then
  for f in opt.recipes:gmatch("[^,]+") do
    local h = io.open(f, "r")
    if not h then fail("--recipes: cannot read recipe " .. f, 1) end
    h:close()
    recipes[#recipes + 1] = f
  end
else
  local ls = io.popen("ls -1 '" .. opt.recipes:gsub("'", "'\\''") .. "'/*/*.lua 2>/dev/null")
  for line in ls:lines() do
    if not line:match("/arch/") and not line:match("/abi/") then recipes[#recipes + 1] = line end
  end
  ls:close()
  table.sort(recipes)
end
if #recipes == 0 then fail("no recipes under " .. opt.recipes .. " (expected <family>/<name>.lua)", 1) end

local o = ffi.new("kt_gen_options")
o.db_path = opt.db
o.extra_flags = opt.flags
o.jobs = jobs
o.quiet = opt.quiet and 1 or 0
o.sample = 0   -- every variant (kt gen --sample is for tests)
local err = ffi.new("char[?]", 4096)
local failures = 0
if opt.no_build then recipes = {} end
if filter then
  o.keep = kt.kt_build_filter_keeps
  o.keep_ctx = filter
end
for _, recipe in ipairs(recipes) do
  o.recipe = recipe
  for _, t in ipairs(targets) do
    io.write(("== %s on %s\n"):format(recipe, t))
    io.flush()
    local rc = kt.pipeline_gen_and_print(o, t, err, 4096)
    if rc == 2 then fail(ffi.string(err)) end
    if rc ~= 0 then
      io.stderr:write("tune: ", t, ": ", ffi.string(err), "\n")
      failures = failures + 1
    end
  end
end
if filter then o.keep = nil; o.keep_ctx = nil; kt.kt_build_filter_close(ffi.gc(filter, nil)); filter = nil end
if failures > 0 then fail(failures .. " recipe/target run(s) failed", 1) end

if opt.modelpath then
  local to = ffi.new("kt_tune_options")
  local keep = {}   -- the strings must outlive the call
  local function cstr(s) if s == nil then return nil end keep[#keep + 1] = s return s end
  to.model = cstr(opt.modelpath)
  to.db_path = cstr(opt.db)
  to.target = cstr(opt.target)
  to.args = cstr("tune " .. table.concat(arg, " "))
  to.only = cstr(opt.only)
  to.shapes = cstr(opt.shapes)
  to.tp = opt.tp
  to.gpus = opt.gpus
  to.resume = opt.resume and 1 or 0
  to.no_device = opt.no_device and 1 or 0
  to.quiet = opt.quiet and 1 or 0
  to.budget_min = tonumber(opt.budget_min or 0)
  io.write(("== tuning %s at tp=%d on %s into %s\n"):format(opt.modelpath, opt.tp, opt.target, opt.db))
  io.flush()
  local rc = kt.kt_tune_model(to, err, 4096)
  io.flush()
  if rc ~= 0 then fail(ffi.string(err), rc) end
end
