-- tune.lua: the tune command, thin: parse flags, call libkt through the FFI.
-- This stage generates and compiles: every recipe under templates/ for every target asked for,
-- into one database, with kt gen's summary per (recipe, target). Sweeping kernels on the card
-- and writing selections is the tuner stage (tuner/), which this command will drive next.
local ffi = require("ffi")

ffi.cdef [[
typedef struct kt_gen_options {
    const char *recipe;
    const char *db_path;
    const char *cache_dir;
    const char *extra_flags;
    int jobs;
    int quiet;
} kt_gen_options;
int pipeline_gen_and_print(const kt_gen_options *o, const char *target_name, char *err, size_t errlen);
int kt_target_count(void);
typedef struct kt_target { const char *name; } kt_target_head;
const kt_target_head *kt_target_at(int i);
]]

local script_dir = (arg[0]:match("^(.*)/[^/]*$") or ".")
local usage = [[
usage: tune [--target T[,T...]|all] [--db FILE] [-j N] [--flags "..."] [--recipes DIR] [--quiet]

  --target   targets to build (default: all)
  --db       database to create or update (default: out/ktune.ktdb)
  -j         parallel compiles (default: the cores available)
  --flags    extra compiler flags (part of every cache key)
  --recipes  folder of template families, each with its recipes (default: templates/)
]]

local function fail(msg, code)
  io.stderr:write("tune: ", msg, "\n")
  os.exit(code or 2)
end

local opt = { target = "all", db = "out/ktune.ktdb", jobs = 0, recipes = script_dir .. "/templates" }
local i = 1
while i <= #arg do
  local a, v = arg[i], arg[i + 1]
  if a == "--help" or a == "-h" then io.write(usage) os.exit(0) end
  if a == "--quiet" then opt.quiet = true; i = i + 1
  else
    local key = ({ ["--target"] = "target", ["--db"] = "db", ["-j"] = "jobs", ["--flags"] = "flags",
                   ["--recipes"] = "recipes" })[a]
    if not key then fail("unknown option '" .. a .. "'\n" .. usage) end
    if v == nil then fail(a .. " needs a value") end
    opt[key] = v
    i = i + 2
  end
end
local jobs = tonumber(opt.jobs)
if not jobs or jobs < 0 or jobs ~= math.floor(jobs) then fail("-j " .. tostring(opt.jobs) .. ": expected a count") end

local lib_path = script_dir .. "/out/lib/libkt.so"
local ok, kt = pcall(ffi.load, lib_path)
if not ok then fail("cannot load " .. lib_path .. " (run 'make' first): " .. tostring(kt), 1) end

local targets = {}
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

-- recipes: templates/<family>/<name>.lua, in a fixed order
local recipes = {}
local ls = io.popen("ls -1 '" .. opt.recipes:gsub("'", "'\\''") .. "'/*/*.lua 2>/dev/null")
for line in ls:lines() do
  if not line:match("/arch/") and not line:match("/abi/") then recipes[#recipes + 1] = line end
end
ls:close()
table.sort(recipes)
if #recipes == 0 then fail("no recipes under " .. opt.recipes .. " (expected <family>/<name>.lua)", 1) end

local o = ffi.new("kt_gen_options")
o.db_path = opt.db
o.extra_flags = opt.flags
o.jobs = jobs
o.quiet = opt.quiet and 1 or 0
local err = ffi.new("char[?]", 4096)
local failures = 0
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
if failures > 0 then fail(failures .. " recipe/target run(s) failed", 1) end
